"""One claim -> one Fetched value over HTTP: robots.txt refusal, HEAD or GET, which answers are parsed,
X-Robots-Tag, and how much of the claim's plan the answer satisfies."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from .checker import HttpChecker, Outcome
from .crawl_state import Claim, Plan
from .extract import Kind
from .extract.text import in_utf8
from .fragments import Anchors, named_by_location
from .host_pool import HostPool
from .local import EMAIL_HINT, looks_like_email
from .page_parser import PageParser
from .parsed_page import PARSABLE, ParsedPage
from .soft404 import SoftNotFound, is_html
from .status import Status
from .transport import declared_charset
from .types import Result
from .urls import canonical_key, host_of

if TYPE_CHECKING:
    from .cache import ResultCache
    from .client import Pause
    from .hop_gate import HopGate
    from .ledger import Ledger
    from .robots import Robots

# Enum members read once: on Python 3.11 every Plan.X and Status.X goes through EnumType's __getattr__ hook
# (~0.2 µs each, several times per link).
_CHECK, _BODY_PLAN, _PAGE = Plan.CHECK, Plan.BODY, Plan.PAGE
_OK = Status.OK
_NOWHERE = Outcome(_OK, None, "", (), 0.0)  # (a redirect of no hops yet, joined to a way: _way_on)


_ANCHORED = frozenset({Kind.HTML, Kind.MARKDOWN})  # the kinds of document #fragments point into
_ENDS_KEPT = 10_000  # redirect ends kept for a claim of their own (Fetcher._keep_end)


def _BODY(ctype: str) -> bool:  # noqa: N802 - want_body: the body of any document
    return ctype in PARSABLE


def _NO_BODY(ctype: str) -> bool:  # noqa: N802
    return False


class Fetched(NamedTuple):
    result: Result
    served: Plan  # the plans this answer satisfies: a failure or a non-HTML answer satisfies them all
    page: ParsedPage | None = None  # the parsed body, when the plan asked for it
    anchors: Anchors | None = None
    final: str = ""  # where a good answer came from, after redirects ("" for failures and non-documents)
    nofollow: bool = False  # <meta name=robots content=nofollow> or X-Robots-Tag: nofollow
    same_as: str = ""  # a redirect reached this URL, checked on its own: its result is this one's


class Way(NamedTuple):
    """Where a redirect went, told to those waiting at one of its hops: its chain and codes, and the URL checked
    on its own it stopped at ("" if it ended at an answer: kept, as its end's, if it was one)."""

    redirects: tuple[str, ...]
    codes: tuple[int, ...]
    same_as: str


class Others(Protocol):
    """The other processes of a run (--jobs), as a fetcher tells them about its redirects."""

    def kept(self, key: str, end: Fetched) -> None:
        """A redirect end's answer, kept here (Fetcher.learn keeps it there)."""

    def reaching(self, key: str) -> None:
        """A hop a redirect here is fetching now (Fetcher.reaching_elsewhere)."""

    def reached(self, keys: list[str], way: Way | None) -> None:
        """The hops that redirect fetched, and where it went (None: it failed without an answer)."""

    def ask(self, url: str) -> bool:
        """Whether a hop a redirect here reached is fetched by another process (the first of the run, asked now:
        it tells where it went, as reached); False where this process fetches its hops itself."""


class Fetcher:
    def __init__(
        self,
        checker: HttpChecker,
        parser: PageParser,
        pool: HostPool,
        robots: Robots | None,
        method: str,
        known: Callable[[str], bool] | None = None,  # URLs the run checks on its own: a redirect to one reuses it
        cache: ResultCache | None = None,
        soft: SoftNotFound | None = None,  # --soft-404: 200 HTML answers are judged against their host's 404 page
        keep_ends: bool = True,  # False where a URL's verdict depends on the URL (--accept-for): see _keep_end
        others: Others | None = None,  # --jobs: told each end kept and each hop fetched, waited for at theirs
        max_redirects: int = 10,
        wait_bound: float = 600.0,  # seconds a redirect waits at a hop another process fetches, at most
        agent: str = "linkhound",  # the product token X-Robots-Tag may name (version.agent_token)
        in_scope: Callable[[str], bool] | None = None,  # the crawl's scope: robots.txt keeps its leaves off too
        location_fragments: bool = False,  # --check-fragments: a #fragment a redirect's Location names is checked
    ) -> None:
        # (the end's body read, from the hop a Location with a #fragment led to: HttpClient.fetch)
        self._anchored: Callable[[str], bool] | None = _BODY if location_fragments else None
        self._agent = agent
        self._in_scope = in_scope or (lambda url: False)
        self._others = others
        self._wait_bound = wait_bound
        self._max_redirects = max_redirects
        self._soft = soft
        # the answers redirects ended at, by the end's key, for a claim of the end itself (a list that names an
        # end below its redirect; a crawl's leaf link to it): no second request. At most _ENDS_KEPT, oldest out
        # (none with a cache or a soft-404 judge: their answers go their own ways)
        self._ends: dict[str, Fetched] | None = {} if keep_ends and soft is None and cache is None else None
        # hops a redirect is fetching now, by key, each with its owner's outcome to come: a second redirect
        # reaching one waits for it instead of asking again (see _joined); and each owner's hops, by the task of
        # its fetch() (the client follows redirects in its caller's task, where known() is called)
        self._reaching: dict[str, asyncio.Future[Way | None]] = {}
        self._reached_by: dict[asyncio.Task[Any] | None, list[str]] = {}
        self._owner: dict[str, asyncio.Task[Any] | None] = {}  # (the task fetching each of those hops)
        self._waiting: dict[asyncio.Task[Any] | None, str] = {}  # (the hop each task's redirect waits at: _joined)
        self._remote: dict[str, asyncio.Future[Way | None]] = {}  # (the same, of another process: --jobs)
        # where the redirects that fetched a hop went, by the hop's key, once they ended at an answer kept here
        # (or at a URL checked on its own): a redirect that reaches the hop later joins that way (no second
        # request). At most _ENDS_KEPT, oldest out
        self._ways: dict[str, Way] = {}
        self._others_gone = False  # (others_gone(): no word from them can come any more)
        self._pages_waiting: set[str] = set()  # keys of pages to crawl whose claims wait for a redirect's answer
        self._known = known
        self._checker = checker
        self._cache = cache
        self._to_cache: list[str] = []  # keys of redirects whose result comes from their end's: cached at the end
        self.pause: Pause | None = None  # a claim's wait (a retry's, a token's at the gate): the engine's
        self.gate: HopGate | None = None  # where each check's host slot is (the client's gate): the engine's
        self._parser = parser
        self._pool = pool
        self._robots = robots
        self._get_leaves = method == "get"
        self._robots_read: set[str] = set()
        self.named: set[str] = set()  # keys of the URLs named as inputs: robots.txt never keeps those from us
        self._left_scope: list[str] = []  # seeds redirected out of the crawl's scope (seed_left_scope)
        self._tasks: set[asyncio.Task[None]] = set()

    def prepare(self, claim: Claim, ready: Callable[[str], None]) -> None:
        """Before a page of a new host is queued, or a URL of the crawl's scope only checked (a host reached by
        leaves alone): hold the host until its robots.txt is read, so Crawl-delay applies from the first request
        and no claim waits for it in a slot meanwhile. ready(host) is called when the host may be asked."""
        if self._robots is None or claim.host in self._robots_read or (
                claim.plan is not Plan.PAGE and not self._in_scope(claim.url)):
            return
        self._robots_read.add(claim.host)
        self._pool.hold(claim.host)
        task = asyncio.ensure_future(self._read_robots(claim, ready))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_robots(self, claim: Claim, ready: Callable[[str], None]) -> None:
        try:
            assert self._robots is not None
            await self._robots.allowed(claim.url)
        finally:
            self._pool.unhold(claim.host)
            ready(claim.host)

    def cancel(self) -> list[asyncio.Task[None]]:
        """Cancel the requests this fetcher made on its own (hops another process asked for): the run is cancelled.
        The tasks, to await."""
        for task in self._tasks:
            task.cancel()
        return list(self._tasks)

    async def close(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._soft is not None:
            await self._soft.close()

    async def fetch(self, claim: Claim) -> Fetched:
        gated = False  # (the first request waits at the gate for a token of its host: see below)
        obeys = self._obeys_robots(claim)
        if obeys:
            assert self._robots is not None
            # robots.txt read now, within this claim's slot (no hold came first: a resumed crawl's page, another
            # process's): its request went after the token the slot came with, and its Crawl-delay counts from it
            gated = not self._robots.answered(claim.url)
            if (refusal := await self._robots_refusal(claim)) is not None:
                return Fetched(refusal, Plan.PAGE)
        if (self._reaching or self._remote) and (claim.key in self._reaching or claim.key in self._remote):
            if claim.plan is _PAGE:
                self._pages_waiting.add(claim.key)  # (the answer is kept with its page: _keep_end)
            try:  # a redirect (here or in another process) is fetching this URL now: its answer may be kept (below)
                await self._way_at(claim.key, claim.host, self.pause)
            finally:
                self._pages_waiting.discard(claim.key)
            gated = True  # (its slot was given back meanwhile: its request takes one again)
        if self._ends and (end := self._ends.pop(claim.key, None)) is not None and end.served >= claim.plan:
            return end._replace(result=dataclasses.replace(end.result, url=claim.url, depth=claim.depth),
                                final=claim.url if end.final else "")
        entry = None
        if self._cache is not None:
            entry = self._cache.get(claim.key)
            if entry is not None and not self._cache.usable(entry, claim.plan):
                entry = None  # nothing in it for this claim: neither reused nor revalidated
            elif entry is not None and self._cache.fresh(entry):
                return Fetched(entry.result(claim.url, claim.depth, cached=True), entry.serves(), None, entry.anchors)
        validators = entry.validators() if entry is not None else None
        want = claim.plan >= _BODY_PLAN
        method = "GET" if want or self._get_leaves or self._soft is not None else "HEAD"
        want_body = _BODY if want else is_html if self._soft is not None else _NO_BODY
        # a redirect stops at an end kept here too, and takes its answer (below), and waits for a hop another
        # redirect is fetching now
        known = self._known_or_kept if self._ends is not None else self._known
        outcome: Outcome | None = None
        try:  # (the hops this claim's redirect fetched are passed on to those waiting for them, however it ends)
            if self._ways and claim.key in self._ways:
                outcome = self._way_on(claim.key)  # (a hop of an earlier redirect: its way from there, no request)
            if outcome is None:
                outcome = await self._checker.check(claim.url, method, want_body, claim.host, known, validators,
                                                    gated=gated, page=obeys, pause=self.pause, anchored=self._anchored,
                                                    slot=claim.host)
            if outcome.same_as and (self._reaching or self._remote or self._ways):
                outcome = await self._joined(claim, outcome, method, want_body, validators, self.pause, claim.host)
            if outcome.same_as and self._ends and (end := self._ends.get(canonical_key(outcome.same_as))) is not None:
                wants = claim.plan is not _CHECK or self._located(outcome)  # (its body: the end's anchors)
                if end.served is _CHECK and wants:  # (a status only: the claim wants the body,
                    end = await self._end_asked(canonical_key(outcome.same_as), claim.host)  # (another may ask it)
                if end is None or end.served is _CHECK and wants:
                    outcome = await self._onward(claim, outcome, method, want_body)
                else:
                    r = end.result  # (kept for the end's own claim as well)
                    return end._replace(result=Result(claim.url, r.status, r.code, r.reason, outcome.redirects,
                                                      outcome.elapsed, claim.depth, r.content_type, (), False,
                                                      outcome.redirect_codes))
            response = outcome.response
            if self._cache is not None and outcome.same_as:  # (a redirect to a known URL: its result comes later)
                self._to_cache.append(claim.key)
            if self._cache is not None and not outcome.same_as:
                if entry is not None and validators and outcome.code == 304 and response is not None:
                    self._cache.renew(claim.key, claim.url, entry, response.headers)  # unchanged: good for longer
                    result = entry.result(claim.url, claim.depth, cached=False)
                    return Fetched(dataclasses.replace(result, elapsed=outcome.elapsed), entry.serves(), None,
                                   entry.anchors)
                fetched = await self._answer(claim, outcome)
                self._cache.put(claim.key, fetched.result, response.headers if response is not None else None,
                                fetched.anchors)
                return fetched
            if self._soft is None:  # (_answer without a soft-404 judge: the path of nearly every link)
                result = _result(claim, outcome)
                fetched = self._settled(claim, outcome, result) or await self._parsed(claim, outcome, result)
                if result.redirects and self._ends is not None:
                    self._keep_end(fetched, outcome)
                return fetched
            return await self._answer(claim, outcome)
        finally:
            if self._reached_by:
                self._release(outcome)

    def cache_redirects(self, ledger: Ledger) -> None:
        """Once the run is over: each redirect that reached a URL checked on its own is cached with the result
        its end passed on to it (the next run asks neither while both are fresh)."""
        assert self._cache is not None
        for key in self._to_cache:
            target = ledger.get(key)
            if target is not None and target.result is not None and target.result.redirects:
                # (its end's may have been a cached answer: the redirect's own hop was asked now)
                result = dataclasses.replace(target.result, cached=False)
                self._cache.put(key, result, None, target.anchors)
        self._to_cache.clear()

    def _known_or_kept(self, url: str) -> bool:
        """Whether the run checks url on its own (known()), a redirect already ended there (kept here), or another
        redirect is fetching it now (then waited for: _joined). If none, the calling task's redirect is
        about to fetch it: others reaching it wait for that."""
        if self._known is not None and self._known(url):
            return True
        key = canonical_key(url)
        if self._ends is not None and (key in self._ends or key in self._ways):
            return True  # (a hop fetched before: _joined takes its way)
        if key in self._reaching or key in self._remote:
            return not self._fetches_anyway(key)
        if self._others is not None and not self._others_gone and self._others.ask(url):
            self._remote[key] = asyncio.get_running_loop().create_future()  # (the first process fetches it)
            return True
        self._reach(key)
        if self._others is not None:
            self._others.reaching(key)
        return False

    def _reach(self, key: str) -> None:
        """The calling task's redirect fetches the URL of key now: others reaching it wait (_joined)."""
        self._reaching[key] = asyncio.get_running_loop().create_future()
        task = self._owner[key] = asyncio.current_task()
        self._reached_by.setdefault(task, []).append(key)

    def _fetches_anyway(self, key: str) -> bool:
        """Whether the calling task's redirect, reaching a hop another redirect is fetching, fetches it too
        rather than wait: when it has hops of its own that the other's redirect waits for, through a chain of
        waits (they would wait for each other), or where that can't be told (the hop is another process's)."""
        me = asyncio.current_task()
        if me not in self._reached_by:
            return False  # (no one waits for it)
        owner, seen = self._owner.get(key), set()
        while owner is not None and owner not in seen:
            if owner is me:
                return True
            seen.add(owner)
            at = self._waiting.get(owner)
            if at is None or at not in self._reaching and at not in self._remote:
                return False  # (it waits for no one, or for a way told already: it goes on at its next turn)
            owner = self._owner.get(at)
        return owner is None  # (the hop of another process: its waits are not known here)

    def _release(self, outcome: Outcome | None, hop: str = "") -> None:
        """The hops the calling task's redirect fetched: those waiting for them get where it went (None: it
        failed before it had an answer). hop: the URL the task fetched as another process's hop (fetch_hop),
        first on the way told."""
        if not self._reached_by:
            return  # (most claims: no redirect fetched a hop, theirs nor another's; current_task() is spared)
        keys = self._reached_by.pop(asyncio.current_task(), None)
        if not keys:
            return
        way = None if outcome is None else Way(outcome.redirects, outcome.redirect_codes, outcome.same_as)
        if hop and way is not None:  # (the code that led to it is the asker's: _joined never reads it)
            way = Way((hop, *way.redirects), (0, *way.codes), way.same_as)
        self._keep_way(keys, way)
        for key in keys:
            self._reaching.pop(key).set_result(way)
            del self._owner[key]
        if self._others is not None:
            self._others.reached(keys, way)

    def fetch_hop(self, url: str) -> None:
        """(--jobs, the first process) Another process's redirect reached url and asks this one to fetch it:
        fetched here as a hop of one of this process's redirects (told as reaching, then where it went, after
        its end's answer), unless it is in flight here already, checked on its own, or a kept end. One process
        fetches every hop, so two redirects in two processes never both ask one."""
        key = canonical_key(url)
        others = self._others
        if others is None or key in self._reaching or key in self._remote:
            return  # (where it went is told when it has gone there)
        if self._known is not None and self._known(url):
            others.reached([key], Way((url,), (0,), url))
            return
        way = self._ways.get(key)  # (fetched before: asked again by a process that had not heard where it went)
        if way is not None and way.same_as:
            others.reached([key], way)
            return
        end_key = key if way is None else canonical_key(way.redirects[-1])
        if self._ends is not None and (end := self._ends.get(end_key)) is not None:
            others.kept(end_key, end)
            others.reached([key], way or Way((url,), (0,), ""))
            return
        self._reaching[key] = asyncio.get_running_loop().create_future()
        others.reaching(key)
        task = asyncio.ensure_future(self._hop(Claim(key, url, host_of(url), 0, _CHECK, False)))
        self._reached_by[task] = [key]
        self._owner[key] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _hop(self, claim: Claim) -> None:
        outcome: Outcome | None = None
        try:
            method = "GET" if self._get_leaves else "HEAD"
            # (no slot given: another process's hop takes one of its host, here, at the gate)
            outcome = await self._checker.check(claim.url, method, _NO_BODY, claim.host, self._known_or_kept,
                                                gated=True, anchored=self._anchored, slot="")
            if outcome.same_as and (self._reaching or self._remote or self._ways):
                outcome = await self._joined(claim, outcome, method, _NO_BODY, None, None, "")
            if not outcome.same_as:  # (a body: read where a Location named a #fragment, for the end's anchors)
                result = _result(claim, outcome)
                self._keep_end(self._settled(claim, outcome, result) or await self._parsed(claim, outcome, result),
                               outcome)
        finally:
            if self.gate is not None and (held := self.gate.settle("")):
                self._pool.release(held)
            self._release(outcome, claim.url)

    def reaching_elsewhere(self, key: str) -> None:
        """Another process's redirect is fetching the URL of key now: a redirect here reaching it waits for
        where that one went (_joined), as for one of this process's own."""
        if key not in self._remote and key not in self._reaching and self._ends is not None and key not in self._ends \
                and not self._others_gone:
            self._remote[key] = asyncio.get_running_loop().create_future()

    def reached_elsewhere(self, keys: list[str], way: Way | None) -> None:
        """The hops another process's redirect fetched, and where it went (its end's answer came before)."""
        for key in keys:
            waiting = self._remote.pop(key, None)
            if waiting is not None:
                waiting.set_result(way)
        self._keep_way(keys, way)

    def others_gone(self) -> None:
        """Nothing more can come from the other processes (--jobs: this one's lines from the first have ended,
        while their redirects may still be going): a redirect waiting at a hop one of them is fetching checks
        on its own, and no word of a hop is waited for any more."""
        remote, self._remote = self._remote, {}
        self._others_gone = True
        for waiting in remote.values():
            waiting.set_result(None)

    def _has_end(self, end: str, way: Way | None) -> bool:
        """Whether a way's end can be taken here: a URL checked on its own, or an answer kept here (a failure on
        the way is not kept, nor is any answer without a --jobs process's word of it)."""
        return bool(way and way.same_as) or self._ends is not None and canonical_key(end) in self._ends \
            or self._known is not None and self._known(end)

    def _keep_way(self, keys: list[str], way: Way | None) -> None:
        """Where a redirect that fetched the hops of keys went, kept for those that reach one later (_joined),
        if it ended where they can take it."""
        if way is not None and way.redirects and self._ends is not None and self._has_end(way.redirects[-1], way):
            for key in keys:
                _put(self._ways, key, way)

    async def _way_at(self, key: str, slot: str | None = None, pause: Pause | None = None) -> Way | None:
        """Where the redirect fetching key went, once it is told (None: it failed, or no word came in time; a
        process stopped while fetching it never tells). slot: the host slot the calling check was given, given
        back first (that redirect may need it: HopGate.drop); pause: a claim's, which lends its global slot
        meanwhile (that redirect may wait for one)."""
        waiting = self._reaching.get(key) or self._remote.get(key)
        if waiting is None:
            return None
        if slot is not None and self.gate is not None:
            self.gate.drop(slot)
        try:
            if pause is None:
                return await asyncio.wait_for(asyncio.shield(waiting), self._wait_bound)
            await pause(self._wait_bound, waiting)
            if waiting.done():
                return waiting.result()
            raise TimeoutError
        except TimeoutError:
            if self._remote.get(key) is waiting:
                del self._remote[key]
            return None

    async def _waited(self, key: str, slot: str, pause: Pause | None) -> Way | None:
        """_way_at(key, slot, pause), with the calling task's redirect noted meanwhile as waiting at key
        (_fetches_anyway reads it: no circle of waits)."""
        task = asyncio.current_task()
        self._waiting[task] = key
        try:
            return await self._way_at(key, slot, pause)
        finally:
            del self._waiting[task]

    async def _joined(self, claim: Claim, outcome: Outcome, method: str, want_body: Callable[[str], bool],
                      validators: dict[str, str] | None, pause: Pause | None, slot: str) -> Outcome:
        """A redirect that stopped at a hop another redirect is fetching: from there on, the way is that
        redirect's (its chain from the hop on, and where it ended: an answer kept here, or a URL checked on its
        own), as if this one had gone on. Where that can't be told (it failed without an answer, or the chains
        joined would loop or be too long), this claim is checked again on its own (pause: its waits, where it
        holds a global slot; slot: the host slot the check was given, given back while it waits)."""
        key = canonical_key(outcome.same_as)
        way = self._ways.get(key)
        if way is not None:  # (a hop fetched before, unless it is a URL the run checks on its own now)
            if self._known is not None and self._known(outcome.same_as):
                return outcome
        elif key not in self._reaching and key not in self._remote or self._fetches_anyway(key):
            return outcome
        else:
            way = await self._waited(key, slot, pause)
        joined = None if way is None else _joined(outcome, way, key)
        hops = None if joined is None else [url.split("#", 1)[0] for url in joined.redirects]
        if joined is None or hops is None or not self._has_end(joined.same_as, way) \
                or len(hops) > self._max_redirects or len(set(hops)) < len(hops) or claim.url in hops:
            return await self._checker.check(claim.url, method, want_body, claim.host, self._known, validators,
                                             gated=True, page=self._obeys_robots(claim), pause=pause,
                                             anchored=self._anchored, slot=slot)  # (asked again)
        return joined

    async def _end_asked(self, key: str, slot: str) -> Fetched | None:
        """The answer kept for key once the redirect fetching it now (another claim's _onward, asking it for its
        body) has it; at once if none is, or if waiting would close a circle of waits (_fetches_anyway). slot:
        the host slot the claim was given, given back while it waits."""
        if (key in self._reaching or key in self._remote) and not self._fetches_anyway(key):
            await self._waited(key, slot, self.pause)
        return self._ends.get(key) if self._ends is not None else None

    async def _onward(self, claim: Claim, outcome: Outcome, method: str, want_body: Callable[[str], bool]) -> Outcome:
        """A claim that wants the body of the end its redirect reached, of which only a status is kept (a leaf's
        redirect asked it with HEAD): the end is asked for it, with the chain that led there first. Another
        redirect reaching the end meanwhile waits for this answer (one process: --jobs tells no such ask). A leaf
        whose redirect's Location named a #fragment asks it with GET, for its anchors."""
        key = canonical_key(outcome.same_as)
        if self._others is None and key not in self._reaching and key not in self._remote:
            self._reach(key)
        if claim.plan is _CHECK and self._located(outcome):
            method, want_body = "GET", _BODY
        on = await self._checker.check(outcome.same_as, method, want_body, claim.host, self._known, gated=True,
                                       page=self._obeys_robots(claim), pause=self.pause, anchored=self._anchored,
                                       slot=claim.host)
        return on._replace(redirects=outcome.redirects + on.redirects, elapsed=outcome.elapsed + on.elapsed,
                           redirect_codes=outcome.redirect_codes + on.redirect_codes)

    def _way_on(self, key: str) -> Outcome | None:
        """The claim of a URL an earlier redirect passed through (key in _ways), answered as that redirect went on
        from it: its chain from there, and where it ended (a kept answer, or a URL checked on its own: then its
        result is this one's). None where that end can't be taken any more: then it is requested."""
        way = self._ways[key]
        on = _joined(_NOWHERE, way, key)
        if on is None or not on.redirects or not self._has_end(on.same_as, way):
            return None
        return on

    def _keep_end(self, fetched: Fetched, outcome: Outcome) -> None:
        """The answer a redirect ended at, kept as its end's own: the same verdict (it comes from that answer's
        code alone, with no --accept-for rule), without the chain that led there, and its anchors but not its
        page (so it serves no claim to crawl it: that one asks again), unless the end's own claim to crawl it
        waits for this very answer. No answer at all (a network error or a
        timeout, after the retries) is the end's verdict too. A failure on the way (a loop, too many hops, a
        known URL reached) is not kept."""
        assert self._ends is not None
        if outcome.response is None and not outcome.unanswered or outcome.same_as:
            return
        r = fetched.result
        # (a hop fetched for another process may be its own end; the fragment a Location named is the redirect's)
        url = r.redirects[-1].split("#", 1)[0] if r.redirects else r.url
        end = Result(url, r.status, r.code, r.reason, (), r.elapsed, r.depth, r.content_type)
        key = canonical_key(end.url)
        if fetched.page is None:
            kept = fetched._replace(result=end)
        elif key in self._pages_waiting:  # (the end's own claim, to crawl it, waits for this answer: it takes all)
            kept = fetched._replace(result=end, served=_PAGE)
        else:
            kept = fetched._replace(result=end, page=None, served=_BODY_PLAN)
        self._put_end(key, kept)
        if self._others is not None:
            self._others.kept(key, kept)

    def learn(self, key: str, end: Fetched) -> None:
        """A redirect end's answer kept by another process of the run (--jobs): kept here as if this one had
        followed the redirect, for a claim of the end and for a redirect here that reaches it."""
        if self._ends is not None and key not in self._ends:
            self._put_end(key, end)

    def _put_end(self, key: str, end: Fetched) -> None:
        assert self._ends is not None
        _put(self._ends, key, end)

    def kept_ends(self) -> list[tuple[str, Fetched]]:
        """The redirect ends kept here, by key (told to the others of a --jobs run when they join)."""
        return list(self._ends.items()) if self._ends is not None else []

    def kept_ways(self) -> list[tuple[list[str], Way]]:
        """Where the redirects that fetched hops here went, with the keys of the hops each fetched (told to the
        others of a --jobs run when they join, after the ends kept: a hop's own link there takes its way)."""
        hops: dict[Way, list[str]] = {}
        for key, way in self._ways.items():
            hops.setdefault(way, []).append(key)
        return [(keys, way) for way, keys in hops.items()]

    def reaching_now(self) -> list[str]:
        """The keys of the hops redirects here are fetching now (told to the others of a --jobs run when they
        join: a hop's own link there waits for where it went, told as the redirect ends)."""
        return list(self._reaching)

    async def _answer(self, claim: Claim, outcome: Outcome) -> Fetched:
        if self._soft is not None and outcome.same_as:
            outcome = await self._soft.redirected(claim.url, claim.host, outcome)
        elif self._soft is not None:
            outcome = await self._soft_judged(claim, outcome)
        result = _result(claim, outcome)
        return self._settled(claim, outcome, result) or await self._parsed(claim, outcome, result)

    async def _soft_judged(self, claim: Claim, outcome: Outcome) -> Outcome:
        """The outcome judged for a soft 404; a leaf's body, read only for that, is dropped (nothing parses it)."""
        assert self._soft is not None
        outcome = await self._soft.judge(claim.url, claim.host, outcome)
        response = outcome.response
        if claim.plan is Plan.CHECK and response is not None and response.body is not None:
            outcome = outcome._replace(response=response._replace(body=None))
        return outcome

    def _settled(self, claim: Claim, outcome: Outcome, result: Result) -> Fetched | None:
        """The answer when there is no body to parse (most links); None when there is one."""
        if outcome.same_as:  # its plan passes on to the URL reached (Redirects.same_as): a plan raised to a page's
            # later must pass on too, where the URL reached is one the crawl would read (asked again, then)
            served = _PAGE if claim.plan is _PAGE or not self._in_scope(outcome.same_as) else claim.plan
            return Fetched(result, served, same_as=outcome.same_as)
        response = outcome.response
        if response is None or outcome.status is not _OK:
            return Fetched(result, _PAGE)  # a failure is final, whatever the plan
        if response.content_type not in PARSABLE:
            return Fetched(result, _PAGE)  # nothing in it to crawl or to find anchors in
        if response.body is None:  # HEAD; or a redirect to a page fetched on its own, asked with HEAD
            return Fetched(result, _CHECK if claim.plan is _CHECK else _PAGE, final=response.url)
        return None

    async def _parsed(self, claim: Claim, outcome: Outcome, result: Result) -> Fetched:
        response = outcome.response
        assert response is not None and response.body is not None
        body = response.body
        if (charset := declared_charset(response.headers)) is not None and is_html(response.content_type):
            body = in_utf8(body, charset)  # (the header's charset wins over the page's <meta>, as in browsers)
        page = await self._parser.parse(body, response.url, response.content_type)
        if page is None:
            return Fetched(result, Plan.PAGE)
        tag = response.headers.get("X-Robots-Tag")
        nofollow = page.nofollow or tag is not None and _header_nofollow(tag, self._agent)
        # a text file or a sitemap has no anchors: its #fragments are not checked, as a PDF's are not
        anchors = Anchors.of(page.anchors, markdown=page.kind is Kind.MARKDOWN) if page.kind in _ANCHORED else None
        return Fetched(result, claim.plan, page, anchors, response.url, nofollow)

    def _located(self, outcome: Outcome) -> bool:
        """Whether the outcome's redirect left a #fragment named by a Location in effect, to check (its end's
        anchors are needed, whatever the claim's plan)."""
        return self._anchored is not None and named_by_location(outcome.redirects) is not None

    def _obeys_robots(self, claim: Claim) -> bool:
        """Whether robots.txt must allow claim, the hops of its redirect as well: a page to crawl, or a URL in the
        crawl's scope only checked (past --max-depth, an image, a nofollow link: the host is one the crawl reads,
        and a URL is not requested there for being one link further); not an input named by the user, nor a link
        out of scope (only checked: its host's robots.txt is not read)."""
        return self._robots is not None and claim.key not in self.named and (
            claim.plan is _PAGE or self._in_scope(claim.url))

    async def _robots_refusal(self, claim: Claim) -> Result | None:
        """A URL robots.txt keeps us from (one that _obeys_robots) is skipped, not requested."""
        assert self._robots is not None
        allowed, why = await self._robots.allowed(claim.url, in_slot=True)  # (the claim's slot waits for it)
        if allowed:
            return None
        # RFC 9309 keeps us off a host whose robots.txt fails: the crawl asked for did not happen, a failure
        status = Status.ERROR if self._robots.off_limits(claim.url) else Status.SKIPPED
        return Result(claim.url, status, None, why, depth=claim.depth)

    def warnings(self) -> list[str]:
        robots = self._robots.warnings() if self._robots is not None else []
        return robots + (self._soft.notes() if self._soft is not None else []) + self._left_scope

    def seed_left_scope(self, seed: str, end: str) -> None:
        """A seed of the crawl redirected out of its scope (http:// to https://, example.org to www.): nothing
        past it is crawled, which the report must say (else a crawl of nothing looks like a clean one)."""
        self._left_scope.append(f"{seed} redirected to {end}, outside the crawl's scope: nothing past it was crawled"
                               f" (start from {end}, or widen the scope with --scope-domain)")


def _put(kept: dict[str, Any], key: str, value: Any) -> None:
    """value by key in kept, which holds at most _ENDS_KEPT (the oldest goes)."""
    if len(kept) >= _ENDS_KEPT:
        del kept[next(iter(kept))]
    kept[key] = value


def _joined(ours: Outcome, theirs: Way, key: str) -> Outcome | None:
    """Our redirect's outcome, which stopped at the hop of key, joined to their way, which went on from there: a
    stop at a URL checked on its own, or at an answer (kept as its end's if it was one: _keep_end; the caller
    looks). None if their chain does not pass key."""
    hops = [canonical_key(url) for url in theirs.redirects]
    if key not in hops:
        return None
    at = hops.index(key) + 1
    redirects = ours.redirects + theirs.redirects[at:]
    end = theirs.same_as or theirs.redirects[-1].split("#", 1)[0]
    codes = ours.redirect_codes + theirs.codes[at:]
    return Outcome(_OK, None, "", redirects, ours.elapsed, None, end, codes)


def _result(claim: Claim, outcome: Outcome) -> Result:
    response = outcome.response
    status, reason = outcome.status, outcome.reason
    if status is not _OK and status.is_broken and looks_like_email(claim.url):  # href="someone@example.org"
        reason = f"{reason} ({EMAIL_HINT})" if reason else EMAIL_HINT
    # url, status, code, reason, redirects, elapsed, depth, content_type, references, cached, redirect_codes
    return Result(claim.url, status, outcome.code, reason, outcome.redirects, outcome.elapsed, claim.depth,
                  response.content_type if response is not None else "", (), False, outcome.redirect_codes)


# X-Robots-Tag directives that take a value after a colon (the rest name the crawler the next ones are for)
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


def _header_nofollow(value: str, agent: str) -> bool:
    """Whether an X-Robots-Tag header says not to follow the page's links: `nofollow` or `none`, for every
    crawler or for agent's product token ("linkhound: nofollow"); directives for other crawlers don't count."""
    agent, meant = agent.lower(), None  # None: for every crawler
    for part in value.lower().split(","):
        name, colon, rest = part.partition(":")
        if colon and name.strip() not in _VALUED:
            meant, part = name.strip(), rest
        if part.strip() in ("nofollow", "none") and meant in (None, agent):
            return True
    return False
