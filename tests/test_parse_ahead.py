"""Local documents parsed ahead by a forked child: the same report as parsing them here, whatever the child
manages to send. Runs that fork do so in a fresh interpreter (a subprocess), which has no threads."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fork_probe import AFTER_FORK, before_fork
from linkhound.api import make_settings
from linkhound.inputs import collect
from linkhound.parse_ahead import MIN_BYTES, ParseAhead, _pointed_to
from linkhound.types import RawLink

ENV = {**os.environ, "NO_COLOR": "1"}


def make_docs(root: Path, pages: int = 60) -> Path:
    """A docs folder past MIN_BYTES: pages linking to each other's headings (some missing), images, code, HTML."""
    rng = random.Random(7)
    words = ["link", "page", "heading", "anchor", "file", "broken", "check", "fragment", "target", "line"]
    for n in range(pages):
        folder = root / f"s{n % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = [f"# Page {n}\n"]
        for section in range(8):
            parts.append(f"\n## Section {section}\n\n" + " ".join(rng.choices(words, k=700)) + "\n")
            other = rng.randrange(pages)
            anchor = f"section-{rng.randrange(10)}"  # 8 and 9 don't exist
            parts.append(f"\nSee [that](../s{other % 6}/page-{other}.md#{anchor}) and [here](#section-{section}).\n")
            parts.append(f"\n![fig](../img/fig-{rng.randrange(3)}.png) <a href=\"page-{n}.md#page-{n}\">self</a>\n")
        parts.append("\n```sh\ncurl https://example.invalid/x\n```\n\nAt https://example.invalid/bare too.\n")
        (folder / f"page-{n}.md").write_text("".join(parts))
    (root / "img").mkdir(exist_ok=True)
    (root / "img" / "fig-0.png").write_bytes(b"png")
    (root / "index.html").write_text('<h1 id="top">Docs</h1><a href="s0/page-0.md#page-0">start</a>'
                                     '<a href="s1/page-1.md#nowhere">x</a>')
    assert sum(p.stat().st_size for p in root.rglob("*.md")) > MIN_BYTES
    return root


def report(*args: str, script: str = "") -> dict[str, Any]:
    """The json report of an offline check, run as `python -m linkhound` (after script, if given)."""
    code = textwrap.dedent(script) + "\nfrom linkhound.cli import entry\nentry()\n"
    r = subprocess.run([sys.executable, "-c", code, "--no-progress", "--offline", "--format", "json", *args],
                       capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 2, r.stderr
    return without_times(json.loads(r.stdout))


def without_times(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: without_times(v) for k, v in x.items() if k not in ("elapsed", "duration")}
    if isinstance(x, list):
        return [without_times(v) for v in x]
    return x


def test_parse_ahead_report_equals_parsing_in_one_process(tmp_path: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    here = report("--workers", "0", str(docs))
    ahead = report(str(docs))
    assert ahead == here
    assert here["summary"]["by_status"]["broken"] > 0 and here["summary"]["by_status"]["ok"] > 0


def test_parse_ahead_report_is_the_same_when_the_child_fails(tmp_path: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    failing = """
        import linkhound.parse_ahead as ahead
        def fail(*args):
            raise RuntimeError("child fails")
        ahead._parse = fail
    """
    assert report(str(docs), script=failing) == report("--workers", "0", str(docs))


def test_parse_ahead_hands_over_what_the_child_parsed(tmp_path: Path) -> None:
    """Waited for to the end (the run never waits), every document comes from the child, equal to parsing it
    here, and its links, when the child resolved them, as LocalFiles resolves them; each is handed over once."""
    docs = make_docs(tmp_path / "docs")
    script = f"""
        import time
        from linkhound.api import make_settings
        from linkhound.extract import extract
        from linkhound.inputs import collect
        from linkhound.links import LinkRules
        from linkhound.parse_ahead import ParseAhead
        s = make_settings(offline=True)
        inputs = collect([{str(docs)!r}])
        ahead = ParseAhead.start(inputs, s)
        assert ahead is not None
        while ahead._fd >= 0:  # until the child is done and reaped
            ahead._receive()
            time.sleep(0.01)
        rules = LinkRules.from_settings(s)
        with_links_resolved = 0
        for inp in inputs:
            extraction, resolved = ahead.take(inp.path, inp.kind)
            assert extraction == extract(inp.content, rules.local_base(inp.path), inp.kind), inp.path
            if resolved is not None:
                resolve = rules.resolver(extraction.base, True)
                assert resolved == [resolve(link.text) for link in extraction.links], inp.path
                with_links_resolved += 1
            assert ahead.take(inp.path, inp.kind) is None
        ahead.close()
        print(len(inputs), with_links_resolved)
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                       timeout=120, env=ENV)
    assert r.returncode == 0, r.stderr
    documents, with_links_resolved = map(int, r.stdout.split())
    # nothing was taken while the child ran: past its first few documents, it was ahead enough to resolve
    assert documents == 61 and with_links_resolved >= documents - 10


@pytest.mark.parametrize("options", [{"workers": 0}, {}])
def test_parse_ahead_not_started_for_little_or_with_workers_0(tmp_path: Path, options: dict[str, Any]) -> None:
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.md").write_text("# A\n\n[b](b.md#b)\n")
    (small / "b.md").write_text("# B\n")
    inputs = collect([str(make_docs(tmp_path / "docs")) if options else str(small)])
    assert ParseAhead.start(inputs, make_settings(**options)) is None


def test_pointed_to_finds_relative_fragment_links_to_inputs(tmp_path: Path) -> None:
    index_of = {str(tmp_path / "a" / "x.md"): 0, str(tmp_path / "b.md"): 1}
    links = [RawLink(text, "markdown", "inline", 1, 1) for text in (
        "x.md#top", "../b.md#b", "#own", "x.md", "https://h/x.md#top", "/abs.md#a", "missing.md#m", "./x.md#again",
    )]
    assert _pointed_to(str(tmp_path / "a" / "here.md"), links, index_of) == [0, 1, 0]


def test_a_run_never_awaited_leaves_no_child(tmp_path: Path) -> None:
    """A Run that is dropped without being awaited takes its child with it (never left blocked on a full pipe)."""
    docs = make_docs(tmp_path / "docs")
    code = textwrap.dedent(f"""
        import gc, os, sys
        import linkhound
        run = linkhound.start([{str(docs)!r}], offline=True, check_fragments=True)
        ahead = run._engine._ahead
        assert ahead is not None, "no child: nothing to test"
        pid = ahead._pid
        del run, ahead
        gc.collect()
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
        else:
            print("still there")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "reaped"


def test_a_program_that_ignores_sigchld_gets_its_report(tmp_path: Path) -> None:
    """SIGCHLD set to SIG_IGN (a daemon reaping its children automatically): the child is reaped by the
    system, and the run ends as usual, here and on the command line."""
    docs = make_docs(tmp_path / "docs")
    library = textwrap.dedent(f"""
        import asyncio, signal
        import linkhound
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        run = linkhound.start([{str(docs)!r}], offline=True)
        assert run._engine._ahead is not None, "no child: nothing to test"
        print(asyncio.run(run.report()).summary.total)
    """)
    r = subprocess.run([sys.executable, "-c", library], capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) > 0
    ignoring = "import signal\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
    assert report(str(docs), script=ignoring) == report("--workers", "0", str(docs))


def test_the_child_holds_none_of_the_programs_files_or_sockets(tmp_path: Path) -> None:
    """The child parsing ahead lets go of the program's listening socket and open files as it starts (a port the
    program closes is closed), even while it waits on a full pipe; the report is made all the same."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(20):  # (link-dense: what the child sends fills the pipe, so it waits there till report())
        (docs / f"p{n}.md").write_text("".join(f"[link {i}](https://example.invalid/p{n}/{i}) " for i in range(1500)))
    program = before_fork(str(tmp_path / "app.log")) + f"""
import asyncio
import linkhound
run = linkhound.start([{str(docs)!r}], offline=True)
assert run._engine._ahead is not None, "no child: nothing to test"
pid = run._engine._ahead._pid
""" + AFTER_FORK + """
print("links:", asyncio.run(run.report()).summary.total)
"""
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["held: []", "port: closed", "links: 30000"]
