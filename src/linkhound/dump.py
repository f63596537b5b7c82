"""What a run would check, without checking anything: the links of local inputs, and URL inputs as they are."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from .heading_styles import HeadingStyles
from .inputs import INPUT_SOURCE, Input
from .ledger import reference
from .links import LinkRules
from .local_files import LocalFiles
from .settings import Settings
from .triage import Route, triage
from .types import Reference
from .urls import Scope


class Planned(NamedTuple):
    """A link a run would check: its URL (with the #fragment that would be checked) and where it is."""

    url: str
    reference: Reference


def input_reference(inp: Input) -> Reference:
    """Where a URL input was named: "command line", a line of a --files-from file, or "(input)"."""
    return Reference(inp.named_in or INPUT_SOURCE, inp.line, 1 if inp.line else 0, "input", "", inp.location)


def planned(inputs: Iterable[Input], settings: Settings) -> Iterator[Planned]:
    """Each link of the local inputs that a run would check or report (excluded, unsupported and --offline
    links left out), in document order; a URL input as itself, not fetched. Nothing is crawled."""
    rules = LinkRules.from_settings(settings)
    files = LocalFiles(rules, settings.index_files, settings.include_code, HeadingStyles(settings.heading_ids))
    fragments = rules.check_fragments(True)
    nowhere = Scope((), frozenset())
    for inp in inputs:
        if inp.is_url:
            yield Planned(inp.location, input_reference(inp))
            continue
        for raw, resolved in files.links(inp):
            route = triage(resolved, False, rules, nowhere)
            if route.route is Route.DECIDED:
                continue
            url = raw.text if resolved is None else resolved.url
            if resolved is not None and resolved.fragment is not None and fragments:
                url += "#" + resolved.fragment
            yield Planned(url, reference(inp.location, raw))

