"""linkhound.throttle: two processes share one host's budget through Redis, as measured by the server."""

from __future__ import annotations

import asyncio
import math
import sys

import pytest
from aiohttp import web

import linkhound
from server import Site

_CLIENT = """
import asyncio, sys
import aiohttp
import linkhound

async def main(redis_url, url, tasks, each, rate, burst, concurrency):
    limit = linkhound.throttle(redis_url, rate=rate, burst=burst, concurrency=concurrency)
    async with limit, aiohttp.ClientSession() as http:
        async def worker():
            for _ in range(each):
                async with limit.slot(url), http.get(url) as response:
                    await response.read()
        await asyncio.gather(*(worker() for _ in range(tasks)))

redis_url, url, tasks, each, rate, burst, concurrency = sys.argv[1:]
asyncio.run(main(redis_url, url, int(tasks), int(each), float(rate) if rate != "-" else None, int(burst),
                 int(concurrency) if concurrency != "-" else None))
"""


async def _two_clients(redis_url: str, url: str, tasks: int, each: int, rate: float | None, burst: int,
                       concurrency: int | None) -> None:
    args = [redis_url, url, str(tasks), str(each), "-" if rate is None else str(rate), str(burst),
            "-" if concurrency is None else str(concurrency)]
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", _CLIENT, *args) for _ in range(2)]
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 120)  # a hang guard
    assert codes == [0, 0]


async def test_two_processes_keep_one_rate_within_one_token(site: Site, redis_url: str) -> None:
    rate, burst = 10.0, 3
    site.page("/r", "ok", content_type="text/plain")
    await _two_clients(redis_url, site.url("/r"), tasks=4, each=3, rate=rate, burst=burst, concurrency=None)
    times = [r.at for r in site.requests]
    assert len(times) == 24
    # any run of requests fits the bucket: at most burst at once, then rate a second, give or take one token
    for i in range(len(times)):
        for j in range(i + 1, len(times)):
            assert j - i + 1 <= burst + rate * (times[j] - times[i]) + 1, (i, j, times[j] - times[i])


async def test_two_processes_never_exceed_one_concurrency_cap(site: Site, redis_url: str) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.1)
        return web.Response(text="ok")

    site.handler("/slow", slow)
    await _two_clients(redis_url, site.url("/slow"), tasks=5, each=2, rate=None, burst=1, concurrency=3)
    assert len(site.requests) == 20
    assert site.peak == 3  # reached by the two together, never passed


async def test_a_slot_is_given_back_when_its_holder_fails(redis_url: str) -> None:
    async with linkhound.throttle(redis_url, concurrency=1) as limit:
        with pytest.raises(RuntimeError):
            async with limit.slot("http://127.0.0.1:9/a"):
                raise RuntimeError("request failed")
        async with asyncio.timeout(30), limit.slot("http://127.0.0.1:9/b"):  # a hang guard: the slot is free
            pass


_DIES_IN_A_SLOT = """
import asyncio, os, signal, sys
import linkhound

async def main():
    limit = linkhound.throttle(sys.argv[1], concurrency=1, lease=0.5)
    async with limit.slot("127.0.0.1:9"):
        print("holding", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


async def test_a_slot_held_by_a_killed_process_comes_back_after_its_lease(redis_url: str) -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _DIES_IN_A_SLOT, redis_url,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)  # a hang guard
    assert out == b"holding\n"
    limit = linkhound.throttle(redis_url, concurrency=1)
    async with limit, asyncio.timeout(30), limit.slot("127.0.0.1:9"):  # a hang guard: free once the lease ends
        pass


def test_bad_limits_are_usage_errors() -> None:
    for kwargs, message in (({"rate": 0}, "rate must be"), ({"burst": 0}, "burst must be"),
                            ({"concurrency": 0}, "concurrency must be"), ({"rate": "5"}, "rate must be"),
                            ({"rate": math.nan}, "rate must be"), ({"concurrency": 2.5}, "concurrency must be"),
                            ({"burst": True}, "burst must be"), ({"lease": 0}, "lease must be")):
        with pytest.raises(linkhound.UsageError, match=message):
            linkhound.throttle("redis://127.0.0.1:9/0", **kwargs)  # type: ignore[arg-type]


async def test_a_pause_holds_every_holder_of_the_host(redis_url: str) -> None:
    import time

    first = linkhound.throttle(redis_url, concurrency=4)
    second = linkhound.throttle(redis_url, rate=100, burst=10)  # other limits, same host: the pause holds it too
    async with first, second:
        await first.pause("http://127.0.0.1:9/x", 0.3)  # a 429 with Retry-After: 0.3
        started = time.monotonic()
        async with asyncio.timeout(30), second.slot("http://127.0.0.1:9/y"):  # a hang guard
            waited = time.monotonic() - started
        async with first.slot("http://127.0.0.2:9/"):  # another host is not held
            pass
    assert waited >= 0.25  # (the server's clock and ours differ by less than the margin)
