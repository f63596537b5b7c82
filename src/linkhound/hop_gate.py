"""Room for a check's requests past its first (a redirect's hops, retries, GET after HEAD) in the limits of each
one's host: a token of its rate (Crawl-delay and a 429's pause too), as the scheduler gives the first, and a slot
of its concurrency cap; for a page to crawl, robots.txt's leave to go where the crawl would read it.

A check holds one host slot at most, and moves it along its chain: a hop into another host gives back the slot
it holds, then waits for one of the hop's host (ahead of the scheduler's claims: HostPool.handed), and a
redirect that waits for a hop another check is fetching (one request for both) holds none meanwhile
(Fetcher._way_at: drop). No check waits for a slot while holding one, nor holds one while it waits for another
check, so no wait closes a circle (a hop that waited in its slot for another slot, while redirects waited for
it in theirs, stalled --jobs 2 for a --timeout). Checks that others wait for in their slots (robots.txt reads,
soft-404 probes: slot None) take tokens only. A claim's check waits with the claim's pause, which lends its
global slot to other hosts."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .client import HopRefused, Pause
from .urls import host_of

if TYPE_CHECKING:
    from .host_pool import HostPool
    from .robots import Robots


class HopGate:
    """The client's gate (client.HopGate), and where each check's slot is while it has moved."""

    def __init__(self, pool: HostPool, robots: Robots | None, in_scope: Callable[[str], bool]) -> None:
        self._pool = pool
        self._robots = robots
        self._in_scope = in_scope  # a page's redirect out of the crawl's scope ends at a page only checked
        # the host whose slot each check holds now ("": none), by the task it runs in, once it is not the one the
        # check was given (an entry only while a check that moved its slot runs: most never do)
        self._at: dict[asyncio.Task[Any] | None, str] = {}

    async def enter(self, url: str, page: bool, pause: Pause | None = None, slot: str | None = None) -> None:
        host = host_of(url)
        if slot is not None and (held := self._at.get(asyncio.current_task(), slot)) != host:
            self.drop(held)  # (nothing held while robots.txt or a slot is waited for)
            await self._allowed(url, page)
            await self._slot(host, pause)
            return
        await self._allowed(url, page)
        await self._token(host, pause)

    def drop(self, slot: str) -> None:
        """The calling task's check gives back the host slot it holds (slot: the one it was given, unless it
        moved), before it waits for another check: a request that one makes may need it."""
        task = asyncio.current_task()
        held = self._at.get(task, slot)
        if held:
            self._pool.release(held)
        self._at[task] = ""

    def settle(self, slot: str) -> str:
        """The calling task's check is over: the host whose slot it holds ("": none) for its caller to give back
        (slot: the one it was given, unless it moved)."""
        return self._at.pop(asyncio.current_task(), slot) if self._at else slot

    async def _allowed(self, url: str, page: bool) -> None:
        if page and self._robots is not None and self._in_scope(url):
            allowed, why = await self._robots.allowed(url)
            if not allowed:
                raise HopRefused(f"redirect to a page {why}" if why == "disallowed by robots.txt" else why, ())

    async def _slot(self, host: str, pause: Pause | None) -> None:
        """A slot of host for the calling task's check, with a token of its rate."""
        task = asyncio.current_task()
        while (wait := self._pool.try_slot(host)) > 0:
            if wait == math.inf:  # at its cap: the next slot given back is this one's
                await self._handed(host, pause)
                self._at[task] = host
                await self._token(host, pause)
                return
            await (pause or asyncio.sleep)(wait)
        self._at[task] = host

    async def _handed(self, host: str, pause: Pause | None) -> None:
        handed = self._pool.handed(host)
        try:
            if pause is None:
                await asyncio.shield(handed)
            else:
                while not handed.done():
                    await pause(None, handed)  # (a claim's: its global slot serves other hosts meanwhile)
        except BaseException:  # cancelled: a slot handed over meanwhile is given back, none is waited for
            if handed.done():
                self._pool.release(host)
            else:
                handed.cancel()
            raise

    async def _token(self, host: str, pause: Pause | None) -> None:
        wait_out = pause or asyncio.sleep
        while (wait := self._pool.try_token(host)) > 0:
            await wait_out(wait)  # (a claim's check: its global slot serves other hosts meanwhile)
