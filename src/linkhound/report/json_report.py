"""The json format: one document with the summary and a record per unique URL (docs/report-schema.json)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..summary import Report
from . import common
from .base import WholeReport
from .common import by_url
from .records import SCHEMA_VERSION, Record, dumps, page_record, result_record, summary_record

# Records serialised per dumps() call, counting each record's references too: far fewer calls than one per
# record, and memory stays bounded (a nav link's record alone can hold 10,000 references).
_BATCH = 512


class JsonReport(WholeReport):
    """Results sorted by URL and pages by depth, so two runs over the same links diff cleanly."""

    def __init__(self, *, summary_only: bool = False) -> None:
        self.summary_only = summary_only

    def chunks(self, report: Report) -> Iterator[str]:
        """The document a record at a time: the same text as one dumps() of the whole, in bounded memory."""
        doc: Record = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "linkhound", "version": common.tool_version()},
            "summary": summary_record(report.summary),
        }
        if self.summary_only:
            yield dumps(doc, pretty=True) + "\n"
            return
        head = dumps(doc, pretty=True)
        yield head[: head.rindex("\n}")] + ","
        yield from _array("results", (result_record(r) for r in by_url(report.results)), last=False)
        pages = sorted(report.pages, key=lambda p: (p.depth, p.url))
        yield from _array("pages", (page_record(p) for p in pages), last=True)
        yield "\n}\n"


def _array(name: str, records: Iterable[Record], last: bool) -> Iterator[str]:
    """'"name": [...]' as dumps(..., pretty=True) writes it one level down, a batch of records at a time."""
    yield f'\n  "{name}": ['
    empty = True
    for batch in _batches(records):
        text = dumps(batch, pretty=True)  # "[\n  {...},\n  {...}\n]"
        yield ("" if empty else ",") + text[1 : -2].replace("\n", "\n  ")
        empty = False
    yield ("]" if empty else "\n  ]") + ("" if last else ",")


def _batches(records: Iterable[Record]) -> Iterator[list[Record]]:
    batch: list[Record] = []
    weight = 0
    for record in records:
        batch.append(record)
        weight += 1 + len(record.get("references", ()))
        if weight >= _BATCH:
            yield batch
            batch, weight = [], 0
    if batch:
        yield batch
