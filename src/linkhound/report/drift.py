"""Sitemap drift (--sitemap-drift) as every format shows it: a record for the machine formats, lines for the
text ones."""

from __future__ import annotations

from ..summary import SitemapDrift
from .common import printable
from .records import Record

ORPHAN = "orphan"  # listed in a sitemap, never reached by the crawl
UNLISTED = "unlisted"  # crawled, listed in no sitemap
ORPHAN_HELP = "listed in the sitemap, but no crawled page links to it"
UNLISTED_HELP = "crawled, but the sitemap doesn't list it"


def drift_record(drift: SitemapDrift) -> Record:
    return {
        "sitemaps": list(drift.sitemaps),
        "listed": drift.listed,
        "orphans": list(drift.orphans),
        "unlisted": list(drift.unlisted),
        "redirected": [{"url": url, "to": end} for url, end in drift.redirected],
        "problems": list(drift.problems),
    }


def drift_rows(drift: SitemapDrift) -> list[tuple[str, str]]:
    """(ORPHAN or UNLISTED, URL), orphans first (an orphan's own result names the sitemap that lists it)."""
    return [(ORPHAN, url) for url in drift.orphans] + [(UNLISTED, url) for url in drift.unlisted]


def drift_headline(drift: SitemapDrift) -> str:
    """"sitemap drift: 120 URLs listed in 2 sitemaps; 3 orphans, 5 unlisted, 1 redirected"."""
    n = len(drift.sitemaps)
    return (
        f"sitemap drift: {drift.listed:,} URL{_s(drift.listed)} listed in {n:,} sitemap{_s(n)}; "
        f"{len(drift.orphans):,} orphan{_s(len(drift.orphans))}, {len(drift.unlisted):,} unlisted, "
        f"{len(drift.redirected):,} redirected"
    )


def drift_lines(drift: SitemapDrift, headline_only: bool = False) -> list[str]:
    """The headline, then one line per orphan, unlisted page, redirected entry and unreadable sitemap."""
    lines = [drift_headline(drift)]
    if headline_only:
        return lines
    lines += [f"  {ORPHAN} ({ORPHAN_HELP}): {printable(url)}" for url in drift.orphans]
    lines += [f"  {UNLISTED} ({UNLISTED_HELP}): {printable(url)}" for url in drift.unlisted]
    lines += [f"  redirected in the sitemap: {printable(url)} -> {printable(end)}" for url, end in drift.redirected]
    lines += [f"  sitemap problem: {printable(problem)}" for problem in drift.problems]
    return lines


def _s(n: int) -> str:
    return "" if n == 1 else "s"
