"""--sitemap-drift against real servers: orphans (listed, never reached), unlisted (crawled, not listed),
redirected entries, sitemap indexes and gzip, discovery through robots.txt, and what the server saw."""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from cli_run import HANG_GUARD, arun, run
from linkhound import OptionError, Status
from server import Site, html, urlset
from test_distributed import _finish, _worker


def build(site: Site) -> None:
    """/ -> /a, /b/ ; /b/ -> /c (not listed) ; /orphan and /gone listed but never linked; /old -> /a listed."""
    site.page("/", html("/a", "/b/"))
    site.page("/a", html("/"))
    site.page("/b/", html("/c"))
    site.page("/c", html())
    site.page("/orphan", html("/orphan-child"))  # never crawled: its link must not be requested
    site.redirect("/old", "/a")
    site.redirect("/moved", "/elsewhere")
    site.page("/elsewhere", html())
    # listed as sitemaps write them: /b without its slash, the scheme in capitals, an escaped letter
    listed = [site.url("/"), site.url("/a").replace("http://", "HTTP://"), site.url("/%62"), site.url("/orphan"),
              site.url("/gone"), site.url("/old"), site.url("/moved"), "http://127.0.0.9/out-of-scope"]
    site.page("/sitemap.xml", urlset(*listed), content_type="application/xml")


async def test_orphans_unlisted_and_redirected_are_reported(site: Site) -> None:
    build(site)
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.sitemaps == (site.url("/sitemap.xml"),)
    assert drift.orphans == (site.url("/gone"), site.url("/moved"), site.url("/orphan"))
    assert drift.unlisted == (site.url("/c"),)
    assert drift.redirected == ((site.url("/moved"), site.url("/elsewhere")), (site.url("/old"), site.url("/a")))
    assert drift.listed == 7
    assert drift.problems == ()
    by_url = {r.url: r for r in report.results}
    # orphans are checked as links, their sitemap as referrer; a broken one is a broken link
    assert by_url[site.url("/gone")].status is Status.BROKEN
    assert [ref.source for ref in by_url[site.url("/gone")].references] == [site.url("/sitemap.xml")]
    assert by_url[site.url("/orphan")].status is Status.OK
    # reached pages get the sitemap as one more referrer
    assert site.url("/sitemap.xml") in {ref.source for ref in by_url[site.url("/a")].references}
    # the sitemap and robots.txt once each; orphans checked, never crawled; out-of-scope entries left alone
    assert site.hits("/sitemap.xml") == 1
    assert site.hits("/robots.txt") == 1
    assert site.hits("/orphan", "GET") == 0
    assert site.hits("/orphan-child") == 0
    assert site.hits("/orphan") == 1
    assert all(r.url != "http://127.0.0.9/out-of-scope" for r in report.results)


async def test_robots_sitemap_index_and_gzip_are_followed(site: Site) -> None:
    site.page("/", html("/a"))
    site.page("/a", html())
    site.page("/robots.txt", f"User-agent: *\nAllow: /\nSitemap: {site.url('/maps/index.xml')}\n",
              content_type="text/plain")
    index = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             f"<sitemap><loc>{site.url('/maps/one.xml.gz')}</loc></sitemap>"
             f"<sitemap><loc>{site.url('/maps/two.xml')}</loc></sitemap>"
             f"<sitemap><loc>{site.url('/maps/one.xml.gz')}</loc></sitemap></sitemapindex>")
    site.page("/maps/index.xml", index, content_type="application/xml")
    gz = gzip.compress(urlset(site.url("/"), site.url("/lost")).encode())

    async def one(request: web.Request) -> web.StreamResponse:
        return web.Response(body=gz, content_type="application/gzip")

    site.handler("/maps/one.xml.gz", one)
    site.page("/maps/two.xml", urlset(site.url("/a"), site.url("/lost-too")), content_type="application/xml")
    site.page("/lost", html())
    site.page("/lost-too", html())
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.sitemaps == (site.url("/maps/index.xml"), site.url("/maps/one.xml.gz"), site.url("/maps/two.xml"))
    assert drift.orphans == (site.url("/lost"), site.url("/lost-too"))
    assert drift.unlisted == ()
    for path in ("/robots.txt", "/maps/index.xml", "/maps/one.xml.gz", "/maps/two.xml"):
        assert site.hits(path) == 1, path
    assert site.hits("/sitemap.xml") == 0  # robots.txt named the sitemap: no guessing


async def test_the_sitemap_read_beside_the_crawl_hands_its_slot_back_to_the_crawl(site: Site) -> None:
    """At a cap of one, the sitemap's request can hold the host's only slot when the crawl asks for its next
    page: the page waits for it, then goes (the crawl used to wait for ever: nothing told it the slot was free)."""
    async def slow_map(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.3)
        return web.Response(text=urlset(site.url("/"), site.url("/p0")), content_type="application/xml")

    site.handler("/sitemap.xml", slow_map)
    site.page("/", html(*[f"/p{i}" for i in range(10)]))
    for i in range(10):
        site.page(f"/p{i}", html("/"))
    report = await asyncio.wait_for(linkhound.check(
        [site.url("/")], recursive=True, sitemap_drift=True, host_concurrency=1, robots=False), HANG_GUARD)
    assert report.summary.pages == 11 and report.summary.success
    assert site.hits("/sitemap.xml") == 1 and all(n == 1 for n in site.counts().values())
    assert site.peak == 1
    assert report.sitemap_drift is not None and report.sitemap_drift.unlisted


async def test_without_robots_rules_robots_txt_still_names_the_sitemap(site: Site) -> None:
    site.page("/", html("/private/a"))
    site.page("/private/a", html())
    site.page("/robots.txt", f"User-agent: *\nDisallow: /private/\nSitemap: {site.url('/map.xml')}\n",
              content_type="text/plain")
    site.page("/map.xml", urlset(site.url("/"), site.url("/private/a"), site.url("/private/b")),
              content_type="application/xml")
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True, robots=False)
    assert report.sitemap_drift is not None
    assert report.sitemap_drift.orphans == (site.url("/private/b"),)
    assert site.hits("/robots.txt") == 1 and site.hits("/map.xml") == 1
    assert site.hits("/private/a", "GET") == 1  # crawled: its Disallow not obeyed


async def test_a_host_robots_txt_keeps_off_is_not_asked_for_its_sitemap(site: Site) -> None:
    site.status("/robots.txt", 503)
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True, max_retries=0)
    assert report.sitemap_drift is not None
    assert report.sitemap_drift.problems == (
        f"{site.url('')}/robots.txt keeps the crawl off the host: its sitemap not read",)
    assert site.hits("/sitemap.xml") == 0


async def test_a_given_sitemap_url_or_file_is_used_and_no_other(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a"))
    site.page("/a", html())
    site.page("/sitemap.xml", urlset(site.url("/a")), content_type="application/xml")
    site.page("/robots.txt", f"Sitemap: {site.url('/sitemap.xml')}\n", content_type="text/plain")
    site.page("/mine.xml", urlset(site.url("/"), site.url("/nowhere")), content_type="application/xml")
    report = await linkhound.check([site.url("/")], recursive=True, sitemap=site.url("/mine.xml"))
    assert report.sitemap_drift is not None
    assert report.sitemap_drift.orphans == (site.url("/nowhere"),)
    assert report.sitemap_drift.unlisted == (site.url("/a"),)
    assert site.hits("/mine.xml") == 1 and site.hits("/sitemap.xml") == 0

    local = tmp_path / "sitemap.xml"
    local.write_text(urlset(site.url("/"), site.url("/a"), site.url("/from-file")))
    report = await linkhound.check([site.url("/")], recursive=True, sitemap=str(local))
    assert report.sitemap_drift is not None
    assert report.sitemap_drift.sitemaps == (str(local),)
    assert report.sitemap_drift.orphans == (site.url("/from-file"),)
    assert report.sitemap_drift.unlisted == ()


async def test_off_by_default_costs_nothing(site: Site) -> None:
    build(site)
    report = await linkhound.check([site.url("/")], recursive=True)
    assert report.sitemap_drift is None
    assert site.hits("/sitemap.xml") == 0
    assert site.hits("/orphan") == 0 and site.hits("/gone") == 0 and site.hits("/old") == 0
    plain = sorted(p.url for p in report.pages)
    site.requests.clear()
    drifting = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    assert sorted(p.url for p in drifting.pages) == plain  # the sitemap adds checks, never pages


async def test_missing_sitemap_is_a_problem_not_a_list_of_every_page(site: Site) -> None:
    site.page("/", html("/a"))
    site.page("/a", html())
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.sitemaps == ()
    assert drift.problems == (f"{site.url('/sitemap.xml')}: answered 404",)
    assert drift.orphans == () and drift.unlisted == ()
    assert site.hits("/sitemap.xml") == 1


async def test_one_sitemap_of_an_index_unread_calls_no_page_unlisted(site: Site) -> None:
    site.page("/", html("/a", "/b"))
    site.page("/a", html())
    site.page("/b", html())  # listed by /s2.xml, which can't be read
    site.page("/sitemap.xml", '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              f"<sitemap><loc>{site.url('/s1.xml')}</loc></sitemap><sitemap><loc>{site.url('/s2.xml')}</loc></sitemap>"
              "</sitemapindex>", content_type="application/xml")
    site.page("/s1.xml", urlset(site.url("/"), site.url("/a"), site.url("/lost")), content_type="application/xml")
    site.page("/lost", html())
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.sitemaps == (site.url("/sitemap.xml"), site.url("/s1.xml"))
    assert drift.problems == (f"{site.url('/s2.xml')}: answered 404",)
    assert drift.unlisted == ()
    assert drift.orphans == (site.url("/lost"),)  # what was read is still compared
    assert site.hits("/s2.xml") == 1


async def test_more_sitemaps_than_are_read_call_no_page_unlisted(site: Site) -> None:
    site.page("/", html("/a", "/b"))
    site.page("/a", html())
    site.page("/b", html())  # listed by the last sitemap of the index, past the 1,000 read
    maps = [site.url(f"/m/{i}.xml") for i in range(1001)]
    site.page("/sitemap.xml", '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              + "".join(f"<sitemap><loc>{m}</loc></sitemap>" for m in maps) + "</sitemapindex>",
              content_type="application/xml")

    async def one(request: web.Request) -> web.StreamResponse:
        listed = site.url("/b" if request.path == "/m/1000.xml" else "/a")
        return web.Response(text=urlset(site.url("/"), listed), content_type="application/xml")

    site.prefixes["/m/"] = one
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert len(drift.sitemaps) == 1000
    assert drift.problems == ("more than 1000 sitemaps: the rest not read",)
    assert drift.unlisted == ()
    assert site.hits("/m/998.xml") == 1 and site.hits("/m/999.xml") == 0


async def test_a_sitemap_cut_at_max_body_size_is_a_problem_and_calls_no_page_unlisted(site: Site) -> None:
    paths = [f"/p{i}" for i in range(6)]
    site.page("/", html(*paths))
    for path in paths:
        site.page(path, html())
    locs = ["".join(f"<url><loc>{site.url(p)}</loc></url>" for p in part) for part in (["/", *paths[:3]], paths[3:])]
    sitemap = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
               f"{locs[0]}<!-- {'x' * 3000} -->{locs[1]}</urlset>")  # /p3 to /p5 listed past the cut
    site.page("/sitemap.xml", sitemap, content_type="application/xml")
    report = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True, max_body_size=2000)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.problems == (
        f"{site.url('/sitemap.xml')}: cut at --max-body-size 2000: the URLs it lists past that not read",)
    assert drift.sitemaps == (site.url("/sitemap.xml"),)
    assert drift.listed == 4  # those before the cut
    assert drift.unlisted == () and drift.orphans == ()
    assert report.summary.pages == 7  # the pages, small, are whole


async def test_a_page_linked_beyond_max_depth_is_reached_not_orphaned(site: Site) -> None:
    site.page("/", html("/1"))
    site.page("/1", html("/2"))
    site.page("/2", html("/3"))
    site.page("/3", html("/4"))
    site.page("/sitemap.xml", urlset(*(site.url(p) for p in ("/", "/1", "/2", "/3", "/4"))),
              content_type="application/xml")
    report = await linkhound.check([site.url("/")], recursive=True, max_depth=1, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    # /2 is linked from a crawled page (checked, not crawled: beyond --max-depth); /3 and /4 never met
    assert drift.orphans == (site.url("/3"), site.url("/4"))
    assert sorted(p.url for p in report.pages) == [site.url("/"), site.url("/1")]
    assert site.hits("/2", "GET") == 0 and site.hits("/3", "GET") == 0  # listing them crawls nothing more


async def test_a_seed_folder_listed_without_its_slash_is_listed(site: Site) -> None:
    """/docs is outside the scope of a crawl seeded at /docs/, but it is the same page: it counts."""
    site.page("/docs/", html("/docs/a", "/docs/b"))
    site.page("/docs/a", html())
    site.page("/docs/b", html())
    site.redirect("/docs", "/docs/")
    site.page("/sitemap.xml", urlset(site.url("/docs"), site.url("/docs/a")), content_type="application/xml")
    report = await linkhound.check([site.url("/docs/")], recursive=True, sitemap_drift=True)
    drift = report.sitemap_drift
    assert drift is not None
    assert drift.listed == 2
    assert drift.orphans == ()
    assert drift.unlisted == (site.url("/docs/b"),)
    assert drift.redirected == ((site.url("/docs"), site.url("/docs/")),)


def chain(site: Site) -> None:
    """/ -> /a -> /b -> /c -> /d; the sitemap lists / and /old, which redirects to /a."""
    site.page("/", html("/a"))
    site.page("/a", html("/b"))
    site.page("/b", html("/c"))
    site.page("/c", html("/d"))
    site.page("/d", html())
    site.redirect("/old", "/a")
    site.page("/sitemap.xml", urlset(site.url("/"), site.url("/old")), content_type="application/xml")


def seen(report: linkhound.Report) -> tuple[list[tuple[str, int]], dict[str, tuple[Status, int]]]:
    """The pages crawled and every result, with their depths."""
    return sorted((p.url, p.depth) for p in report.pages), {r.url: (r.status, r.depth) for r in report.results}


@pytest.mark.parametrize("state", [False, True])
async def test_a_listed_redirect_to_a_crawled_page_moves_no_depth_and_crawls_nothing(
    site: Site, tmp_path: Path, state: bool
) -> None:
    """Checked once the crawl is over, /old reaches /a: /a keeps its depth (it went to 0, /b to 1, and with
    --max-depth 1 /b was crawled and /c checked)."""
    chain(site)
    where = {"state": str(tmp_path / "plain")} if state else {}
    plain_pages, plain = seen(await linkhound.check([site.url("/")], recursive=True, max_depth=1, **where))
    site.requests.clear()
    where = {"state": str(tmp_path / "drift")} if state else {}
    report = await linkhound.check([site.url("/")], recursive=True, max_depth=1, sitemap_drift=True, **where)
    pages, results = seen(report)
    assert plain_pages == [(site.url("/"), 0), (site.url("/a"), 1)]
    assert pages == plain_pages
    assert results.pop(site.url("/old")) == (Status.OK, 0)  # the one URL the sitemap adds (shown at 0, as before)
    assert results == plain
    assert site.hits("/b", "GET") == 0 and site.hits("/c") == 0
    assert report.sitemap_drift is not None
    assert report.sitemap_drift.redirected == ((site.url("/old"), site.url("/a")),)
    assert report.sitemap_drift.orphans == ()


async def test_orphans_are_no_trap(site: Site) -> None:
    """A folder of more orphans than --max-path-variants: never crawled, so no "trap suspected" note."""
    site.page("/", html("/a"))
    site.page("/a", html())
    for i in range(4):
        site.page(f"/p/{i}", html())
    site.page("/sitemap.xml", urlset(*(site.url(f"/p/{i}") for i in range(4))), content_type="application/xml")
    plain = await linkhound.check([site.url("/")], recursive=True, max_path_variants=2)
    report = await linkhound.check([site.url("/")], recursive=True, max_path_variants=2, sitemap_drift=True)
    assert report.sitemap_drift is not None and len(report.sitemap_drift.orphans) == 4
    assert report.summary.caps == plain.summary.caps == ()


@pytest.mark.parametrize("concurrency", [1, 16])
async def test_the_same_drift_whatever_the_order_and_with_sqlite_state(
    site: Site, tmp_path: Path, concurrency: int
) -> None:
    build(site)
    memory = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True,
                                   max_concurrency=concurrency)
    sqlite = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True,
                                   max_concurrency=concurrency, state=str(tmp_path / "crawl"))
    assert memory.sitemap_drift == sqlite.sitemap_drift
    assert memory.sitemap_drift is not None and memory.sitemap_drift.orphans


async def test_a_resumed_crawl_finds_the_same_orphans(site: Site, tmp_path: Path) -> None:
    build(site)
    state = str(tmp_path / "crawl")
    first = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True, state=state)
    site.requests.clear()
    # its state now holds the orphans (checked last time): they are still orphans, not reached pages
    again = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True, state=state)
    assert first.sitemap_drift is not None and first.sitemap_drift.orphans
    assert again.sitemap_drift == first.sitemap_drift
    assert sorted(r.path for r in site.requests) == ["/robots.txt", "/sitemap.xml"]  # nothing checked twice
    gone = next(r for r in again.results if r.url == site.url("/gone"))
    assert len(gone.references) == 1  # the sitemap's reference, once


def test_drift_needs_a_crawl() -> None:
    with pytest.raises(OptionError, match="--sitemap-drift: needs -r"):
        linkhound.Settings(sitemap_drift=True)
    with pytest.raises(OptionError, match="--sitemap: 'nope.xml' is neither"):
        linkhound.Settings(recursive=True, sitemap="nope.xml")


async def test_a_distributed_crawl_reports_the_same_drift(site: Site, redis_url: str, tmp_path: Path) -> None:
    build(site)
    for i in range(40):  # enough pages for the worker to take some
        site.page(f"/p/{i}", html(f"/p/{(i + 1) % 40}"))
    site.page("/c", html("/p/0"))
    single = await linkhound.check([site.url("/")], recursive=True, sitemap_drift=True)
    site.requests.clear()
    worker = await _worker(redis_url, "drift")
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--sitemap-drift", "--redis", redis_url, "--job", "drift",
        "--no-config", "--format", "json", "--output", str(out), site.url("/"), stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 2, err  # /gone, listed and broken
    assert (await _finish(worker))[0] == 0
    drift = json.loads(out.read_text())["sitemap_drift"]
    assert single.sitemap_drift is not None
    assert drift["orphans"] == list(single.sitemap_drift.orphans)
    assert drift["unlisted"] == list(single.sitemap_drift.unlisted)
    assert site.hits("/sitemap.xml") == 1  # read by the process that writes the report only
    assert site.hits("/orphan") == 1 and site.hits("/orphan-child") == 0


async def test_a_listed_redirect_moves_no_depth_in_a_distributed_crawl(
    site: Site, redis_url: str, tmp_path: Path
) -> None:
    """The same as in one process, with the crawl state in Redis and a worker that may be the one checking /old."""
    chain(site)
    plain_pages, plain = seen(await linkhound.check([site.url("/")], recursive=True, max_depth=1))
    site.requests.clear()
    worker = await _worker(redis_url, "chain")
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--max-depth", "1", "--sitemap-drift", "--redis", redis_url,
        "--job", "chain", "--no-config", "--format", "json", "--output", str(out), site.url("/"),
        stderr=asyncio.subprocess.PIPE,
    )
    code, err = await _finish(lead)
    assert code == 0, err
    assert (await _finish(worker))[0] == 0
    report = json.loads(out.read_text())
    assert sorted((p["url"], p["depth"]) for p in report["pages"]) == plain_pages
    results = {r["url"]: (Status(r["status"]), r["depth"]) for r in report["results"]}
    assert results.pop(site.url("/old")) == (Status.OK, 0)
    assert results == plain
    assert site.hits("/b", "GET") == 0 and site.hits("/c") == 0
    assert report["sitemap_drift"]["redirected"] == [{"url": site.url("/old"), "to": site.url("/a")}]


def test_cli_without_a_crawl_is_a_one_line_usage_error(tmp_path: Path) -> None:
    r = run("--sitemap-drift", "https://example.test/", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--sitemap-drift: needs -r" in r.stderr
    r = run("-r", "--sitemap", "missing.xml", "https://example.test/", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--sitemap: 'missing.xml'" in r.stderr


async def test_cli_lists_the_drift_and_orphans_alone_fail_nothing(site: Site, tmp_path: Path) -> None:
    site.page("/", html("/a"))
    site.page("/a", html())
    site.page("/lonely", html())
    site.page("/sitemap.xml", urlset(site.url("/"), site.url("/lonely")), content_type="application/xml")
    code, out, err = await arun("-r", "--sitemap-drift", "--no-config", site.url("/"), cwd=tmp_path)
    assert code == 0, err
    assert "sitemap drift: 2 URLs listed in 1 sitemap; 1 orphan, 1 unlisted, 0 redirected" in out
    assert f"orphan (listed in the sitemap, but no crawled page links to it): {site.url('/lonely')}" in out
    assert f"unlisted (crawled, but the sitemap doesn't list it): {site.url('/a')}" in out
