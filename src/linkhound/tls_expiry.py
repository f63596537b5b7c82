"""Certificate expiry (--tls-expiry AGE): when each HTTPS host checked has its certificate expire.

The HTTP stacks don't hand the peer certificate over, so once per host that answered over HTTPS linkhound
opens one more TLS connection of its own, with the same trust (the system store, SSL_CERT_FILE, or none with
--insecure) and timeout, reads the certificate's notAfter, and closes it: no HTTP request is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from dataclasses import replace
from datetime import UTC, datetime

from .filters import AddressFilter, parse_ip
from .summary import Report
from .types import Certificate, Result
from .urls import host_of, hostname_of

DAY = 86400.0
_AT_ONCE = 8  # handshakes in flight at once


class CertificateWatch:
    """Reads each HTTPS host's certificate once, in the background while the run goes on."""

    def __init__(
        self, window: float, fail: bool, timeout: float, insecure: bool, addresses: AddressFilter | None = None
    ) -> None:
        self._addresses = addresses if addresses is not None and addresses.active else None
        self._window = window
        self._fail = fail
        self._timeout = timeout
        self._insecure = insecure
        self._expiry: dict[str, float] = {}  # host -> notAfter, epoch seconds
        self._unread: dict[str, str] = {}  # host -> why its certificate was not read
        self._asked: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(_AT_ONCE)
        self._context: ssl.SSLContext | None = None

    def note(self, result: Result) -> None:
        """A checked link: each HTTPS host of it that answered (the URL, every redirect hop) is read once."""
        if result.code is None:  # no answer: its host's TLS failed or was never reached; the result says why
            return
        for url in (result.url, *result.redirects):
            if url[:8].lower() != "https://":
                continue
            host = host_of(url)
            if host and host not in self._asked:
                self._asked.add(host)
                task = asyncio.ensure_future(self._read(host, url))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    def into(self, report: Report) -> Report:
        """report with the certificates read, and a warning for each one expiring within the window."""
        now = time.time()
        certificates = tuple(self._certificate(host, at, now) for host, at in sorted(self._expiry.items()))
        warnings = [_warning(c) for c in certificates if c.expiring]
        warnings += [f"TLS certificate of {host} not read: {why}" for host, why in sorted(self._unread.items())]
        before = report.summary.warnings  # (a distributed crawl's: this process's report's, which had them too)
        warnings = [*before, *(w for w in warnings if w not in before)]
        summary = replace(report.summary, warnings=tuple(warnings), certificates=certificates,
                          certificates_fail=self._fail)
        return Report(report.results, summary, report.pages)

    def _certificate(self, host: str, not_after: float, now: float) -> Certificate:
        expires = datetime.fromtimestamp(not_after, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        left = not_after - now
        # whole days toward zero, and -1 at least once it has ended (12 hours ago is not "in 0 days")
        days = int(left / DAY) if left >= 0 else min(-1, int(left / DAY))
        return Certificate(host, expires, days, left <= self._window)

    async def _read(self, host: str, url: str) -> None:
        async with self._slots:
            try:
                der = await asyncio.wait_for(self._handshake(url), self._timeout)
                self._expiry[host] = not_after(der)
            except TimeoutError:
                self._unread[host] = f"timed out after {self._timeout:g} s"
            except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
                self._unread[host] = str(e) or type(e).__name__

    async def _handshake(self, url: str) -> bytes:
        hostname = hostname_of(url)
        port = _port(url)
        address = hostname if self._addresses is None else await self._vetted(hostname, port)
        _, writer = await asyncio.open_connection(address, port, ssl=self._ssl(), server_hostname=hostname)
        try:
            tls = writer.get_extra_info("ssl_object")
            der = tls.getpeercert(binary_form=True) if tls is not None else None
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        if not der:
            raise ValueError("the server sent no certificate")
        return bytes(der)

    async def _vetted(self, hostname: str, port: int) -> str:
        """An address of hostname that --exclude-private and friends allow, as the checks were made."""
        assert self._addresses is not None
        infos = await asyncio.get_running_loop().getaddrinfo(hostname, port, type=socket.SOCK_STREAM)
        for *_, sockaddr in infos:
            ip = parse_ip(str(sockaddr[0]))
            if ip is not None and self._addresses.excluded_kind(ip) is None:
                return str(ip)
        raise ValueError("every address it resolves to is excluded")

    def _ssl(self) -> ssl.SSLContext:
        if self._context is None:
            context = ssl.create_default_context()
            if self._insecure:  # as the checks were made: not verified, yet the certificate is still sent
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            self._context = context
        return self._context


def _warning(c: Certificate) -> str:
    day = c.expires[:10]
    if c.days_left < 0:
        return f"TLS certificate of {c.host} expired on {day} ({days(-c.days_left)} ago)"
    return f"TLS certificate of {c.host} expires on {day} (in {days(c.days_left)})"


def days(n: int) -> str:
    return f"{n} day{'' if n == 1 else 's'}"


def _port(url: str) -> int:
    host = host_of(url)
    if host.endswith("]"):  # [::1], no port
        return 443
    _, colon, port = host.rpartition(":")
    return int(port) if colon and port.isdigit() else 443


def not_after(der: bytes) -> float:
    """The notAfter of a DER X.509 certificate, in epoch seconds (ValueError when it can't be read).

    Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
    issuer, validity SEQUENCE { notBefore, notAfter }, ... }, ... }: a handful of DER headers to walk, where
    the standard library reads a certificate only once it is verified."""
    try:
        _, start, _ = _tlv(der, 0)
        _, pos, _ = _tlv(der, start)  # tbsCertificate: into it
        tag, _, end = _tlv(der, pos)
        if tag == 0xA0:  # [0] version
            pos = end
        for _ in range(3):  # serialNumber, signature, issuer
            pos = _tlv(der, pos)[2]
        _, pos, _ = _tlv(der, pos)  # validity: into it
        pos = _tlv(der, pos)[2]  # past notBefore
        tag, start, end = _tlv(der, pos)
        text = der[start:end].decode("ascii")
    except (IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"unreadable certificate ({e})") from None
    if tag == 0x17:  # UTCTime: YYMMDDHHMMSSZ, years 1950-2049
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    elif tag != 0x18:  # GeneralizedTime: YYYYMMDDHHMMSSZ
        raise ValueError("unreadable certificate (no validity dates)")
    try:
        return datetime.strptime(text, "%Y%m%d%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise ValueError(f"unreadable certificate date {text!r}") from None


def _tlv(der: bytes, pos: int) -> tuple[int, int, int]:
    """The DER element at pos: (tag, where its content starts, where it ends)."""
    tag = der[pos]
    length = der[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(der[pos : pos + n], "big")
        pos += n
    if pos + length > len(der):
        raise IndexError("element runs past the end")
    return tag, pos, pos + length
