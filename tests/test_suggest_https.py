"""--suggest-https: an http:// link whose https:// twin answers the same is reported with the https:// URL.

The twin of http://host/x is https://host/x (port 80 -> 443), so these tests serve one loopback address on both
ports, with a certificate from a test authority trusted through SSL_CERT_FILE. They skip when the ports are taken.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
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


def _pages(plain: Site, secure: Site) -> None:
    for site in (plain, secure):
        site.page("/same", '<h1 id="top">the same page</h1>')
        site.page("/", "home")
    plain.page("/http-only", "only on http")
    plain.page("/elsewhere", "a page")
    secure.redirect("/elsewhere", "/", 302)  # https:// sends it to the home page: not the same
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
