"""--tls-expiry: each HTTPS host's certificate expiry, read from real loopback servers with a test authority."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import linkhound
from linkhound import Status
from linkhound.report import reporter_for
from linkhound.tls_expiry import not_after
from server import Site, html

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp

@pytest.fixture
def ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """A test authority, trusted through SSL_CERT_FILE as a system store would be."""
    import trustme

    authority = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    return authority


@pytest.fixture
async def tls_sites(ca: object) -> AsyncIterator[tuple[Callable[..., object], Counter[str]]]:
    """Starts HTTPS sites whose certificate ends after a given time; counts the TLS handshakes each saw."""
    sites: list[Site] = []
    handshakes: Counter[str] = Counter()

    async def start(host: str, lifetime: timedelta) -> Site:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        now = datetime.now(UTC)
        ca.issue_cert(host, not_before=now - timedelta(days=400), not_after=now + lifetime).configure_cert(context)  # type: ignore[attr-defined]
        context.sni_callback = lambda *_: handshakes.update([host])  # called for every ClientHello, SNI or not
        site = await Site(host=host).start(tls=context)
        sites.append(site)
        return site

    yield start, handshakes
    for site in sites:
        await site.stop()


Sites = tuple[Callable[..., object], Counter[str]]


async def test_expiring_certificates_are_listed_and_warned_about(tls_sites: Sites) -> None:
    start, handshakes = tls_sites
    soon = await start("127.0.0.1", timedelta(days=10, hours=12))  # type: ignore[misc]
    later = await start("127.0.0.2", timedelta(days=200, hours=12))  # type: ignore[misc]
    soon.page("/", "ok")
    later.page("/a", "ok")
    later.page("/b", "ok")
    urls = [soon.url("/"), later.url("/a"), later.url("/b")]

    plain = await linkhound.check(urls)
    assert plain.summary.success and plain.summary.certificates is None
    without = dict(handshakes)
    handshakes.clear()

    report = await linkhound.check(urls, tls_expiry="21d")
    s = report.summary
    assert s.success  # a warning, not a failure, unless --tls-expiry-fail
    hosts = {c.host: c for c in s.certificates or ()}
    assert set(hosts) == {soon.base[8:], later.base[8:]}
    assert hosts[soon.base[8:]].expiring and hosts[soon.base[8:]].days_left == 10
    assert not hosts[later.base[8:]].expiring and hosts[later.base[8:]].days_left == 200
    expected = (datetime.now(UTC) + timedelta(days=10, hours=12)).strftime("%Y-%m-%d")
    assert hosts[soon.base[8:]].expires.startswith(expected)
    assert [w for w in s.warnings if "TLS" in w] == [
        f"TLS certificate of {soon.base[8:]} expires on {expected} (in 10 days)"]
    # one handshake of its own per host, however many of its links were checked; no HTTP request added
    assert handshakes == {h: n + 1 for h, n in without.items()}
    assert soon.hits("/") == 2 and later.hits("/a") == 2

    failing = await linkhound.check(urls, tls_expiry="21d", tls_expiry_fail=True)
    assert not failing.summary.success and failing.summary.broken == 0
    assert [c.host for c in failing.summary.expiring] == [soon.base[8:]]


async def test_certificates_in_every_format(tls_sites: Sites) -> None:
    start, _ = tls_sites
    site = await start("127.0.0.1", timedelta(days=5, hours=12))  # type: ignore[misc]
    site.page("/", "ok")
    report = await linkhound.check([site.url("/")], tls_expiry="2w", tls_expiry_fail=True)
    host = site.base[8:]
    texts = {fmt: reporter_for(fmt).finish(report) for fmt in
             ("compact", "detailed", "json", "jsonl", "markdown", "junit", "sarif", "github", "html")}
    for fmt, text in texts.items():
        assert host in text and "in 5 days" in text, fmt
    record = json.loads(texts["json"])["summary"]
    assert record["success"] is False
    assert record["certificates"] == [{"host": host, "expires": report.summary.certificates[0].expires,  # type: ignore[index]
                                       "days_left": 5, "expiring": True}]
    assert "; 1 TLS certificate expiring" in texts["compact"]
    assert f"::error title=TLS certificate expiring::{host} expires" in texts["github"]
    assert '<failure type="tls_expiry"' in texts["junit"]


async def test_an_expired_certificate(tls_sites: Sites) -> None:
    start, _ = tls_sites
    site = await start("127.0.0.1", timedelta(days=-3))  # type: ignore[misc]
    site.page("/", "ok")
    # verified, the check itself fails: no answer, so no certificate to list (the result says why)
    report = await linkhound.check([site.url("/")], tls_expiry="21d", max_retries=0)
    assert report.results[0].status is Status.ERROR and report.summary.certificates == ()
    # --insecure: the page answers, and its certificate is read as the checks were made, unverified
    report = await linkhound.check([site.url("/")], tls_expiry="21d", insecure=True)
    (cert,) = report.summary.certificates or ()
    assert cert.expiring and cert.days_left == -3
    assert f"TLS certificate of {cert.host} expired on {cert.expires[:10]} (3 days ago)" in report.summary.warnings


@pytest.mark.parametrize("ago", [timedelta(hours=12), timedelta(days=1, hours=1)])
async def test_a_certificate_ended_within_a_day_or_two_has_ended(tls_sites: Sites, ago: timedelta) -> None:
    said = "1 day ago"
    start, _ = tls_sites
    site = await start("127.0.0.1", -ago)  # type: ignore[misc]
    site.page("/", "ok")
    report = await linkhound.check([site.url("/")], tls_expiry="21d", insecure=True)
    (cert,) = report.summary.certificates or ()
    assert cert.expiring and cert.days_left == -1
    assert report.summary.warnings == (f"TLS certificate of {cert.host} expired on {cert.expires[:10]} ({said})",)
    detailed = reporter_for("detailed").finish(report)
    assert f"{cert.expires[:10]} (expired {said})" in detailed and "in 0 days" not in detailed


async def test_plain_http_hosts_have_no_certificate(site: Site) -> None:
    site.page("/", "ok")
    report = await linkhound.check([site.url("/")], tls_expiry="21d")
    assert report.summary.certificates == () and report.summary.success
    assert reporter_for("detailed").finish(report).count("TLS certificates: no HTTPS host answered") == 1
    markdown = reporter_for("markdown").finish(report)
    assert "**TLS certificates**: no HTTPS host answered" in markdown and "| Host |" not in markdown
    html = reporter_for("html").finish(report)
    assert "<p>no HTTPS host answered</p>" in html and "<th>Host</th>" not in html


def test_the_certificate_date_is_read_from_der() -> None:
    import trustme
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    # before 2050 notAfter is a UTCTime (two-digit year), from 2050 on a GeneralizedTime
    for when in (datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC), datetime(2061, 1, 2, 3, 4, 5, tzinfo=UTC)):
        leaf = trustme.CA().issue_cert("127.0.0.1", not_after=when)
        der = x509.load_pem_x509_certificate(leaf.cert_chain_pems[0].bytes()).public_bytes(Encoding.DER)
        assert not_after(der) == when.timestamp()
    with pytest.raises(ValueError, match="unreadable certificate"):
        not_after(b"\x30\x03\x02\x01\x00")


def test_bad_values_are_one_line_errors() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    for args, expected in ((["--tls-expiry", "soon"], "'soon' is not a duration"),
                           (["--tls-expiry-fail"], "needs --tls-expiry")):
        r = subprocess.run([sys.executable, "-m", "linkhound", *args, "http://127.0.0.1:9/"],
                           capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 1 and expected in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


async def test_the_command_line_fails_on_an_expiring_certificate(tls_sites: Sites,
                                                                 both_clients: str) -> None:
    start, _ = tls_sites
    site = await start("127.0.0.1", timedelta(days=2, hours=12))  # type: ignore[misc]
    site.page("/", "ok")
    codes = []
    for extra in ([], ["--tls-expiry-fail"]):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "linkhound", "--no-progress", "--http-client", both_clients, "--tls-expiry", "7d",
            *extra, site.url("/"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert "expires on" in out.decode() and "(in 2 days)" in out.decode()
        codes.append(proc.returncode)
    assert codes == [0, 2]


@pytest.mark.parametrize("kept", ["state", "redis"])
async def test_a_crawl_run_again_lists_the_certificates_of_what_it_did_not_fetch_again(
    tls_sites: Sites, both_clients: str, kept: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    start, handshakes = tls_sites
    site = await start("127.0.0.1", timedelta(days=3, hours=12))  # type: ignore[misc]
    site.page("/", html("/a"))
    site.page("/a", "ok")
    where = ["--state", str(tmp_path / "st")] if kept == "state" else \
        ["--redis", request.getfixturevalue("redis_url"), "--job", "tls"]
    for session in range(2):  # the second finds the crawl finished: it fetches nothing, its report is the same
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "linkhound", "--no-progress", "--no-config", "-r", "--http-client", both_clients,
            "--tls-expiry", "21d", "--tls-expiry-fail", "-f", "json", *where, site.url("/"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 2, (session, err)
        summary = json.loads(out)["summary"]
        assert summary["success"] is False
        assert [(c["host"], c["days_left"], c["expiring"]) for c in summary["certificates"]] == [
            (site.base[8:], 3, True)], session
        assert [w for w in summary["warnings"] if "TLS" in w] == [
            f"TLS certificate of {site.base[8:]} expires on {summary['certificates'][0]['expires'][:10]} (in 3 days)"]
    assert site.hits("/") == 1 and site.hits("/a") == 1


async def test_excluded_addresses_get_no_handshake(tls_sites: Sites) -> None:
    start, handshakes = tls_sites
    site = await start("127.0.0.1", timedelta(days=3))  # type: ignore[misc]
    site.page("/", "ok")
    report = await linkhound.check([site.url("/")], tls_expiry="21d", exclude_loopback=True)
    assert report.results[0].status is Status.EXCLUDED and report.summary.certificates == ()
    assert handshakes == {}  # neither the check nor the certificate reader connected
    # a filter that lets the host through: the reader connects to an address it allows, as the check did
    report = await linkhound.check([site.url("/")], tls_expiry="21d", exclude_private=True)
    assert [c.host for c in report.summary.certificates or ()] == [site.base[8:]]
    assert handshakes[site.host] == 2
