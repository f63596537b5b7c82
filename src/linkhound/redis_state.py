"""The crawl state in Redis, shared by every process of a job: each step is one Lua script (redis_scripts.py).

The protocol answers a few questions synchronously (`has_work`, `record`, `depth`, `cut_by`, the counters).
Every script returns the job's counters and the records and queues it touched, so those answers come from
this process's latest view: exact while one process runs the job, and at most one script (or one `sweep`)
old otherwise.

What a claim's fetch found for the report (references, results, pages) waits in an Outbox under the claim's
key and goes to Redis with the claim's `done`, in the same script, so it is logged exactly when the claim
counts as done. The claim being worked on is known from a context variable that `claim` sets: the engine
fetches a claim in the task that took it, or in a task started from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import orjson

from . import redis_scripts
from .crawl_state import Claim, Found, Limits, Plan, Progress, Record
from .exceptions import UsageError
from .redis_link import LEASE
from .urls import host_of

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from .redis_link import Patience

_NO_LIMITS = Limits()
_PROGRESS = (Progress.QUEUED, Progress.IN_FLIGHT, Progress.DONE)
_SWEEP_HOSTS = 1000  # hosts with work a sweep tells of at most (a random sample when there are more)

current_claim: ContextVar[str | None] = ContextVar("linkhound_current_claim", default=None)


_FAR = 1 << 30  # a depth no link has: a link that can lower nothing


class Outbox:
    """Log entries waiting for the done of the claim they came from (None: from no claim, e.g. the inputs).
    Entries from no claim are marked (their kind in capitals): a job that is resumed reads its inputs again, and
    the report keeps one of each."""

    def __init__(self) -> None:
        self._entries: dict[str | None, list[Any]] = {}

    def put(self, entry: Any) -> None:
        key = current_claim.get()
        if key is None:  # from the inputs: a job resumed reads them again (the kind in capitals: kept once)
            entry = (entry[0].upper(), *entry[1:])
        entries = self._entries.get(key)
        if entries is None:
            self._entries[key] = [entry]
        else:
            entries.append(entry)

    def take(self, key: str | None) -> str:
        """The entries of key, as one log element ('' for none)."""
        entries = self._entries.pop(key, None)
        return orjson.dumps(entries).decode() if entries else ""


def key_prefix(job: str) -> str:
    """The prefix of every key of job: the hash tag keeps them in one Redis Cluster slot."""
    if not job or "{" in job or "}" in job:
        raise UsageError(f"job name {job!r}: expected a non-empty name without braces")
    return f"lh:{{{job}}}:"


class RedisState:
    """CrawlState in Redis. `client` must decode responses (redis.asyncio.from_url(url, decode_responses=True)).
    Claims are leases: one not done nor renewed within `lease` seconds goes back to its queue. While this
    process holds leases, a task renews them every lease/3 seconds. `patience` (redis_link.Patience) tries
    each step again while Redis is away; without it a step fails at once."""

    def __init__(
        self,
        client: Redis,
        job: str,
        limits: Limits = _NO_LIMITS,
        on_host_ready: Callable[[str], None] = lambda host: None,
        lease: float = LEASE,
        outbox: Outbox | None = None,
        patience: Patience | None = None,
    ) -> None:
        self._client = client
        self._patience = patience
        self._prefix = p = key_prefix(job)
        self._keys = [p + "rec", p + "n", p + "hosts", p + "cut", p + "leases"]
        self._head = [p, -1 if limits.max_depth is None else limits.max_depth,
                      -1 if limits.max_pages is None else limits.max_pages]
        self._limits = limits
        self._on_host_ready = on_host_ready
        self._lease_ms = max(1, round(lease * 1000))
        self._add = client.register_script(redis_scripts.ADD)
        self._claim = client.register_script(redis_scripts.CLAIM)
        self._done = client.register_script(redis_scripts.DONE)
        self._adopt = client.register_script(redis_scripts.ADOPT)
        self._renew = client.register_script(redis_scripts.RENEW)
        self._sweep = client.register_script(redis_scripts.SWEEP)
        self._open_script = client.register_script(redis_scripts.OPEN)
        self._source = ""  # this process's id among the job's open sources, while it adds inputs
        self._outbox = outbox
        self._leases: dict[str, int] = {}  # this process's claims in flight: key -> lease id
        self._keeper: asyncio.Task[None] | None = None
        # this process's view of the job, refreshed by every script
        self._unfinished = 0
        self._open = 0  # producers still adding (an input being read somewhere)
        self._own_open = 0  # ... of which this process is one
        self.refetched = 0
        self.claims = 0  # claims this process took
        self._queued = 0
        self._cut: tuple[str, ...] = ()
        self._sizes: dict[str, int] = {}
        self._records: dict[str, Record] = {}

    @property
    def unfinished(self) -> int:
        """The job's records queued or in flight, plus one for each other process still adding inputs: the
        job isn't over for this process while another may add work."""
        return self._unfinished + max(0, self._open - self._own_open)

    @property
    def queued(self) -> int:
        return self._queued

    async def open_source(self) -> None:
        """This process will add inputs: other processes don't end the job meanwhile. It stays open while
        `sweep` renews it (each sweep moves its deadline a lease on), so a process that died is not waited for
        past its lease."""
        if not self._source:
            self._source = secrets.token_hex(8)
            self._own_open = 1
        source = self._source
        await self._call(lambda: self._open_script([self._prefix + "open"], [source, self._lease_ms]))

    async def close_source(self) -> None:
        source, self._source = self._source, ""
        self._own_open = 0
        if source:
            await self._call(lambda: self._open_script([self._prefix + "open"], [source, 0]))

    async def flush(self) -> None:
        """Send what waits in the outbox under no claim (what the inputs said since the last add)."""
        if self._outbox is not None and (entries := self._outbox.take(None)):
            await self._call(lambda: self._client.rpush(self._prefix + "log", entries))

    async def sweep(self) -> None:
        """Look at the job as a whole: reclaim expired leases, learn of hosts others queued work for, and of
        the end. on_host_ready is told of each host with work new to this process, and of "" while the job
        looks over (its last item may have been done elsewhere: a scheduler waiting for work looks again)."""
        await self._run(self._sweep, [*self._head, _SWEEP_HOSTS, self._source, self._lease_ms])
        if not self.unfinished:
            self._on_host_ready("")

    def has_work(self, host: str) -> bool:
        return self._sizes.get(host, 0) > 0

    async def add(
        self, found: Iterable[Found], parent: str | None = None, hop: int = 1, known: Iterable[str] = ()
    ) -> list[Claim]:
        links = [(f.key, f.url, f.host, f.depth, int(f.crawl), int(f.body), int(f.seed)) for f in found]
        if parent is not None:  # children already recorded at no greater depth: only the edge is new
            links.extend((key, key, host_of(key), _FAR, 0, 0, 0) for key in known)
        if not links and parent is None:
            return []
        args = [*self._head, parent or "", hop, orjson.dumps(links)]
        await self.flush()  # what the inputs say: no claim to wait for
        return [_claim(c) for c in await self._run(self._add, args)]

    async def adopt(self, found: Found, parent: str | None = None) -> bool:
        f = found
        # the claim that was redirected to found: the engine adopts while working on it
        start = parent or current_claim.get() or ""
        args = [*self._head, f.key, f.url, f.host, f.depth, int(f.crawl), int(f.body), int(f.seed), start]
        return bool(await self._run(self._adopt, args))

    async def claim(self, host: str) -> Claim | None:
        answer = await self._run(self._claim, [*self._head, host, self._lease_ms])
        if answer is None:
            return None
        claim = _claim(answer[0])
        self._leases[claim.key] = int(answer[1])
        self.claims += 1
        current_claim.set(claim.key)
        if self._keeper is None:
            self._keeper = asyncio.ensure_future(self._keep_leases())
        return claim

    async def done(self, claim: Claim, served: Plan) -> None:
        lease = self._leases.pop(claim.key, 0)
        if not self._leases and self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        entries = self._outbox.take(claim.key) if self._outbox is not None else ""
        await self._run(self._done, [*self._head, claim.key, lease, int(claim.plan), int(served), entries])

    async def renew(self) -> int:
        """Move the deadlines of this process's leases on (and reclaim others' expired ones); how many."""
        args: list[Any] = [*self._head, self._lease_ms]
        for key, lease in list(self._leases.items()):
            args += (key, lease)
        return int(await self._run(self._renew, args))

    def record(self, key: str) -> Record | None:
        return self._records.get(key)

    def depth(self, key: str) -> int | None:
        r = self._records.get(key)
        return None if r is None else r.depth

    def cut_by(self) -> tuple[str, ...]:
        return self._cut

    async def _keep_leases(self) -> None:
        while self._leases:
            await asyncio.sleep(self._lease_ms / 3000)
            with contextlib.suppress(Exception):  # a missed renewal is retried; the lease has time left
                await self.renew()

    async def _call(self, step: Callable[[], Awaitable[Any]]) -> Any:
        return await (step() if self._patience is None else self._patience(step))

    async def _run(self, script: Any, args: list[Any]) -> Any:
        head, sizes, views, answer = await self._call(lambda: script(self._keys, args))
        unfinished, queued, refetched, cut_depth, cut_pages, opened = head
        self._unfinished, self._queued, self.refetched = int(unfinished), int(queued), int(refetched)
        self._open = int(opened)
        limits = self._limits
        cut = []
        if int(cut_depth):
            cut.append(f"max-depth {limits.max_depth}")
        if int(cut_pages):
            cut.append(f"max-pages {limits.max_pages}")
        self._cut = tuple(cut)
        for key, url, depth, plan, progress, served in views:
            served = int(served)
            self._records[key] = Record(key, url, int(depth), Plan(int(plan)), _PROGRESS[int(progress)],
                                        None if served < 0 else Plan(served))
        for i in range(0, len(sizes), 2):
            host, size = sizes[i], int(sizes[i + 1])
            before = self._sizes.pop(host, 0)
            if size > 0:
                self._sizes[host] = size
                if before == 0:
                    self._on_host_ready(host)
        return answer


def _claim(c: list[Any]) -> Claim:
    key, url, host, depth, plan, seed = c
    return Claim(key, url, host, int(depth), Plan(int(plan)), bool(int(seed)))
