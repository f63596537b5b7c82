"""A shard's process of a run (`--jobs`): it checks one shard and sends its results back as `shard_wire` lines,
in batches.

It is forked by the first process where that is safe (`serve_forked`: it has its settings and modules already,
and reads and writes a pipe pair), else started as `python -m linkhound.shard_worker` (its settings come first
on stdin, its results go to stdout). Either way it then reads the links the first process finds in the inputs
and keeps its shard's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NoReturn

from .crawl_state import Found, Limits
from .engine import Engine
from .fetcher import Fetched, Way
from .forks import let_go_of_fds
from .fragments import Anchors
from .host_pool import HostStats
from .ledger import MemoryLedger
from .loop import run
from .notes import NotesPart
from .settings import Settings
from .shard import Shard, ShardPool, ShardState
from .shard_wire import (
    ASK,
    CHECKED,
    END,
    GIVE,
    HEADER_BYTES,
    HELD,
    KEPT,
    LINE_LIMIT,
    LINKS_END_LINE,
    REACHED,
    REACHING,
    SAME_AS,
    STOP_LINE,
    TOKENS,
    WAIT,
    Record,
    anchors_record,
    decode_control,
    decode_found,
    encode,
    end_of,
    end_record,
    load,
    result_record,
    stats_record,
    way_of,
    way_record,
)
from .summary import Report, summarize
from .types import Page, Result

_BATCH = 256  # records per line at most; a partly filled batch leaves at the next turn of the loop


class ForwardingLedger(MemoryLedger):
    """The ledger of a shard's process: what the engine learns about the shard's URLs goes to the writer, and
    nothing stays here (the process that writes the report keeps the references, and settles redirects)."""

    def __init__(self, write: Callable[[bytes], object]) -> None:
        super().__init__()
        self._write = write
        self._batch: list[Record] = []
        self.state: ShardState | None = None
        self.notes: Callable[[], NotesPart] | None = None  # what the process noted, sent with the end
        self.host_stats: Callable[[], dict[str, HostStats]] | None = None  # its requests by host, sent with the end
        self._flush_soon = False

    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        self._add([CHECKED, key, result_record(result), anchors_record(anchors)])

    def same_as(self, key: str, end: str, redirect: Result) -> None:
        self._add([SAME_AS, key, end, result_record(redirect)])

    def wait(self, host: str, until: float) -> None:
        self._add([WAIT, host, until])
        self.flush()  # at once: the other processes should stop sending to host now

    # what the fetcher tells of its redirects (fetcher.Others): to the first process, which tells the others
    def kept(self, key: str, end: Fetched) -> None:
        """A redirect end's answer this process kept: the others keep it too (no second request of the end)."""
        self._add([KEPT, *end_record(key, end)])
        self.flush()  # at once: before the first process reads the end in the inputs, if it ever does

    def reaching(self, key: str) -> None:
        self._add([REACHING, key])
        self.flush()  # at once: before the hop's request goes out (a redirect elsewhere may reach it meanwhile)

    def reached(self, keys: list[str], way: Way | None) -> None:
        self._add([REACHED, keys, way_record(way)])

    def ask(self, url: str) -> bool:
        """A hop a redirect here reached: the first process fetches it (and tells where it went)."""
        self._add([ASK, url])
        self.flush()  # at once: the redirect waits for the answer
        return True

    def give(self, given: list[Found]) -> None:
        """The URLs given back to the first process (ShardState.give_back), which waits for them."""
        self._add([GIVE, [tuple(f) for f in given]])
        self.flush()

    def _add(self, record: Record) -> None:
        self._batch.append(record)
        if len(self._batch) >= _BATCH:
            self.flush()
        elif not self._flush_soon:
            self._flush_soon = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._flush_soon = False
        if self._batch:
            self._write(encode(self._batch))
            self._batch = []

    def report(
        self,
        pages: Sequence[Page],
        elapsed: float,
        interrupted: bool,
        caps: tuple[str, ...],
        depth_of: Callable[[str], int | None],
        warnings: tuple[str, ...] = (),
    ) -> Report:
        """The end: what is left goes out (no report here: redirects waiting for an end checked elsewhere are
        not loops, and the process that writes the report settles them)."""
        self.flush()
        refetched = self.state.own_refetched if self.state is not None else 0
        notes = self.notes() if self.notes is not None else None
        stats = stats_record(self.host_stats()) if self.host_stats is not None else None
        self._write(encode([[END, refetched, notes, stats]]))
        return Report((), summarize((), 0, elapsed, interrupted, caps, warnings))


def _writer(fd: int) -> Callable[[bytes], None]:
    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    return write_all


def _read_exactly(n: int) -> bytes:
    """n bytes of stdin, unbuffered (the lines after them are read by the event loop, from the same pipe)."""
    out = bytearray()
    while len(out) < n:
        chunk = os.read(0, n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


async def _check(shard: Shard, settings: Settings, read_fd: int, write_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0))
    ledger = ForwardingLedger(_writer(write_fd))
    make_state = shard.state()

    def state(limits: Limits, ready: Callable[[str], None]) -> ShardState:
        ledger.state = make_state(limits, ready)
        return ledger.state

    pools: list[ShardPool] = []

    told: list[asyncio.Task[None]] = []

    async def feed(add: Callable[[list[Found]], Awaitable[None]]) -> None:
        links_ended = False
        try:
            links_ended = await read_links(add)
        finally:
            if links_ended:  # the first process still answers: what it tells is read until it closes the pipe
                told.append(asyncio.ensure_future(read_told()))
            else:  # (no word of the others' redirects can come now: none is waited for)
                engine.fetcher.others_gone()

    async def read_links(add: Callable[[list[Found]], Awaitable[None]] | None) -> bool:
        """Links (fed to add; None: none come any more) and what the others tell, until the links end (True),
        or the first process stops or is gone."""
        while line := await reader.readline():
            if line == LINKS_END_LINE:
                return True
            if line == STOP_LINE:
                engine.stop()
                return False
            control = decode_control(line)
            if control is not None:
                take(control)
            elif add is not None:
                await add(decode_found(line))
        return False

    async def read_told() -> None:
        try:
            await read_links(None)
        finally:
            engine.fetcher.others_gone()

    def take(control: dict[str, Any]) -> None:
        if HELD in control:
            if ledger.state is not None:
                ledger.state.held_elsewhere(control[HELD])
        elif KEPT in control:
            for end in control[KEPT]:
                engine.fetcher.learn(*end_of(end))
        elif REACHING in control:
            engine.fetcher.reaching_elsewhere(control[REACHING])
        elif GIVE in control:
            ledger.give(ledger.state.give_back(control[GIVE]) if ledger.state is not None else [])
        elif REACHED in control:
            keys, way = control[REACHED]
            engine.fetcher.reached_elsewhere(keys, way_of(way))
        elif TOKENS in control:
            pools[0].fill(control[TOKENS])
        else:
            pools[0].wait_until(*control[WAIT])

    engine = Engine(settings, None, None, state=state, ledger=ledger, pool=shard.pool(ledger.wait, pools.append),
                    feed=feed, others=ledger)
    ledger.notes = engine.notes_part
    ledger.host_stats = engine.host_stats
    loop.call_later(_LOAD_AFTER, load)  # after the first process's first requests are out, before any answer
    try:
        await engine.run([])
    finally:
        for task in told:
            task.cancel()
        pipe.close()  # (left open, the loop's closing warns of it, on the program's stderr when forked)


def serve_forked(settings: Settings, shard: Shard, read_fd: int, write_fd: int) -> NoReturn:
    """The forked process: check the shard, reading links from read_fd and writing to write_fd, and exit (never
    returning into the first process's code, nor running its exit handlers)."""
    code = 1
    try:
        _quiet_signals()
        devnull = os.open(os.devnull, os.O_RDWR)  # (the first process's stdin and stdout are its own)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)
        let_go_of_fds((read_fd, write_fd))  # (nor are the program's other files, sockets and pipes)
        _serve(shard, settings, read_fd, write_fd)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def main() -> None:
    import pickle  # here: a forked process has its settings already

    _quiet_signals()
    size = int.from_bytes(_read_exactly(HEADER_BYTES), "big")
    settings, index, count = pickle.loads(_read_exactly(size))
    _serve(Shard(index, count), settings, 0, 1)
    os._exit(0)  # skip freeing every object of the run one by one


def _quiet_signals() -> None:
    # Ctrl+C and SIGTERM (sent to the whole process group) are the first process's to handle: it tells this one
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _serve(shard: Shard, settings: Settings, read_fd: int, write_fd: int) -> None:
    with contextlib.suppress(BrokenPipeError):  # (the first process is gone)
        run(_check(shard, settings, read_fd, write_fd))


_LOAD_AFTER = 0.02  # seconds from this process's start to loading the wire's encoder (shard_wire.load)


if __name__ == "__main__":
    main()
