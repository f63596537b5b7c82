"""Crawler-trap guard: URL families that keep growing (calendars, session ids, filters) are checked, not crawled.

A family is every URL that shares an origin and the path segments before one position: `/pcal/1/`, `/pcal/2/`, …
are the family `/pcal/*/`, and `?page=1`, `?page=2`, … of one path are that path's query family. A family may
grow to a limit of distinct values; past it, new members are reported as "trap suspected" and only checked.
A file name at the end of a path (`p3.html`) is not counted: a folder of many pages is an ordinary site.
"""

from __future__ import annotations

MAX_QUERY_VARIANTS = 500  # crawled query strings per path
MAX_PATH_VARIANTS = 3000  # crawled values of one path segment under the same prefix


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
                above = "/".join(segments[:i]) + ("/" if i else "")
                family = origin + "/" + above + "*" + "/" * (i < len(segments) - 1)
                if not self._fits(family, segments[i], self._max_path):
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
