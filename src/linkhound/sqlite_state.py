"""The crawl state in a SQLite file: records, parent -> child edges and per-host queues on disk, so memory stays
flat however large the crawl, and a run killed at any point resumes from its last commit."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from .crawl_state import Claim, Found, Limits, Plan, Progress, Record, wanted
from .exceptions import UsageError

SCHEMA_VERSION = 5
_QUEUED, _IN_FLIGHT, _DONE = 0, 1, 2
_CHECK, _PAGE = int(Plan.CHECK), int(Plan.PAGE)
_PROGRESS = (Progress.QUEUED, Progress.IN_FLIGHT, Progress.DONE)
_NO_LIMITS = Limits()
CACHE_KIB = 32 * 1024
_CHECKPOINT_PAGES = 8192  # of 4 KiB
_BATCH = 16  # queued records read a statement when a host's next claims are not known
_NEXT_MAX = 64  # positions known ahead, at most

# One row per canonical key. The queue index is partial: it holds only queued rows, so it stays the size of the
# frontier, not of the crawl. seq orders equal depths in the order records were (re)queued, as the heap does in
# MemoryState; url is NULL where it equals the key (nearly always), which halves the text stored.
# A page's links are one row of edges: the keys it links to, as a JSON array, written with the commit (in
# hundred-row inserts) or before a shorter path reads edges back. Kept as keys, not record ids, so adding a page's
# links reads no record for the links it repeats (nav, footer: most of them).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    url TEXT,
    host TEXT NOT NULL,
    depth INTEGER NOT NULL,
    plan INTEGER NOT NULL,
    served INTEGER,
    progress INTEGER NOT NULL,
    crawlable INTEGER NOT NULL,
    body INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    hop INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS queue ON records (host, depth, seq) WHERE progress = 0;
CREATE INDEX IF NOT EXISTS in_flight ON records (host) WHERE progress = 1;
CREATE TABLE IF NOT EXISTS edges (parent INTEGER NOT NULL, children BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS edges_of ON edges (parent);
"""
_COLUMNS = "id, key, url, host, depth, plan, served, progress, crawlable, body, seed, hop, seq"
_BY_KEY = f"SELECT {_COLUMNS} FROM records WHERE key = ?"
_CHILDREN = "SELECT children FROM edges WHERE parent = ?"
# Values are bound as exact ints and strs (and bytearrays): the sqlite3 module gives any other type (bool, None,
# bytes, an IntEnum) to its adapter lookup first, which costs 1.2-1.9 us a value (it raises and clears an
# AttributeError); so a NULL is written in the statement (a variant without that value), not bound as None.
# A new record's row is made without looking for one first (most keys not cached are new): the INSERT is ignored
# where the key has a row (then read).
_NEW = "records (key, url, host, depth, plan, served, progress, crawlable, body, seed, hop, seq)"
_INSERT = f"INSERT OR IGNORE INTO {_NEW} VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, 1, ?)"
_INSERT_SAME = f"INSERT OR IGNORE INTO {_NEW} VALUES (?, NULL, ?, ?, ?, NULL, ?, ?, ?, ?, 1, ?)"  # url = key's
_SAVE = ("UPDATE records SET depth = ?, plan = ?, served = ?, progress = ?, crawlable = ?, body = ?, seed = ?,"
         " seq = ? WHERE id = ?")
_SAVE_UNSERVED = _SAVE.replace("served = ?", "served = NULL")
_ADOPT = f"INSERT INTO {_NEW} VALUES (?, ?, ?, ?, 2, 2, 2, ?, ?, ?, 1, 0)"  # fetched already, as a page
# The next records of a host's queue, read a few at a time (see SqliteState._next): from its start, or after
# the place read up to (what came before that is listed, claimed, or gone from the queue)
_NEXT = f"SELECT {_COLUMNS} FROM records WHERE host = ? AND progress = 0 ORDER BY depth, seq LIMIT {_BATCH}"
_NEXT_AFTER = (f"SELECT {_COLUMNS} FROM records WHERE host = ? AND progress = 0 AND (depth, seq) > (?, ?)"
               f" ORDER BY depth, seq LIMIT {_BATCH}")


class _Rec:
    """One row, read for a step and written back when the step changed it."""

    __slots__ = ("id", "key", "url", "host", "depth", "plan", "served", "progress", "crawlable", "body", "seed",
                 "hop", "seq")

    def __init__(self, row: tuple[int, str, str | None, str, int, int, int | None, int, int, int, int, int, int]):
        (self.id, self.key, url, self.host, self.depth, self.plan, self.served, self.progress, self.crawlable,
         self.body, self.seed, self.hop, self.seq) = row
        self.url = self.key if url is None else url


class SqliteState:
    """CrawlState in a SQLite file (WAL). Every method runs its statements without yielding, so each step is
    atomic with respect to the other tasks of the event loop, as in MemoryState, whose rules this one repeats.

    Writes gather in one open transaction, committed by the event loop `commit_interval` seconds after its
    first write (or on flush()/close()): a kill loses at most that much work, and a crawl pays for a commit
    about once a second instead of once per step. Opening a file that holds records resumes them: what was in
    flight when the last run ended is queued again.
    """

    def __init__(
        self,
        path: str,
        limits: Limits = _NO_LIMITS,
        on_host_ready: Callable[[str], None] = lambda host: None,
        commit_interval: float = 1.0,
        cache_size: int = 40_000,
        fresh: bool = False,
    ) -> None:
        self.path = path
        self._limits = limits
        self._on_host_ready = on_host_ready
        self._interval = commit_interval
        self._db = _open(path, fresh)
        self._cursors: list[sqlite3.Cursor] = []
        self._before_commit: list[Callable[[], None]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._edges: list[tuple[int, bytearray]] = []  # rows of edges not yet written (read back rarely)
        self._closed = False
        self.failed: str | None = None  # why the file could not be written (the run stops)
        self.on_failure: Callable[[], None] = lambda: None
        # Records used lately, by key: the links every page repeats (navigation, footer) are read once, not
        # once per page. The file stays the only truth: every change is written (but a claim's: see
        # _claimed), the cache only saves reads. Two generations of 40,000 (about 12 MB each): at 10,000, a
        # 100k-page crawl read 32,000 more records back and tried 32,000 more inserts of keys it had (-7.5%
        # statements, 17-19 MB more peak RSS).
        self._cache_size = cache_size
        self._young: dict[str, _Rec] = {}
        self._old: dict[str, _Rec] = {}
        # The first queued records of some hosts, as (depth, seq, key) in claim order, and the place in the
        # host's queue read up to: every queued record of the host before that place is listed (a record
        # queued there later is put in its place), and those after it are read when the list runs out. Read a
        # batch at a time, so most claims need no SELECT; a record that moved or left the queue since it was
        # listed is passed over when its turn comes (checked against its record), as is one read while in
        # flight (its row doesn't say so: below).
        self._next: dict[str, list[tuple[int, int, str]]] = {}
        self._read_to: dict[str, tuple[int, int]] = {}  # (of hosts with queued records only)
        # Records claimed, in flight, whose rows don't say so: a claim writes nothing (done() writes the whole
        # row, and most claims are done within the commit that made them; a kill requeues what was in flight
        # anyway). Held here until their rows are written, whatever the cache forgets.
        self._claimed: dict[str, _Rec] = {}
        try:
            self._resume()
        except BaseException:
            self._db.close()
            raise
        # One cursor for the statements of a step whose rows are read at once (most of them): executed on the
        # connection, each would make a cursor of its own (about 1 us a statement, a million statements a
        # 100k-page crawl). A loop over rows that runs other statements meanwhile keeps a cursor of its own.
        self._sql = self.cursor().execute

    def _resume(self) -> None:
        db = self._db
        meta = dict(db.execute("SELECT name, value FROM meta"))
        self._pages = int(meta.get("pages", 0))  # PAGE plans granted
        self.refetched = int(meta.get("refetched", 0))
        self._seq = int(meta.get("seq", 0))
        # a crash left these in flight: nothing was recorded of their fetch, so they are fetched again
        db.execute("BEGIN")
        db.execute("UPDATE records SET progress = 0 WHERE progress = 1")
        db.execute("COMMIT")
        self._per_host: dict[str, int] = dict(
            db.execute("SELECT host, count(*) FROM records WHERE progress = 0 GROUP BY host"))
        self._queued = self._unfinished = sum(self._per_host.values())
        # announced on first use, not here: the caller's on_host_ready may not work until we are returned
        self._unannounced = sorted(self._per_host)

    # -- the protocol ----------------------------------------------------------------------------------

    @property
    def unfinished(self) -> int:
        self._announce()
        return self._unfinished

    @property
    def queued(self) -> int:
        self._announce()
        return self._queued

    def has_work(self, host: str) -> bool:
        self._announce()
        return self._per_host.get(host, 0) > 0

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM records").fetchone()[0])

    async def add(
        self, found: Iterable[Found], parent: str | None = None, hop: int = 1, known: Iterable[str] = ()
    ) -> list[Claim]:
        self._begin()
        changed: list[Claim] = []
        edges: list[str] | None = None
        page = self._load(parent) if parent is not None else None
        if page is not None:
            edges = []
            if page.hop != hop:
                page.hop = hop
                self._sql("UPDATE records SET hop = ? WHERE id = ?", (hop, page.id))
        for f in found:
            r = self._young.get(f.key)
            if r is None:
                r = self._old.pop(f.key, None)
                if r is not None:
                    self._keep(r)
                else:  # (its row made if it has none: no lookup first, most keys not held are new)
                    r = self._insert(f)
                    if r is not None:
                        changed.append(_claim_of(r))
                        if edges is not None:
                            edges.append(f.key)
                        continue
                    r = self._load(f.key)
                    assert r is not None, f.key
            # (as in MemoryState: a PAGE record's flags change nothing, so they are not saved: 2,450 of the
            # 6,030 record updates of a 3,000-page crawl were a page's body flag)
            if f.depth < r.depth or f.seed and not r.seed or r.plan != _PAGE and (
                    f.crawl and not r.crawlable or f.body and not r.body):
                self._update(r, f, changed)
            if edges is not None:
                edges.append(f.key)
        if edges is not None:
            edges.extend(known)
            if edges:
                self._edges.append((page.id, bytearray(orjson.dumps(edges))))  # type: ignore[union-attr]
        return changed

    async def adopt(self, found: Found, parent: str | None = None) -> bool:
        self._begin()
        r = self._load(found.key)
        adopted = r is None
        if r is None:
            self._db.execute(_ADOPT, (found.key, _url_column(found), found.host, found.depth, int(found.crawl),
                                      int(found.body), int(found.seed)))
            self._pages += 1
        else:
            self._update(r, found, [])
        redirect = self._load(parent) if parent is not None else None
        end = self._load(found.key)
        if redirect is not None and end is not None:  # a redirect is a hop of no length: its end moves up with it
            redirect.hop = 0
            self._db.execute("UPDATE records SET hop = 0 WHERE id = ?", (redirect.id,))
            self._edges.append((redirect.id, bytearray(orjson.dumps([end.key]))))
        return adopted

    async def claim(self, host: str) -> Claim | None:
        self._announce()
        if not self._per_host.get(host):
            return None
        self._begin()
        r = self._next_of(host)
        r.progress = _IN_FLIGHT
        self._claimed[r.key] = r
        self._keep(r)  # (its page's depth is asked for as its links are added, and it is done: no read then)
        self._dequeued(host)
        return Claim(r.key, r.url, host, r.depth, Plan(r.plan), bool(r.seed))

    def _next_of(self, host: str) -> _Rec:
        """The first queued record of host (which the count says has one)."""
        listed = self._next.get(host)
        while True:
            if not listed:
                after = self._read_to.get(host)
                rows = self._sql(_NEXT, (host,)) if after is None else self._sql(_NEXT_AFTER, (host, *after))
                listed = self._next[host] = []
                for row in rows.fetchall():
                    key = row[1]
                    if key not in self._young and key not in self._old and key not in self._claimed:
                        self._keep(_Rec(row))  # (read now: its claim reads it from the cache)
                    listed.append((row[4], row[12], key))
                assert listed, host
                self._read_to[host] = listed[-1][:2]
            depth, seq, key = listed.pop(0)
            if not listed:
                del self._next[host]  # (no list of a host kept empty: hosts may be many)
            r = self._load(key)
            if r is not None and r.progress == _QUEUED and r.depth == depth and r.seq == seq:
                return r

    def _listed(self, r: _Rec) -> None:
        """r is queued at a new place (a new seq): listed if that is before the place its host's queue was read
        up to."""
        after = self._read_to.get(r.host)
        if after is not None and (r.depth, r.seq) < after:
            listed = self._next.setdefault(r.host, [])
            bisect.insort(listed, (r.depth, r.seq, r.key))
            if len(listed) > _NEXT_MAX:
                listed.pop()
                self._read_to[r.host] = listed[-1][:2]  # (the last one is read again when its turn comes)

    async def done(self, claim: Claim, served: Plan) -> None:
        self._begin()
        r = self._load(claim.key)
        assert r is not None, claim.key
        # a fetch made for a plan satisfies it, whatever it got: asking again the same way would get the same
        r.served = int(max(served, claim.plan) if r.served is None else max(r.served, served, claim.plan))
        if r.plan > r.served:  # the plan rose while it was in flight: fetch it again, for the new plan
            self.refetched += 1
            self._enqueue(r)
        else:
            r.progress = _DONE
            self._unfinished -= 1
        self._save(r)

    def record(self, key: str) -> Record | None:
        r = self._load(key)
        if r is None:
            return None
        served = None if r.served is None else Plan(r.served)
        return Record(r.key, r.url, r.depth, Plan(r.plan), _PROGRESS[r.progress], served)

    def depth(self, key: str) -> int | None:
        r = self._load(key)  # (a page's depth is asked for as its links are added: its record is read anyway)
        return None if r is None else r.depth

    def cut_by(self) -> tuple[str, ...]:
        limits = self._limits
        low, high = self._db.execute(
            "SELECT min(depth), max(depth) FROM records WHERE crawlable AND plan < ?", (int(Plan.PAGE),)
        ).fetchone()
        if low is None:
            return ()
        cut = set()
        if limits.max_depth is not None and high > limits.max_depth:
            cut.add(f"max-depth {limits.max_depth}")
        if limits.max_depth is None or low <= limits.max_depth:
            cut.add(f"max-pages {limits.max_pages}")
        return tuple(sorted(cut))

    # -- durability ------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Commit what the open transaction holds (with the counters that go with it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._db.in_transaction and self.failed is None:
            try:
                self._write_edges()
                for write in self._before_commit:
                    write()
                self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                     [("pages", self._pages), ("refetched", self.refetched), ("seq", self._seq)])
                self._db.execute("COMMIT")
            except sqlite3.Error as e:
                if not self.failing(e):
                    raise

    def failing(self, e: BaseException) -> bool:
        """Whether e is the file failing to be written (disk full, an I/O error). The first time, what the open
        transaction holds is dropped, the file is written no more (the steps it holds stay whole: a resume
        starts from them) and on_failure() is told: the run can't go on."""
        if not isinstance(e, sqlite3.Error):
            return False
        if self.failed is None:
            self.failed = str(e)
            with contextlib.suppress(sqlite3.Error):
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._db.execute("PRAGMA query_only = ON")  # (a write now would commit half a step)
            self.on_failure()
        return True

    @property
    def connection(self) -> sqlite3.Connection:
        """The file's connection, for a store that keeps its own tables in the same transactions."""
        return self._db

    def write_soon(self) -> None:
        """Open a transaction if none is (committed within the interval): a store sharing it has writes."""
        self._begin()

    def before_commit(self, write: Callable[[], None]) -> None:
        """Call write() in each transaction just before it is committed."""
        self._before_commit.append(write)

    async def requeue(self, key: str) -> None:
        """A record marked done whose result was lost (a claim cancelled when a run stopped) is fetched again."""
        r = self._load(key)
        if r is not None and r.progress == _DONE:
            self._begin()
            r.served = None
            self._unfinished += 1
            self._enqueue(r)
            self._save(r)

    def cursor(self) -> sqlite3.Cursor:
        """A cursor of the file's connection, to be reused (closed with it: a cursor left open would hold the
        file's lock past close(), until it is freed)."""
        cursor = self._db.cursor()
        self._cursors.append(cursor)
        return cursor

    def close(self) -> None:
        """Commit and close (again: nothing)."""
        if not self._closed:
            self.flush()
            for cursor in self._cursors:
                cursor.close()
            self._db.close()
            self._closed = True

    def _begin(self) -> None:
        self._announce()
        if not self._db.in_transaction:
            self._db.execute("BEGIN")
            # Committed from the event loop, between tasks' steps: a commit never splits what one step did (a
            # page's links added, its result recorded, its record done), so the file always holds whole steps.
            self._timer = asyncio.get_running_loop().call_later(self._interval, self.flush)

    # -- the rules (as in MemoryState) -----------------------------------------------------------------

    def _wanted(self, r: _Rec) -> int:
        plan = wanted(r, self._limits, self._pages)
        if plan is Plan.PAGE and r.plan != Plan.PAGE:
            self._pages += 1  # granted now
        return int(plan)

    def _insert(self, f: Found) -> _Rec | None:
        """f's record, new and queued; None if the file has one (not cached), which is left as it is."""
        r = _Rec((0, f.key, f.url, f.host, f.depth, _CHECK, None, _QUEUED, int(f.crawl), int(f.body), int(f.seed),
                  1, self._seq + 1))
        r.plan = int(wanted(r, self._limits, self._pages))
        if f.url == f.key:
            cursor = self._sql(_INSERT_SAME, (f.key, f.host, f.depth, r.plan, _QUEUED, r.crawlable, r.body, r.seed,
                                              r.seq))
        else:
            cursor = self._sql(_INSERT, (f.key, f.url, f.host, f.depth, r.plan, _QUEUED, r.crawlable, r.body, r.seed,
                                         r.seq))
        if cursor.rowcount != 1:
            return None
        r.id = cursor.lastrowid or 0
        self._seq = r.seq
        if r.plan == _PAGE:
            self._pages += 1  # granted now
        self._unfinished += 1
        self._queued_on(f.host)
        self._keep(r)
        self._listed(r)
        return r

    def _update(self, r: _Rec, f: Found, changed: list[Claim]) -> None:
        r.crawlable = r.crawlable or int(f.crawl)
        r.body = r.body or int(f.body)
        r.seed = r.seed or int(f.seed)
        if f.depth < r.depth:
            self._save(r)
            self._lower(r, f.depth, changed)
        else:
            self._raise(r, changed)
            self._save(r)

    def _raise(self, r: _Rec, changed: list[Claim]) -> None:
        wanted = self._wanted(r)
        if wanted <= r.plan:
            return
        r.plan = wanted
        changed.append(_claim_of(r))
        if r.progress == _DONE and r.served is not None and r.served < wanted:
            self.refetched += 1
            self._unfinished += 1
            self._enqueue(r)

    def _lower(self, first: _Rec, depth: int, changed: list[Claim]) -> None:
        """A shorter path to first: it and everything crawled below it move up (no refetch: the edges are kept).
        The walk holds keys and reads each record when its turn comes: one met twice is seen as the first visit
        left it."""
        work = [(first.key, depth)]
        while work:
            key, depth = work.pop()
            r = self._claimed.get(key)  # (its row doesn't say it is in flight yet)
            if r is None:
                row = self._sql(_BY_KEY, (key,)).fetchone()
                if row is None:  # (a link the state was never told of: nothing below it either)
                    continue
                r = _Rec(row)
            if depth >= r.depth:
                continue
            r.depth = depth
            if r.progress == _QUEUED:
                r.seq = self._next_seq()  # queued at its new depth, behind those already there
                self._listed(r)
            self._raise(r, changed)  # maybe within --max-depth now
            self._save(r)
            self._write_edges()
            for (children,) in self._db.execute(_CHILDREN, (r.id,)).fetchall():
                work.extend((child, depth + r.hop) for child in orjson.loads(children))

    def _write_edges(self) -> None:
        if self._edges:  # (a statement a page costs 3-4 times what a row of a hundred-row insert does)
            insert_rows(self._db, "INSERT INTO edges VALUES ", self._edges)
            self._edges.clear()

    def _enqueue(self, r: _Rec) -> None:
        """r goes back to its host's queue (from done, or from in flight)."""
        r.progress = _QUEUED
        r.seq = self._next_seq()
        self._queued_on(r.host)
        self._listed(r)

    def _queued_on(self, host: str) -> None:
        n = self._per_host.get(host, 0)
        self._per_host[host] = n + 1
        self._queued += 1
        if n == 0:
            self._on_host_ready(host)

    def _dequeued(self, host: str) -> None:
        n = self._per_host[host] - 1
        if n:
            self._per_host[host] = n
        else:
            del self._per_host[host]
            self._next.pop(host, None)  # (passed over, all of them)
            self._read_to.pop(host, None)  # (read from the start when it has some again)
        self._queued -= 1

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _load(self, key: str) -> _Rec | None:
        r = self._young.get(key)
        if r is not None:
            return r
        r = self._old.pop(key, None) or self._claimed.get(key)
        if r is None:
            row = self._sql(_BY_KEY, (key,)).fetchone()
            if row is None:
                return None
            r = _Rec(row)
        self._keep(r)
        return r

    def _save(self, r: _Rec) -> None:
        if r.served is None:
            self._sql(_SAVE_UNSERVED, (r.depth, r.plan, r.progress, r.crawlable, r.body, r.seed, r.seq, r.id))
        else:
            self._sql(_SAVE, (r.depth, r.plan, r.served, r.progress, r.crawlable, r.body, r.seed, r.seq, r.id))
        if self._claimed:
            self._claimed.pop(r.key, None)  # (its row says so now)
        self._keep(r)

    def _keep(self, r: _Rec) -> None:
        """Hold r in the cache of recently used records (written through: the file has what it has, but for
        the claims in _claimed)."""
        young = self._young
        if len(young) >= self._cache_size and r.key not in young:
            self._old, self._young = young, {}  # two generations: an LRU's effect at a dict's cost
            young = self._young
        young[r.key] = r

    def done_keys(self) -> list[str]:
        return [key for (key,) in self._db.execute("SELECT key FROM records WHERE progress = 2")]

    def _announce(self) -> None:
        if self._unannounced:
            hosts, self._unannounced = self._unannounced, []
            for host in hosts:
                self._on_host_ready(host)


def _claim_of(r: _Rec) -> Claim:
    return Claim(r.key, r.url, r.host, r.depth, Plan(r.plan), bool(r.seed))


def _url_column(f: Found) -> str | None:
    return None if f.url == f.key else f.url


def insert_rows(db: sqlite3.Connection | sqlite3.Cursor, insert: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert rows of one width: `insert` is the statement up to VALUES. A hundred rows a statement: binding
    and stepping once per row (executemany) costs about twice as much (2.5-3.1 against 1.3-1.9 us a row of
    seven columns, measured with an in-memory table)."""
    if rows:
        insert_flat(db, insert, list(itertools.chain.from_iterable(rows)), len(rows[0]))


def insert_flat(db: sqlite3.Connection | sqlite3.Cursor, insert: str, values: list[Any], width: int) -> None:
    """insert_rows() for rows given flat, one after the other in a list of values (width a row): no tuple a
    row to make, or to keep until the rows are written."""
    per = max(1, min(_ROWS, _VALUES // width))
    step = per * width
    one = f"({', '.join('?' * width)})"
    full = len(values) - len(values) % step
    if full:
        many = insert + ", ".join([one] * per)
        for start in range(0, full, step):
            db.execute(many, values[start:start + step])
    if full < len(values):
        db.executemany(insert + one, [values[i:i + width] for i in range(full, len(values), width)])


def where_ids(update: str) -> str:
    """update (an UPDATE up to its WHERE) for update_ids()."""
    return f"{update} WHERE id IN ({', '.join('?' * _IDS)})"


def update_ids(execute: Callable[[str, list[int]], object], statement: str, ids: Sequence[int]) -> None:
    """Run statement (from where_ids()) for the rows of ids, a hundred a statement: always a hundred, the last id
    repeated to fill one, so a single statement is prepared whatever the count."""
    for start in range(0, len(ids), _IDS):
        some = list(ids[start:start + _IDS])
        execute(statement, some + [some[-1]] * (_IDS - len(some)))


_ROWS = 100  # rows an insert_rows statement, at most
_IDS = 100  # ids an update_ids statement
_VALUES = 999  # values a statement may bind in every SQLite (32,766 from 3.32 on)


def _open(path: str, fresh: bool = False) -> sqlite3.Connection:
    """The state file, made if missing. One run owns it (an exclusive lock): a second run on it is refused.
    fresh (--restart): a crawl state already there, of this linkhound version or another, is emptied first."""
    try:
        db = sqlite3.connect(path, timeout=0.5, isolation_level=None)
    except sqlite3.Error as e:
        raise UsageError(f"{path}: can't open the crawl state: {e}") from None
    try:
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # a kill loses nothing committed; only a power cut might
        # pages kept in memory: the indexes by key (records, targets) are read at random places, and each page
        # not held is a read from the file. A bounded cost (32 MB), however large the crawl.
        db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        # the WAL folded into the file every 32 MB instead of every 4 MB: fewer syncs (a checkpoint syncs twice),
        # and a page rewritten between two of them is copied once (COMMIT's time on a 100k-page crawl: 3.1 s
        # against 4.4-4.9 s)
        db.execute(f"PRAGMA wal_autocheckpoint = {_CHECKPOINT_PAGES}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise UsageError(f"{path}: not a crawl state (a SQLite file of something else)")
        if fresh and version != 0:
            _empty(db)
        elif version != 0 and version != SCHEMA_VERSION:
            raise UsageError(f"{path}: a crawl state of another linkhound version; --restart starts over")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except sqlite3.OperationalError as e:
        db.close()
        if "locked" in str(e):
            raise UsageError(f"{path}: the crawl state is in use by another run") from None
        raise UsageError(f"{path}: not a crawl state ({e})") from None
    except sqlite3.DatabaseError as e:
        db.close()
        raise UsageError(f"{path}: not a crawl state ({e})") from None
    except BaseException:
        db.close()
        raise
    return db


def _empty(db: sqlite3.Connection) -> None:
    """Every table of a crawl state dropped and the file shrunk. Only a file that is a crawl state gets here:
    _open() refuses any other SQLite file first. One transaction: a run killed on the way leaves the state as
    it was (another run in it makes the transaction fail, as "database is locked", before anything goes)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        for (name,) in tables.fetchall():
            db.execute(f'DROP TABLE "{name}"')  # (its indexes go with it)
        db.execute("PRAGMA user_version = 0")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("VACUUM")
