"""Recursive crawls against real servers: one request per URL, every page, every referrer, and termination."""

from __future__ import annotations

import asyncio
import gc
import random
from collections import defaultdict
from urllib.parse import quote

import pytest
from aiohttp import web

import linkhound
from linkhound import Page, Result, Status, page_parser
from server import Handler, Site, SiteFactory, html, until_asked, urlset

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


def build_site(site: Site, other: Site, n: int, rng: random.Random, delay: float = 0.0) -> dict[str, set[str]]:
    """A docs-like site: nav on every page, cycles, self-links, chains, redirects, broken links everywhere.

    Returns the expected referrers (page URLs) of every broken URL.
    """
    broken: dict[str, set[str]] = defaultdict(set)
    nav = ["/", "/p/0", "/p/1", "/about"]
    pages = {"/": ["/p/0"], "/about": ["/", "/missing-nav"]}
    for i in range(n):
        links = [*nav, f"/p/{i}", f"/p/{(i + 1) % n}", f"/p/{rng.randrange(n)}", f"/p/{i}#top"]
        if i % 7 == 0:
            links.append(f"/missing/{i % 5}")  # the same broken URL from many pages
        if i % 11 == 0:
            links.append(f"/old/{i}")  # a redirect to a page only reachable through it
            pages[f"/only-via-redirect/{i}"] = ["/", "/missing-deep"]
            site.redirect(f"/old/{i}", f"/only-via-redirect/{i}")
        if i % 13 == 0:
            links.append(other.url(f"/ext/{i % 3}"))  # another origin: checked, never crawled
        links.append("/img/logo.png")
        pages[f"/p/{i}"] = links
    other.page("/ext/0", html("/ext-child-never-requested"))
    other.page("/ext/1", "plain", content_type="text/plain")
    other.status("/ext/2", 404)
    site.page("/img/logo.png", "PNG", content_type="image/png")
    for path, links in pages.items():
        body = html(*links)
        if delay:
            site.handler(path, _delayed(body, rng.uniform(0, delay)))
        else:
            site.page(path, body)
        for link in links:
            target = link if link.startswith("http") else site.url(link.split("#")[0])
            if "missing" in link or link.endswith("/ext/2"):
                broken[target].add(site.url(path))
    return broken


def _delayed(body: str, seconds: float) -> Handler:
    async def h(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.Response(text=body, content_type="text/html")

    return h


def referrers(result: Result) -> set[str]:
    return {r.source for r in result.references}


@pytest.mark.parametrize("workers", [0, 1])
async def test_crawl_requests_each_url_once_and_reports_every_referrer(
    workers: int, site: Site, make_site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = await make_site("127.0.0.2")
    expected = build_site(site, other, 300, random.Random(1))
    monkeypatch.setattr(page_parser, "WARMUP_PAGES", 0)  # with workers=1, every page goes to the worker

    report = await linkhound.check([site.url("/")], recursive=True, max_retries=0, workers=workers)

    seen = site.counts()
    assert all(n == 1 for n in seen.values()), [k for k, n in seen.items() if n > 1]
    crawled = {p.url for p in report.pages}
    assert {site.url(f"/p/{i}") for i in range(300)} <= crawled
    assert site.url("/only-via-redirect/0") in crawled  # reached through /old/0's redirect
    assert seen[("GET", "/only-via-redirect/0")] == 1
    assert seen[("HEAD", "/img/logo.png")] == 1 and seen[("GET", "/img/logo.png")] == 0
    assert other.counts()[("HEAD", "/ext/0")] == 1
    assert other.hits("/ext-child-never-requested") == 0
    results = {r.url: r for r in report.results}
    broken = {u: referrers(r) for u, r in results.items() if r.status.is_broken}
    assert broken == expected


async def test_crawl_terminates_under_faults(site: Site) -> None:
    site.page("/", html("/a", "/slow", "/reset", "/500", "/loop1", "/data.json", "/nohtml"))
    site.page("/a", html("/", "/b"))
    site.page("/b", html("/a", "/c-missing"))
    site.slow("/slow", 5.0)
    site.reset("/reset")
    site.status("/500", 500)
    site.redirect("/loop1", "/loop2")
    site.redirect("/loop2", "/loop1")
    site.page("/data.json", '{"a": "/not-a-link"}', content_type="application/json")
    site.page("/nohtml", "<a href='/x'>", content_type="application/octet-stream")
    report = await asyncio.wait_for(
        linkhound.check([site.url("/")], recursive=True, timeout=0.3, max_retries=1, retry_backoff=0.01), 30
    )
    status = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert status["/slow"] is Status.TIMEOUT
    assert status["/reset"] is Status.ERROR
    assert status["/500"] is Status.BROKEN
    assert status["/loop1"] is Status.ERROR
    assert status["/c-missing"] is Status.BROKEN
    assert status["/data.json"] is Status.OK
    assert "/not-a-link" not in status
    assert status["/x"] is Status.BROKEN  # sniffed as HTML
    assert site.hits("/500") == 2  # one retry


@pytest.mark.parametrize("seed", range(20))
async def test_crawl_with_random_delays_is_exact(seed: int, site: Site, make_site: SiteFactory) -> None:
    other = await make_site("127.0.0.2")
    rng = random.Random(seed)
    expected = build_site(site, other, 60, rng, delay=0.02)
    per_host = rng.choice([1, 4, 16])
    report = await asyncio.wait_for(
        linkhound.check([site.url("/")], recursive=True, max_retries=0, host_concurrency=per_host), 60
    )
    assert all(n == 1 for n in site.counts().values())
    results = {r.url: r for r in report.results}
    for url, refs in expected.items():
        assert results[url].status.is_broken and referrers(results[url]) >= refs
    assert {site.url(f"/p/{i}") for i in range(60)} <= {p.url for p in report.pages}


@pytest.mark.parametrize("redirect_first", [True, False])
async def test_a_redirect_to_a_page_linked_directly_fetches_and_parses_it_once(
    redirect_first: bool, site: Site
) -> None:
    site.page("/", html("/old", "/later") if redirect_first else html("/page", "/later"))
    site.slow("/later", 0.3, html("/page") if redirect_first else html("/old"))
    site.redirect("/old", "/page")
    site.page("/page", html("/child", "/"))
    site.page("/child", "ok")
    report = await linkhound.check([site.url("/")], recursive=True)
    assert site.hits("/page", "GET") == 1
    assert [p.url for p in report.pages].count(site.url("/page")) == 1
    child = next(r for r in report.results if r.url == site.url("/child"))
    assert len(child.references) == 1  # parsed once: one reference, not two
    page = next(r for r in report.results if r.url == site.url("/page"))
    assert len(page.references) == 1  # the direct link (the redirect's own link is /old's)
    refs = [(ref.source, ref.line, ref.column, r.url) for r in report.results for ref in r.references]
    assert len(refs) == len(set(refs))


@pytest.mark.parametrize("end", ["page", "timeout"])
async def test_crawled_redirects_through_one_hop_ask_it_once(end: str, site: Site, make_site: SiteFactory) -> None:
    # /a, /b (linked by /) and /c, /d (linked by /p) are pages of the crawl that redirect to /x on another host,
    # out of scope, which /p links too. /x answers (a page, or too late) only once /b and /d have been asked, so
    # the redirects and /x's own link are in flight together, in any order: /x is asked once, and each of them
    # takes its answer, with its own chain
    other = await make_site("127.0.0.2")

    async def x(request: web.Request) -> web.StreamResponse:
        await until_asked(site, "/b")
        await until_asked(site, "/d")
        if end == "timeout":
            await asyncio.sleep(2)
        return web.Response(text=html("/never"), content_type="text/html")

    other.handler("/x", x)
    site.page("/", html("/a", "/b", "/p"))
    site.page("/p", html("/c", other.url("/x"), "/d"))
    for path, code in (("/a", 301), ("/b", 302), ("/c", 307), ("/d", 308)):
        site.redirect(path, other.url("/x"), code)
    report = await asyncio.wait_for(linkhound.check([site.url("/")], recursive=True, timeout=1, max_retries=0,
                                                    max_concurrency=8, host_concurrency=8), 60)
    assert other.hits("/x") == 1 and other.hits("/never") == 0
    assert all(n == 1 for n in site.counts().values()), site.counts()
    results = {r.url: r for r in report.results}
    status = Status.TIMEOUT if end == "timeout" else Status.OK
    assert results[other.url("/x")].status is status
    for path, code in (("/a", 301), ("/b", 302), ("/c", 307), ("/d", 308)):
        r = results[site.url(path)]
        assert r.status is status and r.redirects == (other.url("/x"),) and r.redirect_codes == (code,), r
    assert {p.url for p in report.pages if p.followed} == {site.url("/"), site.url("/p")}


async def test_a_seed_redirected_out_of_scope_says_nothing_past_it_was_crawled(site: Site,
                                                                              make_site: SiteFactory) -> None:
    # as http://example.org/ -> https://www.example.org/: a crawl of nothing must not read as a clean one
    other = await make_site("127.0.0.2")
    site.redirect("/", other.url("/"))
    other.page("/", html("/page.html"))
    other.page("/page.html", html("/dead"))
    report = await linkhound.check([site.url("/")], recursive=True)
    assert report.summary.warnings == (
        f"{site.url('/')} redirected to {other.url('/')}, outside the crawl's scope: nothing past it was crawled"
        f" (start from {other.url('/')}, or widen the scope with --scope-domain)",
    )
    assert other.asked() == ["/"]
    report = await linkhound.check([site.url("/")], recursive=True, scope_domain=["127.0.0.2"])
    assert report.summary.warnings == () and other.hits("/dead") == 1


async def test_a_crawled_redirects_end_linked_later_is_not_asked_again(site: Site, make_site: SiteFactory) -> None:
    # /a, a page of the crawl, redirects to /e out of scope (a page, fetched with GET). /later, parsed well
    # after, links /e#top and /e: both take /a's answer (its anchors too); and /b and /h, where /b -> /h -> /e
    other = await make_site("127.0.0.2")
    other.page("/e", '<h1 id="top">e</h1>' + html("/never"))
    other.redirect("/h", other.url("/e"), 307)
    site.page("/", html("/a", "/later"))
    site.redirect("/a", other.url("/e"))
    site.redirect("/b", other.url("/h"), 302)
    site.slow("/later", 0.5, html(other.url("/e") + "#top", other.url("/e"), "/b", other.url("/h")))
    report = await linkhound.check([site.url("/")], recursive=True, max_retries=0)
    assert other.counts() == {("GET", "/e"): 1, ("HEAD", "/h"): 1}
    results = {r.url: r for r in report.results}
    assert results[other.url("/e")].status is Status.OK and not results[other.url("/e")].redirects
    assert results[site.url("/a")].redirects == (other.url("/e"),)
    assert results[site.url("/b")].redirects == (other.url("/h"), other.url("/e"))
    assert results[other.url("/h")].redirects == (other.url("/e"),) and results[other.url("/h")].status is Status.OK
    assert not any(r.status.is_broken for r in report.results), [r for r in report.results if r.status.is_broken]


async def test_a_crawled_redirect_waits_at_a_leafs_hop_and_asks_only_the_end_for_its_body(
    site: Site, make_site: SiteFactory
) -> None:
    # / links /l out of scope (a leaf: HEAD) and /a, a page of the crawl; both redirect to /h -> /e. /a's
    # redirect is sent only once the leaf's has reached /h, which answers a little later: /a waits at /h, then
    # asks /e alone with GET (the leaf's HEAD kept only its status). /h is asked once either way
    other = await make_site("127.0.0.2")

    async def a(request: web.Request) -> web.StreamResponse:
        await until_asked(other, "/h")
        return web.Response(status=302, headers={"Location": other.url("/h")})

    async def h(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.3)
        return web.Response(status=301, headers={"Location": other.url("/e")})

    site.page("/", html(other.url("/l"), "/a"))
    site.handler("/a", a)
    other.redirect("/l", other.url("/h"), 307)
    other.handler("/h", h)
    other.page("/e", html("/never"))
    report = await linkhound.check([site.url("/")], recursive=True, max_retries=0)
    seen = other.counts()
    assert other.hits("/h") == 1 and other.hits("/l") == 1 and other.hits("/never") == 0, seen
    assert seen[("GET", "/e")] <= 1 and seen[("HEAD", "/e")] <= 1, seen
    results = {r.url: r for r in report.results}
    for url, code in ((site.url("/a"), 302), (other.url("/l"), 307)):
        assert results[url].status is Status.OK and results[url].code == 200
        assert results[url].redirects == (other.url("/h"), other.url("/e"))
        assert results[url].redirect_codes == (code, 301)


async def test_crawled_redirects_to_an_end_known_by_its_status_ask_its_body_once(
    site: Site, make_site: SiteFactory
) -> None:
    # / links /l out of scope (a leaf: HEAD /l, HEAD /e, kept as /e's status) and /later, parsed after that;
    # /later links /a and /b, pages of the crawl that both redirect to /e at once: /e's body is asked once
    other = await make_site("127.0.0.2")

    async def e(request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            await asyncio.sleep(0.3)  # (both redirects reach /e while the first is asking it)
        return web.Response(text=html("/never"), content_type="text/html")

    async def later(request: web.Request) -> web.StreamResponse:
        await until_asked(other, "/e")
        await asyncio.sleep(0.2)
        return web.Response(text=html("/a", "/b"), content_type="text/html")

    site.page("/", html(other.url("/l"), "/later"))
    site.handler("/later", later)
    site.redirect("/a", other.url("/e"))
    site.redirect("/b", other.url("/e"), 302)
    other.redirect("/l", other.url("/e"), 307)
    other.handler("/e", e)
    report = await linkhound.check([site.url("/")], recursive=True, max_retries=0)
    assert other.counts() == {("HEAD", "/l"): 1, ("HEAD", "/e"): 1, ("GET", "/e"): 1}, other.counts()
    results = {r.url: r for r in report.results}
    for path, code in (("/a", 301), ("/b", 302)):
        r = results[site.url(path)]
        assert r.status is Status.OK and r.redirects == (other.url("/e"),) and r.redirect_codes == (code,)


async def test_a_page_claimed_while_a_redirect_fetches_it_takes_that_answer(site: Site) -> None:
    # /a redirects to /e, which nobody has linked yet; /p, linked beside /a, links /e, so /e is claimed as a page
    # while /a's redirect is fetching it (/e answers only well after /p has been asked). /e is fetched once, and
    # crawled once, by its own claim, with the body /a's redirect got
    async def e(request: web.Request) -> web.StreamResponse:
        await until_asked(site, "/p")
        await asyncio.sleep(0.5)
        return web.Response(text=html("/f"), content_type="text/html")

    site.page("/", html("/a", "/p"))
    site.redirect("/a", "/e")
    site.page("/p", html("/e"))
    site.handler("/e", e)
    site.page("/f", "ok")
    report = await linkhound.check([site.url("/")], recursive=True, max_retries=0)
    assert all(n == 1 for n in site.counts().values()) and site.hits("/e") == 1, site.counts()
    assert [p.url for p in report.pages].count(site.url("/e")) == 1
    results = {r.url: r for r in report.results}
    assert results[site.url("/a")].redirects == (site.url("/e"),) and results[site.url("/a")].status is Status.OK
    assert results[site.url("/e")].status is Status.OK and not results[site.url("/e")].redirects
    assert {r.source for r in results[site.url("/f")].references} == {site.url("/e")}


async def test_a_redirects_end_crawled_on_its_own_after_a_leafs_redirect_read_its_body_is_recorded(
    site: Site
) -> None:
    # / links /r#here with rel=nofollow (a leaf) and /later, parsed after it: /r -> /p, whose body the leaf's
    # redirect reads for its anchors (kept as /p's answer, without its page). /later makes /r a page: its
    # redirect reaches that answer, and /p, which no link names, is crawled on its own, its result recorded
    # (before: a KeyError ended the task that checked it, and /p's links were never crawled)
    errors: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: errors.append(context))
    try:
        site.page("/", '<a rel="nofollow" href="/r#here">r</a>' + html("/later"))
        site.slow("/later", 0.3, html("/r"))
        site.redirect("/r", "/p")
        site.page("/p", html("/q", extra='<h2 id="here">x</h2>'))
        site.page("/q", "ok")
        report = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, max_retries=0)
        gc.collect()  # (a task that ended with an error nobody took says so when it goes)
    finally:
        loop.set_exception_handler(None)
    assert errors == []
    assert site.url("/p") in {p.url for p in report.pages} and report.summary.success
    assert {r.url for r in report.results} == {site.url(p) for p in ("/", "/r", "/later", "/q")}


async def test_depth_is_the_shortest_path(site: Site) -> None:
    # "/" -> /l1 -> /l2 -> /l3 -> /shared (4 hops) arrives first, "/" -> /slow -> /shared (2 hops) later
    site.page("/", html("/l1", "/slow"))
    site.page("/l1", html("/l2"))
    site.page("/l2", html("/l3"))
    site.page("/l3", html("/shared"))
    site.handler("/slow", _delayed(html("/shared"), 0.5))
    site.page("/shared", html("/deep"))
    site.page("/deep", html("/deeper"))
    site.page("/deeper", html("/deepest"))
    report = await linkhound.check([site.url("/")], recursive=True, max_depth=3)
    crawled = {p.url.removeprefix(site.base): p.depth for p in report.pages}
    assert crawled["/shared"] == 2
    assert crawled["/deep"] == 3  # within the limit only through the short path
    assert "/deeper" not in crawled  # depth 4: checked, not crawled
    assert site.hits("/deeper", "HEAD") == 1 or site.hits("/deeper", "GET") == 1
    assert site.hits("/deepest") == 0
    assert "max-depth 3" in report.summary.caps


async def test_out_of_scope_and_redirect_off_origin_are_not_crawled(
    site: Site, make_site: SiteFactory
) -> None:
    other = await make_site("127.0.0.3")
    other.page("/landing", html("/never"))
    other.page("/ext", html("/never2"))
    site.page("/docs/", html("/docs/a", "/blog/", other.url("/ext"), "/docs/away"))
    site.page("/docs/a", html("/docs/"))
    site.page("/blog/", html("/blog/post"))
    site.redirect("/docs/away", other.url("/landing"))
    report = await linkhound.check([site.url("/docs/")], recursive=True)
    crawled = {p.url for p in report.pages if p.followed}
    assert crawled == {site.url("/docs/"), site.url("/docs/a")}
    assert site.hits("/blog/", "HEAD") == 1 and site.hits("/blog/post") == 0
    assert other.hits("/ext", "HEAD") == 1 and other.hits("/never") == 0 and other.hits("/never2") == 0
    # widening the scope crawls the other host too
    report = await linkhound.check([site.url("/docs/")], recursive=True, scope_domain=["127.0.0.3"])
    assert other.hits("/never2") == 1


@pytest.mark.parametrize("fragment", ["", "#top", "#/home", "#/a/b?x=1"])
async def test_a_seeds_fragment_is_no_part_of_the_scope(site: Site, fragment: str) -> None:
    # #/home: a single-page app's route; its slash names no folder
    site.page("/app/", html("/app/about.html", "/elsewhere"))
    site.page("/app/about.html", html("/app/deeper.html"))
    site.page("/app/deeper.html", html())
    site.page("/elsewhere", html("/never"))
    report = await linkhound.check([site.url("/app/" + fragment)], recursive=True)
    assert {p.url for p in report.pages if p.followed} == {site.url(p) for p in ("/app/", "/app/about.html",
                                                                                   "/app/deeper.html")}
    assert site.hits("/app/deeper.html", "GET") == 1 and site.hits("/never") == 0


@pytest.mark.parametrize(("charset", "meta"), [("Shift_JIS", ""), ("windows-1252", ""), ("iso-8859-1", "utf-8")])
async def test_the_charset_of_the_content_type_header_reads_the_page(site: Site, charset: str, meta: str) -> None:
    # as in browsers: the header names the page's encoding, over its <meta> (iso-8859-1 reads as windows-1252)
    name = "日本語" if charset == "Shift_JIS" else "café"
    page = f'<meta charset="{meta}"><a href="/{name}.html">x</a> <a href="/gone-{name}">y</a>' if meta else \
        f'<a href="/{name}.html">x</a> <a href="/gone-{name}">y</a>'
    encoding = "cp1252" if charset == "iso-8859-1" else charset

    async def h(request: web.Request) -> web.StreamResponse:
        return web.Response(body=page.encode(encoding), headers={"Content-Type": f"text/html; charset={charset}"})

    site.handler("/", h)
    site.page(f"/{name}.html", "found")
    report = await linkhound.check([site.url("/")])
    assert {r.url: r.status for r in report.results if r.url != site.url("/")} == {
        site.url(f"/{quote(name)}.html"): Status.OK, site.url(f"/gone-{quote(name)}"): Status.BROKEN}
    assert site.hits(f"/{quote(name)}.html") == 1


async def test_max_pages_is_reported(site: Site) -> None:
    site.page("/", html(*[f"/p{i}" for i in range(10)]))
    for i in range(10):
        site.page(f"/p{i}", html("/"))
    report = await linkhound.check([site.url("/")], recursive=True, max_pages=4)
    assert sum(1 for p in report.pages) == 4
    assert "max-pages 4" in report.summary.caps
    assert len([r for r in report.results if r.status is Status.OK]) == 11  # the rest still checked


async def test_sitemap_seeds_the_crawl(site: Site) -> None:
    site.page("/sitemap.xml", urlset(site.url("/a"), site.url("/b")), content_type="application/xml")
    site.page("/a", html("/a-child"))
    site.page("/b", html("/b-missing"))
    site.page("/a-child", "ok")
    report = await linkhound.check([site.url("/sitemap.xml")], recursive=True)
    status = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert status["/a-child"] is Status.OK and status["/b-missing"] is Status.BROKEN
    assert site.hits("/a", "GET") == 1


async def test_crawl_iterator_yields_results_and_pages(site: Site) -> None:
    site.page("/", html("/a", "/missing"))
    site.page("/a", html("/"))
    events = [e async for e in linkhound.crawl([site.url("/")])]
    assert {e.url for e in events if isinstance(e, Page)} == {site.url("/"), site.url("/a")}
    results = {e.url: e.status for e in events if isinstance(e, Result)}
    assert results[site.url("/missing")] is Status.BROKEN


async def test_many_pages_discovering_the_same_urls_at_once(site: Site) -> None:
    n = 200
    shared = [f"/shared/{k}" for k in range(20)]
    site.page("/", html(*[f"/p/{i}" for i in range(n)]))
    for i in range(n):
        site.page(f"/p/{i}", html(*shared))
    for k, path in enumerate(shared):
        if k % 2:
            site.page(path, "ok")
    report = await linkhound.check([site.url("/")], recursive=True, host_concurrency=64)
    assert all(v == 1 for v in site.counts().values())
    for path in shared:
        r = next(r for r in report.results if r.url == site.url(path))
        assert len(r.references) == n


@pytest.mark.parametrize("recursive", [False, True])
async def test_robots_txt_and_gzipped_sitemap_index_as_input(recursive: bool, site: Site) -> None:
    import gzip

    robots = f"User-agent: *\nAllow: /\nSitemap: {site.url('/index.xml.gz')}\n"
    site.page("/robots.txt", robots, content_type="text/plain")
    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{site.url('/pages.xml')}</loc></sitemap></sitemapindex>"
    )

    async def gz(request: web.Request) -> web.StreamResponse:
        return web.Response(body=gzip.compress(index.encode()), content_type="application/gzip")

    site.handler("/index.xml.gz", gz)
    site.page("/pages.xml", urlset(site.url("/a"), site.url("/gone")), content_type="application/xml")
    site.page("/a", html("/a-child"))
    site.page("/a-child", "ok")
    report = await linkhound.check([site.url("/robots.txt")], recursive=recursive)
    status = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert status["/a"] is Status.OK and status["/gone"] is Status.BROKEN
    assert site.hits("/pages.xml", "GET") == 1
    if recursive:
        assert site.hits("/a", "GET") == 1 and status["/a-child"] is Status.OK
    else:  # without -r a sitemap's pages are checked, not read
        assert site.hits("/a", "HEAD") == 1 and site.hits("/a", "GET") == 0 and "/a-child" not in status


async def test_include_and_exclude_crawl_choose_pages_not_checks(site: Site) -> None:
    site.page("/", html("/docs/a", "/docs/private/b", "/blog/c"))
    for p in ("/docs/a", "/docs/private/b", "/blog/c"):
        site.page(p, html(p + "-child"))
    report = await linkhound.check(
        [site.url("/")], recursive=True, include_crawl=["/docs/", "/$"], exclude_crawl=["/private/"]
    )
    crawled = {p.url.removeprefix(site.base) for p in report.pages}
    assert crawled == {"/", "/docs/a"}  # (/docs/a-child is requested as a page, and is a 404)
    assert site.hits("/docs/private/b", "HEAD") == 1 and site.hits("/blog/c", "HEAD") == 1  # still checked
    assert site.hits("/docs/a-child") == 1 and site.hits("/blog/c-child") == 0


async def test_cancelling_the_task_iterating_a_crawl_cancels_its_requests(site: Site) -> None:
    """wait_for, a TaskGroup that fails: the caller gets control back without waiting for the requests in
    flight (nor their retries), as it does when it leaves the loop early."""
    asked = asyncio.Event()
    answer = asyncio.Event()  # set once the test is over: until then the request hangs

    async def hang(request: web.Request) -> web.StreamResponse:
        asked.set()
        await answer.wait()
        return web.Response(text="late")

    site.page("/", html("/hang"))
    site.handler("/hang", hang)

    async def consume() -> None:
        async for _ in linkhound.crawl([site.url("/")], timeout=60.0, max_retries=2):
            pass

    task = asyncio.ensure_future(consume())
    try:
        await asyncio.wait_for(asked.wait(), 30)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=30)  # (the request would hang for 60 s, 3 times)
        assert task in done and task.cancelled()
    finally:
        answer.set()
        await asyncio.gather(task, return_exceptions=True)
