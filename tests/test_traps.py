"""TrapGuard: URL families that grow without end are cut at their limit; ordinary sites are not."""

from __future__ import annotations

import asyncio
import random
import secrets

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
        guard.admit(f"{H}/pcal/2024/{n}/")  # the months of one year grow: /pcal/2024/*/
    assert guard.suspected == {f"{H}/pcal/2024/*/"}
    assert guard.admit(f"{H}/pcal/2025/1/")  # another year is another family
    assert guard.admit(f"{OTHER}/pcal/2024/99/")  # and another origin too


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
