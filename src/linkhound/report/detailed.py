"""A block per link, every link: status, code, time, redirect chain and each referrer as written."""

from __future__ import annotations

from ..status import Status
from ..summary import Report
from ..types import Result
from . import ansi
from .base import WholeReport
from .common import LABELS, by_url, describe, duration, plain, printable, sorted_refs, summary_line, where


class Detailed(WholeReport):
    """Every result sorted by URL, then the summary line."""

    def __init__(self, *, color: bool = False, summary_only: bool = False) -> None:
        self.color = color
        self.summary_only = summary_only

    def finish(self, report: Report) -> str:
        blocks = [] if self.summary_only else [self._block(r) for r in by_url(report.results)]
        blocks.append(summary_line(report.summary, ansi.paint if self.color else plain) + "\n")
        return "\n".join(blocks)

    def _block(self, result: Result) -> str:
        status = LABELS[result.status]
        detail = describe(result)
        if detail != status:
            status += f" ({detail})"
        lines = [printable(result.url), f"  status:     {self._paint(printable(status), result.status)}"]
        lines.append(f"  time:       {duration(result.elapsed)}")
        if result.redirects:
            chain = " -> ".join((result.url, *result.redirects))
            lines.append(f"  redirected: {printable(chain)}")
        if result.content_type:
            lines.append(f"  type:       {printable(result.content_type)}")
        if result.references:
            lines.append("  referrers:")
            for ref in sorted_refs(result.references):
                written = f' "{ref.text}"' if ref.text else ""
                lines.append(f"    {printable(where(ref) + written)}")
        return "\n".join(lines) + "\n"

    def _paint(self, text: str, status: Status) -> str:
        return ansi.paint(text, status) if self.color else text
