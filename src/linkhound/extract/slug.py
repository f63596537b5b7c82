"""Heading anchors as GitHub makes them: github_slug, and Slugger for the -1, -2 suffixes of repeats."""

from __future__ import annotations

import re
import unicodedata

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
