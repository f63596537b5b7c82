"""The contract every CrawlState backend keeps (memory today; SQLite and Redis run the same suite).

A backend's test module subclasses StateContract and provides the `make` fixture: a factory
(limits, on_host_ready) -> CrawlState, fresh for each test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from linkhound.crawl_state import Claim, CrawlState, Found, Limits, Plan, Progress

Make = Callable[..., CrawlState]


def found(path: str, depth: int = 1, crawl: bool = False, body: bool = False, seed: bool = False,
          host: str = "h.test") -> Found:
    url = f"http://{host}{path}"
    return Found(url, url, host, depth, crawl, body, seed)


async def take(state: CrawlState, host: str = "h.test") -> Claim:
    claim = await state.claim(host)
    assert claim is not None
    return claim


async def drain(state: CrawlState, host: str = "h.test") -> list[Claim]:
    """Claim and finish everything queued for host (serving each claim's own plan)."""
    out = []
    while (claim := await state.claim(host)) is not None:
        out.append(claim)
        await state.done(claim, claim.plan)
    return out


class StateContract:
    @pytest.fixture
    def make(self) -> Make:
        raise NotImplementedError

    async def test_add_dedups_before_any_request(self, make: Make) -> None:
        state = make(Limits())
        new = await state.add([found("/a"), found("/a")])
        assert [c.url for c in new] == ["http://h.test/a"]
        assert await state.add([found("/a")]) == []
        assert state.unfinished == 1 and state.queued == 1

    async def test_concurrent_adds_of_one_key_queue_it_once(self, make: Make) -> None:
        state = make(Limits())
        results = await asyncio.gather(*(state.add([found("/same", depth=d % 3 + 1)]) for d in range(50)))
        assert sum(len(r) for r in results) >= 1
        claims = await drain(state)
        assert [c.url for c in claims] == ["http://h.test/same"]
        assert claims[0].depth == 1  # the shortest of the depths added
        assert state.unfinished == 0

    async def test_claims_are_shallowest_first_per_host(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found(f"/d{d}", depth=d) for d in (3, 1, 2, 0)])
        assert [c.depth for c in await drain(state)] == [0, 1, 2, 3]

    async def test_a_claimed_record_is_in_flight_and_not_claimed_again(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/a"), found("/b"), found("/c")])
        first, second = await take(state), await take(state)  # (neither done yet)
        assert (first.url, second.url) == ("http://h.test/a", "http://h.test/b")
        record = state.record(first.key)
        assert record is not None and record.progress is Progress.IN_FLIGHT
        assert state.queued == 1 and state.unfinished == 3
        await state.done(second, second.plan)
        assert [c.url for c in await drain(state)] == ["http://h.test/c"]
        assert state.unfinished == 1  # /a, still in flight
        await state.done(first, first.plan)
        assert state.unfinished == 0 and await state.claim("h.test") is None

    async def test_many_claims_in_flight_at_once_are_each_claimed_once_in_order(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found(f"/p{i}", depth=i % 3) for i in range(40)])
        claims = [await take(state) for _ in range(40)]  # (none done yet)
        assert sorted(c.url for c in claims) == sorted(f"http://h.test/p{i}" for i in range(40))  # each once
        assert [c.depth for c in claims] == sorted(c.depth for c in claims)  # shallowest first
        assert await state.claim("h.test") is None and state.queued == 0
        await state.add([found("/p38", depth=0)])  # a shorter path to a record in flight: it stays in flight
        assert await state.claim("h.test") is None
        records = [state.record(c.key) for c in claims]
        assert all(r is not None and r.progress is Progress.IN_FLIGHT for r in records)
        await state.add([found("/p0", depth=0, body=True)])  # a plan raised in flight: fetched again when done
        for c in claims:
            await state.done(c, c.plan)
        assert [c.url for c in await drain(state)] == ["http://h.test/p0"]
        assert state.unfinished == 0

    async def test_a_shorter_path_to_a_page_moves_up_its_children_in_flight_too(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/page", depth=2, crawl=True)])
        page = await take(state)
        await state.add([found("/c1", depth=3), found("/c2", depth=3)], parent=page.key)
        await state.done(page, page.plan)
        child = await take(state)  # /c1, in flight
        await state.add([found("/page", depth=0, crawl=True)])
        assert state.depth(child.key) == 1 and state.depth("http://h.test/c2") == 1
        record = state.record(child.key)
        assert record is not None and record.progress is Progress.IN_FLIGHT
        assert [c.url for c in await drain(state)] == ["http://h.test/c2"]
        await state.done(child, child.plan)
        assert state.unfinished == 0

    async def test_claims_stay_shallowest_first_as_records_are_added_and_moved_between_claims(
            self, make: Make) -> None:
        state = make(Limits())
        await state.add([found(f"/d{d}", depth=d) for d in (3, 4, 5, 6, 7)])
        order = [(await take(state)).url]  # /d3
        await state.add([found("/new1", depth=1)])  # ahead of everything queued
        await state.add([found("/d6", depth=2)])  # a queued record moves up
        order.append((await take(state)).url)  # /new1
        await state.add([found("/d7", depth=9)])  # (no change: deeper than it is)
        order += [(await take(state)).url, (await take(state)).url]  # /d6 at 2, then /d4
        await state.add([found("/new4", depth=4)])  # ahead of /d5 and /d7, queued before it
        order += [c.url for c in await drain(state)]
        assert [u.rsplit("/", 1)[1] for u in order] == ["d3", "new1", "d6", "d4", "new4", "d5", "d7"]
        assert state.unfinished == 4  # those taken one by one: never done

    async def test_on_host_ready_is_told_when_a_queue_fills(self, make: Make) -> None:
        ready: list[str] = []
        state = make(Limits(), ready.append)
        await state.add([found("/a", host="a.test"), found("/b", host="a.test"), found("/c", host="c.test")])
        assert sorted(set(ready)) == ["a.test", "c.test"]
        assert state.has_work("a.test") and not state.has_work("x.test")

    async def test_a_shorter_depth_while_queued_is_claimed_once_at_that_depth(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/a", depth=5)])
        await state.add([found("/a", depth=2)])
        claims = await drain(state)
        assert [(c.url, c.depth) for c in claims] == [("http://h.test/a", 2)]

    async def test_plan_is_page_for_crawlable_links_within_max_depth(self, make: Make) -> None:
        state = make(Limits(max_depth=2))
        await state.add([found("/in", depth=2, crawl=True), found("/deep", depth=3, crawl=True),
                         found("/leaf", depth=1), found("/frag", depth=1, body=True),
                         found("/seed", depth=9, seed=True)])
        plans = {c.url.rsplit("/", 1)[1]: c.plan for c in await drain(state)}
        assert plans == {"in": Plan.PAGE, "deep": Plan.CHECK, "leaf": Plan.CHECK, "frag": Plan.BODY,
                         "seed": Plan.PAGE}
        assert state.cut_by() == ("max-depth 2",)

    async def test_a_plan_raised_after_the_fetch_queues_it_again(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/a")])
        first = await take(state)
        await state.done(first, Plan.CHECK)  # checked with HEAD
        assert state.unfinished == 0
        raised = await state.add([found("/a", crawl=True)])
        assert [c.plan for c in raised] == [Plan.PAGE]
        assert state.unfinished == 1  # one more request
        again = await take(state)
        assert again.plan is Plan.PAGE
        await state.done(again, Plan.PAGE)
        assert state.refetched == 1 and state.unfinished == 0
        record = state.record(again.key)
        assert record is not None and record.progress is Progress.DONE and record.served is Plan.PAGE

    async def test_a_plan_raised_in_flight_is_fetched_again_when_done(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/a")])
        claim = await take(state)
        await state.add([found("/a", body=True)])  # a #fragment now needs the body
        assert state.unfinished == 1
        await state.done(claim, Plan.CHECK)
        assert state.unfinished == 1  # queued again, not finished
        again = await take(state)
        assert again.plan is Plan.BODY
        await state.done(again, Plan.BODY)
        assert state.unfinished == 0

    async def test_no_refetch_when_the_answer_already_satisfies_the_raised_plan(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/broken")])
        await state.done(await take(state), Plan.PAGE)  # a 404 (or an image) satisfies every plan
        assert await state.add([found("/broken", crawl=True)]) != []  # the plan rises ...
        assert state.unfinished == 0 and state.refetched == 0  # ... but nothing is asked again

    async def test_plans_never_fall(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/p", crawl=True)])
        await state.add([found("/p"), found("/p", body=True)])
        assert (await take(state)).plan is Plan.PAGE

    async def test_a_shorter_path_lowers_the_children_of_a_crawled_page(self, make: Make) -> None:
        state = make(Limits(max_depth=3))
        await state.add([found("/p", depth=3, crawl=True)])
        page = await take(state)
        await state.add([found("/c", depth=4, crawl=True)], parent=page.key)  # too deep to crawl
        await state.done(page, Plan.PAGE)
        child = await take(state)
        assert child.plan is Plan.CHECK
        await state.done(child, Plan.CHECK)
        assert state.cut_by() == ("max-depth 3",)
        # a shorter path to /p brings /c within --max-depth: crawled after all, one more request
        raised = await state.add([found("/p", depth=1, crawl=True)])
        assert state.depth(page.key) == 1 and state.depth(child.key) == 2
        assert [c.url for c in raised] == [child.url]
        again = await take(state)
        assert again.url == child.url and again.plan is Plan.PAGE and again.depth == 2
        await state.done(again, Plan.PAGE)
        assert state.unfinished == 0 and state.cut_by() == ()

    async def test_a_sitemaps_entries_sit_at_its_depth(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/sitemap.xml", depth=3, seed=True)])
        sm = await take(state)
        await state.add([found("/e", depth=3, seed=True)], parent=sm.key, hop=0)
        await state.done(sm, Plan.PAGE)
        await state.add([found("/sitemap.xml", depth=0, seed=True)])
        assert state.depth(sm.key) == 0 and state.depth("http://h.test/e") == 0

    async def test_unfinished_is_never_zero_while_a_child_waits(self, make: Make) -> None:
        state = make(Limits())
        await state.add([found("/", depth=0, seed=True)])
        page = await take(state)
        assert state.unfinished == 1
        await state.add([found("/child", crawl=True)], parent=page.key)  # children first ...
        await state.done(page, Plan.PAGE)  # ... then the parent
        assert state.unfinished == 1
        await drain(state)
        assert state.unfinished == 0

    async def test_adopt_records_a_redirects_end_once(self, make: Make) -> None:
        state = make(Limits())
        assert await state.adopt(found("/new", crawl=True))
        record = state.record("http://h.test/new")
        assert record is not None and record.progress is Progress.DONE and record.plan is Plan.PAGE
        assert not await state.adopt(found("/new", crawl=True))  # known now: crawled once
        assert await state.add([found("/new", crawl=True)]) == [] and state.unfinished == 0

    async def test_max_pages_caps_the_page_plans_granted(self, make: Make) -> None:
        state = make(Limits(max_pages=2))
        await state.add([found(f"/p{i}", crawl=True) for i in range(4)])
        plans = [c.plan for c in await drain(state)]
        assert plans.count(Plan.PAGE) == 2 and state.cut_by() == ("max-pages 2",)
