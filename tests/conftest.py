"""Shared fixtures: real HTTP servers on loopback addresses, and a private Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from redis_server import RedisServer
from server import Site, SiteFactory


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    s = await Site().start()
    yield s
    await s.stop()


@pytest.fixture
async def make_site() -> AsyncIterator[SiteFactory]:
    """Start more servers, on other loopback addresses (127.0.0.2, ...) to act as other hosts."""
    started: list[Site] = []

    async def make(host: str = "127.0.0.1") -> Site:
        s = await Site(host=host).start()
        started.append(s)
        return s

    yield make
    for s in started:
        await s.stop()


@pytest.fixture(params=["native", "reqwest", "aiohttp"])
def both_clients(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once with each HTTP stack (what --http-client auto picks is patched)."""
    import linkhound.client

    monkeypatch.setattr(linkhound.client, "AUTO_BACKEND", request.param)
    return str(request.param)


@pytest.fixture(autouse=True)
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never look a name up in real DNS but localhost: any other name fails here, at once, as a failed
    lookup would (Python's resolver, which aiohttp and the standard library use; every network test also runs
    on aiohttp, so a name that would leak is caught there)."""
    import ipaddress
    import socket

    real = socket.getaddrinfo

    def guarded(host: object, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
        except ValueError:
            if name not in ("localhost", "None") and name:
                raise socket.gaierror(socket.EAI_NONAME, f"tests may not look up {name!r} in DNS") from None
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", guarded)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of the test's own on a free loopback port; skipped when Redis isn't installed, except
    with LINKHOUND_REQUIRE_REDIS=1 (CI), where that fails."""
    with RedisServer(tmp_path) as server:
        yield server.url
