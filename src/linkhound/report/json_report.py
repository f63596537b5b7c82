"""The json format: one document with the summary and a record per unique URL (docs/report-schema.json)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from ..summary import Report
from ..types import Result
from . import common
from .base import WholeReport
from .common import by_url, references_in_memory, sorted_rows, weight
from .drift import drift_record
from .fixes import suggestion_records
from .forked import in_two
from .records import (
    SCHEMA_VERSION,
    Record,
    dumps,
    elements_text,
    page_record,
    reference_records,
    result_record,
    summary_record,
)

# Records serialised per dumps() call, counting each record's references too: far fewer calls than one per
# record, and memory stays bounded (a nav link's record alone can hold 10,000 references).
_BATCH = 512
# References (and results) in a report past which a forked child makes half its text: below, the fork and the
# file the child writes cost about what the half saves (a reference's record is 1.5-3 us of text to make)
_FORK_AT = 20_000
_RECORD_START = "\n    {"  # how each record of the results array starts, one level down
_NEXT_RECORD = "," + _RECORD_START
T = TypeVar("T")


class JsonReport(WholeReport):
    """Results sorted by URL and pages by depth, so two runs over the same links diff cleanly."""

    def __init__(self, *, summary_only: bool = False, fork: bool = True) -> None:
        self.summary_only = summary_only
        self.fork = fork  # a forked child may make half of a big report
        self._made: dict[int, str] = {}  # id(result) -> its text, made ahead (for a result in _kept)
        self._kept: list[Result] = []  # the results made ahead: alive, so no other object takes one's id

    def ahead(self, results: list[Result]) -> None:
        """Each result's text, made now (the run is waiting on answers): the end writes it for the very same
        object. One dumps() per batch, cut where a record starts (a line of "    {": only a record starts
        there, as deeper lines are indented further and JSON strings hold no raw newline)."""
        if self.summary_only:
            return
        light = [r for r in results if len(r.references) <= _BATCH]  # (a big one is written in pieces, at the end)
        made = self._made
        for batch in _batches(light, weight):
            text = elements_text([result_record(r) for r in batch], 1)
            pieces = text.split(_NEXT_RECORD)
            if len(pieces) != len(batch):  # (not expected)
                continue
            made[id(batch[0])] = pieces[0]
            for r, piece in zip(batch[1:], pieces[1:], strict=True):
                made[id(r)] = _RECORD_START + piece
            self._kept += batch

    def chunks(self, report: Report) -> Iterator[str]:
        """The document in pieces: the same text as one dumps() of the whole, in bounded memory (a record with
        thousands of references is itself written a batch of references at a time)."""
        doc: Record = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "linkhound", "version": common.tool_version()},
            "summary": summary_record(report.summary),
        }
        if report.sitemap_drift is not None:  # --sitemap-drift
            doc["sitemap_drift"] = drift_record(report.sitemap_drift)
        if self.summary_only:
            yield dumps(doc, pretty=True) + "\n"
            return
        head = dumps(doc, pretty=True)
        yield head[: head.rindex("\n}")] + ","
        yield from _array("results", _all_results(report.results, _FORK_AT if self.fork else None, self._made),
                          last=False)
        pages = sorted(report.pages, key=lambda p: (p.depth, p.url))
        suggestions = suggestion_records(report)  # (only when there are: a run that didn't ask reads the same)
        yield from _array("pages", _records(page_record(p) for p in pages), last=not suggestions)
        if suggestions:
            yield from _array("suggestions", _records(suggestions), last=True)
        yield "\n}\n"


# Each function below yields an array's elements as dumps(the_document, pretty=True) writes them one level (or
# more) down, without the brackets, in pieces whose concatenation is that text: "\n    {...},\n    {...}". Each
# piece is dumped already nested that deep (elements_text), not indented afterwards: a crawl's report is a hundred
# MB of text, and every pass over it shows.


def _array(name: str, pieces: Iterable[str], last: bool) -> Iterator[str]:
    """'"name": [...]' one level down in the document."""
    yield f'\n  "{name}": ['
    empty = True
    for piece in pieces:
        yield piece
        empty = False
    yield ("]" if empty else "\n  ]") + ("" if last else ",")


def _records(records: Iterable[Record]) -> Iterator[str]:
    """Small records, _BATCH to a dumps() call."""
    comma = ""
    for batch in _batches(records, lambda record: 1):
        yield comma + elements_text(batch, 1)
        comma = ","


def _all_results(results: Sequence[Result], fork_at: int | None, made: dict[int, str]) -> Iterator[str]:
    """_results() of every result, by URL. A crawl's (more than _FORK_AT references, all held in memory) is
    made in two halves of about as many references each, the second by a forked child on the other core. If
    most were made ahead, those are written as made and the rest made here."""
    ordered = by_url(results)
    if made and 2 * len(made) >= len(ordered):
        return _made_or_new(ordered, made)
    if not references_in_memory(ordered):
        return _results(ordered)  # (references read from a file, or from Redis: not through a fork)
    return in_two(ordered, weight, lambda half, first: _results(half, "" if first else ","), fork_at)


def _results(results: Iterable[Result], comma: str = "") -> Iterator[str]:
    """Result records in batches weighed by their references; a result with more than _BATCH references is
    written alone, its references a batch at a time, so no record is ever held whole. comma: what goes before
    the first (after another's)."""
    for batch in _batches(results, weight):
        if len(batch) == 1 and len(batch[0].references) > _BATCH:
            yield from _big_result(batch[0], comma)
        else:
            yield comma + elements_text([result_record(r) for r in batch], 1)
        comma = ","


def _made_or_new(results: Sequence[Result], made: dict[int, str]) -> Iterator[str]:
    """The records of results: the text made ahead of each result that has one (by id: a result made ahead is
    kept alive, so no other object can have its id meanwhile), _results() of each of the few others."""
    texts = list(map(made.get, map(id, results)))
    comma = ""
    at = 0
    for end in [*(k for k, text in enumerate(texts) if text is None), len(texts)]:
        for start in range(at, end, _BATCH):
            yield comma + ",".join(texts[start : min(end, start + _BATCH)])  # type: ignore[arg-type]
            comma = ","
        if end < len(texts):
            yield from _results(results[end : end + 1], comma)
            comma = ","
        at = end + 1


def _big_result(result: Result, comma: str) -> Iterator[str]:
    record = result_record(dataclasses.replace(result, references=()))
    del record["references"]  # the last key: written below, piece by piece
    head = dumps(record, pretty=True)[: -len("\n}")]
    yield comma + "\n    " + head.replace("\n", "\n    ") + ',\n      "references": ['
    refs = sorted_rows(result.references)
    for i in range(0, len(refs), _BATCH):
        yield ("," if i else "") + elements_text(reference_records(refs[i : i + _BATCH]), 3)
    yield "\n      ]\n    }"


def _batches(items: Iterable[T], weight: Callable[[T], int]) -> Iterator[list[T]]:
    batch: list[T] = []
    total = 0
    for item in items:
        w = weight(item)
        if batch and total + w > _BATCH:
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += w
    if batch:
        yield batch
