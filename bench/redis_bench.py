#!/usr/bin/env python3
"""Measure the distributed mode on loopback: pages/s with 1, 2, 4 processes, Redis commands per crawled URL and
Redis memory per URL.

    python bench/redis_bench.py [--pages 3000] [--processes 1,2,4] [--links 20] [--latency MS] [--site URL]
                                [--flags "--host-concurrency 64 ..."]

Starts a private redis-server on a free loopback port (never 6379, no persistence) and a generated site in a
process of its own (aiohttp: /p/0 .. /p/N-1, each page links to --links others and the next, one page in 50 to
a missing one; --latency MS: every answer waits that long, the latency-bound case). For each process count P
it runs one job: the starting `linkhound -r --redis` process plus
P - 1 `linkhound worker` processes, and reads from Redis
  - INFO commandstats, reset before the job: every command Redis ran, those inside the Lua scripts included
    (EVALSHA is one round trip each), divided by the URLs in the report;
  - INFO memory used_memory before the job and after it (before it is dropped), divided by those URLs.
--site URL crawls a site served elsewhere instead (e.g. the crawl-10k site of run.sh: --site
http://127.0.0.1:8081/ after bench/setup.sh). Prints a Markdown table. Wall time includes process start-up
(~0.5 s) and the report. On a loaded machine the pages/s say little: label them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def serve(port: int, pages: int, links: int, latency_ms: int) -> None:
    """The generated site (run in its own process: `redis_bench.py serve PORT PAGES LINKS LATENCY_MS`)."""
    import asyncio

    from aiohttp import web

    async def page(request: web.Request) -> web.StreamResponse:
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)
        i = int(request.match_info["i"])
        rng = random.Random(i)
        targets = [f"/p/{rng.randrange(pages)}" for _ in range(links)] + [f"/p/{(i + 1) % pages}"]
        if i % 50 == 0:
            targets.append(f"/missing/{i}")
        body = "".join(f'<a href="{t}">{t}</a>\n' for t in targets)
        return web.Response(text=f"<!doctype html><title>p{i}</title><body>{body}</body>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{i}", page)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 6379:
            return port


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


def _info(cli: list[str], section: str) -> dict[str, str]:
    out = subprocess.run([*cli, "info", section], capture_output=True, text=True, check=True).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line and not line.startswith("#"))


def _commands(cli: list[str]) -> dict[str, int]:
    stats = _info(cli, "commandstats")
    return {k.removeprefix("cmdstat_"): int(v.split(",")[0].split("=")[1]) for k, v in stats.items()}


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--links", type=int, default=20)
    ap.add_argument("--processes", default="1,2,4")
    ap.add_argument("--latency", type=int, default=0, metavar="MS", help="each generated page waits MS ms")
    ap.add_argument("--site", metavar="URL", help="crawl this site instead of serving a generated one")
    ap.add_argument("--flags", default="", help="more flags for the job (workers take its settings), e.g. "
                    "--host-concurrency 64")
    ns = ap.parse_args()
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        raise SystemExit("redis-server is not on PATH")
    work = Path(tempfile.mkdtemp(prefix="linkhound-redis-bench-"))
    rport, sport = _free_port(), _free_port()
    procs = [subprocess.Popen([redis_server, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(work)], stdout=subprocess.DEVNULL)]
    if ns.site is None:
        procs.append(subprocess.Popen([sys.executable, __file__, "serve", str(sport), str(ns.pages), str(ns.links),
                                      str(ns.latency)]))
    seed = ns.site or f"http://127.0.0.1:{sport}/p/0"
    try:
        _wait_port(rport)
        if ns.site is None:
            _wait_port(sport)
        url = f"redis://127.0.0.1:{rport}/0"
        cli = ["redis-cli", "-p", str(rport)]
        linkhound = [sys.executable, "-m", "linkhound"]
        rows = []
        for n in (int(x) for x in ns.processes.split(",")):
            job = f"bench-{n}"
            subprocess.run([*cli, "config", "resetstat"], check=True, capture_output=True)
            before = int(_info(cli, "memory")["used_memory"])
            started = time.monotonic()
            workers = [subprocess.Popen([*linkhound, "worker", "--redis", url, "--job", job],
                                        stderr=subprocess.DEVNULL) for _ in range(n - 1)]
            out = work / f"{job}.json"
            subprocess.run([*linkhound, "-r", "--redis", url, "--job", job, "--no-config", "--no-robots",
                            "--max-path-variants", str(ns.pages * 2), "--format", "json", "--output", str(out),
                            *ns.flags.split(), seed], check=False, stderr=subprocess.DEVNULL)
            for w in workers:
                w.wait(600)
            wall = time.monotonic() - started
            used = int(_info(cli, "memory")["used_memory"]) - before
            calls = _commands(cli)
            for c in ("config|resetstat", "info", "config"):
                calls.pop(c, None)
            report = json.loads(out.read_text())
            urls, pages = len(report["results"]), report["summary"]["pages"]
            total = sum(calls.values())
            top = ", ".join(f"{k} {v / urls:.2f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])[:6])
            statuses = " ".join(f"{k} {v}" for k, v in sorted(report["summary"]["by_status"].items()) if v)
            rows.append(f"| {n} | {pages} | {urls} | {statuses} | {wall:.1f} | {pages / wall:.0f} | "
                        f"{total / urls:.1f} | "
                        f"{calls.get('evalsha', 0) / urls:.2f} | {used / urls:.0f} | "
                        f"{used / urls * 100_000 / 2**20:.0f} | {top} |")
            subprocess.run([*linkhound, "jobs", "--redis", url, "--job", job, "--drop"], check=True,
                           capture_output=True)
        site = ns.site or f"generated, {ns.pages} pages, {ns.links} links a page, {ns.latency} ms a page"
        site += f"; flags: {ns.flags or '(none)'}"
        print(f"site: {site}; redis-server {rport}; cores: {os.cpu_count()}")
        print("| processes | pages | URLs | results by status | wall s | pages/s | Redis commands / URL | "
              "EVALSHA / URL | Redis bytes / URL | MiB / 100k URLs (extrapolated) | top commands / URL |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
