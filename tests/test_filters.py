"""Which links are checked: include/exclude, .linkhoundignore, --exclude-path, address filters, status rules and
bot protection. Each against a real server, asserting on what it saw."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from aiohttp.abc import ResolveResult

import linkhound
from linkhound import Status
from linkhound.aiohttp_transport import ExcludingResolver
from linkhound.client import ClientOptions, HttpClient
from linkhound.filters import AddressExcluded, AddressFilter, IPAddress, address_kind
from linkhound.report import reporter_for
from server import Site, SiteFactory, html

ENV = {**os.environ, "NO_COLOR": "1"}


async def arun(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", *args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=ENV,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def by_path(report: linkhound.Report, site: Site) -> dict[str, linkhound.Result]:
    return {r.url.removeprefix(site.base): r for r in report.results}


# -- URL patterns -----------------------------------------------------------------------------------------


async def test_exclude_and_include_patterns_include_wins(site: Site) -> None:
    site.page("/index.html", html("/a/1", "/a/keep", "/b/1"))
    for p in ("/a/1", "/a/keep", "/b/1"):
        site.page(p, "ok")
    report = await linkhound.check([site.url("/index.html")], exclude=["/a/"], include=["/keep$"])
    got = by_path(report, site)
    assert got["/a/1"].status is Status.EXCLUDED and "--exclude" in got["/a/1"].reason
    assert got["/a/keep"].status is Status.OK and got["/b/1"].status is Status.OK
    assert site.hits("/a/1") == 0 and site.hits("/a/keep") == 1 and site.hits("/b/1") == 1


async def test_an_exclude_pattern_may_name_a_fragment_of_a_local_link(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("# Page\n")
    (tmp_path / "index.md").write_text("[a](page.md#generated-later) [b](page.md#page) [c](page.md#gone)\n")
    doc = [str(tmp_path / "index.md")]
    report = await linkhound.check(doc, exclude=[r"page\.md#generated-later"])
    got = {r.url.removeprefix(tmp_path.as_uri() + "/"): (r.status, r.reason) for r in report.results}
    assert got == {
        "page.md#generated-later": (Status.EXCLUDED, "matched by --exclude"),
        "page.md": (Status.OK, ""),
        "page.md#gone": (Status.BROKEN, "no anchor #gone"),
    }
    # a pattern that finds the URL without its fragment still excludes every link to it, as it did
    report = await linkhound.check(doc, exclude=[r"page\.md$"])
    assert [(r.url.removeprefix(tmp_path.as_uri() + "/"), r.status) for r in report.results] == [
        ("page.md", Status.EXCLUDED)]
    # an include pattern that finds the URL wins over it
    report = await linkhound.check(doc, exclude=["#generated-later"], include=["page"])
    assert sorted(r.reason for r in report.broken) == ["no anchor #generated-later", "no anchor #gone"]


async def test_an_exclude_pattern_may_name_a_fragment_of_a_link_on_a_web_page(site: Site) -> None:
    site.page("/index.html", html("/doc.html#generated", "/doc.html#here", "/doc.html"))
    site.page("/doc.html", html(extra='<h2 id="here">Here</h2>'))
    report = await linkhound.check([site.url("/index.html")], exclude=["#generated$"], check_fragments=True)
    got = {url: r.status for url, r in by_path(report, site).items()}
    assert got == {"/index.html": Status.OK, "/doc.html#generated": Status.EXCLUDED, "/doc.html": Status.OK}


async def test_linkhoundignore_patterns_add_to_exclude(site: Site, tmp_path: Path) -> None:
    site.page("/index.html", html("/private/x", "/drafts/y", "/ok"))
    site.page("/ok", "fine")
    (tmp_path / ".linkhoundignore").write_text("# not ready yet\n/drafts/\n\n")
    code, out, err = await arun("-v", "--exclude", "/private/", site.url("/index.html"), cwd=tmp_path)
    assert code == 0, out + err
    assert site.hits("/private/x") == 0 and site.hits("/drafts/y") == 0 and site.hits("/ok") == 1
    # --no-config leaves it out
    code, _, _ = await arun("--no-config", site.url("/index.html"), cwd=tmp_path)
    assert code == 2 and site.hits("/drafts/y") == 1


async def test_exclude_path_leaves_out_walked_globbed_and_named_inputs(site: Site, tmp_path: Path) -> None:
    site.page("/docs", "ok")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(f"[a]({site.url('/docs')})\n")
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / "b.md").write_text(f"[b]({site.url('/vendor')})\n")
    (tmp_path / "CHANGELOG.md").write_text(f"[c]({site.url('/changelog')})\n")

    code, out, err = await arun(".", "--exclude-path", "^vendor/", "--exclude-path", "CHANGELOG", cwd=tmp_path)
    assert code == 0, out + err
    assert site.hits("/docs") == 1 and site.hits("/vendor") == 0 and site.hits("/changelog") == 0
    code, _, _ = await arun("**/*.md", "CHANGELOG.md", "--exclude-path", "/lib/|CHANGELOG", cwd=tmp_path)
    assert code == 0 and site.hits("/vendor") == 0 and site.hits("/changelog") == 0 and site.hits("/docs") == 2
    code, _, _ = await arun(".", cwd=tmp_path)
    assert code == 2 and site.hits("/vendor") == 1


async def test_scheme_option_excludes_other_schemes(site: Site, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text(f"[web]({site.url('/x')}) [mail](mailto:a@example.org) [file](missing.md)\n")
    report = await linkhound.check([str(doc)], scheme=["mailto"])
    statuses = {r.url.split(":")[0]: r.status for r in report.results}
    assert statuses == {"http": Status.EXCLUDED, "mailto": Status.OK, "file": Status.EXCLUDED}
    assert site.requests == []


# -- addresses --------------------------------------------------------------------------------------------


async def test_exclude_loopback_catches_literal_and_resolved_hosts(site: Site) -> None:
    port = site.base.rsplit(":", 1)[1]
    by_name = f"http://localhost:{port}/by-name"
    site.page("/by-ip", "ok")
    site.page("/by-name", "ok")
    site.page("/index.html", html(site.url("/by-ip"), by_name))

    # the input itself is a literal loopback address: excluded, never requested
    report = await linkhound.check([site.url("/index.html")], exclude_loopback=True)
    assert [r.status for r in report.results] == [Status.EXCLUDED]
    assert "loopback" in report.results[0].reason
    assert site.requests == []

    # a name that resolves to 127.0.0.1 is caught when connecting
    report = await linkhound.check([by_name], exclude_loopback=True)
    (result,) = report.results
    assert result.status is Status.EXCLUDED and result.reason.startswith("resolves to a loopback address")
    assert report.summary.success and site.requests == []

    # without the option both reach the server
    report = await linkhound.check([site.url("/index.html")])
    got = by_path(report, site)
    assert got["/by-ip"].status is Status.OK and report.summary.ok == 3
    assert site.hits("/by-ip") == 1 and site.hits("/by-name") == 1


async def test_exclude_all_private_and_cli_flags(site: Site) -> None:
    port = site.base.rsplit(":", 1)[1]
    site.page("/index.html", html("/x"))
    code, out, _ = await arun("-v", "--exclude-all-private", f"http://localhost:{port}/index.html")
    assert code == 0 and "excluded" in out and "resolves to a loopback address" in out
    code, _, _ = await arun("--exclude-private", "--exclude-link-local", f"http://localhost:{port}/index.html")
    assert code == 2  # loopback isn't private or link-local: /x was checked (404)
    assert site.hits("/index.html") == 1 and site.hits("/x") == 1


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
        ("192.168.1.1", "private"), ("fd00::1", "private"),
        ("127.0.0.1", "loopback"), ("127.9.9.9", "loopback"), ("::1", "loopback"), ("0.0.0.0", "loopback"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"),
        ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
        ("172.32.0.1", None), ("8.8.8.8", None), ("2606:4700::1111", None), ("100.64.0.1", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_literal_hosts_are_judged_without_a_request() -> None:
    f = AddressFilter(private=True, link_local=True)
    for host in ("10.0.0.1", "[fe80::1]", "169.254.169.254"):
        with pytest.raises(AddressExcluded):
            f.check_literal(host)
    f.check_literal("127.0.0.1")  # loopback is not on
    f.check_literal("example.org")  # names are judged when resolved


class _FakeResolver:
    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[ResolveResult]:
        return [
            {"hostname": host, "host": a, "port": port, "family": 0, "proto": 0, "flags": 0} for a in self.addresses
        ]

    async def close(self) -> None:
        pass


async def test_resolver_drops_excluded_addresses_and_fails_when_none_is_left() -> None:
    resolver = ExcludingResolver(AddressFilter(private=True), exempt=frozenset({"proxy.corp"}))
    resolver._inner = _FakeResolver(["10.0.0.5", "93.184.216.34"])  # type: ignore[assignment]
    kept = await resolver.resolve("mixed.test", 80)
    assert [r["host"] for r in kept] == ["93.184.216.34"]  # a rebinding-style mix: only the public one
    resolver._inner = _FakeResolver(["10.0.0.5", "192.168.0.9"])  # type: ignore[assignment]
    with pytest.raises(AddressExcluded) as e:
        await resolver.resolve("intranet.test", 80)
    assert e.value.reason == "resolves to a private address (10.0.0.5)"
    assert len(await resolver.resolve("proxy.corp", 3128)) == 2  # the environment's proxy is exempt


def _only(*addresses: str) -> AddressFilter:
    """A filter that excludes the given addresses only, so two loopback servers can stand for a public and a
    private host."""

    class Only(AddressFilter):
        def excluded_kind(self, ip: IPAddress) -> str | None:
            return "private" if str(ip) in addresses else None

    return Only(private=True)


def _client(addresses: AddressFilter) -> HttpClient:
    return HttpClient(ClientOptions(8, 5.0, 5, 1 << 20, "test", {}, addresses=addresses))


async def test_redirect_to_an_excluded_address_is_not_followed(make_site: SiteFactory) -> None:
    public = await make_site("127.0.0.1")
    private = await make_site("127.0.0.2")
    private.page("/admin", "secret")
    public.redirect("/to-literal", private.url("/admin"))
    async with _client(_only("127.0.0.2")) as client:
        with pytest.raises(AddressExcluded) as e:
            await client.fetch(public.url("/to-literal"), "GET", lambda _: False)
    assert e.value.chain == (private.url("/admin"),)
    assert e.value.reason == "redirect to 127.0.0.2: private address excluded"
    assert private.requests == [] and public.hits("/to-literal") == 1

    # the other way round, to a name: localhost resolves to addresses that are all excluded
    public.page("/landing", "inside")
    private.redirect("/to-name", f"http://localhost:{public.base.rsplit(':', 1)[1]}/landing")
    async with _client(_only("127.0.0.1", "::1")) as client:
        with pytest.raises(AddressExcluded) as e:
            await client.fetch(private.url("/to-name"), "GET", lambda _: False)
    assert e.value.reason.startswith("redirect to localhost: resolves to a private address")
    assert public.hits("/landing") == 0 and private.hits("/to-name") == 1


# -- status rules and bot protection ----------------------------------------------------------------------


async def test_status_rules_accept_codes_for_matching_urls_only(site: Site) -> None:
    site.status("/members/a", 403)
    site.status("/other/b", 403)
    site.status("/gone", 410)
    site.page("/index.html", html("/members/a", "/other/b", "/gone"))
    report = await linkhound.check([site.url("/index.html")], accept_for=["/members/ 403", "/gone$ 400..=499"])
    got = by_path(report, site)
    assert got["/members/a"].status is Status.OK
    assert got["/other/b"].status is Status.BROKEN and got["/other/b"].code == 403
    assert got["/gone"].status is Status.OK
    assert got["/index.html"].status is Status.OK  # 200 is still accepted everywhere


async def test_bot_protection_is_blocked_not_broken(site: Site, tmp_path: Path) -> None:
    site.status("/cf", 403, headers={"cf-mitigated": "challenge"})
    site.status("/cf-503", 503, headers={"cf-mitigated": "challenge"})
    site.status("/linkedin", 999)
    site.status("/plain-403", 403)
    links = ("/cf", "/cf-503", "/linkedin", "/plain-403")
    site.page("/index.html", html(*links))
    report = await linkhound.check([site.url("/index.html")], retry_backoff=0.01)
    got = by_path(report, site)
    for p in ("/cf", "/cf-503", "/linkedin"):
        assert got[p].status is Status.BLOCKED, p
        assert got[p].reason.startswith("bot protection"), p
    assert "Cloudflare" in got["/cf"].reason
    assert got["/plain-403"].status is Status.BROKEN
    # asked once each: no GET after a challenged HEAD, no retries of a challenged 503
    seen = site.counts()
    assert seen[("HEAD", "/cf")] == 1 and seen[("GET", "/cf")] == 0
    assert site.hits("/cf-503") == 1 and site.hits("/linkedin") == 1
    assert seen[("HEAD", "/plain-403")] == 1 and seen[("GET", "/plain-403")] == 1

    # blocked alone doesn't fail the run; --fail-on-blocked makes it
    site.page("/blocked-only.html", html("/cf", "/linkedin"))
    code, out, _ = await arun(site.url("/blocked-only.html"))
    assert code == 0 and "blocked" in out
    code, _, _ = await arun("--fail-on-blocked", site.url("/blocked-only.html"))
    assert code == 2
    # ... and every report says so: the summary's success, JUnit's failures, SARIF's and GitHub's errors
    report = await linkhound.check([site.url("/blocked-only.html")], fail_on_blocked=True)
    assert not report.summary.success and report.summary.count(Status.BLOCKED) == 2
    junit = ElementTree.fromstring(reporter_for("junit").finish(report))
    assert junit.get("failures") == "2" and len(junit.findall(".//failure")) == 2
    sarif = json.loads(reporter_for("sarif").finish(report))
    assert {r["level"] for r in sarif["runs"][0]["results"]} == {"error"}
    assert reporter_for("github").finish(report).count("::error ") == 2
    assert report.summary.failed == 2 and json.loads(reporter_for("json").finish(report))["summary"]["failed"] == 2
    page = reporter_for("html").finish(report)
    assert '<span class="verdict fail">2 failed</span>' in page and "<b>2</b><span>failed" in page
    plain = await linkhound.check([site.url("/blocked-only.html")])
    assert plain.summary.success and ElementTree.fromstring(reporter_for("junit").finish(plain)).get("failures") == "0"
    # a status rule that accepts 999 wins over the bot-protection verdict
    (tmp_path / "linkhound.toml").write_text('[[status]]\npattern = "/linkedin$"\naccept = [999]\n')
    code, out, _ = await arun("-v", "--fail-on-blocked", site.url("/linkedin"), cwd=tmp_path)
    assert code == 0 and "✓" in out


def test_auto_picks_aiohttp_only_where_an_address_filter_needs_its_resolver() -> None:
    from linkhound.client import chosen_backend

    plain = ClientOptions(8, 5.0, 5, 1024, "ua", {})
    assert chosen_backend(plain) == "native"
    assert chosen_backend(ClientOptions(8, 5.0, 5, 1024, "ua", {}, addresses=AddressFilter(private=True))) == "aiohttp"
    assert chosen_backend(ClientOptions(8, 5.0, 5, 1024, "ua", {}, backend="aiohttp")) == "aiohttp"
    assert HttpClient(plain).backend == "native"
