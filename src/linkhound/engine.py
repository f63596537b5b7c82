"""The loop of a run: take ready work, fetch it, feed found links back through one `add`, finish children
before parents, stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .checker import CheckPolicy, HttpChecker
from .client import HttpClient, Transport, client_options
from .crawl_state import Claim, Found, Plan, StateFactory
from .extract import Kind
from .fetcher import Fetched, Fetcher, Others
from .heading_styles import HeadingStyles
from .hop_gate import HopGate
from .host_pool import HostLimits, HostPool, HostStats
from .inputs import INPUT_SOURCE, Input
from .ledger import Ledger, MemoryLedger
from .links import LinkRules
from .local_files import LocalFiles
from .loop import fewer_collections
from .memory_state import MemoryState
from .notes import Notes, NotesPart
from .page_log import PageEntry, PageLog
from .page_parser import PageParser
from .redirects import Redirects
from .scheduler import Scheduler
from .settings import Settings
from .sorter import Links, LinkSorter, batches
from .status import Status
from .storage import open_storage
from .summary import Report
from .traps import TrapGuard
from .types import Event, Page, RawLink, Result
from .urls import Scope, canonical_key
from .version import agent_token

if TYPE_CHECKING:
    from .changed_lines import ChangedLines
    from .parse_ahead import ParseAhead
    from .robots import Robots
    from .sitemap_drift import DriftCheck, Known
    from .summary import SitemapDrift
    from .tls_expiry import CertificateWatch

# The parts of a run that only some options use (robots.txt, soft-404 probes, sitemap drift, certificates,
# --changed-since, fixes) load when those options are on: a list of URLs asks for its first answers sooner.

# --jobs: after the inputs are read, more URLs for this process (given back by the others), queued by the call
More = Callable[[Callable[[list[Claim]], None]], Awaitable[None]]

_SEED_BATCH = 32  # links added from an input between two chances for requests to go out (and answers in)
_READ_AHEAD = 2  # links read from an input file are queued up to this many times --max-concurrency ahead


class Engine:
    """One run. `run` checks every input and returns the Report; `emit`, if given, sees each event as it
    happens (with no one listening, the events aren't even made)."""

    def __init__(
        self,
        settings: Settings,
        emit: Callable[[Event], None] | None = None,
        transport: Transport | None = None,
        state: StateFactory = MemoryState,
        ledger: Ledger | None = None,
        pool: Callable[..., HostPool] = HostPool,
        reached: Known | None = None,
        joined: Callable[[], Awaitable[None]] | None = None,
        feed: Callable[[Callable[[list[Found]], Awaitable[None]]], Awaitable[None]] | None = None,
        ahead: ParseAhead | None = None,
        others: Others | None = None,  # --jobs: the other processes, told of the redirects followed here
        more: More | None = None,  # --jobs: URLs the others give back once the inputs are read, queued here
    ) -> None:
        s = self.settings = settings
        # first: its --cookie-jar, read now, may be an option's error, before the run opens a file of its own
        self._client = HttpClient(client_options(s), transport)
        self._emit = emit
        default = HostLimits(s.host_concurrency, s.host_rate, s.host_burst)
        per_host = {h: hs.limits(default) for h, hs in s.host_settings.items()}
        self._pool = pool(default, per_host, max_wait=s.max_retry_wait)
        kept = open_storage(s, state, lambda host: self._scheduler.host_ready(host), emit)
        self._state, self._ledger, self._journal, self._cache = kept
        if ledger is not None:  # a distributed crawl's, in Redis
            self._ledger = ledger
        if self._journal is not None:
            self._journal.on_failure(self.cancel)  # its file can't be written (disk full): nothing more to do
        self._scheduler = Scheduler(self._state, self._pool, s.max_concurrency)
        checker = self._checker = HttpChecker(self._client, self._pool, CheckPolicy.from_settings(s))
        self._rules = LinkRules.from_settings(s)
        self._parser = PageParser(self._rules, s.include_code, s.parse_workers)
        robots: Robots | None = None
        if s.robots and s.recursive:
            from .robots import Robots

            robots = Robots(checker, self._pool, s.user_agent or "")
        known = lambda url: self._state.depth(canonical_key(url)) is not None  # noqa: E731
        soft = None
        if s.soft_404:
            from .soft404 import SoftNotFound

            soft = SoftNotFound(checker, self._pool, robots)
        gate = self._gate = self._client.gate = HopGate(self._pool, robots, self._in_scope)  # (hops, retries)
        self._fetcher = Fetcher(checker, self._parser, self._pool, robots, s.method, known, self._cache, soft,
                                keep_ends=not s.status_rules, others=others, max_redirects=s.max_redirects,
                                wait_bound=s.timeout * (s.max_redirects + 1) * (s.max_retries + 1),
                                agent=agent_token(s.user_agent or ""), in_scope=self._in_scope,
                                location_fragments=s.check_fragments is True)
        self._fetcher.pause, self._fetcher.gate = self._pause, gate
        self._certs: CertificateWatch | None = None
        if s.tls_window is not None:
            from .tls_expiry import CertificateWatch

            self._certs = CertificateWatch(s.tls_window, s.tls_expiry_fail, s.timeout, s.insecure, s.addresses)
        self._known = reached or self._known_here  # which keys the crawl state holds (a shared one: all of them)
        self._drift: DriftCheck | None = None
        if s.sitemap_drift and s.recursive:
            from .sitemap_drift import DriftCheck, http_fetch

            self._drift = DriftCheck(s.sitemap, http_fetch(self._client, self._pool, s.max_body_size), self._rules,
                                     robots.sitemaps if robots else None)
        self._guard = TrapGuard(s.max_path_variants)
        self._pages = PageLog()  # (with --state, the journal's pages are in the state's file)
        self._notes = Notes()
        self._more_caps: set[str] = set()  # those other processes of the run noted (--jobs)
        self._more_warnings: list[str] = []
        self._ahead = ahead  # the input documents, parsed by a child process meanwhile
        files = LocalFiles(self._rules, s.index_files, s.include_code, HeadingStyles(s.heading_ids), ahead)
        self._sorter = LinkSorter(self._rules, self._ledger, files, self._guard, s.recursive, s.state is not None)
        wake = self._scheduler.wake_host
        self._redirects = Redirects(self._state, self._ledger, self._fetcher, wake, s.recursive, self._in_scope)
        if self._journal is not None:
            self._journal.notes_source = self._run_notes
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._stopped = asyncio.Event()  # set by stop(): a claim waiting to ask again gives up then
        self._read_ahead = max(_SEED_BATCH, _READ_AHEAD * s.max_concurrency)
        # --changed-since: the changed lines of each file, and the links left out as unchanged
        self._changed: ChangedLines | None = None
        if s.changed_since is not None:
            from .changed_lines import ChangedLines

            self._changed = ChangedLines.from_git(s.changed_since)
        self._unchanged = 0
        # a run checked by several processes (--jobs): the others' results merged here, or links found by the
        # process that reads the inputs fed to one that doesn't
        self._joined, self._feed, self._more = joined, feed, more

    # -- the loop -------------------------------------------------------------------------------------

    async def run(self, inputs: list[Input]) -> Report:
        started = time.monotonic()
        with fewer_collections(), contextlib.ExitStack() as kept:  # the report too: it makes a result per URL
            if self._journal is not None:
                kept.callback(self._journal.close)  # after the report, which reads the state
                await self._journal.resume(self.settings, inputs, self._sorter.files)
            try:
                if self.settings.recursive:
                    self._parser.start()  # (a crawl's pages are parsed on the other core from its first)
                async with self._client:
                    await self._checked_all(inputs)
                    await self._fetcher.close()
                    if self._cache is not None:
                        self._fetcher.cache_redirects(self._ledger)
                        self._cache.flush()  # (before the report: a last write that fails is said in it)
                    report = await self.with_certificates(self._report(time.monotonic() - started))
                    s = self.settings
                    if (s.suggest_fixes or s.suggest_https) and not self._stopping:
                        from .fix_finder import with_suggestions

                        report = await with_suggestions(report, s.suggest_fixes, s.suggest_https, self._checker,
                                                        self._pool, s.max_concurrency)
            finally:
                if self._ahead is not None:
                    self._ahead.close()
                await self._parser.close()
                if self._cache is not None:
                    self._cache.close()
            return report

    async def _checked_all(self, inputs: list[Input]) -> None:
        """_check_all, or the error of a --state that could not be written (the report would be of a crawl the
        state doesn't hold)."""
        journal = self._journal
        try:
            await self._check_all(inputs)
            if journal is not None:
                journal.commit()
        except Exception as e:
            if journal is None or not journal.failing(e):
                raise
        if journal is not None and journal.failed is not None:
            raise journal.failed

    async def _check_all(self, inputs: list[Input]) -> None:
        if self._drift is not None:  # read on the side while the crawl runs: its URLs are no seeds
            self._drift.start([i.location for i in inputs if i.is_url])
        producer = self._seed(inputs) if self._feed is None else self._feed(self._state_add)
        await self._drain(producer if self._more is None else self._and_more(producer, self._more))
        if self._joined is not None:
            await self._joined()
        if self._drift is not None:
            if self._stopping:
                self._drift.cancel()
                return
            # only now is it known what the crawl reached: the rest of the sitemap is checked, not crawled
            self._sorter.crawl_over()
            listed = self._drift.add_listed(self._known, self._ledger, self._sorter.scope, self._add)
            await self._drain(listed)

    def _in_scope(self, url: str) -> bool:
        """Whether the crawl would read the page at url (its scope is set when the run starts)."""
        return self._sorter.scope.contains(url)

    async def _known_here(self, keys: list[str]) -> set[str]:
        return {key for key in keys if self._state.depth(key) is not None}

    async def _drain(self, producer: Awaitable[None]) -> None:
        """Fetch until nothing is queued or in flight and producer (which adds links meanwhile) is done."""

        async def feed() -> None:
            try:
                await producer
            finally:
                self._scheduler.close_source()

        self._scheduler.open_source()
        # requests start while inputs are read. A context of its own: the loop below runs where claims are
        # taken, and a producer's adds belong to no claim (a shared state logs them by the claim they came from)
        feeding = asyncio.get_running_loop().create_task(feed(), context=contextvars.Context())
        try:
            while (claim := await self._scheduler.next()) is not None:
                self._spawn(self._work(claim))
            while self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
        except asyncio.CancelledError:  # the run itself is cancelled (its caller's wait_for, a task.cancel()):
            self.cancel()  # no claim goes on in the background, and none is left behind
            feeding.cancel()
            await asyncio.gather(feeding, *self._tasks, *self._fetcher.cancel(), return_exceptions=True)
            raise
        await feeding  # its error, if any, ends the run

    async def _work(self, claim: Claim | None) -> None:
        """Fetch claims until none may be taken right away: one task serves many in a row."""
        while claim is not None:
            try:
                served = await self._visit(claim)
            except BaseException:  # cancelled: the claim is still done, or the run would never end
                await self._scheduler.done(claim, Plan.PAGE, self._gate.settle(claim.host))
                raise
            try:  # (the host slot given back: the claim's, or where its redirect moved it)
                claim = await self._scheduler.done_and_next(claim, served, self._gate.settle(claim.host))
            except Exception as e:
                if self._journal is None or not self._journal.failing(e):
                    raise
                return  # the state can't be written: the run stops (run() says why)

    async def _visit(self, claim: Claim) -> Plan:
        try:
            fetched = await self._fetcher.fetch(claim)
            if self._certs is not None:
                self._certs.note(fetched.result)
            if fetched.same_as:
                await self._redirects.same_as(claim, fetched)  # its result: that of the URL the redirect reached
                return fetched.served
            self._notes.fetched(claim.url, fetched)
            if fetched.final and claim.plan is Plan.PAGE:
                await self._follow(claim, fetched)  # the back edge: children first ...
            self._ledger.checked(claim.key, fetched.result, fetched.anchors)  # ... then the page is done
            return fetched.served
        except Exception as e:  # a bug must not end the run: the link gets an error result
            if self._journal is not None and self._journal.failing(e):
                return Plan.PAGE  # the state can't be written: the run stops (run() says why)
            self._ledger.checked(claim.key, Result(claim.url, Status.ERROR, None, f"internal error: {e!r}"))
            return Plan.PAGE

    async def _pause(self, seconds: float | None, until: asyncio.Future[Any] | None = None) -> None:
        """A claim's wait before it asks again (a retry's backoff or Retry-After, a token or a slot at the hop
        gate, another check's hop: until, at most seconds): its global slot serves other hosts meanwhile (no
        head-of-line blocking, and none held while others' requests are waited for), and is taken back, before
        new claims, to ask. Cut short by stop(): the checker then asks no more, and a hop's wait goes on."""
        self._scheduler.lend()
        try:
            if until is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(until), seconds)
            elif self._stopping or seconds is None:  # (a token's wait at the hop gate: the redirect in flight goes on)
                await asyncio.sleep(seconds or 0.0)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopped.wait(), seconds)
        finally:
            await asyncio.shield(self._scheduler.take_back())  # (cancelled: taken back all the same, then done)

    def host_stats(self) -> dict[str, HostStats]:
        return self._pool.stats()

    @property
    def fetcher(self) -> Fetcher:  # (--jobs: what the other processes tell of their redirects goes to it)
        return self._fetcher

    def resize(self, most: int) -> None:
        """At most `most` requests at once from now on (the others of a run joining it); those past it end."""
        self._scheduler.resize(most)

    def within_limits(self) -> bool:
        """Whether the requests in flight fit --max-concurrency as in force now (after resize())."""
        return self._scheduler.within_limits

    def inputs_read(self) -> bool:
        """Whether every input has been read (no more links will come from them)."""
        return self._scheduler.inputs_read

    def prepare(self, most: int) -> list[Result] | None:
        """Up to `most` more of the report's results made now (MemoryLedger.prepare), while the run waits on
        answers; None once none is left to make, or where the ledger makes none ahead (a file's, Redis's)."""
        ledger = self._ledger
        return ledger.prepare(self._state.depth, most) if isinstance(ledger, MemoryLedger) else None

    def settle(self, most: int) -> bool:
        """Up to `most` more of the results made ahead found final (MemoryLedger.settle); False once none is
        left, or where the ledger makes none ahead. For a run to which no reference will be added any more."""
        ledger = self._ledger
        return isinstance(ledger, MemoryLedger) and ledger.settle(self._state.depth, most)

    def known(self) -> int:
        """Targets found so far (checked or not): the progress bar's total."""
        return len(self._ledger)

    def kill(self) -> None:
        """The second Ctrl+C, just before the process exits: end the parsing workers too."""
        self._parser.kill()

    def stop(self) -> None:
        """First Ctrl+C: take no new work; in-flight requests finish or time out."""
        self._stopping = True
        self._stopped.set()
        self._checker.stopping = True
        self._scheduler.stop()

    def cancel(self) -> None:
        """After stop(): cancel what is still in flight (each cancelled claim is still done, so the run ends)."""
        self.stop()
        for task in self._tasks:
            task.cancel()
        if self._certs is not None:
            self._certs.cancel()

    # -- seeding and following ------------------------------------------------------------------------

    async def _seed(self, inputs: list[Input]) -> None:
        s = self.settings
        crawl_only, never = s.patterns("include_crawl"), s.patterns("exclude_crawl")
        seeds = self._sorter.files.seed_urls(inputs, s.recursive)
        self._sorter.scope = Scope.from_seeds(seeds, s.scope_domain, crawl_only, never)
        resolve_input = self._rules.resolver("", False)
        for n, inp in enumerate(inputs, 1):
            if inp.is_url:
                resolved = resolve_input(inp.location)
                if resolved is not None:
                    self._fetcher.named.add(resolved.key)
                raw = RawLink(inp.location, "input", "", inp.line, 1 if inp.line else 0)
                await self._add(inp.named_in or INPUT_SOURCE, [(raw, resolved)], 0, seed=True)
                if n % _SEED_BATCH == 0:
                    await asyncio.sleep(0)  # let the first requests go out
            else:
                await self._read_local(inp)
            if self._stopping:
                break

    async def _read_local(self, inp: Input) -> None:
        local = inp.path is not None
        # a sitemap's pages are seeds as a fetched sitemap's are: crawled with -r, its sitemaps read anyway
        sitemap = self.settings.recursive if inp.kind is Kind.SITEMAP else None
        depth = 0 if sitemap is not None else 1
        n = 0
        try:
            for batch in batches(self._links(inp), _SEED_BATCH):
                n += len(batch)
                await self._add(inp.location, batch, depth, local=local, sitemap=sitemap, follow=bool(sitemap))
                await asyncio.sleep(0)
                await self._scheduler.room(self._read_ahead)
                if self._stopping:
                    return
        finally:
            self._page(inp.location, None, n, followed=False)  # the links read, all of them unless stopped

    def _links(self, inp: Input) -> Links:
        """The links of a local input; with --changed-since, only those in changed lines (the rest counted)."""
        links = self._sorter.files.links(inp)
        if self._changed is None or inp.path is None or inp.stdin:  # (stdin has no history: all of it counts)
            return links
        lines = self._changed.lines(inp.path)
        return links if lines is None else self._changed_only(links, lines)

    def _changed_only(self, links: Links, lines: frozenset[int]) -> Links:
        for link in links:
            if link[0].line in lines:
                yield link
            else:
                self._unchanged += 1

    async def _follow(self, claim: Claim, fetched: Fetched) -> None:
        page, key = fetched.page, await self._redirects.page_key(claim, fetched)
        if page is None or key is None:
            return
        follow = self.settings.recursive and not fetched.nofollow
        hop = 0 if page.kind is Kind.SITEMAP else 1
        depth = self._state.depth(key)
        self._page(fetched.final, key, len(page.links), follow)
        sitemap = self.settings.recursive if hop == 0 else None
        await self._add(fetched.final, page.links, (claim.depth if depth is None else depth) + hop, follow=follow,
                        from_network=True, parent=key, hop=hop, sitemap=sitemap)

    async def _add(
        self, source: str, links: Links, depth: int, parent: str | None = None, hop: int = 1, *, follow: bool = False,
        from_network: bool = False, local: bool = False, seed: bool = False, sitemap: bool | None = None,
    ) -> None:
        """The back edge: found links sorted (references kept, some decided now), the rest to the crawl state."""
        found = self._sorter.sort(source, links, depth, follow=follow, from_network=from_network, local=local,
                                  seed=seed, sitemap=sitemap)
        await self._state_add(found, parent, hop, self._sorter.known if parent is not None else ())

    async def _state_add(
        self, found: list[Found], parent: str | None = None, hop: int = 1, known: list[str] | tuple[()] = ()
    ) -> None:
        self._queued(await self._state.add(found, parent, hop, known))

    def _queued(self, claims: list[Claim]) -> None:
        for claim in claims:
            self._fetcher.prepare(claim, self._scheduler.wake_host)

    async def _and_more(self, producer: Awaitable[None], more: More) -> None:
        """producer, then more: the run goes on while it adds (the inputs count as read only after it)."""
        await producer
        await more(self._queued)

    def _page(self, url: str, key: str | None, links: int, followed: bool) -> None:
        if self._journal is None:
            self._pages.append((url, key, links, followed))
        elif not self._journal.page((url, key, links, followed)):
            return  # read again on resume: recorded by the run that was stopped
        if self._emit is not None:
            depth = self._state.depth(key) if key is not None else None
            self._emit(Page(url, depth or 0, links, followed))

    def _report(self, elapsed: float) -> Report:
        self._sorter.close()
        depth_of = self._state.depth
        if self._journal is not None:
            pages: Sequence[Page] = self._journal.pages
            entries: Iterable[PageEntry] = self._journal.pages.entries()
        else:
            pages = tuple(Page(url, (depth_of(key) or 0) if key else 0, n, f) for url, key, n, f in self._pages)
            entries = self._pages
        caps, warnings = self._run_notes()
        caps |= set(self._state.cut_by())
        report = self._ledger.report(pages, elapsed, self._stopping, tuple(sorted(caps)), depth_of, tuple(warnings))
        if self._changed is not None:
            report = dataclasses.replace(report, summary=dataclasses.replace(report.summary, unchanged=self._unchanged))
        if self.settings.fail_on_blocked:
            report = dataclasses.replace(report, summary=dataclasses.replace(report.summary, blocked_fail=True))
        if self._drift is None:
            return report
        crawled = [url for url, key, _, _ in entries if key is not None]
        return dataclasses.replace(report, sitemap_drift=self.sitemap_drift(crawled, self._ledger))

    async def with_certificates(self, report: Report) -> Report:
        """report with --tls-expiry's certificates: those of every HTTPS host that answered a link of it, read
        as the run went and now for the hosts of results it didn't fetch (an earlier session's, with --state;
        the other processes', in a distributed crawl). A stopped run reads no more."""
        if self._certs is None:
            return report
        if not self._stopping:
            for result in report.results:
                self._certs.note(result)
        await self._certs.close()
        return self._certs.into(report)

    def sitemap_drift(self, crawled: list[str], ledger: Ledger) -> SitemapDrift | None:
        """--sitemap-drift's comparison, with the pages crawled (their URLs after redirects) and the ledger
        that holds their results (a distributed crawl's report has its own)."""
        if self._drift is None:
            return None

        from .sitemap_drift import Crawled

        pages = [Crawled(url, ledger.result_of(canonical_key(url))) for url in crawled]
        return self._drift.report(pages, ledger.result_of, self._sorter.scope)

    def notes_part(self) -> NotesPart:
        """What this process noted for the report (--jobs: another process writes it)."""
        cut, partly = self._notes.part()
        return sorted(self._caps()), self._fetcher.warnings(), cut, partly

    def add_notes(self, part: NotesPart) -> None:
        """What another process of the run noted (--jobs): in this one's report."""
        caps, fetch_warnings, cut, partly = part
        self._more_caps.update(caps)
        self._more_warnings += fetch_warnings
        self._notes.merge(cut, partly)

    def _run_notes(self) -> tuple[set[str], list[str]]:
        """The run's caps and warnings (with those of the earlier sessions of a resumed crawl)."""
        caps = self._caps() | self._more_caps
        cache_warnings = self._cache.warnings if self._cache is not None else []
        fetch_warnings = list(dict.fromkeys(cache_warnings + self._fetcher.warnings() + self._more_warnings))  # once
        warnings = list(self._notes.warnings(fetch_warnings, self._state.refetched))
        return (caps, warnings) if self._journal is None else self._journal.notes(caps, warnings)

    def _caps(self) -> set[str]:
        return self._sorter.caps | {f"trap suspected: {p}" for p in self._guard.suspected}

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
