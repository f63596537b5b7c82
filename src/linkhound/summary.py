"""The end-of-run view: every Result with all its references, and the counts reporters print."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .status import Status
from .suggestions import Suggestion
from .types import Certificate, Page, Result


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts over one run. `total` counts every occurrence of a link, `unique` each target once; `by_status`
    each status seen (read-only; `count(status)` is 0 for one not seen)."""

    total: int
    unique: int
    by_status: Mapping[Status, int]
    redirects: int  # results that went through at least one redirect
    pages: int  # pages fetched and parsed (inputs and crawled pages)
    elapsed: float  # seconds, wall clock
    interrupted: bool = False
    caps: tuple[str, ...] = ()  # limits that stopped the crawl short, e.g. "max-pages 100"
    # run-level messages no single result carries: "robots.txt of http://h answered 503: host not crawled"
    warnings: tuple[str, ...] = ()
    unchanged: int | None = None  # --changed-since: links in lines unchanged since the ref, not checked (else None)
    # --tls-expiry: every HTTPS host's certificate, by host (None when not checked); with --tls-expiry-fail
    # (certificates_fail) one expiring within the window fails the run
    certificates: tuple[Certificate, ...] | None = None
    certificates_fail: bool = False
    blocked_fail: bool = False  # --fail-on-blocked: a link behind bot protection fails the run too

    def count(self, status: Status) -> int:
        """The unique links of that status (0 when none)."""
        return self.by_status.get(status, 0)

    @property
    def ok(self) -> int:
        """The unique links found ok."""
        return self.count(Status.OK)

    @property
    def broken(self) -> int:
        """How many unique links failed, whatever the status (`Report.broken` holds their Results)."""
        return sum(n for s, n in self.by_status.items() if s.is_broken)

    @property
    def failed(self) -> int:
        """How many unique links fail the run: the broken ones, and the blocked ones with --fail-on-blocked."""
        return self.broken + (self.count(Status.BLOCKED) if self.blocked_fail else 0)

    @property
    def skipped(self) -> int:
        """The unique links not checked: excluded, unsupported or skipped."""
        return sum(n for s, n in self.by_status.items() if s.is_skipped)

    @property
    def expiring(self) -> tuple[Certificate, ...]:
        """The certificates that expire within the --tls-expiry window."""
        return tuple(c for c in self.certificates or () if c.expiring)

    @property
    def success(self) -> bool:
        """No link failed (nor, where asked for, a certificate expires within the window or a link was
        blocked): the command's exit status 0."""
        return self.failed == 0 and not (self.certificates_fail and self.expiring)


@dataclass(frozen=True, slots=True)
class SitemapDrift:
    """How the sitemap and the crawl disagree (--sitemap-drift): each list sorted, URLs as listed or crawled."""

    sitemaps: tuple[str, ...]  # the sitemaps read, an index's own sitemaps included
    listed: int  # URLs in the crawl's scope that they list
    orphans: tuple[str, ...]  # listed in scope, never reached from the seeds (nor where they redirect)
    unlisted: tuple[str, ...]  # HTML pages crawled (ok) that no sitemap lists
    redirected: tuple[tuple[str, str], ...] = ()  # (listed URL, where it ends): a sitemap should list the end
    problems: tuple[str, ...] = ()  # sitemaps that couldn't be read: "http://h/sitemap.xml answered 404"


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a reporter needs. Results are in the order they completed."""

    # a tuple, or with --state a sequence read from the crawl's file each time it is gone through
    results: Sequence[Result]
    summary: Summary
    pages: Sequence[Page] = field(default=())
    sitemap_drift: SitemapDrift | None = None  # with --sitemap-drift
    suggestions: tuple[Suggestion, ...] = ()  # --suggest-fixes, --suggest-https: links to fix, by URL

    @property
    def broken(self) -> tuple[Result, ...]:
        """The Results that failed, whatever the status (`Summary.broken` is how many)."""
        return tuple(r for r in self.results if r.status.is_broken)


def summarize(
    results: Iterable[Result],
    pages: int,
    elapsed: float,
    interrupted: bool = False,
    caps: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
) -> Summary:
    """The counts, in one pass over results (a crawl's stored results are read from its file as they go)."""
    statuses: list[Status] = []
    add = statuses.append
    total = redirects = 0
    for r in results:
        add(r.status)
        total += len(r.references) or 1
        if r.redirects:
            redirects += 1
    return Summary(
        total=total,
        unique=len(statuses),
        by_status=dict(Counter(statuses)),  # (counted in C)
        redirects=redirects,
        pages=pages,
        elapsed=elapsed,
        interrupted=interrupted,
        caps=caps,
        warnings=tuple(warnings),
    )
