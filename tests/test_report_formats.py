"""Behaviour of the reporters beyond their golden files: options, streaming, escaping, edge cases."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import sys
from base64 import b64encode
from hashlib import sha256
from pathlib import Path
from xml.etree import ElementTree

import pytest

import linkhound
from linkhound.exceptions import UsageError
from linkhound.report import FORMATS, reporter_for, wants_color
from linkhound.report.common import describe, duration, printable, summary_line
from linkhound.report.html import script_json
from linkhound.report.html_assets import JS
from linkhound.report.markdown import code, text
from linkhound.report.site_tree import site_tree
from linkhound.status import Status
from linkhound.summary import Report, summarize
from linkhound.types import Certificate, Page, Reference, Result
from report_fixtures import HOSTILE_URL, REPORT, RESULTS, md

EMPTY = Report(results=(), summary=summarize((), pages=0, elapsed=0.0))
ANSI = re.compile("\x1b\\[")


def test_formats_are_the_ten_documented_ones() -> None:
    assert FORMATS == (
        "compact",
        "detailed",
        "json",
        "jsonl",
        "markdown",
        "junit",
        "sarif",
        "github",
        "csv",
        "html",
    )


def test_reporter_for_unknown_format_raises_usage_error_listing_formats() -> None:
    with pytest.raises(UsageError, match="unknown format 'yaml'.*compact, detailed, json"):
        reporter_for("yaml")


@pytest.mark.parametrize("fmt", ["junit", "sarif", "csv"])
def test_summary_only_is_refused_by_per_link_formats(fmt: str) -> None:
    with pytest.raises(UsageError, match=f"--summary-only does not apply to --format {fmt}"):
        reporter_for(fmt, summary_only=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_an_empty_run(fmt: str) -> None:
    out = reporter_for(fmt).finish(EMPTY)
    assert out.endswith("\n")


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "jsonl"])
def test_only_jsonl_writes_while_results_arrive(fmt: str) -> None:
    reporter = reporter_for(fmt)
    assert all(reporter.result(r) is None for r in RESULTS)


def test_jsonl_writes_one_line_per_result_as_it_completes() -> None:
    reporter = reporter_for("jsonl")
    line = reporter.result(RESULTS[1])
    assert line is not None and line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line)["url"] == "https://example.test/missing"
    assert json.loads(reporter.finish(REPORT))["type"] == "summary"


def test_jsonl_summary_only_writes_only_the_summary() -> None:
    reporter = reporter_for("jsonl", summary_only=True)
    assert reporter.result(RESULTS[0]) is None
    assert json.loads(reporter.finish(REPORT))["failed"] == 5


@pytest.mark.parametrize("fmt", ["compact", "detailed", "markdown", "github"])
def test_summary_only_prints_the_summary_and_no_link(fmt: str) -> None:
    out = reporter_for(fmt, summary_only=True).finish(REPORT)
    assert "19 links (16 unique)" in out
    assert "https://example.test/missing" not in out


def test_html_summary_only_has_charts_but_no_table_or_script() -> None:
    out = reporter_for("html", summary_only=True).finish(REPORT)
    assert "Results by host" in out and 'id="results"' not in out and "<script" not in out


def test_compact_lists_only_problems_unless_verbose() -> None:
    quiet = reporter_for("compact").finish(REPORT)
    loud = reporter_for("compact", verbose=True).finish(REPORT)
    assert "https://example.test/about" not in quiet and "https://example.test/about" in loud
    assert "⚠ blocked: https://social.example.test/profile (999, bot protection)" in quiet
    assert "✗ rate-limited: https://api.example.test/limited" in quiet


def test_compact_groups_every_referrer_under_the_url() -> None:
    out = reporter_for("compact").finish(REPORT)
    block = out.split("✗ broken: https://example.test/missing (404 Not Found) [cached]\n")[1].split("\n✗")[0]
    assert block.splitlines() == [
        "    in docs/a.md:3:5 (markdown inline)",
        "    in docs/a.md:10:1 (a href)",
        "    in docs/b.md:2:7 (markdown inline)",
    ]


@pytest.mark.parametrize("fmt", ["compact", "detailed"])
def test_colour_only_when_asked(fmt: str) -> None:
    assert not ANSI.search(reporter_for(fmt).finish(REPORT))
    assert ANSI.search(reporter_for(fmt, color=True).finish(REPORT))


class FakeStream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_wants_color_on_a_terminal_without_no_color() -> None:
    assert wants_color(FakeStream(True), {})
    assert not wants_color(FakeStream(False), {})
    assert not wants_color(FakeStream(True), {"NO_COLOR": "1"})
    assert wants_color(FakeStream(True), {"NO_COLOR": ""})  # no-color.org: only a non-empty value counts


def test_summary_line_counts_each_status_apart_and_notes_interruptions() -> None:
    summary = summarize(RESULTS, pages=8, elapsed=75.2, interrupted=True, caps=("max-pages 100",))
    line = summary_line(summary)
    assert line.startswith("19 links (16 unique) in 8 documents: 7 ok, 2 broken, 1 error, 1 timeout, ")
    assert (
        "1 rate-limited, 1 blocked, 1 excluded, 1 unsupported, 1 skipped; 1 redirected — 1 min 15 s" in line
    )
    assert line.endswith("; interrupted; stopped early by max-pages 100")


def test_summary_line_uses_thousands_separators() -> None:
    many = tuple(Result(f"https://example.test/{i}", Status.OK) for i in range(1234))
    assert summary_line(summarize(many, pages=1, elapsed=0.5)).startswith(
        "1,234 links (1,234 unique) in 1 document:"
    )


def test_summary_line_says_link_for_one() -> None:
    one = (Result("https://example.test/", Status.OK),)
    assert summary_line(summarize(one, pages=1, elapsed=0.5)).startswith("1 link (1 unique) in 1 document: 1 ok,")
    assert summary_line(summarize((), pages=0, elapsed=0.5)).startswith("0 links (0 unique): 0 ok,")


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.004, "0.00 s"), (2.345, "2.35 s"), (12.34, "12.3 s"), (61, "1 min 1 s")]
)
def test_duration(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


@pytest.mark.parametrize(
    ("result", "shown"),
    [
        (Result("u", Status.BROKEN, 404, "Not Found"), "404 Not Found"),
        (Result("u", Status.BROKEN, 200, "no anchor #top"), "200, no anchor #top"),
        (Result("u", Status.TIMEOUT, None, "timed out"), "timed out"),
        (Result("u", Status.TIMEOUT), "timeout"),
        (Result("u", Status.BROKEN, 410), "410"),
    ],
)
def test_describe(result: Result, shown: str) -> None:
    assert describe(result) == shown


def test_printable_escapes_controls_bidi_and_surrogates() -> None:
    assert printable("a\x1b[2Jb\nc\u202ed\udcff") == "a\\x1b[2Jb\\x0ac\\u202ed\\udcff"
    assert printable("Bücher 📚 日本語") == "Bücher 📚 日本語"


def test_terminal_formats_never_emit_raw_control_characters() -> None:
    for fmt in ("compact", "detailed", "github", "markdown"):
        out = reporter_for(fmt, verbose=True).finish(REPORT)
        assert not re.search("[\x00-\x09\x0b-\x1f\u202e]", out), fmt


@pytest.mark.skipif(sys.platform != "linux", reason="a file name of any bytes: Linux file systems take one")
async def test_a_file_name_that_is_not_utf8_is_read_and_every_format_writes_it(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes: Python's str has a lone surrogate for \xe9
    (tmp_path / name).write_text("# Hi\n\n[top](#hi) [gone](#nope) [self](caf%E9.md#hi)\n")
    report = await linkhound.check([str(tmp_path)])
    assert sorted(r.reason for r in report.results) == ["", "no anchor #nope"]  # its own anchors found
    for fmt in FORMATS:
        reporter = reporter_for(fmt, verbose=True)
        out = "".join(reporter.result(r) or "" for r in report.results) + reporter.finish(report)
        out.encode()  # UTF-8 text: no lone surrogate left in it
        if fmt in ("json", "sarif"):
            json.loads(out)
        elif fmt == "jsonl":
            [json.loads(line) for line in out.splitlines()]
        assert "caf\\udce9.md" in out or "caf%E9.md" in out, fmt


def test_github_annotation_escapes_properties_and_keeps_one_line() -> None:
    result = Result(
        "https://x.test/a%20b",
        Status.BROKEN,
        404,
        "Not\nFound",
        references=(Reference("docs/a,b:c.md", 3, 4, "a", "href", ""),),
    )
    out = reporter_for("github").finish(Report((result,), summarize((result,), 1, 0.1)))
    assert out.splitlines()[0] == (
        "::error file=docs/a%2Cb%3Ac.md,line=3,col=4,title=Broken link::"
        "https://x.test/a%2520b (404 Not\\x0aFound)"
    )


def test_markdown_escapes_html_and_table_pipes() -> None:
    assert text("<b>|x|</b>") == "\\<b\\>\\|x\\|\\</b\\>"
    assert code("a|b", table=True) == "`a\\|b`"
    assert code("a`b") == "``a`b``"
    assert code("`a") == "`` `a ``"
    out = reporter_for("markdown").finish(REPORT)
    assert '`https://evil.test/"><script>alert(1)</script>`' in out
    assert "connection reset by \\<b\\>peer\\</b\\>" in out


def test_csv_defuses_spreadsheet_formulas_and_keeps_data() -> None:
    rows = list(csv.DictReader(io.StringIO(reporter_for("csv").finish(REPORT))))
    assert len(rows) == REPORT.summary.total
    hostile = [r for r in rows if r["url"] == HOSTILE_URL]
    assert {r["text"][:2] for r in hostile} == {"'=", '">'}
    seed = next(r for r in rows if r["url"] == "https://example.test/seed")
    assert seed["source"] == "" and seed["status"] == "ok"


def test_junit_replaces_characters_xml_cannot_carry() -> None:
    result = Result("https://x.test/\x00\x1b", Status.BROKEN, reason="bad \udcff")
    out = reporter_for("junit").finish(Report((result,), summarize((result,), 0, 0.0)))
    case = ElementTree.fromstring(out).find(".//testcase")
    assert case is not None and case.get("name") == "https://x.test/\\x00\\x1b"


def test_sarif_uses_file_uris_for_absolute_paths_and_urls_for_pages() -> None:
    refs = (
        Reference("/srv/docs/a b.md", 2, 0, "a", "href", ""),
        Reference("https://site.test/p", 0, 0, "a", "href", ""),
    )
    result = Result("https://x.test/", Status.BROKEN, 404, "Not Found", references=refs)
    doc = json.loads(reporter_for("sarif").finish(Report((result,), summarize((result,), 0, 0.0))))
    locations = [r["locations"][0]["physicalLocation"] for r in doc["runs"][0]["results"]]
    assert locations == [
        {"artifactLocation": {"uri": "file:///srv/docs/a%20b.md"}, "region": {"startLine": 2}},
        {"artifactLocation": {"uri": "https://site.test/p"}},
    ]


def test_sarif_gives_a_url_named_on_the_command_line_no_location_and_a_listed_one_its_line() -> None:
    refs = (
        Reference("command line", 0, 0, "input", "", "https://x.test/"),
        Reference("urls.txt", 3, 1, "input", "", "https://x.test/"),
    )
    result = Result("https://x.test/", Status.BROKEN, 404, "Not Found", references=refs)
    doc = json.loads(reporter_for("sarif").finish(Report((result,), summarize((result,), 0, 0.0))))
    assert [r.get("locations") for r in doc["runs"][0]["results"]] == [None, [{"physicalLocation": {
        "artifactLocation": {"uri": "urls.txt", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 3, "startColumn": 1}
    }}]]


def test_links_not_in_a_repository_file_get_no_file_in_github_nor_a_location_in_sarif() -> None:
    # A URL named on the command line and a link read from stdin: no file for an annotation or an alert to sit on.
    named = Result("https://x.test/gone", Status.BROKEN, 404, "Not Found",
                   references=(Reference("command line", 0, 0, "input", "", "https://x.test/gone"),))
    piped = Result("https://x.test/gone2", Status.BROKEN, 404, "Not Found",
                   references=(Reference("-", 1, 5, "markdown", "inline", "https://x.test/gone2"),))
    report = Report((named, piped), summarize((named, piped), pages=1, elapsed=0.1))
    lines = [line for line in reporter_for("github").finish(report).splitlines() if line.startswith("::error")]
    assert lines == ["::error title=Broken link::https://x.test/gone (404 Not Found) in command line",
                     "::error title=Broken link::https://x.test/gone2 (404 Not Found) in -:1:5"]
    results = json.loads(reporter_for("sarif").finish(report))["runs"][0]["results"]
    assert len(results) == 2 and not any("locations" in r for r in results)
    junit = reporter_for("junit").finish(report)
    assert "at: command line (input)\n" in junit and "at: -:1:5 (markdown inline)\n" in junit


def test_junit_counts_a_requests_time_once_on_the_first_use_of_its_url() -> None:
    # One request of 1 s, its URL used 50 times in a.md and once in b.md: 1 s in all, on a.md's first testcase.
    refs = tuple(md("a.md", line, 1, "https://x.test/slow") for line in range(1, 51)) + (md("b.md", 1, 1, "x"),)
    slow = Result("https://x.test/slow", Status.BROKEN, 404, "Not Found", elapsed=1.0, references=refs)
    root = ElementTree.fromstring(reporter_for("junit").finish(Report((slow,), summarize((slow,), 2, 1.01))))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert {name: s.get("time") for name, s in suites.items()} == {"a.md": "1.000", "b.md": "0.000"}
    assert [c.get("time") for c in suites["a.md"].iter("testcase")] == ["1.000"] + ["0.000"] * 49


def test_junit_totals_count_the_certificates_suite() -> None:
    certificates = (Certificate("a.test", "2026-12-10T00:00:00Z", 3, True),
                    Certificate("b.test", "2027-06-01T00:00:00Z", 180, False))
    summary = dataclasses.replace(REPORT.summary, certificates=certificates, certificates_fail=True)
    root = ElementTree.fromstring(reporter_for("junit").finish(dataclasses.replace(REPORT, summary=summary)))
    suites = root.findall("testsuite")
    assert int(root.get("tests") or 0) == sum(int(s.get("tests") or 0) for s in suites)
    assert int(root.get("failures") or 0) == sum(int(s.get("failures") or 0) for s in suites)
    assert [s.get("failures") for s in suites if s.get("name") == "(TLS certificates)"] == ["1"]


def test_html_headline_names_an_expiring_certificate_that_fails_the_run() -> None:
    # --tls-expiry-fail: no link failed, yet the run does; the badge says why instead of "0 failed"
    ok = Report(RESULTS[:1], summarize(RESULTS[:1], pages=1, elapsed=0.1))
    certificates = (Certificate("a.test", "2026-12-10T00:00:00Z", 3, True),)
    summary = dataclasses.replace(ok.summary, certificates=certificates, certificates_fail=True)
    page = reporter_for("html").finish(dataclasses.replace(ok, summary=summary))
    assert not summary.success and summary.failed == 0
    assert '<span class="verdict fail">1 certificate expiring</span>' in page


def test_html_embeds_data_that_cannot_close_its_script_block() -> None:
    embedded = script_json({"url": "</script><!-- & -->"})
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert json.loads(embedded) == {"url": "</script><!-- & -->"}


def test_html_has_no_raw_hostile_markup_and_no_network_assets() -> None:
    out = reporter_for("html", verbose=True).finish(REPORT)
    assert "<script>alert" not in out and "<img" not in out and "<b>peer" not in out
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", out)
    assert out.count("<script") == 2


def test_html_policy_allows_only_its_own_script() -> None:
    out = reporter_for("html").finish(REPORT)
    digest = b64encode(sha256(JS.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in out and "unsafe-inline" not in out
    assert f"<script>{JS}</script>" in out


def test_site_tree_nests_pages_under_their_shallowest_referrer() -> None:
    pages = (
        Page("https://s.test/", 0, 2, True),
        Page("https://s.test/a", 1, 1, True),
        Page("https://s.test/b", 2, 0, True),
    )
    results = (
        Result(
            "https://s.test/a", Status.OK, references=(Reference("https://s.test/", 1, 1, "a", "href", ""),)
        ),
        Result(
            "https://s.test/b",
            Status.OK,
            references=(
                Reference("https://s.test/a", 1, 1, "a", "href", ""),
                Reference("https://s.test/b", 1, 1, "a", "href", ""),  # a self-link never makes a cycle
            ),
        ),
        Result(
            "https://gone.test/",
            Status.BROKEN,
            404,
            references=(Reference("https://s.test/a", 2, 1, "a", "href", ""),),
        ),
    )
    tree = site_tree(pages, results)
    assert [n["url"] for n in tree] == ["https://s.test/"]
    child = tree[0]["children"][0]
    assert (child["url"], child["failed"]) == ("https://s.test/a", 1)
    assert [n["url"] for n in child["children"]] == ["https://s.test/b"]


def test_site_tree_makes_unlinked_pages_roots() -> None:
    pages = (Page("https://s.test/", 0, 0, True), Page("https://other.test/", 0, 0, True))
    assert [n["url"] for n in site_tree(pages, ())] == ["https://other.test/", "https://s.test/"]
