"""A block per link, every link: status, code, time, redirect chain and each referrer as written."""

from __future__ import annotations

from ..status import Status
from ..summary import Report
from ..types import Result
from . import ansi, fixes
from .base import WholeReport
from .certificates import certificate_lines
from .common import (
    LABELS,
    by_url,
    describe,
    display_url,
    duration,
    folded_refs,
    more,
    plain,
    printable,
    summary_line,
    warning_lines,
    where,
)
from .drift import drift_lines


class Detailed(WholeReport):
    """Every result sorted by URL with its first referrers (all of them with all_referrers), then the run's
    warnings and the summary line."""

    def __init__(self, *, color: bool = False, summary_only: bool = False, all_referrers: bool = False) -> None:
        self.color = color
        self.summary_only = summary_only
        self.all_referrers = all_referrers

    def finish(self, report: Report) -> str:
        blocks = [] if self.summary_only else [self._block(r) for r in by_url(report.results)]
        if report.sitemap_drift is not None:  # --sitemap-drift
            blocks.append("\n".join(drift_lines(report.sitemap_drift, self.summary_only)) + "\n")
        tail = [] if self.summary_only else fixes.text_lines(report, self.all_referrers)
        tail += certificate_lines(report.summary) + warning_lines(report.summary, self.color)
        tail.append(summary_line(report.summary, ansi.paint if self.color else plain))
        blocks.append("\n".join(tail) + "\n")
        return "\n".join(blocks)

    def _block(self, result: Result) -> str:
        status = LABELS[result.status]
        detail = describe(result)
        if detail != status:
            status += f" ({detail})"
        lines = [display_url(result.url), f"  status:     {self._paint(printable(status), result.status)}"]
        cached = " (cached: not requested)" if result.cached else ""
        lines.append(f"  time:       {duration(result.elapsed)}{cached}")
        if result.redirects:
            chain = " -> ".join((display_url(result.url), *map(printable, result.redirects)))
            lines.append(f"  redirected: {chain}")
        if result.content_type:
            lines.append(f"  type:       {printable(result.content_type)}")
        if result.references:
            lines.append("  referrers:")
            refs, hidden = folded_refs(result, self.all_referrers)
            for ref in refs:
                written = f' "{ref.text}"' if ref.text else ""
                lines.append(f"    {printable(where(ref) + written)}")
            if hidden:
                lines.append(f"    {more(hidden)}")
        return "\n".join(lines) + "\n"

    def _paint(self, text: str, status: Status) -> str:
        return ansi.paint(text, status) if self.color else text
