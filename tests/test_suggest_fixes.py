"""--suggest-fixes: links that moved for good (301, 308) are reported with the URL to use instead, and only those."""

from __future__ import annotations

from pathlib import Path

import linkhound
from linkhound.suggestions import MOVED, https_twin, rewrite
from server import Site


def _moves(site: Site) -> None:
    site.page("/new", '<h1 id="part">new home</h1>')
    site.redirect("/old", "/new", 301)
    site.redirect("/older", "/old", 308)  # two permanent hops: the end of the chain
    site.redirect("/temp", "/new", 302)
    site.redirect("/see", "/new", 303)
    site.redirect("/t307", "/new", 307)
    site.redirect("/then-temp", "/temp", 301)  # 301 to /temp, which answers 302: moved to /temp, not /new
    site.redirect("/temp-then-perm", "/old", 302)  # starts temporary: nothing moved
    site.redirect("/gone", "/nothing-here", 301)  # moved to a 404: not a fix


async def test_permanent_redirects_are_suggested_with_their_end(site: Site, tmp_path: Path,
                                                                both_clients: str) -> None:
    _moves(site)
    paths = ["/old", "/older", "/temp", "/see", "/t307", "/then-temp", "/temp-then-perm", "/gone", "/new"]
    doc = tmp_path / "doc.md"
    doc.write_text("".join(f"- [x]({site.url(p)}#part)\n" for p in paths))
    report = await linkhound.check([str(doc)], suggest_fixes=True)
    got = {s.url.removeprefix(site.base): s.replacement.removeprefix(site.base) for s in report.suggestions}
    assert got == {"/old": "/new", "/older": "/new", "/then-temp": "/temp"}
    older = next(s for s in report.suggestions if s.url.endswith("/older"))
    assert older.kind == MOVED and older.reason == "moved permanently (308, 301)"
    assert [(r.line, r.text) for r in older.references] == [(2, site.url("/older") + "#part")]
    assert site.hits("/new", "HEAD") + site.hits("/new", "GET") >= 1


async def test_suggestions_cost_nothing_when_off(site: Site, tmp_path: Path) -> None:
    _moves(site)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[x]({site.url('/old')})\n")
    report = await linkhound.check([str(doc)])
    assert report.suggestions == ()
    assert report.results[0].redirect_codes == (301,)  # recorded anyway: the chain's codes are on the result
    assert len(site.requests) == 2


async def test_a_redirect_to_a_url_checked_on_its_own_keeps_its_codes(site: Site, tmp_path: Path) -> None:
    _moves(site)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[a]({site.url('/new')})\n[b]({site.url('/older')})\n[c]({site.url('/old')})\n")
    report = await linkhound.check([str(doc)], suggest_fixes=True, max_concurrency=1)
    got = {s.url.removeprefix(site.base): s.replacement.removeprefix(site.base) for s in report.suggestions}
    assert got == {"/old": "/new", "/older": "/new"}
    assert site.hits("/new", "HEAD") == 1  # asked once, whichever link reached it


async def test_suggestions_survive_the_cache(site: Site, tmp_path: Path) -> None:
    _moves(site)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[x]({site.url('/old')})\n")
    cache = str(tmp_path / "cache.sqlite")
    first = await linkhound.check([str(doc)], suggest_fixes=True, cache=True, cache_file=cache)
    second = await linkhound.check([str(doc)], suggest_fixes=True, cache=True, cache_file=cache)
    assert second.results[0].cached
    assert [s.replacement for s in second.suggestions] == [s.replacement for s in first.suggestions] == [
        site.url("/new")]
    assert site.hits("/old") == 1


def test_rewrite_keeps_the_fragment_and_leaves_relative_links() -> None:
    assert rewrite("http://a.test/x#sec", "https://b.test/y") == "https://b.test/y#sec"
    assert rewrite("HTTP://a.test/x", "https://b.test/y") == "https://b.test/y"
    assert rewrite("http://a.test/x#sec", "https://b.test/y#own") == "https://b.test/y#own"
    assert rewrite("../x.html#sec", "https://b.test/y") is None


def test_https_twin_is_on_the_default_port_only() -> None:
    assert https_twin("http://a.test/x?q=1") == "https://a.test/x?q=1"
    assert https_twin("http://a.test:80/x") == "https://a.test/x"
    assert https_twin("http://user@a.test") == "https://user@a.test"
    assert https_twin("http://a.test:8080/x") is None
    assert https_twin("http://[::1]/x") == "https://[::1]/x"
    assert https_twin("https://a.test/x") is None


async def test_suggestions_survive_a_state_file(site: Site, tmp_path: Path) -> None:
    _moves(site)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[x]({site.url('/older')})\n")
    report = await linkhound.check([str(doc)], suggest_fixes=True, state=str(tmp_path / "state.sqlite"))
    assert [(s.url, s.replacement) for s in report.suggestions] == [(site.url("/older"), site.url("/new"))]


async def test_a_distributed_job_reports_its_links_to_fix_and_unchanged_count(site: Site, redis_url: str,
                                                                              tmp_path: Path) -> None:
    import asyncio
    import json
    import subprocess
    import sys

    _moves(site)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    doc = tmp_path / "a.md"
    doc.write_text(f"[old]({site.url('/old')})\n")
    subprocess.run(["git", "add", "a.md"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.test", "commit", "-q", "-m", "one"],
                   cwd=tmp_path, check=True)
    doc.write_text(f"[old]({site.url('/old')})\n[older]({site.url('/older')})\n")
    out = tmp_path / "report.json"
    lead = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--redis", redis_url, "--job", "fixes", "--no-config", "--format", "json",
        "--suggest-fixes", "--changed-since", "main", "--output", str(out), "a.md", cwd=tmp_path,
        stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(lead.communicate(), 60)
    assert lead.returncode == 0, err
    report = json.loads(out.read_text())
    assert [(s["url"], s["replacement"]) for s in report["suggestions"]] == [(site.url("/older"), site.url("/new"))]
    assert report["summary"]["unchanged"] == 1
    assert [r["url"] for r in report["results"]] == [site.url("/older")]  # line 1 is unchanged: not checked
