"""The ledger of a resumable crawl (--state DIR): each change also journaled in the crawl state's SQLite file,
in the state's own transactions, and replayed when the same command runs again.

A commit happens between two steps of the event loop, never inside one, so the file always holds whole steps:
a page's links with the records they added, a result with its record done. What a kill loses (the last second,
the requests in flight) is done again on resume, and a page fetched again journals its references again: those
that repeat an earlier session's are dropped, so the report comes out as one uninterrupted run's.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from .crawl_state import Limits
from .exceptions import UsageError
from .fragments import Anchors
from .inputs import Input
from .ledger import Ledger, Target
from .local_files import LocalFiles
from .options import CRAWLING, LINKS, LOCAL, option_fields
from .page_log import PageEntry, PageLog
from .settings import Settings
from .sqlite_state import SqliteState
from .status import Status
from .stored_references import StoredRefs
from .types import Event, Page, Reference, Result

STATE_FILE = "crawl.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, session INTEGER NOT NULL, ops BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS notes (name TEXT PRIMARY KEY, value BLOB NOT NULL);
"""
_REFER, _CHECKED, _ADOPT, _PAGE, _FORGET, _REFER_ID, _SAME_AS = 0, 1, 2, 3, 4, 5, 6  # (_REFER: earlier versions)
_CHUNK = 2000  # ops per journal row

Notes = tuple[set[str], list[str]]  # caps, warnings


def open_crawl(
    directory: str, limits: Limits, on_host_ready: Callable[[str], None], emit: Callable[[Event], None] | None
) -> tuple[SqliteState, PersistentLedger]:
    """The crawl state and ledger kept in directory (made if missing), as the last run left them."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--state {directory}: can't make the directory: {e.strerror or e}") from None
    state = SqliteState(os.path.join(directory, STATE_FILE), limits, on_host_ready)
    try:
        return state, PersistentLedger(state, emit)
    except BaseException:
        state.close()
        raise


class PersistentLedger(Ledger):
    def __init__(self, state: SqliteState, emit: Callable[[Event], None] | None = None) -> None:
        super().__init__(None)  # the replay emits nothing: resume() shows what it restored, once
        self._state = state
        self._db = state.connection
        self._db.executescript(_SCHEMA)
        self._stored = StoredRefs(self._db, state.path)  # references on disk: memory keeps only their ids
        self.references = self._stored
        self._pending: list[list[Any]] = []
        self._quiet = True  # replaying, or inside adopt(): nothing to journal
        self.pages = PageLog()
        self._earlier_refs: Counter[tuple[str, Reference, str | None]] = Counter()
        self._earlier_pages: Counter[PageEntry] = Counter()
        self._earlier_notes: Notes = (set(), [])
        self._waiting: set[str] = set()  # redirects journaled as waiting for their end's result
        self._saved_notes = b""
        self._session = self._replay() + 1
        self._quiet = False
        self._emit = emit
        self.notes_source: Callable[[], Notes] | None = None  # the run's caps and warnings, saved at each commit
        state.before_commit(self._write)

    # -- resuming --------------------------------------------------------------------------------------

    def _replay(self) -> int:
        last = self._db.execute("SELECT max(session) FROM journal").fetchone()[0] or 0
        for (blob,) in self._db.execute("SELECT ops FROM journal ORDER BY seq"):
            ops = orjson.loads(blob)
            refs = iter(self._stored.many([op[3] for op in ops if op[0] == _REFER_ID]))
            for op in ops:
                kind = op[0]
                if kind == _REFER_ID:
                    key, ref_id, fragment = op[1], op[3], op[4]
                    self.refer_id(key, op[2] or key, ref_id, fragment)
                    self._earlier_refs[(key, next(refs), fragment)] += 1
                elif kind == _REFER:
                    key, url, ref, fragment = op[1], op[2], Reference(*op[3]), op[4]
                    super().refer(key, url, ref, fragment)
                    self._earlier_refs[(key, ref, fragment)] += 1
                elif kind == _CHECKED:
                    super().checked(op[1], _result(op[2]), _anchors(op[3]))
                elif kind == _ADOPT:
                    super().adopt(op[1], op[2], _result(op[3]), _anchors(op[4]))
                elif kind == _FORGET:
                    self.forget(op[1])
                elif kind == _SAME_AS:
                    super().same_as(op[1], op[2], _result(op[3]))
                    self._waiting.add(op[1])
                else:
                    entry = (op[1], op[2], op[3], op[4])
                    self.pages.append(entry)
                    self._earlier_pages[entry] += 1
        row = self._db.execute("SELECT value FROM notes WHERE name = 'notes'").fetchone()
        if row is not None:
            caps, warnings = orjson.loads(row[0])
            self._earlier_notes = (set(caps), list(warnings))
        return int(last)

    async def resume(self, settings: Settings, inputs: list[Input], files: LocalFiles,
                     depth_of: Callable[[str], int | None]) -> None:
        """Before the run: refuse another crawl's state, requeue what was done but never recorded (claims
        cancelled by a stop, and with --rerun-failed what failed), and show the results restored so far."""
        crawl = fingerprint(settings, inputs)
        row = self._db.execute("SELECT value FROM notes WHERE name = 'crawl'").fetchone()
        if row is not None and row[0] != crawl:
            raise UsageError(f"{self._state.path}: the state of another crawl (other inputs or crawl settings);"
                             " remove it, or name another --state directory")
        if row is None:
            self._db.execute("INSERT INTO notes VALUES ('crawl', ?)", (crawl,))
        done = self._state.done_keys()
        if settings.rerun_failed:
            self._forget_failures(done)
        for key in done:
            target = self.get(key)
            if (target is None or target.result is None) and key not in self._waiting:  # (waiting: its end is
                await self._state.requeue(key)  # queued or done, and passes its result on when it has one)
        for target in list(self._file_targets()):  # their anchors are read from disk, when a fragment asks
            _, target.load_anchors = files.check(target.url)
            for fragment in sorted(target.fragment_refs()):
                self._check_fragment(target, fragment)
        if self._emit is not None:
            for url, page_key, links, followed in self.pages:
                self._emit(Page(url, (depth_of(page_key) or 0) if page_key else 0, links, followed))
            for result in self.results(depth_of):
                self._emit(result)

    def _forget_failures(self, requested: list[str]) -> None:
        """--rerun-failed: the results of URLs requested last time that failed, or lack a #fragment asked for,
        are dropped (the record is then queued again, for the same plan). Links decided without a request keep
        theirs: the same rules decide them the same way."""
        fetched = set(requested)
        failed = [t.key for t in self._done if t.key in fetched and _failed(t)]
        if failed:
            self.forget(failed)
            self._journal([_FORGET, failed])

    def _file_targets(self) -> Iterator[Target]:
        for target in self._done:
            result = target.result
            if result is not None and result.status is Status.OK and target.url.startswith("file:") and \
                    target.anchors is None and target.load_anchors is None:
                yield target

    # -- journaling ------------------------------------------------------------------------------------

    def plain_targets(self) -> dict[str, Target] | None:
        return None  # every reference is journaled

    def refer(self, key: str, url: str, ref: Reference, fragment: str | None = None) -> Target:
        if self._earlier_refs:
            ident = (key, ref, fragment)
            n = self._earlier_refs.get(ident, 0)
            target = self.get(key)
            if n and target is not None:  # read again after a kill: recorded by an earlier session
                if n == 1:
                    del self._earlier_refs[ident]
                else:
                    self._earlier_refs[ident] = n - 1
                return target
        ref_id = self._stored.add_ref(ref)
        target = self.refer_id(key, url, ref_id, fragment)
        if not self._quiet:
            # (url null where it is the key, nearly always: a third of the journal's bytes)
            self._journal([_REFER_ID, key, None if url == key else url, ref_id, fragment])
        return target

    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        super().checked(key, result, anchors)
        if not self._quiet:
            self._journal([_CHECKED, key, _result_list(result), _anchors_list(anchors)])

    def adopt(self, key: str, url: str, result: Result, anchors: Anchors | None) -> None:
        quiet, self._quiet = self._quiet, True
        try:
            super().adopt(key, url, result, anchors)
        finally:
            self._quiet = quiet
        if not quiet:
            self._journal([_ADOPT, key, url, _result_list(result), _anchors_list(anchors)])

    def same_as(self, key: str, end: str, redirect: Result) -> None:
        super().same_as(key, end, redirect)
        if not self._quiet:
            self._journal([_SAME_AS, key, end, _result_list(redirect)])

    def page(self, entry: PageEntry) -> bool:
        """Record a page of the report; False when an earlier session recorded it (kept once)."""
        n = self._earlier_pages.get(entry, 0)
        if n:
            self._earlier_pages[entry] = n - 1
            return False
        url, key, links, followed = entry
        target = self.get(key) if key is not None else None
        if target is not None:  # (strings read from the state file: the target's kept, not a second equal one)
            key = target.key
            url = target.url if url == target.url else url
        self.pages.append((url, key, links, followed))
        self._journal([_PAGE, *entry])
        return True

    def _journal(self, op: list[Any]) -> None:
        if not self._pending:
            self._state.write_soon()  # a transaction that commits within the second, with the state or alone
        self._pending.append(op)

    def notes(self, caps: set[str], warnings: list[str]) -> Notes:
        """The run's caps and warnings, with those of earlier sessions."""
        earlier_caps, earlier_warnings = self._earlier_notes
        return caps | earlier_caps, [*earlier_warnings, *(w for w in warnings if w not in earlier_warnings)]

    def _write(self) -> None:
        """In the state's transaction, just before it commits."""
        ops, self._pending = self._pending, []
        self._stored.write()  # the references the journal names, in the same transaction
        rows = [(self._session, orjson.dumps(ops[i : i + _CHUNK])) for i in range(0, len(ops), _CHUNK)]
        self._db.executemany("INSERT INTO journal (session, ops) VALUES (?, ?)", rows)
        if self.notes_source is not None:
            caps, warnings = self.notes_source()
            saved = orjson.dumps([sorted(caps), warnings])
            if saved != self._saved_notes:
                self._db.execute("INSERT OR REPLACE INTO notes VALUES ('notes', ?)", (saved,))
                self._saved_notes = saved

    def close(self) -> None:
        self._state.write_soon()  # the notes, even when nothing else changed since the last commit
        self._state.close()


def fingerprint(settings: Settings, inputs: Iterable[Input]) -> str:
    """What makes two runs the same crawl: the inputs and the settings of what is crawled and checked (not the
    request settings, which may change between sessions, nor the output)."""
    shaping = []
    for f in option_fields(Settings):
        if f.option.group in (CRAWLING, LINKS, LOCAL) and f.name not in ("state", "rerun_failed"):
            value = getattr(settings, f.name)
            shaping.append([f.name, sorted(value) if isinstance(value, frozenset) else repr(value)])
    text = orjson.dumps([shaping, [i.location for i in inputs]])
    return hashlib.sha256(text).hexdigest()


def _failed(target: Target) -> bool:
    result = target.result
    return result is not None and (result.status.is_broken or bool(target.broken_fragments))


def _result_list(r: Result) -> list[Any]:
    return [r.url, r.status.value, r.code, r.reason, list(r.redirects), r.elapsed, r.depth, r.content_type,
            r.cached, list(r.redirect_codes)]


def _result(v: list[Any]) -> Result:
    codes = tuple(v[9]) if len(v) > 9 else ()  # (a state file of an earlier version has none)
    return Result(v[0], Status(v[1]), v[2], v[3], tuple(v[4]), v[5], v[6], v[7], cached=v[8], redirect_codes=codes)


def _anchors_list(a: Anchors | None) -> list[Any] | None:
    return None if a is None else [sorted(a.names), a.case_insensitive]


def _anchors(v: list[Any] | None) -> Anchors | None:
    return None if v is None else Anchors(frozenset(v[0]), v[1])
