"""A slow HTTP server for the latency-bound scenario: every response waits --delay seconds (default 50 ms).

    latency_server.py inputs OUT [--hosts 20] [--per-host 1000] [--port 8090]
        writes OUT/urls.txt, OUT/urls.md, OUT/list.html (served at http://127.0.0.1:PORT/list.html)
        and OUT/truth.json: --per-host URLs on each of 127.0.0.1 .. 127.0.0.HOSTS, a tenth of them 404
    latency_server.py serve OUT [--hosts 20] [--port 8090] [--delay 0.05]
        listens on 127.0.0.1..127.0.0.HOSTS:PORT until SIGTERM (loopback only)

Paths: /ok/N.html answers 200 with a small page, /missing/N.html 404, /list.html the page of every URL.
HEAD and GET both wait. GET /_stats answers at once, with what the server saw since the last /_stats (JSON:
requests, the span from the first request's arrival to the last answer, how late the answers were past the
delay on average, and the first arrival's and last answer's time.monotonic()), and starts counting anew: the
runner asks before and after each run, so a run's wall splits into the tool's start (launch to first request),
the request phase (the span) and its ending (last answer to exit).

The server speaks just enough HTTP/1.1 itself (keep-alive, pipelining in order, Connection: close) on an
asyncio protocol with uvloop, one process. A web framework here cost about 110 us of CPU per request and added
about 3 ms to every response at 2,500 requests/s, on the same two cores as the tool being measured: the bound
is 50 ms per response, so the server should add as little to it as it can. The runner records its CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections import deque
from typing import cast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_urllist import write_inputs  # noqa: E402

PAGE = b'<!DOCTYPE html><html><head><title>ok</title></head><body><p id="x">fine</p></body></html>\n'
MISSING = b"not found\n"


class Stats:
    """What the server saw since the last /_stats: requests answered, first arrival, last answer, lateness."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests, self.first, self.last = 0, 0.0, 0.0
        self.late = 0.0  # seconds past the delay, summed over the answers

    def arrived(self, now: float) -> None:
        if not self.first:
            self.first = now

    def answered(self, arrived: float, now: float, delay: float) -> None:
        self.requests += 1
        self.last = now
        self.late += now - arrived - delay

    def taken(self) -> bytes:
        """The JSON of what was seen, and a fresh start."""
        span = self.last - self.first if self.requests else 0.0
        late = self.late / self.requests * 1000 if self.requests else 0.0
        text = json.dumps({"requests": self.requests, "span_s": round(span, 4), "late_ms": round(late, 3),
                           "first": self.first, "last": self.last})  # (time.monotonic(): one clock for all)
        self.reset()
        return text.encode()


STATS = Stats()


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


def head(status: bytes, length: int, close: bool, kind: bytes = b"text/html") -> bytes:
    # LinkChecker lifts its per-host throttle only for servers that send this header (nginx.conf.in adds it too)
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: " + kind + b"\r\nContent-Length: " + str(length).encode()
        + b"\r\nLinkChecker: bench\r\n" + (b"Connection: close\r\n" if close else b"") + b"\r\n"
    )


class SlowHttp(asyncio.Protocol):
    """One connection: each request is answered `delay` seconds after it arrived, in arrival order."""

    def __init__(self, delay: float, listing: bytes) -> None:
        self.delay = delay
        self.listing = listing
        self.buffer = b""
        self.pending: deque[list[bytes | None]] = deque()  # answers not yet written, oldest first
        self.transport: asyncio.Transport | None = None
        self.closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, without being a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        loop = asyncio.get_running_loop()
        while not self.closing and (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            request, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            lines = request.split(b"\r\n")
            parts = lines[0].split(b" ")
            if len(parts) != 3:
                self.closing = True
                slot: list[bytes | None] = [head(b"400 Bad Request", 0, True)]
                self.pending.append(slot)
                self.flush()
                return
            method, target, version = parts
            close = version == b"HTTP/1.0" or any(
                line.lower().replace(b" ", b"") == b"connection:close" for line in lines[1:]
            )
            self.closing = close
            if target == b"/_stats":
                stats = STATS.taken()
                self.pending.append([head(b"200 OK", len(stats), close, b"application/json") + stats])
                self.flush()
                continue
            now = time.monotonic()
            STATS.arrived(now)
            slot = [None]
            self.pending.append(slot)
            loop.call_later(self.delay, self.answer, slot, method == b"HEAD", target, close, now)

    def answer(self, slot: list[bytes | None], is_head: bool, target: bytes, close: bool, arrived: float) -> None:
        STATS.answered(arrived, time.monotonic(), self.delay)
        path = target.split(b"?", 1)[0]
        if path.startswith(b"/ok/"):
            status, body = b"200 OK", PAGE
        elif path == b"/list.html":
            status, body = b"200 OK", self.listing
        else:
            status, body = b"404 Not Found", MISSING
        slot[0] = head(status, len(body), close) + (b"" if is_head else body)
        self.flush()

    def flush(self) -> None:
        while self.pending and self.pending[0][0] is not None:
            data = self.pending.popleft()[0]
            if self.transport is None:
                continue
            self.transport.write(data)
            if self.closing and not self.pending:
                self.transport.close()


async def serve(a: argparse.Namespace) -> None:
    with open(os.path.join(a.out, "list.html"), "rb") as f:
        listing = f.read()
    loop = asyncio.get_running_loop()
    servers = [
        await loop.create_server(lambda: SlowHttp(a.delay, listing), h, a.port, backlog=4096) for h in hosts(a.hosts)
    ]
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"listening on 127.0.0.1..127.0.0.{a.hosts}:{a.port}, delay {a.delay}s", flush=True)
    await stop.wait()
    for server in servers:
        server.close()


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
