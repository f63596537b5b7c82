#!/usr/bin/env python3
"""Write the local-files input: HTML files on disk with relative links, and its ground truth.

    gen_local.py OUT [--files 2000] [--links-per-file 50] [--seed 1]

OUT/site/docs/dK/fJ.html   the files (40 folders); links are relative: ../dM/fN.html, fN.html#usage, #intro,
                           ../../static/style.css, ../../images/fig-N.png (a few missing), plus one remote link
                           to http://127.0.0.1:8089/ per file that an offline run must skip (nothing listens)
OUT/ground_truth.json      broken targets as file:// URLs with their referrers; broken #fragments
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys

SECTION_IDS = ("intro", "usage", "details", "examples", "see-also")
REMOTE = "http://127.0.0.1:8089/offline-must-skip.html"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--links-per-file", type=int, default=50)
    ap.add_argument("--folders", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    root = os.path.join(out, "site")

    def rel_path(i: int) -> str:  # path of file i relative to root
        return f"docs/d{i % a.folders}/f{i // a.folders}.html"

    figures_present = {i for i in range(a.files) if r.random() >= 0.01}
    broken: dict[str, dict] = {}
    broken_frag: dict[str, set[str]] = {}
    occurrences = 0
    fixed = 3 + len(SECTION_IDS) + 1 + 1  # head assets, TOC, figure, remote
    for i in range(a.files):
        here = rel_path(i)
        here_abs = os.path.join(root, here)
        links: list[tuple[str, str]] = [("link", "../../static/style.css"), ("script", "../../static/app.js"),
                                        ("img", "../../static/logo.png")]
        links += [("a", "#" + fid) for fid in SECTION_IDS]
        links.append(("img", f"../../images/fig-{i}.png"))
        links.append(("a", REMOTE))
        for _ in range(max(0, a.links_per_file - fixed)):
            x = r.random()
            if x < 0.03:
                href = f"../d{r.randrange(a.folders)}/missing-{r.randrange(10**6)}.html"
            else:
                j = r.randrange(a.files)
                target = rel_path(j)
                href = target.rsplit("/", 1)[1] if j % a.folders == i % a.folders else "../" + target.split("/", 1)[1]
                if r.random() < 0.2:
                    href += f"#gone-{r.randrange(50)}" if r.random() < 0.25 else "#" + r.choice(SECTION_IDS)
            links.append(("a", href))
        occurrences += len(links)
        body = []
        for k, fid in enumerate(SECTION_IDS):
            body.append(f'<h2 id="{fid}">{fid}</h2>\n<p>')
            for tag, href in links[k::len(SECTION_IDS)]:
                if tag == "a":
                    body.append(f'Some text about the topic, see <a href="{href}">this</a>.\n')
                elif tag == "img":
                    body.append(f'<img src="{href}" alt="figure">\n')
            body.append("</p>")
        head = ('<link rel="stylesheet" href="../../static/style.css">\n'
                '<script src="../../static/app.js"></script>\n')
        html = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>File {i}</title>\n{head}'
                f'</head><body><main id="top"><h1>File {i}</h1>\n' + "".join(body) + "</main></body></html>\n")
        os.makedirs(os.path.dirname(here_abs), exist_ok=True)
        with open(here_abs, "w") as f:
            f.write(html)
        # ground truth (the files written so far are not needed: targets are known by construction)
        for _tag, href in links:
            if href.startswith(("http:", "#")):
                continue
            path, _, frag = href.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(here_abs), path))
            name = os.path.basename(target)
            if name.startswith("fig-"):
                exists = int(name[4:-4]) in figures_present
            else:
                exists = name.startswith("f") or name in ("style.css", "app.js", "logo.png")
            if not exists:
                broken.setdefault("file://" + target, {"kind": "missing_file", "referrers": set()})[
                    "referrers"].add(here_abs)
            elif frag and frag not in SECTION_IDS and frag != "top":
                broken_frag.setdefault(f"file://{target}#{frag}", set()).add(here_abs)
    os.makedirs(os.path.join(root, "static"))
    os.makedirs(os.path.join(root, "images"))
    for name, data in (("style.css", "body{font-family:sans-serif}\n"), ("app.js", "var x = 1;\n"),
                       ("logo.png", "png")):
        with open(os.path.join(root, "static", name), "w") as f:
            f.write(data)
    for i in figures_present:
        with open(os.path.join(root, "images", f"fig-{i}.png"), "w") as f:
            f.write("png")
    truth = {"generator": "bench/gen_local.py", "root": root,
             "counts": {"files": a.files, "link_occurrences": occurrences, "broken_urls": len(broken),
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
