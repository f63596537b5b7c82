"""robots.txt: fetched once per origin (concurrent askers share the fetch), cached for the run.

Per RFC 9309: a 4xx robots.txt allows everything, and so does one past too many redirects (unavailable); a 5xx
or unreachable one disallows crawling that origin. The request is a check like the others (retries with
backoff, Retry-After obeyed: a 503 for a moment is not an answer for the run); linkhound then decides once per
run and doesn't ask again. A group is ours when its User-agent line is the product token of the User-Agent sent
("linkhound", or the first word of --user-agent), case aside, and the whole of it: RFC 9309 2.2.1 (protego, which
reads the rules, would take `User-agent: link` for linkhound); else the `*` group; else none (all allowed).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from .checker import HttpChecker
from .host_pool import HostPool
from .status import Status
from .urls import host_of, origin_of
from .version import agent_token

_ROBOTS_MAX = 512 * 1024  # RFC 9309 asks crawlers to parse at least 500 KiB
_AT_CAP = 0.02  # seconds between asks for a slot of a host at its cap (no one tells when one frees)
# a User-agent line as protego reads one: "User-agent: x", "User agent: x", "useragent x", ... (no comment)
_AGENT_LINE = re.compile(r"user[- ]?agent\s*[:\s]\s*(.*)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    parser: object | None  # protego.Protego; None: allow all
    disallow_all: bool = False
    reason: str = ""
    sitemaps: tuple[str, ...] = ()  # its Sitemap: lines
    group: str = "*"  # the name protego is asked by: our product token (lower case) or "*" (group_of)

    def allows(self, url: str) -> bool:
        if self.disallow_all:
            return False
        return self.parser is None or bool(self.parser.can_fetch(url, self.group))  # type: ignore[attr-defined]


def group_of(text: str, token: str) -> str | None:
    """The group of robots.txt text that applies to the product token: token (lower case) when a User-agent line
    names it, case aside (RFC 9309 2.2.1: the token, not a prefix of it nor a word in it; protego's reading of
    `linkhound*` as `linkhound` is kept); else "*" when a line names that; else None (no group: all allowed).
    Asked by that name, protego picks the same group: the longest of its names found in the one asked."""
    token = token.lower()
    star = False
    for line in text.splitlines():
        m = _AGENT_LINE.match(line.split("#", 1)[0].strip())
        if m is None:
            continue
        name = m.group(1).strip().lower()
        if name.replace("*", "") == token:
            return token
        star = star or name == "*"
    return "*" if star else None


class Robots:
    def __init__(self, checker: HttpChecker, pool: HostPool, user_agent: str = "") -> None:
        self._checker = checker
        self._pool = pool
        self._agent = agent_token(user_agent)
        self._rules: dict[str, asyncio.Future[RobotsRules]] = {}
        self._lent: dict[str, int] = {}  # origin -> askers waiting in a slot of its host, idle until answered
        self.fetched = 0

    async def allowed(self, url: str, in_slot: bool = False) -> tuple[bool, str]:
        """(allowed, reason when not). in_slot: the asker holds one of the host's slots for a request that waits
        for this answer (robots.txt may be read within it)."""
        rules = await self._rules_of(url, in_slot)
        if rules.allows(url):
            return True, ""
        return False, rules.reason or "disallowed by robots.txt"

    async def sitemaps(self, url: str) -> tuple[str, ...] | None:
        """The Sitemap: lines of the robots.txt of url's origin (the same fetch the crawl's rules come from);
        None when that robots.txt keeps the crawl off the host."""
        rules = await self._rules_of(url)
        return None if rules.disallow_all else rules.sitemaps

    async def _rules_of(self, url: str, in_slot: bool = False) -> RobotsRules:
        origin = origin_of(url)
        if in_slot:
            self._lent[origin] = self._lent.get(origin, 0) + 1
        try:
            future = self._rules.get(origin)
            if future is None:
                future = self._rules[origin] = asyncio.get_running_loop().create_future()
                rules = RobotsRules(None)  # what waiters get if this fetch dies (cancelled, or a bug)
                try:
                    rules = await self._fetch(origin, host_of(url))
                finally:
                    future.set_result(rules)
            return await future
        finally:
            if in_slot:
                self._lent[origin] -= 1

    def answered(self, url: str) -> bool:
        """Whether the robots.txt of url's origin has been read (asking for it now waits for nothing)."""
        future = self._rules.get(origin_of(url))
        return future is not None and future.done()

    def off_limits(self, url: str) -> bool:
        """Whether url's whole host is off limits because its robots.txt failed (5xx or no answer)."""
        future = self._rules.get(origin_of(url))
        return future is not None and future.done() and future.result().disallow_all

    def warnings(self) -> list[str]:
        """One line per host whose robots.txt kept the crawl off it entirely."""
        return [
            f"{origin}/robots.txt: {f.result().reason}"
            for origin, f in sorted(self._rules.items())
            if f.done() and f.result().disallow_all
        ]

    async def _fetch(self, origin: str, host: str) -> RobotsRules:
        self.fetched += 1
        own = await self._slot(origin, host)
        try:
            # read up to _ROBOTS_MAX whatever --max-body-size is: a smaller cap would lose the rules past it
            outcome = await self._checker.check(f"{origin}/robots.txt", "GET", lambda ctype: True, host,
                                                max_body=_ROBOTS_MAX)
        finally:
            if own:
                self._pool.release(host)  # (the pool tells the scheduler, which may have parked the host)
        resp = outcome.response
        if resp is None:
            if outcome.status is Status.ERROR and outcome.reason.startswith(("redirect loop", "more than")):
                return RobotsRules(None)  # too many redirects: unavailable, as a 4xx is (RFC 9309 2.3.1.2)
            return RobotsRules(None, True, "robots.txt unreachable: not crawling this host")
        if resp.status >= 500:
            return RobotsRules(None, True, f"robots.txt answered {resp.status}: not crawling this host")
        if resp.status >= 400 or resp.body is None:
            return RobotsRules(None)
        from protego import Protego

        from .extract.sitemap import robots_sitemaps

        body = resp.body
        text = body.decode("utf-8-sig", errors="replace")  # (a BOM would hide the first line)
        sitemaps = tuple(robots_sitemaps(body))
        group = group_of(text, self._agent)
        if group is None:
            return RobotsRules(None, sitemaps=sitemaps)
        parser = Protego.parse(text)
        self._apply_rate(parser, host, group)
        return RobotsRules(parser, sitemaps=sitemaps, group=group)

    async def _slot(self, origin: str, host: str) -> bool:
        """Room for the robots.txt request, a request to the host like the others: a token of its rate, and a
        slot of its cap (the other processes of a distributed crawl may have the rest of it in flight; this
        one asks nothing else of the host while it is held for its robots.txt). True when a slot was taken
        here; False when the request goes within the slot of an asker waiting in one for the answer (taking
        another then could wait for ever: for the slots those askers hold)."""
        while not self._lent.get(origin):
            wait = self._pool.try_acquire_holding(host)
            if wait == 0.0:
                return True
            await asyncio.sleep(min(wait, _AT_CAP))
        while (wait := self._pool.try_token(host)) > 0:
            await asyncio.sleep(wait)
        return False

    def _apply_rate(self, parser: object, host: str, group: str) -> None:
        """Crawl-delay and Request-rate (of our group) become the host's rate when stricter than the user's."""
        rates = []
        delay = parser.crawl_delay(group)  # type: ignore[attr-defined]
        if delay:
            rates.append(1.0 / float(delay))
        rr = parser.request_rate(group)  # type: ignore[attr-defined]
        if rr is not None and rr.requests and rr.seconds:
            rates.append(rr.requests / rr.seconds)
        if rates:
            self._pool.slow_down(host, min(rates))

