"""A run as a program holds it (`linkhound.start`): watch it, stop or kill it, await its report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .host_pool import HostStats
from .summary import Report
from .types import Event, Result

if TYPE_CHECKING:
    from .engine import Engine
    from .inputs import Input


class Run:
    """One run, not started until `report()` is awaited. Made by `linkhound.start`."""

    def __init__(self, engine: Engine, inputs: list[Input]) -> None:
        self._engine = engine
        self._inputs = inputs

    async def report(self) -> Report:
        """Run to the end (or to stop()) and return the Report."""
        return await self._engine.run(self._inputs)

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
        them ahead (a list checked by several processes: while this one waits on answers): a report format
        may make their text then. A run that makes none never calls it."""

    def known(self) -> int:
        """Targets found so far, checked or not (a progress bar's total)."""
        return self._engine.known()

    def host_stats(self) -> dict[str, HostStats]:
        """Requests, successes, 429/503 answers, waits and latencies per host so far."""
        return self._engine.host_stats()


EventSink = Callable[[Event], None]
