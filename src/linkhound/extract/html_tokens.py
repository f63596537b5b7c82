"""HTML links found tag by tag, without building a tree: the scan for pages too costly to parse into one.

It reads tags as the HTML tokenizer does (quoted values, comments, raw-text elements such as <script>) and
applies the same link rules as the tree scan, in time linear in the text and memory that holds no more
than the links. What it can't know is what only tree building decides: an <a> the parser clones, markup
that a misnested table moves; links are the same on any page that isn't built to tell the two apart.
"""

from __future__ import annotations

import re
from operator import itemgetter

from .css import css_urls
from .html_links import (
    LINK_ATTRIBUTES,
    NOFOLLOW_TAGS,
    Found,
    HtmlScan,
    decode_attribute,
    link_skipped,
    robots_nofollow,
    value_urls,
)

# The rest of a tag after its name, as the tokenizer reads it: a quote opens a value only after "=", and an
# unclosed quote runs to the end of the text (then the tag is dropped). Atomic groups keep it linear.
TAG_REST_PATTERN = (
    r"(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r /=>]*+"
    r"(?>[\t\n\f\r ]*+=[\t\n\f\r ]*+(?>\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >\"'][^\t\n\f\r >]*+)?)?)*+(?P<close>>)?"
)
TAG_REST = re.compile(TAG_REST_PATTERN)
NAME = r"(?P<end>/)?(?P<name>[A-Za-z][^\t\n\f\r />]*)"
# One token of markup, from its "<": a tag, whole (a tag without quotes ends at its first ">", the common and
# quick case), or a comment or bogus comment (<!x>, <?x>, </3>), whole, with no name.
TOKEN = re.compile(
    rf"<(?:{NAME}(?:[^>\"']*+(?P<quick>>)|{TAG_REST_PATTERN})|!--(?:>|->|.*?(?:--!?>|\Z))|[!?][^>]*+>?"
    r"|/(?![A-Za-z])[^>]*+>?)",
    re.DOTALL,
)
_ATTRIBUTE = re.compile(
    r"[\t\n\f\r /]*+(?P<name>[^\t\n\f\r />][^\t\n\f\r /=>]*+)(?>[\t\n\f\r ]*+=[\t\n\f\r ]*+"
    r"(?>\"(?P<dq>[^\"]*+)\"?|'(?P<sq>[^']*+)'?|(?P<bare>[^\t\n\f\r >\"'][^\t\n\f\r >]*+))?)?"
)
# Elements whose content is text, not markup; <template> content is kept out of the document by parsers.
RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "template"})
END_TAGS = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in RAW_TEXT}


def raw_text_end(text: str, name: str, start: int) -> int:
    """Where the text content of raw-text element `name` that starts at `start` ends."""
    close = END_TAGS[name].search(text, start)
    return close.start() if close else len(text)


def self_closing(text: str, start: int, end: int) -> bool:
    """Whether a start tag whose attributes begin at `start` ends in a "/>" at `end` (not "a=b/>": a value)."""
    if text[end - 2] != "/" or end - 2 < start:
        return False
    pos = start
    while (match := _ATTRIBUTE.match(text, pos)) is not None:
        pos = match.end()
    return pos <= end - 2


_Attributes = dict[str, tuple[str, int]]


def _attributes(text: str, pos: int) -> _Attributes:
    """The attributes of the tag whose name ends at `pos`: lower-case name -> raw value and its offset (the
    first of a name wins)."""
    attributes: _Attributes = {}
    while (match := _ATTRIBUTE.match(text, pos)) is not None:
        name = match.group("name").lower()
        if name not in attributes:
            group = match.lastgroup or "name"
            attributes[name] = (match.group(group), match.start(group)) if group != "name" else ("", match.end())
        pos = match.end()
    return attributes


def _value(attributes: _Attributes, name: str) -> str:
    return decode_attribute(attributes[name][0]) if name in attributes else ""


def scan_tags(text: str, warning: str) -> HtmlScan:
    """Links (by offset into `text`, in source order), anchors, <base href> and robots nofollow, tag by tag."""
    found: list[Found] = []
    anchors: set[str] = set()
    base_href: str | None = None
    nofollow = False
    pos = 0
    while (match := TOKEN.search(text, pos)) is not None:
        end, name, quick, close = match.group("end", "name", "quick", "close")
        pos = match.end()
        if name is None or end:
            continue
        if quick is None and close is None:
            break  # the text ends inside the tag: the tokenizer drops it
        tag = name.lower()
        # Attributes matter only with a value: most tags have none and need no closer look.
        if text.find("=", match.end("name"), pos) >= 0:
            attributes = _attributes(text, match.end("name"))
            if ident := _value(attributes, "id"):
                anchors.add(ident)
            if "style" in attributes and "url(" in (style := _value(attributes, "style")).lower():
                raw, offset = attributes["style"]
                found.extend((at, url, tag, "style", False) for at, url in value_urls("css", style, raw, offset))
            if tag in LINK_ATTRIBUTES:
                _add_links(tag, attributes, found, anchors)
            elif tag == "meta":
                nofollow = _meta(attributes, found) or nofollow
            elif tag == "base" and base_href is None and "href" in attributes:
                base_href = _value(attributes, "href")
        if tag == "plaintext":
            break
        if tag in RAW_TEXT:
            end = raw_text_end(text, tag, pos)
            if tag == "style":
                found.extend((pos + offset, url, "style", "css", False) for offset, url in css_urls(text[pos:end]))
            pos = end
    found.sort(key=itemgetter(0))  # a style attribute may come before the tag's other links
    return HtmlScan(found, anchors, base_href, nofollow, warning)


def _meta(attributes: _Attributes, found: list[Found]) -> bool:
    """Add a meta refresh URL to `found`; True for a <meta name=robots> that says nofollow."""
    if _value(attributes, "http-equiv").strip().lower() == "refresh" and "content" in attributes:
        raw, offset = attributes["content"]
        content = _value(attributes, "content")
        found.extend((at, url, "meta", "content", False) for at, url in value_urls("refresh", content, raw, offset))
    elif _value(attributes, "name").strip().lower() == "robots":
        return robots_nofollow(_value(attributes, "content"))
    return False


def _add_links(tag: str, attributes: _Attributes, found: list[Found], anchors: set[str]) -> None:
    if tag == "a" and (name := _value(attributes, "name")):
        anchors.add(name)
    rel_tokens = _value(attributes, "rel").lower().split() if tag in NOFOLLOW_TAGS else []
    if link_skipped(tag, rel_tokens, "disabled" in attributes):
        return
    link_attributes = LINK_ATTRIBUTES[tag]
    if tag == "input" and _value(attributes, "type").strip().lower() != "image":
        link_attributes = ("formaction",)  # only an image input has a src worth checking
    nofollow = "nofollow" in rel_tokens
    for attribute in link_attributes:
        if attribute in attributes:
            raw, offset = attributes[attribute]
            kind = "srcset" if attribute == "srcset" else "url"
            value = _value(attributes, attribute)
            found.extend((at, url, tag, attribute, nofollow) for at, url in value_urls(kind, value, raw, offset))
