"""Found links sorted once: each reference recorded in the ledger, links that need no request decided at once
(invalid, excluded, unsupported, mailto:, file: on disk), and http(s) targets handed back as Found for the
crawl state."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from sys import intern

from .crawl_state import UNREACHED, Found
from .ledger import Ledger, LinkRef, PlainTargets, reference
from .links import ROOTLESS_BASE, LinkRules, Resolved
from .local import check_mailto
from .local_files import LocalFiles
from .references import RefStore
from .status import Status
from .traps import TrapGuard
from .triage import Route, Triage, triage
from .types import RawLink, Reference
from .urls import Scope, host_of

Links = Iterable[tuple[RawLink, Resolved | None]]
_NEVER = UNREACHED + 1  # a depth no link has (an orphan's is less: told to the state like any other)
_NO_TARGETS: PlainTargets = ({}, RefStore(), lambda *_: None)  # never written to
_GENERATION = 1 << 18  # URLs a bounded sorter keeps entries for, per generation
ROOTLESS = "root-relative link: set --root-dir to the site's top folder"
_ROOTLESS_KEY = ROOTLESS_BASE  # its own key: the same file reached by a relative path may well be fine


class LinkSorter:
    def __init__(self, rules: LinkRules, ledger: Ledger, files: LocalFiles, guard: TrapGuard, recursive: bool,
                 bounded: bool = False):
        self._rules = rules
        self._ledger = ledger
        self.files = files
        self._guard = guard
        self._recursive = recursive
        self.scope = Scope((), frozenset())  # set once the seeds are known
        # key -> one int per http(s) target, as a crawl keeps one per URL: the least depth told the state so far
        # (<< 4), the most (crawl 1, body 2, seed 4) told it so far (<< 1), and whether it may be crawled (1)
        self._http: dict[str, int] = {}
        # bounded (the crawl state keeps every URL on disk, --state): two generations of at most _GENERATION
        # entries. A URL forgotten is sorted as on first sight, and the state, which knows it, is told again:
        # the same answers, at the cost of a look in the state. (Kept whole, a crawl of a million URLs would
        # keep about 150 MB of entries.)
        self._old: dict[str, int] = {}
        self._bounded = bounded
        self.known: list[str] = []  # keys of the last sort's links that could change nothing in the state
        self.caps: set[str] = set()

    def sort(
        self,
        source: str,
        links: Links,
        depth: int,
        *,
        follow: bool = False,
        from_network: bool = False,
        local: bool = False,
        seed: bool = False,
        sitemap: bool | None = None,  # a sitemap's links: its own sitemaps are read, its pages crawled with -r
    ) -> list[Found]:
        fragments = self._rules.check_fragments(local)
        found: list[Found] = []
        self.known = known = []
        if self._bounded and len(self._http) >= _GENERATION:
            self._old, self._http = self._http, {}
        http, old, refer, kept = self._http, self._old, self._ledger.refer_links, self._ledger.plain_targets()
        targets = None if kept is None else kept[0]
        _, store, refer_raw = kept or _NO_TARGETS  # (used only where targets is not None)
        add = store.add_raw
        # without targets at hand, references go to the ledger a batch at a time, in the order they come: the
        # batch is handed over before anything else is told to the ledger (a link decided now), and at the end
        batch: list[LinkRef] = []
        new = tuple.__new__  # Found(...) without its Python-level __new__: half a million per 10k pages
        plain = sitemap is None
        excludes = bool(self._rules.exclude)
        for raw, resolved in links:
            if excludes and resolved is not None and resolved[2] is not None:
                skip = self._rules.fragment_skip(resolved[0], resolved[3], resolved[2])
                if skip is not None:  # an --exclude pattern names the fragment: the link as written is its own
                    if batch:
                        refer(source, batch)
                        batch = []
                    url = f"{resolved[0]}#{resolved[2]}"
                    self._ledger.decided(f"{resolved[1]}#{resolved[2]}", url, reference(source, raw), *skip)
                    continue
            if plain and resolved is not None and (resolved[2] is None or not fragments):
                entry = http.get(resolved[1])
                # the common case by far, a link seen before (nav, footer): its reference, and the edge
                if entry is not None and depth >= entry >> 4:
                    told = (follow and entry & 1 == 1 and not raw.nofollow) | seed << 2
                    if told << 1 | entry == entry:
                        if targets is None:
                            batch.append((resolved[1], resolved[0], raw, None))
                        else:
                            seen = targets[resolved[1]]
                            seen.refs.append(add(source, raw, seen.url))
                        known.append(resolved[1])
                        continue
            entry = http.get(resolved[1]) if resolved is not None else None
            if entry is None and old and resolved is not None:
                entry = old.pop(resolved[1], None)
                if entry is not None:
                    http[resolved[1]] = entry
            if entry is None:  # the first sight of a URL (or of one forgotten: see __init__): triaged, decided now
                # or made an http target
                route = self._route(resolved, from_network)
                if resolved is None or route.route is not Route.HTTP:
                    if batch:
                        refer(source, batch)
                        batch = []
                    self._decide(raw, resolved, route, reference(source, raw), fragments, local)
                    continue
                entry = http[resolved[1]]
            assert resolved is not None
            key = resolved[1]
            if sitemap is not None:
                seed = raw.attribute != "sitemap" or raw.element == "robots" or sitemap
            crawl = follow and entry & 1 == 1 and not raw.nofollow
            fragment = resolved[2] if fragments else None
            if targets is None:
                batch.append((key, resolved[0], raw, fragment))
            elif fragment is None and (target := targets.get(key)) is not None:
                target.refs.append(add(source, raw, target.url))  # the common case by far: a link seen before
            else:  # a fragment asked for, or a target's first link
                refer_raw(source, key, resolved[0], raw, fragment)
            told = crawl | seed << 2 if fragment is None else crawl | 2 | seed << 2
            if depth >= entry >> 4 and told << 1 | entry == entry:
                known.append(key)  # nothing new for the state: only the edge
                continue
            http[key] = min(depth, entry >> 4) << 4 | entry & 15 | told << 1
            host = intern(host_of(resolved[0]))  # (a few hosts: each kept once)
            found.append(new(Found, (key, resolved[0], host, depth, crawl, fragment is not None, seed)))
        if batch:
            refer(source, batch)
        return found

    def crawl_over(self) -> None:
        """Nothing is crawled from now on: the links still sorted (a sitemap's orphans, checked after the crawl)
        are no pages, so the trap guard doesn't count them, and notes no trap for them."""
        self._recursive = False

    def close(self) -> None:
        """No more links to sort (the crawl is over): the per-URL entries go, before the report needs memory."""
        self._http.clear()
        self._old.clear()
        self._guard.close()

    def _route(self, resolved: Resolved | None, from_network: bool) -> Triage:
        """triage(), decided once per http(s) URL; the trap guard sees each URL that may be crawled."""
        route = triage(resolved, from_network, self._rules, self.scope)
        if resolved is not None and route.route is Route.HTTP:
            crawlable = route.crawlable and self._recursive and self._guard.admit(resolved.url)
            self._http[resolved.key] = _NEVER << 4 | crawlable
            if self._recursive and route.reason:  # (not only when followed here: caps mustn't depend on order)
                self.caps.add("crawler-trap guard")
        return route

    def _decide(
        self, raw: RawLink, resolved: Resolved | None, route: Triage, ref: Reference, fragments: bool, local: bool
    ) -> None:
        """A link that needs no request: its verdict now."""
        ledger = self._ledger
        if resolved is None:
            ledger.decided("invalid:" + raw.text, raw.text, ref, route.status, route.reason)
        elif route.route is Route.MAILTO:
            if ledger.has_result(resolved.key):  # (the same address on every page: checked once)
                ledger.refer(resolved.key, resolved.url, ref)
            else:
                ledger.decided(resolved.key, resolved.url, ref, *check_mailto(resolved.url))
        elif route.route is Route.FILE:
            fragment = resolved.fragment if fragments else None
            if resolved.key.startswith(ROOTLESS_BASE):  # under a <base href="/guide/">: as for "/x" below
                ledger.decided(resolved.key, resolved.url, ref, Status.BROKEN, ROOTLESS)
                return
            if local and self._rules.root_dir is None and raw.text.startswith("/") and not raw.text.startswith("//"):
                # "/x" means the top of the site, which only --root-dir says: never this machine's root folder
                ledger.decided(_ROOTLESS_KEY + resolved.key, resolved.url, ref, Status.BROKEN, ROOTLESS)
                return
            why = self.files.no_index(resolved.url, fragment) if fragment is not None else None
            if why is not None:  # nothing to look for the fragment in: its own verdict, the directory's is fine
                ledger.decided(f"{resolved.key}#{fragment}", f"{resolved.url}#{fragment}", ref, Status.BROKEN, why)
                return
            ledger.refer(resolved.key, resolved.url, ref, fragment)
            if not ledger.has_result(resolved.key):
                ledger.file_checked(resolved.key, *self.files.check(resolved.url))
        else:
            ledger.decided(resolved.key, resolved.url, ref, route.status, route.reason)


def batches(items: Links, size: int) -> Iterator[list[tuple[RawLink, Resolved | None]]]:
    """items in lists of size (the last one shorter): a long input's links are added a batch at a time."""
    batch: list[tuple[RawLink, Resolved | None]] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
