"""A per-host request budget shared through Redis: a token bucket and a concurrency cap, one Lua step each, so
every process that names the same Redis keeps one host's limit together (`linkhound.throttle`)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .exceptions import UsageError

if TYPE_CHECKING:
    from redis.asyncio import Redis

PREFIX = "lh:throttle:"
_CAPPED = -1
_POLL = 0.02  # seconds between two asks while the host is at its concurrency cap

# KEYS: the host's bucket (hash: tokens, at), its slot holders (sorted set: holder -> lease end, in µs) and its
# pause (the server time, in µs, before which no request starts: a 429's Retry-After, for everyone).
# ARGV: rate (tokens a second, 0: no bucket), burst, concurrency (0: no cap), lease (µs), then the holders
# wanting a slot (one token each). Answer: {slots granted (to the first holders), 0}, or when none is:
# {0, -1} at the concurrency cap, else {0, the µs until a token is due or the pause ends}.
ACQUIRE = r"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate, burst, cap, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local grant = #ARGV - 4
local paused = tonumber(redis.call('GET', KEYS[3]) or 0)
if paused > now then return {0, paused - now} end
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)  -- holders that died with a slot: their lease ran out
  grant = math.min(grant, cap - redis.call('ZCARD', KEYS[2]))
  if grant < 1 then return {0, -1} end
end
if rate > 0 then
  local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
  local tokens, at = tonumber(b[1]) or burst, tonumber(b[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000000)
  if tokens < 1 then return {0, math.ceil((1 - tokens) * 1000000 / rate)} end
  grant = math.min(grant, math.floor(tokens))
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - grant), 'at', tostring(now))
  -- a full bucket is the same as no key: let an idle host's key go once it would have refilled
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
end
if cap > 0 then
  for i = 1, grant do redis.call('ZADD', KEYS[2], now + lease, ARGV[4 + i]) end
  redis.call('PEXPIRE', KEYS[2], math.ceil(lease / 1000) + 1000)
end
return {grant, 0}
"""

# KEYS: the host's bucket. ARGV: rate, burst. The bucket is empty now (a robots.txt read just now was a request
# to the host: with its Crawl-delay, the next request waits a whole delay after it).
EMPTY = r"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('HSET', KEYS[1], 'tokens', '0', 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000 / tonumber(ARGV[1])) + 1000)
return 0
"""

# KEYS: the slot holders. ARGV: holder, lease (µs). The holder's lease moves on, if it still has one.
RENEW = r"""
local t = redis.call('TIME')
local until_ = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[2])
local renewed = redis.call('ZADD', KEYS[1], 'XX', 'CH', until_, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) / 1000) + 1000)
return renewed
"""


# KEYS: the host's pause. ARGV: µs from now. The pause ends then, or later if it already did.
PAUSE = r"""
local t = redis.call('TIME')
local until_ = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or 0) then
  redis.call('SET', KEYS[1], string.format('%d', until_), 'PX', math.ceil(tonumber(ARGV[1]) / 1000) + 1)
end
return 0
"""


def host_keys(prefix: str, host: str) -> list[str]:
    """A host's bucket, slots and pause: one hash tag, so one Redis Cluster slot."""
    tag = f"{prefix}{{{host}}}"
    return [tag + ":bucket", tag + ":slots", tag + ":pause"]


class Throttle:
    """One budget per host: `rate` requests a second with bursts of `burst` (None: no rate limit), and at
    most `concurrency` requests at once (None: no cap), counted across every process using the same Redis
    and prefix. A process that dies inside a slot gives it back when its lease (seconds) runs out; a live one
    renews its lease while it holds the slot."""

    def __init__(
        self,
        client: Redis,
        rate: float | None = None,
        burst: int = 1,
        concurrency: int | None = None,
        *,
        prefix: str = PREFIX,
        lease: float = 60.0,
    ) -> None:
        if rate is not None and not (_is_number(rate) and 0 < rate < math.inf):
            raise UsageError(f"throttle: rate must be a positive number of requests a second, got {rate!r}")
        if not (_is_int(burst) and burst >= 1):
            raise UsageError(f"throttle: burst must be a whole number, 1 or more, got {burst!r}")
        if concurrency is not None and not (_is_int(concurrency) and concurrency >= 1):
            raise UsageError(f"throttle: concurrency must be a whole number, 1 or more, got {concurrency!r}")
        if not (_is_number(lease) and 0 < lease < math.inf):
            raise UsageError(f"throttle: lease must be a positive number of seconds, got {lease!r}")
        self._client = client
        self._prefix = prefix
        self._args = [rate or 0, burst, concurrency or 0]
        self._capped = concurrency is not None
        self._lease_us = max(1, round(lease * 1_000_000))
        self._acquire = client.register_script(ACQUIRE)
        self._renew = client.register_script(RENEW)
        self._pause = client.register_script(PAUSE)

    @contextlib.asynccontextmanager
    async def slot(self, url: str) -> AsyncIterator[None]:
        """Wait for the host of url (or a bare host name) to have room, and hold one of its slots meanwhile."""
        import secrets  # here and below: `import linkhound` loads this module, and most runs hold no Redis slot

        keys = self._keys(url)
        holder = secrets.token_hex(8)
        await self._take(keys, holder)
        held = [True]
        keeper = _spawn(self._keep(keys[1], holder, held)) if self._capped else None
        try:
            yield
        finally:
            if keeper is not None:
                held.clear()  # (a cancel that lands inside a Redis call may be lost: the flag ends it anyway)
                keeper.cancel()
                await self._client.zrem(keys[1], holder)

    async def _take(self, keys: list[str], holder: str) -> None:
        import random

        while True:
            granted, wait = await self._acquire(keys, [*self._args, self._lease_us, holder])
            if int(granted):
                return
            # waiters on one host wake a little apart, so they don't all ask at the same instant
            delay = _POLL if int(wait) == _CAPPED else int(wait) / 1_000_000
            await _sleep(delay * random.uniform(1.0, 1.1))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> Throttle:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def pause(self, url: str, seconds: float) -> None:
        """No one starts a request to url's host for seconds (after a 429 or 503 with Retry-After, say)."""
        await self._pause([self._keys(url)[2]], [max(1, round(seconds * 1_000_000))])

    def _keys(self, url: str) -> list[str]:
        from .urls import host_of  # here: the URL rules (ada-url) load when `import linkhound` needs them

        host = host_of(url) if "//" in url else url.lower()
        if not host:
            raise UsageError(f"throttle: no host in {url!r}")
        return host_keys(self._prefix, host)

    async def _keep(self, slots: str, holder: str, held: list[bool]) -> None:
        while held:
            await _sleep(self._lease_us / 3_000_000)
            with contextlib.suppress(Exception):  # missed once, tried again: the lease has time left
                await self._renew([slots], [holder, self._lease_us])


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


async def _sleep(seconds: float) -> None:
    import asyncio  # here: `import linkhound` (the parse worker, `linkhound --version`) loads no event loop

    await asyncio.sleep(seconds)


def _spawn(coro: Coroutine[Any, Any, None]) -> Any:
    import asyncio

    return asyncio.ensure_future(coro)


def throttle(
    redis_url: str, rate: float | None = None, burst: int = 1, concurrency: int | None = None, **options: Any
) -> Throttle:
    """A Throttle on the Redis at redis_url (e.g. "redis://127.0.0.1:6379/0"). `async with t.slot(url):`
    around each request keeps every process's requests to that URL's host within one budget."""
    try:
        import redis.asyncio
    except ImportError:
        raise UsageError("linkhound.throttle needs the redis package: pip install 'linkhound[redis]'") from None
    return Throttle(redis.asyncio.from_url(redis_url, decode_responses=True), rate, burst, concurrency, **options)
