"""A big json, csv or junit report is made in two halves, the second by a forked child: the same text as made in
one process, whatever the child does. Runs that fork do so in a fresh interpreter (a subprocess), which has no
threads. Also the quicker reads these reports use: a store's rows and sources, a URL's host."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from fork_probe import AFTER_FORK, before_fork
from linkhound.forks import cores
from linkhound.references import RefStore, ids
from linkhound.report.common import host, sources_of
from linkhound.types import Reference

two_cores = pytest.mark.skipif(cores() < 2, reason="one core: the report is never made by a forked child")

# A report of 60,000 references kept in a RefStore (as a crawl keeps them): a nav link on every page, links
# with #fragments, texts that are not the end of their URL, two links at one place (a tie only the element,
# attribute and text order), quotes, DEL, C1 and non-ASCII text. Sources come in an order that is not sorted.
BUILD = """
    import random
    from linkhound.references import RefStore, ids
    from linkhound.status import Status
    from linkhound.summary import Report, summarize
    from linkhound.types import Page, Result

    rng = random.Random(5)
    store = RefStore()
    site = "https://example.test/"
    targets = {f"{site}p/{n}": [] for n in range(3000)}
    targets[site + "nav"] = []
    targets[site + 'q"\\x7f\\x85é'] = []
    urls = list(targets)
    for page in rng.sample(range(3000), 3000):
        source = f"{site}p/{page}"
        for line in range(1, 20):
            url = urls[rng.randrange(len(urls))]
            text = rng.choice((url[len(site) - 1:], url, url[len(site) - 1:] + "#top", "../x y", "#é\\x9f"))
            targets[url].append(store.add(source, line, rng.randrange(1, 40), "a", "href", text, url))
        targets[site + "nav"].append(store.add(source, 1, 1, "a", "href", "/nav", site + "nav"))
        if page % 100 == 0:  # two links at one place
            targets[site + "nav"].append(store.add(source, 1, 1, "img", "src", "/nav", site + "nav"))
    results = tuple(Result(url, Status.OK if n % 7 else Status.BROKEN, 200, "OK", depth=1,
                           references=store.view(ids(refs), url))
                    for n, (url, refs) in enumerate(targets.items()))
    report = Report(results, summarize(results, 3000, 1.0), (Page(site, 0, 19, True),))
"""


# Each forked_text() call of a script, in `children`: True where a child was forked.
COUNT_FORKS = textwrap.dedent("""
    import linkhound.report.forked as forked
    children = []
    _made = forked.forked_text
    def _counted(make):
        spill = _made(make)
        children.append(spill is not None)
        return spill
    forked.forked_text = _counted
""")


def run(script: str) -> str:
    code = COUNT_FORKS + "from linkhound.references import ids\n" + textwrap.dedent(BUILD) + textwrap.dedent(script)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@two_cores
def test_a_big_report_made_in_two_processes_is_the_text_made_in_one() -> None:
    out = run("""
        import linkhound.report.json_report as json_report
        from linkhound.report import reporter_for
        from linkhound.report.common import by_url
        from linkhound.report.records import dumps, result_record

        text = "".join(reporter_for("json").chunks(report))
        assert children == [True], children
        # the same document dumped whole, in this process
        assert text.startswith(dumps({"schema_version": 2}, pretty=True)[:-2])
        whole = dumps([result_record(r) for r in by_url(report.results)], pretty=True)
        inner = whole[1:-2].replace("\\n", "\\n  ")  # the array's elements, one level further down
        assert inner in text, "results differ"
        assert "".join(reporter_for("json", fork=False).chunks(report)) == text  # --workers 0
        json_report._FORK_AT = 10**9  # made in this process alone
        assert "".join(reporter_for("json").chunks(report)) == text
        assert children == [True], children  # neither asked for a child
        print(len(text), sum(len(r.references) for r in report.results))
    """)
    size, references = map(int, out.split())
    assert references > 60_000 and size > 10_000_000


@two_cores
@pytest.mark.parametrize("fmt", ["junit", "csv"])
def test_a_big_report_of_a_row_a_reference_made_in_two_processes_is_the_text_made_in_one(fmt: str) -> None:
    out = run(f"""
        import csv, io
        import xml.etree.ElementTree as ET
        from linkhound.report import csv_report, junit, reporter_for

        text = "".join(reporter_for("{fmt}").chunks(report))
        assert children == [True], children
        assert "".join(reporter_for("{fmt}", fork=False).chunks(report)) == text  # --workers 0
        junit._FORK_AT = csv_report._FORK_AT = 10**9  # made in this process alone
        assert "".join(reporter_for("{fmt}").chunks(report)) == text
        assert children == [True], children  # neither asked for a child
        if "{fmt}" == "junit":
            root = ET.fromstring(text)
            print(root.get("tests"), len(root.findall("testsuite/testcase")))
        else:
            rows = list(csv.reader(io.StringIO(text)))
            print(len(rows) - 1, sum(len(r.references) for r in report.results))
    """)
    said, rows = map(int, out.split())
    assert said == rows > 60_000


@two_cores
def test_the_text_comes_from_a_child_or_is_made_here_when_the_child_fails() -> None:
    out = run("""
        import os
        from linkhound.report.forked import forked_text
        me = os.getpid()
        made_by = forked_text(lambda: [f"{os.getpid()}"] * 3)
        assert made_by is not None
        pids = "".join(made_by)
        assert pids[: len(pids) // 3] * 3 == pids and int(pids[: len(pids) // 3]) != me, (pids, me)

        def fails_in_a_child():
            if os.getpid() != me:
                raise RuntimeError("the child fails")
            return ["made ", "here"]
        assert "".join(forked_text(fails_in_a_child)) == "made here"
        big = ["é" * 999 + "\\n"] * 3000  # read back across many reads, a character split between two
        assert "".join(forked_text(lambda: big)) == "".join(big)
        print("ok")
    """)
    assert out == "ok\n"


@two_cores
def test_a_child_never_read_is_stopped_and_reaped() -> None:
    out = run("""
        import gc, os, time
        from linkhound.report.forked import forked_text
        spill = forked_text(lambda: iter(lambda: time.sleep(1) or "x", None))  # (endless)
        pid = spill._end.peek()[2][0]  # (the finalizer's arguments: the pid first)
        del spill
        gc.collect()
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
    """)
    assert out == "reaped\n"


@two_cores
def test_the_child_holds_none_of_the_programs_files_or_sockets(tmp_path: Path) -> None:
    """The child making half a report lets go of the program's listening socket and open files as it starts (a
    port the program closes is closed), and its text is read back all the same."""
    flag = tmp_path / "go"
    program = before_fork(str(tmp_path / "app.log")) + f"""
from linkhound.report.forked import forked_text
def make():  # (the child waits, holding what it holds, until the program has looked)
    while not os.path.exists({str(flag)!r}):
        time.sleep(0.01)
    yield "made"
spill = forked_text(make)
assert spill is not None
pid = spill._pid
""" + AFTER_FORK + f"""
open({str(flag)!r}, "w").close()
print("text:", "".join(spill))
"""
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["held: []", "port: closed", "text: made"]


def test_a_references_view_gives_its_rows_in_reference_order() -> None:
    store = RefStore()
    base = "https://example.test/p"
    added = [store.add(source, line, column, element, "href", text, base) for source, line, column, element, text in (
        ("b", 2, 1, "a", "/p"), ("a", 9, 1, "a", "/p#x"), ("b", 1, 5, "img", "other"), ("b", 1, 5, "a", "/p"),
        ("a", 9, 1, "a", "/p"))]
    refs = store.view(ids(added), base)
    assert refs.rows() == sorted(tuple(r) for r in refs) == sorted(refs)
    assert refs.rows()[:2] == [("a", 9, 1, "a", "href", "/p"), ("a", 9, 1, "a", "href", "/p#x")]
    assert refs.in_order() == sorted(refs) and all(type(r) is Reference for r in refs.in_order())
    assert store.view(ids(added[:2]), base).rows() == [("a", 9, 1, "a", "href", "/p#x"), ("b", 2, 1, "a", "href", "/p")]
    assert store.view(ids(added[2:3]), base).rows() == [("b", 1, 5, "img", "href", "other")]
    assert store.view(ids(), base).rows() == []
    assert refs.sources() == {"a", "b"} and store.view(ids(added[1:2]), base).sources() == {"a"}
    assert sources_of(refs) == sources_of(tuple(refs)) == {"a", "b"}


@pytest.mark.parametrize("url", [
    "http://a/", "http://A.Example.COM:8080/x?y#z", "https://[::1]:443/p", "https://[bad/x", "http://u:p@h.test/x",
    "http://h?x", "http://h#f", "http:///p", "http://", "mailto:a@b", "file:///tmp/x", "//h/x", "http://h:99999/",
    "HTTP://UPPER.test/", "http://a/b//c"])
def test_a_urls_host_is_what_urlsplit_says(url: str) -> None:
    try:
        expected = urlsplit(url).hostname or ""
    except ValueError:
        expected = ""
    assert host(url) == expected


@two_cores
@pytest.mark.parametrize(("workers", "children"), [("1", "[True]"), ("0", "[]")])
def test_workers_0_keeps_a_big_report_in_the_process(tmp_path: Path, workers: str, children: str) -> None:
    """The command's wiring: a local check with 24,000 references forks for its json report, unless --workers 0."""
    for n in range(40):
        (tmp_path / f"page-{n}.md").write_text("".join(f"[to {i}](page-{i % 40}.md)\n" for i in range(600)))
    script = """
        import sys
        from linkhound.cli import main
        code = main()
        print(children, file=sys.stderr)
        sys.exit(code)
    """
    r = subprocess.run([sys.executable, "-c", COUNT_FORKS + textwrap.dedent(script), "--no-progress", "--offline",
                        "--format", "json", "--workers", workers, str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr  # (nothing broken: every link names a page that is there)
    assert r.stderr.strip().splitlines()[-1] == children
    doc = json.loads(r.stdout)
    assert sum(len(result["references"]) for result in doc["results"]) == 24_000
