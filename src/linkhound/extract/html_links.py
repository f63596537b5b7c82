"""What counts as a link in HTML: the attributes that hold URLs, how URLs sit in their values, and a scan's result.

Shared by the two HTML scans: the tree one (html.py, Lexbor) and the tree-less one (html_tokens.py).
"""

from __future__ import annotations

import html
import re
from html.entities import html5 as _ENTITIES
from typing import NamedTuple

from .css import css_urls

# tag -> its attributes that hold URLs; srcset holds several, input[src] only for type=image.
LINK_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "a": ("href",),
    "area": ("href",),
    "audio": ("src",),
    "blockquote": ("cite",),
    "body": ("background",),
    "button": ("formaction",),  # where the form goes when this button submits it (issue 2 asks for it)
    "del": ("cite",),
    "embed": ("src",),
    "frame": ("src", "longdesc"),
    "iframe": ("src", "longdesc"),
    "img": ("src", "srcset", "longdesc"),
    "input": ("src", "formaction"),
    "ins": ("cite",),
    "link": ("href",),
    "object": ("data",),
    "q": ("cite",),
    "script": ("src",),
    "source": ("src", "srcset"),
    "table": ("background",),
    "td": ("background",),
    "th": ("background",),
    "track": ("src",),
    "video": ("src", "poster"),
}
NOFOLLOW_TAGS = frozenset({"a", "area", "link"})
_SKIPPED_RELS = frozenset({"preconnect", "dns-prefetch"})
WHITESPACE = " \t\n\f\r"
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_REFRESH = re.compile(
    r"[\t\n\f\r ]*(?:[0-9]+[0-9.]*|\.[0-9.]*)(?:[\t\n\f\r ;,]+(?:[Uu][Rr][Ll][\t\n\f\r ]*=[\t\n\f\r ]*)?|$)"
)
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z0-9]+;?)")

# One link found in an HTML text, placed by character offset: (offset, url, element, attribute, nofollow).
# Plain tuples: thousands are made per page, and a NamedTuple costs four times as much to build.
Found = tuple[int, str, str, str, bool]


class HtmlScan(NamedTuple):
    """Everything the HTML extractor learned from one text."""

    found: list[Found]
    anchors: set[str]
    base_href: str | None
    nofollow: bool
    warning: str = ""  # why the text was not fully parsed ("" when it was)


def clean_url(value: str) -> str:
    """A URL attribute as browsers read it: outer whitespace stripped, tabs and newlines inside removed."""
    value = value.strip(WHITESPACE)
    return _TAB_OR_NEWLINE.sub("", value) if "\t" in value or "\n" in value or "\r" in value else value


def srcset_urls(srcset: str) -> list[tuple[int, str]]:
    """(offset, url) of each image candidate, by the HTML spec's algorithm: "a.jpg 1x, b,c.jpg 2x"."""
    found: list[tuple[int, str]] = []
    pos, end = 0, len(srcset)
    while True:
        while pos < end and (srcset[pos] in WHITESPACE or srcset[pos] == ","):
            pos += 1
        if pos >= end:
            return found
        start = pos
        while pos < end and srcset[pos] not in WHITESPACE:
            pos += 1
        url = srcset[start:pos]
        if url.endswith(","):
            url = url.rstrip(",")
        else:  # descriptors run to a comma outside parentheses
            in_parens = False
            while pos < end:
                char = srcset[pos]
                pos += 1
                if char == "(":
                    in_parens = True
                elif char == ")":
                    in_parens = False
                elif char == "," and not in_parens:
                    break
        if url:
            found.append((start, url))


def refresh_url(content: str) -> list[tuple[int, str]]:
    """(offset, url) of the URL of a meta refresh content ("5; url='x'"), empty when it has none."""
    match = _REFRESH.match(content)
    if not match or match.end() >= len(content):
        return []
    start = match.end()
    url = content[start:]
    if url[0] in "'\"":
        start += 1
        url = url[1:].split(content[start - 1], 1)[0]
    url = clean_url(url)
    return [(start, url)] if url else []


def _url_parts(value: str) -> list[tuple[int, str]]:
    url = clean_url(value)
    return [(len(value) - len(value.lstrip(WHITESPACE)), url)] if url else []


PARTS = {"url": _url_parts, "srcset": srcset_urls, "refresh": refresh_url, "css": css_urls}


def decode_attribute(raw: str) -> str:
    """An attribute value as the HTML tokenizer reads it: character references decoded, NUL as U+FFFD."""
    if "\0" in raw:
        raw = raw.replace("\0", "\ufffd")
    if "&" not in raw:
        return raw
    only_amp = raw.replace("&amp;", "&")  # by far the most common reference in URLs
    if "&" not in only_amp:
        return only_amp

    def replace(match: re.Match[str]) -> str:
        ref = match.group(1)
        if ref[0] == "#":
            return html.unescape(match.group())
        # A legacy reference without ";" before "=" stays as written (the spec's "historical reasons").
        if ref in _ENTITIES and (ref[-1] == ";" or not raw.startswith("=", match.end())):
            return _ENTITIES[ref]
        return match.group()

    return _CHARREF.sub(replace, raw)


def value_urls(kind: str, value: str, raw: str, offset: int) -> list[tuple[int, str]]:
    """(offset, url) of the URLs in an attribute value decoded from `raw`, which starts at `offset`."""
    if kind == "url":
        url = clean_url(value)
        return [(offset + len(raw) - len(raw.lstrip(WHITESPACE)), url)] if url else []
    parts = PARTS[kind](value)
    raw_parts = parts if raw == value else PARTS[kind](raw)
    if len(raw_parts) != len(parts):  # entities hid the structure: place them all at the value
        return [(offset, url) for _, url in parts]
    return [(offset + raw_offset, url) for (raw_offset, _), (_, url) in zip(raw_parts, parts, strict=True)]


def link_skipped(tag: str, rel_tokens: list[str], disabled: bool) -> bool:
    """A <link> browsers don't fetch: a bare-origin hint (preconnect, dns-prefetch), a disabled stylesheet."""
    if tag != "link":
        return False
    return not _SKIPPED_RELS.isdisjoint(rel_tokens) or (disabled and "stylesheet" in rel_tokens)


def robots_nofollow(content: str) -> bool:
    """Whether a <meta name=robots> content says not to follow the page's links."""
    directives = re.split(r"[\s,]+", content.lower())
    return "nofollow" in directives or "none" in directives
