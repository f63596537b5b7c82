"""Markdown extraction (markdown-it-py, CommonMark): links, images, definitions, raw HTML, bare URLs, anchors.

Reference links are reported once per definition (`[x]: url`), at the definition, used or not, like
lychee: that is where the URL is written and where it gets fixed. A use (`[text][x]`) adds nothing.

Positions: markdown-it maps tokens to block line ranges only. The inline rules that make links are wrapped
to record the source span of what they consume (token.meta["span"], offsets into the block's inline
content), and _Block maps those offsets back to source lines and columns.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_inline import StateInline, autolink, backtick, html_inline, image, link
from markdown_it.token import Token

from ..types import Extraction, RawLink
from .html import scan_html
from .slug import Slugger
from .text import decode_bytes, find_urls, normalize_newlines

_Rule = Callable[[StateInline, bool], bool]
_CUSTOM_ID = re.compile(r"[ \t]*\{#([^\s{}]+)\}[ \t]*$")
_ELEMENT = "markdown"


class _Parser(MarkdownIt):
    """CommonMark that keeps URLs as written and lets every scheme through (the checker classifies them)."""

    def normalizeLink(self, url: str) -> str:
        return url

    def validateLink(self, url: str) -> bool:
        return True


def _spanned(rule: _Rule, token_type: str) -> _Rule:
    """Wrap an inline rule so the token it makes records the span of source it consumed."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            for index in range(count, len(state.tokens)):  # a pending text token may come first
                token = state.tokens[index]
                if token.type == token_type:
                    token.meta["span"] = (start, state.pos)
                    inline = token.markup != "autolink" and "label" not in token.meta  # not a reference
                    if token_type in ("link_open", "image") and inline:
                        token.meta["destination"] = _destination(state, start + (token_type == "image"))
                    break
        return True

    return wrapped


def _destination(state: StateInline, label_start: int) -> int:
    """Offset of the destination of an inline link or image whose label starts at `label_start`."""
    label_end: int = state.md.helpers.parseLinkLabel(state, label_start, False)
    pos = label_end + 2  # past "]("
    src = state.src
    while pos < len(src) and src[pos] in " \t\n":
        pos += 1
    return pos + 1 if src.startswith("<", pos) else pos


@cache
def _parser() -> MarkdownIt:
    parser = _Parser("commonmark", {"inline_definitions": True, "store_labels": True})
    rules: tuple[tuple[str, _Rule, str], ...] = (
        ("autolink", autolink, "link_open"),
        ("backticks", backtick, "code_inline"),
        ("html_inline", html_inline, "html_inline"),
        ("image", image, "image"),
        ("link", link, "link_open"),
    )
    for name, rule, token_type in rules:
        parser.inline.ruler.at(name, _spanned(rule, token_type))
    return parser


class _Block:
    """Maps offsets into a token's content (source lines less container prefixes) to source positions."""

    def __init__(self, content: str, first_line: int, lines: list[str]) -> None:
        self._content = content
        self._first = first_line  # 0-based index of the source line holding content[0]
        self._lines = lines
        self._starts = [0] + [match.end() for match in re.finditer("\n", content)]
        self._indents: dict[int, int] = {}

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._starts, offset) - 1
        return self._first + index + 1, max(self._indent(index) + offset - self._starts[index] + 1, 1)

    def _indent(self, index: int) -> int:
        """How far content line `index` is shifted in its source line (block quote markers, indentation)."""
        if index not in self._indents:
            end = self._starts[index + 1] - 1 if index + 1 < len(self._starts) else len(self._content)
            content_line = self._content[self._starts[index] : end].rstrip()
            line_number = self._first + index
            source = self._lines[line_number].rstrip() if line_number < len(self._lines) else ""
            if source.endswith(content_line):
                shift = len(source) - len(content_line)
            else:  # tabs became spaces, or a heading's closing #s: align the first non-blank characters
                text = content_line.lstrip()
                found = source.find(text) if text else -1
                shift = found - (len(content_line) - len(text)) if found >= 0 else 0
            self._indents[index] = shift
        return self._indents[index]


def _html_links(html_text: str, block: _Block, start: int, links: list[RawLink], anchors: set[str]) -> None:
    scan = scan_html(html_text)
    anchors.update(scan.anchors)
    for offset, url, element, attribute, nofollow in scan.found:
        line, column = block.position(start + offset)
        links.append(RawLink(url, element, attribute, line, column, nofollow))


def _heading_text(children: list[Token]) -> str:
    """The heading as GitHub renders it to text: markup gone, code and link text kept, images dropped."""
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def _inline(token: Token, block: _Block, include_code: bool, links: list[RawLink], anchors: set[str]) -> None:
    content = token.content
    covered: list[tuple[int, int]] = []

    def add(url: str, kind: str, offset: int) -> None:
        line, column = block.position(offset)
        links.append(RawLink(url, _ELEMENT, kind, line, column))

    for child in token.children or []:
        span: tuple[int, int] | None = child.meta.get("span")
        if span is None:
            continue
        covered.append(span)
        if child.type == "link_open" and child.markup == "autolink":
            add(str(child.attrs["href"]), "autolink", span[0] + 1)
        elif child.type in ("link_open", "image") and "label" not in child.meta:  # with a label: a reference
            url = str(child.attrs["href" if child.type == "link_open" else "src"])
            add(url, "inline" if child.type == "link_open" else "image", child.meta["destination"])
        elif child.type == "code_inline" and include_code:
            for offset, url in find_urls(content, span[0], span[1]):
                add(url, "code", offset)
        elif child.type == "html_inline":
            _html_links(child.content, block, span[0], links, anchors)

    for offset, url in find_urls(content):
        if not any(start <= offset < end for start, end in covered):
            add(unescapeAll(url), "bare", offset)


def _definition(token: Token, lines: list[str], links: list[RawLink]) -> None:
    """A reference definition `[label]: url`, at the position of its URL."""
    assert token.map is not None
    first, last = token.map
    chunk = "\n".join(lines[first:last])
    block = _Block(chunk, first, lines)
    label = f"[{token.meta['label']}]:"
    pos = chunk.find(label)
    if pos < 0:
        pos = len(chunk) - len(chunk.lstrip(" \t>"))
    else:
        pos += len(label)
        while pos < len(chunk) and chunk[pos] in " \t\n>":
            pos += 1
        pos += chunk.startswith("<", pos)
    line, column = block.position(pos)
    links.append(RawLink(str(token.meta["url"]), _ELEMENT, "reference", line, column))


def extract_markdown(body: bytes | str, base: str, *, include_code: bool = False) -> Extraction:
    """Links and anchors of a Markdown document; code spans and blocks only when include_code."""
    text = normalize_newlines(decode_bytes(body))
    tokens = _parser().parse(text)
    lines = text.split("\n")
    links: list[RawLink] = []
    anchors: set[str] = set()
    slugger = Slugger()
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        first = token.map[0]
        if token.type == "inline":
            _inline(token, _Block(token.content, first, lines), include_code, links, anchors)
            if index and tokens[index - 1].type == "heading_open":
                heading = _heading_text(token.children or [])
                custom = _CUSTOM_ID.search(heading)
                if custom:
                    anchors.add(custom.group(1))
                    heading = heading[: custom.start()]
                slug = slugger.slug(heading)
                if slug:
                    anchors.add(slug)
        elif token.type == "definition":
            _definition(token, lines, links)
        elif token.type == "html_block":
            _html_links(token.content, _Block(token.content, first, lines), 0, links, anchors)
        elif token.type in ("fence", "code_block") and include_code:
            block = _Block(token.content, first + (token.type == "fence"), lines)
            for offset, url in find_urls(token.content):
                line, column = block.position(offset)
                links.append(RawLink(url, _ELEMENT, "code", line, column))
    links.sort(key=lambda link: (link.line, link.column))
    return Extraction(links=tuple(links), base=base, anchors=frozenset(anchors))
