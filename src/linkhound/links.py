"""Per-run rules for found links: how a link resolves (local roots, base URL, remaps) and which are skipped."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .filters import AddressExcluded, AddressFilter
from .settings import Remap, Settings
from .status import Status
from .urls import hostname_of, remap, resolve

KNOWN_SCHEMES = frozenset({"http", "https", "file", "mailto"})


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
                return resolve(rel, self.base_url.rstrip("/") + "/") or Path(path).as_uri()
        return Path(path).as_uri()

    def resolve(self, text: str, base: str, local: bool) -> str | None:
        """The absolute URL of a link as written, after --root-dir for root-relative local links and --remap."""
        if local and self.root_dir and text.startswith("/") and not text.startswith("//") and base.startswith(
            "file:"
        ):
            url = resolve("." + text, Path(self.root_dir).as_uri() + "/")
        else:
            url = resolve(text, base)
        if url is not None and self.remaps:
            url = remap(url, self.remaps)
        return url

    def skip(self, url: str, scheme: str) -> tuple[Status, str] | None:
        """Why a link is not checked, or None to check it. Include patterns win over exclude patterns."""
        if scheme not in KNOWN_SCHEMES:
            return Status.UNSUPPORTED, f"{scheme}: links are not checked"
        if scheme not in self.schemes:
            return Status.EXCLUDED, f"scheme {scheme} not in --scheme"
        included = any(p.search(url) for p in self.include)
        if not included:
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
