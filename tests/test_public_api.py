"""The package's one public face: __all__ lists exactly what it exports."""

from __future__ import annotations

import subprocess
import sys

import linkhound


def test_all_matches_the_public_names() -> None:
    public = {name for name in dir(linkhound) if not name.startswith("_") and not _is_module(name)}
    assert sorted(linkhound.__all__) == linkhound.__all__
    assert set(linkhound.__all__) == public | {"__version__"}


def _is_module(name: str) -> bool:
    return type(getattr(linkhound, name)).__name__ == "module"


def test_import_does_not_load_the_http_stack() -> None:
    code = "import sys, linkhound; print('aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
