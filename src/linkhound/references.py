"""Every reference of a run, kept as columns of integers: a crawl keeps one per link occurrence (2.6 million in a
100,000-page crawl), and a Reference tuple each would cost about 100 bytes where four array cells cost 16.

A reference is its id in the store: its source (a page URL or file, stored once), line, column, the link as
written (each distinct text stored once) and its element and attribute (a handful of pairs). Reports read
them through Refs, a sequence that makes each Reference only when it is read.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, overload

from .types import RawLink, Reference

_CHUNK = 500  # references read from the store at a time
_MAX = 0xFFFFFFFF  # a column past 4 billion is kept as this (an 'I' cell holds 32 bits)
if TYPE_CHECKING:
    Ids = array[int]  # of "I": reference ids
else:
    Ids = array


def ids(first: Iterable[int] = ()) -> Ids:
    return array("I", first)


class RefStore:
    __slots__ = ("_sources", "_last", "_texts", "_text_id", "_pairs", "_pair_id", "_src", "_line",
                 "_col", "_text", "_pair")

    def __init__(self) -> None:
        # each source once per run of references from it: a page's (or a file's) references come in a row, so a
        # source is nearly always kept once, without a dict from every page URL to its id
        self._sources: list[str] = []
        self._last: tuple[str, int] = ("", -1)  # the source of the last reference
        self._texts: list[str] = []  # each link as written, once
        self._text_id: dict[str, int] = {}
        self._pairs: list[tuple[str, str]] = []  # (element, attribute): a handful
        self._pair_id: dict[tuple[str, str], int] = {}
        self._src, self._line, self._col = array("I"), array("I"), array("I")
        self._text, self._pair = array("I"), array("I")

    def __len__(self) -> int:
        return len(self._src)

    def add(self, source: str, line: int, column: int, element: str, attribute: str, text: str) -> int:
        last, sid = self._last
        if source is not last and source != last:
            sid = len(self._sources)
            self._sources.append(source)
            self._last = (source, sid)
        tid = self._text_id.get(text)
        if tid is None:
            tid = self._text_id[text] = len(self._texts)
            self._texts.append(text)
        pid = self._pair_id.get((element, attribute))
        if pid is None:
            pid = self._pair_id[(element, attribute)] = len(self._pairs)
            self._pairs.append((element, attribute))
        n = len(self._src)
        self._src.append(sid)
        self._line.append(line if 0 <= line <= _MAX else _MAX)
        self._col.append(column if 0 <= column <= _MAX else _MAX)
        self._text.append(tid)
        self._pair.append(pid)
        return n

    def add_raw(self, source: str, raw: RawLink) -> int:
        return self.add(source, raw.line, raw.column, raw.element, raw.attribute, raw.text)

    def add_ref(self, ref: Reference) -> int:
        return self.add(ref.source, ref.line, ref.column, ref.element, ref.attribute, ref.text)

    def get(self, i: int) -> Reference:
        element, attribute = self._pairs[self._pair[i]]
        return Reference(self._sources[self._src[i]], self._line[i], self._col[i], element, attribute,
                         self._texts[self._text[i]])

    def many(self, ref_ids: Sequence[int]) -> list[Reference]:
        return [self.get(i) for i in ref_ids]

    def view(self, refs: Ids | int) -> Refs:
        """The references refs names: an array of ids, or one id."""
        if isinstance(refs, int):
            one = ids()
            one.append(refs)
            return Refs(self, one, 1)
        return Refs(self, refs, len(refs))


class Refs(Sequence[Reference]):
    """Some references of a store, read as Reference tuples when asked for (equal to the tuple of them). Holds
    the ids it was made with: references added to the same target later are not in it."""

    __slots__ = ("_store", "_ids", "_n")

    def __init__(self, store: RefStore, ref_ids: Ids, n: int) -> None:
        self._store = store
        self._ids = ref_ids
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Reference: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Reference, ...]: ...
    def __getitem__(self, i: int | slice) -> Reference | tuple[Reference, ...]:
        if isinstance(i, slice):
            return tuple(self)[i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._store.get(self._ids[i])

    def __iter__(self) -> Iterator[Reference]:
        many, ref_ids = self._store.many, self._ids
        for start in range(0, self._n, _CHUNK):
            yield from many(ref_ids[start : min(start + _CHUNK, self._n)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Refs, tuple)):
            return len(other) == self._n and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[type[tuple[Reference, ...]], tuple[tuple[Reference, ...]]]:
        return tuple, (tuple(self),)  # pickled (sent to another process) as the plain tuple
