"""The csv format: a row per link and referrer, for spreadsheets and scripts (run warnings have no row); with
--sitemap-drift, a row per orphan ("orphan") and unlisted page ("unlisted") after them."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence

from ..summary import Report
from ..types import Result
from .base import WholeReport
from .common import by_url, printable, references_in_memory, sorted_refs, weight
from .drift import drift_rows
from .forked import in_two

COLUMNS = (
    "url", "status", "code", "reason", "redirects", "duration",
    "source", "line", "column", "element", "attribute", "text",
)  # fmt: skip
_BATCH = 2_000  # rows written to text at a time
_FORK_AT = 20_000  # rows past which a forked child writes the second half (forked.in_two)


class Csv(WholeReport):
    """Rows sorted by URL, then referrer; a link with no referrer gets one row with empty source cells. A
    crawl's (a row per link occurrence: half a million for 10,000 pages) is written a batch of results at a
    time, the second half of them by a forked child when the references are held in memory."""

    def __init__(self, *, fork: bool = True) -> None:
        self.fork = fork  # a forked child may make half of a big report

    def chunks(self, report: Report) -> Iterator[str]:
        # a "fix" column, the URL to use instead, when there are links to fix (--suggest-fixes, --suggest-https)
        fix = {s.url: s.replacement for s in report.suggestions}
        yield _text([COLUMNS + (("fix",) if fix else ())])
        results = by_url(report.results)
        if references_in_memory(results):
            yield from in_two(results, weight, lambda half, first: _rows(half, fix), _FORK_AT if self.fork else None)
        else:
            yield from _rows(results, fix)
        if report.sitemap_drift is not None:  # --sitemap-drift
            yield _text([cell(url), status] + [""] * (11 if fix else 10)
                        for status, url in drift_rows(report.sitemap_drift))


def _rows(results: Iterable[Result], fix: dict[str, str]) -> Iterator[str]:
    """The rows of results, as text a batch of _BATCH rows at a time."""
    rows: list[list[str]] = []
    cells: dict[str, str] = {}  # each source, element and attribute's cell, made once
    for result in results:
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
            rows.append(head + [""] * 6 + tail)
        for source, line, column, element, attribute, text in refs:
            where = [cells.get(source) or cells.setdefault(source, cell(source)), str(line), str(column),
                     cells.get(element) or cells.setdefault(element, cell(element)),
                     cells.get(attribute) or cells.setdefault(attribute, cell(attribute)), cell(text)]
            rows.append(head + where + tail)
        if len(rows) >= _BATCH:
            yield _text(rows)
            rows = []
    if rows:
        yield _text(rows)


def _text(rows: Iterable[Sequence[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def cell(s: str) -> str:
    """Text from the web, defused: control characters escaped (a tab or CR can no longer lead), and a
    leading = + - @ quoted, which would make a spreadsheet run it as a formula."""
    s = printable(s)
    return "'" + s if s[:1] in ("=", "+", "-", "@") else s
