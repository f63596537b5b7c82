"""Every reference of a run, kept as columns of integers: a crawl keeps one per link occurrence (2.6 million in a
100,000-page crawl), and a Reference tuple each would cost about 100 bytes where four array cells cost 16.

A reference is its id in the store: its source (a page URL or file, stored once), line, column, the link as
written and its element and attribute (a handful of pairs). Reports read them through Refs, a sequence that
makes each Reference only when it is read.

The link as written is nearly always the end of its target's URL (`/p/3` of `http://h/p/3`), maybe with a
#fragment: the target's URL (the base, which the caller keeps anyway and hands back when reading) then holds
it, and the store keeps only how long that end is and the fragment part, each distinct fragment part once. A
crawl has hundreds of thousands of distinct link texts; stored as strings in a table, they were its largest
single cost. Other texts are kept in the table, each once.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, overload

from .types import RawLink, Reference

_CHUNK = 500  # references read from the store at a time
_MAX = 0xFFFFFFFF  # a column past 4 billion is kept as this (an 'I' cell holds 32 bits)
# a text cell: a text table index, or (with _TAIL_OF set) the end of the base, _END_BITS for its length, and above
# them the text table index of what follows it ("" or a "#fragment")
_TAIL_OF = 0x80000000
_END_BITS = 12
_END_MAX = (1 << _END_BITS) - 1
_TAIL_MAX = (_TAIL_OF >> _END_BITS) - 1
if TYPE_CHECKING:
    Ids = array[int]  # of "I": reference ids
else:
    Ids = array
Row = tuple[str, int, int, str, str, str]  # a Reference's fields as a plain tuple (which sorts the same)
_ELEMENT, _ATTRIBUTE = itemgetter(0), itemgetter(1)


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
        self._texts: list[str] = [""]  # each text (or text's fragment part) kept whole, once; "" first
        self._text_id: dict[str, int] = {"": 0}
        self._pairs: list[tuple[str, str]] = []  # (element, attribute): a handful
        self._pair_id: dict[tuple[str, str], int] = {}
        self._src, self._line, self._col = array("I"), array("I"), array("I")
        self._text, self._pair = array("I"), array("I")

    def __len__(self) -> int:
        return len(self._src)

    def add(self, source: str, line: int, column: int, element: str, attribute: str, text: str, base: str = "") -> int:
        """A reference to a target whose URL is base (the text is read back with the same base)."""
        return self.add_raw(source, (text, element, attribute, line, column), base)

    def add_raw(self, source: str, link: RawLink | tuple[str, str, str, int, int], base: str = "") -> int:
        """add() of a link as found (or a tuple of its first five fields): the sorter's call for each link of a
        crawl, made without a frame more."""
        text, element, attribute, line, column = link[:5]
        last, sid = self._last
        if source is not last and source != last:
            sid = len(self._sources)
            self._sources.append(source)
            self._last = (source, sid)
        at = text.find("#")
        if at < 0 and len(text) <= _END_MAX and base.endswith(text):
            tid = _TAIL_OF | len(text)  # followed by text 0, ""
        elif 0 <= at <= _END_MAX and base.endswith(text[:at]) and (tail := self._text_index(text[at:])) <= _TAIL_MAX:
            tid = _TAIL_OF | tail << _END_BITS | at
        else:
            tid = self._text_index(text)
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

    def _text_index(self, text: str) -> int:
        tid = self._text_id.get(text)
        if tid is None:
            tid = self._text_id[text] = len(self._texts)
            self._texts.append(text)
        return tid

    def add_ref(self, ref: Reference, base: str = "") -> int:
        return self.add_raw(ref.source, (ref.text, ref.element, ref.attribute, ref.line, ref.column), base)

    def get(self, i: int, base: str) -> Reference:
        """Reference i, added with base."""
        element, attribute = self._pairs[self._pair[i]]
        return Reference(self._sources[self._src[i]], self._line[i], self._col[i], element, attribute,
                         self._written(self._text[i], base))

    def _written(self, t: int, base: str) -> str:
        """The link as written, from its text cell."""
        if t & _TAIL_OF:
            return base[len(base) - (t & _END_MAX) :] + self._texts[(t ^ _TAIL_OF) >> _END_BITS]
        return self._texts[t]

    def rows(self, ref_ids: Sequence[int], base: str) -> list[Row]:
        """The references ref_ids names, as plain tuples in Reference order (by source, line, column, ...). Each
        column is gathered by loops in C (itemgetter, map, zip) and each distinct text made once: about a fifth
        of what many() and a sort take a reference, and a report reads every one (half a million for 10,000
        pages)."""
        if len(ref_ids) < 2:
            return [self.get(i, base) for i in ref_ids]  # (itemgetter of one id gives no tuple)
        pick = itemgetter(*ref_ids)
        cells: tuple[int, ...] = pick(self._text)
        written = {t: self._written(t, base) for t in set(cells)}
        pairs = tuple(map(self._pairs.__getitem__, pick(self._pair)))
        rows = list(zip(map(self._sources.__getitem__, pick(self._src)), pick(self._line), pick(self._col),
                        map(_ELEMENT, pairs), map(_ATTRIBUTE, pairs), map(written.__getitem__, cells), strict=True))
        rows.sort()
        return rows

    def sources(self, ref_ids: Sequence[int]) -> set[str]:
        """The sources of the references ref_ids names (each once), gathered in C."""
        if len(ref_ids) < 2:
            return {self._sources[self._src[i]] for i in ref_ids}
        return set(map(self._sources.__getitem__, itemgetter(*ref_ids)(self._src)))

    def many(self, ref_ids: Sequence[int], base: str) -> list[Reference]:
        """get() of each, in one loop (a report reads every reference of a crawl: half a million for 10,000
        pages), each Reference made without its Python-level __new__."""
        sources, src, lines, cols = self._sources, self._src, self._line, self._col
        pairs, pair, texts, text, new, cut = self._pairs, self._pair, self._texts, self._text, tuple.__new__, len(base)
        out = []
        for i in ref_ids:
            t = text[i]
            written = texts[t] if not t & _TAIL_OF else base[cut - (t & _END_MAX):] + texts[(t ^ _TAIL_OF) >> _END_BITS]
            out.append(new(Reference, (sources[src[i]], lines[i], cols[i], *pairs[pair[i]], written)))
        return out

    def view(self, refs: Ids | int, base: str) -> Refs:
        """The references refs names (an array of ids, or one id), all added with base."""
        if isinstance(refs, int):
            one = ids()
            one.append(refs)
            return Refs(self, one, 1, base)
        return Refs(self, refs, len(refs), base)


class RefSequence(Sequence[Reference]):
    """References read when gone through (equal to the tuple of them, pickled as it); indexing goes through
    them unless a subclass knows better."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> Reference: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Reference, ...]: ...
    def __getitem__(self, i: int | slice) -> Reference | tuple[Reference, ...]:
        return tuple(self)[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RefSequence, tuple)):
            return len(other) == len(self) and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[type[tuple[Reference, ...]], tuple[tuple[Reference, ...]]]:
        return tuple, (tuple(self),)  # pickled (sent to another process) as the plain tuple


class Refs(RefSequence):
    """Some references of a store, read as Reference tuples when asked for (equal to the tuple of them). Holds
    the ids it was made with: references added to the same target later are not in it."""

    __slots__ = ("_store", "_ids", "_n", "_base")

    def __init__(self, store: RefStore, ref_ids: Ids, n: int, base: str) -> None:
        self._store = store
        self._ids = ref_ids
        self._n = n
        self._base = base

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
        return self._store.get(self._ids[i], self._base)

    def __iter__(self) -> Iterator[Reference]:
        many, ref_ids, base = self._store.many, self._ids, self._base
        for start in range(0, self._n, _CHUNK):
            yield from many(ref_ids[start : min(start + _CHUNK, self._n)], base)

    def rows(self) -> list[Row]:
        """Every one as a plain tuple, sorted: RefStore.rows()."""
        return self._store.rows(self._ids[: self._n], self._base)

    def sources(self) -> set[str]:
        """The pages and files that hold them: RefStore.sources()."""
        return self._store.sources(self._ids[: self._n])

    def in_order(self) -> list[Reference]:
        """Every one, sorted: the same list as sorted(self), in less time."""
        return list(map(tuple.__new__, repeat(Reference), self.rows()))
