"""The json format: one document with the summary and a record per unique URL (docs/report-schema.json)."""

from __future__ import annotations

from ..summary import Report
from . import common
from .base import WholeReport
from .common import by_url
from .records import SCHEMA_VERSION, Record, dumps, page_record, result_record, summary_record


class JsonReport(WholeReport):
    """Results sorted by URL and pages by depth, so two runs over the same links diff cleanly."""

    def __init__(self, *, summary_only: bool = False) -> None:
        self.summary_only = summary_only

    def finish(self, report: Report) -> str:
        doc: Record = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "linkhound", "version": common.tool_version()},
            "summary": summary_record(report.summary),
        }
        if not self.summary_only:
            doc["results"] = [result_record(r) for r in by_url(report.results)]
            doc["pages"] = [page_record(p) for p in sorted(report.pages, key=lambda p: (p.depth, p.url))]
        return dumps(doc, pretty=True) + "\n"
