"""A parsed page (its links as written and resolved) and how it crosses a process boundary: pure functions,
no event loop, so the parse worker imports nothing it doesn't use."""

from __future__ import annotations

import pickle
import struct
from typing import Any, NamedTuple

from .extract import Kind, extract, kind_for_response, robots_sitemaps
from .links import LinkRules, Resolved
from .types import Extraction, RawLink

HEADER = struct.Struct("!I")  # each frame: its length, then a pickle
# Response types whose body is read when a page is crawled or its anchors are needed.
PARSABLE = frozenset(
    {"", "text/html", "application/xhtml+xml", "application/xml", "text/xml", "text/plain", "text/markdown",
     "application/octet-stream", "application/gzip", "application/x-gzip"}
)


class ParsedPage(NamedTuple):
    kind: Kind
    base: str
    anchors: frozenset[str]
    nofollow: bool  # <meta name=robots content=nofollow>
    links: list[tuple[RawLink, Resolved | None]]  # each link as written, and resolved (None: invalid)
    warning: str = ""  # why the page was not fully parsed ("not fully parsed: nesting deeper than 512")


Flat = tuple[str, str, frozenset[str], bool, list[tuple[Any, ...]], str]


def parse_page(rules: LinkRules, body: bytes, url: str, content_type: str, include_code: bool) -> ParsedPage | None:
    kind = kind_for_response(content_type, body, url)
    if kind is None:
        return None
    if kind is Kind.TEXT and url.split("?", 1)[0].endswith("/robots.txt"):
        # a robots.txt given as input: its Sitemap: lines are sitemaps to read
        sitemaps = tuple(RawLink(u, "robots", "sitemap", 0, 0) for u in robots_sitemaps(body))
        kind, extraction = Kind.SITEMAP, Extraction(sitemaps, url)
    else:
        extraction = extract(body, url, kind, include_code=include_code)
    resolve_link = rules.resolver(extraction.base, False)
    links = [(raw, resolve_link(raw.text)) for raw in extraction.links]
    return ParsedPage(kind, extraction.base, extraction.anchors, extraction.nofollow, links, extraction.warning)


def flatten(page: ParsedPage | None) -> Flat | None:
    """Plain tuples cross a process boundary several times faster than named tuples."""
    if page is None:
        return None
    links = [(*raw, *resolved) if resolved is not None else tuple(raw) for raw, resolved in page.links]
    return page.kind.value, page.base, page.anchors, page.nofollow, links, page.warning


def unflatten(flat: Flat | None) -> ParsedPage | None:
    if flat is None:
        return None
    kind, base, anchors, nofollow, rows, warning = flat
    new = tuple.__new__  # what _make does, without its Python frame: 600k links in a 10k-page crawl
    links = [(new(RawLink, row[:6]), new(Resolved, row[6:]) if len(row) > 6 else None) for row in rows]
    return ParsedPage(Kind(kind), base, anchors, nofollow, links, warning)


def frame(obj: object) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data
