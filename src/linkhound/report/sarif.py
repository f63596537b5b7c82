"""The sarif format: SARIF 2.1.0 for GitHub code scanning, with a region for each link in a local file."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from ..status import Status
from ..summary import Report
from ..types import Reference, Result
from . import common
from .base import WholeReport
from .common import TITLES, by_status_then_url, describe, is_problem, is_url, printable, referrers
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


class Sarif(WholeReport):
    """A result per (problem link, referrer): GitHub shows one annotation per location."""

    def finish(self, report: Report) -> str:
        results = [
            _result(result, ref)
            for result in by_status_then_url(r for r in report.results if is_problem(r.status))
            for ref in referrers(result)
        ]
        driver = {
            "name": "linkhound",
            "version": common.tool_version(),
            "rules": [_rule(status, rule) for status, rule in RULES.items()],
        }
        # The run itself worked even when links failed; its warnings are notifications of the tool, not results.
        invocation = {
            "executionSuccessful": True,
            "toolExecutionNotifications": [
                {"level": "warning", "message": {"text": printable(w)}} for w in report.summary.warnings
            ],
        }
        run = {
            "tool": {"driver": driver},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"summary": summary_record(report.summary)},
        }
        return dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, pretty=True) + "\n"


def _rule(status: Status, rule: Rule) -> Record:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": TITLES[status]},
        "fullDescription": {"text": rule.help},
        "defaultConfiguration": {"level": rule.level},
    }


def _result(result: Result, ref: Reference | None) -> Record:
    rule = RULES[result.status]
    out: Record = {
        "ruleId": rule.id,
        "ruleIndex": _INDEX[result.status],
        "level": rule.level,
        "message": {"text": printable(f"{TITLES[result.status]}: {result.url} ({describe(result)})")},
    }
    if ref is not None:
        out["locations"] = [{"physicalLocation": _physical(ref)}]
    out["properties"] = {
        "url": result.url,
        "status": result.status.value,
        "code": result.code,
        "redirects": list(result.redirects),
        "cached": result.cached,
    }
    return out


def _physical(ref: Reference) -> Record:
    artifact: Record
    if is_url(ref.source):
        artifact = {"uri": ref.source}
    elif Path(ref.source).is_absolute():
        artifact = {"uri": Path(ref.source).as_uri()}
    else:
        artifact = {"uri": quote(Path(ref.source).as_posix()), "uriBaseId": "%SRCROOT%"}
    location: Record = {"artifactLocation": artifact}
    if ref.line > 0:
        location["region"] = {"startLine": ref.line} | ({"startColumn": ref.column} if ref.column > 0 else {})
    return location
