"""Per-host settings (`[hosts."name"]` in a config file, or --host-config FILE): limits and headers."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from .env import expand_env
from .exceptions import OptionError, UsageError
from .host_pool import HostLimits

_KEYS = {"concurrency", "rate", "burst", "headers"}


class HostSettings(NamedTuple):
    concurrency: int | None = None
    rate: float | None = None
    burst: int | None = None
    headers: Mapping[str, str] = MappingProxyType({})

    def limits(self, default: HostLimits) -> HostLimits:
        return HostLimits(
            self.concurrency or default.concurrency,
            self.rate if self.rate is not None else default.rate,
            self.burst or default.burst,
        )


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP token
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # not allowed in a header value (a tab is)


def header_problem(name: str, value: str) -> str | None:
    """What is wrong with a request header, if anything (sent as it is, it would fail every request)."""
    if not _HEADER_NAME.fullmatch(name):
        return f"'{name}' is not a header name (letters, digits, '-' and the like; no spaces)"
    if _CONTROL.search(value):
        return f"the value of '{name}' holds a control character (a line break?)"
    return None


def parse_hosts(table: Mapping[str, Any], where: str) -> dict[str, HostSettings]:
    """Validate a {host: {concurrency, rate, burst, headers}} table; errors name the host, key and file. Without
    a file (where is ""), the table is the `hosts` option's: an error is an OptionError of it."""

    def bad(problem: str) -> UsageError:
        return UsageError(f"{where}: hosts.{problem}") if where else OptionError("hosts", problem)

    if not isinstance(table, Mapping):
        raise UsageError(f"{where}: hosts must be a table") if where else OptionError("hosts", "must be a table")
    out: dict[str, HostSettings] = {}
    for host, spec in table.items():
        at = f'"{host}"'
        if not isinstance(spec, Mapping):
            raise bad(f"{at} must be a table")
        unknown = set(spec) - _KEYS
        if unknown:
            raise bad(f"{at}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})")
        concurrency = _number(spec, "concurrency", int, at, bad)
        rate = _number(spec, "rate", float, at, bad)
        burst = _number(spec, "burst", int, at, bad)
        if concurrency is not None and concurrency < 1 or burst is not None and burst < 1:
            raise bad(f"{at}: concurrency and burst must be at least 1")
        if rate is not None and rate <= 0:
            raise bad(f"{at}: rate must be positive")
        headers = spec.get("headers", {})
        if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
            raise bad(f"{at}: headers must be a table of strings")
        for name, value in headers.items():
            if (problem := header_problem(name, value)) is not None:
                raise bad(f"{at}.headers: {problem}")
        out[host.lower()] = HostSettings(concurrency, rate, burst, dict(headers))
    return out


def load_host_config(path: str) -> dict[str, HostSettings]:
    import tomllib  # only with --host-config

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise OptionError("host_config", f"{path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise OptionError("host_config", f"{path}: not valid TOML: {e}") from None
    hosts = data.get("hosts", {})
    unknown = set(data) - {"hosts"}
    if unknown:
        raise OptionError("host_config", f"{path}: only [hosts.\"name\"] tables belong here, found {sorted(unknown)}")
    try:
        return parse_hosts(expand_env(path, hosts, "hosts"), path)
    except UsageError as e:
        raise OptionError("host_config", str(e)) from None


def _number(spec: Mapping[str, Any], key: str, kind: type, at: str, bad: Callable[[str], UsageError]) -> Any:
    value = spec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or kind is int and not isinstance(value, int):
        raise bad(f"{at}: {key} must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    return kind(value)
