"""Rewrite links in a file's bytes: each edit replaces one link as written, at its line and column, and every
other byte stays as it was (line endings, BOM, the final newline). Pure: bytes and edits in, bytes out."""

from __future__ import annotations

import html
import re
from typing import NamedTuple

_LINE_END = re.compile(r"(\r\n|\r|\n)")  # what the extractors count as one line break
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")
_UTF8_BOM = b"\xef\xbb\xbf"


class Edit(NamedTuple):
    """Replace the link `old` (as the extractor read it: entities decoded) at line:column with `new`."""

    line: int  # 1-based
    column: int  # 1-based, in characters
    old: str
    new: str


class Rewritten(NamedTuple):
    data: bytes  # the file's new bytes (the same bytes when nothing applied)
    applied: tuple[Edit, ...]
    skipped: tuple[tuple[Edit, str], ...]  # an edit that didn't apply, and why


def rewrite_links(data: bytes, edits: list[Edit]) -> Rewritten:
    """data with each edit applied where the link it names is still there. A file that isn't UTF-8 is left alone
    (its bytes could not be written back the same)."""
    bom = _UTF8_BOM if data.startswith(_UTF8_BOM) else b""
    try:
        text = data[len(bom):].decode("utf-8")
    except UnicodeDecodeError:
        return Rewritten(data, (), tuple((e, "not UTF-8: left as it is") for e in edits))
    parts = _LINE_END.split(text)  # line, end, line, end, ..., last line
    applied: list[Edit] = []
    skipped: list[tuple[Edit, str]] = []
    # right to left along each line, so a rewrite never moves the columns of those still to come
    for edit in sorted(set(edits), key=lambda e: (e.line, -e.column)):
        index = 2 * (edit.line - 1)
        if edit.line < 1 or index >= len(parts):
            skipped.append((edit, f"line {edit.line} is gone"))
            continue
        content = parts[index]
        start = edit.column - 1
        end = written_end(content, start, edit.old) if start >= 0 else None
        if end is None or _goes_on(content, end):
            skipped.append((edit, "the link is not there any more (the file changed since it was checked)"))
            continue
        new = written(edit.new, content[start:end], edit.old, content[start - 1 : start] if start else "")
        parts[index] = content[:start] + new + content[end:]
        applied.append(edit)
    if not applied:
        return Rewritten(data, (), tuple(skipped))
    return Rewritten(bom + "".join(parts).encode("utf-8"), tuple(applied), tuple(skipped))


def written_end(line: str, start: int, link: str) -> int | None:
    """Where link, as written from line[start:], ends: the text may spell characters as HTML entities
    (&amp; for &) or, in Markdown, escape punctuation with a backslash. None when it isn't there."""
    i, j = start, 0
    while j < len(link):
        if i >= len(line):
            return None
        c = line[i]
        if c == "&" and (m := _ENTITY.match(line, i)) and (decoded := html.unescape(m[0])) != m[0] \
                and link.startswith(decoded, j):  # (an & that starts an entity is the entity's)
            i, j = m.end(), j + len(decoded)
        elif c == link[j]:
            i, j = i + 1, j + 1
        elif c == "\\" and i + 1 < len(line) and line[i + 1] == link[j] and not link[j].isalnum():
            i, j = i + 2, j + 1
        else:
            return None
    return i


def _goes_on(line: str, end: int) -> bool:
    """Whether the URL written up to line[end] goes on past it (/old became /old-page, /old.html, /old?x=1): then
    the link there is no longer the one that was checked. Punctuation that ends a sentence does not count."""
    c = line[end : end + 1]
    if not c:
        return False
    if c.isalnum() or c in "-_/~%#=&+@$*":
        return True
    after = line[end + 1 : end + 2]
    return c in ".?!,:;" and bool(after) and not after.isspace() and after not in ")]>\"'<"


def written(new: str, was: str, old: str, before: str = "") -> str:
    """new, spelled as the link it replaces was: with & as &amp; when that link spelled its entities out; a
    parenthesis without its pair as %28 or %29 (in Markdown, [x](/a_(b) ends the link at the first ")"); and
    the quote that opens the attribute the link sits in (before it) as %27 or %22, which would end it."""
    if before in ("'", '"') and before in new:
        new = new.replace(before, "%27" if before == "'" else "%22")
    if new.count("(") != new.count(")"):
        new = new.replace("(", "%28").replace(")", "%29")
    if was != old and "&" in was and _ENTITY.search(was):
        return new.replace("&", "&amp;")
    return new
