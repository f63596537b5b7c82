"""Jobs in Redis from outside: `linkhound report` of a running and of a finished job, `linkhound jobs` (and
--drop), a job joined by the same command and refused with other settings, a worker that comes too late."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from redis_server import RedisCluster
from server import Site, SiteFactory, html
from test_crawl import build_site

_HANG_GUARD = 120  # seconds: only catches a process that never ends


async def _linkhound(*args: str, cwd: Path | None = None) -> tuple[int | None, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", *args, cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), _HANG_GUARD)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode, out.decode(), err.decode()


def _rows(listing: str) -> dict[str, dict[str, str]]:
    """`linkhound jobs` output, as {job: {column: value}}."""
    lines = listing.splitlines()
    head = lines[0].replace("in flight", "in_flight").split()
    return {r[0]: dict(zip(head, r, strict=True)) for r in (line.split() for line in lines[1:])}


def _results(report: dict[str, list[dict[str, object]]]) -> dict[str, tuple[object, ...]]:
    return {str(r["url"]): (r["status"], r["code"], r["depth"], sorted(ref["source"] for ref in r["references"]))  # type: ignore[attr-defined]
            for r in report["results"]}


async def test_report_and_jobs_while_a_job_runs_and_after(site: Site, redis_url: str, tmp_path: Path) -> None:
    release = asyncio.Event()

    async def held(request: web.Request) -> web.StreamResponse:
        await release.wait()  # the job stays running until the test lets this page answer
        return web.Response(text=html("/after-hold"), content_type="text/html")

    site.page("/", html("/a", "/b", "/held", "/gone"))
    site.page("/a", html("/b"))
    site.page("/b", html("/a"))
    site.page("/after-hold", html("/"))
    site.handler("/held", held)
    out = tmp_path / "lead.json"
    lead = asyncio.ensure_future(_linkhound(
        "-r", "--redis", redis_url, "--job", "docs", "--no-config", "--no-robots", "--max-retries", "0",
        "--format", "json", "--output", str(out), site.url("/")))
    try:
        async with asyncio.timeout(_HANG_GUARD):
            while not (site.hits("/held") and site.hits("/a") and site.hits("/b") and site.hits("/gone")):
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # the other pages' results reach Redis (each with its page's done)

        code, listing, err = await _linkhound("jobs", "--redis", redis_url)
        assert code == 0, err
        row = _rows(listing)["docs"]
        assert row["state"] == "running" and row["in_flight"] == "1" and row["urls"] == "5", listing

        code, _, err = await _linkhound("jobs", "--redis", redis_url, "--job", "docs", "--drop")
        assert code == 1 and err.startswith(
            "linkhound jobs: error: --job docs: the job is being worked on (1 URLs in flight, 1 processes reading"), err

        code, text, err = await _linkhound("report", "--redis", redis_url, "--job", "docs", "--format", "json")
        assert code == 2, err  # /gone is broken already
        assert err == "linkhound: job docs is running: the report covers the 4 of 5 URLs done so far\n"
        partial = json.loads(text)
        assert sorted(r["url"].removeprefix(site.base) for r in partial["results"]) == ["/", "/a", "/b", "/gone"]
    except BaseException:
        lead.cancel()  # its process is killed (_linkhound's finally)
        raise
    finally:
        release.set()
    code, _, err = await lead
    assert code == 2, err

    code, listing, err = await _linkhound("jobs", "--redis", redis_url)
    assert code == 0, err
    row = _rows(listing)["docs"]
    assert (row["state"], row["urls"], row["done"], row["queued"], row["in_flight"]) == ("finished", "6", "6", "0", "0")

    code, text, err = await _linkhound("report", "--redis", redis_url, "--job", "docs", "--format", "json")
    assert code == 2 and err == "", err
    report, lead_report = json.loads(text), json.loads(out.read_text())
    assert _results(report) == _results(lead_report)
    assert sorted(map(str, report["pages"])) == sorted(map(str, lead_report["pages"]))
    assert report["summary"]["by_status"] == lead_report["summary"]["by_status"]

    code, text, err = await _linkhound("report", "--redis", redis_url, "--job", "docs")  # the default format
    assert code == 2 and "/gone" in text and err == ""

    code, _, err = await _linkhound("jobs", "--redis", redis_url, "--job", "docs", "--drop")
    assert code == 0 and err.startswith("linkhound: job docs dropped ("), err
    code, listing, err = await _linkhound("jobs", "--redis", redis_url)
    assert code == 0 and _rows(listing) == {}, listing
    for args in (["report", "--job", "docs"], ["jobs", "--job", "docs", "--drop"]):
        code, _, err = await _linkhound(*args, "--redis", redis_url)
        assert code == 1 and err == f"linkhound {args[0]}: error: --job docs: no such job in Redis at {redis_url}\n"


async def test_a_job_is_joined_by_the_same_command_and_refused_with_other_settings(site: Site, redis_url: str) -> None:
    site.page("/", html("/next"))
    site.page("/next", "<p>no links</p>")
    args = ["-r", "--redis", redis_url, "--job", "once", "--no-config", "--format", "json", site.url("/")]
    code, first, err = await _linkhound(*args)
    assert code == 0, err
    code, again, err = await _linkhound(*args)  # joins the finished job: nothing more to do, the same report
    assert code == 0, err
    assert _results(json.loads(again)) == _results(json.loads(first))
    assert json.loads(again)["summary"]["total"] == json.loads(first)["summary"]["total"] == 2
    assert site.hits("/") == 1 and site.hits("/next") == 1

    for other in (["--max-depth", "3"], ["--no-robots"]):
        code, _, err = await _linkhound(*args[:-1], *other, site.url("/"))
        assert code == 1
        assert err.startswith("linkhound: error: --job once: a job of that name is in Redis with other settings"), err
        assert err.count("\n") == 1
    code, _, err = await _linkhound(*args[:-1], site.url("/next"))  # other inputs, other scope
    assert code == 1 and "other settings or inputs" in err
    # how the report is shown is not the job's: another format, file or verbosity joins it
    code, text, err = await _linkhound("-r", "--redis", redis_url, "--job", "once", "--no-config", "--format",
                                       "markdown", "-v", "-q", "--all-referrers", site.url("/"))
    assert code == 0 and err == "" and "/next" in text and not text.startswith("{"), err
    assert site.hits("/") == 1 and site.hits("/next") == 1


async def test_a_worker_that_joins_a_finished_job_says_so(site: Site, redis_url: str) -> None:
    site.page("/", "<p>no links</p>")
    code, _, err = await _linkhound("--redis", redis_url, "--job", "done", "--no-config", site.url("/"))
    assert code == 0, err
    code, _, err = await _linkhound("worker", "--redis", redis_url, "--job", "done")
    assert code == 0 and err == "linkhound worker: job done is finished: nothing to do\n"
    assert site.hits("/") == 1


async def test_jobs_and_report_usage_errors_are_one_line(redis_url: str) -> None:
    for args, says in (
        (["jobs", "--redis", redis_url, "--drop"], "--drop needs --job NAME"),
        (["report", "--redis", redis_url], "the following arguments are required: --job"),
        (["report", "--redis", redis_url, "--job", "x", "--format", "nope"], "argument -f/--format: invalid choice"),
        (["jobs", "--redis", redis_url, "--redis-timeout", "0"], "expected a positive number of seconds"),
        (["jobs", "--redis", "redis://127.0.0.1:1/0"], "Redis at redis://127.0.0.1:1/0: "),
        (["report", "--redis", redis_url, "--job", "{x}"], "job name '{x}': expected a non-empty name without braces"),
        (["jobs", "--redis", redis_url.replace("redis://", "redis+cluster://")], "Cluster mode is not enabled"),
    ):
        code, _, err = await _linkhound(*args)
        assert code == 1 and err.startswith(f"linkhound {args[0]}: error: "), err
        assert says in err and err.count("\n") == 1, err


async def test_a_job_on_a_three_master_redis_cluster(site: Site, make_site: SiteFactory, tmp_path: Path) -> None:
    other = await make_site("127.0.0.2")
    expected = build_site(site, other, 60, random.Random(3))
    with RedisCluster(tmp_path) as cluster:
        url = cluster.url
        workers = [asyncio.ensure_future(_linkhound("worker", "--redis", url, "--job", "on-cluster")) for _ in range(2)]
        try:
            code, text, err = await _linkhound("-r", "--redis", url, "--job", "on-cluster", "--no-config",
                                               "--max-retries", "0", "--format", "json", site.url("/"))
            assert code == 2, err
            for worker in workers:
                code, _, err = await worker
                assert code == 0, err
        finally:
            for worker in workers:
                worker.cancel()
        report = json.loads(text)
        assert {str(r["url"]): {str(ref["source"]) for ref in r["references"]}
                for r in report["results"] if r["status"] == "broken"} == expected
        seen = {k: n for k, n in site.counts().items() if k[1] != "/robots.txt"}
        assert all(n == 1 for n in seen.values())

        code, listing, err = await _linkhound("jobs", "--redis", url)
        assert code == 0 and _rows(listing)["on-cluster"]["state"] == "finished", (listing, err)
        code, again, err = await _linkhound("report", "--redis", url, "--job", "on-cluster", "--format", "json")
        assert code == 2 and _results(json.loads(again)) == _results(report), err
        # one slot: every key of the job is on one node
        holding = [n.port for n in cluster.nodes if _keys(n.port, "lh:{on-cluster}:*")]
        assert len(holding) == 1
        elsewhere = next(n.port for n in cluster.nodes if n.port != holding[0])
        code, _, err = await _linkhound("report", "--redis", f"redis://127.0.0.1:{elsewhere}/0", "--job", "on-cluster")
        assert code == 1 and err.count("\n") == 1, err
        assert err.endswith("that is a Redis Cluster node: give a redis+cluster:// URL\n"), err
        code, _, err = await _linkhound("jobs", "--redis", url, "--job", "on-cluster", "--drop")
        assert code == 0, err
        assert not _keys(holding[0], "lh:{on-cluster}:*")


def _keys(port: int, pattern: str) -> list[str]:
    cli = shutil.which("redis-cli")
    assert cli is not None
    found = subprocess.run([cli, "-p", str(port), "--scan", "--pattern", pattern], capture_output=True, text=True,
                           check=True, timeout=30)
    return found.stdout.split()


async def test_a_job_stopped_with_ctrl_c_is_resumed_by_the_same_command(site: Site, redis_url: str) -> None:
    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        await asyncio.sleep(0.05)
        return web.Response(text=html(*(f"/p/{(i * 2 + k) % 50}" for k in range(1, 3))), content_type="text/html")

    site.prefixes["/p/"] = page
    args = ["-r", "--redis", redis_url, "--job", "resume", "--no-config", "--no-robots", "--host-concurrency", "2",
            "--format", "json", site.url("/p/0")]
    lead = await asyncio.create_subprocess_exec(sys.executable, "-m", "linkhound", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(_HANG_GUARD):
            while len(site.requests) < 10:
                await asyncio.sleep(0.005)
        lead.send_signal(signal.SIGINT)
        out, _ = await asyncio.wait_for(lead.communicate(), _HANG_GUARD)
    finally:
        if lead.returncode is None:
            lead.kill()
            await lead.wait()
    assert lead.returncode == 130
    stopped = json.loads(out)
    assert stopped["summary"]["interrupted"] and len(stopped["pages"]) < 50
    code, listing, _ = await _linkhound("jobs", "--redis", redis_url)
    assert _rows(listing)["resume"]["state"] == "stopped"

    worker = asyncio.ensure_future(_linkhound("worker", "--redis", redis_url, "--job", "resume"))
    try:
        code, text, err = await _linkhound(*args)
        assert code == 0, err
        code, _, err = await worker
        assert code == 0, err  # the stop was lifted by the resume: the worker took part to the end
    finally:
        worker.cancel()
    report = json.loads(text)
    assert {p["url"] for p in report["pages"]} == {site.url(f"/p/{i}") for i in range(50)}
    assert not report["summary"]["interrupted"]
    assert all(n == 1 for n in site.counts().values())  # what the first run did was kept
