"""Whether a #fragment names an anchor of a document."""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import unquote


class Anchors(NamedTuple):
    """The anchors of one document, computed once per document and run."""

    names: frozenset[str]
    case_insensitive: bool = False  # Markdown heading slugs match whatever the case

    @classmethod
    def of(cls, names: frozenset[str], markdown: bool = False) -> Anchors:
        return cls(frozenset(n.lower() for n in names) if markdown else names, markdown)

    def has(self, fragment: str) -> bool:
        fragment = fragment.split(":~:", 1)[0]  # #sec:~:text=...: browsers go to #sec, then highlight the text
        if is_always_valid(fragment):
            return True
        candidates = {fragment, unquote(fragment)}
        if self.case_insensitive:  # (a Markdown file's): GitHub's page has each id with user-content- before it too
            candidates = {c.lower() for c in candidates}
            candidates.update([c[13:] for c in candidates if c.startswith("user-content-")])
        return not candidates.isdisjoint(self.names)


def is_always_valid(fragment: str) -> bool:
    """'#' and '#top' always work in browsers; text fragments (#:~:text=) are not anchors."""
    return fragment == "" or fragment.lower() == "top" or fragment.startswith(":~:")


def named_by_location(redirects: tuple[str, ...]) -> str | None:
    """The #fragment a redirect chain's Locations leave in effect at its end (None: none named one): the last hop
    written with one (RFC 9110 10.2.2: a Location's fragment replaces the one before; a Location without one keeps
    it). Hops carry a fragment only where --check-fragments had the client keep it (HttpClient.fetch)."""
    for url in reversed(redirects):
        i = url.find("#")
        if i >= 0:
            return url[i + 1 :]
    return None
