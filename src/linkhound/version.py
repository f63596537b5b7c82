"""The version and the default User-Agent."""

from __future__ import annotations

from functools import cache

__version__ = "0.1.0"
# The repository when the package metadata can't be read (the source tree on sys.path, not installed).
PROJECT_URL = "https://github.com/linkhound/linkhound"


@cache
def project_url() -> str:
    """The repository URL from the installed package's metadata: its `Repository` project URL, else `Homepage`,
    else PROJECT_URL."""
    # Imported here, not at the top: `linkhound --version` and short runs shouldn't pay for it.
    from importlib import metadata

    try:
        entries = metadata.metadata("linkhound").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return PROJECT_URL
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    return urls.get("repository") or urls.get("homepage") or PROJECT_URL


def user_agent() -> str:
    """`linkhound/VERSION (+REPOSITORY_URL)`, the User-Agent sent unless --user-agent says otherwise."""
    return f"linkhound/{__version__} (+{project_url()})"
