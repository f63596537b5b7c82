"""The tests' DNS guard. conftest puts this folder on PYTHONPATH, so every Python process the tests start
(linkhound run as a command, its forked and started helpers) imports this module at start-up and installs the
guard; conftest installs it in the test process too.

A lookup of any name but localhost (or an IP literal) fails at once with a gaierror, in the two resolvers a
linkhound process uses from Python: the standard library's (asyncio and aiohttp go through socket.getaddrinfo)
and uvloop's, which resolves in C when a connection is made (the native transport) and so is guarded where the
loop is made. reqwest resolves in Rust, out of reach here; every network test also runs on the other clients.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

_installed = False


def allowed(host: object) -> bool:
    """Whether host may be looked up: localhost, an IP literal, or no host at all."""
    name = host.decode() if isinstance(host, bytes) else "" if host is None else str(host)
    if name in ("", "localhost", "None"):
        return True
    try:
        ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def refuse(host: object) -> None:
    """A gaierror for a name that may not be looked up (written to the file DNS_GUARD_LOG names, if set: how a
    test sees that another process was guarded)."""
    if allowed(host):
        return
    log = os.environ.get("DNS_GUARD_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{host}\n")
    raise socket.gaierror(socket.EAI_NONAME, f"tests may not look up {host!r} in DNS")


def install() -> None:
    """Guard this process's resolvers (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(host)
        return real(host, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo
    try:
        import uvloop
    except ImportError:
        return

    class GuardedLoop(uvloop.Loop):  # type: ignore[misc]
        async def create_connection(self, protocol_factory: Any, host: Any = None, port: Any = None,
                                    **kwargs: Any) -> Any:
            refuse(host)
            return await super().create_connection(protocol_factory, host, port, **kwargs)

        async def getaddrinfo(self, host: Any, *args: Any, **kwargs: Any) -> Any:
            refuse(host)
            return await super().getaddrinfo(host, *args, **kwargs)

    uvloop.new_event_loop = GuardedLoop  # (linkhound.loop takes the factory from uvloop when a run starts)


install()
