"""Expanding arguments into documents: walking, globs, errors that name the input."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from linkhound.exceptions import InputError, UsageError
from linkhound.inputs import collect, read_files_from


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


def test_walk_reads_files_and_symlinks_to_them_and_passes_over_fifos_and_broken_symlinks(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    os.symlink("a.md", tmp_path / "b.md")  # a symlink to a file: read
    os.symlink("nowhere.md", tmp_path / "c.md")  # to nothing: no document (a link to it is reported)
    os.mkfifo(tmp_path / "d.md")  # reading it would wait for a writer for ever
    found = [Path(i.location).name for i in collect([str(tmp_path)])]
    assert found == ["a.md", "b.md"]


def test_walk_passes_over_symlink_loops_as_broken_symlinks(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    os.symlink("self.md", tmp_path / "self.md")  # a loop of one
    os.symlink("y.md", tmp_path / "x.md")  # and of two
    os.symlink("x.md", tmp_path / "y.md")
    found = [Path(i.location).name for i in collect([str(tmp_path)])]
    assert found == ["a.md"]


def test_a_broken_symlink_named_as_an_input_is_an_error_saying_so(tmp_path: Path) -> None:
    os.symlink("nowhere.md", tmp_path / "dangling.md")
    os.symlink("self.md", tmp_path / "self.md")
    with pytest.raises(InputError, match="dangling.md: broken symlink: no such file or directory$"):
        collect([str(tmp_path / "dangling.md")])
    with pytest.raises(InputError, match="self.md: broken symlink: too many levels of symbolic links$"):
        collect([str(tmp_path / "self.md")])


def test_a_file_named_or_found_again_is_read_once_as_first_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "a.md").write_text("a")
    (tmp_path / "docs" / "b.md").write_text("b")
    os.symlink("guide/a.md", tmp_path / "docs" / "c.md")  # a document of its own: its links resolve in docs/
    monkeypatch.chdir(tmp_path)
    args = ["docs/guide/a.md", "docs", "docs/guide", "./docs/guide/a.md", str(tmp_path / "docs/guide/a.md"),
            "docs/**/*.md"]
    assert [i.location for i in collect(args)] == ["docs/guide/a.md", "docs/b.md", "docs/c.md"]


def test_a_files_from_list_may_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    listing = tmp_path / "list.txt"
    listing.write_bytes(b"\xef\xbb\xbf" + str(tmp_path / "a.md").encode() + b"\r\n# a comment\r\n")
    assert [(n.text, n.line) for n in read_files_from(str(listing))] == [(str(tmp_path / "a.md"), 1)]


def test_a_file_url_input_is_read_from_this_machine_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a b.md").write_text("a")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "host").mkdir()  # file://host/x.md is not ./host/x.md
    (tmp_path / "host" / "x.md").write_text("x")
    for url in (f"file://{tmp_path}/a%20b.md", f"file://localhost{tmp_path}/a%20b.md"):
        assert [i.location for i in collect([url])] == [str(tmp_path / "a b.md")]
    with pytest.raises(InputError, match="another host \\(host\\)"):
        collect(["file://host/x.md"])


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


def test_empty_input_is_an_error_not_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("a")
    monkeypatch.chdir(tmp_path)
    for empty in ("", "  "):
        with pytest.raises(InputError, match="empty input"):
            collect([empty])


def test_input_error_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        collect(["/no/such/input.md"])


def test_unreadable_directory_is_an_input_error_naming_it() -> None:
    top = _unreadable("/proc/1/fdinfo", "/proc/1/map_files")
    with pytest.raises(InputError, match=f"^{top}: can't list directory: permission denied$"):
        collect([top])


def test_unreadable_subdirectory_is_an_input_error_naming_it_with_a_way_out() -> None:
    sub = _unreadable("/proc/1/fdinfo", "/proc/1/map_files")
    parent, name = os.path.split(sub)
    # walk only the unreadable folder's parent and that folder: the rest of /proc/1 is left out
    others = re.compile(f"^{re.escape(parent)}/(?!{re.escape(name)}/)")
    with pytest.raises(InputError, match=f"^{sub}: can't list directory: permission denied \\(--exclude-path"):
        collect([parent], exclude_path=(others,))
    # and the way out works
    leave_out = re.compile(f"^{re.escape(parent)}/")
    assert collect([parent], exclude_path=(leave_out,)) == []


def test_unreadable_subdirectory_by_mode_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.md").write_text("a")
    (tmp_path / "locked").chmod(0)
    try:
        if os.access(tmp_path / "locked", os.R_OK):
            pytest.skip("this user reads a directory of mode 000 (root): see the /proc test above")
        with pytest.raises(InputError, match="locked: can't list directory: permission denied"):
            collect([str(tmp_path)])
    finally:
        (tmp_path / "locked").chmod(0o755)


def _unreadable(*candidates: str) -> str:
    """A directory this user can't list, even as root (another process's fdinfo, without ptrace rights)."""
    for path in candidates:
        try:
            os.listdir(path)
        except PermissionError:
            return path
        except OSError:
            continue
    pytest.skip(f"none of {candidates} is unreadable here")
