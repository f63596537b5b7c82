"""Where a crawled page's redirect leads: an end nobody linked yet is adopted (its body crawled as that page), a
known end gets the plan and the depth the redirect had, and a redirect that reached a URL checked on its own
takes that URL's result (no second request)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .crawl_state import Claim, CrawlState, Found, Plan
from .fetcher import Fetched, Fetcher
from .fragments import named_by_location
from .ledger import Ledger
from .urls import canonical_key, host_of


class Redirects:
    def __init__(
        self,
        state: CrawlState,
        ledger: Ledger,
        fetcher: Fetcher,
        wake: Callable[[str], None],
        recursive: bool,
        in_scope: Callable[[str], bool],  # the crawl's scope (known once the seeds are)
    ):
        self._state = state
        self._ledger = ledger
        self._fetcher = fetcher
        self._wake = wake
        self._recursive = recursive
        self._in_scope = in_scope

    async def page_key(self, claim: Claim, fetched: Fetched) -> str | None:
        """The key whose page the body in hand is, or None when it isn't ours to crawl here: redirected out of
        scope, or to a URL crawled on its own."""
        final = fetched.final
        if final == claim.url:
            return claim.key
        if not self._in_scope(final):
            if claim.depth == 0 and self._recursive:
                self._fetcher.seed_left_scope(claim.url, final)
            return None  # redirected out of scope: its links are not ours to check
        end = self._end(claim, final, self._recursive, False)
        if fetched.page is None:  # no body to crawl here: the end is crawled on its own
            for queued in await self._state.add([end], claim.key, hop=0):
                self._fetcher.prepare(queued, self._wake)
            return None
        if not await self._state.adopt(end, claim.key):
            self.before_page(end)
            return None  # a page known on its own: crawled once, for itself
        adopted = dataclasses.replace(fetched.result, url=final, redirects=(), redirect_codes=())
        self._ledger.adopt(end.key, final, adopted, fetched.anchors)
        return end.key

    async def same_as(self, claim: Claim, fetched: Fetched) -> None:
        """A redirect reached a URL checked on its own (invariant 1: no second request): its result, when it has
        one, is this one's. The plan this claim had passes on to it (a page's redirect crawls the end)."""
        crawl = claim.plan is Plan.PAGE and self._recursive and self._in_scope(fetched.same_as)
        if claim.plan is Plan.PAGE and self._recursive and not crawl and claim.depth == 0:
            self._fetcher.seed_left_scope(claim.url, fetched.same_as)
        # its anchors are wanted for a #fragment a link asks, or one the redirect's Location named (the browser's)
        body = claim.plan >= Plan.BODY or named_by_location(fetched.result.redirects) is not None
        end = self._end(claim, fetched.same_as, crawl, body)
        await self._state.adopt(end, claim.key)  # known: an add, with the edge of no length
        self.before_page(end)
        self._ledger.same_as(claim.key, end.key, fetched.result)

    def before_page(self, found: Found) -> None:
        """A page that may now be crawled: its host's robots.txt is read first (once per host)."""
        if found.crawl:
            page = Claim(found.key, found.url, found.host, found.depth, Plan.PAGE, False)
            self._fetcher.prepare(page, self._wake)

    def _end(self, claim: Claim, url: str, crawl: bool, body: bool) -> Found:
        """The redirect's end, at the redirect's depth now (maybe shorter than when it was claimed)."""
        depth = self._state.depth(claim.key)
        return Found(canonical_key(url), url, host_of(url), claim.depth if depth is None else depth, crawl, body)
