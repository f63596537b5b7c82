"""Where a run keeps what it knows, chosen once from the settings: the crawl state (memory, or SQLite with the
ledger journaled beside it for --state) and the result cache (--cache)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .crawl_state import CrawlState, Limits, StateFactory
from .ledger import Ledger, MemoryLedger
from .settings import Settings
from .types import Event

if TYPE_CHECKING:
    from .cache import ResultCache
    from .persistent_ledger import PersistentLedger


class Storage(NamedTuple):
    state: CrawlState
    ledger: Ledger
    journal: PersistentLedger | None  # --state: the same object as ledger, kept on disk and resumable
    cache: ResultCache | None


def open_storage(
    s: Settings, factory: StateFactory, ready: Callable[[str], None], emit: Callable[[Event], None] | None
) -> Storage:
    limits = Limits(s.max_depth, s.max_pages)
    cache = None
    if s.cache:
        from .cache import CachePolicy, ResultCache  # sqlite3 is loaded only by runs that use it

        cache = ResultCache(s.cache_file, CachePolicy.from_settings(s))
    if s.state is None:
        return Storage(factory(limits, ready), MemoryLedger(emit), None, cache)
    from .persistent_ledger import open_crawl

    state, journal = open_crawl(s.state, limits, ready, emit, fresh=s.restart)
    return Storage(state, journal, journal, cache)
