"""Plain-text extraction: URLs with a scheme; plus the decoding, URL finding and positions all extractors share."""

from __future__ import annotations

import codecs
import heapq
import re
from collections.abc import Iterable, Iterator

from ..types import Extraction, RawLink

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Markers that may start a URL: "scheme://" (any plausible scheme: the checker reports the ones it can't check)
# and "mailto:"; in Markdown also GFM's "www." and e-mail addresses. A marker is found with str.find, and only
# there is a regex tried: a pattern that may match at any position costs 3 to 5 times as much on prose.
_SCHEME_WORD = r"[A-Za-z][A-Za-z0-9.-]{1,31}"
_NOT_IN_URL = r"\s<>\"`\x00-\x1f\x7f"  # whitespace, and the characters prose puts around URLs
_SCHEME = re.compile(rf"(?<![^\W_]){_SCHEME_WORD}\Z")  # a word of its own, ending at the colon
_MAILTO = re.compile(r"(?<![^\W_])mailto\Z", re.IGNORECASE)
_REST = re.compile(rf"[^{_NOT_IN_URL}]+")  # up to whitespace or a character prose puts around URLs
# (possessive: nothing follows to backtrack for, and a greedy group keeps a frame per label it repeats, 150 MB
# for a text of "www." a million times)
_WWW_DOMAIN = re.compile(r"www\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*+)")
_LOCAL_PART = re.compile(r"(?<![A-Za-z0-9.+_-])[A-Za-z0-9.+_-]+\Z")
_EMAIL_DOMAIN = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)++")
_DOMAIN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_LOCAL_CHARS = _DOMAIN_CHARS | frozenset(".+")
_WWW_AFTER = frozenset(" \t\n*_~(")  # GFM: "www." starts a link at a line start, after a space or these
_TRAILING = ".,:;!?*_~'\""  # GFM's autolink rule, plus quotes: punctuation that ends a sentence, not a URL
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_ENDS_SENTENCE = frozenset(_TRAILING + "".join(_CLOSERS))  # the last characters trim_url may drop
# A line that is a URL and nothing else, as in a URL list: the same link find_urls finds there (a scheme of its
# own at the line's start, then _REST's characters to the line's end, the last none trim_url drops), told by one
# match instead of a marker's look back, look ahead and trim.
_URL_LINE = re.compile(
    rf"{_SCHEME_WORD}://[^{_NOT_IN_URL}]*[^{_NOT_IN_URL}{re.escape(''.join(sorted(_ENDS_SENTENCE)))}]"
)
_LIST_LOOK = 64  # lines read a line at a time before a text may be judged no URL list (a quarter not URLs, or more)


def decode_bytes(body: bytes | str, default: str = "utf-8") -> str:
    """Decode a document: a BOM wins, then `default`; undecodable bytes become U+FFFD, never an error."""
    if isinstance(body, str):
        return body
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    return body.decode(default, errors="replace")


def in_utf8(body: bytes, charset: str) -> bytes:
    """An HTML answer whose Content-Type names charset, made UTF-8 with a BOM: in browsers the header wins over a
    <meta charset> (and a BOM over both), and so it does when the document is read (decode_html). A body in
    UTF-8 already, or in a charset Python doesn't know, is left to the document's own word."""
    if any(body.startswith(bom) for bom, _ in _BOMS):
        return body
    try:
        encoding = codecs.lookup(charset).name
    except LookupError:
        return body
    if encoding == "utf-8":
        return body
    if encoding in ("latin-1", "iso8859-1", "ascii"):  # what browsers really use for these labels
        encoding = "cp1252"
    elif encoding == "utf-16":  # no BOM: little-endian, as the Encoding Standard reads the label
        encoding = "utf-16-le"
    return codecs.BOM_UTF8 + body.decode(encoding, errors="replace").encode("utf-8")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR to LF, as HTML and Markdown parsers do, so line numbers agree with editors."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


class LineCounter:
    """Maps character offsets to 1-based (line, column); O(n) over a document when offsets ascend."""

    __slots__ = ("_text", "_count", "_rfind", "_offset", "_line", "_line_start")

    def __init__(self, text: str) -> None:
        self._text = text
        self._count, self._rfind = text.count, text.rfind
        self._offset = 0
        self._line = 1
        self._line_start = 0

    def position(self, offset: int) -> tuple[int, int]:
        if offset < self._offset or offset > len(self._text):
            offset = max(0, min(offset, len(self._text)))
            if offset < self._offset:  # went backwards: count again from the start (rare)
                self._offset, self._line, self._line_start = 0, 1, 0
        newlines = self._count("\n", self._offset, offset)
        if newlines:
            self._line += newlines
            self._line_start = self._rfind("\n", self._offset, offset) + 1
        self._offset = offset
        return self._line, offset - self._line_start + 1


def trim_url(url: str) -> str:
    """Drop trailing punctuation that belongs to the sentence, keeping balanced closing brackets."""
    while url:
        last = url[-1]
        unbalanced = last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])
        if last in _TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def _markers(text: str, start: int, end: int, gfm: bool) -> Iterator[int]:
    """Offsets of ":" (and, with gfm, of "@" and "www.") in text[start:end], ascending, found as they are asked
    for: the first URL of a long list is taken without a pass over the rest, and a text of millions of markers
    holds none of them in a list."""
    if not gfm:
        yield from _each(text, ":", start, end)
        return
    yield from heapq.merge(*(_each(text, marker, start, end) for marker in (":", "@", "www.")))


def _each(text: str, marker: str, start: int, end: int) -> Iterator[int]:
    at = text.find(marker, start, end)
    while at >= 0:
        yield at
        at = text.find(marker, at + 1, end)


def _url_at(text: str, at: int, start: int, end: int, gfm: bool) -> tuple[int, int, str] | None:
    """The URL whose marker is at `at` (see _markers): (offset, end offset, url), or None: not a URL there.

    `start` bounds the look back for a scheme or an address's local part.
    """
    char = text[at]
    if char == ":":
        if text.startswith("//", at + 1):
            scheme = _SCHEME.search(text, max(start, at - 32), at)
        elif text[max(start, at - 6) : at].lower() == "mailto":  # (a colon in prose: told without a regex)
            scheme = _MAILTO.search(text, at - 6, at)
        else:
            return None
        if scheme is None:
            return None
        rest = _REST.match(text, at + 1, end)
        if rest is None:
            return None
        url = text[scheme.start() : rest.end()]
        if url[-1] in _ENDS_SENTENCE:
            url = trim_url(url)
        if not url[len(scheme.group()) + 1 :].strip("/"):
            return None
        return scheme.start(), scheme.start() + len(url), url
    if not gfm:
        return None
    if char == "@":
        if at == start or text[at - 1] not in _LOCAL_CHARS or text[at + 1 : at + 2] not in _DOMAIN_CHARS:
            return None  # (most "@" in prose and code: no address around it, told without a regex)
        domain = _EMAIL_DOMAIN.match(text, at + 1, end)
        if domain is None:
            return None
        local = _LOCAL_PART.search(text, max(start, at - 64), at)
        if local is None:
            return None
        address = text[local.start() : domain.end()]
        top = address.rpartition(".")[2]
        # GFM: no link when it ends in "-" or "_"; a top-level label without a letter is a version (pkg@1.2.3)
        if address[-1] in "-_" or top.isdigit():
            return None
        return local.start(), domain.end(), "mailto:" + address
    if at > start and text[at - 1] not in _WWW_AFTER:
        return None
    domain = _WWW_DOMAIN.match(text, at, end)
    if domain is None:
        return None
    labels = domain.group(1)
    if "_" in labels[labels.rfind(".", 0, labels.rfind(".")) + 1 :]:  # (in the last two labels)
        return None
    rest = _REST.match(text, at, end)
    assert rest is not None
    url = text[at : rest.end()]
    if url[-1] in _ENDS_SENTENCE:
        url = trim_url(url)
    return (at, at + len(url), "http://" + url) if len(url) > len("www.") else None


def find_urls(text: str, start: int = 0, end: int | None = None, *, gfm: bool = False) -> Iterator[tuple[int, str]]:
    """Yield (offset, url) for every URL with a scheme (scheme:// or mailto:) in text[start:end].

    With gfm, also what GitHub autolinks in Markdown: "www.x.y" (as http://www.x.y) and e-mail addresses
    (as mailto:).
    """
    end = len(text) if end is None else end
    covered = start  # a marker inside a URL found already ("://" in a query, "@" in user info) starts nothing
    for at in _markers(text, start, end, gfm):
        if at < covered:
            continue
        found = _url_at(text, at, covered, end, gfm)
        if found is not None:
            offset, covered, url = found
            yield offset, url


def links_at(text: str, found: Iterable[tuple[int, str]], element: str, attribute: str) -> Iterator[RawLink]:
    """RawLinks for (offset, url) pairs of `text`, offsets ascending, made as they are asked for."""
    lines = LineCounter(text)
    for offset, url in found:
        line, column = lines.position(offset)
        yield RawLink(url, element, attribute, line, column)


def text_links(body: bytes | str) -> Iterator[RawLink]:
    """extract_text's links one at a time, so a caller can act on the first of a long URL list at once."""
    return _by_line(normalize_newlines(decode_bytes(body)))


def _url_line(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is one URL, all of it, as find_urls would find it there."""
    if _URL_LINE.fullmatch(text, start, end) is None:
        return False
    # "scheme://" and slashes alone is no URL to find_urls; a last character other than "/" is something else
    return text[end - 1] != "/" or bool(text[text.index(":", start) + 1 : end].strip("/"))


def _by_line(text: str) -> Iterator[RawLink]:
    """text_links of a text, a line at a time as long as it looks like a URL list: each line that is a URL taken
    whole (in about a third of the time find_urls' way takes), each other line looked at as find_urls does. Past
    _LIST_LOOK lines, a text of which a quarter or more are other lines (prose) goes find_urls' way from there."""
    size = len(text)
    line, start, others = 1, 0, 0
    new = tuple.__new__  # RawLink(...) without its Python-level __new__, once per line
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            end = size
        if _url_line(text, start, end):
            yield new(RawLink, (text[start:end], "text", "url", line, 1, False))
        else:
            if line > _LIST_LOOK and others * 4 > line:  # (not a URL list after all)
                yield from links_at(text, find_urls(text, start), "text", "url")
                return
            others += 1
            for offset, url in find_urls(text, start, end):
                yield RawLink(url, "text", "url", line, offset - start + 1)
        line += 1
        start = end + 1


def extract_text(body: bytes | str, base: str) -> Extraction:
    """Every URL with a scheme (scheme:// or mailto:) in a plain-text document, with its position."""
    return Extraction(links=tuple(text_links(body)), base=base)
