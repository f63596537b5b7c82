"""The jsonl format: a JSON object per result the moment it completes, then one summary object."""

from __future__ import annotations

from collections.abc import Iterator

from ..summary import Report
from ..types import Result
from .drift import drift_record
from .fixes import suggestion_records
from .records import SCHEMA_VERSION, dumps, result_record, summary_record


class JsonLines:
    """Streams: each line stands alone, so a pipe or a huge crawl never waits for the end."""

    streams = True

    def __init__(self, *, summary_only: bool = False) -> None:
        self.summary_only = summary_only

    def result(self, result: Result) -> str | None:
        if self.summary_only:
            return None
        return dumps({"type": "result"} | result_record(result)) + "\n"

    def ahead(self, results: list[Result]) -> None:
        return None  # (each was written as it completed)

    def finish(self, report: Report) -> str:
        line = {"type": "summary", "schema_version": SCHEMA_VERSION} | summary_record(report.summary)
        drift = "" if report.sitemap_drift is None else dumps({"type": "sitemap_drift"}  # --sitemap-drift
                                                              | drift_record(report.sitemap_drift)) + "\n"
        fixes = "" if self.summary_only else "".join(
            dumps({"type": "suggestion"} | record) + "\n" for record in suggestion_records(report))
        return drift + fixes + dumps(line) + "\n"

    def chunks(self, report: Report) -> Iterator[str]:
        yield self.finish(report)
