"""One HTTP(S) link -> one outcome: retries with backoff, HEAD->GET fallback, accepted codes, errors as results."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import NamedTuple

from .client import (
    Headers,
    HopRefused,
    HopTimeout,
    HttpClient,
    KnownTarget,
    NetworkError,
    Pause,
    RedirectError,
    Response,
)
from .filters import AddressExcluded
from .host_pool import HostPool
from .settings import Settings, StatusRule
from .status import Status
from .urls import host_of

# Servers that refuse or mishandle HEAD answer with these; the same URL is then asked with GET.
HEAD_REFUSED = frozenset({400, 403, 405, 406, 501})
RETRY_CODES = frozenset({429, 500, 502, 503, 504})
_PHRASES = {s.value: s.phrase for s in HTTPStatus}
# LinkedIn answers 999 to clients it takes for bots; nobody can tell from here whether the page exists.
BOT_CODES = frozenset({999})
BODY_CUT = "body cut at --max-body-size"
# Answers that may mean more than their code: a retry, a wait, a HEAD->GET fallback, bot protection. Any other
# code is judged by the code alone (and a spent rate-limit window), on a shorter path.
_SECOND_LOOK = RETRY_CODES | HEAD_REFUSED | BOT_CODES | {403, 429, 503}
# Enum members read once: on Python 3.11 every Status.X goes through EnumType's __getattr__ hook (~0.2 µs).
_OK, _BROKEN = Status.OK, Status.BROKEN


class Outcome(NamedTuple):
    """What checking one URL produced: the verdict, and the response it came from (if any)."""

    status: Status
    code: int | None
    reason: str
    redirects: tuple[str, ...]
    elapsed: float
    response: Response | None = None
    same_as: str = ""  # a redirect reached this URL, checked on its own: its result is this one's
    redirect_codes: tuple[int, ...] = ()  # the status of each redirect
    unanswered: bool = False  # a network error or timeout: the URL asked last gave no answer (redirects' last)


class CheckPolicy(NamedTuple):
    accept: frozenset[int]
    max_retries: int
    retry_backoff: float
    max_retry_wait: float
    status_rules: tuple[StatusRule, ...] = ()  # --accept-for / [[status]]: more codes for some URLs
    timeout: float | None = None  # seconds per request, named in the reason of a timeout

    @classmethod
    def from_settings(cls, s: Settings) -> CheckPolicy:
        return cls(s.accept, s.max_retries, s.retry_backoff, s.max_retry_wait, s.status_rules, s.timeout)

    def accepted(self, url: str) -> frozenset[int]:
        """The accepted codes for url: --accept plus those of every status rule that finds it."""
        extra = [r.accept for r in self.status_rules if r.pattern.search(url)]
        return self.accept.union(*extra) if extra else self.accept


class HttpChecker:
    def __init__(self, client: HttpClient, pool: HostPool, policy: CheckPolicy) -> None:
        self._client = client
        self._pool = pool
        self._policy = policy
        self.stopping = False  # the run is stopping (stop(), a first Ctrl+C): no retry starts, none waits on

    async def check(
        self,
        url: str,
        method: str,
        want_body: Callable[[str], bool],
        host: str = "",
        known: Callable[[str], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        gated: bool = False,
        page: bool = False,
        pause: Pause | None = None,
        max_body: int | None = None,
        anchored: Callable[[str], bool] | None = None,
        slot: str | None = None,
    ) -> Outcome:
        """Check url with method ("GET" or "HEAD"), with headers on every request (a conditional check); the
        caller holds the slot of its host (host_of(url)). A redirect to a URL known() is not followed. Every
        request past the first (hops, retries, GET after HEAD) waits for a token of its host (the client's
        gate), and so does the first when gated (the caller holds another host's slot, or none); page: a page
        to crawl, whose redirect robots.txt must allow. pause(seconds) waits before a retry and for a token at the
        gate (asyncio.sleep when not given; a claim's gives its global slot to other hosts meanwhile). max_body:
        the body's cap when not --max-body-size's (robots.txt has its own). anchored: the end's body, read when a
        redirect's Location names a #fragment (HttpClient.fetch). slot: the host whose slot the caller was given
        for this check ("": none), moved by the gate to each request's host (None: a check others wait for in
        their slots, robots.txt's or a soft-404 probe, whose requests take tokens only: HopGate)."""
        policy = self._policy
        wait_out = pause or asyncio.sleep
        accept = policy.accepted(url) if policy.status_rules else policy.accept
        host = host or host_of(url)
        started = time.monotonic()
        attempt = 0
        chain: tuple[str, ...] = ()  # a retry asks again from the hop that failed, not from url: (its chain, codes)
        codes: tuple[int, ...] = ()
        while True:
            t0 = time.monotonic()
            this_gated, gated = gated, True  # (only the first request may be the one the caller's slot is for)
            try:
                if chain:
                    resp = await self._client.resume(url, chain, codes, method, want_body, known, headers, page,
                                                     pause, max_body, anchored, slot)
                else:
                    resp = await self._client.fetch(url, method, want_body, known, headers, this_gated, page, pause,
                                                    max_body, anchored, slot)
            except TimeoutError as e:
                self._pool.record(host, None, time.monotonic() - t0)
                chain, codes = (e.chain, e.codes) if isinstance(e, HopTimeout) else ((), ())
                if self._retries(attempt):
                    attempt += 1
                    await wait_out(self._backoff(attempt))
                    if not self.stopping:
                        continue
                return Outcome(Status.TIMEOUT, None, timed_out(policy.timeout), chain, time.monotonic() - started,
                               None, "", codes, True)
            except KnownTarget as e:
                return Outcome(Status.OK, None, "", e.chain, time.monotonic() - started, None, e.url, e.codes)
            except HopRefused as e:  # (a page's redirect to where robots.txt keeps the crawl from: not asked)
                return Outcome(Status.SKIPPED, None, str(e), e.chain, time.monotonic() - started)
            except RedirectError as e:
                return Outcome(Status.ERROR, None, str(e), e.chain, time.monotonic() - started)
            except AddressExcluded as e:  # --exclude-private and friends: never connected
                return Outcome(Status.EXCLUDED, None, e.reason, e.chain, time.monotonic() - started)
            except NetworkError as e:
                self._pool.record(host, None, time.monotonic() - t0)
                if e.transient and self._retries(attempt):
                    attempt += 1
                    chain, codes = e.chain, e.codes
                    await wait_out(self._backoff(attempt))
                    if not self.stopping:
                        continue
                return Outcome(Status.ERROR, None, e.reason, e.chain, time.monotonic() - started, None, "", e.codes,
                               True)
            code = resp.status
            if code not in _SECOND_LOOK:  # most answers: 2xx, 404 and the like
                self._pool.record(host, code, time.monotonic() - t0, pause=rate_limit_reset(resp.headers, code))
                return self._plain_verdict(resp, accept, time.monotonic() - started)
            retry_after = parse_retry_after(resp.headers.get("Retry-After"))
            reset = rate_limit_reset(resp.headers, code)  # the window's end, when the answer says it is spent
            if code in (429, 503):
                self._pool.record(host, code, time.monotonic() - t0, retry_after if retry_after is not None else reset)
                retry_after = retry_after if retry_after is not None else reset
            else:
                self._pool.record(host, code, time.monotonic() - t0, pause=reset)
            if code not in accept and bot_protection(resp) is not None:
                return self._verdict(resp, accept, time.monotonic() - started)  # asking again won't get past it
            if method == "HEAD" and code in HEAD_REFUSED and not (anchored and _has_fragment(resp.redirects)):
                method = "GET"  # not a retry: the server may only refuse HEAD
                chain, codes = resp.redirects, resp.redirect_codes
                continue
            if code in RETRY_CODES and code not in accept and self._retries(attempt):
                attempt += 1
                chain, codes = resp.redirects, resp.redirect_codes
                wait = self._backoff(attempt) if retry_after is None else retry_after
                await wait_out(min(wait, policy.max_retry_wait))
                if not self.stopping:
                    continue
            return self._verdict(resp, accept, time.monotonic() - started)

    @staticmethod
    def _plain_verdict(resp: Response, accept: frozenset[int], elapsed: float) -> Outcome:
        """_verdict of an answer whose code needs no second look (not in _SECOND_LOOK)."""
        code = resp.status
        if code in accept:
            status, reason = _OK, BODY_CUT if resp.truncated else _reason(code)
        else:
            status, reason = _BROKEN, _reason(code)
        return Outcome(status, code, reason, resp.redirects, elapsed, resp, "", resp.redirect_codes)

    def _verdict(self, resp: Response, accept: frozenset[int], elapsed: float) -> Outcome:
        code = resp.status
        blocked = bot_protection(resp)
        reason = _reason(code)
        if code in accept:
            status = Status.OK
        elif blocked is not None:
            status, reason = Status.BLOCKED, blocked
        elif code == 429:
            status = Status.RATE_LIMITED
            wait = parse_retry_after(resp.headers.get("Retry-After"))
            if wait is not None:  # how long the server asked for: whether a slower run would get through
                reason += f" (Retry-After {wait:.0f} s)"
        else:
            status = Status.BROKEN
        if resp.truncated and status is Status.OK:
            reason = BODY_CUT
        return Outcome(status, code, reason, resp.redirects, elapsed, resp, "", resp.redirect_codes)

    def _retries(self, attempt: int) -> bool:
        """Whether a check that failed `attempt` retries in asks again (unless the run stops meanwhile)."""
        return attempt < self._policy.max_retries and not self.stopping

    def _backoff(self, attempt: int) -> float:
        import random  # here: most runs never retry

        base = self._policy.retry_backoff * 2.0 ** (attempt - 1)
        return min(self._policy.max_retry_wait, base * random.uniform(0.5, 1.5))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date. None if absent or bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # an HTTP-date: rare, and email.utils is slow to load

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def bot_protection(resp: Response) -> str | None:
    """Why the answer is bot protection rather than the page (a Cloudflare challenge, LinkedIn's 999), or None."""
    if resp.status in BOT_CODES:
        return "bot protection"
    if resp.status in (403, 503) and (resp.headers.get("cf-mitigated") or "").strip().lower() == "challenge":
        return "bot protection (Cloudflare challenge)"
    return None


def rate_limit_reset(headers: Headers, code: int) -> float | None:
    """Seconds until a rate-limit window resets, from RateLimit-Reset / X-RateLimit-Reset, when the answer is a
    429 or 503, or says no requests remain (RateLimit-Remaining: 0). The reset is delta-seconds, or an epoch
    time when larger than a day (the X- headers of GitHub and others)."""
    remaining = headers.get("RateLimit-Remaining") or headers.get("X-RateLimit-Remaining")
    if code not in (429, 503) and (remaining is None or remaining.strip() != "0"):
        return None
    value = headers.get("RateLimit-Reset") or headers.get("X-RateLimit-Reset")
    if value is None:
        return None
    try:
        reset = float(value.strip().split(",")[0].split(";")[0])
    except ValueError:
        return None
    if reset > 86400:
        reset -= time.time()
    return max(0.0, reset)


def timed_out(seconds: float | None) -> str:
    """A timeout's reason: "timed out after 20 s"."""
    return "timed out" if seconds is None else f"timed out after {seconds:g} s"


def _has_fragment(redirects: tuple[str, ...]) -> bool:
    """Whether a Location of the chain named a #fragment: the client asked from there with GET (anchored)."""
    return any("#" in url for url in redirects)


def _reason(code: int) -> str:
    return _PHRASES.get(code) or f"HTTP {code}"
