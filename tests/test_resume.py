"""--state DIR: a crawl kept on disk. Killed at any point (SIGKILL), the same command finishes it, and the report
is the one an uninterrupted crawl writes."""

from __future__ import annotations

import asyncio
import json
import random
import resource
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import linkhound
from cli_run import arun
from linkhound import Report, Result, UsageError, persistent_ledger
from server import Site, SiteFactory, html, until
from test_cli import ENV


def build(site: Site, other: Site, n: int, rng: random.Random, delay: float) -> None:
    """A docs-like site of n pages: nav, cycles, broken links, #fragments, an image, a redirect to a page found
    no other way, nofollow links, another host's leaves. Each page answers after up to `delay` seconds."""
    pages: dict[str, tuple[list[str], str]] = {}
    nav = ["/", "/p/0", "/about#team"]
    pages["/"] = (["/p/0", "/about", "/img.png"], "")
    pages["/about"] = ([*nav, "/missing-nav", "/p/1#nowhere"], '<h2 id="team">t</h2>')
    for i in range(n):
        links = [*nav, f"/p/{i + 1}", f"/p/{rng.randrange(n)}", f"/p/{rng.randrange(n)}#s{i % 3}"]
        if i % 7 == 0:
            links.append(f"/missing/{i % 5}")
        if i % 23 == 0:
            links.append(f"/old/{i}")
            site.redirect(f"/old/{i}", f"/moved/{i}")
            pages[f"/moved/{i}"] = (["/", f"/missing-moved/{i}"], "")
        if i % 13 == 0:
            links.append(other.url(f"/ext/{i % 3}"))
        pages[f"/p/{i}"] = (links, '<p id="s0">a</p><p id="s1">b</p>')
    site.page("/img.png", "PNG", content_type="image/png")
    other.page("/ext/0", "x")
    other.status("/ext/1", 404)
    other.page("/ext/2", "y")
    for path, (links, extra) in pages.items():
        body = html(*links, extra=extra + f'<a rel="nofollow" href="/nf{path}">nf</a>')
        site.handler(path, _delayed(body, rng.uniform(0, delay)))


def _delayed(body: str, seconds: float) -> Any:
    async def h(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.Response(text=body, content_type="text/html")

    return h


async def crawl(site: Site, *extra: str, kill_after: float | None = None,
                file_size: int | None = None) -> tuple[int | None, str]:
    """The CLI on site (json report to the path after -o in extra); SIGKILLed kill_after seconds after the site
    saw its first request; with file_size, no file it writes may grow past that many bytes (a full disk)."""

    def full_disk() -> None:
        assert file_size is not None
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), nothing is killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "-r", "--check-fragments", "--max-retries", "0",
        "--host-concurrency", "2", "-f", "json", *extra, site.url("/"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, preexec_fn=None if file_size is None else full_disk,
    )
    if kill_after is not None:
        async def watch() -> None:
            while not site.requests:
                await asyncio.sleep(0.005)
            await asyncio.sleep(kill_after)
            proc.send_signal(signal.SIGKILL)

        watcher = asyncio.ensure_future(watch())
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    if kill_after is not None:
        watcher.cancel()
    return proc.returncode, err.decode()


def shape(path: Path) -> tuple[Any, ...]:
    doc = json.loads(path.read_text())
    results = sorted(
        (r["url"], r["status"], r["code"], r["reason"], r["depth"], r["cached"],
         json.dumps(sorted(r["references"], key=json.dumps)))
        for r in doc["results"]
    )
    pages = sorted((p["url"], p["depth"], p["links"], p["followed"]) for p in doc["pages"])
    s = doc["summary"]
    summary = {k: s[k] for k in ("success", "total", "unique", "failed", "redirected", "pages", "caps", "by_status",
                                 "warnings")}
    return results, pages, summary


@pytest.mark.parametrize("seed", range(3))
async def test_a_killed_crawl_resumed_reports_what_an_uninterrupted_one_does(
    seed: int, site: Site, make_site: SiteFactory, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    # about 3 s of page answers at two at a time: the kill lands in the middle, after the first commits (each
    # second), whatever the machine's speed
    build(site, await make_site("127.0.0.2"), 200, rng, delay=0.06)
    code, err = await crawl(site, "-o", str(tmp_path / "whole.json"))
    assert code == 2, err  # broken links: exit 2
    whole = site.counts()
    site.requests.clear()

    state = tmp_path / "state"
    kill_at = rng.uniform(1.5, 2.5)
    code, _ = await crawl(site, "--state", str(state), "-o", str(tmp_path / "killed.json"), kill_after=kill_at)
    assert code == -signal.SIGKILL
    first = site.counts()
    site.requests.clear()
    code, err = await crawl(site, "--state", str(state), "-o", str(tmp_path / "resumed.json"))
    assert code == 2, err
    second = site.counts()

    assert shape(tmp_path / "resumed.json") == shape(tmp_path / "whole.json")
    both = first + second
    assert set(both) == set(whole)  # nothing requested that an uninterrupted crawl doesn't request
    # Asked twice at most: the requests in flight at the kill, and those of the last second before it
    again = {k: n for k, n in both.items() if n > whole[k]}
    assert all(both[k] <= 2 * whole[k] for k in again), again
    assert len(again) <= sum(first.values()), again
    assert sum(second.values()) < sum(whole.values())  # the resumed run did not start over


async def test_a_state_that_cannot_be_written_stops_the_run_in_one_line_and_the_same_command_resumes(
    site: Site, make_site: SiteFactory, tmp_path: Path
) -> None:
    build(site, await make_site("127.0.0.2"), 300, random.Random(5), delay=0)
    code, err = await crawl(site, "-o", str(tmp_path / "whole.json"))
    assert code == 2, err
    state = tmp_path / "state"
    # at 256 kB the disk is full: after the state file was made (100 kB), before the crawl is in it
    code, err = await crawl(site, "--state", str(state), "-o", str(tmp_path / "full.json"), file_size=1 << 18)
    assert code == 1, err
    assert err.startswith(f"linkhound: error: {state / 'crawl.sqlite'}: can't write the crawl state (") and \
        err.endswith("run the same command again (with room for it) to resume\n") and err.count("\n") == 1, err
    assert not (tmp_path / "full.json").exists()  # no report of a crawl the state doesn't hold
    code, err = await crawl(site, "--state", str(state), "-o", str(tmp_path / "resumed.json"))
    assert code == 2, err
    assert shape(tmp_path / "resumed.json") == shape(tmp_path / "whole.json")


async def test_a_finished_crawl_run_again_requests_nothing_and_reports_the_same(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a", "/b#x", "/gone"))
    site.page("/a", html("/", "/b"))
    site.page("/b", html("/a", extra='<p id="x"></p>'))
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    site.requests.clear()
    events: list[Any] = []
    run = linkhound.start([site.url("/")], recursive=True, check_fragments=True, state=state,
                          on_event=events.append)
    again = await run.report()
    assert site.requests == []
    assert _results(again) == _results(first) and len(again.pages) == len(first.pages) == 3
    assert {e.url for e in events if isinstance(e, linkhound.Result)} == {r.url for r in first.results}


async def test_a_finished_crawl_reported_again_reads_the_references_index_its_report_made(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.page("/", html("/a", "/b#x", "/gone"))
    site.page("/a", html("/", "/b", "/gone"))
    site.page("/b", html("/a", extra='<p id="x"></p>'))
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    made: list[str] = []
    make = persistent_ledger._make_index

    def counted(db: Any, create: str) -> None:
        made.append(create.split()[5])
        make(db, create)

    monkeypatch.setattr(persistent_ledger, "_make_index", counted)
    site.requests.clear()
    again = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert site.requests == []
    assert _results(again) == _results(first)
    assert "refs_of" not in made  # (the earlier report's, kept: the second session wrote no reference)


async def test_a_stopped_crawl_resumes_the_claims_it_cancelled(site: Site, tmp_path: Path) -> None:
    site.page("/", html(*(f"/p{i}" for i in range(30))))
    for i in range(30):
        site.slow(f"/p{i}", 0.05 if i < 10 else 30.0)  # the slow ones are still in flight when the run stops
    state = str(tmp_path / "state")
    checked: set[str] = set()  # (the quick ones' results, each with its record done in the same step)
    run = linkhound.start([site.url("/")], recursive=True, state=state, max_concurrency=40, host_concurrency=40,
                          on_event=lambda e: checked.add(e.url) if isinstance(e, Result) else None)
    task = asyncio.ensure_future(run.report())
    quick = {site.url(f"/p{i}") for i in range(10)}
    await until(lambda: sum(1 for r in site.requests if r.path.startswith("/p")) >= 30 and quick <= checked)
    run.stop()
    run.cancel()
    stopped = await task
    assert stopped.summary.interrupted and len(stopped.results) < 31
    for i in range(10, 30):
        site.page(f"/p{i}", "now fast")
    site.requests.clear()
    resumed = await linkhound.check([site.url("/")], recursive=True, state=state)
    assert {r.url for r in resumed.results} == {site.url("/")} | {site.url(f"/p{i}") for i in range(30)}
    assert resumed.summary.success
    assert Counter(r.path for r in site.requests if r.path.startswith("/p")) == {f"/p{i}": 1 for i in range(10, 30)}


async def test_a_redirect_waiting_for_its_end_is_not_requested_again_after_a_stop(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/p", "/moved"))
    site.slow("/p", 30.0)  # still in flight when the run stops
    site.redirect("/moved", "/p")  # reaches /p, checked on its own: waits for its result
    state = str(tmp_path / "state")
    run = linkhound.start([site.url("/")], recursive=True, state=state)
    task = asyncio.ensure_future(run.report())
    while not (site.hits("/p") and site.hits("/moved")):
        await asyncio.sleep(0.01)
    await asyncio.sleep(1.5)  # (time for /moved's answer to be taken in; what is done is committed at the stop)
    resumed = await _stop_and_resume(run, task, site, "/p", state)
    assert Counter(site.asked()) == {"/p": 1}
    moved = next(r for r in resumed.results if r.url == site.url("/moved"))
    assert (moved.status, moved.code, moved.redirects) == (linkhound.Status.OK, 200, (site.url("/p"),))


async def test_restart_forgets_the_crawl_kept_and_crawls_afresh(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a", "/gone"))
    site.page("/a", html("/", "/a#x"))
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert sorted(r.url for r in first.results if r.status.is_broken) == [site.url("/a#x"), site.url("/gone")]
    site.page("/gone", "back")
    site.page("/a", html("/", "/a#x", extra='<p id="x"></p>'))
    site.requests.clear()
    kept = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert _whole(kept) == _whole(first) and not site.asked()  # a finished crawl: reported, nothing requested
    fresh = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state, restart=True)
    assert Counter(site.asked()) == {"/": 1, "/a": 1, "/gone": 1}
    assert fresh.summary.success and sorted(r.url for r in fresh.results) == [site.url(p) for p in ("/", "/a", "/gone")]
    site.requests.clear()
    again = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert _whole(again) == _whole(fresh) and not site.asked()  # what --restart made is kept like any crawl
    with pytest.raises(UsageError, match="the state of another crawl.*--restart starts over"):
        await linkhound.check([site.url("/a")], recursive=True, state=state)
    other = await linkhound.check([site.url("/a")], recursive=True, state=state, restart=True)
    assert {r.url for r in other.results} == {site.url("/"), site.url("/a"), site.url("/gone")}
    assert {r.url: r.depth for r in other.results}[site.url("/a")] == 0  # the new input's depth, not the old crawl's


async def test_restart_of_a_state_in_use_is_refused_and_the_crawl_in_it_goes_on(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/slow", "/b"))
    site.slow("/slow", 30.0)  # in flight all through
    site.page("/b", "b")
    state = str(tmp_path / "state")
    checked: set[str] = set()
    run = linkhound.start([site.url("/")], recursive=True, state=state,
                          on_event=lambda e: checked.add(e.url) if isinstance(e, Result) else None)
    task = asyncio.ensure_future(run.report())
    await until(lambda: site.hits("/slow") > 0 and site.url("/b") in checked)
    with pytest.raises(UsageError, match="in use by another run"):
        await linkhound.check([site.url("/")], recursive=True, state=state, restart=True)
    resumed = await _stop_and_resume(run, task, site, "/slow", state)
    assert site.asked() == ["/slow"]  # the refused --restart emptied nothing: only what was in flight is asked again
    assert resumed.summary.success and resumed.summary.unique == 3


async def test_restart_needs_state_and_forgets_what_rerun_failed_needs(site: Site, tmp_path: Path) -> None:
    code, _, err = await arun("--restart", site.url("/"))
    assert (code, err.strip()) == (1, "linkhound: error: --restart: needs --state DIR: it forgets the crawl kept there")
    code, _, err = await arun("--restart", "--rerun-failed", "--state", str(tmp_path / "s"), site.url("/"))
    assert (code, err.strip()) == (
        1, "linkhound: error: --rerun-failed: needs the last run's results, which --restart forgets")
    assert site.requests == [] and not (tmp_path / "s").exists()


async def _stop_and_resume(
    run: linkhound.Run, task: asyncio.Future[Report], site: Site, slow: str, state: str
) -> Report:
    """Stop run (its report says interrupted), make the page at slow quick, and crawl site's / on state again."""
    run.stop()
    run.cancel()
    assert (await task).summary.interrupted
    site.page(slow, "now fast")
    site.requests.clear()
    return await linkhound.check([site.url("/")], recursive=True, state=state)


async def test_local_files_and_their_fragments_survive_a_second_session(site: Site, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"[b](b.md#here) [b](b.md#gone) [mail](mailto:x@example.org) [w]({site.url('/w')})\n")
    (docs / "b.md").write_text("# Here\n")
    site.page("/w", "w")
    state = str(tmp_path / "state")
    first = await linkhound.check([str(docs / "a.md")], state=state)
    second = await linkhound.check([str(docs / "a.md")], state=state)
    assert _results(second) == _results(first)
    assert [r.url.rsplit("/", 1)[1] for r in second.results if r.status.is_broken] == ["b.md#gone"]
    (docs / "a.md").write_text("[b](b.md#here) [b](b.md#also-gone)\n")  # an input read again reads anew
    third = await linkhound.check([str(docs / "a.md")], state=state)
    assert {r.url.rsplit("/", 1)[1] for r in third.results if r.status.is_broken} == {"b.md#gone", "b.md#also-gone"}


async def test_a_state_of_another_crawl_is_refused(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a"))
    state = str(tmp_path / "state")
    await linkhound.check([site.url("/")], recursive=True, state=state)
    with pytest.raises(UsageError, match="the state of another crawl"):
        await linkhound.check([site.url("/a")], recursive=True, state=state)
    await linkhound.check([site.url("/")], recursive=True, state=state, timeout=5)  # request settings may change


async def test_a_state_judged_with_other_accepted_codes_is_refused(site: Site, tmp_path: Path) -> None:
    # one report never mixes two --accept: the 403 kept as broken would sit beside new 403s called ok
    site.page("/", html("/private"))
    site.page("/private", "no", status=403)
    state = str(tmp_path / "state")
    report = await linkhound.check([site.url("/")], recursive=True, state=state, accept="200..=299")
    assert [r.code for r in report.broken] == [403]
    for accept, accept_for in (("200..=299,403", ()), ("200..=299", (r"private 403",))):
        with pytest.raises(UsageError, match=r"judged with --accept 200..=299, this run's with --accept "):
            await linkhound.check([site.url("/")], recursive=True, state=state, accept=accept, accept_for=accept_for)
    again = await linkhound.check([site.url("/")], recursive=True, state=state, accept="200..=299")
    assert [r.code for r in again.broken] == [403] and site.hits("/private") == 1
    fresh = await linkhound.check([site.url("/")], recursive=True, state=state, accept="200..=299,403", restart=True)
    assert not fresh.broken and site.hits("/private") == 2


def _results(report: Report) -> list[tuple[Any, ...]]:
    return sorted((r.url, r.status, r.code, r.depth, tuple(sorted(r.references))) for r in report.results)


async def test_references_are_read_from_the_state_after_the_run_and_beside_the_next(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a", "/a#x", "/gone"))
    site.page("/a", html("/", "/gone", extra='<p id="x"></p>'))
    state = str(tmp_path / "state")
    first = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    gone = next(r for r in first.results if r.url.endswith("/gone"))
    assert sorted(ref.source for ref in gone.references) == [site.url("/"), site.url("/a")]  # read after the run
    second = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert _results(second) == _results(first)  # (the first report's reads hold no lock on the state)
    assert [ref.text for ref in gone.references] == ["/gone", "/gone"]


def _whole(report: Report) -> tuple[Any, ...]:
    results = sorted((r.url, r.status, r.code, r.reason, r.depth, r.redirects, tuple(sorted(r.references)))
                     for r in report.results)
    pages = sorted((p.url, p.depth, p.links, p.followed) for p in report.pages)
    s = report.summary
    return results, pages, (s.total, s.unique, s.by_status, s.redirects, s.pages)


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_crawl_kept_on_disk_with_small_caches_reports_what_one_in_memory_does(
    streamed: bool, site: Site, make_site: SiteFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from linkhound import persistent_ledger, sorter

    build(site, await make_site("127.0.0.2"), 120, random.Random(7), delay=0.0)
    options: dict[str, Any] = {"recursive": True, "check_fragments": True, "max_retries": 0}
    in_memory = await linkhound.check([site.url("/")], **options)
    requested = site.counts()
    site.requests.clear()
    # caches far smaller than the crawl: the sorter forgets URLs and the ledger reads targets back from the file
    monkeypatch.setattr(sorter, "_GENERATION", 16)
    monkeypatch.setattr(persistent_ledger, "_CACHE", 8)
    events: list[Any] = []
    run = linkhound.start([site.url("/")], state=str(tmp_path / "state"),
                          on_event=events.append if streamed else None, **options)
    kept = await run.report()
    assert _whole(kept) == _whole(in_memory)
    assert site.counts() == requested  # a URL forgotten is asked of the crawl state, not of the server
    if streamed:  # each result as it came, with its references (read back from the file then)
        firsts = {e.url: e for e in events if isinstance(e, linkhound.Result)}
        assert set(firsts) == {r.url for r in in_memory.results}
        assert sum(len(e.references) for e in firsts.values()) > 0


async def test_a_resumed_crawl_keeps_the_crawl_delay_of_the_robots_txt_read_again(site: Site, tmp_path: Path) -> None:
    """The resumed crawl reads robots.txt again, within the slot of a page it resumes (no page of the host is
    queued anew): that page's request still comes Crawl-delay after the robots.txt request, not right behind."""
    site.page("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.page("/", html("/p"))
    site.slow("/p", 30.0)  # still in flight when the run stops
    state = str(tmp_path / "state")
    run = linkhound.start([site.url("/")], recursive=True, state=state)
    task = asyncio.ensure_future(run.report())
    await until(lambda: site.hits("/p") == 1)
    site.page("/robots.txt", "User-agent: *\nCrawl-delay: 1\n", content_type="text/plain")
    resumed = await _stop_and_resume(run, task, site, "/p", state)
    assert resumed.summary.success
    at = {r.path: r.at for r in site.requests}
    assert set(at) == {"/robots.txt", "/p"} and at["/p"] - at["/robots.txt"] >= 0.9
