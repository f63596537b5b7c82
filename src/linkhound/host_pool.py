"""How fast each host may be asked: a concurrency cap, a token bucket, and backoff after 429/503."""

from __future__ import annotations

import asyncio
import math
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    Latencies = array[float]  # of "d": seconds
else:
    Latencies = array


class HostLimits(NamedTuple):
    """The limits of one host. rate is requests per second (None: unlimited); burst is the bucket size."""

    concurrency: int = 8
    rate: float | None = None
    burst: int = 1


@dataclass(slots=True)
class HostStats:
    requests: int = 0
    successes: int = 0
    rate_limited: int = 0  # 429 and 503 answers
    waits: int = 0  # times the host was asked while it had to wait
    latencies: Latencies = field(default_factory=lambda: array("d"))  # 8 bytes a request (a float object: 32)

    @property
    def median_latency(self) -> float:
        if not self.latencies:
            return 0.0
        s = sorted(self.latencies)
        return s[len(s) // 2]


def merge_stats(*parts: dict[str, HostStats]) -> dict[str, HostStats]:
    """The stats of several processes of one run added up by host (their latencies together), sorted by host."""
    out: dict[str, HostStats] = {}
    for part in parts:
        for host, s in part.items():
            into = out.setdefault(host, HostStats())
            into.requests += s.requests
            into.successes += s.successes
            into.rate_limited += s.rate_limited
            into.waits += s.waits
            into.latencies.extend(s.latencies)
    return dict(sorted(out.items()))


@dataclass(slots=True)
class HostState:
    limits: HostLimits
    active: int = 0
    tokens: float = 0.0
    refilled: float = 0.0
    blocked_until: float = 0.0  # Retry-After or backoff: no request starts before this
    backoff: float = 0.0  # current backoff step after 429/503 without Retry-After
    held: bool = False  # no request until released (robots.txt being read)
    stats: HostStats = field(default_factory=HostStats)
    hops: deque[asyncio.Future[None]] | None = None  # hops waiting at the cap, each handed the next slot given back


class HostPool:
    """Per-host admission. The scheduler asks `try_acquire`; it never blocks, so no host holds up another.

    try_acquire returns 0.0 when a request may start now (the slot is taken), math.inf when the host
    is at its concurrency cap (ask again after a release), or the seconds until a token is due.
    """

    def __init__(
        self,
        default: HostLimits,
        overrides: dict[str, HostLimits] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_wait: float = 60.0,
    ) -> None:
        self._default = default
        self._overrides = dict(overrides or {})
        self._hosts: dict[str, HostState] = {}
        self._clock = clock
        self._max_wait = max_wait
        self._freed: Callable[[str], None] = lambda host: None

    def when_freed(self, freed: Callable[[str], None]) -> None:
        """freed(host) after each slot of host is given back, whoever took it: the scheduler's requests, or one
        made beside them (robots.txt, a sitemap read). A host the scheduler parked at its cap asks again then."""
        self._freed = freed

    def _host(self, host: str) -> HostState:
        h = self._hosts.get(host)
        if h is None:
            limits = self._overrides.get(host) or self._overrides.get(host.rsplit(":", 1)[0]) or self._default
            h = self._hosts[host] = HostState(limits, tokens=float(limits.burst), refilled=self._clock())
        return h

    def slow_down(self, host: str, rate: float) -> None:
        """Lower a host's rate (robots.txt Crawl-delay / Request-rate) when stricter than what is set. The bucket
        starts empty: the robots.txt request that brought the rate was a request to the host, and the next one
        waits its delay after it (a token left over would send the first page right behind it)."""
        h = self._host(host)
        if h.limits.rate is None or rate < h.limits.rate:
            h.limits = HostLimits(h.limits.concurrency, rate, 1)
            h.tokens, h.refilled = 0.0, self._clock()

    def hold(self, host: str) -> None:
        """Admit nothing to host until unhold (its robots.txt, with Crawl-delay, is being fetched)."""
        self._host(host).held = True

    def unhold(self, host: str) -> None:
        self._host(host).held = False

    def try_acquire(self, host: str) -> float:
        h = self._host(host)
        return math.inf if h.held else self._try(host, h)

    def try_acquire_holding(self, host: str) -> float:
        """try_acquire for the request a hold waits for (robots.txt, read while the host is held): a slot of the
        host's cap and a token of its rate, as every request takes (in a distributed crawl the other processes
        may have the rest of the cap in flight). Released with release()."""
        return self._try(host, self._host(host))

    def try_slot(self, host: str) -> float:
        """try_acquire for a redirect's hop into host from another host's slot (hop_gate): a hold does not stop it
        (robots.txt being read there waits for no hop), and at the cap (math.inf) handed(host) queues it ahead
        of the scheduler's claims. Released with release()."""
        return self._try(host, self._host(host))

    def handed(self, host: str) -> asyncio.Future[None]:
        """A slot of host, handed over by the next release() (a hop that try_slot found at the cap): done with
        the slot taken, its token not (try_token). Cancel it to leave the queue."""
        h = self._host(host)
        if h.hops is None:
            h.hops = deque()
        handed = asyncio.get_running_loop().create_future()
        h.hops.append(handed)
        return handed

    def _try(self, host: str, h: HostState) -> float:
        now = self._clock()
        if h.blocked_until > now:
            h.stats.waits += 1
            return h.blocked_until - now
        if h.active >= h.limits.concurrency:
            return math.inf
        return self._admit(host, h, now)

    def _admit(self, host: str, h: HostState, now: float) -> float:
        """The host may take one more request as far as its own state says: its token, if a rate is set."""
        wait = _take_token(h, now)
        if wait:
            return wait
        h.active += 1
        h.stats.requests += 1
        return 0.0

    def try_token(self, host: str) -> float:
        """One more request within a slot already held (a probe made while a page of host is checked): 0.0
        when it may go now (its token taken, if the host has a rate), else the seconds to wait first (in a
        distributed run, RedisHostPool takes it from the shared bucket)."""
        h = self._host(host)
        now = self._clock()
        if h.blocked_until > now:
            h.stats.waits += 1
            return h.blocked_until - now
        wait = self._token(host, h, now)
        if not wait:
            h.stats.requests += 1
        return wait

    def _token(self, host: str, h: HostState, now: float) -> float:
        """try_token's token, from the host's own bucket here: 0.0 when taken, else the seconds to wait."""
        return _take_token(h, now)

    def release(self, host: str) -> None:
        h = self._host(host)
        if h.hops and h.active <= h.limits.concurrency:  # (more after ShardPool.divide: those past it end)
            while h.hops:
                handed = h.hops.popleft()
                if not handed.done():  # (a cancelled waiter takes nothing)
                    handed.set_result(None)
                    return  # the slot goes on to that hop, still taken: no claim takes it meanwhile
        h.active -= 1
        self._let_go(host)
        self._freed(host)

    def _let_go(self, host: str) -> None:
        """A slot of host is given back (a pool shared with other processes gives it back there)."""

    def record(
        self, host: str, code: int | None, elapsed: float, retry_after: float | None = None, pause: float | None = None
    ) -> None:
        """Feed one response back: 429/503 block the whole host; successes relax the backoff. pause: a spent
        rate-limit window (RateLimit-Remaining: 0) holds the host until its reset, capped like Retry-After."""
        h = self._host(host)
        before = h.blocked_until
        if pause is not None:
            h.blocked_until = max(h.blocked_until, self._clock() + min(self._max_wait, pause))
        h.stats.latencies.append(elapsed)
        if code in (429, 503):
            h.stats.rate_limited += 1
            if retry_after is None:
                h.backoff = min(self._max_wait, max(1.0, h.backoff * 2))
                import random  # here: most runs never back off

                wait = h.backoff * random.uniform(0.5, 1.0)
            else:
                wait = min(self._max_wait, max(0.0, retry_after))
            h.blocked_until = max(h.blocked_until, self._clock() + wait)
        elif code is not None and code < 500:
            h.stats.successes += code < 400
            h.backoff = h.backoff / 2 if h.backoff > 1.0 else 0.0
        if h.blocked_until > before:
            self._blocked(host, h.blocked_until - self._clock())

    def _blocked(self, host: str, seconds: float) -> None:
        """host must wait seconds from now (a 429, a 503, a spent rate-limit window): a pool shared with other
        processes tells them."""

    def stats(self) -> dict[str, HostStats]:
        return {host: h.stats for host, h in sorted(self._hosts.items())}


def _take_token(h: HostState, now: float) -> float:
    """0.0 when h may send a request now (its token taken, if a rate is set), else the seconds until one is due."""
    rate = h.limits.rate
    if rate is not None:
        h.tokens = min(float(h.limits.burst), h.tokens + (now - h.refilled) * rate)
        h.refilled = now
        if h.tokens < 1.0:
            h.stats.waits += 1
            return (1.0 - h.tokens) / rate
        h.tokens -= 1.0
    return 0.0
