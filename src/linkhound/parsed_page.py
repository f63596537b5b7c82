"""A parsed page (its links as written and resolved) and how it crosses a process boundary: pure functions,
no event loop, so the parse worker imports nothing it doesn't use."""

from __future__ import annotations

import struct
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

from .extract import Kind, extract, kind_for_response
from .links import LinkRules, Resolved
from .types import Extraction, RawLink

_FIRST = itemgetter(0)
HEADER = struct.Struct("!I")  # each frame: its length, then a pickle (a result: see result_frame)
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


# A page as it crosses: its links as two columns of plain tuples (the links as written, and resolved, with
# _UNRESOLVED where a link didn't resolve), and the positions of those that didn't
Flat = tuple[str, str, frozenset[str], bool, list[tuple[Any, ...]], list[tuple[Any, ...]], list[int], str]
_UNRESOLVED = ("", "", None, "")


def parse_page(rules: LinkRules, body: bytes, url: str, content_type: str, include_code: bool) -> ParsedPage | None:
    kind = kind_for_response(content_type, body, url)
    if kind is None:
        return None
    if kind is Kind.TEXT and url.split("?", 1)[0].endswith("/robots.txt"):
        # a robots.txt given as input: its Sitemap: lines are sitemaps to read
        from .extract.sitemap import robots_sitemaps

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
    links = page.links
    raws = list(map(tuple, map(_FIRST, links)))
    resolved = [tuple(r) if r is not None else _UNRESOLVED for _, r in links]
    unresolved = [i for i, r in enumerate(resolved) if r is _UNRESOLVED]
    return page.kind.value, page.base, page.anchors, page.nofollow, raws, resolved, unresolved, page.warning


def unflatten(flat: Flat | None) -> ParsedPage | None:
    """The page again, each named tuple made in C (map of tuple.__new__), with no Python frame a link: 520,000
    links in a 10,000-page crawl."""
    if flat is None:
        return None
    kind, base, anchors, nofollow, raws, resolved, unresolved, warning = flat
    new = tuple.__new__
    links: list[tuple[RawLink, Resolved | None]] = list(zip(
        map(new, repeat(RawLink), raws), map(new, repeat(Resolved), resolved), strict=True))
    for i in unresolved:
        links[i] = (links[i][0], None)
    return ParsedPage(Kind(kind), base, anchors, nofollow, links, warning)


def frame(obj: object) -> bytes:
    import pickle  # here: a run whose pages are all parsed in this process never loads it

    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def result_frame(request_id: int, flat: Flat | None) -> bytes:
    """A parsed page for the process that asked (load_result): marshal, quicker both ways than a pickle (a
    530-link page loads in 117 us against 144), behind a b"m"; a pickle behind b"p" for what marshal can't
    carry (a subclass of str or tuple, say)."""
    import marshal

    try:
        data = b"m" + marshal.dumps((request_id, flat))
    except ValueError:
        import pickle  # (only here: nearly every page is marshal's)

        data = b"p" + pickle.dumps((request_id, flat), protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def load_result(data: bytes) -> tuple[int, Flat | None]:
    """The request id and parsed page of a result_frame's data (after its length)."""
    import marshal

    body = memoryview(data)[1:]
    if data[:1] == b"m":
        loaded: tuple[int, Flat | None] = marshal.loads(body)
        return loaded
    import pickle  # (only for a page marshal could not carry)

    loaded = pickle.loads(body)
    return loaded
