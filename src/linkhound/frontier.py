"""What to do next: dedup at enqueue, per-host queues in depth order, and the count of unfinished work."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from enum import Enum

from .types import Link
from .urls import host_of


class Added(Enum):
    NEW = "new"  # first time seen: queued
    SEEN = "seen"  # already known at this depth or less
    REQUEUED = "requeued"  # still queued; now at the shorter depth
    SHORTER = "shorter"  # already taken, and this path is shorter: the caller decides what to redo


class Frontier:
    """The in-memory frontier. `add` tests and marks the key in one step, before any request.

    `unfinished` counts links queued or taken and not yet done; the crawl is over exactly when it is 0,
    because a page's children are added before the page is marked done.
    """

    def __init__(self, on_host_ready: Callable[[str], None] = lambda host: None) -> None:
        self._depth: dict[str, int] = {}  # visited set: key -> shortest depth seen
        self._queued: dict[str, Link] = {}  # key -> the live queue entry (older heap entries are stale)
        self._queues: dict[str, list[tuple[int, int, Link]]] = {}
        self._seq = itertools.count()
        self._on_host_ready = on_host_ready
        self.unfinished = 0

    def __len__(self) -> int:
        return len(self._queued)

    def __contains__(self, key: str) -> bool:
        """Whether key was ever added (the visited set)."""
        return key in self._depth

    def add(self, link: Link) -> Added:
        best = self._depth.get(link.key)
        if best is None:
            self._depth[link.key] = link.depth
            self._push(link)
            self.unfinished += 1
            return Added.NEW
        if link.depth >= best:
            return Added.SEEN
        self._depth[link.key] = link.depth
        if link.key in self._queued:
            self._push(link)
            return Added.REQUEUED
        return Added.SHORTER

    def mark(self, key: str, depth: int) -> None:
        """Record key as seen without queueing it (a page fetched as the end of another link's redirect)."""
        self._depth.setdefault(key, depth)

    def readd(self, link: Link) -> None:
        """Queue a link that was already taken once (a page to crawl after all); it counts as new work."""
        self._depth[link.key] = min(link.depth, self._depth.get(link.key, link.depth))
        self._push(link)
        self.unfinished += 1

    def depth(self, key: str) -> int | None:
        return self._depth.get(key)

    def has_work(self, host: str) -> bool:
        return bool(self._queues.get(host))

    def pop(self, host: str) -> Link | None:
        """The shallowest queued link of host, or None when only stale entries were left."""
        queue = self._queues.get(host)
        while queue:
            link = heapq.heappop(queue)[2]
            if self._queued.get(link.key) is link:
                del self._queued[link.key]
                return link
        return None

    def done(self, link: Link) -> None:
        self.unfinished -= 1

    def _push(self, link: Link) -> None:
        host = link.host or host_of(link.url)
        queue = self._queues.get(host)
        if queue is None:
            queue = self._queues[host] = []
        was_empty = not queue
        self._queued[link.key] = link
        heapq.heappush(queue, (link.depth, next(self._seq), link))
        if was_empty:
            self._on_host_ready(host)
