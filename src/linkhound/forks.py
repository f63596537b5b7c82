"""Whether this process may fork a helper (the parsing ahead, the shard processes of --jobs, half a report) and
has a core to give it; what the helper lets go of as it starts."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a fork here is safe: the platform has it and this process runs one thread (threads of native
    libraries too: a fork could copy a lock another thread holds; known on Linux only, elsewhere no fork)."""
    if not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def let_go_of_fds(keep: Collection[int]) -> None:
    """In a forked child: let go of every file descriptor the program had open (its listening sockets, files,
    the pipes of its other children) but stdin, stdout, stderr and keep, so that closing one there closes it
    (a port is freed, a pipe's reader sees its end) while the child runs.

    Each is pointed at /dev/null rather than closed: the number stays taken, so a file or socket object of the
    program's that this process finalizes (its garbage collector finds it) closes that, never a descriptor
    opened here since under the same number; nor does a buffer it flushes reach the program's file."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]  # (forks happen on Linux only: can_fork)
    except OSError:
        return
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        if fd > 2 and fd != devnull and fd not in keep:
            with contextlib.suppress(OSError):  # (the listing's own descriptor, closed since)
                os.fstat(fd)
                os.dup2(devnull, fd)
    os.close(devnull)
