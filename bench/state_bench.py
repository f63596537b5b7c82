"""Crawl-state backends on a synthetic crawl, without the network: adds, claims and dones as a crawl makes them.

    python bench/state_bench.py memory|sqlite [urls] [links-per-page]

Each page links to the nav (the same 10 URLs), to its next pages and to earlier ones, so most adds are
duplicates, as on a real site; one URL in five is a page (crawled), the rest are leaves, over 20 hosts. Prints
the wall time, the operations done, and the peak RSS of the process (run each backend in its own process).
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from linkhound.crawl_state import CrawlState, Found, Limits, Plan  # noqa: E402
from linkhound.memory_state import MemoryState  # noqa: E402
from linkhound.sqlite_state import SqliteState  # noqa: E402

HOSTS = 20


def link(i: int) -> Found:
    host = f"h{i % HOSTS}.test"
    url = f"http://{host}/{'p' if i % 5 == 0 else 'leaf'}/{i}"
    return Found(url, url, host, 0, i % 5 == 0)


async def crawl(state: CrawlState, urls: int, per_page: int) -> tuple[int, int, int]:
    rng = random.Random(1)
    nav = [link(i * 5) for i in range(10)]
    adds = claims = 0
    made = 10
    await state.add([f._replace(depth=0, seed=True) for f in nav])
    hosts = [f"h{h}.test" for h in range(HOSTS)]
    while state.unfinished:
        for host in hosts:
            claim = await state.claim(host)
            if claim is None:
                continue
            claims += 1
            if claim.plan is Plan.PAGE:
                fresh = min(per_page - 20, urls - made)
                found = [*nav, *(link(made + k) for k in range(max(fresh, 0))),
                         *(link(rng.randrange(made)) for _ in range(10))]
                made += max(fresh, 0)
                found = [f._replace(depth=claim.depth + 1) for f in found]
                adds += len(found)
                await state.add(found, claim.key)
            await state.done(claim, claim.plan)
    return adds, claims, made


async def main() -> None:
    backend = sys.argv[1]
    urls = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    per_page = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    with tempfile.TemporaryDirectory() as tmp:
        state: CrawlState
        if backend == "sqlite":
            state = SqliteState(os.path.join(tmp, "state.sqlite"), Limits())
        else:
            state = MemoryState(Limits())
        started = time.perf_counter()
        adds, claims, made = await crawl(state, urls, per_page)
        if isinstance(state, SqliteState):
            state.close()
            size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
        else:
            size = 0
        elapsed = time.perf_counter() - started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{backend}: {made} URLs, {adds} adds, {claims} claims+dones in {elapsed:.2f} s"
          f" ({(adds + 2 * claims) / elapsed / 1000:.0f}k ops/s), peak RSS {rss:.0f} MiB"
          + (f", file {size / 1e6:.1f} MB" if size else ""))


if __name__ == "__main__":
    asyncio.run(main())
