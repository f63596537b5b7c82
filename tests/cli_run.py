"""Running the linkhound command as a user does: in a subprocess, with a working folder, stdin and terminals."""

from __future__ import annotations

import asyncio
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

ENV = {**os.environ, "NO_COLOR": "1"}
HANG_GUARD = 60  # seconds: only catches a hang


def run(*args: str, stdin: str | None = None, cwd: Path | None = None,
        env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """The command's outcome; prefix is a command it is run through (setpriv ... --)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "linkhound", *args],
        input=stdin, capture_output=True, text=True, timeout=HANG_GUARD, env=env or ENV, cwd=cwd,
    )


async def arun(*args: str, stdin: str | None = None, cwd: Path | None = None) -> tuple[int, str, str]:
    """run() without blocking the event loop that serves the test sites."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", *args,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), HANG_GUARD)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def run_on_terminal(*args: str, tty: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stdout or stderr (tty="stdout" / "stderr") on a pseudo-terminal, the other one piped.
    Returns the exit code, what stdout got and what stderr got."""
    master, slave = pty.openpty()
    piped = subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "linkhound", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=slave if tty == "stdout" else piped, stderr=slave if tty == "stderr" else piped,
    )
    os.close(slave)
    seen: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed: the process is gone
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, err = proc.communicate(timeout=HANG_GUARD)
    piped_text = (err if tty == "stdout" else out).decode()
    reader.join(timeout=HANG_GUARD)
    os.close(master)
    terminal = b"".join(seen).decode(errors="replace")
    return (proc.returncode, terminal, piped_text) if tty == "stdout" else (proc.returncode, piped_text, terminal)
