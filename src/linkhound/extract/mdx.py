"""MDX: the href, src and to props of JSX elements, given as string literals."""

from __future__ import annotations

import bisect
import re

# A JSX opening tag (attribute values may hold ">" inside quotes or braces; each is bounded, so a stray quote
# can't make a scan quadratic); in it, a prop whose value is a string literal, or one in braces.
_TAG = re.compile(
    rb"<([A-Za-z][\w.:-]*)"
    rb"((?:[^<>\"'{}]|\"[^\"]{0,2000}\"|'[^']{0,2000}'|\{(?:[^{}]|\{[^{}]{0,2000}\}){0,2000}\})*+)/?>"
)
_PROP = re.compile(
    rb"(?<![\w.:-])(href|src|to)[ \t\n]*=[ \t\n]*"
    rb"(?:\"([^\"]*)\"|'([^']*)'|\{[ \t\n]*(?:\"([^\"]*)\"|'([^']*)'|`([^`$]*)`)[ \t\n]*\})"
)

Prop = tuple[int, str, str, str]  # byte offset of the value, value, element, prop name


def jsx_props(data: bytes, code: list[tuple[int, int]]) -> tuple[list[Prop], list[tuple[int, int]]]:
    """The link props of the JSX tags in `data` outside the byte ranges `code`, and those tags' ranges."""
    code = sorted(code)
    code_starts = [start for start, _ in code]
    props: list[Prop] = []
    tags: list[tuple[int, int]] = []
    for tag in _TAG.finditer(data):
        index = bisect.bisect_right(code_starts, tag.start()) - 1
        if index >= 0 and tag.start() < code[index][1]:
            continue
        tags.append(tag.span())
        element = tag.group(1).decode(errors="replace")
        for prop in _PROP.finditer(data, tag.start(2), tag.end(2)):
            group = next(index for index in range(2, 7) if prop.group(index) is not None)
            raw = prop.group(group)
            url = raw.decode(errors="replace").strip()
            if url:
                props.append((prop.start(group) + len(raw) - len(raw.lstrip()), url, element, prop.group(1).decode()))
    return props, tags
