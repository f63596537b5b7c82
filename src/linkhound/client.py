"""The HTTP client of a run: redirects followed by hand, per-hop credentials and cookies, body caps, over one
transport handed in (or composed here, in `default_transport`: reqwest, or aiohttp where an address filter
needs its resolver). Nothing past this module knows which stack runs."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from .cookies import Cookies
from .filters import AddressExcluded
from .settings import Settings
from .transport import (
    CREDENTIAL_HEADERS,
    ClientOptions,
    Headers,
    Hop,
    NetworkError,
    Transport,
    content_type,
)
from .urls import host_of, hostname_of, resolve, scheme_of
from .version import user_agent

if TYPE_CHECKING:
    from asyncio import Future

    from multidict import CIMultiDict

_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
AUTO_BACKEND = "native"  # what auto means where every stack can do the job
__all__ = [
    "ClientOptions", "Headers", "HopGate", "HopRefused", "HttpClient", "KnownTarget", "NetworkError", "RedirectError",
    "Response", "Transport",
]


class RedirectError(Exception):
    """A redirect chain that can't be followed (loop, too many hops, bad Location)."""

    def __init__(self, reason: str, chain: tuple[str, ...]) -> None:
        super().__init__(reason)
        self.chain = chain


class HopRefused(RedirectError):
    """A redirect of a page to crawl reached a URL robots.txt keeps the crawl from: not requested."""


class Pause(Protocol):
    """A check's wait of so many seconds (a claim's lends its global slot meanwhile); with until, a wait for that
    future (left running) of at most so many seconds (None: no bound)."""

    def __call__(self, seconds: float | None, until: Future[Any] | None = None, /) -> Awaitable[None]: ...


class HopGate(Protocol):
    """Room for the requests a check makes past its first (a redirect's hops, a retry, GET after HEAD) in the
    limits of each one's host, as the scheduler gives the first: `hop_gate.HopGate`."""

    async def enter(self, url: str, page: bool, pause: Pause | None = None, slot: str | None = None) -> None:
        """Wait until url may be asked (a token of its host's rate). page: robots.txt is asked too (raises
        HopRefused). pause waits for the token (asyncio.sleep when not given; a claim's gives its global slot to
        other hosts meanwhile). slot: the host whose slot the check was given ("": none), moved to url's host
        first when that is another; None: a check others wait for in their slots, whose requests take tokens
        only."""


class KnownTarget(Exception):
    """A redirect reached a URL the run checks on its own: that result is reused, not asked for again."""

    def __init__(self, url: str, chain: tuple[str, ...], codes: tuple[int, ...] = ()) -> None:
        super().__init__(url)
        self.url = url
        self.chain = chain
        self.codes = codes  # the status of each redirect in chain


class HopTimeout(TimeoutError):
    """A redirect's hop that gave no answer in time, or its end whose body did not come in time, reached through
    chain (it last; codes: their statuses)."""

    def __init__(self, chain: tuple[str, ...], codes: tuple[int, ...]) -> None:
        super().__init__()
        self.chain = chain
        self.codes = codes


def _via(e: TimeoutError | NetworkError, chain: tuple[str, ...], codes: tuple[int, ...]) -> Exception:
    """A failure with no answer at the end of chain (codes: their statuses), carrying that chain."""
    return HopTimeout(chain, codes) if isinstance(e, TimeoutError) else e.via(chain, codes)


class Response(NamedTuple):
    """One fetch's answer (a named tuple: one is made per request, and they build ~3x faster than frozen
    dataclasses)."""

    url: str  # final URL after redirects
    status: int
    headers: Headers
    body: bytes | None  # None when the body wasn't wanted
    redirects: tuple[str, ...]  # every URL after the first
    truncated: bool = False  # the body went past max_body_size and was cut
    content_type: str = ""  # the media type, lower-case, without parameters ("text/html")
    redirect_codes: tuple[int, ...] = ()  # the status (301, 302, ...) of each hop that led to redirects[i]


def chosen_backend(options: ClientOptions) -> str:
    """auto is "native" (linkhound's own HTTP/1.1 for http://, reqwest for https:// and proxies: each about a
    third of aiohttp's CPU per request, or less), except where only aiohttp can do the job: filtering the
    addresses a name resolves to (--exclude-private and friends) needs aiohttp's resolver hook."""
    if options.backend != "auto":
        return options.backend
    if options.addresses.active:
        return "aiohttp"
    return AUTO_BACKEND


class HttpClient:
    """The run's HTTP client: one transport for the whole run (connection pooling, keep-alive)."""

    def __init__(
        self, options: ClientOptions, transport: Transport | None = None) -> None:
        self._options = options
        self._cookies = Cookies(options.cookie_jar)
        self._cookies.load()  # now: a jar that can't be read or written is an option's error, before any request
        self._credential_headers = {k: v for k, v in options.headers.items() if k.lower() in CREDENTIAL_HEADERS}
        # HTTP_PROXY, HTTPS_PROXY and NO_PROXY, read once per run (a lookup per request otherwise)
        env = proxy_environment()
        self._proxies = {k: v for k, v in env.items() if k in ("http", "https")}
        self._no_proxy = env.get("no", "")
        self._proxy_cache: dict[str, str | None] = {}
        self._filtering = options.addresses.active
        # whether a hop's headers may depend on its URL (besides cookies, which may come at any time)
        self._per_hop = bool(self._credential_headers or options.host_headers or options.credentials)
        self.backend = chosen_backend(options) if transport is None else type(transport).__name__
        proxy_for = self._proxy_for if self._proxies else None
        self._compose: Callable[[], Transport] = lambda: default_transport(options, proxy_for, proxy_hosts(env))
        # --offline: the stack (pyreqwest's import and TLS set-up) waits for a first request, which never comes
        self._transport: Transport | None = transport or (None if options.offline else self._compose())
        self.gate: HopGate | None = None  # set by the engine: requests past a check's first keep their hosts' rates

    async def __aenter__(self) -> HttpClient:
        if self._transport is not None:
            await self._transport.open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._transport is not None:
            await self._transport.close()
        self._cookies.save()

    async def fetch(
        self,
        url: str,
        method: str,
        want_body: Callable[[str], bool],
        known: Callable[[str], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        gated: bool = False,
        page: bool = False,
        pause: Pause | None = None,
        max_body: int | None = None,
        anchored: Callable[[str], bool] | None = None,
        slot: str | None = None,
    ) -> Response:
        """Request url, following redirects by hand so every hop is recorded.

        want_body(content_type) decides, once the final headers are in, whether to read the body; headers go
        with every hop (a cached entry's validators: If-None-Match, If-Modified-Since).
        Raises NetworkError, TimeoutError (at a redirect's hop or its end's body: its chain on the error, or
        HopTimeout),
        RedirectError, or AddressExcluded when a hop's host is or resolves to an excluded address.
        Credentials are chosen for each hop by its own URL (see _headers_for).
        A redirect to a URL known(url) says the run checks on its own raises KnownTarget: its result is reused.
        With a gate, the requests past the one the caller's slot was taken for wait there for a token of their
        host: a redirect's hops, and url itself when gated (a retry, GET after HEAD, a URL of another host than
        the slot's), pause(seconds) waiting for the token (the gate's). page: a page to crawl, whose hops
        robots.txt must allow (else HopRefused). max_body: the body's cap, when not --max-body-size (robots.txt's).
        anchored (--check-fragments): a hop whose Location names a #fragment is recorded with it (never sent), and
        from there on the request is a GET whose body is read when anchored(content_type) says so: the end's
        anchors, for the fragment the browser would scroll to (RFC 9110 10.2.2).
        slot: the host whose slot the caller was given for the check ("": none), which the gate moves along the
        chain to the host of each request (None: they take tokens only, HopGate.enter).
        """
        if gated:
            await self._enter(url, page, (), pause, slot)
        hop = await self._request(method, url, url, (), headers)
        if hop.status not in _REDIRECT_CODES or (location := _location(hop)) is None:
            return await self._finish(hop, method, url, (), want_body, max_body=max_body)  # most: no redirect
        return await self._redirected(url, method, want_body, known, headers, hop, location, page=page, pause=pause,
                                      max_body=max_body, anchored=anchored, slot=slot)

    async def resume(
        self,
        url: str,
        chain: tuple[str, ...],
        codes: tuple[int, ...],
        method: str,
        want_body: Callable[[str], bool],
        known: Callable[[str], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        page: bool = False,
        pause: Pause | None = None,
        max_body: int | None = None,
        anchored: Callable[[str], bool] | None = None,
        slot: str | None = None,
    ) -> Response:
        """fetch(url) again from the last hop of the chain its redirect took (codes: their statuses), the hops
        before it not asked again: a retry where that hop failed, or answered with a code worth asking again.
        page, pause, max_body, anchored, slot: as fetch()'s (the hop asked again waits at the gate)."""
        current = chain[-1].split("#", 1)[0]
        if anchored is not None and any("#" in hop_url for hop_url in chain):
            method, want_body = "GET", anchored  # (a Location named a #fragment: as _redirected went on)
        await self._enter(current, page, chain, pause, slot)
        hop = await self._hop(method, current, url, chain, codes, headers)
        if hop.status not in _REDIRECT_CODES or (location := _location(hop)) is None:
            return await self._finish(hop, method, current, chain, want_body, codes, max_body)
        return await self._redirected(url, method, want_body, known, headers, hop, location, chain, codes, page,
                                      pause, max_body, anchored, slot)

    async def _redirected(
        self,
        url: str,
        method: str,
        want_body: Callable[[str], bool],
        known: Callable[[str], bool] | None,
        headers: Mapping[str, str] | None,
        hop: Hop,
        location: str,
        before: tuple[str, ...] = (),
        before_codes: tuple[int, ...] = (),
        page: bool = False,
        pause: Pause | None = None,
        max_body: int | None = None,
        anchored: Callable[[str], bool] | None = None,
        slot: str | None = None,
    ) -> Response:
        """fetch() from the first redirect on: hop is url's answer (or, after `before`, the chain so far, its
        last hop's), a redirect to location. Each hop waits at the gate; with anchored, a hop reached by a
        Location with a #fragment is recorded with it (see fetch())."""
        chain = list(before)
        codes = list(before_codes)
        seen = {url, *(u.split("#", 1)[0] for u in before)}
        current = before[-1].split("#", 1)[0] if before else url
        while True:
            status = hop.status
            try:
                await hop.discard()
            except BaseException:
                hop.close()
                raise
            target = resolve(location, current)
            if target is None:
                raise RedirectError(f"bad redirect Location '{location[:200]}'", tuple(chain))
            target, hash_, fragment = target.partition("#")
            if hash_ and anchored is not None:  # (the fragment the browser would scroll to now: RFC 9110 10.2.2)
                chain.append(f"{target}#{fragment}")
                method, want_body = "GET", anchored  # (its anchors come with the end's answer)
            else:
                chain.append(target)
            codes.append(status)
            if scheme_of(target) not in ("http", "https"):
                raise RedirectError(f"redirect to a {scheme_of(target)}: URL refused", tuple(chain))
            if target in seen:
                raise RedirectError("redirect loop", tuple(chain))
            if len(chain) > self._options.max_redirects:
                raise RedirectError(f"more than {self._options.max_redirects} redirects", tuple(chain))
            seen.add(target)
            if status == 303 and method != "HEAD":
                method = "GET"
            if known is not None and known(target):
                raise KnownTarget(target, tuple(chain), tuple(codes))
            current = target
            await self._enter(current, page, tuple(chain), pause, slot)
            hop = await self._hop(method, current, url, tuple(chain), tuple(codes), headers)
            following = _location(hop) if hop.status in _REDIRECT_CODES else None
            if following is None:
                return await self._finish(hop, method, current, tuple(chain), want_body, tuple(codes), max_body)
            location = following

    async def _enter(
        self, url: str, page: bool, chain: tuple[str, ...], pause: Pause | None, slot: str | None
    ) -> None:
        """Wait at the gate (if any) before a request to url past a check's first."""
        if self.gate is None:
            return
        try:
            await self.gate.enter(url, page, pause, slot)
        except HopRefused as e:
            raise HopRefused(str(e), chain) from None

    async def _hop(
        self, method: str, url: str, origin: str, chain: tuple[str, ...], codes: tuple[int, ...],
        extra: Mapping[str, str] | None,
    ) -> Hop:
        """_request() of a redirect's hop: a failure with no answer carries the chain that led there."""
        try:
            return await self._request(method, url, origin, chain, extra)
        except (TimeoutError, NetworkError) as e:
            raise _via(e, chain, codes) from None

    async def _request(
        self, method: str, url: str, origin: str, chain: tuple[str, ...], extra: Mapping[str, str] | None = None
    ) -> Hop:
        """One hop to url, of the link to origin."""
        try:
            if self._filtering:
                self._options.addresses.check_literal(hostname_of(url))
            headers: Mapping[str, str] | None = None
            if self._per_hop or self._cookies.any:  # (_headers_for's own test, without the call for most hops)
                headers = self._headers_for(url, origin)
            if extra:
                headers = {**headers, **extra} if headers else extra
            hop = await (self._transport or await self._late_transport()).send(method, url, headers)
        except AddressExcluded as e:
            raise e.via(chain) from None
        self._cookies.store(url, hop.set_cookies())
        return hop

    async def _late_transport(self) -> Transport:
        """The stack of a run that expected no request, composed and opened at its first one."""
        transport = self._compose()
        await transport.open()
        if self._transport is None:
            self._transport = transport
        else:  # another request got there first, while this one was opening
            await transport.close()
        return self._transport

    def _proxy_for(self, url: str) -> str | None:
        scheme_host = url[: url.find("/", url.find("//") + 2)] if url.count("/") > 2 else url
        if scheme_host not in self._proxy_cache:
            proxy = self._proxies.get(url.split(":", 1)[0].lower())
            import urllib.request

            bypass = self._no_proxy and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
                hostname_of(url), {"no": self._no_proxy}
            )
            self._proxy_cache[scheme_host] = None if bypass else proxy
        return self._proxy_cache[scheme_host]

    def _headers_for(self, url: str, origin: str) -> CIMultiDict[str] | None:
        """The headers of one hop, decided by that hop's URL: its host's headers, the --basic-auth whose
        pattern finds it, its cookies. --header credentials go only to the host of the link itself."""
        o = self._options
        if not (self._credential_headers or o.host_headers or o.credentials or self._cookies.any):
            return None  # the common case: nothing depends on the hop
        from multidict import CIMultiDict

        host = host_of(url).lower()
        out: CIMultiDict[str] = CIMultiDict()
        if host == host_of(origin).lower():
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
        self, hop: Hop, method: str, url: str, chain: tuple[str, ...], want_body: Callable[[str], bool],
        codes: tuple[int, ...] = (), max_body: int | None = None,
    ) -> Response:
        body: bytes | None = None
        truncated = False
        ctype = content_type(hop.headers)
        try:
            if method != "HEAD" and want_body(ctype):
                body, truncated = await hop.read(self._options.max_body_size if max_body is None else max_body)
            else:
                await hop.discard()
        except BaseException as e:
            hop.close()  # a timeout or reset mid-body: the connection can't be reused
            if chain and isinstance(e, (TimeoutError, NetworkError)):  # (a redirect's end: its chain goes with it)
                raise _via(e, chain, codes) from None
            raise
        return Response(url, hop.status, hop.headers, body, chain, truncated, ctype, codes)


def _location(hop: Hop) -> str | None:
    """A redirect's Location (None: none). reqwest can't hand over a header that isn't visible ASCII, as some
    servers send (raw UTF-8): that redirect ends with an error that says so, not a crash."""
    try:
        return hop.headers.get("Location")
    except ValueError:
        hop.close()
        raise RedirectError("redirect Location is not ASCII text (unreadable with --http-client reqwest)", ()) from None


def default_transport(
    options: ClientOptions, proxy_for: Callable[[str], str | None] | None, proxy_hosts: frozenset[str]
) -> Transport:
    """The one place the HTTP stack is chosen: linkhound's own HTTP/1.1 for http:// with reqwest for the rest,
    reqwest alone, or aiohttp where only it can do the job."""
    backend = chosen_backend(options)
    if backend == "aiohttp":
        from .aiohttp_transport import AiohttpTransport

        return AiohttpTransport(options, proxy_for, proxy_hosts)

    def reqwest() -> Transport:
        from .reqwest_transport import ReqwestTransport

        return ReqwestTransport(options, proxy_for)

    if backend == "reqwest":
        return reqwest()
    from .native_transport import NativeTransport

    return NativeTransport(options, reqwest, proxy_for)


def client_options(s: Settings) -> ClientOptions:
    return ClientOptions(
        max_connections=s.max_concurrency,
        timeout=s.timeout,
        max_redirects=s.max_redirects,
        max_body_size=s.max_body_size,
        user_agent=s.user_agent or user_agent(),
        headers=s.headers(),
        insecure=s.insecure,
        host_headers={h: hs.headers for h, hs in s.host_settings.items() if hs.headers},
        credentials=s.credentials,
        cookie_jar=s.cookie_jar,
        addresses=s.addresses,
        backend=s.http_client,
        offline=s.offline,
    )


def proxy_environment() -> dict[str, str]:
    """urllib's getproxies_environment() ({"http": ..., "no": ...}), without loading urllib.request (and with it
    http.client and email) when no *_proxy variable is set, as in most runs."""
    if not any(name[-6:].lower() == "_proxy" for name in os.environ):
        return {}
    import urllib.request

    return urllib.request.getproxies_environment()


def proxy_hosts(env: Mapping[str, str]) -> frozenset[str]:
    """The host names of the proxies the environment sets (HTTP_PROXY, HTTPS_PROXY, ...)."""
    hosts = set()
    for kind, proxy in env.items():
        if kind != "no":
            hosts.add(hostname_of(proxy if "://" in proxy else "http://" + proxy).lower())
    return frozenset(hosts)
