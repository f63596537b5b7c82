"""Invariant 10: content fetched over HTTP never makes linkhound stat or read this machine's files, by any route.

Each scenario runs twice against real loopback servers: once with a canary file on disk, once with its folder
gone. Were the canary ever looked at (stat'ed, opened, its anchors read), the two reports would differ. A local
document given as input, on the other hand, has its file: links checked on disk: the guard is about the source.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import linkhound
from linkhound import Report, Status
from server import Site, html, urlset

WEB_FILE = "file: link on a web page"
REFUSED = "redirect to a file: URL refused"
ANCHOR = "only-in-canary"  # an id that exists nowhere but in the canary


@dataclass
class Canary:
    """A file (and its folder) that no web page may make linkhound look at."""

    folder: Path

    @property
    def file(self) -> Path:
        return self.folder / "canary.html"

    @property
    def path(self) -> str:
        return str(self.file)

    def url(self, name: str = "canary.html") -> str:
        return f"{self.folder.as_uri()}/{name}"

    def plant(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.file.write_text(f'<html><body><h1 id="{ANCHOR}">canary</h1></body></html>')
        (self.folder / "index.html").write_text("index")

    def remove(self) -> None:
        shutil.rmtree(self.folder)


@dataclass
class Scenario:
    inputs: list[str]
    options: dict[str, Any] = field(default_factory=dict)
    file_refs: int = 0  # references to file: targets the run must report (all of them skipped)
    refused: int = 0  # http(s) URLs whose redirect to file: must be refused


Setup = Callable[[Site, Canary], Scenario]
SCENARIOS: dict[str, Setup] = {}


def scenario(setup: Setup) -> Setup:
    SCENARIOS[setup.__name__] = setup
    return setup


def links_page(*hrefs: str, head: str = "") -> str:
    anchors = "".join(f'<a href="{h}">x</a>\n' for h in hrefs)
    return f"<!doctype html><html><head>{head}<title>t</title></head><body>\n{anchors}</body></html>"


@scenario
def base_href(site: Site, c: Canary) -> Scenario:
    """<base href> pointing at the canary's folder, in the spellings a browser accepts, and every relative form."""
    relative = [
        "canary.html",
        f"canary.html#{ANCHOR}",
        "canary.html#not-in-canary",
        "./canary.html",
        "../secret/canary.html",
        f"{c.path}",  # root-relative: /tmp/.../secret/canary.html
        f"//localhost{c.path}",  # protocol-relative: file://localhost/...
        "missing.html",
        "./",
        "../../../../../../../../../etc/hostname",
        "?q",
    ]
    bases = [
        f"{c.folder.as_uri()}/",
        f"FILE://{c.folder}/",
        f"FiLe:{c.folder}/",
        f"\x01 \tfile://{c.folder}/",
        f"file://localhost{c.folder}/",
    ]
    for n, base in enumerate(bases):
        site.page(f"/base{n}", links_page(*relative, head=f'<base href="{base}">'))
    site.page(
        "/xhtml",
        f'<html xmlns="http://www.w3.org/1999/xhtml"><head><base href="{c.folder.as_uri()}/"/></head>'
        '<body><a href="canary.html">x</a><img src="canary.html"/></body></html>',
        content_type="application/xhtml+xml",
    )
    inputs = [site.url(f"/base{n}") for n in range(len(bases))] + [site.url("/xhtml")]
    return Scenario(inputs, {"check_fragments": True}, file_refs=len(bases) * len(relative) + 2)


@scenario
def control_prefix(site: Site, c: Canary) -> Scenario:
    """Control characters and spaces before the scheme, raw and as character references."""
    prefixes = ["\x01", "\x01\x02\x03", "\t", "\n", "\r\n", "   ", "\x0c", "\x1f", " \x01\t", "&#1;", "&#x9;",
                "&#10;", "&#x1F;"]
    nul = ["\x00", "&#0;"]  # the HTML parser makes NUL U+FFFD: "\ufffdfile:..." is a path on the web site
    # each link its own query (the path stays the canary's): look-alike values would be taken for parser clones
    site.page("/", links_page(*(f"{p}{c.url()}?{n}" for n, p in enumerate(prefixes + nul))))
    return Scenario([site.url("/")], file_refs=len(prefixes))


@scenario
def scheme_case(site: Site, c: Canary) -> Scenario:
    """The scheme in any case, with or without an authority, with a host, percent-encoded."""
    hrefs = [
        f"FiLe://{c.path}",
        f"FILE://{c.path}",
        f"fIlE:{c.path}",
        f"file:{c.path}",
        f"file://localhost{c.path}",
        f"file://127.0.0.1{c.path}",
        c.url("can%61ry.html"),
        c.url("%2e%2e/secret/canary.html"),
        "file:canary.html",
    ]
    return _one_page(site, links_page(*hrefs), len(hrefs))


@scenario
def fragments(site: Site, c: Canary) -> Scenario:
    """--check-fragments: a file: target's anchors are never read."""
    hrefs = [c.url() + f"#{ANCHOR}", c.url() + "#not-in-canary", f"FILE://{c.path}#{ANCHOR}", c.url("#x")]
    scene = _one_page(site, links_page(*hrefs), len(hrefs))
    scene.options = {"check_fragments": True, "recursive": True}
    return scene


@scenario
def redirects(site: Site, c: Canary) -> Scenario:
    """Every redirect code to a file: URL, directly and after an http hop; as seeds, leaves and pages."""
    codes = [301, 302, 303, 307, 308]
    for code in codes:
        site.redirect(f"/r{code}", c.url(), code)
    site.redirect("/r-upper", f"FILE://{c.path}", 302)
    site.redirect("/r-no-slashes", f"file:{c.path}", 301)
    site.redirect("/r-chain", "/r301", 302)
    site.redirect("/r-fragment", c.url() + f"#{ANCHOR}", 307)
    leaves = ["/r-upper", "/r-no-slashes", "/r-chain", "/r-fragment", "/x.png"]
    site.redirect("/x.png", c.url("canary.png"), 302)  # an asset: HEAD only, still refused
    site.page("/", links_page(*leaves, *(f"/r{code}" for code in codes)))
    seeds = [site.url("/")] + [site.url(f"/r{code}") for code in codes]
    return Scenario(seeds, {"recursive": True, "check_fragments": True}, refused=len(codes) + len(leaves))


@scenario
def meta_refresh(site: Site, c: Canary) -> Scenario:
    metas = [
        f'<meta http-equiv="refresh" content="0; url={c.url()}">',
        f"<meta http-equiv=REFRESH content=\"5;URL='FILE://{c.path}'\">",
        f'<meta http-equiv="refresh" content="0;url=\x01{c.url()}">',
    ]
    return _one_page(site, links_page(head="".join(metas)), len(metas))


@scenario
def sitemap(site: Site, c: Canary) -> Scenario:
    """A sitemap, a sitemap index and a robots.txt fetched over HTTP, listing file: URLs."""
    site.page("/sitemap.xml", urlset(c.url(), f"FILE://{c.path}", site.url("/")), content_type="application/xml")
    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{c.url('map.xml')}</loc></sitemap></sitemapindex>"
    )
    site.page("/index.xml", index, content_type="application/xml")
    site.page("/robots.txt", f"User-agent: *\nSitemap: {c.url('robots-map.xml')}\n", content_type="text/plain")
    site.page("/", links_page())
    seeds = [site.url("/sitemap.xml"), site.url("/index.xml"), site.url("/robots.txt")]
    return Scenario(seeds, {"recursive": True}, file_refs=4)


@scenario
def url_list(site: Site, c: Canary) -> Scenario:
    """A text/plain list of URLs fetched over HTTP."""
    lines = [c.url(), f"FILE://{c.path}", c.url(f"canary.html#{ANCHOR}"), c.url("missing.html")]
    site.page("/list.txt", "\n".join(lines) + "\n", content_type="text/plain")
    return Scenario([site.url("/list.txt")], {"check_fragments": True}, file_refs=len(lines))


@scenario
def markdown_page(site: Site, c: Canary) -> Scenario:
    """A Markdown document served over HTTP."""
    body = f"[a]({c.url()})\n\n<{c.url()}>\n\n[b](FILE://{c.path}#{ANCHOR})\n\n![i]({c.url('i.png')})\n"
    site.page("/readme.md", body, content_type="text/markdown")
    return Scenario([site.url("/readme.md")], {"check_fragments": True}, file_refs=4)


@scenario
def srcset_and_css(site: Site, c: Canary) -> Scenario:
    head = f"<style>body {{ background: url({c.url()}) }}\n@import \"{c.url('x.css')}\";</style>"
    body = (
        f'<img src="/ok.png" srcset="{c.url("a.png")} 1x, {c.url()} 2x">'
        f'<picture><source srcset="FILE://{c.path} 100w"></picture>'
        f"<div style=\"background-image: url('{c.url('b.png')}')\">x</div>"
    )
    site.page("/ok.png", "png", content_type="image/png")
    return _one_page(site, links_page(head=head) + body, 6)


@scenario
def remapped(site: Site, c: Canary) -> Scenario:
    """--remap turns an http link found on a web page into a file: URL: still a link on a web page."""
    site.page("/", links_page("/secret/canary.html", site.url("/secret/canary.html#" + ANCHOR), "/secret/"))
    remap = rf"^http://127\.0\.0\.1:\d+/secret/ {c.folder.as_uri()}/"
    return Scenario([site.url("/")], {"remap": [remap], "check_fragments": True}, file_refs=3)


@scenario
def crawled(site: Site, c: Canary) -> Scenario:
    """The same routes on a page the crawl reached (depth 2), not on a seed."""
    site.page("/", html("/a/"))
    site.page("/a/", html("/a/b.html"))
    site.page("/a/b.html", links_page("canary.html", f"\x01{c.url()}", head=f'<base href="{c.folder.as_uri()}/">'))
    return Scenario([site.url("/")], {"recursive": True, "check_fragments": True}, file_refs=2)


def _one_page(site: Site, body: str, file_refs: int) -> Scenario:
    site.page("/", body)
    return Scenario([site.url("/")], {"check_fragments": True}, file_refs=file_refs)


# -- what a report says -------------------------------------------------------------------------------


def verdicts(report: Report) -> list[tuple[Any, ...]]:
    """Everything a run decided, without timings, in a stable order."""
    out = []
    for r in report.results:
        refs = tuple(sorted((ref.source, ref.line, ref.column, ref.element, ref.attribute, ref.text)
                            for ref in r.references))
        out.append((r.url, r.status.value, r.code, r.reason, r.redirects, r.content_type, refs))
    pages = [("page", p.url, p.depth, p.links, p.followed) for p in report.pages]
    return sorted(out) + sorted(pages)


def assert_no_local_verdict(report: Report, scene: Scenario) -> None:
    local = [r for r in report.results if r.url.lower().startswith("file:")]
    for r in local:
        assert (r.status, r.code, r.reason) == (Status.SKIPPED, None, WEB_FILE), r
        assert "#" not in r.url, r  # no fragment verdict of a file: target
    assert sum(len(r.references) for r in local) == scene.file_refs
    refused = [r for r in report.results if r.reason == REFUSED]
    assert len(refused) == scene.refused
    for r in refused:
        assert r.status is Status.ERROR and r.redirects[-1].lower().startswith("file:"), r
    for r in report.results:
        assert isinstance(r.reason, str) and "\n" not in r.reason and "(" not in r.reason, r


@pytest.mark.usefixtures("both_clients")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_a_web_page_cannot_tell_whether_a_local_file_exists(name: str, site: Site, tmp_path: Path) -> None:
    canary = Canary(tmp_path / "secret")
    canary.plant()
    scene = SCENARIOS[name](site, canary)
    run = lambda: asyncio.wait_for(linkhound.check(scene.inputs, **scene.options), 60)  # noqa: E731 (hang guard)
    with_canary = await run()
    canary.remove()
    without = await run()
    assert_no_local_verdict(with_canary, scene)
    assert verdicts(with_canary) == verdicts(without)


# -- the positive control: a local document's file: links are checked on disk ----------------------------


def local_document(tmp_path: Path, c: Canary) -> list[str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text(links_page(
        "canary.html", f"canary.html#{ANCHOR}", "canary.html#not-in-canary", f"\x01{c.url()}",
        head=f'<base href="{c.folder.as_uri()}/">',
    ))
    (docs / "notes.md").write_text(f"[a](FILE://{c.path})\n\n[b]({c.url()}#{ANCHOR})\n")
    return [str(docs / "page.html"), str(docs / "notes.md")]


async def test_a_local_document_may_link_local_files_and_they_are_checked(tmp_path: Path) -> None:
    canary = Canary(tmp_path / "secret")
    canary.plant()
    inputs = local_document(tmp_path, canary)
    present = await linkhound.check(inputs)
    by_url = {r.url: r for r in present.results}
    assert by_url[canary.url()].status is Status.OK and len(by_url[canary.url()].references) == 5
    assert by_url[canary.url("canary.html#not-in-canary")].reason == "no anchor #not-in-canary"
    assert canary.url(f"canary.html#{ANCHOR}") not in by_url  # the anchor was read from the canary: found
    canary.remove()
    gone = await linkhound.check(inputs)
    assert {(r.url, r.status, r.reason) for r in gone.results} == {(canary.url(), Status.BROKEN, "file not found")}


@pytest.mark.usefixtures("both_clients")
@pytest.mark.parametrize("web_first", [False, True])
async def test_each_reference_gets_the_verdict_of_its_own_source(web_first: bool, site: Site, tmp_path: Path) -> None:
    """One file: URL linked from a local document and from a web page, whichever is read first: the local link
    is checked on disk, the web page's is skipped; neither verdict rubs off on the other."""
    canary = Canary(tmp_path / "secret")
    canary.plant()
    local = tmp_path / "local.md"
    local.write_text(f"[here]({canary.url()})\n\n[gone]({canary.url('missing.html')})\n")
    site.page("/", links_page(canary.url(), canary.url("missing.html")))
    if web_first:
        # one request at a time, the web page first; the local document waits behind a long URL list
        site.page("/n/", "ok")
        site.prefixes["/n/"] = site.routes["/n/"]
        (tmp_path / "urls.txt").write_text("\n".join(site.url(f"/n/{i}") for i in range(150)))
        inputs, options = [site.url("/"), str(tmp_path / "urls.txt"), str(local)], {"max_concurrency": 1}
    else:
        inputs, options = [str(local), site.url("/")], {}
    report = await linkhound.check(inputs, **options)
    seen = {}
    for r in report.results:
        for ref in r.references:
            seen[(ref.source, ref.text)] = (r.status, r.reason)
    assert seen[(str(local), canary.url())] == (Status.OK, "")
    assert seen[(str(local), canary.url("missing.html"))] == (Status.BROKEN, "file not found")
    assert seen[(site.url("/"), canary.url())] == (Status.SKIPPED, WEB_FILE)
    assert seen[(site.url("/"), canary.url("missing.html"))] == (Status.SKIPPED, WEB_FILE)


@pytest.mark.usefixtures("both_clients")
async def test_a_remap_to_file_is_checked_on_disk_for_a_local_document_only(site: Site, tmp_path: Path) -> None:
    """The same http link, remapped to file:, in a local document and on a web page."""
    canary = Canary(tmp_path / "secret")
    canary.plant()
    link = "http://127.0.0.9/secret/canary.html"  # never requested: the remap turns it into a file: URL
    local = tmp_path / "local.md"
    local.write_text(f"[a]({link})\n")
    site.page("/", links_page(link))
    remap = rf"^http://127\.0\.0\.9/secret/ {canary.folder.as_uri()}/"
    report = await linkhound.check([str(local), site.url("/")], remap=[remap])
    verdict = {ref.source: (r.url, r.status) for r in report.results for ref in r.references}
    assert verdict[str(local)] == (canary.url(), Status.OK)
    assert verdict[site.url("/")] == (canary.url(), Status.SKIPPED)
