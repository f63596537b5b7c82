"""Helpers every format shares: status labels, ordering, grouping, the summary line and safe text."""

from __future__ import annotations

import functools
import operator
import os
import re
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import urlsplit

from ..local import file_host, file_url_to_path
from ..references import Refs, Row
from ..status import Status
from ..summary import Summary
from ..types import Reference, Result
from ..version import __version__
from . import ansi

# Human-readable names; machine formats use Status.value ("rate_limited") instead.
LABELS: dict[Status, str] = {
    Status.OK: "ok",
    Status.BROKEN: "broken",
    Status.SOFT_404: "soft-404",
    Status.ERROR: "error",
    Status.TIMEOUT: "timeout",
    Status.RATE_LIMITED: "rate-limited",
    Status.BLOCKED: "blocked",
    Status.EXCLUDED: "excluded",
    Status.UNSUPPORTED: "unsupported",
    Status.SKIPPED: "skipped",
}
# What a problem is called where it is shown alone (a code-scanning alert, a CI annotation).
TITLES: dict[Status, str] = {
    Status.BROKEN: "Broken link",
    Status.SOFT_404: "Soft 404 (a not-found page answered 200)",
    Status.ERROR: "Link error",
    Status.TIMEOUT: "Link timed out",
    Status.RATE_LIMITED: "Link rate-limited",
    Status.BLOCKED: "Link blocked by bot protection",
}
ORDER: dict[Status, int] = {s: i for i, s in enumerate(Status)}
# Statuses only an opt-in check gives (--soft-404): a summary shows their count only when there is one.
OPT_IN = frozenset({Status.SOFT_404})
NO_SOURCE = "(input)"  # the "source" of a link given directly, with no referring file or page
# Referrers a folding format lists per link before "… and N more": a nav link can be on every page.
FOLD = 5

Paint = Callable[[str, Status | None], str]


def plain(text: str, status: Status | None) -> str:
    return text


def is_problem(status: Status) -> bool:
    """Broken results, plus blocked ones: not a failure, but nobody could tell whether the link works."""
    return status.is_broken or status is Status.BLOCKED


_URL_OF = operator.attrgetter("url")  # (a sort key read in C: a tenth less time than a lambda's on 20,000)


def by_url(results: Iterable[Result]) -> list[Result]:
    return sorted(results, key=_URL_OF)


def by_status_then_url(results: Iterable[Result]) -> list[Result]:
    return sorted(results, key=lambda r: (ORDER[r.status], r.url))


def ref_key(ref: Reference) -> tuple[str, int, int, str, str, str]:
    return (ref.source, ref.line, ref.column, ref.element, ref.attribute, ref.text)


def sorted_refs(refs: Iterable[Reference]) -> list[Reference]:
    if isinstance(refs, Refs):  # read from the store: it sorts them faster than a sort of References
        return refs.in_order()
    return sorted(refs)  # a Reference is a tuple in ref_key order


def sorted_rows(refs: Sequence[Reference]) -> Sequence[Row]:
    """A result's references as tuples in ref_key order: plain tuples when the store has them (no Reference
    made), else the References themselves."""
    return refs.rows() if isinstance(refs, Refs) else sorted(refs)


def sources_of(refs: Sequence[Reference]) -> set[str]:
    """The pages and files that hold refs: from the store's columns when it has them (no Reference made)."""
    return refs.sources() if isinstance(refs, Refs) else {ref.source for ref in refs}


def weight(result: Result) -> int:
    """What a result's text costs to make, roughly: its references, and itself."""
    return 1 + len(result.references)


def references_in_memory(results: Iterable[Result]) -> bool:
    """Whether every result's references are held in memory, not read (from a state file, from Redis) as
    they are gone through: only then may a forked child read them (forked.py)."""
    return all(isinstance(r.references, (Refs, tuple)) for r in results)


def referrers(result: Result) -> list[Reference | None]:
    """A result's references in order, or [None] for a link given directly, so every result shows once."""
    return [*sorted_refs(result.references)] or [None]


def folded_refs(result: Result, all_referrers: bool = False) -> tuple[list[Reference], int]:
    """A result's references in order, cut to the first FOLD, and how many were left out. Never hides a
    single one: "… and 1 more" would take the line the referrer itself needs."""
    refs = sorted_refs(result.references)
    if all_referrers or len(refs) <= FOLD + 1:
        return refs, 0
    return refs[:FOLD], len(refs) - FOLD


def more(hidden: int) -> str:
    return f"… and {hidden:,} more"


def by_source(results: Iterable[Result]) -> dict[str, list[tuple[Reference | None, Result]]]:
    """Group (reference, result) pairs by the file or page that holds the link, all in a stable order."""
    groups: dict[str, list[tuple[Reference | None, Result]]] = {}
    for result in results:
        if not result.references:
            groups.setdefault(NO_SOURCE, []).append((None, result))
        for ref in result.references:
            groups.setdefault(ref.source, []).append((ref, result))
    for pairs in groups.values():
        pairs.sort(key=lambda p: (p[0].line, p[0].column, p[1].url) if p[0] else (0, 0, p[1].url))
    return dict(sorted(groups.items()))


def describe(result: Result) -> str:
    """The HTTP code and reason as one phrase: "404 Not Found", "200, no anchor #top", "timed out"."""
    if result.code is None:
        return result.reason or LABELS[result.status]
    if not result.reason:
        return str(result.code)
    sep = " " if result.reason[:1].isupper() else ", "
    return f"{result.code}{sep}{result.reason}"


def where(ref: Reference) -> str:
    """A reference as "path:line:col (a href)"."""
    what = " ".join(p for p in (ref.element, ref.attribute) if p)
    return f"{ref.position()} ({what})" if what else ref.position()


def duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def summary_counts(summary: Summary) -> list[tuple[str, int, Status | None]]:
    """Every status count (zeros included, so the line keeps its shape), then redirects."""
    counts: list[tuple[str, int, Status | None]] = [
        (LABELS[s], summary.count(s), s) for s in Status if s not in OPT_IN or summary.count(s)
    ]
    counts.append(("redirected", summary.redirects, None))
    return counts


def summary_line(summary: Summary, paint: Paint = plain) -> str:
    """One line: "12 links (10 unique) in 3 documents: 2 ok, 1 broken, ...; 1 redirected — 2.35 s"."""
    head = f"{summary.total:,} link{'s' if summary.total != 1 else ''} ({summary.unique:,} unique)"
    if summary.pages:
        head += f" in {summary.pages:,} document{'s' if summary.pages != 1 else ''}"
    parts = [paint(f"{n:,} {label}", status if n else None) for label, n, status in summary_counts(summary)]
    line = f"{head}: {', '.join(parts[:-1])}; {parts[-1]} — {duration(summary.elapsed)}"
    if summary.interrupted:
        line += "; interrupted"
    if summary.caps:
        line += f"; stopped early by {', '.join(summary.caps)}"
    if summary.unchanged is not None:  # --changed-since
        line += f"; {summary.unchanged:,} link{'s' if summary.unchanged != 1 else ''} skipped as unchanged"
    if expiring := len(summary.expiring):
        line += f"; {expiring} TLS certificate{'s' if expiring != 1 else ''} expiring"
    return line


INTERRUPTED = "the run was interrupted: this report covers only the links checked before it stopped"


def warning_lines(summary: Summary, color: bool = False) -> list[str]:
    """The run's warnings as "warning: ..." lines, for the formats that end with the summary line."""
    label = ansi.warn("warning:") if color else "warning:"
    return [f"{label} {printable(w)}" for w in summary.warnings]


def host(url: str) -> str:
    """The URL's hostname ("" for none): an http(s) URL's from its scheme and authority, each kept once (a
    crawl's report asks for every URL's, and they share a few hosts)."""
    if url.startswith(("http://", "https://")):
        end = len(url)
        for mark in "/?#":
            at = url.find(mark, 8)
            if 0 <= at < end:
                end = at
        return _hostname(url[:end])
    return _hostname(url)


@functools.lru_cache(maxsize=4096)
def _hostname(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def is_url(source: str) -> bool:
    """True for a page URL, false for a local file path (Windows drive letters included)."""
    return bool(_URL.match(source))


def in_a_file(ref: Reference) -> bool:
    """Whether ref is in a local file that an annotation or a SARIF location can point at: not in a page (a URL),
    not read from stdin ("-"), and not a URL named on the command line or in a config file (element "input"
    with no line; a --files-from list's line is in its file)."""
    return not is_url(ref.source) and ref.source != "-" and (ref.element != "input" or ref.line > 0)


def printable(text: str) -> str:
    """Text safe for a terminal or a one-line field: control characters (C0 with tab and line breaks, DEL,
    C1) and bidi overrides shown as escapes. Every text format passes what came from outside through this."""
    # isprintable() is false for every character _UNPRINTABLE matches (categories Cc, Cf, Cs, Cn), and
    # answers in C for the common case of nothing to escape
    return text if text.isprintable() else _UNPRINTABLE.sub(_escape, text)


def display_url(url: str) -> str:
    """A target as a person reads it: a file: URL as its path (relative when under the current directory),
    then printable()."""
    if url[:5].lower() == "file:" and not file_host(url):
        url = _local_path(url)
    return printable(url)


def _local_path(url: str) -> str:
    path = file_url_to_path(url)
    if os.name == "nt" and re.match("/[A-Za-z]:", path):  # file:///C:/x
        path = os.path.normpath(path[1:])
    try:
        cwd = os.getcwd()
    except OSError:  # the directory was removed under us: the absolute path still says where
        cwd = ""
    if cwd and path.startswith(cwd.rstrip(os.sep) + os.sep):
        rel = os.path.relpath(path, cwd)
        path = rel + "/" if path.endswith("/") else rel  # a folder's link stays one ("./" for this one)
    head, hash_, fragment = url.partition("#")
    _, ask, query = head.partition("?")
    return path + ask + query + hash_ + fragment


def tool_version() -> str:
    """linkhound's version, for formats that name their producer (a function, so tests can pin it)."""
    return __version__


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# C0/C1 controls, bidi overrides (they reorder text on screen), lone surrogates and non-characters.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
