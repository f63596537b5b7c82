"""A private redis-server for one test: a free loopback port (never 6379), no persistence, stopped after."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import pytest

_DEFAULT_PORT = 6379  # somebody's real Redis may listen there: never ours


def require_redis() -> str:
    """The redis-server binary, or skip the test (fail it when LINKHOUND_REQUIRE_REDIS=1, as in CI)."""
    binary = shutil.which("redis-server")
    missing = None
    if binary is None:
        missing = "redis-server is not on PATH (apt-get install redis-server)"
    else:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            missing = "the redis package is not installed (pip install -e '.[redis]')"
    if missing is not None:
        if os.environ.get("LINKHOUND_REQUIRE_REDIS") == "1":
            pytest.fail(f"{missing}, and LINKHOUND_REQUIRE_REDIS=1")
        pytest.skip(missing)
    assert binary is not None
    return binary


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != _DEFAULT_PORT:
            return port


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """`with RedisServer(tmp_dir) as server:` runs redis-server until the block ends; server.url names it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        binary = require_redis()
        for _ in range(5):  # the port was free a moment ago; another process may take it first
            self.port = _free_port()
            self._proc = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(self.directory), "--logfile", str(self.directory / "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 20  # a hang guard only
            while self._proc.poll() is None and time.monotonic() < deadline:
                if _pong(self.port):
                    return self
                time.sleep(0.02)
            self._stop()
        log = self.directory / "redis.log"
        raise RuntimeError(f"redis-server did not start: {log.read_text() if log.exists() else 'no log'}")

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._stop()

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
