"""Exceptions linkhound raises. Broken links are Results, not exceptions.

    LinkhoundError
    ├── UsageError        bad settings, flags or config values (exit code 1)
    │   ├── OptionError   one setting has a bad value: carries its name and the problem
    │   └── ConfigError   a config file is wrong: the message names the file and the key
    └── InputError        an input that can't be read: missing file, bad glob, bad URL (exit code 1)
"""

from __future__ import annotations


class LinkhoundError(Exception):
    """Base of every error linkhound raises on purpose."""


class UsageError(LinkhoundError):
    """A setting, flag or config value is wrong. The message names it."""


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


class InputError(LinkhoundError):
    """An input can't be read. Carries the input it concerns."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
