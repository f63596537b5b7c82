"""Run warnings, control characters, folded referrers and local paths, across the report formats."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from linkhound.report import FORMATS, reporter_for
from linkhound.report.common import FOLD, display_url, folded_refs
from linkhound.report.records import dumps, elements_text, stdlib_dumps, stdlib_elements_text
from linkhound.status import Status
from linkhound.summary import Report, summarize
from linkhound.types import Reference, Result
from report_fixtures import FOLDED, GONE_PAGES, REPORT, WARNINGS

JSON_FORMATS = ("json", "jsonl", "sarif")
# What no text format may write raw: C0 but tab and line feed, DEL, C1.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def render(fmt: str, report: Report, **options: bool) -> str:
    reporter = reporter_for(fmt, **options)
    streamed = [reporter.result(r) for r in report.results]
    return "".join(s for s in streamed if s) + reporter.finish(report)


def html_data(page: str) -> Any:
    """The JSON the html report's script renders."""
    found = re.search(r'id="linkhound-data">(.*?)</script>', page)
    assert found is not None
    return json.loads(found[1])


def one(result: Result, warnings: tuple[str, ...] = ()) -> Report:
    return Report((result,), summarize((result,), pages=1, elapsed=0.5, warnings=warnings))


def test_summarize_keeps_the_warnings_in_order() -> None:
    summary = summarize((), pages=0, elapsed=0.0, warnings=("b", "a"))
    assert summary.warnings == ("b", "a")
    assert summarize((), pages=0, elapsed=0.0).warnings == ()


# --- warnings --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["compact", "detailed"])
@pytest.mark.parametrize("summary_only", [False, True])
def test_terminal_formats_print_a_warning_line_each_before_the_summary(fmt: str, summary_only: bool) -> None:
    lines = reporter_for(fmt, summary_only=summary_only).finish(REPORT).splitlines()
    assert lines[-3:] == [*(f"warning: {w}" for w in WARNINGS), lines[-1]]
    assert lines[-1].startswith("19 links (16 unique)")


def test_compact_colours_the_warning_label_only_with_colour() -> None:
    assert "\x1b[33mwarning:\x1b[0m robots.txt" in reporter_for("compact", color=True).finish(REPORT)


def test_json_summary_has_the_warnings_array() -> None:
    assert json.loads(reporter_for("json").finish(REPORT))["summary"]["warnings"] == list(WARNINGS)
    empty = json.loads(reporter_for("json").finish(one(Result("https://x.test/", Status.OK))))
    assert empty["summary"]["warnings"] == []


def test_jsonl_summary_line_has_the_warnings() -> None:
    last = render("jsonl", REPORT).splitlines()[-1]
    assert json.loads(last)["type"] == "summary" and json.loads(last)["warnings"] == list(WARNINGS)


def test_markdown_lists_the_warnings_as_inert_code() -> None:
    out = reporter_for("markdown", summary_only=True).finish(REPORT)
    assert "**Warnings**\n\n- `robots.txt of https://slow.example.test answered 503: host not crawled`\n" in out


def test_junit_puts_warnings_in_system_err_of_their_own_suite() -> None:
    doc = ElementTree.fromstring(reporter_for("junit").finish(REPORT))
    suite = next(s for s in doc.iter("testsuite") if s.get("name") == "(warnings)")
    assert suite.get("tests") == "0" and suite.findall("testcase") == []
    err = suite.find("system-err")
    assert err is not None and err.text == "\n".join(f"warning: {w}" for w in WARNINGS)
    assert doc.get("tests") == str(REPORT.summary.total)  # a warning is no test case
    quiet = ElementTree.fromstring(reporter_for("junit").finish(one(Result("https://x.test/", Status.OK))))
    assert [s.get("name") for s in quiet.iter("testsuite")] == ["(input)"]


def test_sarif_warnings_are_tool_execution_notifications() -> None:
    run = json.loads(reporter_for("sarif").finish(REPORT))["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True
    assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == list(WARNINGS)
    assert {n["level"] for n in invocation["toolExecutionNotifications"]} == {"warning"}


def test_github_writes_a_warning_command_per_warning_before_the_summary() -> None:
    lines = reporter_for("github").finish(REPORT).splitlines()
    assert lines[-3:-1] == [f"::warning::{w}" for w in WARNINGS]


def test_github_warning_cannot_start_a_command_of_its_own() -> None:
    out = reporter_for("github").finish(one(Result("https://x.test/", Status.OK), ("a 100%\n::error::x",)))
    assert "::warning::a 100%25\\x0a::error::x" in out.splitlines()


def test_html_shows_warnings_in_a_visible_box_escaped() -> None:
    out = reporter_for("html", summary_only=True).finish(REPORT)
    box = re.search(r'<section class="warnings" role="note">(.*?)</section>', out)
    assert box is not None and box[1].count("<li>") == 2 and WARNINGS[0] in box[1]
    hostile = reporter_for("html").finish(one(Result("https://x.test/", Status.OK), ("<b>x</b>\x1b",)))
    assert "<li>&lt;b&gt;x&lt;/b&gt;\\x1b</li>" in hostile
    assert 'class="warnings"' not in reporter_for("html").finish(one(Result("https://x.test/", Status.OK)))


def test_csv_has_no_row_for_warnings() -> None:
    out = reporter_for("csv").finish(REPORT)
    assert "robots.txt of" not in out
    assert len(list(csv.DictReader(io.StringIO(out)))) == REPORT.summary.total


# --- control characters ----------------------------------------------------------------------------------

NASTY = "\x1b[31m\x07\x00\x7f\x85"  # ESC (a colour), BEL, NUL, DEL, NEL (C1)
NASTY_RESULT = Result(
    f"https://x.test/a{NASTY}b",
    Status.BROKEN,
    404,
    f"Not {NASTY} Found",
    redirects=(f"https://x.test/r{NASTY}",),
    references=(Reference(f"docs/{NASTY}.md", 3, 1, "a", "href", f"https://x.test/a{NASTY}b"),),
)
NASTY_REPORT = one(NASTY_RESULT, (f"warning {NASTY}",))


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_format_writes_raw_control_characters(fmt: str) -> None:
    out = render(fmt, NASTY_REPORT, verbose=True)
    assert not RAW_CONTROL.search(out), (fmt, RAW_CONTROL.findall(out))


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in (*JSON_FORMATS, "html")])
def test_text_formats_show_control_characters_as_escapes(fmt: str) -> None:
    out = render(fmt, NASTY_REPORT, verbose=True)
    assert "\\x1b[31m\\x07\\x00\\x7f\\x85" in out


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_json_formats_escape_controls_and_keep_the_exact_url(fmt: str) -> None:
    out = render(fmt, NASTY_REPORT)
    assert "\\u001b[31m\\u0007\\u0000\\u007f\\u0085" in out
    if fmt == "json":
        url = json.loads(out)["results"][0]["url"]
    elif fmt == "jsonl":
        url = json.loads(out.splitlines()[0])["url"]
    else:  # sarif: the message is for people, the url property is the data
        url = json.loads(out)["runs"][0]["results"][0]["properties"]["url"]
    assert url == NASTY_RESULT.url


def test_json_report_round_trips_control_characters_exactly() -> None:
    doc = json.loads(reporter_for("json").finish(NASTY_REPORT))
    (result,) = doc["results"]
    assert result["url"] == NASTY_RESULT.url and result["reason"] == NASTY_RESULT.reason
    assert result["references"][0]["source"] == NASTY_RESULT.references[0].source
    assert doc["summary"]["warnings"] == [f"warning {NASTY}"]


def test_json_text_escapes_del_and_c1_the_same_with_and_without_orjson() -> None:
    value = {"k": "a\x7fb\x85c\x9fd\xa0e"}
    assert dumps(value) == stdlib_dumps(value) == '{"k":"a\\u007fb\\u0085c\\u009fd\xa0e"}'
    assert json.loads(dumps(value)) == value
    assert dumps(["\xa0\x85"]) == stdlib_dumps(["\xa0\x85"]) == '["\xa0\\u0085"]'  # no DEL to give it away
    assert dumps(["\xa0é"]) == '["\xa0é"]'


def test_json_text_writes_a_lone_surrogate_as_text_the_same_with_and_without_orjson() -> None:
    value = {"source": "caf\udce9.md", "n": [1, ("x\udcff",)]}  # a file name's byte that is not UTF-8
    expected = '{"source":"caf\\\\udce9.md","n":[1,["x\\\\udcff"]]}'
    assert dumps(value) == stdlib_dumps(value) == expected
    assert elements_text([value], 1) == stdlib_elements_text([value], 1)
    assert json.loads(expected)["source"] == "caf\\udce9.md"


def test_csv_cells_are_escaped_and_still_defused() -> None:
    rows = list(csv.DictReader(io.StringIO(reporter_for("csv").finish(NASTY_REPORT))))
    assert rows[0]["url"] == "https://x.test/a\\x1b[31m\\x07\\x00\\x7f\\x85b"
    tab = one(Result("https://x.test/", Status.BROKEN, reason="\t=1+1"))
    assert list(csv.DictReader(io.StringIO(reporter_for("csv").finish(tab))))[0]["reason"] == "\\x09=1+1"
    formula = one(Result("https://x.test/", Status.BROKEN, reason="=1+1"))
    assert list(csv.DictReader(io.StringIO(reporter_for("csv").finish(formula))))[0]["reason"] == "'=1+1"


def test_junit_with_control_characters_is_still_xml() -> None:
    doc = ElementTree.fromstring(reporter_for("junit").finish(NASTY_REPORT))
    case = doc.find(".//testcase")
    assert case is not None and case.get("name") == "3:1 https://x.test/a\\x1b[31m\\x07\\x00\\x7f\\x85b"


def test_html_shows_control_characters_as_escapes_and_keeps_the_link_exact() -> None:
    out = reporter_for("html").finish(NASTY_REPORT)
    data = html_data(out)
    (row,) = data["results"]
    assert row["url"] == NASTY_RESULT.url
    assert row["shown"] == "https://x.test/a\\x1b[31m\\x07\\x00\\x7f\\x85b"
    assert row["hops"] == ["https://x.test/r\\x1b[31m\\x07\\x00\\x7f\\x85"]
    assert row["detail"] == "404 Not \\x1b[31m\\x07\\x00\\x7f\\x85 Found"
    assert row["references"][0]["where"].startswith("docs/\\x1b[31m")


# --- folded referrers ------------------------------------------------------------------------------------

def many(n: int) -> Result:
    refs = tuple(Reference(f"https://s.test/p{i:04}", 1, 1, "a", "href", "/x") for i in range(n))
    return Result("https://s.test/x", Status.BROKEN, 404, references=refs)


@pytest.mark.parametrize(
    ("n", "shown", "hidden"),
    [(1, 1, 0), (FOLD, FOLD, 0), (FOLD + 1, FOLD + 1, 0), (FOLD + 2, FOLD, 2), (1169, FOLD, 1164)],
)
def test_folded_refs_never_hides_just_one(n: int, shown: int, hidden: int) -> None:
    refs, left_out = folded_refs(many(n))
    assert (len(refs), left_out) == (shown, hidden)
    assert refs == sorted(many(n).references)[:shown]
    assert folded_refs(many(n), all_referrers=True) == (sorted(many(n).references), 0)


@pytest.mark.parametrize("fmt", ["compact", "detailed", "markdown"])
def test_folding_formats_show_the_first_referrers_and_how_many_more(fmt: str) -> None:
    out = reporter_for(fmt).finish(one(many(1169)))
    assert "… and 1,164 more" in out
    assert "https://s.test/p0004" in out and "https://s.test/p0005" not in out


@pytest.mark.parametrize("fmt", ["compact", "detailed", "markdown"])
@pytest.mark.parametrize("option", ["all_referrers", "verbose"])
def test_all_referrers_or_verbose_lists_every_referrer(fmt: str, option: str) -> None:
    out = reporter_for(fmt, **{option: True}).finish(one(many(1169)))
    assert "more" not in out and "https://s.test/p1168" in out


def test_compact_fold_line_sits_under_the_shown_referrers() -> None:
    lines = reporter_for("compact").finish(FOLDED).splitlines()
    start = lines.index("✗ broken: https://example.test/gone (410 Gone)")
    assert lines[start + 1 : start + 7] == [
        *(f"    in {page}:12:5 (a href)" for page in GONE_PAGES[:FOLD]),
        "    … and 3 more",
    ]


def test_markdown_notes_the_rest_after_the_table_of_the_last_shown_referrer() -> None:
    out = reporter_for("markdown").finish(FOLDED)
    assert out.count("| broken | `https://example.test/gone` |") == FOLD
    section = out.split("### `https://example.test/p5`")[1]
    assert section.rstrip().endswith("… and 3 more referrers of `https://example.test/gone`")
    assert "### `https://example.test/p6`" not in out


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sarif", "junit", "csv"])
def test_machine_formats_keep_every_referrer(fmt: str) -> None:
    out = render(fmt, one(many(1169)))
    assert "https://s.test/p1168" in out and "more" not in out
    assert sum(out.count(f"https://s.test/p{i:04}") > 0 for i in range(1169)) == 1169


@pytest.mark.parametrize("all_referrers", [False, True])
def test_html_carries_every_referrer_and_folds_past_the_first_few(all_referrers: bool) -> None:
    out = reporter_for("html", all_referrers=all_referrers).finish(one(many(1169)))
    data = html_data(out)
    assert len(data["results"][0]["references"]) == 1169
    assert (data["fold"], data["unfold"]) == (FOLD, all_referrers)


# --- small output fixes ----------------------------------------------------------------------------------


def test_markdown_shows_the_whole_redirect_chain() -> None:
    out = reporter_for("markdown").finish(FOLDED)
    assert (
        "| 4:1 | error | `https://example.test/loop` | redirect loop (redirected to `https://example.test/loop/` -> "
        "`https://example.test/loop/index` -> `https://example.test/loop/`) | markdown inline |"
    ) in out


def test_junit_case_names_keep_the_fragment_the_link_asked_for() -> None:
    doc = ElementTree.fromstring(reporter_for("junit").finish(FOLDED))
    names = [c.get("name") for c in doc.iter("testcase") if c.get("classname") == "docs/c.md"]
    assert names == [
        "4:1 https://example.test/loop",
        "6:1 https://example.test/guide#install",
        "7:1 https://example.test/guide#usage",
    ]
    broken_fragment = ElementTree.fromstring(reporter_for("junit").finish(REPORT))
    assert "20:8 https://example.test/page#missing" in [c.get("name") for c in broken_fragment.iter("testcase")]


def test_junit_ignores_a_hash_that_is_not_a_fragment() -> None:
    ref = Reference("docs/a.md", 1, 1, "text", "", "see C# docs at https://x.test/")
    doc = ElementTree.fromstring(
        reporter_for("junit").finish(one(Result("https://x.test/", Status.OK, references=(ref,))))
    )
    assert [c.get("name") for c in doc.iter("testcase")] == ["1:1 https://x.test/"]


def test_html_site_tree_counts_every_failing_status_and_says_failed() -> None:
    out = reporter_for("html").finish(REPORT)
    data = html_data(out)
    root = data["tree"][0]
    assert root["failed"] == 2  # the timeout and the rate-limited link: failures, not "broken"
    assert '" failed"' in out and '" broken"' not in out


def test_display_url_shows_local_files_as_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    here = tmp_path.resolve()
    assert display_url((here / "docs" / "a b.md").as_uri() + "#intro") == os.path.join("docs", "a b.md") + "#intro"
    assert display_url(here.as_uri() + "/") == "./"
    assert display_url(here.as_uri() + "/#top") == "./#top"
    assert display_url((here / "ok.html").as_uri() + "?x=1#a") == "ok.html?x=1#a"  # two targets, shown apart
    assert display_url("file:///elsewhere/x.md") == "/elsewhere/x.md"
    assert display_url("file://fileserver/share/x.md") == "file://fileserver/share/x.md"  # not this machine's
    assert display_url("file:///elsewhere/x%1B.md") == "/elsewhere/x\\x1b.md"
    assert display_url("https://x.test/file:///a") == "https://x.test/file:///a"


def test_terminal_formats_show_local_targets_as_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = (tmp_path.resolve() / "docs" / "gone.md").as_uri()
    report = one(
        Result(
            target,
            Status.BROKEN,
            reason="file not found",
            references=(Reference("README.md", 2, 1, "markdown", "inline", "docs/gone.md"),),
        )
    )
    gone = os.path.join("docs", "gone.md")
    assert f"✗ broken: {gone} (file not found)" in reporter_for("compact").finish(report)
    assert reporter_for("detailed").finish(report).startswith(f"{gone}\n")
    assert target in reporter_for("json").finish(report)  # machine formats keep the URL


def test_json_elements_nested_in_the_document_are_the_same_with_and_without_orjson() -> None:
    items = [{"k": "a\x7fb\x85c", "n": [1, {"x": "é"}]}, {"k": ""}]
    for depth in (1, 3):
        text = elements_text(items, depth)
        assert text == stdlib_elements_text(items, depth)
        assert "[" + text.replace("\n" + "  " * depth, "\n") + "\n]" == dumps(items, pretty=True)  # only indented
