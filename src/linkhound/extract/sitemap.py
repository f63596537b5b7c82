"""Sitemaps (urlset and sitemapindex, plain or gzip) and the Sitemap: lines of robots.txt."""

from __future__ import annotations

import html
import re
import zlib
from xml.parsers import expat

from ..types import Extraction, RawLink
from .text import LineCounter, decode_bytes, normalize_newlines

MAX_DECOMPRESSED = 100 * 1024 * 1024  # the sitemap protocol allows 50 MB; past this it is a bomb
_GZIP_MAGIC = b"\x1f\x8b"
_CONTAINERS = {"urlset": "url", "sitemapindex": "sitemap"}
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)")
_LOC = re.compile(r"<loc>\s*(.*?)\s*</loc>", re.DOTALL)
_INDEX = re.compile(r"<(?:[\w.-]+:)?sitemapindex[\s>]")
_URLSET = re.compile(r"<(?:[\w.-]+:)?urlset[\s>]")
_SITEMAP_LINE = re.compile(r"^[ \t]*sitemap[ \t]*:[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)


class _Rejected(Exception):
    """The document declares a DTD or entities: never expanded, the sitemap yields nothing."""


def gunzip(body: bytes, limit: int = MAX_DECOMPRESSED) -> bytes | None:
    """Decompress gzip data up to `limit` bytes; None when it is corrupt or larger than that."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = decompressor.decompress(body, limit)
    except zlib.error:
        return None
    if decompressor.unconsumed_tail:
        return None
    return data


def _parse(body: bytes) -> tuple[str, list[tuple[str, int, int]]]:
    """Root element name and (loc, line, column) of each <url>/<sitemap> <loc>, with expat.

    Names are compared without their namespace: old sitemaps use Google's 0.84 namespace, and a <loc>
    counts only as the direct child of <url> in <urlset> or of <sitemap> in <sitemapindex>.
    """
    parser = expat.ParserCreate(namespace_separator=" ")
    locs: list[tuple[str, int, int]] = []
    stack: list[str] = []
    text: list[str] = []
    where: list[int] = []  # line and 0-based column where the <loc>'s text starts
    root: list[str] = []

    def in_loc() -> bool:
        return len(stack) == 3 and stack[2] == "loc" and _CONTAINERS.get(stack[0]) == stack[1]

    def start_element(name: str, _attributes: dict[str, str]) -> None:
        stack.append(name.rpartition(" ")[2])
        if len(stack) == 1:
            root.append(stack[0])
        if in_loc():
            text.clear()
            where.clear()

    def character_data(data: str) -> None:
        if in_loc():
            if not where:
                where.extend((parser.CurrentLineNumber, parser.CurrentColumnNumber))
            text.append(data)

    def end_element(_name: str) -> None:
        if in_loc() and where:
            raw = "".join(text)
            loc = raw.strip()
            lead = raw[: len(raw) - len(raw.lstrip())]
            line, column = where
            if "\n" in lead:
                line, column = line + lead.count("\n"), len(lead) - lead.rfind("\n") - 1
            else:
                column += len(lead)
            if loc:
                locs.append((loc, line, column + 1))
        stack.pop()

    def reject(*_args: object) -> None:
        raise _Rejected

    parser.StartElementHandler = start_element
    parser.EndElementHandler = end_element
    parser.CharacterDataHandler = character_data
    parser.StartDoctypeDeclHandler = reject
    parser.EntityDeclHandler = reject
    parser.Parse(body, True)
    return (root[0] if root else ""), locs


def _fallback(body: bytes) -> list[tuple[str, int, int]]:
    """Malformed XML with a sitemap's root element: take every <loc>…</loc> in the text."""
    text = normalize_newlines(decode_bytes(body))
    lines = LineCounter(text)
    locs = []
    for match in _LOC.finditer(text):
        loc = html.unescape(match.group(1))
        if loc:
            locs.append((loc, *lines.position(match.start(1))))
    return locs


def extract_sitemap(body: bytes) -> Extraction:
    """The <loc> of every <url> (attribute "sitemap") or child <sitemap> ("sitemapindex"); gzip allowed."""
    if body.startswith(_GZIP_MAGIC):
        data = gunzip(body)
        if data is None:
            return Extraction(links=(), base="")
        body = data
    if _DTD.search(body):
        return Extraction(links=(), base="")
    try:
        root, locs = _parse(body)
    except _Rejected:
        return Extraction(links=(), base="")
    except expat.ExpatError:
        head = decode_bytes(body[:4096])
        root = "sitemapindex" if _INDEX.search(head) else "urlset" if _URLSET.search(head) else ""
        locs = _fallback(body) if root else []
    if root not in _CONTAINERS:
        return Extraction(links=(), base="")
    attribute = "sitemapindex" if root == "sitemapindex" else "sitemap"
    links = tuple(RawLink(loc, "loc", attribute, line, column) for loc, line, column in locs)
    return Extraction(links=links, base="")


def robots_sitemaps(body: bytes) -> list[str]:
    """The URLs of the `Sitemap:` lines of a robots.txt, in order (field name in any case)."""
    text = normalize_newlines(decode_bytes(body))
    return [match.group(1) for match in _SITEMAP_LINE.finditer(text)]
