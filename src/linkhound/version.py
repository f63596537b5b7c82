"""The version and the default User-Agent."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/linkhound/linkhound"


def user_agent() -> str:
    return f"linkhound/{__version__} (+{PROJECT_URL})"
