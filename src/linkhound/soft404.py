"""Soft 404s (--soft-404): pages that answer 200 with a "not found" page.

Per origin (scheme://host[:port]) linkhound asks once for a path that can't exist. A real 404 there means the
host has no soft 404s, and nothing more is done for it. A 200 page means it has: a second such path is asked,
and when the two answers agree, their text is the origin's "not found" fingerprint. A checked HTML page whose
title is the fingerprint's and whose text shares almost all its word shingles with it is a soft 404. Words of
the requested path are left out on both sides, since not-found pages often echo it. A host whose unknown paths
all redirect to one landing page makes any link redirected there a soft 404 instead.

A page that only shares the site's layout differs in its content, and with it in the title or in enough
shingles; a "not found" page with almost no text (an app shell filled in by script) can't be told from a
page at all, so nothing on that host is judged, and the run says so.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urlsplit

from .status import Status
from .urls import host_of

if TYPE_CHECKING:
    from .checker import HttpChecker, Outcome
    from .host_pool import HostPool
    from .robots import Robots

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SAME = 0.9  # the share of word shingles two bodies must have in common to be the same page
MIN_WORDS = 4  # a not-found page with fewer words of text is not a fingerprint worth trusting
_SHINGLE = 3
_WORD = re.compile(r"\w+")
# the words of a page's text compared at most (a not-found page has a few hundred): a page of megabytes of text
# is judged by its first ones, and costs a bounded list of words and shingles (a 30 MB page's took ~280 MB)
MOST_WORDS = 20_000


def is_html(ctype: str) -> bool:
    return ctype in HTML_TYPES


class Fingerprint(NamedTuple):
    title: tuple[str, ...]  # the words of the title, lower-case
    words: tuple[str, ...]  # the words of the visible text, lower-case, in order

    def without(self, drop: frozenset[str]) -> Fingerprint:
        """Without the words of a requested path, which not-found pages often echo."""
        if not drop:
            return self
        return Fingerprint(tuple(w for w in self.title if w not in drop), tuple(w for w in self.words if w not in drop))


class ProbeAnswer(NamedTuple):
    """A never-existing URL's 200 HTML answer."""

    final: str  # after redirects
    redirected: bool
    body: bytes


class Profile(NamedTuple):
    """What an origin's unknown paths answer, as far as soft 404s go."""

    origin: str
    probe: str = ""  # the first never-existing URL asked
    fingerprint: Fingerprint | None = None  # its page, when unknown paths answer 200 with a stable page
    landing: str = ""  # where unknown paths redirect, when they all go to one page
    vocabulary: frozenset[str] = frozenset()  # the fingerprint's words, title included
    shingles: frozenset[tuple[str, ...]] = frozenset()  # the fingerprint's, computed once
    note: str = ""  # why the origin's pages can't be judged ("" when they can, or there is nothing to judge)


def fingerprint(body: bytes, url: str) -> Fingerprint:
    """The words of an HTML body's title and visible text, without those of url's path."""
    from selectolax.lexbor import LexborHTMLParser  # loaded only for a run with --soft-404

    tree = LexborHTMLParser(body)
    node = tree.css_first("title")
    title = node.text() if node is not None else ""
    for hidden in tree.css("script, style, noscript, template, title"):
        hidden.decompose()
    root = tree.body or tree.root
    text = root.text(separator=" ") if root is not None else ""
    del tree, root, node  # (the text is all that is needed now)
    words = tuple(m.group().lower() for m in itertools.islice(_WORD.finditer(text), MOST_WORDS))
    return Fingerprint(tuple(_WORD.findall(title.lower())), words).without(path_words(url))


def path_words(url: str) -> frozenset[str]:
    return frozenset(_WORD.findall(unquote(urlsplit(url).path).lower()))


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    """Jaccard similarity of two texts' word shingles (1.0 for two empty texts)."""
    return jaccard(_shingles(a.words), _shingles(b.words))


def jaccard(sa: frozenset[tuple[str, ...]], sb: frozenset[tuple[str, ...]], at_least: float = 0.0) -> float:
    """|sa & sb| / |sa | sb|; 0.0 without intersecting the sets when their sizes alone keep it under at_least."""
    if not sa and not sb:
        return 1.0
    small, large = sorted((len(sa), len(sb)))
    if small < at_least * large:  # the share can't be more than small / large
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _shingles(words: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    n = min(_SHINGLE, len(words)) or 1
    return frozenset(words[i : i + n] for i in range(len(words) - n + 1))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class SoftNotFound:
    """Judges checked pages against what their origin's unknown paths answer. One probe per origin, shared
    by every page of it, however many ask at once."""

    def __init__(self, checker: HttpChecker, pool: HostPool, robots: Robots | None = None) -> None:
        self._checker = checker
        self._pool = pool  # a probe is made within the slot of the page that asked, but takes a token of its own
        self._robots = robots  # a crawl's: its probes are paths like any other, which robots.txt may disallow
        self._profiles: dict[str, asyncio.Future[Profile]] = {}
        self.probes = 0  # requests made for probes

    async def judge(self, url: str, host: str, outcome: Outcome) -> Outcome:
        """outcome, or a SOFT_404 one when its 200 HTML answer is the origin's not-found page."""
        response = outcome.response
        if outcome.status is not Status.OK or response is None or response.status >= 300:
            return outcome
        if not is_html(response.content_type):
            return outcome
        origin = origin_of(response.url)  # whose not-found page it would be: the host that answered
        redirected = bool(response.redirects) and origin_of(url) == origin
        profile = await self.profile(origin, host if origin == origin_of(url) else host_of(response.url))
        reason = _matches(profile, response.url, response.body, redirected)
        if reason is None:
            return outcome
        return outcome._replace(status=Status.SOFT_404, reason=reason)

    async def redirected(self, url: str, host: str, outcome: Outcome) -> Outcome:
        """outcome of a redirect to a URL the run checks on its own (its result is reused), or a SOFT_404 one
        when that URL is where its origin sends every unknown path."""
        origin = origin_of(url)
        if not outcome.same_as or origin_of(outcome.same_as) != origin:
            return outcome
        profile = await self.profile(origin, host)
        if profile.landing != outcome.same_as:
            return outcome
        return outcome._replace(status=Status.SOFT_404, reason=_landed(profile), same_as="")

    async def profile(self, origin: str, host: str) -> Profile:
        future = self._profiles.get(origin)
        if future is None:
            future = self._profiles[origin] = asyncio.ensure_future(self._learn(origin, host))
        return await asyncio.shield(future)

    async def close(self) -> None:
        """Probes nobody waits for any more (a cancelled run) end with it."""
        pending = [f for f in self._profiles.values() if not f.done()]
        for future in pending:
            future.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def notes(self) -> list[str]:
        """One warning per origin whose pages could not be judged."""
        done = (f.result() for f in self._profiles.values() if f.done() and not f.cancelled() and not f.exception())
        return sorted(f"soft 404s not checked on {p.origin}: {p.note}" for p in done if p.note)

    async def _learn(self, origin: str, host: str) -> Profile:
        try:
            return await self._learn_from_probes(origin, host)
        except Exception as e:  # a bug must not fail every page of the host: they go unjudged, and the run says why
            return Profile(origin, note=f"internal error: {e!r}")

    async def _learn_from_probes(self, origin: str, host: str) -> Profile:
        first, second = f"{origin}/{_token()}", f"{origin}/{_token()}/{_token()}.html"
        for probe in (first, second):
            if self._robots is None:
                break
            allowed, why = await self._robots.allowed(probe, in_slot=True)  # (the page that asked holds a slot)
            if not allowed:
                return Profile(origin, first, note=f"robots.txt keeps crawlers off paths such as {probe} ({why})")
        answer = await self._probe(first, host)
        if answer is None:
            return Profile(origin, first)  # a real 404 (or no answer): this origin has no soft 404s
        again = await self._probe(second, host)
        if again is None:
            return Profile(origin, first, note=f"{first} answered 200 but {second} did not")
        if answer.redirected or again.redirected:
            if answer.redirected and again.redirected and answer.final == again.final:
                return Profile(origin, first, landing=answer.final)
            return Profile(origin, first, note="unknown paths redirect to different pages")
        a, b = fingerprint(answer.body, first), fingerprint(again.body, second)
        if len(a.words) < MIN_WORDS:
            return Profile(origin, first, note=f"unknown paths answer 200 with a page of almost no text ({first})")
        if a.title != b.title or similarity(a, b) < SAME:
            return Profile(origin, first, note="unknown paths answer 200 with pages that differ from each other")
        return Profile(origin, first, a, vocabulary=frozenset(a.words + a.title), shingles=_shingles(a.words))

    async def _probe(self, url: str, host: str) -> ProbeAnswer | None:
        """A never-existing URL's answer when it is 200 with HTML; None for anything else (a real 404, an
        error, another type)."""
        self.probes += 1
        while (wait := self._pool.try_token(host)) > 0:
            await asyncio.sleep(wait)
        outcome = await self._checker.check(url, "GET", is_html, host)
        response = outcome.response
        if outcome.status is not Status.OK or response is None or response.status >= 300:
            return None
        if not is_html(response.content_type) or response.body is None:
            return None
        return ProbeAnswer(response.url, bool(response.redirects), response.body)


def _matches(profile: Profile, final: str, body: bytes | None, redirected: bool) -> str | None:
    """The evidence that a page is its origin's not-found page, or None when it isn't."""
    if profile.landing:
        if redirected and final == profile.landing:
            return _landed(profile)
        return None
    expected = profile.fingerprint
    if expected is None or body is None:
        return None
    echoed = path_words(final)
    if echoed.isdisjoint(profile.vocabulary):  # the common case: the not-found page has none of the path's words
        expected_shingles = profile.shingles
    else:  # the words of neither path, on both sides
        expected = expected.without(echoed)
        expected_shingles = _shingles(expected.words)
    page = fingerprint(body, final)
    if page.title != expected.title:
        return None
    share = jaccard(_shingles(page.words), expected_shingles, SAME)
    if share < SAME:
        return None
    title = f"title '{' '.join(expected.title)}', " if expected.title else ""
    return f"soft 404: answers as {profile.probe} does ({title}{share:.0%} of its text)"


def _landed(profile: Profile) -> str:
    return f"soft 404: redirected to {profile.landing}, where unknown paths like {profile.probe} go"


def _token() -> str:
    import secrets  # (with hmac and hashlib: ~2 ms to load, only when a host is probed)

    return "lh" + secrets.token_hex(8)
