"""What an HTTP transport is (one request, no redirects followed) and the values that cross it: the types
below the client and both transports, so neither imports the other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from sys import intern
from types import MappingProxyType
from typing import NamedTuple, Protocol, TypeVar

from .filters import AddressFilter
from .settings import BasicAuth

# Read and drop bodies up to this size to keep the connection alive; larger ones close it.
DRAIN_LIMIT = 64 * 1024
# Headers given with --header that carry credentials: sent to the link's own host, never to a redirect
# target on another host.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


# What a kept-alive connection the server has since closed or reset says when asked again (a transport asks
# once more on a new connection, when one may have been kept: see may_be_stale)
STALE = frozenset({"connection reset", "server closed the connection"})


H = TypeVar("H")


async def once_more_if_stale(url: str, answered: set[str], pooled: Callable[[], Awaitable[H]],
                             unpooled: Callable[[], Awaitable[H]]) -> H:
    """pooled(), or unpooled() (the request again, on a new connection) when it failed as a kept-alive
    connection the server dropped while idle does: reset, or closed unanswered (it may not say so until asked;
    from the pool, another stale one could come). Only where an earlier answer left a connection to keep
    (answered: the origins that answered): a server that resets every request is not asked twice each time,
    past its host's rate."""
    try:
        hop = await pooled()
    except NetworkError as e:
        if not (e.transient and e.reason in STALE and origin(url) in answered):
            raise
    else:
        answered.add(origin(url))
        return hop
    return await unpooled()


def origin(url: str) -> str:
    """scheme://host:port of an absolute URL."""
    end = url.find("/", url.find("//") + 2)
    return url if end < 0 else url[:end]


class NetworkError(Exception):
    """A request that got no answer: refused, reset, DNS, TLS, a malformed reply. `reason` is one clear line;
    `transient` says whether asking again may help (a reset may; a refused connection or failed lookup won't)."""

    chain: tuple[str, ...] = ()  # (a redirect's hop: the redirects followed to it, it last, and their codes)
    codes: tuple[int, ...] = ()

    def __init__(self, reason: str, transient: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient

    def via(self, chain: tuple[str, ...], codes: tuple[int, ...]) -> NetworkError:
        """This error, of a hop reached through chain (a copy: a transport may raise one instance more than once)."""
        error = NetworkError(self.reason, self.transient)
        error.chain, error.codes = chain, codes
        return error


class Headers(Protocol):
    """Response headers, looked up case-insensitively."""

    def get(self, key: str, /) -> str | None: ...


class Hop(Protocol):
    """One request's answer, before its body is read."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Headers: ...
    def set_cookies(self) -> list[str]:
        """Every Set-Cookie header."""

    async def read(self, limit: int) -> tuple[bytes, bool]:
        """The body, decompressed, cut at limit bytes: (body, truncated). Releases the connection."""

    async def discard(self) -> None:
        """Drop the body: drained when small (the connection stays alive), else the connection is closed."""

    def close(self) -> None:
        """Abandon the connection (after an error mid-body)."""


class Transport(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> Hop:
        """One request, no redirects followed. Raises NetworkError, TimeoutError or AddressExcluded."""


class ClientOptions(NamedTuple):
    max_connections: int
    timeout: float
    max_redirects: int
    max_body_size: int
    user_agent: str
    headers: Mapping[str, str]
    insecure: bool = False
    host_headers: Mapping[str, Mapping[str, str]] = MappingProxyType({})  # by host[:port] or hostname
    credentials: tuple[BasicAuth, ...] = ()  # --basic-auth, by URL pattern
    cookie_jar: str | None = None  # a Netscape cookies.txt to read at the start and write at the end
    addresses: AddressFilter = AddressFilter()  # --exclude-private and friends
    backend: str = "auto"  # --http-client: auto, reqwest or aiohttp
    offline: bool = False  # --offline: no request expected, so the default stack is only composed if one comes

    @property
    def plain_headers(self) -> dict[str, str]:
        """Every request's headers: the User-Agent and the --header values that aren't credentials."""
        plain = {k: v for k, v in self.headers.items() if k.lower() not in CREDENTIAL_HEADERS}
        return {"User-Agent": self.user_agent, **plain}


_MEDIA_TYPES: dict[str, str] = {}  # Content-Type as sent -> its media type: a server sends few distinct ones
_MEDIA_TYPES_MAX = 1024


def declared_charset(headers: Headers) -> str | None:
    """The charset parameter of an answer's Content-Type ("shift_jis"), lower-case; None when it names none."""
    raw = headers.get("Content-Type")
    if not raw or "charset" not in raw.lower():
        return None
    for parameter in raw.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'").lower() or None
    return None


def content_type(headers: Headers) -> str:
    """The media type of an answer, lower-case, without parameters ("text/html"); "" when none is given."""
    raw = headers.get("Content-Type")
    if not raw:
        return ""
    media = _MEDIA_TYPES.get(raw)
    if media is None:
        media = intern(raw.split(";", 1)[0].strip().lower())  # (every result keeps one)
        if len(_MEDIA_TYPES) < _MEDIA_TYPES_MAX:
            _MEDIA_TYPES[raw] = media
    return media
