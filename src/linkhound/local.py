"""Checks that need no network: file: URLs on disk (with directory index files) and mailto: syntax."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote_from_bytes, unquote, unquote_to_bytes, urlsplit

from .status import Status

# A practical address check: a dot-atom or quoted local part (RFC 5322; non-ASCII allowed, RFC 6531), then a
# host with a dot (its labels in any script: an internationalised domain as written) or an address literal.
_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010ffff-]"
_LABEL = r"[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?"
_MAILBOX = re.compile(
    rf'(?:{_ATEXT}+(?:\.{_ATEXT}+)*|"(?:[^"\\\r\n]|\\.)+")'
    rf"@(?:(?:{_LABEL}\.)+(?:[^\W_]|-){{2,63}}|\[(?:\d{{1,3}}(?:\.\d{{1,3}}){{3}}|IPv6:[0-9A-Fa-f:.]+)\])"
)


# The files a static site generator or a code host shows for a folder: where a #fragment of a link to the
# folder is looked for when --index-files names none.
CONVENTIONAL_INDEX_FILES = ("index.html", "index.md", "README.md")
EMAIL_HINT = "looks like an e-mail address: missing mailto:?"


class FileCheck(NamedTuple):
    status: Status
    reason: str
    path: str | None  # the file that holds the target's content (index file for a directory)


def file_uri(path: str) -> str:
    """Path(path).as_uri() for an absolute path. A path already in the form pathlib would give it (as
    os.path.abspath leaves it: no empty or "." segment, no trailing slash) is quoted as is, without pathlib's
    parsing, which was a fair part of reading a docs folder."""
    if os.sep == "/" and path[:1] == "/" and "//" not in path and "/./" not in path and path[-1] != "/" and not (
        path.endswith("/.")
    ):
        return "file://" + quote_from_bytes(os.fsencode(path))
    return Path(path).as_uri()


def file_url_to_path(url: str) -> str:
    """The local path of a file: URL (percent-decoded as file_uri encoded it, a name's bytes that are not UTF-8
    included; query and fragment dropped)."""
    rest = url[len("file://") :] if url.startswith("file://") else url[len("file:") :]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    if not rest.startswith("/"):  # file://localhost/path (file_host() tells another host's apart)
        rest = rest[rest.find("/") :] if "/" in rest else "/"
    return os.fsdecode(unquote_to_bytes(rest))


def file_host(url: str) -> str:
    """The host a file: URL names: "" for this machine (file:/x, file:///x, file://localhost/x)."""
    if not url.startswith("file://"):
        return ""
    host = url[len("file://") :].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return "" if host.lower() == "localhost" else host


def check_file(path: str, index_files: tuple[str, ...] = (), root: str | None = None) -> FileCheck:
    """Whether path exists; a directory is fine only with one of index_files when they are given, else as is.

    The path of a directory's result is its index file (one of index_files, else of CONVENTIONAL_INDEX_FILES),
    the document that holds its #fragments; None when it has none."""
    if root is not None and not _inside(path, root):
        return FileCheck(Status.BROKEN, f"path leaves --root-dir {root}", None)
    if os.path.isfile(path):
        if not os.access(path, os.R_OK):  # as a web server, linkhound could not serve it (nor read its #anchors)
            return FileCheck(Status.BROKEN, "file can't be read (permission denied)", None)
        return FileCheck(Status.OK, "", path)
    if os.path.isdir(path):
        index = index_file(path, index_files)
        if index_files:
            denied = index_denied(path, index)
            if denied is not None:  # (a web server could not serve the directory either)
                return FileCheck(Status.BROKEN, denied, None)
            if index is None:
                return FileCheck(Status.BROKEN, f"directory has no index file ({', '.join(index_files)})", None)
        return FileCheck(Status.OK, "" if index_files else "directory", index)
    try:
        os.lstat(path)
    except PermissionError:  # it may well be there: what to fix is the folder's mode
        return FileCheck(Status.BROKEN, "file can't be read (permission denied: a folder on its path can't be "
                         "entered)", None)
    except OSError:
        return FileCheck(Status.BROKEN, "file not found", None)
    return FileCheck(Status.BROKEN, "broken symlink or unreadable", None)


def index_file(directory: str, index_files: tuple[str, ...] = ()) -> str | None:
    """The first of index_files (or of the conventional ones, when none are named) in directory."""
    for name in index_files or CONVENTIONAL_INDEX_FILES:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def index_denied(directory: str, index: str | None) -> str | None:
    """Why the index file of directory can't be read, when a permission stops it (index: the one found, if
    any); None when none does. In a folder that can't be entered no index file is found, whatever it holds."""
    if index is not None:
        return None if os.access(index, os.R_OK) else "index file can't be read (permission denied)"
    return None if os.access(directory, os.X_OK) else "directory can't be entered (permission denied)"


def looks_like_email(url: str) -> bool:
    """Whether the last segment of url's path is an e-mail address: an href that forgot its mailto:."""
    if "@" not in url:
        return False  # most URLs
    try:
        path = urlsplit(url).path  # not the authority: https://user@host/ has a user, not an address
    except ValueError:
        return False
    last = unquote(path.rstrip("/").rsplit("/", 1)[-1])
    return "@" in last and _MAILBOX.fullmatch(last) is not None


def _inside(path: str, root: str) -> bool:
    """Whether path stays in root as written: `..` may not climb out, a symlink kept in root may point anywhere
    (docs/changelog.md -> ../CHANGELOG.md, as web servers follow it by default)."""
    here, top = os.path.normpath(os.path.abspath(path)), os.path.normpath(os.path.abspath(root))
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)


def check_mailto(url: str) -> tuple[Status, str]:
    """mailto: links are checked for syntax only: every address must look like local@domain.tld."""
    path, _, query = url[len("mailto:") :].partition("?")
    fields = [unquote(path)]  # and the to= fields of the query (RFC 6068: mailto:?to=a@x.org,b@y.org)
    fields += [unquote(v) for k, _, v in (p.partition("=") for p in query.split("&")) if k.lower() == "to"]
    addresses = [a.strip() for field in fields for a in field.split(",") if a.strip()]
    if not addresses:
        # mailto:?subject=... with no address is allowed by RFC 6068 but points nowhere
        return Status.BROKEN, "no address"
    for a in addresses:
        if not _MAILBOX.fullmatch(a):
            return Status.BROKEN, f"invalid address '{a}'"
    return Status.OK, ""


def read_document(path: str) -> bytes | None:
    """A local document a link's #fragment is looked for in, whole: --max-body-size is for what servers send
    (cut here, its anchors past the cut would be reported missing)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
