"""What the linkhound commands share: the argument parser's error line, exit codes, the output file, colour."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import IO, TYPE_CHECKING

from .arguments import Parser
from .redis_link import TIMEOUT as REDIS_TIMEOUT

if TYPE_CHECKING:
    from .settings import Settings

__all__ = ["Parser", "open_output", "redis_timeout", "seconds", "use_color"]

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




def open_output(path: str | None) -> IO[str]:
    """The report's destination, opened before the run so a bad path fails at once, not after the work."""
    if path is None:
        return sys.stdout
    from .exceptions import UsageError

    try:
        return open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by the caller)
    except OSError as e:
        raise UsageError(f"--output {path}: can't write: {(e.strerror or str(e)).lower()}") from None




def use_color(settings: Settings, stream: IO[str]) -> bool:
    """--color always or never, else colour on a terminal unless NO_COLOR is set (https://no-color.org)."""
    if settings.color != "auto":
        return settings.color == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR")

