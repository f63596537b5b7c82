"""Links to fix: a link that moved for good (301 and 308 redirects), or an http:// link whose https:// twin
answers the same, and the URL to link to instead. Pure: results in, suggestions out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .types import Reference, Result

PERMANENT = frozenset({301, 308})
MOVED, HTTPS = "moved", "https"  # the kinds of suggestion


class Suggestion(NamedTuple):
    """Link to `replacement` instead of `url`, everywhere `references` say it is used."""

    url: str  # the link as checked (absolute, without its fragment)
    replacement: str  # the URL to use instead (a written link keeps its own #fragment: see rewrite())
    kind: str  # MOVED or HTTPS
    reason: str  # "moved permanently (301)", "https:// answers the same"
    references: tuple[Reference, ...]


def moved_to(result: Result) -> tuple[str, tuple[int, ...]] | None:
    """Where result's link moved for good, and the codes of the hops that say so; None when it didn't.

    The leading run of permanent redirects counts: a 301 to B that then answers 302 to C moved the link to B
    (B is where it lives now; C is only where B sends visitors today). A chain that starts with a temporary
    redirect moved nothing. Only a link whose check ended well is fixed: a move to a broken page is not a fix.
    """
    codes = result.redirect_codes
    if not result.is_ok or not result.redirects or len(codes) != len(result.redirects):
        return None
    permanent = 0
    while permanent < len(codes) and codes[permanent] in PERMANENT:
        permanent += 1
    if permanent == 0:
        return None
    return result.redirects[permanent - 1], codes[:permanent]


def moved(results: Iterable[Result]) -> list[Suggestion]:
    """A suggestion for each result whose link moved for good."""
    out = []
    for result in results:
        end = moved_to(result)
        if end is None or "#" in result.url or not result.references:
            continue
        url, codes = end
        reason = f"moved permanently ({', '.join(map(str, codes))})"
        out.append(Suggestion(result.url, url, MOVED, reason, tuple(result.references)))
    return out


def https_twin(url: str) -> str | None:
    """The https:// twin of an http:// URL on the default port (http://h/x and http://h:80/x -> https://h/x);
    None for other URLs (a twin on another port can't be guessed)."""
    if url[:7].lower() != "http://":
        return None
    rest = url[7:]
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    host = authority.rsplit("@", 1)[-1]
    if host.endswith(":80"):
        authority = authority[:-3]
    elif ":" in host.rsplit("]", 1)[-1]:
        return None
    return f"https://{authority}{tail}"


def same_answer(http: Result, https: Result) -> bool:
    """Whether the https:// twin answers as the http:// link does: both fine, with the same status code, and
    ending at the same place (a site that sends http:// to its home page but has the page on https:// is not
    "the same"). Ends are compared without their scheme and default port."""
    if not (http.is_ok and https.is_ok) or http.code != https.code:
        return False
    return place(http.redirects[-1] if http.redirects else http.url) == place(
        https.redirects[-1] if https.redirects else https.url)


def place(url: str) -> str:
    """Where url points, scheme and default port left out: the same place on http:// and https://."""
    without = url.split("://", 1)[-1]
    host, sep, path = without.partition("/")
    host = host.removesuffix(":80").removesuffix(":443").lower()
    return f"{host}{sep}{path}"


def rewrite(text: str, replacement: str) -> str | None:
    """The link to write in place of text (an absolute http(s) link as written): replacement, with text's
    #fragment kept. None for a link written relative (its redirect is the site's business, not the file's)."""
    if text[:7].lower() != "http://" and text[:8].lower() != "https://":
        return None
    _, hash_, fragment = text.partition("#")
    return f"{replacement}#{fragment}" if hash_ and "#" not in replacement else replacement
