"""Distributed mode: one crawl run by many processes through Redis. The process given the inputs opens the job
(or joins one of the same settings and inputs: a resume) and writes the report (`DistributedRun`); workers join
by the job's name and leave when it is over (`Worker`).

A job is over when no queue holds a URL, no lease is live and no process is still reading inputs: each script
of the state answers that, from the job's counters and its set of open sources, in one step. Each process
reads the same URL inputs (the crawl's scope comes from them) and adds them again, which changes nothing:
dedup at enqueue. Every Redis step goes through the process's Patience (redis_link): Redis away is waited out,
up to --redis-timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from .crawl_state import Limits
from .engine import Engine
from .exceptions import LinkhoundError, UsageError
from .host_pool import HostLimits
from .inputs import Input
from .ledger import Ledger, MemoryLedger
from .options import option_fields
from .redis_host_pool import RedisHostPool
from .redis_link import LEASE, TIMEOUT, Patience, connect
from .redis_state import Outbox, RedisState, key_prefix
from .run import Run
from .settings import Settings
from .shared_ledger import SharedLedger, replay
from .suggestions import moved
from .summary import Report, SitemapDrift
from .types import Page
from .urls import canonical_key

DriftOf = Callable[[list[str], Ledger], SitemapDrift | None]  # pages crawled, their ledger -> drift

if TYPE_CHECKING:
    from redis.asyncio import Redis

POLL = 0.05  # seconds between two looks at the job as a whole (work others queued, expired leases, the end)
_CHUNK = 10_000  # log entries or records read at a time

# KEYS: the job hash. ARGV: settings, seeds. Made if no job of that name exists: 1; one exists with the same
# settings and seeds (joined, and no longer stopped): 2; with others: 0. The job's clock starts at its making
# (server time, ms).
_CREATE = """
local settings, seeds = unpack(redis.call('HMGET', KEYS[1], 'settings', 'seeds'))
if settings then
  if settings ~= ARGV[1] or seeds ~= ARGV[2] then return 0 end
  redis.call('HDEL', KEYS[1], 'stopped')  -- resumed: a stop (Ctrl+C) of an earlier run is over
  return 2
end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'settings', ARGV[1], 'seeds', ARGV[2], 'started', t[1] * 1000 + math.floor(t[2] / 1000))
return 1
"""

# KEYS: the job hash, counters, records, leases, open sources. Answer: {made, stopped, unfinished, queued,
# records, live leases, open sources, ms since it started, its elapsed seconds as written by its report}:
# one look at the job, at one moment.
_STATUS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, 0, 0, 0, 0, 0, 0, ''} end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local job = redis.call('HMGET', KEYS[1], 'stopped', 'started', 'elapsed')
local n = redis.call('HMGET', KEYS[2], 'unfinished', 'queued')
return {1, job[1] and 1 or 0, tonumber(n[1]) or 0, tonumber(n[2]) or 0, redis.call('HLEN', KEYS[3]),
        redis.call('ZCOUNT', KEYS[4], now, '+inf'), redis.call('ZCOUNT', KEYS[5], now, '+inf'),
        now - (tonumber(job[2]) or now), job[3] or ''}
"""


class Status(NamedTuple):
    """One look at a job: its counters and what they mean."""

    stopped: bool
    unfinished: int  # URLs queued or in flight
    queued: int
    urls: int  # URLs the job knows of
    leased: int  # URLs a live process holds
    open: int  # processes still reading inputs
    age: float  # seconds since it started
    elapsed: float | None  # the run's time, once the first process wrote the report

    @property
    def state(self) -> str:
        if not self.unfinished and not self.open:
            return "finished"
        return "stopped" if self.stopped else "running"


@contextlib.contextmanager
def redis_errors(url: str) -> Iterator[None]:
    """A Redis that can't be reached or answers an error is one line, not a traceback."""
    from redis.exceptions import MovedError, RedisError

    try:
        yield
    except MovedError as e:  # a key held by another node: this one is part of a cluster
        raise LinkhoundError(f"Redis at {url}: the key is on {e.host}:{e.port}; that is a Redis Cluster node: "
                             "give a redis+cluster:// URL") from None
    except RedisError as e:
        raise LinkhoundError(f"Redis at {url}: {e}") from None


class Job:
    """The job's own keys: its settings and seeds, the stop flag, the log and the records."""

    def __init__(self, client: Redis, name: str, patience: Patience | None = None) -> None:
        self.client = client
        self.name = name
        self.prefix = key_prefix(name)
        self.key = self.prefix + "job"
        self.patience = patience
        self._stops_before = 0

    async def _call(self, step: Callable[[], Awaitable[Any]]) -> Any:
        return await (step() if self.patience is None else self.patience(step))

    async def create(self, settings: Settings, seeds: list[str]) -> bool:
        """Make the job, or join it (True) if it has the same settings and seeds."""
        wanted = orjson.dumps(shared_options(settings)).decode(), orjson.dumps(seeds).decode()
        made = await self._call(lambda: self.client.eval(_CREATE, 1, self.key, *wanted))
        if not made:
            raise UsageError(f"--job {self.name}: a job of that name is in Redis with other settings or inputs "
                             "(pick a new name, or drop it: linkhound jobs --redis URL --job NAME --drop)")
        return int(made) == 2

    async def read(self) -> tuple[Settings, list[str]] | None:
        settings, seeds = await self._call(lambda: self.client.hmget(self.key, ["settings", "seeds"]))
        if settings is None or seeds is None:
            return None
        from .api import make_settings

        return make_settings(**orjson.loads(settings)), orjson.loads(seeds)

    async def status(self) -> Status | None:
        """None when there is no such job."""
        p = self.prefix
        keys = [self.key, p + "n", p + "rec", p + "leases", p + "open"]
        made, stopped, unfinished, queued, urls, leased, opened, age, elapsed = await self._call(
            lambda: self.client.eval(_STATUS, len(keys), *keys))
        if not int(made):
            return None
        return Status(bool(int(stopped)), int(unfinished), int(queued), int(urls), int(leased), int(opened),
                      int(age) / 1000, float(elapsed) if elapsed else None)

    async def stop(self) -> None:
        """Stop the job: its processes take no new work. `stopped` (shown by `linkhound jobs`) lasts until the
        job is resumed; `stops` counts the stops, so a process that joins a stopped job can tell an earlier stop
        (it works on: the job is being resumed) from one made while it works."""
        await self._call(lambda: self.client.hincrby(self.key, "stops", 1))
        await self._call(lambda: self.client.hset(self.key, "stopped", 1))

    async def joined(self) -> None:
        """From now on, stopped() answers for stops made after this."""
        stops = await self._call(lambda: self.client.hget(self.key, "stops"))
        self._stops_before = int(stops or 0)

    async def stopped(self) -> bool:
        """Stopped since joined(), or dropped (its keys are gone)."""
        stops, settings = await self._call(lambda: self.client.hmget(self.key, ["stops", "settings"]))
        return int(stops or 0) > self._stops_before or settings is None

    async def ended(self, elapsed: float) -> None:
        await self._call(lambda: self.client.hset(self.key, "elapsed", f"{elapsed:.3f}"))

    async def replay(self, ledger: Ledger, pages: list[tuple[str, int, bool]]) -> None:
        start = 0
        key = self.prefix + "log"
        seen: set[str] = set()
        while chunk := await self._call(lambda at=start: self.client.lrange(key, at, at + _CHUNK - 1)):  # type: ignore[misc]
            replay(chunk, ledger, pages, seen)
            start += len(chunk)

    async def known(self, keys: list[str]) -> set[str]:
        """Those of keys the job's crawl state holds (whichever process found them)."""
        out: set[str] = set()
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            found = await self.client.hmget(self.prefix + "rec", chunk)
            out.update(key for key, packed in zip(chunk, found, strict=True) if packed is not None)
        return out

    async def depths(self) -> dict[str, int]:
        """Every record's shortest depth, for the report."""
        out: dict[str, int] = {}
        cursor = 0
        while True:
            cursor, chunk = await self._call(
                lambda at=cursor: self.client.hscan(self.prefix + "rec", at, count=_CHUNK))  # type: ignore[misc]
            assert isinstance(chunk, dict)
            for key, packed in chunk.items():  # str: the client decodes
                out[str(key)] = int(str(packed).split(" ", 1)[0])
            if cursor == 0:
                return out

    async def report(self, elapsed: float, interrupted: bool, caps: tuple[str, ...] = (),
                     warnings: tuple[str, ...] = (), drift: DriftOf | None = None) -> Report:
        """The report of the whole job, from what every process logged (drift: --sitemap-drift's comparison,
        over the whole job's pages)."""
        ledger = MemoryLedger()
        logged: list[tuple[str, int, bool]] = []
        await self.replay(ledger, logged)
        depths = await self.depths()
        pages = tuple(Page(url, depths.get(canonical_key(url), 0), n, followed) for url, n, followed in logged)
        report = ledger.report(pages, elapsed, interrupted, caps, depths.get, warnings)
        if drift is None:
            return report
        return dataclasses.replace(report, sitemap_drift=drift([page.url for page in pages], ledger))


# what only the process that writes the report does, and how it shows it: not the job's, so not compared when
# the same command is run again with another -o or -f
_OWN = frozenset({"sitemap_drift", "sitemap", "format", "output", "verbose", "summary_only", "all_referrers",
                  "progress", "quiet", "color"})


def shared_options(settings: Settings) -> dict[str, Any]:
    """The settings every process of a job runs with, as JSON values. Secrets (headers, credentials) stay in
    the process that was given them: they are not written to Redis."""
    secret = {f.name for f in dataclasses.fields(Settings) if not f.repr}
    out: dict[str, Any] = {}
    for f in option_fields(Settings):
        value = getattr(settings, f.name)
        if value is None or f.name in _OWN:
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

    def __init__(self, client: Redis, job: Job, settings: Settings, log_inputs: bool, lease: float) -> None:
        self.job = job
        outbox = Outbox()
        self.ledger = SharedLedger(outbox, log_inputs=log_inputs)
        made: list[RedisState] = []

        def state(limits: Limits, on_host_ready: Callable[[str], None]) -> RedisState:
            made.append(RedisState(client, job.name, limits, on_host_ready, lease, outbox, job.patience))
            return made[0]

        def pool(default: HostLimits, overrides: dict[str, HostLimits], max_wait: float) -> RedisHostPool:
            return RedisHostPool(client, default, overrides, max_wait=max_wait)

        # links to fix are the job's report's business, made from every result (one process holds only its own)
        own = dataclasses.replace(settings, suggest_fixes=False, suggest_https=False)
        self.engine = Engine(own, self.ledger.page, state=state, ledger=self.ledger, pool=pool, reached=job.known)
        self.state = made[0]

    async def run(self, inputs: list[Input], follow_stop: bool) -> Report:
        await self.state.sweep()  # the job as it is, before the first request
        over: list[bool] = []
        watcher = asyncio.ensure_future(self._watch(follow_stop, over))
        try:
            report = await self.engine.run(inputs)
        finally:
            # told, not cancelled: a cancel that lands inside a Redis call can be lost there, and the task
            # would then outlive the run (and keep the process from exiting)
            over.append(True)
            await watcher
        self._raise_if_away()
        return _with_outages(report, self.job.patience)

    def _raise_if_away(self) -> None:
        """Redis stayed away past --redis-timeout: the process stops with that error, whatever the engine made
        of the steps that failed (the job in Redis is as they left it, and can be resumed)."""
        if self.job.patience is not None and self.job.patience.failed is not None:
            raise self.job.patience.failed

    async def _watch(self, follow_stop: bool, over: list[bool]) -> None:
        while not over:
            await asyncio.sleep(POLL)
            if self.job.patience is not None and self.job.patience.failed is not None:
                self.engine.cancel()  # nothing more can be done or told: what is in flight ends now
                continue
            with contextlib.suppress(Exception):  # a missed look is made again next time
                await self.state.sweep()
                if follow_stop and await self.job.stopped():
                    self.engine.stop()


class DistributedRun(Run):
    """A Run whose crawl state, references and results are in Redis, shared with the workers of the job. Its
    report covers the whole job. A job of that name with the same settings and inputs is joined (resumed)."""

    def __init__(self, settings: Settings, inputs: list[Input], redis_url: str, job: str,
                 lease: float = LEASE, redis_timeout: float = TIMEOUT) -> None:
        self._url = redis_url
        self._client = connect(redis_url)
        self._job = Job(self._client, job, Patience(redis_url, redis_timeout))
        self._process = _Process(self._client, self._job, settings, True, lease)
        self._settings = settings
        self._stopped = False
        self._telling: asyncio.Future[Any] | None = None  # the stop, on its way to the workers
        super().__init__(self._process.engine, inputs)

    async def _run(self) -> Report:
        started = time.monotonic()
        with redis_errors(self._url):
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
            if self._job.patience is None or self._job.patience.failed is None:
                await state.close_source()
        await state.sweep()
        caps = tuple(sorted({*local.summary.caps, *state.cut_by()}))
        status = await self._job.status()
        if status is None:  # (a running job can't be dropped: Redis lost it, restarted without its data)
            raise LinkhoundError(f"--job {self._job.name}: the job is gone from Redis (restarted without its data?):"
                                 " its crawl was lost; the same command starts it afresh")
        if status.elapsed is not None:  # a finished job, joined again: its time is kept
            elapsed = status.elapsed
        else:  # from the job's start, resumed or not
            elapsed = status.age
            if not self._stopped:
                await self._job.ended(elapsed)
        drift = self._process.engine.sitemap_drift if local.sitemap_drift is not None else None
        report = await self._job.report(elapsed, self._stopped, caps, local.summary.warnings, drift)
        report = _with_outages(report, self._job.patience)  # (one while the log was read, too)
        report = await self._process.engine.with_certificates(report)
        if self._settings.fail_on_blocked:
            report = dataclasses.replace(report, summary=dataclasses.replace(report.summary, blocked_fail=True))
        return _links_to_fix(report, local, self._settings)

    def stop(self) -> None:
        """Stop the whole job: the workers take no new work either."""
        if not self._stopped:
            self._stopped = True
            self._telling = asyncio.ensure_future(self._job.stop())
        super().stop()


def _with_outages(report: Report, patience: Patience | None) -> Report:
    """report with the outages of Redis this process waited out among its warnings (each once)."""
    if patience is None or not patience.warnings:
        return report
    warnings = tuple(dict.fromkeys((*report.summary.warnings, *patience.warnings)))
    return dataclasses.replace(report, summary=dataclasses.replace(report.summary, warnings=warnings))


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

    def __init__(self, redis_url: str, job: str, lease: float = LEASE, redis_timeout: float = TIMEOUT) -> None:
        self._url = redis_url
        self._client = connect(redis_url)
        self._job = Job(self._client, job, Patience(redis_url, redis_timeout))
        self._lease = lease
        self._process: _Process | None = None
        self._stopped = False
        self.finished_before = False  # the job was over when this worker came

    async def run(self, waiting: Callable[[], None] = lambda: None) -> Report | None:
        """None when stopped before the job was found, or when it was over already (finished_before).
        waiting is called once if the job isn't there yet."""
        try:
            with redis_errors(self._url):
                told = False
                while (found := await self._job.read()) is None and not self._stopped:
                    if not told:
                        waiting()
                        told = True
                    await asyncio.sleep(POLL * 4)
                if found is None:
                    return None
                status = await self._job.status()
                if status is not None and status.state == "finished":
                    self.finished_before = True
                    return None
                settings, seeds = found
                await self._job.joined()  # a job stopped before is worked on: it is being resumed
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
