"""Whether this process may fork a helper (the parsing ahead, the shard processes of --jobs) and has a core to
give it."""

from __future__ import annotations

import os


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
