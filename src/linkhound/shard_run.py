"""A run checked by several processes (`--jobs N`): this one checks its shard and writes the report, the others
(`linkhound.shard_worker`) check theirs and send back their results, merged here as they come.

This process reads the inputs and keeps every reference, so the report is the one a single process would write;
the links it finds go to the others too, and each process checks those whose canonical key hashes to it, so
each URL is requested once. A redirect to a URL another process checks takes that
URL's result, as it does within one process (no second request). Each process gets its part of the run's and
of each host's limits (concurrency, and rate and burst), so together they never go past them, and a wait a
host asks one of them for (429 or 503, Retry-After) is kept by all."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pickle
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from .crawl_state import Found, Limits
from .engine import Engine
from .exceptions import LinkhoundError
from .fragments import Anchors
from .inputs import Input
from .ledger import MemoryLedger
from .run import EventSink, Run
from .settings import Settings
from .shard import Shard, ShardPool, ShardState
from .shard_wire import (
    CHECKED,
    HEADER_BYTES,
    LINE_LIMIT,
    SAME_AS,
    STOP_LINE,
    WAIT,
    anchors_of,
    decode,
    encode_found,
    encode_wait,
    result_of,
)
from .summary import Report


class ShardedRun(Run):
    """A Run whose first shard is checked here and the others in processes of their own."""

    def __init__(self, settings: Settings, emit: EventSink | None, inputs: list[Input], count: int) -> None:
        self._settings = settings
        self._count = count
        self._ledger = MemoryLedger(emit)
        self._state: ShardState | None = None
        self._procs: list[asyncio.subprocess.Process] = []
        self._readers: list[asyncio.Task[None]] = []
        self._pools: list[ShardPool] = []
        self._stopped = False
        shard = Shard(0, count)
        make_state = shard.state(self._forward)

        def state(limits: Limits, ready: Callable[[str], None]) -> ShardState:
            self._state = make_state(limits, ready)
            return self._state

        pool = shard.pool(self._wait, self._pools.append)
        engine = Engine(_part(settings, shard), emit, None, state=state, ledger=self._ledger, pool=pool,
                        joined=self._join)
        super().__init__(engine, inputs)

    async def report(self) -> Report:
        try:
            for index in range(1, self._count):
                await self._start(Shard(index, self._count))
            return await super().report()
        finally:
            for proc in self._procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()

    def stop(self) -> None:
        super().stop()
        self._stopped = True
        for proc in self._procs:  # each stops taking work and sends what it checked
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.write(STOP_LINE)
        self._end_feeds()

    def cancel(self) -> None:
        super().cancel()
        self._signal(lambda proc: proc.kill())

    def kill(self) -> None:
        super().kill()
        self._signal(lambda proc: proc.kill())

    def _signal(self, send: Callable[[asyncio.subprocess.Process], None]) -> None:
        for proc in self._procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    send(proc)

    async def _start(self, shard: Shard) -> None:
        env = dict(os.environ)
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where this linkhound is imported from
        if here not in sysconfig.get_paths().values():  # (a source tree, not an installed package)
            path = env.get("PYTHONPATH")
            env["PYTHONPATH"] = here if not path else f"{here}{os.pathsep}{path}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "linkhound.shard_worker", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, env=env, limit=LINE_LIMIT,
        )
        self._procs.append(proc)
        assert proc.stdin is not None
        head = pickle.dumps((_part(self._settings, shard), shard.index, shard.count), pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(len(head).to_bytes(HEADER_BYTES, "big") + head)
        self._readers.append(asyncio.ensure_future(self._read(proc)))

    def _forward(self, found: list[Found]) -> None:
        """Links found in the inputs, to every other process (each keeps those of its shard)."""
        line = encode_found(found)
        for proc in self._procs:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.write(line)

    def _wait(self, host: str, until: float, sender: asyncio.subprocess.Process | None = None) -> None:
        """A host asked one process to wait: the others wait as long."""
        if sender is not None and self._pools:
            self._pools[0].wait_until(host, until)
        line = encode_wait(host, until)
        for proc in self._procs:
            if proc is not sender and proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.write(line)

    def _end_feeds(self) -> None:
        for proc in self._procs:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        ended = False
        while line := await proc.stdout.readline():
            for record in decode(line):
                kind = record[0]
                if kind == CHECKED:
                    self._checked(record[1], record[2], anchors_of(record[3]))
                elif kind == SAME_AS:
                    self._ledger.same_as(record[1], record[2], result_of(record[3]))
                elif kind == WAIT:
                    self._wait(record[1], record[2], proc)
                else:
                    ended = True
                    if self._state is not None:
                        self._state.others_refetched += record[1]
                    if record[2] is not None:
                        self._engine.add_notes(record[2])
        code = await proc.wait()
        if not ended and not self._stopped:  # (stopped: what it sent is reported, as interrupted)
            raise LinkhoundError(f"a --jobs process ended before its work was done (exit status {code})")

    def _checked(self, key: str, record: list[Any], anchors: Anchors | None) -> None:
        target = self._ledger.get(key)
        if target is None:  # (not expected: every URL a process checks was found here first)
            result = result_of(record)
            self._ledger.adopt(key, result.url, result, anchors)
        elif record[0] == target.url:
            self._ledger.checked(key, result_of(record, target.url), anchors)
        else:  # (a URL spelled otherwise than the link that made the target, as the claim had it)
            self._ledger.checked(key, result_of(record), anchors)

    async def _join(self) -> None:
        """After this process's own URLs: no more links for the others; their results, all of them, before the
        report is made."""
        self._end_feeds()
        await asyncio.gather(*self._readers)


def _part(s: Settings, shard: Shard) -> Settings:
    """The settings of one shard's process: its part of --max-concurrency (the host limits are split by the
    pool the process is given) and one process."""
    if shard.index == 0:
        return dataclasses.replace(s, max_concurrency=shard.part(s.max_concurrency), jobs=1)
    # (the others read no inputs: what only reading them needs, like --changed-since's git history, is left out)
    return dataclasses.replace(s, max_concurrency=shard.part(s.max_concurrency), jobs=1, progress=False,
                               changed_since=None)
