"""Command-line arguments shared by the commands (`linkhound`, `linkhound fix`): a flag for every Settings
option, by group, and the parser that turns a usage error into one line and exit code 1."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from .options import GROUPS, OptionField, option_fields
from .settings import Settings

EXIT_USAGE = 1


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # one line, exit code 1: usage errors are not tracebacks
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, its width found as shutil.get_terminal_size finds it, without loading shutil
    (and the compression modules it loads): argparse makes a formatter for every flag added, on every run."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """The terminal's width: $COLUMNS if set, else stdout's terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def add_config_flags(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    g = p.add_argument_group("config")
    g.add_argument("--config", action="append", metavar="FILE",
                   help="read settings from FILE after pyproject.toml and linkhound.toml (repeatable; later wins)")
    g.add_argument("--no-config", action="store_true",
                   help="don't read pyproject.toml, linkhound.toml or .linkhoundignore from this directory")
    return g


def add_settings_flags(p: argparse.ArgumentParser, leave_out: frozenset[str] = frozenset()) -> None:
    """A flag for every Settings option (but those named in leave_out), in the groups of the option table."""
    declared = [f for f in option_fields(Settings) if not f.option.config_only and f.name not in leave_out]
    for group in GROUPS:
        g = p.add_argument_group(group)
        for f in declared:
            if f.option.group == group:
                help_text = f.help_text().replace("%", "%%")  # argparse formats help with %
                g.add_argument(*f.flags, dest=f.name, default=None, help=help_text, **_how(f))


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _how(f: OptionField) -> dict[str, Any]:
    """How argparse reads f: on/off with a --no- form, a repeatable or comma-separated list, a number, text.

    Every flag defaults to None, "not given", so that only what the user typed goes over the config files."""
    if f.kind is bool:
        # the --no- form lets a flag undo what a config file turned on (or off)
        return {"action": argparse.BooleanOptionalAction}
    how: dict[str, Any] = {"metavar": f.option.metavar} if f.option.metavar else {}
    if f.option.choices:
        how["choices"] = f.option.choices
    if f.kind is tuple:
        how.update({"type": _csv} if f.option.comma else {"action": "append"})
    elif f.kind in (int, float):
        how["type"] = f.kind
    return how  # str, and values Settings reads from a string (--accept)


def options_from_args(ns: argparse.Namespace) -> dict[str, Any]:
    """The settings the user gave on the command line (unset flags are left out)."""
    given = ((f.name, getattr(ns, f.name, None)) for f in option_fields(Settings))
    return {name: tuple(v) if isinstance(v, list) else v for name, v in given if v is not None}
