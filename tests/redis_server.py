"""A private redis-server for one test: a free loopback port (never 6379), stopped after; no persistence unless
asked (then an append-only file, so a server stopped and started again has its data). RedisCluster: three of
them made one cluster."""

from __future__ import annotations

import os
import random
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


def _free_port(cluster: bool = False) -> int:
    """A free port; for a cluster node, one whose bus port (10000 above it) is free too."""
    while True:
        if cluster:
            port = random.randrange(20_000, 45_000)
            if all(_free(p) for p in (port, port + 10_000)):
                return port
            continue
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != _DEFAULT_PORT:
            return port


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """`with RedisServer(tmp_dir) as server:` runs redis-server until the block ends; server.url names it.
    With persist, `server.stop()` then `server.start()` brings it back on the same port with its data."""

    def __init__(self, directory: Path, persist: bool = False, cluster: bool = False) -> None:
        self.directory = directory
        self.port = 0
        self.persist = persist
        self.cluster = cluster
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        for _ in range(5):  # the port was free a moment ago; another process may take it first
            self.port = _free_port(self.cluster)
            if self._start():
                return self
        raise RuntimeError(f"redis-server did not start: {self.log()}")

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Start it again, on its port, after stop()."""
        deadline = time.monotonic() + 30  # the port may linger a moment
        while not self._start():
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start again: {self.log()}")
            time.sleep(0.2)

    def log(self) -> str:
        log = self.directory / "redis.log"
        return log.read_text() if log.exists() else "no log"

    def _start(self) -> bool:
        binary = require_redis()
        keep = ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        more = ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{self.port}.conf"] if self.cluster else []
        self._proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *keep, *more,
             "--dir", str(self.directory), "--logfile", str(self.directory / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20  # a hang guard only
        while self._proc.poll() is None and time.monotonic() < deadline:
            if _pong(self.port):
                return True
            time.sleep(0.02)
        self.stop()
        return False

    def stop(self) -> None:
        """Stop it as an operator would (SIGTERM: it writes what it has and exits)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class RedisCluster:
    """`with RedisCluster(tmp_dir) as cluster:` three masters on loopback ports made one Redis Cluster (no
    replicas); cluster.url is a redis+cluster:// URL of its first node."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.nodes: list[RedisServer] = []

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def __enter__(self) -> RedisCluster:
        try:
            for i in range(3):
                node_dir = self.directory / f"node{i}"
                node_dir.mkdir()
                self.nodes.append(RedisServer(node_dir, cluster=True).__enter__())
            cli = shutil.which("redis-cli")
            if cli is None:
                if os.environ.get("LINKHOUND_REQUIRE_REDIS") == "1":
                    pytest.fail("redis-cli is not on PATH, and LINKHOUND_REQUIRE_REDIS=1")
                pytest.skip("redis-cli is not on PATH (apt-get install redis-tools)")
            subprocess.run([cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
                            "--cluster-replicas", "0", "--cluster-yes"],
                           check=True, capture_output=True, timeout=60)
            deadline = time.monotonic() + 30
            while not all(self._ok(cli, n.port) for n in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster did not come up")
                time.sleep(0.1)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    @staticmethod
    def _ok(cli: str, port: int) -> bool:
        info = subprocess.run([cli, "-p", str(port), "cluster", "info"], capture_output=True, text=True, timeout=10)
        return "cluster_state:ok" in info.stdout

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        for node in self.nodes:
            node.stop()
