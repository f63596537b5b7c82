"""Results that outlive a run: what each URL answered, in a SQLite file several runs may share, reused while
fresh and revalidated with its ETag or Last-Modified once not."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import orjson

from .crawl_state import Plan
from .fragments import Anchors
from .parsed_page import PARSABLE
from .settings import Settings
from .status import Status
from .transport import Headers
from .types import Result
from .version import __version__

_SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE results (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    code INTEGER,
    reason TEXT NOT NULL,
    checked_at REAL NOT NULL,
    etag TEXT,
    last_modified TEXT,
    content_type TEXT NOT NULL,
    redirects TEXT,
    anchors TEXT,
    anchors_ci INTEGER NOT NULL
) WITHOUT ROWID
"""
_PUT = "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_GET = ("SELECT status, code, reason, checked_at, etag, last_modified, content_type, redirects, anchors, anchors_ci"
        " FROM results WHERE key = ?")
# Outcomes that say nothing about the URL itself: decided by this run's filters, not by the server.
_NOT_KEPT = frozenset({Status.EXCLUDED, Status.UNSUPPORTED, Status.SKIPPED})
_BATCH = 500  # entries written in one transaction at most
_BATCH_AGE = 1.0  # seconds an entry may wait to be written
_BUSY_TIMEOUT = 60.0  # seconds a writer waits for another process's transaction (each lasts milliseconds)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    max_age: float  # seconds a result is reused without asking
    errors: bool = False  # failures are reused too
    exclude: frozenset[int] = frozenset()  # results with these codes are never reused

    @classmethod
    def from_settings(cls, s: Settings) -> CachePolicy:
        return cls(s.cache_age, s.cache_errors and not s.rerun_failed, s.cache_exclude_status)


class Entry(NamedTuple):
    """One URL's cached answer."""

    status: Status
    code: int | None
    reason: str
    checked_at: float  # time.time() of the request
    etag: str | None
    last_modified: str | None
    content_type: str
    redirects: tuple[str, ...]
    anchors: Anchors | None  # known when the body was read (a crawled page, a target of #fragments)
    redirect_codes: tuple[int, ...] = ()

    def serves(self) -> Plan:
        """The plans this answer satisfies, as the fetch that made it did: a failure or an answer with no
        anchors to look for (not HTML) every plan; an HTML answer BODY when its anchors are kept, else CHECK.
        A page to crawl needs its body, so an HTML page is never served from the cache."""
        if self.status is not Status.OK or self.content_type not in PARSABLE:
            return Plan.PAGE
        return Plan.BODY if self.anchors is not None else Plan.CHECK

    def result(self, url: str, depth: int, cached: bool) -> Result:
        return Result(url, self.status, self.code, self.reason, self.redirects, 0.0, depth, self.content_type,
                      cached=cached, redirect_codes=self.redirect_codes)

    def validators(self) -> dict[str, str]:
        """The headers of a conditional request: a 304 answer means this entry still holds."""
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


class ResultCache:
    """The cache file of a run. Reads go straight to the file; writes are gathered and written in one short
    transaction at a time (WAL: readers never wait, and another run's writer waits its turn). A file that can't
    be used (damaged, or written by another linkhound version) is moved aside, and the run starts a new one; a
    failure during the run ends the cache's part in it, never the run. Each is said in `warnings`, which the
    engine puts in the run's report (printed here, it would never reach a library's caller nor a report file)."""

    def __init__(self, path: str, policy: CachePolicy, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.policy = policy
        self._clock = clock
        self._pending: list[tuple[object, ...]] = []
        self._oldest = 0.0
        self._db: sqlite3.Connection | None = None
        self.warnings: list[str] = []  # what went wrong with the file, for the run's report
        try:
            self._db = _open(path)
        except _Unusable as e:
            self.warnings.append(f"{path}: {e}: moved aside to {_move_aside(path)}; starting a new cache")
            self._db = self._try_open()
        except (OSError, sqlite3.Error) as e:
            self.warnings.append(f"{path}: can't use the cache ({e}); going on without it")

    # -- reading ---------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(_GET, (key,)).fetchone()
        except sqlite3.Error as e:
            self._fail(e)
            return None
        if row is None:
            return None
        status, code, reason, at, etag, modified, ctype, redirects, anchors, ci = row
        try:
            names = None if anchors is None else Anchors(frozenset(orjson.loads(anchors)), bool(ci))
            chain, codes = _chain(redirects)
            return Entry(Status(status), code, reason, at, etag, modified, ctype, chain, names, codes)
        except (ValueError, TypeError, IndexError) as e:  # a row that can't be read back: the file is damaged
            self._fail(sqlite3.DatabaseError(f"a row of {key[:80]} can't be read: {e}"))
            return None

    def usable(self, entry: Entry, plan: Plan) -> bool:
        """Whether entry may stand for a fetch of plan (fresh or not): its status may be reused and its answer
        satisfies the plan."""
        p = self.policy
        if entry.code is not None and entry.code in p.exclude:
            return False
        if entry.status is not Status.OK and not p.errors:
            return False
        return plan <= entry.serves()

    def fresh(self, entry: Entry) -> bool:
        return self._clock() - entry.checked_at <= self.policy.max_age

    # -- writing ---------------------------------------------------------------------------------------

    def put(self, key: str, result: Result, headers: Headers | None, anchors: Anchors | None,
            checked_at: float | None = None) -> None:
        """Keep the answer for key: its result, its validators, and the anchors when the body was read."""
        if self._db is None or result.status in _NOT_KEPT or result.cached:
            return
        h = headers or {}
        names = None if anchors is None else orjson.dumps(sorted(anchors.names)).decode()
        chain = _chain_text(result) if result.redirects else None
        at = self._clock() if checked_at is None else checked_at
        ci = int(anchors is not None and anchors.case_insensitive)
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append((key, result.url, result.status.value, result.code, result.reason, at, h.get("ETag"),
                              h.get("Last-Modified"), result.content_type, chain, names, ci))
        if len(self._pending) >= _BATCH or time.monotonic() - self._oldest >= _BATCH_AGE:
            self.flush()

    def renew(self, key: str, url: str, entry: Entry, headers: Headers | None) -> None:
        """A 304: entry holds for another max age (with the validators the answer sent, if it sent new ones)."""
        h = headers or {}
        etag = h.get("ETag") or entry.etag
        modified = h.get("Last-Modified") or entry.last_modified
        self.put(key, entry.result(url, 0, False), {"ETag": etag, "Last-Modified": modified}, entry.anchors)

    def flush(self) -> None:
        if self._db is None or not self._pending:
            return
        batch, self._pending = self._pending, []
        try:
            # IMMEDIATE: take the write lock now, waiting for another run's turn, rather than fail halfway
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(_PUT, batch)
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            self._fail(e)

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None

    def _fail(self, e: sqlite3.Error) -> None:
        """The cache's part in the run ends here. A damaged file (not one locked too long) is moved aside, as at
        the start of a run, so the next run starts a new cache rather than fail on it again."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        aside = None
        if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.OperationalError):  # damaged
            with contextlib.suppress(OSError):
                aside = _move_aside(self.path)
        moved = f": moved aside to {aside}" if aside else ""
        self.warnings.append(f"{self.path}: the cache failed ({e}){moved}; going on without it")

    def _try_open(self) -> sqlite3.Connection | None:
        try:
            return _open(self.path)
        except (_Unusable, OSError, sqlite3.Error) as e:
            self.warnings.append(f"{self.path}: can't make a new cache ({e}); going on without it")
            return None


class _Unusable(Exception):
    """A cache file from another linkhound version, or not a cache at all."""


def _open(path: str) -> sqlite3.Connection:
    """Open the cache, waiting for another run that holds the file. SQLite's busy timeout covers most of that
    wait, but not all: a run that finds a new file still in the rollback journal, while the other run is
    making it, is told "database is locked" at once (switching to WAL would need a lock the other run waits
    for too), so the whole opening is tried again until the timeout."""
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    deadline = time.monotonic() + _BUSY_TIMEOUT
    pause = 0.005
    while True:
        try:
            return _open_once(path)
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _open_once(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None)
    try:
        if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
            raise _Unusable("can't be shared (no WAL journal)")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("BEGIN IMMEDIATE")  # one run makes the tables; another that opens at the same time waits
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            for statement in _SCHEMA.split(";"):
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('version', ?)", (__version__,))
            db.execute("COMMIT")
        else:
            db.execute("COMMIT")
            if not {"meta", "results"} <= tables:
                raise _Unusable("not a linkhound cache")
            row = db.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
            if row is None or row[0] != __version__:
                raise _Unusable(f"a cache of linkhound {row[0] if row else '(unknown)'}, not {__version__}")
            db.execute(_GET, ("",)).fetchone()  # the columns are the ones we read
    except sqlite3.DatabaseError as e:
        db.close()
        if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
            raise
        raise _Unusable(f"damaged ({e})") from None
    except BaseException:
        db.close()
        raise
    return db


def _move_aside(path: str) -> str:
    aside = f"{path}.bad"
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path + suffix, aside + suffix)
    os.replace(path, aside)
    return aside


def _chain_text(result: Result) -> str:
    """The redirects column: [url, status] per hop (a bare url when the status isn't known)."""
    codes = result.redirect_codes
    hops = [[u, c] for u, c in zip(result.redirects, codes, strict=True)] if len(codes) == len(result.redirects) \
        else list(result.redirects)
    return orjson.dumps(hops).decode()


def _chain(text: str | None) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The redirects and their codes from the redirects column (bare urls, as earlier versions wrote: no codes)."""
    hops = orjson.loads(text) if text else []
    if not all(isinstance(h, list) for h in hops):
        return tuple(h if isinstance(h, str) else h[0] for h in hops), ()
    return tuple(h[0] for h in hops), tuple(h[1] for h in hops)
