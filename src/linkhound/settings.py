"""Typed, validated settings for one run; built once at the edge (CLI, config file, library call)."""

from __future__ import annotations

import base64
import ipaddress
import os
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from .exceptions import OptionError
from .filters import AddressFilter
from .hosts import header_problem, load_host_config, parse_hosts
from .options import CRAWLING, LINKS, LOCAL, OUTPUT, REQUESTS, coerce, option, option_fields, reference
from .report import FORMATS
from .traps import MAX_PATH_VARIANTS

DEFAULT_ACCEPT = frozenset(range(200, 300))
KNOWN_SCHEMES = frozenset({"http", "https", "file", "mailto"})  # what linkhound checks; --scheme picks among them
_LABEL = r"[^\W_](?:[\w-]*[^\W_])?"  # letters and digits (any script), '-' and '_' inside
_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")


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


_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")


def parse_age(text: str) -> float:
    """Seconds in "90s", "30m", "12h", "1d", "2w" (a bare number is seconds); ValueError otherwise."""
    m = _AGE.fullmatch(text.strip().lower())
    if m is None:
        raise ValueError(f"'{text}' is not a duration like 90s, 30m, 12h, 1d or 2w")
    return float(m[1]) * _AGE_UNITS[m[2] or "s"]


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
        except (re.error, OverflowError, RecursionError) as e:  # (a{99999999999}: too large a repeat)
            raise OptionError(option, f"bad regular expression '{p}': {e}") from None
    return tuple(out)


class Remap(NamedTuple):
    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def parse(cls, spec: str) -> Remap:
        parts = spec.split(None, 1)
        if len(parts) != 2:
            raise OptionError("remap", f"'{spec}' must be 'REGEX REPLACEMENT'")
        pattern = _compile("remap", (parts[0],))[0]
        try:  # (a group it doesn't have, \2 or \g<name>: found now, not at the first URL it finds)
            re._compile_repl(parts[1], pattern)  # type: ignore[attr-defined]
        except (re.error, IndexError) as e:
            raise OptionError("remap", f"bad replacement '{parts[1]}': {e}") from None
        return cls(pattern, parts[1])


class StatusRule(NamedTuple):
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
    """Everything that shapes a run: the table of options. Each field is declared once, with option(): its name is
    the config key and the long flag (--max-depth), its type how values are checked, and its help, group and
    flags are what `linkhound --help` and docs/config.md show (cli.build_parser, option_reference)."""

    # -- crawling
    recursive: bool = option(False, "crawl in-scope pages recursively", CRAWLING, short="-r")
    max_depth: int | None = option(
        None, "link hops from a seed to crawl", CRAWLING, metavar="N", at_least=0, default_text="no limit"
    )
    max_pages: int | None = option(
        None, "crawl at most N pages", CRAWLING, metavar="N", at_least=1, default_text="no limit"
    )
    scope_domain: tuple[str, ...] = option((), "also crawl pages on HOST and its subdomains", CRAWLING, metavar="HOST")
    include_crawl: tuple[str, ...] = option((), "crawl only pages matching REGEX", CRAWLING, metavar="REGEX")
    exclude_crawl: tuple[str, ...] = option((), "never crawl pages matching REGEX", CRAWLING, metavar="REGEX")
    robots: bool = option(True, "obey robots.txt and its Crawl-delay when crawling", CRAWLING)
    state: str | None = option(
        None, "keep the crawl's state in DIR: the same command run again resumes it after a kill or Ctrl+C",
        CRAWLING, metavar="DIR")
    restart: bool = option(
        False, "with --state: forget the crawl kept in DIR (finished or not) and crawl afresh", CRAWLING)
    rerun_failed: bool = option(
        False, "with --state or --cache: check again only what failed last time (broken, error, timeout, rate"
        " limited, missing #fragments); the report covers everything, with the fresh verdicts", CRAWLING)
    max_path_variants: int = option(
        MAX_PATH_VARIANTS, "distinct values of one path segment (or of a date over several, /2031/05/17/) under one"
        " prefix crawled before a trap is suspected",
        CRAWLING, metavar="N", at_least=1)
    sitemap_drift: bool = option(
        False, "with -r: list the sitemap's pages the crawl never reached (orphans, then checked) and the crawled "
        "pages it leaves out", CRAWLING)
    sitemap: str | None = option(
        None, "the sitemap (URL or file) --sitemap-drift compares with; with -r, giving it turns --sitemap-drift on",
        CRAWLING, metavar="URL", default_text="the seed site's robots.txt Sitemap: lines, else /sitemap.xml")
    # -- which links
    include: tuple[str, ...] = option((), "check only URLs matching REGEX (without their #fragment); include wins"
                                      " over exclude", LINKS, metavar="REGEX")
    exclude: tuple[str, ...] = option((), "don't check URLs matching REGEX, with or without their #fragment, nor"
                                      " those .linkhoundignore lists", LINKS, metavar="REGEX")
    exclude_path: tuple[str, ...] = option((), "don't read local files and directories matching REGEX",
                                           LINKS, metavar="REGEX")
    # by literal address or by what a name resolves to
    exclude_private: bool = option(
        False, "skip hosts that are or resolve to private addresses (10/8, 172.16/12, 192.168/16, fc00::/7)", LINKS
    )
    exclude_loopback: bool = option(
        False, "skip hosts that are or resolve to loopback addresses (127/8, ::1, 0.0.0.0/8, ::)", LINKS
    )
    exclude_link_local: bool = option(
        False, "skip hosts that are or resolve to link-local addresses (169.254/16, fe80::/10)", LINKS
    )
    exclude_all_private: bool = option(
        False, "all of --exclude-private, --exclude-loopback and --exclude-link-local", LINKS
    )
    scheme: tuple[str, ...] = option(
        (), "schemes to check; links with others are excluded", LINKS, metavar="LIST", comma=True,
        default_text=",".join(sorted(KNOWN_SCHEMES)),
    )
    offline: bool = option(False, "skip every remote link", LINKS)
    check_fragments: bool | None = option(
        None, "check #fragments", LINKS, default_text="on for local files, off for remote pages"
    )
    include_code: bool = option(False, "check links in Markdown code spans and blocks", LINKS)
    hidden: bool = option(False, "walk hidden directories", LINKS)
    gitignore: bool = option(True, "skip what .gitignore excludes when walking directories", LINKS)
    changed_since: str | None = option(
        None, "check only the links of local files in lines added or changed since REF (a git branch, tag or "
        "commit; from where it and HEAD part, to the working tree)", LINKS, metavar="REF")
    # -- local files
    root_dir: str | None = option(None, "resolve root-relative links (/x) against DIR", LOCAL, metavar="DIR")
    base_url: str | None = option(None, "treat local files as served under URL", LOCAL, metavar="URL")
    remap: tuple[str, ...] = option((), "rewrite URLs matching REGEX before checking", LOCAL,
                                    metavar="'REGEX REPLACEMENT'")
    index_files: tuple[str, ...] = option(
        (), "a link to a directory needs one of these files in it", LOCAL, metavar="LIST", comma=True
    )
    heading_ids: str = option(
        "auto", "the ids of Markdown headings that #fragments name: GitHub's, or MkDocs' (Python-Markdown's toc); "
        "auto: MkDocs' for the files of a MkDocs project's docs_dir (found by its mkdocs.yml), else GitHub's",
        LOCAL, choices=("auto", "github", "mkdocs"),
    )
    # -- requests
    max_concurrency: int = option(128, "requests in flight at once", REQUESTS, metavar="N", at_least=1)
    host_concurrency: int = option(8, "requests in flight per host", REQUESTS, metavar="N", at_least=1)
    host_rate: float | None = option(
        None, "requests per second per host", REQUESTS, metavar="R", positive=True, default_text="no limit"
    )
    host_burst: int = option(1, "token-bucket size for --host-rate", REQUESTS, metavar="N", at_least=1)
    timeout: float = option(20.0, "seconds per request", REQUESTS, metavar="SECONDS", positive=True)
    max_redirects: int = option(10, "redirects followed per link", REQUESTS, metavar="N", at_least=0)
    max_retries: int = option(2, "retries after timeouts, resets, 5xx and 429", REQUESTS, metavar="N", at_least=0)
    retry_backoff: float = option(
        1.0, "seconds before the first retry, doubling after, with jitter", REQUESTS, metavar="SECONDS", at_least=0
    )
    max_retry_wait: float = option(60.0, "cap on Retry-After waits", REQUESTS, metavar="SECONDS", at_least=0)
    accept: frozenset[int] = option(
        DEFAULT_ACCEPT, "accepted status codes, e.g. 200..=299,403", REQUESTS, metavar="CODES",
        parse=parse_accept, show=format_accept,
    )
    accept_for: tuple[str, ...] = option(
        (), "also accept CODES for URLs matching REGEX, e.g. '^https://www.linkedin.com/ 999'", REQUESTS,
        metavar="'REGEX CODES'",
    )
    fail_on_blocked: bool = option(
        False, "bot protection (Cloudflare challenge, LinkedIn 999) fails the run: exit code 2", REQUESTS
    )
    method: str = option("head", "method for leaf links; pages always use GET", REQUESTS, choices=("head", "get"))
    soft_404: bool = option(
        False, "report pages that answer 200 with their host's 'not found' page (a probe or two per host; leaf"
        " HTML links are asked with GET)", REQUESTS,
    )
    tls_expiry: str | None = option(
        None, "warn when an HTTPS host's certificate expires within AGE: 90s, 30m, 12h, 21d, 2w", REQUESTS,
        metavar="AGE", default_text="not checked",
    )
    tls_expiry_fail: bool = option(False, "a certificate expiring within --tls-expiry fails the run", REQUESTS)
    user_agent: str = option(
        "", "User-Agent header", REQUESTS, metavar="UA", default_text="linkhound/<version> (+project URL)"
    )
    header: tuple[str, ...] = option(
        (), "extra header sent with every request", REQUESTS, short="-H", metavar="'NAME: VALUE'", secret=True
    )
    basic_auth: tuple[str, ...] = option(
        (), "HTTP Basic credentials for URLs matching URL_REGEX", REQUESTS, metavar="'URL_REGEX USER:PASSWORD'",
        secret=True,
    )
    cookie_jar: str | None = option(
        None, "cookies.txt (Netscape format) read at the start and written at the end", REQUESTS, metavar="FILE"
    )
    insecure: bool = option(False, "don't verify TLS certificates", REQUESTS)
    http_client: str = option(
        "auto", "HTTP stack; auto is native (linkhound's own HTTP/1.1 for http://, reqwest for https:// and"
        " proxies), or aiohttp when --exclude-private and friends are on", REQUESTS,
        choices=("auto", "native", "reqwest", "aiohttp"),
    )
    max_body_size: int = option(20 * 1024 * 1024, "largest body read from a server (local files are read whole)",
                                REQUESTS, metavar="BYTES", at_least=1)
    workers: int | None = option(
        None, "processes that parse pages (and local documents, 256 KiB or more of them); 0 parses in the main"
        " process, and makes a big json, csv or junit report there too (not half of it in a forked child)",
        REQUESTS, metavar="N", at_least=0,
        default_text="1 with 2+ cores, else 0",
    )
    jobs: int | None = option(
        None, "processes that check a list of links at once, each its share of the URLs and of every host's "
        "limits (one when the run crawls, keeps a state or cache, or reads a URL or a sitemap)", REQUESTS,
        metavar="N", at_least=1,
        default_text="for a check of many links with 2+ cores, a second process that joins once the first is "
        "busy; else 1",
    )
    host_config: str | None = option(None, 'TOML file of [hosts."name"] limits and headers', REQUESTS,
                                     metavar="FILE")
    hosts: dict[str, Any] = option(
        help='per-host limits and headers: [hosts."name"] tables with concurrency, rate, burst, headers',
        group=REQUESTS, factory=dict, secret=True, config_only=True,
    )
    host_stats: bool = option(False, "print per-host request statistics", REQUESTS)
    cache: bool = option(False, "reuse results of earlier runs kept in --cache-file", REQUESTS)
    cache_file: str = option(".linkhound/cache.sqlite", "the results cache, shared by runs", REQUESTS, metavar="FILE")
    max_cache_age: str = option("1d", "how long a cached result is reused without asking: 90s, 30m, 12h, 1d, 2w",
                                REQUESTS, metavar="AGE")
    cache_errors: bool = option(False, "reuse cached failures too (by default only successes are)", REQUESTS)
    cache_exclude_status: frozenset[int] = option(
        frozenset(), "never reuse cached results with these codes, e.g. 429,500..=599", REQUESTS, metavar="CODES",
        parse=lambda spec: parse_accept(spec, "cache_exclude_status") if spec.strip() else frozenset(),
        show=format_accept, default_text="none",
    )
    # -- output
    format: str = option("compact", f"report format: {', '.join(FORMATS)}", OUTPUT, short="-f", metavar="FORMAT",
                         command_only=True)
    output: str | None = option(None, "write the report to FILE", OUTPUT, short="-o", metavar="FILE",
                                command_only=True)
    step_summary: str | None = option(
        None, "also append the Markdown report to FILE ($GITHUB_STEP_SUMMARY), its tables cut to keep the file"
        " within the 1 MiB a GitHub job summary may hold", OUTPUT, metavar="FILE", command_only=True)
    verbose: bool = option(False, "list successful links too", OUTPUT, short="-v", command_only=True)
    summary_only: bool = option(False, "print only the summary", OUTPUT, command_only=True)
    all_referrers: bool = option(False, "list every page that uses a link (default: the first five)", OUTPUT,
                                 command_only=True)
    progress: bool = option(True, "a progress bar on stderr when it is a terminal", OUTPUT, command_only=True)
    quiet: bool = option(False, "nothing on stderr but errors: no progress bar, summary or notes", OUTPUT, short="-q",
                         command_only=True)
    color: str = option(
        "auto", "colour the report: auto (on a terminal, unless NO_COLOR is set), always or never", OUTPUT,
        choices=("auto", "always", "never"), command_only=True,
    )
    suggest_fixes: bool = option(
        False, "report links that moved for good (301, 308 redirects) with the URL to use instead", OUTPUT)
    suggest_https: bool = option(
        False, "report http:// links whose https:// twin answers the same (one more request per such link)", OUTPUT)
    # derived, filled by _validate()
    _compiled: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in option_fields(Settings):
            value = getattr(self, f.name)
            typed = coerce(f, value)
            if typed is not value:  # a list from Python becomes a tuple, 3 becomes 3.0: set once, here
                object.__setattr__(self, f.name, typed)
        self._validate()

    def _validate(self) -> None:
        """What a type can't say: values that must be known, exist or fit together."""
        for s in self.scheme:
            if s.lower() not in KNOWN_SCHEMES:
                raise OptionError("scheme", f"unknown scheme '{s}' (known: {', '.join(sorted(KNOWN_SCHEMES))})")
        for host in self.scope_domain:
            if not _is_host(host):
                raise OptionError("scope_domain", f"'{host}' is not a host name (like docs.example.org: no scheme, "
                                  "port or path)")
        if self.base_url is not None and not _is_base_url(self.base_url):
            raise OptionError("base_url", f"'{self.base_url}' is not an absolute http(s) or file URL "
                              "(like https://example.org/docs/)")
        if self.root_dir is not None and not os.path.isdir(self.root_dir):
            why = "is not a directory" if os.path.exists(self.root_dir) else "doesn't exist"
            raise OptionError("root_dir", f"'{self.root_dir}' {why} (it must be an existing directory)")
        if self.sitemap is not None:
            if self.recursive:  # (like --max-depth, it has nothing to do without a crawl)
                object.__setattr__(self, "sitemap_drift", True)
            if not self.sitemap.lower().startswith(("http://", "https://")) and not os.path.isfile(self.sitemap):
                raise OptionError("sitemap", f"'{self.sitemap}' is neither an http(s) URL nor an existing file")
        if self.sitemap_drift and not self.recursive:
            raise OptionError("sitemap_drift", "needs -r: it compares the sitemap with what a crawl reaches")
        if self.format not in FORMATS:
            raise OptionError("format", f"unknown format '{self.format}' (choose from {', '.join(FORMATS)})")
        for h in self.header:
            name, colon, value = h.partition(":")
            if not colon or not name.strip():
                raise OptionError("header", f"'{h.split(' ', 1)[0]} ...' must look like 'Name: value'")
            if (problem := header_problem(name.strip(), value)) is not None:
                raise OptionError("header", problem)
        if header_problem("User-Agent", self.user_agent) is not None:
            raise OptionError("user_agent", "holds a control character (a line break?)")
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
        if self.http_client in ("native", "reqwest") and c["addresses"].active:
            raise OptionError(
                "http_client",
                f"{self.http_client} can't vet the addresses a name resolves to, which --exclude-private and its"
                " friends need: use 'auto' or 'aiohttp'",
            )
        if self.restart and self.state is None:
            raise OptionError("restart", "needs --state DIR: it forgets the crawl kept there")
        if self.restart and self.rerun_failed:
            raise OptionError("rerun_failed", "needs the last run's results, which --restart forgets")
        if self.rerun_failed and self.state is None and not self.cache:
            raise OptionError("rerun_failed", "needs --state DIR or --cache: the results of the last run are kept"
                              " there")
        try:
            c["max_cache_age"] = parse_age(self.max_cache_age)
        except ValueError as e:
            raise OptionError("max_cache_age", str(e)) from None
        try:
            c["tls_expiry"] = parse_age(self.tls_expiry) if self.tls_expiry is not None else None
        except ValueError as e:
            raise OptionError("tls_expiry", str(e)) from None
        if self.tls_expiry_fail and self.tls_expiry is None:
            raise OptionError("tls_expiry_fail", "needs --tls-expiry AGE: the window a certificate must outlast")
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
    def cache_age(self) -> float:
        """--max-cache-age in seconds."""
        return self._compiled["max_cache_age"]  # type: ignore[no-any-return]

    @property
    def tls_window(self) -> float | None:
        """--tls-expiry in seconds; None when certificates are not checked."""
        return self._compiled["tls_expiry"]  # type: ignore[no-any-return]

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
    """The options' names: config keys, keyword options, and (with dashes) long flags."""
    return [f.name for f in option_fields(Settings)]


def command_only_names() -> frozenset[str]:
    """The options of how the command writes its report (format, output, quiet...): no keyword of a library call."""
    return frozenset(f.name for f in option_fields(Settings) if f.option.command_only)


def option_reference() -> str:
    """The option reference of docs/config.md (between its options:start and options:end markers)."""
    return reference(option_fields(Settings))


def _is_host(text: str) -> bool:
    if text.startswith("[") and text.endswith("]"):
        try:
            return ipaddress.ip_address(text[1:-1]).version == 6
        except ValueError:
            return False
    return len(text) <= 253 and _HOST.fullmatch(text) is not None


def _is_base_url(text: str) -> bool:
    if any(c.isspace() or not c.isprintable() for c in text):
        return False
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:  # a bad [IPv6] or port
        return False
    if parts.scheme.lower() == "file":
        return parts.path.startswith("/")
    return parts.scheme.lower() in ("http", "https") and bool(host)
