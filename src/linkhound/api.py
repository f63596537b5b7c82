"""The library entry points: `check` returns a Report, `crawl` yields results and pages as they happen, `start`
hands back a Run to watch, stop and await."""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from .exceptions import UsageError
from .options import suggest
from .settings import Settings, command_only_names, setting_names
from .summary import Report
from .types import Event

if TYPE_CHECKING:
    from .config import Config
    from .dump import Planned
    from .inputs import Input
    from .run import EventSink, Run
    from .transport import Transport

# config=: True reads what the CLI reads in the current directory (pyproject.toml [tool.linkhound],
# linkhound.toml, .linkhoundignore); a path or a list of paths reads those files only; a Config is used as is.
ConfigArg: TypeAlias = "bool | str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Config | None"
# One input (a URL, file, directory or glob, as a str or a path), or any number of them.
InputsArg: TypeAlias = "str | os.PathLike[str] | Iterable[str | os.PathLike[str]]"
# A file listing inputs, one a line ("-": stdin).
FilesFromArg: TypeAlias = "str | os.PathLike[str] | None"


def make_settings(settings: Settings | None = None, *, config: ConfigArg = None, **options: Any) -> Settings:
    """Settings from keyword options (lists become tuples, "accept" may be a string like "200..=299,403").

    With config, the options go over what the config files say, as flags do on the command line. A misspelled
    option is a UsageError that suggests the right one; a value of the wrong type or out of range an OptionError.
    """
    return _settings(settings, _config(config), options)


def _settings(settings: Settings | None, config: Config | None, options: dict[str, Any]) -> Settings:
    if settings is not None and not isinstance(settings, Settings):
        raise UsageError(f"settings: expected a linkhound.Settings (linkhound.make_settings(...) makes one from "
                         f"keyword options), got {type(settings).__name__}")
    if settings is not None and (options or config is not None):
        raise UsageError("pass either settings or keyword options (and config), not both")
    if settings is not None:
        return settings
    if config is not None:
        options = config.merged(options)
    known = setting_names()
    for name in sorted(options):
        if name not in known:
            raise UsageError(f"unknown option '{name}'{suggest(name, known)}")
    return Settings(**options)  # which checks each value's type


async def check(
    inputs: InputsArg,
    settings: Settings | None = None,
    *,
    files_from: FilesFromArg = None,
    config: ConfigArg = None,
    on_event: EventSink | None = None,
    transport: Transport | None = None,
    **options: Any,
) -> Report:
    """Check every link in inputs (URLs, files, directories, globs; one, or a list) and return the Report.

    >>> report = await linkhound.check(["README.md", "https://example.org/"], max_concurrency=32)
    >>> report = await linkhound.check("docs/")

    config=True reads the config files of the current directory as the CLI does (options go over them); when
    inputs is empty, the config's `inputs` and `files_from` are checked. on_event and the other arguments
    as for `start`.
    """
    return await start(inputs, settings, files_from=files_from, config=config, on_event=on_event,
                       transport=transport, **options).report()


def start(
    inputs: InputsArg,
    settings: Settings | None = None,
    *,
    files_from: FilesFromArg = None,
    config: ConfigArg = None,
    on_event: EventSink | None = None,
    transport: Transport | None = None,
    named_in: str = "",
    **options: Any,
) -> Run:
    """A Run of inputs, ready to await: `report = await run.report()`; meanwhile `run.stop()`, `run.known()`,
    `run.host_stats()`. on_event sees each Result and Page as it happens (a plain function: it is called, not
    awaited); transport replaces the HTTP stack (a `linkhound.mock_transport.MockTransport` in tests); named_in
    says where inputs were named, as reports show it ("command line"; files_from entries are named by file and
    line). Bad options or inputs raise UsageError here, before anything is requested."""
    _check_sink(on_event)
    _check_transport(transport)
    _refuse_command_only(options)
    cfg = _config(config)
    s = _settings(settings, cfg, options)
    read = _inputs(*_what(inputs, files_from, cfg), s, named_in)
    from .run import Callback

    callback = None if on_event is None else Callback(on_event)
    if transport is None and s.jobs != 1:
        from .shard import jobs_for

        jobs = jobs_for(s, read)
        if jobs > 1:
            from .shard_run import ShardedRun

            return ShardedRun(s, callback, read, jobs)
    from .parse_ahead import ParseAhead

    # forked before the engine loads (aiohttp, the HTTP stack: its threads, its imports, which the parsing
    # then overlaps), so `import linkhound` stays quick too
    ahead = ParseAhead.start(read, s)
    from .engine import Engine
    from .extract import Kind
    from .run import Run

    # a list's results are made for the report while it waits on answers; not a crawl's, nor a folder's of
    # documents, whose targets mostly get more references after their result (made again at the end)
    lists = not s.recursive and all(i.is_url or i.kind is Kind.TEXT for i in read)
    try:
        engine = Engine(s, callback, transport, ahead=ahead)
    except BaseException:  # (an option found wrong there: --cookie-jar's file) no child is left parsing
        if ahead is not None:
            ahead.close()
        raise
    return Run(engine, read, ahead=lists, callback=callback)


def preview(
    inputs: InputsArg,
    settings: Settings | None = None,
    *,
    files_from: FilesFromArg = None,
    config: ConfigArg = None,
    named_in: str = "",
    **options: Any,
) -> tuple[list[Input], Iterator[Planned]]:
    """What a run of inputs would read and check, without a request: the inputs (documents and URLs, in order)
    and the links of the local ones, each with where it is (`linkhound --dump-inputs`, `--dump`). URL inputs
    are listed as links, not fetched; nothing is crawled."""
    from .dump import planned

    cfg = _config(config)
    s = _settings(settings, cfg, options)
    read = _inputs(*_what(inputs, files_from, cfg), s, named_in)
    return read, planned(read, s)


async def crawl(
    inputs: InputsArg,
    settings: Settings | None = None,
    *,
    files_from: FilesFromArg = None,
    config: ConfigArg = None,
    **options: Any,
) -> AsyncIterator[Event]:
    """Crawl from inputs and yield each Result and Page as it comes: recursive unless recursive=False is given
    or config says so. Settings given are used as they are, as everywhere: make them with recursive=True.

    Leaving the loop early stops the crawl: requests in flight are let finish. Cancelling the task that
    iterates (`asyncio.wait_for`, a TaskGroup that fails) cancels them. config as for `check`.
    """
    if "on_event" in options:  # (its events are the ones yielded here)
        raise UsageError("on_event is not an argument of crawl(), which yields each event itself: use start() "
                         "for a callback")
    cfg = _config(config)
    if settings is None and "recursive" not in (cfg.options if cfg is not None else {}):
        options.setdefault("recursive", True)
    import asyncio  # here, not at the top: the parse worker imports this package and needs no event loop

    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    run = start(inputs, settings, files_from=files_from, config=cfg, on_event=queue.put_nowait, **options)
    task = asyncio.ensure_future(run.report())
    task.add_done_callback(lambda _: queue.put_nowait(None))
    cancelled = False
    try:
        while (event := await queue.get()) is not None:
            yield event
        await task
    except asyncio.CancelledError:
        cancelled = True
        raise
    finally:
        if not task.done():
            # cancelled: the caller wants control back now, not after the requests in flight and their retries
            if cancelled:
                run.cancel()
            else:
                run.stop()
            await asyncio.gather(task, return_exceptions=True)


def _refuse_command_only(options: dict[str, Any]) -> None:
    """The options of how the command writes its report (format, output, quiet, ...) would do nothing here: a
    library run prints nothing and returns the Report. (make_settings takes them: the command's settings, and a
    config file's, hold them.)"""
    refused = sorted(command_only_names().intersection(options))
    if refused:
        raise UsageError(f"{refused[0]} is an option of the command's printed report, which a library run doesn't "
                         f"make: use the Report it returns (report.results, report.summary)")


def _check_sink(on_event: object) -> None:
    """on_event is None or a plain function: it is called, never awaited (an async one's events would be lost)."""
    if on_event is None:
        return
    if not callable(on_event):
        raise UsageError(f"on_event: expected a function that takes a Result or a Page, got {on_event!r:.60}")
    if inspect.iscoroutinefunction(on_event) or inspect.iscoroutinefunction(type(on_event).__call__):
        raise UsageError("on_event: it is called, not awaited, so an async function's events would be lost: give "
                         "a plain function (it may put each event on an asyncio.Queue), or use linkhound.crawl")


def _check_transport(transport: object) -> None:
    if transport is not None and not all(callable(getattr(transport, m, None)) for m in ("open", "close", "send")):
        raise UsageError(f"transport: expected an object with async open(), close() and send() (such as a "
                         f"linkhound.mock_transport.MockTransport), got {transport!r:.60}")


def _config(config: ConfigArg) -> Config | None:
    from .config import Config, load_config

    if config is None or config is False:
        return None
    if config is True:
        return load_config()
    if isinstance(config, Config):
        return config
    if isinstance(config, str | os.PathLike):
        return load_config([os.fspath(config)], discover=False)
    if isinstance(config, bytes) or not isinstance(config, Iterable) or not all(
            isinstance(c, str | os.PathLike) for c in config):
        raise UsageError(f"config: expected True, a path or a list of paths, got {config!r:.60}")
    return load_config([os.fspath(c) for c in config], discover=False)


def _what(inputs: InputsArg, files_from: FilesFromArg, config: Config | None) -> tuple[Sequence[str], str | None]:
    """What to check: the inputs given, else (with a config) the config's inputs and files_from."""
    given = _input_list(inputs)
    if files_from is not None and not isinstance(files_from, str | os.PathLike):
        raise UsageError(f"files_from: expected a path, got {type(files_from).__name__} ({files_from!r:.60})")
    if given or files_from is not None or config is None:
        return given, None if files_from is None else os.fspath(files_from)
    return config.inputs, config.files_from


def _input_list(inputs: InputsArg) -> list[str]:
    """inputs as a list of strings: one str or path is one input (not a string of one-letter inputs)."""
    if isinstance(inputs, str | os.PathLike):
        inputs = [inputs]
    elif isinstance(inputs, bytes) or not isinstance(inputs, Iterable):
        raise UsageError(f"inputs: expected a string, a path or a list of them, got {type(inputs).__name__}")
    out = []
    for i in inputs:
        text = os.fspath(i) if isinstance(i, str | os.PathLike) else i
        if not isinstance(text, str):
            raise UsageError(f"inputs: expected strings or paths, got {type(i).__name__} ({i!r:.60})")
        out.append(text)
    return out


def _inputs(inputs: Sequence[str], files_from: str | None, s: Settings, named_in: str = "") -> list[Input]:
    from .inputs import Named, collect, read_files_from

    args = [Named(i, named_in) for i in inputs] + (read_files_from(files_from) if files_from else [])
    if not args:
        raise UsageError("no inputs: give URLs, files, directories or globs")
    return collect(args, hidden=s.hidden, gitignore=s.gitignore, exclude_path=s.patterns("exclude_path"))
