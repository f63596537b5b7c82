"""Text made by a forked child on the other core while this process makes its own: a crawl's json report is a
hundred MB of text made in one pass over every reference, with the crawl over and the second core idle.

The child writes into an unlinked temporary file (held by the page cache) and leaves; the text is read back
when this process comes to it. If the child fails, or its text can't be read, it is made here instead: the
report is the same either way, only later."""

from __future__ import annotations

import bisect
import contextlib
import io
import itertools
import os
import signal
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TypeVar

from ..forks import can_fork, cores, let_go_of_fds

_READ = 1 << 20  # characters read back at a time
T = TypeVar("T")


def in_two(items: Sequence[T], weight: Callable[[T], int], make: Callable[[Sequence[T], bool], Iterable[str]],
           at: int | None) -> Iterator[str]:
    """make(items, True)'s text. Items that weigh `at` or more are made in two halves of about equal weight,
    the second, make(second_half, False), by a forked child while this process makes the first (at None: never,
    as with --workers 0)."""
    weights = [] if at is None else list(itertools.accumulate(map(weight, items)))
    half = bisect.bisect_left(weights, weights[-1] // 2) + 1 if weights and weights[-1] >= (at or 0) else len(items)
    second = forked_text(lambda: make(items[half:], False)) if half < len(items) else None
    if second is None:
        yield from make(items, True)
        return
    yield from make(items[:half], True)
    yield from second


def forked_text(make: Callable[[], Iterable[str]]) -> Iterable[str] | None:
    """The pieces of make()'s text, made now by a forked child; None where that can't be done (no other core,
    no fork, threads in this process, no temporary file): the caller makes them itself."""
    if cores() < 2 or not can_fork():
        return None
    import tempfile  # here: it loads shutil and random, which a run that forks no report never needs

    try:
        spill = tempfile.TemporaryFile()  # noqa: SIM115 (closed once read back, or by _stop)
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        spill.close()
        return None
    if pid == 0:  # the child: write, and leave without this process's exit handlers or buffered output
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # (Ctrl+C ends the child; the run's own handlers say the rest)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            let_go_of_fds((spill.fileno(),))  # (nor the program's files, sockets and pipes: closed there, closed)
            with open(spill.fileno(), "w", encoding="utf-8", closefd=False) as out:
                out.writelines(make())
            code = 0
        finally:
            os._exit(code)
    return _Spill(pid, spill, make)


class _Spill:
    """The child's text, read back once it is done (one pass); a child never read is stopped and reaped when
    this is dropped."""

    def __init__(self, pid: int, spill: IO[bytes], make: Callable[[], Iterable[str]]) -> None:
        self._spill = spill
        self._make = make
        self._end = weakref.finalize(self, _stop, pid, spill)
        self._pid = pid

    def __iter__(self) -> Iterator[str]:
        self._end.detach()
        with self._spill as spill:
            try:
                _, status = os.waitpid(self._pid, 0)
            except ChildProcessError:  # reaped by someone else: how it ended is not known
                status = -1
            if status != 0:
                yield from self._make()
                return
            spill.seek(0)
            text = io.TextIOWrapper(spill, encoding="utf-8")
            while piece := text.read(_READ):
                yield piece
            text.detach()


def _stop(pid: int, spill: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    spill.close()
