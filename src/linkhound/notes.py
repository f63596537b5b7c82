"""The run's warnings for every report format: robots.txt failures, pages cut at the body cap or not fully
parsed, URLs requested again because a later link needed more of them."""

from __future__ import annotations

from .checker import BODY_CUT
from .fetcher import Fetched

_SHOWN = 10  # pages named per kind of warning; the rest are counted
# What one process of a run (--jobs) noted, for the one that writes the report: caps, warnings of the fetches
# (robots.txt, soft 404s), pages cut at the body cap, pages not fully parsed
NotesPart = tuple[list[str], list[str], list[str], list[str]]


class Notes:
    def __init__(self) -> None:
        self._cut: list[str] = []  # pages cut at --max-body-size
        self._partly: list[str] = []  # pages not fully parsed (nesting or size past the parser's limits)

    def fetched(self, url: str, fetched: Fetched) -> None:
        if fetched.page is None:
            return
        if fetched.result.reason == BODY_CUT:
            self._cut.append(url)
        if fetched.page.warning:  # pathological markup, read tag by tag without a tree
            self._partly.append(f"{url}: {fetched.page.warning}")

    def part(self) -> tuple[list[str], list[str]]:
        """The pages noted here, for the process that writes the report (--jobs)."""
        return self._cut, self._partly

    def merge(self, cut: list[str], partly: list[str]) -> None:
        """Pages another process of the run noted."""
        self._cut += cut
        self._partly += partly

    def warnings(self, robots: list[str], refetched: int) -> tuple[str, ...]:
        out = [*robots, *self._partly[:_SHOWN]]
        if len(self._partly) > _SHOWN:
            out.append(f"… and {len(self._partly) - _SHOWN} more pages not fully parsed")
        if self._cut:
            more = f" (and {len(self._cut) - 3} more)" if len(self._cut) > 3 else ""
            out.append(f"{', '.join(self._cut[:3])}{more}: {BODY_CUT}; links and anchors after it not read")
        if refetched:
            out.append(f"{refetched} URL(s) requested again: first checked as links, later needed as pages to crawl"
                       " or for their anchors")
        return tuple(out)
