"""TrapGuard: URL families that grow without end are cut at their limit; ordinary sites are not."""

from __future__ import annotations

import asyncio
import datetime
import json
import random
import secrets
import sys
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
import linkhound.engine
from linkhound.traps import TrapGuard
from linkhound.urls import looks_like_trap
from server import Site, html

H = "http://127.0.0.1:8080"
OTHER = "http://127.0.0.2:8080"


def admitted(guard: TrapGuard, urls: list[str]) -> list[str]:
    return [u for u in urls if guard.admit(u)]


def test_a_calendar_family_is_cut_at_its_limit() -> None:
    guard = TrapGuard(max_path_variants=5)
    urls = [f"{H}/pcal/{n}/" for n in range(12)]
    assert admitted(guard, urls) == urls[:5]
    assert guard.suspected == {f"{H}/pcal/*/"}


def test_a_family_is_the_prefix_before_the_growing_segment() -> None:
    guard = TrapGuard(max_path_variants=3)
    for n in range(10):
        guard.admit(f"{H}/tags/red/{n}/")  # the pages of one tag grow: /tags/red/*/
    assert guard.suspected == {f"{H}/tags/red/*/"}
    assert guard.admit(f"{H}/tags/blue/1/")  # another tag is another family
    assert guard.admit(f"{OTHER}/tags/red/99/")  # and another origin too


def days(first: datetime.date, count: int) -> list[datetime.date]:
    """count days from first on, in the order a crawl finds them through prev/next links: outwards."""
    return [first + datetime.timedelta(days=(k + 1) // 2 * (1 if k % 2 else -1)) for k in range(count)]


def test_a_day_by_day_calendar_is_cut_at_its_limit() -> None:
    # each segment tops out (12 months, 31 days) and years grow one per 365 pages: the date is what grows
    guard = TrapGuard(max_path_variants=50)
    urls = [f"{H}/cal/{d.year}/{d.month:02}/{d.day:02}/" for d in days(datetime.date(2031, 5, 17), 200)]
    assert admitted(guard, urls) == urls[:50]
    assert guard.suspected == {f"{H}/cal/*/*/*/"}
    assert admitted(guard, urls) == urls[:50]  # asked again: the same answers


def test_a_calendar_counts_dates_not_pages() -> None:
    guard = TrapGuard(max_path_variants=5)
    for d in days(datetime.date(2031, 5, 17), 5):
        for view in ("", "list/", "week/", "print.html"):  # a date's views are one member of the family
            assert guard.admit(f"{H}/cal/{d.year}/{d.month}/{d.day}/{view}")
    assert not guard.admit(f"{H}/cal/2031/6/1/")  # (another month: only the dates are past the limit)
    assert not guard.admit(f"{H}/cal/2031/6/1/list/")
    assert guard.suspected == {f"{H}/cal/*/*/*/"}


def test_dates_in_other_shapes_are_one_value_too() -> None:
    guard = TrapGuard(max_path_variants=35)  # above 31: no one segment reaches it
    months = [f"{H}/m/{1990 + n // 12}/{n % 12 + 1}/" for n in range(60)]  # a month calendar
    joined = [f"{H}/d/2031-{n // 31 + 1:02}/{n % 31 + 1}" for n in range(60)]  # /d/2031-05/17
    hours = [f"{H}/h/17/05/2031/{n}/" for n in range(24)] + [f"{H}/h/18/05/2031/{n}/" for n in range(24)]
    assert admitted(guard, months) == months[:35]
    assert admitted(guard, joined) == joined[:35]
    assert admitted(guard, hours) == hours[:35]
    assert guard.suspected == {f"{H}/m/*/*/", f"{H}/d/*/*", f"{H}/h/*/*/*/*/"}


def test_numbers_in_a_row_that_are_not_dates_are_counted_at_their_own_positions() -> None:
    guard = TrapGuard(max_path_variants=100)
    verses = [f"{H}/kjv/{b}/{c}/{v}/" for b in range(1, 6) for c in range(1, 21) for v in range(1, 31)]
    issues = [f"{H}/issues/{n}/{k}/" for n in range(12300, 12380) for k in range(1, 4)]  # an issue and its pages
    news = [f"{H}/news/{y}/{n}/" for y in range(2015, 2024) for n in range(10000 + y, 10100 + y)]  # a year, ids
    sharded = [f"{H}/p/{n // 1000}/{n % 1000}" for n in range(0, 9000, 30)]
    urls = verses + issues + news + sharded
    assert admitted(guard, urls) == urls
    assert guard.suspected == set()


def test_query_string_calendars_are_cut_as_before() -> None:
    guard = TrapGuard(max_query_variants=30)
    dates = days(datetime.date(2031, 5, 1), 100)
    one = [f"{H}/events?date={d.isoformat()}" for d in dates]
    three = [f"{H}/agenda?y={d.year}&m={d.month}&d={d.day}" for d in dates]
    assert admitted(guard, one) == one[:30]
    assert admitted(guard, three) == three[:30]
    assert guard.suspected == {f"{H}/events?*", f"{H}/agenda?*"}


def test_real_sites_with_numbers_in_their_paths_are_not_cut() -> None:
    guard = TrapGuard()  # the default limit, 3,000
    rng = random.Random(3)
    start = datetime.date(2014, 1, 1)
    # a blog of 4,500 posts over ten years (2,600 days with a post), with its day, month and year archives
    posted = sorted(rng.sample(range(3650), 2600))
    blog = []
    for n in range(4500):
        d = start + datetime.timedelta(days=posted[n % len(posted)])
        day = f"/{d.year}/{d.month:02}/{d.day:02}/"
        blog += [f"{H}{day}post-{n}/", f"{H}{day}", f"{H}/{d.year}/{d.month:02}/", f"{H}/{d.year}/"]
    blog += [f"{H}/page/{n}/" for n in range(2, 450)]
    blog += [f"{H}/2019/05/03/post-{n}/comment-page-{k}/" for n in range(20) for k in range(1, 4)]
    # docs in 40 versions, 150 pages each, and by language
    docs = [f"{H}/v1.{v // 10}.{v % 10}/guide/page-{p}/" for v in range(40) for p in range(150)]
    docs += [f"{H}/en/3.{v}/library/mod{p}.html" for v in range(13) for p in range(300)]
    # 2,500 issues, each with a few pages of comments: numbers apart are an item and its pages
    issues = [f"{H}/issues/{n}" for n in range(1, 2501)]
    issues += [f"{H}/issues/{n}/page/{k}/" for n in range(1, 2501) for k in range(2, 4)]
    urls = blog + docs + issues
    assert admitted(guard, urls) == urls
    assert guard.suspected == set()


def test_more_numeric_ids_than_the_limit_are_cut_as_before() -> None:
    # unchanged: one position past the limit, /issues/3001 on a site with more issues than that
    guard = TrapGuard(max_path_variants=3000)
    urls = [f"{H}/issues/{n}" for n in range(1, 3101)]
    assert admitted(guard, urls) == urls[:3000]
    assert guard.suspected == {f"{H}/issues/*"}


def test_session_ids_in_the_path_are_cut() -> None:
    guard = TrapGuard(max_path_variants=10)
    urls = [f"{H}/psid/{secrets.token_hex(8)}/index.html" for _ in range(30)]
    assert admitted(guard, urls) == urls[:10]
    assert guard.suspected == {f"{H}/psid/*/"}


def test_query_variants_of_one_path_are_cut() -> None:
    guard = TrapGuard(max_query_variants=4)
    urls = [f"{H}/search?page={n}" for n in range(10)]
    assert admitted(guard, urls) == urls[:4]
    assert guard.suspected == {f"{H}/search?*"}
    assert guard.admit(f"{H}/search")  # the path itself, with no query
    assert guard.admit(f"{H}/other?page=9")  # another path's queries are counted apart


def test_a_folder_of_many_pages_is_not_cut() -> None:
    guard = TrapGuard(max_path_variants=5, max_query_variants=5)
    urls = [f"{H}/docs/p{n}.html" for n in range(1000)]
    assert admitted(guard, urls) == urls
    assert guard.suspected == set()


def test_a_fragment_does_not_make_a_new_member() -> None:
    guard = TrapGuard(max_path_variants=2)
    assert admitted(guard, [f"{H}/a/1/#x", f"{H}/a/1/#y", f"{H}/a/2/", f"{H}/a/1/"]) == [
        f"{H}/a/1/#x", f"{H}/a/1/#y", f"{H}/a/2/", f"{H}/a/1/"
    ]
    assert guard.suspected == set()


def test_admit_gives_the_same_answer_for_a_url_every_time() -> None:
    rng = random.Random(7)
    guard = TrapGuard(max_path_variants=6, max_query_variants=4)
    pool = (
        [f"{H}/pcal/{n}/" for n in range(15)]
        + [f"{H}/psid/{n}/index.html" for n in range(15)]
        + [f"{H}/list?p={n}" for n in range(10)]
        + [f"{H}/docs/p{n}.html" for n in range(20)]
        + [f"{H}/pcal/{n}/day/{d}/" for n in range(4) for d in range(10)]
    )
    first: dict[str, bool] = {}
    for _ in range(2000):
        url = rng.choice(pool)
        answer = guard.admit(url)
        assert first.setdefault(url, answer) == answer, url
    assert not all(first.values()) and any(first.values())  # both answers were given


def test_the_defaults() -> None:
    guard = TrapGuard()
    assert admitted(guard, [f"{H}/pcal/{n}/" for n in range(3001)])[-1] == f"{H}/pcal/2999/"
    assert admitted(guard, [f"{H}/q?{n}" for n in range(501)])[-1] == f"{H}/q?499"


# -- end to end: a crawl through a site with traps ends, and crawls the rest ---------------------------------


async def test_a_crawl_through_traps_ends_and_crawls_the_rest(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 15
    monkeypatch.setattr(linkhound.engine, "TrapGuard", lambda paths: TrapGuard(paths, limit))  # query strings

    async def calendar(request: web.Request) -> web.StreamResponse:
        n = int(request.path.split("/")[2])
        return web.Response(text=html(f"/pcal/{n + 1}/", f"/pcal/{n - 1}/"), content_type="text/html")

    async def session(request: web.Request) -> web.StreamResponse:  # a new session id on every link
        return web.Response(text=html(f"/psid/{secrets.token_hex(8)}/index.html"), content_type="text/html")

    async def search(request: web.Request) -> web.StreamResponse:
        n = int(request.query.get("page", "0"))
        return web.Response(text=html(f"/search?page={n + 1}"), content_type="text/html")

    site.prefixes["/pcal/"] = calendar
    site.prefixes["/psid/"] = session
    site.handler("/search", search)
    docs = [f"/docs/p{n}.html" for n in range(40)]  # more files than the limit: an ordinary folder
    for n, page in enumerate(docs):
        site.page(page, html(docs[(n + 1) % len(docs)], "/"))
    site.page("/about/", html("/", "/about/team/"))
    site.page("/about/team/", html("/about/"))
    site.page("/", html("/about/", docs[0], "/pcal/0/", "/psid/start/index.html", "/search?page=0"))

    crawl = linkhound.check([site.url("/")], recursive=True, max_path_variants=limit)
    report = await asyncio.wait_for(crawl, 120)  # a hang guard

    crawled = {p.url.removeprefix(site.base) for p in report.pages}
    assert {"/", "/about/", "/about/team/", *docs} <= crawled
    assert sum(p.startswith("/pcal/") for p in crawled) == limit
    assert sum(p.startswith("/psid/") for p in crawled) == limit
    assert sum(p.startswith("/search?") for p in crawled) == limit
    assert {c for c in report.summary.caps if c.startswith("trap suspected")} == {
        f"trap suspected: {site.base}/pcal/*/",
        f"trap suspected: {site.base}/psid/*/",
        f"trap suspected: {site.base}/search?*",
    }
    # the calendar's pages past the limit are still checked, only not crawled
    cut = [r for r in report.results if r.url.startswith(site.url("/pcal/")) and r.url.removeprefix(site.base)
           not in crawled]
    assert cut and all(r.status is linkhound.Status.OK for r in cut)
    assert report.summary.success


def day_path(d: datetime.date) -> str:
    return f"/cal/{d.year}/{d.month:02}/{d.day:02}/"


async def calendar_day(request: web.Request) -> web.StreamResponse:
    """A day view linking to the day before and the day after, without end."""
    day = datetime.date(*(int(s) for s in request.path.split("/")[2:5]))
    one = datetime.timedelta(days=1)
    return web.Response(text=html(day_path(day - one), day_path(day + one)), content_type="text/html")


@pytest.mark.parametrize("kept", ["memory", "state"])
async def test_a_day_by_day_calendar_ends_and_a_dated_blog_is_crawled_whole(
    site: Site, tmp_path: Path, kept: str
) -> None:
    limit = 40  # above 31 days and 12 months: no one segment of the calendar ever reaches it
    site.prefixes["/cal/"] = calendar_day
    # a blog: 3 posts a day on 36 days (more posts than the limit, fewer dates), with day and month archives
    start, dates = datetime.date(2019, 5, 3), 36
    blog = []
    for n in range(dates):
        d = start + datetime.timedelta(days=n)
        day = f"/{d.year}/{d.month:02}/{d.day:02}/"
        posts = [f"{day}post-{n}-{k}/" for k in range(3)]
        for post in posts:
            site.page(post, html(day, "/"))
        site.page(day, html(*posts, f"/{d.year}/{d.month:02}/"))
        blog += [day, *posts]
    months = sorted({p[:9] for p in blog})
    for month in months:
        site.page(month, html(*(p for p in blog if p.startswith(month) and p.count("/") == 4)))
    # a forum: 30 threads of 3 pages (numbers apart: a thread and its pages)
    forum = [f"/thread/{t}/page/{p}/" for t in range(30) for p in range(1, 4)]
    for page in forum:
        site.page(page, html("/forum/"))
    site.page("/forum/", html(*forum))
    site.page("/", html("/cal/2031/05/17/", *months, "/forum/"))

    state = str(tmp_path / "state") if kept == "state" else None
    crawl = linkhound.check([site.url("/")], recursive=True, max_path_variants=limit, max_pages=600, state=state)
    report = await asyncio.wait_for(crawl, 120)  # a hang guard

    crawled = {p.url.removeprefix(site.base) for p in report.pages}
    assert {"/", *months, *blog, "/forum/", *forum} <= crawled
    assert sum(p.startswith("/cal/") for p in crawled) == limit
    # the days past the limit are checked, each once, and not crawled: at most one at each end of the crawled run
    days_asked = [(m, p) for m, p in site.counts() if p.startswith("/cal/")]
    assert len(days_asked) == len(set(days_asked)) and limit < len(days_asked) <= limit + 2
    cut = [r for r in report.results if r.url.startswith(site.url("/cal/")) and r.url.removeprefix(site.base)
           not in crawled]
    assert cut and all(r.status is linkhound.Status.OK for r in cut)
    assert [c for c in report.summary.caps if c != "crawler-trap guard"] == [
        f"trap suspected: {site.base}/cal/*/*/*/"
    ]
    assert report.summary.success


async def test_a_day_by_day_calendar_ends_in_a_redis_job(site: Site, redis_url: str, tmp_path: Path) -> None:
    limit = 40
    site.prefixes["/cal/"] = calendar_day
    site.page("/", html("/cal/2031/05/17/"))
    out = tmp_path / "report.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "-r", "--redis", redis_url, "--job", "cal", "--no-config", "--no-robots",
        "--max-path-variants", str(limit), "--max-pages", "600", "--format", "json", "--output", str(out),
        site.url("/"), stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 120)  # a hang guard
    assert proc.returncode == 0, err.decode()
    report = json.loads(out.read_text())
    assert sum(p["url"].startswith(site.url("/cal/")) for p in report["pages"]) == limit
    assert [c for c in report["summary"]["caps"] if c != "crawler-trap guard"] == [
        f"trap suspected: {site.base}/cal/*/*/*/"
    ]


@pytest.mark.parametrize(
    ("path", "trap"),
    [
        ("/a/b/c/", False),
        ("/docs/2024/01/02/post.html", False),
        ("/x/x/x/", False),  # three times is still a site
        ("/x/x/x/x/", True),  # relative links that nest into themselves
        ("/a/b/a/b/a/b/a/b/", True),
        ("/" + "/".join(f"s{n}" for n in range(41)) + "/", True),  # deeper than 40 segments
        ("/long?" + "q" * 2048, True),  # longer than 2048 characters
    ],
)
def test_looks_like_trap(path: str, trap: bool) -> None:
    assert looks_like_trap(H + path) is trap
