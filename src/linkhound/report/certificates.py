"""The --tls-expiry part of a report: every HTTPS host's certificate expiry, in the forms the formats share."""

from __future__ import annotations

from ..summary import Summary
from ..types import Certificate
from .common import printable


def certificate_record(c: Certificate) -> dict[str, object]:
    return {"host": c.host, "expires": c.expires, "days_left": c.days_left, "expiring": c.expiring}


def when(c: Certificate) -> str:
    """"2026-12-22 (in 21 days)", "2026-11-01 (expired 30 days ago)"."""
    day = c.expires[:10]
    if c.days_left < 0:
        return f"{day} (expired {days(-c.days_left)} ago)"
    return f"{day} (in {days(c.days_left)})"


def days(n: int) -> str:
    return f"{n} day{'' if n == 1 else 's'}"


NONE_READ = "no HTTPS host answered"  # (--tls-expiry, and no certificate read: said so, not an empty table)


def certificate_lines(summary: Summary) -> list[str]:
    """A text block listing every certificate read, expiring ones marked; nothing when none was checked."""
    if summary.certificates is None:
        return []
    if not summary.certificates:
        return [f"TLS certificates: {NONE_READ}"]
    lines = ["TLS certificates:"]
    for c in summary.certificates:
        mark = "  ! " if c.expiring else "    "
        lines.append(f"{mark}{printable(c.host)} expires {when(c)}")
    return lines


def certificate_rows(summary: Summary) -> list[tuple[str, str, str]]:
    """(host, expiry, "expiring" or "") per certificate, for the formats that make a table of them."""
    return [(c.host, when(c), "expiring" if c.expiring else "") for c in summary.certificates or ()]
