"""The pre-commit hook (.pre-commit-hooks.yaml), installed and run by pre-commit itself from this repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")

REPO = Path(__file__).parent.parent
STARTUP = str(Path(__file__).parent / "startup")  # the tests' DNS guard (conftest)


def test_hook_definition() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "linkhound" and hook["language"] == "python"
    assert hook["entry"] == "linkhound --offline"
    assert hook["types_or"] == ["markdown", "html"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.mark.slow
def test_pre_commit_try_repo_fails_on_a_broken_link_and_passes_a_good_one(tmp_path: Path) -> None:
    """Two throwaway repositories, one with a broken relative link, one without, each given to `pre-commit
    try-repo` (which clones this repository and pip-installs it into the hook's environment, as users get it)."""
    repos = {}
    for name, target in (("bad", "missing.md"), ("good", "other.md")):
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q")
        (repo / "other.md").write_text("# Other\n", encoding="utf-8")
        (repo / "page.md").write_text(f"# Page\n\nSee [the other page]({target}).\n", encoding="utf-8")
        (repo / "page.html").write_text('<a href="other.md">ok</a> <a href="https://example.test/">skipped</a>\n')
        (repo / "notes.txt").write_text("[not read](gone.md)\n", encoding="utf-8")  # not markdown or html
        git(repo, "add", ".")
        repos[name] = repo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    # pip reaches the package index by name: the tests' DNS guard (conftest) is left out of these processes
    env["PYTHONPATH"] = os.pathsep.join(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != STARTUP)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "cache")
    # Both at once: most of each run is waiting on pip.
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "linkhound", "--all-files", "--color=never",
             "--verbose"],
            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for name, repo in repos.items()
    }
    out = {name: p.communicate(timeout=600)[0] for name, p in procs.items()}

    assert procs["bad"].returncode == 1, out["bad"]
    assert "- exit code: 2" in out["bad"]
    assert "broken: missing.md (file not found)" in out["bad"] and "in page.md:3:" in out["bad"]
    assert "gone.md" not in out["bad"]
    # page.md, page.html and other.md: three links, the remote one skipped (--offline).
    assert "3 links (3 unique) in 3 documents: 1 ok, 1 broken" in out["bad"] and "1 skipped" in out["bad"]

    assert procs["good"].returncode == 0, out["good"]
    assert "linkhound" in out["good"] and "Passed" in out["good"]
    assert "3 links (2 unique) in 3 documents: 1 ok, 0 broken" in out["good"]
