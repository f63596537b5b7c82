"""Checks that need no network: file: URLs on disk (with directory index files) and mailto: syntax."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from .status import Status

# A practical address check (RFC 5322 dot-atom local part, a host with a dot or a literal).
_MAILBOX = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}"
)


@dataclass(frozen=True, slots=True)
class FileCheck:
    status: Status
    reason: str
    path: str | None  # the file that holds the target's content (index file for a directory)


def file_url_to_path(url: str) -> str:
    """The local path of a file: URL (percent-decoded; query and fragment dropped)."""
    rest = url[len("file://") :] if url.startswith("file://") else url[len("file:") :]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    if not rest.startswith("/"):  # file://host/path: only the local host is meaningful
        rest = rest[rest.find("/") :] if "/" in rest else "/"
    return unquote(rest)


def check_file(path: str, index_files: tuple[str, ...] = (), root: str | None = None) -> FileCheck:
    """Whether path exists; a directory is fine as is, or only with one of index_files when they are given."""
    if root is not None and not _inside(path, root):
        return FileCheck(Status.BROKEN, f"path leaves --root-dir {root}", None)
    if os.path.isfile(path):
        return FileCheck(Status.OK, "", path)
    if os.path.isdir(path):
        if not index_files:
            return FileCheck(Status.OK, "directory", None)
        for name in index_files:
            candidate = os.path.join(path, name)
            if os.path.isfile(candidate):
                return FileCheck(Status.OK, "", candidate)
        return FileCheck(Status.BROKEN, f"directory has no index file ({', '.join(index_files)})", None)
    if os.path.lexists(path):
        return FileCheck(Status.BROKEN, "broken symlink or unreadable", None)
    return FileCheck(Status.BROKEN, "file not found", None)


def _inside(path: str, root: str) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def check_mailto(url: str) -> tuple[Status, str]:
    """mailto: links are checked for syntax only: every address must look like local@domain.tld."""
    body = unquote(url[len("mailto:") :].split("?", 1)[0])
    addresses = [a.strip() for a in body.split(",") if a.strip()]
    if not addresses:
        # mailto:?subject=... with no address is allowed by RFC 6068 but points nowhere
        return Status.BROKEN, "no address"
    for a in addresses:
        if not _MAILBOX.fullmatch(a):
            return Status.BROKEN, f"invalid address '{a}'"
    return Status.OK, ""


def read_document(path: str, limit: int) -> bytes | None:
    try:
        with Path(path).open("rb") as f:
            return f.read(limit)
    except OSError:
        return None
