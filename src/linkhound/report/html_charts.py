"""Inline SVG bar charts for the html format: results by status, and by host (stacked by outcome)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from html import escape

from ..status import Status
from ..summary import Summary
from ..types import Result
from .common import LABELS, host

COLORS: dict[Status, str] = {
    Status.OK: "#2e7d32",
    Status.BROKEN: "#c62828",
    Status.SOFT_404: "#d84315",
    Status.ERROR: "#ad1457",
    Status.TIMEOUT: "#e65100",
    Status.RATE_LIMITED: "#f9a825",
    Status.BLOCKED: "#6a1b9a",
    Status.EXCLUDED: "#78909c",
    Status.UNSUPPORTED: "#90a4ae",
    Status.SKIPPED: "#b0bec5",
}
# Host bars stack four outcomes, coloured like the status that stands for each.
OUTCOMES = (
    ("ok", Status.OK),
    ("failed", Status.BROKEN),
    ("blocked", Status.BLOCKED),
    ("unchecked", Status.SKIPPED),
)
MAX_HOSTS = 12
_LABEL_W, _BAR_W, _ROW_H, _BAR_H = 150, 260, 24, 16


def status_chart(summary: Summary) -> str:
    rows = [(LABELS[s], n, s) for s in Status if (n := summary.count(s))]
    if not rows:
        return '<p class="muted">No results.</p>'
    top = max(n for _, n, _ in rows)
    body = []
    for i, (label, n, status) in enumerate(rows):
        y = i * _ROW_H
        width = max(1.0, _BAR_W * n / top)
        body.append(
            f'<text x="{_LABEL_W - 8}" y="{y + 13}" class="label">{label}</text>'
            f'<rect x="{_LABEL_W}" y="{y + 2}" width="{width:.1f}" height="{_BAR_H}" rx="2"'
            f' fill="{COLORS[status]}"><title>{label}: {n:,}</title></rect>'
            f'<text x="{_LABEL_W + width + 6:.1f}" y="{y + 13}" class="value">{n:,}</text>'
        )
    return _svg("Results by status", len(rows), body)


def host_chart(results: Iterable[Result]) -> str:
    counts: dict[str, Counter[str]] = {}
    for result in results:
        counts.setdefault(host(result.url) or "(no host)", Counter())[_outcome(result.status)] += 1
    if not counts:
        return '<p class="muted">No results.</p>'
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1].total(), kv[0]))
    shown, rest = ranked[:MAX_HOSTS], ranked[MAX_HOSTS:]
    if rest:
        others: Counter[str] = sum((c for _, c in rest), Counter())
        shown.append((f"{len(rest):,} other hosts", others))
    top = max(c.total() for _, c in shown)
    body = []
    for i, (name, outcome) in enumerate(shown):
        y = i * _ROW_H
        short = name if len(name) <= 24 else name[:23] + "…"
        label = f"<title>{escape(name)}</title>{escape(short)}"
        body.append(f'<text x="{_LABEL_W - 8}" y="{y + 13}" class="label">{label}</text>')
        x = float(_LABEL_W)
        for key, status in OUTCOMES:
            if n := outcome[key]:
                width = _BAR_W * n / top
                body.append(
                    f'<rect x="{x:.1f}" y="{y + 2}" width="{width:.1f}" height="{_BAR_H}"'
                    f' fill="{COLORS[status]}"><title>{escape(name)}: {n:,} {key}</title></rect>'
                )
                x += width
        body.append(f'<text x="{x + 6:.1f}" y="{y + 13}" class="value">{outcome.total():,}</text>')
    return _svg("Results by host", len(shown), body) + _legend()


def _outcome(status: Status) -> str:
    if status.is_ok:
        return "ok"
    if status.is_broken:
        return "failed"
    return "blocked" if status is Status.BLOCKED else "unchecked"


def _legend() -> str:
    items = "".join(
        f'<li><span class="swatch s-{status.value}"></span>{key}</li>' for key, status in OUTCOMES
    )
    return f'<ul class="legend">{items}</ul>'


def _svg(title: str, rows: int, body: list[str]) -> str:
    width, height = _LABEL_W + _BAR_W + 60, rows * _ROW_H
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"'
        f' width="{width}" height="{height}" role="img" aria-label="{title}">{"".join(body)}</svg>'
    )
