"""What the linkhound commands share: the argument parser's error line, exit codes, the output file, colour."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, TextIO

from .arguments import Parser
from .redis_link import TIMEOUT as REDIS_TIMEOUT

if TYPE_CHECKING:
    from .settings import Settings
    from .summary import Report

__all__ = [
    "Parser", "ReportFile", "open_output", "open_step_summary", "redis_timeout", "seconds", "use_color",
    "write_step_summary",
]

EXIT_OK, EXIT_USAGE, EXIT_BROKEN, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got '{text}'")
    return value


def redis_timeout(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--redis-timeout", metavar="SECONDS", type=seconds, default=REDIS_TIMEOUT,
                   help="while Redis is away (down, restarting), wait and try again for this long, then stop with an "
                   f"error; the job stays in Redis and is resumed by the same command (default: {REDIS_TIMEOUT:g})")


class ReportFile:
    """The --output file, written only once there is something to write: a run that stops before its first
    line (a --state or --job it may not resume, an error) leaves the report of the run before as it was."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file: IO[str] | None = None
        existed = os.path.lexists(path)
        try:  # can it be written? asked now, so a bad path fails at once, not after the work
            if existed and not os.path.isfile(path):  # a pipe, /dev/stderr: nothing to keep, opened once
                self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
            else:  # nothing cut yet
                open(path, "a", encoding="utf-8").close()
        except OSError as e:
            raise _unwritable(path, e) from None
        self._made = not existed  # (an empty file left by a run that wrote nothing: taken away again)

    def write(self, text: str) -> int:
        if self._file is None:
            self._file = open(self._path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        return self._file.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._file is None:
            self.write("")  # an empty report (a format with nothing to say) still replaces the last one
        assert self._file is not None
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        elif self._made:
            with contextlib.suppress(OSError):
                os.unlink(self._path)


def _unwritable(path: str, e: OSError) -> Exception:
    from .exceptions import UsageError

    return UsageError(f"--output {path}: can't write: {(e.strerror or str(e)).lower()}")


def open_output(path: str | None) -> TextIO | ReportFile:
    """The report's destination: stdout, or the file named, checked now and written from the first line on."""
    return sys.stdout if path is None else ReportFile(path)


STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes: what GitHub takes of one step's job summary


def open_step_summary(path: str | None) -> IO[str] | None:
    """The --step-summary file, opened now to append to: a bad path fails at once, not after the work."""
    if path is None:
        return None
    try:
        return open(path, "a", encoding="utf-8")
    except OSError as e:
        from .exceptions import UsageError

        raise UsageError(f"--step-summary {path}: can't write: {(e.strerror or str(e)).lower()}") from None


def write_step_summary(file: IO[str], report: Report, settings: Settings) -> None:
    """The Markdown report of the run appended to the --step-summary file, cut to what the file has room for."""
    from .report.markdown import Markdown

    room = max(STEP_SUMMARY_LIMIT - os.fstat(file.fileno()).st_size, 0)
    markdown = Markdown(verbose=settings.verbose, summary_only=settings.summary_only,
                        all_referrers=settings.all_referrers, max_bytes=room)
    file.write(markdown.finish(report))
    file.flush()


def use_color(settings: Settings, stream: IO[str]) -> bool:
    """--color always or never, else colour on a terminal unless NO_COLOR is set (https://no-color.org)."""
    if settings.color != "auto":
        return settings.color == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR")

