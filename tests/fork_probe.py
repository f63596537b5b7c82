"""Whether a forked child holds the program's files and sockets: the parts of a test program (run with
`python -c`) that open a listening socket and a file before the fork, then look at the child's descriptors and
close the socket. The program prints "held: [...]" (what the child still holds of them) and "port: closed" once
the socket is closed everywhere ("port: open" while a child still holds it)."""

from __future__ import annotations


def before_fork(log: str) -> str:
    """Opens the program's socket and file (`mine`: their names as /proc/PID/fd links show them)."""
    return f"""
import os, socket, time
listening = socket.socket()
listening.bind(("127.0.0.1", 0))
listening.listen()
log = open({log!r}, "a")
mine = {{f"socket:[{{os.fstat(listening.fileno()).st_ino}}]", log.name}}
"""


AFTER_FORK = """
deadline = time.monotonic() + 10
while True:  # (a child lets go as it starts, a moment after the fork)
    held = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            held.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    if not held & mine or time.monotonic() > deadline:
        break
    time.sleep(0.01)
print("held:", sorted(held & mine))
port = listening.getsockname()[1]
listening.close()
try:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    print("port: open")
except ConnectionRefusedError:
    print("port: closed")
"""
