"""Heading anchors as GitHub makes them (github_slug, and Slugger for the -1, -2 suffixes of repeats), and as
Python-Markdown's toc extension makes them for MkDocs (HeadingIds, toc_ids: _1, _2 suffixes)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

_ASCII_DROP = re.compile(r"[^a-z0-9 _-]")


# Symbols Unicode counts as alphabetic (Other_Alphabetic, outside the marks): Ⓐ-ⓩ, 🄰-🅉, 🅐-🅩, 🅰-🆉
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def _keep(char: str) -> bool:
    # github-slugger keeps what is alphabetic (letters, letter numbers such as Ⅳ, and the symbols above), marks,
    # decimal digits, connector punctuation (the underscore), space and hyphen; not ² ① ¼ (other numbers)
    category = unicodedata.category(char)
    if char in " -" or category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
        return True
    return category == "So" and any(low <= ord(char) <= high for low, high in _ALPHABETIC_SYMBOLS)


def github_slug(heading_text: str) -> str:
    """The id GitHub gives a heading: lower-cased, punctuation dropped, each space one hyphen.

    Nothing is trimmed: "Features ✨" is "features-" on GitHub, the emoji goes and its space stays.
    """
    text = heading_text.lower()
    kept = _ASCII_DROP.sub("", text) if text.isascii() else "".join(char for char in text if _keep(char))
    return kept.replace(" ", "-")


class Slugger:
    """Unique slugs for the headings of one document, in order: "intro", "intro-1", "intro-2"."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def slug(self, heading_text: str) -> str:
        # The same loop as github-slugger: a generated "x-1" also reserves that name for a later heading.
        base = slug = github_slug(heading_text)
        while slug in self._seen:
            self._seen[base] += 1
            slug = f"{base}-{self._seen[base]}"
        self._seen[slug] = 0
        return slug

    def reserve(self, name: str) -> None:
        """Take `name` (a heading's explicit id), so a later heading whose slug it is gets a suffix instead."""
        self._seen.setdefault(name, 0)


# -- Python-Markdown's toc extension (MkDocs) ------------------------------------------------------------------

_TOC_DROP = re.compile(r"[^\w\s-]")
_PYMDOWNX_DROP = re.compile(r"[^\w\- ]")
_TAG = re.compile(r"</?[^>]*>")
_REPEAT = re.compile(r"(.*)_([0-9]+)")


@dataclass(frozen=True, slots=True)
class HeadingIds:
    """How a renderer names a Markdown file's headings: GitHub's slugs, or those of Python-Markdown's toc extension
    (what MkDocs renders with) and the slugify its mkdocs.yml names."""

    style: Literal["github", "toc"] = "github"
    slugify: Literal["ascii", "unicode", "pymdownx"] = "ascii"  # toc's slugify, slugify_unicode, pymdownx.slugs
    case: Literal["none", "lower", "lower-ascii", "fold"] = "lower"  # pymdownx.slugs' case
    normalize: Literal["NFC", "NFD", "NFKC", "NFKD"] = "NFC"  # pymdownx.slugs' Unicode form
    separator: str = "-"

    def slug(self, heading_text: str) -> str:
        """The id of a heading whose text (markup gone, entities decoded) is heading_text, before repeats."""
        sep = self.separator
        if self.slugify == "pymdownx":
            text = _TAG.sub("", unicodedata.normalize(self.normalize, heading_text)).strip()
            if self.case == "lower":
                text = text.lower()
            elif self.case == "lower-ascii":
                text = "".join(c.lower() if "A" <= c <= "Z" else c for c in text)
            elif self.case == "fold":
                text = text.casefold()
            return _PYMDOWNX_DROP.sub("", text).replace(" ", sep)
        text = heading_text
        if self.slugify == "ascii":  # accents dropped: "Café" is "cafe"; what has no ASCII form goes
            text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        text = _TOC_DROP.sub("", text).strip().lower()
        return re.sub(rf"[{re.escape(sep)}\s]+", sep, text)


GITHUB = HeadingIds()
MKDOCS = HeadingIds(style="toc")


def toc_ids(headings: list[tuple[str, str | None]], taken: set[str], ids: HeadingIds) -> list[str]:
    """The ids toc gives headings ((text, explicit id or None), in order): every id written in the document is
    taken first, then each heading without one gets its slug, or the slug with _1, _2, ... (an empty one: _1)."""
    out = []
    for text, explicit in headings:
        if explicit:
            out.append(explicit)
            continue
        slug = ids.slug(text)
        while slug in taken or not slug:
            repeat = _REPEAT.fullmatch(slug)
            slug = f"{repeat[1]}_{int(repeat[2]) + 1}" if repeat else f"{slug}_1"
        taken.add(slug)
        out.append(slug)
    return out
