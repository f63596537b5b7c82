"""--soft-404: pages that answer 200 with their host's "not found" page, against real loopback servers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from linkhound import Status
from linkhound.report.common import summary_line
from server import Site, SiteFactory, html

pytestmark = pytest.mark.usefixtures("both_clients")  # every test here runs on reqwest and on aiohttp

NAV = " ".join(f"<span>Section {i} of the handbook</span>" for i in range(8))
FOOTER = "Copyright Example Docs. Built with a static site generator. Licensed under the terms of the licence."


def layout(body: str, title: str = "Example Docs") -> str:
    """Every page of the site: one title, a large navigation and footer, and the page's own content."""
    return (f"<!doctype html><html><head><title>{title}</title><style>body {{ margin: 0 }}</style></head>"
            f"<body><nav>{NAV}</nav><main>{body}</main><footer>{FOOTER}</footer>"
            "<script>window.app = 'shell'</script></body></html>")


def not_found_page(request: web.Request) -> str:
    # the requested path echoed back, as many not-found pages do
    return layout(f"<h1>Page not found</h1><p>Sorry, nothing lives at {request.path}. Try the search box.</p>")


def soft_404_site(site: Site) -> None:
    """A site whose unknown paths answer 200 with its not-found page (as a single-page app's server does)."""

    async def unknown(request: web.Request) -> web.StreamResponse:
        return web.Response(text=not_found_page(request), content_type="text/html")

    site.prefixes["/"] = unknown
    site.page("/install", layout("<h1>Install</h1><p>Download the package, unpack it into a folder of your"
                                 " choice and run the installer with administrator rights.</p>"))
    # shares the layout and the title, and its content is short: still a page of its own
    site.page("/contact", layout("<h1>Contact</h1><p>Write to the team.</p>"))


def probes(site: Site) -> list[str]:
    return [r.path for r in site.requests if r.path.startswith("/lh")]


def by_url(report: linkhound.Report) -> dict[str, linkhound.Result]:
    return {r.url: r for r in report.results}


async def test_soft_404s_are_found_and_real_pages_sharing_the_template_are_not(make_site: SiteFactory) -> None:
    docs = await make_site("127.0.0.1")
    soft_404_site(docs)
    docs.page("/", layout(" ".join(f'<a href="{p}">{p}</a>' for p in (
        "/install", "/contact", "/gone", "/old/page", "/links"))))
    real = await make_site("127.0.0.2")  # an honest server: unknown paths are a real 404
    real.page("/there", layout("<p>here</p>"))
    external = await make_site("127.0.0.3")  # another soft-404 host, only linked to: leaf links
    soft_404_site(external)
    docs.page("/links", layout(" ".join(f'<a href="{u}">{u}</a>' for u in (
        real.url("/there"), external.url("/install"), external.url("/nowhere")))))

    report = await linkhound.check([docs.url("/")], recursive=True, soft_404=True, max_retries=0)
    results = by_url(report)
    for url in (docs.url("/gone"), docs.url("/old/page"), external.url("/nowhere")):
        r = results[url]
        assert r.status is Status.SOFT_404 and r.code == 200, (url, r)
        assert r.reason.startswith("soft 404: answers as ") and "example docs" in r.reason, r.reason
    for url in (docs.url("/"), docs.url("/install"), docs.url("/contact"), docs.url("/links"), real.url("/there"),
                external.url("/install")):
        assert results[url].status is Status.OK, results[url]
    assert report.summary.count(Status.SOFT_404) == 3 and not report.summary.success
    # the cost: two probes per soft-404 host (the second confirms the first), one per honest host; each once
    assert len(probes(docs)) == 2 and len(set(probes(docs))) == 2
    assert len(probes(external)) == 2 and len(probes(real)) == 1
    # leaf links were asked with GET (their body is the evidence), each once
    assert external.hits("/nowhere") == 1 and external.hits("/nowhere", "GET") == 1
    assert real.hits("/there", "GET") == 1


async def test_off_by_default_costs_nothing(make_site: SiteFactory) -> None:
    docs = await make_site("127.0.0.1")
    soft_404_site(docs)
    leaf = await make_site("127.0.0.2")
    soft_404_site(leaf)
    docs.page("/", layout(f'<a href="/gone">x</a> <a href="{leaf.url("/nowhere")}">y</a>'))
    report = await linkhound.check([docs.url("/")], recursive=True, max_retries=0)
    assert report.summary.success and report.summary.count(Status.SOFT_404) == 0
    assert probes(docs) == [] and probes(leaf) == []
    assert leaf.counts() == {("HEAD", "/nowhere"): 1}  # a leaf is still a HEAD request
    line = summary_line(report.summary)
    assert "soft-404" not in line  # an opt-in status shows in the summary only when it was seen


async def test_the_verdict_does_not_depend_on_link_order_or_concurrency(make_site: SiteFactory) -> None:
    docs = await make_site("127.0.0.1")
    soft_404_site(docs)
    paths = ["/install", "/gone", "/contact", "/a/b/c", "/x.html"]
    verdicts = []
    for order, concurrency in ((paths, 1), (paths[::-1], 16)):
        docs.requests.clear()
        listing = "\n".join(docs.url(p) for p in order)
        report = await linkhound.check([docs.url(p) for p in order], soft_404=True, max_concurrency=concurrency)
        verdicts.append({r.url: r.status for r in report.results})
        assert len(probes(docs)) == 2, (listing, probes(docs))
    assert verdicts[0] == verdicts[1]
    assert {u for u, s in verdicts[0].items() if s is Status.SOFT_404} == {
        docs.url("/gone"), docs.url("/a/b/c"), docs.url("/x.html")}


async def test_unknown_paths_redirected_to_one_landing_page(site: Site) -> None:
    async def unknown(request: web.Request) -> web.StreamResponse:
        return web.Response(status=302, headers={"Location": "/"})

    site.prefixes["/"] = unknown
    site.page("/", layout("<h1>Welcome</h1><p>The home page of the site, with news.</p>"))
    site.page("/about", layout("<h1>About</h1><p>Who we are.</p>"))
    site.redirect("/moved", "/about")  # a redirect to a real page stays fine
    report = await linkhound.check([site.url(p) for p in ("/", "/about", "/moved", "/old-post")], soft_404=True)
    results = by_url(report)
    assert results[site.url("/old-post")].status is Status.SOFT_404
    assert "redirected to " + site.url("/") in results[site.url("/old-post")].reason
    assert [results[site.url(p)].status for p in ("/", "/about", "/moved")] == [Status.OK] * 3


async def test_an_app_shell_with_no_text_is_not_judged_and_the_run_says_so(site: Site) -> None:
    shell = '<!doctype html><html><head><title>App</title></head><body><div id="root"></div></body></html>'

    async def unknown(request: web.Request) -> web.StreamResponse:
        return web.Response(text=shell, content_type="text/html")

    site.prefixes["/"] = unknown
    report = await linkhound.check([site.url("/dashboard"), site.url("/settings")], soft_404=True)
    assert report.summary.success  # every route answers the same shell: nothing can be told apart
    assert len(probes(site)) == 2
    (warning,) = [w for w in report.summary.warnings if "soft 404" in w]
    assert warning.startswith(f"soft 404s not checked on {site.base}: ") and "almost no text" in warning


@pytest.mark.parametrize("rules", ["User-agent: *\nDisallow: /\nAllow: /$\nAllow: /docs/\n",
                                   "User-agent: *\nDisallow: /*.html$\n"])
async def test_a_crawl_makes_no_probe_robots_txt_disallows(site: Site, rules: str) -> None:
    # the probes are made-up paths: a crawl asks them only where robots.txt lets crawlers go
    site.page("/robots.txt", rules, content_type="text/plain")
    site.page("/", html("/docs/a"))
    site.page("/docs/a", html())
    report = await linkhound.check([site.url("/")], recursive=True, soft_404=True)
    assert probes(site) == [] and site.hits("/docs/a") == 1
    (warning,) = [w for w in report.summary.warnings if "soft 404" in w]
    assert warning.startswith(f"soft 404s not checked on {site.base}: robots.txt keeps crawlers off paths such as")


async def test_soft_404s_in_the_json_report_from_the_command_line(site: Site, tmp_path: Path,
                                                                  both_clients: str) -> None:
    soft_404_site(site)
    out = tmp_path / "report.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", "--soft-404", "--http-client", both_clients,
        "-f", "json", "-o", str(out),
        site.url("/install"), site.url("/gone"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2, err  # a soft 404 fails the run as a broken link does
    data = json.loads(out.read_text())
    assert data["summary"]["by_status"]["soft_404"] == 1 and data["summary"]["failed"] == 1
    (soft,) = [r for r in data["results"] if r["status"] == "soft_404"]
    assert soft["url"] == site.url("/gone") and soft["reason"].startswith("soft 404")
    assert "1 soft-404" in err.decode()  # the summary line on stderr names it


@pytest.mark.parametrize("list_first", [True, False])
async def test_a_page_first_met_as_a_leaf_gets_the_same_verdict(site: Site, tmp_path: Path, list_first: bool) -> None:
    soft_404_site(site)
    site.page("/", layout('<a href="/install">install</a> <a href="/gone">gone</a> <a href="/contact">contact</a>'))
    listing = tmp_path / "links.md"  # the same pages as leaf links of a local file
    listing.write_text(f"[a]({site.url('/install')}) [b]({site.url('/gone')})\n")
    inputs = [str(listing), site.url("/")] if list_first else [site.url("/"), str(listing)]
    report = await linkhound.check(inputs, recursive=True, soft_404=True, max_retries=0)
    verdicts = {r.url: r.status for r in report.results}
    assert verdicts == {site.url("/"): Status.OK, site.url("/install"): Status.OK, site.url("/contact"): Status.OK,
                        site.url("/gone"): Status.SOFT_404}
    assert len(probes(site)) == 2


async def test_probes_take_their_tokens_of_the_host_rate(site: Site) -> None:
    """The probes of unknown paths are requests like any other: within the host's --host-rate."""
    soft_404_site(site)
    paths = [f"/p{i}" for i in range(4)]
    for p in paths:
        site.page(p, layout(f"<h1>Page {p}</h1><p>Its own words about {p}, enough of them to be a page.</p>"))
    site.page("/", layout(" ".join(f'<a href="{p}">{p}</a>' for p in paths)))
    report = await linkhound.check([site.url("/")], recursive=True, soft_404=True, max_retries=0, robots=False,
                                   host_rate=10.0, host_burst=1)
    assert len(probes(site)) == 2 and not [r for r in report.results if r.status is Status.SOFT_404]
    times = sorted(r.at for r in site.requests)
    t0 = times[0]
    # every request, probes included, at 10/s with a bucket of 1: request k not before k / 10 s (50 ms of slack
    # for arrival jitter on a loaded machine)
    for k, t in enumerate(times):
        assert t - t0 >= k / 10.0 - 0.05, (k, t - t0, [r.path for r in sorted(site.requests, key=lambda r: r.at)])


async def test_a_page_of_megabytes_of_text_is_judged_by_its_first_words(site: Site) -> None:
    # a page of the site's title and 300,000 words: fingerprinted by its first MOST_WORDS only (before, every word
    # and every shingle of it: 30 MB of text took ~280 MB more memory), and still told from the not-found page
    from linkhound.soft404 import MOST_WORDS, fingerprint

    soft_404_site(site)
    big = layout("<h1>Changelog</h1><p>" + " ".join(f"release{i % 5000} notes" for i in range(150_000)) + "</p>")
    site.page("/changelog", big)
    assert MOST_WORDS - 10 < len(fingerprint(big.encode(), site.url("/changelog")).words) <= MOST_WORDS
    report = await linkhound.check([site.url(p) for p in ("/changelog", "/install", "/gone")], soft_404=True)
    results = by_url(report)
    assert results[site.url("/changelog")].status is Status.OK
    assert results[site.url("/gone")].status is Status.SOFT_404
