"""Scheduler and host pool logic over the in-memory crawl state, with no network and an injected clock."""

from __future__ import annotations

import asyncio
import math

from linkhound.crawl_state import Found, Plan
from linkhound.host_pool import HostLimits, HostPool
from linkhound.memory_state import MemoryState
from linkhound.scheduler import Scheduler


def link(path: str, depth: int = 0, host: str = "h.test") -> list[Found]:
    url = f"http://{host}{path}"
    return [Found(url, url, host, depth, crawl=False)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_rate_and_burst() -> None:
    clock = Clock()
    pool = HostPool(HostLimits(concurrency=100, rate=2.0, burst=3), clock=clock)
    assert [pool.try_acquire("h") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = pool.try_acquire("h")
    assert math.isclose(wait, 0.5)
    clock.now += 0.5
    assert pool.try_acquire("h") == 0.0


def test_concurrency_cap_and_retry_after_block_only_that_host() -> None:
    clock = Clock()
    pool = HostPool(HostLimits(concurrency=1), clock=clock)
    assert pool.try_acquire("a") == 0.0
    assert pool.try_acquire("a") == math.inf
    pool.release("a")
    pool.record("a", 429, 0.01, retry_after=5.0)
    assert math.isclose(pool.try_acquire("a"), 5.0)
    assert pool.try_acquire("b") == 0.0
    clock.now += 5.0
    assert pool.try_acquire("a") == 0.0


def test_the_request_a_hold_waits_for_takes_a_slot_and_a_token_like_any() -> None:
    """robots.txt, read while its host is held: try_acquire refuses the held host, try_acquire_holding admits its
    one request within the cap, the rate and a Retry-After block as any request is."""
    clock = Clock()
    pool = HostPool(HostLimits(concurrency=2, rate=1.0, burst=1), clock=clock)
    assert pool.try_acquire("a") == 0.0  # one in flight already (its token spent)
    pool.hold("a")
    assert pool.try_acquire("a") == math.inf
    assert math.isclose(pool.try_acquire_holding("a"), 1.0)  # the next token, a second from now
    clock.now += 1.0
    assert pool.try_acquire_holding("a") == 0.0  # the second slot of two
    clock.now += 1.0
    assert pool.try_acquire_holding("a") == math.inf  # both taken
    pool.release("a")
    pool.record("a", 429, 0.01, retry_after=3.0)
    assert math.isclose(pool.try_acquire_holding("a"), 3.0)
    clock.now += 3.0
    assert pool.try_acquire_holding("a") == 0.0
    pool.unhold("a")
    assert pool.try_acquire("a") == math.inf  # (two in flight: the first, and the held host's own)


def scheduled(pool: HostPool, max_concurrency: int) -> tuple[MemoryState, Scheduler]:
    """A crawl state and the scheduler over it, wired as the engine wires them."""
    scheduler: Scheduler
    frontier = MemoryState(on_host_ready=lambda h: scheduler.host_ready(h))
    scheduler = Scheduler(frontier, pool, max_concurrency)
    return frontier, scheduler


async def test_scheduler_serves_other_hosts_while_one_waits() -> None:
    pool = HostPool(HostLimits(concurrency=10), overrides={"slow.test": HostLimits(concurrency=1, rate=0.5)})
    frontier, scheduler = scheduled(pool, max_concurrency=4)
    for i in range(3):
        await frontier.add(link(f"/s{i}", host="slow.test"))
    for i in range(20):
        await frontier.add(link(f"/f{i}", host="fast.test"))
    order = []
    for _ in range(21):
        got = await asyncio.wait_for(scheduler.next(), 1)
        assert got is not None
        order.append(got.url)
        await scheduler.done(got, Plan.CHECK)
    # one slow-host link was allowed at once; the second must wait 2 s, and all fast links went meanwhile
    assert sum("slow.test" in u for u in order) == 1
    assert sum("fast.test" in u for u in order) == 20


async def test_scheduler_ends_when_nothing_is_queued_or_in_flight() -> None:
    frontier, scheduler = scheduled(HostPool(HostLimits()), max_concurrency=2)
    await frontier.add(link("/a"))
    a = await scheduler.next()
    assert a is not None
    # while /a is in flight the run is not over: next() waits, and a child added before done() is served
    waiter = asyncio.ensure_future(scheduler.next())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    await frontier.add(link("/child"))
    await scheduler.done(a, Plan.CHECK)
    child = await asyncio.wait_for(waiter, 1)
    assert child is not None and child.url.endswith("/child")
    await scheduler.done(child, Plan.CHECK)
    assert await asyncio.wait_for(scheduler.next(), 1) is None


async def test_a_slot_given_back_beside_the_scheduler_lets_a_parked_host_go() -> None:
    """A request made beside the crawl (robots.txt, a sitemap read) holds the host's only slot when next() asks:
    the host is parked at its cap, and the pool's release tells the scheduler, which then hands out the link."""
    pool = HostPool(HostLimits(concurrency=1))
    frontier, scheduler = scheduled(pool, max_concurrency=4)
    assert pool.try_acquire("h.test") == 0.0  # taken beside the scheduler
    await frontier.add(link("/a"))
    waiter = asyncio.ensure_future(scheduler.next())
    await asyncio.sleep(0.01)
    assert not waiter.done()  # parked at the cap
    pool.release("h.test")
    got = await asyncio.wait_for(waiter, 1)
    assert got is not None and got.url.endswith("/a")
    await scheduler.done(got, Plan.CHECK)
    assert await asyncio.wait_for(scheduler.next(), 1) is None


async def test_a_finished_link_hands_its_slot_to_the_next_one_within_the_limits() -> None:
    """done_and_next: the worker that finished a link goes on with the next, as next() would have chosen it:
    a host's cap and rate still hold, and nothing is taken after stop()."""
    clock = Clock()
    pool = HostPool(HostLimits(concurrency=1), overrides={"slow.test": HostLimits(concurrency=4, rate=1.0)},
                    clock=clock)
    frontier, scheduler = scheduled(pool, max_concurrency=3)
    for i in range(2):
        await frontier.add(link(f"/s{i}", host="slow.test"))
    for i in range(3):
        await frontier.add(link(f"/a{i}", host="a.test"))
    s0, a0 = await scheduler.next(), await scheduler.next()
    assert s0 is not None and s0.url.endswith("/s0") and a0 is not None and a0.url.endswith("/a0")
    # a slot is free, but slow.test's next token is 1 s away and a.test is at its cap (a0 in flight)
    assert await scheduler.done_and_next(s0, Plan.CHECK) is None
    a1 = await scheduler.done_and_next(a0, Plan.CHECK)  # a.test's slot passes straight to its next link
    assert a1 is not None and a1.url.endswith("/a1")
    clock.now += 1.0
    third = await scheduler.done_and_next(a1, Plan.CHECK)
    assert third is not None and third.url.rsplit("/", 1)[1] in ("a2", "s1")
    scheduler.stop()
    assert await scheduler.done_and_next(third, Plan.CHECK) is None  # stopped: no new work
    assert frontier.unfinished == 1 and frontier.queued == 1


def test_rate_limit_reset_headers() -> None:
    import time

    from linkhound.checker import rate_limit_reset

    assert rate_limit_reset({"RateLimit-Reset": "5"}, 429) == 5.0
    assert rate_limit_reset({"RateLimit-Reset": "5"}, 200) is None  # nothing says the window is spent
    assert rate_limit_reset({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "7"}, 200) == 7.0
    epoch = rate_limit_reset({"X-RateLimit-Reset": str(int(time.time()) + 30)}, 429)
    assert epoch is not None and 25 <= epoch <= 31
    assert rate_limit_reset({"RateLimit-Reset": "soon"}, 429) is None


def test_result_with_references_keeps_every_other_field() -> None:
    import dataclasses

    from linkhound.ledger import with_refs
    from linkhound.status import Status
    from linkhound.types import Reference, Result

    values = {"url": "https://x/a", "status": Status.BROKEN, "code": 404, "reason": "Not Found",
              "redirects": ("https://x/b",), "elapsed": 0.5, "depth": 3, "content_type": "text/html",
              "references": (), "cached": True, "redirect_codes": (301,)}
    assert {f.name for f in dataclasses.fields(Result)} == set(values)  # a new field must be added here too
    r = Result(**values)  # type: ignore[arg-type]
    refs = (Reference("https://x/", 1, 2, "a", "href", "/a"),)
    assert with_refs(r, refs) == dataclasses.replace(r, references=refs)
