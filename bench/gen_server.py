"""A site of any size made on the fly: nothing is written to disk, so a million-page crawl needs no million files.

    gen_server.py serve --pages N [--port 8095]     listen on 127.0.0.1:PORT until SIGTERM or Ctrl+C
    gen_server.py truth --pages N                   print what a crawl of it must find (JSON: counts)

Page i (/p/(i // 1000)/(i % 1000), 0 <= i < N; / is page 0, like /p/0/0) holds about 26 links, the same
every time it is asked:
- the navigation every page repeats: /, page 1, /about, /about#team
- its children in a binary tree, pages 2i+1 and 2i+2 (so every page is reached, at depth <= log2 N), and
  the next page, i+1
- 20 pages picked by a hash of (i, j), 4 of them with a #fragment: #s0..#s2 exist on every page; every
  20th page also asks for #s3, which none has
- every 10th page a missing page /missing/.. (404), every 25th an image /img/(i % 100).png,
  every 50th a redirect /old/.. -> its own page

Pages carry ids s0, s1, s2. The server speaks just enough HTTP/1.1 itself (keep-alive, in-order pipelining) on
an asyncio protocol, one process, so it costs the crawl it serves little CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from typing import cast

_MULT = 2654435761


def split(i: int) -> str:
    """i as two path segments, a thousand values each at most: no crawler-trap guard mistakes the site for one."""
    return f"{i // 1000}/{i % 1000}"


def number(rest: str) -> int | None:
    high, _, low = rest.partition("/")
    return int(high) * 1000 + int(low) if high.isdigit() and low.isdigit() and len(low) <= 3 else None


def links(i: int, n: int) -> list[str]:
    out = ["/", "/p/0/1", "/about", "/about#team"]
    for child in (2 * i + 1, 2 * i + 2, i + 1):
        if child < n:
            out.append(f"/p/{split(child)}")
    for j in range(20):
        target = split((i * _MULT + j * 40503 + 7) % n)
        if j % 5 == 0:  # a missing anchor on every 20th page, one that exists elsewhere
            out.append(f"/p/{target}#s{3 if j == 0 and i % 20 == 0 else j % 3}")
        else:
            out.append(f"/p/{target}")
    if i % 10 == 0:
        out.append(f"/missing/{split(i)}")
    if i % 25 == 0:
        out.append(f"/img/{i % 100}.png")
    if i % 50 == 0:
        out.append(f"/old/{split(i)}")
    return out


def page(i: int, n: int) -> bytes:
    anchors = "".join(f'<li><a href="{h}">link {k}</a></li>\n' for k, h in enumerate(links(i, n)))
    return (
        f'<!DOCTYPE html>\n<html><head><title>page {i}</title></head><body>\n<h1 id="s0">Page {i}</h1>\n'
        f'<ul>\n{anchors}</ul>\n<p id="s1">text</p><p id="s2">more</p>\n</body></html>\n'
    ).encode()


ABOUT = b'<!DOCTYPE html><html><body><h2 id="team">team</h2><a href="/">home</a></body></html>\n'
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


def answer(path: str, n: int) -> tuple[bytes, bytes, bytes]:
    """(status line, content type, body) of path; a Location in place of the type for a redirect."""
    if path == "/":
        return b"200 OK", b"text/html", page(0, n)
    i = number(path[3:]) if path.startswith("/p/") else None
    if i is not None and i < n:
        return b"200 OK", b"text/html", page(i, n)
    if path == "/about":
        return b"200 OK", b"text/html", ABOUT
    if path.startswith("/img/"):
        return b"200 OK", b"image/png", PNG
    if path.startswith("/old/") and number(path[5:]) is not None:
        return b"301 Moved Permanently", b"/p/" + path[5:].encode(), b""
    return b"404 Not Found", b"text/plain", b"not found\n"


class Http(asyncio.Protocol):
    def __init__(self, n: int) -> None:
        self.n = n
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.transport is not None and (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            request, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            first = request.split(b"\r\n", 1)[0].split(b" ")
            method, path = first[0], first[1].decode("latin-1").split("?", 1)[0] if len(first) > 1 else "/"
            status, ctype, body = answer(path, self.n)
            if status.startswith(b"301"):
                head = b"HTTP/1.1 " + status + b"\r\nLocation: " + ctype + b"\r\nContent-Length: 0\r\n\r\n"
            else:
                head = (b"HTTP/1.1 " + status + b"\r\nContent-Type: " + ctype + b"\r\nContent-Length: "
                        + str(len(body)).encode() + b"\r\n\r\n")
            self.transport.write(head if method == b"HEAD" else head + body)


def truth(n: int) -> dict[str, int]:
    """What a crawl of /: pages, unique URLs, broken URLs and broken #fragments (computed by walking it)."""
    fragments: set[int] = set()
    targets = {"/", "/about"}
    for i in range(n):
        for h in links(i, n):
            url, _, frag = h.partition("#")
            targets.add(url)
            if frag == "s3":
                fragments.add(number(url[3:]) or 0)
    missing = sum(1 for t in targets if t.startswith("/missing/"))
    pages = sum(1 for t in targets if t.startswith("/p/")) + 2  # / and /about
    return {"pages": pages, "urls": len(targets), "broken_urls": missing, "broken_fragments": len(fragments)}


async def serve(n: int, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Http(n), "127.0.0.1", port, backlog=1024)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"serving {n} pages on http://127.0.0.1:{port}/", flush=True)
    async with server:
        await stop.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("command", choices=("serve", "truth"))
    p.add_argument("--pages", type=int, required=True)
    p.add_argument("--port", type=int, default=8095)
    a = p.parse_args()
    if a.command == "truth":
        print(json.dumps(truth(a.pages)))
    else:
        asyncio.run(serve(a.pages, a.port))


if __name__ == "__main__":
    main()
