"""The markdown format: the summary, then a table per source; made for GitHub job summaries and issues."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from ..summary import Report, Summary
from ..types import Result
from .base import WholeReport
from .certificates import certificate_rows
from .common import LABELS, by_source, describe, folded_refs, is_problem, more, printable, summary_line


class Markdown(WholeReport):
    """Problems (every link when verbose) in a GitHub-flavoured table per file or page; a link's first
    referrers only, unless all_referrers or verbose, with a note saying how many more there are."""

    def __init__(self, *, verbose: bool = False, summary_only: bool = False, all_referrers: bool = False) -> None:
        self.verbose = verbose
        self.summary_only = summary_only
        self.all_referrers = all_referrers or verbose

    def finish(self, report: Report) -> str:
        out = ["## Link check", "", text(summary_line(report.summary)), ""]
        if report.summary.warnings:
            # code spans, like every URL here: a warning names hosts and pages that must not become links
            out += ["**Warnings**", "", *(f"- {code(w)}" for w in report.summary.warnings), ""]
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
        return "\n".join(out)

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


_RULE = "|---:|---|---|---|---|"
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def _certificates(summary: Summary) -> list[str]:
    """--tls-expiry: a table of the hosts' certificates."""
    if summary.certificates is None:
        return []
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
