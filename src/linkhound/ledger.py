"""What reports need: every reference to every target, each target's latest result, and fragment verdicts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from sys import intern
from typing import Any, Protocol

from .crawl_state import UNREACHED
from .fragments import Anchors, named_by_location
from .references import Ids, Refs, RefStore, ids
from .status import Status
from .summary import Report, summarize
from .types import Page, RawLink, Reference, Result

DepthOf = Callable[[str], "int | None"]
_NONE: dict[str, Any] = {}  # a target's broken fragments until their first entry: never written to
_FEW = 4  # fragments a target keeps as a flat tuple (a dict costs 200 bytes; most targets have 1 to 3)
FragmentRefs = tuple["str | Ids | int", ...]  # (fragment, refs, fragment, refs, ...)


def reference(source: str, raw: RawLink) -> Reference:
    # element and attribute are a handful of strings: interned, each is stored once. The text is not: the
    # reference store keeps each distinct text once already, and interning every one (a crawl has hundreds of
    # thousands) would grow the interpreter's table of interned strings by as much again.
    return Reference(source, raw.line, raw.column, intern(raw.element), intern(raw.attribute), raw.text)


class Target:
    """One unique target (canonical key): who links to it, and what came of it."""

    __slots__ = (
        "key", "url", "refs", "fragments", "result", "anchors", "load_anchors", "broken_fragments", "same_as",
        "reported",
    )

    def __init__(self, key: str, url: str) -> None:
        self.key = key
        self.url = key if url == key else url  # one string where they are equal (nearly always)
        self.refs: Ids = ids()  # references (ids in the ledger's store) that ask for no fragment
        # each fragment asked for, with the references that ask for it: one id (most fragments have one), or an
        # array of them. A few fragments as a flat tuple, more in a dict: fragment_refs() reads either.
        self.fragments: FragmentRefs | dict[str, Ids | int] = ()
        self.result: Result | None = None
        self.anchors: Anchors | None = None
        self.load_anchors: Callable[[], Anchors | None] | None = None  # local files: read on first need
        self.broken_fragments: dict[str, Result] = _NONE
        self.same_as: list[tuple[Target, Result]] | None = None  # redirects that end here, waiting for a result
        # result as the report gives it (with its references and depth), made ahead while the run had time to
        # spare; the report makes it again if a reference or the depth has changed since (MemoryLedger.results)
        self.reported: Result | None = None

    def fragment_refs(self) -> dict[str, Ids | int]:
        """Each fragment asked for, with the references that ask for it (a dict made for the caller)."""
        f = self.fragments
        if isinstance(f, dict):
            return f
        return {f[i]: f[i + 1] for i in range(0, len(f), 2)}  # type: ignore[misc]

    def refs_of(self, fragment: str) -> Ids | int | None:
        f = self.fragments
        if isinstance(f, dict):
            return f.get(fragment)
        for i in range(0, len(f), 2):
            if f[i] == fragment:
                return f[i + 1]  # type: ignore[return-value]
        return None

    def set_refs(self, fragment: str, refs: Ids | int) -> None:
        f = self.fragments
        if isinstance(f, dict):
            f[fragment] = refs
            return
        for i in range(0, len(f), 2):
            if f[i] == fragment:
                self.fragments = (*f[:i + 1], refs, *f[i + 2 :])
                return
        if len(f) < 2 * _FEW:
            self.fragments = (*f, fragment, refs)
        else:
            self.fragments = {**self.fragment_refs(), fragment: refs}


# every target by key, the store of their references, and how to record a link (source, key, url, link as found,
# #fragment) whose target may be new or that asks for a fragment: the sorter's fast path (see plain_targets)
ReferRaw = Callable[[str, str, str, RawLink, "str | None"], None]
PlainTargets = tuple[dict[str, Target], RefStore, ReferRaw]
LinkRef = tuple[str, str, RawLink, "str | None"]  # a link to record: key, url, the link as found, its #fragment


class Ledger(Protocol):
    """What a run records for its report: every reference to every target (a canonical key), each target's latest
    result, fragment verdicts, redirects that take their end's result. MemoryLedger keeps it in memory;
    PersistentLedger (--state) in the crawl state's file."""

    def __len__(self) -> int: ...
    def plain_targets(self) -> PlainTargets | None:
        """Every target by key, the store of their references and a refer() of a link as found, for a caller that
        records references itself (the sorter's fast path); None when each reference must go through
        refer_links() or refer()."""
    def get(self, key: str) -> Target | None: ...
    def refer(self, key: str, url: str, ref: Reference, fragment: str | None = None) -> None:
        """Record one reference to key (its target made on first sight); a fragment is checked at once when
        the target's anchors are known."""
    def refer_links(self, source: str, links: Sequence[LinkRef]) -> None:
        """refer() each of links found in source, in order (a ledger may take them without making References)."""
    def has_result(self, key: str) -> bool: ...
    def result_of(self, key: str) -> Result | None: ...
    def references_of(self, key: str) -> list[Reference] | None:
        """Every reference to key (None: no such target here)."""
    def decided(self, key: str, url: str, ref: Reference, status: Status, reason: str) -> None:
        """A reference to a target decided without a request (invalid, excluded, unsupported, mailto)."""
    def file_checked(self, key: str, result: Result, load_anchors: Callable[[], Anchors | None] | None) -> None:
        """A local file's result; its anchors are read by load_anchors when a fragment first asks for them."""
    def adopt(self, key: str, url: str, result: Result, anchors: Anchors | None) -> None:
        """A URL checked that no link names (a redirect's end): its target made, with its result."""
    def same_as(self, key: str, end: str, redirect: Result) -> None:
        """key redirects to end, checked on its own: end's result, with key's chain, becomes key's."""
    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        """key's latest result (a later fetch of a raised plan replaces an earlier one)."""
    def report(self, pages: Sequence[Page], elapsed: float, interrupted: bool, caps: tuple[str, ...],
               depth_of: DepthOf, warnings: tuple[str, ...] = ()) -> Report: ...


class MemoryLedger:
    """The Ledger of a run in memory: targets in a dict, references in a compact store."""

    def __init__(self, emit: Callable[[Result | Page], None] | None = None) -> None:
        self._emit = emit
        self.references = RefStore()  # every reference, by id
        self._targets: dict[str, Target] = {}
        self._done: list[Target] = []  # in the order of their first result
        self._passing: set[str] = set()  # ends passing their result on to the redirects that reach them
        self._anchor_sets: dict[Anchors, Anchors] = {}  # pages of one template have the same anchors: kept once
        self._ahead = 0  # targets of _done whose reported result prepare() has made
        self._settled = 0  # targets of _done whose reported result settle() has found final
        # targets whose first result was not streamed: no reference then but those of missing fragments (or none,
        # adopted); one that a link named since is streamed by report()
        self._held: list[Target] = []

    def __len__(self) -> int:
        return len(self._targets)

    def plain_targets(self) -> PlainTargets | None:
        return self._targets, self.references, self._refer_raw

    def get(self, key: str) -> Target | None:
        return self._targets.get(key)

    def refer(self, key: str, url: str, ref: Reference, fragment: str | None = None) -> None:
        target = self._target(key, url)
        self._refer(target, self.references.add_ref(ref, target.url), fragment)

    def refer_links(self, source: str, links: Sequence[LinkRef]) -> None:
        for key, url, raw, fragment in links:
            self.refer(key, url, reference(source, raw), fragment)

    def _refer_raw(self, source: str, key: str, url: str, raw: RawLink, fragment: str | None) -> None:
        """refer() of a link as found in source, with no Reference made (stored as refer() stores it)."""
        target = self._target(key, url)
        self._refer(target, self.references.add_raw(source, raw, target.url), fragment)

    def _target(self, key: str, url: str) -> Target:
        target = self._targets.get(key)
        if target is None:
            target = self._targets[key] = Target(key, url)
        return target

    def _refer(self, target: Target, ref_id: int, fragment: str | None) -> Target:
        if fragment is None:
            target.refs.append(ref_id)
            return target
        refs = target.refs_of(fragment)
        if refs is not None:
            if isinstance(refs, int):
                refs = ids([refs])
                target.set_refs(fragment, refs)
            refs.append(ref_id)
            return target
        fragment = intern(fragment)  # (the same few names on every page: each kept once)
        target.set_refs(fragment, ref_id)
        if target.result is not None:
            self._check_fragment(target, fragment)
        return target

    def has_result(self, key: str) -> bool:
        target = self._targets.get(key)
        return target is not None and target.result is not None

    def result_of(self, key: str) -> Result | None:
        target = self._targets.get(key)
        return None if target is None else target.result

    def references_of(self, key: str) -> list[Reference] | None:
        target = self._targets.get(key)
        return None if target is None else list(self._all_refs(target))

    def decided(self, key: str, url: str, ref: Reference, status: Status, reason: str) -> None:
        self.refer(key, url, ref)
        if not self.has_result(key):
            self.checked(key, Result(url, status, None, reason))

    def file_checked(self, key: str, result: Result, load_anchors: Callable[[], Anchors | None] | None) -> None:
        self._targets[key].load_anchors = load_anchors
        self.checked(key, result)

    def adopt(self, key: str, url: str, result: Result, anchors: Anchors | None) -> None:
        """A target fetched on the way to another (a redirect's end): reported only if some link uses it."""
        target = self._targets.get(key)
        if target is None:
            target = self._targets[key] = Target(key, url)
        target.anchors = self._shared(anchors)
        self.checked(key, result)

    def same_as(self, key: str, end: str, redirect: Result) -> None:
        """key redirects to end, which is checked on its own: end's result, with redirect's chain, is key's."""
        target = self._targets.get(key)
        if target is None:  # (a URL another process found, in distributed mode: made here as adopt makes it)
            target = self._targets[key] = Target(key, redirect.url)
        ending = self._targets.get(end)
        if ending is None:  # (its URL without the #fragment a Location named)
            url = redirect.redirects[-1].split("#", 1)[0] if redirect.redirects else end
            ending = self._targets[end] = Target(end, url)
        ending.same_as = [*(ending.same_as or ()), (target, redirect)]  # end's later results pass on too
        if ending.result is not None:
            self._pass_on(ending, target, redirect)

    def _shared(self, anchors: Anchors | None) -> Anchors | None:
        """anchors, or an equal set kept before (its names interned: ids repeat across pages)."""
        if anchors is None:
            return None
        same = self._anchor_sets.get(anchors)
        if same is None:
            same = Anchors(frozenset(map(intern, anchors.names)), anchors.case_insensitive)
            self._anchor_sets[same] = same
        return same

    def _settle_loops(self) -> None:
        """Redirects still waiting for the result of their end when the run is over go round in a circle
        (a -> b, b -> a, each checked on its own): say so."""
        for ending in [t for t in self._targets.values() if t.same_as and t.result is None]:
            for waiting, redirect in ending.same_as or ():
                if waiting.result is None:
                    loop = Result(waiting.url, Status.ERROR, None, "redirect loop", redirect.redirects)
                    self.checked(waiting.key, loop)

    def _pass_on(self, ending: Target, target: Target, redirect: Result) -> None:
        r = ending.result
        assert r is not None
        result = Result(target.url, r.status, r.code, r.reason, redirect.redirects + r.redirects, redirect.elapsed,
                        redirect.depth, r.content_type, redirect_codes=redirect.redirect_codes + r.redirect_codes)
        self.checked(target.key, result, ending.anchors)

    def checked(self, key: str, result: Result, anchors: Anchors | None = None) -> None:
        """key's latest result (a later fetch of a raised plan replaces an earlier one); the first is emitted."""
        target = self._targets.get(key)
        if target is None:  # (a redirect's end crawled on its own that no link names: made as adopt makes it)
            target = self._targets[key] = Target(key, result.url)
        first = target.result is None
        if result.url is not target.url and result.url == target.url:  # (a claim read from a state file)
            result = _with_url(result, target.url)  # the target's string kept, not a second equal one
        if anchors is not None:
            target.anchors = self._shared(anchors)
        if result.redirects and result.status.is_ok:
            result = self._located(target, result, first)
        target.result = result
        target.reported = None
        if first:
            self._done.append(target)
        if target.fragments:
            for fragment in sorted(target.fragment_refs()):
                self._check_fragment(target, fragment)
        if first and self._emit is not None:
            self._emit_own(target, result)
        if target.same_as and key not in self._passing:  # (a circle of redirects stops where it began)
            self._passing.add(key)
            try:
                for waiting, redirect in target.same_as:
                    self._pass_on(target, waiting, redirect)
            finally:
                self._passing.discard(key)

    def _located(self, target: Target, result: Result, first: bool) -> Result:
        """result judged by the #fragment its redirect's Location named (location_verdict), against the target's
        anchors (the end's); a break found after the target's first result is emitted too."""
        if named_by_location(result.redirects) is None:
            return result
        if target.anchors is None and target.load_anchors is not None:
            target.anchors, target.load_anchors = target.load_anchors(), None
        judged = location_verdict(result, target.anchors)
        if judged is not result and not first and self._emit is not None and target.result is not None \
                and target.result.status.is_ok and (target.refs or target.fragments):
            self._emit(with_refs(judged, self._all_refs(target)))
        return judged
    def _emit_own(self, target: Target, result: Result) -> None:
        """Stream target's result with the references the report gives it: not those that ask for a fragment
        found missing, which are the broken fragment's own result. None yet: held, for report() to look again."""
        assert self._emit is not None
        rest = self._all_refs(target, target.broken_fragments if result.status.is_ok else None)
        if rest:
            self._emit(with_refs(result, rest))
        else:
            self._held.append(target)

    def _check_fragment(self, target: Target, fragment: str) -> None:
        result = target.result
        if result is None or not result.status.is_ok or fragment in target.broken_fragments:
            return
        if result.redirects and named_by_location(result.redirects) is not None:
            return  # the Location's #fragment replaced the link's (RFC 9110 10.2.2): judged in _located
        if target.anchors is None and target.load_anchors is not None:
            target.anchors, target.load_anchors = target.load_anchors(), None
        if target.anchors is None or target.anchors.has(fragment):
            return
        broken = Result(
            url=f"{target.url}#{fragment}",
            status=Status.BROKEN,
            code=result.code,
            reason=f"no anchor #{fragment}",
            depth=result.depth,
            content_type=result.content_type,
            cached=result.cached,  # the anchors were the cache's too
        )
        if target.broken_fragments is _NONE:
            target.broken_fragments = {}
        target.broken_fragments[fragment] = broken
        if self._emit is not None:
            refs = target.refs_of(fragment)
            assert refs is not None
            self._emit(with_refs(broken, self.references.view(refs, target.url)))

    def _all_refs(self, target: Target, leave_out: dict[str, Result] | None = None) -> Refs:
        if not target.fragments:
            return self.references.view(target.refs, target.url)
        refs = ids()
        refs.extend(target.refs)
        for fragment, more in target.fragment_refs().items():
            if not leave_out or fragment not in leave_out:
                if isinstance(more, int):
                    refs.append(more)
                else:
                    refs.extend(more)
        return self.references.view(refs, target.url)

    def results(self, depth_of: DepthOf = lambda key: None) -> tuple[Result, ...]:
        """Final results with every reference and the shortest depth: a broken fragment's references move to
        its own result."""
        out: list[Result] = []
        view = self.references.view
        settled = self._settled
        for i, t in enumerate(self._done):
            if i < settled and t.reported is not None:  # made ahead, and found so since nothing could change it
                out.append(t.reported)
                continue
            r = t.result
            assert r is not None
            depth = depth_of(t.key)
            depth = r.depth if depth is None else depth
            if not t.fragments:  # by far the most common: one result, its references as they are
                if t.refs:  # (none: adopted, and no link ever named it)
                    made = None if t.reported is None else _still_so(t, depth)  # (a crawl makes none ahead)
                    out.append(with_refs(r, view(t.refs, t.url), depth) if made is None else made)
                continue
            broken = t.broken_fragments if r.status.is_ok else {}
            rest = self._all_refs(t, broken)
            if rest:  # (none when every link to it asks for a fragment it lacks: those are the broken ones below)
                out.append(with_refs(r, rest, depth))
            if broken:
                asked = t.fragment_refs()
                for fragment in sorted(broken):
                    out.append(with_refs(broken[fragment], view(asked[fragment], t.url), depth))
        return tuple(out)

    def prepare(self, depth_of: DepthOf, most: int) -> list[Result] | None:
        """Make ahead, for up to `most` more targets with a result, the result the report will give them, so
        that results() only checks it is still so: work done while the run waits on answers instead of after
        its last. The results made (a report format may make their text too); None once every target with a
        result so far is done."""
        view = self.references.view
        done = self._done
        if self._ahead >= len(done):
            return None
        end = min(len(done), self._ahead + most)
        made = []
        for t in done[self._ahead : end]:
            if t.refs and not t.fragments:
                r = t.result
                assert r is not None
                depth = depth_of(t.key)
                t.reported = with_refs(r, view(t.refs, t.url), r.depth if depth is None else depth)
                made.append(t.reported)
        self._ahead = end
        return made

    def settle(self, depth_of: DepthOf, most: int) -> bool:
        """For a run to which no reference will be added any more and no depth lowered (a list whose inputs are
        all read): check up to `most` more results made ahead against their target's depth and references, so
        that results() takes each as it is (one that changed is made again there, as is one checked again).
        False once every result made so far is checked."""
        end = min(self._ahead, self._settled + most)
        if end <= self._settled:
            return False
        for t in self._done[self._settled : end]:
            if t.reported is not None:
                r = t.result
                assert r is not None
                depth = depth_of(t.key)
                t.reported = _still_so(t, r.depth if depth is None else depth)
        self._settled = end
        return True

    def report(
        self,
        pages: Sequence[Page],
        elapsed: float,
        interrupted: bool,
        caps: tuple[str, ...],
        depth_of: DepthOf,
        warnings: tuple[str, ...] = (),
    ) -> Report:
        if not interrupted:
            self._settle_loops()
        held, self._held = self._held, []
        for target in held:
            assert target.result is not None
            self._emit_own(target, target.result)
        results = self.results(depth_of)
        return Report(results, summarize(results, len(pages), elapsed, interrupted, caps, warnings), pages)


def location_verdict(result: Result, anchors: Anchors | None) -> Result:
    """result, judged by the #fragment its redirect's Locations left in effect (named_by_location): a browser
    scrolls to that one, whatever fragment the link had (RFC 9110 10.2.2). Missing from the end's anchors, the
    link is broken; with no anchors known (not HTML or Markdown, or no body read) it is not judged."""
    fragment = named_by_location(result.redirects) if result.redirects and result.status.is_ok else None
    if fragment is None or anchors is None or anchors.has(fragment):
        return result
    return Result(result.url, Status.BROKEN, result.code, f"no anchor #{fragment} (named by the redirect's Location)",
                  result.redirects, result.elapsed, result.depth, result.content_type, result.references, result.cached,
                  result.redirect_codes)


def _still_so(t: Target, depth: int | None) -> Result | None:
    """t's result made ahead, if it still has the target's depth and references (else None: made again)."""
    made = t.reported
    return made if made is not None and made.depth == depth and len(made.references) == len(t.refs) else None


def _with_url(r: Result, url: str) -> Result:
    return Result(url, r.status, r.code, r.reason, r.redirects, r.elapsed, r.depth, r.content_type, r.references,
                  r.cached, r.redirect_codes)


def with_refs(r: Result, references: Sequence[Reference], depth: int | None = None) -> Result:
    """dataclasses.replace(r, references=..., depth=...), spelled out: a third of the cost, once per URL. A URL
    no input leads to (a sitemap's orphan) is shown at depth 0, as the entries of a sitemap given as input are."""
    depth = r.depth if depth is None else depth
    if depth == UNREACHED:
        depth = 0
    return Result(r.url, r.status, r.code, r.reason, r.redirects, r.elapsed, depth, r.content_type, references,
                  r.cached, r.redirect_codes)
