"""Tests of the plain-text extractor, and of the package's front door: Kind detection and extract()."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import linkhound.extract as extract_package
from linkhound.extract import Kind, extract, extract_text, kind_for_path, kind_for_response, text_links
from linkhound.extract.text import LineCounter, find_urls, links_at, trim_url
from linkhound.types import RawLink

BASE = "file:///notes.txt"


def positions(doc: str | bytes) -> list[tuple[str, int, int]]:
    return [(link.text, link.line, link.column) for link in extract_text(doc, BASE).links]


def test_urls_of_every_supported_scheme_with_positions() -> None:
    doc = "web http://a.example/x and https://b.example\nftp://files.example/f.tgz\n"
    doc += "file:///etc/hosts mailto:me@x.org"
    assert extract_text(doc, BASE).links == (
        RawLink("http://a.example/x", "text", "url", 1, 5),
        RawLink("https://b.example", "text", "url", 1, 28),
        RawLink("ftp://files.example/f.tgz", "text", "url", 2, 1),
        RawLink("file:///etc/hosts", "text", "url", 3, 1),
        RawLink("mailto:me@x.org", "text", "url", 3, 19),
    )
    assert extract_text(doc, BASE).base == BASE


def test_scheme_is_case_insensitive() -> None:
    assert positions("HTTPS://UP.EXAMPLE/Path") == [("HTTPS://UP.EXAMPLE/Path", 1, 1)]


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("See https://x.example/a.", "https://x.example/a"),
        ("https://x.example/a, then", "https://x.example/a"),
        ("(https://x.example/a)", "https://x.example/a"),
        ("(see https://x.example/wiki/A_(b))", "https://x.example/wiki/A_(b)"),
        ("[https://x.example/a]", "https://x.example/a"),
        ('"https://x.example/a"', "https://x.example/a"),
        ("'https://x.example/a'!", "https://x.example/a"),
        ("<https://x.example/a>", "https://x.example/a"),
        ("https://x.example/a?b=1&c=2;", "https://x.example/a?b=1&c=2"),
        ("https://x.example/a#frag:", "https://x.example/a#frag"),
        ("https://x.example/path/", "https://x.example/path/"),
    ],
)
def test_trailing_punctuation_is_not_part_of_the_url(text: str, url: str) -> None:
    assert [link.text for link in extract_text(text, BASE).links] == [url]


def test_trim_url_keeps_balanced_brackets() -> None:
    assert trim_url("https://x.example/a(b)c)") == "https://x.example/a(b)c"
    assert trim_url("https://x.example/{a}}") == "https://x.example/{a}"


def test_scheme_alone_is_not_a_url() -> None:
    assert positions("https:// and mailto: and slack:// and ://x.example and https:/// alone") == []


def test_any_scheme_is_found_for_the_checker_to_classify() -> None:
    doc = "Join slack://open?team=T1, irc://irc.example/#chan or s3://bucket/key (xhttps://odd.example)."
    assert positions(doc) == [
        ("slack://open?team=T1", 1, 6),
        ("irc://irc.example/#chan", 1, 28),
        ("s3://bucket/key", 1, 55),
        ("xhttps://odd.example", 1, 72),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "C://not-a-scheme",  # one letter: a drive
        "1http://glued.example",  # a scheme starts with a letter
        "ühttps://glued.example",  # inside a word
        "std::vector and a::b and 12:30 and http:/one-slash",
        "see://",
        "a" * 33 + "://too-long.example",
        "<https://>",
    ],
)
def test_implausible_urls_are_not_found(text: str) -> None:
    assert positions(text) == []


def test_url_inside_a_url_is_part_of_it() -> None:
    doc = "https://a.example/?next=https://b.example/x and ftp://user:pw@c.example/f"
    assert positions(doc) == [
        ("https://a.example/?next=https://b.example/x", 1, 1),
        ("ftp://user:pw@c.example/f", 1, 49),
    ]


def test_text_files_are_not_autolinked_like_markdown() -> None:
    assert positions("www.example.com and me@example.com") == []


def test_url_after_a_plus_sign_is_found() -> None:
    assert positions("pip install git+https://github.com/o/r") == [("https://github.com/o/r", 1, 17)]


def test_columns_are_characters_on_crlf_documents() -> None:
    assert positions("Ünï\r\n\r\n“x” https://y.example\r") == [("https://y.example", 3, 5)]


def test_bytes_are_decoded_with_bom_and_replacement() -> None:
    assert positions(b"\xef\xbb\xbfhttps://a.example/\xff x") == [("https://a.example/\ufffd", 1, 1)]
    assert positions("https://b.example/".encode("utf-16")) == [("https://b.example/", 1, 1)]


def test_text_links_come_one_at_a_time_and_match_extract_text() -> None:
    body = "\r\n".join(f"see https://h{i}.example/p{i}.html, or (http://x.example/q?{i})." for i in range(300))
    links = text_links(body.encode())
    first = next(links)  # the first link, before the rest of the document is looked at
    assert first == RawLink("https://h0.example/p0.html", "text", "url", 1, 5)
    rest = list(links)
    assert (first, *rest) == extract_text(body.encode(), "").links
    assert rest[-1] == RawLink("http://x.example/q?299", "text", "url", 300, 41)


def test_line_counter_handles_offsets_in_any_order() -> None:
    counter = LineCounter("ab\ncd\nef")
    assert counter.position(7) == (3, 2)
    assert counter.position(1) == (1, 2)
    assert counter.position(3) == (2, 1)
    assert [counter.position(o) for o in (0, 4, 2, 8)] == [(1, 1), (2, 2), (1, 3), (3, 3)]
    assert counter.position(99) == (3, 3)  # past the end: the end
    assert counter.position(-5) == (1, 1)


# --- Kind detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("index.html", Kind.HTML),
        ("docs/PAGE.HTM", Kind.HTML),
        ("a.xhtml", Kind.HTML),
        ("README.md", Kind.MARKDOWN),
        ("notes.markdown", Kind.MARKDOWN),
        ("page.mdx", Kind.MARKDOWN),
        *((f"x.{suffix}", Kind.MARKDOWN) for suffix in ("mkd", "mdown", "mdwn", "mkdn", "mkdown")),
        ("links.txt", Kind.TEXT),
        ("sitemap.xml", Kind.SITEMAP),
        ("/site/sitemap_index.xml", Kind.SITEMAP),
        ("Sitemap-posts.xml.gz", Kind.SITEMAP),
        ("pages.XML.gz", Kind.SITEMAP),  # a compressed sitemap of any name, as .xml is one
        (r"C:\site\sitemap.xml", Kind.SITEMAP),
        ("feed.xml", Kind.SITEMAP),  # read as a sitemap: an XML file that is not one yields nothing
        ("pom.XML", Kind.SITEMAP),
        ("analysis.qmd", Kind.MARKDOWN),
        ("report.Rmd", Kind.MARKDOWN),
        ("report.rmarkdown", Kind.MARKDOWN),
        ("image.png", None),
        ("Makefile", None),
        (".md", None),
        ("archive.md.gz", None),
    ],
)
def test_kind_for_path(path: str, kind: Kind | None) -> None:
    assert kind_for_path(path) is kind


SITEMAP = b'<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>'


@pytest.mark.parametrize(
    ("content_type", "body", "url", "kind"),
    [
        ("text/html; charset=utf-8", b"", "https://x/", Kind.HTML),
        ("Application/XHTML+XML", b"", "https://x/", Kind.HTML),
        ("text/markdown", b"# x", "https://x/a", Kind.MARKDOWN),
        ("text/plain", b"x", "https://x/notes", Kind.TEXT),
        ("text/plain; charset=utf-8", b"# x", "https://raw.example/o/r/README.md?x=1", Kind.MARKDOWN),
        ("application/xml", SITEMAP, "https://x/s.xml", Kind.SITEMAP),
        ("text/xml", b"<sitemapindex></sitemapindex>", "https://x/s", Kind.SITEMAP),
        ("application/xml", b"<rss></rss>", "https://x/feed.xml", None),
        ("text/plain", b"<rss></rss>", "https://raw.example/o/r/feed.xml", None),
        ("text/plain", SITEMAP, "https://raw.example/o/r/sitemap.xml", Kind.SITEMAP),
        ("text/plain", b"x", "https://raw.example/o/r/notes.qmd", Kind.MARKDOWN),
        ("application/gzip", gzip.compress(SITEMAP), "https://x/sitemap.xml.gz", Kind.SITEMAP),
        ("application/x-gzip", gzip.compress(b"x"), "https://x/backup.tar.gz", None),
        ("", b"  <!DOCTYPE html><html>", "https://x/", Kind.HTML),
        ("application/octet-stream", b"\n<HTML>\n<head>", "https://x/", Kind.HTML),
        ("", b"<!-- c --><p>", "https://x/", Kind.HTML),
        ("", SITEMAP, "https://x/", Kind.SITEMAP),
        ("", gzip.compress(SITEMAP), "https://x/sitemap.xml.gz", Kind.SITEMAP),
        ("", b"# Title", "https://x/README.md", Kind.MARKDOWN),
        ("", b"plain", "https://x/file.bin", None),
        ("image/png", b"\x89PNG", "https://x/a.png", None),
        ("application/pdf", b"%PDF", "https://x/a.html", None),
        ("application/json", b"{}", "https://x/", None),
    ],
)
def test_kind_for_response(content_type: str, body: bytes, url: str, kind: Kind | None) -> None:
    assert kind_for_response(content_type, body, url) is kind


def test_kind_values_are_their_names_in_lower_case() -> None:
    assert [kind.value for kind in Kind] == ["html", "markdown", "text", "sitemap"]


# --- extract() dispatch -----------------------------------------------------------------------------


def test_extract_dispatches_on_kind() -> None:
    base = "https://x.example/dir/"
    assert [link.element for link in extract(b'<a href="h">x</a>', base, Kind.HTML).links] == ["a"]
    assert [link.attribute for link in extract(b"[m](m.md)", base, Kind.MARKDOWN).links] == ["inline"]
    assert [link.element for link in extract(b"https://t.example", base, Kind.TEXT).links] == ["text"]
    sitemap = extract(b"<urlset><url><loc>https://s.example/</loc></url></urlset>", base, Kind.SITEMAP)
    assert [link.text for link in sitemap.links] == ["https://s.example/"]
    assert sitemap.base == base


def test_an_xml_file_that_is_not_a_sitemap_yields_no_links() -> None:
    feed = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel><link>https://blog.example/</link><atom:link href="https://blog.example/feed.xml"/></channel>
</rss>"""
    kind = kind_for_path("feed.xml")
    assert kind is not None
    assert extract(feed, "file:///feed.xml", kind).links == ()


@pytest.mark.parametrize("name", ["notes.qmd", "notes.Rmd", "page.mdx"])
def test_quarto_r_markdown_and_mdx_code_cells_are_code(name: str) -> None:
    doc = b"# Analysis\n\n```{python}\nrequests.get('https://api.example/data')\n```\n\nSee [x](x.md).\n"
    kind = kind_for_path(name)
    assert kind is Kind.MARKDOWN
    assert [link.text for link in extract(doc, f"file:///{name}", kind).links] == ["x.md"]
    with_code = extract(doc, f"file:///{name}", kind, include_code=True).links
    assert [link.text for link in with_code] == ["https://api.example/data", "x.md"]


def test_extract_passes_include_code_to_markdown() -> None:
    doc = b"`https://code.example`"
    assert extract(doc, "", Kind.MARKDOWN).links == ()
    assert len(extract(doc, "", Kind.MARKDOWN, include_code=True).links) == 1


def test_package_all_is_sorted_and_matches_its_exports() -> None:
    assert extract_package.__all__ == sorted(extract_package.__all__)
    for name in extract_package.__all__:
        assert hasattr(extract_package, name), name


# A line that is a URL is taken whole (text_links' quick way); any other line, and a text that turns out to be
# prose, goes find_urls' way. Both must give the same links at the same places, whatever the mix of lines.
_LIST_LINES = [
    "https://a.example/x", "http://127.0.0.1:8081/docs/p1.html", "https://b.example/", "http:///",
    "https://c.example/end.", "https://d.example/(x)", "https://e.example/q?a=1&b=2#top", "ftp://f.example/file",
    "see https://g.example/ here", "", "# a comment", "mailto:someone@example.com", "x:y", "\u00a0https://h.example",
    "https://i.example/\u2028https://j.example/", "toolongschemetoolongschemetoolongscheme://k.example/",
    "https://l.example/a'b\"c", "1http://m.example/", "http://n.example/,", "https://ü.example/ä",
]


_line = st.sampled_from(_LIST_LINES) | st.text(max_size=12)


@settings(max_examples=300, deadline=None)
@given(_line, st.lists(_line, max_size=90), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_url_lists_give_what_find_urls_gives(first: str, lines: list[str], newline: str, last_newline: bool) -> None:
    body = newline.join([first, *lines]) + (newline if last_newline else "")
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    assert list(text_links(body)) == list(links_at(text, find_urls(text), "text", "url"))


def test_prose_with_a_url_on_a_line_of_its_own_finds_every_link() -> None:
    prose = [f"line {i}: see (https://q{i}.example/a), then stop." for i in range(100)]
    body = "\n".join(["# urls", "https://first.example/", *prose[:10], "https://mid.example/x", *prose[10:]])
    links = list(text_links(body))
    assert links == list(links_at(body, find_urls(body), "text", "url"))
    assert [(link.text, link.line, link.column) for link in links[:3]] == [
        ("https://first.example/", 2, 1), ("https://q0.example/a", 3, 14), ("https://q1.example/a", 4, 14)]
    assert (links[11].text, links[11].line) == ("https://mid.example/x", 13)
    assert (links[-1].text, links[-1].line) == ("https://q99.example/a", 103)


def test_a_url_list_with_prose_after_its_first_lines_finds_every_link() -> None:
    urls = [f"https://h{i}.example/p{i}" for i in range(100)]
    prose = [f"line {i}: see (https://q{i}.example/a), then stop." for i in range(300)]
    body = "\n".join([*urls, *prose, "https://last.example/"])
    links = list(text_links(body))
    assert [link.text for link in links] == [*urls, *(f"https://q{i}.example/a" for i in range(300)),
                                             "https://last.example/"]
    assert (links[100].line, links[100].column) == (101, 14)
    assert (links[-1].line, links[-1].column) == (401, 1)
