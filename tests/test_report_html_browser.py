"""The html report in a real headless Chromium: rows render, the filter filters, hostile text stays text.

Needs the `playwright` package and a Chromium binary (Debian: `apt-get install chromium`; another path via
LINKHOUND_CHROMIUM). Without them these tests skip and say why; LINKHOUND_REQUIRE_BROWSER=1 makes that a
failure instead, for CI machines that are meant to have a browser. Screenshots land in the test's tmp_path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from linkhound.report import reporter_for
from linkhound.summary import Report
from report_fixtures import FOLDED, GONE_PAGES, HOSTILE_PAGE, HOSTILE_URL, REPORT, WARNINGS

CHROMIUM = os.environ.get("LINKHOUND_CHROMIUM", "/usr/bin/chromium")
# Flags that work as root with no network: no sandbox, GPU, QUIC, first-run or background traffic.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install playwright)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium binary at {CHROMIUM} (apt-get install chromium, or set LINKHOUND_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if reason := _unavailable():
        if os.environ.get("LINKHOUND_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required but {reason}")
        pytest.skip(f"html browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


class Opened:
    """A report open in a page, with everything the page did that it should not have."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.set_default_timeout(15_000)
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())

    def visible_rows(self) -> Any:
        return self.page.locator("#results tbody tr:visible")


def open_report(browser: Any, tmp_path: Path, report: Report = REPORT, **options: bool) -> Opened:
    path = tmp_path / "report.html"
    path.write_text(reporter_for("html", **options).finish(report), encoding="utf-8")
    return Opened(browser, path)


def test_html_report_shows_problem_rows_and_filters_them(browser: Any, tmp_path: Path) -> None:
    report = open_report(browser, tmp_path)
    problems = [r for r in REPORT.results if r.is_broken or r.status.value == "blocked"]
    assert report.visible_rows().count() == len(problems) == 6
    assert report.page.locator("#count").text_content() == "6 of 6"
    first = report.page.locator("#results tbody tr").first
    assert first.locator("td").nth(1).text_content() == "https://example.test/missing"
    assert first.locator("li").all_text_contents() == [
        "docs/a.md:3:5 (markdown inline)",
        "docs/a.md:10:1 (a href)",
        "docs/b.md:2:7 (markdown inline)",
    ]

    report.page.fill("#filter", "MISSING")
    assert report.visible_rows().count() == 2
    assert report.page.locator("#count").text_content() == "2 of 6"
    report.page.fill("#filter", "docs/b.md")  # referrers are searched too
    assert report.visible_rows().count() == 3
    report.page.fill("#filter", "")
    report.page.select_option("#status", "timeout")
    assert report.visible_rows().all_text_contents() == [
        "timeouthttps://slow.example.test/timed out after 10 shttps://example.test/ (a href)"
    ]
    report.page.select_option("#status", "")
    report.page.fill("#filter", "no such link")
    assert report.visible_rows().count() == 0
    assert report.page.locator("#empty").is_visible()

    report.page.fill("#filter", "")
    shot = tmp_path / "report.png"
    report.page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert report.errors == []


def test_html_report_keeps_hostile_strings_as_text(browser: Any, tmp_path: Path) -> None:
    report = open_report(browser, tmp_path, verbose=True)
    assert report.visible_rows().count() == len(REPORT.results)
    assert report.dialogs == []
    assert report.page.evaluate("document.scripts.length") == 2  # the JSON block and ours, nothing injected
    assert report.page.locator("img").count() == 0
    assert report.page.locator("#results td.url", has_text=HOSTILE_URL).count() == 1
    assert report.page.locator("#site-tree", has_text=HOSTILE_PAGE).count() == 1
    javascript = report.page.locator("#results td.url", has_text="javascript:void(0)")
    assert javascript.locator("a").count() == 0  # shown, never clickable
    assert report.errors == []


def test_html_report_draws_site_tree_and_charts_offline(browser: Any, tmp_path: Path) -> None:
    report = open_report(browser, tmp_path)
    tree = report.page.locator("#site-tree")
    assert tree.locator("li").count() == len(REPORT.pages)
    assert (
        tree.locator(":scope > li > details > summary").text_content()
        == "https://example.test/depth 0, 6 links2 failed"
    )
    assert tree.locator("li li li").all_text_contents() == ["https://example.test/about/teamdepth 2, 0 links"]
    assert report.page.locator("svg[aria-label='Results by status'] rect").count() == 9
    assert report.page.locator("svg[aria-label='Results by host'] text.label").count() >= 5
    assert [u for u in report.requests if not u.startswith(("file:", "data:"))] == []


def test_html_report_shows_warnings_and_folds_long_referrer_lists(browser: Any, tmp_path: Path) -> None:
    report = open_report(browser, tmp_path)
    box = report.page.locator("section.warnings")
    assert box.is_visible() and box.locator("li").all_text_contents() == list(WARNINGS)

    folded = open_report(browser, tmp_path, FOLDED)
    cell = folded.page.locator("#results tbody tr", has_text="https://example.test/gone").locator("td.refs")
    shown = [f"{page}:12:5 (a href)" for page in GONE_PAGES]
    assert cell.locator(":scope > ul > li").all_text_contents() == shown[:5]
    more = cell.locator("details")
    assert more.locator("summary").text_content() == "\u2026 and 3 more"
    assert more.get_attribute("open") is None and not more.locator("li").first.is_visible()
    more.locator("summary").click()
    assert more.locator("li").all_text_contents() == shown[5:]
    assert more.locator("li").first.is_visible()
    folded.page.fill("#filter", "/p8:")  # folded referrers are searched too
    assert folded.visible_rows().count() == 1
    assert folded.errors == [] and report.errors == []

    unfolded = open_report(browser, tmp_path, FOLDED, all_referrers=True)
    assert unfolded.page.locator("td.refs details").get_attribute("open") is not None
