"""The README recipe for a static site's build folder (MkDocs, Hugo and the like): an index.html per folder,
root-relative links, #fragments, absolute links to the site itself; checked on disk, and as served."""

from __future__ import annotations

import mimetypes
from pathlib import Path

import pytest
from aiohttp import web

from cli_run import arun, run
from server import Site

NAV = ('<link rel="stylesheet" href="/assets/style.css">'
       '<nav><a href="/">Home</a> <a href="/about/">About</a> <a href="/guide/">Guide</a></nav>')
BUILD = {
    "index.html": NAV + '<main id="main"><a href="#main">skip</a> <a href="guide/install/#requirements">needs</a>'
    ' <a href="/guide/install/#nope">bad anchor</a> <a href="/missing/">gone</a>'
    ' <a href="https://docs.example.org/about/#team">absolute, to the site itself</a></main>',
    "about/index.html": NAV + '<h2 id="team">Team</h2><a href="../guide/">guide</a>',
    "guide/index.html": NAV + '<a href="install/">install</a> <a href="../about/#people">no such anchor</a>',
    "guide/install/index.html": NAV + '<h2 id="requirements">Requirements</h2>'
    '<a href="../../assets/style.css">css</a> <img src="/assets/logo.png">',
    "assets/style.css": "body { margin: 0 }",
    "404.html": NAV,
}
# what is wrong in BUILD, as paths in the site
BROKEN = {"guide/install/#nope", "missing/", "about/#people", "assets/logo.png"}


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A site generator's output folder, site/ in tmp_path."""
    site = tmp_path / "site"
    for name, text in BUILD.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    return site


def _broken(stdout: str) -> set[str]:
    """The targets of the ✗ lines of a compact report, as paths in the site."""
    heads = [line.split(": ", 1)[1].split(" (", 1)[0] for line in stdout.splitlines() if line.startswith("✗")]
    return {h.split("/site/", 1)[-1].removeprefix("site/") for h in heads}


def test_build_folder_on_disk_with_root_dir(build: Path) -> None:
    # linkhound site/ --root-dir site --offline
    r = run("--no-progress", "site/", "--root-dir", "site", "--offline", cwd=build.parent)
    assert r.returncode == 2
    assert _broken(r.stdout) == BROKEN, r.stdout
    assert "skipped" in r.stdout.splitlines()[-1] and "1 skipped" in r.stdout  # the absolute link

    # without --root-dir every /... link is reported, with the hint
    r = run("--no-progress", "site/", "--offline", cwd=build.parent)
    assert r.stdout.count("set --root-dir") == len({"/", "/about/", "/guide/", "/assets/style.css", "/missing/",
                                                     "/guide/install/", "/assets/logo.png"})


def test_build_folder_with_absolute_links_to_the_site_remapped_to_the_folder(build: Path) -> None:
    # linkhound site/ --root-dir site --remap "^https://docs\.example\.org/ file://$PWD/site/"
    remap = rf"^https://docs\.example\.org/ {build.as_uri()}/"
    r = run("--no-progress", "site/", "--root-dir", "site", "--remap", remap, cwd=build.parent)
    assert r.returncode == 2 and _broken(r.stdout) == BROKEN, r.stdout
    (build / "about" / "index.html").write_text(NAV + "<h2>Team, with no id</h2>")
    r = run("--no-progress", "site/", "--root-dir", "site", "--remap", remap, cwd=build.parent)
    assert _broken(r.stdout) == BROKEN | {"about/#team"}, r.stdout


async def test_build_folder_as_served_with_base_url(build: Path, site: Site) -> None:
    async def serve(request: web.Request) -> web.StreamResponse:  # python -m http.server -d site, in short
        path = build / request.path.lstrip("/")
        if path.is_dir():
            if not request.path.endswith("/"):
                raise web.HTTPMovedPermanently(request.path + "/")
            path = path / "index.html"
        if not path.is_file():
            return web.Response(status=404, text="not found")
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return web.Response(body=path.read_bytes(), content_type=ctype)

    site.prefixes["/"] = serve
    # linkhound site/ --root-dir site --base-url http://127.0.0.1:8000/ --remap '^https://docs\.example\.org/ ...'
    code, out, err = await arun(
        "--no-progress", "site/", "--root-dir", "site", "--base-url", site.url("/"),
        "--remap", rf"^https://docs\.example\.org/ {site.url('/')}", cwd=build.parent,
    )
    assert code == 2, out + err
    assert {h.removeprefix(site.url("/")) for h in _broken(out)} == BROKEN, out
    assert site.hits("/missing/") == 1 and site.hits("/guide/install/", "GET") == 1  # once, for its anchors
