"""Config files: [tool.linkhound] in pyproject.toml, linkhound.toml, --config FILE, and .linkhoundignore.

Every key is a Settings field (the long flag in snake_case), plus `inputs`, `files_from` and `[[status]]`
tables. Each file is checked on its own, so an error names the file and the key; then the files merge in order
(pyproject.toml < linkhound.toml < each --config), a later value replacing an earlier one and `[hosts]` tables
merging by host name. Flags, or a library call's keyword options, go over the result the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .env import expand_env, key_path
from .exceptions import ConfigError, OptionError, UsageError
from .options import OptionField, coerce, describe, option_fields, suggest
from .settings import Settings, format_accept, setting_names

CONFIG_FILE = "linkhound.toml"
PYPROJECT = "pyproject.toml"
IGNORE_FILE = ".linkhoundignore"
INPUT_KEYS = ("inputs", "files_from")  # what to check: used when the command line names no inputs
# Header names whose values are credentials: shown as *** by --print-config, whatever their source.
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|passw|api-?key|session", re.IGNORECASE)
MASK = "***"


@dataclass(frozen=True)
class Config:
    """What the config files say: Settings options, what to check, and the values that must not be shown."""

    options: dict[str, Any] = field(default_factory=dict)  # Settings keyword options, types checked
    inputs: tuple[str, ...] = ()
    files_from: str | None = None
    ignore: tuple[str, ...] = ()  # .linkhoundignore patterns: added to exclude, whatever sets exclude
    files: tuple[str, ...] = ()  # the files read, in order
    secrets: frozenset[str] = frozenset()  # values that came from ${ENV} variables

    def merged(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """Settings options: overrides over the files' (a value replaces; [hosts] merge by host), plus ignore."""
        out = dict(self.options)
        for key, value in overrides.items():
            out[key] = {**out.get("hosts", {}), **value} if key == "hosts" else value
        if self.ignore:
            out["exclude"] = (*out.get("exclude", ()), *self.ignore)
        return out

    def mask(self, text: str) -> str:
        """text with every secret replaced by ***."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text


def load_config(files: Sequence[str] = (), *, discover: bool = True) -> Config:
    """Read the config of the current directory (when discover) and then each of files, in order.

    Raises ConfigError naming the file and key of the first problem: unreadable file, bad TOML, unknown key,
    wrong type, bad value, unset environment variable.
    """
    sources: list[tuple[str, Mapping[str, Any]]] = []
    if discover:
        data = _read_bytes(PYPROJECT) if os.path.isfile(PYPROJECT) else b""
        if b"linkhound" in data:  # (most pyproject.toml files don't name it: not parsed, tomllib not loaded)
            tool = _read_toml(PYPROJECT, data).get("tool", {})
            table = tool.get("linkhound") if isinstance(tool, Mapping) else None
            if table is not None:
                sources.append((f"{PYPROJECT} [tool.linkhound]", _table(f"{PYPROJECT} [tool.linkhound]", table)))
        if os.path.isfile(CONFIG_FILE):
            sources.append((CONFIG_FILE, _read_toml(CONFIG_FILE)))
    sources.extend((f, _read_toml(f)) for f in files)

    options: dict[str, Any] = {}
    inputs: tuple[str, ...] = ()
    files_from: str | None = None
    secrets: set[str] = set()
    for where, table in sources:
        part = _file_options(where, table, secrets)
        inputs = part.pop("inputs", inputs)
        files_from = part.pop("files_from", files_from)
        for key, value in part.items():
            options[key] = {**options.get("hosts", {}), **value} if key == "hosts" else value
    ignore = read_ignore_file(IGNORE_FILE) if discover and os.path.isfile(IGNORE_FILE) else ()
    read = [where for where, _ in sources] + ([IGNORE_FILE] if ignore else [])
    return Config(options, inputs, files_from, ignore, tuple(read), frozenset(secrets))


def read_ignore_file(path: str) -> tuple[str, ...]:
    """The patterns of a .linkhoundignore: one regular expression per line, '#' comments, blank lines skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: can't read: {_why(e)}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            re.compile(line)
        except (re.error, OverflowError, RecursionError) as e:
            raise ConfigError(f"{path}:{number}: bad regular expression '{line}': {e}") from None
        out.append(line)
    return tuple(out)


# -- one file -------------------------------------------------------------------------------------------


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"{path}: can't read: {_why(e)}") from None


def _read_toml(path: str, data: bytes | None = None) -> dict[str, Any]:
    """The TOML of path (its bytes, when read already)."""
    import tomllib  # only when there is a file to read (~3 ms to load)

    try:
        return tomllib.loads((_read_bytes(path) if data is None else data).decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None


def _table(where: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: must be a table")
    return value


def _file_options(where: str, table: Mapping[str, Any], secrets: set[str]) -> dict[str, Any]:
    """The options of one file, each type checked, and checked together the way Settings checks flags."""
    known = (*setting_names(), *INPUT_KEYS, "status")
    for key in table:
        if key not in known:
            raise ConfigError(f"{where}: unknown key '{key}'{suggest(key, known)}")
    found: set[str] = set()
    table = expand_env(where, table, "", found)
    secrets |= found
    options: dict[str, Any] = {}
    try:
        for key, value in table.items():
            if key == "status":
                rules = _status_rules(where, value)
                options["accept_for"] = (*options.get("accept_for", ()), *rules)
            elif key in INPUT_KEYS:
                options[key] = _input_key(where, key, value)
            elif key == "accept_for":
                options[key] = (*coerce(_declared(key), value), *options.get(key, ()))
            else:
                options[key] = coerce(_declared(key), value)
        Settings(**{k: v for k, v in options.items() if k not in INPUT_KEYS})
    except OptionError as e:
        raise ConfigError(_masked(f"{where}: {e.option}: {e.problem}", found)) from None
    except ConfigError as e:
        raise ConfigError(_masked(str(e), found)) from None
    except UsageError as e:
        raise ConfigError(_masked(f"{where}: {e}", found)) from None
    return options


def _declared(name: str) -> OptionField:
    return next(f for f in option_fields(Settings) if f.name == name)


def _input_key(where: str, key: str, value: object) -> Any:
    """inputs (an array of strings) or files_from (a string): what to check, not Settings."""
    if key == "files_from" and isinstance(value, str):
        return value
    if key == "inputs" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _wrong(where, key, "a string" if key == "files_from" else "an array of strings", value)


def _status_rules(where: str, value: object) -> list[str]:
    """[[status]] tables (pattern = REGEX, accept = codes) as accept_for specs, 'REGEX CODES'."""
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise _wrong(where, "status", "[[status]] tables with pattern and accept", value)
    out = []
    for i, rule in enumerate(value, 1):
        at = f"{where}: [[status]] #{i}"
        unknown = sorted(set(rule) - {"pattern", "accept"})
        if unknown:
            raise ConfigError(f"{at}: unknown key '{unknown[0]}' (known: accept, pattern)")
        pattern, codes = rule.get("pattern"), rule.get("accept")
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigError(f"{at}: pattern must be a regular expression (a string)")
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as e:
            raise ConfigError(f"{at}: pattern: bad regular expression '{pattern}': {e}") from None
        if not isinstance(codes, str | list):
            raise ConfigError(f"{at}: accept must be an array of status codes or a string like \"403,999\"")
        try:
            accepted = coerce(_declared("accept"), codes)
        except OptionError as e:
            raise ConfigError(f"{at}: accept: {e.problem}") from None
        out.append(f"{pattern.strip()} {format_accept(accepted)}")
    return out


def _wrong(where: str, key: str, wanted: str, value: object) -> ConfigError:
    return ConfigError(f"{where}: {key}: expected {wanted}, got {describe(value)}")


def _masked(text: str, secrets: set[str]) -> str:
    return Config(secrets=frozenset(secrets)).mask(text)


def _why(e: BaseException) -> str:
    return e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)


# -- --print-config -------------------------------------------------------------------------------------


def render(settings: Settings, config: Config, inputs: Sequence[str] = (), files_from: str | None = None) -> str:
    """The settings in effect as a TOML config file (that linkhound reads back). Secrets show as ***."""
    import json  # here, as in _toml: only --print-config needs it

    lines = [
        "# linkhound --print-config: the settings in effect (defaults < config files < flags)",
        f"# read: {', '.join(config.files) or 'no config file'}",
    ]
    if inputs:
        lines.append(f"inputs = {_toml(list(inputs), config)}")
    if files_from:
        lines.append(f"files_from = {_toml(files_from, config)}")
    for f in option_fields(Settings):
        name = f.name
        if name == "hosts":  # tables, after the keys
            continue
        value = getattr(settings, name)
        if value is None:
            lines.append(f"# {name} is not set")
            continue
        if f.option.show is not None:
            value = f.option.show(value)
        elif name == "header":
            value = [_mask_header(h) for h in value]
        elif name == "basic_auth":
            value = [_mask_auth(spec) for spec in value]
        lines.append(f"{name} = {_toml(value, config)}")
    for host, spec in settings.hosts.items():
        lines += ["", f"[hosts.{json.dumps(host)}]"]
        for key, value in spec.items():
            if key == "headers":
                value = {k: MASK if _SECRET_HEADER.search(k) else v for k, v in value.items()}
            lines.append(f"{key} = {_toml(value, config)}")
    return "\n".join(lines) + "\n"


def _mask_header(header: str) -> str:
    name, _, _ = header.partition(":")
    return f"{name}: {MASK}" if _SECRET_HEADER.search(name) else header


def _mask_auth(spec: str) -> str:
    pattern, _, credentials = spec.partition(" ")
    return f"{pattern} {credentials.strip().split(':', 1)[0]}:{MASK}"


def _toml(value: object, config: Config) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        import json  # here: only --print-config needs it

        return json.dumps(config.mask(value), ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v, config) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{key_path('', str(k))} = {_toml(v, config)}" for k, v in value.items())
        return "{ " + ", ".join(items) + " }" if value else "{}"
    raise TypeError(f"can't write {type(value).__name__} as TOML")
