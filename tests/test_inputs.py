"""Expanding arguments into documents: walking, globs, errors that name the input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linkhound.exceptions import InputError
from linkhound.inputs import collect


def test_walk_skips_hidden_and_does_not_follow_symlinked_folders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "sub" / "b.html").write_text("b")
    (tmp_path / ".hidden" / "c.md").write_text("c")
    (tmp_path / "notes.bin").write_text("d")
    os.symlink(tmp_path, tmp_path / "sub" / "loop")  # a cycle
    found = [Path(i.location).relative_to(tmp_path).as_posix() for i in collect([str(tmp_path)])]
    assert found == ["a.md", "sub/b.html"]
    hidden = [Path(i.location).name for i in collect([str(tmp_path)], hidden=True)]
    assert "c.md" in hidden


def test_errors_name_the_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nope.md: no such file"):
        collect([str(tmp_path / "nope.md")])
    with pytest.raises(InputError, match="matches no files"):
        collect([str(tmp_path / "*.md")])
    with pytest.raises(InputError, match="not a valid URL"):
        collect(["http://exa mple.com/"])
    with pytest.raises(InputError, match="unsupported input URL scheme"):
        collect(["ftp://example.org/x"])


def test_file_with_unknown_suffix_is_read_as_text_and_urls_stay_urls(tmp_path: Path) -> None:
    (tmp_path / "urls.list").write_text("https://example.org/\n")
    inputs = collect([str(tmp_path / "urls.list"), "https://example.org/page"])
    assert inputs[0].kind is not None and inputs[0].kind.value == "text"
    assert inputs[1].is_url and inputs[1].location == "https://example.org/page"
