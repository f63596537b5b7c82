#!/usr/bin/env python3
"""Read each link checker's output and score it against a ground truth.

    score.py parse TOOL OUTPUT [--summary FILE]          -> JSON: broken_http, broken_frag, counts
    score.py score TOOL OUTPUT TRUTH.json [--summary F]  -> JSON: found / missed / false positives
    score.py diff TOOL OUTPUT TRUTH.json                 -> every miss and false positive, one a line

TOOL: linkhound, lychee, linkinator, blc, linkchecker (a suffix such as "lychee-page" is ignored).
A broken URL is compared without its #fragment; a broken fragment with it. URLs are normalised (scheme
and host lower-cased, default port dropped, empty path made /); file: URLs are compared as written.
"""

from __future__ import annotations

import collections
import csv
import json
import os
import re
import sys
from collections.abc import Callable
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

Parsed = dict[str, object]


def norm(url: str) -> str:
    url = url.strip()
    try:
        sp = urlsplit(url)
    except ValueError:
        return url
    if sp.scheme not in ("http", "https"):
        return url
    host = sp.netloc.lower()
    default = {"http": ":80", "https": ":443"}[sp.scheme]
    if host.endswith(default):
        host = host[: -len(default)]
    return urlunsplit((sp.scheme, host, sp.path or "/", sp.query, sp.fragment))


def base(url: str) -> str:
    return urldefrag(url)[0]


# ---- one parser per tool ---------------------------------------------------------------------------
LINKHOUND_FAILED = {"broken", "error", "timeout", "rate_limited"}


def parse_linkhound(path: str, summary: str | None = None) -> Parsed:
    """linkhound --format json (docs/report-schema.json): a result whose url has #frag and whose reason is
    "no anchor #frag" is a broken fragment; every other failed result is a broken URL."""
    with open(path) as f:
        doc = json.load(f)
    http, frag = set(), set()
    statuses: collections.Counter[str] = collections.Counter()
    for r in doc.get("results", []):
        statuses[r["status"]] += 1
        if r["status"] not in LINKHOUND_FAILED:
            continue
        url = norm(r["url"])
        if "#" in url and r.get("reason", "").startswith("no anchor"):
            frag.add(url)
        else:
            http.add(base(url))
    s = doc.get("summary", {})
    return {"checked_unique": s.get("unique"), "occurrences": s.get("total"), "pages": s.get("pages"),
            "by_status": dict(statuses), "broken_http": sorted(http), "broken_frag": sorted(frag)}


def parse_lychee(path: str, summary: str | None = None) -> Parsed:
    with open(path) as f:
        doc = json.load(f)
    http, frag = set(), set()
    for key in ("error_map", "timeout_map"):
        for errors in (doc.get(key) or {}).values():
            for e in errors:
                url = norm(e["url"])
                st = e.get("status", {})
                text = st.get("text", "") if isinstance(st, dict) else str(st)
                code = st.get("code") if isinstance(st, dict) else None
                if "#" in url and code is None and ("ragment" in text or text.startswith("Error (cached)")):
                    frag.add(url)
                else:
                    http.add(base(url))
    return {"checked_unique": doc.get("unique"), "occurrences": doc.get("total"), "excluded": doc.get("excludes"),
            "broken_http": sorted(http), "broken_frag": sorted(frag)}


def parse_linkinator(path: str, summary: str | None = None) -> Parsed:
    with open(path) as f:
        text = f.read()
    start = text.find("{")
    doc = json.JSONDecoder().raw_decode(text[start:])[0] if start >= 0 else {"links": []}
    http, frag, checked = set(), set(), set()
    for link in doc["links"]:
        url = norm(link["url"])
        if link["state"] == "SKIPPED":
            continue
        checked.add(url)
        if link["state"] == "BROKEN":
            if "#" in url and 200 <= (link.get("status") or 0) < 400:
                frag.add(url)
            else:
                http.add(base(url))
    return {"checked_unique": len(checked), "occurrences": len(doc["links"]),
            "broken_http": sorted(http), "broken_frag": sorted(frag)}


BLC_LINE = re.compile(r"^\s*[├└]─+\s*(OK|BROKEN)\s*─+\s+(\S+)")


def parse_blc(path: str, summary: str | None = None) -> Parsed:
    http, checked = set(), set()
    found = None
    with open(path, errors="replace") as f:
        for line in f:
            m = BLC_LINE.match(line)
            if m:
                url = norm(m.group(2))
                checked.add(url)
                if m.group(1) == "BROKEN":
                    http.add(base(url))
            elif m2 := re.match(r"Finished! (\d+) links found", line.strip()):
                found = int(m2.group(1))
    return {"checked_unique": len(checked), "occurrences": found, "broken_http": sorted(http), "broken_frag": []}


def parse_linkchecker(path: str, summary: str | None = None) -> Parsed:
    http, frag = set(), set()
    with open(path, errors="replace") as f:
        lines = [line for line in f if not line.startswith("#")]
    for row in csv.DictReader(lines, delimiter=";"):
        name = row.get("urlname") or ""
        if name.startswith("mailto:"):
            continue
        parent = row.get("base") or row.get("parentname") or ""
        url = norm(urljoin(parent, name)) if parent else norm(name)
        warning = row.get("warningstring") or ""
        if row.get("valid") == "False":
            http.add(base(url))
        elif "Anchor `" in warning and "not found" in warning:
            frag.add(url)
    checked = None
    if summary and os.path.exists(summary):
        with open(summary, errors="replace") as f:
            m = re.search(r"That's it\. [\d,]+ links? in ([\d,]+) URLs? checked", f.read())
        if m:
            checked = int(m.group(1).replace(",", ""))
    return {"checked_unique": checked, "occurrences": None, "broken_http": sorted(http), "broken_frag": sorted(frag)}


PARSERS: dict[str, Callable[[str, str | None], Parsed]] = {
    "linkhound": parse_linkhound, "lychee": parse_lychee, "linkinator": parse_linkinator,
    "blc": parse_blc, "linkchecker": parse_linkchecker,
    "floor": parse_linkhound,  # floor_client.py writes linkhound's shape
}


def parse(tool: str, path: str, summary: str | None = None) -> Parsed:
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return {"broken_http": [], "broken_frag": [], "parse_error": "no output"}
    try:
        return PARSERS[tool.split("-")[0]](path, summary)
    except Exception as e:  # a killed tool may leave a truncated file
        return {"broken_http": [], "broken_frag": [], "parse_error": f"{type(e).__name__}: {e}"}


# ---- scoring -----------------------------------------------------------------------------------------
def compare(parsed: Parsed, truth: dict) -> dict[str, set[str] | dict[str, str]]:
    kinds = {norm(b["url"]): b.get("kind", "?") for b in truth["broken"]}
    gt_frag = {norm(b["url"]) for b in truth.get("broken_fragments", [])}
    rep_http, rep_frag = set(parsed["broken_http"]), set(parsed["broken_frag"])  # type: ignore[arg-type]
    return {"kinds": kinds, "missed_http": set(kinds) - rep_http, "fp_http": rep_http - set(kinds),
            "found_http": rep_http & set(kinds), "missed_frag": gt_frag - rep_frag,
            "fp_frag": rep_frag - gt_frag, "found_frag": rep_frag & gt_frag, "gt_frag": gt_frag}


def score(parsed: Parsed, truth: dict) -> dict[str, object]:
    c = compare(parsed, truth)
    kinds = c["kinds"]
    assert isinstance(kinds, dict)
    return {
        "gt_broken_http": len(kinds), "found_http": len(c["found_http"]), "fp_http": len(c["fp_http"]),
        "missed_by_kind": dict(collections.Counter(kinds[u] for u in c["missed_http"])),
        "missed_http_sample": sorted(c["missed_http"])[:5], "fp_http_sample": sorted(c["fp_http"])[:5],
        "gt_broken_frag": len(c["gt_frag"]), "found_frag": len(c["found_frag"]), "fp_frag": len(c["fp_frag"]),
        "missed_frag_sample": sorted(c["missed_frag"])[:5], "fp_frag_sample": sorted(c["fp_frag"])[:5],
        **{k: parsed.get(k) for k in ("checked_unique", "occurrences", "pages", "by_status", "parse_error")
           if parsed.get(k) is not None},
    }


def main(argv: list[str]) -> int:
    summary = None
    if "--summary" in argv:
        i = argv.index("--summary")
        summary = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 4 or argv[1] not in ("parse", "score", "diff"):
        print(__doc__)
        return 2
    parsed = parse(argv[2], argv[3], summary)
    if argv[1] == "parse":
        print(json.dumps(parsed))
        return 0
    with open(argv[4]) as f:
        truth = json.load(f)
    if argv[1] == "score":
        print(json.dumps(score(parsed, truth)))
        return 0
    c = compare(parsed, truth)
    for label in ("missed_http", "fp_http", "missed_frag", "fp_frag"):
        for url in sorted(c[label]):
            print(label, url)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
