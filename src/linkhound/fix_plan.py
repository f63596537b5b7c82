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
from .types import Reference

# References that are not a link written in a Markdown or HTML file: an input named on the command line, a
# sitemap entry, a line of a plain-text URL list.
_NOT_WRITTEN = frozenset({"input", "loc", "text"})


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
    for suggestion in report.suggestions:
        for ref in suggestion.references:
            if not _in_a_file(ref):
                continue
            new = rewrite(ref.text, suggestion.replacement)
            if new is not None:
                edits.setdefault(ref.source, []).append(Edit(ref.line, ref.column, ref.text, new))
    fixes = []
    for path in sorted(edits):
        try:
            with open(path, "rb") as f:
                before = f.read()
        except OSError as e:
            why = f"can't read the file: {(e.strerror or str(e)).lower()}"
            fixes.append(FileFix(path, b"", b"", (), tuple((edit, why) for edit in edits[path])))
            continue
        done = rewrite_links(before, edits[path])
        fixes.append(FileFix(path, before, done.data, done.applied, done.skipped))
    return fixes


def _in_a_file(ref: Reference) -> bool:
    return ref.line > 0 and ref.element not in _NOT_WRITTEN and os.path.isfile(ref.source)
