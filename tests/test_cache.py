"""The results cache (--cache): reuse while fresh, revalidation, fragments, failures, damage, two runs at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import linkhound
from cli_run import arun
from linkhound import OptionError, Report, Result, Status
from linkhound.cache import CachePolicy, ResultCache
from linkhound.settings import parse_age
from server import Site, html
from test_cli import ENV


def by_url(report: Report) -> dict[str, Result]:
    return {r.url: r for r in report.results}


async def check(site: Site, cache: Path, *inputs: str, **options: Any) -> Report:
    urls = [site.url(i) for i in inputs] or [site.url("/")]
    return await linkhound.check(urls, cache=True, cache_file=str(cache), max_retries=0, **options)


def versioned(
    site: Site, path: str, body: str, etag: str | None = '"v1"', modified: str | None = None
) -> list[int]:
    """A page that answers its validators, and 304 to a request that sends them back. Returns the list of the
    codes it answers."""
    answered: list[int] = []

    async def h(request: web.Request) -> web.StreamResponse:
        headers = {}
        if etag:
            headers["ETag"] = etag
        if modified:
            headers["Last-Modified"] = modified
        if etag and request.headers.get("If-None-Match") == etag or (
            modified and request.headers.get("If-Modified-Since") == modified
        ):
            answered.append(304)
            return web.Response(status=304, headers=headers)
        answered.append(200)
        return web.Response(text=body, content_type="text/html", headers=headers)

    site.handler(path, h)
    return answered


def test_max_cache_age_reads_units() -> None:
    assert [parse_age(t) for t in ("90s", "30m", "12h", "1d", "2w", "45")] == [90, 1800, 43200, 86400, 1209600, 45]
    with pytest.raises(OptionError, match="--max-cache-age: 'soon' is not a duration"):
        linkhound.make_settings(max_cache_age="soon")
    assert linkhound.make_settings(cache_exclude_status="429,500..=599").cache_exclude_status >= {429, 500, 599}


async def test_fresh_results_are_reused_without_a_request_and_failures_are_not(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "c" / "cache.sqlite"
    site.page("/", html("/ok", "/missing", "/img.png"))
    site.page("/ok", "fine")
    site.page("/img.png", "PNG", content_type="image/png")
    first = await check(site, cache, "/")
    assert not any(r.cached for r in first.results) and cache.exists()
    site.requests.clear()

    second = by_url(await check(site, cache, "/"))
    assert second[site.url("/ok")].cached and second[site.url("/ok")].status is Status.OK
    assert second[site.url("/img.png")].cached and second[site.url("/img.png")].content_type == "image/png"
    assert not second[site.url("/missing")].cached and second[site.url("/missing")].status is Status.BROKEN
    assert site.hits("/ok") == 0 and site.hits("/img.png") == 0 and site.hits("/missing") == 1
    assert site.hits("/") == 1  # an input page is read for its links: never served from the cache

    site.requests.clear()
    third = by_url(await check(site, cache, "/", cache_errors=True))
    assert third[site.url("/missing")].cached and third[site.url("/missing")].status is Status.BROKEN
    assert site.hits("/missing") == 0

    site.requests.clear()
    fourth = by_url(await check(site, cache, "/", cache_errors=True, cache_exclude_status="404"))
    assert not fourth[site.url("/missing")].cached and site.hits("/missing") == 1


async def test_a_redirect_to_a_url_linked_on_its_own_is_cached_with_its_ends_result(site: Site,
                                                                                     tmp_path: Path) -> None:
    # /old's result is /new's, passed on when /new has one (no second request for /new): cached once it is
    cache = tmp_path / "cache.sqlite"
    site.page("/", html("/new", "/old", "/old-gone"))
    site.redirect("/old", "/new")
    site.redirect("/old-gone", "/gone")
    site.page("/new", "fine")
    site.page("/gone", "no", status=404)
    first = by_url(await check(site, cache, "/", cache_errors=True))
    assert site.hits("/old") == 1 and site.hits("/new") == 1
    site.requests.clear()

    again = by_url(await check(site, cache, "/", cache_errors=True))
    assert site.asked() == ["/"]  # every link from the cache, the redirects too
    for path in ("/old", "/old-gone"):
        r, before = again[site.url(path)], first[site.url(path)]
        assert r.cached and (r.status, r.code, r.redirects) == (before.status, before.code, before.redirects)
    assert again[site.url("/old-gone")].status is Status.BROKEN


async def test_an_expired_entry_is_revalidated_and_a_304_renews_it(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    etag = versioned(site, "/etag", "e")
    dated = versioned(site, "/dated", "d", etag=None, modified="Wed, 21 Oct 2015 07:28:00 GMT")
    site.page("/plain", "p")
    site.page("/", html("/etag", "/dated", "/plain"))
    await check(site, cache, "/")
    site.requests.clear()

    report = by_url(await check(site, cache, "/", max_cache_age="0s"))  # everything has expired
    sent = {r.path: r.headers for r in site.requests}
    assert sent["/etag"].get("If-None-Match") == '"v1"'
    assert sent["/dated"].get("If-Modified-Since") == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert "If-None-Match" not in sent["/plain"] and "If-Modified-Since" not in sent["/plain"]
    assert etag == [200, 304] and dated == [200, 304]
    for path in ("/etag", "/dated", "/plain"):
        result = report[site.url(path)]
        assert result.status is Status.OK and result.code == 200 and not result.cached, path

    # the 304 renewed the entries: fresh again for a day
    site.requests.clear()
    again = by_url(await check(site, cache, "/"))
    assert again[site.url("/etag")].cached and site.hits("/etag") == 0


async def test_fragments_are_checked_against_cached_anchors(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    answered = versioned(site, "/doc", html(extra='<h2 id="here">here</h2>'))
    site.page("/", html("/doc#here", "/doc#gone"))
    first = by_url(await check(site, cache, "/", check_fragments=True))
    assert first[site.url("/doc#gone")].status is Status.BROKEN
    site.requests.clear()

    second = by_url(await check(site, cache, "/", check_fragments=True))
    assert site.hits("/doc") == 0
    assert second[site.url("/doc")].cached and second[site.url("/doc#gone")].status is Status.BROKEN
    assert second[site.url("/doc#gone")].cached

    site.requests.clear()
    third = by_url(await check(site, cache, "/", check_fragments=True, max_cache_age="0s"))
    assert site.hits("/doc", "GET") == 1 and site.requests[-1].headers.get("If-None-Match") == '"v1"'
    assert answered == [200, 304]
    assert third[site.url("/doc#gone")].status is Status.BROKEN  # the 304 kept the cached anchors
    assert site.url("/doc#here") not in third


async def test_a_status_only_entry_does_not_answer_for_anchors(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    site.page("/doc", html(extra='<p id="x">x</p>'))
    site.page("/", html("/doc"))
    site.page("/frag", html("/doc#y"))
    await check(site, cache, "/", check_fragments=True)
    assert site.hits("/doc", "HEAD") == 1
    site.requests.clear()
    report = by_url(await check(site, cache, "/frag", check_fragments=True))
    assert site.hits("/doc", "GET") == 1  # HEAD told nothing of its anchors
    assert report[site.url("/doc#y")].status is Status.BROKEN and not report[site.url("/doc#y")].cached


async def test_a_crawled_page_is_fetched_again_but_its_leaves_are_not(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    site.page("/", html("/a", "/leaf.png"))
    site.page("/a", html("/", "/b"))
    site.page("/b", "b")
    site.page("/leaf.png", "PNG", content_type="image/png")
    await check(site, cache, "/", recursive=True)
    site.requests.clear()
    report = await check(site, cache, "/", recursive=True)
    assert site.hits("/a") == 1 and site.hits("/leaf.png") == 0  # /a holds links: read again
    assert {p.url for p in report.pages} == {site.url("/"), site.url("/a"), site.url("/b")}


async def test_a_damaged_cache_is_moved_aside_with_a_warning(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database" * 200)
    site.page("/", html("/ok"))
    site.page("/ok", "fine")
    report = await check(site, cache, "/")
    assert report.summary.success
    (warning,) = report.summary.warnings  # in the report (so in every format), not on the library's stderr
    assert "damaged" in warning and "moved aside" in warning
    assert capsys.readouterr().err == ""
    assert (tmp_path / "cache.sqlite.bad").read_bytes().startswith(b"this is not")
    site.requests.clear()
    assert by_url(await check(site, cache, "/"))[site.url("/ok")].cached  # the new cache works


async def test_the_command_shows_a_cache_warning_once_with_its_report(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    site.page("/", html("/ok"))
    site.page("/ok", "fine")
    common = ["--no-progress", "--no-config", "--cache", "--cache-file", str(cache), site.url("/")]
    cache.write_bytes(b"this is not a database" * 200)
    code, out, err = await arun(*common)
    assert code == 0 and err == "", err
    assert [line for line in out.splitlines() if "moved aside" in line] == [
        f"warning: {cache}: damaged (file is not a database): moved aside to {cache}.bad; starting a new cache"]
    cache.write_bytes(b"this is not a database" * 200)
    written = tmp_path / "report.json"
    code, out, err = await arun(*common, "-f", "json", "-o", str(written))
    assert code == 0 and out == ""
    (warning,) = json.loads(written.read_text())["summary"]["warnings"]
    assert "moved aside" in warning
    assert err.splitlines()[:-1] == [f"linkhound: warning: {warning}"]  # the report went to a file: said here


async def _cached_then_changed(site: Site, cache: Path, sql: str) -> None:
    """A run of / (linking /ok) that fills the cache, then one row of it changed by sql."""
    site.page("/", html("/ok"))
    site.page("/ok", "fine")
    await check(site, cache, "/")
    with contextlib.closing(sqlite3.connect(cache)) as db:
        assert db.execute(sql).rowcount == 1
        db.commit()


async def test_damage_found_during_a_run_moves_the_cache_aside_for_the_next(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.sqlite"
    await _cached_then_changed(site, cache, "UPDATE results SET status = 'bogus' WHERE url LIKE '%/ok'")  # unreadable
    capsys.readouterr()
    report = await check(site, cache, "/")
    assert report.summary.success  # the run goes on without the cache: the links are asked
    (warning,) = report.summary.warnings
    assert "the cache failed" in warning and "moved aside" in warning and (tmp_path / "cache.sqlite.bad").exists()
    assert capsys.readouterr().err == ""
    for _ in range(2):
        assert (await check(site, cache, "/")).summary.warnings == ()  # a new cache: made by this run, no warning


async def test_a_cache_of_another_version_is_moved_aside(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.sqlite"
    await _cached_then_changed(site, cache, "UPDATE meta SET value = '0.0.1' WHERE name = 'version'")
    site.requests.clear()
    run = await check(site, cache, "/")
    report = by_url(run)
    assert not report[site.url("/ok")].cached and site.hits("/ok") == 1
    (warning,) = run.summary.warnings
    assert "a cache of linkhound 0.0.1" in warning and capsys.readouterr().err == ""
    assert (tmp_path / "cache.sqlite.bad").exists()


async def test_two_runs_share_one_cache_file_at_once(site: Site, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    site.prefixes["/p"] = lambda request: _ok()
    lists = []
    for n in range(2):
        listing = tmp_path / f"urls{n}.txt"
        # overlapping halves: both runs write many of the same keys
        listing.write_text("\n".join(site.url(f"/p{i}") for i in range(n * 1000, n * 1000 + 2000)) + "\n")
        lists.append(listing)

    async def run(listing: Path) -> tuple[int | None, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "linkhound", "--no-progress", "--cache", "--cache-file", str(cache),
            "--max-retries", "0", "-q", "-f", "json", "-o", str(listing) + ".json", str(listing),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        return proc.returncode, err.decode()

    outcomes = await asyncio.gather(run(lists[0]), run(lists[1]))
    assert outcomes == [(0, ""), (0, "")]
    with contextlib.closing(sqlite3.connect(cache)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM results").fetchone() == (3000,)


def test_a_run_waits_for_another_that_is_making_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The other run holds a new file's write lock while it is still in the rollback journal: SQLite answers
    "database is locked" at once there (no busy wait), so the cache must wait and try again, not give up."""
    path = tmp_path / "cache.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE making (x)")
    released = threading.Event()

    def release() -> None:
        other.execute("ROLLBACK")
        other.close()
        released.set()

    timer = threading.Timer(0.3, release)
    timer.start()
    try:
        cache = ResultCache(str(path), CachePolicy(max_age=60))
    finally:
        timer.join()
    assert released.is_set()
    assert capsys.readouterr().err == ""
    cache.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert {name for (name,) in db.execute("SELECT name FROM sqlite_master")} >= {"meta", "results"}


async def _ok() -> web.StreamResponse:
    return web.Response(text="ok")
