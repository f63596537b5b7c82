"""The command line: arguments -> Settings -> a run of the engine -> a report and an exit code."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

from .version import __version__

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from .arguments import options_from_args
    from .cli_common import ReportFile
    from .host_pool import HostStats
    from .progress import Progress
    from .report import Reporter
    from .run import Run
    from .settings import Settings
    from .summary import Report

# The rest loads in the functions that use it: `linkhound --version` is answered before any of it.
__all__ = ["build_parser", "entry", "main", "options_from_args"]
SIGTERM_GRACE = 5.0  # seconds requests in flight may still take after SIGTERM


def build_parser() -> argparse.ArgumentParser:
    """The command line: inputs and config flags, then a flag for every Settings option, by group."""
    from .arguments import Parser, add_config_flags, add_settings_flags
    from .cli_common import redis_timeout, seconds
    from .redis_link import LEASE

    p = Parser(
        prog="linkhound",
        description="Find broken links in files, URL lists, sitemaps and whole websites.",
        epilog="Settings come from [tool.linkhound] in pyproject.toml, then linkhound.toml, then each --config "
        "FILE, then flags (docs/config.md). Exit codes: 0 all links fine, 2 broken links found (or blocked ones, "
        "with --fail-on-blocked), 1 usage, input or config error, 130 interrupted. `linkhound fix --help`: rewrite "
        "links that moved for good.",
    )
    a = p.add_argument
    a("inputs", nargs="*", metavar="INPUT", help="URL, file, directory, quoted glob ('docs/**/*.md'), or - for stdin")
    a("--files-from", metavar="FILE", help="read more inputs from FILE, one per line (- for stdin)")
    a("--dump", action="store_true",
      help="print the links that would be checked, each with where it is, and check nothing (URL inputs are "
      "listed, not fetched)")
    a("--dump-inputs", action="store_true", help="print the documents and URLs that would be read, and check nothing")
    a("-V", "--version", action="version", version=f"linkhound {__version__}")

    g = add_config_flags(p)
    g.add_argument("--print-config", action="store_true", help="print the settings in effect as TOML and exit")

    g = p.add_argument_group("distributed mode (pip install 'linkhound[redis]')")
    g.add_argument("--redis", metavar="URL", help="keep the crawl in this Redis (redis://host:port/db, or "
                   "redis+cluster://host:port for a Redis Cluster), where `linkhound worker --redis URL --job NAME` "
                   "processes join it; this process writes the report (see also: linkhound jobs, linkhound report)")
    g.add_argument("--job", metavar="NAME", help="the crawl's name in Redis (with --redis); a job of that name "
                   "with the same settings and inputs is joined (resumed)")
    g.add_argument("--lease", metavar="SECONDS", type=seconds, default=LEASE,
                   help="seconds a URL taken by a process that stopped answering stays taken before another "
                   f"process takes it (default: {LEASE:g})")
    redis_timeout(g)

    add_settings_flags(p)
    return p


def entry() -> NoReturn:
    """The `linkhound` command: main(), then an exit that skips freeing every object of the run one by one
    (0.7 s after a 10k-page crawl). Everything the run writes is closed or flushed by then. The collector's
    full passes are held back from the start: the modules a run loads make objects enough to set them off."""
    from .loop import fewer_collections

    with fewer_collections():  # (never left: restoring the thresholds would set off a full pass on the way out)
        _whole_writes()
        try:
            code = main()
        except KeyboardInterrupt:  # Ctrl+C before the run took it over (reading stdin, walking a folder)
            print("linkhound: interrupted before any link was checked", file=sys.stderr)
            code = 130  # (cli_common.EXIT_INTERRUPTED, without loading it)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _whole_writes() -> None:
    """Under PYTHONUNBUFFERED (python -u), stdout writes straight to its file: a write a signal cuts short (Ctrl+C
    while a long report goes to a slow pipe) loses the rest of it unseen. A buffered writer writes all of it;
    flushed at each line, the output still comes as it is made."""
    import io

    out = sys.stdout
    if isinstance(getattr(out, "buffer", None), io.FileIO):
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(out.buffer), encoding=out.encoding, errors=out.errors,
                                      line_buffering=True, write_through=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):  # as argparse would say it, without loading the options it needs
        print(f"linkhound {__version__}")
        return 0
    from .cli_common import EXIT_OK, EXIT_USAGE
    from .exceptions import LinkhoundError

    # Errors name the command they come from: "linkhound: error: ...", "linkhound jobs: error: ...".
    command = args[0] if args[:1] in (["fix"], ["worker"], ["report"], ["jobs"]) else None
    try:
        if command == "fix":
            from .fix_command import main as fix_main

            return fix_main(args[1:])
        if command is not None:
            from . import cli_redis

            return {"worker": cli_redis.worker, "report": cli_redis.report, "jobs": cli_redis.jobs}[command](args[1:])
        return _main(build_parser().parse_args(args))
    except LinkhoundError as e:
        print(f"linkhound{' ' + command if command else ''}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


def _main(ns: argparse.Namespace) -> int:
    from .api import make_settings, start
    from .arguments import options_from_args
    from .cli_common import EXIT_OK, open_output, open_step_summary, use_color
    from .config import load_config, render
    from .loop import run as run_loop
    from .progress import Progress
    from .report import reporter_for
    from .types import Event, Result

    _one_mode(ns)
    config = load_config(ns.config or (), discover=not ns.no_config)
    settings = make_settings(**config.merged(options_from_args(ns)))
    # Inputs on the command line replace the config's inputs and files_from; they don't add to them.
    named = bool(ns.inputs) or ns.files_from is not None
    args, files_from = (ns.inputs, ns.files_from) if named else (list(config.inputs), config.files_from)
    if ns.print_config:
        sys.stdout.write(render(settings, config, args, files_from))
        return EXIT_OK
    named_in = "command line" if named else "config file"
    if ns.dump or ns.dump_inputs:
        return _dump(args, settings, files_from, named_in, inputs_only=ns.dump_inputs)
    reporter = reporter_for(
        settings.format,
        color=use_color(settings, sys.stdout) if settings.output is None else settings.color == "always",
        verbose=settings.verbose,
        summary_only=settings.summary_only,
        all_referrers=settings.all_referrers,
        fork=settings.parse_workers >= 1,  # --workers 0: no helper process, a report's half included
    )
    # the bar draws on stderr: shown there on a terminal, whether or not the report is piped or in a file
    show = settings.progress and not settings.quiet and sys.stderr.isatty()
    progress = Progress(enabled=show)
    out: TextIO | ReportFile = sys.stdout

    def on_event(event: Event) -> None:
        if isinstance(event, Result):
            progress.advance(event)
            text = reporter.result(event)
            if text and not unwritable:
                try:
                    progress.write(lambda: out.write(text))
                except OSError as e:  # (the reader left, `| head`, or the disk is full: said at the end)
                    unwritable.append(_why_unwritable(e))

    unwritable: list[str] = []

    streaming = on_event if show or reporter.streams else None
    if ns.redis is not None or ns.job is not None:  # the report covers the whole job: nothing streams
        run = _distributed_run(ns, settings, args, files_from)
    else:
        run = start(args or (), settings, files_from=files_from, on_event=streaming, named_in=named_in)
        run.make_ahead(reporter.ahead)  # (a list in several processes: its results' text made while it waits)
    out = open_output(settings.output)
    step_summary = open_step_summary(settings.step_summary)
    try:
        return run_loop(_run(run, settings, reporter, progress, out, unwritable, step_summary))
    finally:
        if out is not sys.stdout:
            with contextlib.suppress(OSError):  # (a write that failed has been said)
                out.close()
        if step_summary is not None:
            with contextlib.suppress(OSError):
                step_summary.close()


def _one_mode(ns: argparse.Namespace) -> None:
    """--print-config, --dump and --dump-inputs each print something instead of the report: one at a time, and
    the dumps with no --format (their lists have one shape; --print-config shows the --format given)."""
    from .exceptions import UsageError

    modes = [flag for flag, on in (("--print-config", ns.print_config), ("--dump", ns.dump),
                                   ("--dump-inputs", ns.dump_inputs)) if on]
    if len(modes) > 1:
        raise UsageError(f"{modes[0]} and {modes[1]}: choose one")
    if modes and modes[0] != "--print-config" and getattr(ns, "format", None) is not None:
        raise UsageError(f"{modes[0]} prints its own list: --format doesn't apply to it")


def _why_unwritable(e: OSError) -> str:
    """Why the report could not be written; "" when its reader left (`| head`): the verdict still stands."""
    return "" if isinstance(e, BrokenPipeError) else (e.strerror or str(e)).lower()


def _dump(args: Sequence[str], settings: Settings, files_from: str | None, named_in: str, inputs_only: bool) -> int:
    """--dump: each link that would be checked and where it is, tab-separated; --dump-inputs: each input."""
    from .api import preview
    from .cli_common import EXIT_OK, open_output
    from .report.common import display_url, printable

    inputs, links = preview(args, settings, files_from=files_from, named_in=named_in)
    out = open_output(settings.output)
    try:
        if inputs_only:
            out.writelines(f"{printable(i.location)}\n" for i in inputs)
        else:
            out.writelines(f"{display_url(p.url)}\t{printable(p.reference.position())}\n" for p in links)
        out.flush()  # (an empty list too replaces the file's last one)
    finally:
        if out is not sys.stdout:
            out.close()
    return EXIT_OK


async def _run(run: Run, settings: Settings, reporter: Reporter, progress: Progress, out: TextIO | ReportFile,
               unwritable: list[str], step_summary: IO[str] | None = None) -> int:
    """The run to its end, its report written (and, with --step-summary, the same report's Markdown appended
    there: one check gives both, so they always agree); the exit code."""
    from .cli_common import (
        EXIT_BROKEN,
        EXIT_INTERRUPTED,
        EXIT_OK,
        EXIT_TERMINATED,
        EXIT_USAGE,
        use_color,
        write_step_summary,
    )
    from .status import Status

    over: list[bool] = []
    terminated = _install_signals(run, progress, over)
    with progress:
        progress.attach(run)
        report = await run.report()
    over.append(True)
    if report.summary.interrupted:
        why = "SIGTERM" if terminated else "Ctrl+C"
        print(f"linkhound: interrupted: the report covers what was checked before {why}", file=sys.stderr)
    if not unwritable:
        try:
            for chunk in reporter.chunks(report):
                out.write(chunk)
            out.flush()
        except OSError as e:
            unwritable.append(_why_unwritable(e))
    if unwritable and unwritable[0]:
        where = f" to {settings.output}" if settings.output is not None else ""
        print(f"linkhound: error: can't write the report{where}: {unwritable[0]}", file=sys.stderr)
        return EXIT_USAGE
    if step_summary is not None:
        try:
            write_step_summary(step_summary, report, settings)
        except OSError as e:
            print(f"linkhound: error: can't write the step summary to {settings.step_summary}: {_why_unwritable(e)}",
                  file=sys.stderr)
            return EXIT_USAGE
    if not settings.quiet:
        if settings.output is not None:  # the report went to a file: its warnings and summary line still show here
            from .report.ansi import paint
            from .report.common import plain, summary_line, warning_lines

            color = use_color(settings, sys.stderr)
            for warning in warning_lines(report.summary, color):
                print(f"linkhound: {warning}", file=sys.stderr)
            print(summary_line(report.summary, paint if color else plain), file=sys.stderr)
        for note in notes(report, settings.recursive):
            print(f"linkhound: {note}", file=sys.stderr)
    if settings.host_stats:
        print(format_host_stats(run.host_stats()), file=sys.stderr)
    if report.summary.interrupted:
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    if not report.summary.success:
        return EXIT_BROKEN
    return EXIT_BROKEN if settings.fail_on_blocked and report.summary.count(Status.BLOCKED) else EXIT_OK


def notes(report: Report, recursive: bool) -> list[str]:
    """What a run that did less than asked should say: nothing read, nothing checked, nothing crawled."""
    from .status import Status

    summary = report.summary
    if summary.interrupted:
        return []
    out = []
    if summary.total == 0 and summary.pages == 0:
        out.append("nothing checked: no document was read (a folder walk reads .md and .html files, and leaves out"
                   " hidden folders, .gitignore'd paths and --exclude-path matches)")
    left_out = summary.count(Status.EXCLUDED) + summary.count(Status.SKIPPED)
    if summary.unique and left_out and left_out + summary.count(Status.UNSUPPORTED) == summary.unique:
        out.append("nothing checked: every link was excluded or skipped (--include, --exclude, .linkhoundignore,"
                   " --scheme, --offline, robots.txt)")
    if recursive and not any(page.followed for page in report.pages) and not _crawl_seeds(report):
        out.append("-r: nothing to crawl: local files are checked, not crawled (give a URL, or a sitemap that"
                   " lists URLs)")
    return out


def _crawl_seeds(report: Report) -> bool:
    """Whether the run had a page to crawl from: a URL input (element "input"), or a sitemap entry ("loc")."""
    return any(ref.element in ("input", "loc") for result in report.results for ref in result.references)


def _install_signals(run: Run, progress: Progress, over: list[bool]) -> list[bool]:
    """Ctrl+C once, or SIGTERM (timeout, docker stop, a cancelled CI job): take no new work and report what was
    checked. Ctrl+C twice: exit now. After SIGTERM, requests still in flight get SIGTERM_GRACE seconds.
    over holds True once the run is over (its report being written). Returns a flag list that says whether
    SIGTERM came."""
    import asyncio
    import signal

    from .cli_common import EXIT_INTERRUPTED

    loop = asyncio.get_running_loop()
    presses = 0
    terminated: list[bool] = []

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            run.kill()
            os._exit(EXIT_INTERRUPTED)
        progress.stop()
        doing = "writing the report" if over else "stopping: finishing requests in flight"
        print(f"linkhound: {doing} (Ctrl+C again to quit now)", file=sys.stderr)
        run.stop()

    def on_sigterm() -> None:
        if not terminated:
            terminated.append(True)
            progress.stop()
            run.stop()
            loop.call_later(SIGTERM_GRACE, run.cancel)

    # not the main thread, or no signals on this platform: the signal then ends the run at once
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    return terminated


def _distributed_run(ns: argparse.Namespace, settings: Settings, args: Sequence[str], files_from: str | None) -> Run:
    from .exceptions import UsageError
    from .inputs import collect, read_files_from
    from .redis_job import DistributedRun

    if ns.redis is None or ns.job is None:
        raise UsageError("--redis and --job go together")
    listed = list(args) + (read_files_from(files_from) if files_from else [])
    if not listed:
        raise UsageError("no inputs: give URLs, files, directories or globs")
    inputs = collect(listed, hidden=settings.hidden, gitignore=settings.gitignore,
                     exclude_path=settings.patterns("exclude_path"))
    return DistributedRun(settings, inputs, ns.redis, ns.job, ns.lease, ns.redis_timeout)


def format_host_stats(stats: dict[str, HostStats]) -> str:
    rows = [("host", "requests", "ok", "429/503", "waits", "median ms")]
    for host, st in stats.items():
        rows.append(
            (host, str(st.requests), str(st.successes), str(st.rate_limited), str(st.waits),
             f"{st.median_latency * 1000:.0f}")
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    )


def __getattr__(name: str) -> Any:
    if name == "options_from_args":  # re-exported, loaded on first use like the rest
        from .arguments import options_from_args

        return options_from_args
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
