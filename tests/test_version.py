"""The version and the User-Agent: the repository URL comes from the installed package's metadata."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import linkhound
from linkhound.version import PROJECT_URL, _metadata_headers, user_agent

VERSION_PY = Path(linkhound.__file__).parent / "version.py"


def python(code: str, *flags: str, cwd: Path | None = None) -> str:
    r = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_project_urls_are_in_the_package_metadata() -> None:
    urls = dict(entry.split(", ", 1) for entry in metadata.metadata("linkhound").get_all("Project-URL") or [])
    assert urls == {
        "Homepage": "https://github.com/linkhound/linkhound",
        "Repository": "https://github.com/linkhound/linkhound",
        "Issues": "https://github.com/linkhound/linkhound/issues",
        "Documentation": "https://github.com/linkhound/linkhound/tree/main/docs",
    }


def test_user_agent() -> None:
    assert user_agent() == f"linkhound/{linkhound.__version__} (+https://github.com/linkhound/linkhound)"


def test_metadata_read_by_hand_matches_importlib_metadata() -> None:
    headers = [line.split(":", 1) for line in _metadata_headers()]
    assert [v.strip() for k, v in headers if k == "Project-URL"] == metadata.metadata("linkhound").get_all(
        "Project-URL"
    )
    assert [v.strip() for k, v in headers if k == "Version"] == [metadata.version("linkhound")]


def fake_dist(where: Path, *urls: str) -> None:
    """An installed distribution named linkhound, as importlib.metadata finds one on sys.path."""
    info = where / "linkhound-9.9.9.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.4", "Name: linkhound", "Version: 9.9.9", *(f"Project-URL: {u}" for u in urls)]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")


def user_agent_with(path: Path) -> str:
    first = f"import sys; sys.path.insert(0, {str(path)!r})"
    return python(f"{first}; from linkhound.version import user_agent; print(user_agent())")


def test_user_agent_reads_the_repository_of_the_installed_distribution(tmp_path: Path) -> None:
    fake_dist(tmp_path / "a", "Homepage, https://example.test/home", "repository, https://example.test/fork")
    assert user_agent_with(tmp_path / "a").endswith(" (+https://example.test/fork)")
    fake_dist(tmp_path / "b", "Homepage, https://example.test/home", "Issues, https://example.test/issues")
    assert user_agent_with(tmp_path / "b").endswith(" (+https://example.test/home)")
    fake_dist(tmp_path / "c")
    assert user_agent_with(tmp_path / "c").endswith(f" (+{PROJECT_URL})")
    # A source tree's egg-info (setuptools writes one beside the package) counts as well.
    egg = tmp_path / "d" / "linkhound.egg-info"
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text("Name: linkhound\nProject-URL: Repository, https://example.test/egg\n\nBody\n")
    assert user_agent_with(tmp_path / "d").endswith(" (+https://example.test/egg)")


def test_user_agent_without_package_metadata(tmp_path: Path) -> None:
    # -S: no site-packages, so no installed linkhound; version.py loaded from its file, as in a bare source tree.
    code = (
        "import importlib.util as u, sys\n"
        f"spec = u.spec_from_file_location('version', {str(VERSION_PY)!r})\n"
        "m = u.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "print(m.user_agent())\n"
    )
    assert python(code, "-S", "-I", cwd=tmp_path) == f"linkhound/{linkhound.__version__} (+{PROJECT_URL})"


def test_version_flag_and_user_agent_load_no_email_parser() -> None:
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "linkhound", "--version"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == f"linkhound {linkhound.__version__}\n"
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines()}
    assert "linkhound.version" in imported and "importlib.metadata" not in imported
    loaded = python("import sys; from linkhound.version import user_agent; user_agent(); print(sorted(sys.modules))")
    assert "importlib.metadata" not in loaded and "'email" not in loaded
