"""The command line as a user runs it: exit codes, stdin, errors in one line, Ctrl+C."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server import Site, html

ENV = {**os.environ, "NO_COLOR": "1"}


def run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "linkhound", "--no-progress", *args],
        input=stdin, capture_output=True, text=True, timeout=60, env=ENV, cwd=cwd,
    )


async def arun(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """Run the CLI without blocking the event loop that serves the test site."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", *args,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("linkhound ")


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    r = run(str(tmp_path / "nope.md"))
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0
    assert "nope.md" in r.stderr and "no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_flag_and_bad_value_are_usage_errors() -> None:
    r = run("--no-such-flag", "x")
    assert r.returncode == 1 and "--no-such-flag" in r.stderr and "Traceback" not in r.stderr
    r = run("--accept", "abc", "README.md")
    assert r.returncode == 1 and "--accept" in r.stderr and r.stderr.count("\n") == 1
    r = run("--max-concurrency", "0", "README.md")
    assert r.returncode == 1 and "--max-concurrency" in r.stderr
    r = run("--exclude", "(", "README.md")
    assert r.returncode == 1 and "--exclude" in r.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--scheme", "http,gopher"], "--scheme: unknown scheme 'gopher' (known: file, http, https, mailto)"),
        (["--max-pages", "0"], "--max-pages: must be at least 1, got 0"),
        (["--base-url", "notaurl"], "--base-url: 'notaurl' is not an absolute http(s) or file URL"),
        (["--base-url", "ftp://example.org/"], "--base-url: 'ftp://example.org/' is not an absolute"),
        (["--scope-domain", "http://bad host"], "--scope-domain: 'http://bad host' is not a host name"),
        (["--scope-domain", "a.test:8080"], "--scope-domain: 'a.test:8080' is not a host name"),
        (["--root-dir", "/nonexistent"], "--root-dir: '/nonexistent' doesn't exist"),
        (["--root-dir", "a.md"], "--root-dir: 'a.md' is not a directory"),
        (["-f", "xml"], "--format: unknown format 'xml'"),
    ],
)
def test_bad_option_values_are_one_line_usage_errors(tmp_path: Path, args: list[str], expected: str) -> None:
    (tmp_path / "a.md").write_text("# A\n")
    r = run(*args, "a.md", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.startswith(f"linkhound: error: {expected}") and r.stderr.count("\n") == 1, r.stderr


def test_good_option_values_pass(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n")
    args = ["--scheme", "HTTP,file", "--max-pages", "1", "--base-url", "file:///srv/site/", "--scope-domain",
            "docs.example.org", "--scope-domain", "127.0.0.3", "--scope-domain", "[::1]", "--root-dir", "."]
    r = run(*args, "a.md", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert run("--base-url", "https://example.org/docs/", "a.md", cwd=tmp_path).returncode == 0


def test_empty_input_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[gone](gone.md)\n")  # '' must not mean "this directory"
    r = run("", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr == "linkhound: error: '': empty input (give a URL, file, directory or glob)\n"
    assert run("a.md", " ", cwd=tmp_path).returncode == 1


def test_unreadable_directory_is_a_one_line_input_error() -> None:
    unreadable = _unreadable_proc_dir()
    r = run(unreadable)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == f"linkhound: error: {unreadable}: can't list directory: permission denied\n"


def _unreadable_proc_dir() -> str:
    """A directory that can't be listed even by root (another process's fdinfo, without ptrace rights)."""
    for path in ("/proc/1/fdinfo", "/proc/1/map_files"):
        try:
            os.listdir(path)
        except PermissionError:
            return path
        except OSError:
            continue
    pytest.skip("no directory under /proc/1 that this user can't list")


def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n")
    r = run("--output", str(tmp_path / "no" / "such" / "dir.json"), str(tmp_path / "a.md"))
    assert r.returncode == 1 and "--output" in r.stderr and "Traceback" not in r.stderr


def test_no_inputs_is_a_usage_error() -> None:
    r = run()
    assert r.returncode == 1 and "no inputs" in r.stderr


def test_local_files_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[b](b.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    assert run(str(tmp_path)).returncode == 0
    (tmp_path / "c.md").write_text("line one\n[gone](gone.md)\n")
    r = run(str(tmp_path))
    assert r.returncode == 2
    assert "gone.md" in r.stdout and "c.md:2" in r.stdout


def test_glob_and_gitignore(tmp_path: Path) -> None:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "sub" / "x.md").write_text("[bad](missing.md)\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "y.md").write_text("[bad](missing.md)\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    assert run("docs/**/*.md", cwd=tmp_path).returncode == 2
    r = run(".", cwd=tmp_path)
    assert "x.md" in r.stdout and "y.md" not in r.stdout
    r = run(".", "--no-gitignore", cwd=tmp_path)
    assert "y.md" in r.stdout


async def test_stdin_and_url_input(site: Site) -> None:
    site.page("/ok", "fine")
    code, out, _ = await arun("-", stdin=f"see {site.url('/ok')} and {site.url('/nope')}\n")
    assert code == 2 and site.url("/nope") in out
    site.page("/index.html", html("/ok"))
    code, out, err = await arun(site.url("/index.html"))
    assert code == 0, out + err


async def test_files_from(site: Site, tmp_path: Path) -> None:
    site.page("/a", html("/b"))
    site.page("/b", "ok")
    listing = tmp_path / "inputs.txt"
    listing.write_text(f"# pages\n{site.url('/a')}\n\n{site.url('/b')}\n")
    code, _, _ = await arun("--files-from", str(listing))
    assert code == 0
    assert site.hits("/b") == 1


async def test_first_sigint_prints_partial_report_second_exits(site: Site) -> None:
    site.page("/", html(*[f"/p{i}" for i in range(40)], "/missing"))
    for i in range(40):
        site.slow(f"/p{i}", 0.3 + 0.05 * i, html("/"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "-r", "--host-concurrency", "2", site.url("/"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    while site.hits("/p1") == 0:
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 130
    assert b"interrupted" in err
    assert b"links" in out  # the summary of what was checked
    assert site.hits("/p39") == 0  # no new work after the first Ctrl+C

    # a request that would take 20 s is in flight: the second Ctrl+C doesn't wait for it
    site.page("/hang-root", html("/hang"))
    site.slow("/hang", 20.0)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "--timeout", "30", site.url("/hang-root"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    while site.hits("/hang") == 0:
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    await asyncio.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    await asyncio.wait_for(proc.communicate(), 10)
    assert proc.returncode == 130


@pytest.mark.skipif(not os.path.exists("/proc/self/syscall"), reason="tells when a process waits on a read")
def test_ctrl_c_while_standard_input_is_read_is_one_line_and_130() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "linkhound", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    try:
        deadline = time.monotonic() + 60  # (only a guard: it waits on its stdin in well under a second)
        while Path(f"/proc/{proc.pid}/syscall").read_text().split()[:2] != ["0", "0x0"]:  # read(0, ...)
            assert time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, out, err) == (130, b"", b"linkhound: interrupted before any link was checked\n")


async def test_sigterm_writes_the_report_of_what_was_checked(site: Site) -> None:
    """timeout, docker stop and cancelled CI jobs send SIGTERM: no new work, in-flight requests get a short grace
    (a 20 s request is cancelled, not waited for), the partial report is written, exit code 143."""
    site.page("/", html("/hang", *[f"/p{i}" for i in range(30)], "/missing"))  # /hang is taken first
    for i in range(30):
        site.slow(f"/p{i}", 0.3 + 0.05 * i, html("/"))
    site.slow("/hang", 20.0)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "-r", "--host-concurrency", "3", "--format", "json",
        "--timeout", "30", site.url("/"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    while site.hits("/p1") == 0:
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), 20)  # well under the 20 s request: it was cancelled
    assert proc.returncode == 143, err
    assert b"SIGTERM" in err
    report = json.loads(out)
    assert report["summary"]["interrupted"] is True
    assert report["results"]  # what was checked before the signal is there
    assert site.hits("/p29") == 0  # no new work after SIGTERM
