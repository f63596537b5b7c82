"""linkhound: find broken links in files, URL lists, sitemaps and whole websites. An async, typed library.

Each public name loads with the module that defines it, on first use: `linkhound --version`, and a run that
needs no config file or fix plan don't pay for importing them.
"""

import importlib
import typing  # as a module: the package's namespace holds its public names, and modules

# Eager, unlike the rest: the function would otherwise lose its name to the submodule once that loads.
from .throttle import Throttle, throttle
from .version import __version__

if typing.TYPE_CHECKING:
    from .api import check, crawl, make_settings, start
    from .config import Config, load_config
    from .exceptions import ConfigError, InputError, LinkhoundError, OptionError, UsageError
    from .fix_plan import FileFix, plan_fixes
    from .host_pool import HostStats
    from .run import Run
    from .settings import Settings, parse_accept
    from .status import Status
    from .suggestions import Suggestion
    from .summary import Report, SitemapDrift, Summary
    from .types import Certificate, Extraction, Link, Page, RawLink, Reference, Result

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
    "SitemapDrift",
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

_HOME = {  # public name -> the module that defines it (the imports under TYPE_CHECKING above, for the loader)
    **dict.fromkeys(("check", "crawl", "make_settings", "start"), ".api"),
    **dict.fromkeys(("Config", "load_config"), ".config"),
    **dict.fromkeys(("ConfigError", "InputError", "LinkhoundError", "OptionError", "UsageError"), ".exceptions"),
    **dict.fromkeys(("FileFix", "plan_fixes"), ".fix_plan"),
    "HostStats": ".host_pool",
    "Run": ".run",
    **dict.fromkeys(("Settings", "parse_accept"), ".settings"),
    "Status": ".status",
    "Suggestion": ".suggestions",
    **dict.fromkeys(("Report", "SitemapDrift", "Summary"), ".summary"),
    **dict.fromkeys(("Certificate", "Extraction", "Link", "Page", "RawLink", "Reference", "Result"), ".types"),
}


if not typing.TYPE_CHECKING:  # (a type checker sees the imports above: a misspelled name is an error there)

    def __getattr__(name: str) -> typing.Any:
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value  # the next lookup is a plain one
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
