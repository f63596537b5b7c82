"""--sitemap-drift in every report format: each lists the orphans, the unlisted pages, the redirected entries and
the sitemaps not read; the machine formats validate against their schemas; hostile URLs stay inert."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import jsonschema
import pytest
from lxml import etree

from linkhound.report import FORMATS, reporter_for
from linkhound.summary import SitemapDrift
from report_fixtures import HOSTILE_PAGE, REPORT

ROOT = Path(__file__).parent.parent
REPORT_SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text(encoding="utf-8"))
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
JUNIT_XSD = etree.XMLSchema(etree.parse(str(ROOT / "tests" / "schemas" / "junit-10.xsd")))

ORPHAN = "https://example.test/forgotten"
UNLISTED = "https://example.test/new-page"
DRIFT = SitemapDrift(
    sitemaps=("https://example.test/sitemap.xml",),
    listed=12,
    orphans=(ORPHAN, HOSTILE_PAGE),
    unlisted=(UNLISTED,),
    redirected=(("https://example.test/old", "https://example.test/new"),),
    problems=("https://example.test/sitemap-2.xml: answered 404",),
)
DRIFTING = dataclasses.replace(REPORT, sitemap_drift=DRIFT)


def finish(fmt: str, **options: bool) -> str:
    return reporter_for(fmt, **options).finish(DRIFTING)


def validator(definition: str | None = None) -> jsonschema.Draft202012Validator:
    defs = REPORT_SCHEMA["$defs"]
    schema = REPORT_SCHEMA if definition is None else {"$ref": f"#/$defs/{definition}", "$defs": defs}
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_names_each_orphan_unlisted_page_and_redirect(fmt: str) -> None:
    out = finish(fmt)
    for url in (ORPHAN, UNLISTED, "https://example.test/old"):
        assert url in out, fmt
    if fmt not in ("csv", "sarif"):  # a row, a result per page: no room for the rest
        assert "sitemap-2.xml" in out and "https://example.test/new" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_drift_section_when_off(fmt: str) -> None:
    out = reporter_for(fmt).finish(REPORT)
    assert "drift" not in out.lower() and ORPHAN not in out


@pytest.mark.parametrize("summary_only", [False, True])
def test_json_has_the_drift_and_validates(summary_only: bool) -> None:
    doc = json.loads(finish("json", summary_only=summary_only))
    validator().validate(doc)
    assert doc["sitemap_drift"] == {
        "sitemaps": ["https://example.test/sitemap.xml"],
        "listed": 12,
        "orphans": [ORPHAN, HOSTILE_PAGE],
        "unlisted": [UNLISTED],
        "redirected": [{"url": "https://example.test/old", "to": "https://example.test/new"}],
        "problems": ["https://example.test/sitemap-2.xml: answered 404"],
    }
    doc["sitemap_drift"]["orphans"] = [1]
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(doc)


def test_jsonl_writes_a_drift_line_before_the_summary() -> None:
    drift, summary = (json.loads(line) for line in finish("jsonl").splitlines())
    validator("jsonl_sitemap_drift").validate(drift)
    validator("jsonl_summary").validate(summary)
    assert drift["type"] == "sitemap_drift" and drift["orphans"] == [ORPHAN, HOSTILE_PAGE]


def test_sarif_notes_validate_and_keep_rule_indexes() -> None:
    doc = json.loads(finish("sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    run = doc["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    notes = [r for r in run["results"] if r["level"] == "note"]
    assert [(rules[r["ruleIndex"]], r["properties"]["url"]) for r in notes] == [
        ("orphan-page", ORPHAN), ("orphan-page", HOSTILE_PAGE), ("page-not-in-sitemap", UNLISTED)]
    plain = json.loads(reporter_for("sarif").finish(REPORT))["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in plain] == rules[: len(plain)]  # the status rules keep their indexes


def test_junit_validates_and_the_drift_fails_nothing() -> None:
    out = finish("junit")
    JUNIT_XSD.assertValid(etree.fromstring(out.encode()))
    plain = etree.fromstring(reporter_for("junit").finish(REPORT).encode())
    assert etree.fromstring(out.encode()).get("failures") == plain.get("failures")
    assert "(sitemap drift)" in out


def test_csv_rows_have_their_own_status() -> None:
    rows = list(csv.DictReader(io.StringIO(finish("csv"))))
    drift = [(r["status"], r["url"]) for r in rows if r["status"] in ("orphan", "unlisted")]
    assert drift == [("orphan", ORPHAN), ("orphan", HOSTILE_PAGE), ("unlisted", UNLISTED)]


def test_hostile_urls_stay_inert() -> None:
    assert "<img src=x" not in finish("html")
    assert "`" + HOSTILE_PAGE + "`" in finish("markdown")


@pytest.mark.parametrize("fmt", ["compact", "detailed", "markdown", "github", "html"])
def test_summary_only_keeps_the_headline(fmt: str) -> None:
    out = finish(fmt, summary_only=True)
    assert "12 URLs listed in 1 sitemap; 2 orphans, 1 unlisted, 1 redirected" in out
    assert UNLISTED not in out
