"""Which heading ids the #fragments of links to a local Markdown file are judged by: GitHub's, or the ids MkDocs
gives the files of its docs_dir (Python-Markdown's toc extension, with the slugify its mkdocs.yml names).

mkdocs.yml is read without a YAML parser: only docs_dir and the toc extension's slugify and separator matter,
and a slugify this module doesn't know leaves toc's own."""

from __future__ import annotations

import os
import re
from typing import Literal

from .extract import GITHUB, MKDOCS, HeadingIds

_CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
_DOCS_DIR = re.compile(r"^docs_dir:[ \t]*['\"]?([^'\"#\n]*?)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)
_CASE = re.compile(r"\bcase:[ \t]*['\"]?(none|lower-ascii|lower|fold)\b")
_NORMALIZE = re.compile(r"\bnormalize:[ \t]*['\"]?(NFC|NFD|NFKC|NFKD)\b")
_CASES: dict[str, Literal["none", "lower", "lower-ascii", "fold"]] = {
    "none": "none", "lower": "lower", "lower-ascii": "lower-ascii", "fold": "fold"}
_FORMS: dict[str, Literal["NFC", "NFD", "NFKC", "NFKD"]] = {"NFC": "NFC", "NFD": "NFD", "NFKC": "NFKC", "NFKD": "NFKD"}
_SEPARATOR = re.compile(r"^[ \t]*separator:[ \t]*(?:'([^']*)'|\"([^\"]*)\"|([^\s#]+))", re.MULTILINE)


def ids_of_config(text: str) -> HeadingIds:
    """The heading ids of a MkDocs project, by its mkdocs.yml (toc's slugify and separator)."""
    toc = _block(text, "markdown.extensions.toc") or _block(text, "toc")
    slugify = _block(toc, "slugify", with_line=True)
    separator = _SEPARATOR.search(toc)
    sep = next((g for g in separator.groups() if g is not None), "-") if separator else "-"
    if "pymdownx.slugs.slugify" in slugify:
        case, normalize = _CASE.search(slugify), _NORMALIZE.search(slugify)
        return HeadingIds("toc", "pymdownx", _CASES.get(case[1] if case else "", "none"),
                          _FORMS.get(normalize[1] if normalize else "", "NFC"), sep)
    if "slugify_unicode" in slugify:
        return HeadingIds("toc", "unicode", separator=sep)
    return HeadingIds("toc", separator=sep)


def _block(text: str, key: str, with_line: bool = False) -> str:
    """The lines indented under the first `key:` (a mapping key or a list item's), as they are; with_line: that
    line too (a value on the same line)."""
    match = re.search(rf"^([ \t]*(?:-[ \t]+)?){re.escape(key)}:(.*)$", text, re.MULTILINE)
    if match is None:
        return ""
    indent = len(match[1])
    lines = [match[2]] if with_line else []
    for line in text[match.end() + 1 :].split("\n"):
        if line.strip() and len(line) - len(line.lstrip(" \t")) <= indent:
            break
        lines.append(line)
    return "\n".join(lines)


class HeadingStyles:
    """The heading ids of each local Markdown file, by the --heading-ids setting (auto, github, mkdocs)."""

    def __init__(self, setting: str) -> None:
        self._setting = setting
        self._projects: dict[str, tuple[str, HeadingIds] | None] = {}  # directory -> its project's docs_dir, ids

    def of(self, path: str | None) -> HeadingIds:
        if self._setting == "github" or path is None:
            return GITHUB
        folder = os.path.dirname(os.path.abspath(path))
        project = self._project(folder)
        if project is not None:
            docs, ids = project
            if folder == docs or folder.startswith(docs + os.sep):
                return ids
        return MKDOCS if self._setting == "mkdocs" else GITHUB

    def _project(self, folder: str) -> tuple[str, HeadingIds] | None:
        """The MkDocs project folder is in (by the nearest mkdocs.yml above it), once per folder."""
        if folder in self._projects:
            return self._projects[folder]
        project = None
        for name in _CONFIG_NAMES:
            config = os.path.join(folder, name)
            try:
                with open(config, encoding="utf-8", errors="replace") as f:
                    text = f.read(1 << 20)
            except OSError:
                continue
            docs = _DOCS_DIR.search(text)
            docs_dir = docs[1].strip() if docs and docs[1].strip() else "docs"
            project = os.path.normpath(os.path.join(folder, docs_dir)), ids_of_config(text)
            break
        else:
            parent = os.path.dirname(folder)
            project = self._project(parent) if parent != folder else None
        self._projects[folder] = project
        return project
