"""RedisHostPool against a real redis-server: the tokens a process takes outside its slots (robots.txt, a
soft-404 probe) come from the host's shared bucket, so another process sharing the host waits for them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from linkhound.host_pool import HostLimits
from linkhound.redis_host_pool import RedisHostPool


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[list[object]]:
    import redis.asyncio

    made = [redis.asyncio.from_url(redis_url) for _ in range(2)]
    yield made
    for c in made:
        await c.aclose()


async def _token(pool: RedisHostPool, host: str) -> float:
    """try_token until it answers with no wait (0.0), or with a wait longer than fetching takes: that wait."""
    for _ in range(2000):
        wait = pool.try_token(host)
        if wait == 0.0 or wait > 0.05:
            return wait
        await asyncio.sleep(wait)
    raise AssertionError("no answer from Redis")


async def test_a_token_taken_by_one_process_is_gone_for_the_other(clients: list[object]) -> None:
    limits = HostLimits(concurrency=4, rate=1.0, burst=1)  # one token a second, one in the bucket
    first, second = (RedisHostPool(c, limits, prefix="lh:test-tokens") for c in clients)  # type: ignore[arg-type]
    host = "127.0.0.1:9"
    assert await _token(first, host) == 0.0  # the bucket's one token
    wait = await _token(second, host)  # the other process: the bucket is empty, about a second to the next
    assert 0.5 < wait <= 1.0
    assert await _token(first, host) > 0.5  # and for the first process too, in Redis as in the other
    assert first.stats()[host].requests == 1 and second.stats()[host].requests == 0


async def test_no_rate_means_no_token_to_wait_for(clients: list[object]) -> None:
    pool = RedisHostPool(clients[0], HostLimits(concurrency=2), prefix="lh:test-tokens")  # type: ignore[arg-type]
    assert [pool.try_token("127.0.0.1:9") for _ in range(5)] == [0.0] * 5
