#!/usr/bin/env python3
"""A slow HTTP server for the latency-bound scenario: every response waits --delay seconds (default 50 ms).

    latency_server.py inputs OUT [--hosts 20] [--per-host 1000] [--port 8090]
        writes OUT/urls.txt, OUT/urls.md, OUT/list.html (served at http://127.0.0.1:PORT/list.html)
        and OUT/truth.json: --per-host URLs on each of 127.0.0.1 .. 127.0.0.HOSTS, a tenth of them 404
    latency_server.py serve OUT [--hosts 20] [--port 8090] [--delay 0.05]
        listens on 127.0.0.1..127.0.0.HOSTS:PORT until SIGTERM (loopback only)

Paths: /ok/N.html answers 200 with a small page, /missing/N.html 404, /list.html the page of every URL.
HEAD and GET both wait. The server is one process on uvloop; the runner records its CPU time, so a run
where it was the bottleneck shows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_urllist import write_inputs  # noqa: E402

# LinkChecker lifts its per-host throttle only for servers that send this header (nginx.conf.in adds it too)
HEADERS = {"LinkChecker": "bench"}
PAGE = b'<!DOCTYPE html><html><head><title>ok</title></head><body><p id="x">fine</p></body></html>\n'


def hosts(n: int) -> list[str]:
    return [f"127.0.0.{k}" for k in range(1, n + 1)]


def make_inputs(a: argparse.Namespace) -> None:
    urls: list[tuple[str, str | None]] = []
    for k in range(a.per_host):
        for h in hosts(a.hosts):  # interleaved: every host busy from the start
            if k % 10 == 9:
                urls.append((f"http://{h}:{a.port}/missing/{k}.html", "missing_page"))
            else:
                urls.append((f"http://{h}:{a.port}/ok/{k}.html", None))
    write_inputs(a.out, os.path.join(a.out, "list.html"), f"http://127.0.0.1:{a.port}/list.html", urls)


async def serve(a: argparse.Namespace) -> None:
    from aiohttp import web

    with open(os.path.join(a.out, "list.html"), "rb") as f:
        listing = f.read()

    async def handle(request: web.Request) -> web.Response:
        await asyncio.sleep(a.delay)
        path = request.path
        if path.startswith("/ok/"):
            return web.Response(body=PAGE, content_type="text/html", headers=HEADERS)
        if path == "/list.html":
            return web.Response(body=listing, content_type="text/html", headers=HEADERS)
        return web.Response(status=404, body=b"not found\n", content_type="text/html", headers=HEADERS)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    for h in hosts(a.hosts):
        await web.TCPSite(runner, h, a.port, backlog=4096).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"listening on 127.0.0.1..127.0.0.{a.hosts}:{a.port}, delay {a.delay}s", flush=True)
    await stop.wait()
    await runner.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("inputs", "serve"))
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--per-host", type=int, default=1000)
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--delay", type=float, default=0.05)
    a = ap.parse_args()
    if a.command == "inputs":
        make_inputs(a)
        return
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(a))


if __name__ == "__main__":
    main()
