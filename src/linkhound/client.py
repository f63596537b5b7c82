"""The HTTP stack of a run, composed once: one pooled aiohttp session, timeouts, manual redirects, body caps."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from multidict import CIMultiDictProxy

from .urls import host_of, hostname_of, resolve

# Read and drop bodies up to this size to keep the connection alive; larger ones close it.
_DRAIN_LIMIT = 64 * 1024


class RedirectError(Exception):
    """A redirect chain that can't be followed (loop, too many hops, bad Location)."""

    def __init__(self, reason: str, chain: tuple[str, ...]) -> None:
        super().__init__(reason)
        self.chain = chain


@dataclass(frozen=True, slots=True)
class Response:
    url: str  # final URL after redirects
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes | None  # None when the body wasn't wanted
    redirects: tuple[str, ...]  # every URL after the first
    truncated: bool = False  # the body went past max_body_size and was cut

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


@dataclass(frozen=True, slots=True)
class ClientOptions:
    max_connections: int
    timeout: float
    max_redirects: int
    max_body_size: int
    user_agent: str
    headers: Mapping[str, str]
    insecure: bool = False
    host_headers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # by host[:port] or hostname


class HttpClient:
    """One aiohttp ClientSession for the whole run (connection pooling, keep-alive)."""

    def __init__(self, options: ClientOptions) -> None:
        self._options = options
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> HttpClient:
        o = self._options
        connector = aiohttp.TCPConnector(
            limit=o.max_connections,
            limit_per_host=0,  # the HostPool caps each host
            ttl_dns_cache=300,
            ssl=False if o.insecure else ssl.create_default_context(),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=o.timeout),
            headers={"User-Agent": o.user_agent, **o.headers},
            trust_env=True,
            max_field_size=16 * 1024,
        )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, url: str, method: str, want_body: Callable[[str], bool]) -> Response:
        """Request url, following redirects by hand so every hop is recorded.

        want_body(content_type) decides, once the final headers are in, whether to read the body.
        Raises aiohttp.ClientError, TimeoutError or RedirectError.
        """
        assert self._session is not None, "HttpClient used outside 'async with'"
        chain: list[str] = []
        seen = {url}
        current = url
        while True:
            resp = await self._session.request(
                method, current, allow_redirects=False, headers=self._headers_for(current)
            )
            location = resp.headers.get("Location") if resp.status in (301, 302, 303, 307, 308) else None
            if location is None:
                return await self._finish(resp, tuple(chain), want_body)
            try:
                await self._discard(resp)
            except BaseException:
                resp.close()
                raise
            target = resolve(location, current)
            if target is None:
                raise RedirectError(f"bad redirect Location '{location[:200]}'", tuple(chain))
            target = target.split("#", 1)[0]
            chain.append(target)
            if target in seen:
                raise RedirectError("redirect loop", tuple(chain))
            if len(chain) > self._options.max_redirects:
                raise RedirectError(f"more than {self._options.max_redirects} redirects", tuple(chain))
            seen.add(target)
            if resp.status == 303 and method != "HEAD":
                method = "GET"
            current = target

    def _headers_for(self, url: str) -> Mapping[str, str] | None:
        per_host = self._options.host_headers
        if not per_host:
            return None
        return per_host.get(host_of(url).lower()) or per_host.get(hostname_of(url).lower())

    async def _finish(
        self, resp: aiohttp.ClientResponse, chain: tuple[str, ...], want_body: Callable[[str], bool]
    ) -> Response:
        ctype = resp.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        body: bytes | None = None
        truncated = False
        try:
            if resp.method != "HEAD" and want_body(ctype):
                body, truncated = await self._read_capped(resp)
            else:
                await self._discard(resp)
        except BaseException:
            resp.close()  # a timeout or reset mid-body: the connection can't be reused
            raise
        return Response(str(resp.url), resp.status, resp.headers, body, chain, truncated)

    async def _read_capped(self, resp: aiohttp.ClientResponse) -> tuple[bytes, bool]:
        # The cap counts decompressed bytes, so a compression bomb stops at max_body_size too.
        limit = self._options.max_body_size
        parts: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(256 * 1024):
            size += len(chunk)
            if size > limit:
                parts.append(chunk[: len(chunk) - (size - limit)])
                resp.close()
                return b"".join(parts), True
            parts.append(chunk)
        resp.release()
        return b"".join(parts), False

    @staticmethod
    async def _discard(resp: aiohttp.ClientResponse) -> None:
        length = resp.content_length
        if resp.method != "HEAD" and length is not None and length <= _DRAIN_LIMIT:
            await resp.read()
            resp.release()
        elif resp.method == "HEAD" or length == 0:
            resp.release()
        else:
            resp.close()
