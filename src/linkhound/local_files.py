"""Documents on this machine: each parsed once (as an input, or for the anchors a #fragment asks about), and
file: targets checked on disk."""

from __future__ import annotations

from collections.abc import Callable

from .extract import Kind, extract, kind_for_path
from .fragments import Anchors
from .links import LinkRules
from .local import check_file, file_url_to_path, read_document
from .types import Extraction, Result

AnchorLoader = Callable[[], Anchors | None]


class LocalFiles:
    def __init__(self, rules: LinkRules, index_files: tuple[str, ...], max_body_size: int, include_code: bool):
        self._rules = rules
        self._index_files = index_files
        self._max_body_size = max_body_size
        self._include_code = include_code
        self._anchors: dict[str, Anchors | None] = {}  # path -> its anchors
        self._parsed: dict[str, Extraction] = {}  # path -> a document parsed for its anchors before it was read

    def extract(self, body: bytes, path: str | None, kind: Kind) -> Extraction:
        """A local input's extraction (reused when a link to one of its #fragments had it parsed already)."""
        base = self._rules.local_base(path) if path else ""
        done = self._parsed.pop(path, None) if path is not None else None
        extraction = done or extract(body, base, kind, include_code=self._include_code)
        if path is not None and kind in (Kind.HTML, Kind.MARKDOWN):
            self._anchors[path] = Anchors.of(extraction.anchors, markdown=kind is Kind.MARKDOWN)
        return extraction

    def check(self, url: str, rooted: bool) -> tuple[Result, AnchorLoader | None]:
        """The verdict on a file: URL, and how to get its anchors when a #fragment asks."""
        found = check_file(file_url_to_path(url), self._index_files, self._rules.root_dir)
        reason = found.reason
        if rooted and not found.status.is_ok and self._rules.root_dir is None:
            reason += " (a root-relative link: set --root-dir to the site's top folder)"
        loader = None
        if found.status.is_ok and found.path is not None:
            path = found.path
            loader = lambda: self.anchors(path)  # noqa: E731
        return Result(url, found.status, None, reason), loader

    def anchors(self, path: str) -> Anchors | None:
        """Anchors of a file on disk: from its extraction if it was read as an input, else read and parsed once."""
        if path not in self._anchors:
            kind = kind_for_path(path)
            anchors = None
            if kind in (Kind.HTML, Kind.MARKDOWN):
                body = read_document(path, self._max_body_size)
                if body is not None:
                    base = self._rules.local_base(path)
                    parsed = self._parsed[path] = extract(body, base, kind, include_code=self._include_code)
                    anchors = Anchors.of(parsed.anchors, markdown=kind is Kind.MARKDOWN)
            self._anchors[path] = anchors
        return self._anchors[path]
