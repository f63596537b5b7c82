"""Every referrer of every target, and the results: what the report is assembled from."""

from __future__ import annotations

from collections.abc import Callable

from .fragments import Anchors
from .status import Status
from .summary import Report, summarize
from .types import Page, Reference, Result


class Target:
    """Bookkeeping of one unique target (canonical key): who links to it and what came of it."""

    __slots__ = (
        "key", "url", "depth", "crawl", "want_body", "body_asked", "refetched", "children",
        "refs", "fragment_refs", "result", "anchors", "load_anchors", "broken_fragments",
    )

    def __init__(self, key: str, url: str, depth: int) -> None:
        self.key = key
        self.url = url
        self.depth = depth
        self.crawl = False
        self.want_body = False
        self.body_asked = False  # the request made so far asked for the body (GET)
        self.refetched = False
        self.children: list[str] = []  # keys of the pages it links to (kept with --max-depth, for shorter paths)
        self.refs: list[Reference] = []  # references that ask for no fragment (or one not checked)
        self.fragment_refs: dict[str, list[Reference]] = {}  # fragment -> the references that ask for it
        self.result: Result | None = None
        self.anchors: Anchors | None = None
        self.load_anchors: Callable[[], Anchors | None] | None = None  # local files: read on first need
        self.broken_fragments: dict[str, Result] = {}


class Ledger:
    def __init__(self, emit: Callable[[Result | Page], None] | None = None) -> None:
        self._emit = emit
        self._targets: dict[str, Target] = {}
        self._done: list[Target] = []  # in completion order

    def __len__(self) -> int:
        return len(self._targets)

    @property
    def targets(self) -> dict[str, Target]:
        """Every target by key (the engine's fast path for links seen before reads it)."""
        return self._targets

    def get(self, key: str) -> Target | None:
        return self._targets.get(key)

    def target(self, key: str) -> Target:
        return self._targets[key]

    def add(self, key: str, url: str, depth: int, ref: Reference, fragment: str | None) -> Target:
        target = self._targets[key] = Target(key, url, depth)
        self.refer(target, ref, fragment)
        return target

    def refer(self, target: Target, ref: Reference, fragment: str | None) -> None:
        if fragment is None:
            target.refs.append(ref)
            return
        refs = target.fragment_refs.get(fragment)
        if refs is not None:
            refs.append(ref)
            return
        target.fragment_refs[fragment] = [ref]
        if target.result is not None:
            self._check_fragment(target, fragment)

    def adopt(self, key: str, url: str, depth: int, result: Result) -> Target:
        """A target already checked on the way to another (a redirect's end): kept for the links that come
        later, reported only if some link uses it."""
        target = self._targets[key] = Target(key, url, depth)
        target.result = result
        self._done.append(target)
        return target

    def immediate(self, key: str, url: str, ref: Reference, status: Status, reason: str) -> None:
        """A target decided without a request (excluded, unsupported, mailto, invalid)."""
        target = self._targets.get(key)
        if target is None:
            target = self.add(key, url, 0, ref, None)
            self.checked(target, Result(url, status, None, reason))
        else:
            self.refer(target, ref, None)

    def checked(self, target: Target, result: Result) -> None:
        first = target.result is None
        if first or target.result is not None and not target.result.status.is_ok:
            target.result = result
        if first:
            self._done.append(target)
            if self._emit is not None:
                self._emit(_with_refs(result, self._all_refs(target)))
        for fragment in sorted(target.fragment_refs):
            self._check_fragment(target, fragment)

    def _check_fragment(self, target: Target, fragment: str) -> None:
        result = target.result
        if result is None or not result.status.is_ok or fragment in target.broken_fragments:
            return
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
        )
        target.broken_fragments[fragment] = broken
        if self._emit is not None:
            self._emit(_with_refs(broken, self._refs(target, fragment)))

    @staticmethod
    def _refs(target: Target, fragment: str) -> tuple[Reference, ...]:
        return tuple(target.fragment_refs[fragment])

    @staticmethod
    def _all_refs(target: Target, leave_out: dict[str, Result] | None = None) -> tuple[Reference, ...]:
        if not target.fragment_refs:
            return tuple(target.refs)
        refs = list(target.refs)
        for fragment, more in target.fragment_refs.items():
            if not leave_out or fragment not in leave_out:
                refs.extend(more)
        return tuple(refs)

    def results(self) -> tuple[Result, ...]:
        """Final results with every reference: a broken fragment's references move to its own result."""
        out: list[Result] = []
        for t in self._done:
            assert t.result is not None
            if not t.fragment_refs:  # by far the most common: one result, its references as they are
                if t.refs:  # (none: adopted, and no link ever named it)
                    out.append(_with_refs(t.result, tuple(t.refs)))
                continue
            broken = t.broken_fragments if t.result.status.is_ok else {}
            out.append(_with_refs(t.result, self._all_refs(t, broken)))
            for fragment in sorted(broken):
                out.append(_with_refs(broken[fragment], self._refs(t, fragment)))
        return tuple(out)

    def report(self, pages: tuple[Page, ...], elapsed: float, interrupted: bool, caps: tuple[str, ...]) -> Report:
        results = self.results()
        return Report(results, summarize(results, len(pages), elapsed, interrupted, caps), pages)


def _with_refs(r: Result, references: tuple[Reference, ...]) -> Result:
    """dataclasses.replace(r, references=...), spelled out: a third of the cost, once per URL."""
    return Result(r.url, r.status, r.code, r.reason, r.redirects, r.elapsed, r.depth, r.content_type, references)
