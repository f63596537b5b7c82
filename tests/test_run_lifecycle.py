"""A run's life as a program holds it: cancelled, stopped, awaited twice, or told of events by a callback that
fails. What the server saw after each, and what the program gets."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import linkhound
from cli_run import HANG_GUARD
from linkhound import Status, UsageError
from server import Site, until


def _engine_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if "Engine." in t.get_coro().__qualname__]  # type: ignore[union-attr]


@pytest.mark.usefixtures("both_clients")
async def test_a_cancelled_run_asks_nothing_more_and_leaves_no_task(site: Site) -> None:
    # the program's deadline cancels the run while four requests are in flight: before, the run's tasks went on
    # in the background with the native and reqwest clients, taking the next URLs as the answers came
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.3)
        return web.Response(text="ok")

    site.prefixes["/s"] = slow
    urls = [site.url(f"/s{i}") for i in range(40)]
    checking = asyncio.ensure_future(linkhound.check(urls, host_concurrency=4))
    await until(lambda: site.inflight == 4)
    checking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await checking
    seen = len(site.requests)
    assert seen == 4
    await asyncio.sleep(1.0)  # (three answers' time: each freed slot took the next URL)
    assert len(site.requests) == seen
    assert not _engine_tasks()


@pytest.mark.usefixtures("both_clients")
async def test_stop_asks_no_retry_and_cuts_a_retry_wait_short(site: Site) -> None:
    # one URL times out, the other answers 503 with Retry-After: 5; stop() comes while both wait: neither is
    # asked again (before: both were, after the timeout's backoff and the five seconds), and the report comes
    async def hangs(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(30)
        return web.Response(text="late")

    site.handler("/hangs", hangs)
    site.status("/busy", 503, {"Retry-After": "5"})
    run = linkhound.start([site.url("/hangs"), site.url("/busy")], timeout=0.5, max_retries=3, retry_backoff=0.5)
    reporting = asyncio.ensure_future(run.report())
    await until(lambda: site.hits("/hangs") and site.hits("/busy"))
    await asyncio.sleep(0.1)  # (the 503's Retry-After is being waited out)
    run.stop()
    report = await asyncio.wait_for(reporting, HANG_GUARD)
    assert site.hits("/hangs") == 1 and site.hits("/busy") == 1
    statuses = {r.url.rsplit("/", 1)[1]: r.status for r in report.results}
    assert statuses == {"hangs": Status.TIMEOUT, "busy": Status.BROKEN}
    assert report.summary.interrupted


async def test_an_exception_in_on_event_is_the_program_s_and_ends_the_run(site: Site, tmp_path: Path) -> None:
    # before: it was swallowed, and every link was reported as an "internal error" (a 404 lost its status)
    for i in range(20):
        site.page(f"/ok{i}", "ok")

    def on_event(event: object) -> None:
        if isinstance(event, linkhound.Result):
            raise ValueError("bug in the program's callback")

    with pytest.raises(ValueError, match="bug in the program's callback"):
        await linkhound.check([site.url(f"/ok{i}") for i in range(20)], on_event=on_event, max_concurrency=2)
    assert len(site.requests) < 20  # (cancelled: the rest were never asked)
    doc = tmp_path / "links.md"  # a local file's result: the same
    doc.write_text("[here](links.md)\n")
    with pytest.raises(ValueError, match="bug in the program's callback"):
        await linkhound.check([str(doc)], on_event=on_event)


async def test_a_run_is_awaited_once(site: Site) -> None:
    site.page("/a", "ok")
    run = linkhound.start([site.url("/a")])
    report = await run.report()
    assert report.summary.total == 1
    with pytest.raises(UsageError, match="awaited already"):
        await run.report()
    assert site.hits("/a") == 1


async def test_a_cancelled_run_of_two_processes_leaves_no_error_behind(site: Site, tmp_path: Path) -> None:
    # before: "Task exception was never retrieved: a --jobs process ended before its work was done"
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.2)
        return web.Response(text="ok")

    site.prefixes["/s"] = slow
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(site.url(f"/s{i}") for i in range(200)) + "\n")
    errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
    run = linkhound.start([str(urls)], jobs=2)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run.report(), 1.0)
    del run
    gc.collect()
    await asyncio.sleep(0.1)
    assert not errors, [e.get("message") for e in errors]
    assert not _engine_tasks()


async def test_crawl_takes_no_on_event(site: Site) -> None:
    # before: Python's "got multiple values for keyword argument 'on_event'" TypeError
    site.page("/", "ok")
    with pytest.raises(UsageError, match="yields each event itself"):
        async for _ in linkhound.crawl([site.url("/")], on_event=print):
            pass
    assert not site.requests
