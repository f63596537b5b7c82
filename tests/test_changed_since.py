"""--changed-since REF: only links in lines added or changed since REF are checked, in a real git repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import linkhound
from cli_run import arun, run
from linkhound.changed_lines import parse_diff
from linkhound.exceptions import UsageError
from server import Site


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.test", "-c", "commit.gpgsign=false",
                           *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, site: Site) -> Path:
    for i in range(1, 9):
        site.page(f"/p{i}", f"page {i}")
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.md").write_text("".join(f"line {i}: [p{i}]({site.url(f'/p{i}')})\n" for i in range(1, 5)))
    (tmp_path / "b.md").write_text(f"[p5]({site.url('/p5')})\n")
    (tmp_path / ".gitignore").write_text("ignored.md\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "first")
    git(tmp_path, "checkout", "-q", "-b", "change")
    return tmp_path


async def test_only_links_in_changed_lines_are_checked(repo: Path, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    a = (repo / "a.md").read_text().splitlines(keepends=True)
    a[1] = f"line 2 changed: [p6]({site.url('/p6')}) and [missing]({site.url('/missing')})\n"  # committed
    (repo / "a.md").write_text("".join(a))
    git(repo, "commit", "-q", "-am", "change a")
    a[3] = a[3].replace("line 4", "line 4, edited")  # not committed: counts too
    (repo / "a.md").write_text("".join(a))
    (repo / "new.md").write_text(f"[p7]({site.url('/p7')})\n")  # not tracked yet: all of it
    (repo / "ignored.md").write_text(f"[p8]({site.url('/p8')})\n")  # ignored: the folder walk leaves it out
    monkeypatch.chdir(repo)
    report = await linkhound.check(["."], changed_since="main")
    checked = {r.url.removeprefix(site.base) for r in report.results}
    assert checked == {"/p6", "/missing", "/p4", "/p7"}
    assert report.summary.unchanged == 3  # p1, p3 in a.md, p5 in b.md
    assert {s.path for s in site.requests} == {"/p6", "/missing", "/p4", "/p7"}
    assert report.summary.broken == 1

    code, out, err = await arun("--changed-since", "main", "--no-config", ".", cwd=repo)
    assert code == 2, err
    assert "3 links skipped as unchanged" in out
    code, out, err = await arun("--changed-since", "main", "--no-config", "--format", "json", ".", cwd=repo)
    assert json.loads(out)["summary"]["unchanged"] == 3


async def test_a_branch_that_main_moved_past_counts_only_its_own_changes(repo: Path, site: Site,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "b.md").write_text(f"[p5]({site.url('/p5')})\n[p6]({site.url('/p6')})\n")
    git(repo, "commit", "-q", "-am", "branch adds p6")
    git(repo, "checkout", "-q", "main")
    (repo / "a.md").write_text((repo / "a.md").read_text() + f"[p7]({site.url('/p7')})\n")
    git(repo, "commit", "-q", "-am", "main moves on")
    git(repo, "checkout", "-q", "change")
    monkeypatch.chdir(repo)
    report = await linkhound.check(["."], changed_since="main")
    assert [r.url for r in report.results] == [site.url("/p6")]
    assert report.summary.unchanged == 5


async def test_nothing_changed_checks_nothing_and_says_so(repo: Path, site: Site,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    report = await linkhound.check(["."], changed_since="HEAD")
    assert report.results == () and report.summary.unchanged == 5 and site.requests == []


async def test_a_renamed_file_is_checked_whole(repo: Path, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "mv", "b.md", "moved.md")
    monkeypatch.chdir(repo)
    report = await linkhound.check(["."], changed_since="main")
    assert [r.url for r in report.results] == [site.url("/p5")]


@pytest.mark.parametrize("config", [("diff.mnemonicPrefix", "true"), ("diff.noprefix", "true"),
                                    ("diff.relative", "true")])
async def test_the_users_git_diff_settings_change_nothing(repo: Path, site: Site, monkeypatch: pytest.MonkeyPatch,
                                                         config: tuple[str, str]) -> None:
    # "+++ w/a.md", "+++ a.md", or paths under the current folder: the changes were read as no change at all
    git(repo, "checkout", "-q", "main")
    (repo / "sub").mkdir()
    (repo / "sub" / "c.md").write_text(f"[p6]({site.url('/p6')})\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first c")
    git(repo, "checkout", "-q", "-B", "change")
    with (repo / "a.md").open("a") as a:
        a.write(f"[missing]({site.url('/missing')})\n")
    with (repo / "sub" / "c.md").open("a") as c:
        c.write(f"[p7]({site.url('/p7')})\n")
    git(repo, "commit", "-q", "-am", "change a and c")
    git(repo, "config", *config)
    monkeypatch.chdir(repo / "sub")  # (diff.relative: git diff would name only what is under sub/)
    report = await linkhound.check([str(repo)], changed_since="main")
    assert {r.url.removeprefix(site.base) for r in report.results} == {"/missing", "/p7"}


def test_a_file_git_calls_binary_counts_whole() -> None:
    diff = ["diff --git a/x.md b/x.md", "Binary files a/x.md and b/x.md differ",
            "diff --git a/n.md b/n.md", "new file mode 100644", "Binary files /dev/null and b/n.md differ",
            'Binary files a/gone.md and /dev/null differ', "--- a/y.md", "+++ b/y.md", "@@ -1 +1 @@", "+x"]
    assert parse_diff(diff) == {"x.md": None, "n.md": None, "y.md": frozenset({1})}


def test_not_a_repository_or_a_bad_ref_is_a_one_line_error(repo: Path, tmp_path_factory: pytest.TempPathFactory
                                                           ) -> None:
    done = run("--changed-since", "no-such-branch", "--no-config", ".", cwd=repo)
    assert done.returncode == 1
    assert done.stderr == ("linkhound: error: --changed-since no-such-branch: no such branch, tag or commit in this "
                           "repository\n")
    elsewhere = tmp_path_factory.mktemp("plain")
    (elsewhere / "x.md").write_text("[x](https://x.test/)\n")
    done = run("--changed-since", "main", "--no-config", "x.md", cwd=elsewhere)
    assert (done.returncode, done.stderr) == (1, "linkhound: error: --changed-since main: not in a git repository\n")
    done = run("--changed-since", "--output=x", "--no-config", ".", cwd=repo)
    assert done.returncode == 1 and done.stderr.count("\n") == 1


def test_library_raises_usage_error_before_any_request(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    with pytest.raises(UsageError, match="no such branch"):
        linkhound.start(["."], changed_since="nope")


def test_parse_diff_reads_hunks_deletions_and_quoted_paths() -> None:
    diff = [
        "diff --git a/x.md b/x.md", "--- a/x.md", "+++ b/x.md",
        "@@ -3 +3 @@", "-old", "+new",
        "@@ -10,0 +11,2 @@", "+a", "+b",
        "@@ -20,2 +21,0 @@", "-gone", "-gone",
        "--- a/gone.md", "+++ /dev/null", "@@ -1 +0,0 @@", "-x",
        '+++ "b/t\\303\\251 \\"q\\".md"', "@@ -0,0 +1 @@", "+x",
    ]
    assert parse_diff(diff) == {"x.md": frozenset({3, 11, 12}), 'té "q".md': frozenset({1})}


async def test_stdin_has_no_history_and_counts_whole(repo: Path, site: Site) -> None:
    code, out, err = await arun("--changed-since", "main", "--no-config", "-", stdin=f"[p1]({site.url('/p1')})\n",
                                cwd=repo)
    assert code == 0, err
    assert "0 links skipped as unchanged" in out and site.hits("/p1") == 1
