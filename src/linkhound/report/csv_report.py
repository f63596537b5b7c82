"""The csv format: a row per link and referrer, for spreadsheets and scripts (run warnings have no row); with
--sitemap-drift, a row per orphan ("orphan") and unlisted page ("unlisted") after them."""

from __future__ import annotations

import csv
import io

from ..summary import Report
from .base import WholeReport
from .common import by_url, printable, sorted_refs
from .drift import drift_rows

COLUMNS = (
    "url", "status", "code", "reason", "redirects", "duration",
    "source", "line", "column", "element", "attribute", "text",
)  # fmt: skip


class Csv(WholeReport):
    """Rows sorted by URL, then referrer; a link with no referrer gets one row with empty source cells."""

    def finish(self, report: Report) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        # a "fix" column, the URL to use instead, when there are links to fix (--suggest-fixes, --suggest-https)
        fix = {s.url: s.replacement for s in report.suggestions}
        writer.writerow(COLUMNS + (("fix",) if fix else ()))
        for result in by_url(report.results):
            head = [
                cell(result.url),
                result.status.value,
                "" if result.code is None else str(result.code),
                cell(result.reason),
                cell(" ".join(result.redirects)),
                f"{result.elapsed:.3f}",
            ]
            tail = [cell(fix.get(result.url, ""))] if fix else []
            refs = sorted_refs(result.references)
            if not refs:
                writer.writerow(head + [""] * 6 + tail)
            for ref in refs:
                where = [cell(ref.source), str(ref.line), str(ref.column)]
                writer.writerow(head + where + [cell(ref.element), cell(ref.attribute), cell(ref.text)] + tail)
        if report.sitemap_drift is not None:  # --sitemap-drift
            for status, url in drift_rows(report.sitemap_drift):
                writer.writerow([cell(url), status] + [""] * (11 if fix else 10))
        return out.getvalue()


def cell(s: str) -> str:
    """Text from the web, defused: control characters escaped (a tab or CR can no longer lead), and a
    leading = + - @ quoted, which would make a spreadsheet run it as a formula."""
    s = printable(s)
    return "'" + s if s[:1] in ("=", "+", "-", "@") else s
