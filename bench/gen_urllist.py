#!/usr/bin/env python3
"""Write the one-shot input: a flat list of URLs on the loopback nginx (200, 404 and 301s).

    gen_urllist.py SITE_DIR [--count 20000] [--seed 1]

SITE_DIR is a gen_site.py output; its main/ files decide what exists. Writes
    SITE_DIR/oneshot/urls.txt     one URL per line (lychee, linkhound, LinkChecker --stdin)
    SITE_DIR/oneshot/urls.md      a Markdown bullet list (linkinator --markdown)
    SITE_DIR/main/oneshot.html    one page that links them all (broken-link-checker takes one page)
    SITE_DIR/oneshot/truth.json   the broken URLs, in the format of ground_truth.json
Mix: 75% existing files, 15% missing (404), 10% through /old/ (301), a fifth of those ending in a 404.
"""

from __future__ import annotations

import argparse
import json
import os
import random

MAIN = "http://127.0.0.1:8081"


def write_inputs(folder: str, page_file: str, page_url: str, urls: list[tuple[str, str | None]]) -> None:
    """urls.txt, urls.md, a page linking every URL, and truth.json for [(url, broken kind or None)]."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "urls.txt"), "w") as f:
        f.writelines(u + "\n" for u, _ in urls)
    with open(os.path.join(folder, "urls.md"), "w") as f:
        f.write("# URL list\n\n")
        f.writelines(f"- <{u}>\n" for u, _ in urls)
    with open(page_file, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><title>URL list</title></head><body><ul>\n')
        f.writelines(f'<li><a href="{u}">{i}</a></li>\n' for i, (u, _) in enumerate(urls))
        f.write("</ul></body></html>\n")
    truth = {"generator": "bench/gen_urllist.py", "start_url": page_url,
             "counts": {"urls": len(urls), "broken_urls": sum(1 for _, k in urls if k)},
             "broken": [{"url": u, "kind": k, "referrers": []} for u, k in sorted(urls) if k],
             "broken_fragments": []}
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps(truth["counts"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site")
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    root = os.path.join(a.site, "main")
    files = sorted("/" + os.path.relpath(os.path.join(d, f), root)
                   for d, _, fs in os.walk(root) for f in fs if f != "oneshot.html")
    docs = [f for f in files if f.startswith("/docs/s")]
    n_ok, n_missing = int(a.count * 0.75), int(a.count * 0.15)
    n_redirect = a.count - n_ok - n_missing
    if n_ok > len(files) or n_redirect > len(docs):
        raise SystemExit(f"site too small: {len(files)} files for {n_ok} existing URLs")
    urls: list[tuple[str, str | None]] = [(MAIN + f, None) for f in r.sample(files, n_ok)]
    urls += [(f"{MAIN}/docs/s{i % 20}/nothere-{i}.html", "missing_page") for i in range(n_missing)]
    redirected = iter(r.sample(docs, n_redirect))
    for i in range(n_redirect):
        if i % 5 == 0:
            urls.append((f"{MAIN}/old/s{i % 20}/removed-{i}.html", "redirect_to_missing"))
        else:
            urls.append((MAIN + "/old/" + next(redirected)[len("/docs/"):], None))
    urls = list(dict(urls).items())  # unique, first kind wins
    r.shuffle(urls)
    write_inputs(os.path.join(a.site, "oneshot"), os.path.join(root, "oneshot.html"), MAIN + "/oneshot.html", urls)


if __name__ == "__main__":
    main()
