"""The docs site: MkDocs builds it in strict mode, and linkhound finds no broken link or anchor in the result."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")

REPO = Path(__file__).parent.parent
README = REPO / "README.md"
# README sections the site doesn't take: docs/config.md says all of the first at length; the second is for
# people working on linkhound itself.
NOT_ON_THE_SITE = {"Configuration, filters and credentials", "Development"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
         "--site-dir", str(out)],
        cwd=out.parent, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return out


def check(site: Path, tmp_path: Path) -> tuple[int, dict[str, object], str]:
    report = tmp_path / "links.json"
    r = subprocess.run(
        [sys.executable, "-m", "linkhound", "--offline", "--check-fragments", "--index-files", "index.html",
         "--root-dir", str(site), str(site), "--format", "json", "--output", str(report)],
        capture_output=True, text=True, timeout=120,
    )
    return r.returncode, json.loads(report.read_text(encoding="utf-8")), r.stderr


def test_linkhound_finds_nothing_broken_in_its_own_docs(site: Path, tmp_path: Path) -> None:
    code, report, stderr = check(site, tmp_path)
    results = report["results"]
    assert isinstance(results, list)
    broken = [(r["url"], r["reason"], r["references"][0]["source"]) for r in results if r["status"] != "ok"
              and r["status"] != "skipped"]
    assert code == 0 and not broken, (broken, stderr)
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert summary["pages"] == len(list(site.rglob("*.html")))
    # Anchors were checked: a link from one page to a heading of another (the kind a renamed heading breaks),
    # and each heading's permalink.
    texts = {ref["text"] for r in results for ref in r["references"]}
    assert "../architecture/#what-keeps-it-fast-each-measured-on-bench-2-cores" in texts
    assert len({t for t in texts if t.startswith("#")}) > 50


def test_the_check_of_the_docs_can_fail(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page = copy / "recipes" / "index.html"
    bad = '<a href="../config/#no-such-option">x</a> <a href="../nowhere/">y</a> <a href="/formats/#gone">z</a>'
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", bad + "</body>"), encoding="utf-8")
    code, report, _ = check(copy, tmp_path)
    assert code == 2
    results = report["results"]
    assert isinstance(results, list)
    assert sorted(r["references"][0]["text"] for r in results if r["status"] == "broken") == [
        "../config/#no-such-option", "../nowhere/", "/formats/#gone",
    ]


def test_front_page_takes_the_set_up_commands_from_the_readme(site: Path) -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block and text.index("```sh") < text.index("\n## "), "README must start with its set-up commands"
    commands = [line.split("#")[0].strip() for line in first_block[1].splitlines()]
    assert commands == ["pip install . && linkhound --recursive https://docs.python.org/3/tutorial/",
                        "pip install -e '.[dev]' && python -m pytest"]
    front = html.unescape((site / "index.html").read_text(encoding="utf-8"))
    for command in commands:
        assert command in front


def test_every_readme_section_is_on_the_site() -> None:
    sections = set(re.findall(r"^## (.+)$", README.read_text(encoding="utf-8"), re.M))
    used = {m for page in (REPO / "docs").glob("*.md")
            for m in re.findall(r"<!--\s*readme:\s*(.+?)\s*-->", page.read_text(encoding="utf-8"))}
    assert used <= sections, "a page asks for a README section that doesn't exist"
    assert sections - used == NOT_ON_THE_SITE
