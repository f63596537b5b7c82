"""The in-memory crawl state (the default backend): records in a dict, per-host queues as depth-ordered heaps."""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections.abc import Callable, Iterable

from .crawl_state import Claim, Found, Limits, Plan, Progress, Record, wanted

_NO_LIMITS = Limits()


class _Rec:
    """One URL's record. `served` is the plan its last fetch satisfied (None before the first)."""

    __slots__ = ("id", "key", "url", "host", "depth", "plan", "served", "progress", "crawlable", "body", "seed",
                 "children", "hop", "token")

    def __init__(self, f: Found, rid: int) -> None:
        self.id = rid  # its place in MemoryState._by_id
        self.key = f.key
        self.url = f.key if f.url == f.key else f.url  # one string where they are equal
        self.host = f.host
        self.depth = f.depth
        self.plan = Plan.CHECK
        self.served: Plan | None = None
        self.progress = Progress.QUEUED
        self.crawlable = f.crawl
        self.body = f.body
        self.seed = f.seed
        # the ids of the records its links point to, once crawled: 4 bytes a link, where a list costs 8 and more
        self.children: array[int] | None = None
        self.hop = 1  # how much deeper its children are (0 for a sitemap's entries)
        self.token = 0  # the live queue entry's token; older entries are stale


class MemoryState:
    """CrawlState in one process's memory. Every method runs to completion without yielding, so each step is
    atomic with respect to the other tasks of the event loop."""

    def __init__(self, limits: Limits = _NO_LIMITS, on_host_ready: Callable[[str], None] = lambda host: None) -> None:
        self._limits = limits
        self._on_host_ready = on_host_ready
        self._records: dict[str, _Rec] = {}
        self._by_id: list[_Rec] = []
        self._queues: dict[str, list[tuple[int, int, _Rec, int]]] = {}
        self._seq = itertools.count()
        self._pages = 0  # PAGE plans granted
        self._queued = 0
        self.unfinished = 0
        self.refetched = 0

    def __len__(self) -> int:
        return len(self._records)

    @property
    def queued(self) -> int:
        return self._queued

    def has_work(self, host: str) -> bool:
        return bool(self._queues.get(host))

    async def add(
        self, found: Iterable[Found], parent: str | None = None, hop: int = 1, known: Iterable[str] = ()
    ) -> list[Claim]:
        changed: list[Claim] = []
        kids = None
        records = self._records
        if parent is not None and (page := records.get(parent)) is not None:
            kids = page.children = array("I") if page.children is None else page.children
            page.hop = hop
        for f in found:
            r = records.get(f.key)
            if r is None:
                r = records[f.key] = self._new(f)
                r.plan = self._wanted(r)
                self.unfinished += 1
                self._queued += 1
                self._push(r)
                changed.append(self._claim_of(r))
            # (what f may add: a shorter path, a seed's mark, or flags that raise a plan; a PAGE plan is kept,
            # and a page's fetch is all the flags could ask for)
            elif f.depth < r.depth or f.seed and not r.seed or r.plan is not Plan.PAGE and (
                    f.crawl and not r.crawlable or f.body and not r.body):
                self._update(r, f, changed)
            if kids is not None:
                kids.append(r.id)
        if kids is not None:
            kids.extend([records[key].id for key in known])
        return changed

    async def adopt(self, found: Found, parent: str | None = None) -> bool:
        r = self._records.get(found.key)
        adopted = r is None
        if r is None:
            r = self._records[found.key] = self._new(found)
            r.plan = r.served = Plan.PAGE
            r.progress = Progress.DONE
            self._pages += 1
        else:
            self._update(r, found, [])
        if parent is not None and (redirect := self._records.get(parent)) is not None:
            # a redirect is a hop of no length: its end moves up with it
            redirect.children, redirect.hop = array("I", [r.id]), 0
        return adopted

    async def claim(self, host: str) -> Claim | None:
        queue = self._queues.get(host)
        while queue:
            r, token = heapq.heappop(queue)[2:]
            if r.token == token and r.progress is Progress.QUEUED:
                r.progress = Progress.IN_FLIGHT
                self._queued -= 1
                return self._claim_of(r)
        return None

    async def done(self, claim: Claim, served: Plan) -> None:
        r = self._records[claim.key]
        # a fetch made for a plan satisfies it, whatever it got: asking again the same way would get the same
        r.served = max(served, claim.plan) if r.served is None else max(r.served, served, claim.plan)
        if r.plan > r.served:  # the plan rose while it was in flight: fetch it again, for the new plan
            self.refetched += 1
            r.progress = Progress.QUEUED
            self._queued += 1
            self._push(r)
        else:
            r.progress = Progress.DONE
            self.unfinished -= 1

    def give_away(self, part: float) -> list[Found]:
        """About `part` of each host's queued URLs that were never fetched, taken out of this state (no longer
        its records) and returned as found, for another process to check (--jobs: ShardState.give_back)."""
        given: list[Found] = []
        for queue in self._queues.values():
            kept = []
            count = int(len(queue) * part)
            while queue and count > 0:
                entry = queue.pop()  # the heap's last entry (among the latest queued): the rest is still a heap
                r, token = entry[2], entry[3]
                if r.token != token or r.progress is not Progress.QUEUED:
                    continue  # (stale)
                count -= 1
                if r.served is not None:  # queued again, its plan raised: it stays
                    kept.append(entry)
                    continue
                given.append(self._given(r))
            for entry in kept:
                heapq.heappush(queue, entry)
        return given

    def give_away_unless(self, keep: Callable[[str], bool]) -> list[Found]:
        """Every queued URL never fetched whose key keep() refuses, taken out of this state and returned as found,
        for another process to check (--jobs: ShardState.hand_over)."""
        given: list[Found] = []
        for queue in self._queues.values():
            kept = []
            for entry in queue:
                r, token = entry[2], entry[3]
                if r.token != token or r.progress is not Progress.QUEUED:
                    continue  # (stale: dropped here as claim() would)
                if r.served is not None or keep(r.key):  # (queued again, its plan raised: it stays)
                    kept.append(entry)
                else:
                    given.append(self._given(r))
            if len(kept) < len(queue):
                heapq.heapify(kept)
                queue[:] = kept
        return given

    def _given(self, r: _Rec) -> Found:
        """r, queued and never fetched, taken out of this state (give_away)."""
        del self._records[r.key]
        r.progress = Progress.DONE
        self._queued -= 1
        self.unfinished -= 1
        return Found(r.key, r.url, r.host, r.depth, r.crawlable, r.body, r.seed)

    def record(self, key: str) -> Record | None:
        r = self._records.get(key)
        return None if r is None else Record(r.key, r.url, r.depth, r.plan, r.progress, r.served)

    def depth(self, key: str) -> int | None:
        r = self._records.get(key)
        return None if r is None else r.depth

    def cut_by(self) -> tuple[str, ...]:
        limits = self._limits
        cut = set()
        for r in self._records.values():
            if r.crawlable and r.plan is not Plan.PAGE:
                if limits.max_depth is not None and r.depth > limits.max_depth:
                    cut.add(f"max-depth {limits.max_depth}")
                else:
                    cut.add(f"max-pages {limits.max_pages}")
        return tuple(sorted(cut))

    # -- the rules -------------------------------------------------------------------------------------

    def _new(self, f: Found) -> _Rec:
        r = _Rec(f, len(self._by_id))
        self._by_id.append(r)
        return r

    def _wanted(self, r: _Rec) -> Plan:
        plan = wanted(r, self._limits, self._pages)
        if plan is Plan.PAGE and r.plan != Plan.PAGE:
            self._pages += 1  # granted now
        return plan

    def _update(self, r: _Rec, f: Found, changed: list[Claim]) -> None:
        r.crawlable = r.crawlable or f.crawl
        r.body = r.body or f.body
        r.seed = r.seed or f.seed
        if f.depth < r.depth:
            self._lower(r, f.depth, changed)
        else:
            self._raise(r, changed)

    def _raise(self, r: _Rec, changed: list[Claim]) -> None:
        wanted = self._wanted(r)
        if wanted <= r.plan:
            return
        r.plan = wanted
        changed.append(self._claim_of(r))
        if r.progress is Progress.DONE and r.served is not None and r.served < wanted:
            self.refetched += 1
            r.progress = Progress.QUEUED
            self._queued += 1
            self.unfinished += 1
            self._push(r)

    def _lower(self, r: _Rec, depth: int, changed: list[Claim]) -> None:
        """A shorter path to r: r and everything crawled below it move up (no refetch: the edges are kept)."""
        work = [(r, depth)]
        while work:
            r, depth = work.pop()
            if depth >= r.depth:
                continue
            r.depth = depth
            if r.progress is Progress.QUEUED:
                self._push(r)  # at its new depth (the older entry goes stale)
            self._raise(r, changed)  # maybe within --max-depth now
            if r.children:
                work.extend((self._by_id[child], depth + r.hop) for child in r.children)

    def _push(self, r: _Rec) -> None:
        queue = self._queues.get(r.host)
        if queue is None:
            queue = self._queues[r.host] = []
        was_empty = not queue
        r.token += 1
        heapq.heappush(queue, (r.depth, next(self._seq), r, r.token))
        if was_empty:
            self._on_host_ready(r.host)

    @staticmethod
    def _claim_of(r: _Rec) -> Claim:
        return Claim(r.key, r.url, r.host, r.depth, r.plan, r.seed)
