"""From a Report's suggestions to new file contents: which written links change, in which files, and the diff.
Reading files is all it does; writing them is the caller's choice (`linkhound fix --write`)."""

from __future__ import annotations

import difflib
import os
import re
from typing import NamedTuple

from .link_rewriter import Edit, rewrite_links
from .suggestions import rewrite
from .summary import Report

# References that are not a link written in a Markdown or HTML file, and what a fix says of them: an input named
# in a --files-from list, a sitemap entry, a line of a plain-text URL list.
_NOT_WRITTEN = {
    "input": "an input of a --files-from list: not rewritten",
    "loc": "a sitemap's <loc>: not rewritten",
    "text": "a URL in a plain-text list: not rewritten",
}


class FileFix(NamedTuple):
    """One file's links to fix: its bytes before and after, and the edits that could not be made."""

    path: str
    before: bytes
    after: bytes
    applied: tuple[Edit, ...]
    skipped: tuple[tuple[Edit, str], ...]

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changed)."""
        if self.after == self.before:
            return ""
        old = _lines(self.before.decode("utf-8", errors="replace"))
        new = _lines(self.after.decode("utf-8", errors="replace"))
        name = self.path.lstrip("/")  # (a//tmp/x.md is no path patch reads)
        lines = difflib.unified_diff(old, new, f"a/{name}", f"b/{name}")
        return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
                       for line in lines)


def _lines(text: str) -> list[str]:
    """text's lines with their ends, split where patch splits them: at \n, \r\n and \r only (str.splitlines
    splits at a form feed, U+0085 and U+2028 as well, which made a diff patch can't apply)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def plan_fixes(report: Report) -> list[FileFix]:
    """What rewriting the links of report.suggestions in the files that hold them would do, file by file, in
    path order. Only links written as absolute http(s) URLs in files on disk are rewritten."""
    edits: dict[str, list[Edit]] = {}
    left: dict[str, list[tuple[Edit, str]]] = {}  # links of files on disk not rewritten, and why (warned of)
    for suggestion in report.suggestions:
        for ref in suggestion.references:
            if ref.line <= 0 or not os.path.isfile(ref.source):
                continue  # (a page on the web, a URL named on the command line)
            new = None if ref.element in _NOT_WRITTEN else rewrite(ref.text, suggestion.replacement)
            if new is not None:
                edits.setdefault(ref.source, []).append(Edit(ref.line, ref.column, ref.text, new))
                continue
            why = _NOT_WRITTEN.get(ref.element, "written relative: not rewritten (the check made it absolute)")
            left.setdefault(ref.source, []).append((Edit(ref.line, ref.column, ref.text, suggestion.replacement), why))
    fixes = []
    for path in sorted(edits.keys() | left.keys()):
        kept = tuple(left.get(path, ()))
        try:
            with open(path, "rb") as f:
                before = f.read()
        except OSError as e:
            why = f"can't read the file: {(e.strerror or str(e)).lower()}"
            fixes.append(FileFix(path, b"", b"", (), tuple((edit, why) for edit in edits.get(path, ())) + kept))
            continue
        done = rewrite_links(before, edits.get(path, []))
        fixes.append(FileFix(path, before, done.data, done.applied, done.skipped + kept))
    return fixes
