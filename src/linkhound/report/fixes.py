"""Links to fix (--suggest-fixes, --suggest-https) as each format shows them. Nothing is shown when there are
none, so a run that didn't ask reads as it always did."""

from __future__ import annotations

from ..suggestions import Suggestion
from ..summary import Report
from ..types import Reference
from .common import FOLD, display_url, more, printable, sorted_refs, where
from .records import Record, reference_record

TITLE = "Links to fix"


def suggestion_record(s: Suggestion) -> Record:
    return {
        "url": s.url,
        "replacement": s.replacement,
        "kind": s.kind,
        "reason": s.reason,
        "references": [reference_record(r) for r in sorted_refs(s.references)],
    }


def suggestion_records(report: Report) -> list[Record]:
    return [suggestion_record(s) for s in report.suggestions]


def _refs(s: Suggestion, all_referrers: bool) -> tuple[list[Reference], int]:
    refs = sorted_refs(s.references)
    if all_referrers or len(refs) <= FOLD + 1:
        return refs, 0
    return refs[:FOLD], len(refs) - FOLD


def text_lines(report: Report, all_referrers: bool = False) -> list[str]:
    """The terminal formats' section: each link, what to link to instead and why, and where it is used."""
    if not report.suggestions:
        return []
    lines = [f"{TITLE.lower()} ({len(report.suggestions):,}):"]
    for s in report.suggestions:
        lines.append(f"  {display_url(s.url)} -> {display_url(s.replacement)} ({s.reason})")
        refs, hidden = _refs(s, all_referrers)
        lines.extend(f"    in {printable(where(ref))}" for ref in refs)
        if hidden:
            lines.append(f"    {more(hidden)}")
    return [*lines, ""]


def notice(s: Suggestion) -> tuple[str, str]:
    """A title and a one-line message for an annotation (GitHub, SARIF) of a use of the link."""
    title = "Link moved" if s.kind == "moved" else "Link has an https:// twin"
    return title, f"{s.reason}: use {s.replacement} instead of {s.url}"
