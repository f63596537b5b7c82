"""The commands of the distributed mode besides the crawl itself: `linkhound worker` joins a job, `linkhound report`
writes a job's report, `linkhound jobs` lists the jobs in a Redis (and drops one)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from .cli_common import EXIT_BROKEN, EXIT_INTERRUPTED, EXIT_OK, Parser, open_output, redis_timeout, seconds, use_color
from .redis_link import LEASE
from .report import FORMATS


def _redis_args(p: argparse.ArgumentParser, job_required: bool) -> None:
    p.add_argument("--redis", metavar="URL", required=True,
                   help="the Redis the job is in (redis://host:port/db, or redis+cluster://host:port for a Redis "
                   "Cluster)")
    p.add_argument("--job", metavar="NAME", required=job_required, help="the job's name")
    redis_timeout(p)


def worker(args: Sequence[str]) -> int:
    p = Parser(prog="linkhound worker", description="Join a crawl kept in Redis (started with linkhound --redis "
               "URL --job NAME) and take its work until it is over. The report is written by the process that "
               "started the job (or by linkhound report).")
    _redis_args(p, job_required=True)
    p.add_argument("--lease", metavar="SECONDS", type=seconds, default=LEASE,
                   help=f"as for linkhound --lease (default: {LEASE:g})")
    ns = p.parse_args(args)
    from .loop import run as run_loop
    from .redis_job import Worker

    work = Worker(ns.redis, ns.job, ns.lease, ns.redis_timeout)

    async def go() -> int:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, work.stop)
            loop.add_signal_handler(signal.SIGTERM, work.stop)
        report = await work.run(lambda: print(f"linkhound worker: waiting for job {ns.job}", file=sys.stderr))
        if work.finished_before:
            print(f"linkhound worker: job {ns.job} is finished: nothing to do", file=sys.stderr)
            return EXIT_OK
        if report is None:
            return EXIT_INTERRUPTED
        for warning in report.summary.warnings:
            print(f"linkhound worker: {warning}", file=sys.stderr)
        over = "stopped" if report.summary.interrupted else "over"
        print(f"linkhound worker: job {ns.job} is {over}: {work.claims} URLs fetched here", file=sys.stderr)
        return EXIT_INTERRUPTED if report.summary.interrupted else EXIT_OK

    return run_loop(go())


def report(args: Sequence[str]) -> int:
    p = Parser(prog="linkhound report", description="Write the report of a job kept in Redis, running (what is "
               "done so far) or finished (all of it). Exit codes as for a crawl: 0 all links fine, 2 broken ones.")
    _redis_args(p, job_required=True)
    p.add_argument("-f", "--format", choices=FORMATS, default="compact", help="the report's format")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE, not stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="list every link, not only problems")
    ns = p.parse_args(args)
    from . import make_settings
    from .loop import run as run_loop
    from .redis_admin import job_report
    from .report import reporter_for

    found, status = run_loop(job_report(ns.redis, ns.job, ns.redis_timeout))
    settings = make_settings(color="auto")
    out = open_output(ns.output)
    try:
        color = use_color(settings, out) if out is sys.stdout else False
        for chunk in reporter_for(ns.format, color=color, verbose=ns.verbose).chunks(found):
            out.write(chunk)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    if status.state != "finished":
        print(f"linkhound: job {ns.job} is {status.state}: the report covers the {status.urls - status.unfinished} "
              f"of {status.urls} URLs done so far", file=sys.stderr)
    return EXIT_OK if found.summary.success else EXIT_BROKEN


def jobs(args: Sequence[str]) -> int:
    p = Parser(prog="linkhound jobs", description="List the jobs kept in a Redis with their counts, or drop one "
               "(--job NAME --drop deletes its keys).")
    _redis_args(p, job_required=False)
    p.add_argument("--drop", action="store_true",
                   help="delete the job named by --job (refused while a process works on it)")
    ns = p.parse_args(args)
    from .loop import run as run_loop
    from .redis_admin import drop_job, list_jobs

    if ns.drop:
        if ns.job is None:
            p.error("--drop needs --job NAME")
        deleted = run_loop(drop_job(ns.redis, ns.job, ns.redis_timeout))
        print(f"linkhound: job {ns.job} dropped ({deleted} keys)", file=sys.stderr)
        return EXIT_OK
    listed = run_loop(list_jobs(ns.redis, ns.redis_timeout))
    if ns.job is not None:
        listed = [j for j in listed if j.name == ns.job]
    rows = [("job", "state", "urls", "done", "queued", "in flight", "readers", "age")]
    for name, st in listed:
        rows.append((name, st.state, str(st.urls), str(st.urls - st.unfinished), str(st.queued), str(st.leased),
                     str(st.open), _age(st.age)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
              .rstrip())
    return EXIT_OK


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"

