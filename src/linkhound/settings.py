"""Typed, validated settings for one run; built once at the edge (CLI, config file, library call)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from .exceptions import UsageError

DEFAULT_ACCEPT = frozenset(range(200, 300))


def parse_accept(spec: str) -> frozenset[int]:
    """Parse status-code sets like "200..=299,403", "200..300" (exclusive end) or "200-299"."""
    codes: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"(\d{3})\s*(?:(\.\.=|\.\.|-)\s*(\d{3}))?", part)
        if not m:
            raise UsageError(f"--accept: '{part}' is not a status code or range (e.g. 200..=299,403)")
        lo = int(m[1])
        hi = lo if m[3] is None else int(m[3]) - (1 if m[2] == ".." else 0)
        if not (100 <= lo <= hi <= 999):
            raise UsageError(f"--accept: '{part}' is not a valid range of status codes")
        codes.update(range(lo, hi + 1))
    if not codes:
        raise UsageError("--accept: no status codes given")
    return frozenset(codes)


def _compile(option: str, patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise UsageError(f"{option}: bad regular expression '{p}': {e}") from None
    return tuple(out)


@dataclass(frozen=True)
class Remap:
    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def parse(cls, spec: str) -> Remap:
        parts = spec.split(None, 1)
        if len(parts) != 2:
            raise UsageError(f"--remap: '{spec}' must be 'REGEX REPLACEMENT'")
        return cls(_compile("--remap", (parts[0],))[0], parts[1])


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
    method: str = "head"  # for leaf links; pages are always GET
    user_agent: str = ""  # empty: linkhound/<version> (+project URL)
    header: tuple[str, ...] = ()  # "Name: value"
    insecure: bool = False
    robots: bool = True
    max_body_size: int = 20 * 1024 * 1024
    host_config: str | None = None  # a TOML file of [hosts."name"] tables
    hosts: dict[str, Any] = field(default_factory=dict)  # {host: {concurrency, rate, burst, headers}}
    host_stats: bool = False
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
        positive = ("max_concurrency", "host_concurrency", "host_burst")
        for name in positive:
            if getattr(self, name) < 1:
                raise UsageError(f"--{_flag(name)} must be at least 1, got {getattr(self, name)}")
        if self.timeout <= 0:
            raise UsageError(f"--timeout must be positive, got {self.timeout}")
        for name in ("retry_backoff", "max_retry_wait"):
            if getattr(self, name) < 0:
                raise UsageError(f"--{_flag(name)} must not be negative, got {getattr(self, name)}")
        for name in ("max_redirects", "max_retries"):
            if getattr(self, name) < 0:
                raise UsageError(f"--{_flag(name)} must not be negative, got {getattr(self, name)}")
        for name in ("max_depth", "max_pages"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise UsageError(f"--{_flag(name)} must not be negative, got {v}")
        if self.host_rate is not None and self.host_rate <= 0:
            raise UsageError(f"--host-rate must be positive, got {self.host_rate}")
        if self.method not in ("head", "get"):
            raise UsageError(f"--method must be 'head' or 'get', got '{self.method}'")
        for h in self.header:
            if ":" not in h or not h.split(":", 1)[0].strip():
                raise UsageError(f"--header: '{h}' must look like 'Name: value'")
        c = self._compiled
        for name in ("include_crawl", "exclude_crawl", "include", "exclude"):
            c[name] = _compile(f"--{_flag(name)}", getattr(self, name))
        c["remap"] = tuple(Remap.parse(r) for r in self.remap)
        from .hosts import load_host_config, parse_hosts

        per_host = load_host_config(self.host_config) if self.host_config else {}
        per_host.update(parse_hosts(self.hosts, "hosts"))
        c["hosts"] = per_host

    def patterns(self, name: str) -> tuple[re.Pattern[str], ...]:
        """The compiled regexes of a pattern option (include, exclude, include_crawl, exclude_crawl)."""
        return self._compiled[name]  # type: ignore[no-any-return]

    @property
    def remaps(self) -> tuple[Remap, ...]:
        return self._compiled["remap"]  # type: ignore[no-any-return]

    @property
    def host_settings(self) -> dict[str, Any]:
        """host -> HostSettings, from host_config and hosts (hosts wins)."""
        return self._compiled["hosts"]  # type: ignore[no-any-return]

    def headers(self) -> dict[str, str]:
        return {k.strip(): v.strip() for k, v in (h.split(":", 1) for h in self.header)}


def _flag(name: str) -> str:
    return name.replace("_", "-")


def setting_names() -> list[str]:
    return [f.name for f in fields(Settings) if not f.name.startswith("_")]
