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
import signal
import sys
import sysconfig
import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from .crawl_state import Claim, Found, Limits
from .engine import Engine
from .exceptions import LinkhoundError
from .fetcher import Fetched, Way
from .forks import can_fork
from .fragments import Anchors
from .host_pool import HostStats, merge_stats
from .inputs import Input
from .ledger import MemoryLedger
from .run import Callback, Run
from .settings import Settings
from .shard import Shard, ShardPool, ShardState
from .shard_wire import (
    ASK,
    CHECKED,
    GIVE,
    HEADER_BYTES,
    KEPT,
    LINE_LIMIT,
    LINKS_END_LINE,
    REACHED,
    REACHING,
    SAME_AS,
    STOP_LINE,
    TOKENS,
    WAIT,
    anchors_of,
    decode,
    encode_control,
    encode_found,
    encode_held,
    encode_wait,
    end_of,
    end_record,
    found_of,
    load,
    result_of,
    stats_of,
    way_of,
    way_record,
)
from .shard_worker import serve_forked
from .summary import Report


class ShardedRun(Run):
    """A Run whose first shard is checked here and the others in processes of their own."""

    def __init__(self, settings: Settings, emit: Callback | None, inputs: list[Input], count: int) -> None:
        self._settings = settings
        self._count = count
        self._ledger = MemoryLedger(emit)
        self._state: ShardState | None = None
        self._procs: list[ShardProcess] = []
        self._readers: list[asyncio.Task[None]] = []
        self._pools: list[ShardPool] = []
        self._others_stats: list[dict[str, HostStats]] = []  # each other process's requests by host, at its end
        self._stopped = False
        # --jobs unset: this process checks the whole run alone, with the whole of every limit, until it is
        # busy (_split_when_busy); only then do the others get their shares. A list whose answers are slow in
        # coming never needs them (and its own CPU, a second process's pipe traffic, is spared)
        self._lazy = settings.jobs is None
        self._split_task: asyncio.Task[None] | None = None
        self._held: list[bytes] | None = None  # lines for the others, held while this process's extra requests end
        self._asked: dict[ShardProcess, asyncio.Future[list[Found]]] = {}  # URLs asked back, not given yet
        self._gone: set[ShardProcess] = set()  # those whose lines have ended
        self.taken_back = 0  # URLs the others gave back (checked here instead)
        self.handed_over = 0  # URLs queued here that went to the others as they joined (--jobs unset)
        shard = Shard(0, count)
        make_state = shard.state(self._forward, split=not self._lazy)

        def state(limits: Limits, ready: Callable[[str], None]) -> ShardState:
            self._state = make_state(limits, ready)
            return self._state

        pool = shard.pool(self._wait, self._pools.append, whole=self._lazy)
        engine = Engine(_part(settings, shard, whole=self._lazy), emit, None, state=state, ledger=self._ledger,
                        pool=pool, joined=self._join, others=_Relay(self._to_others, self._is_split),
                        more=self._take_back)
        super().__init__(engine, inputs, ahead=True, callback=emit)
        # Forked now, where that is safe: each starts with this process's modules loaded, while this one builds
        # its engine, instead of starting an interpreter once the run is awaited (~0.35 s later, measured)
        self._forked = _fork(settings, count) if can_fork() and not _in_loop() else []
        self._unfork = weakref.finalize(self, _end, list(self._forked))  # (a run never awaited)

    async def _run(self) -> Report:
        try:
            for child in self._forked:
                self._procs.append(await child.connect())
                self._readers.append(asyncio.ensure_future(self._read(child)))
            for index in range(len(self._forked) + 1, self._count):
                await self._start(Shard(index, self._count))
            if self._lazy:
                self._split_task = asyncio.ensure_future(self._split_when_busy())
            return await super()._run()
        finally:
            if self._split_task is not None:
                self._split_task.cancel()
            for reader in self._readers:  # (done, unless the run was cancelled: then its processes are killed)
                reader.cancel()
            await asyncio.gather(*self._readers, return_exceptions=True)
            for proc in self._procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()

    def host_stats(self) -> dict[str, HostStats]:
        """As Run.host_stats, the other processes' requests counted in as each ends: all of them once report()
        has returned (unless the run was cancelled)."""
        return merge_stats(self._engine.host_stats(), *self._others_stats)

    def stop(self) -> None:
        super().stop()
        self._stopped = True
        for proc in list(self._asked):
            self._given(proc, [])
        for proc in self._procs:  # each stops taking work and sends what it checked
            _write(proc, STOP_LINE)
        self._end_feeds()

    def cancel(self) -> None:
        if not self._stopped:  # (as the engine's cancel: stopped first, so no URL is asked back any more)
            self.stop()
        super().cancel()
        self._signal(lambda proc: proc.kill())

    def kill(self) -> None:
        super().kill()
        self._signal(lambda proc: proc.kill())

    def _signal(self, send: Callable[[ShardProcess], None]) -> None:
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
        import pickle  # (only where a process is started as an interpreter)

        head = pickle.dumps((_part(self._settings, shard), shard.index, shard.count), pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(len(head).to_bytes(HEADER_BYTES, "big") + head)
        self._readers.append(asyncio.ensure_future(self._read(proc)))

    @property
    def split(self) -> bool:
        """Whether the run's URLs go to its processes by shard (from the start with --jobs N; with --jobs unset,
        once this process was found busy)."""
        return self._state is not None and self._state.split

    async def _split_when_busy(self) -> None:
        """With --jobs unset: while inputs are still being read, look every _LOOK seconds at how busy this
        process is; at _BUSY of a core or more _BUSY_LOOKS times in a row, the others take their shares. The
        first look that finds it less busy loads the wire's encoder (needed at the end in any case)."""
        clock, cpu = time.monotonic, time.process_time
        busy = 0
        then, used = clock(), cpu()
        loaded = False
        while not self._engine.inputs_read() and not self._stopped:
            await asyncio.sleep(_LOOK)
            now, spent = clock(), cpu()
            busy = busy + 1 if spent - used >= _BUSY * (now - then) else 0
            then, used = now, spent
            if not busy and not loaded:
                load()
                loaded = True
            if busy >= _BUSY_LOOKS and not self._engine.inputs_read():
                await self._split()
                return

    async def _split(self) -> None:
        """The others join: from now on the links read go by shard, and so do those queued here and never fetched
        (handed over: this process keeps only its part of each limit, so it must keep only its share of the
        URLs too); those fetched or in flight stay here (the others are told them first, with the redirect ends'
        answers kept here and the hops fetched). Nothing goes to the others until the requests past that part
        have ended, so that together they never go past a limit."""
        state, pool, shard = self._state, self._pools[0] if self._pools else None, Shard(0, self._count)
        if state is None or pool is None or not pool.divisible(shard):
            return
        handed = state.hand_over()
        fetcher = self._engine.fetcher
        ends = [end_record(key, end) for key, end in fetcher.kept_ends()]
        self._held = [encode_held(state.held()), *([encode_control(KEPT, ends)] if ends else [])]
        # the hops this process's redirects fetched, and those they are fetching (where those went is told as
        # they end), as the others would have been told them had they been there from the start
        self._held += [encode_control(REACHED, [keys, way_record(way)]) for keys, way in fetcher.kept_ways()]
        self._held += [encode_control(REACHING, key) for key in fetcher.reaching_now()]
        if handed:
            self._held.append(encode_found(handed))
        self.handed_over = len(handed)
        state.split = True
        levels = pool.divide(shard)
        if levels:  # (first: the others' buckets start no fuller than this one's, before any link reaches them)
            self._held.insert(0, encode_control(TOKENS, levels))
        self._engine.resize(shard.part(self._settings.max_concurrency))
        try:
            while not (self._engine.within_limits() and pool.within_limits()) and not self._stopped:
                await asyncio.sleep(_LOOK_SHORT)
        finally:
            lines, self._held = self._held, None
            for line in lines:
                self._send(line)

    def _forward(self, found: list[Found]) -> None:
        """Links found in the inputs, to every other process (each keeps those of its shard)."""
        self._to_others(encode_found(found))

    def _is_split(self) -> bool:
        return self._state is not None and self._state.split

    def _to_others(self, line: bytes, but: ShardProcess | None = None) -> None:
        """line to every other process (but one), or held back with the rest while they join (see _split)."""
        if self._held is not None:
            self._held.append(line)
        else:
            self._send(line, but)

    def _send(self, line: bytes, but: ShardProcess | None = None) -> None:
        for proc in self._procs:
            if proc is not but:
                _write(proc, line)

    def _wait(self, host: str, until: float, sender: ShardProcess | None = None) -> None:
        """A host asked one process to wait: the others wait as long."""
        if sender is not None and self._pools:
            self._pools[0].wait_until(host, until)
        self._send(encode_wait(host, until), but=sender)

    def _end_feeds(self) -> None:
        for proc in self._procs:
            _close_feed(proc)

    async def _read(self, proc: ShardProcess) -> None:
        assert proc.stdout is not None
        ended = False
        while not ended and (line := await proc.stdout.readline()):
            for record in decode(line):
                kind = record[0]
                if kind == CHECKED:
                    self._checked(record[1], record[2], anchors_of(record[3]))
                elif kind == SAME_AS:
                    self._ledger.same_as(record[1], record[2], result_of(record[3]))
                elif kind == WAIT:
                    self._wait(record[1], record[2], proc)
                elif kind == KEPT:  # a redirect end's answer proc kept: kept here and by the others too
                    self._engine.fetcher.learn(*end_of(record[1:]))
                    self._to_others(encode_control(KEPT, [record[1:]]), but=proc)
                elif kind == REACHING:  # a hop proc's redirect is fetching: waited for here and by the others
                    self._engine.fetcher.reaching_elsewhere(record[1])
                    self._to_others(encode_control(REACHING, record[1]), but=proc)
                elif kind == REACHED:
                    self._engine.fetcher.reached_elsewhere(record[1], way_of(record[2]))
                    self._to_others(encode_control(REACHED, record[1:]), but=proc)
                elif kind == ASK:  # a hop proc's redirect reached: fetched here (where it went told to all)
                    self._engine.fetcher.fetch_hop(record[1])
                elif kind == GIVE:
                    self._given(proc, found_of(record[1]))
                else:
                    ended = True
                    _close_feed(proc)  # (nothing more it could ask)
                    if self._state is not None:
                        self._state.others_refetched += record[1]
                    if record[2] is not None:
                        self._engine.add_notes(record[2])
                    if record[3] is not None:
                        self._others_stats.append(stats_of(record[3]))
        self._gone.add(proc)
        self._given(proc, [])  # (an ask it never answered: it has ended)
        if ended:  # its last line: the report is made while it exits (report() reaps it)
            return
        code = await proc.wait()
        if not self._stopped:  # (stopped: what it sent is reported, as interrupted)
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

    async def _take_back(self, queued: Callable[[list[Claim]], None]) -> None:
        """Once the inputs are read, while the others' shares go on: whenever this process has all but run out of
        its own URLs, each other one gives back its share of those it still has queued (ShardState.give_back),
        until none has enough left to be worth a line. The run ends in step, whichever process was quicker."""
        state = self._state
        if state is None or not state.split or self._stopped:
            return
        if self._held is not None and self._split_task is not None:  # (dividing: the lines held go out first)
            await asyncio.shield(self._split_task)
        low = max(_GIVE_LEAST, Shard(0, self._count).part(self._settings.max_concurrency))
        asked = list(self._procs)
        while asked and not self._stopped:
            if state.queued > low:
                await asyncio.sleep(_LOOK_BACK)
                continue
            given = [await answer for answer in [self._ask_back(proc) for proc in asked]]
            asked = [proc for proc, found in zip(asked, given, strict=True) if found]
            for found in given:
                self.taken_back += len(found)
                queued(await state.take_back(found))

    def _ask_back(self, proc: ShardProcess) -> asyncio.Future[list[Found]]:
        """What proc gives back (none if it is gone, or goes before it answers)."""
        answer = self._asked[proc] = asyncio.get_running_loop().create_future()
        if proc in self._gone or not _write(proc, encode_control(GIVE, _GIVE_LEAST)):
            self._given(proc, [])
        return answer

    def _given(self, proc: ShardProcess, found: list[Found]) -> None:
        asked = self._asked.pop(proc, None)
        if asked is not None and not asked.done():
            asked.set_result(found)

    async def _join(self) -> None:
        """After this process's own URLs: no more links for the others; their results, all of them, before the
        report is made. While they come, the report's results are made ahead (MemoryLedger.prepare) and then
        settled (MemoryLedger.settle), a slice at a time so that each line the others send is still read at
        once."""
        if self._split_task is not None:
            if self._held is not None:  # (dividing: the lines held go out first)
                await asyncio.shield(self._split_task)
            self._split_task.cancel()
        self._send(LINKS_END_LINE)  # (their asks are still answered: each one's pipe closes at its end)
        if self._ahead_task is not None:
            self._ahead_task.cancel()
        others = asyncio.gather(*self._readers)
        try:  # (every input read: no reference will be added, and no depth lowered)
            while not others.done() and (self._prepare() or self._settle()):
                await asyncio.sleep(0)
        except BaseException:  # (cancelled: the readers with it, as when awaited)
            others.cancel()
            raise
        await others


class _Relay:
    """What this process's fetcher tells of its redirects (fetcher.Others), to the other processes once they
    have links of their own (before that, the ends kept here go to them as they join: _split)."""

    def __init__(self, send: Callable[[bytes], None], split: Callable[[], bool]) -> None:
        self._send, self._split = send, split

    def kept(self, key: str, end: Fetched) -> None:
        if self._split():
            self._send(encode_control(KEPT, [end_record(key, end)]))

    def reaching(self, key: str) -> None:
        if self._split():
            self._send(encode_control(REACHING, key))

    def reached(self, keys: list[str], way: Way | None) -> None:
        if self._split():
            self._send(encode_control(REACHED, [keys, way_record(way)]))

    def ask(self, url: str) -> bool:
        return False  # (this process fetches every hop: its own, and those the others ask for)


class _Pipe(Protocol):
    def write(self, data: bytes) -> object: ...

    def is_closing(self) -> bool: ...

    def close(self) -> object: ...


class ShardProcess(Protocol):
    """A shard's process as the first one talks to it: an asyncio subprocess, or a Forked."""

    @property
    def stdin(self) -> _Pipe | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def returncode(self) -> int | None: ...

    def kill(self) -> None: ...

    async def wait(self) -> int: ...


class Forked:
    """A shard's process forked from this one, and the ends of its pipes here (opened on the loop by connect)."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid = pid
        self.fds = [to_child, from_child]  # (until connect hands them to the loop)
        self.stdin: asyncio.WriteTransport | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.returncode: int | None = None

    async def connect(self) -> Forked:
        loop = asyncio.get_running_loop()
        to_child, from_child = self.fds
        self.fds = []
        self.stdout = asyncio.StreamReader(limit=LINE_LIMIT)
        reader = self.stdout
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(from_child, "rb", 0))
        self.stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(to_child, "wb", 0))
        return self

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    async def wait(self) -> int:
        """Its exit status, once it has exited (it exits as its pipe to here closes, or when killed)."""
        if self.returncode is None:
            await _exit_of(self.pid)
        while self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # (reaped elsewhere)
                self.returncode = 255
                break
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                break
            await asyncio.sleep(_POLL)
        return self.returncode



_LOOK = 0.05  # seconds between two looks at how busy the first process is (--jobs unset)
_BUSY = 0.8  # ... the share of a core of CPU time it spent since the last look that counts as busy
_BUSY_LOOKS = 2  # ... the looks in a row that must find it busy before the others join
_LOOK_SHORT = 0.001  # seconds between two looks at the requests past this process's part, once they joined
_LOOK_BACK = 0.005  # seconds between two looks at how many URLs this process has left, once the inputs are read
_GIVE_LEAST = 16  # URLs given back in one line at least (fewer are not worth it: the giver ends soon anyway)
_POLL = 0.005  # seconds between looks at a forked process that is about to exit, where pidfds are missing


def _write(proc: ShardProcess, line: bytes) -> bool:
    """line to proc, unless its feed is closed (or closing); whether it went."""
    stdin = proc.stdin
    if stdin is None or stdin.is_closing():
        return False
    stdin.write(line)
    return True


def _close_feed(proc: ShardProcess) -> None:
    stdin = proc.stdin
    if stdin is not None and not stdin.is_closing():
        stdin.close()


async def _exit_of(pid: int) -> None:
    """Until process pid has exited, told by a pidfd (Linux 5.3 on), else at once (wait() then polls). The
    first process waits for its forked shards at the end of every run with --jobs: a look every _POLL
    seconds kept the report waiting about half of that."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # (no pidfds here, or the process is already reaped)
        return
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:  # (called again each turn of the loop until removed)
        if not exited.done():
            exited.set_result(None)

    try:
        loop.add_reader(fd, readable)
        await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def _fork(settings: Settings, count: int) -> list[Forked]:
    """The processes of shards 1 .. count-1, forked; fewer (the rest started as interpreters) if a fork fails."""
    with contextlib.suppress(ImportError):  # the event loop's module, loaded once here rather than in each
        import uvloop  # noqa: F401 - (each process runs its part on it: linkhound.loop.run)
    forked: list[Forked] = []
    for index in range(1, count):
        shard = Shard(index, count)
        part = _part(settings, shard)
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (to_read, to_write, from_read, from_write):
                os.close(fd)
            break
        if pid == 0:  # the child: none of this process's pipe ends stay open in it (or its pipes never end)
            for fd in (to_write, from_read, *(fd for f in forked for fd in f.fds)):
                os.close(fd)
            serve_forked(part, shard, to_read, from_write)
        os.close(to_read)
        os.close(from_write)
        forked.append(Forked(pid, to_write, from_read))
    return forked


def _in_loop() -> bool:
    """Whether this is called from a running event loop (whose forked copy a child must not run)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _end(forked: list[Forked]) -> None:
    """Kill forked processes never connected to a loop, close their pipes and reap them."""
    for child in forked:
        if child.fds:
            child.kill()
            for fd in child.fds:
                os.close(fd)
            child.fds = []
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)


def _part(s: Settings, shard: Shard, whole: bool = False) -> Settings:
    """The settings of one shard's process: its part of --max-concurrency (the host limits are split by the
    pool the process is given; whole: all of it, until the others join) and one process."""
    if shard.index == 0:
        most = s.max_concurrency if whole else shard.part(s.max_concurrency)
        return dataclasses.replace(s, max_concurrency=most, jobs=1)
    # (the others read no inputs: what only reading them needs, like --changed-since's git history, is left out)
    return dataclasses.replace(s, max_concurrency=shard.part(s.max_concurrency), jobs=1, progress=False,
                               changed_since=None)
