"""Remote fragments: each page fetched once with GET, however many links need its anchors."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

import linkhound
from linkhound import Status
from server import Site, html

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


async def test_crawled_pages_serve_their_own_anchors(site: Site) -> None:
    pages = [f"/p{i}" for i in range(10)]
    for i, p in enumerate(pages):
        links = [f"{q}#sec{i}" for q in pages] + [f"{q}#missing" for q in pages[:3]] + ["#sec0", "#top"]
        names = "".join(f'<a name="sec{j}"></a>' for j in range(i))
        site.page(p, html(*links, extra=f'<h2 id="sec{i}">s</h2>' + names))
    site.page("/", html(*pages))
    report = await linkhound.check([site.url("/")], recursive=True, check_fragments=True)
    for p in pages:
        assert site.hits(p, "GET") == 1 and site.hits(p, "HEAD") == 0, p
    broken = {r.url.removeprefix(site.base) for r in report.results if r.status.is_broken}
    expected = {f"{q}#missing" for q in pages[:3]}
    # page i has ids sec0..sec(i-1) (a name) and sec_i (id); links from page k ask every page for sec_k
    expected |= {f"/p{j}#sec{k}" for j in range(10) for k in range(10) if k > j}
    assert broken == expected
    one = next(r for r in report.results if r.url == site.url("/p0#missing"))
    assert len(one.references) == 10 and one.reason == "no anchor #missing"


async def test_head_checked_target_is_fetched_once_more_for_its_anchors(site: Site) -> None:
    # /leaf is first linked without a fragment (HEAD), later with fragments from a slower page
    site.page("/", html("/leaf", "/later"))
    site.slow("/later", 0.3, html("/leaf#a", "/leaf#b", "/leaf#zz"))
    site.page("/leaf", '<h1 id="a">A</h1><h2 id="b">B</h2>')
    report = await linkhound.check([site.url("/")], recursive=True, check_fragments=True)
    assert site.hits("/leaf", "HEAD") <= 1 and site.hits("/leaf", "GET") == 1
    broken = {r.url.removeprefix(site.base) for r in report.results if r.status.is_broken}
    assert broken == {"/leaf#zz"}


async def test_fragment_found_while_the_head_request_is_in_flight(site: Site) -> None:
    # /leaf answers HEAD slowly; a link with its fragment turns up meanwhile: one more GET, anchors checked
    site.page("/", html("/leaf"))
    site.slow("/soon", 0.1, html("/leaf#a", "/leaf#zz"))

    async def leaf(request: web.Request) -> web.StreamResponse:
        if request.method == "HEAD":
            await asyncio.sleep(0.5)
        return web.Response(text='<h1 id="a">A</h1>', content_type="text/html")

    site.handler("/leaf", leaf)
    report = await linkhound.check([site.url("/"), site.url("/soon")], check_fragments=True)
    broken = {r.url.removeprefix(site.base) for r in report.results if r.status.is_broken}
    assert broken == {"/leaf#zz"}
    assert site.hits("/leaf", "HEAD") == 1 and site.hits("/leaf", "GET") == 1


async def test_fragment_on_an_error_page_is_the_page_error(site: Site) -> None:
    site.page("/", html("/gone#x", "/gone#y", "/doc.pdf#page=2"))
    site.page("/doc.pdf", "%PDF", content_type="application/pdf")
    report = await linkhound.check([site.url("/")], check_fragments=True)
    results = {r.url.removeprefix(site.base): r for r in report.results}
    assert results["/gone"].status is Status.BROKEN and len(results["/gone"].references) == 2
    assert "/gone#x" not in results
    assert results["/doc.pdf"].status is Status.OK and "/doc.pdf#page=2" not in results


async def test_fragments_of_text_files_and_sitemaps_are_not_checked(site: Site) -> None:
    # they hold no anchors: #section-1 of an RFC as text is not "missing", as #page=2 of a PDF is not
    site.page("/", html("/rfc.txt#section-1", "/sitemap.xml#x", "/notes.md#real", "/notes.md#gone"))
    site.page("/rfc.txt", "1. Introduction\nsee https://example.org/ref\n", content_type="text/plain")
    site.page("/sitemap.xml", "<urlset><url><loc>/a</loc></url></urlset>", content_type="application/xml")
    site.page("/notes.md", "# Notes\n\n## Real\n", content_type="text/plain")  # Markdown by its name: anchored
    report = await linkhound.check([site.url("/")], check_fragments=True)
    broken = {r.url.removeprefix(site.base): r.reason for r in report.results if r.status.is_broken}
    assert broken == {"/notes.md#gone": "no anchor #gone"}


async def test_remote_fragments_are_off_by_default(site: Site) -> None:
    site.page("/", html("/a#nope"))
    site.page("/a", "<p>no ids</p>")
    report = await linkhound.check([site.url("/")])
    assert report.summary.success
    assert site.hits("/a", "HEAD") == 1 and site.hits("/a", "GET") == 0
