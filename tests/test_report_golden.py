"""Golden files: every format rendered from the one fixed run in report_fixtures.

Regenerate after an intended change with `LINKHOUND_UPDATE_GOLDEN=1 pytest tests/test_report_golden.py`,
then read the diff of tests/golden/ before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linkhound.report import common, reporter_for
from linkhound.summary import Report
from report_fixtures import FOLDED, REPORT

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LINKHOUND_UPDATE_GOLDEN") == "1"

CASES: dict[str, tuple[str, dict[str, bool]]] = {
    "compact.txt": ("compact", {}),
    "compact-verbose.txt": ("compact", {"verbose": True}),
    "compact-color.txt": ("compact", {"color": True}),
    "compact-summary-only.txt": ("compact", {"summary_only": True}),
    "detailed.txt": ("detailed", {}),
    "json.json": ("json", {}),
    "jsonl.jsonl": ("jsonl", {}),
    "markdown.md": ("markdown", {}),
    "junit.xml": ("junit", {}),
    "sarif.sarif": ("sarif", {}),
    "github.txt": ("github", {}),
    "csv.csv": ("csv", {}),
    "html.html": ("html", {}),
}
# Rendered from FOLDED: referrers past the first few, a redirect loop, fragments that share a page's result.
FOLDED_CASES: dict[str, tuple[str, dict[str, bool]]] = {
    "folded-compact.txt": ("compact", {}),
    "folded-compact-all-referrers.txt": ("compact", {"all_referrers": True}),
    "folded-detailed.txt": ("detailed", {}),
    "folded-markdown.md": ("markdown", {}),
    "folded-junit.xml": ("junit", {}),
}


def render(fmt: str, report: Report = REPORT, **options: bool) -> str:
    """What a run writes: each result's streamed text as it completes, then the end of the report."""
    reporter = reporter_for(fmt, **options)
    streamed = [reporter.result(r) for r in report.results]
    return "".join(s for s in streamed if s) + reporter.finish(report)


@pytest.fixture(autouse=True)
def fixed_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "tool_version", lambda: "0.0.0-test")


@pytest.mark.parametrize("name", sorted(CASES) + sorted(FOLDED_CASES))
def test_report_matches_golden_file(name: str) -> None:
    fmt, options = CASES[name] if name in CASES else FOLDED_CASES[name]
    out = render(fmt, FOLDED if name in FOLDED_CASES else REPORT, **options)
    path = GOLDEN / name
    if UPDATE:
        path.write_text(out, encoding="utf-8", newline="")
    assert path.exists(), f"no golden file {path}: run with LINKHOUND_UPDATE_GOLDEN=1"
    assert out == path.read_bytes().decode("utf-8")


def test_every_format_has_a_golden_file() -> None:
    from linkhound.report import FORMATS

    assert {fmt for fmt, _ in CASES.values()} == set(FORMATS)
