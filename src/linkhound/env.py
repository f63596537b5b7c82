"""${NAME} in config values: replaced by the environment variable NAME, an error naming it when unset."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from .exceptions import ConfigError

_ENV = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}")  # ${NAME}; $${NAME} is the literal text ${NAME}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def expand_env(where: str, value: Any, path: str = "", found: set[str] | None = None) -> Any:
    """value with ${NAME} in every string (in tables and arrays too) replaced by the environment variable NAME.

    An unset variable is a ConfigError naming `where` (the file) and the key path; an empty one is fine.
    The non-empty values substituted are added to found, so that they can be masked wherever they are shown.
    """
    if isinstance(value, str):
        if "${" not in value:
            return value

        def sub(m: re.Match[str]) -> str:
            if m[1]:
                return "${" + m[2] + "}"
            env = os.environ.get(m[2])
            if env is None:
                raise ConfigError(f"{where}: {path}: environment variable {m[2]} is not set")
            if env and found is not None:
                found.add(env)
            return env

        return _ENV.sub(sub, value)
    if isinstance(value, Mapping):
        return {k: expand_env(where, v, key_path(path, k), found) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(where, v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


def key_path(path: str, key: str) -> str:
    """The TOML dotted path of key under path: `hosts."a.test".headers`."""
    if _BARE_KEY.fullmatch(key):
        k = key
    else:
        import json  # here: a quoted key is rare, and a run need not load it

        k = json.dumps(key)
    return f"{path}.{k}" if path else k
