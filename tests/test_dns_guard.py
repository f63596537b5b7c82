"""The tests' own guard against DNS (conftest, startup/sitecustomize.py): no name but localhost is looked up,
in the test process and in the linkhound processes tests start, on each HTTP client's resolver in Python."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cli_run import ENV, arun


def test_a_name_is_refused_in_the_test_process() -> None:
    with pytest.raises(socket.gaierror, match="tests may not look up 'example.test'"):
        socket.getaddrinfo("example.test", 80)
    assert socket.getaddrinfo("127.0.0.1", 80)  # literals and localhost go through
    assert socket.getaddrinfo("localhost", 80)


@pytest.mark.parametrize("client", ["native", "aiohttp"])
async def test_a_linkhound_command_is_guarded(tmp_path: Path, client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's lookup of a made-up name is refused by the guard in its process (uvloop's resolver for
    the native client, the standard library's for aiohttp): the guard's log names it, the link is an error."""
    log = tmp_path / "refused.txt"
    monkeypatch.setitem(ENV, "DNS_GUARD_LOG", str(log))
    code, out, _ = await arun("--http-client", client, "--max-retries", "0", "--format", "json", "--no-progress",
                              "http://example.test:9/")
    assert code == 2
    (result,) = json.loads(out)["results"]
    assert result["status"] == "error"
    assert "example.test" in log.read_text().split()
