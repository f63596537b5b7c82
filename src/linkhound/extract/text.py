"""Plain-text extraction: URLs with a scheme; plus decoding and line/column helpers all extractors share."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator

from ..types import Extraction, RawLink

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# A scheme we check, then anything up to whitespace or a character that can't be in a URL written in prose.
_URL = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:https?|ftps?|file)://|mailto:)[^\s<>\"`\x00-\x1f\x7f]+", re.IGNORECASE
)
_TRAILING = ".,:;!?*_~'\""  # GFM's autolink rule, plus quotes: punctuation that ends a sentence, not a URL
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_ENDS_SENTENCE = frozenset(_TRAILING + "".join(_CLOSERS))  # the last characters trim_url may drop


def decode_bytes(body: bytes | str, default: str = "utf-8") -> str:
    """Decode a document: a BOM wins, then `default`; undecodable bytes become U+FFFD, never an error."""
    if isinstance(body, str):
        return body
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    return body.decode(default, errors="replace")


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


def find_urls(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str]]:
    """Yield (offset, url) for every URL with a scheme in text[start:end]."""
    for match in _URL.finditer(text, start, len(text) if end is None else end):
        url = match.group()
        if url[-1] in _ENDS_SENTENCE:
            url = trim_url(url)
        scheme_end = url.find(":") + 1
        if url[scheme_end:].strip("/"):
            yield match.start(), url


def links_at(text: str, found: Iterable[tuple[int, str]], element: str, attribute: str) -> Iterator[RawLink]:
    """RawLinks for (offset, url) pairs of `text`, offsets ascending, made as they are asked for."""
    lines = LineCounter(text)
    for offset, url in found:
        line, column = lines.position(offset)
        yield RawLink(url, element, attribute, line, column)


def text_links(body: bytes | str) -> Iterator[RawLink]:
    """extract_text's links one at a time, so a caller can act on the first of a long URL list at once."""
    text = normalize_newlines(decode_bytes(body))
    return links_at(text, find_urls(text), "text", "url")


def extract_text(body: bytes | str, base: str) -> Extraction:
    """Every http(s), ftp, file and mailto URL in a plain-text document, with its position."""
    return Extraction(links=tuple(text_links(body)), base=base)
