"""A run as a program holds it (`linkhound.start`): watch it, stop or kill it, await its report."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from .exceptions import UsageError
from .host_pool import HostStats
from .summary import Report
from .types import Event, Result

if TYPE_CHECKING:
    from .engine import Engine
    from .inputs import Input


class Run:
    """One run, not started until `report()` is awaited. Made by `linkhound.start`."""

    def __init__(self, engine: Engine, inputs: list[Input], ahead: bool = False,
                 callback: Callback | None = None) -> None:
        self._engine = engine
        self._inputs = inputs
        self._callback = callback  # the program's on_event: an exception it raises ends the run, raised by report()
        if callback is not None:
            callback.run = self
        # ahead: a list's run, whose results the report holds are made while it waits on answers (the engine's
        # ledger can), not after the last; handed to make_ahead()'s sink as well, at most _hand_most of them
        self._makes_ahead = ahead
        self._sink: Callable[[list[Result]], None] | None = None
        self._handed = 0
        self._hand_most = _AHEAD_MOST if sum(len(i.content or b"") for i in inputs) <= _AHEAD_BYTES else 0
        self._ahead_task: asyncio.Task[None] | None = None
        self._reported = False

    async def report(self) -> Report:
        """Run to the end (or to stop()) and return the Report. A run is awaited once."""
        if self._reported:
            raise UsageError("this run's report() was awaited already: a Run runs once (start another)")
        self._reported = True
        return await self._run()

    async def _run(self) -> Report:
        if self._makes_ahead:
            self._ahead_task = asyncio.ensure_future(self._make_ahead())
        try:
            report = await self._engine.run(self._inputs)
        finally:
            if self._ahead_task is not None:
                self._ahead_task.cancel()
        if self._callback is not None and self._callback.error is not None:
            raise self._callback.error
        return report

    def stop(self) -> None:
        """Take no new work; requests in flight finish or time out, then report() returns what was checked."""
        self._engine.stop()

    def cancel(self) -> None:
        """Cancel the requests still in flight (after stop(), when waiting for them is not wanted)."""
        self._engine.cancel()

    def kill(self) -> None:
        """End helper processes at once (before the program exits without waiting for the report)."""
        self._engine.kill()

    def make_ahead(self, sink: Callable[[list[Result]], None]) -> None:
        """Hand sink results the report will hold as they are made, before the run ends, where the run makes
        them ahead (a list's: while it waits on answers): a report format may make their text then. A run that
        makes none never calls it."""
        self._sink = sink

    async def _make_ahead(self) -> None:
        """While the run goes: the report's results made ahead as they come, a slice at a time, and what is
        left every _AHEAD_EVERY seconds; once every input is read, those made are found final too, so that the
        report takes them as they are. A list's run mostly waits on answers: this is done in that time, not
        after the last answer."""
        while True:
            await asyncio.sleep(0 if self._prepare() or self._settle() else _AHEAD_EVERY)

    def _prepare(self) -> bool:
        """A slice of results made ahead, handed to make_ahead()'s sink (up to _hand_most); False once none
        is left to make."""
        made = self._engine.prepare(SLICE)
        if made is None:
            return False
        if self._sink is not None and made and self._handed < self._hand_most:
            self._sink(made)
            self._handed += len(made)
        return True

    def _settle(self) -> bool:
        """A slice of the results made ahead found final (MemoryLedger.settle), once every input is read: no
        reference is added after that, nor a depth lowered, in a run that makes them ahead (a list's). False
        while inputs are read, and once none is left to settle."""
        return self._engine.inputs_read() and self._engine.settle(SLICE)

    def known(self) -> int:
        """Targets found so far, checked or not (a progress bar's total)."""
        return self._engine.known()

    def host_stats(self) -> dict[str, HostStats]:
        """Requests, successes, 429/503 answers, waits and latencies per host so far."""
        return self._engine.host_stats()


EventSink = Callable[[Event], None]


class Callback:
    """A program's on_event, called for each event. An exception it raises is the program's, not a link's: the
    run is cancelled (no request starts after it) and report() raises it; no event is passed on after it."""

    def __init__(self, call: EventSink) -> None:
        self._call = call
        self.error: Exception | None = None
        self.run: Run | None = None

    def __call__(self, event: Event) -> None:
        if self.error is not None:
            return
        try:
            self._call(event)
        except Exception as e:
            self.error = e
            if self.run is not None:  # (soon: not from within the claim's own task, which cancel() ends)
                asyncio.get_running_loop().call_soon(self.run.cancel)


SLICE = 32  # targets a slice made ahead takes: an answer that comes meanwhile waits for one small slice at most
_AHEAD_EVERY = 0.05  # seconds between two looks for results to make ahead, once none was left
_AHEAD_MOST = 100_000  # results handed to the report ahead at most (json holds each one's text, ~500 bytes)
_AHEAD_BYTES = 2 << 20  # inputs past which none is (about 60,000 URLs in a list: most could not be)
