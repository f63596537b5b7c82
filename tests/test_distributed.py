"""One crawl, several processes, one Redis: `linkhound --redis URL --job NAME` and `linkhound worker` processes
against a generated loopback site give the report one process gives, with each URL requested once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sys
from pathlib import Path

from aiohttp import web

import linkhound
from server import Handler, Site, SiteFactory, html
from test_crawl import build_site, referrers

_HANG_GUARD = 120  # seconds: only catches a crawl that never ends


async def _worker(redis_url: str, job: str, *more: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "worker", "--redis", redis_url, "--job", job, *more,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    line = await asyncio.wait_for(proc.stderr.readline(), _HANG_GUARD)
    assert line.decode().strip() == f"linkhound worker: waiting for job {job}"  # up before the job starts
    return proc


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int | None, str]:
    _, err = await asyncio.wait_for(proc.communicate(), _HANG_GUARD)
    return proc.returncode, err.decode()


def _broken(results: list[dict[str, object]]) -> dict[str, set[str]]:
    return {str(r["url"]): {str(ref["source"]) for ref in r["references"]}  # type: ignore[attr-defined]
            for r in results if r["status"] == "broken"}


async def test_workers_share_one_crawl_and_its_report_matches_one_process(
    site: Site, make_site: SiteFactory, redis_url: str, tmp_path: Path
) -> None:
    other = await make_site("127.0.0.2")
    expected = build_site(site, other, 300, random.Random(1), delay=0.01)
    workers = [await _worker(redis_url, "site") for _ in range(2)]
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "site", "--max-retries", "0",
        "--no-config", "--format", "json", "--output", str(out), site.url("/"), stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 2, err  # broken links found
    ended = [await _finish(w) for w in workers]
    for code, err in ended:
        assert code == 0, err
        fetched = int(err.rsplit(": ", 1)[1].split()[0])  # "... is over: N URLs fetched here"
        assert fetched > 0, err  # each worker took part
    seen = {k: n for k, n in site.counts().items() if k[1] != "/robots.txt"}
    assert all(n == 1 for n in seen.values()), [k for k, n in seen.items() if n > 1]
    assert site.hits("/robots.txt") <= 3  # read once by each process
    report = json.loads(out.read_text())
    assert _broken(report["results"]) == expected

    site.requests.clear()
    single = await linkhound.check([site.url("/")], recursive=True, max_retries=0)
    one = {r.url: referrers(r) for r in single.results if r.status.is_broken}
    assert one == expected
    # the same report, but for timings: every result with its depth and referrers, every page
    assert {r["url"]: (r["status"], r["code"], r["depth"], sorted(ref["source"] for ref in r["references"]))
            for r in report["results"]} == {
        r.url: (r.status.value, r.code, r.depth, sorted(ref.source for ref in r.references)) for r in single.results}
    assert sorted((p["url"], p["depth"], p["links"], p["followed"]) for p in report["pages"]) == sorted(
        (p.url, p.depth, p.links, p.followed) for p in single.pages)
    assert report["summary"]["by_status"] == {s.value: single.summary.count(s) for s in linkhound.Status}


async def test_redirects_to_pages_another_worker_found_report_as_one_process(
    site: Site, redis_url: str, tmp_path: Path
) -> None:
    """Moved pages (301 to a page that other pages link to directly): a worker that follows such a redirect often
    never saw the link to it, nor the page it reaches; the report still gives each its end's result."""
    n = 200
    rng = random.Random(7)

    def links_of(i: int) -> list[str]:
        return [f"/p/{(i * 5 + k) % n}" for k in range(1, 4)] + [f"/moved/{rng.randrange(n)}" for _ in range(3)]

    for i in range(n):
        site.handler(f"/p/{i}", _slow_page(html(*links_of(i), *(["/missing/x"] if i % 50 == 0 else [])), rng))
        site.redirect(f"/moved/{i}", f"/p/{i}" if i % 40 else f"/gone/{i}")  # some land on a 404
    workers = [await _worker(redis_url, "moved") for _ in range(2)]
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "moved", "--no-config",
        "--no-robots", "--max-retries", "0", "--format", "json", "--output", str(out), site.url("/p/0"),
        stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 2, err
    for w in workers:
        assert (await _finish(w))[0] == 0
    assert max(site.counts().values()) == 1  # each URL asked once, across the processes
    report = json.loads(out.read_text())

    site.requests.clear()
    single = await linkhound.check([site.url("/p/0")], recursive=True, max_retries=0, robots=False)
    assert not [r for r in single.results if r.status is linkhound.Status.ERROR]
    assert any(r.redirects for r in single.results)
    assert {r["url"]: (r["status"], r["code"], r["reason"], sorted(ref["source"] for ref in r["references"]))
            for r in report["results"]} == {
        r.url: (r.status.value, r.code, r.reason, sorted(ref.source for ref in r.references))
        for r in single.results}


def _slow_page(body: str, rng: random.Random) -> Handler:
    seconds = rng.uniform(0, 0.02)

    async def h(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.Response(text=body, content_type="text/html")

    return h


def _ports_of(pid: int) -> set[int]:
    """The local ports of a process's TCP connections (Linux: its socket inodes in /proc/net/tcp)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            ports.add(int(fields[1].split(":")[1], 16))
    return ports


async def test_a_worker_killed_mid_crawl_loses_nothing(site: Site, redis_url: str, tmp_path: Path) -> None:
    in_flight: dict[int, str] = {}  # client port -> path being answered

    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        port = request.transport.get_extra_info("peername")[1]  # type: ignore[union-attr]
        in_flight[port] = request.path
        try:
            await asyncio.sleep(0.1)
        finally:
            del in_flight[port]
        links = [f"/p/{(i * 3 + k) % 120}" for k in range(1, 4)] + [f"/missing/{i % 4}"]
        return web.Response(text=html(*links), content_type="text/html")

    site.prefixes["/p/"] = page
    lease = ["--lease", "1"]
    doomed, survivor = [await _worker(redis_url, "kill", *lease) for _ in range(2)]
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "kill", *lease, "--no-config",
        "--no-robots", "--max-retries", "0", "--host-concurrency", "12", "--format", "json", "--output", str(out),
        site.url("/p/0"), stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(_HANG_GUARD):  # until the doomed worker is waiting for a page
        while not (lost := {path for port, path in in_flight.items() if port in _ports_of(doomed.pid)}):
            await asyncio.sleep(0.005)
    doomed.kill()
    code, err = await _finish(lead)
    assert code == 2, err
    assert (await _finish(survivor))[0] == 0 and (await _finish(doomed))[0] == -signal.SIGKILL
    seen = site.counts()
    assert max(seen.values()) <= 2 and all(seen[("GET", path)] == 2 for path in lost)  # asked again, once
    report = json.loads(out.read_text())
    assert {r["url"].removeprefix(site.base) for r in report["results"] if r["status"] == "broken"} == {
        f"/missing/{i}" for i in range(4)}
    assert {p["url"] for p in report["pages"]} == {site.url(f"/p/{i}") for i in range(120)}


async def test_an_unreachable_redis_is_a_one_line_error(tmp_path: Path) -> None:
    for prog, args in (("linkhound", ["--redis", "redis://127.0.0.1:1/0", "--job", "j", "http://127.0.0.1:9/"]),
                       ("linkhound worker", ["worker", "--redis", "redis://127.0.0.1:1/0", "--job", "j"])):
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "linkhound", *args, cwd=tmp_path,
                                                    stderr=asyncio.subprocess.PIPE)
        code, err = await _finish(proc)
        assert code == 1 and err.startswith(f"{prog}: error: Redis at redis://127.0.0.1:1/0: ")
        assert err.count("\n") == 1


async def test_workers_keep_one_politeness_budget_per_host(site: Site, redis_url: str, tmp_path: Path) -> None:
    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        await asyncio.sleep(0.05)
        return web.Response(text=html(*(f"/p/{(i * 7 + k) % 60}" for k in range(1, 6))), content_type="text/html")

    site.prefixes["/p/"] = page
    rate, burst, concurrency = 25.0, 2, 2
    workers = [await _worker(redis_url, "polite") for _ in range(2)]
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "polite", "--no-config", "--no-robots",
        "--host-rate", str(rate), "--host-burst", str(burst), "--host-concurrency", str(concurrency),
        "--output", str(tmp_path / "report.txt"), site.url("/p/0"), stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 0, err
    assert [(await _finish(w))[0] for w in workers] == [0, 0]
    assert len(site.requests) == 60 and all(n == 1 for n in site.counts().values())
    assert site.peak <= concurrency  # three processes, one cap
    times = [r.at for r in site.requests]
    for i in range(len(times)):  # and one token bucket, give or take one token
        for j in range(i + 1, len(times)):
            assert j - i + 1 <= burst + rate * (times[j] - times[i]) + 1, (i, j, times[j] - times[i])


async def test_robots_txt_read_by_each_process_takes_a_slot_of_the_shared_cap(
    site: Site, redis_url: str, tmp_path: Path
) -> None:
    """Each process reads the host's robots.txt once, before its first page of it: that request counts against the
    host's one concurrency cap like the others (a slow robots.txt, read while the other processes' pages of
    the host are in flight, made three requests at once under a cap of two)."""
    async def robots(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.3)
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        await asyncio.sleep(0.05)
        return web.Response(text=html(*(f"/p/{(i * 7 + k) % 60}" for k in range(1, 6))), content_type="text/html")

    site.handler("/robots.txt", robots)
    site.prefixes["/p/"] = page
    concurrency = 2
    workers = [await _worker(redis_url, "robots") for _ in range(2)]
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "robots", "--no-config",
        "--host-concurrency", str(concurrency), "--output", str(tmp_path / "report.txt"), site.url("/p/0"),
        stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 0, err
    assert [(await _finish(w))[0] for w in workers] == [0, 0]
    assert 1 <= site.hits("/robots.txt") <= 3 and site.hits("/p/59") == 1
    assert site.peak <= concurrency  # three processes, robots.txt and pages, one cap


async def test_ctrl_c_on_the_first_process_stops_the_whole_job(site: Site, redis_url: str, tmp_path: Path) -> None:
    async def page(request: web.Request) -> web.StreamResponse:
        i = int(request.path.rsplit("/", 1)[1])
        await asyncio.sleep(0.1)
        return web.Response(text=html(*(f"/p/{i * 4 + k}" for k in range(1, 5))), content_type="text/html")

    site.prefixes["/p/"] = page  # endless
    worker = await _worker(redis_url, "stop")
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "stop", "--no-config", "--no-robots",
        "--format", "json", "--output", str(out), site.url("/p/0"), stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(_HANG_GUARD):
        while len(site.requests) < 30:
            await asyncio.sleep(0.01)
    lead.send_signal(signal.SIGINT)
    code, err = await _finish(lead)
    assert code == 130, err
    code, err = await _finish(worker)
    assert code == 130 and "job stop is stopped" in err, err
    report = json.loads(out.read_text())
    assert report["summary"]["interrupted"] and len(report["results"]) >= 20


async def test_local_inputs_of_the_first_process_are_in_the_report(site: Site, redis_url: str, tmp_path: Path) -> None:
    site.page("/ok", "<p>fine</p>")
    (tmp_path / "a.md").write_text(f"[ok]({site.url('/ok')}) [gone]({site.url('/gone')}) [local](b.md) [no](c.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--redis", redis_url, "--job", "files", "--no-config", "--format", "json",
        "--output", str(out), "a.md", cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 2, err
    report = json.loads(out.read_text())
    single = await linkhound.check([str(tmp_path / "a.md")])
    assert sorted((r["url"].rsplit("/", 1)[1], r["status"]) for r in report["results"]) == sorted(
        (r.url.rsplit("/", 1)[1], r.status.value) for r in single.results)
    assert report["summary"]["pages"] == single.summary.pages == 1


def test_the_settings_a_job_shares_leave_secrets_out() -> None:
    from linkhound.redis_job import shared_options

    settings = linkhound.make_settings(
        recursive=True, max_depth=3, accept="200..=299,403", exclude=["^https://x"], header=["Authorization: t"],
        basic_auth=["example user:pw"], hosts={"x.org": {"rate": 1.0, "headers": {"Authorization": "Bearer t"}}},
    )
    shared = json.loads(json.dumps(shared_options(settings)))  # what a worker reads back
    assert "header" not in shared and "basic_auth" not in shared and "Bearer" not in json.dumps(shared)
    again = linkhound.make_settings(**shared)
    assert (again.max_depth, again.accept, again.exclude) == (3, settings.accept, ("^https://x",))
    assert again.host_settings["x.org"].rate == 1.0 and again.header == ()


async def test_crawl_delay_spaces_the_first_page_from_the_robots_txt_request(
    site: Site, redis_url: str, tmp_path: Path
) -> None:
    """As in one process (test_politeness): robots.txt took a token of the host's bucket, which is in Redis
    here, so Crawl-delay empties that one, and the first page comes a delay after robots.txt, not right behind."""
    site.page("/robots.txt", "User-agent: *\nCrawl-delay: 1\n", content_type="text/plain")
    site.page("/", "ok")
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "delay", "--no-config",
        "--host-concurrency", "4", "--output", str(tmp_path / "report.txt"), site.url("/"),
        stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 0, err
    assert [r.path for r in site.requests] == ["/robots.txt", "/"]
    robots, first = (r.at for r in site.requests)
    assert first - robots >= 0.9, first - robots
