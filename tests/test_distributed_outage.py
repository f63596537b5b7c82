"""A distributed crawl against a Redis that goes away: restarted mid-crawl (with its data) the job completes and
nothing is reported broken because of it; away past --redis-timeout every process stops with one line, and
the same command resumes the job. And the end of a job when workers keep running out of work and getting more."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from redis_server import RedisServer
from server import Site, html

_HANG_GUARD = 120  # seconds: only catches a process that never ends
_PAGES = 80


class _Procs:
    """linkhound processes of one test, killed at its end whatever happened."""

    def __init__(self) -> None:
        self.procs: list[asyncio.subprocess.Process] = []

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "linkhound", *args,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        self.procs.append(proc)
        return proc

    @staticmethod
    async def finish(proc: asyncio.subprocess.Process) -> tuple[int | None, str]:
        _, err = await asyncio.wait_for(proc.communicate(), _HANG_GUARD)
        return proc.returncode, err.decode()

    async def kill_all(self) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()


@contextlib.asynccontextmanager
async def _processes() -> AsyncIterator[_Procs]:
    procs = _Procs()
    try:
        yield procs
    finally:
        await procs.kill_all()


def _slow_pages(site: Site, delay: float) -> None:
    """/p/0 .. /p/79, each linking to three others: every page reachable from /p/0, none broken."""
    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        await asyncio.sleep(delay)
        return web.Response(text=html(*(f"/p/{(i * 3 + k) % _PAGES}" for k in range(1, 4))), content_type="text/html")

    site.prefixes["/p/"] = page


async def _until(site: Site, requests: int) -> None:
    async with asyncio.timeout(_HANG_GUARD):
        while len(site.requests) < requests:
            await asyncio.sleep(0.005)


async def test_a_redis_restarted_mid_crawl_loses_nothing_and_breaks_nothing(site: Site, tmp_path: Path) -> None:
    _slow_pages(site, 0.05)
    with RedisServer(tmp_path, persist=True) as redis:
        async with _processes() as procs:
            common = ["--redis", redis.url, "--job", "restart", "--lease", "5"]
            worker = await procs.start("worker", *common)
            out = tmp_path / "report.json"
            lead = await procs.start("-r", *common, "--no-config", "--no-robots", "--max-retries", "0",
                                     "--host-concurrency", "4", "--format", "json", "--output", str(out),
                                     site.url("/p/0"))
            await _until(site, 20)
            await asyncio.to_thread(redis.stop)
            await asyncio.sleep(1.0)  # away: both processes find it so (they look at the job every 50 ms)
            await asyncio.to_thread(redis.start)
            code, err = await procs.finish(lead)
            assert code == 0, err  # nothing broken
            code, werr = await procs.finish(worker)
            assert code == 0, werr
    report = json.loads(out.read_text())
    # it did go away while the crawl ran: said as it did, and a warning of the report, shown once by the command
    # with it (-o: on stderr)
    assert "is away" in err and "is back" in err, err
    (away,) = report["summary"]["warnings"]
    assert away.startswith(f"Redis at {redis.url} was away for ") and err.count(away) == 1, err
    assert f"linkhound worker: Redis at {redis.url} was away for " in werr, werr  # the worker's own report
    assert {p["url"] for p in report["pages"]} == {site.url(f"/p/{i}") for i in range(_PAGES)}
    assert {r["status"] for r in report["results"]} == {"ok"} and len(report["results"]) == _PAGES
    # a URL is asked again only if its lease ran out meanwhile (none should: the outage is shorter)
    assert all(n == 1 for n in site.counts().values()), site.counts()


async def test_a_redis_restarted_without_its_data_is_an_error_not_an_empty_report(site: Site,
                                                                                  tmp_path: Path) -> None:
    _slow_pages(site, 0.05)
    with RedisServer(tmp_path, persist=False) as redis:
        async with _processes() as procs:
            lead = await procs.start("-r", "--redis", redis.url, "--job", "lost", "--no-config", "--no-robots",
                                     "--host-concurrency", "2", "--format", "json", site.url("/p/0"))
            await _until(site, 10)
            await asyncio.to_thread(redis.stop)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(redis.start)  # empty: the job is gone
            code, err = await procs.finish(lead)
    assert code == 1, err
    assert err.splitlines()[-1] == ("linkhound: error: --job lost: the job is gone from Redis (restarted without its"
                                    " data?): its crawl was lost; the same command starts it afresh"), err


async def test_redis_away_past_the_timeout_stops_every_process_and_the_job_resumes(site: Site, tmp_path: Path) -> None:
    _slow_pages(site, 0.05)
    with RedisServer(tmp_path, persist=True) as redis:
        async with _processes() as procs:
            common = ["--redis", redis.url, "--job", "away", "--lease", "2"]
            run = ["-r", *common, "--no-config", "--no-robots", "--max-retries", "0", "--host-concurrency", "4",
                   "--format", "json", site.url("/p/0")]
            worker = await procs.start("worker", *common, "--redis-timeout", "1")
            lead = await procs.start(*run, "--redis-timeout", "1")
            await _until(site, 15)
            await asyncio.to_thread(redis.stop)
            for proc, prog in ((lead, "linkhound"), (worker, "linkhound worker")):
                code, err = await procs.finish(proc)
                assert code == 1, err
                last = err.splitlines()[-1]
                assert last.startswith(f"{prog}: error: Redis at {redis.url} was away for 1 s (--redis-timeout): ")
                assert last.endswith("the job is kept there: run the same command again to resume it"), err
            fetched = sum(site.counts().values())
            assert fetched < _PAGES  # stopped midway

            await asyncio.to_thread(redis.start)
            again = await procs.start(*run)  # the same command: the job goes on
            code, text = await _out(again)
            assert code == 0, text
    report = json.loads(text)
    assert {p["url"] for p in report["pages"]} == {site.url(f"/p/{i}") for i in range(_PAGES)}
    assert {r["status"] for r in report["results"]} == {"ok"}
    # asked again: only pages in flight when the processes stopped (4 at most: --host-concurrency counts all)
    assert sum(n - 1 for n in site.counts().values()) <= 4, site.counts()


async def _out(proc: asyncio.subprocess.Process) -> tuple[int | None, str]:
    out, err = await asyncio.wait_for(proc.communicate(), _HANG_GUARD)
    return proc.returncode, out.decode() if proc.returncode == 0 else err.decode()


async def test_workers_that_keep_running_out_of_work_end_neither_early_nor_never(
    site: Site, redis_url: str, tmp_path: Path
) -> None:
    """A chain of pages, each with a few leaves: most of the time one URL is queued or in flight in the whole job,
    so the workers keep finding nothing to do and then something again. The job ends after the last page."""
    chain, leaves = 60, 3

    async def page(request: web.Request) -> web.StreamResponse:  # /c/i links to /c/i/k and /c/i+1; /c/i/k to /c/0
        i, *leaf = request.path.split("/")[2:]
        if leaf:
            return web.Response(text=html("/c/0"), content_type="text/html")
        links = [f"/c/{i}/{k}" for k in range(leaves)] + ([f"/c/{int(i) + 1}"] if int(i) + 1 < chain else [])
        return web.Response(text=html(*links), content_type="text/html")

    site.prefixes["/c/"] = page
    async with _processes() as procs:
        workers = [await procs.start("worker", "--redis", redis_url, "--job", "race") for _ in range(3)]
        out = tmp_path / "report.json"
        lead = await procs.start("-r", "--redis", redis_url, "--job", "race", "--no-config", "--no-robots",
                                 "--max-path-variants", "1000", "--format", "json", "--output", str(out),
                                 site.url("/c/0"))
        code, err = await procs.finish(lead)
        assert code == 0, err
        for w in workers:
            code, err = await procs.finish(w)
            assert code == 0, err
    expected = {f"/c/{i}" for i in range(chain)} | {f"/c/{i}/{k}" for i in range(chain) for k in range(leaves)}
    report = json.loads(out.read_text())
    served = {path for _, path in site.counts()}
    got = {p["url"].removeprefix(site.base) for p in report["pages"]}
    assert got == expected, (sorted(expected - got), sorted(expected - served), report["summary"], err)
    assert {path for _, path in site.counts()} == expected and all(n == 1 for n in site.counts().values())
