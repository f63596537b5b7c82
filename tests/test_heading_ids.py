"""Which heading ids the #fragments of links to local Markdown files are judged by: GitHub's, or MkDocs' for the
files of a MkDocs project's docs_dir (--heading-ids auto, the default), whichever the setting names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

import linkhound
from cli_run import run
from linkhound import Status
from linkhound.extract import GITHUB, HeadingIds
from linkhound.heading_styles import HeadingStyles, ids_of_config

PAGE = "# Page\n\n## Install & Run!\n\n## Café Crème\n\n## Dup\n## Dup\n"
# the first link of each pair works on MkDocs' site, the second on GitHub
LINKS = ("[1](page.md#install-run)\n[2](page.md#install--run)\n[3](page.md#cafe-creme)\n[4](page.md#café-crème)\n"
         "[5](page.md#dup_1)\n[6](page.md#dup-1)\n")
MKDOCS_WORKS = {"#install-run", "#cafe-creme", "#dup_1"}
GITHUB_WORKS = {"#install--run", "#café-crème", "#dup-1"}


def project(root: Path, config: str = "site_name: x\n", docs: str = "docs") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(config)
    for folder in (root / docs, root):  # the docs, and a README beside mkdocs.yml (GitHub's, not MkDocs')
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "page.md").write_text(PAGE)
        (folder / "links.md").write_text(LINKS)
    return root / docs


async def verdicts(*inputs: Path, **options: object) -> dict[str, set[str]]:
    """The #fragments reported broken, by the folder of the file they name."""
    report = await linkhound.check([str(i) for i in inputs], **options)
    out: dict[str, set[str]] = {}
    for result in report.results:
        if "#" in result.url:
            assert result.status is Status.BROKEN
            url, fragment = result.url.split("#", 1)
            fragment = unquote(fragment)
            out.setdefault(Path(url.removeprefix("file://")).parent.name, set()).add("#" + fragment)
    return out


def works(fragments: set[str]) -> set[str]:
    """The fragments of LINKS that are broken where `fragments` work."""
    return (MKDOCS_WORKS | GITHUB_WORKS) - fragments


async def test_files_of_a_mkdocs_docs_dir_get_mkdocs_ids_and_the_others_githubs(tmp_path: Path) -> None:
    docs = project(tmp_path / "site")
    got = await verdicts(docs / "links.md", tmp_path / "site" / "links.md")
    assert got == {"docs": works(MKDOCS_WORKS), "site": works(GITHUB_WORKS)}


async def test_docs_dir_named_in_mkdocs_yml_is_the_one_with_mkdocs_ids(tmp_path: Path) -> None:
    docs = project(tmp_path / "site", "site_name: x\ndocs_dir: 'src/pages'  # moved\n", docs="src/pages")
    (tmp_path / "site" / "docs").mkdir()  # not the docs_dir
    (tmp_path / "site" / "docs" / "links.md").write_text(LINKS.replace("page.md", "../src/pages/page.md"))
    assert (await verdicts(docs / "links.md"))["pages"] == works(MKDOCS_WORKS)
    # a link from outside docs_dir into it: judged by the ids of the file it names, which is in docs_dir
    assert (await verdicts(tmp_path / "site" / "docs" / "links.md"))["pages"] == works(MKDOCS_WORKS)


async def test_the_setting_names_the_ids_whatever_the_folder(tmp_path: Path) -> None:
    docs = project(tmp_path / "site")
    assert (await verdicts(docs / "links.md", heading_ids="github"))["docs"] == works(GITHUB_WORKS)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "page.md").write_text(PAGE)
    (plain / "links.md").write_text(LINKS)
    assert (await verdicts(plain / "links.md", heading_ids="mkdocs"))["plain"] == works(MKDOCS_WORKS)
    assert (await verdicts(plain / "links.md"))["plain"] == works(GITHUB_WORKS)


async def test_slugify_named_in_mkdocs_yml_makes_the_ids(tmp_path: Path) -> None:
    config = ("markdown_extensions:\n  - attr_list\n  - toc:\n      permalink: true\n"
              "      slugify: !!python/object/apply:pymdownx.slugs.slugify\n        kwds:\n          case: lower\n")
    docs = project(tmp_path / "site", config)
    # pymdownx keeps what is a letter, and makes each space a hyphen
    assert (await verdicts(docs / "links.md"))["docs"] == works({"#install--run", "#café-crème", "#dup_1"})


def test_ids_of_config_reads_the_toc_settings() -> None:
    assert ids_of_config("site_name: x\n") == HeadingIds("toc")
    unicode = "markdown_extensions:\n- toc:\n    slugify: !!python/name:markdown.extensions.toc.slugify_unicode\n"
    assert ids_of_config(unicode + "    separator: _\n") == HeadingIds("toc", "unicode", separator="_")
    # a separator of another extension is not toc's
    assert ids_of_config("markdown_extensions:\n  - toc\n  - other:\n      separator: '+'\n") == HeadingIds("toc")
    fold = ("markdown_extensions:\n  - toc:\n"
            "      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: fold}}\n")
    assert ids_of_config(fold) == HeadingIds("toc", "pymdownx", "fold")


def test_heading_styles_look_for_mkdocs_yml_once_per_folder(tmp_path: Path) -> None:
    docs = project(tmp_path / "site")
    styles = HeadingStyles("auto")
    assert styles.of(str(docs / "page.md")).style == "toc"
    (tmp_path / "site" / "mkdocs.yml").unlink()  # (read once: the answer stays for the run)
    assert styles.of(str(docs / "links.md")).style == "toc"
    assert styles.of(str(tmp_path / "site" / "page.md")) is GITHUB
    assert HeadingStyles("auto").of(str(docs / "page.md")) is GITHUB
    assert HeadingStyles("github").of(str(docs / "page.md")) is GITHUB


def test_github_ids_with_user_content_before_them_are_anchors(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text('# Install\n\nText[^note].\n\n[^note]: The note.\n\n<a id="raw"></a>\n\n'
                                   "[1](#user-content-install)\n[2](#user-content-fn-note)\n[3](#user-content-raw)\n"
                                   "[4](#user-content-nope)\n")
    r = run("--no-progress", "--offline", "-f", "json", "d.md", cwd=tmp_path)
    assert r.returncode == 2
    assert '"d.md#user-content-nope"' in r.stdout or "user-content-nope" in r.stdout
    assert r.stdout.count('"status": "broken"') == 1


def test_bad_heading_ids_value_is_a_usage_error(tmp_path: Path) -> None:
    r = run("--no-progress", "--offline", "--heading-ids", "hugo", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "heading-ids" in r.stderr and "Traceback" not in r.stderr


_SPY = """
from linkhound.parse_ahead import ParseAhead
start = ParseAhead.start
def spy(inputs, s):
    parsing = start(inputs, s)
    print("parsed ahead:", parsing is not None, file=sys.stderr)
    return parsing
ParseAhead.start = staticmethod(spy)
from linkhound.cli import entry
entry()
"""


@pytest.mark.parametrize(("documents", "jobs", "ahead"), [(1, 1, False), (40, 1, True), (40, 2, None)])
def test_every_way_of_reading_the_inputs_gives_the_same_ids(tmp_path: Path, documents: int, jobs: int,
                                                            ahead: bool | None) -> None:
    # in this process, in the child that parses them ahead (enough of them: 40 of 8 KB), in two processes. In a
    # fresh interpreter: the child is forked only from a process of one thread
    docs = project(tmp_path / "site")
    for n in range(documents):
        (docs / f"more{n}.md").write_text(LINKS + "x" * 8000)
    r = subprocess.run([sys.executable, "-c", "import sys\n" + _SPY, "--no-progress", "--no-config", "--format",
                        "json", "--jobs", str(jobs), str(docs)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    broken = {unquote("#" + result["url"].split("#", 1)[1]) for result in json.loads(r.stdout)["results"]
              if "#" in result["url"]}
    assert broken == works(MKDOCS_WORKS)
    if ahead is not None:
        assert f"parsed ahead: {ahead}" in r.stderr  # (the way this case is about was taken)
