"""Documents on this machine: each parsed once (as an input, or for the anchors a #fragment asks about), and
file: targets checked on disk."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .extract import Kind, extract, kind_for_path, text_links
from .fragments import Anchors, is_always_valid
from .heading_styles import HeadingStyles
from .inputs import Input
from .links import LinkRules, Resolved
from .local import (
    CONVENTIONAL_INDEX_FILES,
    EMAIL_HINT,
    check_file,
    file_host,
    file_url_to_path,
    index_denied,
    index_file,
    looks_like_email,
    read_document,
)
from .status import Status
from .types import Extraction, RawLink, Result
from .urls import resolve, scheme_of

if TYPE_CHECKING:
    from .parse_ahead import ParseAhead

AnchorLoader = Callable[[], Anchors | None]


class LocalFiles:
    def __init__(self, rules: LinkRules, index_files: tuple[str, ...], include_code: bool, headings: HeadingStyles,
                 ahead: ParseAhead | None = None):
        self._rules = rules
        self._ahead = ahead  # input documents being parsed by a child process
        self._resolved: dict[str, list[Resolved | None]] = {}  # path -> the links of _parsed[path], resolved
        self._index_files = index_files
        self._include_code = include_code
        self._headings = headings  # the heading ids of each Markdown file (GitHub's, or MkDocs')
        self._anchors: dict[str, Anchors | None] = {}  # path -> its anchors
        self._parsed: dict[str, Extraction] = {}  # path -> a document parsed for its anchors before it was read
        self._in_hand: set[str] = set()  # paths of documents read from stdin: nowhere on disk
        self._bare: dict[str, str] = {}  # file: URL -> why a directory has no index file to read, or ""

    def links(self, inp: Input) -> Iterator[tuple[RawLink, Resolved | None]]:
        """A local input's links, each with its resolved target. A text file's are found as they are taken, so
        the first links of a long URL list go out while the rest is read."""
        assert inp.content is not None and inp.kind is not None
        rules = self._rules
        if inp.stdin and inp.path is not None:
            self._in_hand.add(inp.path)  # links to it (its own #fragments) find it here, not on disk
        base = rules.local_base(inp.path) if inp.path else ""
        raws: Iterable[RawLink]
        if inp.kind is Kind.TEXT:
            raws = text_links(inp.content)
        else:
            extraction = self.extract(inp.content, inp.path, inp.kind)
            raws, base = extraction.links, rules.document_base(base, extraction)
            resolved = self._resolved.pop(inp.path, None) if inp.path is not None else None
            if resolved is not None and not inp.stdin:  # resolved by the process that parsed it
                yield from zip(raws, resolved, strict=True)
                return
        resolve_link = rules.resolver(base, inp.path is not None)
        if inp.stdin and inp.path is not None and base == rules.local_base(inp.path) and not base.startswith("file:"):
            # stdin at --base-url: its own #fragments are in hand, not at the URL a file named "-" would have
            own = rules.resolver(Path(inp.path).as_uri(), True)
            for raw in raws:
                same_document = not raw.text or raw.text[0] == "#"
                yield raw, own(raw.text) if same_document else resolve_link(raw.text)
            return
        for raw in raws:
            yield raw, resolve_link(raw.text)

    def extract(self, body: bytes, path: str | None, kind: Kind) -> Extraction:
        """A local input's extraction (reused when a link to one of its #fragments had it parsed already)."""
        base = self._rules.local_base(path) if path else ""
        done = self._parsed.pop(path, None) if path is not None else None
        if done is None and path is not None and self._ahead is not None:
            done = self._take(path, kind)
        extraction = done or self._extract(body, base, kind, path)
        if path is not None and kind in (Kind.HTML, Kind.MARKDOWN):
            self._anchors[path] = Anchors.of(extraction.anchors, markdown=kind is Kind.MARKDOWN)
        return extraction

    def _take(self, path: str, kind: Kind) -> Extraction | None:
        """The extraction of the input at path from the process that parsed it ahead, if it has it (then its links
        resolved are kept for links())."""
        parsed = self._ahead.take(path, kind) if self._ahead is not None else None
        if parsed is None:
            return None
        extraction, resolved = parsed
        if resolved is not None:
            self._resolved[path] = resolved
        return extraction

    def read_ahead(self, inp: Input) -> Extraction:
        """A local input's extraction before its turn (a sitemap's URLs set the crawl's scope); links() reuses it."""
        assert inp.content is not None and inp.kind is not None and inp.path is not None
        extraction = self._parsed[inp.path] = self._extract(inp.content, "", inp.kind, inp.path)
        return extraction

    def _extract(self, body: bytes, base: str, kind: Kind, path: str | None) -> Extraction:
        return extract(body, base, kind, include_code=self._include_code, heading_ids=self._headings.of(path))

    def check(self, url: str) -> tuple[Result, AnchorLoader | None]:
        """The verdict on a file: URL, and how to get its anchors when a #fragment asks."""
        host = file_host(url)
        if host:  # file://server/share/x: not on this machine
            return Result(url, Status.UNSUPPORTED, None, f"file: URL of another host ({host}): not looked up"), None
        path = file_url_to_path(url)
        if path in self._in_hand:
            return Result(url, Status.OK, None, "standard input"), lambda: self._anchors.get(path)
        found = check_file(path, self._index_files, self._rules.root_dir)
        reason = found.reason
        if not found.status.is_ok and looks_like_email(url):
            reason += f" ({EMAIL_HINT})"
        loader = None
        if found.status.is_ok and found.path is not None:
            index = found.path
            loader = lambda: self.anchors(index)  # noqa: E731
        return Result(url, found.status, None, reason), loader

    def no_index(self, url: str, fragment: str) -> str | None:
        """Why url#fragment can't be found when url is a directory with no index file to hold the fragment; None
        otherwise (a file, a directory with an index file, a fragment always valid, or a target the check of
        url itself will report)."""
        if is_always_valid(fragment) or self._index_files:  # with --index-files, such a directory is broken
            return None
        why = self._bare.get(url)
        if why is None:
            why = self._bare[url] = self._why_no_index(file_url_to_path(url))
        return why or None

    def _why_no_index(self, path: str) -> str:
        if path in self._in_hand or not os.path.isdir(path):
            return ""
        index = index_file(path)
        denied = index_denied(path, index)
        if index is not None and denied is None:
            return ""
        root = self._rules.root_dir
        if root is not None and not check_file(path, (), root).status.is_ok:  # outside --root-dir: its check says so
            return ""
        return denied or f"directory with no index file ({', '.join(CONVENTIONAL_INDEX_FILES)})"

    def anchors(self, path: str) -> Anchors | None:
        """Anchors of a file on disk: from its extraction if it was read as an input, else read and parsed once."""
        if path not in self._anchors:
            kind = kind_for_path(path)
            anchors = None
            if kind in (Kind.HTML, Kind.MARKDOWN):
                parsed = self._take(path, kind)
                body = read_document(path) if parsed is None else None  # (whole, as an input is read)
                if body is not None:
                    base = self._rules.local_base(path)
                    parsed = self._extract(body, base, kind, path)
                if parsed is not None:
                    self._parsed[path] = parsed
                    anchors = Anchors.of(parsed.anchors, markdown=kind is Kind.MARKDOWN)
                else:  # checked fine, then could not be read (an index file, a file changed since): no anchor holds
                    anchors = Anchors(frozenset())
            self._anchors[path] = anchors
        return self._anchors[path]

    def seed_urls(self, inputs: list[Input], recursive: bool) -> list[str]:
        """The URLs a crawl starts from, which set its scope: URL inputs, and with -r the URLs of local sitemaps
        (read now, before any link is sorted: a page's scope must not depend on the order inputs are read)."""
        urls = [resolve(i.location, "") or i.location for i in inputs if i.is_url]
        if recursive:
            for inp in inputs:
                if inp.kind is Kind.SITEMAP and inp.path is not None:
                    listed = (resolve(raw.text, "") for raw in self.read_ahead(inp).links)
                    urls.extend(url for url in listed if url is not None and scheme_of(url) in ("http", "https"))
        return urls
