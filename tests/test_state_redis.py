"""The Redis crawl state against the backend contract, and what only a shared state must do: leases that
expire, dedup across processes of one job."""

from __future__ import annotations

import asyncio
import itertools
import signal
import sys
from collections.abc import AsyncIterator

import pytest

from linkhound.crawl_state import Limits, Plan, Progress
from state_contract import Make, StateContract, drain, found, take


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[object]:
    import redis.asyncio

    c = redis.asyncio.from_url(redis_url, decode_responses=True)
    yield c
    await c.aclose()


class TestRedisState(StateContract):
    @pytest.fixture
    def make(self, client: object) -> Make:
        from linkhound.redis_state import RedisState

        jobs = itertools.count()

        def make(limits: Limits = Limits(), on_host_ready=lambda host: None) -> RedisState:  # noqa: B008
            return RedisState(client, f"contract-{next(jobs)}", limits, on_host_ready)  # type: ignore[arg-type]

        return make


async def test_two_processes_of_one_job_request_a_url_once(redis_url: str) -> None:
    import redis.asyncio

    from linkhound.redis_state import RedisState

    clients = [redis.asyncio.from_url(redis_url, decode_responses=True) for _ in range(2)]
    try:
        a, b = (RedisState(c, "shared") for c in clients)
        adds = [s.add([found(f"/p{i}") for i in range(20)]) for s in (a, b) for _ in range(5)]
        new = [c.url for batch in await asyncio.gather(*adds) for c in batch]
        assert sorted(new) == sorted(f"http://h.test/p{i}" for i in range(20))  # each queued once, by one of them
        claimed = [c.url for c in await drain(a)] + [c.url for c in await drain(b)]
        assert sorted(claimed) == sorted(new)
        assert a.unfinished == b.unfinished == 0
        # b learns of a's records through the scripts' answers as it touches them
        assert await b.add([found("/p3", crawl=True)]) != []
    finally:
        for c in clients:
            await c.aclose()


_DYING_WORKER = """
import asyncio, os, signal, sys
import redis.asyncio
from linkhound.crawl_state import Found
from linkhound.redis_state import RedisState

async def main():
    state = RedisState(redis.asyncio.from_url(sys.argv[1], decode_responses=True), "lease", lease=1.0)
    await state.add([Found("http://h.test/a", "http://h.test/a", "h.test", 0, True)])
    claim = await state.claim("h.test")
    print(claim.url, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # dies holding the lease

asyncio.run(main())
"""


async def test_a_worker_that_dies_holding_a_lease_loses_nothing(client: object, redis_url: str) -> None:
    from linkhound.redis_state import RedisState

    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _DYING_WORKER, redis_url,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)  # a hang guard
    assert out.decode().strip() == "http://h.test/a" and proc.returncode == -signal.SIGKILL
    alive = RedisState(client, "lease")  # type: ignore[arg-type]
    assert await alive.claim("h.test") is None  # still leased to the dead worker
    await asyncio.sleep(1.3)  # past the lease
    again = await take(alive)
    assert again.url == "http://h.test/a" and again.plan is Plan.PAGE
    await alive.done(again, Plan.PAGE)
    assert alive.unfinished == 0
    record = alive.record(again.key)
    assert record is not None and record.progress is Progress.DONE


def _stall(state: object) -> None:
    """The state's lease renewals stop (a worker stuck in a long pause)."""
    state._keeper.cancel()  # type: ignore[attr-defined]


async def test_done_after_the_lease_moved_to_another_worker_is_ignored(client: object) -> None:
    from linkhound.redis_state import RedisState

    slow = RedisState(client, "stale", lease=0.05)  # type: ignore[arg-type]
    other = RedisState(client, "stale")  # type: ignore[arg-type]
    await slow.add([found("/a")])
    first = await take(slow)
    _stall(slow)
    await asyncio.sleep(0.3)
    second = await take(other)  # the lease ran out: the other worker has it now
    await slow.done(first, Plan.CHECK)  # the slow worker's late answer changes nothing ...
    assert other.unfinished == 1 and slow.unfinished == 1
    await other.done(second, Plan.CHECK)  # ... the holder's does
    assert other.unfinished == 0


async def test_a_late_done_before_anyone_took_the_url_again_finishes_it(client: object) -> None:
    from linkhound.redis_state import RedisState

    slow = RedisState(client, "late", lease=0.05)  # type: ignore[arg-type]
    await slow.add([found("/a")])
    claim = await take(slow)
    _stall(slow)
    await asyncio.sleep(0.3)
    await slow.renew()  # reclaims the expired lease: queued again
    assert slow.queued == 1 and slow.has_work("h.test")
    await slow.done(claim, Plan.CHECK)  # the answer came after all: no second request
    assert slow.unfinished == 0 and slow.queued == 0 and not slow.has_work("h.test")


async def test_held_leases_are_renewed_while_the_fetch_goes_on(client: object) -> None:
    from linkhound.redis_state import RedisState

    # (a lease of 0.5 s: renewed every 1/6 s, it outlives a stall of 0.3 s on a loaded machine; at 0.15 s, one
    # of 0.1 s let it lapse in a CI run)
    worker = RedisState(client, "renew", lease=0.5)  # type: ignore[arg-type]
    other = RedisState(client, "renew")  # type: ignore[arg-type]
    await worker.add([found("/slow")])
    claim = await take(worker)
    await asyncio.sleep(2.0)  # four leases long: kept alive by the renewals
    assert await other.claim("h.test") is None
    await worker.done(claim, Plan.CHECK)
    assert worker.unfinished == 0


def test_a_job_name_with_braces_is_refused() -> None:
    from linkhound import UsageError
    from linkhound.redis_state import key_prefix

    assert key_prefix("site-1") == "lh:{site-1}:"
    with pytest.raises(UsageError, match="job name"):
        key_prefix("a}b")


async def test_children_take_their_pages_depth_in_redis_not_a_stale_view(client: object) -> None:
    from linkhound.redis_state import RedisState

    a, b = RedisState(client, "stale-depth"), RedisState(client, "stale-depth")  # type: ignore[arg-type]
    await a.add([found("/p", depth=5, crawl=True)])
    page = await take(a)
    await b.add([found("/p", depth=2, crawl=True)])  # another process finds a shorter path meanwhile
    assert a.depth(page.key) == 5  # a has not seen it ...
    await a.add([found("/c", depth=6, crawl=True)], parent=page.key)  # ... and adds the children one below 5
    assert a.depth("http://h.test/c") == 3  # the script put them one below 2


async def test_a_redirects_end_moves_up_with_its_start(client: object) -> None:
    from linkhound.redis_state import RedisState

    a, b = RedisState(client, "redirect"), RedisState(client, "redirect")  # type: ignore[arg-type]
    await a.add([found("/old", depth=5, crawl=True)])
    start = await take(a)  # (the claim a works on: /old redirects to /new)
    await b.add([found("/old", depth=3, crawl=True)])
    assert await a.adopt(found("/new", depth=start.depth, crawl=True))  # the claim's depth, 5, is stale
    assert a.depth("http://h.test/new") == 3
    await a.add([found("/n1", depth=4, crawl=True)], parent="http://h.test/new")
    await a.done(start, Plan.PAGE)
    await b.add([found("/old", depth=1, crawl=True)])  # later, a shorter path to the start ...
    assert b.depth("http://h.test/new") == 1 and b.depth("http://h.test/n1") == 2  # ... moves the end up too
