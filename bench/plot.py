#!/usr/bin/env python3
"""Plot wall time and peak memory against site size for the crawl scenarios (matplotlib, PNG).

    plot.py [RESULTS.jsonl] [OUT.png]     (default: results/results.jsonl -> results/crawl_scaling.png)

Runs with the peers' Python (setup.sh installs matplotlib there). A run that hit its time limit is drawn
as an open marker at the limit: the real time is larger.
"""

from __future__ import annotations

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import HERE, TOOLS, load, median  # noqa: E402

SIZES = {"crawl-1k": 1000, "crawl-10k": 10000, "crawl-100k": 100000}
STYLE = {"linkhound": ("C0", "o"), "lychee": ("C1", "s"), "linkinator": ("C2", "^"), "blc": ("C3", "v"),
         "linkchecker": ("C4", "D")}


def main() -> int:
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "results.jsonl")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "results", "crawl_scaling.png")
    data = load(src)
    fig, (ax_wall, ax_rss) = plt.subplots(1, 2, figsize=(11, 4.5))
    for tool in TOOLS:
        color, marker = STYLE[tool]
        points = []  # (pages, wall, rss, timed_out)
        for scenario, pages in SIZES.items():
            recs = data.get(scenario, {}).get(tool)
            if recs:
                points.append((pages, median(recs, "wall_s"), median(recs, "maxrss_mb"),
                               any(r.get("timed_out") for r in recs)))
        if not points:
            continue
        label = tool + (" (given every page URL)" if tool == "lychee" else "")
        done = [p for p in points if not p[3]]
        ax_wall.plot([p[0] for p in done], [p[1] for p in done], color=color, marker=marker, label=label)
        ax_rss.plot([p[0] for p in done], [p[2] for p in done], color=color, marker=marker, label=label)
        cut = [p for p in points if p[3]]
        if cut:
            ax_wall.scatter([p[0] for p in cut], [p[1] for p in cut], facecolors="none", edgecolors=color,
                            marker=marker, s=60, label=f"{tool}: time limit hit")
    for ax, title, unit in ((ax_wall, "Wall time", "seconds"), (ax_rss, "Peak memory (RSS)", "MB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(700, 150000)
        ax.set_xticks(list(SIZES.values()), [f"{n:,}" for n in SIZES.values()])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(v)[0] in "25" else ""))
        ax.set_xlabel("pages in the site (recursive crawl, ~50 links a page)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    if ax_wall.get_legend_handles_labels()[0]:
        ax_wall.legend(fontsize=8)
    revs = sorted({str(r.get("linkhound_rev")) for s in SIZES for r in data.get(s, {}).get("linkhound", [])})
    fig.suptitle("Crawl of the synthetic site on loopback nginx, concurrency 128, 2 cores "
                 f"(linkhound {', '.join(revs)})")
    fig.tight_layout()
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    fig.savefig(dst, dpi=110)
    print("wrote", dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
