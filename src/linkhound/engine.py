"""The loop of a run: take ready work, fetch it, feed found links back through one `add`, finish children
before parents, stop cleanly."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from sys import intern

from .checker import CheckPolicy, HttpChecker
from .client import HttpClient, Transport, client_options
from .crawl_state import Claim, CrawlState, Found, Limits, Plan, StateFactory
from .extract import Kind, extract, kind_for_path, text_links
from .fetcher import Fetched, Fetcher
from .fragments import Anchors
from .host_pool import HostLimits, HostPool, HostStats
from .inputs import Input
from .ledger import Ledger
from .links import LinkRules, Resolved
from .local import check_file, check_mailto, file_url_to_path, read_document
from .loop import fewer_collections
from .memory_state import MemoryState
from .page_parser import PageParser
from .robots import Robots
from .scheduler import Scheduler
from .settings import Settings
from .status import Status
from .summary import Report
from .traps import TrapGuard
from .triage import HTTP_LEAF, Route, Triage, triage
from .types import Event, Page, RawLink, Reference, Result
from .urls import Scope, canonical_key, host_of, resolve

_INPUT = "(input)"
_SEED_BATCH = 100  # links added from an input between two chances for requests to go out
_READ_AHEAD = 2  # links read from an input file are queued up to this many times --max-concurrency ahead
Links = Iterable[tuple[RawLink, Resolved | None]]


def _reference(source: str, raw: RawLink) -> Reference:
    # A crawl keeps half a million references, most repeating the same few strings (nav links, "a", "href"):
    # interned, each string is stored once (about 30% less memory on the 10k-page bench).
    return Reference(source, raw.line, raw.column, intern(raw.element), intern(raw.attribute), intern(raw.text))


class Engine:
    """One run. `run` checks every input and returns the Report; `emit`, if given, sees each event as it
    happens (with no one listening, the events aren't even made)."""

    def __init__(
        self,
        settings: Settings,
        emit: Callable[[Event], None] | None = None,
        transport: Transport | None = None,
        state: StateFactory = MemoryState,
    ) -> None:
        s = self.settings = settings
        self._emit = emit
        default = HostLimits(s.host_concurrency, s.host_rate, s.host_burst)
        per_host = {h: hs.limits(default) for h, hs in s.host_settings.items()}
        self._pool = HostPool(default, per_host, max_wait=s.max_retry_wait)
        limits = Limits(s.max_depth, s.max_pages)
        self._state: CrawlState = state(limits, lambda host: self._scheduler.host_ready(host))
        self._scheduler = Scheduler(self._state, self._pool, s.max_concurrency)
        known = lambda url: self._state.depth(canonical_key(url)) is not None  # noqa: E731
        self._client = HttpClient(client_options(s), transport, known)
        checker = HttpChecker(self._client, self._pool, CheckPolicy.from_settings(s))
        self._rules = LinkRules.from_settings(s)
        self._parser = PageParser(self._rules, s.include_code, s.parse_workers)
        robots = Robots(self._client, self._pool) if s.robots and s.recursive else None
        self._fetcher = Fetcher(checker, self._parser, self._pool, robots, s.method)
        self._ledger = Ledger(emit)
        self._guard = TrapGuard()
        self._scope = Scope((), frozenset())
        self._http: dict[str, tuple[bool, str]] = {}  # key -> (crawlable, host), decided once per URL
        self._pages: list[tuple[str, str | None, int, bool]] = []  # url, key, links, followed
        self._caps: set[str] = set()
        self._file_anchors: dict[str, Anchors | None] = {}  # path -> anchors: each local document parsed once
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._read_ahead = max(_SEED_BATCH, _READ_AHEAD * s.max_concurrency)

    # -- the loop -------------------------------------------------------------------------------------

    async def run(self, inputs: list[Input]) -> Report:
        started = time.monotonic()
        with fewer_collections():  # the report too: it makes a result per URL
            try:
                async with self._client:
                    await self._check_all(inputs)
                    await self._fetcher.close()
            finally:
                await self._parser.close()
            return self._report(time.monotonic() - started)

    async def _check_all(self, inputs: list[Input]) -> None:
        self._scheduler.open_source()
        seeding = asyncio.ensure_future(self._seed(inputs))  # requests start while inputs are read
        while (claim := await self._scheduler.next()) is not None:
            self._spawn(self._work(claim))
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await seeding  # its error, if any, ends the run

    async def _work(self, claim: Claim | None) -> None:
        """Fetch claims until none may be taken right away: one task serves many in a row."""
        while claim is not None:
            try:
                served = await self._visit(claim)
            except BaseException:  # cancelled: the claim is still done, or the run would never end
                await self._scheduler.done(claim, Plan.PAGE)
                raise
            claim = await self._scheduler.done_and_next(claim, served)  # its children were added first

    async def _visit(self, claim: Claim) -> Plan:
        try:
            fetched = await self._fetcher.fetch(claim)
            if fetched.page is not None and claim.plan is Plan.PAGE:
                await self._follow(claim, fetched)  # the back edge: children first ...
            self._ledger.checked(claim.key, fetched.result, fetched.anchors)  # ... then the page is done
            return fetched.served
        except Exception as e:  # a bug must not end the run: the link gets an error result
            self._ledger.checked(claim.key, Result(claim.url, Status.ERROR, None, f"internal error: {e!r}"))
            return Plan.PAGE

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

    # -- seeding and following ------------------------------------------------------------------------

    async def _seed(self, inputs: list[Input]) -> None:
        try:
            urls = [resolve(i.location, "") or i.location for i in inputs if i.is_url]
            s = self.settings
            crawl_only, never = s.patterns("include_crawl"), s.patterns("exclude_crawl")
            self._scope = Scope.from_seeds(urls, s.scope_domain, crawl_only, never)
            resolve_input = self._rules.resolver("", False)
            for n, inp in enumerate(inputs, 1):
                if inp.is_url:
                    resolved = resolve_input(inp.location)
                    if resolved is not None:
                        self._fetcher.named.add(resolved.key)
                    await self._add(_INPUT, [(RawLink(inp.location, "input", "", 0, 0), resolved)], 0, seed=True)
                    if n % _SEED_BATCH == 0:
                        await asyncio.sleep(0)  # let the first requests go out
                else:
                    await self._read_local(inp)
                if self._stopping:
                    break
        finally:
            self._scheduler.close_source()

    async def _read_local(self, inp: Input) -> None:
        assert inp.content is not None and inp.kind is not None
        base = self._rules.local_base(inp.path) if inp.path else ""
        raws: Iterable[RawLink]
        if inp.kind is Kind.TEXT:
            raws = text_links(inp.content)  # a long URL list: its first links go out while the rest is read
        else:
            extraction = extract(inp.content, base, inp.kind, include_code=self.settings.include_code)
            if inp.path is not None and inp.kind in (Kind.HTML, Kind.MARKDOWN):
                self._file_anchors[inp.path] = Anchors.of(extraction.anchors, markdown=inp.kind is Kind.MARKDOWN)
            raws, base = extraction.links, extraction.base
        local = inp.path is not None
        resolve_link = self._rules.resolver(base, local)
        n = 0
        batches = _batches(((raw, resolve_link(raw.text)) for raw in raws), _SEED_BATCH)
        try:
            for batch in batches:
                n += len(batch)
                await self._add(inp.location, batch, 1, local=local)
                await asyncio.sleep(0)
                await self._scheduler.room(self._read_ahead)
                if self._stopping:
                    return
        finally:
            self._page(inp.location, None, n, followed=False)  # the links read, all of them unless stopped

    async def _follow(self, claim: Claim, fetched: Fetched) -> None:
        page = fetched.page
        assert page is not None
        key, final = claim.key, fetched.final
        if final != claim.url:
            if not self._scope.contains(final):
                return  # redirected out of scope: its links are not ours to check
            key = canonical_key(final)
            if not await self._state.adopt(Found(key, final, host_of(final), claim.depth, True)):
                return  # a page known on its own: crawled once, for itself
            adopted = dataclasses.replace(fetched.result, url=final, redirects=())
            self._ledger.adopt(key, final, adopted, fetched.anchors)
        follow = self.settings.recursive and not fetched.nofollow
        hop = 0 if page.kind is Kind.SITEMAP else 1
        depth = self._state.depth(key)
        self._page(final, key, len(page.links), follow)
        sitemap = self.settings.recursive if hop == 0 else None
        await self._add(final, page.links, (claim.depth if depth is None else depth) + hop, follow=follow,
                        from_network=True, parent=key, hop=hop, sitemap=sitemap)

    async def _add(
        self,
        source: str,
        links: Links,
        depth: int,
        *,
        follow: bool = False,
        from_network: bool = False,
        local: bool = False,
        seed: bool = False,
        parent: str | None = None,
        hop: int = 1,
        sitemap: bool | None = None,  # a sitemap's links: its own sitemaps are read, its pages crawled with -r
    ) -> None:
        """Record the references of found links and hand their http(s) targets to the crawl state."""
        fragments = self._rules.check_fragments(local)
        found: list[Found] = []
        for raw, resolved in links:
            ref = _reference(source, raw)
            route = self._route(resolved, from_network, follow)
            if resolved is None or route.route is not Route.HTTP:
                self._decide(raw, resolved, route, ref, fragments, local)
                continue
            url, key, fragment = resolved[:3]
            fragment = fragment if fragments else None
            self._ledger.refer(key, url, ref, fragment)
            crawlable, host = self._http[key]
            if sitemap is not None:
                seed = raw.attribute != "sitemap" or raw.element == "robots" or sitemap
            crawl = follow and crawlable and not raw.nofollow
            found.append(Found(key, url, host, depth, crawl, fragment is not None, seed))
        for claim in await self._state.add(found, parent, hop):
            self._fetcher.prepare(claim, self._scheduler.wake_host)

    def _route(self, resolved: Resolved | None, from_network: bool, follow: bool) -> Triage:
        """triage(), decided once per http(s) URL; the trap guard sees each URL that may be crawled."""
        if resolved is not None and resolved.key in self._http:
            return HTTP_LEAF
        route = triage(resolved, from_network, self._rules, self._scope)
        if resolved is not None and route.route is Route.HTTP:
            crawlable = route.crawlable and self.settings.recursive and self._guard.admit(resolved.url)
            self._http[resolved.key] = (crawlable, host_of(resolved.url))
            if follow and route.reason:
                self._caps.add("crawler-trap guard")
        return route

    def _decide(
        self, raw: RawLink, resolved: Resolved | None, route: Triage, ref: Reference, fragments: bool, local: bool
    ) -> None:
        """A link that needs no request: its verdict now."""
        if resolved is None:
            self._ledger.decided("invalid:" + raw.text, raw.text, ref, route.status, route.reason)
        elif route.route is Route.MAILTO:
            self._ledger.decided(resolved.key, resolved.url, ref, *check_mailto(resolved.url))
        elif route.route is Route.FILE:
            rooted = local and raw.text.startswith("/") and not raw.text.startswith("//")
            self._check_file(resolved, ref, resolved.fragment if fragments else None, rooted)
        else:
            self._ledger.decided(resolved.key, resolved.url, ref, route.status, route.reason)

    def _check_file(self, resolved: Resolved, ref: Reference, fragment: str | None, rooted: bool) -> None:
        target = self._ledger.refer(resolved.key, resolved.url, ref, fragment)
        if target.result is not None:
            return
        found = check_file(file_url_to_path(resolved.url), self.settings.index_files, self._rules.root_dir)
        reason = found.reason
        if rooted and not found.status.is_ok and self._rules.root_dir is None:
            reason += " (a root-relative link: set --root-dir to the site's top folder)"
        if found.status.is_ok and found.path is not None:
            path = found.path
            target.load_anchors = lambda: self._local_anchors(path)
        self._ledger.checked(resolved.key, Result(resolved.url, found.status, None, reason))

    def _local_anchors(self, path: str) -> Anchors | None:
        """Anchors of a file on disk: from its extraction if it was an input, else read and parsed once."""
        if path not in self._file_anchors:
            kind = kind_for_path(path)
            body = read_document(path, self.settings.max_body_size) if kind in (Kind.HTML, Kind.MARKDOWN) else None
            anchors = None
            if kind is not None and body is not None:
                anchors = Anchors.of(extract(body, "", kind).anchors, markdown=kind is Kind.MARKDOWN)
            self._file_anchors[path] = anchors
        return self._file_anchors[path]

    def _page(self, url: str, key: str | None, links: int, followed: bool) -> None:
        self._pages.append((url, key, links, followed))
        if self._emit is not None:
            depth = self._state.depth(key) if key is not None else None
            self._emit(Page(url, depth or 0, links, followed))

    def _report(self, elapsed: float) -> Report:
        depth_of = self._state.depth
        pages = tuple(Page(url, (depth_of(key) or 0) if key else 0, n, f) for url, key, n, f in self._pages)
        caps = self._caps | set(self._state.cut_by()) | {f"trap suspected: {p}" for p in self._guard.suspected}
        return self._ledger.report(pages, elapsed, self._stopping, tuple(sorted(caps)), depth_of)

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _batches(items: Links, size: int) -> Iterator[list[tuple[RawLink, Resolved | None]]]:
    batch: list[tuple[RawLink, Resolved | None]] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
