"""The default terminal format: problems grouped by URL with every referrer, then one summary line."""

from __future__ import annotations

from ..status import Status
from ..summary import Report
from ..types import Result
from . import ansi
from .base import WholeReport
from .common import (
    LABELS,
    by_status_then_url,
    describe,
    is_problem,
    plain,
    printable,
    sorted_refs,
    summary_line,
    where,
)

MARKS: dict[Status, str] = {s: "✗" if s.is_broken else "-" for s in Status} | {
    Status.OK: "✓",
    Status.BLOCKED: "⚠",
}


class Compact(WholeReport):
    """Broken and blocked links (every link when verbose), each with its referrers; then the summary."""

    def __init__(self, *, color: bool = False, verbose: bool = False, summary_only: bool = False) -> None:
        self.color = color
        self.verbose = verbose
        self.summary_only = summary_only

    def finish(self, report: Report) -> str:
        lines: list[str] = []
        if not self.summary_only:
            shown = [r for r in report.results if self.verbose or is_problem(r.status)]
            for result in by_status_then_url(shown):
                lines.extend(self._entry(result))
            if lines:
                lines.append("")
        lines.append(summary_line(report.summary, ansi.paint if self.color else plain))
        return "\n".join(lines) + "\n"

    def _entry(self, result: Result) -> list[str]:
        label = f"{MARKS[result.status]} {LABELS[result.status]}:"
        head = f"{self._paint(label, result.status)} {printable(result.url)}"
        detail = describe(result)
        if detail != LABELS[result.status]:
            head += f" ({printable(detail)})"
        lines = [head]
        if result.redirects:
            lines.append(self._dim(f"    redirected to {printable(' -> '.join(result.redirects))}"))
        lines.extend(self._dim(f"    in {printable(where(ref))}") for ref in sorted_refs(result.references))
        return lines

    def _paint(self, text: str, status: Status) -> str:
        return ansi.paint(text, status) if self.color else text

    def _dim(self, text: str) -> str:
        return ansi.dim(text) if self.color else text
