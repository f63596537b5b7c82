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


# A boolean flag and its --no- form, so a flag can undo what a config file turned on (or off).
_ON_OFF: dict[str, Any] = {"action": argparse.BooleanOptionalAction, "default": None}


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="linkhound",
        description="Find broken links in files, URL lists, sitemaps and whole websites.",
        epilog="Settings come from [tool.linkhound] in pyproject.toml, then linkhound.toml, then each --config "
        "FILE, then flags (docs/config.md). Exit codes: 0 all links fine, 2 broken links found (or blocked ones, "
        "with --fail-on-blocked), 1 usage, input or config error, 130 interrupted.",
    )
    a = p.add_argument
    a("inputs", nargs="*", metavar="INPUT", help="URL, file, directory, quoted glob ('docs/**/*.md'), or - for stdin")
    a("--files-from", metavar="FILE", help="read more inputs from FILE, one per line (- for stdin)")
    a("-V", "--version", action="version", version=f"linkhound {__version__}")

    g = p.add_argument_group("config")
    g.add_argument("--config", action="append", metavar="FILE",
                   help="read settings from FILE after pyproject.toml and linkhound.toml (repeatable; later wins)")
    g.add_argument("--no-config", action="store_true",
                   help="don't read pyproject.toml, linkhound.toml or .linkhoundignore from this directory")
    g.add_argument("--print-config", action="store_true", help="print the settings in effect as TOML and exit")

    g = p.add_argument_group("crawling")
    g.add_argument("-r", "--recursive", **_ON_OFF, help="crawl in-scope pages recursively")
    g.add_argument("--max-depth", type=int, metavar="N", help="link hops from a seed to crawl (default: no limit)")
    g.add_argument("--max-pages", type=int, metavar="N", help="crawl at most N pages")
    g.add_argument("--scope-domain", action="append", metavar="HOST", help="also crawl pages on HOST (repeatable)")
    g.add_argument("--include-crawl", action="append", metavar="REGEX", help="crawl only pages matching REGEX")
    g.add_argument("--exclude-crawl", action="append", metavar="REGEX", help="never crawl pages matching REGEX")
    g.add_argument("--robots", **_ON_OFF, help="obey robots.txt when crawling (default; --no-robots ignores it)")

    g = p.add_argument_group("which links")
    g.add_argument("--include", action="append", metavar="REGEX", help="check only URLs matching REGEX (wins)")
    g.add_argument("--exclude", action="append", metavar="REGEX",
                   help="don't check URLs matching REGEX (and those in .linkhoundignore)")
    g.add_argument("--exclude-path", action="append", metavar="REGEX", help="don't read local inputs matching REGEX")
    g.add_argument("--exclude-private", **_ON_OFF,
                   help="skip hosts that are or resolve to private addresses (10/8, 172.16/12, 192.168/16, fc00::/7)")
    g.add_argument("--exclude-loopback", **_ON_OFF,
                   help="skip hosts that are or resolve to loopback addresses (127/8, ::1)")
    g.add_argument("--exclude-link-local", **_ON_OFF,
                   help="skip hosts that are or resolve to link-local addresses (169.254/16, fe80::/10)")
    g.add_argument("--exclude-all-private", **_ON_OFF,
                   help="all of --exclude-private, --exclude-loopback and --exclude-link-local")
    g.add_argument("--scheme", type=_csv, metavar="LIST", help="schemes to check, e.g. http,https,file,mailto")
    g.add_argument("--offline", **_ON_OFF, help="skip every remote link")
    g.add_argument(
        "--check-fragments", **_ON_OFF,
        help="check #fragments (default: on for local files, off for remote pages)",
    )
    g.add_argument("--include-code", **_ON_OFF, help="check links in Markdown code")
    g.add_argument("--hidden", **_ON_OFF, help="walk hidden directories")
    g.add_argument("--gitignore", **_ON_OFF, help="skip paths .gitignore excludes (default; --no-gitignore walks them)")

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
    g.add_argument("--accept-for", action="append", metavar="'REGEX CODES'",
                   help="also accept CODES for URLs matching REGEX, e.g. 'linkedin\\.com 999' (repeatable)")
    g.add_argument("--fail-on-blocked", **_ON_OFF,
                   help="bot protection (Cloudflare challenge, LinkedIn 999) fails the run: exit code 2")
    g.add_argument("--method", choices=("head", "get"), help="method for leaf links (default head; pages use GET)")
    g.add_argument("--user-agent", metavar="UA", help="User-Agent header")
    g.add_argument("-H", "--header", action="append", metavar="'NAME: VALUE'", help="extra header (repeatable)")
    g.add_argument("--basic-auth", action="append", metavar="'URL_REGEX USER:PASSWORD'",
                   help="HTTP Basic credentials for URLs matching URL_REGEX (repeatable)")
    g.add_argument("--cookie-jar", metavar="FILE",
                   help="cookies.txt (Netscape format) read at the start and written at the end")
    g.add_argument("--insecure", **_ON_OFF, help="don't verify TLS certificates")
    g.add_argument("--http-client", choices=("auto", "reqwest", "aiohttp"),
                   help="HTTP stack (default auto: reqwest, or aiohttp when --exclude-private and friends are on)")
    g.add_argument("--max-body-size", type=int, metavar="BYTES", help="largest page body read (default 20 MiB)")
    g.add_argument("--workers", type=int, metavar="N",
                   help="processes that parse pages (default: 1 with 2+ cores; 0 parses in the main process)")
    g.add_argument("--host-config", metavar="FILE", help='TOML file of [hosts."name"] limits and headers')
    g.add_argument("--host-stats", **_ON_OFF, help="print per-host request statistics")

    g = p.add_argument_group("output")
    g.add_argument("-f", "--format", metavar="FORMAT", help="compact (default), detailed, json, jsonl, markdown, "
                   "junit, sarif, github, csv, html")
    g.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    g.add_argument("-v", "--verbose", **_ON_OFF, help="list successful links too")
    g.add_argument("--summary-only", **_ON_OFF, help="print only the summary")
    g.add_argument("--progress", **_ON_OFF, help="a progress bar on a terminal (default; --no-progress hides it)")
    return p


_NOT_SETTINGS = {"inputs", "files_from", "config", "no_config", "print_config"}


def options_from_args(ns: argparse.Namespace) -> dict[str, Any]:
    """The settings the user gave on the command line (unset flags are left out)."""
    opts = {k: v for k, v in vars(ns).items() if v is not None and k not in _NOT_SETTINGS}
    for name, value in opts.items():
        if isinstance(value, list):
            opts[name] = tuple(value)
    return opts


def entry() -> NoReturn:
    """The `linkhound` command: main(), then an exit that skips freeing every object of the run one by one
    (0.7 s after a 10k-page crawl). Everything the run writes is closed or flushed by then."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


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
    from .config import load_config, render
    from .loop import run as run_loop
    from .report import reporter_for

    config = load_config(ns.config or (), discover=not ns.no_config)
    settings = make_settings(**config.merged(options_from_args(ns)))
    # Inputs on the command line replace the config's inputs and files_from; they don't add to them.
    named = bool(ns.inputs) or ns.files_from is not None
    args, files_from = (ns.inputs, ns.files_from) if named else (list(config.inputs), config.files_from)
    if ns.print_config:
        sys.stdout.write(render(settings, config, args, files_from))
        return EXIT_OK
    reporter = reporter_for(
        settings.format,
        color=_use_color(settings.output),
        verbose=settings.verbose,
        summary_only=settings.summary_only,
    )
    inputs = _inputs(args, files_from, settings)
    out = _open_output(settings.output)
    try:
        return run_loop(_run(settings, inputs, reporter, out))
    finally:
        if out is not sys.stdout:
            out.close()


async def _run(settings: Any, inputs: list[Any], reporter: Any, out: IO[str]) -> int:
    from .engine import Engine
    from .progress import Progress
    from .status import Status
    from .types import Result

    show = settings.progress and sys.stdout.isatty() and sys.stderr.isatty()
    progress = Progress(enabled=show)

    def emit(event: object) -> None:
        if isinstance(event, Result):
            progress.advance(event)
            text = reporter.result(event)
            if text:
                progress.write(lambda: out.write(text))

    engine = Engine(settings, emit if show or reporter.streams else None)
    _install_sigint(engine, progress)
    with progress:
        progress.attach(engine)
        report = await engine.run(inputs)
    if report.summary.interrupted:
        print("linkhound: interrupted: the report covers what was checked before Ctrl+C", file=sys.stderr)
    for chunk in reporter.chunks(report):
        out.write(chunk)
    out.flush()
    if settings.host_stats:
        print(format_host_stats(engine.host_stats()), file=sys.stderr)
    if report.summary.interrupted:
        return EXIT_INTERRUPTED
    if not report.summary.success:
        return EXIT_BROKEN
    return EXIT_BROKEN if settings.fail_on_blocked and report.summary.count(Status.BLOCKED) else EXIT_OK


def _install_sigint(engine: Any, progress: Any) -> None:
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            engine.kill()
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


def _open_output(path: str | None) -> IO[str]:
    """The report's destination, opened before the run so a bad path fails at once, not after the work."""
    if path is None:
        return sys.stdout
    from .exceptions import UsageError

    try:
        return open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by the caller)
    except OSError as e:
        raise UsageError(f"--output {path}: can't write: {(e.strerror or str(e)).lower()}") from None


def _use_color(output: str | None) -> bool:
    return output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
