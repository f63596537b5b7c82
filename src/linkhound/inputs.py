"""Turn arguments (URLs, files, directories, globs, '-' for stdin, --files-from) into inputs to read."""

from __future__ import annotations

import errno
import glob
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from .exceptions import InputError
from .extract import Kind, kind_for_path, kind_for_response

# Files a directory walk picks up; a file named explicitly is read whatever its name.
WALK_KINDS = (Kind.HTML, Kind.MARKDOWN)
_GLOB_CHARS = frozenset("*?[")
INPUT_SOURCE = "(input)"  # where a URL input was named, when nothing says more (a library call)


class Input(NamedTuple):
    """One thing to read links from: a URL to fetch, or a document already in hand."""

    location: str  # URL, or path as the user wrote it (normalized: no "./", "//"), or "-" for stdin
    kind: Kind | None  # None for URLs: decided by the response
    content: bytes | None = None  # local documents are read at collection time
    path: str | None = None  # absolute path of a local file; stdin is a document "-" in the current folder
    stdin: bool = False
    named_in: str = ""  # where the user named it: "command line", a --files-from file ("" when not known)
    line: int = 0  # the line of the --files-from file

    @property
    def is_url(self) -> bool:
        return self.content is None


class Named(NamedTuple):
    """An argument and where the user wrote it: on the command line, or on a line of a --files-from file."""

    text: str
    named_in: str = ""
    line: int = 0  # 0: not in a file


Patterns = tuple[re.Pattern[str], ...]


def collect(
    args: Iterable[str | Named], *, hidden: bool = False, gitignore: bool = True, exclude_path: Patterns = ()
) -> list[Input]:
    """Expand every argument; raise InputError naming the first one that can't be read (and the file and line
    of a --files-from entry).

    Local paths (named, globbed, or found by walking) that an exclude_path pattern finds are left out, and so
    is a file named or found again (same absolute path: `docs docs/a.md`), read once as first spelled.
    """
    out: list[Input] = []
    seen: set[str] = set()  # absolute paths of the files read
    for arg in args:
        named = Named(arg) if isinstance(arg, str) else arg
        try:
            expanded = list(_expand(named.text, hidden, gitignore, exclude_path, seen))
        except InputError as e:
            if not named.line:
                raise
            raise InputError(f"{named.named_in}:{named.line}", str(e)) from None
        out.extend(i._replace(named_in=named.named_in, line=named.line) for i in expanded)
    return out


def excluded_path(path: str, patterns: Patterns, is_dir: bool = False) -> bool:
    """True when a pattern finds path, written relative as given with '/' separators (a directory ends in '/')."""
    if not patterns:
        return False
    text = os.path.normpath(path).replace(os.sep, "/") + ("/" if is_dir else "")
    return any(p.search(text) for p in patterns)


def read_files_from(source: str) -> list[Named]:
    """The inputs listed in a file (one per line; '#' comments and blank lines skipped), or stdin for '-'."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        text = text.removeprefix("\ufeff")  # (a byte order mark, as editors on Windows write)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(source, f"can't read --files-from file: {_why(e)}") from None
    named_in = "stdin" if source == "-" else source
    lines = ((n, line.strip()) for n, line in enumerate(text.splitlines(), 1))
    return [Named(s, named_in, n) for n, s in lines if s and not s.startswith("#")]


def _expand(arg: str, hidden: bool, gitignore: bool, exclude: Patterns, seen: set[str]) -> Iterator[Input]:
    if not arg.strip():
        # Path("") is the current directory: an unset variable in a script would check the whole tree
        raise InputError(f"'{arg}'", "empty input (give a URL, file, directory or glob)")
    if arg == "-":
        data = sys.stdin.buffer.read()
        kind = kind_for_response("application/xml", data, "")  # a sitemap, else HTML by its first character
        kind = kind if kind is Kind.SITEMAP else Kind.HTML if data.lstrip()[:1] == b"<" else Kind.MARKDOWN
        # a document in the current folder: its relative links and #fragments resolve as a file's there would
        yield Input("-", kind, data, os.path.abspath("-"), stdin=True)
        return
    lower = arg.lower()
    if lower.startswith(("http://", "https://")):
        from .urls import resolve

        if resolve(arg, "") is None:
            raise InputError(arg, "not a valid URL")
        yield Input(arg, None)
        return
    if lower.startswith("file://"):
        from .local import file_host, file_url_to_path

        if file_host(arg):
            raise InputError(arg, f"a file: URL of another host ({file_host(arg)}): only this machine's are read")
        arg = file_url_to_path(arg)
        if os.name == "nt":  # /C:/x
            from urllib.request import url2pathname

            arg = url2pathname(arg)
    path = Path(arg)
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as e:  # a folder on the way can't be entered
        raise InputError(arg, f"can't read: {_why(e)}") from None
    if is_dir:
        for file in walk(path, hidden=hidden, gitignore=gitignore, exclude=exclude):
            if _first(str(file), seen):
                yield _read(str(file), kind_for_path(str(file)) or Kind.TEXT)
        return
    if exists:
        if not excluded_path(arg, exclude) and _first(arg, seen):
            yield _read(arg, kind_for_path(arg) or Kind.TEXT)
        return
    if os.path.islink(arg):  # to nothing, or one of a loop
        try:
            os.stat(arg)
        except OSError as e:
            raise InputError(arg, f"broken symlink: {_why(e)}") from None
    if _GLOB_CHARS & set(arg):
        matches = sorted(glob.glob(arg, recursive=True))
        files = [m for m in matches if os.path.isfile(m)]
        if not files:
            raise InputError(arg, "the pattern matches no files")
        for m in files:
            if not excluded_path(m, exclude) and _first(m, seen):
                yield _read(m, kind_for_path(m) or Kind.TEXT)
        return
    if "://" in arg:
        raise InputError(arg, "unsupported input URL scheme (use http://, https:// or file://)")
    raise InputError(arg, "no such file or directory (and not a URL)")


def _first(path: str, seen: set[str]) -> bool:
    """Whether path is read for the first time (a symlink is a document of its own: its links resolve where
    it is)."""
    key = os.path.abspath(path)
    if key in seen:
        return False
    seen.add(key)
    return True


def _read(path: str, kind: Kind) -> Input:
    try:
        with open(path, "rb") as f:  # (not pathlib: a docs folder is hundreds of these)
            data = f.read()
    except OSError as e:
        raise InputError(path, f"can't read: {_why(e)}") from None
    # shown as one spelling in every report format: "./docs//a.md" is "docs/a.md" (".." taken lexically, as
    # links are resolved)
    return Input(os.path.normpath(path), kind, data, os.path.abspath(path))


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror.lower()
    return str(e)


def walk(root: Path, *, hidden: bool = False, gitignore: bool = True, exclude: Patterns = ()) -> Iterator[Path]:
    """Files under root that extractors read, in a stable order; hidden dirs, .gitignore'd and excluded paths
    left out, and symlinked folders (one may loop back), FIFOs, devices and broken symlinks passed over."""
    specs: list[tuple[str, object]] = []  # (dir, GitIgnoreSpec) of every .gitignore above the current dir
    if gitignore:
        specs.extend(_ancestor_ignores(root))
    yield from _walk(root, hidden, gitignore, specs, exclude, top=True)


def _walk(
    d: Path, hidden: bool, gitignore: bool, specs: list[tuple[str, object]], exclude: Patterns = (), top: bool = False
) -> Iterator[Path]:
    own = _load_ignore(d) if gitignore else None
    if own is not None:
        specs = [*specs, (str(d), own)]
    try:
        with os.scandir(d) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as e:
        # An unreadable folder stops the run rather than leave its links unchecked without a word.
        hint = "" if top else " (--exclude-path can leave it out)"
        raise InputError(str(d), f"can't list directory: {_why(e)}{hint}") from None
    for entry in entries:
        if not hidden and entry.name.startswith("."):
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)  # a symlinked folder may loop back: not walked
        except OSError:
            is_dir = False  # gone since the listing, or can't be looked at: reading it will say which
        if specs and _ignored(entry.path, is_dir, specs) or excluded_path(entry.path, exclude, is_dir):
            continue
        if is_dir:
            yield from _walk(Path(entry.path), hidden, gitignore, specs, exclude)
        elif kind_for_path(entry.name) in WALK_KINDS and _regular(entry):
            yield Path(entry.path)


def _regular(entry: os.DirEntry[str]) -> bool:
    """Whether a walk reads entry: a file, or a symlink to one; not a FIFO (reading it would wait for a writer),
    a socket or a device, nor a symlink to nothing or one of a loop (no document: links to it are reported)."""
    try:
        return entry.is_file()  # (follows a symlink; no system call for a plain file)
    except OSError as e:
        return e.errno != errno.ELOOP  # else it can't be looked at: reading it will say why


def _load_ignore(d: Path) -> object | None:
    f = d / ".gitignore"
    try:
        if not f.is_file():
            return None
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError:  # an unreadable folder: listing it will say so
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except ValueError:
        return None


def _ancestor_ignores(root: Path) -> list[tuple[str, object]]:
    """.gitignore files between the repository top (the folder holding .git) and root apply too."""
    root = root.resolve()
    chain = []
    for d in [root, *root.parents]:
        chain.append(d)
        if _exists(d / ".git"):
            break
    else:
        return []
    out = []
    for d in reversed(chain[1:]):
        spec = _load_ignore(d)
        if spec is not None:
            out.append((str(d), spec))
    return out


def _exists(path: Path) -> bool:
    """path.exists(), with False for a path in a folder that can't be looked into."""
    try:
        return path.exists()
    except OSError:
        return False


def _ignored(path: str, is_dir: bool, specs: list[tuple[str, object]]) -> bool:
    ap = os.path.abspath(path)
    for base, spec in specs:
        rel = os.path.relpath(ap, os.path.abspath(base)).replace(os.sep, "/")
        if is_dir:
            rel += "/"
        if spec.match_file(rel):  # type: ignore[attr-defined]
            return True
    return False
