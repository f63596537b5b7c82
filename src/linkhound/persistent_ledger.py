"""The ledger of a resumable crawl (--state DIR): targets and their results, references, fragment verdicts,
redirects waiting for their end, and the report's pages, as tables of the crawl state's SQLite file, written
in the state's own transactions. Memory holds bounded caches only, so a crawl of a million pages needs no more
of it than one of ten thousand; the report reads its results back from the file while it is written.

A commit happens between two steps of the event loop, never inside one, so the file always holds whole steps:
a page's links with the records they added, a result with its record done. What a kill loses (the last second,
the requests in flight) is done again on resume. A document read again (a page fetched again, the inputs read
again by the next session) had its references recorded in the order it gives them, so as many as the file
already holds from it are passed over, and the report comes out as one uninterrupted run's.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload
from urllib.request import pathname2url

import orjson

from .crawl_state import Limits
from .exceptions import LinkhoundError, UsageError
from .fragments import Anchors, named_by_location
from .inputs import Input
from .ledger import LinkRef, PlainTargets, Target, location_verdict, reference, with_refs
from .local_files import LocalFiles
from .options import CRAWLING, LINKS, LOCAL, option_fields
from .page_log import PageEntry
from .references import RefSequence
from .settings import Settings, format_accept
from .sqlite_state import CACHE_KIB, SqliteState, insert_flat, insert_rows, update_ids, where_ids
from .status import Status
from .summary import Report, summarize
from .types import Event, Page, Reference, Result

STATE_FILE = "crawl.sqlite"
# A target is one row: its result (JSON, NULL until it has one, its url NULL where it is the target's), the
# anchors its page has, the order of its first result (the report's order) and whether some reference asks it
# for a #fragment. A reference is one row, of the target it names and the document it is in (a row of sources:
# a document may have several, one each time the cache of them forgot it; what matters is its URL).
# The fragments each target is asked for are rows of their own (asked), few beside the references: the index
# of references by target costs more to keep up than the rest of a crawl's writes (each reference lands at a
# random place in it), so it is made when first needed (by the report, or all along when results are streamed
# with their references), in one sorted pass. So are those that only a resumed session reads (references and
# pages by the document they come from: what a document read again gave before).
# A reference is four columns, the file's most numerous rows (fewer values to bind: an insert costs about half
# what it did with seven, 0.7-0.9 against 1.3-1.9 us a row measured with a file like this one): its target, its
# document, its place (line, column and pair in one integer, or "line:col:pair" in the rare case one is too
# large: see _ref_row) and its text. Element and attribute are a pair id (pairs: a handful of rows); the text,
# where the target's key ends with it (a link written as the URL or its path, nearly always), is the length of
# that end; a reference that asks for a #fragment has its fragment and text in one blob (see _with_fragment).
# The records table is the crawl state's (sqlite_state.py): the report reads each URL's depth from it.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS targets (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, url TEXT, result BLOB, anchors INTEGER, done INTEGER,
    fragments INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS anchor_sets (id INTEGER PRIMARY KEY, names BLOB NOT NULL, folded INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sources (id INTEGER PRIMARY KEY, url TEXT NOT NULL, session INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refs (
    id INTEGER PRIMARY KEY, target INTEGER NOT NULL, source INTEGER NOT NULL, place NOT NULL, text NOT NULL
);
CREATE TABLE IF NOT EXISTS pairs (id INTEGER PRIMARY KEY, element TEXT NOT NULL, attribute TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS asked (target INTEGER NOT NULL, fragment TEXT NOT NULL, PRIMARY KEY (target, fragment))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS broken (
    target INTEGER NOT NULL, fragment TEXT NOT NULL, result BLOB NOT NULL, PRIMARY KEY (target, fragment)
);
CREATE TABLE IF NOT EXISTS waiting (ending INTEGER NOT NULL, target INTEGER NOT NULL, redirect BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS waiting_for ON waiting (ending);
CREATE TABLE IF NOT EXISTS pages (
    seq INTEGER PRIMARY KEY, url TEXT NOT NULL, key TEXT, links INTEGER NOT NULL, followed INTEGER NOT NULL,
    session INTEGER NOT NULL
);
"""
_INSERT_REF = "INSERT INTO refs (target, source, place, text) VALUES "
_REF_WIDTH = 4
_REFS = ("SELECT s.url, r.place, r.text FROM refs r JOIN sources s ON s.id = r.source WHERE r.target = ?"
         " ORDER BY r.id")
_INDEX = "CREATE INDEX IF NOT EXISTS refs_of ON refs (target)"
_RESUMING = ("CREATE INDEX IF NOT EXISTS refs_from ON refs (source)",
             "CREATE INDEX IF NOT EXISTS sources_at ON sources (url)",
             "CREATE INDEX IF NOT EXISTS pages_at ON pages (url)")
_REFS_FROM = ("SELECT t.key, r.place, r.text FROM refs r"
              " JOIN targets t ON t.id = r.target WHERE r.source IN (SELECT id FROM sources WHERE url = ?)")
_RESULTS = (  # (fragments: whether some reference asks for one, and some was found broken: 1, 2)
    "SELECT t.id, t.key, t.url, t.result, t.fragments + (t.fragments AND EXISTS (SELECT 1 FROM broken WHERE"
    " target = t.id)), rec.depth, (SELECT count(*) FROM refs WHERE target = t.id)"
    " FROM targets t LEFT JOIN records rec ON rec.key = t.key WHERE t.done IS NOT NULL ORDER BY t.done"
)
_PAGES = ("SELECT p.url, p.key, rec.depth, p.links, p.followed FROM pages p LEFT JOIN records rec ON rec.key = p.key"
          " ORDER BY p.seq")
_DONE = 2  # a record's progress when fetched (sqlite_state.py)
_CACHE = 1 << 17  # targets (and sources) whose row ids are kept in memory, per generation of two
_HAS_RESULT, _HAS_FRAGMENTS = 2, 1  # bits of a cached target entry: row id << 2 | these
_FLAG = where_ids("UPDATE targets SET fragments = 1")
_SORT_KIB = 2048  # the page cache while an index is made (see _make_index)
_MOOT = -1  # a target's result failed: its fragments are not checked (see _against)

Notes = tuple[set[str], list[str]]  # caps, warnings
T = TypeVar("T")


def open_crawl(
    directory: str, limits: Limits, on_host_ready: Callable[[str], None], emit: Callable[[Event], None] | None,
    fresh: bool = False,
) -> tuple[SqliteState, PersistentLedger]:
    """The crawl state and ledger kept in directory (made if missing), as the last run left them (emptied
    first when fresh: --restart)."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--state {directory}: can't make the directory: {e.strerror or e}") from None
    state = SqliteState(os.path.join(directory, STATE_FILE), limits, on_host_ready, fresh=fresh)
    try:
        return state, PersistentLedger(state, emit)
    except BaseException:
        state.close()
        raise


class PersistentLedger:
    def __init__(self, state: SqliteState, emit: Callable[[Event], None] | None = None) -> None:
        self._state = state
        self._path = state.path
        self._db = state.connection
        self._db.executescript(_SCHEMA)
        self._cursor = state.cursor()  # for statements whose rows are read at once (see SqliteState._sql)
        self._sql = self._cursor.execute
        self._closed = False
        self._reading: sqlite3.Connection | None = None  # once the crawl's connection is closed: see _reader()
        self._held: list[int] = []  # targets whose first result was not streamed (see _emit_own)
        self._session = int(self._one("SELECT max(coalesce((SELECT max(session) FROM sources), 0),"
                                      " coalesce((SELECT max(session) FROM pages), 0))")[0]) + 1
        self._count = int(self._one("SELECT count(*) FROM targets")[0])
        self._complete = self._count == 0  # every target row is in the cache: a key it lacks has none
        # documents an earlier session read (to be read again: see _source() and page())
        self._resumed = self._one("SELECT EXISTS (SELECT 1 FROM sources) OR EXISTS (SELECT 1 FROM pages)")[0] == 1
        for index in _RESUMING:
            if self._resumed:
                _make_index(self._db, index)
            else:
                self._db.execute(f"DROP INDEX IF EXISTS {index.split()[5]}")
        self._done_seq = int(self._one("SELECT coalesce(max(done), 0) FROM targets")[0])
        # two generations of key -> row id << 2 | _HAS_RESULT | _HAS_FRAGMENTS: an LRU's effect at a dict's cost
        self._young: dict[str, int] = {}
        self._old: dict[str, int] = {}
        self._sources_young: dict[str, int] = {}
        self._sources_old: dict[str, int] = {}
        self._last_source, self._last_sid = "", 0  # the document _source() was last asked for
        self._skip: dict[str, Counter[tuple[Any, ...]]] = {}  # documents read again: references recorded before
        # reference rows not yet written, flat (a row is _REF_WIDTH values in a row): no tuple per reference
        # kept until the commit (the collector would go over each, the more often the more there are)
        self._pending: list[Any] = []
        # rows of sources and pages not yet written (each a statement of its own cost 3-4 times what a row of a
        # hundred-row insert does); a source's id is given here, as no statement makes its row yet
        self._new_sources: list[tuple[int, str, int]] = []
        self._new_pages: list[tuple[Any, ...]] = []
        self._flagged: list[int] = []  # targets a fragment is asked of now, their rows not yet saying so
        self._next_sid = int(self._one("SELECT coalesce(max(id), 0) FROM sources")[0]) + 1
        self._pair_names = [(e, a) for _, e, a in self._db.execute("SELECT id, element, attribute FROM pairs"
                                                                    " ORDER BY id")]
        self._pairs = {pair: i for i, pair in enumerate(self._pair_names)}  # (element, attribute) -> its id
        self._anchor_ids: dict[Anchors, int] = {}  # anchor sets written lately (pages of a template share one)
        self._anchors_read: dict[int, Anchors] = {}  # and read lately
        self._loaders: dict[int, Callable[[], Anchors | None]] = {}  # local files: anchors read on first need
        self._ends = {int(e) for (e,) in self._db.execute("SELECT DISTINCT ending FROM waiting")}
        self._passing: set[str] = set()
        self._earlier_notes: Notes = (set(), [])
        row = self._one("SELECT value FROM notes WHERE name = 'notes'")
        if row is not None:
            caps, warnings = orjson.loads(row[0])
            self._earlier_notes = (set(caps), list(warnings))
        self._saved_notes = b""
        self._emit = emit
        self._indexed = emit is not None  # (results streamed as they come: each with its references, read back)
        # an index left by an earlier session's report is dropped when this one first writes references (their
        # inserts are cheaper without it): a finished crawl reported again writes none, and keeps it
        self._drop_index = False
        if self._indexed:
            _make_index(self._db, _INDEX)
        elif self._one("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'refs_of'") is not None:
            self._indexed = self._drop_index = True
        self._asked: dict[int, set[str]] = {}  # fragments asked for since the last write, by target
        self._verdicts: set[tuple[int, str]] = set()  # fragments checked against their target's latest result
        # what a #fragment asked of a target is checked against, for targets whose result is known lately: the
        # anchor set's id (the result passed) or _MOOT (it didn't: no fragment of it is checked); two generations.
        # A target whose anchors are not in the file yet (a local file's, read on first need) has none.
        self._against: dict[int, int] = {}
        self._against_old: dict[int, int] = {}
        self.pages = StoredPages(self)
        self.notes_source: Callable[[], Notes] | None = None  # the run's caps and warnings, saved at each commit
        state.before_commit(self._write)

    def __len__(self) -> int:
        return self._count

    # -- resuming --------------------------------------------------------------------------------------

    async def resume(self, settings: Settings, inputs: list[Input], files: LocalFiles) -> None:
        """Before the run: refuse another crawl's state, requeue what was done but never recorded (claims
        cancelled by a stop, and with --rerun-failed what failed), and show the results restored so far."""
        crawl = fingerprint(settings, inputs)
        row = self._one("SELECT value FROM notes WHERE name = 'crawl'")
        if row is not None and row[0] != crawl:
            raise UsageError(f"{self._path}: the state of another crawl (other inputs or crawl settings);"
                             " --restart starts over, or name another --state directory")
        if row is None:
            self._state.write_soon()
            self._db.execute("INSERT INTO notes VALUES ('crawl', ?)", (crawl,))
        judged = judging(settings)
        row = self._one("SELECT value FROM notes WHERE name = 'judged'")
        if row is not None and row[0] != judged:  # (a state made before this note: it takes the run's)
            raise UsageError(f"{self._path}: its results were judged with {row[0]}, this run's with {judged}; give"
                             " the same, or --restart to check everything again")
        if row is None:
            self._db.execute("INSERT INTO notes VALUES ('judged', ?)", (judged,))
        if settings.rerun_failed:
            self._forget_failures()
        lost = self._db.execute(
            "SELECT r.key FROM records r LEFT JOIN targets t ON t.key = r.key WHERE r.progress = ? AND t.result IS"
            " NULL AND NOT EXISTS (SELECT 1 FROM waiting w WHERE w.target = t.id)", (_DONE,)).fetchall()
        for (key,) in lost:  # (waiting: its end is queued or done, and passes its result on when it has one)
            await self._state.requeue(key)
        for tid, url in self._db.execute(
                "SELECT id, coalesce(url, key) FROM targets WHERE key LIKE 'file:%' AND result IS NOT NULL AND"
                " anchors IS NULL").fetchall():  # their anchors are read from disk, when a fragment asks
            _, loader = files.check(url)
            if loader is not None:
                self._loaders[tid] = loader
                self._check_stored_fragments(tid)
        if self._emit is not None:
            for page in self.pages:
                self._emit(page)
            for result in StoredResults(self):
                self._emit(result)

    def _forget_failures(self) -> None:
        """--rerun-failed: the results of URLs requested last time that failed, or lack a #fragment asked for,
        are dropped (the record is then queued again, for the same plan). Links decided without a request keep
        theirs: the same rules decide them the same way."""
        rows = self._db.execute(
            "SELECT t.key, t.result, EXISTS (SELECT 1 FROM broken b WHERE b.target = t.id) FROM targets t"
            " JOIN records r ON r.key = t.key WHERE r.progress = ? AND t.result IS NOT NULL", (_DONE,)).fetchall()
        failed = [key for key, result, broken in rows if broken or Status(orjson.loads(result)[1]).is_broken]
        if failed:
            self.forget(failed)

    # -- what the crawl records ------------------------------------------------------------------------

    def plain_targets(self) -> PlainTargets | None:
        return None  # every reference goes through refer()

    def refer(self, key: str, url: str, ref: Reference, fragment: str | None = None) -> None:
        source = ref.source
        sid = self._source(source)
        if self._skip and source in self._skip:  # read again: those recorded by an earlier session are passed over
            earlier = self._skip[source]
            ident = (key, fragment, ref.line, ref.column, ref.element, ref.attribute, ref.text)
            n = earlier.get(ident, 0)
            if n:
                if n > 1:
                    earlier[ident] = n - 1
                else:
                    del earlier[ident]
                    if not earlier:
                        del self._skip[source]
                return
        self._record(key, url, sid, fragment, ref.line, ref.column, ref.element, ref.attribute, ref.text)

    def _record(self, key: str, url: str, sid: int, fragment: str | None, line: int, column: int, element: str,
                attribute: str, text: str) -> None:
        """A reference from document sid: its row, and a #fragment noted and checked when its target's result is
        known."""
        entry = self._entry(key, url, fragment is not None)
        tid = entry >> 2
        self._pending += self._ref_row(key, tid, fragment, sid, line, column, element, attribute, text)
        if fragment is None:
            return
        asked = self._asked.get(tid)
        if asked is None:
            self._asked[tid] = {fragment}
        else:
            asked.add(fragment)
        if not entry & _HAS_FRAGMENTS:
            self._state.write_soon()
            self._flagged.append(tid)
            self._keep(key, entry | _HAS_FRAGMENTS)
        if entry & _HAS_RESULT and (tid, fragment) not in self._verdicts:
            aid = self._against.get(tid)
            if aid is None:
                aid = self._against_old.get(tid)
            if aid is not None and (aid == _MOOT or self._anchors(aid).has(fragment)):
                self._verdict(tid, fragment)  # (a page's fragments are asked for from many pages: no read)
            else:  # (the result read back from the file, and a broken fragment's result made of it)
                self._check_stored_fragment(tid, fragment, self._fragment_context(tid))

    def refer_links(self, source: str, links: Sequence[LinkRef]) -> None:
        # the common case, a link asking for no fragment in a document read the first time, in a loop of its own:
        # no Reference made, the target's cached entry read once, the row made here as _ref_row() makes it (a
        # call per reference to _ref_row instead: +2.5-3% of the main process's instructions, measured), which
        # makes the rows this loop leaves to it: a pair not met before, a place too large to pack
        sid = self._source(source)
        if self._skip and source in self._skip:
            for key, url, raw, fragment in links:
                self.refer(key, url, reference(source, raw), fragment)
            return
        # (pending and asked are emptied in place when written, verdicts when full: the names stay theirs; the
        # cache of entries is read from self each time, as an entry made here may start a new generation of it)
        pairs, pending, asked, verdicts = self._pairs, self._pending, self._asked, self._verdicts
        for key, url, raw, fragment in links:
            text, element, attribute, line, column = raw[:5]
            entry = self._young.get(key)
            pair = pairs.get((element, attribute))
            if pair is None or pair >= _PAIRS or not (0 <= line < _LINES and 0 <= column < _COLUMNS):
                self._record(key, url, sid, fragment, line, column, element, attribute, text)
                continue
            if fragment is not None:
                # a fragment asked of a target that already has one asked (its row says so), either not checked
                # yet or already checked for this fragment: the row, and the fragment noted (as _record does)
                if entry is None or not entry & _HAS_FRAGMENTS or \
                        entry & _HAS_RESULT and (entry >> 2, fragment) not in verdicts:
                    self._record(key, url, sid, fragment, line, column, element, attribute, text)
                    continue
                tid = entry >> 2
                pending += (tid, sid, line << 40 | column << 12 | pair, _with_fragment(fragment, text))
                fragments = asked.get(tid)
                if fragments is None:
                    asked[tid] = {fragment}
                else:
                    fragments.add(fragment)
                continue
            if entry is None:
                entry = self._entry(key, url)
            pending += (entry >> 2, sid, line << 40 | column << 12 | pair,
                        len(text) if text and key.endswith(text) else text)

    def has_result(self, key: str) -> bool:
        entry = self._find(key)
        return entry is not None and bool(entry & _HAS_RESULT)

    def decided(self, key: str, url: str, ref: Reference, status: Status, reason: str) -> None:
        self.refer(key, url, ref)
        if not self.has_result(key):
            self.checked(key, Result(url, status, None, reason))

    def file_checked(self, key: str, result: Result, load_anchors: Callable[[], Anchors | None] | None) -> None:
        entry = self._find(key)
        if entry is not None and load_anchors is not None:
            self._loaders[entry >> 2] = load_anchors
        self.checked(key, result)

    def adopt(self, key: str, url: str, result: Result, anchors: Anchors | None) -> None:
        self._entry(key, url)
        self.checked(key, result, anchors)

    def same_as(self, key: str, end: str, redirect: Result) -> None:
        tid = self._entry(key, redirect.url) >> 2
        ending = self._entry(end, redirect.redirects[-1].split("#", 1)[0] if redirect.redirects else end)
        self._state.write_soon()
        self._db.execute("INSERT INTO waiting VALUES (?, ?, ?)", (ending >> 2, tid, orjson.dumps(_row(redirect))))
        self._ends.add(ending >> 2)
        if ending & _HAS_RESULT:
            self._pass_on_stored(ending >> 2, end, tid)

    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        """key's latest result (a later fetch of a raised plan replaces an earlier one); the first is emitted."""
        entry = self._entry(key, result.url)
        tid = entry >> 2
        first = not entry & _HAS_RESULT
        aid = self._anchor_id(anchors) if anchors is not None else None
        if result.redirects and result.status.is_ok and named_by_location(result.redirects) is not None:
            result = self._located(tid, result, aid, first)  # (its #fragments: the Location's replaced them)
            self._checked_against(tid, _MOOT)
        else:
            self._checked_against(tid, aid if result.status.is_ok else _MOOT)
        self._state.write_soon()
        if first:
            self._done_seq += 1
            if aid is None:
                self._sql("UPDATE targets SET result = ?, done = ? WHERE id = ?",
                          (_dump(result, key), self._done_seq, tid))
            else:
                self._sql("UPDATE targets SET result = ?, anchors = ?, done = ? WHERE id = ?",
                          (_dump(result, key), aid, self._done_seq, tid))
            self._keep(key, entry | _HAS_RESULT)
        elif aid is None:
            self._sql("UPDATE targets SET result = ? WHERE id = ?", (_dump(result, key), tid))
        else:
            self._sql("UPDATE targets SET result = ?, anchors = ? WHERE id = ?", (_dump(result, key), aid, tid))
        if entry & _HAS_FRAGMENTS:  # each against this result (the verdicts noted so far are its own)
            self._check_stored_fragments(tid, None if anchors is None else (result, anchors))
        if first and self._emit is not None:  # (after the fragments: a missing one's references are its own)
            self._emit_own(tid, result, bool(entry & _HAS_FRAGMENTS))
        if tid in self._ends and key not in self._passing:  # (a circle of redirects stops where it began)
            self._pass_on_stored(tid, key)

    def _located(self, tid: int, result: Result, aid: int | None, first: bool) -> Result:
        """result judged by the #fragment its redirect's Location named (location_verdict), against the anchors
        given (aid) or those kept for the target; a break found after its first result is emitted too."""
        if aid is None:
            aid = self._one("SELECT anchors FROM targets WHERE id = ?", (tid,))[0]
        judged = location_verdict(result, None if aid is None else self._anchors(aid))
        if judged is not result and not first and self._emit is not None:
            key, url, blob = self._one("SELECT key, url, result FROM targets WHERE id = ?", (tid,))
            if blob is not None and _load(blob, url or key).status.is_ok:
                refs = self._refs_of(tid)
                if refs:
                    self._emit(with_refs(judged, refs))
        return judged
    def _emit_own(self, tid: int, result: Result, fragments: bool) -> None:
        """Stream tid's result with the references the report gives it: not those that ask for a fragment found
        missing, which are the broken fragment's own result. None yet: held, for report() to look again."""
        assert self._emit is not None
        missing: set[str] = set()
        if fragments and result.status.is_ok:
            missing = {f for (f,) in self._db.execute("SELECT fragment FROM broken WHERE target = ?", (tid,))}
        self._index()
        refs = [ref for fragment, ref in self._read_refs(tid) if fragment is None or fragment not in missing]
        if refs:
            self._emit(with_refs(result, refs))
        else:
            self._held.append(tid)

    def forget(self, keys: Iterable[str]) -> None:
        """Drop the results of keys, to be checked again (--rerun-failed); their references stay."""
        self._state.write_soon()
        for key in keys:
            entry = self._find(key)
            if entry is None:
                continue
            tid = entry >> 2
            self._checked_against(tid, None)
            self._db.execute("UPDATE targets SET result = NULL, anchors = NULL, done = NULL WHERE id = ?", (tid,))
            self._db.execute("DELETE FROM broken WHERE target = ?", (tid,))
            self._keep(key, entry & ~_HAS_RESULT)

    def get(self, key: str) -> Target | None:
        """key's target as it stands (its references are in the file: references_of reads them)."""
        row = self._one("SELECT id, url, result FROM targets WHERE key = ?", (key,))
        if row is None:
            return None
        target = Target(key, row[1] or key)
        target.result = None if row[2] is None else _load(row[2], target.url)
        return target

    def result_of(self, key: str) -> Result | None:
        target = self.get(key)
        return None if target is None else target.result

    def references_of(self, key: str) -> list[Reference] | None:
        row = self._one("SELECT id FROM targets WHERE key = ?", (key,))
        return None if row is None else list(self._refs_of(row[0]))

    def page(self, entry: PageEntry) -> bool:
        """Record a page of the report; False when an earlier session recorded it (kept once)."""
        url, key, links, followed = entry
        self._state.write_soon()
        earlier = None if not self._resumed else self._one(
            "SELECT seq FROM pages WHERE url = ? AND key IS ? AND links = ? AND followed = ? AND session < ? LIMIT 1",
            (url, key, links, followed, self._session))
        if earlier is not None:  # matched once: a second equal entry of this session is a page of its own
            self._db.execute("UPDATE pages SET session = ? WHERE seq = ?", (self._session, earlier[0]))
            return False
        self._new_pages.append((url, key, links, int(bool(followed)), self._session))
        return True

    def notes(self, caps: set[str], warnings: list[str]) -> Notes:
        """The run's caps and warnings, with those of earlier sessions."""
        earlier_caps, earlier_warnings = self._earlier_notes
        return caps | earlier_caps, [*earlier_warnings, *(w for w in warnings if w not in earlier_warnings)]

    # -- the report --------------------------------------------------------------------------------------

    def report(
        self,
        pages: Sequence[Page],
        elapsed: float,
        interrupted: bool,
        caps: tuple[str, ...],
        depth_of: Callable[[str], int | None],
        warnings: tuple[str, ...] = (),
    ) -> Report:
        """The results as a sequence read from the file each time it is gone through (one result at a time)."""
        self._index()
        if not interrupted:
            self._settle_loops()
        held, self._held = self._held, []
        for tid in held:  # (a target streamed no result: a link named it since, or it asks for no fragment)
            blob, url = self._one("SELECT result, coalesce(url, key) FROM targets WHERE id = ?", (tid,))
            self._emit_own(tid, _load(blob, str(url)), True)
        results = StoredResults(self)
        return Report(results, summarize(results, len(pages), elapsed, interrupted, caps, warnings), pages)

    def _settle_loops(self) -> None:
        """Redirects still waiting for the result of their end when the run is over go round in a circle
        (a -> b, b -> a, each checked on its own): say so."""
        rows = self._db.execute(
            "SELECT t.key, w.redirect FROM waiting w JOIN targets e ON e.id = w.ending JOIN targets t ON"
            " t.id = w.target WHERE e.result IS NULL ORDER BY w.rowid").fetchall()
        for key, blob in rows:
            if not self.has_result(key):
                redirect = _load(blob, "")
                self.checked(key, Result(redirect.url, Status.ERROR, None, "redirect loop", redirect.redirects))

    def _results(self) -> Iterator[Result]:
        """Each target's result with its references, then those of its broken fragments, in the order of their
        first result. A target no link names (a redirect's end, fetched on the way) has none."""
        db = self._reader()
        for tid, key, url, blob, fragments, depth, n in db.execute(_RESULTS):
            url = url or key
            r = _load(blob, url)
            depth = r.depth if depth is None else depth
            if fragments != 2 or not r.status.is_ok:  # (no broken fragment, or none checked)
                if n:
                    yield with_refs(r, TargetRefs(self, tid, n, key=key), depth)
                continue
            broken = db.execute("SELECT fragment, result FROM broken WHERE target = ? ORDER BY fragment",
                                (tid,)).fetchall()
            left_out = tuple(f for f, _ in broken)
            counts = self._count_refs(tid, left_out)
            rest = n - sum(counts.values())
            if rest:  # (none when every link to it asks for a fragment it lacks: those are the broken ones below)
                yield with_refs(r, TargetRefs(self, tid, rest, leave_out=left_out, key=key), depth)
            for fragment, result in broken:
                refs = TargetRefs(self, tid, counts[fragment], only=fragment, key=key)
                yield with_refs(_load(result, f"{url}#{fragment}"), refs, depth)

    # -- the file ----------------------------------------------------------------------------------------

    def _find(self, key: str) -> int | None:
        entry = self._young.get(key)
        if entry is None:
            entry = self._old.get(key)
            if entry is None:
                if self._complete:
                    return None
                if self._flagged:
                    self._write_flags()
                row = self._one("SELECT id, result IS NOT NULL, fragments FROM targets WHERE key = ?", (key,))
                if row is None:
                    return None
                entry = row[0] << 2 | row[1] << 1 | row[2]
            self._keep(key, entry)
        return entry

    def _entry(self, key: str, url: str, fragments: bool = False) -> int:
        """key's cached entry, its row made on first sight (saying so if a #fragment is asked of it)."""
        entry = self._young.get(key)
        if entry is not None:
            return entry
        entry = self._find(key)
        if entry is None:
            self._state.write_soon()
            # (bound values exact ints and strs, a NULL in the statement: see sqlite_state's note on _INSERT)
            flag = int(fragments)
            cursor = self._sql("INSERT INTO targets (key, url, fragments) VALUES (?, NULL, ?)", (key, flag)) \
                if url == key else self._sql("INSERT INTO targets (key, url, fragments) VALUES (?, ?, ?)",
                                             (key, url, flag))
            assert cursor.lastrowid is not None
            entry = cursor.lastrowid << 2 | flag
            self._count += 1
            self._keep(key, entry)
        return entry

    def _keep(self, key: str, entry: int) -> None:
        young = self._young
        if len(young) >= _CACHE and key not in young:
            self._complete = self._complete and not self._old  # (the old generation's keys are forgotten)
            self._old, self._young = young, {}
            young = self._young
        young[key] = entry

    def _source(self, url: str) -> int:
        """A row id of the document url (a row made when the cache has none). First met in this session when an
        earlier one recorded references from it (a page fetched again, an input read again), the references it
        gives again are passed over: those recorded, each as often as it was."""
        if url is self._last_source:  # (a document's links come together)
            return self._last_sid
        sid = self._sources_young.get(url)
        if sid is not None:
            self._last_source, self._last_sid = url, sid
            return sid
        sid = self._sources_old.get(url)
        if sid is None:
            self._state.write_soon()
            if self._resumed:  # (a first session has no index on url: it looks nothing up)
                self._write_rows()
                rows = self._db.execute("SELECT id, session FROM sources WHERE url = ?", (url,)).fetchall()
            else:
                rows = []
            if any(session != self._session for _, session in rows):
                self._db.execute("UPDATE sources SET session = ? WHERE url = ?", (self._session, url))
                names = self._pair_names
                earlier = Counter((key, fragment, line, col, *names[pair], text)
                                  for key, place, stored in self._db.execute(_REFS_FROM, (url,))
                                  for fragment, line, col, pair, text in (_unpack(key, place, stored),))
                if earlier:
                    self._skip[url] = earlier
            if rows:
                sid = rows[-1][0]
            else:
                sid = self._next_sid
                self._next_sid += 1
                self._new_sources.append((sid, url, self._session))
        young = self._sources_young
        if len(young) >= _CACHE >> 3:
            self._sources_old, self._sources_young = young, {}
        self._sources_young[url] = sid
        self._last_source, self._last_sid = url, sid
        return sid

    def _anchor_id(self, anchors: Anchors) -> int:
        aid = self._anchor_ids.get(anchors)
        if aid is None:
            cursor = self._db.execute("INSERT INTO anchor_sets VALUES (NULL, ?, ?)",
                                      (orjson.dumps(sorted(anchors.names)), anchors.case_insensitive))
            assert cursor.lastrowid is not None
            aid = cursor.lastrowid
            if len(self._anchor_ids) >= 1024:
                self._anchor_ids.clear()
            self._anchor_ids[anchors] = aid
            self._anchors_read[aid] = anchors
        return aid

    def _anchors(self, aid: int) -> Anchors:
        anchors = self._anchors_read.get(aid)
        if anchors is None:
            names, folded = self._one("SELECT names, folded FROM anchor_sets WHERE id = ?", (aid,))
            anchors = Anchors(frozenset(orjson.loads(names)), bool(folded))
            if len(self._anchors_read) >= 1024:
                self._anchors_read.clear()
            self._anchors_read[aid] = anchors
        return anchors

    def _check_stored_fragments(self, tid: int, latest: tuple[Result, Anchors] | None = None) -> None:
        """Each fragment asked of tid, against its latest result (with its anchors, when the caller has them)."""
        asked = {f for (f,) in self._sql("SELECT fragment FROM asked WHERE target = ?", (tid,))}
        asked.update(self._asked.get(tid, ()))
        if asked:
            context = self._fragment_context(tid, latest)
            for fragment in sorted(asked):
                self._check_stored_fragment(tid, fragment, context)

    def _fragment_context(self, tid: int, latest: tuple[Result, Anchors] | None = None
                          ) -> tuple[str | None, Result, Anchors | None] | None:
        """tid's URL (None: read when a fragment is missing), result and anchors, when its fragments can be checked
        (its result passed)."""
        if latest is not None:
            return (None, *latest) if _own_fragments(latest[0]) else None
        key, url, blob, aid = self._one("SELECT key, url, result, anchors FROM targets WHERE id = ?", (tid,))
        url = url or key
        result = _load(blob, url)
        if not _own_fragments(result):
            self._checked_against(tid, _MOOT)
            return None
        if aid is not None:
            self._checked_against(tid, aid)
            return url, result, self._anchors(aid)
        loader = self._loaders.pop(tid, None)  # a local file's, read on first need
        anchors = loader() if loader is not None else None
        if anchors is not None:
            aid = self._anchor_id(anchors)
            self._db.execute("UPDATE targets SET anchors = ? WHERE id = ?", (aid, tid))
            self._checked_against(tid, aid)
        return url, result, anchors

    def _checked_against(self, tid: int, aid: int | None) -> None:
        """What tid's fragments are checked against from now on: aid's anchors, none (_MOOT), or unknown here
        (None: read from the file when asked)."""
        if aid is None:
            self._against.pop(tid, None)
            self._against_old.pop(tid, None)
            return
        against = self._against
        if len(against) >= _CACHE >> 1 and tid not in against:
            self._against_old, self._against = against, {}
            against = self._against
        against[tid] = aid

    def _verdict(self, tid: int, fragment: str) -> None:
        """tid's fragment is checked against its latest result."""
        if len(self._verdicts) >= _CACHE:
            self._verdicts.clear()
        self._verdicts.add((tid, fragment))

    def _check_stored_fragment(self, tid: int, fragment: str,
                               context: tuple[str | None, Result, Anchors | None] | None) -> None:
        self._verdict(tid, fragment)
        if context is None:
            return
        url, result, anchors = context
        if anchors is None or anchors.has(fragment):
            return
        if url is None:
            url = str(self._one("SELECT coalesce(url, key) FROM targets WHERE id = ?", (tid,))[0])
        broken = Result(f"{url}#{fragment}", Status.BROKEN, result.code, f"no anchor #{fragment}", depth=result.depth,
                        content_type=result.content_type, cached=result.cached)
        cursor = self._db.execute("INSERT OR IGNORE INTO broken VALUES (?, ?, ?)",
                                  (tid, fragment, _dump(broken, f"{url}#{fragment}")))
        if cursor.rowcount and self._emit is not None:
            self._index()
            n = self._count_refs(tid, (fragment,))[fragment]
            self._emit(with_refs(broken, TargetRefs(self, tid, n, only=fragment)))

    def _pass_on_stored(self, ending: int, end_key: str, only: int | None = None) -> None:
        """end's result, with the redirect's chain, is the result of each redirect waiting for it (or of only
        the one that just began to wait)."""
        key, url, blob, aid = self._one("SELECT key, url, result, anchors FROM targets WHERE id = ?", (ending,))
        r = _load(blob, url or key)
        anchors = self._anchors(aid) if aid is not None else None
        self._passing.add(end_key)
        try:
            for waiting, wurl, redirect_blob in self._db.execute(
                    "SELECT t.key, t.url, w.redirect FROM waiting w JOIN targets t ON t.id = w.target WHERE"
                    " w.ending = ? AND ? IN (-1, w.target) ORDER BY w.rowid", (ending, -1 if only is None else only)
            ).fetchall():
                redirect = _load(redirect_blob, "")
                result = Result(wurl or waiting, r.status, r.code, r.reason, redirect.redirects + r.redirects,
                                redirect.elapsed, redirect.depth, r.content_type,
                                redirect_codes=redirect.redirect_codes + r.redirect_codes)
                self.checked(waiting, result, anchors)
        finally:
            self._passing.discard(end_key)

    def _refs_of(self, tid: int) -> list[Reference]:
        self._index()
        return [ref for _, ref in self._read_refs(tid)]

    def _read_refs(self, tid: int, key: str | None = None) -> Iterator[tuple[str | None, Reference]]:
        """tid's references in the order they were recorded, each with the fragment it asks for."""
        names = self._pair_names
        if key is None:
            key = str(self._one("SELECT key FROM targets WHERE id = ?", (tid,))[0])
        for source, place, stored in self._reader().execute(_REFS, (tid,)):
            fragment, line, col, pair, text = _unpack(key, place, stored)
            element, attribute = names[pair]
            yield fragment, Reference(source, line, col, element, attribute, text)

    def _ref_row(self, key: str, tid: int, fragment: str | None, sid: int, line: int, column: int, element: str,
                 attribute: str, text: str) -> tuple[Any, ...]:
        """A row of refs (see _SCHEMA's note)."""
        pair = self._pairs.get((element, attribute))
        if pair is None:
            pair = self._pair(element, attribute)
        place = line << 40 | column << 12 | pair if 0 <= line < _LINES and 0 <= column < _COLUMNS and pair < _PAIRS \
            else f"{line}:{column}:{pair}"
        if fragment is not None:
            return tid, sid, place, _with_fragment(fragment, text)
        return tid, sid, place, len(text) if text and key.endswith(text) else text

    def _pair(self, element: str, attribute: str) -> int:
        """The id of a pair of element and attribute not met before (a row made)."""
        pair = len(self._pair_names)
        self._state.write_soon()
        self._db.execute("INSERT INTO pairs VALUES (?, ?, ?)", (pair, element, attribute))
        self._pair_names.append((element, attribute))
        self._pairs[(element, attribute)] = pair
        return pair

    def _count_refs(self, tid: int, fragments: Iterable[str]) -> Counter[str]:
        """How many of tid's references ask for each of fragments (one pass over them)."""
        wanted = set(fragments)
        return Counter(f for (stored,) in self._reader().execute("SELECT text FROM refs WHERE target = ?", (tid,))
                       if type(stored) is bytes and (f := _split(stored)[0]) in wanted)

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        return self._reader().execute(sql, args).fetchone()

    def _reader(self) -> sqlite3.Connection:
        """The crawl's connection while it is open. The report is read after the run, when it is closed: then
        a connection of its own that takes no lock (immutable: the file was checkpointed when the crawl's
        connection closed), so the next run on the same directory can open it."""
        if not self._closed:
            return self._db
        if self._reading is None:
            uri = f"file:{pathname2url(os.path.abspath(self._path))}?mode=ro&immutable=1"
            self._reading = sqlite3.connect(uri, uri=True)
        return self._reading

    def _index(self) -> None:
        """References by target, from here on (made once, in one pass: see _SCHEMA's note)."""
        self._write_rows()
        if not self._indexed:
            _make_index(self._reader(), _INDEX)
            self._indexed = True

    def _write_rows(self) -> None:
        """The rows kept in memory until now (references, the fragments they ask for, sources, pages)."""
        if self._flagged:
            self._write_flags()
        if self._new_sources:
            self._state.write_soon()
            insert_rows(self._cursor, "INSERT INTO sources VALUES ", self._new_sources)
            self._new_sources.clear()
        if self._new_pages:
            self._state.write_soon()
            insert_rows(self._cursor, "INSERT INTO pages (url, key, links, followed, session) VALUES ",
                        self._new_pages)
            self._new_pages.clear()
        if self._asked:
            self._state.write_soon()
            insert_rows(self._cursor, "INSERT OR IGNORE INTO asked VALUES ",
                        [(tid, f) for tid, fragments in self._asked.items() for f in fragments])
            self._asked.clear()  # (in place: refer_links() may be adding to it)
        if self._pending:
            self._state.write_soon()
            if self._drop_index:
                self._db.execute("DROP INDEX refs_of")
                self._indexed = self._drop_index = False
            if self._indexed:  # a target's references together: fewer places of the index touched (their order
                self._pending[:] = _by_target(self._pending)  # among themselves is kept, and reports read it so)
            insert_flat(self._cursor, _INSERT_REF, self._pending, _REF_WIDTH)
            self._pending.clear()  # (the same list: refer_links() may be appending to it)

    def _write_flags(self) -> None:
        """Targets a fragment is asked of (first asked after their rows were made)."""
        update_ids(self._sql, _FLAG, self._flagged)
        self._flagged.clear()

    def _write(self) -> None:
        """In the state's transaction, just before it commits."""
        self._write_rows()
        if self.notes_source is not None:
            caps, warnings = self.notes_source()  # (with those of earlier sessions: see notes())
            saved = orjson.dumps([sorted(caps), warnings])
            if saved != self._saved_notes:
                self._db.execute("INSERT OR REPLACE INTO notes VALUES ('notes', ?)", (saved,))
                self._saved_notes = saved

    def close(self) -> None:
        failed = self._state.failed
        if failed is None:
            self._state.write_soon()  # the notes, even when nothing else changed since the last commit
        self._state.close()
        self._closed = True
        # After the report, which stands: too late for its warnings, so said here. A program is not told more:
        # the run's results are whole, and what is lost is only the state's last commit, which a resumed run
        # makes up for by asking those URLs again.
        if failed is None and self._state.failed is not None:
            print(f"linkhound: warning: {self._path}: can't write the crawl state's last changes "
                  f"({self._state.failed}); a run of the same command resumes from what was written before",
                  file=sys.stderr)

    def commit(self) -> None:
        """What the crawl wrote, committed (before the report: a file that can't be written is said first)."""
        self._state.flush()

    def failing(self, e: BaseException) -> bool:
        """Whether e is the state's file failing to be written: see SqliteState.failing."""
        return self._state.failing(e)

    @property
    def failed(self) -> LinkhoundError | None:
        """Why the run stopped, when the state's file could not be written."""
        if self._state.failed is None:
            return None
        return LinkhoundError(f"{self._path}: can't write the crawl state ({self._state.failed}); the run stopped, "
                              "and the state keeps what was written before: run the same command again (with room "
                              "for it) to resume")

    def on_failure(self, stop: Callable[[], None]) -> None:
        self._state.on_failure = stop


class TargetRefs(RefSequence):
    """The references to one target read from the file when gone through: all of them, those that ask for one
    fragment (only), or all but those that ask for some fragments (leave_out)."""

    __slots__ = ("_ledger", "_tid", "_n", "_only", "_leave_out", "_key")

    def __init__(self, ledger: PersistentLedger, tid: int, n: int, only: str | None = None,
                 leave_out: tuple[str, ...] = (), key: str | None = None) -> None:
        self._ledger = ledger
        self._tid = tid
        self._key = key  # the target's (read when needed, if not given)
        self._n = n
        self._only = only
        self._leave_out = leave_out

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Reference]:
        only, leave_out = self._only, self._leave_out
        for fragment, ref in self._ledger._read_refs(self._tid, self._key):
            if only is not None and fragment != only or fragment is not None and fragment in leave_out:
                continue
            yield ref


class _Reread(Sequence[T]):
    """Rows of the file, gone through again each time; indexing goes through them (rarely needed)."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...
    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        return tuple(self)[i]


class StoredResults(_Reread[Result]):
    """A crawl's results, read from its file one at a time each time they are gone through."""

    __slots__ = ("_ledger", "_n")

    def __init__(self, ledger: PersistentLedger) -> None:
        self._ledger = ledger
        self._n: int | None = None

    def __len__(self) -> int:
        if self._n is None:
            self._n = sum(1 for _ in self)
        return self._n

    def __iter__(self) -> Iterator[Result]:
        n = 0
        for result in self._ledger._results():
            n += 1
            yield result
        self._n = n


class StoredPages(_Reread[Page]):
    """The pages a crawl fetched and parsed, read from its file each time they are gone through."""

    __slots__ = ("_ledger",)

    def __init__(self, ledger: PersistentLedger) -> None:
        self._ledger = ledger

    def __len__(self) -> int:
        return int(self._read("SELECT count(*) FROM pages").fetchone()[0])

    def __iter__(self) -> Iterator[Page]:
        for url, key, depth, links, followed in self._read(_PAGES):
            yield Page(url, (depth or 0) if key else 0, links, bool(followed))

    def entries(self) -> Iterator[PageEntry]:
        for url, key, _, links, followed in self._read(_PAGES):
            yield url, key, links, bool(followed)

    def _read(self, sql: str) -> sqlite3.Cursor:
        ledger = self._ledger
        if not ledger._closed:
            ledger._write_rows()  # (pages recorded since the last commit)
        return ledger._reader().execute(sql)


def fingerprint(settings: Settings, inputs: Iterable[Input]) -> str:
    """What makes two runs the same crawl: the inputs and the settings of what is crawled and checked (not the
    request settings, which may change between sessions, nor the output)."""
    shaping = []
    for f in option_fields(Settings):
        if f.option.group in (CRAWLING, LINKS, LOCAL) and f.name not in ("state", "restart", "rerun_failed"):
            value = getattr(settings, f.name)
            shaping.append([f.name, sorted(value) if isinstance(value, frozenset) else repr(value)])
    text = orjson.dumps([shaping, [i.location for i in inputs]])
    return hashlib.sha256(text).hexdigest()


def judging(settings: Settings) -> str:
    """The settings an answer's verdict comes from, as the user writes them: one report can't mix two (the
    request settings left out of the fingerprint may change between sessions; these may not)."""
    said = [f"--accept {format_accept(settings.accept)}"]
    said += [f"--accept-for '{spec}'" for spec in settings.accept_for]
    return " ".join(said)


def _own_fragments(result: Result) -> bool:
    """Whether the #fragments links ask of a target are checked against this result: it passed, and no
    redirect's Location named a fragment of its own (that one replaced theirs: RFC 9110 10.2.2)."""
    return result.status.is_ok and not (result.redirects and named_by_location(result.redirects) is not None)


def _make_index(db: sqlite3.Connection, create: str) -> None:
    """Run create (a CREATE INDEX IF NOT EXISTS) with a small page cache: SQLite sorts the rows in runs the size
    of its cache, and 2 MB runs (held in the processor's cache) sort faster than 32 MB ones, merges included
    (an index of 3 million rows of a table like refs: 1.3-1.4 s against 2.2-2.4 s)."""
    db.execute(f"PRAGMA cache_size = -{_SORT_KIB}")
    try:
        db.execute(create)
    finally:
        db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")


def _by_target(flat: list[Any]) -> list[Any]:
    """Flat reference rows, sorted by target (stable)."""
    rows = [flat[i:i + _REF_WIDTH] for i in range(0, len(flat), _REF_WIDTH)]
    rows.sort(key=_target_of)
    return list(itertools.chain.from_iterable(rows))


def _target_of(row: list[Any]) -> int:
    return int(row[0])


_LINES, _COLUMNS, _PAIRS = 1 << 23, 1 << 28, 1 << 12  # what a reference's place holds of each, in one integer


def _with_fragment(fragment: str, text: str) -> bytearray:
    """The text column of a reference that asks for fragment: "<length of fragment>:<fragment><text>" (a blob;
    bound as a bytearray, which the sqlite3 module takes as it is, where bytes go through its adapter lookup)."""
    return bytearray(f"{len(fragment)}:{fragment}{text}", "utf-8", "surrogatepass")


def _split(stored: bytes) -> tuple[str, str]:
    """What _with_fragment() made: (fragment, text)."""
    both = stored.decode("utf-8", "surrogatepass")
    colon = both.index(":")
    end = colon + 1 + int(both[:colon])
    return both[colon + 1:end], both[end:]


def _unpack(key: str, place: int | str, stored: int | str | bytes) -> tuple[str | None, int, int, int, str]:
    """A reference's row as (fragment, line, column, pair id, text); key is its target's."""
    if type(place) is int:
        line, col, pair = place >> 40, place >> 12 & (_COLUMNS - 1), place & (_PAIRS - 1)
    else:
        line, col, pair = map(int, str(place).split(":"))
    if isinstance(stored, int):  # the end of the target's key
        return None, line, col, pair, key[-stored:]
    if isinstance(stored, str):
        return None, line, col, pair, stored
    fragment, text = _split(stored)
    return fragment, line, col, pair, text


def _row(r: Result) -> list[Any]:
    return [r.url, r.status.value, r.code, r.reason, list(r.redirects), r.elapsed, r.depth, r.content_type,
            r.cached, list(r.redirect_codes)]


def _dump(r: Result, url: str) -> bytearray:
    """r as stored: its url left out (null) where it is url, the row's own (nearly always). (A bytearray: see
    _with_fragment.)"""
    row = _row(r)
    if r.url == url:
        row[0] = None
    return bytearray(orjson.dumps(row))


def _load(blob: bytes, url: str) -> Result:
    v = orjson.loads(blob)
    return Result(v[0] if v[0] is not None else url, Status(v[1]), v[2], v[3], tuple(v[4]), v[5], v[6], v[7],
                  cached=v[8], redirect_codes=tuple(v[9]))
