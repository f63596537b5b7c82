"""The closed set of outcomes a checked link can have."""

from __future__ import annotations

from enum import Enum


class Status(Enum):
    """What happened to one link. The HTTP code, when there is one, lives on the Result."""

    OK = "ok"
    BROKEN = "broken"  # the target answered, and the answer is a failure (404, missing file, no anchor)
    SOFT_404 = "soft_404"  # answered 200 with its host's "not found" page (--soft-404)
    ERROR = "error"  # no usable answer: DNS, refused, reset, TLS, bad body
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"  # still 429 after every retry
    BLOCKED = "blocked"  # bot protection (Cloudflare challenge, LinkedIn 999)
    EXCLUDED = "excluded"  # a user filter said not to check it
    UNSUPPORTED = "unsupported"  # a scheme linkhound does not check (javascript:, data:, tel:, ftp:)
    SKIPPED = "skipped"  # not checked for politeness or by request: robots.txt, --offline

    # Members are singletons compared by identity: hashed by it too, in C, not by Enum's hash of the name in
    # Python (statuses are counted and looked up in sets once per result)
    __hash__ = object.__hash__

    @property
    def is_ok(self) -> bool:
        return self is Status.OK

    @property
    def is_broken(self) -> bool:
        """True for outcomes that fail a run."""
        return self in _BROKEN

    @property
    def is_skipped(self) -> bool:
        """True for links that were deliberately not checked."""
        return self in _SKIPPED


_BROKEN = frozenset({Status.BROKEN, Status.SOFT_404, Status.ERROR, Status.TIMEOUT, Status.RATE_LIMITED})
_SKIPPED = frozenset({Status.EXCLUDED, Status.UNSUPPORTED, Status.SKIPPED})
