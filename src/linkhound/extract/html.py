"""HTML extraction: links of link-bearing attributes, CSS url()s and meta refresh, anchors, <base href>.

selectolax (Lexbor) decides what the links are, exactly as a browser parses them. It keeps no source
positions, so _Positions finds each attribute value in the source text afterwards (see its docstring).
A page whose tree would cost too much to build (nesting.py says when) is read tag by tag instead
(html_tokens.py), and its extraction carries a warning saying why.

Not extracted, on purpose: <form action> (often a POST-only endpoint that answers GET with 405 or an error
page: noise, not a broken link; a button's or input's formaction is read, as README.md lists), <link
rel=preconnect|dns-prefetch> (a bare origin, often 404 at its root), <base href> itself (it changes the base,
it is not a target), the content of <template> (inert until a script clones it; Lexbor leaves it out of the
document too).
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import re
from functools import cache
from operator import itemgetter
from typing import NamedTuple

import ada_url
from selectolax.lexbor import LexborHTMLParser

from ..types import Extraction, RawLink
from .css import css_urls
from .html_links import (
    LINK_ATTRIBUTES,
    NOFOLLOW_TAGS,
    PARTS,
    WHITESPACE,
    Found,
    HtmlScan,
    clean_url,
    decode_attribute,
    link_skipped,
    refresh_url,
    robots_nofollow,
    srcset_urls,
    value_urls,
)
from .html_tokens import TAG_REST, scan_tags
from .nesting import nesting_hazard
from .text import decode_bytes, normalize_newlines

__all__ = ["HtmlScan", "clean_url", "decode_html", "extract_html", "refresh_url", "scan_html", "srcset_urls"]

_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.IGNORECASE)
_VALUE = r"[\t\n\f ]*=[\t\n\f ]*(?:\"([^\"]*)\"?|'([^']*)'?|([^\t\n\f\r >]*))"
_SOURCE_ATTRIBUTES = (
    *{attribute for attributes in LINK_ATTRIBUTES.values() for attribute in attributes},
    "content",  # meta refresh
    "style",
    "xlink:href",  # SVG's older spelling of href
)
_ATTRIBUTE_PATTERNS = {
    name: (re.compile(name + _VALUE), re.compile(name + _VALUE, re.IGNORECASE)) for name in _SOURCE_ATTRIBUTES
}
_BEFORE_NAME = frozenset(" \t\n\f\"'/")
_SVG_LINKS = "svg image, svg use, svg feImage, svg a"
# Where attribute-like text is not markup: comments and the bodies of raw-text elements. Tag names in
# lower or upper case only (a literal trie is 4x faster than IGNORECASE here); it only breaks ties.
# <template> is markup, but its content is not in the document the parser returns.
_RAW_TEXT = frozenset(
    {"script", "style", "textarea", "title", "xmp", "noembed", "noframes", "iframe", "plaintext", "template"}
)
_NOT_MARKUP_START = re.compile(
    r"<(?:!--|(?P<raw>s(?:cript|tyle)|t(?:extarea|itle|emplate)|xmp|no(?:embed|frames)|iframe|plaintext"
    r"|S(?:CRIPT|TYLE)|T(?:EXTAREA|ITLE|EMPLATE)|XMP|NO(?:EMBED|FRAMES)|IFRAME|PLAINTEXT)(?=[\t\n\f />]))"
)
_TAG_REST = re.compile(r"(?:[^>\"']|\"[^\"]*\"|'[^']*')*+>?")
_END_TAGS = {name: re.compile(rf"</{name}(?=[\t\n\f />])", re.IGNORECASE) for name in _RAW_TEXT}
_STYLE_START = re.compile(r"<style(?=[\t\n\f />])(?:[^>\"']|\"[^\"]*\"|'[^']*')*+>", re.IGNORECASE)
# A run of NULs, or a tag (whose NULs the tokenizer turns into U+FFFD): see _parser_input.
_NUL_RUN_OR_TAG = re.compile(r"(?P<nuls>\0+)|</?[A-Za-z][^\t\n\f\r />]*" + TAG_REST.pattern)
_FEW_NULS = 4096  # below this, Lexbor is given them as they are
_MAX_NULS_IN_TAGS = 1 << 16  # past this, the page is read without a tree


# A link-bearing attribute of the DOM before its position is known:
# (element, value as the parser decoded it, how URLs sit in it: url/srcset/refresh/css, nofollow).
_Use = tuple[str, str, str, bool]


class _Walk(NamedTuple):
    """What one walk over the DOM collects."""

    uses: dict[str, list[_Use]]  # by attribute name, in document order
    styles: list[str]  # bodies of <style> elements
    base_href: str | None
    nofollow: bool


def decode_html(body: bytes) -> str:
    """Decode an HTML document: BOM, then <meta charset> in the first 1 KB, then UTF-8."""
    for bom in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        if body.startswith(bom):
            return decode_bytes(body)
    match = _META_CHARSET.search(body, 0, 1024)
    encoding = "utf-8"
    if match:
        with contextlib.suppress(LookupError):
            encoding = codecs.lookup(match.group(1).decode("ascii")).name
        if encoding.startswith("utf-16"):  # a meta can't be read in UTF-16: the spec says it means UTF-8
            encoding = "utf-8"
        elif encoding in ("latin-1", "iso8859-1", "ascii"):  # what browsers really use for these labels
            encoding = "cp1252"
    return decode_bytes(body, encoding)


def _align(found: list[str], values: list[str]) -> list[int] | None:
    """Index into `found` of each of `values`, skipping extras; None if an extra could be one of them.

    Source text has values the DOM lacks (a preconnect link, markup in a script string); skipping them is
    safe unless a skipped value is also a DOM value, which could then be the occurrence that was meant.
    """
    indexes = []
    skipped: set[str] = set()
    position, end = 0, len(found)
    for value in values:
        while position < end and found[position] != value:
            skipped.add(found[position])
            position += 1
        if position == end:
            return None
        indexes.append(position)
        position += 1
    skipped.update(found[position:])
    return None if skipped and not skipped.isdisjoint(values) else indexes


_NOT_FOUND = (-1, "")  # no occurrence in the source: reported next to the link before it
_CLONE = (-2, "")  # a copy the parser made of a misnested <a>: not a link in the source


class _Positions:
    """Finds the source offset of each attribute value the parser reported.

    Per attribute name, one pass of a literal-prefixed regex collects every `name=value` in the source. In
    the common case the decoded values equal the DOM's values in order and the offsets pair up one to one.
    Otherwise (upper-case names, look-alikes in comments or scripts, values the parser dropped or cloned),
    the n-th use of a (name, value) in document order takes its n-th occurrence, look-alikes in comments,
    scripts and text filtered out when counts differ; an `<a>` left without an occurrence is a parser clone.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._not_markup: tuple[list[int], list[int]] | None = None

    def place(self, name: str, values: list[str], elements: list[str]) -> list[tuple[int, str]]:
        """(offset, raw value) in the source for each of `values` of attribute `name`, in the same order."""
        text = self._text
        matches = [
            match
            for match in _ATTRIBUTE_PATTERNS[name][0].finditer(text)
            if text[match.start() - 1] in _BEFORE_NAME  # not part of a longer name: data-src, xhref
        ]
        groups = [match.lastindex or 3 for match in matches]  # the group of the value: "", '' or bare
        raws = [match.group(group) for match, group in zip(matches, groups, strict=True)]
        decoded = raws if raws == values else [decode_attribute(raw) for raw in raws]
        indexes = range(len(raws)) if decoded == values else _align(decoded, values)
        if indexes is None:
            return self._place_by_value(name, values, elements)
        return [(matches[index].start(groups[index]), raws[index]) for index in indexes]

    def _place_by_value(self, name: str, values: list[str], elements: list[str]) -> list[tuple[int, str]]:
        by_value = self._by_value(_ATTRIBUTE_PATTERNS[name][0])
        totals: dict[str, int] = {}
        for value in values:
            totals[value] = totals.get(value, 0) + 1
        if any(len(by_value.get(value, ())) < total for value, total in totals.items()):
            by_value = self._by_value(_ATTRIBUTE_PATTERNS[name][1])  # upper-case attribute names, rare
        places = []
        taken: dict[str, int] = {}
        for value, element in zip(values, elements, strict=True):
            index = taken[value] = taken.get(value, -1) + 1
            found = by_value.get(value, [])
            if len(found) != totals[value]:  # drop look-alikes in comments, scripts, text and other attributes
                found = by_value[value] = [place for place in found if self._an_attribute(place)] or found
                totals[value] = len(found)
            if index < len(found):
                places.append(found[index])
            else:
                places.append(_CLONE if element == "a" and found else _NOT_FOUND)
        return places

    def _an_attribute(self, place: tuple[int, str]) -> bool:
        """Whether the value at place is an attribute's: in a tag, and its name not inside another attribute's
        quoted value (<p title='href="x"'>)."""
        offset = place[0]
        if not self._in_markup(offset):
            return False
        text = self._text
        opening = offset - 1 if text[offset - 1 : offset] in ("\"", "'") else offset  # its own quote, if any
        quote = ""
        for ch in text[text.rfind("<", 0, offset) : opening]:
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'":
                quote = ch
        return not quote

    def _by_value(self, pattern: re.Pattern[str]) -> dict[str, list[tuple[int, str]]]:
        text = self._text
        by_value: dict[str, list[tuple[int, str]]] = {}
        for match in pattern.finditer(text):
            if text[match.start() - 1] not in _BEFORE_NAME:
                continue
            group = match.lastindex or 3
            raw = match.group(group)
            by_value.setdefault(decode_attribute(raw), []).append((match.start(group), raw))
        return by_value

    def _in_markup(self, offset: int) -> bool:
        text = self._text
        if text.rfind("<", 0, offset) < text.rfind(">", 0, offset):
            return False
        if self._not_markup is None:
            self._not_markup = self._find_not_markup()
        starts, ends = self._not_markup
        index = bisect.bisect_right(starts, offset) - 1
        return index < 0 or offset >= ends[index]

    def _find_not_markup(self) -> tuple[list[int], list[int]]:
        text = self._text
        starts, ends = [], []
        pos = 0
        while match := _NOT_MARKUP_START.search(text, pos):
            name = match.group("raw")
            if name is None:
                end = text.find("-->", match.end())
                start, pos = match.start(), len(text) if end < 0 else end + 3
            else:
                tag = _TAG_REST.match(text, match.end())
                start = tag.end() if tag else match.end()
                close = _END_TAGS[name.lower()].search(text, start)
                pos = close.start() if close else len(text)
            starts.append(start)
            ends.append(pos)
            pos = max(pos, match.end())
        return starts, ends

    def style_bodies(self) -> list[int]:
        """Offsets where the bodies of <style> elements start, in source order."""
        return [match.end() for match in _STYLE_START.finditer(self._text)]


@cache
def _tag_names() -> dict[int, str]:
    """Lexbor's numeric id of each tag we read, asked of Lexbor itself rather than hard-coded."""
    wanted = {*LINK_ATTRIBUTES, "base", "meta", "style", "svg"}
    inline = "".join(f"<{tag}></{tag}>" for tag in sorted(wanted - {"td", "th", "frame", "body"}))
    probes = (f"<body>{inline}<table><tr><td></td><th></th></tr></table>", "<frameset><frame></frameset>")
    names: dict[int, str] = {}
    for probe in probes:
        root = LexborHTMLParser(probe).root
        for node in root.traverse() if root else ():
            if node.tag in wanted:
                names[node.tag_id] = node.tag
    return names


def _walk(parser: LexborHTMLParser, anchors: set[str]) -> _Walk:
    """The DOM's link-bearing attributes, <style> bodies, <base href> and robots nofollow."""
    uses: dict[str, list[_Use]] = {}
    hrefs = uses["href"] = []  # most links: the short way
    styles: list[str] = []
    base_href: str | None = None
    nofollow = svg = False
    tags = _tag_names()
    # One walk comparing Lexbor's tag ids beats a 25-tag selector list (0.22 vs 0.59 ms on a 100 KB page).
    for node in parser.root.traverse() if parser.root else ():
        tag = tags.get(node.tag_id)
        if tag is None:
            continue
        attributes = node.attributes
        if tag == "a":
            if attributes.get("name"):
                anchors.add(attributes["name"] or "")
            href = attributes.get("href")
            if href:
                rel = attributes.get("rel")
                hrefs.append((tag, href, "url", rel is not None and "nofollow" in rel.lower().split()))
            continue
        link_attributes = LINK_ATTRIBUTES.get(tag)
        if link_attributes is None:
            if tag == "meta":
                content = attributes.get("content") or ""
                if (attributes.get("http-equiv") or "").strip().lower() == "refresh":
                    uses.setdefault("content", []).append((tag, content, "refresh", False))
                elif (attributes.get("name") or "").strip().lower() in ("robots", "linkhound"):
                    nofollow = robots_nofollow(content) or nofollow
            elif tag == "style":
                styles.append(node.text(deep=True))
            elif tag == "base" and base_href is None:
                base_href = attributes.get("href")
            elif tag == "svg":
                svg = True
            continue
        if tag == "input" and (attributes.get("type") or "").strip().lower() != "image":
            link_attributes = ("formaction",)  # only an image input has a src worth checking
        rel_tokens = (attributes.get("rel") or "").lower().split() if tag in NOFOLLOW_TAGS else []
        if link_skipped(tag, rel_tokens, "disabled" in attributes):
            continue
        for attribute in link_attributes:
            value = attributes.get(attribute)
            if value:
                kind = "srcset" if attribute == "srcset" else "url"
                uses.setdefault(attribute, []).append((tag, value, kind, "nofollow" in rel_tokens))
    if svg:  # inline SVG: <image>, <use> (a sprite's symbol), <feImage> and <a xlink:href> load what they name
        for node in parser.css(_SVG_LINKS):
            attributes, tag = node.attributes, node.tag or ""
            if tag == "a" and attributes.get("href"):
                continue  # (read in the walk)
            for attribute in ("href", "xlink:href"):
                value = attributes.get(attribute)
                if value:  # (after the walk's: the source is then matched value by value, see _Positions)
                    uses.setdefault(attribute, []).append((tag, value, "url", False))
                    break
    for node in parser.css("[style]"):
        value = node.attributes.get("style") or ""
        if "url(" in value.lower():
            uses.setdefault("style", []).append((node.tag or "", value, "css", False))
    return _Walk(uses, styles, base_href, nofollow)


def _parser_input(text: str) -> str | bytes | None:
    """`text` as Lexbor should get it; None when it is better read without a tree.

    Lexbor records a parse error for every NUL (about 17 bytes each: a 20 MB page of NULs took 360 MB).
    Between tags, where the tree builder drops them, each run of NULs becomes one space; inside tags
    they become U+FFFD, as the tokenizer makes them. Positions are still found in `text` itself.
    """
    if "\0" not in text:
        return text
    if text.count("\0") <= _FEW_NULS:
        return text.encode("utf-8", "ignore").replace(b"\0", "\ufffd".encode())
    in_tags = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal in_tags
        if match.start("nuls") >= 0:
            return " "  # without taking the run out of the text: it may be as long as the page
        found = match.group()
        if "\0" in found:
            in_tags += found.count("\0")
            return found.replace("\0", "\ufffd")
        return found

    replaced = _NUL_RUN_OR_TAG.sub(replace, text)
    return None if in_tags > _MAX_NULS_IN_TAGS else replaced


def scan_html(text: str) -> HtmlScan:
    """Links (by offset into `text`, in source order), anchors, <base href> and robots nofollow.

    A text whose tree would cost too much (deep nesting, a flood of tags or of NULs in tags) is read tag by
    tag instead, and the scan says why in its warning.
    """
    hazard = nesting_hazard(text)
    source = _parser_input(text) if not hazard else None
    if source is None:
        return scan_tags(text, f"not fully parsed: {hazard or 'NUL characters in tags'}")
    parser = LexborHTMLParser(source)
    del source
    anchors: set[str] = set()
    walk = _walk(parser, anchors)
    for node in parser.css("[id]"):
        if node.id:
            anchors.add(node.id)

    positions = _Positions(text)
    found: list[Found] = []
    lost: list[tuple[int, str, str, str, str, bool]] = []  # with the offset of the use placed before
    for name, uses in walk.uses.items():
        previous = 0
        places = positions.place(name, [use[1] for use in uses], [use[0] for use in uses])
        for (element, value, kind, nofollow), place in zip(uses, places, strict=True):
            if place is _NOT_FOUND:
                lost.append((previous, element, name, value, kind, nofollow))
            elif place is not _CLONE:
                offset, raw = place
                previous = offset
                if kind == "url" and value == raw:  # most links: the short way
                    url = clean_url(value)
                    if url:
                        lead = len(value) - len(value.lstrip(WHITESPACE))
                        found.append((offset + lead, url, element, name, nofollow))
                else:
                    for at, url in value_urls(kind, value, raw, offset):
                        found.append((at, url, element, name, nofollow))
    for guess, element, name, value, kind, nofollow in lost:
        found.extend((guess, url, element, name, nofollow) for _, url in PARTS[kind](value))

    if walk.styles:
        bodies = positions.style_bodies()
        for index, css in enumerate(walk.styles):
            start = bodies[index] if index < len(bodies) else 0
            found.extend((start + offset, url, "style", "css", False) for offset, url in css_urls(css))

    found.sort(key=itemgetter(0))
    return HtmlScan(found, anchors, walk.base_href, walk.nofollow)


def resolve_base(base: str, base_href: str | None) -> str:
    """The base URL after <base href>; an href that doesn't make a valid URL is ignored."""
    if base_href is None or not clean_url(base_href):
        return base
    href = clean_url(base_href)
    try:
        return ada_url.join_url(base, href)
    except ValueError:
        pass
    try:
        return ada_url.normalize_url(href)  # absolute, and the given base was not a URL
    except ValueError:
        return base


def extract_html(body: bytes | str, base: str) -> Extraction:
    """Links, anchors and base URL of an HTML document; links in document order, unresolved."""
    text = normalize_newlines(decode_html(body) if isinstance(body, bytes) else body)
    scan = scan_html(text)
    links = []
    # Line and column by counting newlines between consecutive (ascending) offsets: O(n) per document.
    line, line_start, previous = 1, 0, 0
    for offset, url, element, attribute, nofollow in scan.found:
        newlines = text.count("\n", previous, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", previous, offset) + 1
        previous = offset
        links.append(RawLink(url, element, attribute, line, offset - line_start + 1, nofollow))
    return Extraction(
        links=tuple(links),
        base=resolve_base(base, scan.base_href),
        anchors=frozenset(scan.anchors),
        nofollow=scan.nofollow,
        warning=scan.warning,
        base_href=clean_url(scan.base_href) or None if scan.base_href is not None else None,
    )
