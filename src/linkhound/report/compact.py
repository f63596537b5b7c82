"""The default terminal format: problems grouped by URL with their referrers, then one summary line."""

from __future__ import annotations

from ..status import Status
from ..summary import Report
from ..types import Result
from . import ansi, fixes
from .base import WholeReport
from .common import (
    LABELS,
    by_status_then_url,
    describe,
    display_url,
    folded_refs,
    is_problem,
    more,
    plain,
    printable,
    summary_line,
    warning_lines,
    where,
)
from .drift import drift_lines

CACHED = "[cached]"  # after a result reused from an earlier run's cache (--cache)
MARKS: dict[Status, str] = {s: "✗" if s.is_broken else "-" for s in Status} | {
    Status.OK: "✓",
    Status.BLOCKED: "⚠",
}


class Compact(WholeReport):
    """Broken and blocked links (every link when verbose), each with its first referrers (all of them with
    all_referrers or verbose); then the run's warnings and the summary."""

    def __init__(
        self,
        *,
        color: bool = False,
        verbose: bool = False,
        summary_only: bool = False,
        all_referrers: bool = False,
    ) -> None:
        self.color = color
        self.verbose = verbose
        self.summary_only = summary_only
        self.all_referrers = all_referrers or verbose

    def finish(self, report: Report) -> str:
        lines: list[str] = []
        if not self.summary_only:
            shown = [r for r in report.results if self.verbose or is_problem(r.status)]
            for result in by_status_then_url(shown):
                lines.extend(self._entry(result))
            if lines:
                lines.append("")
            lines.extend(fixes.text_lines(report, self.all_referrers))
        if report.sitemap_drift is not None:  # --sitemap-drift
            lines += [*drift_lines(report.sitemap_drift, self.summary_only), ""]
        lines.extend(warning_lines(report.summary, self.color))
        lines.append(summary_line(report.summary, ansi.paint if self.color else plain))
        return "\n".join(lines) + "\n"

    def _entry(self, result: Result) -> list[str]:
        label = f"{MARKS[result.status]} {LABELS[result.status]}:"
        head = f"{self._paint(label, result.status)} {display_url(result.url)}"
        detail = describe(result)
        if detail != LABELS[result.status]:
            head += f" ({printable(detail)})"
        if result.cached:
            head += " " + self._dim(CACHED)
        lines = [head]
        if result.redirects:
            lines.append(self._dim(f"    redirected to {printable(' -> '.join(result.redirects))}"))
        refs, hidden = folded_refs(result, self.all_referrers)
        lines.extend(self._dim(f"    in {printable(where(ref))}") for ref in refs)
        if hidden:
            lines.append(self._dim(f"    {more(hidden)}"))
        return lines

    def _paint(self, text: str, status: Status) -> str:
        return ansi.paint(text, status) if self.color else text

    def _dim(self, text: str) -> str:
        return ansi.dim(text) if self.color else text
