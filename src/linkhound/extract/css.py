"""URLs in CSS: url(...) values and @import strings, with their positions; data: URLs are skipped."""

from __future__ import annotations

import re

# Comments and plain strings are matched only to be skipped, so "url(x)" inside them is not a link.
_CSS = re.compile(
    r"""/\*.*?(?:\*/|\Z)
    | @import\s+(?:"(?P<idq>(?:[^"\\\n]|\\.)*+)"|'(?P<isq>(?:[^'\\\n]|\\.)*+)')
    | (?<![\w-])url\(\s*(?:"(?P<dq>(?:[^"\\\n]|\\.)*+)"|'(?P<sq>(?:[^'\\\n]|\\.)*+)'
                        |(?P<bare>(?:[^\s"'()\\]|\\.)*+))\s*\)
    | "(?:[^"\\\n]|\\.)*+"|'(?:[^'\\\n]|\\.)*+'
    """,
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|\n|(.))", re.DOTALL)
_VALUE_GROUPS = ("idq", "isq", "dq", "sq", "bare")


def _unescape_char(match: re.Match[str]) -> str:
    hex_digits, char = match.group(1), match.group(2)
    if hex_digits is not None:
        code = int(hex_digits, 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return char or ""  # an escaped newline is a line continuation


def css_urls(css: str) -> list[tuple[int, str]]:
    """(offset, url) of every url() and @import string in `css`, escapes decoded, whitespace stripped."""
    found = []
    for match in _CSS.finditer(css):
        group = match.lastgroup
        if group not in _VALUE_GROUPS:
            continue
        raw = match.group(group)
        url = _ESCAPE.sub(_unescape_char, raw) if "\\" in raw else raw
        url = url.strip(" \t\n\f")
        if url and url[:5].lower() != "data:":
            found.append((match.start(group) + len(raw) - len(raw.lstrip(" \t\n\f")), url))
    return found


def extract_css(css: str, line: int = 1, column: int = 1) -> list[tuple[str, int, int]]:
    """url() and @import values of `css` with 1-based line and column; `line`/`column` place css[0]."""
    result = []
    current_line, line_start, scanned = line, 0, 0
    for offset, url in css_urls(css):
        newlines = css.count("\n", scanned, offset)
        if newlines:
            current_line += newlines
            line_start = css.rfind("\n", scanned, offset) + 1
        scanned = offset
        on_first_line = current_line == line
        result.append((url, current_line, offset - line_start + (column if on_first_line else 1)))
    return result
