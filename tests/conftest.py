"""Shared fixtures: real HTTP servers on loopback addresses, and a private Redis."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from redis_server import RedisServer
from server import Site, SiteFactory

# No DNS but localhost, in this process and in every Python process a test starts (see startup/sitecustomize.py:
# on PYTHONPATH, Python imports it at start-up)
STARTUP = str(Path(__file__).parent / "startup")
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (STARTUP, os.environ.get("PYTHONPATH")) if p)
_spec = importlib.util.spec_from_file_location("dns_guard", os.path.join(STARTUP, "sitecustomize.py"))
assert _spec is not None and _spec.loader is not None
dns_guard = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dns_guard)  # (installs the guard here)


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


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of the test's own on a free loopback port; skipped when Redis isn't installed, except
    with LINKHOUND_REQUIRE_REDIS=1 (CI), where that fails."""
    with RedisServer(tmp_path) as server:
        yield server.url
