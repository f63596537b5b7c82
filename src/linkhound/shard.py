"""One process's share of a run checked by several (`--jobs`): which URLs are its own, and its part of each
host's limits, so that the processes together never go past them."""

from __future__ import annotations

import functools
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .crawl_state import Claim, Found, Limits
from .extract import Kind
from .forks import cores
from .host_pool import HostLimits, HostPool
from .inputs import Input
from .memory_state import MemoryState
from .settings import Settings

# --jobs unset: a second process only when the inputs hold this much text (about 5,000 URLs in a list), since
# it costs a second interpreter's start and a pipe both ways (~1 s of CPU for 20,000 URLs, measured)
_AUTO_BYTES = 256 * 1024


def jobs_for(s: Settings, inputs: Sequence[Input]) -> int:
    """How many processes check this run: --jobs (or 2 with a second core and many links to check), fewer
    when a host limit can't be split that many ways, and 1 whenever sharing the run isn't safe: a crawl, a
    state or cache file, cookies written back, per-run probes (--soft-404, --tls-expiry), per-host stats,
    suggestions, or an input that is a URL, a sitemap or nothing to split."""
    wanted = s.jobs
    if wanted is None:
        size = sum(len(i.content or b"") for i in inputs)
        wanted = 2 if cores() >= 2 and size >= _AUTO_BYTES else 1
    if wanted < 2 or not _shareable(s, inputs):
        return 1
    limits = _all_limits(s)
    # (no process may get less than 1 of a cap: more than the smallest cap never splits, 10**20 included)
    wanted = min(wanted, *(lim.concurrency for lim in limits), *(lim.burst for lim in limits if lim.rate))
    while wanted > 1 and not all(_splits(lim, wanted) for lim in limits):
        wanted -= 1
    return wanted


def _shareable(s: Settings, inputs: Sequence[Input]) -> bool:
    if (s.recursive or s.state is not None or s.rerun_failed or s.cache or s.cookie_jar is not None or s.offline
            or s.soft_404 or s.tls_expiry is not None or s.host_stats or s.suggest_fixes or s.suggest_https
            or s.sitemap_drift):
        return False
    return bool(inputs) and all(i.content is not None and i.kind is not Kind.SITEMAP for i in inputs)


def _all_limits(s: Settings) -> list[HostLimits]:
    default = HostLimits(s.host_concurrency, s.host_rate, s.host_burst)
    return [default, HostLimits(s.max_concurrency), *(hs.limits(default) for hs in s.host_settings.values())]


def _splits(limits: HostLimits, count: int) -> bool:
    """Whether limits split count ways leave each process a concurrency (and a burst) of at least 1."""
    for index in range(count):
        part = Shard(index, count).limits(limits)
        if part.concurrency < 1 or part.burst < 1:
            return False
    return True


_BUCKETS = 1000  # keys hash to one of these; each process owns a run of them
# The first process reads the inputs for all and writes the report: it takes a smaller share of the URLs (and
# of the limits, so that every process takes as long for its share: a latency-bound run ends in step). Each
# process's queue is then kept about as far ahead of its requests as one process's is (2 x its concurrency)
_FIRST = 0.5


@dataclass(frozen=True)
class Shard:
    """Process `index` of `count`: the URLs whose canonical key hashes into its buckets, and the same share of
    every limit."""

    index: int
    count: int

    @functools.cached_property
    def _bounds(self) -> tuple[int, int]:
        first = round(_BUCKETS * _FIRST / self.count) if self.count > 1 else _BUCKETS
        if self.index == 0:
            return 0, first
        rest = _BUCKETS - first
        return first + rest * (self.index - 1) // (self.count - 1), first + rest * self.index // (self.count - 1)

    @property
    def share(self) -> float:
        lo, hi = self._bounds
        return (hi - lo) / _BUCKETS

    def owns(self, key: str) -> bool:
        # crc32: stable across processes and runs (str hashes are salted per process)
        lo, hi = self._bounds
        return lo <= zlib.crc32(key.encode()) % _BUCKETS < hi

    def part(self, n: int) -> int:
        """This process's part of n: at least 1 when n is at least the count, the rest by its share (the parts
        of all processes add up to n)."""
        lo, hi = self._bounds
        if n < self.count:
            return n * hi // _BUCKETS - n * lo // _BUCKETS
        rest = n - self.count
        return 1 + rest * hi // _BUCKETS - rest * lo // _BUCKETS

    def limits(self, limits: HostLimits) -> HostLimits:
        if limits.rate is None:
            return HostLimits(self.part(limits.concurrency), None, limits.burst)
        return HostLimits(self.part(limits.concurrency), limits.rate * self.share, self.part(limits.burst))

    def pool(self, tell: Tell, made: Callable[[ShardPool], None], whole: bool = False) -> Callable[..., HostPool]:
        """A HostPool factory for the engine that gives this process its part of each host's limits (whole: all
        of them, until ShardPool.divide), and tells the other processes when a host asks for a wait (made: sees
        the pool)."""
        part = (lambda limits: limits) if whole else self.limits

        def make(default: HostLimits, per_host: dict[str, HostLimits], max_wait: float) -> HostPool:
            pool = ShardPool(part(default), {h: part(lim) for h, lim in per_host.items()}, max_wait, tell)
            made(pool)
            return pool

        return make

    def state(
        self, forward: Callable[[list[Found]], None] | None = None, split: bool = True
    ) -> Callable[[Limits, Callable[[str], None]], ShardState]:
        return lambda limits, ready: ShardState(self, limits, ready, forward, split)


Tell = Callable[[str, float], None]  # (host, until when it waits, as time.time())


class ShardPool(HostPool):
    """A shard's HostPool: a wait a host asks for (429 or 503, Retry-After, a spent rate-limit window) is told
    to the other processes, and the waits they are told are kept here, so the host waits for all of them."""

    def __init__(self, default: HostLimits, overrides: dict[str, HostLimits], max_wait: float, tell: Tell) -> None:
        super().__init__(default, overrides, max_wait=max_wait)
        self._tell = tell

    def _blocked(self, host: str, seconds: float) -> None:
        self._tell(host, time.time() + seconds)

    def wait_until(self, host: str, until: float) -> None:
        """Another process was told to wait on host until then (time.time()): this one waits as long."""
        h = self._host(host)
        h.blocked_until = max(h.blocked_until, self._clock() + until - time.time())

    def divisible(self, shard: Shard) -> bool:
        """Whether every limit in force here leaves each process a concurrency (and burst) of at least 1."""
        limits = [self._default, *self._overrides.values(), *(h.limits for h in self._hosts.values())]
        return all(_splits(lim, shard.count) for lim in limits)

    def divide(self, shard: Shard) -> list[tuple[str, float]]:
        """From now on only shard's part of each limit (the pool was made whole: the other processes start). Each
        host's bucket stays as full as it was, of its part; the levels of those not full are returned, for the
        others to start theirs no fuller (fill): together they hold the tokens this pool held, no more."""
        now = self._clock()
        levels = []
        self._default = shard.limits(self._default)
        self._overrides = {host: shard.limits(lim) for host, lim in self._overrides.items()}
        for host, h in self._hosts.items():
            whole = h.limits
            h.limits = shard.limits(whole)
            if whole.rate is not None:
                level = min(1.0, (h.tokens + (now - h.refilled) * whole.rate) / whole.burst)
                h.tokens, h.refilled = level * h.limits.burst, now
                if level < 1.0:
                    levels.append((host, level))
        return levels

    def fill(self, levels: Iterable[Sequence[Any]]) -> None:
        """The levels of the first process's buckets as this one joined (divide: host, level pairs): this one's
        buckets of those hosts start no fuller, so the two never send more than a burst between them."""
        now = self._clock()
        for host, level in levels:
            h = self._host(host)
            if h.limits.rate is not None:
                h.tokens = min(h.tokens + (now - h.refilled) * h.limits.rate, level * h.limits.burst)
                h.refilled = now

    def within_limits(self) -> bool:
        """Whether no host has more requests in flight here than its concurrency allows now."""
        return all(h.active <= h.limits.concurrency for h in self._hosts.values())


class ShardState(MemoryState):
    """The crawl state of one shard: it queues only the URLs of its shard and remembers the depth of the others,
    so that a redirect to one of them is known (its result comes from the process that checks it: no second
    request) and the report gives it the same depth as a one-process run would. In the process that reads the
    inputs, every link found goes on to the other processes too (`forward`)."""

    def __init__(
        self,
        shard: Shard,
        limits: Limits,
        on_host_ready: Callable[[str], None],
        forward: Callable[[list[Found]], None] | None = None,
        split: bool = True,
    ) -> None:
        self._own_refetched = 0
        self.others_refetched = 0  # counted by the other processes (told at their end)
        super().__init__(limits, on_host_ready)
        self._shard = shard
        self._forward = forward
        self._elsewhere: dict[str, int] = {}  # key -> depth, for URLs another process checks
        # whether URLs go by shard: False in the first process of a run whose others join once it is busy
        # (--jobs unset): until then it keeps (and forwards) nothing but its own
        self.split = split

    @property
    def refetched(self) -> int:  # (MemoryState counts its own with `self.refetched += 1`: the setter keeps them)
        return self._own_refetched + self.others_refetched

    @refetched.setter
    def refetched(self, n: int) -> None:
        self._own_refetched = n - self.others_refetched

    @property
    def own_refetched(self) -> int:
        return self._own_refetched

    async def add(
        self, found: Iterable[Found], parent: str | None = None, hop: int = 1, known: Iterable[str] = ()
    ) -> list[Claim]:
        if not self.split:
            return await super().add(found, parent, hop, known)
        owns, elsewhere, here, mine = self._shard.owns, self._elsewhere, self._records, []
        if self._forward is not None:
            found = list(found)
            if found:
                self._forward(found)
        for f in found:  # its shard's, but a URL another process took before the split; and whatever it holds
            if f.key in here or (f.key not in elsewhere and owns(f.key)):
                mine.append(f)
            else:
                depth = elsewhere.get(f.key)
                if depth is None or f.depth < depth:
                    elsewhere[f.key] = f.depth
        return await super().add(mine, parent, hop, known)

    def hand_over(self) -> list[Found]:
        """The URLs queued here and never fetched that another process's shard owns, taken out of this state, held
        elsewhere from now on, for the others to check: handed over as the others join a run this process began
        alone, so that the URLs read by then go by shard as those read later do (each process's share of the URLs
        to its share of the limits). Those fetched, in flight, or queued again for a raised plan stay here."""
        given = self.give_away_unless(self._shard.owns)
        for f in given:
            self._elsewhere[f.key] = f.depth
        return given

    def held(self) -> list[tuple[str, int]]:
        """The key and depth of every URL this process holds (told to the others when they join)."""
        return [(key, r.depth) for key, r in self._records.items()]

    def held_elsewhere(self, held: Iterable[Sequence[Any]]) -> None:
        """URLs another process holds (its key, depth pairs): never fetched here, whatever their shard."""
        elsewhere, here = self._elsewhere, self._records
        for key, depth in held:
            if key not in here and (key not in elsewhere or depth < elsewhere[key]):
                elsewhere[key] = depth

    def give_back(self, least: int) -> list[Found]:
        """The first process's share of the URLs queued here and never fetched, asked for once it has all but run
        out of its own (a share, not half: a run whose limits bind still ends in step, and one bound by CPU
        comes back for more); none when fewer than least would go (not worth the line: this process ends
        soon). From now on they are held elsewhere."""
        part = Shard(0, self._shard.count).share
        if self.queued * part < least:
            return []
        given = self.give_away(part)
        for f in given:
            self._elsewhere[f.key] = f.depth
        return given

    async def take_back(self, found: list[Found]) -> list[Claim]:
        """URLs another process gave back (give_back): this process's own from now on, queued here."""
        for f in found:
            self._elsewhere.pop(f.key, None)
        return await super().add(found)

    async def adopt(self, found: Found, parent: str | None = None) -> bool:
        if found.key in self._elsewhere:  # checked by its own process: known here, never fetched here
            return False
        return await super().adopt(found, parent)

    def depth(self, key: str) -> int | None:
        depth = super().depth(key)
        return self._elsewhere.get(key) if depth is None else depth
