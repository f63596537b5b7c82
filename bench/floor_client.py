"""The machine's floor for latency-20h: a bare HTTP/1.1 client that does nothing but keep --concurrency
requests in flight over keep-alive connections, one URL after another from a list, and writes what it saw.

    floor_client.py URLS.txt --output OUT.json [--concurrency 128]

No checker's work at all (no parsing of the URLs beyond host and path, no redirects, no retries, no report
beyond status per URL), on asyncio with uvloop, like the latency server. Its wall, split by the server's clock
as the tools' are, is what this machine and that server cost a request slot before any tool's own work: the
gap between a tool and this floor is the tool's; the gap between this floor and the ideal (requests x delay /
concurrency) is the machine's. It speaks only what latency_server.py answers (Content-Length, keep-alive).

OUT.json is shaped like linkhound's JSON report (results with url and status, summary.unique and .total), so
score.py reads it with linkhound's parser.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterator


class Answer(asyncio.Protocol):
    """One keep-alive connection; `waiting` is resolved with each answer's status code."""

    def __init__(self) -> None:
        self.buffer = b""
        self.waiting: asyncio.Future[int] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(exc or ConnectionError("closed"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buffer[:end].lower()
        at = head.find(b"content-length:")
        length = int(head[at + 15 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
        if len(self.buffer) < end + 4 + length:
            return
        self.buffer = self.buffer[end + 4 + length :]
        if self.waiting is not None:
            self.waiting.set_result(int(head[9:12]))
            self.waiting = None


async def check_all(urls: list[str], concurrency: int) -> dict[str, int]:
    loop = asyncio.get_running_loop()
    pools: dict[str, list[Answer]] = {}
    seen: dict[str, int] = {}
    todo: Iterator[str] = iter(urls)

    async def slot() -> None:
        for url in todo:
            hostport, _, path = url.split("://", 1)[1].partition("/")
            host, _, port = hostport.partition(":")
            pool = pools.setdefault(hostport, [])
            conn = pool.pop() if pool else (await loop.create_connection(Answer, host, int(port or 80)))[1]
            conn.waiting = loop.create_future()
            assert conn.transport is not None
            conn.transport.write(b"GET /%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), hostport.encode()))
            seen[url] = await conn.waiting
            pool.append(conn)

    await asyncio.gather(*(slot() for _ in range(concurrency)))
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("urls")
    ap.add_argument("--output", required=True)
    ap.add_argument("--concurrency", type=int, default=128)
    a = ap.parse_args()
    with open(a.urls) as f:
        urls = list(dict.fromkeys(line.strip() for line in f if line.strip()))
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    t0 = time.perf_counter()
    seen = asyncio.run(check_all(urls, a.concurrency))
    results = [{"url": url, "status": "ok" if code < 400 else "broken", "code": code} for url, code in seen.items()]
    with open(a.output, "w") as f:
        json.dump({"results": results, "summary": {"unique": len(seen), "total": len(seen)}}, f)
    print(f"{len(seen)} URLs in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return 2 if any(r["status"] == "broken" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
