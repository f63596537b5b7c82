"""Crawler-trap guard: URL families that keep growing (calendars, session ids, filters) are checked, not crawled.

A family is every URL that shares an origin and the path segments before one position: `/pcal/1/`, `/pcal/2/`, …
are the family `/pcal/*/`, and `?page=1`, `?page=2`, … of one path are that path's query family. A date
spread over several segments (`/cal/2031/05/17/`) is one value, so it is a position of its own too: the dates
are the family `/cal/*/*/*/`, which grows without end while each of its segments tops out (12 months, 31 days,
and a year for every 365 pages). A family may grow to a limit of distinct values; past it, new members are
reported as "trap suspected" and only checked.
A file name at the end of a path (`p3.html`) is not counted: a folder of many pages is an ordinary site.
"""

from __future__ import annotations

import re

MAX_QUERY_VARIANTS = 500  # crawled query strings per path
MAX_PATH_VARIANTS = 3000  # crawled values of one path segment (or of a date in the path) under the same prefix

_NUMBER = re.compile(r"[0-9]+(?:[-_.:][0-9]+)*")  # a segment of numbers: 2031, 05, 2031-05, 12:30
_DIGITS = re.compile(r"[0-9]+")


class TrapGuard:
    def __init__(self, max_path_variants: int = MAX_PATH_VARIANTS, max_query_variants: int = MAX_QUERY_VARIANTS):
        self._max_path = max_path_variants
        self._max_query = max_query_variants
        # the hashes of each family's values, not the values: a crawl's families hold a value per page
        self._families: dict[str, set[int]] = {}
        self.suspected: set[str] = set()  # the patterns of the families cut

    def admit(self, url: str) -> bool:
        """Whether url may be crawled; each URL is admitted or refused for good (ask again: same answer)."""
        head, _, query = url.partition("?")
        head = head.split("#", 1)[0]
        start = head.find("/", head.find("//") + 2) if "//" in head else 0
        if start < 0:
            return True
        origin, path = head[:start], head[start:]
        segments = path.split("/")[1:]
        refused: list[str] = []
        # every position but a last segment that looks like a file name
        last = len(segments) - 1 if segments and "." in segments[-1] else len(segments)
        for i in range(last):
            if segments[i]:
                family = _pattern(origin, segments, i, 1)
                if not self._fits(family, segments[i], self._max_path):
                    refused.append(family)
        for i, n in _date_runs(segments[:last]):
            family = _pattern(origin, segments, i, n)
            if not self._fits(family, "/".join(segments[i:i + n]), self._max_path):
                refused.append(family)
        if query and not self._fits(head + "?*", query, self._max_query):
            refused.append(head + "?*")
        self.suspected.update(refused)
        return not refused

    def close(self) -> None:
        """No more URLs to admit: the families' members go (the patterns of those cut stay)."""
        self._families.clear()

    def _fits(self, family: str, value: str, most: int) -> bool:
        members = self._families.get(family)
        if members is None:
            members = self._families[family] = set()
        h = hash(value)
        if h in members:
            return True
        if len(members) >= most:
            return False
        members.add(h)
        return True


def _pattern(origin: str, segments: list[str], i: int, n: int) -> str:
    """The family of segments i to i+n-1 under the ones before: origin/a/b/*/*/ (the slash if more follows)."""
    return origin + "/" + "/".join(segments[:i] + ["*"] * n) + "/" * (i + n < len(segments))


def _date_runs(segments: list[str]) -> list[tuple[int, int]]:
    """(start, length) of each run of two or more number segments in a row that reads as a date or a time: one
    year (4 digits), its other numbers of 1 or 2 (months, days, hours). Other numbers in a row are left to their
    own positions: a site's content bounds them (a book's chapters and verses, an issue's pages /issues/12345/2/,
    a year's articles /news/2019/12345/), or one of them grows past the limit on its own (ids)."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i, segment in enumerate([*segments, ""]):
        if not _NUMBER.fullmatch(segment):
            if i - start >= 2 and _is_date(segments[start:i]):
                runs.append((start, i - start))
            start = i + 1
    return runs


def _is_date(run: list[str]) -> bool:
    # the year is what grows without end, a page at a time it rises once a year; numbers of 1 or 2 digits top
    # out (months, days, hours), so no other segment grows at all
    sizes = [len(n) for n in _DIGITS.findall("/".join(run))]
    return sizes.count(4) == 1 and all(size <= 2 or size == 4 for size in sizes)
