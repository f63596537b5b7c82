"""Exceptions linkhound raises. Broken links are Results, not exceptions.

    LinkhoundError
    └── UsageError        what the caller asked for can't be done as asked (exit code 1): catch this one
        ├── OptionError   one setting has a bad value or type: carries its name and the problem
        ├── ConfigError   a config file is wrong: the message names the file and the key
        └── InputError    an input that can't be read: missing file, bad glob, bad URL, unreadable directory
"""

from __future__ import annotations


class LinkhoundError(Exception):
    """Base of every error linkhound raises on purpose."""


class UsageError(LinkhoundError):
    """A setting, flag, config value or input is wrong. The message names it."""


class OptionError(UsageError):
    """One setting has a bad value. `option` is its name (the config key), `problem` says what is wrong.

    The message names the flag (--max-depth); a config file reports the same problem under its key.
    """

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(f"--{option.replace('_', '-')}: {problem}")
        self.option = option
        self.problem = problem


class ConfigError(UsageError):
    """A config file can't be read, isn't TOML, or has an unknown key, a wrong type or a bad value."""


class InputError(UsageError):
    """An input can't be read. Carries the input it concerns."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
