"""The aiohttp transport: one ClientSession, the address filter in its resolver, aiohttp's errors as NetworkError."""

from __future__ import annotations

import io
import socket
import ssl
from collections.abc import Callable, Mapping

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from multidict import CIMultiDictProxy

from .body_decoder import ACCEPT_ENCODING, decoder_for
from .filters import AddressExcluded, AddressFilter, parse_ip
from .transport import DRAIN_LIMIT, ClientOptions, NetworkError, once_more_if_stale


class ExcludingResolver(AbstractResolver):
    """The default resolver, minus the addresses the filter excludes; AddressExcluded when none is left.

    Proxies named in the environment are exempt: a proxy on a private address is still a proxy.
    """

    def __init__(self, addresses: AddressFilter, exempt: frozenset[str] = frozenset()) -> None:
        self._inner = DefaultResolver()
        self._addresses = addresses
        self._exempt = exempt

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if host.lower().rstrip(".") in self._exempt:
            return found
        kept, first = [], None
        for r in found:
            ip = parse_ip(r["host"])
            kind = self._addresses.excluded_kind(ip) if ip is not None else None
            if kind is None:
                kept.append(r)
            elif first is None:
                first = AddressExcluded(host, kind, str(ip), literal=False)
        if not kept and first is not None:
            raise first
        return kept

    async def close(self) -> None:
        await self._inner.close()


class AiohttpHop:
    __slots__ = ("_resp",)

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._resp = resp

    @property
    def status(self) -> int:
        return self._resp.status

    @property
    def headers(self) -> CIMultiDictProxy[str]:
        return self._resp.headers

    def set_cookies(self) -> list[str]:
        return self._resp.headers.getall("Set-Cookie", [])

    async def read(self, limit: int) -> tuple[bytes, bool]:
        # The cap counts decompressed bytes, so a compression bomb stops at the limit too. A BytesIO hands
        # its buffer over without a copy: the body costs its size once, not twice as a joined list would.
        resp = self._resp
        decoder = decoder_for(resp.headers)
        body = io.BytesIO()
        try:
            async for chunk in resp.content.iter_chunked(256 * 1024):
                room = limit - body.tell()
                if decoder is not None:
                    chunk = decoder.decode(chunk, room + 1)
                if len(chunk) > room:
                    body.write(chunk[:room])
                    resp.close()
                    return body.getvalue(), True
                body.write(chunk)
        except TimeoutError:
            raise
        except (aiohttp.ClientError, OSError) as e:  # a reset mid-body
            raise network_error(e) from None
        resp.release()
        return body.getvalue(), False

    async def discard(self) -> None:
        resp = self._resp
        length = resp.content_length
        try:
            if resp.method != "HEAD" and length is not None and length <= DRAIN_LIMIT:
                await resp.read()
                resp.release()
            elif resp.method == "HEAD" or length == 0:
                resp.release()
            else:
                resp.close()
        except TimeoutError:
            raise
        except (aiohttp.ClientError, OSError) as e:  # a reset mid-body
            raise network_error(e) from None

    def close(self) -> None:
        self._resp.close()


class AiohttpTransport:
    def __init__(
        self, options: ClientOptions, proxy_for: Callable[[str], str | None] | None, proxy_hosts: frozenset[str]
    ) -> None:
        self._options = options
        self._proxy_for = proxy_for
        self._proxy_hosts = proxy_hosts
        self._session: aiohttp.ClientSession | None = None
        self._unpooled: aiohttp.ClientSession | None = None  # (made on first need: see send)
        self._answered: set[str] = set()  # origins that answered: a connection to them may be kept
        self._resolver: AbstractResolver | None = None

    async def open(self) -> None:
        if self._options.addresses.active:
            self._resolver = ExcludingResolver(self._options.addresses, self._proxy_hosts)
        self._session = self._make_session(pooled=True)

    def _make_session(self, pooled: bool) -> aiohttp.ClientSession:
        o = self._options
        connector = aiohttp.TCPConnector(
            limit=o.max_connections,
            limit_per_host=0,  # the HostPool caps each host
            ttl_dns_cache=300,
            ssl=False if o.insecure else ssl.create_default_context(),
            resolver=self._resolver,
            force_close=not pooled,
        )
        # gzip and deflate are undone by linkhound's decoder, as on the other stacks: aiohttp's own, by version,
        # reads one gzip member of several, or many small ones in quadratic time (before 3.14.4), and fails a
        # body with bytes after its last member as a reset
        headers = dict(o.plain_headers)
        if not any(k.lower() == "accept-encoding" for k in headers):
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=o.timeout),
            headers=headers,
            auto_decompress=False,
            trust_env=False,  # proxies are read once, by the client: aiohttp would re-read them per request
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies are decided per hop, by the client
            max_field_size=16 * 1024,
        )
        # aiohttp (3.11 on) sends a request again once when its connection drops, on whatever connection the
        # pool gives, maybe another stale one; send() asks again on a new one instead: twice in all, not four
        if hasattr(session, "_retry_connection"):
            session._retry_connection = False
        return session

    async def close(self) -> None:
        for session in (self._session, self._unpooled):
            if session is not None:
                await session.close()
        self._session = self._unpooled = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> AiohttpHop:
        session = self._session
        assert session is not None, "transport used before open()"
        return await once_more_if_stale(url, self._answered, lambda: self._send(session, method, url, headers),
                                        lambda: self._send(self._unpooled_session(), method, url, headers))

    def _unpooled_session(self) -> aiohttp.ClientSession:
        if self._unpooled is None:
            self._unpooled = self._make_session(pooled=False)
        return self._unpooled

    async def _send(self, session: aiohttp.ClientSession, method: str, url: str,
                    headers: Mapping[str, str] | None) -> AiohttpHop:
        try:
            resp = await session.request(
                method,
                # already serialized by the WHATWG parser, as a browser sends it: yarl needn't encode it again
                yarl.URL(url, encoded=True),
                allow_redirects=False,
                headers=headers,
                proxy=self._proxy_for(url) if self._proxy_for is not None else None,
            )
        except aiohttp.ClientConnectorError as e:
            if isinstance(e.os_error, AddressExcluded):
                raise e.os_error from None
            raise network_error(e) from None
        except TimeoutError:
            raise
        except (aiohttp.ClientError, OSError, ValueError) as e:
            raise network_error(e) from None
        return AiohttpHop(resp)


def network_error(e: BaseException) -> NetworkError:
    """One clear line for an aiohttp failure, and whether it is worth asking again."""
    if isinstance(e, aiohttp.ClientConnectorDNSError):
        return NetworkError("DNS lookup failed", transient=False)
    if isinstance(e, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return NetworkError(f"TLS error: {e}", transient=False)
    if isinstance(e, aiohttp.ClientConnectorError):
        return NetworkError(f"connection failed: {e.os_error.strerror or e.os_error}", transient=False)
    if isinstance(e, aiohttp.ServerDisconnectedError):
        return NetworkError("server closed the connection", transient=True)
    if isinstance(e, aiohttp.ClientPayloadError):
        return NetworkError("connection reset while reading the body", transient=True)
    if isinstance(e, aiohttp.ClientResponseError):
        return NetworkError(f"bad response: {e.message}", transient=False)
    if isinstance(e, aiohttp.ClientOSError | ConnectionResetError):
        return NetworkError("connection reset", transient=True)
    if isinstance(e, aiohttp.InvalidURL | ValueError):
        return NetworkError(f"invalid URL: {e}", transient=False)
    return NetworkError(f"{type(e).__name__}: {e}", transient=False)
