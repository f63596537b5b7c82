"""--suggest-https: an http:// link whose https:// twin answers the same is reported with the https:// URL.

The twin of http://host/x is https://host/x (port 80 -> 443), so these tests serve one loopback address on both
ports, with a certificate from a test authority trusted through SSL_CERT_FILE. They skip when the ports are taken.
"""

from __future__ import annotations

import asyncio
import gc
import os
import ssl
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import linkhound
from cli_run import ENV, HANG_GUARD
from linkhound.suggestions import HTTPS, MOVED
from server import Site

HOST = "127.0.0.93"


@pytest.fixture
async def twins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Site, Site]]:
    import trustme

    ca = trustme.CA()
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(HOST).configure_cert(tls)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    plain, secure = Site(host=HOST), Site(host=HOST)
    try:
        await plain.start(port=80)
        await secure.start(port=443, tls=tls)
    except OSError as e:  # (not root, or the ports are in use)
        await plain.stop()
        pytest.skip(f"can't serve {HOST} on ports 80 and 443: {e}")
    plain.base, secure.base = f"http://{HOST}", f"https://{HOST}"
    yield plain, secure
    await plain.stop()
    await secure.stop()
    # The test server's side of a TLS connection closes only once the client's close_notify is in (or after
    # 30 s): one still closing when the loop ends is collected in some later test, as an unclosed socket of
    # the server. Collected here instead, where it belongs; the server's, not linkhound's.
    await asyncio.sleep(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _pages(plain: Site, secure: Site) -> None:
    close = {"Connection": "close"}  # no TLS connection left open to close when the server stops
    for site in (plain, secure):
        site.page("/same", '<h1 id="top">the same page</h1>', headers=close)
        site.page("/", "home", headers=close)
    plain.page("/http-only", "only on http")
    plain.page("/elsewhere", "a page")
    secure.status("/elsewhere", 302, {"Location": "/", **close})  # https:// sends it home: not the same
    plain.redirect("/moved", f"{secure.base}/same", 301)  # moved for good: that suggestion, no twin asked


async def test_https_twins_that_answer_the_same_are_suggested(twins: tuple[Site, Site], tmp_path: Path,
                                                              both_clients: str) -> None:
    plain, secure = twins
    _pages(plain, secure)
    doc = tmp_path / "doc.md"
    doc.write_text("".join(f"- <{plain.base}{p}>\n" for p in ("/same", "/http-only", "/elsewhere", "/moved")))
    report = await linkhound.check([str(doc)], suggest_https=True, suggest_fixes=True)
    got = {(s.url.removeprefix(plain.base), s.kind): s.replacement for s in report.suggestions}
    assert got == {("/same", HTTPS): f"{secure.base}/same", ("/moved", MOVED): f"{secure.base}/same"}
    assert secure.hits("/http-only") == secure.hits("/elsewhere") == 1  # one request per twin
    assert secure.hits("/moved") == 0


async def test_a_link_moved_for_good_to_its_twin_is_suggested_with_the_https_flag_alone(
        twins: tuple[Site, Site], tmp_path: Path) -> None:
    # the commonest case: the site sends every http:// URL to its https:// twin (the redirect says it: no request)
    plain, secure = twins
    _pages(plain, secure)
    plain.redirect("/up", f"{secure.base}/same", 301)
    plain.redirect("/same-up", f"{secure.base}/same-up", 308)
    plain.redirect("/for-now", f"{secure.base}/for-now", 302)
    secure.page("/same-up", "up", headers={"Connection": "close"})
    secure.page("/for-now", "now", headers={"Connection": "close"})
    doc = tmp_path / "doc.md"
    doc.write_text("".join(f"- <{plain.base}{p}>\n" for p in ("/same", "/same-up", "/up", "/for-now")))
    report = await linkhound.check([str(doc)], suggest_https=True)
    got = {s.url.removeprefix(plain.base): (s.kind, s.replacement, s.reason) for s in report.suggestions}
    assert got == {
        "/same": (HTTPS, f"{secure.base}/same", "https:// answers the same"),
        "/same-up": (HTTPS, f"{secure.base}/same-up", "moved permanently to https:// (308)"),
        "/for-now": (HTTPS, f"{secure.base}/for-now", "https:// answers the same"),  # a 302: its twin asked
    }  # /up moved to another page: not its twin, which is asked and answers otherwise (no such page)
    assert secure.hits("/same-up") == 1 and secure.hits("/for-now") == 2 and secure.hits("/up") == 1


async def test_no_twin_is_asked_without_the_flag(twins: tuple[Site, Site], tmp_path: Path) -> None:
    plain, secure = twins
    _pages(plain, secure)
    doc = tmp_path / "doc.md"
    doc.write_text(f"<{plain.base}/same>\n")
    report = await linkhound.check([str(doc)])
    assert report.suggestions == () and secure.requests == []


async def test_fix_rewrites_http_links_to_their_twins(twins: tuple[Site, Site], tmp_path: Path) -> None:
    plain, secure = twins
    _pages(plain, secure)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[same]({plain.base}/same#top) and [other]({plain.base}/http-only)\n")
    fix = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "fix", "--no-config", "--suggest-https", "--write", str(doc),
        cwd=tmp_path, env={**ENV, "SSL_CERT_FILE": os.environ["SSL_CERT_FILE"]}, stderr=subprocess.PIPE)
    _, err = await asyncio.wait_for(fix.communicate(), HANG_GUARD)
    assert fix.returncode == 0, err
    assert doc.read_text() == f"[same]({secure.base}/same#top) and [other]({plain.base}/http-only)\n"
