"""Local documents parsed ahead, on the other core: a forked child extracts the input files (and resolves
their links) while this process starts up and sorts the links of the documents before.

The child is forked once the inputs are read and before the engine is built, so there are no threads yet and
the imports still to come overlap the parsing. It takes the documents in the order this process will ask for
them (each input, then the documents its #fragment links point to, whose anchors the sorting of its links
needs) and writes one frame per document to a pipe: its index and length, then the extraction and the
resolved links in marshal form (plain tuples, strings, a frozenset: far quicker to load than a pickle of
named tuples). `take` never waits: it reads what the pipe holds, and a document the child hasn't sent yet is
parsed here, marked in a shared byte map so that the child skips it; the child resolves links only while it
is well ahead, so that it keeps ahead. The result is the same either way.
"""

from __future__ import annotations

import contextlib
import marshal
import mmap
import os
import signal
import struct
import weakref
from collections.abc import Sequence

from .extract import Kind
from .forks import can_fork, cores, let_go_of_fds
from .heading_styles import HeadingStyles
from .inputs import Input
from .links import LinkRules, Resolved
from .settings import Settings
from .types import Extraction, RawLink

# a document's extraction, and each of its links resolved (None when the child was not far enough ahead to)
Parsed = tuple[Extraction, list[Resolved | None] | None]

__all__ = ["MIN_BYTES", "ParseAhead", "Parsed"]

# Documents worth a child: below this much Markdown or HTML, parsing here costs less than the fork and the pipe
MIN_BYTES = 256 * 1024
_HEADER = struct.Struct("<II")  # document index, frame size
_LEAD = 8  # documents sent and not yet taken past which the child resolves their links too (else it would lag)
_PIPE_SIZE = 1024 * 1024  # room for the child to run ahead of the reader (Linux; the default is 64 KiB)


class ParseAhead:
    """The extractions of local input documents, made by a child process; `take(path, kind)` hands one over."""

    def __init__(self, pid: int, fd: int, paths: dict[str, tuple[int, Kind]], taken: mmap.mmap) -> None:
        self._pid = pid
        self._fd = fd
        self._taken = taken  # a byte per document, shared with the child: 1 once handed over or parsed here
        self._order = paths  # path -> its index in the child's order, and the kind it was parsed as
        self._wanted = {index for index, _ in paths.values()}  # documents not yet parsed here nor handed over
        self._buffer = bytearray()  # what was read of the frames not yet complete
        self._frames: dict[int, bytes] = {}  # frames read, by document index
        # (a run started and never awaited, or a process that exits: the child goes too, not left on a full pipe)
        self._stop = weakref.finalize(self, _stop, pid, fd, taken)
        os.set_blocking(fd, False)

    @classmethod
    def start(cls, inputs: Sequence[Input], s: Settings) -> ParseAhead | None:
        """A child parsing the Markdown and HTML files among inputs, or None when it wouldn't pay or can't be
        forked safely: a single core, --workers 0, too little to parse, no fork, or threads in this process."""
        docs = [i for i in inputs if i.path is not None and not i.stdin and i.content is not None
                and i.kind in (Kind.MARKDOWN, Kind.HTML) and len(i.content) <= s.max_body_size]
        paths: dict[str, tuple[int, Kind]] = {}
        for inp in docs:
            assert inp.path is not None and inp.kind is not None
            paths.setdefault(inp.path, (len(paths), inp.kind))
        if (sum(len(i.content or b"") for i in docs) < MIN_BYTES or s.parse_workers < 1
                or cores() < 2 or not can_fork()):
            return None
        taken = mmap.mmap(-1, len(paths))  # anonymous and shared: the child sees what this process writes
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the child: parse, write, and leave without running this process's exit handlers
            code = 1
            try:
                os.close(read_end)
                let_go_of_fds((write_end,))  # (nor the program's files, sockets and pipes: closed there, closed)
                _parse(docs, s, write_end, taken)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        return cls(pid, read_end, paths, taken)

    def take(self, path: str, kind: Kind) -> Parsed | None:
        """The extraction of the input document at path, read as kind, and its links resolved, if the child has
        sent them by now; else None, and the document is parsed here (never waited for: the child may be far
        behind). Each document is handed over once."""
        index, parsed_as = self._order.pop(path, (-1, kind))
        if index < 0:
            return None
        self._receive()
        self._wanted.discard(index)
        if self._fd >= 0:
            self._taken[index] = 1  # (the child skips it, if it hasn't come to it yet)
        frame = self._frames.pop(index, None)
        return _loads(frame) if frame is not None and parsed_as is kind else None

    def close(self) -> None:
        """Stop the child (done or not) and reap it."""
        self._frames.clear()
        self._order.clear()
        self._reap()

    def _reap(self) -> None:
        if self._fd < 0:
            return
        self._fd = -1
        self._stop()

    def _receive(self) -> None:
        """Read what the pipe holds now, and keep the frames of documents still wanted."""
        if self._fd < 0:
            return
        buffer = self._buffer
        while True:
            try:
                part = os.read(self._fd, _PIPE_SIZE)
            except BlockingIOError:
                break
            if not part:  # the child is done (or failed): what it didn't send is parsed here
                self._reap()
                break
            buffer += part
        at, size = 0, len(buffer)
        while size - at >= _HEADER.size:
            index, length = _HEADER.unpack_from(buffer, at)
            end = at + _HEADER.size + length
            if end > size:
                break
            if index in self._wanted:
                self._frames[index] = bytes(buffer[at + _HEADER.size : end])
            at = end
        del buffer[:at]


def _stop(pid: int, fd: int, taken: mmap.mmap) -> None:
    """End the child (done or not) and reap it."""
    os.close(fd)
    taken.close()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # reaped already: SIGCHLD set to SIG_IGN reaps every child
        os.waitpid(pid, 0)


def _loads(frame: bytes) -> Parsed:
    links, base, anchors, nofollow, warning, resolved = marshal.loads(frame)
    make = tuple.__new__  # RawLink(...) without its Python-level __new__
    extraction = Extraction(tuple([make(RawLink, link) for link in links]), base, anchors, nofollow, warning)
    return extraction, None if resolved is None else [None if r is None else make(Resolved, r) for r in resolved]


def _parse(docs: Sequence[Input], s: Settings, fd: int, taken: mmap.mmap) -> None:
    """In the child: the documents in the order the parent will ask for them, each unless the parent took it
    already. The parent reads the inputs in order, and the sorting of each one's links asks for the anchors of
    the documents its #fragment links point to: so each input is followed by those (guessed from the relative
    paths as written: a wrong guess only costs time)."""
    import fcntl
    from collections import deque

    from .extract import extract

    with contextlib.suppress(AttributeError, OSError):  # a larger pipe where the system allows it
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    rules = LinkRules.from_settings(s)
    headings = HeadingStyles(s.heading_ids)
    unique: dict[str, Input] = {}
    for inp in docs:
        assert inp.path is not None
        unique.setdefault(inp.path, inp)
    order = list(unique.values())
    index_of = {path: i for i, path in enumerate(unique)}
    done = bytearray(len(order))
    targets: dict[int, list[int]] = {}  # a document parsed before its turn: the documents it points to
    upcoming: deque[int] = deque()
    turn = sent = 0
    while True:
        if upcoming:
            i, as_input = upcoming.popleft(), False
        elif turn < len(order):
            i, as_input, turn = turn, True, turn + 1
            if done[i]:  # parsed already, as the target of an earlier one: its own targets come next
                upcoming.extend(targets.pop(i, ()))
                continue
        else:
            break
        if done[i] or taken[i]:
            continue
        done[i] = 1
        inp = order[i]
        assert inp.path is not None and inp.content is not None and inp.kind is not None
        e = extract(inp.content, rules.local_base(inp.path), inp.kind, include_code=s.include_code,
                    heading_ids=headings.of(inp.path))
        base = rules.document_base(rules.local_base(inp.path), e)  # as LocalFiles.links resolves a file's links
        resolved = None
        sent += 1
        if sent - taken[:].count(1) > _LEAD:  # far enough ahead to resolve the links too
            resolve_link = rules.resolver(base, True)
            resolved = tuple(None if r is None else tuple(r) for r in (resolve_link(link.text) for link in e.links))
        frame = marshal.dumps((tuple(map(tuple, e.links)), base, e.anchors, e.nofollow, e.warning, resolved))
        data = memoryview(_HEADER.pack(i, len(frame)) + frame)
        while data:
            data = data[os.write(fd, data) :]
        pointed = _pointed_to(inp.path, e.links, index_of)
        if as_input:
            upcoming.extend(pointed)
        else:
            targets[i] = pointed


def _pointed_to(path: str, links: Sequence[RawLink], index_of: dict[str, int]) -> list[int]:
    """The input documents that the relative #fragment links among links point to, by index."""
    folder = os.path.dirname(path)
    found = []
    for link in links:
        text = link.text
        at = text.find("#")
        if at > 0 and ":" not in text[:at] and not text.startswith("/"):
            index = index_of.get(os.path.normpath(os.path.join(folder, text[:at])))
            if index is not None:
                found.append(index)
    return found
