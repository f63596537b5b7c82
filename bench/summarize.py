#!/usr/bin/env python3
"""Turn results.jsonl (run.py) into Markdown: one table per scenario, medians over runs, ratios to linkhound,
and the issue's targets (reported, never asserted).

    summarize.py [RESULTS.jsonl ...] > summary.md     (several files: their runs are merged)

For each (scenario, tool) only the runs of the latest run.py session that ran that pair are used, so a
rerun of one scenario replaces its rows and keeps the others.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER = ["startup", "crawl-1k", "crawl-10k", "crawl-100k", "oneshot-20k", "local-2k", "local-md", "docs-real",
         "latency-20h"]
TOOLS = ["linkhound", "lychee", "linkinator", "blc", "linkchecker"]
Rec = dict[str, object]
SCENARIO_NOTES = {
    "crawl-100k": "linkinator, broken-link-checker and LinkChecker are not run at 100k pages by default: at 10k "
                  "they took 164 s, 118 s and over 300 s, so 100k would take well over 10 minutes each.",
    "docs-real": "A real docs tree (REAL_DOCS), with no ground truth: the 'false pos.' column counts every broken "
                 "URL a tool reported, so the two tools' columns should agree.",
    "latency-20h": "Every response waits 50 ms. The server is a bare HTTP/1.1 protocol on uvloop, about 1 s of CPU "
    "for the run (from 2026-11-30 on; before, aiohttp.web took 2.3 s and added about 3 ms to each response).",
}


def load(*paths: str) -> dict[str, dict[str, list[Rec]]]:
    pairs: dict[tuple[str, str], list[Rec]] = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    pairs[(r["scenario"], r["tool"])].append(r)
    out: dict[str, dict[str, list[Rec]]] = defaultdict(dict)
    for (scenario, tool), recs in pairs.items():
        latest = max(str(r.get("session", "")) for r in recs)
        out[scenario][tool] = [r for r in recs if str(r.get("session", "")) == latest]
    return out


def median(recs: list[Rec], key: str) -> float | None:
    xs = [float(r[key]) for r in recs if r.get(key) is not None]  # type: ignore[arg-type]
    return statistics.median(xs) if xs else None


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def ratio(x: float | None, ref: float | None) -> str:
    return "–" if x is None or not ref else f"{x / ref:.2f}×"


def status(recs: list[Rec]) -> str:
    timeouts = [r for r in recs if r.get("timed_out")]
    if timeouts:
        return f"TIMEOUT at {timeouts[0]['timeout_s']} s"
    last = recs[-1]
    s = "exit " + ",".join(sorted({str(r["rc"]) for r in recs}))
    if last["tool"] == "linkhound":
        s += f"; rev {last.get('linkhound_rev')}"
    if last.get("parse_error"):
        s += f"; output: {last['parse_error']}"
    return s


def table(scenario: str, tools: dict[str, list[Rec]]) -> list[str]:
    ordered = [t for t in TOOLS if t in tools] + sorted(t for t in tools if t not in TOOLS)
    ref = tools.get("linkhound")
    ref_wall, ref_cpu, ref_rss = ((median(ref, k) for k in ("wall_s", "cpu_s", "maxrss_mb")) if ref
                                  else (None, None, None))
    lines = [f"### {scenario}", "",
             "| tool | runs | wall s (median) | wall vs linkhound | CPU s | CPU vs linkhound | CPU per link µs "
             "| peak RSS MB "
             "| RSS vs linkhound | tree RSS MB | server CPU s | unique URLs checked | broken URLs found / truth "
             "| false pos. | broken #frag found / truth | #frag false pos. | status |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for tool in ordered:
        recs = tools[tool]
        last = recs[-1]
        wall, cpu, rss = (median(recs, k) for k in ("wall_s", "cpu_s", "maxrss_mb"))
        timed_out = any(r.get("timed_out") for r in recs)
        frag = (f"{last.get('found_frag')} / {last.get('gt_broken_frag')}" if last.get("gt_broken_frag") else "–")
        lines.append("| {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} |".format(
            tool, len(recs), ">" if timed_out else "", fmt(wall), ratio(wall, ref_wall), fmt(cpu), ratio(cpu, ref_cpu),
            fmt(per_link(cpu, last, ref), 0),
            fmt(rss, 0), ratio(rss, ref_rss), fmt(median(recs, "tree_rss_peak_mb"), 0),
            fmt(median(recs, "server_cpu_s")),
            last.get("checked_unique") if last.get("checked_unique") is not None else "–",
            last.get("found_http"), last.get("gt_broken_http"), last.get("fp_http"), frag,
            last.get("fp_frag") if last.get("gt_broken_frag") else "–", status(recs)))
        if last.get("note"):
            notes.append(f"- {tool}: {last['note']}")
        if last.get("missed_by_kind") and not timed_out:
            notes.append(f"- {tool} missed, by kind: {json.dumps(last['missed_by_kind'])}")
        for key, label in (("fp_http_sample", "false positives"), ("missed_frag_sample", "missed #fragments"),
                           ("fp_frag_sample", "#fragment false positives")):
            if last.get(key) and not timed_out:
                notes.append(f"- {tool} {label}, e.g. " + ", ".join(f"`{u}`" for u in last[key][:3]))  # type: ignore[index]
    if scenario in SCENARIO_NOTES:
        notes.append("- " + SCENARIO_NOTES[scenario])
    if scenario == "latency-20h" and ref:
        notes.append(f"- ideal wall = requests × latency ÷ concurrency = {ref[-1].get('ideal_wall_s')} s")
        for tool in ordered:  # (runs since 2026-12-07: the server's own count of the request phase)
            span, turn = median(tools[tool], "server_span_s"), median(tools[tool], "turnaround_ms")
            if span is not None and turn is not None:
                start, ending = median(tools[tool], "start_s"), median(tools[tool], "ending_s")
                wall = median(tools[tool], "wall_s")
                rest = (f", first request {start:.3f} s after launch, exit {ending:.3f} s after the last answer"
                        if start is not None and ending is not None
                        else f", start-up and ending {wall - span:.2f} s" if wall is not None else "")
                notes.append(f"- {tool}: the server's request phase (first request in to last answer out) "
                             f"{span:.2f} s, a turnaround of {turn:.2f} ms a request past the 50 ms{rest} "
                             "(medians)")
    return lines + [""] + notes + ([""] if notes else [])


def per_link(cpu: float | None, last: Rec, ref: list[Rec] | None) -> float | None:
    """CPU µs per unique URL of the scenario, as linkhound counts them (the same work for every tool: a peer
    that counts each #fragment or each page list entry apart would otherwise look cheaper per link)."""
    links = (ref[-1] if ref else last).get("checked_unique")
    return None if cpu is None or not links else cpu / float(links) * 1e6  # type: ignore[arg-type]


def targets(data: dict[str, dict[str, list[Rec]]]) -> list[str]:
    rows = []

    def get(scenario: str, tool: str, key: str) -> float | None:
        recs = data.get(scenario, {}).get(tool)
        return median(recs, key) if recs else None

    def verdict(ok: bool | None) -> str:
        return "–" if ok is None else ("met" if ok else "**not met**")

    lh, ly = get("crawl-10k", "linkhound", "wall_s"), get("crawl-10k", "lychee", "wall_s")
    if lh and ly:
        rows.append(("crawl 10k: wall ≤ 0.9× lychee's", f"{lh / ly:.2f}× ({lh:.2f} s vs {ly:.2f} s)",
                     verdict(lh <= 0.9 * ly)))
    last = (data.get("crawl-10k", {}).get("linkhound") or [None])[-1]
    if last:
        ok = (last["found_http"] == last["gt_broken_http"] and last["found_frag"] == last["gt_broken_frag"]
              and last["fp_http"] == 0 and last["fp_frag"] == 0)
        rows.append(("crawl 10k: 100% of broken links and #fragments, no false positives",
                     f"{last['found_http']}/{last['gt_broken_http']} URLs, "
                     f"{last['found_frag']}/{last['gt_broken_frag']} #frag, "
                     f"{last['fp_http']}+{last['fp_frag']} false pos.", verdict(ok)))
    lh, ly = (max(get("crawl-10k", tool, "maxrss_mb") or 0, get("crawl-10k", tool, "tree_rss_peak_mb") or 0)
              for tool in ("linkhound", "lychee"))
    if lh and ly:
        rows.append(("crawl 10k: peak RSS ≤ ½ lychee's", f"{lh:.0f} MB vs {ly:.0f} MB", verdict(lh <= ly / 2)))
    lh, ly = get("oneshot-20k", "linkhound", "wall_s"), get("oneshot-20k", "lychee", "wall_s")
    if lh and ly:
        rows.append(("one-shot 20k: throughput ≥ 1.0× lychee's", f"{ly / lh:.2f}× ({20000 / lh:,.0f} vs "
                     f"{20000 / ly:,.0f} URLs/s)", verdict(ly / lh >= 1.0)))
    lh, ly = get("local-md", "linkhound", "wall_s"), get("local-md", "lychee", "wall_s")
    if lh and ly:
        rows.append(("local Markdown docs: wall ≤ 3× lychee's", f"{lh / ly:.2f}× ({lh:.2f} s vs {ly:.2f} s)",
                     verdict(lh <= 3 * ly)))
    lh, ly = get("local-2k", "linkhound", "wall_s"), get("local-2k", "lychee", "wall_s")
    if lh and ly:
        rows.append(("local files (2k HTML): wall ≤ 2× lychee's", f"{lh / ly:.2f}× ({lh:.2f} s vs {ly:.2f} s)",
                     verdict(lh <= 2 * ly)))
    recs = data.get("latency-20h", {}).get("linkhound")
    if recs:
        ideal = float(recs[-1]["ideal_wall_s"])  # type: ignore[arg-type]
        lh = median(recs, "wall_s")
        assert lh is not None
        measured = f"{lh:.2f} s vs ideal {ideal:.2f} s ({lh / ideal - 1:+.1%})"
        floor = get("latency-20h", "floor", "wall_s")
        if floor:  # what this machine allows: a bare keep-alive client in the same rounds
            measured += f"; the bare client (floor) {floor:.2f} s ({floor / ideal - 1:+.1%})"
        rows.append(("latency-bound: within 5% of requests ÷ (concurrency ÷ latency)", measured,
                     verdict(lh <= 1.05 * ideal)))
    lh = get("startup", "linkhound", "wall_s")
    if lh:
        rows.append(("`linkhound --version` ≤ 150 ms", f"{lh * 1000:.0f} ms (median of 20)", verdict(lh <= 0.15)))
    lines = ["### Targets (issue 20; reported, not asserted)", "", "| target | measured | |", "|---|---|---|"]
    return lines + [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""]


def main() -> int:
    paths = sys.argv[1:] or [os.path.join(HERE, "results", "results.jsonl")]
    data = load(*paths)
    revs = sorted({str(r.get("linkhound_rev")) for tools in data.values() for r in tools.get("linkhound", [])})
    conc = sorted({str(r.get("conc")) for tools in data.values() for recs in tools.values() for r in recs
                   if r.get("conc")})
    out = ["# linkhound benchmark", "",
           f"linkhound revision(s) measured: {', '.join(revs)}; concurrency {', '.join(conc)} (global and per "
           "host) for every tool with a knob, per-host delays off, #fragments on. Wall = median; CPU = user+sys "
           "of the tool; peak RSS = the largest single process (`/usr/bin/time -v`); tree RSS = all of the tool's "
           "processes together (their Pss, so pages a forked child shares count once; sampled every 0.1 s); server CPU = nginx / latency server during the run. "
           "Versions: versions.txt.", ""]
    out += targets(data)
    for scenario in ORDER + sorted(s for s in data if s not in ORDER):
        if scenario not in data:
            continue
        if scenario == "startup":
            out += ["### startup", "", "| command | median wall ms | min ms |", "|---|---|---|"]
            for recs in data[scenario].values():
                out.append(f"| `{recs[-1]['cmd']}` | {float(recs[-1]['wall_s']) * 1000:.0f} | "  # type: ignore[arg-type]
                           f"{float(recs[-1]['wall_min_s']) * 1000:.0f} |")  # type: ignore[arg-type]
            out.append("")
            continue
        out += table(scenario, data[scenario])
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
