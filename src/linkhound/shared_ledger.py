"""A ledger that several processes write together: each process's Ledger also logs what it is told, and the
report replays every process's log into one Ledger (distributed mode)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .fragments import Anchors
from .ledger import Ledger, MemoryLedger, PlainTargets
from .redis_state import Outbox
from .status import Status
from .types import Event, Page, Reference, Result


class SharedLedger(MemoryLedger):
    """A Ledger that puts an entry in the outbox for each reference and result it records. With
    `log_inputs` False, what the inputs say is left out: another process logs it (every process of a job
    reads the inputs, to know the crawl's scope)."""

    def __init__(self, outbox: Outbox, emit: Callable[[Result | Page], None] | None = None,
                 log_inputs: bool = True) -> None:
        super().__init__(emit)
        self._outbox = outbox
        self._log_inputs = log_inputs

    def plain_targets(self) -> PlainTargets | None:
        return None  # every reference is logged for the job

    def refer(self, key: str, url: str, ref: Reference, fragment: str | None = None) -> None:
        if self._log_inputs or _from_a_page(ref):
            self._outbox.put(("r", key, url, tuple(ref), fragment))
        super().refer(key, url, ref, fragment)

    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        if self.get(key) is None:  # a URL another process found, fetched here: made as adopt makes it
            super().adopt(key, result.url, result, anchors)  # (which comes back here with the target made)
            return
        super().checked(key, result, anchors)
        target = self.get(key)
        assert target is not None
        if target.anchors is None and target.load_anchors is not None:  # a local file: read now, logged with it
            target.anchors, target.load_anchors = target.load_anchors(), None
        a = target.anchors
        self._outbox.put(("c", key, target.url, _result(result),
                          None if a is None else (sorted(a.names), a.case_insensitive)))

    def same_as(self, key: str, end: str, redirect: Result) -> None:
        """Logged: end's result may come from another process, and only the report's replay joins the two."""
        self._outbox.put(("s", key, end, _result(redirect)))
        super().same_as(key, end, redirect)

    def page(self, event: Event) -> None:
        """An engine event: pages go to the log (results are in it already)."""
        if isinstance(event, Page):
            self._outbox.put(("p", event.url, event.links, event.followed))


def replay(log: Iterable[bytes | str], ledger: Ledger, pages: list[tuple[str, int, bool]],
           seen: set[str] | None = None) -> None:
    """Tell ledger every reference and result of the log, and add each page logged to pages. A reference or page
    of the inputs (kind in capitals) that `seen` holds already was logged again by a resumed job: left out."""
    seen = set() if seen is None else seen
    for element in log:
        for e in orjson.loads(element):
            if e[0] in _FROM_INPUTS:
                again = orjson.dumps(e).decode()
                if again in seen:
                    continue
                seen.add(again)
            _replay(e, ledger, pages)


_FROM_INPUTS = frozenset("RP")


def _replay(e: list[Any], ledger: Ledger, pages: list[tuple[str, int, bool]]) -> None:
    kind = e[0].lower()
    if kind == "r":
        ledger.refer(e[1], e[2], Reference(*e[3]), e[4])
    elif kind == "c":
        anchors = None if e[4] is None else Anchors(frozenset(e[4][0]), e[4][1])
        ledger.adopt(e[1], e[2], _unresult(e[3]), anchors)  # adopt: made if no reference came yet
    elif kind == "s":
        ledger.same_as(e[1], e[2], _unresult(e[3]))
    elif kind == "p":
        pages.append((e[1], e[2], e[3]))


def _from_a_page(ref: Reference) -> bool:
    return ref.source != "(input)"


def _result(r: Result) -> tuple[object, ...]:
    return (r.url, r.status.value, r.code, r.reason, r.redirects, r.elapsed, r.depth, r.content_type, r.redirect_codes)


def _unresult(f: list[Any]) -> Result:
    url, status, code, reason, redirects, elapsed, depth, content_type, codes = f
    return Result(url, Status(status), code, reason, tuple(redirects), elapsed, depth, content_type,
                  redirect_codes=tuple(codes))
