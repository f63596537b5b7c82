#!/usr/bin/env python3
"""Write the local-Markdown input: a docs folder of Markdown files with relative links, and its ground truth.

    gen_markdown.py OUT [--files 300] [--links-per-file 24] [--seed 1]

OUT/docs/sK/page-J.md      the files (15 folders): an H1, six sections (one heading repeated, one with code and
                           punctuation), prose, relative links to other pages (../sM/page-N.md), some with a
                           #fragment (a heading's slug; a few name no heading), links to headings of the same
                           page, images (../img/fig-N.png, a few missing), a reference-style link, a few links to
                           missing pages, fenced and inline code holding URLs (skipped without --include-code),
                           and one remote link per file to http://127.0.0.1:8089/ that an offline run must skip
OUT/ground_truth.json      broken targets as file:// URLs with their referrers; broken #fragments
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys

# (heading as written, its GitHub slug); "Usage" twice gives "usage-1"
HEADINGS = (
    ("Overview", "overview"),
    ("Usage", "usage"),
    ("Options and flags", "options-and-flags"),
    ("Usage", "usage-1"),
    ("The `config` file (v2.0)", "the-config-file-v20"),
    ("Examples", "examples"),
)
SLUGS = tuple(slug for _, slug in HEADINGS)
REMOTE = "http://127.0.0.1:8089/offline-must-skip.html"
WORDS = ("the", "link", "checker", "reads", "every", "page", "and", "reports", "what", "is", "broken", "with",
         "its", "line", "a", "fragment", "names", "heading", "on", "target", "file", "so", "fix", "it", "there")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--links-per-file", type=int, default=24)
    ap.add_argument("--folders", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    docs = os.path.join(out, "docs")

    def rel_path(i: int) -> str:
        return f"s{i % a.folders}/page-{i // a.folders}.md"

    def prose(n: int) -> str:
        return " ".join(r.choice(WORDS) for _ in range(n)).capitalize() + "."

    figures_present = {i for i in range(a.files) if r.random() >= 0.05}
    broken: dict[str, dict] = {}
    broken_frag: dict[str, set[str]] = {}
    occurrences = 0
    for i in range(a.files):
        here = rel_path(i)
        here_abs = os.path.join(docs, here)
        links: list[str] = []  # every checked link of the file, as written
        parts = [f"# Page {i}\n\n{prose(30)}\n\n"]
        bodies: list[list[str]] = [[] for _ in HEADINGS]
        for _ in range(a.links_per_file):
            x = r.random()
            if x < 0.03:
                href = f"../s{r.randrange(a.folders)}/missing-{r.randrange(10**6)}.md"
            elif x < 0.15:
                href = "#" + (f"gone-{r.randrange(50)}" if r.random() < 0.1 else r.choice(SLUGS))
            else:
                j = r.randrange(a.files)
                target = rel_path(j)
                href = target.split("/", 1)[1] if j % a.folders == i % a.folders else "../" + target
                if r.random() < 0.3:
                    href += f"#gone-{r.randrange(50)}" if r.random() < 0.1 else "#" + r.choice(SLUGS)
            links.append(href)
            bodies[r.randrange(len(HEADINGS))].append(f"{prose(12)[:-1]}, see [this page]({href}).")
        fig = f"../../img/fig-{i}.png"
        links += [fig, REMOTE, "../../README.md"]
        bodies[0].append(f"![Figure {i}]({fig})")
        bodies[1].append(f"More in the [reference guide][guide] and at <{REMOTE}>.")
        bodies[2].append("Install with:\n\n```sh\ncurl -sSf https://install.example.invalid/get.sh | sh\n"
                         "# then open http://127.0.0.1:8089/not-a-link-in-code\n```")
        bodies[4].append("Set `url = \"https://config.example.invalid/\"` in the file.\n\n"
                         "| option | default |\n|---|---|\n| `retries` | 3 |\n| `timeout` | 20 s |")
        for (heading, _), body in zip(HEADINGS, bodies, strict=True):
            level = "###" if heading.startswith("Options") else "##"
            parts.append(f"{level} {heading}\n\n{prose(60)}\n\n{prose(50)}\n\n")
            parts.append("\n\n".join(body) + "\n\n")
        parts.append("[guide]: ../../README.md\n")
        os.makedirs(os.path.dirname(here_abs), exist_ok=True)
        with open(here_abs, "w") as f:
            f.write("".join(parts))
        occurrences += len(links)
        for href in links:
            if href.startswith("http:"):
                continue
            path, _, frag = href.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(here_abs), path)) if path else here_abs
            name = os.path.basename(target)
            if name.startswith("fig-"):
                exists = int(name[4:-4]) in figures_present
            else:
                exists = name.startswith("page-") or name == "README.md"
            if not exists:
                broken.setdefault("file://" + target, {"kind": "missing_file", "referrers": set()})[
                    "referrers"].add(here_abs)
            elif frag and frag not in SLUGS:
                broken_frag.setdefault(f"file://{target}#{frag}", set()).add(here_abs)
    os.makedirs(os.path.join(out, "img"))
    for i in figures_present:
        with open(os.path.join(out, "img", f"fig-{i}.png"), "w") as f:
            f.write("png")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# Reference guide\n\nThe docs are in [docs](docs/s0/page-0.md).\n")
    truth = {"generator": "bench/gen_markdown.py", "root": out,
             "counts": {"files": a.files + 1, "link_occurrences": occurrences + 1, "broken_urls": len(broken),
                        "broken_fragment_urls": len(broken_frag)},
             "broken": [{"url": u, "kind": v["kind"], "referrers": sorted(v["referrers"])}
                        for u, v in sorted(broken.items())],
             "broken_fragments": [{"url": u, "referrers": sorted(v)} for u, v in sorted(broken_frag.items())]}
    with open(os.path.join(out, "ground_truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps(truth["counts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
