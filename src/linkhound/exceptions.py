"""Exceptions linkhound raises. Broken links are Results, not exceptions.

    LinkhoundError
    ├── UsageError        bad settings, flags or config values (exit code 1)
    └── InputError        an input that can't be read: missing file, bad glob, bad URL (exit code 1)
"""

from __future__ import annotations


class LinkhoundError(Exception):
    """Base of every error linkhound raises on purpose."""


class UsageError(LinkhoundError):
    """A setting, flag or config value is wrong. The message names it."""


class InputError(LinkhoundError):
    """An input can't be read. Carries the input it concerns."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
