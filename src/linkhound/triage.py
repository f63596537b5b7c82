"""Pure: what a found link is, decided on its resolved URL and on where it was found (a local file, or content
fetched over the network)."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from .links import LinkRules, Resolved
from .status import Status
from .urls import Scope, looks_like_asset, looks_like_trap


class Route(Enum):
    INVALID = "invalid"  # not a URL
    DECIDED = "decided"  # no request: excluded, unsupported scheme, --offline, a file: link on a web page
    FILE = "file"  # a file on this machine: checked on disk
    MAILTO = "mailto"  # checked by syntax
    HTTP = "http"  # requested


class Triage(NamedTuple):
    route: Route
    status: Status = Status.OK  # DECIDED: the verdict
    reason: str = ""
    crawlable: bool = False  # HTTP: a page the crawl may follow (in scope, not an asset, not a trap-like URL)


INVALID = Triage(Route.INVALID, Status.BROKEN, "invalid URL")
FILE = Triage(Route.FILE)
MAILTO = Triage(Route.MAILTO)
HTTP_PAGE = Triage(Route.HTTP, crawlable=True)
HTTP_LEAF = Triage(Route.HTTP)
HTTP_TRAP = Triage(Route.HTTP, reason="trap suspected")  # in scope, but over-long or repeating itself
# Invariant 10: content fetched over the network never makes linkhound look at this machine's files, however
# the file: URL came about (<base href>, a relative link under a file: base, a control-character prefix).
FROM_NETWORK = Triage(Route.DECIDED, Status.SKIPPED, "file: link on a web page")


def triage(resolved: Resolved | None, from_network: bool, rules: LinkRules, scope: Scope) -> Triage:
    """What to do with one found link. Decided on the resolved URL, never on the text as written."""
    if resolved is None:
        return INVALID
    url, _key, _fragment, scheme = resolved
    skip = rules.skip(url, scheme)
    if scheme == "file" and from_network:
        return FROM_NETWORK
    if skip is not None:
        return Triage(Route.DECIDED, *skip)
    if scheme == "file":
        return FILE
    if scheme == "mailto":
        return MAILTO
    if not scope.contains(url) or looks_like_asset(url):
        return HTTP_LEAF
    return HTTP_TRAP if looks_like_trap(url) else HTTP_PAGE
