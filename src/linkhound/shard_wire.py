"""What the processes of a run (`--jobs`) tell each other, one JSON value per line.

To a shard's process (stdin): its settings, pickled behind their length, then each batch of links found, as
Found arrays (it keeps those of its shard; as the others join a run the first process began alone, one is the
URLs it had queued and never fetched); {"k": [[key, depth], ...]}: URLs the first process holds (told when
the others join a run it began alone: never fetched by another, whatever their shard); {"w": [host, until]}:
a host asked another process to wait until then (time.time()); {"a": [[key, result, served, anchors, final,
nofollow], ...]}: redirect ends' answers another process kept (keep them too: no second request of an end);
{"h": key}: a hop another process's redirect is fetching now (a redirect here reaching it waits); {"r": [keys,
way]}: the hops it fetched, and where it went ([redirects, codes, same_as], or null if it failed on the way);
{"g": least}: give back the first process's share of the URLs queued and never fetched (it has run out of its own),
none if fewer than least would go; {"n": 1}: no more links (the first process still answers asks, below, until this
one's end); {"stop": 1}: take no new work. Back (stdout): batches of records, ["c", key, result, anchors] (key
checked), ["s", key, end, result] (key redirects to end, checked on its own: end's result is key's), ["w", host,
until] (a host asked this process to wait), ["a", key, result, served, anchors, final, nofollow] (a redirect end's
answer this process kept: the first process keeps it and tells the others), ["h", key] and ["r", keys, way] (as the
lines above: relayed to the others), ["g", [Found array, ...]] (the URLs given back, the answer to {"g": least}:
the first process checks them), ["q", url] (a redirect here reached url: the first process fetches that hop and
tells where it went, as REACHED), and last ["e", refetched, notes, stats] (the end, with what the process noted for
the report's warnings, a notes.NotesPart, and its requests by host: {host: [requests, successes, rate_limited,
waits, [latency, ...]]})."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from .crawl_state import Found, Plan
from .fetcher import Fetched, Way
from .fragments import Anchors
from .host_pool import HostStats
from .status import Status
from .types import Result

# orjson is imported where a line is made or read (~10 ms to load), or by load() while a process waits: a run
# whose other processes never join (--jobs unset, a list whose answers are slow in coming) sends no line before
# its first requests, and only the end's line after its last answer.
Record = list[Any]
CHECKED, SAME_AS, WAIT, END = "c", "s", "w", "e"
KEPT = "a"  # a redirect end's answer a process kept (a record to the first process; a line it relays to the rest)
HELD = "k"  # what the first process tells the others: URLs held elsewhere, never to be fetched by them
REACHING, REACHED = "h", "r"  # a hop a redirect is fetching now; the hops it fetched, and where it went
GIVE = "g"  # the first process asks for URLs back (its own are done); a shard's answer: those it gives
ASK = "q"  # a hop a redirect reached, for the first process to fetch (one process fetches every hop: no tie)
TOKENS = "t"  # as the others join (--jobs unset): how full the first process's host buckets are, of its part
HEADER_BYTES = 8  # the settings' length, big-endian
STOP_LINE = b'{"stop":1}\n'
LINKS_END_LINE = b'{"n":1}\n'
LINE_LIMIT = 64 * 1024 * 1024  # one batch (a few hundred records) is far below this
_STATUS = {s.value: s for s in Status}


def result_record(r: Result) -> list[Any]:
    """A result without its references (the process that writes the report has them)."""
    return [r.url, r.status.value, r.code, r.reason, r.redirects, r.elapsed, r.depth, r.content_type, r.cached,
            r.redirect_codes]


def result_of(f: list[Any], url: str | None = None) -> Result:
    """The result of a record; url: the same URL as a string kept already (the ledger's: one copy, not two)."""
    status, code, reason, redirects, elapsed, depth, content_type, cached, redirect_codes = f[1:]
    return Result(url or f[0], _STATUS[status], code, reason, tuple(redirects), elapsed, depth, content_type, (),
                  cached, tuple(redirect_codes))


def anchors_record(a: Anchors | None) -> list[Any] | None:
    return None if a is None else [list(a.names), a.case_insensitive]


def anchors_of(f: list[Any] | None) -> Anchors | None:
    return None if f is None else Anchors(frozenset(f[0]), f[1])


def stats_record(stats: dict[str, HostStats]) -> dict[str, list[Any]]:
    return {host: [s.requests, s.successes, s.rate_limited, s.waits, s.latencies.tolist()] for host, s in stats.items()}


def stats_of(f: dict[str, list[Any]]) -> dict[str, HostStats]:
    return {host: HostStats(requests, successes, rate_limited, waits, array("d", latencies))
            for host, (requests, successes, rate_limited, waits, latencies) in f.items()}


def end_record(key: str, end: Fetched) -> list[Any]:
    """A redirect end's answer as one process kept it (Fetcher._keep_end), for the others to keep as well."""
    return [key, result_record(end.result), end.served.value, anchors_record(end.anchors), end.final, end.nofollow]


def end_of(f: Sequence[Any]) -> tuple[str, Fetched]:
    key, result, served, anchors, final, nofollow = f
    return key, Fetched(result_of(result), Plan(served), None, anchors_of(anchors), final, nofollow)


def load() -> None:
    """Load the encoder now, at a time the process has nothing else to do, rather than at its first line (the
    end's, right after the last answer, if the others never joined)."""
    import orjson  # noqa: F401


def encode(batch: list[Record]) -> bytes:
    import orjson
    return orjson.dumps(batch) + b"\n"


def decode(line: bytes) -> list[Record]:
    import orjson
    batch: list[Record] = orjson.loads(line)
    return batch


def encode_found(found: list[Found]) -> bytes:
    import orjson
    return orjson.dumps([tuple(f) for f in found]) + b"\n"


def decode_found(line: bytes) -> list[Found]:
    import orjson
    return found_of(orjson.loads(line))


def found_of(rows: list[list[Any]]) -> list[Found]:
    """Found arrays (a line of links, or the URLs given back) as Found."""
    new = tuple.__new__
    return [new(Found, f) for f in rows]


def encode_wait(host: str, until: float) -> bytes:
    import orjson
    return orjson.dumps({WAIT: [host, until]}) + b"\n"


def encode_held(held: list[tuple[str, int]]) -> bytes:
    import orjson
    return orjson.dumps({HELD: held}) + b"\n"


def way_record(way: Way | None) -> list[Any] | None:
    return None if way is None else [way.redirects, way.codes, way.same_as]


def way_of(f: list[Any] | None) -> Way | None:
    return None if f is None else Way(tuple(f[0]), tuple(f[1]), f[2])


def encode_control(kind: str, value: Any) -> bytes:
    """A line for the other processes: {kind: value} (KEPT: [end_record, ...]; REACHING: key; REACHED: [keys,
    way_record])."""
    import orjson
    return orjson.dumps({kind: value}) + b"\n"


def decode_control(line: bytes) -> dict[str, Any] | None:
    """A wait line ({"w": [host, until]}), a held line ({"k": [[key, depth], ...]}), or what another process
    tells of its redirects ({"a": [end_record, ...]}, {"h": key}, {"r": [keys, way_record]}), the first
    process's bucket levels as the others join ({"t": [[host, level], ...]}); None for a line of links (or the
    stop line)."""
    import orjson
    if not line.startswith(b"{") or line == STOP_LINE:
        return None
    control: dict[str, Any] = orjson.loads(line)
    return control
