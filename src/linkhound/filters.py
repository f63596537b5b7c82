"""Address filters: which IP addresses --exclude-private, --exclude-loopback and --exclude-link-local keep out.

A literal address in a URL is judged before any request (LinkRules.skip, and each redirect hop); a host name
is judged by the addresses it resolves to, at connection time (the client's resolver).
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
# 0.0.0.0/8 and :: reach this machine when connected to, so they count as loopback.
_LOOPBACK = tuple(ipaddress.ip_network(n) for n in ("127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128"))
_LINK_LOCAL = tuple(ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10"))


def address_kind(ip: IPAddress) -> str | None:
    """"private", "loopback" or "link-local" for addresses of those kinds, None for the rest."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    for kind, nets in (("loopback", _LOOPBACK), ("link-local", _LINK_LOCAL), ("private", _PRIVATE)):
        if any(ip in net for net in nets):
            return kind
    return None


def parse_ip(host: str) -> IPAddress | None:
    """The address of a literal host ("127.0.0.1", "[::1]"), None for a name."""
    try:
        return ipaddress.ip_address(host[1:-1] if host.startswith("[") and host.endswith("]") else host)
    except ValueError:
        return None


class AddressExcluded(OSError):
    """A host that is, or resolves only to, addresses the filters exclude. It becomes an `excluded` result.

    An OSError so that aiohttp, when the resolver raises it, wraps it like any failed lookup.
    """

    def __init__(self, host: str, kind: str, address: str, *, literal: bool, chain: tuple[str, ...] = ()) -> None:
        self.host = host
        self.kind = kind
        self.address = address
        self.literal = literal
        self.chain = chain  # the redirects followed before reaching host
        super().__init__(self.reason)

    def via(self, chain: tuple[str, ...]) -> AddressExcluded:
        """The same verdict, reached through these redirects."""
        return AddressExcluded(self.host, self.kind, self.address, literal=self.literal, chain=chain) if chain else self

    @property
    def reason(self) -> str:
        why = f"{self.kind} address excluded" if self.literal else f"resolves to a {self.kind} address ({self.address})"
        return f"redirect to {self.host}: {why}" if self.chain else why


class AddressFilter(NamedTuple):
    """Which kinds of address are excluded (--exclude-all-private turns on all three)."""

    private: bool = False
    loopback: bool = False
    link_local: bool = False

    @property
    def active(self) -> bool:
        return self.private or self.loopback or self.link_local

    def excluded_kind(self, ip: IPAddress) -> str | None:
        kind = address_kind(ip)
        on = {"private": self.private, "loopback": self.loopback, "link-local": self.link_local}
        return kind if kind is not None and on[kind] else None

    def check_literal(self, host: str) -> None:
        """Raise AddressExcluded when host is a literal address of an excluded kind; names pass."""
        if not self.active:
            return
        ip = parse_ip(host)
        if ip is not None and (kind := self.excluded_kind(ip)) is not None:
            raise AddressExcluded(host, kind, str(ip), literal=True)
