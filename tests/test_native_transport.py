"""The native HTTP/1.1 transport (asyncio Protocols, uvloop in production), against tiny raw servers on 127.0.0.1
that answer canned bytes and record what they saw: the connections accepted, and each request's line and headers.

Every test runs twice, on asyncio's own loop and on uvloop (what production runs), each in a loop of its own, and
is bounded: a transport that hangs fails the test at BOUND seconds (the bound cancels the scenario, so a hang never
passes for the TimeoutError a test expects)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import importlib.util
import socket
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from linkhound.native_transport import NativeTransport, _parse_head
from linkhound.transport import DRAIN_LIMIT, ClientOptions, Hop, NetworkError, Transport

BOUND = 10.0  # seconds: the most any scenario may take

Runner = Callable[[Coroutine[Any, Any, None]], None]


@pytest.fixture(
    params=[
        "asyncio",
        pytest.param(
            "uvloop",
            marks=pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop not installed"),
        ),
    ]
)
def run(request: pytest.FixtureRequest) -> Runner:
    """Run a scenario to its end in a new event loop of the kind the test is parametrized with."""
    factory: Callable[[], asyncio.AbstractEventLoop]
    if request.param == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    else:
        factory = asyncio.new_event_loop

    def runner(scenario: Coroutine[Any, Any, None]) -> None:
        with asyncio.Runner(loop_factory=factory) as r:
            r.run(_bounded(scenario))

    return runner


async def _bounded(scenario: Coroutine[Any, Any, None]) -> None:
    async with asyncio.timeout(BOUND):
        await scenario


# --- the server ---------------------------------------------------------------------------------------------------


@dataclass
class Seen:
    """One request as the server read it."""

    conn: int  # which connection it came on: 0 for the first the server accepted
    line: str  # the request line, "GET /path HTTP/1.1"
    headers: list[tuple[str, str]]

    @property
    def method(self) -> str:
        return self.line.split(" ", 1)[0]

    @property
    def path(self) -> str:
        return self.line.split(" ")[1]

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def header(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None


# Answers one request: writes what it likes; returns whether the server reads the next request on this connection
# (False: the server closes its end, gracefully, after what was written).
Answer = Callable[[Seen, asyncio.StreamWriter], Awaitable[bool]]


class RawServer:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self.connections = 0  # accepted
        self.closed = 0  # connections whose handler has ended (the server closed its end)
        self.requests: list[Seen] = []
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._server: asyncio.Server | None = None
        self.port = 0
        self.stopping = asyncio.Event()  # set when the test is over: answers that hold return

    async def start(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def hold(self, until: asyncio.Event | None = None) -> None:
        """In an answer: wait for `until` (forever when None), or until the test is over."""
        waits = [asyncio.ensure_future(self.stopping.wait())]
        if until is not None:
            waits.append(asyncio.ensure_future(until.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        self.stopping.set()
        for w in self._writers:
            w.transport.abort()
        _, pending = await asyncio.wait(self._tasks, timeout=2) if self._tasks else (set(), set())
        for t in pending:  # (an answer that didn't end when told)
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                await self._server.wait_closed()
        for _ in range(3):
            await asyncio.sleep(0)  # the aborted transports close their sockets

    async def until(self, done: Callable[[], bool], what: str = "") -> None:
        """Wait until the server has seen something; an AssertionError if it doesn't within half the bound."""
        try:
            async with asyncio.timeout(BOUND / 2):
                while not done():
                    await asyncio.sleep(0.005)
        except TimeoutError:
            raise AssertionError(f"the server never saw {what or 'it'}") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = self.connections
        self.connections += 1
        self._writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.append(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *fields = head[:-4].decode("latin-1").split("\r\n")
                headers = [(k.strip(), v.strip()) for k, _, v in (f.partition(":") for f in fields)]
                seen = Seen(conn, line, headers)
                self.requests.append(seen)
                keep = await self._answer(seen, writer)
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()  # sends what is buffered, then FIN
            self.closed += 1


@contextlib.asynccontextmanager
async def serving(answer: Answer) -> AsyncIterator[RawServer]:
    server = await RawServer(answer).start()
    try:
        yield server
    finally:
        await server.stop()


def response(
    body: bytes = b"",
    status: str = "200 OK",
    headers: Sequence[tuple[str, str]] = (),
    length: bool = True,
    version: str = "HTTP/1.1",
) -> bytes:
    """An answer's bytes; with a Content-Length of the body unless length is False."""
    lines = [f"{version} {status}", *(f"{k}: {v}" for k, v in headers)]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(parts: Sequence[bytes], trailers: Sequence[str] = ()) -> bytes:
    """A chunked body: the first chunk size carries an extension, sizes alternate lower and upper case hex."""
    out = []
    for i, p in enumerate(parts):
        size = f"{len(p):x}" if i % 2 == 0 else f"{len(p):X}"
        ext = ";x=1" if i == 0 else ""
        out.append(f"{size}{ext}\r\n".encode() + p + b"\r\n")
    out.append(b"0\r\n" + "".join(f"{t}\r\n" for t in trailers).encode() + b"\r\n")
    return b"".join(out)


def canned(routes: Mapping[str, bytes], keep: bool = True) -> Answer:
    """Answer each path (with its query) with fixed bytes; "*" for any other path."""

    async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
        writer.write(routes[seen.path] if seen.path in routes else routes["*"])
        return keep

    return answer


# --- the transport ------------------------------------------------------------------------------------------------


def options(timeout: float = 5.0, headers: Mapping[str, str] | None = None) -> ClientOptions:
    return ClientOptions(
        max_connections=8,
        timeout=timeout,
        max_redirects=5,
        max_body_size=10_000_000,
        user_agent="lh-test",
        headers=dict(headers or {}),
    )


def no_other() -> Transport:
    """The factory of the transport for what the native one doesn't do (https, proxies): never needed here."""
    raise AssertionError("an http:// URL was handed to the other transport")


@contextlib.asynccontextmanager
async def native(timeout: float = 5.0, headers: Mapping[str, str] | None = None) -> AsyncIterator[Transport]:
    t: Transport = NativeTransport(options(timeout, headers), no_other)
    await t.open()
    try:
        yield t
    finally:
        async with asyncio.timeout(5):
            await t.close()


async def fetch(
    t: Transport, url: str, method: str = "GET", limit: int = 10_000_000, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes, bool]:
    """One request and its whole body, as the client does it: (status, body, truncated)."""
    hop: Hop = await t.send(method, url, headers)
    try:
        body, truncated = await hop.read(limit)
    except BaseException:
        hop.close()
        raise
    return hop.status, body, truncated


PAYLOAD = bytes(range(256)) * 64 + b"the end"  # 16 KiB and a bit, every byte value


# --- keep-alive and request lines ---------------------------------------------------------------------------------


def test_sequential_requests_share_one_connection(run: Runner) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": response(b"hello")})) as server, native() as t:
            for _ in range(20):
                assert await fetch(t, server.url("/path?q=1")) == (200, b"hello", False)
        assert server.connections == 1
        assert len(server.requests) == 20
        assert {s.line for s in server.requests} == {"GET /path?q=1 HTTP/1.1"}
        assert {s.header("Host") for s in server.requests} == {f"127.0.0.1:{server.port}"}

    run(scenario())


def test_a_url_without_a_path_asks_for_the_root(run: Runner) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": response(b"root")})) as server, native() as t:
            assert await fetch(t, f"http://127.0.0.1:{server.port}") == (200, b"root", False)
        assert server.requests[0].line == "GET / HTTP/1.1"

    run(scenario())


def test_concurrent_requests_use_separate_connections_then_all_are_reused(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            # the first four are held until all four have arrived: one connection can't carry them
            if seen.path.startswith("/held"):
                await server.until(lambda: len(server.requests) >= 4, "four requests at once")
            writer.write(response(seen.path.encode()))
            return True

        async with serving(answer) as server, native() as t:
            paths = [f"/held{i}" for i in range(4)]
            results = await asyncio.gather(*(fetch(t, server.url(p)) for p in paths))
            assert [r[1] for r in results] == [p.encode() for p in paths]
            assert server.connections == 4
            for i in range(8):
                assert await fetch(t, server.url(f"/after{i}")) == (200, f"/after{i}".encode(), False)
            assert server.connections == 4

    run(scenario())


def test_close_closes_the_idle_connections(run: Runner) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": response(b"x")})) as server:
            async with native() as t:
                await fetch(t, server.url())
                assert server.closed == 0
            await server.until(lambda: server.closed == 1, "the idle connection closed")

    run(scenario())


# --- bodies -------------------------------------------------------------------------------------------------------

BODY_CASES: dict[str, tuple[bytes, bool]] = {  # the answer, and whether the connection can be reused after it
    "content-length": (response(PAYLOAD), True),
    "chunked": (
        response(
            chunked([PAYLOAD[:1], PAYLOAD[1:27], PAYLOAD[27:4123], PAYLOAD[4123:]], ["X-Trailer: t", "X-More: u"]),
            headers=[("Transfer-Encoding", "chunked")],
            length=False,
        ),
        True,
    ),
    "gzip": (response(gzip.compress(PAYLOAD), headers=[("Content-Encoding", "gzip")]), True),
    "deflate": (response(zlib.compress(PAYLOAD), headers=[("Content-Encoding", "deflate")]), True),
    "deflate-raw": (  # without the zlib wrapper, as some servers send it
        response(zlib.compress(PAYLOAD, wbits=-15), headers=[("Content-Encoding", "deflate")]),
        True,
    ),
    "gzip-chunked": (
        response(
            chunked([gzip.compress(PAYLOAD)[:100], gzip.compress(PAYLOAD)[100:]]),
            headers=[("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")],
            length=False,
        ),
        True,
    ),
    "gzip-two-members": (  # RFC 1952: members one after another, as `cat a.gz b.gz` makes
        response(gzip.compress(PAYLOAD[:9000]) + gzip.compress(PAYLOAD[9000:]), headers=[("Content-Encoding", "gzip")]),
        True,
    ),
    "gzip-a-member-per-chunk": (
        response(
            chunked([gzip.compress(PAYLOAD[i : i + 3000]) for i in range(0, len(PAYLOAD), 3000)]),
            headers=[("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")],
            length=False,
        ),
        True,
    ),
    "http/1.0-until-close": (
        response(PAYLOAD, headers=[("Content-Type", "application/octet-stream")], length=False, version="HTTP/1.0"),
        False,
    ),
    "http/1.1-until-close": (response(PAYLOAD, length=False), False),
}


@pytest.mark.parametrize("case", list(BODY_CASES))
def test_bodies_arrive_exactly(run: Runner, case: str) -> None:
    data, reusable = BODY_CASES[case]

    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            for i in range(0, len(data), 5000):  # in pieces, so the framing is parsed across reads
                writer.write(data[i : i + 5000])
                await writer.drain()
            return reusable

        async with serving(answer) as server, native() as t:
            for _ in range(2):
                assert await fetch(t, server.url()) == (200, PAYLOAD, False)
            assert server.connections == (1 if reusable else 2)

    run(scenario())


LARGE = bytes(range(253)) * 12_000  # 3 MB: more than the socket buffers hold, so reading is paused and resumed


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_large_body_is_read_whole(run: Runner, framing: str) -> None:
    if framing == "chunked":
        data = response(chunked([LARGE[i : i + 300_000] for i in range(0, len(LARGE), 300_000)]),
                        headers=[("Transfer-Encoding", "chunked")], length=False)
    else:
        data = response(LARGE)

    async def scenario() -> None:
        async with serving(canned({"*": data})) as server, native() as t:
            for _ in range(2):
                assert await fetch(t, server.url()) == (200, LARGE, False)
            assert server.connections == 1

    run(scenario())


@functools.cache
def zeros_gzip(size: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [z.compress(block) for _ in range(size >> 20)]
    parts.append(z.flush())
    return b"".join(parts)


def test_a_body_in_an_encoding_not_asked_for_is_a_bad_response_not_text(run: Runner) -> None:
    # it asks for gzip and deflate only: a zstd or br body read as it is would be a page of noise with no links
    async def scenario() -> None:
        routes = {"/z": response(b"(\xb5/\xfd garbage", headers=[("Content-Encoding", "zstd")]),
                  "/id": response(b"plain", headers=[("Content-Encoding", "identity")]), "*": response(b"after")}
        async with serving(canned(routes)) as server, native() as t:
            with pytest.raises(NetworkError, match="body in 'zstd' encoding, which was not asked for"):
                await fetch(t, server.url("/z"))
            assert await fetch(t, server.url("/id")) == (200, b"plain", False)
            assert await fetch(t, server.url("/next")) == (200, b"after", False)

    run(scenario())


def test_a_compression_bomb_is_cut_at_the_limit(run: Runner) -> None:
    bomb = zeros_gzip(50 << 20)
    assert len(bomb) < 1 << 20

    async def scenario() -> None:
        routes = {"/bomb": response(bomb, headers=[("Content-Encoding", "gzip")]), "*": response(b"after")}
        async with serving(canned(routes)) as server, native() as t:
            status, body, truncated = await fetch(t, server.url("/bomb"), limit=1_000_000)
            assert (status, len(body), truncated) == (200, 1_000_000, True)
            assert body == bytes(1_000_000)
            assert await fetch(t, server.url("/next")) == (200, b"after", False)

    run(scenario())


def test_a_body_past_the_limit_is_cut_and_the_next_request_works(run: Runner) -> None:
    big = bytes(range(251)) * 8356  # 2 MB, a pattern a cut in the wrong place would show

    async def scenario() -> None:
        async with serving(canned({"/big": response(big), "*": response(b"small")})) as server, native() as t:
            assert await fetch(t, server.url("/big"), limit=100_000) == (200, big[:100_000], True)
            assert await fetch(t, server.url("/small")) == (200, b"small", False)
            assert server.connections == 2  # the cut connection was not reused

    run(scenario())


def test_a_limit_equal_to_the_body_is_no_truncation(run: Runner) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": response(PAYLOAD)})) as server, native() as t:
            assert await fetch(t, server.url(), limit=len(PAYLOAD)) == (200, PAYLOAD, False)
            assert await fetch(t, server.url(), limit=len(PAYLOAD) - 1) == (200, PAYLOAD[:-1], True)

    run(scenario())


# --- answers without a body ---------------------------------------------------------------------------------------


def test_head_answer_has_no_body_whatever_its_content_length(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.method == "HEAD":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nContent-Type: text/html\r\n\r\n")
            else:
                writer.write(response(b"the body"))
            return True

        async with serving(answer) as server, native() as t:
            hop = await t.send("HEAD", server.url(), None)
            assert hop.status == 200
            assert hop.headers.get("Content-Length") == "5000"
            await hop.discard()
            hop = await t.send("HEAD", server.url(), None)
            assert await hop.read(10_000) == (b"", False)
            assert await fetch(t, server.url()) == (200, b"the body", False)
            assert server.connections == 1
            assert [s.method for s in server.requests] == ["HEAD", "HEAD", "GET"]

    run(scenario())


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n",
    ],
    ids=["204", "304", "304-with-content-length"],
)
def test_bodiless_statuses_do_not_hang_and_keep_the_connection(run: Runner, head: bytes) -> None:
    status = int(head.split(b" ")[1])

    async def scenario() -> None:
        async with serving(canned({"/empty": head, "*": response(b"next")})) as server, native() as t:
            assert await fetch(t, server.url("/empty")) == (status, b"", False)
            hop = await t.send("GET", server.url("/empty"), None)
            assert hop.status == status
            await hop.discard()
            assert await fetch(t, server.url("/full")) == (200, b"next", False)
            assert server.connections == 1

    run(scenario())


@pytest.mark.parametrize(
    "interim",
    [
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.js>; rel=preload\r\n\r\n",
    ],
    ids=["103", "100-then-103"],
)
def test_interim_answers_are_skipped(run: Runner, interim: bytes) -> None:
    async def scenario() -> None:
        answer = interim + response(b"final", headers=[("Content-Type", "text/plain")])
        async with serving(canned({"*": answer})) as server, native() as t:
            hop = await t.send("GET", server.url(), None)
            assert hop.status == 200
            assert hop.headers.get("Content-Type") == "text/plain"
            assert hop.headers.get("Link") is None  # the interim answer's headers aren't the final one's
            assert await hop.read(1000) == (b"final", False)
            assert await fetch(t, server.url()) == (200, b"final", False)
            assert server.connections == 1

    run(scenario())


# --- connections the server closes --------------------------------------------------------------------------------


def test_an_idle_connection_the_server_closed_is_replaced(run: Runner) -> None:
    async def scenario() -> None:
        # no Connection: close: the server answers, then just closes its socket
        async with serving(canned({"*": response(b"once")}, keep=False)) as server, native() as t:
            assert await fetch(t, server.url()) == (200, b"once", False)
            await server.until(lambda: server.closed == 1, "its own close")
            assert await fetch(t, server.url()) == (200, b"once", False)
            assert server.connections == 2

    run(scenario())


def test_a_reused_connection_closed_before_the_answer_is_retried_once(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.conn == 0 and len(server.requests) > 1:
                return False  # the second request on the first connection: closed without a byte
            writer.write(response(f"{seen.conn}".encode()))
            return True

        async with serving(answer) as server, native() as t:
            assert await fetch(t, server.url()) == (200, b"0", False)
            assert await fetch(t, server.url()) == (200, b"1", False)
            assert [s.conn for s in server.requests] == [0, 0, 1]
            assert server.connections == 2

    run(scenario())


def test_the_retry_happens_once_only(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if len(server.requests) > 1:
                return False  # every request after the first: closed without a byte
            writer.write(response(b"first"))
            return True

        async with serving(answer) as server, native() as t:
            assert await fetch(t, server.url()) == (200, b"first", False)
            with pytest.raises(NetworkError) as e:
                await fetch(t, server.url())
            assert e.value.transient
            assert [s.conn for s in server.requests] == [0, 0, 1]
            assert server.connections == 2

    run(scenario())


def test_a_new_connection_closed_before_the_answer_is_a_transient_error(run: Runner) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": b""}, keep=False)) as server, native() as t:
            with pytest.raises(NetworkError) as e:
                await fetch(t, server.url())
            assert e.value.transient
            assert server.requests[0].line == "GET / HTTP/1.1"

    run(scenario())


@pytest.mark.parametrize(
    "answer",
    [
        response(b"bye", headers=[("Connection", "close")]),
        response(b"bye", headers=[("Connection", "Close")]),
        response(b"bye", version="HTTP/1.0"),  # HTTP/1.0 without keep-alive: closed after the answer
    ],
    ids=["close", "Close", "http/1.0"],
)
def test_connection_close_is_honoured_even_if_the_server_keeps_the_socket(run: Runner, answer: bytes) -> None:
    async def scenario() -> None:
        # the server would read another request on that connection: only the header says not to send one
        async with serving(canned({"*": answer})) as server, native() as t:
            assert await fetch(t, server.url()) == (200, b"bye", False)
            assert await fetch(t, server.url()) == (200, b"bye", False)
            assert server.connections == 2
            assert [s.conn for s in server.requests] == [0, 1]

    run(scenario())


# --- errors -------------------------------------------------------------------------------------------------------


def test_a_refused_connection_is_a_permanent_error(run: Runner) -> None:
    async def scenario() -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        async with native() as t:
            with pytest.raises(NetworkError) as e:
                await t.send("GET", f"http://127.0.0.1:{port}/", None)
        assert e.value.reason.startswith("connection failed"), e.value.reason
        assert not e.value.transient

    run(scenario())


HUGE_HEADS: dict[str, tuple[bytes, bytes]] = {  # the start of the head, then what is sent again and again
    "one-endless-line": (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Big: ", b"x" * 65536),
    "endless-lines": (b"HTTP/1.1 200 OK\r\n", b"".join(b"X-Filler-%05d: %s\r\n" % (i, b"y" * 50) for i in range(1000))),
    "endless-status-line": (b"HTTP/1.1 200 ", b"O" * 65536),
}


@pytest.mark.parametrize("case", list(HUGE_HEADS))
def test_an_endless_head_is_a_bad_response(run: Runner, case: str) -> None:
    start, again = HUGE_HEADS[case]

    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(start)
            for _ in range((16 << 20) // len(again)):  # 16 MB at most, then the server waits
                writer.write(again)
                await writer.drain()
            await server.hold()
            return False

        async with serving(answer) as server, native() as t:
            with pytest.raises(NetworkError) as e:
                await t.send("GET", server.url(), None)
            assert e.value.reason.startswith("bad response"), e.value.reason
            assert not e.value.transient

    run(scenario())


@pytest.mark.parametrize(
    "status_line",
    ["HTTX/1.1 200 OK", "HTTP/1.1 abc OK", "HTTP/1.1 20 OK", "hello"],
)
def test_a_malformed_status_line_is_a_bad_response(run: Runner, status_line: str) -> None:
    async def scenario() -> None:
        answer = status_line.encode() + b"\r\nContent-Length: 2\r\n\r\nok"
        async with serving(canned({"*": answer})) as server, native() as t:
            with pytest.raises(NetworkError) as e:
                await fetch(t, server.url())
            assert e.value.reason.startswith("bad response"), e.value.reason
            assert not e.value.transient

    run(scenario())


BAD_FRAMING: dict[str, bytes] = {
    "header-line-without-colon": b"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 2\r\n\r\nok",
    "content-length-not-a-number": b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nok",
    "chunk-size-not-hex": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
    "gzip-that-is-not": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 11\r\n\r\nnot gzipped",
}


@pytest.mark.parametrize("case", list(BAD_FRAMING))
def test_malformed_framing_is_a_bad_response(run: Runner, case: str) -> None:
    async def scenario() -> None:
        async with serving(canned({"*": BAD_FRAMING[case]})) as server, native() as t:
            with pytest.raises(NetworkError) as e:
                await fetch(t, server.url())  # in send() or in read(): either is an answer that can't be read
            assert e.value.reason.startswith("bad response"), e.value.reason
            assert not e.value.transient

    run(scenario())


def test_a_stalled_body_times_out_and_the_next_request_works(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.path == "/stall":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nx")
                await writer.drain()
                await server.hold()
            writer.write(response(b"fine"))
            return True

        async with serving(answer) as server, native(timeout=0.3) as t:
            hop = await t.send("GET", server.url("/stall"), None)
            assert hop.status == 200
            with pytest.raises(TimeoutError):
                await hop.read(1000)
            hop.close()
            assert await fetch(t, server.url("/ok")) == (200, b"fine", False)
            assert server.connections == 2

    run(scenario())


def test_a_dripping_body_times_out_as_a_whole(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(100_000):  # a byte every 50 ms: each read is quick, the whole never ends
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(0.05)
            return True

        async with serving(answer) as server, native(timeout=0.3) as t:
            with pytest.raises(TimeoutError):
                await fetch(t, server.url())

    run(scenario())


def test_a_head_that_never_comes_times_out(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            await server.hold()
            return False

        async with serving(answer) as server, native(timeout=0.3) as t:
            with pytest.raises(TimeoutError):
                await t.send("GET", server.url(), None)
            assert len(server.requests) == 1

    run(scenario())


def test_a_server_closing_mid_body_is_a_transient_error(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
            return False  # FIN after 100 of the 1000 bytes

        async with serving(answer) as server, native() as t:
            hop = await t.send("GET", server.url(), None)
            assert hop.status == 200
            with pytest.raises(NetworkError) as e:
                await hop.read(10_000)
            hop.close()
            assert e.value.transient

    run(scenario())


def test_a_server_closing_mid_chunked_body_is_a_transient_error(run: Runner) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n100\r\nxxxx")
            return False  # FIN inside the second chunk

        async with serving(answer) as server, native() as t:
            hop = await t.send("GET", server.url(), None)
            assert hop.status == 200
            with pytest.raises(NetworkError) as e:
                await hop.read(10_000)
            hop.close()
            assert e.value.transient

    run(scenario())


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",  # a reset before the length is reached
        b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n",  # a body ending at the close: a reset (RST) cuts it
    ],
    ids=["content-length", "close-delimited"],
)
def test_a_server_resetting_mid_body_is_a_transient_error(run: Runner, head: bytes) -> None:
    async def scenario() -> None:
        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(head + b"x" * 100)
            await writer.drain()
            await asyncio.sleep(0.1)  # (no assertion on time: only lets the head go first, most often)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()  # RST
            return False

        async with serving(answer) as server, native() as t:
            with pytest.raises(NetworkError) as e:
                await fetch(t, server.url())  # a reset may cost the unread head too: send() may raise it
            assert e.value.transient

    run(scenario())


# --- framing and headers ------------------------------------------------------------------------------------------


def test_chunked_wins_over_content_length(run: Runner) -> None:
    async def scenario() -> None:
        answer = response(
            chunked([b"hello ", b"world"]),
            headers=[("Content-Length", "3"), ("Transfer-Encoding", "chunked")],
            length=False,
        )
        async with serving(canned({"*": answer})) as server, native() as t:
            assert await fetch(t, server.url()) == (200, b"hello world", False)
            assert await fetch(t, server.url()) == (200, b"hello world", False)  # the connection wasn't left astray

    run(scenario())


def test_response_headers(run: Runner) -> None:
    async def scenario() -> None:
        answer = response(
            b"x",
            headers=[
                ("content-TYPE", "text/html; charset=utf-8"),
                ("Set-Cookie", "a=1"),
                ("X-A", "1"),
                ("set-cookie", "b=2; Path=/"),
                ("x-a", "2"),
                ("Set-Cookie", "c=3; Expires=Wed, 21 Oct 2015 07:28:00 GMT"),
            ],
        )
        async with serving(canned({"*": answer})) as server, native() as t:
            hop = await t.send("GET", server.url(), None)
            try:
                assert hop.set_cookies() == ["a=1", "b=2; Path=/", "c=3; Expires=Wed, 21 Oct 2015 07:28:00 GMT"]
                for name in ("content-type", "Content-Type", "CONTENT-TYPE"):
                    assert hop.headers.get(name) == "text/html; charset=utf-8"
                assert hop.headers.get("X-A") == "1, 2"
                assert hop.headers.get("x-missing") is None
            finally:
                await hop.discard()

    run(scenario())


def test_request_headers(run: Runner) -> None:
    async def scenario() -> None:
        configured = {"X-Opt": "o", "Authorization": "Bearer secret", "Cookie": "c=1"}
        async with serving(canned({"*": response(b"x")})) as server, native(headers=configured) as t:
            await fetch(t, server.url("/one"), headers={"X-Req": "r", "Accept": "text/html"})
            await fetch(t, server.url("/two"), headers={"Authorization": "Basic dTpw"})
        one, two = server.requests
        for seen in (one, two):
            assert seen.all("Host") == [f"127.0.0.1:{server.port}"]
            assert seen.all("User-Agent") == ["lh-test"]
            encodings = [e.strip() for v in seen.all("Accept-Encoding") for e in v.split(",")]
            assert sorted(encodings) == ["deflate", "gzip"]
            assert seen.all("X-Opt") == ["o"]
            assert seen.all("Cookie") == []  # credentials in options.headers are the client's business
        assert one.all("X-Req") == ["r"] and one.all("Accept") == ["text/html"]
        assert one.all("Authorization") == []
        assert two.all("Authorization") == ["Basic dTpw"]  # given to send(): sent
        assert two.all("X-Req") == []

    run(scenario())


def test_a_configured_header_replaces_a_default_whatever_its_case(run: Runner) -> None:
    # --header "accept: text/html": before, the default Accept went too (two Accept lines)
    async def scenario() -> None:
        configured = {"accept": "text/html", "ACCEPT-ENCODING": "gzip"}
        async with serving(canned({"*": response(b"x")})) as server, native(headers=configured) as t:
            await fetch(t, server.url("/one"))
        (seen,) = server.requests
        assert seen.all("Accept") == ["text/html"]
        assert seen.all("Accept-Encoding") == ["gzip"]

    run(scenario())


# --- discard ------------------------------------------------------------------------------------------------------

DISCARDS: dict[str, tuple[bytes, int]] = {  # the answer, and the connections two requests take after discard()
    "small-content-length": (response(b"d" * 1024), 1),
    "large-content-length": (response(b"D" * 1_000_000), 2),
    "small-chunked": (
        response(
            chunked([b"c" * 500, b"C" * 524], ["X-T: 1"]), headers=[("Transfer-Encoding", "chunked")], length=False
        ),
        1,
    ),
    "large-chunked": (
        response(chunked([b"c" * 100_000] * 10), headers=[("Transfer-Encoding", "chunked")], length=False),
        2,
    ),
}


@pytest.mark.parametrize("case", list(DISCARDS))
def test_discard_drains_small_bodies_and_closes_on_large_ones(run: Runner, case: str) -> None:
    data, connections = DISCARDS[case]
    assert (len(data) < DRAIN_LIMIT) == (connections == 1)

    async def scenario() -> None:
        async with serving(canned({"/drop": data, "*": response(b"next")})) as server, native() as t:
            hop = await t.send("GET", server.url("/drop"), None)
            assert hop.status == 200
            await hop.discard()
            assert await fetch(t, server.url("/read")) == (200, b"next", False)
            assert server.connections == connections

    run(scenario())


# --- cancellation -------------------------------------------------------------------------------------------------


def test_a_request_cancelled_while_waiting_for_the_head_leaves_its_connection(run: Runner) -> None:
    async def scenario() -> None:
        release = asyncio.Event()

        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.path == "/held":
                await server.hold(release)
            writer.write(response(seen.path.encode()))
            return True

        # (a timeout past the bound: only the transport's own closing, not its deadline, can end the connection)
        async with serving(answer) as server, native(timeout=3 * BOUND) as t:
            assert await fetch(t, server.url("/first")) == (200, b"/first", False)  # a connection in the pool
            task = asyncio.create_task(t.send("GET", server.url("/held"), None))
            await server.until(lambda: len(server.requests) == 2, "the held request")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            assert task.cancelled()
            release.set()  # the held answer comes, late, on the first connection: it must not be read as the next
            assert await fetch(t, server.url("/next")) == (200, b"/next", False)
            assert server.connections == 2
            assert [s.conn for s in server.requests] == [0, 0, 1]
            await server.until(lambda: server.closed == 1, "the abandoned connection closed")

    run(scenario())


def test_a_read_cancelled_mid_body_leaves_its_connection(run: Runner) -> None:
    async def scenario() -> None:
        release = asyncio.Event()

        async def answer(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.path == "/held":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
                await writer.drain()
                await server.hold(release)
                writer.write(b"-rest")  # the first answer's tail
            writer.write(response(seen.path.encode()))
            return True

        async def read_held() -> None:
            await fetch(t, server.url("/held"))  # closes its hop when cancelled, as the client does

        async with serving(answer) as server, native(timeout=3 * BOUND) as t:
            task = asyncio.create_task(read_held())
            await server.until(lambda: len(server.requests) == 1, "the held request")
            await asyncio.sleep(0.05)  # (no assertion on time: lets the head be read, most often)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            release.set()
            assert await fetch(t, server.url("/next")) == (200, b"/next", False)
            assert server.connections == 2
            assert [s.conn for s in server.requests] == [0, 1]
            await server.until(lambda: server.closed == 1, "the abandoned connection closed")

    run(scenario())


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length:  5 \r\nETag: \"a:b\"\r",
         {"server": "x", "content-length": "5", "etag": '"a:b"'}),
        ("HTTP/1.1 200 OK\nX-A: 1\nx-a: 2\nX-B: b", {"x-a": "1, 2", "x-b": "b"}),  # bare LFs; a header repeated
        ("HTTP/1.1 301 Moved\r\nLocation: /a\r\nX-Long: one\r\n  two\r\n\tthree\r",  # obsolete folded lines
         {"location": "/a", "x-long": "one two three"}),
        ("HTTP/1.0 404 Not Found\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX: y\r",
         {"set-cookie": "a=1, b=2", "x": "y"}),
        # a header of one value sent twice: the first, as the other clients read it
        ("HTTP/1.1 301 Moved\r\nContent-Type: text/html\r\ncontent-type: text/plain\r\nLocation: /a\r\n"
         "Location: /a\r", {"content-type": "text/html", "location": "/a"}),
    ],
)
def test_a_head_is_read_in_one_pass_or_line_by_line_to_the_same_headers(head: str, expected: dict[str, str]) -> None:
    status, version, headers = _parse_head(head)
    assert (status, version) == (int(head[9:12]), head[5:8])
    assert headers.map == expected
    assert headers.cookies == (["a=1", "b=2"] if "ookie" in head else [])


def test_a_head_line_with_no_colon_is_a_bad_answer() -> None:
    with pytest.raises(NetworkError, match="header line 'no colon here'"):
        _parse_head("HTTP/1.1 200 OK\r\nX: 1\r\nno colon here\r\nY: 2\r")
