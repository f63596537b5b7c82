"""The reqwest transport (pyreqwest: Rust's reqwest and hyper under a Python API): about a third of aiohttp's CPU
per request. Redirects, cookies and credentials stay with the client; reqwest only sends one request at a time."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from datetime import timedelta

from pyreqwest import exceptions as rq
from pyreqwest.client import Client, ClientBuilder
from pyreqwest.http import HeaderMap
from pyreqwest.proxy import ProxyBuilder
from pyreqwest.request import StreamRequest
from pyreqwest.response import Response as RqResponse

from .body_decoder import ACCEPT_ENCODING, decoder_for
from .transport import DRAIN_LIMIT, ClientOptions, NetworkError, once_more_if_stale

_CHUNK = 256 * 1024


class ReqwestHop:
    __slots__ = ("_request", "_resp", "_closed", "_bodiless")

    def __init__(self, request: StreamRequest | None, resp: RqResponse, bodiless: bool) -> None:
        # the streamed request: leaving its context releases the connection (None: a HEAD, already complete)
        self._request = request
        self._resp = resp
        self._closed = False
        self._bodiless = bodiless  # the answer to a HEAD: nothing to drain, whatever Content-Length says

    @property
    def status(self) -> int:
        return self._resp.status

    @property
    def headers(self) -> HeaderMap:
        return self._resp.headers

    def set_cookies(self) -> list[str]:
        return self._resp.headers.getall("set-cookie")

    async def read(self, limit: int) -> tuple[bytes, bool]:
        # The cap counts decompressed bytes, so a compression bomb stops at the limit too. A BytesIO hands
        # its buffer over without a copy: the body costs its size once, not twice as a joined list would.
        if self._bodiless:
            return b"", False
        decoder = decoder_for(self._resp.headers)
        reader = self._resp.body_reader
        body = io.BytesIO()
        try:
            while (chunk := await reader.read(_CHUNK)) is not None:
                data = chunk.to_bytes()
                room = limit - body.tell()
                if decoder is not None:
                    data = decoder.decode(data, room + 1)
                if len(data) > room:
                    body.write(data[:room])
                    return body.getvalue(), True
                body.write(data)
        except rq.RequestError as e:
            raise _timeout_or_network(e) from None
        finally:
            await self._release()
        return body.getvalue(), False

    async def discard(self) -> None:
        if self._bodiless:  # a HEAD's answer, complete: nothing to drain and no context to leave
            self._closed = True
            return
        length = self._resp.headers.get("content-length")
        try:
            if length is not None and length.isdigit() and int(length) <= DRAIN_LIMIT:
                await self._resp.body_reader.bytes()  # drained, the connection goes back to the pool
        except rq.RequestError as e:
            raise _timeout_or_network(e) from None
        finally:
            await self._release()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._request = None  # dropped unread: hyper closes the connection

    async def _release(self) -> None:
        if not self._closed:
            self._closed = True
            if self._request is not None:
                await self._request.__aexit__(None, None, None)


class ReqwestTransport:
    def __init__(self, options: ClientOptions, proxy_for: Callable[[str], str | None] | None) -> None:
        self._options = options
        self._proxy_for = proxy_for
        self._client: Client | None = None
        self._unpooled: Client | None = None  # (made on first need: see send)
        self._answered: set[str] = set()  # origins that answered: a connection to them may be kept

    async def open(self) -> None:
        self._client = self._build(self._options.max_connections)

    def _build(self, idle_per_host: int) -> Client:
        o = self._options
        # gzip and deflate are undone by linkhound's decoder, as on the other stacks (reqwest's reads one gzip
        # member of several, and calls a stream that stops short a reset); zstd and br by reqwest
        headers = dict(o.plain_headers)
        if not any(k.lower() == "accept-encoding" for k in headers):
            headers["Accept-Encoding"] = f"{ACCEPT_ENCODING}, br, zstd"
        builder = (
            ClientBuilder()
            .follow_redirects(False)
            .referer(False)
            .gzip(False)
            .deflate(False)
            .default_headers(headers)
            .timeout(timedelta(seconds=o.timeout))
            .danger_accept_invalid_certs(o.insecure)
            .pool_max_idle_per_host(idle_per_host)
            .no_proxy()
        )
        proxy_for = self._proxy_for
        if proxy_for is not None:
            builder = builder.proxy(ProxyBuilder.custom(lambda url: proxy_for(str(url))))
        return builder.build()

    async def close(self) -> None:
        for client in (self._client, self._unpooled):
            if client is not None:
                await client.close()
        self._client = self._unpooled = None

    async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> ReqwestHop:
        client = self._client
        assert client is not None, "transport used before open()"
        return await once_more_if_stale(url, self._answered, lambda: self._send(client, method, url, headers),
                                        lambda: self._send(self._unpooled_client(), method, url, headers))

    def _unpooled_client(self) -> Client:
        if self._unpooled is None:
            self._unpooled = self._build(0)
        return self._unpooled

    async def _send(self, client: Client, method: str, url: str, headers: Mapping[str, str] | None) -> ReqwestHop:
        try:
            builder = client.request(method, url)
            if headers:
                builder = builder.headers(dict(headers.items()))
            if method == "HEAD":  # no body to stream: one round trip through the runtime, not two
                return ReqwestHop(None, await builder.build().send(), bodiless=True)
            request = builder.build_streamed()
            resp = await request.__aenter__()
        except rq.RequestError as e:
            raise _timeout_or_network(e) from None
        except ValueError as e:  # the URL (or a header) that reqwest won't send
            raise NetworkError(f"invalid URL: {e}", transient=False) from None
        return ReqwestHop(request, resp, bodiless=False)


def _timeout_or_network(e: rq.RequestError) -> Exception:
    if isinstance(e, TimeoutError):
        return e
    return network_error(e)


def network_error(e: rq.RequestError) -> NetworkError:
    """One clear line for a reqwest failure, from its chain of causes, and whether it is worth asking again."""
    causes = [c["message"] for c in (e.details.get("causes") or [])]
    lowered = [c.lower() for c in causes]
    last = causes[-1] if causes else e.message
    if any("dns error" in c for c in lowered):
        return NetworkError("DNS lookup failed", transient=False)
    if any("certificate" in c or "tls" in c for c in lowered):
        return NetworkError(f"TLS error: {last}", transient=False)
    if any("connection reset" in c for c in lowered):  # (also as a ConnectError: reset as the request went)
        return NetworkError("connection reset", transient=True)
    if isinstance(e, rq.ConnectError):
        return NetworkError(f"connection failed: {_strip_os_error(last)}", transient=False)
    if isinstance(e, rq.ReadError | rq.WriteError):
        return NetworkError("connection reset", transient=True)
    if any("connection closed" in c or "incomplete message" in c for c in lowered):
        return NetworkError("server closed the connection", transient=True)
    if isinstance(e, rq.DecodeError):
        return NetworkError(f"bad response: {last}", transient=False)
    if isinstance(e, rq.NetworkError):
        return NetworkError(f"connection failed: {_strip_os_error(last)}", transient=True)
    return NetworkError(f"bad response: {last}", transient=False)


def _strip_os_error(message: str) -> str:
    """'Connection refused (os error 111)' -> 'Connection refused'."""
    head, sep, _ = message.rpartition(" (os error ")
    return head if sep else message
