"""Jobs in Redis seen from outside: the list of them with their counts, the report of one (running or finished),
and dropping one (`linkhound jobs`, `linkhound report`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from .crawl_state import Limits
from .exceptions import UsageError
from .redis_job import Job, Status, redis_errors
from .redis_link import TIMEOUT, Patience, connect
from .redis_state import RedisState, key_prefix
from .summary import Report

if TYPE_CHECKING:
    from redis.asyncio import Redis

_JOB_KEY = re.compile(r"^lh:\{(.+)\}:job$")
_SCAN = 1000  # keys asked for at a time by SCAN
_DELETE = 500  # keys deleted at a time


class Listed(NamedTuple):
    name: str
    status: Status


async def list_jobs(url: str, timeout: float = TIMEOUT) -> list[Listed]:
    """Every job in the Redis at url (each node of a cluster), by name."""
    client = connect(url)
    patience = Patience(url, timeout)
    with redis_errors(url):
        try:
            names = sorted(await patience(lambda: _job_names(client)))
            out = []
            for name in names:
                status = await Job(client, name, patience).status()
                if status is not None:  # dropped meanwhile
                    out.append(Listed(name, status))
            return out
        finally:
            await client.aclose()


async def _job_names(client: Redis) -> set[str]:
    names = set()
    async for key in client.scan_iter(match="lh:{*}:job", count=_SCAN):
        if (m := _JOB_KEY.match(str(key))) is not None:
            names.add(m.group(1))
    return names


async def drop_job(url: str, name: str, timeout: float = TIMEOUT) -> int:
    """Delete every key of job name; how many. Refused while a process holds a lease of the job or reads its
    inputs; a worker that finds its job dropped stops."""
    prefix = key_prefix(name)
    client = connect(url)
    patience = Patience(url, timeout)
    with redis_errors(url):
        try:
            status = await Job(client, name, patience).status()
            if status is None:
                raise UsageError(f"--job {name}: no such job in Redis at {url}")
            if status.leased or status.open:  # processes work on it: stop them first (their leases then end)
                raise UsageError(f"--job {name}: the job is being worked on ({status.leased} URLs in flight, "
                                 f"{status.open} processes reading inputs): stop it first (Ctrl+C on its first "
                                 "process) and drop it when its processes have exited")

            async def drop() -> int:
                pattern = _glob_escape(prefix) + "*"
                keys = [str(k) async for k in client.scan_iter(match=pattern, count=_SCAN)]
                deleted = 0
                for i in range(0, len(keys), _DELETE):
                    deleted += int(await client.unlink(*keys[i:i + _DELETE]))  # one slot: the job's hash tag
                return deleted

            return await patience(drop)
        finally:
            await client.aclose()


async def job_report(url: str, name: str, timeout: float = TIMEOUT) -> tuple[Report, Status]:
    """The report of job name as it stands (all of it once it is finished), and the job's status."""
    client = connect(url)
    job = Job(client, name, Patience(url, timeout))
    with redis_errors(url):
        try:
            found = await job.read()
            status = await job.status()
            if found is None or status is None:
                raise UsageError(f"--job {name}: no such job in Redis at {url}")
            settings, _ = found
            state = RedisState(client, name, Limits(settings.max_depth, settings.max_pages), patience=job.patience)
            await state.sweep()  # the counters, for the limits that cut the crawl
            elapsed = status.elapsed if status.elapsed is not None else status.age
            return await job.report(elapsed, status.stopped, state.cut_by()), status
        finally:
            await client.aclose()


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)
