"""An option declared once, on its Settings field: help, flags, group; the parser, config checks and docs follow.

    max_depth: int | None = option(None, "link hops from a seed to crawl", CRAWLING, metavar="N",
                                   default_text="no limit")

The field's name is the config key and, with dashes, the long flag (--max-depth); its type says how a value
is checked (config files, library calls) and read from the command line; its default is what help and docs
show. `option_fields(Settings)` reads the table back.
"""

from __future__ import annotations

import functools
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, field, fields
from typing import Any, NamedTuple

from .exceptions import OptionError

CRAWLING, LINKS, LOCAL, REQUESTS, OUTPUT = "crawling", "which links", "local files", "requests", "output"
GROUPS = (CRAWLING, LINKS, LOCAL, REQUESTS, OUTPUT)  # in the order --help and the docs show them
_KINDS = (bool, int, float, str, tuple, frozenset, dict)  # tuple: of str; frozenset: of int (status codes)
_META = "linkhound.option"


class Option(NamedTuple):
    """What a Settings field says about itself besides its name, type and default."""

    help: str  # a phrase, lower case, no final period: "crawl at most N pages"
    group: str  # one of GROUPS
    short: str | None = None  # "-r": the long flag is always --name-with-dashes
    metavar: str | None = None  # BYTES shows the default as KiB/MiB
    choices: tuple[str, ...] = ()  # the only values allowed (--method head|get)
    comma: bool = False  # a list given as one comma-separated value (--scheme http,https), not a repeated flag
    default_text: str | None = None  # what an empty default (None, "", ()) means: "no limit"
    parse: Callable[[str], Any] | None = None  # reads the string form of a value that isn't a string
    show: Callable[[Any], str] | None = None  # writes such a value back as that string
    at_least: int | None = None  # the smallest value allowed (numbers)
    positive: bool = False  # only values above zero (numbers)
    config_only: bool = False  # no flag: set in a config file or from Python ([hosts] tables)
    # how the command writes its report: not a keyword of check(), start() or crawl(), which return the Report
    # and print nothing (a config file or a Settings may hold it: the command's)
    command_only: bool = False


def option(
    default: Any = MISSING,
    help: str = "",
    group: str = "",
    *,
    short: str | None = None,
    metavar: str | None = None,
    choices: tuple[str, ...] = (),
    comma: bool = False,
    default_text: str | None = None,
    parse: Callable[[str], Any] | None = None,
    show: Callable[[Any], str] | None = None,
    at_least: int | None = None,
    positive: bool = False,
    config_only: bool = False,
    command_only: bool = False,
    factory: Callable[[], Any] | None = None,
    secret: bool = False,
) -> Any:
    """A dataclass field that declares an option (the arguments are Option's); factory builds a mutable
    default, secret keeps the value out of repr()."""
    o = Option(help, group, short, metavar, choices, comma, default_text, parse, show, at_least, positive, config_only,
               command_only)
    meta = {_META: o}
    if factory is not None:
        return field(default_factory=factory, repr=not secret, metadata=meta)
    return field(default=default, repr=not secret, metadata=meta)


class OptionField(NamedTuple):
    """A declared option with what its field knows: name, kind (the type without None) and default."""

    name: str
    kind: type
    optional: bool  # None is a value (meaning default_text)
    default: Any
    option: Option

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        return (self.option.short, self.flag) if self.option.short else (self.flag,)

    @property
    def repeatable(self) -> bool:
        return self.kind is tuple and not self.option.comma

    def shown_default(self) -> str | None:
        """The default as help and docs show it; None when there is nothing to say (off, unset, empty)."""
        d, o = self.default, self.option
        if d is True:
            return "on"
        if _is_empty(d):
            return o.default_text
        if o.show is not None:
            return o.show(d)
        if self.kind is tuple:
            return ",".join(d)
        if o.metavar == "BYTES":
            return _size(d)
        return f"{d:g}" if isinstance(d, float) else str(d)

    def help_text(self) -> str:
        """The help line: the declared phrase, then (repeatable; default: X) as they apply."""
        notes = ["repeatable"] if self.repeatable else ["comma-separated"] if self.option.comma else []
        shown = self.shown_default()
        if shown is not None:
            notes.append(f"default: {shown}")
        return f"{self.option.help} ({'; '.join(notes)})" if notes else self.option.help


@functools.cache
def option_fields(cls: type) -> tuple[OptionField, ...]:
    """The options a dataclass declares, in field order. Every public field must be declared with option()."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        if f.name.startswith("_"):
            continue
        o = f.metadata.get(_META)
        if not isinstance(o, Option):
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with option()")
        if o.group not in GROUPS:
            raise TypeError(f"{cls.__name__}.{f.name}: group {o.group!r} is not one of {GROUPS}")
        kind, optional = _kind(hints[f.name])
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        if o.default_text is not None and not _is_empty(default):
            # the default is shown from the field: a hand-written copy would drift
            raise TypeError(f"{cls.__name__}.{f.name}: default_text is only for an empty default")
        out.append(OptionField(f.name, kind, optional, default, o))
    return tuple(out)


def _is_empty(value: object) -> bool:
    """None, off, or an empty string or list: a default that says nothing on its own."""
    return value is None or value is False or isinstance(value, str | tuple | dict | frozenset) and not value


def _kind(hint: object) -> tuple[type, bool]:
    optional = False
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional, hint = len(args) < len(typing.get_args(hint)), args[0]
    kind = typing.get_origin(hint) or hint
    if kind not in _KINDS:
        raise TypeError(f"no option kind for {hint}")
    return typing.cast(type, kind), optional


# -- values ---------------------------------------------------------------------------------------------


_WANTED = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    tuple: "an array of strings",
    frozenset: 'a string like "200..=299,403" or an array of status codes',
    dict: "a table",
}


def coerce(f: OptionField, value: object) -> Any:
    """value as f's type wants it (an array as a tuple, an integer as a float), checked against the declared
    choices and bounds; an OptionError naming the option and what it expects otherwise."""
    if value is None and f.optional:
        return None
    typed = _typed(f, value)
    if typed is None:
        raise OptionError(f.name, f"expected {_WANTED[f.kind]}, got {describe(value)}")
    o = f.option
    if f.kind is float and not math.isfinite(typed):  # (nan compares false with every bound below)
        raise OptionError(f.name, f"must be a finite number, got {typed}")
    if o.choices and typed not in o.choices:
        quoted = [f"'{c}'" for c in o.choices]
        raise OptionError(f.name, f"must be {', '.join(quoted[:-1])} or {quoted[-1]}, got '{typed}'")
    if o.at_least is not None and typed < o.at_least:
        rule = "must not be negative" if o.at_least == 0 else f"must be at least {o.at_least}"
        raise OptionError(f.name, f"{rule}, got {typed}")
    if o.positive and typed <= 0:
        raise OptionError(f.name, f"must be positive, got {typed}")
    return typed


def _typed(f: OptionField, value: object) -> Any:
    """value converted to f.kind, or None when it isn't one."""
    kind = f.kind
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):  # a bool is an int to Python, never a number to a user
        return None
    if kind is int:
        return value if isinstance(value, int) else None
    if kind is float:
        return float(value) if isinstance(value, int | float) else None
    if kind is str:  # (a path option may be given a pathlib.Path)
        return value if isinstance(value, str) else os.fspath(value) if isinstance(value, os.PathLike) else None
    if kind is tuple:
        ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        return tuple(typing.cast(Iterable[str], value)) if ok else None
    if kind is frozenset:
        assert f.option.parse is not None, f"{f.name}: a frozenset option needs parse"
        if isinstance(value, str):
            return f.option.parse(value)
        if isinstance(value, list | tuple | set | frozenset) and all(
            isinstance(c, int | str) and not isinstance(c, bool) for c in value
        ):
            return f.option.parse(",".join(str(c) for c in value))
        return None
    if isinstance(value, Mapping):  # dict: {key: table}
        return {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
    return None


def describe(value: object) -> str:
    """A value as an error message names it, in the words of a config file: 'a string ("3")'."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        import json  # (only for this message: not loaded on every run)

        return f"a string ({json.dumps(value)[:60]})"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "a table"
    return type(value).__name__


def suggest(name: str, known: Iterable[str]) -> str:
    """' (did you mean 'max_concurrency'?)' for a misspelled name, '' when nothing is close."""
    import difflib  # only for a name that is wrong

    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return str(n)


# -- the docs ---------------------------------------------------------------------------------------------

REFERENCE_START = "<!-- options:start -->"
REFERENCE_END = "<!-- options:end -->"
_DOC_KIND = {
    bool: "true/false",
    int: "integer",
    float: "number",
    str: "string",
    tuple: "array of strings",
    frozenset: 'string like "200..=299,403", or array of codes',
    dict: "tables",
}


def reference(options: Iterable[OptionField]) -> str:
    """The Markdown option reference, by group: flag, config key and type, help, default."""
    options = list(options)
    lines = [
        REFERENCE_START,
        "<!-- generated from the Settings fields (linkhound.settings.option_reference()): edit those, not this -->",
    ]
    for group in GROUPS:
        lines += ["", f"#### {group.capitalize()}", ""]
        for f in options:
            if f.option.group == group:
                lines.append(_reference_line(f))
    lines += ["", REFERENCE_END]
    return "\n".join(lines) + "\n"


def _reference_line(f: OptionField) -> str:
    o = f.option
    kind = _DOC_KIND[f.kind] + ("; comma-separated on the command line" if o.comma else "")
    if o.config_only:
        head = f"`{f.name}` ({kind}; no flag: config file or Python only)"
    else:
        value = "" if f.kind is bool else " " + ("|".join(o.choices) or o.metavar or f.name.upper())
        spelled = [f"`{o.short}`"] if o.short else []
        spelled.append(f"`{f.flag}{value}`" + (f" / `--no-{f.flag[2:]}`" if f.kind is bool else ""))
        if f.repeatable:
            kind += "; the flag repeats"
        if o.command_only:
            kind += "; the command's: not a library keyword"
        head = f"{', '.join(spelled)} · `{f.name}` ({kind})"
    text = f"- {head}: {_md(o.help)}."
    shown = f.shown_default()
    if shown is not None:
        text += f" Default: {_md(shown) if o.default_text is not None or shown == 'on' else f'`{shown}`'}."
    return text


def _md(text: str) -> str:
    return text.replace("<", "\\<")  # linkhound/<version> is not an HTML tag
