"""--rerun-failed: with --state, only what failed last time is requested again, and the report is the whole site
with fresh verdicts; with --cache, failures are never reused."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import linkhound
from cli_run import arun
from linkhound import Report, Result
from server import Site, html, until


def broken_site(site: Site, other: Site) -> None:
    """A small site with one failure of each kind: a page that errors (its links unseen), a missing leaf, a
    missing #fragment, a leaf that times out... as a 503, a redirect to a missing page, another host's 404."""
    site.page("/", html("/a", "/b#x", "/down", "/gone.png", "/old", other.url("/ext"), "/c"))
    site.page("/a", html("/", "/b", "/c"))
    site.page("/b", html("/a", extra='<p id="y"></p>'))
    site.page("/c", html("/a", extra='<p id="z"></p>'))
    site.status("/down", 500)  # a page whose links were never seen
    site.status("/gone.png", 404)
    site.redirect("/old", "/moved")
    site.status("/moved", 404)
    other.status("/ext", 404)


def fix(site: Site, other: Site) -> None:
    site.page("/b", html("/a", extra='<p id="x"></p><p id="y"></p>'))
    site.page("/down", html("/", "/new", "/c#z", "/new.png"))  # up again: crawled, its new links checked
    site.page("/new", html("/newer", extra='<p id="z"></p>'))
    site.page("/newer", html("/"))
    site.page("/new.png", "PNG", content_type="image/png")
    site.page("/gone.png", "PNG", content_type="image/png")
    site.page("/moved", html("/"))
    other.page("/ext", "x")


def results(report: Report) -> list[tuple[Any, ...]]:
    return sorted((r.url, r.status, r.code, r.depth, r.reason, tuple(sorted(r.references)), r.redirects)
                  for r in report.results)


def pages(report: Report) -> list[tuple[Any, ...]]:
    return sorted((p.url, p.depth, p.links, p.followed) for p in report.pages)


def seen(*sites: Site) -> Counter[tuple[str, str]]:
    """Requests per (host, path), robots.txt aside."""
    return Counter((s.url("/"), r.path) for s in sites for r in s.requests if r.path != "/robots.txt")


async def test_only_failures_are_requested_again_and_the_report_is_a_fresh_crawls(
    site: Site, make_site: Any, tmp_path: Path
) -> None:
    other = await make_site("127.0.0.2")
    broken_site(site, other)
    options: dict[str, Any] = {"recursive": True, "check_fragments": True, "max_retries": 0}
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], state=state, **options)
    assert {r.url.replace(site.url(""), "") for r in first.results if r.status.is_broken} >= {
        "/down", "/gone.png", "/old", "/b#x"}
    fix(site, other)
    site.requests.clear()
    other.requests.clear()

    again = await linkhound.check([site.url("/")], state=state, rerun_failed=True, **options)
    asked = seen(site, other)
    fresh_site, fresh_other = site.url("/"), other.url("/")
    # the failures once each (/b again for its #x; /old's redirect leads to /moved, asked once), then what
    # /down's links found: nothing that passed last time
    assert set(asked) == {
        (fresh_site, p) for p in ("/down", "/gone.png", "/old", "/moved", "/b", "/new", "/newer", "/new.png")
    } | {(fresh_other, "/ext")}
    assert all(n == 1 for n in asked.values()), asked
    assert again.summary.success

    site.requests.clear()
    fresh = await linkhound.check([site.url("/")], **options)
    assert results(again) == results(fresh)
    assert pages(again) == pages(fresh)
    assert len(site.requests) > len(asked)  # (the fresh crawl asked for everything)


async def test_nothing_failed_nothing_is_requested(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a"))
    site.page("/a", html("/"))
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], recursive=True, state=state)
    site.requests.clear()
    again = await linkhound.check([site.url("/")], recursive=True, state=state, rerun_failed=True)
    assert site.requests == []
    assert results(again) == results(first)


async def test_a_rerun_still_failing_keeps_failing_and_a_later_rerun_asks_again(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a", "/gone"))
    site.page("/a", html("/"))
    state = str(tmp_path / "state")
    options: dict[str, Any] = {"recursive": True, "state": state, "max_retries": 0}
    await linkhound.check([site.url("/")], **options)
    site.requests.clear()
    second = await linkhound.check([site.url("/")], rerun_failed=True, **options)
    assert site.asked() == ["/gone"]
    assert [r.url for r in second.results if r.status.is_broken] == [site.url("/gone")]
    site.page("/gone", "back")
    site.requests.clear()
    third = await linkhound.check([site.url("/")], rerun_failed=True, **options)
    assert site.asked() == ["/gone"]
    assert third.summary.success and len(third.results) == 3
    site.requests.clear()
    fourth = await linkhound.check([site.url("/")], **options)  # no flag: the last verdicts, no request
    assert site.requests == [] and results(fourth) == results(third)


async def test_a_stopped_rerun_is_finished_by_the_next_session(site: Site, tmp_path: Path) -> None:
    site.page("/", html(*(f"/p{i}" for i in range(10))))
    for i in range(10):
        site.status(f"/p{i}", 500)
    state = str(tmp_path / "state")
    options: dict[str, Any] = {"recursive": True, "state": state, "max_retries": 0}
    await linkhound.check([site.url("/")], **options)
    for i in range(10):
        site.slow(f"/p{i}", 0.01 if i < 5 else 30.0)  # the slow ones are in flight when the run stops
    site.requests.clear()
    checked: set[str] = set()  # (the quick ones' results, each with its record done in the same step)
    run = linkhound.start([site.url("/")], rerun_failed=True, max_concurrency=20, host_concurrency=20,
                          on_event=lambda e: checked.add(e.url) if isinstance(e, Result) else None, **options)
    task = asyncio.ensure_future(run.report())
    quick = {site.url(f"/p{i}") for i in range(5)}
    await until(lambda: len([p for p in site.asked() if p.startswith("/p")]) >= 10 and quick <= checked)
    run.stop()
    run.cancel()
    stopped = await task
    assert stopped.summary.interrupted
    for i in range(5, 10):
        site.page(f"/p{i}", "now fast")
    site.requests.clear()
    resumed = await linkhound.check([site.url("/")], **options)  # no flag: what the stopped rerun left undone
    assert sorted(site.asked()) == [f"/p{i}" for i in range(5, 10)]
    assert resumed.summary.success and len(resumed.results) == 11


async def test_with_the_cache_failures_are_checked_again_and_successes_reused(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/ok1", "/ok2", "/bad"))
    for p in ("/ok1", "/ok2"):
        site.page(p, "ok", content_type="text/plain")
    site.status("/bad", 404)
    options: dict[str, Any] = {"cache": True, "cache_file": str(tmp_path / "c.sqlite"), "max_retries": 0,
                               "cache_errors": True}
    await linkhound.check([site.url("/")], **options)
    site.page("/bad", "ok now", content_type="text/plain")
    site.requests.clear()
    stale = await linkhound.check([site.url("/")], **options)  # --cache-errors alone: the failure is reused
    assert site.asked() == ["/"] and not stale.summary.success  # (the input is read as a page: never cached)
    site.requests.clear()
    report = await linkhound.check([site.url("/")], rerun_failed=True, **options)
    assert site.asked() == ["/", "/bad"]
    assert report.summary.success
    assert {r.url: r.cached for r in report.results} == {
        site.url("/"): False, site.url("/ok1"): True, site.url("/ok2"): True, site.url("/bad"): False}


async def test_rerun_failed_needs_state_or_cache(site: Site) -> None:
    code, out, err = await arun("--rerun-failed", site.url("/"))
    assert code == 1
    assert err.strip().splitlines() == [
        "linkhound: error: --rerun-failed: needs --state DIR or --cache: the results of the last run are kept there"]
    assert site.requests == []
