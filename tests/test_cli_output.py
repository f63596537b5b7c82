"""What the command prints and where: the progress bar, -o with its summary on stderr, -q, --color, reasons,
where inputs were named, --files-from errors, --dump and --dump-inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import linkhound
from cli_run import ENV, HANG_GUARD, arun, run, run_on_terminal
from linkhound import Status
from server import Site, html

ESC = "\x1b["


def _terminal_env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100", **more}


def _docs(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text("# A\n\n[b](b.md) [gone](gone.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    return tmp_path


# -- progress, -o, -q, --color ------------------------------------------------------------------------------


def test_progress_shows_on_a_terminal_stderr_even_when_stdout_is_redirected(tmp_path: Path) -> None:
    _docs(tmp_path)
    code, out, err = run_on_terminal("a.md", tty="stderr", cwd=tmp_path, env=_terminal_env())
    assert code == 2 and "checking" in err, err
    assert "gone.md" in out and ESC not in out  # the report, piped, has no colour
    for quiet in (["-q"], ["--no-progress"]):
        code, out, err = run_on_terminal(*quiet, "a.md", tty="stderr", cwd=tmp_path, env=_terminal_env())
        assert code == 2 and "checking" not in err and "gone.md" in out


def test_output_file_gets_the_report_and_stderr_the_summary_line(tmp_path: Path) -> None:
    _docs(tmp_path)
    r = run("--no-progress", "a.md", "-o", "report.txt", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    report = (tmp_path / "report.txt").read_text()
    summary = report.splitlines()[-1]
    assert "gone.md" in report and summary.startswith("2 links (2 unique) in 1 document: 1 ok, 1 broken")
    (line,) = r.stderr.splitlines()  # the summary line alone, its counts those of the report
    assert line.rsplit(" — ", 1)[0] == summary.rsplit(" — ", 1)[0]
    r = run("--no-progress", "-q", "a.md", "-o", "report.txt", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr == ""


@pytest.mark.parametrize("fmt", ["compact", "json", "jsonl"])
def test_a_reader_that_leaves_early_does_not_change_the_verdict(tmp_path: Path, fmt: str) -> None:
    # `linkhound -f json docs/ | head -1` under `set -o pipefail`: broken links still exit 2
    doc = tmp_path / "many.md"
    doc.write_text("".join(f"[l{i}](x{i}.md)\n" for i in range(3000)))
    proc = subprocess.Popen([sys.executable, "-m", "linkhound", "-f", fmt, str(doc)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader leaves
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(HANG_GUARD) == 2
    assert "Traceback" not in err and "error" not in err


def test_a_run_refused_before_its_first_line_leaves_the_last_report_as_it_was(tmp_path: Path) -> None:
    _docs(tmp_path)
    (tmp_path / "c.md").write_text("# C\n")
    assert run("--no-progress", "a.md", "--state", "st", "-o", "report.txt", cwd=tmp_path).returncode == 2
    before = (tmp_path / "report.txt").read_text()
    assert "gone.md" in before
    for output in ("report.txt", "new.txt"):  # the state is another crawl's: refused, nothing written
        r = run("--no-progress", "c.md", "--state", "st", "-o", output, cwd=tmp_path)
        assert r.returncode == 1 and "the state of another crawl" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "report.txt").read_text() == before
    assert not (tmp_path / "new.txt").exists()  # not left behind empty either
    r = run("--no-progress", "c.md", "-o", "report.txt", cwd=tmp_path)  # a run that reports replaces it
    assert r.returncode == 0 and "gone.md" not in (tmp_path / "report.txt").read_text()


def test_output_to_a_named_pipe_is_opened_once(tmp_path: Path) -> None:
    _docs(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    reader = subprocess.Popen(["cat", str(tmp_path / "fifo")], stdout=subprocess.PIPE, text=True)
    r = run("--no-progress", "a.md", "-o", "fifo", cwd=tmp_path)
    out, _ = reader.communicate(timeout=HANG_GUARD)
    assert r.returncode == 2 and "gone.md" in out


def test_ctrl_c_while_an_unbuffered_report_goes_to_a_slow_pipe_loses_none_of_it(tmp_path: Path) -> None:
    # python -u (PYTHONUNBUFFERED): a write the signal cut short lost the rest of it, unseen
    doc = tmp_path / "many.md"
    doc.write_text("".join(f"[l{i}](x{i}.md)\n" for i in range(20000)))
    proc = subprocess.Popen([sys.executable, "-m", "linkhound", "--no-progress", "-f", "json", str(doc)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**ENV, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    with proc.stdout, proc.stderr:
        chunks = [proc.stdout.read(1)]  # the report has begun, and fills the pipe while nothing more is read
        proc.send_signal(signal.SIGINT)
        while chunk := proc.stdout.read(1 << 16):
            chunks.append(chunk)
        err = proc.stderr.read().decode()
    assert proc.wait(HANG_GUARD) == 2, err  # (the run was over: broken links, not an interrupted run)
    assert len(json.loads(b"".join(chunks))["results"]) == 20000
    assert err.startswith("linkhound: writing the report (Ctrl+C again to quit now)\n"), err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a device that is always full")
@pytest.mark.parametrize("how", ["stdout", "output"])
def test_a_report_that_cannot_be_written_is_one_line_and_exit_1(tmp_path: Path, how: str) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("[x](gone.md)\n")
    if how == "output":
        r = run("-f", "json", "-o", "/dev/full", str(doc))
        assert r.stderr == "linkhound: error: can't write the report to /dev/full: no space left on device\n"
    else:
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "linkhound", "-f", "json", str(doc)], stdout=full,
                               stderr=subprocess.PIPE, text=True, env=ENV, timeout=HANG_GUARD)
        assert r.stderr == "linkhound: error: can't write the report: no space left on device\n"
    assert r.returncode == 1


def test_color_auto_always_never_and_no_color(tmp_path: Path) -> None:
    _docs(tmp_path)
    args = ("--no-progress", "a.md")
    assert ESC in run(*args, "--color", "always", cwd=tmp_path).stdout  # piped, but asked for
    assert ESC not in run(*args, cwd=tmp_path, env=_terminal_env()).stdout  # piped: auto is off
    _, out, _ = run_on_terminal(*args, tty="stdout", cwd=tmp_path, env=_terminal_env())
    assert ESC in out
    _, out, _ = run_on_terminal(*args, tty="stdout", cwd=tmp_path, env=_terminal_env(NO_COLOR="1"))
    assert ESC not in out and "gone.md" in out
    _, out, _ = run_on_terminal(*args, "--color", "never", tty="stdout", cwd=tmp_path, env=_terminal_env())
    assert ESC not in out and "gone.md" in out
    _, out, _ = run_on_terminal(*args, "--color", "always", tty="stdout", cwd=tmp_path,
                                env=_terminal_env(NO_COLOR="1"))
    assert ESC in out  # the flag given on this command line wins over the environment
    r = run(*args, "--color", "sometimes", cwd=tmp_path)
    assert r.returncode == 1 and "--color" in r.stderr


# -- reasons ------------------------------------------------------------------------------------------------


async def test_a_timeout_says_after_how_long_and_a_429_names_its_retry_after(site: Site) -> None:
    site.slow("/slow", 3)
    site.status("/busy", 429, headers={"Retry-After": "7"})
    site.status("/busy-no-header", 429)
    site.page("/", html("/slow", "/busy", "/busy-no-header"))
    report = await linkhound.check([site.url("/")], timeout=0.5, max_retries=0)
    reasons = {r.url.removeprefix(site.base): (r.status, r.reason) for r in report.results}
    assert reasons["/slow"] == (Status.TIMEOUT, "timed out after 0.5 s")
    assert reasons["/busy"] == (Status.RATE_LIMITED, "Too Many Requests (Retry-After 7 s)")
    assert reasons["/busy-no-header"] == (Status.RATE_LIMITED, "Too Many Requests")


# -- where inputs were named, --files-from errors -----------------------------------------------------------------


async def test_a_url_input_is_shown_where_it_was_named(site: Site, tmp_path: Path) -> None:
    code, out, _ = await arun("--no-progress", site.url("/nope"))
    assert code == 2 and "    in command line (input)" in out, out
    (tmp_path / "urls.txt").write_text(f"# to check\n{site.url('/gone')}\n")
    code, out, _ = await arun("--no-progress", "--files-from", "urls.txt", cwd=tmp_path)
    assert code == 2 and "    in urls.txt:2:1 (input)" in out, out
    code, out, _ = await arun("--no-progress", "-f", "json", site.url("/nope"))
    assert '"source": "command line"' in out


def test_files_from_errors_name_the_file_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# ok\n")
    (tmp_path / "list.txt").write_text("ok.md\n\n# a comment\nmissing.md\n")
    r = run("--no-progress", "--files-from", "list.txt", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr == "linkhound: error: list.txt:4: missing.md: no such file or directory (and not a URL)\n"
    r = run("--no-progress", "--files-from", "nolist.txt", cwd=tmp_path)
    assert r.returncode == 1 and "nolist.txt" in r.stderr and "Traceback" not in r.stderr


# -- --dump and --dump-inputs ----------------------------------------------------------------------------------------


async def test_dump_lists_the_links_that_would_be_checked_and_requests_nothing(site: Site, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        f"# A\n\n[b](b.md#part) [site]({site.url('/x')})\n[skip](https://skip.invalid/) [js](javascript:void(0))\n"
    )
    (tmp_path / "docs" / "b.md").write_text("[home](/)\n")
    code, out, err = await arun("--dump", "--exclude", "skip", "docs", site.url("/page"), cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines() == [
        "docs/b.md#part\tdocs/a.md:3:5",
        f"{site.url('/x')}\tdocs/a.md:3:23",
        "/\tdocs/b.md:1:8",
        f"{site.url('/page')}\tcommand line",
    ], out
    assert site.requests == []  # nothing checked, the URL input not fetched

    code, out, err = await arun("--dump-inputs", "docs", site.url("/page"), cwd=tmp_path)
    assert code == 0 and out.splitlines() == ["docs/a.md", "docs/b.md", site.url("/page")]
    code, out, err = await arun("--dump-inputs", "-", stdin="[x](y.md)\n", cwd=tmp_path)
    assert out == "-\n"
    assert site.requests == []


def test_the_printing_modes_are_one_at_a_time_and_dumps_take_no_format(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("[x](y.md)\n")
    for args, error in ((["--dump", "--dump-inputs"], "--dump and --dump-inputs: choose one"),
                        (["--print-config", "--dump"], "--print-config and --dump: choose one"),
                        (["--dump", "-f", "json"], "--dump prints its own list: --format doesn't apply to it")):
        r = run(*args, str(doc))
        assert (r.returncode, r.stdout, r.stderr) == (1, "", f"linkhound: error: {error}\n")
    r = run("--print-config", "-f", "json", str(doc))
    assert r.returncode == 0 and 'format = "json"' in r.stdout


def test_dump_of_stdin_resolves_like_a_file_in_the_current_folder(tmp_path: Path) -> None:
    r = run("--dump", "-", stdin="[x](sub/y.md#top) [mail](mailto:a@example.org)\n", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines() == ["sub/y.md#top\t-:1:5", "mailto:a@example.org\t-:1:26"]


def _verdicts(results: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """Each result as its URL, status and the places of its references, sorted."""
    out = []
    for r in results:
        refs = r["references"]
        assert isinstance(refs, list)
        out.append((r["url"], r["status"], tuple(sorted((x["source"], x["line"], x["column"]) for x in refs))))
    return sorted(out)


@pytest.mark.parametrize("state", [False, True])
def test_jsonl_results_are_the_results_json_reports(tmp_path: Path, state: bool) -> None:
    # A page whose only links ask for a missing #fragment has no result of its own: those links are the broken
    # fragment's. A link without a fragment that comes later gives the page one.
    (tmp_path / "a.md").write_text("# Hi\n\n[a](#nope)\n")
    (tmp_path / "b.md").write_text("# B\n\n[b](c.md#gone)\n")
    (tmp_path / "c.md").write_text("# C\n\n[a](a.md#hi)\n")
    (tmp_path / "d.md").write_text("# D\n\n[c](c.md)\n")
    more = ["--state", str(tmp_path / "state")] if state else []
    lines = run("--no-progress", "-q", "-f", "jsonl", *more, "a.md", "b.md", "c.md", "d.md", cwd=tmp_path)
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    streamed = [r for r in records if r["type"] == "result"]
    (summary,) = [r for r in records if r["type"] == "summary"]
    doc = json.loads(run("--no-progress", "-q", "-f", "json", "a.md", "b.md", "c.md", "d.md", cwd=tmp_path).stdout)
    assert _verdicts(streamed) == _verdicts(doc["results"])
    assert len(streamed) == summary["unique"] == doc["summary"]["unique"] == 4
    assert summary["by_status"]["ok"] == sum(r["status"] == "ok" for r in streamed) == 2
