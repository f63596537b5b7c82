"""The references of a crawl kept on disk (--state): rows of the crawl state's SQLite file, written in its
transactions, so memory holds only their ids. Reports read them back a few hundred at a time."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from urllib.request import pathname2url

from .references import RefStore
from .types import Reference

SCHEMA = """
CREATE TABLE IF NOT EXISTS refs (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, line INTEGER NOT NULL, col INTEGER NOT NULL,
    element TEXT NOT NULL, attribute TEXT NOT NULL, text TEXT NOT NULL
);
"""
_INSERT = "INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?, ?)"
_SELECT = "SELECT id, source, line, col, element, attribute, text FROM refs WHERE id IN ({})"
_Row = tuple[int, str, int, int, str, str, str]


class StoredRefs(RefStore):
    """A RefStore whose references are rows of db's refs table. Those added since the last write() wait in
    memory; write() must be called inside the transaction that commits the ids' other uses (the journal)."""

    __slots__ = ("_db", "_path", "_next", "_pending", "_first")

    def __init__(self, db: sqlite3.Connection, path: str) -> None:
        super().__init__()
        self._db = db
        self._path = path
        db.executescript(SCHEMA)
        self._next = int(db.execute("SELECT coalesce(max(id), -1) FROM refs").fetchone()[0]) + 1
        self._pending: list[_Row] = []
        self._first = self._next  # the id of _pending[0]

    def __len__(self) -> int:
        return self._next

    def add(self, source: str, line: int, column: int, element: str, attribute: str, text: str, base: str = "") -> int:
        # (rows keep the text whole: no base needed to read it back)
        n = self._next
        self._next += 1
        self._pending.append((n, source, line, column, element, attribute, text))
        return n

    def write(self) -> None:
        if self._pending:
            self._db.executemany(_INSERT, self._pending)
            self._pending = []
            self._first = self._next

    def get(self, i: int, base: str = "") -> Reference:
        return self.many((i,))[0]

    def many(self, ref_ids: Sequence[int], base: str = "") -> list[Reference]:
        found: dict[int, Reference] = {}
        stored = [i for i in ref_ids if i < self._first]
        for start in range(0, len(stored), 500):
            part = stored[start : start + 500]
            query = _SELECT.format(",".join("?" * len(part)))
            for i, source, line, col, element, attribute, text in self._read(query, part):
                found[i] = Reference(source, line, col, element, attribute, text)
        pending, first = self._pending, self._first
        return [found[i] if i < first else Reference(*pending[i - first][1:]) for i in ref_ids]

    def _read(self, query: str, args: list[int]) -> list[_Row]:
        """Rows of query. The crawl's connection is closed when its run ends, before the report is written:
        the report's reads then go through a connection of their own that takes no lock (immutable: the file
        was checkpointed when the crawl's connection closed, and rows of refs are never changed, only added),
        so the next run on the same directory can open it."""
        try:
            return self._db.execute(query, args).fetchall()
        except sqlite3.ProgrammingError:  # closed
            uri = f"file:{pathname2url(os.path.abspath(self._path))}?mode=ro&immutable=1"
            self._db = sqlite3.connect(uri, uri=True)
            return self._db.execute(query, args).fetchall()
