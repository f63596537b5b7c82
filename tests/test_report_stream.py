"""The json report written in pieces is the same text as the whole document dumped at once."""

from __future__ import annotations

from linkhound.report import reporter_for
from linkhound.report.common import by_url, tool_version
from linkhound.report.records import SCHEMA_VERSION, dumps, page_record, result_record, summary_record
from linkhound.summary import Report
from report_fixtures import REPORT


def whole(report: Report) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "linkhound", "version": tool_version()},
        "summary": summary_record(report.summary),
        "results": [result_record(r) for r in by_url(report.results)],
        "pages": [page_record(p) for p in sorted(report.pages, key=lambda p: (p.depth, p.url))],
    }
    return dumps(doc, pretty=True) + "\n"


def test_streamed_json_equals_the_whole_document() -> None:
    report = REPORT
    streamed = "".join(reporter_for("json").chunks(report))
    assert streamed == whole(report)


def test_streamed_json_with_nothing_in_it() -> None:
    report = REPORT
    empty = Report((), report.summary, ())
    assert "".join(reporter_for("json").chunks(empty)) == whole(empty)


def test_streamed_json_across_many_batches() -> None:
    import dataclasses

    from linkhound.types import Page

    base = REPORT.results[0]
    results = tuple(dataclasses.replace(base, url=f"https://example.org/p{i:04}") for i in range(600))
    pages = tuple(Page(f"https://example.org/p{i:04}", i % 3, 5, True) for i in range(300))
    report = Report(results, REPORT.summary, pages)  # 600 results and 300 pages: more than one batch of each
    assert "".join(reporter_for("json").chunks(report)) == whole(report)
