"""The markdown format: the summary, then a table per source; made for GitHub job summaries and issues."""

from __future__ import annotations

import re

from ..summary import Report
from .base import WholeReport
from .common import LABELS, by_source, describe, is_problem, printable, summary_line


class Markdown(WholeReport):
    """Problems (every link when verbose) in a GitHub-flavoured table per file or page."""

    def __init__(self, *, verbose: bool = False, summary_only: bool = False) -> None:
        self.verbose = verbose
        self.summary_only = summary_only

    def finish(self, report: Report) -> str:
        out = ["## Link check", "", text(summary_line(report.summary)), ""]
        if self.summary_only:
            return "\n".join(out)
        groups = by_source(r for r in report.results if self.verbose or is_problem(r.status))
        if not groups:
            out += ["No broken links.", ""]
        for source, pairs in groups.items():
            out += [f"### {code(source)}", "", "| Line | Status | URL | Details | Element |", _RULE]
            for ref, result in pairs:
                line = f"{ref.line}:{ref.column}" if ref and ref.line else ""
                details = describe(result) if describe(result) != LABELS[result.status] else ""
                if result.redirects:
                    details += f" (redirected to {result.redirects[-1]})"
                element = f"{ref.element} {ref.attribute}".strip() if ref else ""
                cells = [
                    line,
                    LABELS[result.status],
                    code(result.url, table=True),
                    text(details),
                    text(element),
                ]
                out.append(f"| {' | '.join(cells)} |")
            out.append("")
        return "\n".join(out)


_RULE = "|---:|---|---|---|---|"
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def text(s: str) -> str:
    """Markdown-inert text: punctuation that could start markup or HTML is backslash-escaped."""
    return _SPECIAL.sub(r"\\\1", printable(s).strip())


def code(s: str, *, table: bool = False) -> str:
    """A code span that shows `s` exactly; HTML and links inside it stay inert."""
    s = printable(s)
    fence = "`" * (max((len(run) for run in re.findall("`+", s)), default=0) + 1)
    if s.startswith("`") or s.endswith("`"):
        s = f" {s} "
    if table:
        s = s.replace("|", "\\|")
    return f"{fence}{s}{fence}"
