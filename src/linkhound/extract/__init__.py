"""Pure extractors: document bytes + base URL + Kind -> Extraction (links as written, anchors, base)."""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

from ..types import Extraction
from .slug import GITHUB, MKDOCS, HeadingIds, Slugger, github_slug
from .text import extract_text, text_links

__all__ = [
    "GITHUB",
    "HeadingIds",
    "Kind",
    "MKDOCS",
    "Slugger",
    "extract",
    "extract_css",
    "extract_html",
    "extract_markdown",
    "extract_sitemap",
    "extract_text",
    "github_slug",
    "kind_for_path",
    "kind_for_response",
    "robots_sitemaps",
    "text_links",
]


class Kind(Enum):
    """The document types linkhound extracts links from."""

    HTML = "html"
    MARKDOWN = "markdown"
    TEXT = "text"
    SITEMAP = "sitemap"


_SUFFIXES = {
    **dict.fromkeys((".html", ".htm", ".xhtml"), Kind.HTML),
    **dict.fromkeys((".md", ".markdown", ".mdx", ".mkd", ".mdown", ".mdwn", ".mkdn", ".mkdown"), Kind.MARKDOWN),
    **dict.fromkeys((".qmd", ".rmd", ".rmarkdown"), Kind.MARKDOWN),  # Quarto, R Markdown: code cells are fences
    ".txt": Kind.TEXT,
    ".xml": Kind.SITEMAP,  # any other XML yields no links: a namespace URI is not a link
}
_SITEMAP_NAME = re.compile(r"sitemap[^/\\]*\.xml(?:\.gz)?", re.IGNORECASE)
_HTML_MEDIA = frozenset({"text/html", "application/xhtml+xml"})
_MARKDOWN_MEDIA = frozenset({"text/markdown", "text/x-markdown"})
_XML_MEDIA = frozenset({"application/xml", "text/xml"})
_GZIP_MEDIA = frozenset({"application/gzip", "application/x-gzip"})
_UNKNOWN_MEDIA = frozenset({"", "application/octet-stream"})
# The WHATWG MIME sniffing rule for HTML: one of these tags first, then a space or ">".
_HTML_START = re.compile(
    rb"[\t\n\f\r ]*<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)"
    rb"[ >]",
    re.IGNORECASE,
)
_SITEMAP_ROOT = re.compile(rb"<(?:[\w.-]+:)?(?:urlset|sitemapindex)[\s>]")
_GZIP_MAGIC = b"\x1f\x8b"


def kind_for_path(path: str) -> Kind | None:
    """The Kind a file name says: by suffix (case-insensitive); sitemap*.xml(.gz), *.xml and *.xml.gz are read as
    sitemaps."""
    name = re.split(r"[/\\]", path)[-1]
    if _SITEMAP_NAME.fullmatch(name):
        return Kind.SITEMAP
    if name[-7:].lower() == ".xml.gz":  # (a compressed sitemap of any name, as .xml is one)
        return Kind.SITEMAP
    dot = name.rfind(".")
    return _SUFFIXES.get(name[dot:].lower()) if dot > 0 else None


def _sniff_xml_sitemap(body: bytes) -> bool:
    head = body[:4096]  # room for an XML declaration, a stylesheet and a comment before the root
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") and bool(_SITEMAP_ROOT.search(head))


def kind_for_response(content_type: str, body: bytes, url: str) -> Kind | None:
    """The Kind of an HTTP response body, from its Content-Type, else sniffed; None: not parsed.

    text/plain is Markdown when the URL's path says so (raw files on code hosts are served that way).
    Without a usable Content-Type the first 1 KB is sniffed, then the URL's path suffix decides.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    path = urlsplit(url).path
    if media in _HTML_MEDIA:
        return Kind.HTML
    if media in _MARKDOWN_MEDIA:
        return Kind.MARKDOWN
    if media in _XML_MEDIA:
        return Kind.SITEMAP if _sniff_xml_sitemap(body) else None
    if media == "text/plain":
        by_path = kind_for_path(path)
        if by_path is Kind.SITEMAP:  # raw files on code hosts again
            return Kind.SITEMAP if _sniff_xml_sitemap(body) else None
        return Kind.MARKDOWN if by_path is Kind.MARKDOWN else Kind.TEXT
    is_gzip_sitemap = body.startswith(_GZIP_MAGIC) and path.lower().endswith(".xml.gz")
    if media in _GZIP_MEDIA:
        return Kind.SITEMAP if is_gzip_sitemap else None
    if media not in _UNKNOWN_MEDIA:
        return None
    head = body[:1024]
    is_xml = head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<?xml")
    if is_gzip_sitemap or (is_xml and _sniff_xml_sitemap(body)):
        return Kind.SITEMAP
    if _HTML_START.match(head.removeprefix(b"\xef\xbb\xbf")):
        return Kind.HTML
    by_path = kind_for_path(path)
    return by_path if by_path in (Kind.HTML, Kind.MARKDOWN) else None


def extract(
    body: bytes, base: str, kind: Kind, *, include_code: bool = False, heading_ids: HeadingIds = GITHUB
) -> Extraction:
    """Extract the links and anchors of one document of the given kind; pure, never raises on bad input."""
    if kind is Kind.HTML:
        from .html import extract_html  # selectolax loads only for a run that reads HTML

        return extract_html(body, base)
    if kind is Kind.MARKDOWN:
        from .markdown import extract_markdown  # pyromark loads only for a run that reads Markdown

        return extract_markdown(body, base, include_code=include_code, heading_ids=heading_ids)
    if kind is Kind.TEXT:
        return extract_text(body, base)
    from .sitemap import extract_sitemap  # (expat loads only for a run that reads a sitemap)

    return dataclasses.replace(extract_sitemap(body), base=base)


def __getattr__(name: str) -> Any:
    """The extractors a run may never use load on first use (a list of URLs reads no HTML, Markdown, CSS or
    sitemap before its first requests go out)."""
    if name in ("extract_sitemap", "robots_sitemaps"):
        from . import sitemap

        return getattr(sitemap, name)
    if name == "extract_css":
        from .css import extract_css

        return extract_css
    if name == "extract_markdown":
        from .markdown import extract_markdown

        return extract_markdown
    if name == "extract_html":
        from .html import extract_html

        return extract_html
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
