"""Distributed mode: one crawl run by many processes through Redis. The process given the inputs opens the job
and writes the report (`DistributedRun`); workers join by the job's name and leave when it is over (`work`).

A job is over when no queue holds a URL, no lease is live and no process is still reading inputs: the job's
counters say so in one read, and they only move inside the state's scripts. Each process reads the same URL
inputs (the crawl's scope comes from them) and adds them again, which changes nothing: dedup at enqueue.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from .crawl_state import Limits
from .engine import Engine
from .exceptions import LinkhoundError, UsageError
from .host_pool import HostLimits
from .inputs import Input
from .ledger import Ledger
from .options import option_fields
from .redis_host_pool import RedisHostPool
from .redis_state import LEASE, Outbox, RedisState, key_prefix
from .run import Run
from .settings import Settings
from .shared_ledger import SharedLedger, replay
from .suggestions import moved
from .summary import Report
from .types import Page
from .urls import canonical_key

if TYPE_CHECKING:
    from redis.asyncio import Redis

POLL = 0.05  # seconds between two looks at the job as a whole (work others queued, expired leases, the end)
_CHUNK = 10_000  # log entries or records read at a time

# KEYS: the job hash. ARGV: settings, seeds. Made only if no job of that name exists: 1, else 0.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'settings', ARGV[1], 'seeds', ARGV[2])
return 1
"""


def connect(url: str) -> Redis:
    try:
        import redis.asyncio
    except ImportError:
        raise UsageError("--redis needs the redis package: pip install 'linkhound[redis]'") from None
    try:
        return redis.asyncio.from_url(url, decode_responses=True)
    except ValueError as e:
        raise UsageError(f"--redis {url}: {e}") from None


@contextlib.contextmanager
def _redis_errors(url: str) -> Iterator[None]:
    """A Redis that can't be reached or answers an error is one line, not a traceback."""
    from redis.exceptions import RedisError

    try:
        yield
    except RedisError as e:
        raise LinkhoundError(f"Redis at {url}: {e}") from None


class _Job:
    """The job's own keys: its settings and seeds, the stop flag, the log and the records."""

    def __init__(self, client: Redis, name: str) -> None:
        self.client = client
        self.name = name
        self.prefix = key_prefix(name)
        self.key = self.prefix + "job"

    async def create(self, settings: Settings, seeds: list[str]) -> None:
        made = await self.client.eval(_CREATE, 1, self.key, orjson.dumps(shared_options(settings)).decode(),
                                      orjson.dumps(seeds).decode())
        if not made:
            raise UsageError(f"--job {self.name}: a job of that name is in Redis already (pick a new name)")

    async def read(self) -> tuple[Settings, list[str]] | None:
        settings, seeds = await self.client.hmget(self.key, ["settings", "seeds"])
        if settings is None or seeds is None:
            return None
        from .api import make_settings

        return make_settings(**orjson.loads(settings)), orjson.loads(seeds)

    async def stop(self) -> None:
        await self.client.hset(self.key, "stopped", 1)

    async def stopped(self) -> bool:
        return bool(await self.client.hexists(self.key, "stopped"))

    async def replay(self, ledger: Ledger, pages: list[tuple[str, int, bool]]) -> None:
        start = 0
        while chunk := await self.client.lrange(self.prefix + "log", start, start + _CHUNK - 1):
            replay(chunk, ledger, pages)
            start += len(chunk)

    async def depths(self) -> dict[str, int]:
        """Every record's shortest depth, for the report."""
        out: dict[str, int] = {}
        cursor = 0
        while True:
            cursor, chunk = await self.client.hscan(self.prefix + "rec", cursor, count=_CHUNK)
            assert isinstance(chunk, dict)
            for key, packed in chunk.items():  # str: the client decodes
                out[str(key)] = int(str(packed).split(" ", 1)[0])
            if cursor == 0:
                return out


def shared_options(settings: Settings) -> dict[str, Any]:
    """The settings every process of a job runs with, as JSON values. Secrets (headers, credentials) stay in
    the process that was given them: they are not written to Redis."""
    secret = {f.name for f in dataclasses.fields(Settings) if not f.repr}
    out: dict[str, Any] = {}
    for f in option_fields(Settings):
        value = getattr(settings, f.name)
        if value is None:
            continue
        if f.name == "hosts":  # per-host limits go, their headers don't
            value = {h: {k: v for k, v in spec.items() if k != "headers"} for h, spec in value.items()}
        elif f.name in secret:
            continue
        elif f.option.show is not None:
            value = f.option.show(value)
        elif isinstance(value, tuple | frozenset):
            value = list(value)
        out[f.name] = value
    return out


class _Process:
    """One process's part of a job: an engine whose state and ledger live in Redis, and a task that watches
    the job as a whole meanwhile."""

    def __init__(self, client: Redis, job: _Job, settings: Settings, log_inputs: bool, lease: float) -> None:
        self.job = job
        outbox = Outbox()
        self.ledger = SharedLedger(outbox, log_inputs=log_inputs)
        made: list[RedisState] = []

        def state(limits: Limits, on_host_ready: Callable[[str], None]) -> RedisState:
            made.append(RedisState(client, job.name, limits, on_host_ready, lease, outbox))
            return made[0]

        def pool(default: HostLimits, overrides: dict[str, HostLimits], max_wait: float) -> RedisHostPool:
            return RedisHostPool(client, default, overrides, max_wait=max_wait)

        # links to fix are the job's report's business, made from every result (one process holds only its own)
        own = dataclasses.replace(settings, suggest_fixes=False, suggest_https=False)
        self.engine = Engine(own, self.ledger.page, state=state, ledger=self.ledger, pool=pool)
        self.state = made[0]

    async def run(self, inputs: list[Input], follow_stop: bool) -> Report:
        await self.state.sweep()  # the job as it is, before the first request
        over: list[bool] = []
        watcher = asyncio.ensure_future(self._watch(follow_stop, over))
        try:
            return await self.engine.run(inputs)
        finally:
            # told, not cancelled: a cancel that lands inside a Redis call can be lost there, and the task
            # would then outlive the run (and keep the process from exiting)
            over.append(True)
            await watcher

    async def _watch(self, follow_stop: bool, over: list[bool]) -> None:
        while not over:
            await asyncio.sleep(POLL)
            with contextlib.suppress(Exception):  # a missed look is made again next time
                await self.state.sweep()
                if follow_stop and await self.job.stopped():
                    self.engine.stop()


class DistributedRun(Run):
    """A Run whose crawl state, references and results are in Redis, shared with the workers of the job. Its
    report covers the whole job."""

    def __init__(self, settings: Settings, inputs: list[Input], redis_url: str, job: str,
                 lease: float = LEASE) -> None:
        self._url = redis_url
        self._client = connect(redis_url)
        self._job = _Job(self._client, job)
        self._process = _Process(self._client, self._job, settings, True, lease)
        self._settings = settings
        self._stopped = False
        self._telling: asyncio.Future[Any] | None = None  # the stop, on its way to the workers
        super().__init__(self._process.engine, inputs)

    async def report(self) -> Report:
        started = time.monotonic()
        with _redis_errors(self._url):
            try:
                return await self._report(started)
            finally:
                await self._client.aclose()

    async def _report(self, started: float) -> Report:
        state = self._process.state
        await state.open_source()  # before the job exists: no worker may find it open with nothing to do
        try:
            await self._job.create(self._process.engine.settings, [i.location for i in self._inputs if i.is_url])
            local = await self._process.run(self._inputs, follow_stop=False)
            await state.flush()  # e.g. the page entry of the last local file read
        finally:
            await state.close_source()
        await state.sweep()
        ledger = Ledger()
        logged: list[tuple[str, int, bool]] = []
        await self._job.replay(ledger, logged)
        depths = await self._job.depths()
        pages = tuple(Page(url, depths.get(canonical_key(url), 0), n, followed) for url, n, followed in logged)
        caps = tuple(sorted({*local.summary.caps, *state.cut_by()}))
        elapsed = time.monotonic() - started
        report = ledger.report(pages, elapsed, self._stopped, caps, depths.get, local.summary.warnings)
        return _links_to_fix(report, local, self._settings)

    def stop(self) -> None:
        """Stop the whole job: the workers take no new work either."""
        if not self._stopped:
            self._stopped = True
            self._telling = asyncio.ensure_future(self._job.stop())
        super().stop()


def _links_to_fix(report: Report, local: Report, settings: Settings) -> Report:
    """The job's links that moved for good (--suggest-fixes), and this process's count of links skipped as
    unchanged (--changed-since: local files are read here only). https:// twins are not asked in a job."""
    if local.summary.unchanged is not None:
        report = dataclasses.replace(report, summary=dataclasses.replace(report.summary,
                                                                         unchanged=local.summary.unchanged))
    if settings.suggest_fixes and not report.summary.interrupted:
        report = dataclasses.replace(report, suggestions=tuple(moved(report.results)))
    return report


class Worker:
    """A process that joins a job by name: `await worker.run()` takes the job's work until it is over (or
    stopped) and returns this worker's own report (the job's report is the one DistributedRun writes)."""

    def __init__(self, redis_url: str, job: str, lease: float = LEASE) -> None:
        self._url = redis_url
        self._client = connect(redis_url)
        self._job = _Job(self._client, job)
        self._lease = lease
        self._process: _Process | None = None
        self._stopped = False

    async def run(self, waiting: Callable[[], None] = lambda: None) -> Report | None:
        """None when stopped before the job was found. waiting is called once if the job isn't there yet."""
        try:
            with _redis_errors(self._url):
                told = False
                while (found := await self._job.read()) is None and not self._stopped:
                    if not told:
                        waiting()
                        told = True
                    await asyncio.sleep(POLL * 4)
                if found is None:
                    return None
                settings, seeds = found
                self._process = _Process(self._client, self._job, settings, False, self._lease)
                if self._stopped:
                    self._process.engine.stop()
                return await self._process.run([Input(url, None) for url in seeds], follow_stop=True)
        finally:
            await self._client.aclose()

    @property
    def claims(self) -> int:
        """URLs this worker took from the job's queues (and fetched)."""
        return 0 if self._process is None else self._process.state.claims

    def stop(self) -> None:
        """Take no new work; what is in flight finishes and is done (the job goes on with the other workers)."""
        self._stopped = True
        if self._process is not None:
            self._process.engine.stop()
