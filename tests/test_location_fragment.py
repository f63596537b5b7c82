"""A #fragment named by a redirect's Location (RFC 9110 10.2.2): with --check-fragments, the anchor the browser
scrolls to is looked for on the page the redirect ends at. A Location's fragment replaces the link's; a Location
without one keeps the fragment in effect before it (the link's, or an earlier Location's)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import linkhound
from cli_run import HANG_GUARD
from linkhound import Report, Status
from linkhound.shard_run import ShardedRun
from server import Site, html, until

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on each HTTP stack

PAGE = '<h1>B</h1><h2 id="present">here</h2>'
NAMED = "no anchor #missing (named by the redirect's Location)"
LINKS = ["/a", "/c", "/d#present", "/d#absent", "/e#missing", "/f", "/f2", "/h", "/h2"]
# what the report says of each link (the link's own #fragment is a result of its own only where it is checked)
EXPECTED = {
    "/a": (Status.BROKEN, NAMED),  # -> /b#missing
    "/c": (Status.OK, "OK"),  # -> /b#present
    "/d": (Status.OK, "OK"),  # -> /b: the link's #present kept
    "/d#absent": (Status.BROKEN, "no anchor #absent"),  # -> /b: the link's #absent kept, and missing
    "/e": (Status.OK, "OK"),  # #missing -> /b#present: the Location's wins
    "/f": (Status.OK, "OK"),  # -> /g#present -> /b: kept along the chain
    "/f2": (Status.BROKEN, NAMED),  # -> /g2#missing -> /b
    "/h": (Status.BROKEN, NAMED),  # -> /i -> /b#missing
    "/h2": (Status.OK, "OK"),  # -> /i2#missing -> /b#present: the last one wins
}


def _serve(site: Site) -> None:
    site.page("/", html(*LINKS))
    site.page("/b", PAGE)
    for path, location in [("/a", "/b#missing"), ("/c", "/b#present"), ("/d", "/b"), ("/e", "/b#present"),
                           ("/f", "/g#present"), ("/g", "/b"), ("/f2", "/g2#missing"), ("/g2", "/b"),
                           ("/h", "/i"), ("/i", "/b#missing"), ("/h2", "/i2#missing"), ("/i2", "/b#present")]:
        site.redirect(path, location)


def _verdicts(site: Site, report: Report) -> dict[str, tuple[Status, str]]:
    return {r.url.removeprefix(site.base): (r.status, r.reason) for r in report.results if r.url != site.url("/")}


def _whole(report: Report) -> list[tuple[Any, ...]]:
    return sorted((r.url, r.status, r.code, r.reason, r.redirects, tuple(sorted(r.references)))
                  for r in report.results)


async def test_a_fragment_named_by_a_location_is_checked_on_the_page_the_redirect_ends_at(site: Site) -> None:
    _serve(site)
    report = await linkhound.check([site.url("/")], check_fragments=True)
    assert _verdicts(site, report) == EXPECTED
    results = {r.url: r for r in report.results}
    assert results[site.url("/a")].redirects == (site.url("/b#missing"),)  # where the browser goes
    assert results[site.url("/a")].code == 200
    assert results[site.url("/h2")].redirects == (site.url("/i2#missing"), site.url("/b#present"))
    # every URL asked once; a link without a #fragment is asked with HEAD up to the hop a Location named one at,
    # with GET from there (the end's anchors come with its answer), and the end /b once for every redirect
    assert site.counts() == Counter({
        ("GET", "/"): 1, ("HEAD", "/a"): 1, ("HEAD", "/c"): 1, ("GET", "/d"): 1, ("GET", "/e"): 1,
        ("HEAD", "/f"): 1, ("GET", "/g"): 1, ("HEAD", "/f2"): 1, ("GET", "/g2"): 1, ("HEAD", "/h"): 1,
        ("HEAD", "/i"): 1, ("HEAD", "/h2"): 1, ("GET", "/i2"): 1, ("GET", "/b"): 1,
    })
    assert not any("#" in seen.path for seen in site.requests)  # a fragment is never sent


async def test_without_check_fragments_a_location_fragment_changes_nothing(site: Site) -> None:
    _serve(site)
    report = await linkhound.check([site.url("/")])  # (remote pages: fragments off by default)
    assert report.summary.success
    assert {r.url.removeprefix(site.base) for r in report.results} == {"/", "/a", "/c", "/d", "/e", "/f", "/f2",
                                                                         "/h", "/h2"}
    assert not any("#" in hop for r in report.results for hop in r.redirects)
    assert {path for method, path in site.counts() if method == "GET"} == {"/"}  # HEAD sufficed everywhere else
    assert max(site.counts().values()) == 1


async def test_a_location_fragment_of_a_url_checked_on_its_own_uses_its_anchors(site: Site) -> None:
    # /b2 is linked on its own (a leaf: HEAD); redirects that reach it take its result, and need its anchors: it is
    # fetched with GET for them, once
    site.page("/", html("/b2", "/j", "/k", "/m#missing"))
    site.page("/b2", PAGE)
    site.redirect("/j", "/b2#missing")
    site.redirect("/k", "/b2#present")
    site.redirect("/m", "/b2")
    report = await linkhound.check([site.url("/")], check_fragments=True)
    assert _verdicts(site, report) == {
        "/b2": (Status.OK, "OK"), "/j": (Status.BROKEN, NAMED), "/k": (Status.OK, "OK"),
        "/m#missing": (Status.BROKEN, "no anchor #missing"),
    }
    assert site.hits("/b2", "GET") == 1 and site.hits("/b2", "HEAD") <= 1
    assert site.hits("/j") == site.hits("/k") == site.hits("/m") == 1


async def test_a_location_fragment_is_judged_alike_in_two_processes(tmp_path: Path, site: Site) -> None:
    _serve(site)
    lines = [site.url(link) for link in LINKS]
    for i in range(40):  # (work for both processes)
        site.page(f"/s{i}", "ok")
        lines.append(site.url(f"/s{i}"))
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(lines) + "\n")
    run = linkhound.start([str(urls)], jobs=2, check_fragments=True, max_concurrency=4, host_concurrency=4)
    assert isinstance(run, ShardedRun)
    two = await asyncio.wait_for(run.report(), HANG_GUARD)
    assert {k: v for k, v in _verdicts(site, two).items() if not k.startswith("/s")} == EXPECTED
    assert not any("#" in seen.path for seen in site.requests)
    site.requests.clear()
    one = await linkhound.check([str(urls)], jobs=1, check_fragments=True, max_concurrency=4, host_concurrency=4)
    assert _whole(two) == _whole(one)


async def test_a_location_fragment_verdict_is_kept_in_the_state_and_resumed(site: Site, tmp_path: Path,
                                                                           both_clients: str) -> None:
    if both_clients == "reqwest":
        # run.cancel() below must end the first session's requests: with reqwest, about one run in ten under load
        # went on to --timeout instead (a GET waiting for its answer), and those links were kept as timeouts.
        # An open bug of the reqwest stack, not of what this test is about
        pytest.skip("reqwest: a cancel may be passed over while a GET waits for its answer (open)")
    _serve(site)
    gate = asyncio.Event()  # /b answers only in the second session: the first is stopped while it waits

    async def end(request: web.Request) -> web.StreamResponse:
        await gate.wait()
        return web.Response(text=PAGE, content_type="text/html")

    site.handler("/b", end)
    state = str(tmp_path / "state")
    run = linkhound.start([site.url("/")], recursive=True, check_fragments=True, state=state)
    task = asyncio.ensure_future(run.report())
    await until(lambda: site.hits("/b") > 0)
    run.stop()
    run.cancel()
    assert (await asyncio.wait_for(task, HANG_GUARD)).summary.interrupted
    gate.set()
    resumed = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert _verdicts(site, resumed) == EXPECTED
    site.requests.clear()
    again = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, state=state)
    assert not site.asked()  # a finished crawl: reported from the file
    assert _whole(again) == _whole(resumed)
    fresh = await linkhound.check([site.url("/")], recursive=True, check_fragments=True)  # (in memory)
    assert _whole(fresh) == _whole(resumed)


async def test_a_location_fragment_in_a_distributed_crawl(site: Site, redis_url: str, tmp_path: Path) -> None:
    _serve(site)
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "worker", "--redis", redis_url, "--job", "loc",
        stderr=asyncio.subprocess.PIPE)
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "loc", "--no-config", "--no-robots",
        "--check-fragments", "--format", "json", "--output", str(out), site.url("/"), stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(lead.communicate(), HANG_GUARD)
    assert lead.returncode == 2, err.decode()  # broken links found
    await asyncio.wait_for(worker.communicate(), HANG_GUARD)
    report = json.loads(out.read_text())
    got = {r["url"].removeprefix(site.base): (r["status"], r["reason"]) for r in report["results"]}
    single = await linkhound.check([site.url("/")], recursive=True, check_fragments=True, robots=False)
    assert got == {r.url.removeprefix(site.base): (r.status.value, r.reason) for r in single.results}
    assert got["/a"] == ("broken", NAMED) and got["/e"] == ("ok", "OK")


async def test_a_location_fragment_is_judged_again_from_the_cache(site: Site, tmp_path: Path) -> None:
    _serve(site)
    options: dict[str, Any] = dict(check_fragments=True, cache=True, cache_file=str(tmp_path / "cache.sqlite"))
    first = await linkhound.check([site.url("/")], **options)
    assert _verdicts(site, first) == EXPECTED
    site.requests.clear()
    second = await linkhound.check([site.url("/")], **options)
    assert _verdicts(site, second) == EXPECTED
    assert set(site.asked()) == {"/"}  # the redirects' answers, with their ends' anchors, came from the cache
    assert all(r.cached for r in second.results if r.url != site.url("/"))
