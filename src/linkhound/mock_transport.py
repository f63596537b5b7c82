"""A Transport that answers from a function instead of the network: for logic tests (retries, Retry-After,
HEAD->GET, redirects, politeness order) that need no sockets and no sleeps."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from .transport import Hop, NetworkError


@dataclass(frozen=True)
class MockRequest:
    method: str
    url: str
    headers: Mapping[str, str]


@dataclass
class MockResponse:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def get(self, key: str, /) -> str | None:  # the Headers protocol, case-insensitive
        lower = key.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lower), None)


Handler = Callable[[MockRequest], "MockResponse | Awaitable[MockResponse]"]


class _MockHop:
    def __init__(self, response: MockResponse) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status

    @property
    def headers(self) -> MockResponse:
        return self._response

    def set_cookies(self) -> list[str]:
        return [v for k, v in self._response.headers.items() if k.lower() == "set-cookie"]

    async def read(self, limit: int) -> tuple[bytes, bool]:
        body = self._response.body
        return body[:limit], len(body) > limit

    async def discard(self) -> None:
        return None

    def close(self) -> None:
        return None


class MockTransport:
    """handler(request) -> MockResponse (or an awaitable of one); it may raise NetworkError or TimeoutError."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.requests: list[MockRequest] = []

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def send(self, method: str, url: str, headers: Mapping[str, str] | None) -> Hop:
        request = MockRequest(method, url, dict(headers or {}))
        self.requests.append(request)
        answer = self._handler(request)
        if inspect.isawaitable(answer):
            answer = await answer
        assert isinstance(answer, MockResponse)
        return _MockHop(answer)


__all__ = ["MockRequest", "MockResponse", "MockTransport", "NetworkError"]
