"""Fragments and local paths: the exact set of broken links in a tree of Markdown and HTML files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import linkhound
from cli_run import run
from linkhound import Status
from linkhound.sorter import ROOTLESS

DOCS = {
    "README.md": """\
# Project Title

## Install & Run!

## Install & Run!

## Ünïcödé Überschrift

## `code` and *emphasis*

## Custom heading {#my-id}

<a id="RawId"></a>

- [ok: self](#project-title)
- [ok: case-insensitive in Markdown](#PROJECT-TITLE)
- [ok: first duplicate](#install--run)
- [ok: second duplicate](#install--run-1)
- [broken: third duplicate](#install--run-2)
- [ok: unicode](#ünïcödé-überschrift)
- [ok: percent-encoded unicode](#%C3%BCn%C3%AFc%C3%B6d%C3%A9-%C3%BCberschrift)
- [ok: code and emphasis](#code-and-emphasis)
- [ok: explicit id](#my-id)
- [ok: raw html id](#RawId)
- [ok: top](#top)
- [ok: empty](#)
- [ok: text fragment](#:~:text=Project)
- [broken: no such heading](#nope)
- [ok: anchor with a text fragment](#my-id:~:text=Custom)
- [broken: no such anchor, with a text fragment](#gone:~:text=Custom)
- [ok: cross file](guide/setup.md#requirements)
- [broken: cross file](guide/setup.md#missing-section)
- [ok: html id](site/page.html#Intro)
- [broken: html id is case-sensitive](site/page.html#intro)
- [ok: a name](site/page.html#legacy)
- [ok: directory](guide/)
- [broken: missing file](guide/gone.md)
- [broken: fragment of a missing file](guide/gone.md#x)
- [ok: image, fragment not checked](img/logo.png#anything)
- [root-relative](/guide/setup.md)
""",
    "guide/setup.md": "# Setup\n\n## Requirements\n\nBack to [readme](../README.md#project-title).\n",
    "site/page.html": """<!doctype html><html><body>
<h1 id="Intro">Intro</h1><a name="legacy"></a>
<a href="#Intro">self ok</a> <a href="#missing-here">self broken</a>
<a href="../guide/setup.md">up</a> <a href="../../outside.md">escapes root</a>
<a href="sub/">dir without index</a> <a href="withindex/">dir with index</a>
</body></html>""",
    "site/sub/other.txt": "x",
    "site/withindex/index.html": "<html></html>",
    "img/logo.png": "PNG",
}


# broken whatever the options that follow: missing anchors (and case), a duplicate too many, a missing file
ALWAYS_BROKEN = {
        "README.md#install--run-2",
        "README.md#nope",
        "README.md#gone:~:text=Custom",
        "guide/setup.md#missing-section",
        "site/page.html#intro",
        "site/page.html#missing-here",
        "guide/gone.md",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for name, text in DOCS.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (tmp_path / "outside.md").write_text("# outside\n")
    return root


def broken(report: linkhound.Report, root: Path) -> set[str]:
    prefix = root.as_uri() + "/"
    return {r.url.replace(prefix, "") for r in report.results if r.status.is_broken}


async def test_exact_broken_set_without_root_dir(tree: Path) -> None:
    report = await linkhound.check([str(tree)])
    assert broken(report, tree) == ALWAYS_BROKEN | {"file:///guide/setup.md"}  # root-relative, no --root-dir
    gone = next(r for r in report.results if r.url.endswith("guide/gone.md"))
    assert {ref.text for ref in gone.references} == {"guide/gone.md", "guide/gone.md#x"}
    rooted = next(r for r in report.results if r.url == "file:///guide/setup.md")
    assert "--root-dir" in rooted.reason
    nope = next(r for r in report.results if r.url.endswith("#nope"))
    assert nope.reason == "no anchor #nope"
    assert [(ref.source, ref.line) for ref in nope.references] == [(str(tree / "README.md"), 28)]


async def test_root_dir_resolves_root_relative_links_and_catches_escapes(tree: Path) -> None:
    report = await linkhound.check([str(tree)], root_dir=str(tree), index_files=["index.html", "README.md"])
    assert broken(report, tree) == ALWAYS_BROKEN | {
        "guide/",  # a directory without an index file, once --index-files asks for one
        "site/sub/",
        "file://" + str(tree.parent / "outside.md"),  # leaves --root-dir
    }
    outside = next(r for r in report.results if r.url.endswith("outside.md"))
    assert "root-dir" in outside.reason


async def test_a_root_relative_base_href_is_a_folder_of_the_site_not_of_this_machine(tmp_path: Path) -> None:
    # <base href="/guide/"> in a local page: under --root-dir; without it, as a "/x" link, never /guide/ on disk
    site = tmp_path / "site"
    (site / "sub").mkdir(parents=True)
    (site / "guide").mkdir()
    (site / "guide" / "index.html").write_text('<h2 id="req">R</h2>')
    (site / "sub" / "page.html").write_text('<base href="/guide/"><a href="index.html#req">x</a>'
                                            '<a href="index.html#gone">y</a><a href="/guide/">z</a>')
    (site / "etc.html").write_text('<base href="/etc/"><a href="passwd">p</a>')  # this machine's /etc/passwd
    report = await linkhound.check([str(site)], root_dir=str(site))
    assert {r.url.removeprefix(site.as_uri()): r.reason for r in report.results if r.status.is_broken} == {
        "/guide/index.html#gone": "no anchor #gone", "/etc/passwd": "file not found"}
    report = await linkhound.check([str(site)])
    assert {r.url: r.reason for r in report.results} == {
        "file:///guide/index.html": ROOTLESS, "file:///guide/": ROOTLESS, "file:///etc/passwd": ROOTLESS}


def test_a_root_relative_base_href_in_pages_parsed_ahead_by_a_child(tmp_path: Path) -> None:
    # 300 pages of 1 KB: parsed by a forked child while the command starts, their links resolved there too
    site = tmp_path / "site"
    (site / "guide").mkdir(parents=True)
    (site / "guide" / "index.html").write_text('<h2 id="req">R</h2>')
    for i in range(300):
        (site / f"p{i:03}.html").write_text('<base href="/guide/"><a href="index.html#req">x</a>' + "<p>w</p>" * 120)
    done = run("--no-config", "--offline", "-f", "json", "--root-dir", "site", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-500:]
    assert json.loads(done.stdout)["summary"]["total"] == 300
    done = run("--no-config", "--offline", "-f", "json", "site", cwd=tmp_path)
    results = json.loads(done.stdout)["results"]
    assert done.returncode == 2 and [(r["url"], len(r["references"])) for r in results] == [
        ("file:///guide/index.html", 300)]


async def test_a_root_relative_link_cannot_climb_above_the_root(tmp_path: Path) -> None:
    # a URL's path stops at "/": browsers read /../guide/ as /guide/, so it is in the site, not outside
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "index.md").write_text("# G\n")
    (docs / "a.md").write_text("[r](/../guide/) [s](/x/../../guide/index.md#g) [t](/../guide/gone.md)\n")
    report = await linkhound.check([str(docs / "a.md")], root_dir=str(docs))
    assert {r.url.removeprefix(docs.as_uri()): r.reason for r in report.results} == {
        "/guide/": "directory", "/guide/index.md": "", "/guide/gone.md": "file not found"}


async def test_root_dir_lets_a_symlink_kept_in_it_point_outside(tmp_path: Path) -> None:
    # docs/changelog.md -> ../CHANGELOG.md: only `..` written in a link climbs out, as a web server sees it
    (tmp_path / "CHANGELOG.md").write_text("# Changes\n\n## v2\n")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "a.md").write_text("# A\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "changelog.md").symlink_to("../CHANGELOG.md")
    (docs / "shared").symlink_to("../shared", target_is_directory=True)
    (docs / "index.md").write_text(
        "[c](changelog.md#v2) [root](/changelog.md) [s](shared/a.md#a) [up](../CHANGELOG.md) [no](changelog.md#v3)\n"
    )
    report = await linkhound.check([str(docs / "index.md")], root_dir=str(docs))
    verdicts = {r.url.replace(docs.as_uri(), "docs").replace(tmp_path.as_uri(), ""): r.reason for r in report.results}
    assert verdicts == {
        "docs/changelog.md": "",  # with #v2, found
        "docs/shared/a.md": "",  # with #a
        "/CHANGELOG.md": f"path leaves --root-dir {docs}",
        "docs/changelog.md#v3": "no anchor #v3",
    }


@pytest.mark.parametrize("kept", ["memory", "state"])
async def test_a_target_linked_only_with_fragments_it_lacks_is_reported_once_per_fragment(tmp_path: Path,
                                                                                          kept: str) -> None:
    # no result for the page itself: no link asks for it alone, and it would count a link nobody wrote
    (tmp_path / "a.md").write_text("# A\n\n[x](#nope) [y](b.md#gone) [z](b.md#gone) [w](b.md#b)\n")
    (tmp_path / "b.md").write_text("# B\n")
    state = {"state": str(tmp_path / "st")} if kept == "state" else {}
    report = await linkhound.check([str(tmp_path / "a.md")], **state)
    counts = {r.url.removeprefix(tmp_path.as_uri() + "/"): len(r.references) for r in report.results}
    assert counts == {"a.md#nope": 1, "b.md#gone": 2, "b.md": 1}
    assert (report.summary.total, report.summary.unique, report.summary.broken) == (4, 3, 2)


async def test_a_linked_local_file_is_read_whole_for_its_anchors(tmp_path: Path) -> None:
    # --max-body-size is for what servers send: cut here, an anchor past the cut would be reported missing
    (tmp_path / "big.md").write_text("# Top\n" + "filler\n" * 300 + "## Late\n")
    (tmp_path / "l.md").write_text("[a](big.md#late) [b](big.md#later)\n")
    report = await linkhound.check([str(tmp_path / "l.md")], max_body_size=1000)
    assert [r.reason for r in report.broken] == ["no anchor #later"]


_WRITE_ONLY = Path("/proc/sys/vm/compact_memory")  # mode 0200: unreadable even for root, whom chmod doesn't stop


@pytest.mark.skipif(not _WRITE_ONLY.is_file(), reason="needs Linux's /proc/sys")
@pytest.mark.parametrize("kept", ["memory", "state"])
async def test_a_file_or_index_file_that_cannot_be_read_is_broken_saying_so(tmp_path: Path, kept: str) -> None:
    (tmp_path / "secret.html").symlink_to(_WRITE_ONLY)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "index.html").symlink_to(_WRITE_ONLY)
    (tmp_path / "a.md").write_text("[s](secret.html) [f](secret.html#part) [d](folder/) [i](folder/#part)\n")
    state = {"state": str(tmp_path / "st")} if kept == "state" else {}
    report = await linkhound.check([str(tmp_path / "a.md")], **state)
    verdicts = {r.url.removeprefix(tmp_path.as_uri() + "/"): (r.status, r.reason) for r in report.results}
    assert verdicts == {
        "secret.html": (Status.BROKEN, "file can't be read (permission denied)"),
        "folder/": (Status.OK, "directory"),
        "folder/#part": (Status.BROKEN, "index file can't be read (permission denied)"),  # (not "no anchor")
    }
    # with --index-files, the folder itself is broken: a web server could not serve it
    report = await linkhound.check([str(tmp_path / "a.md")], index_files=["index.html"])
    assert {r.url.removeprefix(tmp_path.as_uri() + "/"): r.reason for r in report.broken} == {
        "secret.html": "file can't be read (permission denied)",
        "folder/": "index file can't be read (permission denied)",
    }


def _with_file_modes() -> tuple[str, ...]:
    """What to run linkhound through so that file modes apply to it: nothing for a user; for root, setpriv
    without the capabilities that pass over them (skipped where that can't be done)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root passes over file modes, and setpriv is not here to stop it")
    prefix = (setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--")
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("setpriv can't drop capabilities here")
    return prefix


@pytest.mark.parametrize("index_files", [False, True])
def test_a_folder_that_cannot_be_entered_is_named_as_the_reason(tmp_path: Path, index_files: bool) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "index.md").write_text("# X\n")
    (tmp_path / "a.md").write_text("[a](locked/index.md) [b](locked/#x) [c](locked/)\n")
    (tmp_path / "locked").chmod(0)
    try:
        options = ("--index-files", "index.md") if index_files else ()
        done = run("--no-config", "--offline", "--format", "json", *options, str(tmp_path / "a.md"),
                   prefix=_with_file_modes())
    finally:
        (tmp_path / "locked").chmod(0o755)
    results = json.loads(done.stdout)["results"]
    verdicts = {r["url"].removeprefix(tmp_path.as_uri() + "/"): (r["status"], r["reason"]) for r in results}
    entered = ("broken", "directory can't be entered (permission denied)")
    assert verdicts == {
        "locked/index.md": ("broken", "file can't be read (permission denied: a folder on its path can't be entered)"),
        **({"locked/": entered} if index_files else {"locked/": ("ok", "directory"), "locked/#x": entered}),
    }


async def test_fragments_can_be_turned_off(tree: Path) -> None:
    report = await linkhound.check([str(tree)], check_fragments=False, root_dir=str(tree))
    assert broken(report, tree) == {"guide/gone.md", "file://" + str(tree.parent / "outside.md")}


async def test_remap_maps_a_public_url_to_the_local_build(tree: Path, tmp_path: Path) -> None:
    doc = tmp_path / "links.md"
    doc.write_text(
        "[ok](https://docs.example.org/guide/setup.md#requirements)\n"
        "[bad](https://docs.example.org/guide/setup.md#nothing)\n"
        "[gone](https://docs.example.org/missing.html)\n"
    )
    report = await linkhound.check([str(doc)], remap=[f"^https://docs\\.example\\.org/ {tree.as_uri()}/"])
    assert broken(report, tree) == {"guide/setup.md#nothing", "missing.html"}


async def test_base_url_makes_relative_links_urls_and_remap_brings_them_back(tree: Path) -> None:
    # the files are served at https://docs.example.org/; --remap points that back at the folder
    report = await linkhound.check(
        [str(tree / "guide")],
        root_dir=str(tree),
        base_url="https://docs.example.org/",
        remap=[f"^https://docs\\.example\\.org/ {tree.as_uri()}/"],
    )
    assert broken(report, tree) == set()
    back = next(r for r in report.results if r.url.endswith("README.md"))
    assert back.status is Status.OK and back.references[0].text == "../README.md#project-title"


async def test_offline_skips_remote_links_and_touches_no_network(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("[remote](http://127.0.0.1:9/never) [local](a.md)\n")
    report = await linkhound.check([str(doc)], offline=True)
    status = {r.url: r.status for r in report.results}
    assert status["http://127.0.0.1:9/never"] is Status.SKIPPED
    assert report.summary.success
