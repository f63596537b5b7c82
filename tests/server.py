"""A real HTTP server on 127.0.0.x for tests: scripted routes, and a record of every request it saw."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SiteFactory = Callable[[str], Awaitable["Site"]]


@dataclass
class Seen:
    method: str
    path: str  # path with query
    at: float  # time.monotonic() when the request arrived
    headers: dict[str, str]


@dataclass
class Site:
    """Routes by path (with query). Unknown paths are 404. Counts what it serves."""

    host: str = "127.0.0.1"
    routes: dict[str, Handler] = field(default_factory=dict)
    prefixes: dict[str, Handler] = field(default_factory=dict)  # path prefix -> handler, when no route matches
    requests: list[Seen] = field(default_factory=list)
    inflight: int = 0
    peak: int = 0
    base: str = ""
    _runner: web.AppRunner | None = None

    # -- what the server saw ---------------------------------------------------------------------------
    def hits(self, path: str, method: str | None = None) -> int:
        return sum(1 for r in self.requests if r.path == path and (method is None or r.method == method))

    def asked(self) -> list[str]:
        """The paths requested, in order, robots.txt left out."""
        return [r.path for r in self.requests if r.path != "/robots.txt"]

    def counts(self) -> Counter[tuple[str, str]]:
        return Counter((r.method, r.path) for r in self.requests)

    def url(self, path: str) -> str:
        return self.base + path

    # -- routes ----------------------------------------------------------------------------------------
    def page(self, path: str, body: str, content_type: str = "text/html", status: int = 200,
             headers: dict[str, str] | None = None) -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            return web.Response(body=body.encode(), status=status, content_type=content_type, headers=headers)

        self.routes[path] = h

    def status(self, path: str, code: int, headers: dict[str, str] | None = None) -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            return web.Response(status=code, text=f"status {code}", headers=headers)

        self.routes[path] = h

    def redirect(self, path: str, location: str, code: int = 301) -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            return web.Response(status=code, headers={"Location": location})

        self.routes[path] = h

    def slow(self, path: str, seconds: float, body: str = "slow") -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(seconds)
            return web.Response(text=body, content_type="text/html")

        self.routes[path] = h

    def reset(self, path: str) -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            return await drop(request)

        self.routes[path] = h

    def head_refused(self, path: str, code: int = 405, body: str = "ok") -> None:
        async def h(request: web.Request) -> web.StreamResponse:
            if request.method == "HEAD":
                return web.Response(status=code)
            return web.Response(text=body, content_type="text/html")

        self.routes[path] = h

    def handler(self, path: str, h: Handler) -> None:
        self.routes[path] = h

    def answer_after(self, path: str, asked: list[str], answer: Callable[[], web.Response],
                     seconds: float = 0.0) -> None:
        """path answers once the server has seen every path of asked (until_asked), and `seconds` more."""
        async def h(request: web.Request) -> web.StreamResponse:
            for first in asked:
                await until_asked(self, first)
            await asyncio.sleep(seconds)
            return answer()

        self.routes[path] = h

    # -- life cycle ------------------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(Seen(request.method, request.path_qs, time.monotonic(), dict(request.headers)))
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        try:
            h = self.routes.get(request.path_qs) or self.routes.get(request.path)
            if h is None:
                h = next((ph for p, ph in self.prefixes.items() if request.path.startswith(p)), None)
            if h is None:
                return web.Response(status=404, text="not found")
            return await h(request)
        finally:
            self.inflight -= 1

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> Site:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        # at the end of a test, handlers still running (a slow answer a stopped run left) get a second, then are
        # cancelled: aiohttp's default would wait up to 60 s for each
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        tcp = web.TCPSite(self._runner, self.host, port, ssl_context=tls)
        await tcp.start()
        server = tcp._server
        assert server is not None and server.sockets
        real_port = server.sockets[0].getsockname()[1]
        self.base = f"{'https' if tls else 'http'}://{self.host}:{real_port}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            server = self._runner.server
            if self.base.startswith("https:") and server is not None:
                # A TLS connection closed politely waits for the client's close_notify, which a client that
                # already went away never sends: its socket would outlive the test. Cut them instead.
                for transport in list(server._connections.values()):
                    transport.abort()
            await self._runner.cleanup()


def html(*links: str, title: str = "page", extra: str = "") -> str:
    """A small HTML page linking to each of links."""
    anchors = "\n".join(f'<a href="{u}">{u}</a>' for u in links)
    return f"<!doctype html><html><head><title>{title}</title></head><body>\n{anchors}\n{extra}</body></html>"


def urlset(*urls: str) -> str:
    """A sitemap listing urls."""
    locs = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'


async def drop(request: web.Request) -> web.StreamResponse:
    """No answer to request: its connection reset (the response returned is never sent)."""
    transport = request.transport
    assert transport is not None
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    await asyncio.sleep(0.05)
    return web.Response(status=500)


async def until(done: Callable[[], bool], seconds: float = 60.0) -> None:
    """Wait until done() is true (at most `seconds`: only catches a hang)."""
    async with asyncio.timeout(seconds):
        while not done():
            await asyncio.sleep(0.01)


async def until_asked(site: Site, path: str) -> None:
    """Wait until the server has seen path (5 s at most: a run that never asks it still ends)."""
    for _ in range(500):
        if site.hits(path):
            return
        await asyncio.sleep(0.01)
