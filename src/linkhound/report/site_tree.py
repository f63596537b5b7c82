"""The crawled pages as a tree: each page under the shallower page that first linked to it."""

from __future__ import annotations

from collections.abc import Iterable

from ..status import Status
from ..types import Page, Result
from .common import printable, sources_of
from .records import Record


def site_tree(pages: Iterable[Page], results: Iterable[Result], blocked_fail: bool = False) -> list[Record]:
    """Roots (usually depth 0) with nested children; each node counts the failed links found on it (any
    status that fails the run, not only "broken"; blocked too with --fail-on-blocked).

    A page's parent is the page at the greatest smaller depth that links to it (ties: the first URL);
    a page no crawled page links to, such as a seed, becomes a root.
    """
    nodes: dict[str, Record] = {}
    for p in sorted(pages, key=lambda p: (p.depth, p.url)):
        if p.url not in nodes:  # the shallowest visit wins
            nodes[p.url] = {
                "url": p.url,
                "shown": printable(p.url),
                "depth": p.depth,
                "links": p.links,
                "failed": 0,
                "children": [],
            }
    referrers: dict[str, set[str]] = {}
    for result in results:
        sources = sources_of(result.references)
        if result.is_broken or blocked_fail and result.status is Status.BLOCKED:
            for source in sources & nodes.keys():
                nodes[source]["failed"] += 1
        if result.url in nodes:
            referrers[result.url] = sources
    roots: list[Record] = []
    for url, node in nodes.items():
        parents = [s for s in referrers.get(url, ()) if s in nodes and nodes[s]["depth"] < node["depth"]]
        if parents:
            parent = min(parents, key=lambda s: (-nodes[s]["depth"], s))
            nodes[parent]["children"].append(node)
        else:
            roots.append(node)
    return roots
