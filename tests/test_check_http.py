"""One-shot checks against a real server: verdicts, and exactly what the server was asked."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from linkhound import Status
from server import Site, SiteFactory, drop, html, until_asked

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


def by_url(report: linkhound.Report) -> dict[str, linkhound.Result]:
    return {r.url: r for r in report.results}


def assert_asked_once(site: Site) -> None:
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]


def assert_aliases_of_one_end(site: Site, results: dict[str, linkhound.Result], a: str, b: str, end: str,
                              ok: bool) -> None:
    """a (a 301) and b (a 302) redirect to end, which answers for both."""
    ra, rb = results[site.url(a)], results[site.url(b)]
    assert ra.redirects == rb.redirects == (site.url(end),)
    assert ra.redirect_codes == (301,) and rb.redirect_codes == (302,)
    assert ra.status is rb.status is (Status.OK if ok else Status.BROKEN) and ra.code == rb.code


async def test_statuses_and_one_request_per_unique_url(site: Site, both_clients: str) -> None:
    site.page("/ok", "fine")
    site.status("/missing", 404)
    site.status("/error", 500)
    site.redirect("/moved", "/ok")
    site.status("/busy", 429)
    site.head_refused("/nohead")
    site.slow("/slow", 2.0)
    site.reset("/reset")
    paths = ["/ok", "/missing", "/error", "/moved", "/busy", "/nohead", "/slow", "/reset"]
    # every link twice, and once with a different spelling: still one request each
    site.page("/index.html", html(*paths, *paths, site.url("/ok").replace("http://", "HTTP://")))

    report = await linkhound.check([site.url("/index.html")], timeout=0.5, max_retries=0)

    results = by_url(report)
    assert results[site.url("/ok")].status is Status.OK
    assert results[site.url("/missing")].status is Status.BROKEN
    assert results[site.url("/missing")].code == 404
    assert results[site.url("/error")].code == 500
    moved = results[site.url("/moved")]
    assert moved.status is Status.OK and moved.redirects == (site.url("/ok"),)
    assert results[site.url("/busy")].status is Status.RATE_LIMITED
    assert results[site.url("/nohead")].status is Status.OK
    assert results[site.url("/slow")].status is Status.TIMEOUT
    assert results[site.url("/reset")].status is Status.ERROR
    assert len(results[site.url("/missing")].references) == 2

    seen = site.counts()
    assert seen[("GET", "/index.html")] == 1
    for p in ["/missing", "/error", "/moved", "/busy", "/slow"]:
        assert seen[("HEAD", p)] == 1, p
        assert seen[("GET", p)] == 0, p
    # a reset may be a kept-alive connection the server dropped: asked again once on a new connection (native
    # knows when it reused one; aiohttp itself may resend once more first)
    assert seen[("HEAD", "/reset")] in {"native": (1, 2), "reqwest": (2,), "aiohttp": (2,)}[both_clients]
    assert seen[("GET", "/reset")] == 0
    # /ok once, for itself: /moved's redirect reaches a URL checked on its own and reuses its result
    assert seen[("HEAD", "/ok")] == 1 and seen[("GET", "/ok")] == 0
    assert seen[("HEAD", "/nohead")] == 1 and seen[("GET", "/nohead")] == 1
    assert report.summary.broken == 5
    assert not report.summary.success


async def test_retries_5xx_with_backoff_then_gives_up(site: Site) -> None:
    site.status("/error", 503)
    site.page("/index.html", html("/error"))
    report = await linkhound.check([site.url("/index.html")], max_retries=2, retry_backoff=0.01)
    assert by_url(report)[site.url("/error")].status is Status.BROKEN
    assert site.hits("/error") == 3


async def test_retry_after_429_is_obeyed_then_succeeds(site: Site) -> None:
    calls = 0

    async def flaky(request: object) -> object:
        from aiohttp import web

        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="ok")

    site.handler("/flaky", flaky)  # type: ignore[arg-type]
    site.page("/index.html", html("/flaky"))
    report = await linkhound.check([site.url("/index.html")], max_retries=2)
    assert by_url(report)[site.url("/flaky")].status is Status.OK
    times = [r.at for r in site.requests if r.path == "/flaky"]
    assert len(times) == 2 and times[1] - times[0] >= 0.95


async def test_a_retry_after_redirects_asks_again_only_from_the_hop_that_failed(site: Site) -> None:
    # /r -> /h -> /e, where /h and then /e each answer 503 the first time: each retry starts at the hop that
    # answered it, so /r is asked once (from /r each time, it would be asked three times and /h twice more)
    def once_unavailable(then: web.Response) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def h(request: web.Request) -> web.StreamResponse:
            if site.hits(request.path) == 1:
                return web.Response(status=503, headers={"Retry-After": "0"})
            return then

        return h

    site.redirect("/r", "/h", 307)
    site.handler("/h", once_unavailable(web.Response(status=308, headers={"Location": "/e"})))
    site.handler("/e", once_unavailable(web.Response(status=404)))
    report = await linkhound.check([site.url("/r")], max_retries=2, retry_backoff=0.01)
    assert site.hits("/r") == 1 and site.hits("/h") == 2 and site.hits("/e") == 2
    (r,) = report.results
    assert r.status is Status.BROKEN and r.code == 404
    assert r.redirects == (site.url("/h"), site.url("/e")) and r.redirect_codes == (307, 308)


async def test_a_hop_that_timed_out_once_is_asked_again_without_its_redirect(site: Site,
                                                                             make_site: SiteFactory) -> None:
    # /r -> /h on another host, which gives no answer in time the first time: the retry asks /h again, not /r
    other = await make_site("127.0.0.2")

    async def h(request: web.Request) -> web.StreamResponse:
        if other.hits("/h") == 1:
            await asyncio.sleep(2)
        return web.Response(text="ok")

    other.handler("/h", h)
    site.redirect("/r", other.url("/h"))
    report = await linkhound.check([site.url("/r")], max_retries=1, retry_backoff=0.01, timeout=0.5)
    assert site.hits("/r") == 1 and other.hits("/h") == 2
    (r,) = report.results
    assert r.status is Status.OK and r.redirects == (other.url("/h"),) and r.redirect_codes == (301,)


async def test_a_hop_reset_once_is_asked_again_without_its_redirect(site: Site, make_site: SiteFactory) -> None:
    # /r -> /h on another host, whose first connection is reset: a reset is worth asking again on every stack,
    # and the retry asks /h, not /r
    other = await make_site("127.0.0.2")

    async def h(request: web.Request) -> web.StreamResponse:
        if other.hits("/h") == 1:
            return await drop(request)
        return web.Response(text="ok")

    other.handler("/h", h)
    site.redirect("/r", other.url("/h"))
    report = await linkhound.check([site.url("/r")], max_retries=1, retry_backoff=0.01)
    assert site.hits("/r") == 1
    (r,) = report.results
    assert r.status is Status.OK and r.redirects == (other.url("/h"),) and r.redirect_codes == (301,)


async def test_redirect_loop_and_too_many_redirects(site: Site) -> None:
    site.redirect("/a", "/b")
    site.redirect("/b", "/a")
    for i in range(5):
        site.redirect(f"/r{i}", f"/r{i + 1}")
    site.page("/r5", "end")
    site.page("/index.html", html("/a", "/r0"))
    report = await linkhound.check([site.url("/index.html")], max_redirects=3)
    results = by_url(report)
    assert results[site.url("/a")].status is Status.ERROR
    assert "loop" in results[site.url("/a")].reason
    assert results[site.url("/r0")].status is Status.ERROR
    assert "redirects" in results[site.url("/r0")].reason


async def test_a_location_in_raw_utf8_is_followed_as_browsers_do(site: Site, both_clients: str) -> None:
    site.redirect("/go", "/café", 302)  # (aiohttp writes the header's UTF-8 bytes as they are)
    site.page("/caf%C3%A9", "ok")
    report = await linkhound.check([site.url("/go")])
    [result] = report.results
    if both_clients == "reqwest":  # it can't hand over such a header: an error that says why, no crash
        assert (result.status, result.reason) == (
            Status.ERROR, "redirect Location is not ASCII text (unreadable with --http-client reqwest)")
        return
    assert (result.status, result.redirects) == (Status.OK, (site.url("/caf%C3%A9"),))


async def test_a_redirect_end_listed_below_its_redirect_is_not_requested_again(site: Site, tmp_path: Path) -> None:
    # r{i} -> e{i}, each e listed far below (read after its redirect was followed): the answer the redirect ended
    # at is the end's own result, references and all; one with a #fragment keeps its anchors too
    lines = []
    for i in range(40):
        site.page(f"/e{i}", html(title=f"e{i}", extra='<h2 id="here">x</h2>'))
        site.redirect(f"/r{i}", f"/e{i}")
        lines.append(site.url(f"/r{i}" + ("#here" if i % 4 == 0 else "")))
    site.status("/gone", 404)
    site.redirect("/to-gone", "/gone")
    lines.append(site.url("/to-gone"))
    for i in range(100):  # (the queue reads 2 x 4 links ahead)
        site.page(f"/f{i}", "ok")
        lines.append(site.url(f"/f{i}"))
    lines += [site.url(f"/e{i}" + ("#here" if i % 4 == 0 else "")) for i in range(40)]
    lines += [site.url("/e1#nowhere"), site.url("/gone")]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await linkhound.check(str(tmp_path / "urls.txt"), max_concurrency=4, host_concurrency=4,
                                   check_fragments=True)
    assert_asked_once(site)
    results = {r.url: r for r in report.results}
    for i in range(40):
        end = results[site.url(f"/e{i}")]
        assert end.status is Status.OK and end.code == 200 and end.redirects == () and len(end.references) == 1
        assert results[site.url(f"/r{i}")].redirects == (site.url(f"/e{i}"),)
    nowhere = results[site.url("/e1#nowhere")]  # (e1's own link asked for no fragment: a GET for its anchors)
    assert nowhere.status is Status.BROKEN and "no anchor" in nowhere.reason
    gone = results[site.url("/gone")]
    assert gone.status is Status.BROKEN and gone.code == 404 and gone.redirects == ()


def _two_redirects_each(site: Site, tmp_path: Path, to: Callable[[int], str]) -> Path:
    """A list of /a{i} (301 to to(i)), 40 pages, then /b{i} (302 to to(i)), i < 20; /e{i} answers 200, or 404
    for every fifth. The /b are read well after their /a were followed (the queue reads 2 x 4 links ahead)."""
    lines = []
    for i in range(20):
        if i % 5:
            site.page(f"/e{i}", "ok")
        else:
            site.status(f"/e{i}", 404)
        site.redirect(f"/a{i}", to(i))
        site.redirect(f"/b{i}", to(i), 302)
        lines.append(site.url(f"/a{i}"))
    for i in range(40):
        site.page(f"/f{i}", "ok")
        lines.append(site.url(f"/f{i}"))
    lines += [site.url(f"/b{i}") for i in range(20)]
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    return urls


async def test_redirects_to_one_end_ask_it_once(site: Site, tmp_path: Path) -> None:
    # /a{i} and /b{i} both -> /e{i}, which no link names: the second redirect takes the answer the first ended at
    urls = _two_redirects_each(site, tmp_path, lambda i: f"/e{i}")
    report = await linkhound.check(str(urls), max_concurrency=4, host_concurrency=4)
    assert_asked_once(site)
    results = by_url(report)
    for i in range(20):
        assert_aliases_of_one_end(site, results, f"/a{i}", f"/b{i}", f"/e{i}", ok=i % 5 != 0)
    assert site.url("/e1") not in results  # (no link names the ends)


@pytest.mark.parametrize("jobs", [1, 2])
async def test_redirects_through_one_hop_ask_the_hop_once(site: Site, tmp_path: Path, jobs: int) -> None:
    # /a{i} -> /h{i} -> /e{i} and, read well after, /b{i} -> /h{i} (no link names /h or /e): the second redirect
    # joins the way the first went from the hop on, in one process or in two
    for i in range(20):
        site.redirect(f"/h{i}", f"/e{i}", 308)
    urls = _two_redirects_each(site, tmp_path, lambda i: f"/h{i}")
    report = await linkhound.check(str(urls), max_concurrency=4, host_concurrency=4, jobs=jobs)
    assert_asked_once(site)
    results = by_url(report)
    for i in range(20):
        a, b = results[site.url(f"/a{i}")], results[site.url(f"/b{i}")]
        assert a.redirects == b.redirects == (site.url(f"/h{i}"), site.url(f"/e{i}"))
        assert a.redirect_codes == (301, 308) and b.redirect_codes == (302, 308)
        assert a.status is b.status is (Status.OK if i % 5 else Status.BROKEN)
        assert a.code == b.code == (200 if i % 5 else 404)


@pytest.mark.parametrize("jobs", [1, 2])
async def test_a_listed_url_that_was_a_hop_takes_the_way_from_there(site: Site, tmp_path: Path, jobs: int) -> None:
    # /a{i} -> /h{i} -> /e{i}, then /b{i} -> /h{i}, then /h{i} itself, listed last: its own claim takes the way
    # the first redirect went from it (no second request of the hop or of its end)
    for i in range(20):
        site.redirect(f"/h{i}", f"/e{i}", 308)
    urls = _two_redirects_each(site, tmp_path, lambda i: f"/h{i}")
    with urls.open("a") as f:
        f.writelines(site.url(f"/h{i}") + "\n" for i in range(20))
    report = await linkhound.check(str(urls), max_concurrency=4, host_concurrency=4, jobs=jobs)
    assert_asked_once(site)
    results = by_url(report)
    for i in range(20):
        h = results[site.url(f"/h{i}")]
        assert h.redirects == (site.url(f"/e{i}"),) and h.redirect_codes == (308,)
        assert h.status is results[site.url(f"/a{i}")].status is (Status.OK if i % 5 else Status.BROKEN)
        assert h.code == (200 if i % 5 else 404)


async def test_redirects_in_flight_together_ask_their_end_once(site: Site, tmp_path: Path) -> None:
    # Pairs of redirects claimed together, sharing a hop no link names; the shared hop answers only once the
    # second redirect has been asked, so both are in flight at once. The second waits for the first's answer.
    lines = []
    for i in range(6):
        # /a -> /e and /b -> /e, the end shared (a 404 for some)
        site.redirect(f"/a{i}", f"/e{i}")
        site.redirect(f"/b{i}", f"/e{i}", 302)
        site.answer_after(f"/e{i}", [f"/b{i}"], lambda code=404 if i % 3 == 0 else 200: web.Response(status=code))
        # /c -> /m -> /n and /d -> /m: a hop on the way shared
        site.redirect(f"/c{i}", f"/m{i}")
        site.redirect(f"/d{i}", f"/m{i}", 307)
        site.answer_after(f"/m{i}", [f"/d{i}"], lambda to=f"/n{i}": web.Response(status=308, headers={"Location": to}))
        site.page(f"/n{i}", "ok")
        lines += [site.url(f"/{p}{i}") for p in "abcd"]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await linkhound.check(str(tmp_path / "urls.txt"), max_concurrency=8, host_concurrency=8)
    assert_asked_once(site)
    results = by_url(report)
    for i in range(6):
        assert_aliases_of_one_end(site, results, f"/a{i}", f"/b{i}", f"/e{i}", ok=i % 3 != 0)
        c, d = results[site.url(f"/c{i}")], results[site.url(f"/d{i}")]
        assert c.redirects == d.redirects == (site.url(f"/m{i}"), site.url(f"/n{i}"))
        assert c.redirect_codes == (301, 308) and d.redirect_codes == (307, 308)
        assert c.status is d.status is Status.OK and c.code == d.code == 200


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("failure", ["timeout", "reset"])
async def test_redirects_through_a_hop_with_no_answer_share_its_failure(site: Site, make_site: SiteFactory,
                                                                        tmp_path: Path, jobs: int, failure: str,
                                                                        both_clients: str) -> None:
    # /f and /g -> /x on another host, which no link names; /x gives no answer (too slow, or the connection
    # reset), each time only once both redirects reached it. /x is asked once: both take its failure, with the
    # chain that led there; /k -> /x, read well after, takes it too (kept as /x's own verdict)
    other = await make_site("127.0.0.2")

    async def x(request: web.Request) -> web.StreamResponse:
        await until_asked(site, "/g")
        if failure == "reset":
            return await drop(request)
        await asyncio.sleep(2)
        return web.Response(text="late", content_type="text/html")

    site.redirect("/f", other.url("/x"))
    site.redirect("/g", other.url("/x"), 302)
    site.redirect("/k", other.url("/x"), 307)
    other.handler("/x", x)
    lines = [site.url("/f"), site.url("/g")] + [site.url(f"/p{i}") for i in range(20)] + [site.url("/k")]
    for i in range(20):
        site.page(f"/p{i}", "ok")
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await linkhound.check(str(tmp_path / "urls.txt"), max_concurrency=8, host_concurrency=8, timeout=1,
                                   max_retries=0, jobs=jobs)  # (/f and /g in flight together, in any process)
    assert_asked_once(site)
    if failure == "reset" and both_clients != "native":
        # (asked again once on a new connection when its connection is reset: it may be a stale kept-alive one;
        # RFC 9112 9.3.1)
        assert other.hits("/x") <= 2
    else:
        assert_asked_once(other)
    results = by_url(report)
    status = Status.TIMEOUT if failure == "timeout" else Status.ERROR
    for path, code in (("/f", 301), ("/g", 302), ("/k", 307)):
        r = results[site.url(path)]
        assert r.status is status, (path, r)
        assert r.redirects == (other.url("/x"),) and r.redirect_codes == (code,)
    assert results[site.url("/f")].reason == results[site.url("/g")].reason == results[site.url("/k")].reason


async def test_accept_codes(site: Site) -> None:
    site.status("/forbidden", 403)
    site.page("/index.html", html("/forbidden"))
    report = await linkhound.check([site.url("/index.html")], accept="200..=299,403")
    assert by_url(report)[site.url("/forbidden")].status is Status.OK


async def test_local_markdown_file_links(site: Site, tmp_path: Path) -> None:
    site.page("/ok", "fine")
    (tmp_path / "other.md").write_text("# Other\n")
    doc = tmp_path / "README.md"
    doc.write_text(
        f"# Title\n\nSee [ok]({site.url('/ok')}) and [gone]({site.url('/gone')}).\n\n"
        "[local](other.md) and [missing](nope.md) and [mail](mailto:someone@example.org)\n\n"
        "`[code](http://127.0.0.1:1/in-code)`\n"
    )
    report = await linkhound.check([str(doc)])
    results = by_url(report)
    assert results[site.url("/ok")].status is Status.OK
    gone = results[site.url("/gone")]
    assert gone.status is Status.BROKEN
    assert [(r.source, r.line) for r in gone.references] == [(str(doc), 3)]
    assert results[(tmp_path / "other.md").as_uri()].status is Status.OK
    assert results[(tmp_path / "nope.md").as_uri()].status is Status.BROKEN
    assert results["mailto:someone@example.org"].status is Status.OK
    assert not any("in-code" in u for u in results)
    assert site.hits("/ok") == 1


async def test_unsupported_schemes_are_counted_not_broken(site: Site) -> None:
    site.page("/index.html", html("javascript:void(0)", "tel:+123", "data:text/plain,hi"))
    report = await linkhound.check([site.url("/index.html")])
    statuses = {r.url.split(":")[0]: r.status for r in report.results if not r.url.startswith("http")}
    assert statuses == {"javascript": Status.UNSUPPORTED, "tel": Status.UNSUPPORTED, "data": Status.UNSUPPORTED}
    assert report.summary.success


async def test_connections_are_reused(site: Site) -> None:
    peers: set[object] = set()

    async def ok(request: object) -> object:
        from aiohttp import web

        peers.add(request.transport.get_extra_info("peername"))  # type: ignore[attr-defined]
        return web.Response(text="ok")

    paths = [f"/p{i}" for i in range(200)]
    for p in paths:
        site.handler(p, ok)  # type: ignore[arg-type]
    site.page("/index.html", html(*paths))
    report = await linkhound.check([site.url("/index.html")], host_concurrency=4)
    assert report.summary.ok == 201  # the page and its 200 links
    assert len(peers) <= 8  # at most a handful of connections for 200 requests


async def test_requests_start_while_a_long_url_list_is_still_being_read(site: Site, tmp_path: Path) -> None:
    from linkhound.api import _inputs, make_settings
    from linkhound.engine import Engine

    settings = make_settings(max_concurrency=4)
    engine = Engine(settings)
    known_at_first_request: list[int] = []

    async def ok(request: web.Request) -> web.StreamResponse:
        if not known_at_first_request:
            known_at_first_request.append(engine.known())  # links the run had found when this request came
        return web.Response(text="ok")

    for i in range(3000):
        site.handler(f"/p{i}", ok)
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(site.url(f"/p{i}") for i in range(3000)) + "\n")
    report = await engine.run(_inputs([str(listing)], None, settings))
    assert report.summary.success and len(site.requests) == 3000
    assert known_at_first_request and known_at_first_request[0] < 3000  # the list wasn't read to the end first


async def test_a_long_url_list_is_read_about_as_fast_as_it_is_checked(site: Site, tmp_path: Path) -> None:
    from linkhound.api import _inputs, make_settings
    from linkhound.engine import Engine

    settings = make_settings(max_concurrency=4)
    engine = Engine(settings)
    known_at: dict[int, int] = {}

    async def ok(request: web.Request) -> web.StreamResponse:
        known_at[len(site.requests)] = engine.known()  # links read so far, as the n-th request arrives
        return web.Response(text="ok")

    site.prefixes["/p"] = ok
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(site.url(f"/p{i}") for i in range(3000)) + "\n")
    report = await engine.run(_inputs([str(listing)], None, settings))
    assert report.summary.success and len(site.requests) == 3000
    # read ahead by a couple of hundred links at most, not the whole list at once
    assert all(known - n <= 300 for n, known in known_at.items()), max(k - n for n, k in known_at.items())


async def test_a_slow_host_at_the_head_of_a_list_does_not_hold_up_the_rest(
    make_site: SiteFactory, tmp_path: Path
) -> None:
    slow, fast = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    rest_seen = asyncio.Event()
    slow_asked_by_then: list[int] = []

    async def held(request: web.Request) -> web.StreamResponse:
        # answers once the other host's links were all asked for, which they can only be if they were read
        # while this host's long queue waited on its single slot
        try:
            await asyncio.wait_for(rest_seen.wait(), 10)
        except TimeoutError:
            rest_seen.set()  # held up after all: the test fails below, without waiting on each of the 600
        return web.Response(text="ok")

    async def quick(request: web.Request) -> web.StreamResponse:
        if len(fast.requests) == 20:
            slow_asked_by_then.append(len(slow.requests))
            rest_seen.set()
        return web.Response(text="ok")

    slow.prefixes["/s"] = held
    fast.prefixes["/f"] = quick
    listing = tmp_path / "urls.txt"
    urls = [slow.url(f"/s{i}") for i in range(600)] + [fast.url(f"/f{i}") for i in range(20)]
    listing.write_text("\n".join(urls) + "\n")
    report = await linkhound.check([str(listing)], max_concurrency=4, host_concurrency=1)
    assert report.summary.success and len(fast.requests) == 20
    assert slow_asked_by_then == [1]  # the slow host's first request was still waiting


async def test_tls_certificates_are_verified_unless_insecure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ssl

    import trustme

    ca = trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_tls)
    site = await Site().start(tls=server_tls)
    try:
        site.page("/", "ok")
        # a certificate from an unknown authority: refused, with the reason
        (r,) = (await linkhound.check([site.url("/")], max_retries=0)).results
        assert r.status is Status.ERROR and r.reason.startswith("TLS error"), r.reason
        assert site.hits("/") == 0  # the handshake failed: no request was ever made
        # --insecure: not verified, so it goes through
        report = await linkhound.check([site.url("/")], insecure=True)
        assert report.summary.success and site.hits("/") == 1
        # the authority trusted through SSL_CERT_FILE, as a system store would: verified, and fine
        ca_file = tmp_path / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        report = await linkhound.check([site.url("/")])
        assert report.summary.success and site.hits("/") == 2
    finally:
        await site.stop()


PAGE_HEAD = b'<!doctype html><html><body><a href="/a1">a1</a> <a href="/a2">a2</a>'
PAGE_TAIL = b'<a href="/b1">b1</a> <a href="/b2">b2</a></body></html>'


@pytest.mark.parametrize("framing", ["content-length", "a-member-per-chunk"])
async def test_a_gzip_page_of_two_members_has_the_links_of_both(site: Site, framing: str) -> None:
    # RFC 1952: a gzip body may be several members one after another (`cat a.gz b.gz`, a server that compresses
    # each write on its own); the links in the second were never seen
    members = [gzip.compress(PAGE_HEAD), gzip.compress(PAGE_TAIL)]

    async def page(request: web.Request) -> web.StreamResponse:
        headers = {"Content-Encoding": "gzip", "Content-Type": "text/html"}
        if framing == "content-length":
            return web.Response(body=b"".join(members), headers=headers)
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        for member in members:
            await resp.write(member)
        await resp.write_eof()
        return resp

    site.handler("/", page)
    for path in ("/a1", "/a2", "/b1"):
        site.page(path, "ok", content_type="text/plain")
    report = await linkhound.check([site.url("/")], max_retries=0)
    results = {r.url.removeprefix(site.base): (r.status, r.code) for r in report.results}
    assert results == {"/": (Status.OK, 200), "/a1": (Status.OK, 200), "/a2": (Status.OK, 200),
                       "/b1": (Status.OK, 200), "/b2": (Status.BROKEN, 404)}
    assert site.hits("/b1") == site.hits("/b2") == 1
    (asked,) = [r for r in site.requests if r.path == "/"]
    assert {"gzip", "deflate"} <= {e.strip() for e in asked.headers["Accept-Encoding"].split(",")}


async def test_a_gzip_page_cut_before_its_trailer_is_read_as_far_as_it_goes(site: Site) -> None:
    # the 8 bytes of CRC and length missing (the content is all there): every stack reads the page, as browsers
    # do; reqwest failed it as "connection reset", and asked again
    body = gzip.compress(PAGE_HEAD + PAGE_TAIL)[:-8]
    site.handler("/", lambda request: _gzip_answer(body))
    report = await linkhound.check([site.url("/")], max_retries=0)
    results = {r.url.removeprefix(site.base): r for r in report.results}
    assert results["/"].status is Status.OK and results["/"].reason == "OK"
    assert sorted(results) == ["/", "/a1", "/a2", "/b1", "/b2"]
    assert site.hits("/") == 1 and site.hits("/b2") == 1


async def test_a_gzip_page_that_does_not_decode_is_a_bad_response_asked_once(site: Site) -> None:
    # a CRC that doesn't match: the same bad response on every stack, not a reset to ask again about (aiohttp
    # said "connection reset while reading the body", and was asked again)
    whole = gzip.compress(PAGE_HEAD + PAGE_TAIL)
    body = whole[:-8] + bytes(4) + whole[-4:]
    site.handler("/", lambda request: _gzip_answer(body))
    report = await linkhound.check([site.url("/")], max_retries=1, retry_backoff=0.01)
    (r,) = report.results
    assert r.status is Status.ERROR and r.reason == "bad response: body not decodable as gzip"
    assert site.hits("/") == 1


async def _gzip_answer(body: bytes) -> web.StreamResponse:
    return web.Response(body=body, headers={"Content-Encoding": "gzip", "Content-Type": "text/html"})


async def test_a_zstd_page_is_read_by_reqwest_which_alone_asks_for_it(site: Site, both_clients: str) -> None:
    # reqwest asks for zstd and br besides gzip and deflate, and decodes those two itself; the other stacks ask
    # for gzip and deflate only, so a zstd body sent anyway is a bad response there, not a page of noise
    frame = b'(\xb5/\xfd$-i\x01\x00<html><body><a href="/z1">z</a></body></html>\xcf\xbb\xcb\x10'  # (zstd -19)

    async def page(request: web.Request) -> web.StreamResponse:
        return web.Response(body=frame, headers={"Content-Encoding": "zstd", "Content-Type": "text/html"})

    site.handler("/", page)
    site.page("/z1", "ok", content_type="text/plain")
    report = await linkhound.check([site.url("/")], max_retries=0)
    results = {r.url.removeprefix(site.base): (r.status, r.reason) for r in report.results}
    if both_clients == "reqwest":
        assert results == {"/": (Status.OK, "OK"), "/z1": (Status.OK, "OK")}
    else:
        assert results == {"/": (Status.ERROR, "bad response: body in 'zstd' encoding, which was not asked for")}
