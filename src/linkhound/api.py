"""The library entry points: `check` returns a Report, `crawl` yields results and pages as they happen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from .exceptions import UsageError
from .settings import Settings, parse_accept, setting_names
from .summary import Report
from .types import Event

if TYPE_CHECKING:
    from .inputs import Input


def make_settings(settings: Settings | None = None, **options: Any) -> Settings:
    """Settings from keyword options (lists become tuples, "accept" may be a string like "200..=299,403")."""
    if settings is not None and options:
        raise UsageError("pass either settings or keyword options, not both")
    if settings is not None:
        return settings
    unknown = sorted(set(options) - set(setting_names()))
    if unknown:
        raise UsageError(f"unknown option(s): {', '.join(unknown)}")
    for name, value in options.items():
        if isinstance(value, list | set | frozenset) and name != "accept":
            options[name] = tuple(value)
    accept = options.get("accept")
    if isinstance(accept, str):
        options["accept"] = parse_accept(accept)
    elif accept is not None:
        options["accept"] = frozenset(int(c) for c in accept)
    return Settings(**options)


async def check(
    inputs: Sequence[str], settings: Settings | None = None, *, files_from: str | None = None, **options: Any
) -> Report:
    """Check every link in inputs (URLs, files, directories, globs) and return the Report.

    >>> report = await linkhound.check(["README.md", "https://example.org/"], max_concurrency=32)
    """
    from .engine import Engine  # aiohttp loads on first use, so `import linkhound` stays quick

    s = make_settings(settings, **options)
    engine = Engine(s)
    return await engine.run(_inputs(inputs, files_from, s))


async def crawl(
    inputs: Sequence[str], settings: Settings | None = None, *, files_from: str | None = None, **options: Any
) -> AsyncIterator[Event]:
    """Crawl from inputs (recursive unless recursive=False is given) and yield each Result and Page as it comes.

    Leaving the loop early stops the crawl: requests in flight are let finish.
    """
    from .engine import Engine

    options.setdefault("recursive", True)
    s = make_settings(settings, **options)
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    engine = Engine(s, emit=queue.put_nowait)
    task = asyncio.ensure_future(engine.run(_inputs(inputs, files_from, s)))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        await task
    finally:
        if not task.done():
            engine.stop()
            await asyncio.gather(task, return_exceptions=True)


def _inputs(inputs: Sequence[str], files_from: str | None, s: Settings) -> list[Input]:
    from .inputs import collect, read_files_from

    args = list(inputs) + (read_files_from(files_from) if files_from else [])
    if not args:
        raise UsageError("no inputs: give URLs, files, directories or globs")
    return collect(args, hidden=s.hidden, gitignore=s.gitignore)
