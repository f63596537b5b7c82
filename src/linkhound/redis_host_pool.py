"""A HostPool whose budget every process of a distributed crawl shares: each request takes a slot and a token
from the host's keys in Redis (the same keys and Lua as `linkhound.throttle`), and a 429's pause reaches all.

The scheduler asks `try_acquire` without waiting, so slots are fetched from Redis in the background: an ask
that finds none in stock answers "try again in a moment" (a millisecond) and fetches one, and the scheduler
takes it as it comes back. Slots are fetched one at a time, as asked for: a process that took more than it
uses would keep them from the others. One left in stock (the host ran out of work) is soon given back. A rate
lowered by robots.txt (`slow_down`) empties the host's bucket in Redis, where the robots.txt request took its
token; slots taken at the old rate are given back, and none is asked for until the bucket is empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from .host_pool import HostLimits, HostPool, HostState
from .throttle import ACQUIRE, EMPTY, PAUSE, PREFIX, RENEW, host_keys

if TYPE_CHECKING:
    from redis.asyncio import Redis

_ASKING = 0.001  # seconds the scheduler waits while slots are being fetched
_CAPPED = 0.02  # ... while the host is at its cap in Redis (no one tells when a slot frees)
_TROUBLE = 1.0  # ... after Redis failed to answer
_STALE = 0.1  # seconds a slot may wait in stock before it is given back


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
        self._empty = client.register_script(EMPTY)
        self._client = client
        self._stock: dict[str, deque[tuple[float, str]]] = {}  # host -> (taken at, slot), not used yet
        self._held: dict[str, list[str]] = {}  # host -> slots of requests in flight
        self._asking: dict[str, int] = {}  # host -> slots being fetched
        self._retry_at: dict[str, float] = {}
        self._tokens: dict[str, int] = {}  # host -> tokens taken in Redis for try_token, not used yet
        self._token_retry: dict[str, float] = {}  # host -> when to ask Redis for a token again
        self._emptying: set[str] = set()  # hosts whose bucket in Redis is being emptied (slow_down)
        self._tasks: set[asyncio.Task[None]] = set()
        self._keeper: asyncio.Task[None] | None = None

    def slow_down(self, host: str, rate: float) -> None:
        """HostPool.slow_down, with the host's bucket in Redis emptied too: the robots.txt request took its token
        there. Until it is, the host waits (a slot asked for meanwhile could take a token left over)."""
        before = self._host(host).limits
        super().slow_down(host, rate)
        limits = self._host(host).limits
        if limits is before:  # (not stricter than the rate already kept)
            return
        for _, slot in self._stock.pop(host, ()):  # taken with a token of the old rate
            self._spawn(self._give_back(host, slot))
        self._tokens.pop(host, None)
        self._emptying.add(host)
        self._spawn(self._empty_bucket(host, limits))

    def _admit(self, host: str, h: HostState, now: float) -> float:
        """The slot and token come from Redis: one taken already, or asked for now (try again shortly)."""
        if host in self._emptying:
            h.stats.waits += 1
            return _ASKING
        stock = self._give_back_stale(host, now)
        if stock:  # the token was taken with the slot, in Redis: none is taken here
            self._held.setdefault(host, []).append(stock.pop()[1])
            h.active += 1
            h.stats.requests += 1
            return 0.0
        asking = self._asking.get(host, 0)
        if asking < h.limits.concurrency - h.active:
            self._asking[host] = asking + 1
            self._spawn(self._ask(host, h.limits))
        h.stats.waits += 1
        return max(self._retry_at.get(host, 0.0) - now, _ASKING)

    def _token(self, host: str, h: HostState, now: float) -> float:
        """A token of the host's shared bucket for one more request within a slot already held (a soft-404
        probe): taken from Redis in the background, as slots are; until it comes, try again shortly."""
        if h.limits.rate is None:  # no bucket to take from
            return 0.0
        if host in self._emptying:
            return _ASKING
        if self._tokens.get(host, 0):
            self._tokens[host] -= 1
            return 0.0
        retry = self._token_retry.get(host, 0.0)
        if retry <= now:
            self._token_retry[host] = math.inf  # asking (one ask at a time)
            self._spawn(self._ask_token(host, h.limits))
        return _ASKING if retry <= now or retry == math.inf else retry - now

    def _let_go(self, host: str) -> None:
        held = self._held.get(host)
        if held:
            slot = held.pop()
            self._spawn(self._give_back(host, slot))

    def _blocked(self, host: str, seconds: float) -> None:  # a 429, a 503 or a spent rate-limit window
        self._spawn(self._pause_all(host, seconds))  # every process waits

    def _give_back_stale(self, host: str, now: float) -> deque[tuple[float, str]] | None:
        stock = self._stock.get(host)
        while stock and stock[0][0] < now - _STALE:
            self._spawn(self._give_back(host, stock.popleft()[1]))
        return stock

    async def _ask(self, host: str, limits: HostLimits) -> None:
        slots = [secrets.token_hex(8)]
        try:
            granted, wait = await self._acquire(host_keys(self._prefix, host), [
                limits.rate or 0, limits.burst, limits.concurrency, self._lease_us, *slots])
        except Exception:  # Redis is away: ask again later; the host waits meanwhile
            self._retry_at[host] = self._clock() + _TROUBLE
            return
        finally:
            self._asking[host] -= 1
        now = self._clock()
        if int(granted) and self._host(host).limits is not limits:  # granted at a rate robots.txt lowered since
            for slot in slots[: int(granted)]:
                self._spawn(self._give_back(host, slot))
        elif int(granted):
            stock = self._stock.setdefault(host, deque())
            stock.extend((now, slot) for slot in slots[: int(granted)])
            self._retry_at.pop(host, None)
            if self._keeper is None:
                self._keeper = asyncio.ensure_future(self._keep())
        else:
            self._retry_at[host] = now + (_CAPPED if int(wait) < 0 else int(wait) / 1_000_000)

    async def _ask_token(self, host: str, limits: HostLimits) -> None:
        """One token, no slot (a cap of 0 in the script): the request it is for goes within a slot or a hold."""
        try:
            granted, wait = await self._acquire(host_keys(self._prefix, host), [
                limits.rate or 0, limits.burst, 0, self._lease_us, "token"])
        except Exception:  # Redis is away: ask again later
            self._token_retry[host] = self._clock() + _TROUBLE
            return
        finally:
            if self._token_retry.get(host) == math.inf:  # (cancelled: the next try_token asks again)
                self._token_retry[host] = 0.0
        if int(granted) and self._host(host).limits is limits:  # (not: granted at a rate lowered since)
            self._tokens[host] = self._tokens.get(host, 0) + 1
            self._token_retry[host] = 0.0
        elif int(granted):
            self._token_retry[host] = 0.0
        else:
            self._token_retry[host] = self._clock() + max(int(wait), 1000) / 1_000_000

    async def _empty_bucket(self, host: str, limits: HostLimits) -> None:
        try:
            await self._empty(host_keys(self._prefix, host)[:1], [limits.rate or 0, limits.burst])
        finally:  # (Redis away: the bucket is as it was, and the host goes on at its new rate)
            self._emptying.discard(host)

    async def _give_back(self, host: str, slot: str) -> None:
        await self._client.zrem(host_keys(self._prefix, host)[1], slot)

    async def _pause_all(self, host: str, seconds: float) -> None:
        await self._pause([host_keys(self._prefix, host)[2]], [max(1, round(seconds * 1_000_000))])

    async def _keep(self) -> None:
        """While slots are held or in stock: give back stale stock, and renew the leases of the slots in use
        (a long request keeps its slot)."""
        renewed = self._clock()
        try:
            while any(self._held.values()) or any(self._stock.values()):
                await asyncio.sleep(_STALE)
                now = self._clock()
                for host in list(self._stock):
                    self._give_back_stale(host, now)
                if now - renewed < self._lease_us / 3_000_000:
                    continue
                renewed = now
                for host, slots in list(self._held.items()):
                    for slot in list(slots):
                        with contextlib.suppress(Exception):  # missed once, tried again: the lease has time left
                            await self._renew([host_keys(self._prefix, host)[1]], [slot, self._lease_us])
        finally:
            self._keeper = None

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a slot not given back, a pause not shared: the lease and local backoff still hold
