"""--jobs: a list of links checked by several processes gives the one-process report, requests each URL once, and
keeps every host within its limits in sum."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import linkhound
from cli_run import ENV, HANG_GUARD, arun
from fork_probe import AFTER_FORK, before_fork
from linkhound import Report, Settings
from linkhound.api import _inputs
from linkhound.crawl_state import Found, Limits, Plan, Progress
from linkhound.host_pool import HostLimits
from linkhound.shard import Shard, jobs_for
from linkhound.shard_run import Forked, ShardedRun
from linkhound.urls import canonical_key
from server import Site, SiteFactory, html, until


def _comparable(report: Report) -> tuple[Any, ...]:
    """The report without durations, results sorted (they are in the order they completed)."""
    results = sorted(repr(dataclasses.replace(r, elapsed=0.0)) for r in report.results)
    summary = dataclasses.replace(report.summary, elapsed=0.0)
    return results, summary, report.pages


def _list(tmp_path: Path, a: Site, b: Site) -> Path:
    # the same URLs spelled otherwise: one canonical key each, so one process, one request (first in the list: a
    # link read after its URL was checked without its body would have it fetched again, with or without --jobs)
    host = a.url("/")[len("http://"):].rstrip("/")
    lines = [f"HTTP://{host}/s1", f"http://{host}/./s2", a.url("/s3#top")]
    a.page("/doc", html(title="doc", extra='<h2 id="here">x</h2>'))
    lines += [a.url("/doc#here"), a.url("/doc#nowhere"), a.url("/doc")]
    for site in (a, b):
        for i in range(40):
            site.slow(f"/s{i}", 0.02)
            lines.append(site.url(f"/s{i}"))
        lines += [site.url(f"/missing{i}") for i in range(10)]
    # redirects to URLs listed before them (on either shard): each takes its end's result, no second request
    for i in range(10):
        a.redirect(f"/r{i}", f"/s{i}")
        lines.append(a.url(f"/r{i}"))
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    doc = tmp_path / "links.md"
    doc.write_text(f"[one]({a.url('/s4')}) [two]({b.url('/s5')}) [mail](mailto:someone@example.org) [bad](http://[x)\n")
    return urls


async def test_jobs_report_is_the_one_process_report_with_each_url_requested_once_within_host_limits(
    tmp_path: Path, make_site: SiteFactory
) -> None:
    a, b = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    urls = _list(tmp_path, a, b)
    inputs = [str(urls), str(tmp_path / "links.md")]
    options = dict(host_concurrency=4, max_concurrency=6, check_fragments=True)

    run = linkhound.start(inputs, jobs=2, **options)
    assert isinstance(run, ShardedRun)
    two = await run.report()
    for site in (a, b):
        assert site.peak <= 4, site.host  # both processes' requests together, as the server saw them
        seen = site.counts()
        assert seen and max(seen.values()) == 1, [k for k, n in seen.items() if n > 1]
        site.requests.clear()
        site.peak = 0

    one = await linkhound.check(inputs, jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    assert two.summary.total == one.summary.total > 100
    # the report is made as soon as each other process has sent its last line; each is reaped all the same
    assert run._procs and all(proc.returncode is not None for proc in run._procs)


async def test_a_forked_process_is_waited_for_until_it_exits() -> None:
    """Forked.wait(): the exit status of a forked process, told when it exits (a pidfd on Linux), whether it is
    still running when the wait starts or has already exited."""
    for delay in (0.3, 0.0):
        pid = os.fork()
        if pid == 0:  # the child: nothing of the test's loop or server, just an exit
            time.sleep(delay)
            os._exit(3)
        if not delay:
            while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
                time.sleep(0.01)  # (exited, and not reaped yet)
        forked = Forked(pid, -1, -1)
        assert await asyncio.wait_for(forked.wait(), HANG_GUARD) == 3
        assert forked.returncode == 3
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


async def test_jobs_redirect_chain_across_shards_is_reported_as_in_one_process(
    tmp_path: Path, site: Site
) -> None:
    # r{i} -> s{i}, each listed: whichever process each is in, the redirect takes its end's result
    lines = []
    for i in range(30):
        site.page(f"/s{i}", "ok")
        lines.append(site.url(f"/s{i}"))
    for i in range(30):
        site.redirect(f"/r{i}", f"/s{i}", 302 if i % 2 else 301)
        lines.append(site.url(f"/r{i}"))
    (tmp_path / "urls.txt").write_text("\n".join(lines))
    two = await linkhound.check(str(tmp_path / "urls.txt"), jobs=2)
    assert max(site.counts().values()) == 1
    one = await linkhound.check(str(tmp_path / "urls.txt"), jobs=1)
    assert _comparable(two) == _comparable(one)
    assert all(r.redirects for r in two.results if "/r" in r.url)


async def test_jobs_a_redirect_end_listed_below_its_redirect_is_requested_once(tmp_path: Path, site: Site) -> None:
    # r{i} -> e{i}, every e listed far below every r (read after the redirects were followed): the process that
    # followed one has the end's answer and holds the end, whichever shard it hashes to; the other never asks
    first = Shard(0, 2)
    ends = [f"/e{i}" for i in range(60)]
    mine = [e for e in ends if first.owns(canonical_key(site.url(e)))]
    assert 0 < len(mine) < len(ends)  # ends of both shards, whichever process follows their redirect
    lines = []
    for i, end in enumerate(ends):
        site.page(end, "ok")
        site.redirect(f"/r{i}", end)
        lines.append(site.url(f"/r{i}"))
    for i in range(200):  # read well after the redirects were followed (the queue reads 2 x 4 ahead)
        site.page(f"/f{i}", "ok")
        lines.append(site.url(f"/f{i}"))
    lines += [site.url(end) for end in ends]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    two = await linkhound.check(str(tmp_path / "urls.txt"), jobs=2, max_concurrency=4, host_concurrency=4)
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    one = await linkhound.check(str(tmp_path / "urls.txt"), jobs=1, max_concurrency=4, host_concurrency=4)
    assert _comparable(two) == _comparable(one)
    assert all(r.status is linkhound.Status.OK and not r.redirects for r in two.results if "/e" in r.url)


async def test_jobs_redirects_in_two_processes_to_one_end_take_its_answer_once(tmp_path: Path, site: Site) -> None:
    # r{i} -> e{i} and q{i} -> e{i}, no end listed, each q read well after its r was followed: whichever process
    # follows r keeps e's answer and tells the others, so the q that reaches e in another process takes it (no
    # second request), and never waits for a result of e that no process would check (a false "redirect loop")
    first = Shard(0, 2)
    pairs = [(f"/r{i}", f"/q{i}") for i in range(60)]
    split = [r for r, q in pairs if first.owns(canonical_key(site.url(r))) != first.owns(canonical_key(site.url(q)))]
    assert 0 < len(split) < len(pairs)  # pairs whose two redirects are followed by two processes, and others
    lines = []
    for i, (r, q) in enumerate(pairs):
        site.page(f"/e{i}", "ok")
        site.redirect(r, f"/e{i}")
        site.redirect(q, f"/e{i}", 302)
        lines.append(site.url(r))
    for i in range(200):  # read well after the first redirects were followed (the queue reads 2 x 4 ahead)
        site.page(f"/f{i}", "ok")
        lines.append(site.url(f"/f{i}"))
    lines += [site.url(q) for r, q in pairs]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    options: dict[str, Any] = dict(max_concurrency=4, host_concurrency=4)
    two = await linkhound.check(str(tmp_path / "urls.txt"), jobs=2, **options)
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    assert len(site.counts()) == 3 * len(pairs) + 200
    one = await linkhound.check(str(tmp_path / "urls.txt"), jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    assert all(r.status is linkhound.Status.OK and r.redirects for r in two.results if "/f" not in r.url)


async def test_jobs_redirects_in_flight_in_two_processes_ask_their_end_once(tmp_path: Path, site: Site) -> None:
    # a{i} -> e{i} and b{i} -> e{i}, a and b of two processes; b answers once e has been asked (by a's process,
    # which told the other it is fetching e), and e answers 0.3 s after b was asked: b's redirect reaches e
    # while it is in flight elsewhere, waits for where it went, and takes its answer (no second request)
    first = Shard(0, 2)
    pairs = [(f"/a{i}", f"/b{i}", f"/e{i}") for i in range(40)]
    pairs = [p for p in pairs if first.owns(canonical_key(site.url(p[0]))) != first.owns(canonical_key(site.url(p[1])))]
    assert len(pairs) >= 6
    pairs = pairs[:6]

    lines = []
    for i, (a, b, e) in enumerate(pairs):
        site.redirect(a, e)
        site.answer_after(b, [e], lambda e=e: web.Response(status=302, headers={"Location": e}))
        site.answer_after(e, [b], lambda code=404 if i % 3 == 0 else 200: web.Response(status=code), 0.3)
        lines += [site.url(a), site.url(b)]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    options: dict[str, Any] = dict(max_concurrency=16, host_concurrency=16)
    two = await linkhound.check(str(tmp_path / "urls.txt"), jobs=2, **options)
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    results = {r.url: r for r in two.results}
    for i, (a, b, e) in enumerate(pairs):
        ra, rb = results[site.url(a)], results[site.url(b)]
        assert ra.redirects == rb.redirects == (site.url(e),)
        assert ra.redirect_codes == (301,) and rb.redirect_codes == (302,)
        assert ra.status is rb.status is (linkhound.Status.BROKEN if i % 3 == 0 else linkhound.Status.OK)


async def test_jobs_a_redirect_waiting_on_a_hop_another_process_fetches_ends_with_the_run(
    tmp_path: Path, site: Site
) -> None:
    # Three processes: a{i} -> e{i} in the second, b{i} -> e{i} in the third; each asks the first to fetch e{i},
    # which it does once. The first has one URL of its own, answered once every b was asked: it is done, and the
    # links to the others end, while e is still in flight. It still answers their asks until each has ended (no
    # hang, and no redirect checks e on its own)
    shards = [Shard(n, 3) for n in range(3)]

    def owner(path: str) -> int:
        return next(n for n, shard in enumerate(shards) if shard.owns(canonical_key(site.url(path))))

    pairs = [(f"/a{i}", f"/b{i}", f"/e{i}") for i in range(200)]
    pairs = [p for p in pairs if owner(p[0]) == 1 and owner(p[1]) == 2][:4]
    own = next(f"/s{i}" for i in range(100) if owner(f"/s{i}") == 0)
    assert len(pairs) == 4

    lines = [site.url(own)]
    for a, b, e in pairs:
        site.redirect(a, e)
        site.answer_after(b, [e], lambda e=e: web.Response(status=302, headers={"Location": e}))
        site.answer_after(e, [b], lambda: web.Response(text="ok", content_type="text/html"), 0.5)
        lines += [site.url(a), site.url(b)]
    site.answer_after(own, [b for _, b, _ in pairs], lambda: web.Response(text="ok", content_type="text/html"))
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    report = await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), jobs=3), HANG_GUARD)
    results = {r.url: r for r in report.results}
    assert len(results) == 1 + 2 * len(pairs)
    for a, b, e in pairs:
        assert results[site.url(a)].redirects == results[site.url(b)].redirects == (site.url(e),)
        assert results[site.url(a)].status is results[site.url(b)].status is linkhound.Status.OK
        assert site.hits(e) == 1


@pytest.mark.parametrize("chain", [False, True])
async def test_jobs_redirects_in_two_processes_reaching_one_hop_at_once_ask_it_once(
    tmp_path: Path, site: Site, chain: bool
) -> None:
    # a{i} -> e{i} and b{i} -> e{i} (chain: -> h{i} -> e{i}), a and b of two processes, each answered only once
    # the other was asked: both redirects reach their first hop at about the same moment, before either process
    # could hear of the other's. The first process fetches every hop, so each is asked once
    first = Shard(0, 2)
    pairs = [(f"/a{i}", f"/b{i}") for i in range(120)]
    pairs = [p for p in pairs if first.owns(canonical_key(site.url(p[0]))) != first.owns(canonical_key(site.url(p[1])))]
    assert len(pairs) >= 15  # (3 in 8 on average: the first process owns a quarter of the keys)
    lines = []
    for i, (a, b) in enumerate(pairs):
        hop = f"/h{i}" if chain else f"/e{i}"
        site.answer_after(a, [b], lambda hop=hop: web.Response(status=301, headers={"Location": hop}))
        site.answer_after(b, [a], lambda hop=hop: web.Response(status=302, headers={"Location": hop}))
        if chain:
            site.redirect(hop, f"/e{i}", 307)
        if i % 4:
            site.page(f"/e{i}", "ok")
        lines += [site.url(a), site.url(b)]
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    options: dict[str, Any] = dict(max_concurrency=64, host_concurrency=64)
    two = await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), jobs=2, **options), HANG_GUARD)
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    assert len(site.counts()) == len(pairs) * (4 if chain else 3)
    site.requests.clear()
    one = await linkhound.check(str(tmp_path / "urls.txt"), jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    results = {r.url: r for r in two.results}
    for i, (a, b) in enumerate(pairs):
        way = (site.url(f"/h{i}"), site.url(f"/e{i}")) if chain else (site.url(f"/e{i}"),)
        ra, rb = results[site.url(a)], results[site.url(b)]
        assert ra.redirects == rb.redirects == way
        assert ra.redirect_codes == ((301, 307) if chain else (301,)) and rb.redirect_codes[0] == 302
        assert ra.status is rb.status is (linkhound.Status.OK if i % 4 else linkhound.Status.BROKEN)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_jobs_random_redirect_graphs_report_as_one_process_and_ask_each_url_once(
    tmp_path: Path, site: Site, seed: int
) -> None:
    # Random redirect graphs without loops: 60 listed links each redirect to a hop or an end, 20 hops redirect to
    # a later hop or an end, 30 ends answer 200, 404 or 410 (half of them listed too, and half of the hops,
    # anywhere in the list). In 1 to 4 processes: the report is one process's, and the server sees each URL once
    rng = random.Random(seed)
    ends = [f"/t{i}" for i in range(30)]
    hops = [f"/h{i}" for i in range(20)]
    for end in ends:
        site.status(end, rng.choice([200, 200, 404, 410]))
    for i, hop in enumerate(hops):
        site.redirect(hop, rng.choice(hops[i + 1:] + ends), rng.choice([301, 302, 307, 308]))
    starts = [f"/s{i}" for i in range(60)]
    for start in starts:
        site.redirect(start, rng.choice(hops + ends), rng.choice([301, 302]))
    lines = [site.url(path) for path in starts + rng.sample(ends, 15) + rng.sample(hops, 10)]
    rng.shuffle(lines)
    (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n")
    options: dict[str, Any] = dict(max_concurrency=16, host_concurrency=16)
    reports = []
    for jobs in (1, 2, 3, 4):
        site.requests.clear()
        reports.append(await asyncio.wait_for(linkhound.check(str(tmp_path / "urls.txt"), jobs=jobs, **options),
                                              HANG_GUARD))
        assert max(site.counts().values()) == 1, (jobs, [k for k, n in site.counts().items() if n > 1])
    assert all(_comparable(report) == _comparable(reports[0]) for report in reports[1:])


def _settings_and_inputs(tmp_path: Path, size: int = 300_000, **options: Any) -> tuple[Settings, list[Any]]:
    urls = tmp_path / "urls.txt"
    line = "http://127.0.0.1:1/some/path/that/is/long/enough\n"
    urls.write_text(line * (size // len(line) + 1))
    s = Settings(**options)
    return s, _inputs([str(urls)], None, s)


@pytest.mark.parametrize("options", [
    {"recursive": True}, {"state": "x.sqlite"}, {"cache": True}, {"soft_404": True}, {"host_stats": True},
    {"cookie_jar": "jar.txt"}, {"offline": True}, {"suggest_fixes": True}, {"tls_expiry": "10d"},
])
def test_jobs_is_one_when_a_run_cannot_be_shared(tmp_path: Path, options: dict[str, Any]) -> None:
    s, inputs = _settings_and_inputs(tmp_path, jobs=2, **options)
    assert jobs_for(s, inputs) == 1


def test_jobs_default_is_two_for_a_long_list_on_two_cores_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    s, inputs = _settings_and_inputs(tmp_path)
    assert jobs_for(s, inputs) == 2
    s, inputs = _settings_and_inputs(tmp_path, size=10_000)
    assert jobs_for(s, inputs) == 1
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0})
    s, inputs = _settings_and_inputs(tmp_path)
    assert jobs_for(s, inputs) == 1


def test_jobs_url_inputs_and_small_limits_keep_one_process(tmp_path: Path) -> None:
    s = Settings(jobs=2)
    assert jobs_for(s, _inputs(["http://127.0.0.1:1/"], None, s)) == 1
    s, inputs = _settings_and_inputs(tmp_path, jobs=2, host_concurrency=1)
    assert jobs_for(s, inputs) == 1
    s, inputs = _settings_and_inputs(tmp_path, jobs=2, host_rate=5.0, host_burst=1)
    assert jobs_for(s, inputs) == 1
    s, inputs = _settings_and_inputs(tmp_path, jobs=3, host_concurrency=2)
    assert jobs_for(s, inputs) == 2
    s, inputs = _settings_and_inputs(tmp_path, jobs=10**20)  # at once, not counted down from 10**20
    assert jobs_for(s, inputs) == max(n for n in range(1, 9) if all(Shard(i, n).limits(
        HostLimits(8)).concurrency >= 1 for i in range(n)))


@pytest.mark.parametrize("count", [2, 3, 5])
def test_shards_split_keys_and_limits_without_overlap(count: int) -> None:
    shards = [Shard(i, count) for i in range(count)]
    keys = [f"http://127.0.0.1/{i}" for i in range(2000)]
    assert all(sum(s.owns(k) for s in shards) == 1 for k in keys)
    for n in (count, 7, 8, 128, 1000):
        assert sum(s.part(n) for s in shards) == n
    limits = HostLimits(16, 10.0, 8)
    parts = [s.limits(limits) for s in shards]
    assert sum(p.concurrency for p in parts) == 16 and sum(p.burst for p in parts) == 8
    assert sum(p.rate or 0 for p in parts) == pytest.approx(10.0)


async def test_jobs_a_wait_one_process_is_asked_for_is_kept_by_all(tmp_path: Path, site: Site) -> None:
    seen_429: list[float] = []

    async def limited(request: web.Request) -> web.StreamResponse:
        if not seen_429:
            seen_429.append(time.monotonic())
            return web.Response(status=429, headers={"Retry-After": "3"})
        return web.Response(text="ok")

    site.handler("/limited", limited)
    paths = [f"/s{i}" for i in range(120)]
    for p in paths:
        site.slow(p, 0.02)
    lines = [site.url(p) for p in paths[:20]] + [site.url("/limited")] + [site.url(p) for p in paths[20:]]
    (tmp_path / "urls.txt").write_text("\n".join(lines))
    report = await linkhound.check(str(tmp_path / "urls.txt"), jobs=2, host_concurrency=4, max_retries=1)
    assert report.summary.success and seen_429
    # requests already on their way may still arrive; none is sent by either process well inside the wait
    inside = [r for r in site.requests if seen_429[0] + 1.0 < r.at < seen_429[0] + 2.5]
    assert inside == []


async def test_jobs_stop_ends_every_process_and_reports_what_was_checked(tmp_path: Path, site: Site) -> None:
    paths = [f"/s{i}" for i in range(300)]
    for p in paths:
        site.slow(p, 0.1)
    (tmp_path / "urls.txt").write_text("\n".join(site.url(p) for p in paths))
    run = linkhound.start(str(tmp_path / "urls.txt"), jobs=2, host_concurrency=4)
    assert isinstance(run, ShardedRun)
    stopping = asyncio.get_running_loop().call_later(0.5, run.stop)
    report = await run.report()
    stopping.cancel()
    assert report.summary.interrupted
    urls = [r.url for r in report.results]
    assert len(urls) == len(set(urls)) and set(urls) <= {site.url(p) for p in paths}
    assert max(site.counts().values()) == 1


async def test_jobs_on_the_command_line_report_as_one_process(tmp_path: Path, site: Site) -> None:
    """The command forks its shard processes (one or two here) and reports as one process would, with the same
    requests."""
    paths = [f"/s{i}" for i in range(40)]
    for p in paths[:30]:
        site.page(p, "ok")
    (tmp_path / "urls.txt").write_text("\n".join(site.url(p) for p in paths))
    outs, seen = [], []
    for jobs in ("3", "2", "1"):
        site.requests.clear()
        code, out, _ = await arun("--jobs", jobs, "--format", "json", "--no-progress", "--max-concurrency", "12",
                                  "--host-concurrency", "6", str(tmp_path / "urls.txt"))
        assert code == 2  # ten links are broken
        seen.append(site.counts())
        report = json.loads(out)
        for r in report["results"]:
            r.pop("duration")
        report["summary"].pop("elapsed")
        report["results"].sort(key=lambda r: r["url"])
        outs.append(report)
    assert outs[0] == outs[2] and outs[1] == outs[2]
    assert seen[0] == seen[2] and seen[1] == seen[2] and len(seen[2]) == 40


async def test_jobs_warnings_count_every_process_pages(tmp_path: Path, site: Site) -> None:
    """Pages cut at --max-body-size by any process are in the report's warning, as in one process."""
    filler = "<p>" + "words " * 2000 + "</p>"
    # twelve pages of each process's share (which URLs are whose depends on the test server's port)
    shares: dict[bool, list[str]] = {True: [], False: []}
    for i in range(2000):
        url = site.url(f"/big{i}#top")
        share = shares[Shard(0, 2).owns(canonical_key(url.split("#")[0]))]
        if len(share) < 12:
            site.page(f"/big{i}", html(title=f"big {i}", extra=f'<h2 id="top">top</h2>{filler}'))
            share.append(url)
        if len(shares[True]) == len(shares[False]) == 12:
            break
    lines = shares[True] + shares[False]
    assert len(lines) == 24
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    options = dict(check_fragments=True, max_body_size=4096)

    two = await linkhound.check([str(urls)], jobs=2, **options)
    one = await linkhound.check([str(urls)], jobs=1, **options)
    cut = [w for w in one.summary.warnings if "--max-body-size" in w]
    assert len(cut) == 1 and "(and 21 more)" in cut[0]
    assert [w for w in two.summary.warnings if "--max-body-size" in w and "(and 21 more)" in w]
    assert len(two.summary.warnings) == len(one.summary.warnings)


async def test_jobs_sigterm_on_the_command_line_ends_the_forked_processes(tmp_path: Path, site: Site) -> None:
    """SIGTERM to a --jobs 2 command (its second process forked): the report of what was checked, exit 143 well
    before the 20 s request is answered, and nothing more asked of the server once it has exited."""
    paths = ["/hang", *[f"/p{i}" for i in range(40)]]
    site.slow("/hang", 20.0)
    for i in range(40):
        site.slow(f"/p{i}", 0.3)
    (tmp_path / "urls.txt").write_text("\n".join(site.url(p) for p in paths))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "--jobs", "2", "--host-concurrency", "4",
        "--max-concurrency", "4", "--timeout", "30", "--format", "json", str(tmp_path / "urls.txt"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    async with asyncio.timeout(HANG_GUARD):
        while len(site.requests) < 6:
            await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 143, err
    report = json.loads(out)
    assert report["summary"]["interrupted"] is True and report["results"]
    seen = len(site.requests)
    await asyncio.sleep(1.0)  # a process left behind would go on with its share, at 0.3 s a request
    assert len(site.requests) == seen
    assert max(site.counts().values()) == 1


async def test_a_forked_process_holds_none_of_the_programs_files_or_sockets(tmp_path: Path, site: Site) -> None:
    """start(jobs=2) outside a loop forks the second process: it lets go of the program's listening socket and
    open files as it starts (a port the program closes is closed), and checks its share all the same."""
    for i in range(40):
        site.page(f"/p{i}", "ok")
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(site.url(f"/p{i}") + "\n" for i in range(40)))
    program = before_fork(str(tmp_path / "app.log")) + f"""
import asyncio
import linkhound
run = linkhound.start([{str(urls)!r}], jobs=2)
assert run._forked, "nothing forked: nothing to test"
pid = run._forked[0].pid
""" + AFTER_FORK + """
report = asyncio.run(run.report())
print("ok:", report.summary.ok)
"""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", program, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, env=ENV)
    out, err = await asyncio.wait_for(proc.communicate(), HANG_GUARD)
    assert proc.returncode == 0, err.decode()
    assert out.decode().splitlines() == ["held: []", "port: closed", "ok: 40"]


async def test_jobs_processes_close_what_they_open_in_development_mode(tmp_path: Path, site: Site) -> None:
    """Under `python -X dev -W error::ResourceWarning` (PYTHONDEVMODE, PYTHONWARNINGS: the processes started as
    interpreters have them too), neither a forked process nor one started as an interpreter leaves a resource
    open: nothing is written to the program's stderr."""
    async def ok(request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    site.prefixes["/p"] = ok
    urls = tmp_path / "urls.txt"  # (enough that the first process is busy as the others end)
    urls.write_text("".join(site.url(f"/p{i}") + "\n" for i in range(2000)))
    program = f"""
import asyncio
import linkhound
run = linkhound.start([{str(urls)!r}], jobs=2)
assert run._forked, "nothing forked: nothing to test"
print(asyncio.run(run.report()).summary.ok)
async def in_a_loop() -> int:
    return (await linkhound.check([{str(urls)!r}], jobs=2)).summary.ok
print(asyncio.run(in_a_loop()))
"""
    env = {**ENV, "PYTHONDEVMODE": "1", "PYTHONWARNINGS": "error::ResourceWarning"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", program, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), HANG_GUARD)
    assert proc.returncode == 0, err.decode()
    assert out.decode().split() == ["2000", "2000"]
    # (-X dev also notes slow callbacks, "Executing <Task ...> took 0.1 seconds": not of this test's concern)
    assert [line for line in err.decode().splitlines() if "Executing <" not in line] == []


async def test_jobs_host_stats_count_every_process_requests(tmp_path: Path, make_site: SiteFactory) -> None:
    """run.host_stats() of a run in several processes: each other process's requests are counted in at its end,
    so once report() has returned the stats are those of one process checking it all."""
    a, b = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    lines = []
    for site in (a, b):
        for i in range(150):
            site.page(f"/p{i}", "ok")
            lines.append(site.url(f"/p{i}"))
        lines += [site.url(f"/missing{i}") for i in range(20)]
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    counts = []
    for jobs in (1, 2):
        run = linkhound.start([str(urls)], jobs=jobs)
        assert isinstance(run, ShardedRun) is (jobs == 2)
        await asyncio.wait_for(run.report(), HANG_GUARD)
        stats = run.host_stats()
        counts.append({host: (s.requests, s.successes, len(s.latencies)) for host, s in stats.items()})
    assert counts[1] == counts[0]
    assert sorted(n for n, _, _ in counts[0].values()) == [170, 170]


async def test_jobs_json_made_ahead_is_the_text_one_process_writes(tmp_path: Path, make_site: SiteFactory) -> None:
    """While a list's run waits on answers it makes results and their json text ahead, in one process or in
    several; the report is the one made at the end to the character (durations aside), a result that got a
    reference since made again."""
    import re

    from linkhound.report import reporter_for

    a = await make_site("127.0.0.1")
    first = Shard(0, 2)
    mine = [u for u in (a.url(f"/s{i}") for i in range(2000)) if first.owns(canonical_key(u))][:250]
    others = [u for u in (a.url(f"/t{i}") for i in range(400)) if not first.owns(canonical_key(u))][:50]
    for url in mine + others:
        a.slow(url[len(a.url("")):], 0.01)
    # the first process's own queue holds the reading back (2 x its concurrency ahead): the last lines are read
    # after the first URLs were checked and made ahead
    lines = [*mine, *others, *(a.url(f"/missing{i}") for i in range(20))]
    a.page("/doc", html(title="doc", extra='<h2 id="here">x</h2>'))
    lines += [a.url("/doc#here"), a.url("/doc#nowhere")]
    lines += mine[:2]  # listed again: a reference more for a result made ahead
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    texts, made, again = [], [], []
    for jobs, ahead in ((2, True), (1, True), (1, False)):
        reporter = reporter_for("json")
        run = linkhound.start([str(urls)], jobs=jobs, max_concurrency=8, host_concurrency=8, check_fragments=True)
        if ahead:
            run.make_ahead(reporter.ahead)
        report = await run.report()
        texts.append(re.sub(r'"(duration|elapsed)": [0-9.e-]+', "", "".join(reporter.chunks(report))))
        made.append(len(reporter._made))  # type: ignore[attr-defined]
        again.append([len(r.references) for r in report.results if r.url in mine[:2]])
    assert texts[0] == texts[1] == texts[2]
    assert made[0] > 100 and made[1] > 100 and made[2] == 0  # (the last: its text all made at the end)
    assert again == [[2, 2], [2, 2], [2, 2]]


def _auto_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs unset picks two processes here, whatever the size of the inputs and the cores of this machine."""
    import linkhound.shard

    monkeypatch.setattr(linkhound.shard, "_AUTO_BYTES", 1)
    monkeypatch.setattr(linkhound.shard, "cores", lambda: 2)


def _slow_list(
    tmp_path: Path, sites: list[Site], count: int, seconds: float, first: float = 0.0, slow_on: int = 0,
    pairs: int = 0,
) -> list[str]:
    """count URLs on each site, answered after `seconds` (on the first slow_on sites, the first four after
    `first`); and `pairs` pairs of redirects on the last site to one end each, never listed: the first of each
    pair at the top of the list, the second at the bottom."""
    lines = []
    for j in range(pairs):
        sites[-1].page(f"/u{j}", "ok")
        sites[-1].redirect(f"/t{j}", f"/u{j}")
        sites[-1].redirect(f"/v{j}", f"/u{j}")
        lines.append(sites[-1].url(f"/t{j}"))
    for i in range(count):
        for n, site in enumerate(sites):
            site.slow(f"/s{i}", first if n < slow_on and i < 4 else seconds)
            lines.append(site.url(f"/s{i}"))
    # redirects to URLs listed before them: each takes its end's result, no second request
    for i in range(10):
        sites[0].redirect(f"/r{i}", f"/s{i}")
        lines.append(sites[0].url(f"/r{i}"))
    lines += [sites[-1].url(f"/v{j}") for j in range(pairs)]
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    return [str(urls)]


async def test_unset_jobs_a_list_waiting_on_answers_stays_in_the_first_process(
    tmp_path: Path, make_site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --jobs unset, the other process joins only once the first is busy: a list whose answers are slow
    in coming is checked by the first alone, with the whole of each limit, each URL once."""
    _auto_jobs(monkeypatch)
    a, b = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    inputs = _slow_list(tmp_path, [a, b], 60, 0.05)
    run = linkhound.start(inputs, host_concurrency=4, max_concurrency=8)
    assert isinstance(run, ShardedRun)
    report = await run.report()
    assert not run.split
    assert run._state is not None and not run._state._elsewhere  # nothing went to the other process
    for site in (a, b):
        assert site.peak == 4, site.host  # the whole host limit, from one process
        assert max(site.counts().values()) == 1
    assert report.summary.total == 130 and report.summary.success


async def test_unset_jobs_the_other_joins_once_the_first_is_busy_never_past_a_limit(
    tmp_path: Path, make_site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found busy (here: at once), the first process keeps its part of each limit and hands the other its share
    of the links still to read only once its own requests past that part have ended: the server never sees
    more than a host's limit, each URL is requested once, and the report is the one-process report."""
    import linkhound.shard_run

    _auto_jobs(monkeypatch)
    monkeypatch.setattr(linkhound.shard_run, "_BUSY", 0.0)
    monkeypatch.setattr(linkhound.shard_run, "_LOOK", 0.005)
    a, b, c = await make_site("127.0.0.1"), await make_site("127.0.0.2"), await make_site("127.0.0.3")
    # when the other joins (the list is still being read), a and b have as many requests in flight as their
    # whole limit, while c's quick answers keep the reading going (and so links for the other process coming).
    # The first process alone follows the redirects at the top (on c), and the other process reaches their ends
    # from redirects at the bottom: it takes the answers kept (told when it joins), no request, no false loop
    inputs = _slow_list(tmp_path, [a, b, c], 1000, 0.0, first=0.5, slow_on=2, pairs=40)
    options = dict(host_concurrency=4, max_concurrency=24)
    run = linkhound.start(inputs, **options)
    assert isinstance(run, ShardedRun)
    two = await run.report()
    assert run.split
    assert run._state is not None and len(run._state._elsewhere) > 100  # the other process checked those
    for site in (a, b, c):
        assert site.peak <= 4, site.host  # both processes together, across the moment the other joined
        assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
        site.requests.clear()
        site.peak = 0
    one = await linkhound.check(inputs, jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    assert two.summary.total == 3090


class _JoinOnCue:
    """--jobs unset, the other process joining on cue (join()): the first is never found busy before. held()
    answers a request once the other has joined (at once while no run is set: a one-process run's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import linkhound.shard_run

        _auto_jobs(monkeypatch)
        monkeypatch.setattr(linkhound.shard_run, "_BUSY", math.inf)
        monkeypatch.setattr(linkhound.shard_run, "_LOOK", 0.005)
        self._monkeypatch = monkeypatch
        self.run: ShardedRun | None = None

    def start(self, inputs: list[str], **options: Any) -> ShardedRun:
        run = linkhound.start(inputs, **options)
        assert isinstance(run, ShardedRun)
        self.run = run
        return run

    def join(self) -> None:
        import linkhound.shard_run

        self._monkeypatch.setattr(linkhound.shard_run, "_BUSY", 0.0)

    async def held(self, request: web.Request) -> web.StreamResponse:
        await until(lambda: self.run is None or self.run.split)
        return web.Response(text="ok")


async def test_unset_jobs_the_urls_queued_when_the_other_joins_go_by_shard(
    tmp_path: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URLs the first process has queued and never fetched when the other joins go to it by shard, as those
    read later do: the first, left with its part of the host's limit, keeps only its share of them (before, it
    kept every one, and checked them at its part of the limit while the other had little to do). Only those in
    flight then stay with it whatever their shard; the server still never sees more than the limit, each URL
    once, and the report is the one-process report."""
    cue = _JoinOnCue(monkeypatch)  # (not busy until the queue below is full)

    site.prefixes["/p"] = cue.held
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(site.url(f"/p{i}") for i in range(400)) + "\n")
    options = dict(host_concurrency=4, max_concurrency=4)
    run = cue.start([str(urls)], **options)
    reporting = asyncio.ensure_future(run.report())
    # the whole limit in flight, and the reading held with a queue ahead of it (inputs still to read): busy now
    await until(lambda: site.inflight == 4 and run._state is not None and run._state.queued >= 32)
    cue.join()
    two = await asyncio.wait_for(reporting, HANG_GUARD)
    assert run.split and run._state is not None
    mine = Shard(0, 2).owns
    # the other shard's URLs checked here: those in flight as the other joined, and those taken back at the end
    kept = sum(not mine(key) for key in run._state._records) - run.taken_back
    assert 0 <= kept <= 4, (kept, run.taken_back)
    assert run.handed_over >= 8
    assert site.peak <= 4
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    site.requests.clear()
    cue.run = None  # (the one-process run's requests are answered at once)
    one = await linkhound.check([str(urls)], jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    assert two.summary.total == 400 and two.summary.success


async def test_unset_jobs_hops_fetched_before_the_other_joins_are_not_asked_again_there(
    tmp_path: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hops the first process's redirects fetched before the other joined, and those they are fetching as it
    joins, are told to the other then, as it would have been told them had it been there: a hop listed on its own
    further down, of the other's shard, takes the way its redirect went, or waits for it (no second request).
    Before, the other asked each of them again."""
    cue = _JoinOnCue(monkeypatch)  # (not busy until the hops below are reached)
    other = Shard(1, 2)

    def hop_path(j: int) -> str:  # a hop of the other process's shard
        return next(p for n in range(1000) if other.owns(canonical_key(site.url(p := f"/h{j}-{n}"))))

    hops = [hop_path(j) for j in range(8)]
    after = [f"/p{i}" for i in range(200, 300)]  # listed after the hops
    theirs = [p for p in after if other.owns(canonical_key(site.url(p)))]

    async def in_flight(request: web.Request) -> web.StreamResponse:  # (once the other has its hop's claim)
        await until(lambda: cue.run is None or all(site.hits(p) for p in theirs))  # (a few maybe asked back, here)
        return web.Response(status=301, headers={"Location": request.path.replace("/h", "/u").split("-")[0]})

    for j, hop in enumerate(hops):
        site.redirect(f"/t{j}", hop)
        site.page(f"/u{j}", "ok")
        if j < 6:  # fetched before the other joins
            site.redirect(hop, f"/u{j}")
        else:  # in flight as it joins, until the other has taken the hop's own claim
            site.handler(hop, in_flight)
    site.prefixes["/p"] = cue.held
    lines = [site.url(f"/t{j}") for j in range(8)] + [site.url(f"/p{i}") for i in range(200)]
    lines += [site.url(hop) for hop in hops] + [site.url(p) for p in after]
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    # (the first process's part of 32 is 8: the redirects waiting at their hops take two, once it joins)
    options = dict(host_concurrency=32, max_concurrency=32)
    run = cue.start([str(urls)], **options)
    reporting = asyncio.ensure_future(run.report())
    await until(lambda: all(site.hits(f"/u{j}") for j in range(6)) and all(site.hits(h) for h in hops[6:])
                and site.inflight == 32 and run._state is not None and run._state.queued >= 64)
    assert all(run._state.depth(canonical_key(site.url(hop))) is None for hop in hops)  # (not read yet)
    cue.join()
    two = await asyncio.wait_for(reporting, HANG_GUARD)
    assert run.split
    assert max(site.counts().values()) == 1, [k for k, n in site.counts().items() if n > 1]
    site.requests.clear()
    cue.run = None
    one = await linkhound.check([str(urls)], jobs=1, **options)
    assert max(site.counts().values()) == 1
    assert _comparable(two) == _comparable(one)
    assert two.summary.total == 316


async def test_unset_jobs_the_other_starts_its_buckets_no_fuller_than_the_first_left_them(
    tmp_path: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host's burst is spent by the first process alone; when the other joins, its part of the bucket starts
    as empty as the first's is (a line tells it how full), so the server never sees more than the burst plus
    the rate over any stretch of time. Before, the other's part started full: 15 more requests at once."""
    cue = _JoinOnCue(monkeypatch)  # (not busy until the burst is spent)

    site.prefixes["/p"] = cue.held
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(site.url(f"/p{i}") for i in range(400)) + "\n")
    rate, burst = 2.0, 20
    # (every global slot in flight: the reading is held, inputs still to read, so the other can join)
    run = cue.start([str(urls)], host_rate=rate, host_burst=burst, host_concurrency=burst, max_concurrency=burst)
    reporting = asyncio.ensure_future(run.report())
    await until(lambda: site.inflight == burst)
    cue.join()
    await until(lambda: run.split)
    await asyncio.sleep(1.5)  # (the other has had its links a while: with a full part, it sends them at once)
    run.stop()
    await asyncio.wait_for(reporting, HANG_GUARD)
    assert run._state is not None and run._state._elsewhere  # (the other had links of its own)
    times = sorted(r.at for r in site.requests)
    over = [(j - i + 1, times[j] - times[i]) for i in range(len(times)) for j in range(i, len(times))
            if j - i + 1 > burst + rate * (times[j] - times[i]) + 1]
    assert not over, over[:5]
    assert max(site.counts().values()) == 1


async def test_jobs_a_process_out_of_its_own_urls_takes_back_its_share_of_the_others(
    tmp_path: Path, make_site: SiteFactory
) -> None:
    """Once the inputs are read, the first process, out of its own URLs, takes back its share of those the other
    still has queued, again until too few are left: each URL is still requested once, within the host limit, and
    the report is the one-process report (redirects in either process to URLs that changed hands included)."""
    a = await make_site("127.0.0.1")
    other = Shard(1, 2)
    lines = []
    for i in range(300):
        path = f"/s{i}"
        a.slow(path, 0.02 if other.owns(canonical_key(a.url(path))) else 0.0)  # the other process's are slow
        lines.append(a.url(path))
    for i in range(20):
        a.redirect(f"/r{i}", f"/s{i}")
        lines.append(a.url(f"/r{i}"))
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    options = dict(host_concurrency=8, max_concurrency=8)

    run = linkhound.start([str(urls)], jobs=2, **options)
    assert isinstance(run, ShardedRun)
    two = await run.report()
    assert run.taken_back >= 16
    assert run._state is not None
    assert sum(other.owns(key) for key in run._state._records) == run.taken_back  # checked here instead
    assert a.peak <= 8
    assert max(a.counts().values()) == 1, [k for k, n in a.counts().items() if n > 1]
    a.requests.clear()

    one = await linkhound.check([str(urls)], jobs=1, **options)
    assert _comparable(two) == _comparable(one)
    assert two.summary.total == 320


async def test_a_shard_gives_back_the_first_process_share_of_its_queue_and_nothing_it_fetched() -> None:
    """ShardState.give_back: the first process's share of each host's URLs queued and never fetched (not those
    claimed, nor one queued again for a raised plan), held elsewhere from then on, and taken back there with
    their depth; nothing when fewer than `least` would go."""
    here, first = Shard(1, 2), Shard(0, 2)
    hosts = ["127.0.0.2:1", "127.0.0.3:1"]
    urls = [f"http://{host}/p{i}" for i in range(400) for host in hosts]
    found = [Found(url, url, url[7:18], 1, False) for url in urls if here.owns(url)]
    state = here.state()(Limits(), lambda host: None)
    assert len(await state.add(found)) == len(found) > 400
    fetched = [await state.claim(host) for host in hosts]
    raised = await state.claim(hosts[0])
    assert raised is not None and all(fetched)
    await state.done(raised, Plan.CHECK)
    await state.add([Found(raised.key, raised.url, raised.host, 1, False, body=True)])  # again, for its body
    again = state.record(raised.key)
    assert again is not None and again.progress is Progress.QUEUED
    queued, unfinished = state.queued, state.unfinished

    given = state.give_back(16)
    assert abs(len(given) - queued * first.share) <= 2
    assert {f.host for f in given} == set(hosts)  # a share of each host's queue
    assert {f.key for f in given}.isdisjoint({c.key for c in [*fetched, raised] if c is not None})
    assert state.queued == queued - len(given) and state.unfinished == unfinished - len(given)
    assert all(state.record(f.key) is None and state.depth(f.key) == 1 for f in given)  # held elsewhere
    assert state.give_back(state.queued) == []  # (too few would go)

    taker = first.state()(Limits(), lambda host: None)
    await taker.add(found)  # (the first process reads every link: another shard's are held elsewhere)
    claims = await taker.take_back(given)
    assert [c.key for c in claims] == [f.key for f in given] and taker.queued == len(given)


@pytest.mark.parametrize("end", ["stop", "cancel"])
async def test_jobs_stopped_while_taking_urls_back_ends_and_reports_what_was_checked(
    tmp_path: Path, site: Site, end: str
) -> None:
    """A run stopped (or cancelled) once the first process has taken URLs back ends at once: no ask is left
    waiting, and what was checked is reported, each URL requested once."""
    other = Shard(1, 2)
    paths = [f"/s{i}" for i in range(400)]
    for p in paths:
        site.slow(p, 0.05 if other.owns(canonical_key(site.url(p))) else 0.0)
    (tmp_path / "urls.txt").write_text("\n".join(site.url(p) for p in paths))
    run = linkhound.start(str(tmp_path / "urls.txt"), jobs=2, host_concurrency=4, max_concurrency=4)
    assert isinstance(run, ShardedRun)
    reporting = asyncio.ensure_future(run.report())
    await until(lambda: run.taken_back > 0 or reporting.done())
    assert not reporting.done()  # (the other's slow URLs: seconds of work left)
    getattr(run, end)()
    report = await asyncio.wait_for(reporting, HANG_GUARD)
    assert report.summary.interrupted
    urls = [r.url for r in report.results]
    assert len(urls) == len(set(urls)) and len(urls) < len(paths)
    assert max(site.counts().values()) == 1
