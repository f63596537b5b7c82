"""The inline stylesheet and script of the html format; the script renders data with textContent only."""

from __future__ import annotations

CSS = """
:root {
  color-scheme: light dark;
  --bg: #f7f8fa; --fg: #1d2330; --muted: #5f6b7a; --card: #ffffff; --line: #dde2e8; --accent: #1f5fbf;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #15181e; --fg: #e4e8ee; --muted: #97a1ae; --card: #1e232b; --line: #323a45;
    --accent: #7fb0ff; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; padding: 24px clamp(12px, 4vw, 48px); background: var(--bg); color: var(--fg); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 12px; }
a { color: var(--accent); }
.muted { color: var(--muted); }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; margin-bottom: 16px; }
header .summary { flex-basis: 100%; margin: 0; color: var(--muted); }
.verdict { font-weight: 600; padding: 2px 10px; border-radius: 999px; color: #fff; }
.verdict.pass { background: #2e7d32; } .verdict.fail { background: #c62828; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px;
  margin-bottom: 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(112px, 1fr)); gap: 8px;
  background: none; border: 0; padding: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-left: 4px solid var(--c, var(--line));
  border-radius: 6px; padding: 8px 10px; }
.card b { display: block; font-size: 20px; font-variant-numeric: tabular-nums; }
.card span { color: var(--muted); font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 24px 48px; }
figure { margin: 0; }
figcaption { font-weight: 600; margin-bottom: 8px; }
svg { max-width: 100%; height: auto; display: block; }
svg text { font-size: 12px; fill: var(--fg); dominant-baseline: middle; }
svg .label { text-anchor: end; }
.legend { list-style: none; padding: 0; margin: 8px 0 0; display: flex; gap: 14px; font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px;
  background: var(--c); }
.controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 10px; }
.controls input { flex: 1 1 260px; }
.controls input, .controls select { font: inherit; padding: 5px 8px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--bg); color: var(--fg); }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line);
  overflow-wrap: anywhere; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
th:nth-child(1) { width: 110px; } th:nth-child(3) { width: 22%; } th:nth-child(4) { width: 32%; }
td ul { margin: 0; padding-left: 16px; }
.hop { color: var(--muted); font-size: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
  color: #fff; background: var(--c, #777); white-space: nowrap; }
.tree, .tree ul { list-style: none; padding-left: 18px; margin: 2px 0; }
.tree { padding-left: 0; }
.tree summary { cursor: pointer; }
.tree .page { display: inline-flex; flex-wrap: wrap; gap: 2px 8px; align-items: baseline; }
.tree li { margin: 2px 0; }
.tree li > .page { margin-left: 16px; }  /* line leaves up with the text of nodes that have a toggle */
.refs details summary { cursor: pointer; color: var(--muted); }
.warnings { border-left: 4px solid #f9a825; }
.warnings ul { margin: 0; padding-left: 18px; }
footer { color: var(--muted); font-size: 12px; }
"""

JS = """
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("linkhound-data").textContent);
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  // Only web links become clickable: a javascript: or data: URL from a page stays inert text.
  const link = (url, text) => {
    if (!/^https?:\\/\\//i.test(url)) return el("span", "", text);
    const a = el("a", "", text);
    a.href = url;
    a.rel = "noopener noreferrer";
    return a;
  };

  const refList = (refs) => {
    const list = el("ul");
    for (const ref of refs) {
      const item = el("li");
      item.append(link(ref.source, ref.where));
      list.append(item);
    }
    return list;
  };
  // The first few referrers stay in view; the rest (a nav link can be on every page) fold away.
  const referrers = (refs) => {
    const cell = el("td", "refs");
    if (!refs.length) {
      cell.append(el("span", "muted", "(input)"));
      return cell;
    }
    const cut = refs.length > data.fold + 1 ? data.fold : refs.length;
    cell.append(refList(refs.slice(0, cut)));
    if (cut < refs.length) {
      const more = el("details");
      more.open = data.unfold;
      const hidden = (refs.length - cut).toLocaleString("en-US");
      more.append(el("summary", "", "\\u2026 and " + hidden + " more"), refList(refs.slice(cut)));
      cell.append(more);
    }
    return cell;
  };

  const tbody = document.querySelector("#results tbody");
  const rows = data.results.map((r) => {
    const tr = el("tr");
    const status = el("td");
    status.append(el("span", "badge s-" + r.status, r.label));
    const url = el("td", "url");
    url.append(link(r.url, r.shown));
    for (const hop of r.hops) url.append(el("div", "hop", "\\u2192 " + hop));
    tr.append(status, url, el("td", "", r.detail), referrers(r.references));
    tbody.append(tr);
    const words = [r.url, r.label, r.detail, ...r.hops];
    for (const ref of r.references) words.push(ref.where, ref.text);
    return { tr, status: r.status, text: words.join("\\n").toLowerCase() };
  });

  const filter = document.getElementById("filter");
  const select = document.getElementById("status");
  const count = document.getElementById("count");
  const empty = document.getElementById("empty");
  const apply = () => {
    const query = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const visible = (!select.value || row.status === select.value) && (!query || row.text.includes(query));
      row.tr.hidden = !visible;
      if (visible) shown += 1;
    }
    count.textContent = shown + " of " + rows.length;
    empty.hidden = shown !== 0;
  };
  filter.addEventListener("input", apply);
  select.addEventListener("change", apply);
  apply();

  const node = (page) => {
    const item = el("li");
    const label = el("span", "page");
    label.append(link(page.url, page.shown));
    label.append(el("span", "muted", "depth " + page.depth + ", " + page.links + " links"));
    if (page.failed) label.append(el("span", "badge s-broken", page.failed + " failed"));
    if (!page.children.length) {
      item.append(label);
      return item;
    }
    const details = el("details");
    details.open = page.depth < 2;
    const summary = el("summary");
    summary.append(label);
    const list = el("ul");
    for (const child of page.children) list.append(node(child));
    details.append(summary, list);
    item.append(details);
    return item;
  };
  const tree = document.getElementById("site-tree");
  if (tree) for (const root of data.tree) tree.append(node(root));
})();
"""
