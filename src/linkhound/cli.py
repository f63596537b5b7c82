"""The command line: arguments -> Settings -> a run of the engine -> a report and an exit code."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import IO, Any, NoReturn

from .version import __version__

EXIT_OK, EXIT_USAGE, EXIT_BROKEN, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one line, exit code 1: usage errors are not tracebacks
        self.exit(EXIT_USAGE, f"linkhound: error: {message} (see linkhound --help)\n")


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="linkhound",
        description="Find broken links in files, URL lists, sitemaps and whole websites.",
        epilog="Exit codes: 0 all links fine, 2 broken links found, 1 usage or input error, 130 interrupted.",
    )
    a = p.add_argument
    a("inputs", nargs="*", metavar="INPUT", help="URL, file, directory, quoted glob ('docs/**/*.md'), or - for stdin")
    a("--files-from", metavar="FILE", help="read more inputs from FILE, one per line (- for stdin)")
    a("-V", "--version", action="version", version=f"linkhound {__version__}")

    g = p.add_argument_group("crawling")
    g.add_argument("-r", "--recursive", action="store_true", default=None, help="crawl in-scope pages recursively")
    g.add_argument("--max-depth", type=int, metavar="N", help="link hops from a seed to crawl (default: no limit)")
    g.add_argument("--max-pages", type=int, metavar="N", help="crawl at most N pages")
    g.add_argument("--scope-domain", action="append", metavar="HOST", help="also crawl pages on HOST (repeatable)")
    g.add_argument("--include-crawl", action="append", metavar="REGEX", help="crawl only pages matching REGEX")
    g.add_argument("--exclude-crawl", action="append", metavar="REGEX", help="never crawl pages matching REGEX")
    g.add_argument("--no-robots", dest="robots", action="store_false", default=None, help="ignore robots.txt")

    g = p.add_argument_group("which links")
    g.add_argument("--include", action="append", metavar="REGEX", help="check only URLs matching REGEX (wins)")
    g.add_argument("--exclude", action="append", metavar="REGEX", help="don't check URLs matching REGEX")
    g.add_argument("--scheme", type=_csv, metavar="LIST", help="schemes to check, e.g. http,https,file,mailto")
    g.add_argument("--offline", action="store_true", default=None, help="skip every remote link")
    g.add_argument(
        "--check-fragments", action=argparse.BooleanOptionalAction, default=None,
        help="check #fragments (default: on for local files, off for remote pages)",
    )
    g.add_argument("--include-code", action="store_true", default=None, help="check links in Markdown code")
    g.add_argument("--hidden", action="store_true", default=None, help="walk hidden directories")
    g.add_argument("--no-gitignore", dest="gitignore", action="store_false", default=None,
                   help="walk paths that .gitignore excludes")

    g = p.add_argument_group("local files")
    g.add_argument("--root-dir", metavar="DIR", help="resolve root-relative links (/x) against DIR")
    g.add_argument("--base-url", metavar="URL", help="treat local files as served under URL")
    g.add_argument("--remap", action="append", metavar="'REGEX REPLACEMENT'", help="rewrite URLs before checking")
    g.add_argument("--index-files", type=_csv, metavar="LIST", help="a directory link needs one of these files")

    g = p.add_argument_group("requests")
    g.add_argument("--max-concurrency", type=int, metavar="N", help="requests in flight at once (default 128)")
    g.add_argument("--host-concurrency", type=int, metavar="N", help="requests in flight per host (default 8)")
    g.add_argument("--host-rate", type=float, metavar="R", help="requests per second per host (default: no limit)")
    g.add_argument("--host-burst", type=int, metavar="N", help="token-bucket size for --host-rate (default 1)")
    g.add_argument("--timeout", type=float, metavar="SECONDS", help="per request (default 20)")
    g.add_argument("--max-redirects", type=int, metavar="N", help="default 10")
    g.add_argument("--max-retries", type=int, metavar="N", help="retries after timeouts, resets, 5xx, 429 (default 2)")
    g.add_argument("--retry-backoff", type=float, metavar="SECONDS", help="first retry delay, doubling (default 1)")
    g.add_argument("--max-retry-wait", type=float, metavar="SECONDS", help="cap on Retry-After waits (default 60)")
    g.add_argument("--accept", metavar="CODES", help="accepted status codes (default 200..=299), e.g. 200..=299,403")
    g.add_argument("--method", choices=("head", "get"), help="method for leaf links (default head; pages use GET)")
    g.add_argument("--user-agent", metavar="UA", help="User-Agent header")
    g.add_argument("-H", "--header", action="append", metavar="'NAME: VALUE'", help="extra header (repeatable)")
    g.add_argument("--insecure", action="store_true", default=None, help="don't verify TLS certificates")
    g.add_argument("--max-body-size", type=int, metavar="BYTES", help="largest page body read (default 20 MiB)")
    g.add_argument("--host-config", metavar="FILE", help='TOML file of [hosts."name"] limits and headers')
    g.add_argument("--host-stats", action="store_true", default=None, help="print per-host request statistics")

    g = p.add_argument_group("output")
    g.add_argument("-f", "--format", metavar="FORMAT", help="compact (default), detailed, json, jsonl, markdown, "
                   "junit, sarif, github, csv, html")
    g.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    g.add_argument("-v", "--verbose", action="store_true", default=None, help="list successful links too")
    g.add_argument("--summary-only", action="store_true", default=None, help="print only the summary")
    g.add_argument("--no-progress", dest="progress", action="store_false", default=None, help="no progress bar")
    return p


_NOT_SETTINGS = {"inputs", "files_from"}


def options_from_args(ns: argparse.Namespace) -> dict[str, Any]:
    """The settings the user gave on the command line (unset flags are left out)."""
    opts = {k: v for k, v in vars(ns).items() if v is not None and k not in _NOT_SETTINGS}
    for name in ("scope_domain", "include_crawl", "exclude_crawl", "include", "exclude", "remap", "header"):
        if name in opts:
            opts[name] = tuple(opts[name])
    return opts


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    from .exceptions import LinkhoundError

    try:
        return _main(ns)
    except LinkhoundError as e:
        print(f"linkhound: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


def _main(ns: argparse.Namespace) -> int:
    from .api import _inputs, make_settings
    from .loop import run as run_loop
    from .report import reporter_for

    settings = make_settings(**options_from_args(ns))
    reporter = reporter_for(
        settings.format,
        color=_use_color(settings.output),
        verbose=settings.verbose,
        summary_only=settings.summary_only,
    )
    inputs = _inputs(ns.inputs, ns.files_from, settings)
    out: IO[str] = open(settings.output, "w", encoding="utf-8") if settings.output else sys.stdout  # noqa: SIM115
    try:
        return run_loop(_run(settings, inputs, reporter, out))
    finally:
        if out is not sys.stdout:
            out.close()


async def _run(settings: Any, inputs: list[Any], reporter: Any, out: IO[str]) -> int:
    from .engine import Engine
    from .progress import Progress
    from .types import Result

    show = settings.progress and sys.stdout.isatty() and sys.stderr.isatty()
    progress = Progress(enabled=show)

    def emit(event: object) -> None:
        if isinstance(event, Result):
            progress.advance(event)
            text = reporter.result(event)
            if text:
                progress.write(lambda: out.write(text))

    engine = Engine(settings, emit)
    _install_sigint(engine, progress)
    with progress:
        progress.attach(engine)
        report = await engine.run(inputs)
    text = reporter.finish(report)
    if report.summary.interrupted:
        print("linkhound: interrupted: the report covers what was checked before Ctrl+C", file=sys.stderr)
    out.write(text)
    out.flush()
    if settings.host_stats:
        print(format_host_stats(engine.host_stats()), file=sys.stderr)
    if report.summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if report.summary.success else EXIT_BROKEN


def _install_sigint(engine: Any, progress: Any) -> None:
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            os._exit(EXIT_INTERRUPTED)
        progress.stop()
        print("linkhound: stopping: finishing requests in flight (Ctrl+C again to quit now)", file=sys.stderr)
        engine.stop()

    # not the main thread, or no signals on this platform: Ctrl+C then ends the run at once
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)


def format_host_stats(stats: dict[str, Any]) -> str:
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


def _use_color(output: str | None) -> bool:
    return output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
