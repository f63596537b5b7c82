"""Per-run rules for found links: how a link resolves (local roots, base URL, remaps) and which are skipped."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .filters import AddressExcluded, AddressFilter
from .local import file_uri
from .settings import KNOWN_SCHEMES, Remap, Settings
from .status import Status
from .types import Extraction
from .urls import canonical_key, hostname_of, remap, resolve, scheme_of, split_fragment

# Resolved links kept for reuse (cleared when full). Nav and footer links, the ones that repeat, come back
# at once; 20,000 cost no CPU against 200,000 on the 10k-page bench and kept the parse worker ~15 MB smaller.
_CACHE_MAX = 20_000
_MISS = object()
_NOT_LOCAL = "not-local:"  # key prefix of a file: URL found outside local documents (web pages, URL inputs)
# The base of a local page whose <base href> is root-relative ("/guide/") with no --root-dir to say where the
# site's top is, then the folder it names; and the key prefix of the file: links resolved against it (their
# verdict: set --root-dir, as for a "/x" link; never this machine's /guide/)
ROOTLESS_BASE = "rootless:"


class Resolved(NamedTuple):
    """A link resolved and keyed: what the engine needs to dedup and queue it."""

    url: str  # absolute, fragment removed
    key: str  # canonical_key(url)
    fragment: str | None
    scheme: str


@dataclass(frozen=True)
class LinkRules:
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    schemes: frozenset[str]
    offline: bool
    fragments: bool | None
    remaps: tuple[Remap, ...]
    root_dir: str | None
    base_url: str | None
    addresses: AddressFilter = field(default_factory=AddressFilter)  # hosts resolved later: the client's job
    _cache: dict[str, Resolved | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_settings(cls, s: Settings) -> LinkRules:
        return cls(
            include=s.patterns("include"),
            exclude=s.patterns("exclude"),
            schemes=frozenset(x.lower() for x in s.scheme) or KNOWN_SCHEMES,
            offline=s.offline,
            fragments=s.check_fragments,
            remaps=s.remaps,
            root_dir=os.path.abspath(s.root_dir) if s.root_dir else None,
            base_url=s.base_url,
            addresses=s.addresses,
        )

    def check_fragments(self, local: bool) -> bool:
        """On by default for links found in local files; opt-in for pages fetched over HTTP."""
        return local if self.fragments is None else self.fragments

    def local_base(self, path: str) -> str:
        """The base URL of a local file: its file: URL, or where --base-url says it is served."""
        if self.base_url:
            top = self.root_dir or os.getcwd()
            rel = os.path.relpath(path, top).replace(os.sep, "/")
            if not rel.startswith("../"):
                return resolve(rel, self.base_url.rstrip("/") + "/") or file_uri(path)
        return file_uri(path)

    def document_base(self, base: str, extraction: Extraction) -> str:
        """The base a local document's links resolve against: its own, or its <base href>'s. A root-relative
        href ("/guide/") names a folder under --root-dir, as a root-relative link does (without it: ROOTLESS_BASE)."""
        href = extraction.base_href
        if not (href and base.startswith("file:") and href.startswith("/") and not href.startswith("//")):
            return extraction.base
        top = resolve(href, "file:///")
        if top is None:
            return extraction.base
        if self.root_dir is None:
            return ROOTLESS_BASE + top[len("file://"):]
        return resolve("." + top[len("file://"):], Path(self.root_dir).as_uri() + "/") or extraction.base

    def resolve(self, text: str, base: str, local: bool) -> str | None:
        """The absolute URL of a link as written, after --root-dir for root-relative local links and --remap. A
        protocol-relative link (//host/x) in a file read from disk is an https: URL."""
        if local and base.startswith(ROOTLESS_BASE):  # (see ROOTLESS_BASE: resolved as in the folder it names)
            base = "file://" + base[len(ROOTLESS_BASE):]
        on_disk = local and base.startswith("file:")
        if on_disk and text.startswith("//"):  # //cdn.example.org/x in a file: on the web it is there, over https
            url = resolve("https:" + text, "")
        elif on_disk and self.root_dir and text.startswith("/"):
            # the site's top is --root-dir: "/../x" can't climb above it (a URL's path stops at "/", as in browsers)
            top = resolve(text, "file:///")
            url = None if top is None else resolve("." + top[len("file://"):], Path(self.root_dir).as_uri() + "/")
        else:
            url = resolve(text, base)
        if url is not None and self.remaps:
            url = remap(url, self.remaps)
        return url

    def resolver(self, base: str, local: bool) -> Callable[[str], Resolved | None]:
        """resolve_link for the links of one document, with a cache shared by all documents of the run.

        Most links repeat from page to page (navigation, footers), and a link's target depends only on the
        base's origin (for "/x"), its folder (for "x", "../x", "//h/x"), or nothing (for "https://..."); the
        cache keys by just that much, so a nav link is joined and keyed once per folder, not once per page.
        """
        head = base.split("#", 1)[0].split("?", 1)[0]
        folder = head[: head.rfind("/") + 1]
        slash = head.find("/", head.find("//") + 2) if "//" in head else -1
        origin = head[:slash] if slash > 0 else head
        if slash < 0:  # no path at all: nothing safe to share
            return lambda text: self._resolve_link(text, base, local)
        flag = "L" if local else "R"
        cache = self._cache

        def resolve_link(text: str) -> Resolved | None:
            if text.startswith(("http://", "https://")):
                ck = text if not local else "L\0" + text  # a --remap to file: must not share a key across them
            elif text.startswith("/") and not text.startswith("//"):
                ck = f"{flag}{origin}\0{text}"
            elif not text or text[0] in "?#":
                return self._resolve_link(text, base, local)
            else:
                ck = f"{flag}{folder}\0{text}"
            hit = cache.get(ck, _MISS)
            if hit is _MISS:
                if len(cache) > _CACHE_MAX:
                    cache.clear()
                hit = cache[ck] = self._resolve_link(text, base, local)
            return hit  # type: ignore[return-value]

        return resolve_link

    def _resolve_link(self, text: str, base: str, local: bool) -> Resolved | None:
        url = self.resolve(text, base, local)
        if url is None:
            return None
        target, fragment = split_fragment(url)
        scheme = scheme_of(target)
        key = canonical_key(target)
        if scheme == "file" and not local:
            # Not a local document's link: its own target, so a web page's verdict (skipped) and a local file's
            # (checked on disk) never end up on one result, whichever is found first (invariant 10).
            key = _NOT_LOCAL + key
        elif scheme == "file" and base.startswith(ROOTLESS_BASE):
            key = ROOTLESS_BASE + key
        return Resolved(target, key, fragment, scheme)

    def skip(self, url: str, scheme: str) -> tuple[Status, str] | None:
        """Why a link is not checked, or None to check it. Include patterns win over exclude patterns."""
        if scheme not in KNOWN_SCHEMES:
            return Status.UNSUPPORTED, f"{scheme}: links are not checked"
        if scheme not in self.schemes:
            return Status.EXCLUDED, f"scheme {scheme} not in --scheme"
        included = bool(self.include) and any(p.search(url) for p in self.include)
        if not included and (self.include or self.exclude):
            if self.include and not self.exclude:
                return Status.EXCLUDED, "not matched by --include"
            if any(p.search(url) for p in self.exclude):
                return Status.EXCLUDED, "matched by --exclude"
        if self.offline and scheme in ("http", "https"):
            return Status.SKIPPED, "--offline"
        if self.addresses.active and scheme in ("http", "https"):
            try:
                self.addresses.check_literal(hostname_of(url))
            except AddressExcluded as e:
                return Status.EXCLUDED, e.reason
        return None

    def fragment_skip(self, url: str, scheme: str, fragment: str) -> tuple[Status, str] | None:
        """Why url#fragment is excluded when url is not: an exclude pattern finds the URL with its fragment (and
        no include pattern finds the URL, as skip() reads them). None: the link's verdict is url's."""
        if not any(p.search(f"{url}#{fragment}") for p in self.exclude):
            return None  # (most links: one search per pattern)
        if scheme not in KNOWN_SCHEMES or scheme not in self.schemes or any(p.search(url) for p in self.include):
            return None
        if any(p.search(url) for p in self.exclude):
            return None  # excluded as url already
        return Status.EXCLUDED, "matched by --exclude"
