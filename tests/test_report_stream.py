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


def test_streamed_json_writes_a_result_with_thousands_of_references_in_pieces() -> None:
    import dataclasses

    from linkhound.types import Reference

    base = REPORT.results[0]
    refs = tuple(
        Reference(f"https://example.org/p{i}", i % 90 + 1, i % 7 + 1, "a", "href", "/nav") for i in range(1500)
    )
    nav = dataclasses.replace(base, url="https://example.org/nav", references=refs)
    small = tuple(dataclasses.replace(base, url=f"https://example.org/s{i:03}") for i in range(300))
    lonely = dataclasses.replace(base, url="https://example.org/z", references=refs[:513])  # just over a batch
    report = Report((*small, nav, lonely), REPORT.summary, REPORT.pages)
    pieces = list(reporter_for("json").chunks(report))
    assert "".join(pieces) == whole(report)
    assert max(len(p) for p in pieces) < len("".join(pieces)) / 3  # the big record came out in several pieces
