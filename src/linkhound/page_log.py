"""The pages a run fetched and parsed, for the report: one entry a page (a crawl has one per URL it crawled), kept
as columns, 21 bytes an entry where a tuple costs about a hundred."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

PageEntry = tuple[str, "str | None", int, bool]  # url, key (None: not a crawled page), links found, followed


class PageLog:
    __slots__ = ("_urls", "_keys", "_links", "_followed")

    def __init__(self) -> None:
        self._urls: list[str] = []
        self._keys: list[str | None] = []
        self._links = array("I")
        self._followed = bytearray()

    def __len__(self) -> int:
        return len(self._urls)

    def append(self, entry: PageEntry) -> None:
        url, key, links, followed = entry
        self._urls.append(url)
        self._keys.append(url if key == url else key)  # one string where they are equal
        self._links.append(min(links, 0xFFFFFFFF))
        self._followed.append(followed)

    def __iter__(self) -> Iterator[PageEntry]:
        for url, key, links, followed in zip(self._urls, self._keys, self._links, self._followed, strict=True):
            yield url, key, links, bool(followed)
