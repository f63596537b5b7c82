"""A HostPool whose budget every process of a distributed crawl shares: each request takes a slot and a token
from the host's keys in Redis (the same keys and Lua as `linkhound.throttle`), and a 429's pause reaches all.

The scheduler asks `try_acquire` without waiting, so a slot is fetched from Redis in the background: the first
ask answers "try again in a moment" (a few ms), and the slot is there when the scheduler comes back. A slot the
scheduler doesn't come back for runs out with its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .host_pool import HostLimits, HostPool
from .throttle import ACQUIRE, PAUSE, PREFIX, RENEW, host_keys

if TYPE_CHECKING:
    from redis.asyncio import Redis

_ASKING = 0.005  # seconds the scheduler waits while a slot is being fetched
_CAPPED = 0.02  # ... while the host is at its cap in Redis (no one tells when a slot frees)
_TROUBLE = 1.0  # ... after Redis failed to answer


class RedisHostPool(HostPool):
    """HostPool with the rate, the concurrency cap and 429 pauses counted in Redis, across processes. Each
    process also keeps its own cap, hold (robots.txt) and backoff, as HostPool does."""

    def __init__(
        self,
        client: Redis,
        default: HostLimits,
        overrides: dict[str, HostLimits] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_wait: float = 60.0,
        *,
        lease: float = 60.0,
        prefix: str = PREFIX,
    ) -> None:
        super().__init__(default, overrides, clock, max_wait)
        self._prefix = prefix
        self._lease_us = max(1, round(lease * 1_000_000))
        self._acquire = client.register_script(ACQUIRE)
        self._renew = client.register_script(RENEW)
        self._pause = client.register_script(PAUSE)
        self._client = client
        self._ready: dict[str, list[str]] = {}  # host -> slots taken in Redis, not used yet
        self._held: dict[str, list[str]] = {}  # host -> slots of requests in flight
        self._asking: set[str] = set()
        self._retry_at: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._keeper: asyncio.Task[None] | None = None

    def try_acquire(self, host: str) -> float:
        h = self._host(host)
        if h.held:
            return math.inf
        now = self._clock()
        if h.blocked_until > now:
            h.stats.waits += 1
            return h.blocked_until - now
        if h.active >= h.limits.concurrency:
            return math.inf
        ready = self._ready.get(host)
        if ready:  # the token was taken with the slot, in Redis: none is taken here
            self._held.setdefault(host, []).append(ready.pop())
            h.active += 1
            h.stats.requests += 1
            if self._keeper is None:
                self._keeper = asyncio.ensure_future(self._keep())
            return 0.0
        if host not in self._asking:
            self._asking.add(host)
            self._spawn(self._ask(host, h.limits))
        h.stats.waits += 1
        return max(self._retry_at.get(host, 0.0) - now, _ASKING)

    def release(self, host: str) -> None:
        super().release(host)
        held = self._held.get(host)
        if held:
            slot = held.pop()
            self._spawn(self._give_back(host, slot))
        if self._keeper is not None and not any(self._held.values()):
            self._keeper.cancel()
            self._keeper = None

    def record(
        self, host: str, code: int | None, elapsed: float, retry_after: float | None = None, pause: float | None = None
    ) -> None:
        h = self._host(host)
        before = h.blocked_until
        super().record(host, code, elapsed, retry_after, pause)
        if h.blocked_until > before:  # a 429, a 503 or a spent rate-limit window: every process waits
            seconds = h.blocked_until - self._clock()
            self._spawn(self._pause_all(host, seconds))

    async def _ask(self, host: str, limits: HostLimits) -> None:
        slot = secrets.token_hex(8)
        try:
            wait = int(await self._acquire(host_keys(self._prefix, host), [
                limits.rate or 0, limits.burst, limits.concurrency, slot, self._lease_us]))
        except Exception:  # Redis is away: ask again later; the host waits meanwhile
            self._retry_at[host] = self._clock() + _TROUBLE
            return
        finally:
            self._asking.discard(host)
        if wait == 0:
            self._ready.setdefault(host, []).append(slot)
            self._retry_at.pop(host, None)
        else:
            self._retry_at[host] = self._clock() + (_CAPPED if wait < 0 else wait / 1_000_000)

    async def _give_back(self, host: str, slot: str) -> None:
        await self._client.zrem(host_keys(self._prefix, host)[1], slot)

    async def _pause_all(self, host: str, seconds: float) -> None:
        await self._pause([host_keys(self._prefix, host)[2]], [max(1, round(seconds * 1_000_000))])

    async def _keep(self) -> None:
        """Renew the leases of the slots in use (a long request keeps its slot); ended when none is (a cancel
        that lands inside a Redis call may be lost)."""
        while any(self._held.values()):
            await asyncio.sleep(self._lease_us / 3_000_000)
            for host, slots in list(self._held.items()):
                for slot in list(slots):
                    with contextlib.suppress(Exception):  # missed once, tried again: the lease has time left
                        await self._renew([host_keys(self._prefix, host)[1]], [slot, self._lease_us])

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a slot not given back, a pause not shared: the lease and local backoff still hold
