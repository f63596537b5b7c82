"""Per-host politeness against real servers: caps, token buckets, Retry-After, robots.txt, no head-of-line."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from cli_run import HANG_GUARD
from linkhound import Status
from linkhound.hop_gate import HopGate
from linkhound.host_pool import HostLimits, HostPool
from linkhound.mock_transport import MockRequest, MockResponse, MockTransport
from linkhound.urls import host_of
from linkhound.version import user_agent
from server import Site, SiteFactory, html, until

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


async def test_peak_concurrency_per_host_is_the_cap(site: Site) -> None:
    paths = [f"/s{i}" for i in range(60)]
    for p in paths:
        site.slow(p, 0.05)
    site.page("/", html(*paths))
    await linkhound.check([site.url("/")], host_concurrency=3, max_concurrency=50)
    assert site.peak == 3  # reached, never passed


async def test_token_bucket_spaces_requests(site: Site) -> None:
    paths = [f"/t{i}" for i in range(10)]
    for p in paths:
        site.page(p, "ok")
    site.page("/", html(*paths))
    await linkhound.check([site.url("/")], host_rate=10.0, host_burst=2)
    times = sorted(r.at for r in site.requests)
    t0 = times[0]
    # 11 requests at 10/s with a bucket of 2: request k may not start before (k - 1) / 10 s. Arrival times
    # jitter on a loaded machine (the first request may arrive late): 50 ms of slack, against 1 s in all
    for k, t in enumerate(times):
        assert t - t0 >= (k - 1) / 10.0 - 0.05, (k, t - t0)
    assert times[-1] - t0 >= 0.85


async def test_retry_after_blocks_the_host_but_not_others(site: Site, make_site: SiteFactory) -> None:
    other = await make_site("127.0.0.2")
    first = True

    async def limited(request: web.Request) -> web.StreamResponse:
        nonlocal first
        if first:
            first = False
            return web.Response(status=429, headers={"Retry-After": "2"})
        return web.Response(text="ok")

    site.handler("/limited", limited)
    for i in range(5):
        site.slow(f"/a{i}", 0.01)
    others = [other.url(f"/b{i}") for i in range(30)]
    for i in range(30):
        other.slow(f"/b{i}", 0.05)
    site.page("/", html("/limited", *[f"/a{i}" for i in range(5)], *others))
    report = await linkhound.check([site.url("/")], host_concurrency=1, max_retries=2)
    assert all(r.status is Status.OK for r in report.results)
    t429 = next(r.at for r in site.requests if r.path == "/limited")
    after = [r.at for r in site.requests if r.at > t429]
    assert after and min(after) - t429 >= 1.95  # nothing asked of this host before Retry-After passed
    served_meanwhile = [r for r in other.requests if t429 < r.at < t429 + 1.9]
    assert len(served_meanwhile) >= 10


async def test_a_claim_waiting_to_retry_lends_its_global_slot_to_other_hosts(site: Site,
                                                                              make_site: SiteFactory) -> None:
    # --max-concurrency 2: both slots go to URLs of two hosts answering 429 (Retry-After: 1); while they wait,
    # a third host's eight URLs are asked (they waited the whole second behind them); then the two pass
    third, other = await make_site("127.0.0.3"), await make_site("127.0.0.2")
    asked: set[str] = set()

    async def limited(request: web.Request) -> web.StreamResponse:
        if request.host not in asked:
            asked.add(request.host)
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="ok")

    site.handler("/x", limited)
    third.handler("/y", limited)
    for i in range(8):
        other.page(f"/b{i}", "ok")
    inputs = [site.url("/x"), third.url("/y"), *[other.url(f"/b{i}") for i in range(8)]]
    report = await linkhound.check(inputs, max_concurrency=2, max_retries=1)
    assert all(r.status is Status.OK for r in report.results)
    (x429, x_again), (y429, y_again) = [r.at for r in site.requests], [r.at for r in third.requests]
    assert max(x429, y429) < min(r.at for r in other.requests)  # (the two slots went to them first)
    assert max(r.at for r in other.requests) < min(x_again, y_again)  # served while those two waited
    assert len(other.requests) == 8


async def test_a_redirect_waiting_at_its_hop_host_rate_lends_its_global_slot(site: Site,
                                                                            make_site: SiteFactory) -> None:
    # --max-concurrency 2: both slots go to URLs of two hosts that redirect twice into a host allowed one request
    # a second; their hops wait for its tokens (one at once, the next three a second apart), and meanwhile a
    # fourth host's eight URLs are asked (before, they waited until one of the redirects ended, 2 s on)
    second, target, other = [await make_site(h) for h in ("127.0.0.4", "127.0.0.3", "127.0.0.2")]
    for n, start in enumerate((site, second)):
        start.redirect("/r", target.url(f"/x{n}"), code=302)
        target.redirect(f"/x{n}", f"/y{n}", code=302)
        target.page(f"/y{n}", "ok")
    for i in range(8):
        other.page(f"/b{i}", "ok")
    inputs = [site.url("/r"), second.url("/r"), *[other.url(f"/b{i}") for i in range(8)]]
    report = await linkhound.check(inputs, max_concurrency=2, hosts={"127.0.0.3": {"rate": 1.0, "burst": 1}})
    assert all(r.status is Status.OK for r in report.results), [r for r in report.results if r.status != Status.OK]
    starts = [r.at for r in (*site.requests, *second.requests)]
    hops = sorted(r.at for r in target.requests)
    assert len(hops) == 4 and max(starts) < min(r.at for r in other.requests)  # (the two slots went to them first)
    assert max(r.at for r in other.requests) < hops[1]  # served while both redirects waited for a token
    assert len(other.requests) == 8


async def test_a_rate_limited_host_never_holds_up_others(tmp_path: Path) -> None:
    """Order, not throughput: while the slow host waits for its next token (5 per second), the fast host's
    requests go on. Instant answers from a mock transport; no timing assertion."""
    starts: list[tuple[str, float]] = []

    def answer(request: MockRequest) -> MockResponse:
        starts.append((request.url.split("/")[2], time.monotonic()))
        return MockResponse(200, {"Content-Type": "text/plain"})

    slow_urls = [f"http://127.0.0.1:9/a{i}" for i in range(6)]
    fast_urls = [f"http://127.0.0.2:9/b{i}" for i in range(3000)]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(slow_urls + fast_urls))
    run = linkhound.start(
        str(listing), transport=MockTransport(answer), hosts={"127.0.0.1": {"rate": 5.0, "burst": 1}}
    )
    report = await run.report()
    assert report.summary.ok == len(slow_urls) + len(fast_urls)
    hosts = [host for host, _ in starts]
    slow_at = [i for i, host in enumerate(hosts) if host.startswith("127.0.0.1")]
    last_fast = max(i for i, host in enumerate(hosts) if host.startswith("127.0.0.2"))
    # every wait of the slow host that began while fast work remained was used by fast requests
    gaps = [(a, b) for a, b in zip(slow_at, slow_at[1:], strict=False) if a < last_fast]
    assert gaps and all(b - a > 1 for a, b in gaps)
    # and the slow host's tokens were kept: 5 requests after the first need 5 tokens at 5 per second (a single
    # gap may look short when one send was late; their sum can't)
    times = [t for host, t in starts if host.startswith("127.0.0.1")]
    assert times[-1] - times[0] >= (len(times) - 1) * 0.2 - 0.05


async def test_robots_txt_fetched_once_disallow_and_crawl_delay(site: Site) -> None:
    site.page("/robots.txt", "User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n", content_type="text/plain")
    site.page("/", html(*[f"/p{i}" for i in range(6)], "/private/secret"))
    for i in range(6):
        site.page(f"/p{i}", html("/", "/private/other"))
    report = await linkhound.check([site.url("/")], recursive=True, host_concurrency=8)
    assert site.hits("/robots.txt") == 1
    assert site.hits("/private/secret") == 0 and site.hits("/private/other") == 0
    status = {r.url.removeprefix(site.base): r for r in report.results}
    assert status["/private/secret"].status is Status.SKIPPED and "robots" in status["/private/secret"].reason
    assert report.summary.success
    # Crawl-delay 0.2 s: the k-th page no sooner than k * 0.2 s after the first (arrival jitter doesn't add up)
    pages = sorted(r.at for r in site.requests if r.path.startswith("/p"))
    for k, t in enumerate(pages):
        assert t - pages[0] >= k * 0.2 - 0.05, (k, t - pages[0])


async def test_a_robots_txt_that_starts_with_a_byte_order_mark_keeps_its_first_group(site: Site) -> None:
    async def robots(request: web.Request) -> web.StreamResponse:
        return web.Response(body=b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private/\r\n", content_type="text/plain")

    site.handler("/robots.txt", robots)
    site.page("/", html("/private/a.html", "/open.html"))
    site.page("/open.html", html())
    await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/private/a.html") == 0 and site.hits("/open.html") == 1


async def test_robots_txt_is_read_to_512_kib_whatever_the_max_body_size(site: Site) -> None:
    """RFC 9309 asks crawlers to parse at least 500 KiB of robots.txt: a rule near the end of a long one holds
    with a small --max-body-size."""
    filler = "".join(f"# line {i} of a long robots.txt, kept to make it long\n" for i in range(4000))  # ~220 KB
    site.page("/robots.txt", f"User-agent: *\n{filler}Disallow: /private/\n", content_type="text/plain")
    site.page("/", html("/private/a.html", "/open.html"))
    site.page("/open.html", html())
    report = await linkhound.check([site.url("/")], recursive=True, max_body_size=4096)
    assert site.hits("/private/a.html") == 0 and site.hits("/open.html") == 1
    assert {r.url: r.status for r in report.results}[site.url("/private/a.html")] is Status.SKIPPED


async def test_robots_txt_request_takes_its_token_of_the_host_rate(site: Site) -> None:
    """robots.txt is a request like the others: at 5 per second with a bucket of 1, the first page waits for
    the token robots.txt took."""
    site.page("/robots.txt", "User-agent: *\nDisallow: /private\n", content_type="text/plain")
    site.page("/", html("/p0", "/p1"))
    for i in range(2):
        site.page(f"/p{i}", "ok")
    report = await linkhound.check([site.url("/")], recursive=True, host_rate=5.0, host_burst=1)
    assert report.summary.success and site.hits("/robots.txt") == 1
    times = sorted(r.at for r in site.requests)
    assert [r.path for r in sorted(site.requests, key=lambda r: r.at)][:2] == ["/robots.txt", "/"]
    for k, t in enumerate(times):
        assert t - times[0] >= k * 0.2 - 0.05, (k, t - times[0])


async def test_crawl_delay_spaces_the_first_page_from_the_robots_txt_request(site: Site) -> None:
    """The robots.txt request is one request to the host: the first page comes Crawl-delay after it, not at once."""
    site.page("/robots.txt", "User-agent: *\nCrawl-delay: 1\n", content_type="text/plain")
    site.page("/", "ok")
    report = await linkhound.check([site.url("/")], recursive=True)
    assert report.summary.success and site.hits("/robots.txt") == 1
    at = {r.path: r.at for r in site.requests}
    assert at["/"] - at["/robots.txt"] >= 0.9


async def test_redirect_hops_and_retries_keep_the_rate_of_their_host(site: Site, make_site: SiteFactory) -> None:
    """A hop is a request to its host like any other: twelve links on one host, each redirected to another host
    with a rate of 10/s, and a chain of hops within that host, reach it a token at a time; so does a retry."""
    other = await make_site("127.0.0.2")
    for i in range(12):
        site.redirect(f"/r{i}", other.url(f"/slow{i}"), 302)
        other.slow(f"/slow{i}", 0.05)
    for i in range(3):  # /h0 -> /h1 -> /h2 -> /h3 on the host with a rate
        other.redirect(f"/h{i}", f"/h{i + 1}", 301)
    other.page("/h3", "ok")
    answers = iter([web.Response(status=503)])

    async def flaky(request: web.Request) -> web.StreamResponse:
        return next(answers, None) or web.Response(text="ok")

    other.handler("/flaky", flaky)
    site.page("/", html(*[f"/r{i}" for i in range(12)], other.url("/h0"), other.url("/flaky")))
    report = await linkhound.check([site.url("/")], host_concurrency=8, retry_backoff=0.01,
                                   hosts={"127.0.0.2": {"rate": 10.0, "burst": 1}})
    assert report.summary.success and report.summary.unique == 15
    assert sorted(other.asked()) == sorted([f"/slow{i}" for i in range(12)] + [f"/h{i}" for i in range(4)]
                                           + ["/flaky", "/flaky"])
    times = sorted(r.at for r in other.requests)  # 18 requests at 10/s with a bucket of 1: 0.1 s apart at least
    for k, t in enumerate(times):
        assert t - times[0] >= k * 0.1 - 0.05, (k, t - times[0])


async def test_the_hop_gate_moves_a_checks_slot_to_its_hops_host_and_hands_it_the_next_slot_given_back() -> None:
    pool = HostPool(HostLimits(1, 20.0, 1))
    a, b = host_of("http://a.test/"), host_of("http://b.test/")
    assert pool.try_acquire(a) == 0.0 and pool.try_acquire(b) == 0.0  # the check's slot of a; b at its cap
    gate = HopGate(pool, None, lambda url: True)

    async def check() -> str:  # a check given a's slot: a retry on a, then a hop into b
        await gate.enter("http://a.test/x", False, None, a)  # same host: a token, the slot kept
        assert pool.try_acquire(a) == math.inf
        await gate.enter("http://b.test/y", False, None, a)
        return gate.settle(a)  # the slot it holds at its end

    checking = asyncio.ensure_future(check())
    await until(lambda: pool.try_acquire(a) == 0.0)  # a's slot given back at once, while the hop waits for b
    pool.release(a)
    assert not checking.done() and pool.try_acquire(b) == math.inf
    pool.release(b)  # b's slot goes on to the hop, not to a claim the scheduler would take meanwhile
    assert await asyncio.wait_for(checking, HANG_GUARD) == b
    assert pool.try_acquire(b) == math.inf
    # a check that others wait for in their slots (robots.txt, a soft-404 probe: no slot) takes tokens only
    await asyncio.wait_for(gate.enter("http://b.test/z", False), HANG_GUARD)
    assert pool.try_acquire(b) == math.inf and pool.stats()[b].requests == 3


@pytest.mark.parametrize("jobs", [1, 2])
async def test_redirects_from_many_hosts_into_one_keep_its_concurrency_cap(make_site: SiteFactory, tmp_path: Path,
                                                                           jobs: int) -> None:
    """Thirty links on six hosts, each redirected to a page of another host that takes a moment to answer: that
    host has no more requests in flight than --host-concurrency, in one process or two (hops took only its
    tokens: twelve at once, two from each host of the links)."""
    b = await make_site("127.0.0.2")
    lines = []
    for n in range(6):
        links = await make_site(f"127.0.0.{n + 3}")
        for i in range(5):
            links.redirect(f"/r{i}", b.url(f"/d{n}-{i}"), 302)
            b.slow(f"/d{n}-{i}", 0.05)
            lines.append(links.url(f"/r{i}"))
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), host_concurrency=2,
                                                    max_concurrency=64, jobs=jobs), HANG_GUARD)
    assert [r.status for r in report.results] == [Status.OK] * 30
    assert sorted(b.asked()) == sorted(f"/d{n}-{i}" for n in range(6) for i in range(5))  # each once
    assert b.peak <= 2


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("most", [2, 32])
async def test_redirects_from_many_hosts_into_one_hop_all_end(make_site: SiteFactory, tmp_path: Path, jobs: int,
                                                             most: int) -> None:
    """Links on two hosts that all redirect to one hop of a third (no link names it), some through another hop
    there first; the hop goes out to a fourth host and back to its end on the third. One request of the hop
    answers every redirect waiting for it: they gave back their slots (of the third host too) while they waited,
    so the one fetching it finds a slot there when it comes back (they waited for it holding the slots it waited
    for, until --timeout had passed eleven times)."""
    b, c = await make_site("127.0.0.2"), await make_site("127.0.0.5")
    b.redirect("/hop", c.url("/mid"), 302)
    c.handler("/mid", lambda request: asyncio.sleep(0.3, web.Response(status=307, headers={"Location": b.url("/end")})))
    b.slow("/end", 0.1)
    lines = []
    for host in ("127.0.0.3", "127.0.0.4"):
        links = await make_site(host)
        for i in range(4):
            links.redirect(f"/r{i}", b.url("/hop"), 302)
            links.redirect(f"/v{i}", b.url(f"/via{host[-1]}{i}"), 302)
            b.redirect(f"/via{host[-1]}{i}", "/hop", 301)
            lines += [links.url(f"/r{i}"), links.url(f"/v{i}")]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), host_concurrency=2, timeout=5,
                                                    max_concurrency=most, max_retries=0, jobs=jobs), 20)
    results = {r.url: r for r in report.results}
    assert len(results) == 16 and all(r.status is Status.OK for r in results.values()), results
    for url, r in results.items():
        assert r.redirects[-3:] == (b.url("/hop"), c.url("/mid"), b.url("/end")), url
    assert b.hits("/hop") == b.hits("/end") == 1 and b.peak <= 2


async def test_redirects_waiting_for_one_hop_lend_their_global_slots(make_site: SiteFactory, tmp_path: Path) -> None:
    """--max-concurrency 2, and the hop's host capped at 1 and kept busy: the redirect fetching the hop waits for
    that host's slot on its way back, its global slot lent; the redirects waiting for it lend theirs too, so it
    gets one back once it has the slot (they held them all, and it waited for one until --timeout had passed
    eleven times)."""
    b, c, links = await make_site("127.0.0.2"), await make_site("127.0.0.5"), await make_site("127.0.0.3")
    b.redirect("/hop", c.url("/mid"), 302)
    c.handler("/mid", lambda request: asyncio.sleep(0.3, web.Response(status=307, headers={"Location": b.url("/end")})))
    b.page("/end", "ok")
    lines = [links.url("/r")]
    links.redirect("/r", b.url("/hop"))
    for i in range(6):
        b.slow(f"/s{i}", 0.25)
        lines.append(b.url(f"/s{i}"))
    for i in range(8):
        links.redirect(f"/r{i}", b.url("/hop"), 302)
        lines.append(links.url(f"/r{i}"))
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), timeout=5, max_concurrency=2,
                                                    max_retries=0, hosts={"127.0.0.2": {"concurrency": 1}}), 20)
    assert len(report.results) == 15 and all(r.status is Status.OK for r in report.results)
    assert b.hits("/hop") == b.hits("/end") == 1 and b.peak == 1


async def test_a_page_redirected_to_where_robots_txt_disallows_is_not_fetched(site: Site) -> None:
    site.page("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.page("/", html("/go"))
    site.redirect("/go", "/private/p.html", 302)
    site.page("/private/p.html", html("/found-only-there.html"))
    report = await linkhound.check([site.url("/")], recursive=True)
    go = next(r for r in report.results if r.url == site.url("/go"))
    assert go.status is Status.SKIPPED and go.reason == "redirect to a page disallowed by robots.txt"
    assert go.redirects == (site.url("/private/p.html"),)
    assert site.hits("/private/p.html") == 0 and site.hits("/found-only-there.html") == 0
    # a page named as an input is crawled whatever robots.txt says, and so is where it redirects
    report = await linkhound.check([site.url("/go")], recursive=True)
    assert site.hits("/private/p.html") == 1 and site.hits("/found-only-there.html") == 1


async def test_a_url_of_the_crawl_robots_txt_disallows_is_not_requested_when_only_checked(
        site: Site, make_site: SiteFactory) -> None:
    """A disallowed URL of the crawl's scope is skipped whether it is crawled or only checked (a link past
    --max-depth, an image): one link deeper does not make it a request. A link out of scope is only checked, as
    before: its host's robots.txt is not read."""
    other = await make_site("127.0.0.2")
    other.page("/robots.txt", "User-agent: *\nDisallow: /\n", content_type="text/plain")
    other.page("/elsewhere.html", "ok")
    site.page("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.page("/", html("/private/p.html", "/open.html", "/go", other.url("/elsewhere.html"),
                        extra='<img src="/private/logo.png">'))
    site.page("/open.html", "open")
    site.redirect("/go", "/private/q.html", 302)
    report = await linkhound.check([site.url("/")], recursive=True, max_depth=0)
    status = {r.url: r for r in report.results}
    assert site.hits("/private/p.html") == 0 and site.hits("/private/logo.png") == 0
    assert site.hits("/go") == 1 and site.hits("/private/q.html") == 0  # (nor its redirect's hop)
    assert status[site.url("/go")].status is Status.SKIPPED
    for path in ("/private/p.html", "/private/logo.png"):
        assert status[site.url(path)].status is Status.SKIPPED
        assert status[site.url(path)].reason == "disallowed by robots.txt"
    assert site.hits("/open.html", "HEAD") == 1 and site.hits("/open.html", "GET") == 0  # (a leaf: checked)
    assert other.hits("/robots.txt") == 0 and other.hits("/elsewhere.html") == 1
    assert report.summary.success


async def test_a_host_of_the_crawl_reached_only_by_leaves_is_held_until_its_robots_txt_is_read(
        site: Site, make_site: SiteFactory) -> None:
    """A host in the crawl's scope (--scope-domain) whose URLs are only checked (images, links past --max-depth)
    has its robots.txt read before the first of them, as a host of pages has: its disallowed URLs are skipped,
    and its first request comes Crawl-delay after robots.txt. Meanwhile the host is held, not a claim in a slot:
    with one request at a time, other hosts are served while robots.txt is read (no head-of-line blocking)."""
    other = await make_site("127.0.0.2")
    saw_p: list[bool] = []

    async def robots(request: web.Request) -> web.StreamResponse:
        for _ in range(500):  # (5 s at most: a run whose only slot waits for this answer still ends)
            if site.hits("/p"):
                break
            await asyncio.sleep(0.01)
        saw_p.append(bool(site.hits("/p")))
        return web.Response(text="User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")

    other.handler("/robots.txt", robots)
    other.page("/a.png", "PNG", content_type="image/png")
    site.page("/", f'<img src="{other.url("/a.png")}"><img src="{other.url("/private/b.png")}">' + html("/p"))
    site.page("/p", html(other.url("/c.html")))
    other.page("/c.html", "ok")
    report = await linkhound.check([site.url("/")], recursive=True, max_depth=1, max_concurrency=1,
                                   scope_domain=("127.0.0.2",))
    assert report.summary.success and saw_p == [True]
    assert other.hits("/private/b.png") == 0 and other.hits("/a.png") == 1 and other.hits("/c.html") == 1
    at = sorted(r.at for r in other.requests)
    assert [r.path for r in sorted(other.requests, key=lambda r: r.at)][0] == "/robots.txt"
    for k, t in enumerate(at):  # Crawl-delay 1 s from the robots.txt request on
        assert t - at[0] >= k * 1.0 - 0.1, (k, t - at[0])


async def test_robots_404_allows_all_and_500_disallows(site: Site, make_site: SiteFactory) -> None:
    site.page("/", html("/a"))
    site.page("/a", "ok")
    await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/a", "GET") == 1

    broken = await make_site("127.0.0.4")
    broken.status("/robots.txt", 500)
    broken.page("/", html("/a"))
    broken.page("/a", "ok")
    report = await linkhound.check([broken.url("/")], recursive=True, max_retries=0)
    assert broken.hits("/a") == 0
    # RFC 9309: the host is off limits; the crawl that was asked for did not happen, which fails the run
    assert {r.status for r in report.results if r.url.endswith("/a")} == {Status.ERROR}
    assert not report.summary.success
    assert any("robots.txt" in w and "500" in w for w in report.summary.warnings)
    await linkhound.check([broken.url("/")], recursive=True, robots=False)
    assert broken.hits("/a") == 1


async def test_robots_txt_is_asked_again_after_a_503_and_its_retry_after(site: Site) -> None:
    answers = iter([web.Response(status=503, headers={"Retry-After": "1"})])

    async def robots(request: web.Request) -> web.StreamResponse:
        return next(answers, None) or web.Response(text="User-agent: *\nDisallow: /private\n")

    site.handler("/robots.txt", robots)
    site.page("/", html("/a", "/private"))
    site.page("/a", "ok")
    report = await linkhound.check([site.url("/")], recursive=True, retry_backoff=0.1)
    assert site.hits("/robots.txt") == 2 and site.hits("/a") == 1 and site.hits("/private") == 0
    assert report.summary.warnings == ()
    times = [r.at for r in site.requests if r.path == "/robots.txt"]
    assert times[1] - times[0] >= 0.9  # (Retry-After: 1)


async def test_robots_txt_groups_are_matched_by_the_user_agent_sent(site: Site) -> None:
    site.page("/robots.txt", "User-agent: MyBot\nDisallow: /members/\n\nUser-agent: *\nDisallow:\n",
              content_type="text/plain")
    site.page("/", html("/members/list.html", "/open.html"))
    site.page("/members/list.html", "members")
    site.page("/open.html", "open")
    report = await linkhound.check([site.url("/")], recursive=True, user_agent="MyBot/1.0 (+https://x.test/bot)")
    assert site.hits("/members/list.html") == 0 and site.hits("/open.html") == 1
    assert {r.url: r.status for r in report.results}[site.url("/members/list.html")] is Status.SKIPPED
    await linkhound.check([site.url("/")], recursive=True)  # linkhound: the * group
    assert site.hits("/members/list.html") == 1


async def test_a_robots_txt_group_is_ours_by_the_whole_product_token_not_a_prefix(site: Site) -> None:
    """RFC 9309 2.2.1: `User-agent: link` is not linkhound's group (the * group is), `User-agent: LinkHound` is."""
    site.page("/robots.txt", "User-agent: link\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n",
              content_type="text/plain")
    site.page("/", html("/private/a.html", "/open.html"))
    site.page("/open.html", "open")
    report = await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/open.html") == 1 and site.hits("/private/a.html") == 0
    assert {r.url: r.status for r in report.results}[site.url("/private/a.html")] is Status.SKIPPED

    site.requests.clear()
    site.page("/robots.txt", "User-agent: link\nDisallow: /\n\nUser-agent: LinkHound\nDisallow: /open.html\n",
              content_type="text/plain")
    await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/open.html") == 0 and site.hits("/private/a.html") == 1


async def test_robots_fetched_once_when_many_workers_start_together(site: Site) -> None:
    async def slow_robots(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.2)
        return web.Response(text="User-agent: *\nAllow: /\n")

    site.handler("/robots.txt", slow_robots)
    site.page("/", html(*[f"/p{i}" for i in range(40)]))
    for i in range(40):
        site.page(f"/p{i}", "ok")
    await linkhound.check([site.url("/")], recursive=True, host_concurrency=40)
    assert site.hits("/robots.txt") == 1


async def test_nofollow_meta_and_rel(site: Site) -> None:
    site.page("/", html("/meta", "/header") + '<a rel="nofollow" href="/relnf">x</a>')
    site.page("/meta", '<meta name="robots" content="nofollow">' + html("/meta-child"))
    site.page("/header", html("/header-child"), headers={"X-Robots-Tag": "nofollow"})
    site.page("/relnf", html("/relnf-child"))
    site.page("/meta-child", html("/never"))
    site.page("/header-child", html("/never"))
    await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/meta-child", "HEAD") == 1 and site.hits("/meta-child", "GET") == 0
    assert site.hits("/header-child", "HEAD") == 1
    assert site.hits("/relnf", "HEAD") == 1 and site.hits("/relnf-child") == 0
    assert site.hits("/never") == 0


async def test_x_robots_tag_and_meta_directives_for_other_crawlers_do_not_count(site: Site) -> None:
    pages = {  # page -> (X-Robots-Tag, meta tag, whether its child is crawled)
        "/xr-other": ("otherbot: nofollow", "", True),
        "/xr-ours": ("otherbot: noindex, linkhound: nofollow", "", False),
        "/xr-none": ("none", "", False),
        "/xr-valued": ("unavailable_after: 2030-01-01, nofollow", "", False),
        "/meta-ours": ("", '<meta name="linkhound" content="nofollow">', False),
        "/meta-other": ("", '<meta name="googlebot" content="nofollow">', True),
    }
    site.page("/", html(*pages))
    for path, (header, meta, _) in pages.items():
        site.page(path, meta + html(f"{path}-child"), headers={"X-Robots-Tag": header} if header else None)
        site.page(f"{path}-child", "ok")
    await linkhound.check([site.url("/")], recursive=True)
    crawled = {path: site.hits(f"{path}-child", "GET") == 1 for path in pages}
    assert crawled == {path: follow for path, (_, _, follow) in pages.items()}
    assert all(site.hits(f"{path}-child") == 1 for path in pages)  # each checked once, crawled or not


async def test_user_agent_and_per_host_headers(site: Site) -> None:
    site.page("/", html("/a"))
    site.page("/a", "ok")
    await linkhound.check([site.url("/")], hosts={"127.0.0.1": {"headers": {"X-Token": "t1"}}})
    assert {r.headers.get("User-Agent") for r in site.requests} == {user_agent()}
    assert {r.headers.get("X-Token") for r in site.requests} == {"t1"}
    await linkhound.check([site.url("/")], user_agent="custom/1")
    assert site.requests[-1].headers["User-Agent"] == "custom/1"


async def test_host_stats_are_printed_per_host(site: Site) -> None:
    import subprocess
    import sys

    site.page("/", html("/a", "/missing"))
    site.page("/a", "ok")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "--host-stats", site.url("/"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = err.decode().splitlines()
    assert lines[0].split() == ["host", "requests", "ok", "429/503", "waits", "median", "ms"]
    row = next(line.split() for line in lines if line.startswith(site.base.removeprefix("http://")))
    assert row[1:5] == ["3", "2", "0", "0"]  # /, /a and /missing asked; two answered 2xx


async def test_ratelimit_reset_headers_pause_the_host(site: Site) -> None:
    calls = 0

    async def limited(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls == 1:  # a 429 with no Retry-After, but the window's reset
            return web.Response(status=429, headers={"RateLimit-Remaining": "0", "RateLimit-Reset": "1"})
        return web.Response(text="ok")

    async def spent(request: web.Request) -> web.StreamResponse:
        # a fine answer that says the window is used up: the host waits for the reset before the next request
        return web.Response(text="ok", headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"})

    site.handler("/limited", limited)
    site.handler("/spent", spent)
    site.page("/", html("/limited"))
    report = await linkhound.check([site.url("/")], host_concurrency=1, max_retries=2)
    assert all(r.status is Status.OK for r in report.results)
    times = [r.at for r in site.requests if r.path == "/limited"]
    assert len(times) == 2 and times[1] - times[0] >= 0.95

    site.requests.clear()
    site.page("/two", html("/spent", "/after"))
    site.page("/after", "ok")
    await linkhound.check([site.url("/two")], host_concurrency=1)
    at = {r.path: r.at for r in site.requests}
    assert at["/after"] - at["/spent"] >= 0.95
