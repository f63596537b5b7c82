"""The sarif format: SARIF 2.1.0 for GitHub code scanning, with a region for each link in a local file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from ..status import Status
from ..suggestions import HTTPS, MOVED, Suggestion, rewrite
from ..summary import Report
from ..types import Reference, Result
from . import common
from .base import WholeReport
from .common import (
    INTERRUPTED,
    TITLES,
    by_status_then_url,
    describe,
    in_a_file,
    is_problem,
    is_url,
    printable,
    referrers,
    sorted_refs,
)
from .drift import ORPHAN, ORPHAN_HELP, UNLISTED, UNLISTED_HELP, drift_record, drift_rows
from .fixes import notice
from .records import Record, dumps, summary_record

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class Rule(NamedTuple):
    id: str
    name: str
    help: str
    level: str


# One rule per problem status, always all of them, so rule indexes never move between runs.
RULES: dict[Status, Rule] = {
    Status.BROKEN: Rule(
        "broken-link",
        "BrokenLink",
        "The target answered with a failure: an HTTP error, a missing file or a missing anchor.",
        "error",
    ),
    Status.ERROR: Rule(
        "link-error",
        "LinkError",
        "No usable answer: DNS failure, refused or reset connection, TLS error or a bad body.",
        "error",
    ),
    Status.TIMEOUT: Rule("link-timeout", "LinkTimeout", "The target did not answer in time.", "error"),
    Status.RATE_LIMITED: Rule(
        "link-rate-limited",
        "LinkRateLimited",
        "The server still answered 429 Too Many Requests after every retry.",
        "error",
    ),
    Status.BLOCKED: Rule(
        "link-blocked",
        "LinkBlocked",
        "Bot protection answered instead of the page, so the link could not be checked: check it by hand.",
        "warning",
    ),
    Status.SOFT_404: Rule(  # last: the rules before it keep their indexes
        "link-soft-404",
        "SoftNotFound",
        "The target answered 200 with the page its host gives for paths that don't exist (--soft-404).",
        "error",
    ),
}
_INDEX = {status: i for i, status in enumerate(RULES)}
# --sitemap-drift's notes: listed after the status rules (with --sitemap-drift), so no index moves
DRIFT_RULES: dict[str, Rule] = {
    ORPHAN: Rule("orphan-page", "OrphanPage", f"A page {ORPHAN_HELP}.", "note"),
    UNLISTED: Rule("page-not-in-sitemap", "PageNotInSitemap", f"A page {UNLISTED_HELP}.", "note"),
}


class Sarif(WholeReport):
    """A result per (problem link, referrer): GitHub shows one annotation per location."""

    def finish(self, report: Report) -> str:
        blocked_fail = report.summary.blocked_fail
        results = [
            _result(result, ref, blocked_fail)
            for result in by_status_then_url(r for r in report.results if is_problem(r.status))
            for ref in referrers(result)
        ]
        if report.sitemap_drift is not None:  # --sitemap-drift: a note per orphan and unlisted page
            results += [_drift_result(kind, url) for kind, url in drift_rows(report.sitemap_drift)]
        rules = [_rule(status, rule) for status, rule in RULES.items()]
        if report.sitemap_drift is not None:
            rules += [_rule(None, rule) for rule in DRIFT_RULES.values()]
        if report.suggestions:  # after the status rules, whose indexes never move; only when there are any
            results += [_fix_result(s, ref, len(rules)) for s in report.suggestions for ref in referrers_of(s)]
            rules += [_fix_rule(kind, title, text) for kind, (title, text) in FIX_RULES.items()]
        driver = {"name": "linkhound", "version": common.tool_version(), "rules": rules}
        # The run itself worked even when links failed; its warnings are notifications of the tool, not results.
        # An interrupted one did not: its results are a part (code scanning would close the alerts of the rest).
        notifications = [{"level": "warning", "message": {"text": printable(w)}} for w in report.summary.warnings]
        if report.summary.interrupted:
            notifications.insert(0, {"level": "error", "message": {"text": INTERRUPTED}})
        invocation = {
            "executionSuccessful": not report.summary.interrupted,
            "toolExecutionNotifications": notifications,
        }
        properties: Record = {"summary": summary_record(report.summary)}
        if report.sitemap_drift is not None:
            properties["sitemap_drift"] = drift_record(report.sitemap_drift)
        run = {
            "tool": {"driver": driver},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": properties,
        }
        return dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, pretty=True) + "\n"


def _rule(status: Status | None, rule: Rule) -> Record:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": TITLES[status] if status is not None else rule.help.rstrip(".")},
        "fullDescription": {"text": rule.help},
        "defaultConfiguration": {"level": rule.level},
    }


def _result(result: Result, ref: Reference | None, blocked_fail: bool = False) -> Record:
    """A problem link's result at one referrer (blocked_fail: --fail-on-blocked, a blocked link is an error)."""
    rule = RULES[result.status]
    out: Record = {
        "ruleId": rule.id,
        "ruleIndex": _INDEX[result.status],
        "level": "error" if blocked_fail and result.status is Status.BLOCKED else rule.level,
        "message": {"text": printable(f"{TITLES[result.status]}: {result.url} ({describe(result)})")},
    }
    if ref is not None and _located(ref):
        out["locations"] = [{"physicalLocation": _physical(ref)}]
    out["properties"] = {
        "url": result.url,
        "status": result.status.value,
        "code": result.code,
        "redirects": list(result.redirects),
        "cached": result.cached,
    }
    return out


def _drift_result(kind: str, url: str) -> Record:
    """A page the sitemap and the crawl disagree on, located at its own URL."""
    rule = DRIFT_RULES[kind]
    help = ORPHAN_HELP if kind == ORPHAN else UNLISTED_HELP
    return {
        "ruleId": rule.id,
        "ruleIndex": len(RULES) + list(DRIFT_RULES).index(kind),
        "level": rule.level,
        "message": {"text": printable(f"{url}: {help}")},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": url}}}],
        "properties": {"url": url, "sitemap_drift": kind},
    }


# The rules of links to fix (--suggest-fixes, --suggest-https), by Suggestion.kind.
FIX_RULES = {
    MOVED: ("Link moved", "The link answers with a permanent redirect (301, 308): link to where it leads."),
    HTTPS: ("Link has an https:// twin", "The https:// form of this http:// link answers the same: use it."),
}


def _fix_rule(kind: str, title: str, help_text: str) -> Record:
    return {
        "id": f"link-{kind}",
        "name": "LinkMoved" if kind == MOVED else "LinkHttps",
        "shortDescription": {"text": title},
        "fullDescription": {"text": help_text},
        "defaultConfiguration": {"level": "note"},
    }


def referrers_of(s: Suggestion) -> list[Reference | None]:
    return [*sorted_refs(s.references)] or [None]


def _fix_result(s: Suggestion, ref: Reference | None, first: int) -> Record:
    _, message = notice(s)
    out: Record = {
        "ruleId": f"link-{s.kind}",
        "ruleIndex": first + list(FIX_RULES).index(s.kind),
        "level": "note",
        "message": {"text": printable(message)},
    }
    if ref is not None and _located(ref):
        physical = _physical(ref)
        out["locations"] = [{"physicalLocation": physical}]
        new = rewrite(ref.text, s.replacement)
        verbatim = "&" not in ref.text and "\\" not in ref.text  # else it may be spelled with entities or escapes
        if new is not None and verbatim and "region" in physical and ref.column > 0 and not is_url(ref.source):
            region = {"startLine": ref.line, "startColumn": ref.column, "endColumn": ref.column + len(ref.text)}
            change = {"artifactLocation": physical["artifactLocation"],
                      "replacements": [{"deletedRegion": region, "insertedContent": {"text": new}}]}
            out["fixes"] = [{"description": {"text": printable(message)}, "artifactChanges": [change]}]
    out["properties"] = {"url": s.url, "replacement": s.replacement, "kind": s.kind}
    return out


def _located(ref: Reference) -> bool:
    """Whether ref has a location to point at: a page (its URL) or a local file (a --files-from list's line
    too); not a URL named on the command line or in a config file, nor a document read from stdin."""
    return is_url(ref.source) or in_a_file(ref)


def _physical(ref: Reference) -> Record:
    artifact: Record
    if is_url(ref.source):
        artifact = {"uri": ref.source}
    elif Path(ref.source).is_absolute() or ref.source.startswith("../"):  # (outside %SRCROOT%: absolute)
        artifact = {"uri": Path(os.path.abspath(ref.source)).as_uri()}
    else:
        artifact = {"uri": quote(Path(ref.source).as_posix(), errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}
    location: Record = {"artifactLocation": artifact}
    if ref.line > 0:
        location["region"] = {"startLine": ref.line} | ({"startColumn": ref.column} if ref.column > 0 else {})
    return location
