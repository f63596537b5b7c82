"""The json, jsonl, sarif and junit formats validate against their published schemas."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest
from lxml import etree

from linkhound.report import reporter_for
from linkhound.report.records import dumps, stdlib_dumps
from linkhound.summary import Report, summarize
from report_fixtures import REPORT

ROOT = Path(__file__).parent.parent
REPORT_SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text(encoding="utf-8"))
SARIF_SCHEMA = json.loads(
    (ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)
JUNIT_XSD = etree.XMLSchema(etree.parse(str(ROOT / "tests" / "schemas" / "junit-10.xsd")))
EMPTY = Report(results=(), summary=summarize((), pages=0, elapsed=0.0))


def finish(fmt: str, report: Report = REPORT, **options: bool) -> str:
    return reporter_for(fmt, **options).finish(report)


def validator(definition: str | None = None) -> jsonschema.Draft202012Validator:
    schema = (
        REPORT_SCHEMA
        if definition is None
        else {"$ref": f"#/$defs/{definition}"} | {"$defs": REPORT_SCHEMA["$defs"]}
    )
    jsonschema.Draft202012Validator.check_schema(REPORT_SCHEMA)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("report", [REPORT, EMPTY], ids=["fixture", "empty"])
@pytest.mark.parametrize("summary_only", [False, True])
def test_json_report_validates_against_docs_schema(report: Report, summary_only: bool) -> None:
    doc = json.loads(finish("json", report, summary_only=summary_only))
    validator().validate(doc)
    assert ("results" in doc) is not summary_only


def test_json_report_has_every_result_with_every_reference() -> None:
    doc = json.loads(finish("json"))
    assert len(doc["results"]) == len(REPORT.results)
    missing = next(r for r in doc["results"] if r["url"] == "https://example.test/missing")
    assert [(r["source"], r["line"], r["column"]) for r in missing["references"]] == [
        ("docs/a.md", 3, 5),
        ("docs/a.md", 10, 1),
        ("docs/b.md", 2, 7),
    ]


def test_json_schema_rejects_unknown_status() -> None:
    doc = json.loads(finish("json"))
    doc["results"][0]["status"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(doc)


def test_json_schema_requires_warnings_as_strings() -> None:
    doc = json.loads(finish("json"))
    assert doc["summary"]["warnings"]
    doc["summary"]["warnings"] = [1]
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(doc)
    del doc["summary"]["warnings"]
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(doc)


def test_jsonl_lines_validate_against_docs_schema() -> None:
    reporter = reporter_for("jsonl")
    lines = [reporter.result(r) for r in REPORT.results]
    *results, summary = [json.loads(line) for line in [*lines, reporter.finish(REPORT)] if line]
    assert len(results) == len(REPORT.results)
    for line in results:
        validator("jsonl_result").validate(line)
    validator("jsonl_summary").validate(summary)


def test_json_text_is_the_same_with_and_without_orjson() -> None:
    doc = json.loads(finish("json"))
    assert dumps(doc, pretty=True) == stdlib_dumps(doc, pretty=True)
    assert dumps(doc) == stdlib_dumps(doc)


@pytest.mark.parametrize("report", [REPORT, EMPTY], ids=["fixture", "empty"])
def test_sarif_validates_against_sarif_2_1_0_schema(report: Report) -> None:
    doc = json.loads(finish("sarif", report))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    assert doc["version"] == "2.1.0"


def _interrupted(report: Report) -> Report:
    return dataclasses.replace(report, summary=dataclasses.replace(report.summary, interrupted=True))


@pytest.mark.parametrize("report", [REPORT, EMPTY], ids=["fixture", "empty"])
def test_an_interrupted_runs_sarif_says_its_execution_did_not_succeed(report: Report) -> None:
    # A part of the results must not read as the whole: code scanning would close the alerts of links not checked.
    doc = json.loads(finish("sarif", _interrupted(report)))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    (invocation,) = doc["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    first = invocation["toolExecutionNotifications"][0]
    assert first["level"] == "error" and "interrupted" in first["message"]["text"]
    assert len(invocation["toolExecutionNotifications"]) == 1 + len(report.summary.warnings)


@pytest.mark.parametrize("report", [REPORT, EMPTY], ids=["fixture", "empty"])
def test_an_interrupted_runs_junit_says_so_in_system_err(report: Report) -> None:
    doc = etree.fromstring(finish("junit", _interrupted(report)).encode("utf-8"))
    JUNIT_XSD.assertValid(doc)
    (err,) = doc.findall("testsuite[@name='(warnings)']/system-err")
    assert err.text.startswith("error: the run was interrupted")
    assert err.text.count("\nwarning: ") == len(report.summary.warnings)


def test_sarif_has_regions_for_links_in_local_files() -> None:
    results = json.loads(finish("sarif"))["runs"][0]["results"]
    located = {
        (
            loc["physicalLocation"]["artifactLocation"]["uri"],
            loc["physicalLocation"].get("region", {}).get("startLine"),
        )
        for r in results
        for loc in r.get("locations", [])
    }
    assert ("docs/a.md", 3) in located and ("docs/b.md", 2) in located
    first = next(r for r in results if r["ruleId"] == "broken-link")
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "docs/a.md", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 5},
    }
    assert {r["level"] for r in results if r["ruleId"] == "link-blocked"} == {"warning"}


@pytest.mark.parametrize("report", [REPORT, EMPTY], ids=["fixture", "empty"])
def test_junit_validates_against_junit_xsd(report: Report) -> None:
    doc = etree.fromstring(finish("junit", report).encode("utf-8"))
    JUNIT_XSD.assertValid(doc)


def test_junit_has_a_suite_per_source_and_a_failure_per_broken_reference() -> None:
    doc = etree.fromstring(finish("junit").encode("utf-8"))
    suites = {s.get("name"): s for s in doc.iter("testsuite")}
    assert {"docs/a.md", "docs/b.md", "https://example.test/", "(input)"} <= suites.keys()
    assert suites["docs/a.md"].get("failures") == "3"
    assert len(doc.findall(".//failure")) == int(doc.get("failures")) == 8
    assert doc.get("tests") == str(REPORT.summary.total)


# --soft-404 and --tls-expiry: a soft 404 among the results, and the certificates of the hosts
def _soft_404_and_certificates() -> Report:
    from dataclasses import replace

    from linkhound import Status
    from linkhound.types import Certificate, Reference, Result

    soft = Result("https://example.test/old", Status.SOFT_404, 200, "soft 404: like https://example.test/lh1",
                  content_type="text/html", references=(Reference("docs/a.md", 4, 1, "markdown", "inline", "/old"),))
    results = (*REPORT.results, soft)
    certificates = (Certificate("example.test", "2026-12-10T12:00:00Z", 9, True),
                    Certificate("other.test:8443", "2027-06-01T00:00:00Z", 182, False))
    summary = replace(summarize(results, pages=8, elapsed=1.0), certificates=certificates, certificates_fail=True)
    return Report(results, summary, REPORT.pages)


SOFT_AND_CERTS = _soft_404_and_certificates()


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sarif", "junit"])
def test_soft_404s_and_certificates_validate(fmt: str) -> None:
    text = finish(fmt, SOFT_AND_CERTS)
    if fmt == "json":
        doc = json.loads(text)
        validator().validate(doc)
        assert doc["summary"]["by_status"]["soft_404"] == 1 and doc["summary"]["success"] is False
        assert [c["host"] for c in doc["summary"]["certificates"]] == ["example.test", "other.test:8443"]
    elif fmt == "jsonl":
        validator("jsonl_summary").validate(json.loads(text))
    elif fmt == "sarif":
        doc = json.loads(text)
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
        assert any(r["ruleId"] == "link-soft-404" for r in doc["runs"][0]["results"])
    else:
        JUNIT_XSD.assertValid(etree.fromstring(text.encode("utf-8")))
        assert 'type="soft_404"' in text and 'type="tls_expiry"' in text
