"""Logic tests on the mock transport: no sockets, no sleeps. What linkhound asked for and what it concluded."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import linkhound
from linkhound import Status
from linkhound.mock_transport import MockRequest, MockResponse, MockTransport
from linkhound.transport import Hop, NetworkError

HTML = {"Content-Type": "text/html"}


def sent(transport: MockTransport) -> list[tuple[str, str]]:
    return [(r.method, r.url.split("/", 3)[3]) for r in transport.requests]


async def check(transport: MockTransport, *urls: str, **options: object) -> linkhound.Report:
    return await linkhound.start(list(urls), transport=transport, retry_backoff=0, **options).report()


async def test_a_leaf_is_checked_with_head_and_with_get_where_head_is_refused(tmp_path: Path) -> None:
    def answer(r: MockRequest) -> MockResponse:
        if r.url.endswith("/picky") and r.method == "HEAD":
            return MockResponse(405)
        return MockResponse(200, HTML, b"<p>ok</p>")

    listing = tmp_path / "urls.txt"
    listing.write_text("http://127.0.0.1:9/plain\nhttp://127.0.0.1:9/picky\n")
    t = MockTransport(answer)
    report = await check(t, str(listing))
    assert report.summary.ok == 2
    assert sorted(sent(t)) == [("GET", "picky"), ("HEAD", "picky"), ("HEAD", "plain")]


async def test_retries_transient_failures_then_reports_the_last() -> None:
    answers = iter([MockResponse(503), MockResponse(502), MockResponse(200, HTML, b"ok")])
    t = MockTransport(lambda r: next(answers))
    report = await check(t, "http://127.0.0.1:9/flaky", max_retries=2)
    assert [r.status for r in report.results] == [Status.OK]
    assert sent(t) == [("GET", "flaky")] * 3  # an input is fetched with GET; two retries


async def test_retry_after_zero_is_obeyed_without_waiting_and_a_lasting_429_is_rate_limited() -> None:
    t = MockTransport(lambda r: MockResponse(429, {"Retry-After": "0"}))
    report = await check(t, "http://127.0.0.1:9/busy", max_retries=3)
    assert [r.status for r in report.results] == [Status.RATE_LIMITED]
    assert len(t.requests) == 4


async def test_network_errors_are_results_and_only_transient_ones_are_retried() -> None:
    def answer(r: MockRequest) -> MockResponse:
        if r.url.endswith("/reset"):
            raise NetworkError("connection reset", transient=True)
        raise NetworkError("connection failed: refused", transient=False)

    t = MockTransport(answer)
    report = await check(t, "http://127.0.0.1:9/reset", "http://127.0.0.1:9/refused", max_retries=1)
    reasons = {r.url.rsplit("/", 1)[1]: (r.status, r.reason) for r in report.results}
    assert reasons == {"reset": (Status.ERROR, "connection reset"),
                       "refused": (Status.ERROR, "connection failed: refused")}
    assert sorted(sent(t)) == [("GET", "refused"), ("GET", "reset"), ("GET", "reset")]


async def test_redirect_chain_is_recorded_and_a_redirect_to_file_is_refused() -> None:
    routes = {
        "/a": MockResponse(301, {"Location": "/b"}),
        "/b": MockResponse(302, {"Location": "http://127.0.0.2:9/c"}),
        "/c": MockResponse(200, HTML, b"<p>end</p>"),
        "/evil": MockResponse(302, {"Location": "file:///etc/passwd"}),
    }
    t = MockTransport(lambda r: routes["/" + r.url.split("/", 3)[3]])
    report = await check(t, "http://127.0.0.1:9/a", "http://127.0.0.1:9/evil")
    by_url = {r.url.rsplit("/", 1)[1]: r for r in report.results}
    assert by_url["a"].status is Status.OK
    assert by_url["a"].redirects == ("http://127.0.0.1:9/b", "http://127.0.0.2:9/c")
    assert by_url["evil"].status is Status.ERROR
    assert by_url["evil"].reason == "redirect to a file: URL refused"
    assert all(not r.url.startswith("file:") for r in t.requests)


async def test_a_page_first_met_as_a_leaf_is_crawled_when_a_page_links_it(tmp_path: Path) -> None:
    """Plan raising, in one process and with no server: /a is first a link in a URL list (HEAD), then the
    crawl reaches it from / and it must be fetched with GET and its links followed."""
    pages = {
        "/": b'<a href="/slow">s</a>',
        "/slow": b'<a href="/a">a</a>',
        "/a": b'<a href="/missing">m</a>',
    }

    def answer(r: MockRequest) -> MockResponse:
        path = "/" + r.url.split("/", 3)[3]
        body = pages.get(path)
        return MockResponse(200, HTML, body) if body is not None else MockResponse(404)

    listing = tmp_path / "urls.txt"
    listing.write_text("http://127.0.0.1:9/a\n")
    t = MockTransport(answer)
    report = await check(t, str(listing), "http://127.0.0.1:9/", recursive=True, robots=False, max_concurrency=1)
    assert [r.url for r in report.broken] == ["http://127.0.0.1:9/missing"]
    assert ("GET", "a") in sent(t)
    assert {p.url.rsplit("/", 1)[1]: p.depth for p in report.pages if p.url.startswith("http")} == {
        "": 0, "slow": 1, "a": 1}  # /a: a link in the list (depth 1), shorter than / -> /slow -> /a


async def test_a_redirect_from_a_page_to_a_known_leaf_crawls_it_in_either_order() -> None:
    """/old (a page) redirects to /page, which is also an <img src> somewhere: /page is crawled either way."""
    for home in (b'<img src="/page"><a href="/old">o</a>', b'<a href="/old">o</a><a href="/later">l</a>'):
        pages = {"/": home, "/later": b'<img src="/page">', "/page": b'<a href="/missing">m</a>'}

        def answer(r: MockRequest, pages: dict[str, bytes] = pages) -> MockResponse:
            path = "/" + r.url.split("/", 3)[3]
            if path == "/old":
                return MockResponse(301, {"Location": "/page"})
            body = pages.get(path)
            return MockResponse(200, HTML, body) if body is not None else MockResponse(404)

        for concurrency in (1, 8):
            t = MockTransport(answer)
            report = await check(t, "http://127.0.0.1:9/", recursive=True, robots=False, max_concurrency=concurrency)
            assert [r.url for r in report.broken] == ["http://127.0.0.1:9/missing"], (home, concurrency, sent(t))


async def test_a_redirect_to_a_url_checked_on_its_own_reuses_its_result() -> None:
    """No second request for a redirect's end that the run checks anyway (fetched, queued or in flight): the
    redirect takes its result. Two redirects that end at each other are a loop, not a silent loss."""
    pages = {
        "/": b'<a href="/docs/a">a</a><a href="/old/a">o</a><a href="/old/gone">g</a><a href="/docs/gone">d</a>'
             b'<a href="/x">x</a><a href="/y">y</a>',
        "/docs/a": b"<p>a</p>",
    }
    moves = {"/old/a": "/docs/a", "/old/gone": "/docs/gone", "/x": "/y", "/y": "/x"}

    def answer(r: MockRequest) -> MockResponse:
        path = "/" + r.url.split("/", 3)[3]
        if path in moves:
            return MockResponse(301, {"Location": moves[path]})
        body = pages.get(path)
        return MockResponse(200, HTML, body) if body is not None else MockResponse(404)

    for concurrency in (1, 16):
        t = MockTransport(answer)
        report = await check(t, "http://127.0.0.1:9/", recursive=True, robots=False, max_concurrency=concurrency)
        assert sorted(path for _, path in sent(t)) == sorted(["", "docs/a", "old/a", "old/gone", "docs/gone", "x", "y"])
        by_path = {r.url.split("/", 3)[3]: r for r in report.results}
        assert by_path["old/a"].status is Status.OK
        assert by_path["old/a"].redirects == ("http://127.0.0.1:9/docs/a",)
        assert by_path["old/gone"].status is Status.BROKEN and by_path["old/gone"].code == 404
        assert {by_path["x"].reason, by_path["y"].reason} == {"redirect loop"}


async def test_robots_txt_is_read_up_to_512_kib_never_more_whatever_the_max_body_size() -> None:
    """robots.txt has its own cap, 512 KiB (RFC 9309 asks for at least 500 KiB): a smaller --max-body-size doesn't
    cut it, a larger one doesn't let a huge one be read whole."""
    limits: list[int] = []

    class Recording(MockTransport):
        async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> Hop:
            hop = await super().send(method, url, headers)
            if url.endswith("/robots.txt"):
                read = hop.read

                async def recorded(limit: int) -> tuple[bytes, bool]:
                    limits.append(limit)
                    return await read(limit)

                hop.read = recorded  # type: ignore[method-assign]
            return hop

    def answer(r: MockRequest) -> MockResponse:
        if r.url.endswith("/robots.txt"):
            return MockResponse(200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /no\n" + b"#" * 2**20)
        return MockResponse(200, HTML, b"<p>ok</p>")

    for cap in (1024, 64 * 2**20):
        await check(Recording(answer), "http://127.0.0.1:9/", recursive=True, max_body_size=cap)
    assert limits == [512 * 1024] * 2


async def test_crawl_delay_comes_from_the_group_of_the_whole_product_token() -> None:
    """Crawl-delay is read from the group the rules come from: `User-agent: link`'s is not linkhound's, a
    `User-agent: LinkHound` group's is (the pool's answer for a second request: the seconds to wait first)."""
    from linkhound.checker import CheckPolicy, HttpChecker
    from linkhound.client import HttpClient, client_options
    from linkhound.host_pool import HostLimits, HostPool
    from linkhound.robots import Robots
    from linkhound.settings import Settings

    groups = {"h1": "User-agent: link\nCrawl-delay: 30\n\nUser-agent: *\nDisallow: /private/\n",
              "h2": "User-agent: link\nCrawl-delay: 5\n\nUser-agent: LinkHound\nCrawl-delay: 30\n"}

    def answer(r: MockRequest) -> MockResponse:
        return MockResponse(200, {"Content-Type": "text/plain"}, groups[r.url.split("/")[2]].encode())

    settings = Settings()
    pool = HostPool(HostLimits())
    async with HttpClient(client_options(settings), MockTransport(answer)) as client:
        robots = Robots(HttpChecker(client, pool, CheckPolicy.from_settings(settings)), pool)
        assert await robots.allowed("http://h1/open") == (True, "")
        assert await robots.allowed("http://h2/open") == (True, "")
    assert pool.try_acquire("h1") == 0.0 and pool.try_acquire("h1") == 0.0  # no delay: the * group has none
    assert pool.try_acquire("h2") > 29.0  # the robots.txt request's delay, 30 s
