"""The Reporter protocol every format implements, and a base for formats written only at the end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..summary import Report
from ..types import Result


class Reporter(Protocol):
    """Turns the stream of results into text. The caller writes whatever the two methods return."""

    streams: bool  # result() may return text: the run must hand over each result as it completes

    def result(self, result: Result) -> str | None:
        """Called as each result completes; returns text to write now, or None."""
        ...

    def ahead(self, results: list[Result]) -> None:
        """Results the report will hold, made before the run ended (Run.make_ahead): a format may make their
        text now, to write it at the end if the report holds the very same result objects."""
        ...

    def finish(self, report: Report) -> str:
        """Called once at the end with every result and its final references; returns the rest."""
        ...

    def chunks(self, report: Report) -> Iterator[str]:
        """finish(report) in pieces, so a huge report is written without holding it all in memory."""
        ...


class WholeReport:
    """A format that needs the whole run before it can write anything."""

    streams = False

    def result(self, result: Result) -> str | None:
        return None

    def ahead(self, results: list[Result]) -> None:
        return None

    def finish(self, report: Report) -> str:
        return "".join(self.chunks(report))

    def chunks(self, report: Report) -> Iterator[str]:
        yield self.finish(report)
