#!/usr/bin/env python3
"""Write a deterministic, docs-like static website and its ground truth.

    gen_site.py OUT --pages N [--seed 1]

OUT/main/            docroot of the site under test   (served on http://127.0.0.1:8081)
OUT/ext/             docroot of a second origin       (http://127.0.0.1:8082: checked, never crawled)
OUT/pages.txt        every HTML page URL of main/     (input list for checkers that cannot crawl)
OUT/ground_truth.json  every broken URL with its referring pages, every broken #fragment, counts

Shape: / links to every section index; /docs/sK/index.html lists the section's pages; each content page
/docs/sK/pJ.html has <head> assets, a nav (home + every section), breadcrumb, on-page TOC (#fragments),
~30 body links, a figure, prev/next and a footer (about, a missing /legal/terms.html, mailto, the second
origin, and on every 250th page a dead origin on :8089).

Broken on purpose (kinds in the ground truth):
  missing_page          /docs/sK/missing-*.html (some reused by several pages)
  missing_asset         a few /images/fig-N.png, and /static/legacy.css on one section
  footer_404            /legal/terms.html in every footer: one URL, many referrers
  redirect_to_missing   /old/... (nginx 301) and /moved/... (302) whose /docs/... target does not exist
  external_404          missing pages on the second origin
  conn_refused          http://127.0.0.1:8089/... (nothing listens)
  broken fragments      links to existing pages with an #id they do not have

The truth is computed from the links actually rendered, against the files actually written (plus the
nginx /old/ and /moved/ rules), not from the generator's intentions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

MAIN = "http://127.0.0.1:8081"
EXT = "http://127.0.0.1:8082"
DEAD = "http://127.0.0.1:8089"
SECTION_IDS = ("intro", "usage", "details", "examples", "see-also")
REDIRECT_PREFIXES = ("/old/", "/moved/")  # nginx.conf.in maps both to /docs/

_TEXT = (
    "the a of to and in is for that with as on by this be are from it or an at which function module "
    "parameter value return object class method instance attribute request response server client cache "
    "queue thread worker event loop timeout retry configuration option default example section page link "
    "anchor fragment redirect status header body content document index reference guide tutorial install "
    "build release version compatible deprecated supported platform network socket buffer stream encoding "
    "decoding parse render template generate validate check report error warning exception handler callback "
    "context manager iterator generator sequence mapping string integer float boolean list tuple dictionary "
    "path file directory archive compress extract read write open close flush seek data record field schema "
    "table query transaction commit rollback lock performance memory latency throughput concurrency limit "
    "policy host origin crawl"
)
WORDS = _TEXT.split()

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)


@dataclass
class Page:
    path: str  # absolute path on MAIN, e.g. /docs/s0/p3.html
    html: str
    links: list[tuple[str, str]] = field(default_factory=list)  # (tag, href as written)
    ids: set[str] = field(default_factory=set)


class Site:
    def __init__(self, opts: argparse.Namespace) -> None:
        self.o = opts
        self.rng = random.Random(opts.seed)
        self.sections = min(20, max(1, opts.pages // 50))
        self.content = max(1, opts.pages - 2 - self.sections)  # + home + about = --pages
        # contiguous blocks of content pages per section
        self.section_of: list[int] = [i * self.sections // self.content for i in range(self.content)]
        self.members: list[list[int]] = [[] for _ in range(self.sections)]
        for i, s in enumerate(self.section_of):
            self.members[s].append(i)
        self.index_in_section = {i: j for lst in self.members for j, i in enumerate(lst)}
        self.missing_pool: list[list[str]] = [[] for _ in range(self.sections)]

    # ---- spelling ------------------------------------------------------------------------
    def path_of(self, i: int) -> str:
        return f"/docs/s{self.section_of[i]}/p{self.index_in_section[i]}.html"

    @staticmethod
    def relative(from_path: str, to_path: str) -> str:
        src = from_path.rsplit("/", 1)[0].split("/")[1:]
        dst_dir, name = to_path.rsplit("/", 1)
        dst = dst_dir.split("/")[1:]
        k = 0
        while k < min(len(src), len(dst)) and src[k] == dst[k]:
            k += 1
        return "/".join([".."] * (len(src) - k) + dst[k:] + [name])

    def spell(self, from_path: str, to_path: str) -> str:
        """Root-relative (45%), relative (45%) or absolute (10%): the same URL written three ways."""
        x = self.rng.random()
        if x < 0.45:
            return to_path
        if x < 0.9:
            return self.relative(from_path, to_path)
        return MAIN + to_path

    def text(self, words: int) -> str:
        r, out, sentence = self.rng, [], []
        for _ in range(words):
            sentence.append(r.choice(WORDS))
            if len(sentence) > r.randint(8, 18):
                out.append(" ".join(sentence).capitalize() + ".")
                sentence = []
        if sentence:
            out.append(" ".join(sentence).capitalize() + ".")
        return " ".join(out)

    # ---- page parts ------------------------------------------------------------------------
    def head(self, page: Page, title: str, legacy_css: bool = False) -> str:
        assets = [("link", "/static/style.css"), ("link", "/static/logo.png"), ("script", "/static/app.js")]
        if legacy_css:
            assets.append(("link", "/static/legacy.css"))
        page.links += assets
        tags = ['<link rel="stylesheet" href="/static/style.css">', '<link rel="icon" href="/static/logo.png">',
                '<script src="/static/app.js" defer></script>']
        if legacy_css:
            tags.append('<link rel="stylesheet" href="/static/legacy.css">')
        return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                f"<title>{title}</title>\n" + "\n".join(tags) + "\n</head>\n<body>\n")

    def nav(self, page: Page) -> str:
        page.links += [("img", "/static/logo.png"), ("a", "/")]
        items = []
        for s in range(self.sections):
            page.links.append(("a", f"/docs/s{s}/"))
            items.append(f'<li><a href="/docs/s{s}/">Section {s}</a></li>')
        return ('<header><img src="/static/logo.png" alt="logo"> <a href="/">Home</a>\n<nav><ul>\n'
                + "\n".join(items) + "\n</ul></nav></header>\n")

    def footer(self, page: Page, content_no: int | None) -> str:
        items = [("/docs/about.html", "About"), ("/legal/terms.html", "Terms"), ("mailto:docs@example.com", "Contact"),
                 (EXT + "/", "Community"), (EXT + "/p0.html", "Blog"), (EXT + "/p1.html", "Forum")]
        if self.o.dead_every and content_no is not None and content_no % self.o.dead_every == 0:
            items.append((DEAD + "/status.html", "Status"))
        page.links += [("a", href) for href, _ in items]
        lis = "\n".join(f'<li><a href="{href}">{label}</a></li>' for href, label in items)
        return f"<footer><ul>\n{lis}\n</ul><p>{self.text(20)}</p></footer>\n</body>\n</html>\n"

    def body_link(self, i: int, path: str) -> tuple[str, str]:
        """One body link of content page i: (href, label)."""
        o, r, s = self.o, self.rng, self.section_of[i]
        x = r.random()
        if x < o.broken_frac:
            pool = self.missing_pool[s]
            if pool and r.random() < 0.3:
                target = r.choice(pool)
            else:
                target = f"/docs/s{s}/missing-{r.randrange(10**9)}.html"
                pool.append(target)
            return self.spell(path, target), "gone"
        x -= o.broken_frac
        if x < o.redirect_frac:
            prefix = "/old" if r.random() < 0.7 else "/moved"
            if r.random() < 0.2:
                return f"{prefix}/s{s}/removed-{r.randrange(10**9)}.html", "moved"
            return prefix + self.path_of(r.randrange(self.content))[len("/docs"):], "moved"
        x -= o.redirect_frac
        if x < o.ext_frac:
            if r.random() < o.ext_broken_frac:
                return f"{EXT}/gone-{r.randrange(2000)}.html", "elsewhere"
            return f"{EXT}/p{r.randrange(o.ext_pages)}.html", "elsewhere"
        # a page of the site, 70% in the same section
        same_section = r.random() < 0.7 and len(self.members[s]) > 1
        j = r.choice(self.members[s]) if same_section else r.randrange(self.content)
        href = self.spell(path, self.path_of(j))
        if r.random() < o.frag_frac:
            href += f"#gone-{r.randrange(50)}" if r.random() < o.bad_frag_frac else "#" + r.choice(SECTION_IDS)
        return href, "see"

    # ---- pages -----------------------------------------------------------------------------------
    def content_page(self, i: int) -> Page:
        s, j = self.section_of[i], self.index_in_section[i]
        page = Page(self.path_of(i), "", ids=set(SECTION_IDS) | {"top"})
        title = f"Section {s} page {j}"
        out = [self.head(page, title, legacy_css=(s == 3 % self.sections)), self.nav(page)]
        page.links += [("a", "/index.html"), ("a", "index.html")]  # two spellings of known URLs
        out.append(f'<main id="top"><p class="crumbs"><a href="/index.html">Docs</a> / '
                   f'<a href="index.html">Section {s}</a></p>\n<h1>{title}</h1>\n<ul class="toc">')
        for fid in SECTION_IDS:
            page.links.append(("a", "#" + fid))
            out.append(f'<li><a href="#{fid}">{fid}</a></li>')
        out.append("</ul>")
        fixed = 3 + (2 + self.sections) + 2 + len(SECTION_IDS) + 6 + 2 + 1
        body = max(3, self.o.links_per_page - fixed)
        for k, fid in enumerate(SECTION_IDS):
            out.append(f'<h2 id="{fid}">{fid.replace("-", " ").title()}</h2>')
            paragraph = []
            for _ in range(body // len(SECTION_IDS) + (k < body % len(SECTION_IDS))):
                href, label = self.body_link(i, page.path)
                page.links.append(("a", href))
                paragraph.append(f'{self.text(self.rng.randint(25, 45))} <a href="{href}">{label}</a>')
            paragraph.append(self.text(self.rng.randint(40, 80)))
            out.append("<p>" + " ".join(paragraph) + "</p>")
            if k == 1:
                page.links.append(("img", f"/images/fig-{i}.png"))
                out.append(f'<figure><img src="/images/fig-{i}.png" alt="figure"></figure>')
        lst = self.members[s]
        prev_href = self.relative(page.path, self.path_of(lst[j - 1]))  # j-1 == -1 wraps to the last
        next_href = self.relative(page.path, self.path_of(lst[(j + 1) % len(lst)]))
        page.links += [("a", prev_href), ("a", next_href)]
        out.append(f'<p class="pn"><a href="{prev_href}">prev</a> <a href="{next_href}">next</a></p></main>\n')
        out.append(self.footer(page, i))
        page.html = "\n".join(out)
        return page

    def section_index(self, s: int) -> Page:
        page = Page(f"/docs/s{s}/index.html", "", ids={"top"})
        out = [self.head(page, f"Section {s}"), self.nav(page), f"<main><h1>Section {s}</h1><ol>"]
        for i in self.members[s]:
            href = f"p{self.index_in_section[i]}.html"
            page.links.append(("a", href))
            out.append(f'<li><a href="{href}">Page {self.index_in_section[i]}</a> {self.text(8)}</li>')
        out += ["</ol></main>", self.footer(page, None)]
        page.html = "\n".join(out)
        return page

    def home(self) -> Page:
        page = Page("/index.html", "", ids={"top"})
        out = [self.head(page, "Synthetic docs"), self.nav(page),
               f"<main><h1>Synthetic documentation</h1><p>{self.text(120)}</p><ul>"]
        for s in range(self.sections):
            page.links.append(("a", f"docs/s{s}/index.html"))
            out.append(f'<li><a href="docs/s{s}/index.html">Section {s}</a></li>')
        out += ["</ul></main>", self.footer(page, None)]
        page.html = "\n".join(out)
        return page

    def about(self) -> Page:
        page = Page("/docs/about.html", "")
        page.html = "\n".join([self.head(page, "About"), self.nav(page),
                               f"<main><h1>About</h1><p>{self.text(200)}</p></main>", self.footer(page, None)])
        return page

    # ---- output ------------------------------------------------------------------------------------
    def write(self) -> dict[str, object]:
        out = self.o.out
        if os.path.exists(out):
            shutil.rmtree(out)
        main, ext = os.path.join(out, "main"), os.path.join(out, "ext")
        pages = [self.home(), self.about()] + [self.section_index(s) for s in range(self.sections)]
        pages += [self.content_page(i) for i in range(self.content)]
        files: dict[str, set[str]] = {main: set(), ext: set()}

        def put(root: str, path: str, data: str | bytes) -> None:
            fp = os.path.join(root, path.lstrip("/"))
            os.makedirs(os.path.dirname(fp), exist_ok=True)
            with open(fp, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
            files[root].add(path)

        for p in pages:
            put(main, p.path, p.html)
        put(main, "/static/style.css", "body{font-family:sans-serif}\n@font-face{font-family:x;src:url(font.woff2)}\n")
        put(main, "/static/font.woff2", b"wOF2")
        put(main, "/static/app.js", "document.documentElement.className='js';\n")
        put(main, "/static/logo.png", PNG_1X1)
        r = random.Random(self.o.seed + 1)
        for i in range(self.content):
            if r.random() >= self.o.img_broken_frac:
                put(main, f"/images/fig-{i}.png", PNG_1X1)
        # second-origin pages link deeper: a checker that wrongly crawls it requests /deep/*
        for k in range(self.o.ext_pages):
            put(ext, f"/p{k}.html", f'<!DOCTYPE html><html><head><title>ext {k}</title></head><body><p>'
                f'{self.text(60)}</p><a href="/deep/d{k}.html">deeper</a> '
                f'<a href="/deep/missing-{k}.html">deeper-gone</a></body></html>\n')
            put(ext, f"/deep/d{k}.html", "<!DOCTYPE html><html><body>deep</body></html>\n")
        put(ext, "/index.html", '<!DOCTYPE html><html><body><a href="/p0.html">p0</a></body></html>\n')
        with open(os.path.join(out, "pages.txt"), "w") as f:
            f.writelines(MAIN + p.path + "\n" for p in pages)
        truth = ground_truth(pages, files[main], files[ext], vars(self.o))
        with open(os.path.join(out, "ground_truth.json"), "w") as f:
            json.dump(truth, f, indent=1)
        return truth


def classify(url: str, main_files: set[str], ext_files: set[str]) -> tuple[str, str | None]:
    """(kind, path of the served file or None) for an absolute URL without a fragment."""
    sp = urlsplit(url)
    origin, path = f"{sp.scheme}://{sp.netloc}", sp.path or "/"
    if origin == MAIN:
        redirected = path.startswith(REDIRECT_PREFIXES)
        if redirected:
            path = "/docs/" + path.split("/", 2)[2]
        if path.endswith("/"):
            path += "index.html"
        if path in main_files:
            return "ok", path
        if redirected:
            return "redirect_to_missing", None
        if path.startswith(("/static/", "/images/")):
            return "missing_asset", None
        return ("footer_404" if path.startswith("/legal/") else "missing_page"), None
    if origin == EXT:
        path = path + "index.html" if path.endswith("/") else path
        return ("ok" if path in ext_files else "external_404"), None
    if origin == DEAD:
        return "conn_refused", None
    return "other", None


def ground_truth(pages: list[Page], main_files: set[str], ext_files: set[str], params: dict[str, object]) -> dict:
    ids = {p.path: p.ids for p in pages}
    broken: dict[str, dict] = {}
    broken_frag: dict[str, set[str]] = {}
    unique, unique_nofrag, kinds, tags = set(), set(), {}, {}
    occurrences = mailto = 0
    for p in pages:
        page_url = MAIN + p.path
        for tag, href in p.links:
            occurrences += 1
            tags[tag] = tags.get(tag, 0) + 1
            if href.startswith("mailto:"):
                mailto += 1
                continue
            url = urljoin(page_url, href)
            base, frag = urldefrag(url)
            unique.add(url)
            unique_nofrag.add(base)
            kind, served = classify(base, main_files, ext_files)
            kinds.setdefault(kind, set()).add(base)
            if kind not in ("ok", "other"):
                broken.setdefault(base, {"kind": kind, "referrers": set()})["referrers"].add(page_url)
            elif frag and served and served.endswith(".html") and frag not in ids.get(served, ()):
                broken_frag.setdefault(url, set()).add(page_url)
    return {
        "generator": "bench/gen_site.py",
        "params": params,
        "origin": MAIN, "second_origin": EXT, "dead_origin": DEAD, "start_url": MAIN + "/",
        "counts": {
            "html_pages_main": len(pages),
            "link_occurrences": occurrences,
            "link_occurrences_by_tag": tags,
            "mailto_occurrences": mailto,
            "unique_http_urls_with_fragment": len(unique),
            "unique_http_urls_without_fragment": len(unique_nofrag),
            "unique_by_kind": {k: len(v) for k, v in sorted(kinds.items())},
            "broken_urls": len(broken),
            "broken_occurrences": sum(len(v["referrers"]) for v in broken.values()),
            "broken_fragment_urls": len(broken_frag),
        },
        "broken": [{"url": u, "kind": v["kind"], "referrers": sorted(v["referrers"])}
                   for u, v in sorted(broken.items())],
        "broken_fragments": [{"url": u, "referrers": sorted(v)} for u, v in sorted(broken_frag.items())],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--pages", "-n", type=int, default=1000, help="HTML pages on the main origin")
    ap.add_argument("--links-per-page", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--broken-frac", type=float, default=0.03, help="body links to missing pages")
    ap.add_argument("--redirect-frac", type=float, default=0.03, help="body links via /old/ or /moved/")
    ap.add_argument("--ext-frac", type=float, default=0.05, help="body links to the second origin")
    ap.add_argument("--ext-broken-frac", type=float, default=0.2)
    ap.add_argument("--frag-frac", type=float, default=0.15, help="internal body links with a #fragment")
    ap.add_argument("--bad-frag-frac", type=float, default=0.3, help="of those, the share with a missing id")
    ap.add_argument("--img-broken-frac", type=float, default=0.01)
    ap.add_argument("--ext-pages", type=int, default=300)
    ap.add_argument("--dead-every", type=int, default=250, help="every Nth content page links to :8089 (0: never)")
    truth = Site(ap.parse_args()).write()
    json.dump(truth["counts"], sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
