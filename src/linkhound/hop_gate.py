"""Room for a check's requests past its first (a redirect's hops, retries, GET after HEAD) in the limits of each
one's host: a token of its rate (Crawl-delay and a 429's pause too), as the scheduler gives the first; for a page
to crawl, robots.txt's leave to go where the crawl would read it.

Not a slot of the host's concurrency cap: a redirect waits for a hop that another check's redirect is fetching
(one request for both), and that wait holds the waiting check's slot, so a hop that waited for a slot could wait
for the very checks that wait for it (measured: --jobs 2 stalled for --timeout on three redirects to one hop).
A claim's check waits for its token with the claim's pause, which lends its global slot to other hosts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from .client import HopRefused, Pause
from .urls import host_of

if TYPE_CHECKING:
    from .host_pool import HostPool
    from .robots import Robots


class HopGate:
    """The client's gate (client.HopGate)."""

    def __init__(self, pool: HostPool, robots: Robots | None, in_scope: Callable[[str], bool]) -> None:
        self._pool = pool
        self._robots = robots
        self._in_scope = in_scope  # a page's redirect out of the crawl's scope ends at a page only checked

    async def enter(self, url: str, page: bool, pause: Pause | None = None) -> None:
        if page and self._robots is not None and self._in_scope(url):
            allowed, why = await self._robots.allowed(url)
            if not allowed:
                raise HopRefused(f"redirect to a page {why}" if why == "disallowed by robots.txt" else why, ())
        host = host_of(url)
        wait_out = pause or asyncio.sleep
        while (wait := self._pool.try_token(host)) > 0:
            await wait_out(wait)  # (a claim's check: its global slot serves other hosts meanwhile)
