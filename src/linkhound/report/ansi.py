"""ANSI colours for terminal formats, keyed by Status; plain escape codes keep the import light."""

from __future__ import annotations

import os
from typing import TextIO

from ..status import Status

_RESET = "\x1b[0m"
_CODES: dict[Status, str] = {
    Status.OK: "32",  # green
    Status.BROKEN: "1;31",  # bold red
    Status.SOFT_404: "1;31",
    Status.ERROR: "1;31",
    Status.TIMEOUT: "31",
    Status.RATE_LIMITED: "33",  # yellow
    Status.BLOCKED: "33",
    Status.EXCLUDED: "90",  # grey
    Status.UNSUPPORTED: "90",
    Status.SKIPPED: "90",
}


def paint(text: str, status: Status | None) -> str:
    return f"\x1b[{_CODES[status]}m{text}{_RESET}" if status is not None else text


def warn(text: str) -> str:
    return f"\x1b[33m{text}{_RESET}"  # yellow, like the statuses that are not failures


def dim(text: str) -> str:
    return f"\x1b[2m{text}{_RESET}"


def wants_color(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set to anything (https://no-color.org)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
