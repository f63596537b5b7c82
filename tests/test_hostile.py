"""Hostile servers must not hang or exhaust linkhound: bombs, drips, endless redirects, URL traps."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import struct
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

import linkhound
from linkhound import Status
from server import Site, html

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


def gzip_bomb(prefix: bytes, size: int) -> bytes:
    """prefix followed by `size` spaces, gzip-compressed (about 1000:1)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    parts = [z.compress(prefix)]
    for _ in range(size >> 20):
        parts.append(z.compress(chunk))
    parts.append(z.compress(b'<a href="/after-the-cap">x</a>'))
    parts.append(z.flush())
    return b"".join(parts)


async def test_compression_bomb_is_cut_at_the_body_cap(site: Site) -> None:
    bomb = gzip_bomb(b'<html><body><a href="/before">b</a>', 64 << 20)
    assert len(bomb) < 1 << 20

    async def serve(request: web.Request) -> web.StreamResponse:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip", "Content-Type": "text/html"})

    site.handler("/", serve)
    site.page("/before", "ok")
    report = await asyncio.wait_for(linkhound.check([site.url("/")], max_body_size=2 << 20), 60)
    urls = {r.url.removeprefix(site.base): r for r in report.results}
    assert urls["/"].status is Status.OK and "max-body-size" in urls["/"].reason
    assert "/before" in urls and "/after-the-cap" not in urls


async def test_a_bomb_of_many_gzip_members_is_cut_at_the_body_cap(site: Site) -> None:
    # 256 members of 1 MiB of spaces each (one after another, as RFC 1952 allows): the cap counts across members,
    # whichever member it falls in, so the body stops at it, and memory with it
    spaces = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = spaces.compress(b" " * (1 << 20)) + spaces.flush()
    bomb = gzip.compress(b'<html><body><a href="/before">b</a>') + one * 256
    bomb += gzip.compress(b'<a href="/after-the-cap">x</a>')
    assert len(bomb) < 1 << 20

    async def serve(request: web.Request) -> web.StreamResponse:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip", "Content-Type": "text/html"})

    site.handler("/", serve)
    site.page("/before", "ok")
    tracemalloc.start()
    try:
        report = await asyncio.wait_for(linkhound.check([site.url("/")], max_body_size=2 << 20), 60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    urls = {r.url.removeprefix(site.base): r for r in report.results}
    assert urls["/"].status is Status.OK and "max-body-size" in urls["/"].reason
    assert "/before" in urls and "/after-the-cap" not in urls
    assert peak < 32 << 20  # a few times the 2 MiB cap, not the 256 MiB the members expand to


async def test_a_flood_of_empty_gzip_members_is_a_bad_response(site: Site) -> None:
    # members that expand to nothing give the body cap nothing to stop: their number is capped instead (at
    # 10,000: linkhound.body_decoder.MAX_MEMBERS), or each would cost a new inflater for 20 bytes of body
    empty = gzip.compress(b"")
    flood = gzip.compress(b'<html><body><a href="/linked">x</a>') + empty * 10_000

    async def serve(request: web.Request) -> web.StreamResponse:
        return web.Response(body=flood, headers={"Content-Encoding": "gzip", "Content-Type": "text/html"})

    site.handler("/", serve)
    report = await asyncio.wait_for(linkhound.check([site.url("/")], max_retries=0), 60)
    (r,) = report.results
    assert r.status is Status.ERROR and r.reason == "bad response: gzip body of more than 10000 members"
    assert site.hits("/linked") == 0


async def _drip(request: web.Request) -> web.StreamResponse:
    """An HTML page whose body never ends: a space every 0.1 s, for a minute."""
    resp = web.StreamResponse(headers={"Content-Type": "text/html"})
    await resp.prepare(request)
    for _ in range(600):
        await resp.write(b" ")
        await asyncio.sleep(0.1)
    return resp


async def test_a_body_that_drips_forever_times_out(site: Site) -> None:
    site.handler("/drip", _drip)
    site.page("/", html("/drip"))
    report = await asyncio.wait_for(
        linkhound.check([site.url("/")], recursive=True, timeout=1.0, max_retries=0), 30
    )
    drip_result = next(r for r in report.results if r.url.endswith("/drip"))
    assert drip_result.status is Status.TIMEOUT


async def test_a_redirect_to_a_body_that_drips_forever_times_out_with_its_chain(site: Site) -> None:
    # /old -> /drip, a page whose body never ends: /old's result is the timeout, with the chain that led there;
    # /drip, linked by a page parsed later (while /old is in flight, or after), takes that failure as its own
    site.handler("/drip", _drip)
    site.redirect("/old", "/drip", 308)
    site.page("/", html("/old", "/later"))
    site.slow("/later", 0.5, html("/drip"))
    report = await asyncio.wait_for(
        linkhound.check([site.url("/")], recursive=True, timeout=1.0, max_retries=0), 30
    )
    results = {r.url.removeprefix(site.base): r for r in report.results}
    old, end = results["/old"], results["/drip"]
    assert old.status is end.status is Status.TIMEOUT and old.reason == end.reason
    assert old.redirects == (site.url("/drip"),) and old.redirect_codes == (308,)
    assert site.hits("/drip") == 1 and site.hits("/old") == 1


async def test_endless_redirects_stop_at_the_limit(site: Site) -> None:
    async def onward(request: web.Request) -> web.StreamResponse:
        n = int(request.match_info.get("tail", "0").rsplit("/", 1)[-1] or 0)
        return web.Response(status=302, headers={"Location": f"/r/{n + 1}"})

    for n in range(100):
        site.handler(f"/r/{n}", onward)
    site.page("/", html("/r/0"))
    report = await linkhound.check([site.url("/")], max_redirects=5)
    r = next(r for r in report.results if r.url.endswith("/r/0"))
    assert r.status is Status.ERROR and "redirects" in r.reason
    assert sum(1 for s in site.requests if s.path.startswith("/r/")) == 6


async def test_a_header_of_one_value_sent_twice_is_read_once(site: Site) -> None:
    # Content-Type and Location repeated: read as "text/html, text/html" the page was no HTML (its broken link
    # never checked), and the redirect went to "/here,%20/here"
    async def page(request: web.Request) -> web.StreamResponse:
        answer = web.Response(body=b'<a href="/gone">gone</a> <a href="/moved">moved</a>')
        answer.headers.add("Content-Type", "text/html")
        answer.headers.add("Content-Type", "text/html; charset=utf-8")
        return answer

    async def moved(request: web.Request) -> web.StreamResponse:
        answer = web.Response(status=301)
        answer.headers.add("Location", "/here")
        answer.headers.add("Location", "/here")
        return answer

    site.handler("/", page)
    site.handler("/moved", moved)
    site.page("/here", "ok", content_type="text/plain")
    report = await linkhound.check([site.url("/")])
    verdicts = {r.url: (r.status, r.redirects) for r in report.results}
    assert verdicts == {site.url("/"): (Status.OK, ()), site.url("/gone"): (Status.BROKEN, ()),
                        site.url("/moved"): (Status.OK, (site.url("/here"),))}
    assert site.hits("/here") == 1


async def test_huge_headers_are_an_error_not_a_crash(site: Site) -> None:
    site.status("/big", 200, headers={"X-Big": "x" * 1_000_000})  # past both stacks' limits (16 KiB, ~400 KiB)
    site.page("/", html("/big"))
    report = await linkhound.check([site.url("/")], max_retries=0)
    r = next(r for r in report.results if r.url.endswith("/big"))
    assert r.status is Status.ERROR


async def test_url_traps_end(site: Site) -> None:
    async def nest(request: web.Request) -> web.StreamResponse:
        # relative links that nest forever: /loop/a/ -> /loop/a/a/, /loop/a/b/ -> ...
        return web.Response(text=html("a/", "b/"), content_type="text/html")

    async def calendar(request: web.Request) -> web.StreamResponse:
        day = int(request.query.get("d", "0"))
        return web.Response(text=html(f"/cal?d={day + 1}", f"/cal?d={day - 1}"), content_type="text/html")

    site.prefixes["/loop/"] = nest
    site.prefixes["/cal"] = calendar
    site.page("/", html("/loop/", "/cal?d=0"))
    report = await asyncio.wait_for(linkhound.check([site.url("/")], recursive=True), 120)
    assert "crawler-trap guard" in report.summary.caps
    assert len(report.pages) < 1000
    assert report.summary.success


async def test_a_web_page_cannot_make_linkhound_read_local_files(site: Site) -> None:
    site.page("/", html("file:///etc/passwd", "file:///etc/hostname#x", "FILE:///nonexistent"))
    report = await linkhound.check([site.url("/")], check_fragments=True)
    local = [r for r in report.results if r.url.lower().startswith("file:")]
    assert len(local) == 3
    assert all(r.status is Status.SKIPPED and r.reason == "file: link on a web page" for r in local)


async def test_an_endless_body_is_cut_or_dropped_never_drained(site: Site) -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        kind = "image/png" if request.path.endswith(".png") else "text/html"
        resp = web.StreamResponse(headers={"Content-Type": kind})
        await resp.prepare(request)
        with contextlib.suppress(ConnectionError):
            while True:
                await resp.write(b"<p>" + b"x" * 65536 + b"</p>")
        return resp

    site.handler("/endless.html", endless)  # a page: read up to the cap, then the connection is dropped
    site.handler("/endless.png", endless)  # not a page: its body is never wanted, so it isn't read at all
    report = await asyncio.wait_for(  # a guard against hanging, not a timing assertion
        linkhound.check([site.url("/endless.html"), site.url("/endless.png")], method="get",
                        check_fragments=True, max_body_size=1_000_000, timeout=10),
        60,
    )
    got = {r.url.rsplit("/", 1)[1]: r for r in report.results}
    assert got["endless.html"].status is Status.OK and got["endless.html"].reason == "body cut at --max-body-size"
    assert got["endless.png"].status is Status.OK and got["endless.png"].reason == "OK"
    # the page's later links were never read: the summary says so, in every format
    assert [w for w in report.summary.warnings if "body cut" in w] == [
        f"{site.url('/endless.html')}: body cut at --max-body-size; links and anchors after it not read"
    ]


@pytest.mark.parametrize("client", ["native", "reqwest", "aiohttp"])
async def test_a_kept_alive_connection_the_server_resets_is_asked_again_on_a_new_one(client: str) -> None:
    # each connection answers once; asked again, it is reset (a server that dropped its idle connections).
    # Four pages at once leave four such connections in the pool: a retry from the pool met another of them
    asked: list[tuple[int, str]] = []
    connections = iter(range(1_000))

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        me = next(connections)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            method, path = head.split(b" ", 2)[:2]
            asked.append((me, path.decode()))
            body = b"".join(b'<a href="/p%d">p</a>' % i for i in range(4)) if path == b"/" else \
                b'<a href="/leaf%s">l</a>' % path[2:] if path.startswith(b"/p") else b"leaf"
            if path.startswith(b"/p"):
                await asyncio.sleep(0.1)  # (the four pages at once: four connections)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), b"" if method == b"HEAD" else body))
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")  # asked again on this connection: reset it
            asked.append((me, "reset"))
        _reset(writer)

    report = await _check_on(serve, ["/"], recursive=True, robots=False, http_client=client, max_retries=0)
    assert {r.url.rsplit("/", 1)[1]: r.status for r in report.results} == {
        "": Status.OK, **{f"p{i}": Status.OK for i in range(4)}, **{f"leaf{i}": Status.OK for i in range(4)}}
    answered = [path for _, path in asked if path != "reset"]
    assert sorted(answered) == sorted(["/", *(f"/p{i}" for i in range(4)), *(f"/leaf{i}" for i in range(4))])


@pytest.mark.parametrize("client", ["native", "reqwest", "aiohttp"])
async def test_a_server_that_resets_every_request_is_not_asked_again_at_once(client: str) -> None:
    # no connection was ever kept to it, so no stale one to blame: each ask is one request (past its host's rate
    # a second one would go; retries, if any, wait their turn)
    asked: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            asked.append(head.split(b" ", 2)[1].decode())
        _reset(writer)

    report = await _check_on(serve, ["/a", "/b"], http_client=client, max_retries=0)
    assert all(r.status is Status.ERROR for r in report.results)
    assert sorted(asked) == ["/a", "/b"]


def _reset(writer: asyncio.StreamWriter) -> None:
    """End a connection with a reset (RST), as a server that drops it does."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _check_on(serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]], paths: list[str],
                    **options: Any) -> linkhound.Report:
    """linkhound.check of paths on a raw server that answers as serve does (on 127.0.0.1, a free port)."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await linkhound.check([f"http://127.0.0.1:{port}{path}" for path in paths], **options)
    finally:
        server.close()
        await server.wait_closed()
