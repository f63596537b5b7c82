"""RedisHostPool against a real redis-server: the tokens a process takes outside its slots (robots.txt, a
soft-404 probe) come from the host's shared bucket, so another process sharing the host waits for them; a hop
into another host waits for a slot of its shared cap."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from cli_run import HANG_GUARD
from linkhound.hop_gate import HopGate
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


async def _slot(pool: RedisHostPool, host: str) -> None:
    """try_acquire until the slot comes from Redis (at most 20 s: only catches a hang)."""
    for _ in range(2000):
        wait = pool.try_acquire(host)
        if wait == 0.0:
            return
        await asyncio.sleep(min(wait, 0.01))
    raise AssertionError("no slot from Redis")


async def test_a_hop_into_another_host_waits_for_a_slot_of_its_shared_cap(clients: list[object]) -> None:
    # a check of the first process, in a's slot, redirected into b, whose one slot the second process holds: a's
    # slot is given back in Redis at once (the second takes it), and the hop goes once the second gives b's back
    first, second = (RedisHostPool(c, HostLimits(concurrency=1), prefix="lh:test-hops")  # type: ignore[arg-type]
                     for c in clients)
    a, b = "127.0.0.1:9", "127.0.0.2:9"
    await _slot(first, a)
    await _slot(second, b)
    gate = HopGate(first, None, lambda url: True)

    async def check() -> str:
        await gate.enter(f"http://{b}/x", False, None, a)
        return gate.settle(a)

    checking = asyncio.ensure_future(check())
    await asyncio.wait_for(_slot(second, a), HANG_GUARD)
    await asyncio.sleep(0.2)  # (the hop asks Redis for b's slot meanwhile, in vain)
    assert not checking.done()
    second.release(b)
    assert await asyncio.wait_for(checking, HANG_GUARD) == b
    first.release(b)
    second.release(a)
