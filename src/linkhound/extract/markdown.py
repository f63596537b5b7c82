"""Markdown extraction (pulldown-cmark, through pyromark): links, used definitions, raw HTML, bare URLs, anchors.

The document is read as GitHub reads it (CommonMark with tables, footnotes, strikethrough and task lists),
plus heading attributes (`## Title { #id .class }`, as MkDocs' attr_list writes them). A reference link
is reported once per definition it uses (`[x]: url`), at the definition: that is where the URL is written
and where it gets fixed; a definition nothing uses renders nothing, so it is not a link. Bare URLs are the
ones GitHub autolinks (a scheme, "www.", e-mail addresses) in text outside links and code. Front matter
is not Markdown (its URLs are bare links); MkDocs admonitions and content tabs hold Markdown; in an .mdx
document the href, src and to props of JSX elements are links.

Positions: every parser event comes with a byte range of the UTF-8 source. Found links keep a byte offset
until the end, where _Source turns each into a 1-based line and column (in characters).
"""

from __future__ import annotations

import bisect
import re
from functools import cache
from operator import itemgetter
from typing import Any

import pyromark

from ..types import Extraction, RawLink
from .slug import GITHUB, HeadingIds, Slugger, github_slug, toc_ids
from .text import decode_bytes, find_urls, normalize_newlines

_ELEMENT = "markdown"
_OPTIONS = (
    pyromark.Options.ENABLE_TABLES
    | pyromark.Options.ENABLE_FOOTNOTES
    | pyromark.Options.ENABLE_STRIKETHROUGH
    | pyromark.Options.ENABLE_TASKLISTS
    | pyromark.Options.ENABLE_HEADING_ATTRIBUTES
)
_URL_MARKERS = (b"://", b"ailto:", b"AILTO:", b"@", b"www.")  # in every URL find_urls(gfm=True) finds
_REFERENCE_TYPES = frozenset({"Reference", "Collapsed", "Shortcut"})
# Front matter at the very start: YAML between "---" lines (or closed by "..."), TOML between "+++" lines.
# pulldown-cmark's own option takes any pair of "---" lines anywhere for metadata, so it is found here.
_FRONT_MATTER = re.compile(r"(---|\+\+\+)[ \t]*\n[^\n]+\n(?:.*?\n)??(?:\1|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
# A marker and the space after it, replaced by "1.  " (or "1.  x") of the same length: see _parse_text
_MKDOCS_BLOCK = re.compile(r"^([ \t]*)(?:!!!|\?\?\?|===)([+!]?)[ \t](?=[ \t]*\S)", re.MULTILINE)
_NOT_NEWLINE = re.compile(r"[^\n]")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")

_Found = tuple[int, str, str, str, bool]  # byte offset, url, element, attribute, nofollow


@cache
def _parser() -> pyromark.Markdown:
    return pyromark.Markdown(options=_OPTIONS)


class _Source:
    """The document as text and as UTF-8 bytes: the parser's byte ranges to text, lines and columns."""

    __slots__ = ("text", "data", "ascii")

    def __init__(self, text: str) -> None:
        try:
            self.data = text.encode()
        except UnicodeEncodeError:  # lone surrogates in a str argument: each one becomes "?"
            self.data = text.encode(errors="replace")
            text = self.data.decode()
        self.text = text
        self.ascii = len(self.data) == len(text)  # then byte and character offsets agree

    def slice(self, start: int, end: int) -> str:
        return self.text[start:end] if self.ascii else self.data[start:end].decode(errors="replace")

    def positions(self, offsets: list[int]) -> list[tuple[int, int]]:
        """1-based (line, column in characters) of each byte offset, offsets ascending: one sweep."""
        data, ascii_only = self.data, self.ascii
        count, rfind = data.count, data.rfind
        found, previous, line, line_start = [], 0, 1, 0
        column = 0  # (characters from line_start to previous: a long line's columns are counted on, not again)
        for offset in offsets:
            newlines = count(b"\n", previous, offset)
            if newlines:
                line += newlines
                line_start = rfind(b"\n", previous, offset) + 1
                column = 0 if ascii_only else len(data[line_start:offset].decode(errors="replace"))
            elif not ascii_only:
                column += len(data[previous:offset].decode(errors="replace"))
            if ascii_only:
                column = offset - line_start
            previous = offset
            found.append((line, column + 1))
        return found


def _first_marker(data: bytes, start: int) -> int:
    """The offset of the first of _URL_MARKERS at or after start, or -1."""
    first = -1
    for marker in _URL_MARKERS:
        at = data.find(marker, start) if first < 0 else data.find(marker, start, first)
        if at >= 0:
            first = at
    return first


def _bytes_in(text: str, offset: int) -> int:
    """How many bytes text[:offset] takes in UTF-8."""
    return offset if text.isascii() else len(text[:offset].encode())


def _unescape(url: str) -> str:
    """A URL found in the source as the rendered text has it: backslash escapes and entities decoded."""
    if "\\" not in url and "&" not in url:
        return url
    import html  # rarely needed: not at start-up

    return _ESCAPE.sub(lambda match: match.group(1) or html.unescape(match.group()), url)


def _destination(data: bytes, at: int) -> int:
    """Offset of a link destination that follows the label's "](" or "]:" ending at `at`."""
    end = len(data)
    while at < end and data[at] in b" \t":
        at += 1
    if at < end and data[at] == 0x0A:  # on the next line, after its block quote markers and indentation
        at += 1
        while at < end and data[at] in b" \t>":
            at += 1
    return at + 1 if at < end and data[at] == 0x3C else at  # within <...>


def _definition_destination(data: bytes, start: int) -> int:
    """Offset of the destination of the definition `[label]: url` whose "[" is at `start`."""
    at, end = start + 1, len(data)
    while at < end and data[at] != 0x5D:  # a label holds no unescaped "]"
        at += 2 if data[at] == 0x5C else 1
    return _destination(data, at + 2)


_LABEL_SPACE = re.compile(r"[ \t\r\n]+")
# attr_list's { #id .class key=value } (or {: ... }): right after an inline element, or as a block's last line
_INLINE_ATTRIBUTES = re.compile(r"\{:?[ ]*([^{}\n ][^{}\n]*)\}")
_BLOCK_ATTRIBUTES = re.compile(r"[ ]*\{:?[ ]*([^{}\n ][^{}\n]*)\}[ ]*")
_INLINE_ENDS = frozenset({"Emphasis", "Strong", "Strikethrough", "Link", "Image"})  # attributes may follow


def _label_key(label: str) -> str:
    """Reference labels match case-insensitively, any run of whitespace as one space (CommonMark's whitespace:
    space, tab, line ending; a no-break space is a character of the label like any other)."""
    return " ".join(_LABEL_SPACE.split(label.strip(" \t\r\n"))).casefold()


class _Walk:
    """One pass over the parser's events, and what it found."""

    def __init__(self, source: _Source, include_code: bool, ids: HeadingIds) -> None:
        self.source = source
        self.include_code = include_code
        self.ids = ids
        self.found: list[_Found] = []
        self.anchors: set[str] = set()
        self.used_labels: set[str] = set()
        self.html: list[tuple[int, str]] = []  # raw HTML pieces: (byte offset, text)
        self.html_ends: list[int] = []  # how many pieces there are at the end of each HTML block or inline piece
        self.code: list[tuple[int, int]] = []  # byte ranges of code spans and blocks
        self.runs: list[dict[str, int]] = []  # byte ranges of text outside links and code, in order
        self._slugger = Slugger()
        self._toc: list[tuple[str, str | None]] = []  # with toc's ids: each heading's text and explicit id
        self._taken: set[str] = set()  # with toc's ids: the ids written in the document
        self._links: list[list[Any]] = []  # open links and images: [url or None, attribute, start, content end]
        self._heading: list[str] | None = None  # text of the heading being read
        self._heading_tag: dict[str, Any] = {}
        self._heading_start = 0
        self._images = 0  # depth of images: their alt text is not heading text
        self._code_start = -1  # start of the code block being read

    def read(self, events: Any) -> None:
        """Walk the events (text merged: one event per run of text, with the range of all its source)."""
        runs, links = self.runs, self._links
        after = ""  # what the event before was, where attr_list looks: "inline" (an element's end), "break"
        block_ids = None  # a line of attributes after a break: a block's, if the block ends with it
        for event, span in events:
            if block_ids is not None:
                end = event.get("End") if event.__class__ is dict else None
                if end.__class__ is str and end not in _INLINE_ENDS:
                    self._attribute_ids(block_ids[1])
                block_ids = None
            if event.__class__ is not dict:  # SoftBreak, HardBreak, Rule
                if self._heading is not None:
                    self._heading.append("\n")
                after = "break"
                continue
            text = event.get("Text")
            if text is not None:
                if self._code_start >= 0:
                    if self.include_code:
                        self._code_urls(span["start"], span["end"], text)
                    continue
                if self._heading is not None:
                    self._heading_text(text)
                elif after and "{" in text:
                    if after == "inline":
                        if (match := _INLINE_ATTRIBUTES.match(text)) is not None:
                            self._attribute_ids(match[1])
                    else:
                        block_ids = _BLOCK_ATTRIBUTES.fullmatch(text)
                after = ""
                if links:
                    links[-1][3] = span["end"]
                else:
                    runs.append(span)
                continue
            after = ""
            tag = event.get("Start")
            if tag is not None:
                if links:
                    links[-1][3] = span["end"]
                if tag.__class__ is not str:
                    self._start(tag, span["start"], span["end"])
                continue
            tag = event.get("End")
            if tag is not None:
                if tag.__class__ is not str or tag in ("Link", "Image", "CodeBlock"):
                    self._end(tag, span["end"])
                elif tag == "HtmlBlock":
                    self.html_ends.append(len(self.html))
                if tag.__class__ is str and tag in _INLINE_ENDS:
                    after = "inline"
                continue
            if links:
                links[-1][3] = span["end"]
            code = event.get("Code")
            if code is not None:
                start, end = span["start"], span["end"]
                self.code.append((start, end))
                if self._heading is not None:
                    self._heading_text(code)
                if self.include_code:
                    self._code_urls(start, end, None)
                after = "inline"
                continue
            piece = event.get("Html")
            if piece is not None:  # a line of an HTML block
                self.html.append((span["start"], piece))
                continue
            piece = event.get("InlineHtml")
            if piece is not None:
                self.html.append((span["start"], piece))
                self.html_ends.append(len(self.html))
                continue
            label = event.get("FootnoteReference")
            if label is not None:  # the ids GitHub and MkDocs give the first reference to a footnote
                self.anchors.update((f"fnref-{label}", f"fnref:{label}"))

    def _attribute_ids(self, attributes: str) -> None:
        """The id of an attr_list block (MkDocs, Python-Markdown): one right after an inline element,
        `**x**{ #id }`, or on a block's last line, `{: #id }`. Such an element is a target of #id."""
        for word in attributes.split():
            if word.startswith("#") and len(word) > 1:
                name = word[1:]
            elif word.startswith("id=") and len(word) > 3:
                name = word[3:].strip("\"'")
            else:
                continue
            self.anchors.add(name)
            self._taken.add(name)

    def _heading_text(self, text: str) -> None:
        if not self._images:
            assert self._heading is not None
            self._heading.append(text)

    def bare_urls(self) -> None:
        """Bare URLs of the text runs, read in their source (escapes and entities are decoded after).

        What may start a URL is looked for in the whole document, from one run that holds one to the next,
        since most runs hold none: the first marker at or after a point, then the run it is in, then the first
        marker after that run (or, for one outside every run, from the next run's start). No list of markers
        is made (a document of millions of "@" would hold millions of offsets).
        """
        runs, source = self.runs, self.source
        if not runs:
            return
        data = source.data
        starts = [run["start"] for run in runs]
        at = _first_marker(data, starts[0])
        while at >= 0:
            index = bisect.bisect_right(starts, at) - 1
            end = runs[index]["end"]  # (index >= 0: every marker looked for is at or after the first run)
            if at >= end:  # in no run (code, a link's destination, markup): on from the next run
                if index + 1 == len(runs):
                    return
                at = _first_marker(data, starts[index + 1])
                continue
            start = starts[index]
            text = source.slice(start, end)
            for offset, url in find_urls(text, gfm=True):
                self.found.append((start + _bytes_in(text, offset), _unescape(url), _ELEMENT, "bare", False))
            at = _first_marker(data, end)

    def _code_urls(self, start: int, end: int, text: str | None) -> None:
        """URLs in code: searched in the source, or in `text` where the parser changed it (container prefixes,
        tabs), each then looked up in the source."""
        source = self.source.slice(start, end)
        exact = text is None or text == source
        searched = source if exact or text is None else text
        at = 0
        for offset, url in find_urls(searched):
            at = offset if exact else max(source.find(url, at), 0)
            self.found.append((start + _bytes_in(source, at), url, _ELEMENT, "code", False))

    def _start(self, tag: Any, start: int, end: int) -> None:
        data = tag.get("Link") or tag.get("Image")
        if data is not None:
            image = "Image" in tag
            kind = data["link_type"]
            if kind in _REFERENCE_TYPES:
                self.used_labels.add(data["id"])
            elif kind == "Autolink":
                self.found.append((start + 1, data["dest_url"], _ELEMENT, "autolink", False))
            elif kind == "Email":
                self.found.append((start + 1, "mailto:" + data["dest_url"], _ELEMENT, "autolink", False))
            url = data["dest_url"] if kind == "Inline" else None  # the others are reported already, or later
            self._links.append([url, "image" if image else "inline", start, start])
            self._images += image
        elif "Heading" in tag:
            self._heading, self._heading_tag, self._heading_start = [], tag["Heading"], start
        elif "CodeBlock" in tag:
            self._code_start = start
        elif "FootnoteDefinition" in tag:  # its id on GitHub, and in MkDocs
            label = tag["FootnoteDefinition"]
            self.anchors.update((f"fn-{label}", f"fn:{label}"))

    def _end(self, tag: Any, end: int) -> None:
        if tag == "Link" or tag == "Image":
            url, attribute, start, content_end = self._links.pop()
            self._images -= tag == "Image"
            if self._links:
                self._links[-1][3] = end
            if url is not None:
                data = self.source.data
                label_end = data.find(b"](", content_end, end)
                at = _destination(data, label_end + 2) if label_end >= 0 else start
                self.found.append((at, url, _ELEMENT, attribute, False))
        elif tag == "CodeBlock":
            self.code.append((self._code_start, end))
            self._code_start = -1
        elif tag.__class__ is dict and "Heading" in tag:
            self._end_heading(end)

    def _end_heading(self, end: int) -> None:
        """A heading's anchor: its explicit id (`{ #id }`, and then that alone, as in MkDocs), else its slug."""
        text, tag = "".join(self._heading or ()), self._heading_tag
        self._heading = None
        explicit = tag["id"] or next((value for key, value in tag["attrs"] if key == "id" and value), None)
        if explicit:
            explicit = explicit.strip("\"'")  # attr_list's `{ id="x" }`: the parser keeps the quotes
            self.anchors.add(explicit)
        if self.ids.style == "toc":  # ids given at the end, when every id written in the document is known
            self._toc.append((text, explicit))
            if explicit:
                self._taken.add(explicit)
            return
        if explicit:
            self._slugger.reserve(explicit)
            return
        if tag["classes"] or tag["attrs"]:
            # `{.class}` or `{word}` without an id: MkDocs drops it from the slug, GitHub (no attributes) keeps it
            self.anchors.add(github_slug(text))
            text += self._attribute_block(end)
        slug = self._slugger.slug(text)
        if slug:
            self.anchors.add(slug)

    def toc_anchors(self) -> None:
        """The ids toc gives the headings without one of their own."""
        if self._toc:
            self.anchors.update(toc_ids(self._toc, self._taken, self.ids))

    def _attribute_block(self, end: int) -> str:
        """The heading's `{...}` as written, with the space before it: the end of its first line."""
        line = self.source.slice(self._heading_start, end).split("\n", 1)[0].rstrip()
        if line.endswith("#"):  # an ATX heading's closing sequence
            line = line.rstrip("#").rstrip()
        brace = line.rfind("{")
        return line[len(line[:brace].rstrip()) :] if brace >= 0 else ""


def _mkdocs_block(match: re.Match[str]) -> str:
    return match.group(1) + ("1.  x" if match.group(2) else "1.  ")


def _parse_text(text: str) -> tuple[str, int]:
    """The text to parse, and the length of its front matter; every byte keeps its offset.

    Front matter is blanked out. MkDocs blocks whose content is indented by four spaces (admonitions
    `!!! note`, collapsible `??? note` and `???+ note`, content tabs `=== "Tab"`) become items of an ordered
    list whose content starts at the fourth column, so their content is Markdown, as MkDocs reads it, not
    an indented code block.
    """
    front_end = 0
    match = _FRONT_MATTER.match(text)
    if match is not None:
        front, front_end = match.group(), match.end()
        if front.isascii():
            blank = _NOT_NEWLINE.sub(" ", front)
        else:  # as many bytes as each character had
            blank = _NOT_NEWLINE.sub(lambda char: " " * len(char.group().encode()), front)
        text = blank + text[front_end:]
    if "!!!" in text or "???" in text or "===" in text:
        text = _MKDOCS_BLOCK.sub(_mkdocs_block, text)
    return text, front_end


def _definitions(walk: _Walk, parse_text: str) -> None:
    """The definitions that some link uses, at their destinations."""
    used = {_label_key(label) for label in walk.used_labels}
    data = walk.source.data
    for label, definition in _parser().reference_definitions(parse_text).items():
        if _label_key(label) in used:
            at = _definition_destination(data, definition["span"]["start"])
            walk.found.append((at, definition["dest"], _ELEMENT, "reference", False))


def _html(walk: _Walk) -> None:
    """Links and ids of the raw HTML, read by the HTML extractor: the pieces joined, as one fragment, cut only
    after a piece that leaves open an element that would take in the pieces after it (see _cuts)."""
    from .html import scan_html  # selectolax loads only for a document that holds HTML

    parts: list[str] = []
    starts: list[int] = []  # where each piece starts in the joined text
    length = 0
    for _, piece in walk.html:
        starts.append(length)
        parts.append(piece)
        length += len(piece)
        if not piece.endswith("\n"):  # pieces of one block are lines; others get one, so no two tags merge
            parts.append("\n")
            length += 1
    text = "".join(parts)
    cuts = _cuts(text, starts, walk.html_ends)
    data = walk.source.data
    begin = 0
    for end in (*cuts, length):
        if end == begin:
            continue
        scan = scan_html(text[begin:end] if cuts else text)
        walk.anchors.update(scan.anchors)
        for at, url, element, attribute, nofollow in scan.found:
            offset = begin + at
            index = bisect.bisect_right(starts, offset) - 1
            start, piece = walk.html[index]
            walk.found.append((_in_source(data, start, piece, min(offset - starts[index], len(piece))), url,
                               element, attribute, nofollow))
        begin = end


# Start tags of the elements whose content an HTML parser takes as text (raw text, RCDATA, <plaintext>) or
# keeps out of the document (<template>, <frameset>). The first nine are those GitHub shows as text (GFM's
# tagfilter), so a mention in prose, "the <title> element", is common.
_SWALLOWERS = ("script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "plaintext",
               "template", "frameset")
# (The lookahead on the first letter makes the search about 3x faster than IGNORECASE on the whole pattern.)
_SWALLOWING = re.compile(
    "<(?=[" + "".join(sorted({name[0] + name[0].upper() for name in _SWALLOWERS})) + "])"
    "(?i:(" + "|".join(_SWALLOWERS) + "))(?=[\t\n\f\r />])"
)
_CLOSING = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in _SWALLOWERS}


def _cuts(text: str, starts: list[int], ends: list[int]) -> list[int]:
    """Where the joined raw HTML is cut into fragments read one by one, ascending: after each HTML block or
    inline piece in which one of _SWALLOWING opens and does not close. There the element ends, so it takes
    in the rest of its own block at most, and the pieces after it are read as they are.

    Most documents have no such tag and are read as one fragment (one parser call per piece would cost
    about 60 µs each).
    """
    cuts: list[int] = []
    for match in _SWALLOWING.finditer(text):
        if cuts and match.start() < cuts[-1]:
            continue  # (in a block cut after already)
        piece = bisect.bisect_right(starts, match.start()) - 1
        unit = bisect.bisect_right(ends, piece)  # the block or inline piece it is in
        following = ends[unit] if unit < len(ends) else len(starts)  # its first piece after
        end = starts[following] if following < len(starts) else len(text)
        name = match.group(1).lower()
        if name == "plaintext" or not _CLOSING[name].search(text, match.end(), end):  # (nothing ends plaintext)
            cuts.append(end)
    return cuts


def _in_source(data: bytes, start: int, piece: str, offset: int) -> int:
    """The byte offset in the document of piece[offset:], the piece the parser gave from start on. Its lines
    after the first lack what a list item's indent or a blockquote's "> " took from the source's: each is found
    in its source line after that."""
    line = piece.count("\n", 0, offset)
    if not line:
        return start + _bytes_in(piece, offset)
    encoded = piece.encode()
    if data.startswith(encoded, start):  # (the piece as the source has it: most raw HTML)
        return start + _bytes_in(piece, offset)
    at = start
    for _ in range(line):
        at = data.find(b"\n", at) + 1
        if not at:
            return start + _bytes_in(piece, offset)
    head = piece.rfind("\n", 0, offset) + 1
    tail = piece.find("\n", offset)
    own = piece[head : len(piece) if tail < 0 else tail].encode()
    end = data.find(b"\n", at)
    found = data.find(own, at, len(data) if end < 0 else end)  # (after the prefix: spaces and ">" only)
    return (at if found < 0 else found) + _bytes_in(piece[head:], offset - head)


def _jsx(walk: _Walk) -> None:
    """MDX: href, src and to props of JSX elements outside code (those HTML reads are found already)."""
    from .mdx import jsx_props

    found, tags = jsx_props(walk.source.data, walk.code)
    taken = {found[0] for found in walk.found if found[3] != "bare"}
    walk.found.extend((at, url, element, prop, False) for at, url, element, prop in found if at not in taken)
    if tags:  # a URL in a prop is the prop's, not a bare one
        starts = [start for start, _ in tags]

        def in_tag(at: int) -> bool:
            index = bisect.bisect_right(starts, at) - 1
            return index >= 0 and at < tags[index][1]

        walk.found = [found for found in walk.found if found[3] != "bare" or not in_tag(found[0])]


def _is_mdx(base: str) -> bool:
    return base.split("#", 1)[0].split("?", 1)[0].lower().endswith(".mdx")


def extract_markdown(
    body: bytes | str, base: str, *, include_code: bool = False, heading_ids: HeadingIds = GITHUB
) -> Extraction:
    """Links and anchors of a Markdown document; code spans and blocks only when include_code; its headings'
    ids as GitHub gives them, or as heading_ids says (MkDocs).

    A document whose base URL names a .mdx file is MDX: href, src and to props of its JSX elements are
    links too.
    """
    source = _Source(normalize_newlines(decode_bytes(body)))
    text = source.text
    parse_text, front_matter = _parse_text(text)
    walk = _Walk(source, include_code, heading_ids)
    walk.read(_parser().events_with_range(parse_text, merge_text=True))
    walk.toc_anchors()
    walk.bare_urls()
    for offset, url in find_urls(text, 0, front_matter):
        walk.found.append((_bytes_in(text, offset), url, _ELEMENT, "bare", False))
    if walk.used_labels:
        _definitions(walk, parse_text)
    if walk.html:
        _html(walk)
    if _is_mdx(base):
        _jsx(walk)
    found = sorted(walk.found, key=itemgetter(0))
    positions = source.positions([at for at, *_ in found])
    make = tuple.__new__  # RawLink(...) without its Python-level __new__: one call fewer per link
    links = tuple(
        make(RawLink, (url, element, attribute, line, column, nofollow))
        for (_, url, element, attribute, nofollow), (line, column) in zip(found, positions, strict=True)
    )
    return Extraction(links=links, base=base, anchors=frozenset(walk.anchors))
