"""The markdown format: the summary, then a table per source; made for GitHub job summaries and issues."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from ..summary import Report, SitemapDrift, Summary
from ..types import Result
from . import fixes
from .base import WholeReport
from .certificates import NONE_READ, certificate_rows
from .common import (
    FOLD,
    LABELS,
    by_source,
    describe,
    folded_refs,
    is_problem,
    more,
    printable,
    sorted_refs,
    summary_line,
)
from .drift import ORPHAN_HELP, UNLISTED_HELP, drift_headline


class Markdown(WholeReport):
    """Problems (every link when verbose) in a GitHub-flavoured table per file or page; a link's first
    referrers only, unless all_referrers or verbose, with a note saying how many more there are."""

    def __init__(self, *, verbose: bool = False, summary_only: bool = False, all_referrers: bool = False,
                 max_bytes: int | None = None) -> None:
        self.verbose = verbose
        self.summary_only = summary_only
        self.all_referrers = all_referrers or verbose
        self.max_bytes = max_bytes  # cut the tables' rows to fit (--step-summary: GitHub takes 1 MiB a step)

    def finish(self, report: Report) -> str:
        whole = self._whole(report)
        return whole if self.max_bytes is None else capped(whole, self.max_bytes)

    def _whole(self, report: Report) -> str:
        out = ["## Link check", "", text(summary_line(report.summary)), ""]
        if report.summary.warnings:
            # code spans, like every URL here: a warning names hosts and pages that must not become links
            out += ["**Warnings**", "", *(f"- {code(w)}" for w in report.summary.warnings), ""]
        if report.sitemap_drift is not None:  # --sitemap-drift
            out += _drift(report.sitemap_drift, self.summary_only)
        out += _certificates(report.summary)
        if self.summary_only:
            return "\n".join(out)
        results, notes = self._fold(r for r in report.results if self.verbose or is_problem(r.status))
        groups = by_source(results)
        if not groups:
            out += ["No broken links.", ""]
        for source, pairs in groups.items():
            out += [f"### {code(source)}", "", "| Line | Status | URL | Details | Element |", _RULE]
            for ref, result in pairs:
                line = f"{ref.line}:{ref.column}" if ref and ref.line else ""
                details = describe(result) if describe(result) != LABELS[result.status] else ""
                details = text(details)
                if result.redirects:
                    chain = " -> ".join(code(hop, table=True) for hop in result.redirects)
                    details += f"{' ' if details else ''}(redirected to {chain})"
                element = f"{ref.element} {ref.attribute}".strip() if ref else ""
                cells = [line, LABELS[result.status], code(result.url, table=True), details, text(element)]
                out.append(f"| {' | '.join(cells)} |")
            out.append("")
            for url, hidden in notes.get(source, ()):
                out += [f"{more(hidden)} referrers of {code(url)}", ""]
        return "\n".join(out + _fixes(report))

    def _fold(self, results: Iterable[Result]) -> tuple[list[Result], dict[str, list[tuple[str, int]]]]:
        """Results cut to their first referrers, and the notes on what was cut, each kept for the table of
        the source where its link's last shown referrer sits."""
        kept: list[Result] = []
        notes: dict[str, list[tuple[str, int]]] = {}
        for result in results:
            refs, hidden = folded_refs(result, self.all_referrers)
            if hidden:
                notes.setdefault(refs[-1].source, []).append((result.url, hidden))
                result = dataclasses.replace(result, references=tuple(refs))
            kept.append(result)
        for pending in notes.values():
            pending.sort()
        return kept, notes


def _drift(drift: SitemapDrift, headline_only: bool) -> list[str]:
    out = ["### Sitemap drift", "", text(drift_headline(drift)), ""]
    if headline_only:
        return out
    sections = [
        (f"Orphans: {ORPHAN_HELP}", [code(url) for url in drift.orphans]),
        (f"Unlisted: {UNLISTED_HELP}", [code(url) for url in drift.unlisted]),
        ("Redirected in the sitemap", [f"{code(url)} -> {code(end)}" for url, end in drift.redirected]),
        ("Sitemap problems", [code(problem) for problem in drift.problems]),
    ]
    for title, items in sections:
        if items:
            out += [f"**{title}**", "", *(f"- {item}" for item in items), ""]
    return out


def _fixes(report: Report) -> list[str]:
    """A table of the links to fix (--suggest-fixes, --suggest-https), when there are any."""
    if not report.suggestions:
        return []
    out = [f"### {fixes.TITLE}", "", "| Where | URL | Use instead | Why |", "|---|---|---|---|"]
    for s in report.suggestions:
        places = ", ".join(code(r.position(), table=True) for r in sorted_refs(s.references)[:FOLD])
        hidden = len(s.references) - FOLD
        places += f" {text(more(hidden))}" if hidden > 0 else ""
        cells = [places, code(s.url, table=True), code(s.replacement, table=True), text(s.reason)]
        out.append(f"| {' | '.join(cells)} |")
    return [*out, ""]


_RULE = "|---:|---|---|---|---|"
_ROOM_FOR_NOTE = 512  # bytes kept free for the note that says what was cut


def capped(whole: str, max_bytes: int) -> str:
    """whole, or, past max_bytes (UTF-8), its lines up to where they would no longer fit, then a note saying how
    many table rows were left out. The summary and warnings come first, so they are always kept."""
    size = len(whole.encode("utf-8"))
    if size <= max_bytes:
        return whole
    lines = whole.split("\n")
    budget = max_bytes - _ROOM_FOR_NOTE
    cut, used = 0, 0
    while used + len(lines[cut].encode("utf-8")) + 1 <= budget:  # (the whole is past max_bytes: cut < len)
        used += len(lines[cut].encode("utf-8")) + 1
        cut += 1
    rest = lines[cut:]
    # a table's rows, not its header (the line before a rule) nor the rule itself
    rows = sum(1 for i, line in enumerate(rest) if line.startswith("| ")
               and not (i + 1 < len(rest) and rest[i + 1].startswith("|---")))
    left_out = f"{rows:,} more table row{'s' if rows != 1 else ''}" if rows else "the rest of the report"
    note = (f"**Cut short:** {left_out} left out, to keep this report under {max_bytes:,} bytes. Every link is in"
            " the full report (`--format json`, `sarif`, or `markdown` with `-o FILE`) and, in GitHub Actions, in"
            " the annotations.")
    return "\n".join([*lines[:cut], "", note, ""])
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def _certificates(summary: Summary) -> list[str]:
    """--tls-expiry: a table of the hosts' certificates."""
    if summary.certificates is None:
        return []
    if not summary.certificates:
        return [f"**TLS certificates**: {NONE_READ}", ""]
    rows = [f"| {code(host, table=True)} | {text(expires)} | {note} |"
            for host, expires, note in certificate_rows(summary)]
    return ["**TLS certificates**", "", "| Host | Expires | |", "|---|---|---|", *rows, ""]


def text(s: str) -> str:
    """Markdown-inert text: punctuation that could start markup or HTML is backslash-escaped."""
    return _SPECIAL.sub(r"\\\1", printable(s).strip())


def code(s: str, *, table: bool = False) -> str:
    """A code span that shows `s` exactly; HTML and links inside it stay inert."""
    s = printable(s)
    fence = "`" * (max((len(run) for run in re.findall("`+", s)), default=0) + 1)
    if s.startswith("`") or s.endswith("`"):
        s = f" {s} "
    if table:
        s = s.replace("|", "\\|")
    return f"{fence}{s}{fence}"
