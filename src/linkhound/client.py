"""The HTTP stack of a run, composed once: one pooled aiohttp session, timeouts, manual redirects, body caps."""

from __future__ import annotations

import socket
import ssl
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from multidict import CIMultiDict, CIMultiDictProxy

from .cookies import Cookies
from .filters import AddressExcluded, AddressFilter, parse_ip
from .settings import BasicAuth
from .urls import host_of, hostname_of, resolve

# Read and drop bodies up to this size to keep the connection alive; larger ones close it.
_DRAIN_LIMIT = 64 * 1024
# Headers given with --header that carry credentials: sent to the link's own host, never to a redirect
# target on another host.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


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
    credentials: tuple[BasicAuth, ...] = ()  # --basic-auth, by URL pattern
    cookie_jar: str | None = None  # a Netscape cookies.txt to read at the start and write at the end
    addresses: AddressFilter = field(default_factory=AddressFilter)  # --exclude-private and friends


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


class HttpClient:
    """One aiohttp ClientSession for the whole run (connection pooling, keep-alive)."""

    def __init__(self, options: ClientOptions, known: Callable[[str], bool] | None = None) -> None:
        self._options = options
        self._known = known  # URLs checked on their own: a redirect to one needn't fetch its body again
        self._session: aiohttp.ClientSession | None = None
        self._resolver: AbstractResolver | None = None
        self._cookies = Cookies(options.cookie_jar)
        self._credential_headers = {k: v for k, v in options.headers.items() if k.lower() in _CREDENTIAL_HEADERS}
        # HTTP_PROXY, HTTPS_PROXY and NO_PROXY, read once per run (a thread-pool lookup per request otherwise)
        self._proxies = {k: v for k, v in urllib.request.getproxies_environment().items() if k in ("http", "https")}
        self._no_proxy = urllib.request.getproxies_environment().get("no", "")
        self._proxy_cache: dict[str, str | None] = {}

    async def __aenter__(self) -> HttpClient:
        o = self._options
        self._cookies.load()
        if o.addresses.active:
            self._resolver = ExcludingResolver(o.addresses, _proxy_hosts())
        connector = aiohttp.TCPConnector(
            limit=o.max_connections,
            limit_per_host=0,  # the HostPool caps each host
            ttl_dns_cache=300,
            ssl=False if o.insecure else ssl.create_default_context(),
            resolver=self._resolver,
        )
        plain = {k: v for k, v in o.headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=o.timeout),
            headers={"User-Agent": o.user_agent, **plain},
            trust_env=False,  # proxies are read once, in _proxy_for: aiohttp would re-read them per request
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies are decided per hop, in _headers_for
            max_field_size=16 * 1024,
        )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None
        self._cookies.save()

    async def fetch(self, url: str, method: str, want_body: Callable[[str], bool]) -> Response:
        """Request url, following redirects by hand so every hop is recorded.

        want_body(content_type) decides, once the final headers are in, whether to read the body.
        Raises aiohttp.ClientError, TimeoutError, RedirectError, or AddressExcluded when a hop's host is or
        resolves to an excluded address. Credentials are chosen for each hop by its own URL (see _headers_for).
        """
        chain: list[str] = []
        seen = {url}
        current = url
        origin_host = host_of(url).lower()
        while True:
            resp = await self._request(method, current, origin_host, tuple(chain))
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
            if method == "GET" and self._known is not None and self._known(target):
                method = "HEAD"  # that page is fetched (or was) for itself: this hop only needs its status
            current = target

    async def _request(
        self, method: str, url: str, origin_host: str, chain: tuple[str, ...]
    ) -> aiohttp.ClientResponse:
        assert self._session is not None, "HttpClient used outside 'async with'"
        try:
            self._options.addresses.check_literal(hostname_of(url))
            resp = await self._session.request(
                method,
                # already serialized by the WHATWG parser, as a browser sends it: yarl needn't encode it again
                yarl.URL(url, encoded=True),
                allow_redirects=False,
                headers=self._headers_for(url, origin_host),
                proxy=self._proxy_for(url) if self._proxies else None,
            )
        except AddressExcluded as e:
            raise e.via(chain) from None
        except aiohttp.ClientConnectorError as e:
            if isinstance(e.os_error, AddressExcluded):
                raise e.os_error.via(chain) from None
            raise
        self._cookies.store(url, resp.headers.getall("Set-Cookie", []))
        return resp

    def _proxy_for(self, url: str) -> str | None:
        scheme_host = url[: url.find("/", url.find("//") + 2)] if url.count("/") > 2 else url
        if scheme_host not in self._proxy_cache:
            proxy = self._proxies.get(url.split(":", 1)[0].lower())
            bypass = self._no_proxy and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
                hostname_of(url), {"no": self._no_proxy}
            )
            self._proxy_cache[scheme_host] = None if bypass else proxy
        return self._proxy_cache[scheme_host]

    def _headers_for(self, url: str, origin_host: str) -> CIMultiDict[str] | None:
        """The headers of one hop, decided by that hop's URL: its host's headers, the --basic-auth whose
        pattern finds it, its cookies. --header credentials go only to the host of the link itself."""
        o = self._options
        if not (self._credential_headers or o.host_headers or o.credentials or self._cookies.any):
            return None  # the common case: nothing depends on the hop
        host = host_of(url).lower()
        out: CIMultiDict[str] = CIMultiDict()
        if host == origin_host:
            out.update(self._credential_headers)
        per_host = o.host_headers.get(host) or o.host_headers.get(hostname_of(url).lower())
        if per_host:
            out.update(per_host)
        auth = next((a for a in o.credentials if a.pattern.search(url)), None)
        if auth is not None:
            out["Authorization"] = auth.header()
        cookie = self._cookies.header(url)
        if cookie:
            out["Cookie"] = f"{out['Cookie']}; {cookie}" if "Cookie" in out else cookie
        return out or None

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


def _proxy_hosts() -> frozenset[str]:
    """The host names of the proxies the environment sets (HTTP_PROXY, HTTPS_PROXY, ...)."""
    hosts = set()
    for kind, proxy in urllib.request.getproxies().items():
        if kind != "no":
            hosts.add(hostname_of(proxy if "://" in proxy else "http://" + proxy).lower())
    return frozenset(hosts)
