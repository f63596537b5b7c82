"""Reporters: turn the stream of Results into one of the output formats named in FORMATS."""

from __future__ import annotations

from ..exceptions import UsageError
from .ansi import wants_color
from .base import Reporter

FORMATS: tuple[str, ...] = (
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
# A record per link is the whole point of these; "only the summary" would leave an empty shell.
_NO_SUMMARY_ONLY = ("junit", "sarif", "csv")


def reporter_for(
    fmt: str,
    *,
    color: bool = False,
    verbose: bool = False,
    summary_only: bool = False,
    all_referrers: bool = False,
    fork: bool = True,
) -> Reporter:
    """The reporter for a format name. `color` applies to compact and detailed, `verbose` (every link,
    not only problems) to compact, markdown and html; `summary_only` to all but junit, sarif and csv.
    Compact, detailed and markdown list a link's first few referrers and "… and N more"; `all_referrers`
    (or `verbose`) lists them all; html folds the rest into a <details>, open with `all_referrers`.
    json, jsonl, junit, sarif and csv always carry every referrer. `fork`: json, csv and junit may make half of
    a big report in a forked child (report/forked.py); False keeps it in this process (--workers 0)."""
    if fmt not in FORMATS:
        raise UsageError(f"--format: unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if summary_only and fmt in _NO_SUMMARY_ONLY:
        raise UsageError(f"--summary-only does not apply to --format {fmt}, which reports each link")
    # each format's module is imported only when asked for: a run loads one of them
    match fmt:
        case "compact":
            from .compact import Compact

            return Compact(
                color=color, verbose=verbose, summary_only=summary_only, all_referrers=all_referrers
            )
        case "detailed":
            from .detailed import Detailed

            return Detailed(color=color, summary_only=summary_only, all_referrers=all_referrers or verbose)
        case "json":
            from .json_report import JsonReport

            return JsonReport(summary_only=summary_only, fork=fork)
        case "jsonl":
            from .jsonl import JsonLines

            return JsonLines(summary_only=summary_only)
        case "markdown":
            from .markdown import Markdown

            return Markdown(verbose=verbose, summary_only=summary_only, all_referrers=all_referrers)
        case "junit":
            from .junit import JUnit

            return JUnit(fork=fork)
        case "sarif":
            from .sarif import Sarif

            return Sarif()
        case "github":
            from .github import GitHub

            return GitHub(summary_only=summary_only)
        case "csv":
            from .csv_report import Csv

            return Csv(fork=fork)
        case _:
            from .html import Html

            return Html(verbose=verbose, summary_only=summary_only, all_referrers=all_referrers)


__all__ = ["FORMATS", "Reporter", "reporter_for", "wants_color"]
