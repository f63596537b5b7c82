"""A live progress bar on a terminal (rich); does nothing when disabled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Progress:
    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._bar: Any = None
        self._task: Any = None
        self._engine: Any = None
        self._done = 0
        self._broken = 0

    def __enter__(self) -> Progress:
        if self._enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("checking"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[broken]} broken"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("links", total=None, broken=0)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def attach(self, engine: Any) -> None:
        self._engine = engine

    def advance(self, result: Any) -> None:
        self._done += 1
        self._broken += result.status.is_broken
        if self._bar is not None and (self._done % 16 == 0 or result.status.is_broken):
            total = self._engine.known() if self._engine is not None else None
            self._bar.update(self._task, completed=self._done, total=total, broken=self._broken)

    def write(self, emit: Callable[[], Any]) -> None:
        emit()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
