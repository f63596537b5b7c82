"""The SQLite crawl state: the backend contract, resuming from the file, and a real crawl on it."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from linkhound import UsageError
from linkhound.api import _inputs, make_settings
from linkhound.crawl_state import CrawlState, Limits, Plan, Progress
from linkhound.engine import Engine
from linkhound.memory_state import MemoryState
from linkhound.sqlite_state import SqliteState, insert_rows, update_ids, where_ids
from linkhound.summary import Report
from server import Site, html
from state_contract import Make, StateContract, drain, found, take

Opener = Callable[..., SqliteState]
_NO_LIMITS = Limits()


@pytest.fixture
def opener(tmp_path: Path) -> Iterator[Opener]:
    """SqliteState(tmp_path/state.sqlite, ...): each one closed at the end of the test."""
    opened: list[SqliteState] = []

    def open_state(limits: Limits = _NO_LIMITS, ready: Callable[[str], None] = lambda host: None,
                   commit_interval: float = 1.0, cache_size: int | None = None) -> SqliteState:
        path = str(tmp_path / "state.sqlite")  # (the cache the state is made with unless one is asked for)
        state = SqliteState(path, limits, ready, commit_interval) if cache_size is None \
            else SqliteState(path, limits, ready, commit_interval, cache_size)
        opened.append(state)
        return state

    yield open_state
    for state in opened:
        state.close()


class TestSqliteState(StateContract):
    @pytest.fixture
    def make(self, opener: Opener) -> Make:
        return opener


class TestSqliteStateReadingBack(StateContract):
    """The contract again with a cache of one record (two generations: two held): records are read back from
    the file as steps need them."""

    @pytest.fixture
    def make(self, opener: Opener) -> Make:
        return lambda limits=_NO_LIMITS, ready=lambda host: None: opener(limits, ready, cache_size=1)


async def test_a_key_the_cache_forgot_is_found_in_the_file_not_added_again(opener: Opener) -> None:
    async def steps(state: CrawlState) -> list[object]:
        seen: list[object] = [[(c.url, c.depth, c.plan) for c in await state.add(
            [found("/a", depth=3), found("/b"), found("/c"), found("/d")])], state.unfinished]
        # (with a cache of one record, /a is no longer held: its row is found, its INSERT ignored)
        for again in ([found("/a", depth=1, crawl=True), found("/e", crawl=True)], [found("/f", crawl=True)],
                      [found("/b", crawl=True), found("/g", crawl=True)]):
            seen += [[(c.url, c.depth, c.plan) for c in await state.add(again)], state.unfinished]
        return [*seen, state.depth("http://h.test/a"), [(c.url, c.plan) for c in await drain(state)],
                state.unfinished, state.cut_by()]

    limits = Limits(max_pages=3)
    expected = await steps(MemoryState(limits))
    assert await steps(opener(limits, cache_size=1)) == expected
    assert expected[1:5] == [4, [("http://h.test/a", 1, Plan.PAGE), ("http://h.test/e", 1, Plan.PAGE)], 5,
                             [("http://h.test/f", 1, Plan.PAGE)]]  # (three pages granted: /b and /g are not)


@pytest.mark.parametrize("cache_size", [None, 1, 4])
async def test_claims_come_in_queue_order_whatever_is_in_flight_or_queued_ahead(opener: Opener,
                                                                              cache_size: int | None) -> None:
    # A claim writes nothing to its row: the queue is read on from where it was read up to, past rows of
    # records in flight, and a record queued ahead of that place is listed. The order is MemoryState's.
    async def steps(state: CrawlState) -> list[str]:
        order: list[str] = []
        await state.add([found(f"/a{i}", depth=3) for i in range(5)])
        first = [await take(state) for _ in range(5)]  # the host's queue empty, its records in flight
        await state.add([found(f"/o{i}", host="o.test") for i in range(10)])  # (a small cache forgets those 5)
        await state.add([found(f"/b{i}", depth=3) for i in range(3)])  # read from the start: past those 5
        order += [(await take(state)).url for _ in range(3)]
        await state.add([found(f"/c{i}", depth=5) for i in range(30)])
        order.append((await take(state)).url)  # (a batch read: the place read up to is within /c)
        await state.add([found(f"/d{i}", depth=1) for i in range(70)])  # ahead of it: more than a list holds
        await state.add([found("/c29", depth=2)])  # moved ahead
        for claim in first:
            await state.done(claim, claim.plan)
        order += [c.url for c in await drain(state)]
        return order

    expected = await steps(MemoryState())
    got = await steps(opener(cache_size=cache_size))
    assert got == expected
    assert len(got) == len(set(got)) == 3 + 30 + 70
    assert got[:4] == ["http://h.test/b0", "http://h.test/b1", "http://h.test/b2", "http://h.test/c0"]
    assert got[4:74] == [f"http://h.test/d{i}" for i in range(70)] and got[74] == "http://h.test/c29"


# -- resuming --------------------------------------------------------------------------------------------


async def test_reopen_queues_what_was_in_flight_again(opener: Opener) -> None:
    state = opener(Limits(max_pages=2))
    await state.add([found("/a", depth=1, crawl=True), found("/b", depth=2), found("/c", depth=3, crawl=True)])
    a = await take(state)
    b = await take(state)
    await state.done(b, Plan.CHECK)
    state.close()  # (a kill after the last commit leaves the same file)

    ready: list[str] = []
    again = opener(Limits(max_pages=2), ready.append)
    assert again.unfinished == 2 and again.queued == 2
    assert ready == ["h.test"] and again.has_work("h.test")  # told on first use
    record = again.record(a.key)
    assert record is not None and record.progress is Progress.QUEUED
    done_b = again.record(b.key)
    assert done_b is not None and done_b.progress is Progress.DONE and done_b.served is Plan.CHECK
    claims = await drain(again)
    assert [(c.url, c.plan) for c in claims] == [(a.url, Plan.PAGE), ("http://h.test/c", Plan.PAGE)]
    # the pages granted were kept: a third crawlable link is past --max-pages 2
    assert [c.plan for c in await again.add([found("/d", crawl=True)])] == [Plan.CHECK]
    assert again.cut_by() == ("max-pages 2",)


async def test_reopen_keeps_depths_edges_and_refetches(opener: Opener) -> None:
    state = opener(Limits(max_depth=3))
    await state.add([found("/p", depth=3, crawl=True)])
    page = await take(state)
    await state.add([found("/c", depth=4, crawl=True)], parent=page.key)
    await state.done(page, Plan.PAGE)
    await state.done(await take(state), Plan.CHECK)
    await state.add([found("/leaf")])
    await state.done(await take(state), Plan.CHECK)
    await state.add([found("/leaf", body=True)])  # refetched: a #fragment needs the body
    state.close()

    again = opener(Limits(max_depth=3))
    assert again.refetched == 1 and again.unfinished == 1
    raised = await again.add([found("/p", depth=1, crawl=True)])  # the edge /p -> /c survived
    assert [c.url for c in raised] == ["http://h.test/c"] and again.depth("http://h.test/c") == 2
    assert {(c.url, c.plan) for c in await drain(again)} == {("http://h.test/c", Plan.PAGE),
                                                             ("http://h.test/leaf", Plan.BODY)}
    assert again.refetched == 2 and again.unfinished == 0


def _run_and_kill(path: Path, script: str) -> None:
    """Run script (with `state` open on path) in a child that kills itself with SIGKILL at its end."""
    body = textwrap.indent(textwrap.dedent(script).strip(), "    ")
    code = "\n".join([
        "import asyncio, os, signal",
        "from linkhound.sqlite_state import SqliteState",
        "from state_contract import found, take",
        "async def main():",
        f"    state = SqliteState({str(path)!r}, commit_interval=3600)",
        body,
        "    os.kill(os.getpid(), signal.SIGKILL)",
        "asyncio.run(main())",
    ])
    tests = str(Path(__file__).parent)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tests, timeout=60, capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr


def test_a_kill_loses_only_what_was_not_committed(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    _run_and_kill(path, """
        await state.add([found("/a"), found("/b")])
        await take(state)
        state.flush()
        await state.add([found("/lost")])
        await take(state)
    """)
    state = SqliteState(str(path))
    try:
        assert state.record("http://h.test/lost") is None
        assert state.unfinished == 2 and state.queued == 2  # /a was in flight: queued again
    finally:
        state.close()


def test_an_idle_state_commits_on_its_own(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    _run_and_kill(path, """
        state._interval = 0.05
        await state.add([found("/a")])
        await asyncio.sleep(2)  # nothing else happens: the timer commits
    """)
    state = SqliteState(str(path))
    try:
        assert state.record("http://h.test/a") is not None
    finally:
        state.close()


def test_a_state_in_use_or_not_a_state_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    first = SqliteState(str(path))
    try:
        with pytest.raises(UsageError, match="in use by another run"):
            SqliteState(str(path))
    finally:
        first.close()
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(UsageError, match="not a crawl state"):
        SqliteState(str(junk))
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(UsageError, match="not a crawl state"):
        SqliteState(str(other))
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(UsageError, match="another linkhound version"):
        SqliteState(str(path))


async def test_fresh_empties_a_crawl_state_of_any_version_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    first = SqliteState(str(path))
    try:
        await first.add([found("/a"), found("/b")])
        first.flush()
        with pytest.raises(UsageError, match="in use by another run"):
            SqliteState(str(path), fresh=True)  # refused before anything is touched
    finally:
        first.close()
    kept = SqliteState(str(path))
    try:
        assert kept.record("http://h.test/a") is not None  # (read from the file: a new state caches nothing)
    finally:
        kept.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 99")  # another linkhound version's
    fresh = SqliteState(str(path), fresh=True)
    try:
        assert fresh.record("http://h.test/a") is None and fresh.record("http://h.test/b") is None
    finally:
        fresh.close()
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")
        db.commit()
    with pytest.raises(UsageError, match="not a crawl state"):
        SqliteState(str(other), fresh=True)
    with contextlib.closing(sqlite3.connect(other)) as db:
        assert db.execute("SELECT x FROM t").fetchall() == [(1,)]


# -- a real crawl ----------------------------------------------------------------------------------------


def _build(site: Site, n: int) -> None:
    """Pages with nav, cycles, a redirect, broken links, fragments, an image first seen as a leaf, depth cuts."""
    nav = ["/", "/p/0", "/about"]
    site.page("/", html("/p/0", "/img.png", "/about#team", title="home"))
    site.page("/about", html(*nav, "/missing", "/p/1#nowhere", extra='<h2 id="team">team</h2>'))
    for i in range(n):
        links = [*nav, f"/p/{i + 1}", f"/p/{i * 7 % n}", "/old", f"/missing/{i % 4}"]
        site.page(f"/p/{i}", html(*links, extra=f'<a href="/leaf/{i}" rel="nofollow">x</a>'))
    site.redirect("/old", "/via-redirect")  # (to a page found no other way: a redirect to a known page that
    site.page("/via-redirect", html("/", "/missing/via"))  # is reached deeper too leaves its depth to chance)
    site.page("/img.png", "PNG", content_type="image/png")
    site.page("/leaf/5", html("/late"))


def _shape(report: Report) -> tuple[object, ...]:
    results = sorted((r.url, r.status, r.code, r.reason, r.depth, tuple(sorted(r.references))) for r in report.results)
    pages = sorted((p.url, p.depth, p.links, p.followed) for p in report.pages)
    s = report.summary
    return results, pages, (s.total, s.ok, s.broken, s.caps, s.warnings)


async def test_a_crawl_on_sqlite_reports_what_the_memory_backend_does(site: Site, tmp_path: Path) -> None:
    _build(site, 40)
    settings = make_settings(recursive=True, max_depth=6, max_retries=0)
    memory = await Engine(settings, state=MemoryState).run(_inputs([site.url("/")], None, settings))
    counts = site.counts()
    site.requests.clear()
    opened: list[SqliteState] = []

    def on_sqlite(limits: Limits, ready: Callable[[str], None]) -> SqliteState:
        opened.append(SqliteState(str(tmp_path / "crawl.sqlite"), limits, ready))
        return opened[-1]

    report = await Engine(settings, state=on_sqlite).run(_inputs([site.url("/")], None, settings))
    opened[0].close()
    assert _shape(report) == _shape(memory)
    assert site.counts() == counts
    assert "max-depth 6" in report.summary.caps and report.summary.broken > 0


@pytest.mark.parametrize("count", [0, 1, 99, 100, 250])
def test_insert_rows_writes_every_row_in_order(count: int) -> None:
    """Many rows a statement (and the rest one at a time): the table holds each row once, in the given order,
    NULLs, texts and integers kept; a row wider than one statement's share of values still goes in."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, c)")
    rows = [(i, None if i % 3 else f"x{i}", i * 7 if i % 2 else "t") for i in range(count)]
    insert_rows(db, "INSERT INTO t (a, b, c) VALUES ", rows)
    assert db.execute("SELECT a, b, c FROM t ORDER BY id").fetchall() == rows
    wide = [tuple(range(k, k + 600)) for k in range(3)]  # 600 values a row: one row a statement
    db.execute(f"CREATE TABLE w ({', '.join(f'c{i}' for i in range(600))})")
    insert_rows(db, "INSERT INTO w VALUES ", wide)
    assert db.execute("SELECT * FROM w ORDER BY rowid").fetchall() == wide


@pytest.mark.parametrize("count", [0, 1, 99, 100, 101, 250])
def test_update_ids_changes_exactly_the_rows_of_the_ids(count: int) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, flag INTEGER NOT NULL DEFAULT 0)")
    db.executemany("INSERT INTO t (id) VALUES (?)", [(i,) for i in range(1, 601)])
    ids = list(range(3, 3 + 2 * count, 2))  # every other row from 3
    statements: list[str] = []

    def execute(sql: str, values: list[int]) -> object:
        statements.append(sql)
        return db.execute(sql, values)

    update_ids(execute, where_ids("UPDATE t SET flag = 1"), ids)
    assert [i for (i,) in db.execute("SELECT id FROM t WHERE flag = 1 ORDER BY id")] == ids
    assert len(statements) == -(-count // 100) and len(set(statements)) <= 1  # one statement text, however many


async def test_references_come_back_from_the_state_file_as_they_were_recorded(tmp_path: Path) -> None:
    """A reference is a few packed columns of the file (place in one integer, fragment and text in one blob):
    every kind comes back whole, in order, with fragments counted apart: a text that ends the target's key or
    not, a #fragment with a colon and a non-ASCII letter in it, an empty text, a line or column too large to pack,
    a reference in the first session's file read again by the next."""
    from linkhound.persistent_ledger import open_crawl
    from linkhound.status import Status
    from linkhound.types import Reference, Result

    key = "http://127.0.0.1:8/docs/page"
    refs = [
        (Reference("http://127.0.0.1:8/", 3, 10, "a", "href", "/docs/page"), None),
        (Reference("http://127.0.0.1:8/", 3, 40, "a", "href", "page"), None),
        (Reference("http://127.0.0.1:8/x", 1, 1, "img", "src", "other text"), None),
        (Reference("http://127.0.0.1:8/x", 2, 5, "a", "href", "/docs/page#a:bé"), "a:bé"),
        (Reference("http://127.0.0.1:8/y", 0, 0, "input", "", ""), None),
        (Reference("http://127.0.0.1:8/y", 1 << 30, (1 << 40) + 7, "link", "href", "p#x"), "x"),
        (Reference("http://127.0.0.1:8/z", 9, 9, "a", "href", "/docs/page#a:bé"), "a:bé"),
    ]

    def record(directory: Path) -> None:
        state, ledger = open_crawl(str(directory), Limits(), lambda host: None, None)
        try:
            for ref, fragment in refs:
                ledger.refer(key, key, ref, fragment)
            ledger.checked(key, Result(key, Status.OK, 200, "OK"))
        finally:
            ledger.close()

    record(tmp_path / "state")
    state, ledger = open_crawl(str(tmp_path / "state"), Limits(), lambda host: None, None)
    try:
        assert ledger.references_of(key) == [ref for ref, _ in refs]
        (target,) = [row[0] for row in ledger._db.execute("SELECT id FROM targets")]
        assert ledger._count_refs(target, ["a:bé", "x", "y"]) == {"a:bé": 2, "x": 1}
        assert [f for f, _ in ledger._read_refs(target)] == [f for _, f in refs]
    finally:
        ledger.close()
