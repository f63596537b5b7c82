"""Hostile pages must not stall or bloat parsing: deep nesting, floods of tags and NULs, impossible hosts."""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
import textwrap

import pytest
from aiohttp import web

import linkhound
from linkhound import Status
from linkhound.extract import extract_html
from linkhound.extract.html import scan_html
from linkhound.extract.html_tokens import scan_tags
from linkhound.extract.nesting import MAX_NESTING, nesting_hazard
from linkhound.urls import resolve
from server import Site, html

HANG_GUARD = 120  # seconds: only catches a parse that doesn't end, it times nothing


def parse_in_child(page: str) -> dict[str, object]:
    """Links and warning of extract_html on the page that `page` (Python code for a str) builds, in a child
    process that is killed if it hangs."""
    code = textwrap.dedent(f"""
        import json
        from linkhound.extract import extract_html
        page = {page}
        extraction = extract_html(page.encode(), "http://example.test/")
        print(json.dumps({{"links": [link.text for link in extraction.links], "warning": extraction.warning,
                          "last": [extraction.links[-1].line, extraction.links[-1].column]}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


NESTED = "'<a href=\"/before\">b</a>' + '<div>' * {n} + '<a href=\"/inside\">i</a>' + '</div>' * {n} + " \
    "'<a href=\"/after\">a</a>'"


@pytest.mark.parametrize("depth", [100_000, 1_000_000])
def test_deep_nesting_is_parsed_in_bounded_time_and_its_links_found(depth: int) -> None:
    result = parse_in_child(NESTED.format(n=depth))
    assert result["links"] == ["/before", "/inside", "/after"]
    assert str(result["warning"]).startswith("not fully parsed: ")
    assert result["last"] == [1, len('<a href="/before">b</a><a href="/inside">i</a><a href="') + 1 + 11 * depth]


def test_a_20_mb_ordinary_page_is_fully_parsed() -> None:
    paragraph = "'<p>' + 'text ' * 30 + '<a href=\"/p{i}\">link</a> and <a href=\"#s{i}\">more</a></p>\\n'"
    page = f"'<!doctype html><body>' + ''.join({paragraph}.replace('{{i}}', str(i)) for i in range(80_000))"
    result = parse_in_child(page)
    links = result["links"]
    assert isinstance(links, list) and len(links) == 160_000
    assert links[:2] == ["/p0", "#s0"] and links[-1] == "#s79999"
    assert result["warning"] == ""
    assert result["last"][0] == 80_000  # type: ignore[index]


def test_nesting_past_the_limit_is_read_tag_by_tag_with_a_warning() -> None:
    shallow = "<p>x" * 5000  # optional end tags: each <p> closes the one before
    assert nesting_hazard(shallow) == ""
    deep = "<span>" * (MAX_NESTING + 1) + "<p>x" * 5000
    assert nesting_hazard(deep) == f"nesting deeper than {MAX_NESTING}"
    scan = scan_html(deep + '<a href="/x" id="here">x</a>')
    assert scan.warning == f"not fully parsed: nesting deeper than {MAX_NESTING}"
    assert [found[1] for found in scan.found] == ["/x"] and scan.anchors == {"here"}


@pytest.mark.parametrize(
    "unit",
    [
        "<li>item <a href=/x>x</a>",  # list items without </li>
        "<tr><td>a<td>b",  # rows and cells without end tags
        "<dt>term<dd>definition",
        "<option>one<option>two",
        "<p><b>bold</p>",  # formatting reopened in every paragraph
        "<svg><path d='m0 0'/><g/></svg>",  # self-closing foreign elements
        "<div><span><a href=/y>y</a></span></div>",
    ],
)
def test_optional_end_tags_and_misnesting_of_real_pages_are_not_deep(unit: str) -> None:
    page = {"<li": "<ul>", "<tr": "<table>", "<dt": "<dl>", "<op": "<select>"}.get(unit[:3], "") + unit * 6000
    assert nesting_hazard(page) == "", unit


@pytest.mark.parametrize(
    "unit",
    [
        "<div><object></div>",  # an end tag the object keeps out of scope
        "<li><section>",  # a <li> stops looking for the previous one at a section
        "<b><div></b>",  # the adoption agency keeps the div open
        "<div></span>",  # an end tag with nothing to close
        "<table><td><svg><td>",  # cells inside SVG are SVG elements
    ],
)
def test_constructs_that_keep_elements_open_count_as_nesting(unit: str) -> None:
    assert nesting_hazard(unit * 5000).startswith(("nesting deeper", "more than")), unit


def test_a_flood_of_tags_is_read_tag_by_tag() -> None:
    page = '<a href="/first">f</a>' + "<b x>" * 600_000
    scan = scan_html(page)
    assert scan.warning == "not fully parsed: more than 500,000 tags"
    assert [found[1] for found in scan.found] == ["/first"]


def test_the_tag_scan_finds_what_the_tree_scan_finds_on_an_ordinary_page() -> None:
    page = """<!doctype html><html><head>
<base href="/docs/"><meta name="robots" content="index, nofollow">
<meta http-equiv="refresh" content="5; url='next.html'">
<link rel="stylesheet" href="a.css"><link rel="preconnect" href="https://cdn.test">
<style>body { background: url("bg.png") } /* url(no.png) */</style>
<script>var s = '<a href="no.html">';</script></head>
<body background=body.png><!-- <a href="commented.html"> -->
<h1 id="top">Title</h1><a name="old">x</a>
<p><a href="a.html?x=1&amp;y=2" rel="nofollow">a</a> <A HREF='b.html'>b</A> <a href=c.html>c</a>
<img src="i.png" srcset="i1.png 1x, i2.png 2x" style="background: url(s.png)">
<input type="image" src="in.png"><input type="text" src="no.png" formaction="/go">
<template><a href="template.html">t</a></template><textarea><a href="no.html"></textarea>
<svg><a href="svg.html"><circle/></a></svg><iframe src="f.html"></iframe>
<object data="o.svg"></object><q cite="q.html">q</q> <a href="  spaced.html  ">s</a>
</body></html>"""
    tree, tags = scan_html(page), scan_tags(page, "")
    assert tags.found == tree.found
    assert tags.anchors == tree.anchors == {"top", "old"}
    assert (tags.base_href, tags.nofollow) == (tree.base_href, tree.nofollow) == ("/docs/", True)


def test_a_disabled_stylesheet_is_not_a_link() -> None:
    page = '<link rel="stylesheet" href="off.css" disabled><link rel="stylesheet" href="on.css">' \
           '<link rel="icon" href="icon.png" disabled>'
    for scan in (scan_html(page), scan_tags(page, "")):
        assert [found[1] for found in scan.found] == ["on.css", "icon.png"]


def test_an_href_with_a_nul_is_placed_where_it_is_written() -> None:
    page = '<p>one</p>\n<p>two</p>\n  <a href="a\0b">x</a> <a href="c">y</a>'
    links = extract_html(page.encode(), "http://example.test/").links
    assert [(link.text, link.line, link.column) for link in links] == [("a\ufffdb", 3, 12), ("c", 3, 32)]


def test_nuls_between_tags_are_not_handed_to_the_tree_builder() -> None:
    page = '<a href="/x\0y">x</a>' + "\0" * 100_000 + '<a href="/z">z</a>'
    links = extract_html(page.encode(), "http://example.test/").links
    assert [(link.text, link.column) for link in links] == [("/x\ufffdy", 10), ("/z", 100_030)]


@pytest.mark.parametrize(
    "host",
    [
        "a" * 10_000,  # a 10,000-character name
        ".".join(["a"] * 200),  # 200 labels: longer than 253 characters
        "b" * 64 + ".example",  # a label over 63 characters
        ".".join(["c" * 63] * 4),  # 255 characters
    ],
)
def test_a_hostname_no_dns_could_hold_is_an_invalid_url(host: str) -> None:
    assert resolve(f"http://{host}/page", "") is None
    assert resolve(f"//{host}/page", "https://example.test/") is None


def test_hostnames_within_dns_limits_stay_valid() -> None:
    longest = ".".join(["d" * 63] * 3 + ["e" * 61])  # 253 characters
    assert resolve(f"http://{longest}./x", "") == f"http://{longest}./x"
    assert resolve("http://" + "f" * 63 + "/x", "") is not None
    assert resolve("http://[::1]/x", "") == "http://[::1]/x"


async def test_a_page_linking_to_an_impossible_host_reports_an_invalid_url(site: Site) -> None:
    bad = "http://" + "a" * 64 + ".example/"
    site.page("/", html(bad, "/ok"))
    site.page("/ok", "ok")
    report = await asyncio.wait_for(linkhound.check([site.url("/")], recursive=True), 60)
    result = next(r for r in report.results if "aaaa" in r.url)
    assert result.status is Status.BROKEN and result.reason == "invalid URL"


# -- memory: a body of NULs costs a small multiple of the body cap -------------------------------------------

CAP = 16 << 20  # large enough that fixed costs (imports, buffers) are small beside it


async def peak_rss_of_a_run(*args: str) -> int:
    """Peak resident memory (KiB) of `python -m linkhound args`, measured by a parent of its own."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, sys.executable, "-m", "linkhound", *args, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), HANG_GUARD)
    return int(out)


@pytest.mark.parametrize("client", ["reqwest", "aiohttp"])
async def test_a_page_of_nuls_costs_a_small_multiple_of_the_body_cap(site: Site, client: str) -> None:
    nuls = b"<html><body><a href=/ok>ok</a>" + b"\0" * CAP
    zipped = gzip.compress(nuls, 1)

    async def plain(request: web.Request) -> web.StreamResponse:
        return web.Response(body=nuls, content_type="text/html")

    async def gzipped(request: web.Request) -> web.StreamResponse:
        return web.Response(body=zipped, content_type="text/html", headers={"Content-Encoding": "gzip"})

    site.handler("/plain", plain)
    site.handler("/gzip", gzipped)
    site.page("/small", html("/ok"))
    site.page("/ok", "ok")
    options = ("--max-body-size", str(CAP), "--http-client", client, "--no-progress", "-r")
    baseline = await peak_rss_of_a_run(*options, site.url("/small"))
    for path in ("/plain", "/gzip"):
        peak = await peak_rss_of_a_run(*options, site.url(path))
        # Before NULs were kept from the parser, this was 23 times the cap over the baseline.
        assert peak - baseline < 4 * CAP // 1024, (path, baseline, peak)
    assert site.hits("/ok") >= 1


async def test_a_page_too_deeply_nested_is_read_and_named_in_the_warnings(site: Site) -> None:
    depth = 100_000
    site.page("/", '<a href="/before">b</a>' + "<div>" * depth + '<a href="/inside">i</a>' + "</div>" * depth
              + '<a href="/after">a</a>')
    for path in ("/before", "/inside", "/after"):
        site.page(path, "ok")
    report = await asyncio.wait_for(linkhound.check([site.url("/")]), 120)  # a hang guard
    assert {r.url.rsplit("/", 1)[1] for r in report.results} >= {"before", "inside", "after"}
    assert [w for w in report.summary.warnings if "not fully parsed" in w] == [
        f"{site.url('/')}: not fully parsed: nesting deeper than {MAX_NESTING}"
    ]


SIZE = 512 * 1024
MARKER_FLOODS = {
    # bytes that each may start a bare URL, and none does (or one, huge): each used to be kept as an offset in
    # a list, 36 bytes apiece, and a run of labels made the regular expression engine keep a frame per label
    "markdown @": ("md", b"@" * SIZE),
    "markdown a@": ("md", b"a@" * (SIZE // 2)),
    "markdown ://": ("md", b"a:// " * (SIZE // 5)),
    "markdown www.": ("md", b"www." * (SIZE // 4)),
    "markdown address labels": ("md", b"a@" + b"b." * (SIZE // 2) + b"c"),
    "text x:": ("text", b"x:" * (SIZE // 2)),
    "text mailto": ("text", b"mailto:" + b"b." * (SIZE // 2) + b"c"),
    # a string in a stylesheet, and a tag, as long as the whole page: a frame per character, before
    "css string": ("css", b"a { b: '" + b"c" * SIZE + b"' }"),
    "html tag": ("html", b"<a " + b"b" * SIZE + b">"),
    "html style tag": ("html", b"<style " + b"b" * SIZE + b">x</style>"),
}


@pytest.mark.parametrize("name", list(MARKER_FLOODS))
def test_a_flood_of_url_markers_costs_a_small_multiple_of_the_body(name: str) -> None:
    # Memory, not time: traced in this process, so it counts every Python object and the regex engine's stack.
    import tracemalloc

    from linkhound.extract import extract_css, extract_markdown, extract_text

    kind, body = MARKER_FLOODS[name]
    extractor = {"md": lambda b: extract_markdown(b, "file:///a.md"), "text": lambda b: extract_text(b, "file:///a"),
                 "css": lambda b: extract_css(b.decode()), "html": lambda b: extract_html(b, "http://x.test/")}[kind]
    extractor(body[:64])  # (the modules it loads on first use are not counted)
    tracemalloc.start()
    try:
        extractor(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(body), (name, peak / len(body))
