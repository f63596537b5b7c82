"""Room for a check's requests past its first (a redirect's hops, retries, GET after HEAD) in the limits of each
one's host, as the scheduler gives the first: a token of the host's rate (Crawl-delay, Retry-After too), and on
another host a slot of its cap; for a page to crawl, robots.txt's leave to go where the crawl would read it."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .client import HopRefused
from .urls import host_of

if TYPE_CHECKING:
    from .host_pool import HostPool
    from .robots import Robots

_AT_CAP = 0.02  # seconds between asks for a slot of a host at its cap (as robots.txt's and sitemaps' asks)


class HopGate:
    """The client's gate (client.HopGate). A hop waits for a slot of another host at most `patience` seconds,
    then goes: a check holds its own host's slot while it waits, so redirects between two hosts at their caps,
    each way, would otherwise wait for each other for ever."""

    def __init__(self, pool: HostPool, robots: Robots | None, patience: float, in_scope: Callable[[str], bool]) -> None:
        self._pool = pool
        self._robots = robots
        self._patience = patience
        self._in_scope = in_scope  # a page's redirect out of the crawl's scope ends at a page only checked

    async def enter(self, url: str, held: str, page: bool) -> str | None:
        if page and self._robots is not None and self._in_scope(url):
            allowed, why = await self._robots.allowed(url)
            if not allowed:
                raise HopRefused(f"redirect to a page {why}" if why == "disallowed by robots.txt" else why, ())
        pool, host = self._pool, host_of(url)
        if host == held:  # within the slot the check holds: its token
            while (wait := pool.try_token(host)) > 0:
                await asyncio.sleep(wait)
            return None
        give_up = time.monotonic() + self._patience
        while (wait := pool.try_acquire(host)) != 0.0:
            if wait == math.inf and time.monotonic() >= give_up:
                while (wait := pool.try_token(host)) > 0:  # still not past its rate
                    await asyncio.sleep(wait)
                return None
            await asyncio.sleep(_AT_CAP if wait == math.inf else wait)
        return host

    def leave(self, host: str) -> None:
        self._pool.release(host)
