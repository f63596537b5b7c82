"""The github format: workflow commands that GitHub Actions turns into annotations on the lines."""

from __future__ import annotations

from ..status import Status
from ..suggestions import Suggestion
from ..summary import Report, SitemapDrift, Summary
from ..types import Reference, Result
from .base import WholeReport
from .certificates import when
from .common import (
    TITLES,
    by_status_then_url,
    describe,
    in_a_file,
    is_problem,
    printable,
    referrers,
    sorted_refs,
    summary_line,
)
from .drift import ORPHAN_HELP, UNLISTED_HELP, drift_headline
from .fixes import notice


class GitHub(WholeReport):
    """`::error` per broken link and referrer (`::warning` when blocked), a `::warning` per run warning,
    then the summary line."""

    def __init__(self, *, summary_only: bool = False) -> None:
        self.summary_only = summary_only

    def finish(self, report: Report) -> str:
        lines = []
        if not self.summary_only:
            for result in by_status_then_url(r for r in report.results if is_problem(r.status)):
                for ref in referrers(result):
                    lines.append(_annotation(result, ref, report.summary.blocked_fail))
            lines.extend(_notice(s, ref) for s in report.suggestions for ref in sorted_refs(s.references))
        if report.sitemap_drift is not None:  # --sitemap-drift: notices, which fail nothing
            lines.extend(_drift(report.sitemap_drift, self.summary_only))
        lines.extend(f"::warning::{_data(w)}" for w in report.summary.warnings)
        lines.extend(_expiring(report.summary))
        lines.append(summary_line(report.summary))
        return "\n".join(lines) + "\n"


def _expiring(summary: Summary) -> list[str]:
    """With --tls-expiry-fail an expiring certificate fails the run: an ::error each (its warning is above)."""
    if not summary.certificates_fail:
        return []
    return [f"::error title=TLS certificate expiring::{_data(f'{c.host} expires {when(c)}')}" for c in summary.expiring]


def _annotation(result: Result, ref: Reference | None, blocked_fail: bool = False) -> str:
    command = "warning" if result.status is Status.BLOCKED and not blocked_fail else "error"
    props: dict[str, str] = {}
    message = f"{result.url} ({describe(result)})"
    if ref is not None and in_a_file(ref):
        props["file"] = ref.source
        if ref.line > 0:
            props["line"] = str(ref.line)
            if ref.column > 0:
                props["col"] = str(ref.column)
    elif ref is not None:
        message += f" in {ref.position()}"
    props["title"] = TITLES[result.status]
    params = ",".join(f"{k}={_property(v)}" for k, v in props.items())
    return f"::{command} {params}::{_data(message)}"


def _drift(drift: SitemapDrift, headline_only: bool) -> list[str]:
    lines = [f"::notice title=Sitemap drift::{_data(drift_headline(drift))}"]
    if headline_only:
        return lines
    lines += [f"::notice title=Orphan page::{_data(f'{url}: {ORPHAN_HELP}')}" for url in drift.orphans]
    lines += [f"::notice title=Page missing from the sitemap::{_data(f'{url}: {UNLISTED_HELP}')}"
              for url in drift.unlisted]
    lines += [f"::notice title=Sitemap lists a redirect::{_data(f'{url} redirects to {end}')}"
              for url, end in drift.redirected]
    lines += [f"::warning title=Sitemap problem::{_data(problem)}" for problem in drift.problems]
    return lines


def _notice(s: Suggestion, ref: Reference) -> str:
    """A `::notice` on a use of a link to fix: not a failure, a better URL."""
    title, message = notice(s)
    props: dict[str, str] = {}
    if in_a_file(ref):
        props["file"] = ref.source
        if ref.line > 0:
            props["line"] = str(ref.line)
            if ref.column > 0:
                props["col"] = str(ref.column)
    else:
        message += f" in {ref.position()}"
    props["title"] = title
    params = ",".join(f"{k}={_property(v)}" for k, v in props.items())
    return f"::notice {params}::{_data(message)}"


def _data(s: str) -> str:
    # @actions/core escapes % and line breaks; printable() has already turned line breaks into "\x0a",
    # so a hostile URL can't start a workflow command of its own on a new line.
    return printable(s).replace("%", "%25")


def _property(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")
