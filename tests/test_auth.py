"""Credentials, cookies and proxies: who sees which header, asserted on what each server received."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from cli_run import arun
from linkhound import Status
from server import Site, SiteFactory, html

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def auth_required(user: str, password: str) -> object:
    async def h(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != basic(user, password):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="x"'})
        return web.Response(text="welcome", content_type="text/html")

    return h


async def test_basic_auth_goes_only_to_urls_its_pattern_finds(site: Site) -> None:
    site.handler("/private/report", auth_required("alice", "p:w d"))  # type: ignore[arg-type]
    site.page("/public", "open")
    site.page("/index.html", html("/private/report", "/public"))
    spec = f"^{re.escape(site.base)}/private/ alice:p:w d"  # the password may hold ':' and spaces
    report = await linkhound.check([site.url("/index.html")], basic_auth=[spec])
    assert report.summary.success, [(r.url, r.reason) for r in report.broken]
    seen = {r.path: r.headers.get("Authorization") for r in site.requests}
    assert seen["/private/report"] == basic("alice", "p:w d")
    assert seen["/public"] is None and seen["/index.html"] is None
    # without it, the page is broken (401)
    site.requests.clear()
    report = await linkhound.check([site.url("/private/report")])
    assert report.results[0].status is Status.BROKEN and report.results[0].code == 401


async def test_redirect_to_another_host_drops_authorization_cookies_and_host_headers(
    make_site: SiteFactory, tmp_path: Path
) -> None:
    a = await make_site("127.0.0.1")
    b = await make_site("127.0.0.2")
    a.redirect("/go", b.url("/landing"))
    a.redirect("/stay", "/private/page")  # same host: credentials still apply
    a.handler("/private/page", auth_required("alice", "secret"))  # type: ignore[arg-type]
    b.page("/landing", "elsewhere")
    jar = tmp_path / "cookies.txt"
    jar.write_text("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tabc123\n")
    host_a = a.base.removeprefix("http://")

    report = await linkhound.check(
        [a.url("/go"), a.url("/stay")],
        basic_auth=[f"^{re.escape(a.base)}/ alice:secret"],
        hosts={host_a: {"headers": {"X-Api-Key": "k-a"}}},
        cookie_jar=str(jar),
    )

    assert report.summary.success, [(r.url, r.reason) for r in report.results]
    for r in a.requests:
        assert r.headers.get("Authorization") == basic("alice", "secret"), r.path
        assert r.headers.get("Cookie") == "sid=abc123" and r.headers.get("X-Api-Key") == "k-a", r.path
    assert a.hits("/private/page") == 1
    (landing,) = b.requests
    assert "Authorization" not in landing.headers
    assert "Cookie" not in landing.headers and "X-Api-Key" not in landing.headers


async def test_header_credentials_stay_with_the_links_host(make_site: SiteFactory) -> None:
    a = await make_site("127.0.0.1")
    b = await make_site("127.0.0.2")
    a.redirect("/go", b.url("/landing"))
    b.page("/landing", "elsewhere")
    await linkhound.check([a.url("/go")], header=["Authorization: Bearer t0k", "Cookie: c=1", "X-Plain: yes"])
    (first,) = a.requests
    assert first.headers["Authorization"] == "Bearer t0k" and first.headers["Cookie"] == "c=1"
    (landing,) = b.requests
    assert "Authorization" not in landing.headers and "Cookie" not in landing.headers
    assert landing.headers["X-Plain"] == "yes"  # not a credential: every request carries it


async def test_cookie_jar_is_read_at_start_and_written_at_end(site: Site, tmp_path: Path) -> None:
    async def login(request: web.Request) -> web.StreamResponse:
        resp = web.Response(status=302, headers={"Location": "/home"})
        resp.set_cookie("session", "s-1", max_age=3600, path="/")
        return resp

    site.handler("/login", login)  # type: ignore[arg-type]
    site.page("/home", "home")
    site.page("/again", "again")
    jar = tmp_path / "jar.txt"
    assert not jar.exists()
    await linkhound.check([site.url("/login")], cookie_jar=str(jar))
    home = [r for r in site.requests if r.path == "/home"]
    assert home and home[0].headers.get("Cookie") == "session=s-1"  # set on the redirect, sent on the next hop
    text = jar.read_text()
    assert text.startswith("# Netscape HTTP Cookie File") and "\tsession\ts-1" in text

    # a later run starts with the saved cookie
    await linkhound.check([site.url("/again")], cookie_jar=str(jar))
    (again,) = [r for r in site.requests if r.path == "/again"]
    assert again.headers.get("Cookie") == "session=s-1"


async def test_a_cookie_jar_names_a_host_without_a_dot_as_curl_does(site: Site, tmp_path: Path) -> None:
    # http.cookiejar calls such a host "localhost.local": curl's jar line for "localhost" was never sent
    async def login(request: web.Request) -> web.StreamResponse:
        resp = web.Response(text="in")
        resp.set_cookie("fresh", "f-2", max_age=3600, path="/")
        return resp

    site.handler("/login", login)  # type: ignore[arg-type]
    site.page("/members", "members")
    local = f"http://localhost:{site.base.rsplit(':', 1)[1]}"
    jar = tmp_path / "jar.txt"
    jar.write_text("# Netscape HTTP Cookie File\nlocalhost\tFALSE\t/\tFALSE\t0\tsid\tv1\n"
                   "#HttpOnly_localhost\tFALSE\t/\tFALSE\t0\thidden\th1\n")
    await linkhound.check([f"{local}/members"], cookie_jar=str(jar))
    (members,) = site.requests
    assert sorted(members.headers.get("Cookie", "").split("; ")) == ["hidden=h1", "sid=v1"]
    await linkhound.check([f"{local}/login"], cookie_jar=str(jar))
    lines = [line.split("\t") for line in jar.read_text().splitlines() if "\t" in line]
    assert sorted((line[0], line[5]) for line in lines) == [
        ("#HttpOnly_localhost", "hidden"), ("localhost", "fresh"), ("localhost", "sid")]


async def test_unreadable_cookie_jar_is_a_usage_error(tmp_path: Path) -> None:
    jar = tmp_path / "jar.txt"
    jar.write_text("not a cookies file\n")
    with pytest.raises(linkhound.UsageError, match="--cookie-jar: .*jar.txt: can't read a Netscape cookies.txt"):
        await linkhound.check(["http://127.0.0.1:1/"], cookie_jar=str(jar))


@pytest.mark.parametrize("jar_is", ["malformed", "a directory", "in no directory"])
async def test_a_cookie_jar_that_cant_be_used_is_an_error_when_the_run_starts(
    site: Site, tmp_path: Path, jar_is: str
) -> None:
    site.page("/", "home")
    jar = tmp_path / "jar.txt"
    if jar_is == "malformed":
        jar.write_text("not a cookies file\n")
    elif jar_is == "a directory":
        jar.mkdir()
    else:
        jar = tmp_path / "gone" / "jar.txt"
    problem = "can't write here" if jar_is == "in no directory" else "can't read a Netscape cookies.txt"
    with pytest.raises(linkhound.OptionError, match=f"^--cookie-jar: {re.escape(str(jar))}: {problem}"):
        linkhound.start([site.url("/")], cookie_jar=str(jar))  # start(), as other options' errors: not report()
    assert site.requests == []

    # the command: one line, exit 1, no request, no --state made
    state = tmp_path / "state"
    code, out, err = await arun("--no-progress", "--no-config", "--state", str(state), "--cookie-jar", str(jar),
                                site.url("/"))
    assert (code, out) == (1, "") and re.fullmatch(f"linkhound: error: --cookie-jar: [^\n]*{problem}[^\n]*\n", err)
    assert site.requests == [] and not state.exists()


async def test_http_proxy_from_environment_and_no_proxy(
    make_site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = await make_site("127.0.0.1")
    proxy = await make_site("127.0.0.2")
    origin.page("/page", "direct")

    async def forward(request: web.Request) -> web.StreamResponse:
        return web.Response(text="via proxy")

    proxy.handler("/page", forward)  # type: ignore[arg-type]
    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy", "ALL_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.base)
    monkeypatch.setenv("NO_PROXY", "")

    report = await linkhound.check([origin.url("/page")])
    assert report.summary.success
    assert len(proxy.requests) == 1 and origin.requests == []

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    report = await linkhound.check([origin.url("/page")])
    assert report.summary.success
    assert len(proxy.requests) == 1 and origin.hits("/page") == 1
