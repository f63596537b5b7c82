"""--changed-since REF: which lines of which files changed since a git ref, from `git diff --unified=0`.

The diff runs from where REF and HEAD part (their merge base: a pull request's own changes, not what its
target branch did since) to the working tree, so committed, staged and unstaged changes all count, and files
git doesn't track yet (but doesn't ignore) count whole. Renames count as a new file: a moved file's relative
links point elsewhere now."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence

from .exceptions import UsageError

_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_BINARY = re.compile(r'Binary files .* and ("b/.*"|b/.*|/dev/null) differ$')
_GIT_TIMEOUT = 120.0  # seconds: a diff of a huge repository, not a hang


class ChangedLines:
    """The lines added or changed in each file (None: the whole file is new), by real path."""

    def __init__(self, root: str, lines: dict[str, frozenset[int] | None]) -> None:
        self.root = os.path.realpath(root)
        self._lines = {os.path.realpath(os.path.join(root, path)): changed for path, changed in lines.items()}

    def lines(self, path: str) -> frozenset[int] | None:
        """The changed lines of path; None when every line counts (a new file, or one outside the repository,
        of which git can say nothing)."""
        real = os.path.realpath(path)
        if os.path.commonpath([real, self.root]) != self.root:
            return None
        return self._lines.get(real, frozenset())

    @classmethod
    def from_git(cls, ref: str, cwd: str | None = None) -> ChangedLines:
        """Ask git in cwd. Raises UsageError, one line, when there is no repository or no such ref."""
        flag = "--changed-since"
        if ref.startswith("-") or not ref.strip():
            raise UsageError(f"{flag}: '{ref}' is not a branch, tag or commit")
        root = _git(["rev-parse", "--show-toplevel"], cwd, f"{flag} {ref}: not in a git repository")
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd,
             f"{flag} {ref}: no such branch, tag or commit in this repository")
        base = _git(["merge-base", ref, "HEAD"], cwd, f"{flag} {ref}: it and HEAD have no commit in common")
        # paths as this parser reads them, whatever the user's git config says (diff.mnemonicPrefix writes
        # "+++ w/a.md", diff.noprefix "+++ a.md", diff.relative paths under the current folder only)
        diff = _git(["-c", "core.quotepath=off", "diff", "--unified=0", "--no-color", "--no-ext-diff",
                     "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative", base,
                     "--"], cwd, f"{flag} {ref}: git diff failed")
        new = _git(["ls-files", "--others", "--exclude-standard", "-z", "--full-name"], cwd,
                   f"{flag} {ref}: git ls-files failed")
        lines: dict[str, frozenset[int] | None] = dict(parse_diff(diff.splitlines()))
        lines.update((path, None) for path in new.split("\0") if path)
        return cls(root, lines)


def parse_diff(lines: Iterable[str]) -> dict[str, frozenset[int] | None]:
    """The added or changed lines per file (path relative to the repository) of a --unified=0 diff; None for a
    file git calls binary (a NUL byte, a .gitattributes rule), which shows no lines: all of it counts."""
    out: dict[str, set[int] | None] = {}
    current: set[int] | None = None
    for line in lines:
        if line.startswith("+++ "):
            path = _diff_path(line[4:])
            current = None if path is None else out.setdefault(path, set())
        elif line.startswith("@@ ") and current is not None and (m := _HUNK.match(line)):
            start, count = int(m[1]), 1 if m[2] is None else int(m[2])
            current.update(range(start, start + count))
        elif line.startswith("Binary files ") and (m := _BINARY.match(line)):
            current = None
            if (path := _diff_path(m[1])) is not None:
                out[path] = None
    return {path: None if changed is None else frozenset(changed) for path, changed in out.items()}


def _diff_path(text: str) -> str | None:
    """The path of a '+++ b/path' line; None for /dev/null (a deleted file)."""
    text = text.rstrip("\t")
    if text.startswith('"') and text.endswith('"'):  # git quotes a path with tabs, quotes, backslashes
        text = _unquote(text[1:-1])
    if text == "/dev/null":
        return None
    return text[2:] if text.startswith("b/") else text


_ESCAPES = {ord("t"): 9, ord("n"): 10, ord("r"): 13, ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11}


def _unquote(text: str) -> str:
    """A path git wrote C-style: backslash escapes, and octal bytes (\303\251) for what isn't printable."""
    data = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x5C and i + 1 < len(data):
            if data[i + 1 : i + 4].isdigit():
                out.append(int(data[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(data[i + 1], data[i + 1]))
            i += 2
            continue
        out.append(data[i])
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _git(args: Sequence[str], cwd: str | None, error: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=_GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise UsageError("--changed-since needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{error} (timed out)") from None
    if done.returncode != 0:
        raise UsageError(error)
    out = done.stdout.decode("utf-8", "surrogateescape")
    return out if "diff" in args else out.strip("\n")
