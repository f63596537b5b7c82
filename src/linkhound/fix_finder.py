"""The end of a run with --suggest-fixes or --suggest-https: the links to fix, put on the Report. The https://
twins are asked here, after the run's own requests, through the run's client and host limits."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Sequence

from .checker import HttpChecker
from .host_pool import HostPool
from .status import Status
from .suggestions import HTTPS, Suggestion, https_twin, moved, moved_to, place, same_answer
from .summary import Report
from .types import Result
from .urls import host_of

_POLL = 0.05  # seconds between two tries for a host slot that is taken


async def with_suggestions(report: Report, fixes: bool, https: bool, checker: HttpChecker, pool: HostPool,
                           concurrency: int) -> Report:
    found = moved(report.results) if fixes else []
    if https:
        found += await _https_twins(report.results, checker, pool, concurrency, moved_said=fixes)
    return dataclasses.replace(report, suggestions=tuple(sorted(found, key=lambda s: (s.url, s.kind))))


async def _https_twins(results: Sequence[Result], checker: HttpChecker, pool: HostPool,
                       concurrency: int, moved_said: bool) -> list[Suggestion]:
    """One request per fine http:// link, but none for a link that moved for good: with --suggest-fixes, its
    own suggestion says more; to its twin, the redirect already said it."""
    asked, known = [], []
    for r in results:
        if r.status is not Status.OK or "#" in r.url or (twin := https_twin(r.url)) is None:
            continue
        end = moved_to(r)
        if end is not None and moved_said:
            continue
        if end is not None and place(end[0]) == place(twin):
            reason = f"moved permanently to https:// ({', '.join(map(str, end[1]))})"
            known.append(Suggestion(r.url, twin, HTTPS, reason, tuple(r.references)))
        else:
            asked.append((r, twin))
    gate = asyncio.Semaphore(concurrency)

    async def ask(result: Result, twin: str) -> Suggestion | None:
        async with gate:
            host = host_of(twin)
            while (wait := pool.try_acquire(host)) > 0:
                await asyncio.sleep(_POLL if math.isinf(wait) else wait)
            try:
                outcome = await checker.check(twin, "HEAD", lambda ctype: False, host)
            finally:
                pool.release(host)
        answer = Result(twin, outcome.status, outcome.code, outcome.reason, outcome.redirects)
        if not same_answer(result, answer):
            return None
        return Suggestion(result.url, twin, HTTPS, "https:// answers the same", tuple(result.references))

    answers = await asyncio.gather(*(ask(r, twin) for r, twin in asked))
    return known + [s for s in answers if s is not None]
