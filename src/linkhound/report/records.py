"""Plain-data records of summaries, results and pages, and JSON text (orjson when it is installed)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Protocol

from ..references import Row
from ..status import Status
from ..summary import Summary
from ..types import Page, Reference, Result
from .certificates import certificate_record
from .common import sorted_rows

SCHEMA_VERSION = 2  # of docs/report-schema.json; bump on any change a consumer could notice

Record = dict[str, Any]


def summary_record(summary: Summary) -> Record:
    return {
        "success": summary.success,
        "total": summary.total,
        "unique": summary.unique,
        "failed": summary.failed,
        "redirected": summary.redirects,
        "pages": summary.pages,
        "elapsed": round(summary.elapsed, 3),
        "interrupted": summary.interrupted,
        "caps": list(summary.caps),
        "by_status": {s.value: summary.count(s) for s in Status},
        "warnings": list(summary.warnings),
        # --tls-expiry: every HTTPS host's certificate; null when certificates were not checked
        "certificates": None if summary.certificates is None else [
            certificate_record(c) for c in summary.certificates
        ],
    } | ({} if summary.unchanged is None else {"unchanged": summary.unchanged})


def reference_record(ref: Reference) -> Record:
    return {
        "source": ref.source,
        "line": ref.line,
        "column": ref.column,
        "element": ref.element,
        "attribute": ref.attribute,
        "text": ref.text,
    }


def result_record(result: Result) -> Record:
    refs = result.references  # most often one: nothing to sort
    return {
        "url": result.url,
        "status": result.status._value_,  # .value, without the enum property's cost (once per URL)
        "code": result.code,
        "reason": result.reason,
        "redirects": list(result.redirects),
        "duration": round(result.elapsed, 3),
        "depth": result.depth,
        "content_type": result.content_type,
        "cached": result.cached,
        "references": _reference_records(refs),
    }


def reference_records(refs: Sequence[Reference | Row]) -> list[Record]:
    """reference_record of each, in order: spelled out in one comprehension, as a crawl's report makes one per
    link occurrence (half a million for 10,000 pages)."""
    return [
        {"source": source, "line": line, "column": column, "element": element, "attribute": attribute, "text": text}
        for source, line, column, element, attribute, text in refs
    ]


def _reference_records(refs: Sequence[Reference]) -> list[Record]:
    n = len(refs)
    if n == 1:  # the most common by far: read as refs[0], not through an iterator over the store
        return [reference_record(refs[0])]
    return reference_records(sorted_rows(refs)) if n else []


def page_record(page: Page) -> Record:
    return {"url": page.url, "depth": page.depth, "links": page.links, "followed": page.followed}


@cache
def _frame(depth: int) -> tuple[int, int]:
    """How many characters the wrapping of elements_text(items, depth) adds before and after the elements."""
    text = stdlib_dumps(_wrapped([0], depth), pretty=True)
    return text.index("[") + 1, len(text) - text.rindex("0") - 1


def _wrapped(items: list[Any], depth: int) -> object:
    wrapped: object = items
    for _ in range(depth):
        wrapped = {"": wrapped}
    return wrapped


def stdlib_elements_text(items: list[Any], depth: int) -> str:
    head, tail = _frame(depth)
    text = stdlib_dumps(_wrapped(items, depth), pretty=True)
    return text[head : len(text) - tail]


def stdlib_dumps(obj: object, *, pretty: bool = False) -> str:
    import json  # here: a run that writes its JSON with orjson never needs it

    if pretty:
        text = json.dumps(obj, ensure_ascii=False, indent=2)
    else:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if not text.isascii() and _LONE_SURROGATE.search(text):
        return stdlib_dumps(_without_surrogates(obj), pretty=pretty)
    return _escape_controls(text) if not text.isascii() or "\x7f" in text else text


# A file name's bytes that are not UTF-8 reach Python as lone surrogates (U+DC80-U+DCFF), which UTF-8 JSON
# text cannot hold: such a string is written with them as \udcXX text, as the text formats print it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(obj: Any) -> Any:
    if isinstance(obj, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", obj)
    if isinstance(obj, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_without_surrogates(v) for v in obj]
    return obj


# JSON encoders escape C0 controls but write DEL and C1 (U+0080-U+009F) raw, and some terminals act on C1
# when the file is shown. Outside strings JSON text has none of them, so \u escapes keep the data the same.
_DEL_C1 = re.compile("[\x7f-\x9f]")


def _escape_controls(text: str) -> str:
    return _DEL_C1.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def dumps(obj: object, *, pretty: bool = False) -> str:
    """obj as JSON text: orjson's where it is installed, else the standard library's (the same text)."""
    return _encoders()[0](obj, pretty=pretty)


def elements_text(items: list[Any], depth: int) -> str:
    """The elements of items as dumps(pretty=True) writes them nested depth levels deep, without the brackets."""
    return _encoders()[1](items, depth)


class _Dumps(Protocol):
    def __call__(self, obj: object, *, pretty: bool = False) -> str: ...


@cache
def _encoders() -> tuple[_Dumps, Callable[[list[Any], int], str]]:
    """Chosen at the first use: orjson (and the datetime and uuid modules it loads, ~10 ms) is not loaded
    before a run's first requests."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is optional; both give the same text
        return stdlib_dumps, stdlib_elements_text

    def orjson_dumps(obj: object, *, pretty: bool = False) -> str:
        try:
            data = orjson.dumps(obj, option=orjson.OPT_INDENT_2 if pretty else 0)
        except orjson.JSONEncodeError:  # a lone surrogate (only a string can't be written here)
            data = orjson.dumps(_without_surrogates(obj), option=orjson.OPT_INDENT_2 if pretty else 0)
        # In UTF-8, DEL is the byte 7f and C1 starts with c2 (as U+00A0-U+00BF do): two memchr scans spare
        # the regex almost every time.
        if b"\x7f" in data or b"\xc2" in data:
            return _escape_controls(data.decode())
        return data.decode()

    def orjson_elements_text(items: list[Any], depth: int) -> str:
        head, tail = _frame(depth)
        try:
            data = orjson.dumps(_wrapped(items, depth), option=orjson.OPT_INDENT_2)
        except orjson.JSONEncodeError:
            data = orjson.dumps(_wrapped(_without_surrogates(items), depth), option=orjson.OPT_INDENT_2)
        text = str(memoryview(data)[head : len(data) - tail], "utf-8")  # (decoded straight from the slice)
        return _escape_controls(text) if b"\x7f" in data or b"\xc2" in data else text

    return orjson_dumps, orjson_elements_text
