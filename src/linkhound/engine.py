"""The loop of a run: take ready work, check it, feed children back before the parent is done, stop cleanly."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable
from sys import intern

from .checker import CheckPolicy, HttpChecker, Outcome
from .client import ClientOptions, HttpClient
from .extract import Kind, extract, kind_for_path, text_links
from .fragments import Anchors
from .frontier import Added, Frontier
from .host_pool import HostLimits, HostPool, HostStats
from .inputs import Input
from .ledger import Ledger, Target
from .links import LinkRules, Resolved
from .local import check_file, check_mailto, file_url_to_path, read_document
from .loop import fewer_collections
from .page_parser import PageParser
from .parsed_page import ParsedPage
from .robots import Robots
from .scheduler import Scheduler
from .settings import Settings
from .status import Status
from .summary import Report
from .types import Event, Link, Page, RawLink, Reference, Result
from .urls import (
    Scope,
    canonical_key,
    host_of,
    looks_like_asset,
    looks_like_trap,
    resolve,
)
from .version import user_agent

# Response types whose body is read when a page is crawled or its anchors are needed.
_PARSABLE = frozenset(
    {"", "text/html", "application/xhtml+xml", "application/xml", "text/xml", "text/plain", "text/markdown",
     "application/octet-stream", "application/gzip", "application/x-gzip"}
)
_INPUT = "(input)"
_NO_REF = Reference("", 0, 0, "", "", "")
_SEED_BATCH = 100  # links added from the inputs between two chances for requests to go out
_READ_AHEAD = 2  # links read from an input file are queued up to this many times --max-concurrency ahead
MAX_QUERY_VARIANTS = 500  # crawled query strings per path; more are checked, not crawled


def _has_body(outcome: Outcome) -> bool:
    """A page to parse: a good answer that came with its body."""
    response = outcome.response
    return response is not None and response.body is not None and outcome.status is Status.OK


def _reference(source: str, raw: RawLink) -> Reference:
    # A crawl keeps half a million references, most repeating the same few strings (nav links, "a", "href"):
    # interned, each string is stored once (about 30% less memory on the 10k-page bench).
    return Reference(source, raw.line, raw.column, intern(raw.element), intern(raw.attribute), intern(raw.text))


class Engine:
    """One run. `run` checks every input and returns the Report; `emit`, if given, sees each event as it
    happens (with no one listening, the events aren't even made)."""

    def __init__(self, settings: Settings, emit: Callable[[Event], None] | None = None) -> None:
        self.settings = settings
        self._emit = emit
        default = HostLimits(settings.host_concurrency, settings.host_rate, settings.host_burst)
        per_host = settings.host_settings
        self._pool = HostPool(
            default, {h: hs.limits(default) for h, hs in per_host.items()}, max_wait=settings.max_retry_wait
        )
        self._frontier = Frontier(on_host_ready=lambda host: self._scheduler.host_ready(host))
        self._scheduler = Scheduler(self._frontier, self._pool, settings.max_concurrency)
        self._client = HttpClient(
            ClientOptions(
                max_connections=settings.max_concurrency,
                timeout=settings.timeout,
                max_redirects=settings.max_redirects,
                max_body_size=settings.max_body_size,
                user_agent=settings.user_agent or user_agent(),
                headers=settings.headers(),
                insecure=settings.insecure,
                host_headers={h: hs.headers for h, hs in per_host.items() if hs.headers},
                credentials=settings.credentials,
                cookie_jar=settings.cookie_jar,
                addresses=settings.addresses,
                backend=settings.http_client,
            ),
            known=lambda url: canonical_key(url) in self._frontier,
        )
        self._checker = HttpChecker(
            self._client,
            self._pool,
            CheckPolicy(
                settings.accept,
                settings.max_retries,
                settings.retry_backoff,
                settings.max_retry_wait,
                settings.status_rules,
            ),
        )
        self._robots = Robots(self._client, self._pool) if settings.robots and settings.recursive else None
        self._robots_read: set[str] = set()
        self._rules = LinkRules.from_settings(settings)
        self._parser = PageParser(self._rules, settings.include_code, settings.parse_workers)
        self._keep_anchors = self._rules.check_fragments(local=False)  # later links may need them
        self._ledger = Ledger(self._emit)
        self._scope = Scope((), frozenset())
        self._tasks: set[asyncio.Task[None]] = set()
        self._file_anchors: dict[str, Anchors | None] = {}  # path -> anchors, each local document parsed once
        self._pages: list[Page] = []
        self._pages_queued = 0
        self._caps: set[str] = set()
        self._variants: dict[str, int] = {}  # path -> query strings crawled (MAX_QUERY_VARIANTS at most)
        self._stopping = False
        self._read_ahead = max(_SEED_BATCH, _READ_AHEAD * settings.max_concurrency)

    # -- the loop -------------------------------------------------------------------------------------

    async def run(self, inputs: list[Input]) -> Report:
        started = time.monotonic()
        with fewer_collections():  # the report too: it makes a result per URL
            try:
                async with self._client:
                    await self._check_all(inputs)
            finally:
                await self._parser.close()
            return self._ledger.report(
                tuple(self._pages), time.monotonic() - started, self._stopping, tuple(sorted(self._caps))
            )

    async def _check_all(self, inputs: list[Input]) -> None:
        self._scheduler.open_source()
        seeding = asyncio.ensure_future(self._seed(inputs))  # requests start while inputs are read
        while (link := await self._scheduler.next()) is not None:
            self._spawn(self._work(link))
        await self._drain()
        await seeding  # its error, if any, ends the run

    def host_stats(self) -> dict[str, HostStats]:
        return self._pool.stats()

    def known(self) -> int:
        """Targets found so far (checked or not): the progress bar's total."""
        return len(self._ledger)

    def kill(self) -> None:
        """The second Ctrl+C, just before the process exits: end the parsing workers too."""
        self._parser.kill()

    def stop(self) -> None:
        """First Ctrl+C: take no new work; in-flight requests finish or time out."""
        self._stopping = True
        self._scheduler.stop()

    async def _work(self, link: Link | None) -> None:
        """Check links until none may be taken right away: one task serves many links in a row."""
        while link is not None:
            try:
                await self._visit(link)
            except BaseException:  # cancelled: the link is still done, or the run would never end
                self._scheduler.done(link)
                raise
            link = self._scheduler.done_and_next(link)  # its children were added first

    async def _visit(self, link: Link) -> None:
        target = self._ledger.target(link.key)
        try:
            if self._robots is not None and (refusal := await self._robots_refusal(link, target)) is not None:
                self._ledger.checked(target, refusal)
                return
            outcome = await self._fetch(link, target)
            page = await self._parse(link, target, outcome) if _has_body(outcome) else None
            if page is not None:
                self._follow(link, outcome, page)  # the back edge: children first ...
            self._ledger.checked(target, self._result(link, outcome))
            self._maybe_refetch(target)
        except Exception as e:  # a bug must not end the run: the link gets an error result
            self._ledger.checked(target, Result(link.url, Status.ERROR, None, f"internal error: {e!r}"))

    # -- seeding and following ------------------------------------------------------------------------

    async def _seed(self, inputs: list[Input]) -> None:
        try:
            self._seed_scope(inputs)
            for n, inp in enumerate(inputs, 1):
                if inp.is_url:
                    named = RawLink(inp.location, "input", "", 0, 0)
                    resolved = self._rules.resolver("", False)(named.text)
                    self._add(named, resolved, _INPUT, depth=0, follow=True, seed=True)
                    if n % _SEED_BATCH == 0:
                        await asyncio.sleep(0)  # let the first requests go out
                else:
                    await self._read_local(inp)
                if self._stopping:
                    break
        finally:
            self._scheduler.close_source()

    def _seed_scope(self, inputs: list[Input]) -> None:
        urls = [resolve(i.location, "") or i.location for i in inputs if i.is_url]
        self._scope = Scope.from_seeds(
            urls,
            self.settings.scope_domain,
            self.settings.patterns("include_crawl"),
            self.settings.patterns("exclude_crawl"),
        )

    async def _read_local(self, inp: Input) -> None:
        assert inp.content is not None and inp.kind is not None
        base = self._rules.local_base(inp.path) if inp.path else ""
        links: Iterable[RawLink]
        if inp.kind is Kind.TEXT:
            links = text_links(inp.content)  # a long URL list: its first links go out while the rest is read
        else:
            extraction = extract(inp.content, base, inp.kind, include_code=self.settings.include_code)
            if inp.path is not None and inp.kind in (Kind.HTML, Kind.MARKDOWN):
                self._file_anchors[inp.path] = Anchors.of(extraction.anchors, markdown=inp.kind is Kind.MARKDOWN)
            links, base = extraction.links, extraction.base
        local = inp.path is not None
        resolve_link = self._rules.resolver(base, local)
        n = 0
        try:
            for n, raw in enumerate(links, 1):
                self._add(raw, resolve_link(raw.text), inp.location, depth=1, follow=False, local=local)
                if n % _SEED_BATCH == 0:
                    await asyncio.sleep(0)
                    await self._scheduler.room(self._read_ahead)
                    if self._stopping:
                        return
        finally:
            self._page(inp.location, 0, n, followed=False)  # the links read, all of them unless stopped

    def _follow(self, link: Link, outcome: Outcome, page: ParsedPage) -> None:
        response = outcome.response
        nofollow = page.nofollow or (
            response is not None and "nofollow" in (response.headers.get("X-Robots-Tag") or "").lower()
        )
        final = response.url if response is not None else link.url
        follow = self.settings.recursive and not nofollow and (final == link.url or self._scope.contains(final))
        is_sitemap = page.kind is Kind.SITEMAP
        here = self._frontier.depth(link.key) or 0  # may be shorter than when the link was queued
        depth = here if is_sitemap else here + 1
        self._page(final, here, len(page.links), followed=follow)
        keep = self._ledger.target(link.key).children if follow and self.settings.max_depth is not None else None
        known = self._ledger.targets
        fragments = self._keep_anchors
        for raw, resolved in page.links:
            if keep is None and resolved is not None and not is_sitemap:
                # the common case, by far: a link seen before (nav, footer), at no shorter depth
                target = known.get(resolved.key)
                if target is not None and depth >= target.depth and (resolved.fragment is None or not fragments):
                    target.refs.append(_reference(final, raw))
                    continue
            # a sitemap's own sitemaps are always read; its pages seed the crawl with -r, else they are checked
            seed = is_sitemap and (raw.attribute != "sitemap" or raw.element == "robots" or self.settings.recursive)
            key = self._add(raw, resolved, final, depth, follow=follow and not raw.nofollow, seed=seed)
            if keep is not None and key is not None:
                keep.append(key)

    def _page(self, url: str, depth: int, links: int, followed: bool) -> None:
        page = Page(url, depth, links, followed)
        self._pages.append(page)
        if self._emit is not None:
            self._emit(page)

    def _add(
        self,
        raw: RawLink,
        resolved: Resolved | None,
        source: str,
        depth: int,
        follow: bool,
        local: bool = False,
        seed: bool = False,
    ) -> str | None:
        """Record one found link and queue its target if it is new: dedup happens here, before any request.

        Returns the key of an http(s) target, None for others.
        """
        ref = _reference(source, raw)
        if resolved is None:
            self._ledger.immediate("invalid:" + raw.text, raw.text, ref, Status.BROKEN, "invalid URL")
            return None
        target_url, key, fragment, scheme = resolved
        check_fragment = fragment is not None and self._rules.check_fragments(local)
        target = self._ledger.get(key)
        if target is not None:
            self._ledger.refer(target, ref, fragment if check_fragment else None)
            if check_fragment:
                self._need_anchors(target)
            if key in self._frontier:
                self._requeue_if_shorter(target, depth, follow)
                return key
            return None
        skip = self._rules.skip(target_url, scheme)
        if skip is not None:
            self._ledger.immediate(key, target_url, ref, *skip)
            return None
        if scheme == "file":
            if not local and raw.text[:5].lower() == "file:":
                # invariant 10: a web page can't make linkhound look at this machine's files
                self._ledger.immediate(key, target_url, ref, Status.SKIPPED, "file: link on a web page")
                return None
            rooted = local and raw.text.startswith("/") and not raw.text.startswith("//")
            self._check_local(key, target_url, ref, fragment if check_fragment else None, rooted)
            return None
        if scheme == "mailto":
            self._ledger.immediate(key, target_url, ref, *check_mailto(target_url))
            return None
        crawl = self._should_crawl(target_url, depth, follow)
        if seed and not crawl:
            crawl = True  # an input or sitemap entry is always read; it counts toward --max-pages
            self._pages_queued += 1
        target = self._ledger.add(key, target_url, depth, ref, fragment if check_fragment else None)
        target.want_body = crawl or check_fragment
        target.crawl = crawl
        if crawl and self._robots is not None:
            self._read_robots_first(target_url)
        self._frontier.add(Link(target_url, key, depth, crawl, host_of(target_url)))
        return key

    def _should_crawl(self, url: str, depth: int, follow: bool) -> bool:
        if not follow or looks_like_asset(url) or not self._scope.contains(url):
            return False
        path, query = url.split("?", 1)[0], "?" in url
        if looks_like_trap(url) or query and self._variants.get(path, 0) >= MAX_QUERY_VARIANTS:
            self._caps.add("crawler-trap guard")  # calendars and filters make endless query strings
            return False
        limit = self.settings.max_depth
        if limit is not None and depth > limit:
            self._caps.add(f"max-depth {limit}")
            return False
        cap = self.settings.max_pages
        if cap is not None and self._pages_queued >= cap:
            self._caps.add(f"max-pages {cap}")
            return False
        self._pages_queued += 1
        if query:
            self._variants[path] = self._variants.get(path, 0) + 1
        return True

    def _requeue_if_shorter(self, target: Target, depth: int, follow: bool) -> None:
        """Depth is the shortest distance from a seed: a shorter path may bring pages within --max-depth."""
        work = [(target, depth, follow)]
        while work:
            target, depth, follow = work.pop()
            if depth >= target.depth:
                continue
            target.depth = depth
            crawl = target.crawl or self._should_crawl(target.url, depth, follow)
            added = self._frontier.add(Link(target.url, target.key, depth, crawl))
            if added is Added.REQUEUED:
                target.crawl = target.want_body = crawl
            elif added is Added.SHORTER and self.settings.max_depth is not None:
                if target.crawl:  # its children sit one hop closer now (no refetch: their keys were kept)
                    work.extend((child, depth + 1, True) for child in map(self._ledger.target, target.children))
                elif crawl:  # checked as a leaf when it looked too deep: crawl it after all (a second request)
                    target.crawl = target.want_body = True
                    self._frontier.readd(Link(target.url, target.key, depth, True))

    # -- checking -------------------------------------------------------------------------------------

    def _read_robots_first(self, url: str) -> None:
        """Hold a host until its robots.txt is read, so Crawl-delay applies from the first request."""
        host = host_of(url)
        if host in self._robots_read:
            return
        self._robots_read.add(host)
        self._pool.hold(host)

        async def read() -> None:
            try:
                assert self._robots is not None
                await self._robots.allowed(url)
            finally:
                self._pool.unhold(host)
                self._scheduler.wake_host(host)

        self._spawn(read())

    async def _robots_refusal(self, link: Link, target: Target) -> Result | None:
        """A page robots.txt keeps us from crawling is skipped, not requested. Inputs named by the user are not."""
        if self._robots is None or not link.crawl or (target.refs or [_NO_REF])[0].source == _INPUT:
            return None
        allowed, why = await self._robots.allowed(link.url)
        return None if allowed else Result(link.url, Status.SKIPPED, None, why, depth=link.depth)

    async def _fetch(self, link: Link, target: Target) -> Outcome:
        want = target.want_body
        target.body_asked = want  # links that want its anchors from now on may need one more GET
        method = "GET" if want or self.settings.method == "get" else "HEAD"
        return await self._checker.check(link.url, method, lambda ctype: want and ctype in _PARSABLE, link.host)

    async def _parse(self, link: Link, target: Target, outcome: Outcome) -> ParsedPage | None:
        response = outcome.response
        assert response is not None and response.body is not None
        page = await self._parser.parse(response.body, response.url, response.content_type)
        if page is None:
            return None
        if target.fragment_refs or self._keep_anchors:
            target.anchors = Anchors.of(page.anchors, markdown=page.kind is Kind.MARKDOWN)
        if not link.crawl:
            return None
        if response.url != link.url:
            if not self._scope.contains(response.url):
                return None  # redirected out of scope: its links are not ours to check
            if not self._adopt(response.url, link, outcome, target.anchors):
                return None  # redirected to a page that is crawled on its own, once
        return page

    def _adopt(self, url: str, link: Link, outcome: Outcome, anchors: Anchors | None) -> bool:
        """A redirect led to a page nobody linked yet: it counts as fetched, so a link to it later won't
        fetch it again (invariant 5). False when that page is already known: then it is not parsed here."""
        key = canonical_key(url)
        if key in self._frontier or self._ledger.get(key) is not None:
            return False
        self._frontier.mark(key, link.depth)
        result = dataclasses.replace(self._result(link, outcome), url=url, redirects=())
        adopted = self._ledger.adopt(key, url, link.depth, result)
        adopted.crawl = adopted.body_asked = True
        adopted.anchors = anchors
        return True

    def _result(self, link: Link, outcome: Outcome) -> Result:
        response = outcome.response
        return Result(
            url=link.url,
            status=outcome.status,
            code=outcome.code,
            reason=outcome.reason,
            redirects=outcome.redirects,
            elapsed=outcome.elapsed,
            depth=link.depth,
            content_type=response.content_type if response is not None else "",
        )

    def _need_anchors(self, target: Target) -> None:
        if target.result is None:
            target.want_body = True
        else:
            self._maybe_refetch(target)

    def _maybe_refetch(self, target: Target) -> None:
        """A target checked with HEAD, whose anchors some link needs, is fetched once more with GET."""
        if (
            target.result is not None
            and target.fragment_refs
            and target.anchors is None
            and not target.refetched
            and target.result.status.is_ok
            and target.result.content_type in ("", "text/html", "application/xhtml+xml")
            and not target.body_asked
        ):
            target.refetched = True
            target.want_body = True
            self._frontier.readd(Link(target.url, target.key, target.depth, False))

    def _check_local(self, key: str, url: str, ref: Reference, fragment: str | None, rooted: bool) -> None:
        path = file_url_to_path(url)
        found = check_file(path, self.settings.index_files, self._rules.root_dir)
        reason = found.reason
        if rooted and not found.status.is_ok and self._rules.root_dir is None:
            reason += " (a root-relative link: set --root-dir to the site's top folder)"
        target = self._ledger.add(key, url, 0, ref, fragment)
        if found.status.is_ok and found.path is not None:
            target.load_anchors = lambda: self._local_anchors(found.path or "")
        self._ledger.checked(target, Result(url, found.status, None, reason))

    def _local_anchors(self, path: str) -> Anchors | None:
        """Anchors of a file on disk: from its extraction if it was an input, else read and parsed once."""
        if path in self._file_anchors:
            return self._file_anchors[path]
        kind = kind_for_path(path)
        body = read_document(path, self.settings.max_body_size) if kind in (Kind.HTML, Kind.MARKDOWN) else None
        anchors = None
        if kind is not None and body is not None:
            anchors = Anchors.of(extract(body, "", kind).anchors, markdown=kind is Kind.MARKDOWN)
        self._file_anchors[path] = anchors
        return anchors

    # -- tasks ----------------------------------------------------------------------------------------

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

