"""HTTP/1.1 on the event loop's own sockets, for plain http:// URLs: keep-alive connections pooled per origin,
each an asyncio Protocol that frames its answers itself (Content-Length, chunked, or up to the close) and
inflates gzip and deflate bodies as they are read. About a third of reqwest's CPU per request (measured: 37 µs
against 100 µs of process CPU for a HEAD on loopback), since nothing crosses to another thread and back.

What it doesn't do (TLS, proxies, credentials in the URL) goes to the other transport, composed on first need."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Mapping
from typing import cast

from .body_decoder import ACCEPT_ENCODING, decoder_for
from .transport import DRAIN_LIMIT, ClientOptions, Hop, NetworkError, Transport

_MAX_HEAD = 64 * 1024  # bytes of a status line and headers (1xx answers included); more is a bad answer
_MAX_LINE = 8 * 1024  # bytes of a chunk-size or trailer line
_HIGH_WATER = 1 << 20  # bytes held unread before the socket is paused (a body read slower than it comes)
_LENGTH, _CHUNKED, _TO_CLOSE, _NONE = range(4)  # how an answer's body ends
_SIZE, _DATA, _DATA_END, _TRAILER, _DONE = range(5)  # where a chunked body is
_NO_BODY_STATUS = frozenset((204, 304))


class _Stale(Exception):
    """The connection closed before the first byte of the answer: on a reused one, the server let it go idle."""


class NativeHeaders:
    """An answer's headers by lower-case name; repeated ones joined with ", " (Set-Cookie kept apart)."""

    __slots__ = ("map", "cookies")

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.cookies: list[str] = []

    def get(self, key: str, /) -> str | None:
        return self.map.get(key.lower())


class _Connection(asyncio.Protocol):
    """One socket, one request at a time: bytes as they come, and a future to wait on for more."""

    __slots__ = ("loop", "busy", "transport", "buffer", "waiter", "eof", "error", "paused", "deadline", "timed_out",
                 "got", "framing", "remaining", "chunk", "keep")

    def __init__(self, loop: asyncio.AbstractEventLoop, busy: set[_Connection]) -> None:
        self.loop = loop
        self.busy = busy  # the transport's connections in a request, whose deadlines it watches
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[None] | None = None
        self.eof = False
        self.error: Exception | None = None
        self.paused = False
        self.deadline = 0.0
        self.timed_out = False
        self.got = False  # a byte of the current answer came
        self.framing = _NONE
        self.remaining = 0
        self.chunk = _SIZE
        self.keep = False  # may serve another request once this answer is read

    # -- the protocol ----------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's is one, without being a subclass)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.got = True
        if len(self.buffer) > _HIGH_WATER and not self.paused and self.transport is not None:
            self.transport.pause_reading()
            self.paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # -- a request's life ------------------------------------------------------------------------------

    @property
    def usable(self) -> bool:
        return not self.eof and self.transport is not None and not self.transport.is_closing()

    def begin(self, deadline: float, request: bytes) -> None:
        self.got = False
        self.timed_out = False
        self.deadline = deadline
        self.busy.add(self)
        assert self.transport is not None
        self.transport.write(request)

    def time_out(self) -> None:
        self.timed_out = True
        self.close()
        self._wake()

    def end(self) -> None:
        self.busy.discard(self)

    def close(self) -> None:
        self.end()
        self.keep = False
        self.eof = True
        if self.transport is not None:
            self.transport.abort()

    async def more(self) -> None:
        """Wait for bytes (the buffer has too few); TimeoutError at the deadline."""
        if self.timed_out:
            raise TimeoutError
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        waiter = self.waiter = self.loop.create_future()
        await waiter
        if self.timed_out:
            raise TimeoutError

    async def head(self, method: str) -> tuple[int, NativeHeaders]:
        """The answer's status and headers (1xx interim answers passed over); the body's framing set."""
        buffer = self.buffer
        while True:
            end, skip = buffer.find(b"\n\r\n"), 3
            if end < 0:
                end, skip = buffer.find(b"\n\n"), 2  # (bare LFs, as a few servers send)
            if end < 0:
                if len(buffer) > _MAX_HEAD:
                    raise NetworkError("bad response: header section too large", transient=False)
                if self.eof:
                    if self.timed_out:
                        raise TimeoutError
                    if not self.got:
                        raise _Stale
                    raise NetworkError("server closed the connection", transient=True)
                await self.more()
                continue
            if end > _MAX_HEAD:
                raise NetworkError("bad response: header section too large", transient=False)
            text = buffer[:end].decode("latin-1")
            if not text.isascii():  # raw UTF-8 in a header (a Location to /café): read as browsers and curl do
                with contextlib.suppress(UnicodeDecodeError):
                    text = buffer[:end].decode()
            del buffer[: end + skip]
            status, version, headers = _parse_head(text)
            if 100 <= status < 200 and status != 101:
                continue
            self._framing(method, status, version, headers)
            return status, headers

    def _framing(self, method: str, status: int, version: str, headers: NativeHeaders) -> None:
        connection = (headers.get("connection") or "").lower()
        self.keep = "close" not in connection if version == "1.1" else "keep-alive" in connection
        coding = headers.get("transfer-encoding")
        length = headers.get("content-length")
        if method == "HEAD" or status in _NO_BODY_STATUS or status < 200:
            self.framing, self.remaining = _LENGTH, 0
        elif coding is not None and coding.lower().rstrip().endswith("chunked"):
            self.framing, self.chunk, self.remaining = _CHUNKED, _SIZE, 0
        elif length is not None:
            values = {v.strip() for v in length.split(",")}
            value = values.pop() if len(values) == 1 else ""
            if not value.isdigit():
                raise NetworkError(f"bad response: Content-Length '{length[:40]}'", transient=False)
            self.framing, self.remaining = _LENGTH, int(value)
        else:
            self.framing, self.keep = _TO_CLOSE, False

    @property
    def complete(self) -> bool:
        """The answer's body has been read to its end."""
        if self.framing == _LENGTH:
            return self.remaining == 0
        return self.framing == _CHUNKED and self.chunk == _DONE

    async def piece(self) -> bytes:
        """The next bytes of the body as sent (before any Content-Encoding is undone); b"" at its end."""
        buffer = self.buffer
        if self.framing == _LENGTH:
            if not self.remaining:
                return b""
            while not buffer:
                await self._more_of_body()
            n = min(len(buffer), self.remaining)
            self.remaining -= n
            return self._take(n)
        if self.framing == _TO_CLOSE:
            while not buffer:
                if self.eof:
                    if self.timed_out:
                        raise TimeoutError
                    if self.error is not None:  # a reset, not the close that ends the body: cut short
                        raise NetworkError("connection reset while reading the body", transient=True)
                    return b""
                await self.more()
            return self._take(len(buffer))
        return await self._chunked()

    async def _chunked(self) -> bytes:
        buffer = self.buffer
        while True:
            state = self.chunk
            if state == _DATA:
                while not buffer:
                    await self._more_of_body()
                n = min(len(buffer), self.remaining)
                self.remaining -= n
                if not self.remaining:
                    self.chunk = _DATA_END
                return self._take(n)
            if state == _DONE:
                return b""
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > _MAX_LINE:
                    raise NetworkError("bad response: chunked framing", transient=False)
                await self._more_of_body()
                continue
            line = bytes(buffer[:end]).rstrip(b"\r")
            del buffer[: end + 1]
            if state == _DATA_END:
                if line:
                    raise NetworkError("bad response: chunked framing", transient=False)
                self.chunk = _SIZE
            elif state == _SIZE:
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise NetworkError("bad response: chunked framing", transient=False) from None
                if size < 0:
                    raise NetworkError("bad response: chunked framing", transient=False)
                self.chunk, self.remaining = (_DATA, size) if size else (_TRAILER, 0)
            elif not line:  # the empty line after the trailers
                self.chunk = _DONE
                return b""

    async def _more_of_body(self) -> None:
        if self.eof:
            if self.timed_out:
                raise TimeoutError
            raise NetworkError("connection reset while reading the body", transient=True)
        await self.more()

    def _take(self, n: int) -> bytes:
        buffer = self.buffer
        if n == len(buffer):
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:n])
            del buffer[:n]
        return data


def _parse_head(text: str) -> tuple[int, str, NativeHeaders]:
    lines = text.split("\n")  # (each line's CR, if any, goes with the strip of its value)
    first = lines[0].rstrip("\r")
    if not first.startswith("HTTP/1.") or len(first) < 12 or first[8] != " " or not first[9:12].isdigit():
        raise NetworkError(f"bad response: status line '{first[:60]}'", transient=False)
    del lines[0]
    headers = NativeHeaders()
    found = headers.map
    # the usual head in one pass; a line with no colon, a repeated or folded header, a cookie: line by line
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep:
            break
        found[name.lower()] = value.strip()
    else:
        if len(found) == len(lines) and "set-cookie" not in found and "\n " not in text and "\n\t" not in text:
            return int(first[9:12]), first[5:8], headers
    found.clear()
    _each_header(lines, headers)
    return int(first[9:12]), first[5:8], headers


# Headers that hold one value: sent twice (Content-Type: text/html twice, a Location repeated), the first is
# the one read, as reqwest and aiohttp read it; joined, "text/html, text/html" would be no HTML at all
_ONE_VALUE = frozenset({"content-type", "location", "content-length", "retry-after", "etag", "last-modified",
                        "ratelimit-reset", "ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-remaining",
                        "cf-mitigated"})


def _each_header(lines: list[str], headers: NativeHeaders) -> None:
    found = headers.map
    name = ""
    for line in lines:
        if line[:1] in (" ", "\t") and name:  # an obsolete folded line: more of the header before
            found[name] = f"{found[name]} {line.strip()}"
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise NetworkError(f"bad response: header line '{line.rstrip()[:60]}'", transient=False)
        name = name.lower()
        value = value.strip()
        if name not in found:
            found[name] = value
        elif name not in _ONE_VALUE:  # a list header sent as several lines: one line, as RFC 9110 5.3 allows
            found[name] = f"{found[name]}, {value}"
        if name == "set-cookie":
            headers.cookies.append(value)


class NativeHop:
    """An answer on a pooled connection: its body read, drained or dropped gives the connection back (or not)."""

    __slots__ = ("status", "headers", "_owner", "_origin", "_conn")

    def __init__(self, owner: NativeTransport, origin: str, conn: _Connection, status: int,
                 headers: NativeHeaders) -> None:
        self.status = status
        self.headers = headers
        self._owner = owner
        self._origin = origin
        self._conn: _Connection | None = conn

    def set_cookies(self) -> list[str]:
        return self.headers.cookies

    async def read(self, limit: int) -> tuple[bytes, bool]:
        conn = self._conn
        if conn is None:
            return b"", False
        try:
            decoder = decoder_for(self.headers)
        except NetworkError:
            self.close()
            raise
        pieces: list[bytes] = []
        size = 0
        try:
            while piece := await conn.piece():
                if decoder is not None:
                    piece = decoder.decode(piece, limit - size + 1)
                if size + len(piece) > limit:
                    pieces.append(piece[: limit - size])
                    self.close()
                    return b"".join(pieces), True
                pieces.append(piece)
                size += len(piece)
        except BaseException:
            self.close()
            raise
        self._release()
        return pieces[0] if len(pieces) == 1 else b"".join(pieces), False

    async def discard(self) -> None:
        conn = self._conn
        if conn is None:
            return
        if conn.complete:
            self._release()
            return
        if conn.framing == _TO_CLOSE or conn.framing == _LENGTH and conn.remaining > DRAIN_LIMIT:
            self.close()
            return
        drained = 0
        try:
            while piece := await conn.piece():
                drained += len(piece)
                if drained > DRAIN_LIMIT:
                    self.close()
                    return
        except BaseException:
            self.close()
            raise
        self._release()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.end()
            self._owner.give_back(self._origin, conn)


class NativeTransport:
    """http:// on pooled keep-alive connections; the rest (https, proxied, user:pass@) to other(), made on first
    need (so a run that only meets http:// never loads it)."""

    def __init__(self, options: ClientOptions, other: Callable[[], Transport],
                 proxy_for: Callable[[str], str | None] | None = None) -> None:
        self._options = options
        self._make_other = other
        self._other: Transport | None = None
        self._proxy_for = proxy_for
        self._idle: dict[str, list[_Connection]] = {}
        self._keep = max(1, options.max_connections)
        given = {k.lower() for k in options.plain_headers}  # (--header accept: ... takes the default's place)
        plain = {k: v for k, v in (("Accept", "*/*"), ("Accept-Encoding", ACCEPT_ENCODING)) if k.lower() not in given}
        plain.update(options.plain_headers)
        self._plain = plain
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in plain.items())
        self._loop: asyncio.AbstractEventLoop | None = None
        # Deadlines are watched by one timer for all, every quarter of the timeout (at most a second): a timer
        # per request would cost more than the rest of a request's bookkeeping. A request times out up to a
        # quarter of the timeout late.
        self._busy: set[_Connection] = set()
        self._tick = min(1.0, options.timeout / 4)
        self._watch: asyncio.TimerHandle | None = None

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._watch = self._loop.call_later(self._tick, self._sweep)

    def _sweep(self) -> None:
        loop = self._loop
        assert loop is not None
        now = loop.time()
        for conn in [c for c in self._busy if c.deadline <= now]:
            conn.time_out()
        self._watch = loop.call_later(self._tick, self._sweep)

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
        if self._other is not None:
            await self._other.close()
            self._other = None

    async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> Hop:
        if not url.startswith("http://"):
            return await (await self._fallback()).send(method, url, headers)
        slash = url.find("/", 7)
        authority = url[7:slash] if slash >= 0 else url[7:]
        if "@" in authority or self._proxy_for is not None and self._proxy_for(url) is not None:
            return await (await self._fallback()).send(method, url, headers)
        target = url[slash:] if slash >= 0 else "/"
        hash_at = target.find("#")
        if hash_at >= 0:
            target = target[:hash_at]
        loop = self._loop
        assert loop is not None, "transport used before open()"
        deadline = loop.time() + self._options.timeout
        request = self._request(method, target, authority, headers)
        conn = self._pooled(authority)
        if conn is not None:
            try:
                return await self._exchange(conn, authority, method, deadline, request)
            except _Stale:  # the server let it go while it was idle: asked again, on a new one
                pass
        conn = await self._connect(loop, authority, deadline)
        try:
            return await self._exchange(conn, authority, method, deadline, request)
        except _Stale:
            raise NetworkError("server closed the connection", transient=True) from None

    async def _exchange(self, conn: _Connection, origin: str, method: str, deadline: float, request: bytes
                        ) -> NativeHop:
        conn.begin(deadline, request)
        try:
            status, headers = await conn.head(method)
        except BaseException:
            conn.close()
            raise
        return NativeHop(self, origin, conn, status, headers)

    def give_back(self, origin: str, conn: _Connection) -> None:
        """A connection whose answer was read to its end: kept for the origin's next request, if it may be."""
        if not conn.keep or not conn.usable or conn.buffer:
            conn.close()
            return
        idle = self._idle.get(origin)
        if idle is None:
            self._idle[origin] = [conn]
        elif len(idle) < self._keep:
            idle.append(conn)
        else:
            conn.close()

    def _pooled(self, origin: str) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if conn.usable and not conn.buffer:
                return conn
            conn.close()
        return None

    async def _connect(self, loop: asyncio.AbstractEventLoop, authority: str, deadline: float) -> _Connection:
        host, port = _host_port(authority)
        try:
            async with asyncio.timeout_at(deadline):
                _, conn = await loop.create_connection(lambda: _Connection(loop, self._busy), host, port)
        except socket.gaierror:
            raise NetworkError("DNS lookup failed", transient=False) from None
        except OSError as e:
            raise NetworkError(f"connection failed: {e.strerror or e}", transient=False) from None
        return conn

    def _request(self, method: str, target: str, authority: str, headers: Mapping[str, str] | None) -> bytes:
        if not headers:
            return f"{method} {target} HTTP/1.1\r\nHost: {authority}\r\n{self._fixed}\r\n".encode("latin-1")
        merged = {k.lower(): (k, v) for k, v in self._plain.items()}
        merged.update((k.lower(), (k, v)) for k, v in headers.items())
        lines = "".join(f"{k}: {v}\r\n" for k, v in merged.values() if k.lower() != "host")
        try:
            return f"{method} {target} HTTP/1.1\r\nHost: {authority}\r\n{lines}\r\n".encode("latin-1")
        except UnicodeEncodeError:
            return f"{method} {target} HTTP/1.1\r\nHost: {authority}\r\n{lines}\r\n".encode()

    async def _fallback(self) -> Transport:
        if self._other is None:
            other = self._make_other()
            await other.open()
            if self._other is None:
                self._other = other
            else:  # another request composed one first
                await other.close()
        return self._other


def _host_port(authority: str) -> tuple[str, int]:
    """("::1", 8080) for "[::1]:8080", ("h", 80) for "h"."""
    if authority.startswith("["):
        end = authority.find("]")
        host, rest = authority[1:end], authority[end + 1:]
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else 80
    host, sep, port = authority.rpartition(":")
    if sep and port.isdigit():
        return host, int(port)
    return authority, 80

