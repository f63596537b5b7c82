"""The frozen values that flow through the pipeline: RawLink -> Link -> Result, plus Reference and Page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .status import Status


class RawLink(NamedTuple):
    """A link as an extractor found it: text as written (entities decoded), not yet resolved.

    RawLink and Reference are made once per link occurrence (600k in a 10k-page crawl): immutable named
    tuples, which build about 4x faster than frozen dataclasses.
    """

    text: str
    element: str  # tag name, or "markdown"/"text"/"css"
    attribute: str  # attribute name, or the kind of Markdown link ("inline", "reference", ...)
    line: int  # 1-based
    column: int  # 1-based
    nofollow: bool = False  # rel=nofollow: check, never crawl


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor returns for one document."""

    links: tuple[RawLink, ...]
    base: str  # the base URL links resolve against (after <base href>)
    anchors: frozenset[str] = frozenset()  # ids, <a name>s, heading slugs
    nofollow: bool = False  # <meta name=robots content=nofollow>
    warning: str = ""  # why the document was not fully parsed ("not fully parsed: ..."), "" when it was
    base_href: str | None = None  # the <base href> as written, when it set base


class Reference(NamedTuple):
    """One place that uses a link: a file position or a page URL, and the element there."""

    source: str  # file path as given, or page URL
    line: int
    column: int
    element: str
    attribute: str
    text: str  # the link as written

    def position(self) -> str:
        return f"{self.source}:{self.line}:{self.column}" if self.line else self.source


@dataclass(frozen=True, slots=True)
class Link:
    """One unique target to check: the unit of work the frontier holds."""

    url: str  # absolute, fragment removed
    key: str  # canonical key: two links with the same key are one request
    depth: int  # shortest known number of link hops from a seed
    crawl: bool  # a page: fetch with GET, extract and follow its links
    host: str = ""  # host[:port], the HostPool's key (computed once, when the link is made)


@dataclass(frozen=True, slots=True, init=False)
class Result:
    """The outcome for one link target (a URL, or a URL plus fragment).

    Made at least twice per URL (checked, then reported with its references), so its __init__ is written out:
    the generated one of a frozen dataclass sets each field through object.__setattr__, several times
    the cost of the slots' own setters used here. Still frozen: assigning a field raises."""

    url: str  # as checked; with "#fragment" when this result is about a fragment
    status: Status
    code: int | None = None  # HTTP status, when there was a response
    reason: str = ""  # human-readable cause ("Not Found", "connection reset", "no anchor #x")
    redirects: tuple[str, ...] = ()  # each URL after the first, in order
    elapsed: float = 0.0  # seconds spent on requests for this URL
    depth: int = 0
    content_type: str = ""
    references: Sequence[Reference] = field(default=())  # a tuple, or a sequence read from a run's store
    cached: bool = False  # reused from the cache of an earlier run (--cache), without a request
    redirect_codes: tuple[int, ...] = ()  # the status of the answer that led to each of redirects (301, 302...)

    def __init__(
        self,
        url: str,
        status: Status,
        code: int | None = None,
        reason: str = "",
        redirects: tuple[str, ...] = (),
        elapsed: float = 0.0,
        depth: int = 0,
        content_type: str = "",
        references: Sequence[Reference] = (),
        cached: bool = False,
        redirect_codes: tuple[int, ...] = (),
    ) -> None:
        _set_url(self, url)
        _set_status(self, status)
        _set_code(self, code)
        _set_reason(self, reason)
        _set_redirects(self, redirects)
        _set_elapsed(self, elapsed)
        _set_depth(self, depth)
        _set_content_type(self, content_type)
        _set_references(self, references)
        _set_cached(self, cached)
        _set_redirect_codes(self, redirect_codes)

    @property
    def is_ok(self) -> bool:
        return self.status.is_ok

    @property
    def is_broken(self) -> bool:
        return self.status.is_broken


(_set_url, _set_status, _set_code, _set_reason, _set_redirects, _set_elapsed, _set_depth, _set_content_type,
 _set_references, _set_cached, _set_redirect_codes) = (getattr(Result, name).__set__ for name in Result.__slots__)


@dataclass(frozen=True, slots=True)
class Page:
    """A crawl event: a page was fetched and its links extracted."""

    url: str
    depth: int
    links: int  # links found on it
    followed: bool  # whether its in-scope links were queued for crawling


@dataclass(frozen=True, slots=True)
class Certificate:
    """The TLS certificate of one HTTPS host checked (--tls-expiry)."""

    host: str  # host[:port]
    expires: str  # its notAfter, ISO 8601 in UTC: "2026-12-22T12:00:00Z"
    days_left: int  # whole days from the end of the run to expiry, toward zero; -1 or less once expired
    expiring: bool  # expires within the --tls-expiry window (or has expired)


Event = Result | Page  # what a crawl yields as it goes
