"""A local document is named by one spelling in every report format: its path as given, normalized ("./docs//a.md"
is "docs/a.md"); SARIF gives one outside the current folder (its %SRCROOT%) as an absolute file: URI."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import run


def _docs(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("[x](nofile.md)\n")
    return tmp_path


def test_every_format_names_a_document_by_its_normalized_path(tmp_path: Path) -> None:
    _docs(tmp_path)
    got = json.loads(run("--no-progress", "-q", "-f", "json", "./docs//a.md", cwd=tmp_path).stdout)
    assert {ref["source"] for r in got["results"] for ref in r["references"]} == {"docs/a.md"}
    github = run("--no-progress", "-q", "-f", "github", "./docs/./a.md", cwd=tmp_path).stdout
    assert "file=docs/a.md," in github
    junit = run("--no-progress", "-q", "-f", "junit", "docs//a.md", cwd=tmp_path).stdout
    assert '<testsuite name="docs/a.md"' in junit
    sarif = json.loads(run("--no-progress", "-q", "-f", "sarif", "./docs/a.md", cwd=tmp_path).stdout)
    (location,) = sarif["runs"][0]["results"][0]["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "docs/a.md", "uriBaseId": "%SRCROOT%"}


def test_sarif_names_a_document_outside_the_current_folder_by_its_absolute_uri(tmp_path: Path) -> None:
    _docs(tmp_path)
    (tmp_path / "sub").mkdir()
    sarif = json.loads(run("--no-progress", "-q", "-f", "sarif", "../docs/a.md", cwd=tmp_path / "sub").stdout)
    (location,) = sarif["runs"][0]["results"][0]["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": (tmp_path / "docs" / "a.md").as_uri()}
