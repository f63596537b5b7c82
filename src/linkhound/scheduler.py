"""Hands out the next claim whose host may be asked now: Mercator-style back queues over the crawl state.

Every host with queued work is in exactly one place: `_ready` (try it in turn), `_timed` (a heap of the
time its next token or Retry-After is due) or `_capped` (at its concurrency cap until a request ends).
A waiting host is parked, never polled in a loop, so it can't hold up work for other hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
import time
from collections import deque

from .crawl_state import Claim, CrawlState, Plan
from .host_pool import HostPool


class Scheduler:
    def __init__(self, state: CrawlState, pool: HostPool, max_concurrency: int) -> None:
        self._state = state
        self._pool = pool
        self._free = max_concurrency  # global slots (below 0 for a while after resize() took some away)
        self._most = max_concurrency
        self._ready: deque[str] = deque()
        self._timed: list[tuple[float, str]] = []
        self._capped: set[str] = set()
        self._placed: set[str] = set()
        self._wake = asyncio.Event()
        self._stopped = False
        self._sources = 0  # producers still adding links (seeding): the run isn't over while one is open
        self._read = False  # every producer opened so far is closed (the inputs are read)
        self._room = asyncio.Event()  # a producer held by room() may add more
        self._room_at = 0  # ... once fewer links than this are queued
        self._starved = False  # next() has a free slot and nothing it may take
        self._owed: deque[asyncio.Future[None]] = deque()  # claims back from a pause, waiting for a global slot
        pool.when_freed(self._freed)

    def host_ready(self, host: str) -> None:
        """The crawl state calls this when a host's queue goes from empty to not empty."""
        if host not in self._placed:
            self._placed.add(host)
            self._ready.append(host)
            self._wake.set()

    def wake_host(self, host: str) -> None:
        """A host the pool refused outright (held, or at its cap) may be asked again."""
        self._uncap(host)
        self._wake.set()

    def _freed(self, host: str) -> None:
        if host in self._capped:  # (a slot given back by a request made beside the crawl, too)
            self.wake_host(host)

    def resize(self, most: int) -> None:
        """At most `most` requests at once from now on: those in flight past it finish, none starts meanwhile.
        (--jobs: the others join, and links queued here may have gone to them: a producer held by room() looks
        again at once, not at the next request taken, which may be long in coming while those past it finish.)"""
        self._free -= self._most - most
        self._most = most
        self._room.set()

    @property
    def within_limits(self) -> bool:
        return self._free >= 0

    @property
    def inputs_read(self) -> bool:
        """Whether the producers (the inputs being read) have all been opened and closed again."""
        return self._read

    def open_source(self) -> None:
        """Links may still come from outside the crawl (the inputs being read): keep next() waiting."""
        self._sources += 1

    def close_source(self) -> None:
        self._sources -= 1
        self._read = self._sources == 0
        self._wake.set()

    def stop(self) -> None:
        """Take no new work; next() returns None from now on."""
        self._stopped = True
        self._wake.set()
        self._room.set()

    async def room(self, most: int) -> None:
        """Hold a producer while `most` links or more are queued and the requests have work to take: a long
        input is then read about as fast as its links are checked, instead of all at once while the first
        responses wait for the loop. A queue held up by busy or rate-limited hosts never holds it."""
        while self._state.queued >= most and not self._starved and not self._stopped:
            self._room_at = most
            self._room.clear()
            await self._room.wait()

    async def next(self) -> Claim | None:
        """The next claim to fetch, with its host slot and a global slot taken; None when the run is over."""
        while not self._stopped:
            self._wake.clear()
            if self._free > 0:
                claim = await self._take()
                if claim is not None:
                    return claim
                self._starved = True  # a free slot and nothing to take: whoever can add links, should
                self._room.set()
            if self._state.unfinished == 0 and self._sources == 0:
                return None
            timeout = self._timed[0][0] - time.monotonic() if self._timed and self._free > 0 else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        return None

    async def done(self, claim: Claim, served: Plan, held: str | None = None) -> None:
        """A claim taken from next() is finished (its children already added). held: the host whose slot it
        holds at its end ("": none; None: its own), its own unless its redirect moved it (HopGate)."""
        await self._release(claim, served, held)
        self._wake.set()

    async def done_and_next(self, claim: Claim, served: Plan, held: str | None = None) -> Claim | None:
        """done(claim, served, held), then the next claim, if one may be taken right now: the worker that finished
        one goes on with the next, without a new task or a turn of next()."""
        await self._release(claim, served, held)
        following = None if self._stopped or self._free <= 0 else await self._take()
        if following is None:
            self._wake.set()  # the slot is free for next()
        return following

    async def _release(self, claim: Claim, served: Plan, held: str | None) -> None:
        if held is None:
            self._pool.release(claim.host)
        elif held:
            self._pool.release(held)
        self._give()
        await self._state.done(claim, served)
        self._uncap(claim.host)

    def lend(self) -> None:
        """A claim in flight is paused (a retry waiting out its backoff or Retry-After): its global slot serves
        other hosts meanwhile. Its host slot stays held, if it holds one; take_back() before it asks again."""
        self._give()
        self._wake.set()

    async def take_back(self) -> None:
        """A global slot again for a claim that lent its own, before the claims next() would hand out."""
        if self._free > 0 and not self._owed:
            self._free -= 1
            return
        owed = asyncio.get_running_loop().create_future()
        self._owed.append(owed)
        await owed

    def _give(self) -> None:
        """A global slot is free: to the first claim back from a pause, if one waits, else to next()."""
        while self._owed:
            owed = self._owed.popleft()
            if not owed.done():  # (a cancelled waiter takes nothing)
                owed.set_result(None)
                return
        self._free += 1

    def _uncap(self, host: str) -> None:
        if host in self._capped:
            self._capped.discard(host)
            self._ready.append(host)

    async def _take(self) -> Claim | None:
        """A claim whose host may be asked now, with its host slot and a global slot taken; None if none may."""
        claim = await self._pop_ready()
        if claim is not None:
            self._free -= 1
            self._starved = False
            if self._state.queued < self._room_at:
                self._room.set()
        return claim

    async def _pop_ready(self) -> Claim | None:
        now = time.monotonic()
        while self._timed and self._timed[0][0] <= now:
            self._ready.append(heapq.heappop(self._timed)[1])
        for _ in range(len(self._ready)):
            if not self._ready:  # emptied by another caller while a state's claim awaited (Redis, SQLite)
                break
            host = self._ready.popleft()
            if not self._state.has_work(host):
                self._placed.discard(host)
                continue
            wait = self._pool.try_acquire(host)
            if wait == 0.0:
                claim = await self._state.claim(host)
                if self._state.has_work(host):
                    self._ready.append(host)
                else:
                    self._placed.discard(host)
                if claim is not None:
                    return claim
                self._pool.release(host)
            elif wait == math.inf:
                self._capped.add(host)
            else:
                heapq.heappush(self._timed, (now + wait, host))
        return None
