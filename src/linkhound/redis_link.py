"""The connection of a distributed crawl to Redis: which client a URL asks for, and patience while Redis is away.

`redis://` and `rediss://` URLs name one server (or a replica set's primary); `redis+cluster://host:port` and
`rediss+cluster://` name any node of a Redis Cluster, which is then used through redis-py's RedisCluster. Every
key of a job carries the job's hash tag, so a job lives in one slot of the cluster whichever node holds it.

Once Redis has answered, a step that finds it away (refused, reset, timed out, loading its data after a
restart) is tried again, with a growing pause, until Redis answers or `timeout` seconds have passed since the
first failure: then the step fails with RedisAway, one line, and the process stops. (Before Redis first
answered, a failure is said at once: a wrong URL is not waited for.) What a process was doing waits meanwhile:
no link is checked again or reported broken because Redis was away. Each outage waited out is a warning of
the process's report (`Patience.warnings`), and is said as it starts and ends (`say`: on stderr), since a
process that waits for Redis shows nothing else meanwhile.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from .exceptions import LinkhoundError, UsageError

if TYPE_CHECKING:
    from redis.asyncio import Redis

T = TypeVar("T")

TIMEOUT = 60.0  # seconds Redis may stay away before a process gives up (--redis-timeout)
# seconds a claim may stay in flight without being renewed before others may take it (--lease): here, not in
# redis_state, so that the command line's default costs no import of the state's modules
LEASE = 60.0
_FIRST_PAUSE = 0.05  # seconds before the first try again; doubled each time, up to _LONGEST_PAUSE
_LONGEST_PAUSE = 1.0
_CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


class RedisAway(LinkhoundError):
    """Redis did not answer for longer than the process waits."""


class Patience:
    """Tries a Redis step again while Redis is away, up to `timeout` seconds. `failed` keeps the error that
    ended the wait, so the process can stop (every later step fails at once); `warnings` says each outage
    waited out, for the report."""

    def __init__(self, url: str, timeout: float = TIMEOUT, say: Callable[[str], None] | None = None) -> None:
        self.url = url
        self._say = say if say is not None else _to_stderr
        self.timeout = timeout
        self.failed: RedisAway | None = None
        self.warnings: list[str] = []
        self._away_since: float | None = None  # the first failure of the current outage
        self._why = ""  # what that failure said
        self._reached = False  # Redis answered once: from then on, a failure is an outage, waited out

    async def __call__(self, step: Callable[[], Awaitable[T]]) -> T:
        from redis.exceptions import ConnectionError as Refused
        from redis.exceptions import RedisClusterException as NoCluster
        from redis.exceptions import TimeoutError as Slow

        pause = _FIRST_PAUSE
        while True:
            if self.failed is not None:
                raise self.failed
            try:
                answer = await step()
            except (Refused, Slow, NoCluster) as e:  # BusyLoadingError (a restart loading data) is a ConnectionError;
                # NoCluster: no node of a redis+cluster:// URL answered as one (down, or a Redis not in cluster mode)
                if not self._reached:  # a wrong URL, or no Redis there: said at once
                    self.failed = RedisAway(f"Redis at {self.url}: {_first_line(e)}")
                    raise self.failed from None
                now = time.monotonic()
                if self._away_since is None:
                    self._away_since = now
                    self._why = _first_line(e)
                    self._say(f"Redis at {self.url} is away ({self._why}): waiting up to {self.timeout:g} s")
                if now - self._away_since >= self.timeout:
                    self.failed = RedisAway(
                        f"Redis at {self.url} was away for {self.timeout:g} s (--redis-timeout): {_first_line(e)}; "
                        "the job is kept there: run the same command again to resume it")
                    raise self.failed from None
                await asyncio.sleep(pause)
                pause = min(pause * 2, _LONGEST_PAUSE)
                continue
            self._reached = True
            if self._away_since is not None:
                away = time.monotonic() - self._away_since
                self._away_since = None
                self._say(f"Redis at {self.url} is back")
                self.warnings.append(f"Redis at {self.url} was away for {away:.1f} s ({self._why}); the steps that "
                                     "failed meanwhile were made again once it was back")
            return answer


def _to_stderr(text: str) -> None:
    print(f"linkhound: {text}", file=sys.stderr)


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def connect(url: str) -> Redis:
    """A client for url (it decodes answers to str); a `redis+cluster://` URL gives a RedisCluster client."""
    try:
        import redis.asyncio
    except ImportError:
        raise UsageError("--redis needs the redis package: pip install 'linkhound[redis]'") from None
    scheme, sep, rest = url.partition("://")
    try:
        if sep and scheme in _CLUSTER_SCHEMES:
            from redis.asyncio.cluster import RedisCluster

            cluster: Redis = RedisCluster.from_url(  # type: ignore[assignment]  # typed apart, used alike
                f"{_CLUSTER_SCHEMES[scheme]}://{rest}", decode_responses=True)
            return cluster
        return redis.asyncio.from_url(url, decode_responses=True)
    except ValueError as e:
        raise UsageError(f"--redis {url}: {e}") from None
