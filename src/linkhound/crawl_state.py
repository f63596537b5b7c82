"""The crawl state's contract: one record per canonical key (shortest depth, plan, progress) and the per-host
queues of work, behind a protocol that backends implement (memory today; SQLite and Redis plug in here).

The rules every backend keeps, and that tests/state_contract.py checks:

- `add` is the only way a found link reaches the state, and it tests and marks the key in one step (dedup at
  enqueue). A record's plan only rises (CHECK < BODY < PAGE) and its depth only falls, whatever order links
  arrive in. A rise after the URL was fetched for less queues it again (one more request, counted in
  `refetched`); a rise while it is in flight queues it again when it is done.
- A page's depth is its shortest distance from an input: a lower depth found later lowers its children's too.
- `unfinished` counts records queued or in flight; it is never zero while work remains, because a page's
  children are added before the page is `done`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum, IntEnum
from typing import NamedTuple, Protocol

# The depth of a URL no input leads to: a sitemap's orphan, checked once the crawl is over (--sitemap-drift). It
# is deeper than any path, so by the rule that depths only fall nothing it reaches (its redirect's end: a page
# the crawl knows) moves up because of it, and no plan rises: the crawl is the same with the orphans or without.
UNREACHED = (1 << 30) - 1


class Plan(IntEnum):
    """What a URL's request must do. Plans only rise."""

    CHECK = 0  # the status only: HEAD (GET where HEAD is refused, or with --method get)
    BODY = 1  # GET: some link asks for one of its #fragments, so its anchors are needed
    PAGE = 2  # GET, parse, and add its links: crawled


class Progress(Enum):
    QUEUED = "queued"
    IN_FLIGHT = "in flight"
    DONE = "done"


class Found(NamedTuple):
    """One found link's effect on its target's record (made once per http(s) link occurrence)."""

    key: str  # canonical key
    url: str  # absolute, no fragment
    host: str  # host[:port]: the queue it goes to
    depth: int  # link hops from an input to the target through this link
    crawl: bool  # this link may make the target a page (followed, in scope, not nofollow, not an asset)
    body: bool = False  # this link asks for one of the target's #fragments
    seed: bool = False  # an input or a sitemap entry: always read as a page, whatever the limits


class Claim(NamedTuple):
    """A record taken for fetching: the plan it was taken with decides the request."""

    key: str
    url: str
    host: str
    depth: int
    plan: Plan
    seed: bool


class Record(NamedTuple):
    """A record as the state holds it, for reports and tests."""

    key: str
    url: str
    depth: int
    plan: Plan
    progress: Progress
    served: Plan | None  # the plan the last finished fetch satisfied; None before the first


class Limits(NamedTuple):
    """What caps the plans the state may grant."""

    max_depth: int | None = None  # pages deeper than this are checked, not crawled
    max_pages: int | None = None  # PAGE plans granted at most (seeds count, and are never refused)


class CrawlState(Protocol):
    """The one owner of each URL's crawl state. Methods are async where a backend needs I/O."""

    refetched: int  # requests made again because a plan rose after the URL was fetched

    @property
    def unfinished(self) -> int:
        """Records queued or in flight: the run is over when this is zero and no producer is open."""

    @property
    def queued(self) -> int:
        """Records waiting in a queue."""

    def has_work(self, host: str) -> bool:
        """Whether host's queue holds a record."""

    async def add(
        self, found: Iterable[Found], parent: str | None = None, hop: int = 1, known: Iterable[str] = ()
    ) -> list[Claim]:
        """Record found links (children of parent, hop links further from an input than it). known: keys of
        more children, already recorded at no greater depth and no lower plan (only the edge is new). Returns
        the records that entered a queue because of them (new, or raised), as they will be claimed."""

    async def adopt(self, found: Found, parent: str | None = None) -> bool:
        """A redirect of a page being crawled (parent) led to found: if the key is new, it is recorded as
        fetched (done, as a page) and True is returned: the caller crawls the body it holds as that page.
        Otherwise it is an `add`, and False. Either way found is parent's child at no extra depth."""

    async def claim(self, host: str) -> Claim | None:
        """Take the shallowest queued record of host (now in flight); None when its queue is empty."""

    async def done(self, claim: Claim, served: Plan) -> None:
        """The claim was fetched; its result satisfies the claim's plan and plans up to served (a failure or
        a non-HTML answer satisfies every plan). Queued again when its plan rose above both meanwhile."""

    def record(self, key: str) -> Record | None:
        """The record of key, None when unknown."""

    def depth(self, key: str) -> int | None:
        """The shortest depth known for key."""

    def cut_by(self) -> tuple[str, ...]:
        """The limits that kept crawlable pages from being crawled, e.g. ("max-depth 2",)."""


class _Wants(Protocol):
    """What `wanted` reads of a backend's record (flags may be bools or 0/1)."""

    @property
    def plan(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def crawlable(self) -> int: ...
    @property
    def body(self) -> int: ...
    @property
    def depth(self) -> int: ...


def wanted(r: _Wants, limits: Limits, pages: int) -> Plan:
    """The plan a record's references ask for, within the limits, with `pages` PAGE plans granted so far: every
    backend's one rule. A PAGE plan, once granted, is kept; a seed is always a page."""
    if r.plan == Plan.PAGE:
        return Plan.PAGE
    if r.seed or (
        r.crawlable
        and (limits.max_depth is None or r.depth <= limits.max_depth)
        and (limits.max_pages is None or pages < limits.max_pages)
    ):
        return Plan.PAGE
    return Plan.BODY if r.body else Plan.CHECK


StateFactory = Callable[[Limits, Callable[[str], None]], CrawlState]  # (limits, on_host_ready) -> state
