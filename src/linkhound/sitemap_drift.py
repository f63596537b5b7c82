"""Sitemap drift (--sitemap-drift): the sitemap is read on the side, never as seeds; once the crawl is over its
URLs are compared with what the crawl reached: listed pages it never reached (orphans), crawled pages it
doesn't list (unlisted)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from .client import HttpClient
from .crawl_state import UNREACHED
from .extract.sitemap import extract_sitemap, robots_sitemaps
from .host_pool import HostPool
from .ledger import Ledger, reference
from .links import LinkRules, Resolved
from .summary import SitemapDrift
from .types import RawLink, Result
from .urls import Scope, canonical_key, host_of, origin_of

MAX_SITEMAPS = 1000  # sitemaps read per run, an index's own included: an index of indexes can't go on forever
_HTML = ("text/html", "application/xhtml+xml")
_CAPPED_POLL = 0.05  # seconds between asks while the host is at its concurrency cap


class Answer(NamedTuple):
    """A sitemap's (or robots.txt's) answer: its status and body, and the size the body was cut at (None: whole)."""

    status: int
    body: bytes | None
    cut_at: int | None = None


Fetch = Callable[[str], Awaitable[Answer]]  # url -> its answer: the run's HTTP client
RobotsLines = Callable[[str], Awaitable[tuple[str, ...] | None]]  # url -> its robots.txt's Sitemap: lines


class Entry(NamedTuple):
    """A URL a sitemap lists: as written and resolved, and where (for the reference the run records)."""

    sitemap: str  # the sitemap that lists it
    raw: RawLink
    resolved: Resolved

    @property
    def url(self) -> str:
        return self.resolved.url

    @property
    def key(self) -> str:
        """The canonical key: what the crawl state knows it by."""
        return self.resolved.key


class Listing(NamedTuple):
    """What the sitemaps list, each URL once (the first listing wins)."""

    sitemaps: tuple[str, ...]
    entries: tuple[Entry, ...]
    problems: tuple[str, ...]


def drift_key(key: str) -> str:
    """The key two URLs are compared by: the canonical key (scheme and host lower-case, default port dropped,
    escapes normalised) without a trailing slash on the path, so /docs and /docs/ are one page."""
    path_end = key.find("?")
    head, query = (key, "") if path_end < 0 else (key[:path_end], key[path_end:])
    if head.endswith("/") and head.count("/") > 3:
        head = head[:-1]
    return head + query


def _counted(url: str, in_scope: Callable[[str], bool]) -> bool:
    """Whether a listed URL counts: in the crawl's scope, or its twin with a trailing slash is (/docs is one page
    with /docs/, yet outside the scope of a crawl seeded at /docs/)."""
    if in_scope(url):
        return True
    path_end = url.find("?")
    head, query = (url, "") if path_end < 0 else (url[:path_end], url[path_end:])
    return not head.endswith("/") and in_scope(head + "/" + query)


def http_fetch(client: HttpClient, pool: HostPool, max_body_size: int) -> Fetch:
    """GET with the run's client, within the host's limits (rate, concurrency) like every other request (the
    pool tells the crawl's scheduler when the slot is given back), and its body cut at max_body_size as theirs
    are (the client's own)."""

    async def fetch(url: str) -> Answer:
        host = host_of(url)
        while (wait := pool.try_acquire(host)) != 0.0:
            await asyncio.sleep(_CAPPED_POLL if wait == math.inf else wait)
        try:
            response = await client.fetch(url, "GET", lambda content_type: True)
        finally:
            pool.release(host)
        return Answer(response.status, response.body, max_body_size if response.truncated else None)

    return fetch


async def find_sitemaps(
    seeds: Iterable[str], fetch: Fetch, robots_lines: RobotsLines | None
) -> tuple[list[str], list[str]]:
    """The sitemaps of each seed's origin: its robots.txt's Sitemap: lines (from the crawl's own robots.txt
    fetch when it obeys robots.txt), else /sitemap.xml; and the problems met (a host the crawl stays off)."""
    found: list[str] = []
    problems: list[str] = []
    for origin in dict.fromkeys(origin_of(seed) for seed in seeds):
        if robots_lines is not None:
            lines = await robots_lines(origin + "/")
            if lines is None:
                problems.append(f"{origin}/robots.txt keeps the crawl off the host: its sitemap not read")
                continue
        else:
            try:
                status, body, _ = await fetch(origin + "/robots.txt")
            except Exception:  # unreachable: /sitemap.xml will say so
                status, body = 0, None
            lines = tuple(robots_sitemaps(body)) if status < 400 and body else ()
        found.extend(lines or (origin + "/sitemap.xml",))
    if not found and not problems:
        problems.append("no sitemap to read: no URL input to find one from (give --sitemap)")
    return list(dict.fromkeys(found)), problems


async def read_listing(starts: Iterable[str], fetch: Fetch, rules: LinkRules, problems: Iterable[str] = ()
                       ) -> Listing:
    """Read each sitemap, and the sitemaps a sitemap index names (up to MAX_SITEMAPS in all). A sitemap given
    as a local file is read from disk."""
    queue, seen = list(starts), set()
    read: list[str] = []
    entries: dict[str, Entry] = {}
    problems = list(problems)
    while queue and len(read) < MAX_SITEMAPS:
        sitemap = queue.pop(0)
        if sitemap in seen:
            continue
        seen.add(sitemap)
        body, problem = await _body(sitemap, fetch)
        if problem:
            problems.append(f"{sitemap}: {problem}")
        if body is None:
            continue
        read.append(sitemap)
        links = extract_sitemap(body).links
        if not links:
            problems.append(f"{sitemap}: lists no URLs (not a sitemap?)")
        resolve = rules.resolver(sitemap if "://" in sitemap else "", False)
        for raw in links:
            resolved = resolve(raw.text)
            if resolved is None:
                continue
            if raw.attribute == "sitemapindex":
                queue.append(resolved.url)
            elif resolved.key not in entries:
                entries[resolved.key] = Entry(sitemap, raw, resolved._replace(fragment=None))
    if queue:
        problems.append(f"more than {MAX_SITEMAPS} sitemaps: the rest not read")
    return Listing(tuple(read), tuple(entries.values()), tuple(problems))


async def _body(sitemap: str, fetch: Fetch) -> tuple[bytes | None, str]:
    """The sitemap's body (None: not read), and the problem met ("" for none). A body cut short is read as far
    as it goes, and said so: the URLs it lists past the cut are not known."""
    if "://" not in sitemap:
        try:
            return Path(sitemap).read_bytes(), ""
        except OSError as e:
            return None, f"can't read: {e.strerror or e}"
    try:
        status, body, cut_at = await fetch(sitemap)
    except Exception as e:  # network errors, timeouts, redirect loops: the sitemap is not read
        return None, f"can't fetch: {e}"
    if status >= 400 or body is None:
        return None, f"answered {status}"
    if cut_at is not None:
        return body, f"cut at --max-body-size {cut_at}: the URLs it lists past that not read"
    return body, ""


Add = Callable[..., Awaitable[None]]  # Engine._add: (source, links, depth) -> found links sorted and queued
Known = Callable[[list[str]], Awaitable[set[str]]]  # keys -> those the crawl state holds


class DriftCheck:
    """One run's comparison: the sitemaps read while the crawl runs, their unreached URLs checked after it."""

    def __init__(
        self, given: str | None, fetch: Fetch, rules: LinkRules,
        robots_lines: RobotsLines | None,
    ) -> None:
        self._given = given
        self._fetch = fetch
        self._rules = rules
        self._robots_lines = robots_lines
        self._task: asyncio.Future[Listing] | None = None
        self._listing: Listing | None = None
        self._reached: set[str] = set()

    def start(self, seeds: list[str]) -> None:
        self._task = asyncio.ensure_future(self._read(seeds))

    async def _read(self, seeds: list[str]) -> Listing:
        if self._given is not None:
            return await read_listing([self._given], self._fetch, self._rules)
        starts, problems = await find_sitemaps(seeds, self._fetch, self._robots_lines)
        return await read_listing(starts, self._fetch, self._rules, problems)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def add_listed(self, known: Known, ledger: Ledger, scope: Scope, add: Add) -> None:
        """Once the crawl is over: what it reached is noted (known: the keys of those the crawl state holds),
        every listed URL in scope gets its sitemap as a referrer, and those it never reached are checked as
        links (not crawled: their own links would blur what the crawl reaches)."""
        assert self._task is not None
        self._listing = listing = await self._task
        entries = [e for e in listing.entries if _counted(e.url, scope.contains)]
        sitemaps = set(listing.sitemaps)
        self._reached = {key for key in await known([e.key for e in entries]) if _linked(ledger, key, sitemaps)}
        for e in entries:
            if e.key in self._reached:
                ledger.refer(e.key, e.url, reference(e.sitemap, e.raw))
            else:  # no input leads to it: its redirect to a crawled page moves no depth and crawls nothing more
                await add(e.sitemap, [(e.raw, e.resolved)], UNREACHED)

    def report(self, crawled: Iterable[Crawled], result_of: Callable[[str], Result | None], scope: Scope
               ) -> SitemapDrift | None:
        """None when the run stopped before the comparison."""
        if self._listing is None:
            return None
        return compare(self._listing, self._reached.__contains__, crawled, result_of, scope.contains)


def _linked(ledger: Ledger, key: str, sitemaps: set[str]) -> bool:
    """Whether the crawl met key by some way other than the sitemaps: a resumed crawl (--state) already holds
    the orphans the sitemaps added to it the first time, with only them as referrers."""
    refs = ledger.references_of(key)
    if refs is None:  # a distributed crawl: another process holds its references, and no sitemap's
        return True
    return not refs or any(ref.element != "loc" or ref.source not in sitemaps for ref in refs)


class Crawled(NamedTuple):
    """A page the crawl fetched and parsed: its URL (after redirects) and its result."""

    url: str
    result: Result | None


def compare(
    listing: Listing,
    reached: Callable[[str], bool],
    crawled: Iterable[Crawled],
    result_of: Callable[[str], Result | None],
    in_scope: Callable[[str], bool],
) -> SitemapDrift:
    """Pure: the drift between what the sitemaps list (in scope) and what the crawl reached (reached(key): the
    crawl met a link to it before the sitemap was looked at) or crawled (ok HTML pages)."""
    pages = {drift_key(canonical_key(c.url)): c.url for c in crawled if in_scope(c.url) and _is_html_page(c.result)}
    entries = [e for e in listing.entries if _counted(e.url, in_scope)]
    listed: set[str] = set()
    orphans: list[str] = []
    redirected: list[tuple[str, str]] = []
    for entry in entries:
        listed.add(drift_key(entry.key))
        result = result_of(entry.key)
        end = result.redirects[-1] if result is not None and result.redirects else None
        if end is not None:
            redirected.append((entry.url, end))
            listed.add(drift_key(canonical_key(end)))
        if reached(entry.key) or drift_key(entry.key) in pages:
            continue
        if end is None or drift_key(canonical_key(end)) not in pages:
            orphans.append(entry.url)
    # a sitemap not read (or not whole) may list any page: none is called unlisted, the problems say why
    whole = listing.sitemaps and not listing.problems
    unlisted = sorted(url for key, url in pages.items() if key not in listed) if whole else []
    return SitemapDrift(
        listing.sitemaps, len({drift_key(e.key) for e in entries}), tuple(sorted(orphans)),
        tuple(unlisted), tuple(sorted(redirected)), listing.problems,
    )


def _is_html_page(result: Result | None) -> bool:
    return result is not None and result.status.is_ok and result.content_type in _HTML
