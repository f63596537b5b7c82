"""linkhound: find broken links in files, URL lists, sitemaps and whole websites. An async, typed library."""

from .api import check, crawl, make_settings, start
from .config import Config, load_config
from .exceptions import ConfigError, InputError, LinkhoundError, OptionError, UsageError
from .fix_plan import FileFix, plan_fixes
from .host_pool import HostStats
from .run import Run
from .settings import Settings, parse_accept
from .status import Status
from .suggestions import Suggestion
from .summary import Report, Summary
from .throttle import Throttle, throttle
from .types import Certificate, Extraction, Link, Page, RawLink, Reference, Result
from .version import __version__

__all__ = [
    "Certificate",
    "Config",
    "ConfigError",
    "Extraction",
    "FileFix",
    "HostStats",
    "InputError",
    "Link",
    "LinkhoundError",
    "OptionError",
    "Page",
    "RawLink",
    "Reference",
    "Report",
    "Result",
    "Run",
    "Settings",
    "Status",
    "Suggestion",
    "Summary",
    "Throttle",
    "UsageError",
    "__version__",
    "check",
    "crawl",
    "load_config",
    "make_settings",
    "parse_accept",
    "plan_fixes",
    "start",
    "throttle",
]
