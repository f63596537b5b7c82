"""Typed, validated settings for one run; built once at the edge (CLI, config file, library call)."""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any

from .exceptions import OptionError
from .filters import AddressFilter

DEFAULT_ACCEPT = frozenset(range(200, 300))


def parse_accept(spec: str, option: str = "accept") -> frozenset[int]:
    """Parse status-code sets like "200..=299,403", "200..300" (exclusive end) or "200-299"."""
    codes: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"(\d{3})\s*(?:(\.\.=|\.\.|-)\s*(\d{3}))?", part)
        if not m:
            raise OptionError(option, f"'{part}' is not a status code or range (e.g. 200..=299,403)")
        lo = int(m[1])
        hi = lo if m[3] is None else int(m[3]) - (1 if m[2] == ".." else 0)
        if not (100 <= lo <= hi <= 999):
            raise OptionError(option, f"'{part}' is not a valid range of status codes")
        codes.update(range(lo, hi + 1))
    if not codes:
        raise OptionError(option, "no status codes given")
    return frozenset(codes)


def format_accept(codes: frozenset[int]) -> str:
    """The shortest spec parse_accept reads back as codes: "200..=299,403"."""
    parts: list[str] = []
    run: list[int] = []
    for code in sorted(codes):
        if run and code != run[-1] + 1:
            parts.append(_span(run))
            run = []
        run.append(code)
    if run:
        parts.append(_span(run))
    return ",".join(parts)


def _span(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}..={run[-1]}"


def _compile(option: str, patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise OptionError(option, f"bad regular expression '{p}': {e}") from None
    return tuple(out)


@dataclass(frozen=True)
class Remap:
    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def parse(cls, spec: str) -> Remap:
        parts = spec.split(None, 1)
        if len(parts) != 2:
            raise OptionError("remap", f"'{spec}' must be 'REGEX REPLACEMENT'")
        return cls(_compile("remap", (parts[0],))[0], parts[1])


@dataclass(frozen=True)
class StatusRule:
    """--accept-for 'REGEX CODES' (or a [[status]] table): more accepted codes for the URLs REGEX finds."""

    pattern: re.Pattern[str]
    accept: frozenset[int]

    @classmethod
    def parse(cls, spec: str) -> StatusRule:
        parts = spec.rsplit(None, 1)
        if len(parts) != 2:
            raise OptionError("accept_for", f"'{spec}' must be 'REGEX CODES', e.g. 'linkedin\\.com 999'")
        return cls(_compile("accept_for", (parts[0],))[0], parse_accept(parts[1], "accept_for"))


@dataclass(frozen=True)
class BasicAuth:
    """--basic-auth 'URL_REGEX user:password': HTTP Basic credentials for the URLs REGEX finds."""

    pattern: re.Pattern[str]
    user: str
    password: str = field(repr=False)

    @classmethod
    def parse(cls, spec: str) -> BasicAuth:
        parts = spec.split(None, 1)
        if len(parts) != 2 or ":" not in parts[1]:
            shown = parts[0] if parts else ""
            raise OptionError("basic_auth", f"'{shown} ...' must be 'URL_REGEX user:password'")
        user, password = parts[1].split(":", 1)
        return cls(_compile("basic_auth", (parts[0],))[0], user, password)

    def header(self) -> str:
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode("ascii")
        return f"Basic {token}"


@dataclass(frozen=True)
class Settings:
    """Everything that shapes a run. Field names are the config-file keys and the flags' long names."""

    # what to check
    recursive: bool = False
    max_depth: int | None = None
    max_pages: int | None = None
    scope_domain: tuple[str, ...] = ()
    include_crawl: tuple[str, ...] = ()
    exclude_crawl: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclude_path: tuple[str, ...] = ()  # local input paths (walked, globbed or named) to leave out
    exclude_private: bool = False  # 10/8, 172.16/12, 192.168/16, fc00::/7, by literal or resolved address
    exclude_loopback: bool = False  # 127/8, ::1, 0.0.0.0/8, ::
    exclude_link_local: bool = False  # 169.254/16, fe80::/10
    exclude_all_private: bool = False  # all three above
    scheme: tuple[str, ...] = ()  # empty: every scheme linkhound knows
    offline: bool = False
    check_fragments: bool | None = None  # None: on for local files, off for remote pages
    include_code: bool = False  # check links inside Markdown code spans and blocks
    hidden: bool = False  # walk hidden directories
    gitignore: bool = True
    # local files
    root_dir: str | None = None
    base_url: str | None = None
    remap: tuple[str, ...] = ()
    index_files: tuple[str, ...] = ()
    # requests
    max_concurrency: int = 128
    host_concurrency: int = 8
    host_rate: float | None = None
    host_burst: int = 1
    timeout: float = 20.0
    max_redirects: int = 10
    max_retries: int = 2
    retry_backoff: float = 1.0  # first retry waits about this long, then doubles (with jitter)
    max_retry_wait: float = 60.0
    accept: frozenset[int] = DEFAULT_ACCEPT
    accept_for: tuple[str, ...] = ()  # "REGEX CODES": more accepted codes for matching URLs
    fail_on_blocked: bool = False  # bot protection (Status.BLOCKED) fails the run too
    method: str = "head"  # for leaf links; pages are always GET
    user_agent: str = ""  # empty: linkhound/<version> (+project URL)
    header: tuple[str, ...] = field(default=(), repr=False)  # "Name: value"
    basic_auth: tuple[str, ...] = field(default=(), repr=False)  # "URL_REGEX user:password"
    cookie_jar: str | None = None  # Netscape cookies.txt, read at the start and written at the end
    insecure: bool = False
    http_client: str = "auto"  # auto (reqwest unless an address filter needs aiohttp), reqwest, aiohttp
    robots: bool = True
    max_body_size: int = 20 * 1024 * 1024
    host_config: str | None = None  # a TOML file of [hosts."name"] tables
    hosts: dict[str, Any] = field(default_factory=dict, repr=False)  # {host: {concurrency, rate, burst, headers}}
    host_stats: bool = False
    workers: int | None = None  # processes that parse pages; None: 1 on a machine with 2+ cores, else 0
    # output
    verbose: bool = False
    progress: bool = True
    format: str = "compact"
    output: str | None = None
    summary_only: bool = False
    # derived, filled by validate()
    _compiled: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        positive = ("max_concurrency", "host_concurrency", "host_burst", "max_body_size")
        for name in positive:
            if getattr(self, name) < 1:
                raise OptionError(name, f"must be at least 1, got {getattr(self, name)}")
        if self.timeout <= 0:
            raise OptionError("timeout", f"must be positive, got {self.timeout}")
        for name in ("retry_backoff", "max_retry_wait", "max_redirects", "max_retries"):
            if getattr(self, name) < 0:
                raise OptionError(name, f"must not be negative, got {getattr(self, name)}")
        for name in ("max_depth", "max_pages", "workers"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise OptionError(name, f"must not be negative, got {v}")
        if self.host_rate is not None and self.host_rate <= 0:
            raise OptionError("host_rate", f"must be positive, got {self.host_rate}")
        if self.http_client not in ("auto", "reqwest", "aiohttp"):
            raise OptionError("http_client", f"must be 'auto', 'reqwest' or 'aiohttp', got '{self.http_client}'")
        if self.method not in ("head", "get"):
            raise OptionError("method", f"must be 'head' or 'get', got '{self.method}'")
        for h in self.header:
            if ":" not in h or not h.split(":", 1)[0].strip():
                raise OptionError("header", f"'{h.split(' ', 1)[0]} ...' must look like 'Name: value'")
        c = self._compiled
        for name in ("include_crawl", "exclude_crawl", "include", "exclude", "exclude_path"):
            c[name] = _compile(name, getattr(self, name))
        c["remap"] = tuple(Remap.parse(r) for r in self.remap)
        c["accept_for"] = tuple(StatusRule.parse(r) for r in self.accept_for)
        c["basic_auth"] = tuple(BasicAuth.parse(r) for r in self.basic_auth)
        every = self.exclude_all_private
        c["addresses"] = AddressFilter(
            every or self.exclude_private, every or self.exclude_loopback, every or self.exclude_link_local
        )
        if self.http_client == "reqwest" and c["addresses"].active:
            raise OptionError(
                "http_client",
                "reqwest can't vet the addresses a name resolves to, which --exclude-private and its friends need:"
                " use 'auto' or 'aiohttp'",
            )
        from .hosts import load_host_config, parse_hosts

        per_host = load_host_config(self.host_config) if self.host_config else {}
        per_host.update(parse_hosts(self.hosts, ""))
        c["hosts"] = per_host

    def patterns(self, name: str) -> tuple[re.Pattern[str], ...]:
        """The compiled regexes of a pattern option (include, exclude, include_crawl, exclude_crawl, exclude_path)."""
        return self._compiled[name]  # type: ignore[no-any-return]

    @property
    def remaps(self) -> tuple[Remap, ...]:
        return self._compiled["remap"]  # type: ignore[no-any-return]

    @property
    def status_rules(self) -> tuple[StatusRule, ...]:
        return self._compiled["accept_for"]  # type: ignore[no-any-return]

    @property
    def credentials(self) -> tuple[BasicAuth, ...]:
        return self._compiled["basic_auth"]  # type: ignore[no-any-return]

    @property
    def addresses(self) -> AddressFilter:
        """Which kinds of IP address are excluded (--exclude-private, -loopback, -link-local, -all-private)."""
        return self._compiled["addresses"]  # type: ignore[no-any-return]

    @property
    def parse_workers(self) -> int:
        """Worker processes for parsing pages: as set, or one when there is a second core to use."""
        if self.workers is not None:
            return self.workers
        return 1 if (os.cpu_count() or 1) > 1 else 0

    @property
    def host_settings(self) -> dict[str, Any]:
        """host -> HostSettings, from host_config and hosts (hosts wins)."""
        return self._compiled["hosts"]  # type: ignore[no-any-return]

    def headers(self) -> dict[str, str]:
        return {k.strip(): v.strip() for k, v in (h.split(":", 1) for h in self.header)}


def setting_names() -> list[str]:
    return [f.name for f in fields(Settings) if not f.name.startswith("_")]
