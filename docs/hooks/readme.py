"""MkDocs hook: pages take their sections from README.md, so the README stays the one source of what they say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

README = Path(__file__).resolve().parents[2] / "README.md"
# <!-- readme --> is the README's opening (its title left out); <!-- readme: Title --> its "## Title" section.
MARKER = re.compile(r"<!--\s*readme(?::\s*(.+?))?\s*-->")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def readme_sections(text: str) -> dict[str, str]:
    """The README cut at its "## " headings, outside code blocks: "" holds what comes before the first one."""
    parts: dict[str, list[str]] = {"": []}
    current, fenced = "", False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            current = line[3:].strip()
            parts[current] = []
        if not (current == "" and line.startswith("# ")):
            parts[current].append(line)
    return {title: "\n".join(lines).strip() + "\n" for title, lines in parts.items()}


def site_link(target: str, repo_url: str) -> str:
    """A README link as the site needs it: docs/X is a page beside this one; other files are on GitHub."""
    if target.startswith(("#", "/")) or SCHEME.match(target):
        return target
    if target.startswith("docs/"):
        return target.removeprefix("docs/")
    return f"{repo_url.rstrip('/')}/blob/main/{target}"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if not MARKER.search(markdown):
        return markdown
    sections = readme_sections(README.read_text(encoding="utf-8"))
    repo_url = config.get("repo_url") or ""

    def section(match: re.Match[str]) -> str:
        title = match[1] or ""
        if title not in sections:
            raise PluginError(f"{page.file.src_path}: README.md has no section '## {title}'")
        return LINK.sub(lambda m: f"]({site_link(m[1], repo_url)})", sections[title])

    return MARKER.sub(section, markdown)
