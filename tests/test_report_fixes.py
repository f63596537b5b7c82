"""Links to fix and links skipped as unchanged, in every report format: shown when there are any, valid against
each format's schema, and absent (the output as before) when there are none."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import pytest

from linkhound.report import FORMATS, reporter_for
from linkhound.suggestions import HTTPS, MOVED, Suggestion
from linkhound.summary import Report
from report_fixtures import HOSTILE_URL, REPORT, md, ref
from test_report_schemas import JUNIT_XSD, SARIF_SCHEMA, validator

MOVED_FROM, MOVED_TO = "http://old.test/a", "https://new.test/a?x=1&y=2"
FIXES = (
    Suggestion(MOVED_FROM, MOVED_TO, MOVED, "moved permanently (301)",
               (md("docs/a.md", 4, 7, MOVED_FROM + "#part"), ref("https://example.test/page", 9, 3))),
    Suggestion("http://plain.test/", "https://plain.test/", HTTPS, "https:// answers the same",
               (md("README.md", 2, 1, "http://plain.test/"),)),
    Suggestion(HOSTILE_URL, HOSTILE_URL + "x", MOVED, "moved permanently (308)", ()),
)
WITH_FIXES = dataclasses.replace(REPORT, suggestions=FIXES,
                                 summary=dataclasses.replace(REPORT.summary, unchanged=12))


def finish(fmt: str, report: Report = WITH_FIXES) -> str:
    return "".join(reporter_for(fmt).chunks(report))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_shows_the_links_to_fix(fmt: str) -> None:
    out = finish(fmt)
    if fmt in ("html", "junit"):  # escaped, the hostile URL too
        assert MOVED_TO.replace("&", "&amp;") in out and "<script>alert(1)" not in out
    elif fmt == "csv":  # a column of the rows of results: the fixture has a result for the hostile URL only
        assert f"{HOSTILE_URL}x" in {row[-1] for row in csv.reader(io.StringIO(out))}
    else:
        assert MOVED_TO in out or json.dumps(MOVED_TO) in out, fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_suggestions_or_changed_since_every_format_reads_as_before(fmt: str) -> None:
    out = finish(fmt, REPORT)
    assert "unchanged" not in out and "suggestion" not in out and "to fix" not in out.lower()


@pytest.mark.parametrize("fmt", ["compact", "detailed", "github", "markdown", "html"])
def test_the_summary_line_counts_links_skipped_as_unchanged(fmt: str) -> None:
    assert "12 links skipped as unchanged" in finish(fmt)


def test_json_and_jsonl_carry_suggestions_and_the_unchanged_count_by_the_schema() -> None:
    doc = json.loads(finish("json"))
    validator().validate(doc)
    assert doc["summary"]["unchanged"] == 12
    first = doc["suggestions"][0]
    assert (first["url"], first["replacement"], first["kind"]) == (FIXES[0].url, MOVED_TO, "moved")
    assert [r["source"] for r in first["references"]] == ["docs/a.md", "https://example.test/page"]
    lines = [json.loads(line) for line in reporter_for("jsonl").finish(WITH_FIXES).splitlines()]
    *fixes, summary = lines
    assert [f["type"] for f in fixes] == ["suggestion"] * 3 and summary["unchanged"] == 12
    for line in fixes:
        validator("jsonl_suggestion").validate(line)
    validator("jsonl_summary").validate(summary)


def test_sarif_has_a_note_with_a_fix_for_each_use_in_a_file() -> None:
    import jsonschema

    doc = json.loads(finish("sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    run = doc["runs"][0]
    notes = [r for r in run["results"] if r["level"] == "note"]
    assert {r["ruleId"] for r in notes} == {"link-moved", "link-https"}
    in_file = next(r for r in notes if r["locations"][0]["physicalLocation"]["artifactLocation"].get("uri")
                   == "docs/a.md")
    (change,) = in_file["fixes"][0]["artifactChanges"]
    (replacement,) = change["replacements"]
    assert replacement["deletedRegion"] == {"startLine": 4, "startColumn": 7,
                                            "endColumn": 7 + len(MOVED_FROM + "#part")}
    assert replacement["insertedContent"]["text"] == MOVED_TO + "#part"
    rules = run["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])


def test_junit_lists_the_links_to_fix_in_a_suite_of_their_own() -> None:
    from lxml import etree

    doc = etree.fromstring(finish("junit").encode("utf-8"))
    JUNIT_XSD.assertValid(doc)
    (suite,) = doc.findall("testsuite[@name='(links to fix)']")
    assert MOVED_TO in suite.findtext("system-out") and suite.get("failures") == "0"


def test_csv_has_a_fix_column_when_there_are_links_to_fix() -> None:
    rows = list(csv.reader(io.StringIO(finish("csv"))))
    assert rows[0][-1] == "fix"
    assert {row[-1] for row in rows[1:] if row[0] != HOSTILE_URL} == {""}
    with_result = dataclasses.replace(WITH_FIXES, suggestions=(
        Suggestion(REPORT.results[0].url, "https://example.test/new", MOVED, "moved permanently (301)", ()),))
    rows = list(csv.reader(io.StringIO(finish("csv", with_result))))
    assert [row[-1] for row in rows if row[0] == REPORT.results[0].url] == ["https://example.test/new"]


def test_github_annotates_each_use_in_a_file_with_a_notice() -> None:
    out = finish("github")
    assert "::notice file=docs/a.md,line=4,col=7,title=Link moved::moved permanently (301): use " in out
    assert "in https://example.test/page:9:3" in out
