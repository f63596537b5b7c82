#!/usr/bin/env python3
"""Run linkhound and the peer link checkers on the benchmark scenarios, under /usr/bin/time -v.

    run.py [SCENARIO ...]                      run scenarios (default: $SCENARIOS or DEFAULT_SCENARIOS)
    run.py serve SCENARIO                      start that scenario's server(s) and wait (Ctrl+C stops)
    run.py list                                scenarios, their tools and inputs
    run.py cmd SCENARIO TOOL OUTDIR            print the tool's command line for that scenario

Scenarios
    startup                 `linkhound --version` (and `lychee --version`), 20 runs
    crawl-1k, crawl-10k, crawl-100k
                            recursive crawl of a gen_site.py site on nginx :8081 (lychee, which cannot crawl,
                            gets every page URL as an input; the second origin :8082 is checked, not crawled)
    oneshot-20k             a flat list of 20,000 URLs on nginx (200 / 404 / 301)
    local-2k                2,000 HTML files with 100,000 relative links, offline, with fragments
    local-md                300 Markdown files (2 MB) with 8,000 links, offline, with fragments
    docs-real               a real Markdown docs tree given by REAL_DOCS (e.g. the Rust book's src/), offline
    latency-20h             20,000 URLs on 20 hosts (127.0.0.1..20:8090), every response 50 ms late; the
                            tool "floor" (floor_client.py, a bare keep-alive client) shows the machine's floor

Environment
    TOOLS="linkhound lychee"  tools to run (default: the scenario's list)
    RUNS=3                    rounds; each runs every tool once (a tool is repeated only while a run took
                              < REPEAT_BELOW s)
    REPEAT_BELOW=120
    TIMEOUT=600               per-run limit in seconds (LinkChecker: LINKCHECKER_TIMEOUT, default 300);
                              a run that hits it is recorded with timed_out=true
    CONC=128                  concurrency for every tool that has a knob (global and per host)
    WORK=/tmp/linkhound-bench generated inputs and each run's output
    PEERS=/tmp/peers          where setup.sh installed the peers
    LINKHOUND=linkhound       the linkhound command
    LINKHOUND_ARGS=""         extra linkhound flags for every scenario (e.g. "--http-client aiohttp")
    LINKHOUND_REV=HEAD        run linkhound from a `git archive` snapshot of that commit instead of the work
                              tree (src/ may change under a long run); unset: the installed `linkhound`
    RESULTS=bench/results/results.jsonl   one JSON line per run is appended
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import score  # noqa: E402

PEERS = os.environ.get("PEERS", "/tmp/peers")
WORK = os.environ.get("WORK", "/tmp/linkhound-bench")
RESULTS = os.environ.get("RESULTS", os.path.join(HERE, "results", "results.jsonl"))
CONC = int(os.environ.get("CONC", "128"))
RUNS = int(os.environ.get("RUNS", "3"))
REPEAT_BELOW = float(os.environ.get("REPEAT_BELOW", "120"))
TIMEOUT = int(os.environ.get("TIMEOUT", "600"))
LINKCHECKER_TIMEOUT = int(os.environ.get("LINKCHECKER_TIMEOUT", "300"))
LINKHOUND_REV = os.environ.get("LINKHOUND_REV", "")
LINKHOUND = shlex.split(os.environ.get("LINKHOUND", "linkhound"))
LINKHOUND_ARGS = shlex.split(os.environ.get("LINKHOUND_ARGS", ""))  # extra flags, e.g. "--http-client aiohttp"
LYCHEE = os.path.join(PEERS, "venv/bin/lychee")
LINKCHECKER = os.path.join(PEERS, "venv/bin/linkchecker")
PEER_PYTHON = os.path.join(PEERS, "venv/bin/python")
NODE_BIN = os.path.join(PEERS, "node/node_modules/.bin")
DEFAULT_SCENARIOS = "startup crawl-1k crawl-10k oneshot-20k local-2k local-md latency-20h"
MAIN = "http://127.0.0.1:8081/"
LATENCY_PORT = 8090
SESSION = time.strftime("%Y%m%dT%H%M%S")  # one invocation of run.py; summarize.py keeps each pair's latest


# ---- servers ------------------------------------------------------------------------------------------
def proc_cpu(pid: int) -> float:
    """CPU seconds (user+sys) of pid and its live children."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{pid}/children") as f:
        pids += [int(p) for p in f.read().split()]
    total = 0
    for p in pids:
        with contextlib.suppress(OSError), open(f"/proc/{p}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / tick


def tree_rss_kb(root: int) -> int:
    """Resident memory (kB) of root and all its descendants, from /proc: each one's proportional share (Pss),
    so pages a forked child shares with its parent count once; its RSS where that can't be read."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            pid = int(entry)
            children.setdefault(int(fields[1]), []).append(pid)
            rss[pid] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _pss_kb(pid) or rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def _pss_kb(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return None


class TreeMemory(threading.Thread):
    """Samples the summed RSS of a process tree every 0.1 s: /usr/bin/time -v reports the largest single
    process only, which under-counts a tool that spreads its work over several processes."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            self.peak_kb = max(self.peak_kb, tree_rss_kb(self.pid))


def wait_port(host: str, port: int, seconds: float = 10) -> None:
    import socket

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{host}:{port} did not answer")


@contextlib.contextmanager
def nginx(site: str) -> Iterator[int]:
    run = os.path.join(WORK, "nginx")
    os.makedirs(run, exist_ok=True)
    with open(os.path.join(HERE, "nginx.conf.in")) as f:
        conf = f.read()
    for k, v in {"@RUN@": run, "@MAIN@": os.path.join(site, "main"), "@EXT@": os.path.join(site, "ext"),
                 "@WORKERS@": os.environ.get("NGINX_WORKERS", "1")}.items():
        conf = conf.replace(k, v)
    path = os.path.join(run, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    pidfile = os.path.join(run, "nginx.pid")
    with contextlib.suppress(OSError):  # a leftover from an interrupted run of ours
        with open(pidfile) as f:
            os.kill(int(f.read()), signal.SIGQUIT)
        time.sleep(0.5)
    subprocess.run(["/usr/sbin/nginx", "-p", run, "-c", path, "-e", os.path.join(run, "error.log")], check=True)
    for port in (8081, 8082):
        wait_port("127.0.0.1", port)
    with open(pidfile) as f:
        pid = int(f.read())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGQUIT)
        for _ in range(100):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.05)


@contextlib.contextmanager
def latency_server(folder: str) -> Iterator[int]:
    log = open(os.path.join(WORK, "latency_server.log"), "w")  # noqa: SIM115
    p = subprocess.Popen([PEER_PYTHON, os.path.join(HERE, "latency_server.py"), "serve", folder,
                          "--port", str(LATENCY_PORT)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for k in (1, 20):
            wait_port(f"127.0.0.{k}", LATENCY_PORT)
        yield p.pid
    finally:
        p.terminate()
        p.wait(10)
        log.close()


def latency_stats(delay: float) -> dict[str, object]:
    """The latency server's count since it was last asked: its request phase (first request in, last answer
    out) and the turnaround, the time a request slot spent per request outside the server's delay (the tool
    taking the answer and sending the next request, the loopback, the server's own lateness): by Little's law,
    span x concurrency / requests - delay."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", LATENCY_PORT, timeout=10)  # (no proxy: loopback)
    try:
        conn.request("GET", "/_stats")
        seen = json.loads(conn.getresponse().read())
    finally:
        conn.close()
    requests, span = int(seen["requests"]), float(seen["span_s"])
    turnaround = (span * CONC / requests - delay) * 1000 if requests else None
    return {"server_requests": requests, "server_span_s": span, "server_late_ms": seen["late_ms"],
            "turnaround_ms": None if turnaround is None else round(turnaround, 3),
            "server_first": seen["first"] if requests else None, "server_last": seen["last"] if requests else None}


def phases(seen: dict[str, object], launched: float, ended: float) -> dict[str, object]:
    """seen (server_stats()) with the server's first arrival and last answer (time.monotonic(), as launched
    and ended) turned into the tool's start (launch to first request) and ending (last answer to exit)."""
    first, last = seen.pop("server_first", None), seen.pop("server_last", None)
    if isinstance(first, float) and isinstance(last, float):
        seen["start_s"], seen["ending_s"] = round(first - launched, 4), round(ended - last, 4)
    return seen


# ---- scenarios ----------------------------------------------------------------------------------------
@dataclass
class Tool:
    cmd: list[str]
    out: str | None = None  # file the tool writes its report to (else its stdout is parsed)
    stdin: str | None = None
    summary: str | None = None  # LinkChecker's summary file
    note: str = ""
    timeout: int = TIMEOUT


@dataclass
class Scenario:
    name: str
    prepare: Callable[[], None]
    truth: str
    tools: Callable[[str], dict[str, Tool]]  # run folder -> tool name -> command
    default_tools: list[str]
    server: Callable[[], contextlib.AbstractContextManager[int]] | None = None
    extra: dict[str, object] = field(default_factory=dict)
    # what the server saw during a run (asked before it, to start counting, and after it), added to its record
    server_stats: Callable[[], dict[str, object]] | None = None


def sh(*cmd: str) -> None:
    print("  $", " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def lychee_flags(out: str) -> list[str]:
    return [LYCHEE, "--no-progress", "--include-fragments", "--format", "json", "--output", out,
            "--max-concurrency", str(CONC), "--host-concurrency", str(CONC), "--host-request-interval", "0s"]


def linkhound_flags(out: str) -> list[str]:
    return [*LINKHOUND, "--no-progress", "--max-concurrency", str(CONC), "--host-concurrency", str(CONC),
            "--check-fragments", "--format", "json", "--output", out]


def linkchecker_conf() -> tuple[str, str]:
    """LinkChecker configs: 'fast' lifts the per-host throttle (with nginx's LinkChecker header), checks
    #anchors (AnchorCheck plugin) and parses pages up to 100 MiB; 'nofrag' is fast without AnchorCheck."""
    conf = os.path.join(WORK, "conf")
    os.makedirs(conf, exist_ok=True)
    fast, nofrag = os.path.join(conf, "lc-fast.ini"), os.path.join(conf, "lc-nofrag.ini")
    base_conf = "[checking]\nmaxrequestspersecond=1000000\nmaxfilesizeparse=104857600\n"
    for path, text in ((fast, base_conf + "[AnchorCheck]\n"), (nofrag, base_conf)):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
    return fast, nofrag


def linkchecker_tool(rd: str, args: list[str], note: str = "", stdin: str | None = None) -> Tool:
    fast, _ = linkchecker_conf()
    summary = os.path.join(rd, "summary.txt")
    # LinkChecker drops root privileges to 'nobody': its output files must be writable by it
    return Tool([LINKCHECKER, "-f", fast, "-t", str(CONC), "--no-robots", "--no-status", "--ignore-url", "^mailto:",
                 "-o", "csv", "-F", f"text/utf-8/{summary}", *args], summary=summary, stdin=stdin,
                note=note, timeout=LINKCHECKER_TIMEOUT)


def crawl(pages: int, label: str) -> Scenario:
    site = os.path.join(WORK, "sites", f"n{pages}")

    def prepare() -> None:
        if not os.path.exists(os.path.join(site, "ground_truth.json")):
            sh(sys.executable, os.path.join(HERE, "gen_site.py"), site, "--pages", str(pages))

    def tools(rd: str) -> dict[str, Tool]:
        out = os.path.join(rd, "out.json")
        return {
            "linkhound": Tool([*linkhound_flags(out), "-r", "--no-robots", MAIN], out),
            "lychee": Tool([*lychee_flags(out), "--files-from", os.path.join(site, "pages.txt")], out,
                           note="cannot crawl: every page URL given as an input"),
            "linkinator": Tool([f"{NODE_BIN}/linkinator", MAIN, "--recurse", "--concurrency", str(CONC),
                                "--check-fragments", "--format", "json"]),
            "blc": Tool([f"{NODE_BIN}/blc", MAIN, "--recursive", "--filter-level", "3", "--requests", str(CONC),
                         "--host-requests", str(CONC)], note="no fragment checks"),
            "linkchecker": linkchecker_tool(rd, ["--check-extern", "--no-follow-url", r"^http://127\.0\.0\.1:808[29]",
                                                 MAIN]),
        }

    defaults = ["linkhound", "lychee"] if pages > 10000 else ["linkhound", "lychee", "linkinator", "blc", "linkchecker"]
    return Scenario(label, prepare, os.path.join(site, "ground_truth.json"), tools, defaults,
                    server=lambda: nginx(site), extra={"pages": pages})


def oneshot() -> Scenario:
    site = os.path.join(WORK, "sites", "n10000")
    folder = os.path.join(site, "oneshot")

    def prepare() -> None:
        crawl(10000, "").prepare()
        if not os.path.exists(os.path.join(folder, "truth.json")):
            sh(sys.executable, os.path.join(HERE, "gen_urllist.py"), site, "--count", "20000")

    def tools(rd: str) -> dict[str, Tool]:
        out, urls = os.path.join(rd, "out.json"), os.path.join(folder, "urls.txt")
        return {
            "linkhound": Tool([*linkhound_flags(out), urls], out, note="URL list file"),
            "lychee": Tool([*lychee_flags(out), urls], out, note="URL list file"),
            "linkinator": Tool([f"{NODE_BIN}/linkinator", os.path.join(folder, "urls.md"), "--markdown",
                                "--concurrency", str(CONC), "--format", "json"], note="Markdown list"),
            "blc": Tool([f"{NODE_BIN}/blc", MAIN + "oneshot.html", "--filter-level", "3", "--requests", str(CONC),
                         "--host-requests", str(CONC)], note="one page linking every URL"),
            "linkchecker": linkchecker_tool(rd, ["--stdin", "-r0"], note="--stdin list, -r0", stdin=urls),
        }

    return Scenario("oneshot-20k", prepare, os.path.join(folder, "truth.json"), tools,
                    ["linkhound", "lychee", "linkinator", "blc", "linkchecker"], server=lambda: nginx(site),
                    extra={"requests": 20000})


def local() -> Scenario:
    folder = os.path.join(WORK, "sites", "local")
    root = os.path.join(folder, "site")

    def prepare() -> None:
        if not os.path.exists(os.path.join(folder, "ground_truth.json")):
            sh(sys.executable, os.path.join(HERE, "gen_local.py"), folder)

    def tools(rd: str) -> dict[str, Tool]:
        out = os.path.join(rd, "out.json")
        return {
            "linkhound": Tool([*linkhound_flags(out), "--offline", root], out),
            "lychee": Tool([*lychee_flags(out), "--offline", root], out),
        }

    return Scenario("local-2k", prepare, os.path.join(folder, "ground_truth.json"), tools, ["linkhound", "lychee"])


def local_markdown() -> Scenario:
    folder = os.path.join(WORK, "sites", "local-md")

    def prepare() -> None:
        if not os.path.exists(os.path.join(folder, "ground_truth.json")):
            sh(sys.executable, os.path.join(HERE, "gen_markdown.py"), folder)

    def tools(rd: str) -> dict[str, Tool]:
        out = os.path.join(rd, "out.json")
        return {
            "linkhound": Tool([*linkhound_flags(out), "--offline", folder], out),
            "lychee": Tool([*lychee_flags(out), "--offline", folder], out),
        }

    return Scenario("local-md", prepare, os.path.join(folder, "ground_truth.json"), tools, ["linkhound", "lychee"])


def real_docs() -> Scenario:
    """A real docs tree given by REAL_DOCS (e.g. the Rust book's src/): no ground truth, tools compared."""
    source = os.path.abspath(os.environ["REAL_DOCS"]) if os.environ.get("REAL_DOCS") else ""
    folder = os.path.join(WORK, "sites", "docs-real")

    def prepare() -> None:
        if not os.path.isdir(source):
            sys.exit("docs-real: set REAL_DOCS to a folder of Markdown files "
                     "(e.g. a checkout of rust-lang/book's src/)")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "truth.json"), "w") as f:
            json.dump({"broken": [], "broken_fragments": []}, f)

    def tools(rd: str) -> dict[str, Tool]:
        out = os.path.join(rd, "out.json")
        return {
            "linkhound": Tool([*linkhound_flags(out), "--offline", source], out),
            "lychee": Tool([*lychee_flags(out), "--offline", source], out),
        }

    return Scenario("docs-real", prepare, os.path.join(folder, "truth.json"), tools, ["linkhound", "lychee"],
                    extra={"no_truth": True, "source": source})


def latency() -> Scenario:
    folder = os.path.join(WORK, "sites", "latency")
    delay = 0.05  # latency_server.py's default --delay

    def prepare() -> None:
        if not os.path.exists(os.path.join(folder, "truth.json")):
            sh(sys.executable, os.path.join(HERE, "latency_server.py"), "inputs", folder, "--port", str(LATENCY_PORT))

    def tools(rd: str) -> dict[str, Tool]:
        out, urls = os.path.join(rd, "out.json"), os.path.join(folder, "urls.txt")
        return {
            "linkhound": Tool([*linkhound_flags(out), urls], out),
            "lychee": Tool([*lychee_flags(out), urls], out),
            "linkinator": Tool([f"{NODE_BIN}/linkinator", os.path.join(folder, "urls.md"), "--markdown",
                                "--concurrency", str(CONC), "--format", "json"], note="Markdown list"),
            "blc": Tool([f"{NODE_BIN}/blc", f"http://127.0.0.1:{LATENCY_PORT}/list.html", "--filter-level", "3",
                         "--requests", str(CONC), "--host-requests", str(CONC)], note="one page linking every URL"),
            "linkchecker": linkchecker_tool(rd, ["--stdin", "-r0"], note="--stdin list, -r0", stdin=urls),
            "floor": Tool([PEER_PYTHON, os.path.join(HERE, "floor_client.py"), urls, "--output", out,
                           "--concurrency", str(CONC)], out, note="bare keep-alive client: the machine's floor"),
        }

    return Scenario("latency-20h", prepare, os.path.join(folder, "truth.json"), tools,
                    ["linkhound", "lychee", "floor", "linkinator", "blc", "linkchecker"],
                    server=lambda: latency_server(folder),
                    extra={"requests": 20000, "delay_s": delay, "ideal_wall_s": round(20000 * delay / CONC, 2)},
                    server_stats=lambda: latency_stats(delay))


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "crawl-1k": lambda: crawl(1000, "crawl-1k"),
    "crawl-10k": lambda: crawl(10000, "crawl-10k"),
    "crawl-100k": lambda: crawl(100000, "crawl-100k"),
    "oneshot-20k": oneshot,
    "local-2k": local,
    "local-md": local_markdown,
    "latency-20h": latency,
    "docs-real": real_docs,
}


# ---- measuring ------------------------------------------------------------------------------------------
def time_v(path: str) -> dict[str, float]:
    keys = {"User time (seconds)": "user_s", "System time (seconds)": "sys_s",
            "Maximum resident set size (kbytes)": "maxrss_kb"}
    got: dict[str, float] = {}
    with contextlib.suppress(OSError), open(path) as f:
        for line in f:
            k, _, v = line.strip().rpartition(": ")
            if k in keys:
                got[keys[k]] = float(v)
    return got


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", HERE, *args], capture_output=True, text=True, check=True).stdout.strip()


def snapshot(rev: str) -> str:
    """Export src/ of a commit to WORK/linkhound-REV/src (once); linkhound then runs from there."""
    sha = git("rev-parse", "--short", rev)
    folder = os.path.join(WORK, f"linkhound-{sha}")
    if not os.path.isdir(os.path.join(folder, "src", "linkhound")):
        os.makedirs(folder, exist_ok=True)
        archive = subprocess.run(["git", "-C", os.path.dirname(HERE), "archive", sha, "--", "src"],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    # Byte-compile it once, as `pip install` does: otherwise every run compiles every module again (about
    # 120 ms per run here, where PYTHONDONTWRITEBYTECODE is set), which an installed linkhound never pays.
    if not os.path.isdir(os.path.join(folder, "src", "linkhound", "__pycache__")):
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(folder, "src")], check=True)
    return sha


def use_snapshot() -> None:
    global LINKHOUND, REV
    if LINKHOUND_REV:
        REV = snapshot(LINKHOUND_REV)
        src = os.path.join(WORK, f"linkhound-{REV}", "src")
        LINKHOUND = ["env", f"PYTHONPATH={src}", sys.executable, "-m", "linkhound"]  # env execs: same process
    LINKHOUND = [*LINKHOUND, *LINKHOUND_ARGS]


REV = ""


def git_rev() -> str:
    if REV:
        return REV
    dirty = subprocess.run(["git", "-C", HERE, "diff", "--quiet", "HEAD", "--", "../src"]).returncode != 0
    return git("rev-parse", "--short", "HEAD") + ("+src-modified" if dirty else "")


def run_once(sc: Scenario, tool: str, i: int, server_pid: int | None) -> dict[str, object]:
    rd = os.path.join(WORK, "runs", sc.name, tool, f"run{i}")
    subprocess.run(["rm", "-rf", rd], check=True)
    os.makedirs(rd)
    os.chmod(rd, 0o777)  # LinkChecker runs as 'nobody'
    t = sc.tools(rd)[tool]
    if t.summary:
        open(t.summary, "w").close()
        os.chmod(t.summary, 0o666)
    stdout_path = os.path.join(rd, "stdout")
    time_path = os.path.join(rd, "time.txt")
    cmd = ["/usr/bin/time", "-v", "-o", time_path, "timeout", "-k", "10", str(t.timeout), *t.cmd]
    s0 = proc_cpu(server_pid) if server_pid else 0.0
    if sc.server_stats:
        sc.server_stats()
    with open(stdout_path, "wb") as out, open(os.path.join(rd, "stderr"), "wb") as err, \
            open(t.stdin or os.devnull, "rb") as inp:
        t0, launched = time.perf_counter(), time.monotonic()
        # each tool runs in its run's folder: none reads a config file of the folder the bench was started in
        # (this repo's pyproject.toml, which linkhound would parse)
        proc = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=err, cwd=rd)
        sampler = TreeMemory(proc.pid)
        sampler.start()
        rc = proc.wait()
        wall, ended = time.perf_counter() - t0, time.monotonic()
        sampler.stop.set()
        sampler.join()
    s1 = proc_cpu(server_pid) if server_pid else 0.0
    seen = phases(sc.server_stats(), launched, ended) if sc.server_stats else {}
    tv = time_v(time_path)
    rec: dict[str, object] = {
        "scenario": sc.name, "tool": tool, "run": i, "rc": rc, "timed_out": rc in (124, 137),
        "timeout_s": t.timeout, "wall_s": round(wall, 3),
        "user_s": tv.get("user_s"), "sys_s": tv.get("sys_s"),
        "cpu_s": round(tv.get("user_s", 0) + tv.get("sys_s", 0), 2),
        "maxrss_mb": round(tv.get("maxrss_kb", 0) / 1024, 1),
        "tree_rss_peak_mb": round(sampler.peak_kb / 1024, 1),  # all processes together, sampled every 0.1 s
        "server_cpu_s": round(s1 - s0, 2) if server_pid else None,
        "conc": CONC, "note": t.note, "cmd": shlex.join(t.cmd), "rundir": rd,
        "linkhound_rev": git_rev(), "date": time.strftime("%Y-%m-%dT%H:%M:%S"), **sc.extra, **seen,
    }
    with open(sc.truth) as f:
        truth = json.load(f)
    rec.update(score.score(score.parse(tool, t.out or stdout_path, t.summary), truth))
    return rec


def record(rec: dict[str, object]) -> None:
    rec["session"] = SESSION
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(rec) + "\n")


def run_startup() -> None:
    for tool, cmd in (("linkhound", [*LINKHOUND, "--version"]), ("lychee", [LYCHEE, "--version"])):
        walls = []
        for _ in range(20):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            walls.append(time.perf_counter() - t0)
        rec = {"scenario": "startup", "tool": tool, "run": 1, "rc": 0, "timed_out": False,
               "wall_s": round(statistics.median(walls), 4), "wall_min_s": round(min(walls), 4),
               "samples": len(walls), "cmd": shlex.join(cmd), "linkhound_rev": git_rev(),
               "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
        record(rec)
        print(f"  {tool:12s} --version median {rec['wall_s'] * 1000:.0f} ms (min {rec['wall_min_s'] * 1000:.0f} ms)")


def run_scenario(name: str) -> None:
    if name == "startup":
        print("== startup", flush=True)
        run_startup()
        return
    sc = SCENARIOS[name]()
    sc.prepare()
    tools = os.environ.get("TOOLS", "").split() or sc.default_tools
    print(f"== {name}: tools={' '.join(tools)} runs<={RUNS} conc={CONC} timeout={TIMEOUT}s", flush=True)
    known = sc.tools(WORK)
    for tool in tools:
        if tool not in known:
            print(f"  {tool}: not part of {name}")
    active = [t for t in tools if t in known]
    with sc.server() if sc.server else contextlib.nullcontext() as pid:
        # Round by round (each tool once per round), not one tool's runs back to back: this machine's speed
        # drifts over minutes, and a drift then lands on every tool alike instead of on one.
        for i in range(1, RUNS + 1):
            for tool in list(active):
                rec = run_once(sc, tool, i, pid)
                record(rec)
                print("  {tool:12s} run{run} rc={rc:<3} wall={wall_s:8.2f}s cpu={cpu_s:7.2f}s rss={maxrss_mb:7.1f}MB "
                      "server_cpu={server}s checked={checked} http={found_http}/{gt_broken_http} "
                      "fp={fp_http} frag={found_frag}/{gt_broken_frag} fpfrag={fp_frag}{to}".format(
                          checked=rec.get("checked_unique"), to=" TIMEOUT" if rec["timed_out"] else "",
                          server="-" if rec["server_cpu_s"] is None else rec["server_cpu_s"],
                          **rec), flush=True)
                if rec["timed_out"] or float(rec["wall_s"]) >= REPEAT_BELOW:  # type: ignore[arg-type]
                    active.remove(tool)


def main(argv: list[str]) -> int:
    use_snapshot()
    if argv[1:2] == ["list"]:
        for name, make in SCENARIOS.items():
            sc = make()
            print(f"{name}: default tools {' '.join(sc.default_tools)}; truth {sc.truth}")
        return 0
    if argv[1:2] == ["cmd"]:
        sc = SCENARIOS[argv[2]]()
        sc.prepare()
        print(shlex.join(sc.tools(argv[4])[argv[3]].cmd))
        return 0
    if argv[1:2] == ["serve"]:
        sc = SCENARIOS[argv[2]]()
        sc.prepare()
        if sc.server is None:
            print("no server for", argv[2])
            return 1
        # SIGTERM stops it as Ctrl+C does, servers and all (a background job of a script ignores SIGINT)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        with sc.server() as pid:
            print(f"serving {argv[2]} (pid {pid}); Ctrl+C or SIGTERM stops", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()
        return 0
    if argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    names = argv[1:] or os.environ.get("SCENARIOS", DEFAULT_SCENARIOS).replace(",", " ").split()
    unknown = [n for n in names if n != "startup" and n not in SCENARIOS]
    if unknown:
        print("unknown scenario(s):", *unknown, file=sys.stderr)
        return 2
    for name in names:
        run_scenario(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
