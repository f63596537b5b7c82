"""The version, the default User-Agent and the product token a --user-agent gives."""

from __future__ import annotations

import os
import sys
from functools import cache

__version__ = "0.1.0"
# The repository when no installed metadata names one (the source tree on sys.path, not installed).
PROJECT_URL = "https://github.com/linkhound/linkhound"


@cache
def project_url() -> str:
    """The repository URL from the installed package's metadata: its `Repository` project URL, else `Homepage`,
    else PROJECT_URL."""
    urls: dict[str, str] = {}
    for line in _metadata_headers():
        name, _, value = line.partition(":")
        if name.strip().lower() == "project-url":
            label, _, url = value.partition(",")
            urls.setdefault(label.strip().lower(), url.strip())
    return urls.get("repository") or urls.get("homepage") or PROJECT_URL


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups and X-Robots-Tag directives are matched by: "linkhound", or the
    first word of a --user-agent ("MyBot/1.0 (+https://...)" is MyBot)."""
    words = user_agent.split("/", 1)[0].split()
    return words[0] if words else "linkhound"


def user_agent() -> str:
    """`linkhound/VERSION (+REPOSITORY_URL)`, the User-Agent sent unless --user-agent says otherwise."""
    return f"linkhound/{__version__} (+{project_url()})"


def _metadata_headers() -> list[str]:
    """The header lines of the first linkhound distribution on sys.path, as importlib.metadata would find it.
    Read by hand: importlib.metadata brings in the email package, tens of milliseconds of start-up on every run
    that makes a request."""
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            stem, _, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or stem.split("-")[0].lower() != "linkhound":
                continue
            path = os.path.join(entry or ".", name, "METADATA" if kind == "dist-info" else "PKG-INFO")
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            return text.split("\n\n", 1)[0].splitlines()  # the headers end at the first blank line
    return []
