"""URL rules without I/O: resolving, the canonical dedup key, hosts, scope, and filters."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

import ada_url

from .settings import Remap

_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
ASSET_SUFFIXES = frozenset(
    [
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".webp",
        ".svg",
        ".ico",
        ".bmp",
        ".tif",
        ".tiff",
        ".avif",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".tar",
        ".mp3",
        ".mp4",
        ".m4a",
        ".m4v",
        ".webm",
        ".ogg",
        ".ogv",
        ".wav",
        ".flac",
        ".mov",
        ".avi",
        ".mkv",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".css",
        ".js",
        ".mjs",
        ".map",
        ".json",
        ".wasm",
        ".exe",
        ".dmg",
        ".iso",
        ".deb",
        ".rpm",
        ".whl",
        ".jar",
        ".apk",
        ".epub",
        ".doc",
        ".docx",
        ".xls",
        ".xlsx",
        ".ppt",
        ".pptx",
    ]
)


MAX_URL_LENGTH = 2 * 1024 * 1024  # characters; browsers refuse longer URLs (Chrome's limit)
MAX_HOSTNAME = 253  # characters of a DNS name, without its final dot (RFC 1035)
MAX_LABEL = 63  # characters of each of its labels
_HOSTED_SCHEMES = ("http:", "https:", "ftp:", "ws:", "wss:")
# The shortest URL whose hostname could break a DNS limit: "http://" and a 64-character label.
_SHORTEST_BAD_HOST = len("http://") + MAX_LABEL + 1


# An absolute http(s) URL written the way the WHATWG parser writes it: lower-case scheme and host (a name whose
# last label starts with a letter, or a dotted IPv4 address without leading zeros), a port that isn't the
# scheme's default, a path, and only characters that no part of a URL escapes (no "%", no dot segments,
# checked apart). The parser would give it back as it is, so it is taken as it is: a URL list's links, and
# absolute links in pages, at a tenth of the parser's cost through its bindings.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_SAFE = r"A-Za-z0-9\-_~!$&()*+,;=:@/."
_SERIALIZED = re.compile(
    rf"(https?)://((?:{_LABEL}\.)*[a-z](?:[a-z0-9-]{{0,61}}[a-z0-9])?|(?:{_OCTET}\.){{3}}{_OCTET})"
    rf"(?::([1-9][0-9]{{0,4}}))?(/[{_SAFE}]*)(?:\?[{_SAFE}?]*)?(?:#[{_SAFE}?]*)?"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def _serialized(text: str) -> bool:
    """Whether text is an absolute URL the WHATWG parser would write back unchanged (see _SERIALIZED)."""
    m = _SERIALIZED.fullmatch(text)
    if m is None:
        return False
    scheme, host, port, path = m.groups()
    return (
        "/." not in path
        and len(host) <= MAX_HOSTNAME
        and "xn--" not in host
        and (port is None or port != _DEFAULT_PORTS[scheme] and int(port) <= 65535)
    )


def resolve(text: str, base: str) -> str | None:
    """Join a link as written with its base, as browsers do (WHATWG). None when it isn't a valid URL,
    including one whose hostname no DNS lookup could find (too long a name or label), and one too long
    for browsers: both are decided here, without a lookup."""
    if len(text) > MAX_URL_LENGTH:
        return None
    if text[:4] == "http" and len(text) < 4096 and _serialized(text):
        return text
    try:
        url = ada_url.join_url(base, text) if base else ada_url.URL(text).href
    except ValueError:
        return None
    if len(url) >= _SHORTEST_BAD_HOST and url.startswith(_HOSTED_SCHEMES):
        start = url.find("//") + 2
        end = url.find("/", start)
        # an authority of at most 63 characters holds no name or label too long: most URLs stop here
        if (end < 0 or end - start > MAX_LABEL) and not valid_hostname(hostname_of(url)):
            return None
    return url if len(url) <= MAX_URL_LENGTH else None


def valid_hostname(hostname: str) -> bool:
    """Whether a hostname (as the URL parser wrote it: lower case, IDNs as xn--) fits DNS's limits; an IP
    address always does."""
    name = hostname[:-1] if hostname.endswith(".") else hostname
    if len(name) <= MAX_LABEL:
        return True
    if len(name) > MAX_HOSTNAME or name.startswith("["):
        return name.startswith("[")
    return all(len(label) <= MAX_LABEL for label in name.split("."))


def _fix_escape(m: re.Match[str]) -> str:
    ch = chr(int(m[0][1:], 16))
    return ch if ch in _UNRESERVED else m[0].upper()


def split_fragment(url: str) -> tuple[str, str | None]:
    """("http://h/p", "frag") for "http://h/p#frag"; the fragment is None when there is no '#'."""
    i = url.find("#")
    return (url, None) if i < 0 else (url[:i], url[i + 1 :])


def canonical_key(url: str) -> str:
    """The dedup key of an absolute URL that `resolve` produced.

    Rules, in order (resolve already applied the WHATWG ones):
    - the fragment is removed;
    - scheme and host are lower-case, the default port is dropped, dot segments are resolved,
      an empty path is "/" (all done by the WHATWG parser in `resolve`);
    - percent-escapes of unreserved characters (A-Z a-z 0-9 - . _ ~) are decoded, and the hex digits of the
      remaining escapes upper-cased, in path and query alike;
    - the query is otherwise kept as written: order and repeated keys matter to some servers.
    """
    url = split_fragment(url)[0]
    return _PCT.sub(_fix_escape, url) if "%" in url else url


def scheme_of(url: str) -> str:
    i = url.find(":")
    return url[:i].lower() if i > 0 else ""


def host_of(url: str) -> str:
    """The host key of an http(s) URL: lower-case hostname plus ":port" when not the default."""
    start = url.find("//")
    if start < 0:
        return ""
    start += 2
    end = len(url)
    for ch in "/?#":
        i = url.find(ch, start)
        if 0 <= i < end:
            end = i
    host = url[start:end]
    at = host.rfind("@")
    return host[at + 1 :] if at >= 0 else host


def hostname_of(url: str) -> str:
    """host_of without the port."""
    host = host_of(url)
    colon = host.rfind(":")
    return host[:colon] if colon > host.rfind("]") else host


def origin_of(url: str) -> str:
    return f"{scheme_of(url)}://{host_of(url)}"


def looks_like_asset(url: str) -> bool:
    """True when the path ends in a suffix that is never an HTML page (images, archives, fonts, ...)."""
    path = url.split("?", 1)[0].split("#", 1)[0]
    dot = path.rfind(".")
    return dot > path.rfind("/") and path[dot:].lower() in ASSET_SUFFIXES


MAX_CRAWL_URL = 2048
MAX_CRAWL_SEGMENTS = 40


def looks_like_trap(url: str) -> bool:
    """URLs a crawler should check but not follow: over-long, over-deep, or a path segment repeating itself
    (/a/b/a/b/a/b or /x/x/x/x, the signature of relative-link loops and generated URL spaces)."""
    if len(url) > MAX_CRAWL_URL:
        return True
    path = url.split("?", 1)[0].split("#", 1)[0]
    start = path.find("/", path.find("//") + 2) if "//" in path else 0
    segments = [s for s in path[start:].split("/") if s]
    if len(segments) > MAX_CRAWL_SEGMENTS:
        return True
    seen: dict[str, int] = {}
    for seg in segments:
        seen[seg] = seen.get(seg, 0) + 1
        if seen[seg] > 3:
            return True
    return False


def remap(url: str, remaps: Iterable[Remap]) -> str:
    """Apply every --remap rule in order; each rule rewrites the output of the previous one."""
    for r in remaps:
        url = r.pattern.sub(r.replacement, url)
    return url


class Scope(NamedTuple):
    """Which pages a recursive crawl follows (as opposed to which links it checks)."""

    prefixes: tuple[str, ...]  # "scheme://host[:port]/dir/" of each seed
    domains: frozenset[str]  # extra hosts whose every page is in scope
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def from_seeds(
        cls,
        seeds: Iterable[str],
        domains: Iterable[str] = (),
        include: tuple[re.Pattern[str], ...] = (),
        exclude: tuple[re.Pattern[str], ...] = (),
    ) -> Scope:
        prefixes = []
        for seed in seeds:
            path_end = seed.split("#", 1)[0].split("?", 1)[0]  # (#/home, a single-page app's route: no folder)
            prefixes.append(path_end[: path_end.rfind("/") + 1])
        return cls(tuple(sorted(set(prefixes))), frozenset(d.lower() for d in domains), include, exclude)

    def contains(self, url: str) -> bool:
        if not (url.startswith(self.prefixes) or self._in_domains(url)):
            return False
        if self.include and not any(p.search(url) for p in self.include):
            return False
        return not any(p.search(url) for p in self.exclude)

    def _in_domains(self, url: str) -> bool:
        if not self.domains or scheme_of(url) not in ("http", "https"):
            return False
        host = hostname_of(url)
        return host in self.domains or any(host.endswith("." + d) for d in self.domains)
