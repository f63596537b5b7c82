"""Local documents as users hand them over: stdin as a file in the current folder, #fragments of links to
folders, root-relative links with no --root-dir, e-mail addresses written as links, local sitemaps with -r."""

from __future__ import annotations

from pathlib import Path

import pytest

import linkhound
from cli_run import arun, run
from linkhound import Status
from linkhound.local import check_mailto, file_uri
from server import Site, html, urlset

INDEX_MD = """\
# Project

## Install & Run

- [own heading](#install--run)
- [sibling](other.md)
- [sibling's heading](other.md#usage)
- [folder](sub/)
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "other.md").write_text("# Other\n\n## Usage\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "README.md").write_text("# Sub\n")
    return tmp_path


# -- stdin ---------------------------------------------------------------------------------------------------


def test_markdown_on_stdin_resolves_links_and_anchors_as_a_file_in_the_current_folder(folder: Path) -> None:
    r = run("--no-progress", "--offline", "-", stdin=INDEX_MD, cwd=folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "invalid URL" not in r.stdout

    r = run("--no-progress", "--offline", "-", stdin=INDEX_MD + "- [gone](#nope)\n- [missing](gone.md)\n", cwd=folder)
    assert r.returncode == 2
    broken = [line for line in r.stdout.splitlines() if line.startswith("✗")]
    assert broken == ["✗ broken: -#nope (no anchor #nope)", "✗ broken: gone.md (file not found)"], r.stdout
    assert "    in -:9:" in r.stdout and "    in -:10:" in r.stdout  # lines of the text on stdin


def test_html_on_stdin_finds_its_own_ids(folder: Path) -> None:
    page = '<h1 id="top-id">x</h1><a href="#top-id">a</a> <a href="#missing">b</a> <a href="other.md">c</a>'
    r = run("--no-progress", "--offline", "-", stdin=page, cwd=folder)
    assert r.returncode == 2
    broken = [line for line in r.stdout.splitlines() if line.startswith("✗")]
    assert broken == ["✗ broken: -#missing (no anchor #missing)"]


async def test_stdin_at_base_url_fetches_its_relative_links_and_keeps_its_own_anchors(site: Site) -> None:
    site.page("/docs/other.md", "# Other\n\n## Usage\n", content_type="text/markdown")
    site.page("/docs/sub/", "<html></html>")
    code, out, err = await arun("--no-progress", "--base-url", site.url("/docs/"), "-", stdin=INDEX_MD)
    assert code == 0, out + err
    assert site.hits("/docs/other.md", "GET") == 1 and site.hits("/docs/sub/") == 1
    assert site.hits("/docs/-") == 0  # its own #install--run was looked up in the text in hand


# -- fragments of links to folders -----------------------------------------------------------------------------


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    (tmp_path / "md_dir").mkdir()
    (tmp_path / "md_dir" / "README.md").write_text("# Guide\n\n## Part two\n")
    (tmp_path / "html_dir").mkdir()
    (tmp_path / "html_dir" / "index.html").write_text('<h2 id="setup">Setup</h2>')
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "empty_dir" / "notes.txt").write_text("no index here")
    (tmp_path / "home_dir").mkdir()
    (tmp_path / "home_dir" / "home.md").write_text("# Home\n")
    (tmp_path / "doc.md").write_text(
        "[a](md_dir/#part-two) [b](md_dir#part-two) [c](md_dir/#nowhere)\n"
        "[d](html_dir/#setup) [e](html_dir/#Setup)\n"
        "[f](empty_dir#nowhere) [g](empty_dir/) [h](empty_dir/#top) [i](empty_dir/#)\n"
    )
    return tmp_path


def _broken(report: linkhound.Report, root: Path) -> dict[str, str]:
    return {r.url.removeprefix(root.as_uri() + "/"): r.reason for r in report.results if r.status.is_broken}


async def test_a_fragment_of_a_link_to_a_folder_is_looked_for_in_its_index_file(folders: Path) -> None:
    report = await linkhound.check([str(folders / "doc.md")])
    assert _broken(report, folders) == {
        "md_dir/#nowhere": "no anchor #nowhere",
        "html_dir/#Setup": "no anchor #Setup",  # an HTML id is case-sensitive
        "empty_dir#nowhere": "directory with no index file (index.html, index.md, README.md)",
    }
    ok = {r.url.removeprefix(folders.as_uri() + "/") for r in report.results if r.status is Status.OK}
    assert "empty_dir/" in ok  # the folder itself is fine; only a fragment needs a document


async def test_index_files_names_the_documents_a_folder_fragment_is_looked_for_in(folders: Path) -> None:
    (folders / "doc.md").write_text("[a](home_dir/#home) [b](home_dir/#nope) [c](md_dir/#part-two)\n")
    report = await linkhound.check([str(folders / "doc.md")], index_files=["home.md"])
    assert _broken(report, folders) == {
        "home_dir/#nope": "no anchor #nope",
        "md_dir/": "directory has no index file (home.md)",  # --index-files asks every folder for one
    }


# -- root-relative links with no --root-dir -------------------------------------------------------------------


async def test_every_root_relative_link_needs_root_dir_even_one_to_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "about").mkdir()
    (tmp_path / "about" / "index.html").write_text("<p>about</p>")
    page = tmp_path / "index.html"
    page.write_text('<a href="/">home</a> <a href="/about/">about</a> <a href="/tmp">tmp</a> <a href="about/">ok</a>')
    report = await linkhound.check([str(page)])
    broken = {r.url: r.reason for r in report.results if r.status.is_broken}
    hint = "root-relative link: set --root-dir to the site's top folder"
    assert broken == {"file:///": hint, "file:///about/": hint, "file:///tmp": hint}
    report = await linkhound.check([str(page)], root_dir=str(tmp_path))
    assert {r.url: r.reason for r in report.broken} == {tmp_path.as_uri() + "/tmp": "file not found"}


async def test_a_protocol_relative_link_in_a_file_is_an_https_url_and_another_hosts_file_url_not_looked_up(
    site: Site, tmp_path: Path
) -> None:
    # //host/x in a file opened from disk would name a file: URL's host; on the web, where it is read, it is
    # https://host/x, never a path from this machine's top folder
    here = site.base.removeprefix("http:")  # //127.0.0.1:PORT
    site.page("/lib.js", "ok", content_type="text/javascript")
    (tmp_path / "usr").mkdir()
    doc = tmp_path / "a.md"
    doc.write_text(f"[cdn]({here}/lib.js) [gone]({here}/gone.js) [disk](//cdn.example.invalid{tmp_path}/usr)\n"
                   "[share](file://fileserver/share/x.md) [here](file://localhost" + str(doc) + ")\n")
    report = await linkhound.check([str(doc)], offline=True)
    seen = {r.url: (r.status, r.reason) for r in report.results}
    assert seen == {
        f"https:{here}/lib.js": (Status.SKIPPED, "--offline"),
        f"https:{here}/gone.js": (Status.SKIPPED, "--offline"),
        f"https://cdn.example.invalid{tmp_path}/usr": (Status.SKIPPED, "--offline"),  # not {tmp_path}/usr on disk
        "file://fileserver/share/x.md": (Status.UNSUPPORTED, "file: URL of another host (fileserver): not looked up"),
        doc.as_uri(): (Status.OK, ""),  # file://localhost/x is file:///x
    }
    # served over http here: --remap takes the https URL back to it
    report = await linkhound.check([str(doc)], remap=[f"^https:{here}/ {site.base}/"], scheme=["http"])
    assert {r.url: r.status for r in report.results if r.url.startswith(site.base)} == {
        site.url("/lib.js"): Status.OK,
        site.url("/gone.js"): Status.BROKEN,
    }
    assert sorted(site.asked()) == ["/gone.js", "/lib.js"]


# -- e-mail addresses written as links ---------------------------------------------------------------------------


async def test_an_href_that_is_an_e_mail_address_is_broken_with_a_hint(site: Site, tmp_path: Path) -> None:
    hint = "looks like an e-mail address: missing mailto:?"
    site.page("/docs/page.html", html("pgsql-docs@lists.postgresql.org", "mailto:pgsql-docs@lists.postgresql.org",
                                      "missing.html"))
    report = await linkhound.check([site.url("/docs/page.html")])
    broken = {r.url.removeprefix(site.base): (r.code, r.reason) for r in report.results if r.status.is_broken}
    assert broken == {
        "/docs/pgsql-docs@lists.postgresql.org": (404, f"Not Found ({hint})"),
        "/docs/missing.html": (404, "Not Found"),  # no hint where nothing looks like an address
    }
    (tmp_path / "a.md").write_text("[list](pgsql-docs@lists.postgresql.org)\n")
    report = await linkhound.check([str(tmp_path / "a.md")])
    assert [r.reason for r in report.broken] == [f"file not found ({hint})"]


@pytest.mark.parametrize(("link", "verdict"), [
    ("mailto:a@example.org", (Status.OK, "")),
    ("mailto:?to=a@example.org,b@example.org", (Status.OK, "")),  # RFC 6068's own example form
    ("mailto:a@example.org?to=b%40example.org&subject=hi", (Status.OK, "")),
    ("mailto:?subject=hi", (Status.BROKEN, "no address")),
    ("mailto:?to=nobody", (Status.BROKEN, "invalid address 'nobody'")),
    # internationalised (RFC 6531), quoted, and address literals; a host with no dot is still refused
    ("mailto:info@münchen.de", (Status.OK, "")),
    ("mailto:info@xn--mnchen-3ya.de", (Status.OK, "")),
    ("mailto:jos%C3%A9@example.org", (Status.OK, "")),
    ("mailto:%22john%20doe%22@example.org", (Status.OK, "")),
    ("mailto:postmaster@[192.0.2.1]", (Status.OK, "")),
    ("mailto:postmaster@[IPv6:2001:db8::1]", (Status.OK, "")),
    ("mailto:john%20doe@example.org", (Status.BROKEN, "invalid address 'john doe@example.org'")),
    ("mailto:a@b_c.example", (Status.BROKEN, "invalid address 'a@b_c.example'")),
    ("mailto:a.@example.org", (Status.BROKEN, "invalid address 'a.@example.org'")),
    ("mailto:user@localhost", (Status.BROKEN, "invalid address 'user@localhost'")),
])
def test_mailto_addresses_are_read_from_the_path_and_the_to_fields(link: str, verdict: tuple[Status, str]) -> None:
    assert check_mailto(link) == verdict


@pytest.mark.parametrize("kept", ["memory", "state"])
async def test_a_mailto_link_on_every_page_has_one_verdict_with_every_reference(site: Site, tmp_path: Path,
                                                                                 kept: str) -> None:
    mails = ("mailto:docs@example.org", "mailto:not-an-address")
    site.page("/", html("/a", "/b", *mails))
    site.page("/a", html("/b", *mails))
    site.page("/b", html(mails[1], mails[0]))
    state = str(tmp_path / "state") if kept == "state" else None
    report = await linkhound.check([site.url("/")], recursive=True, state=state)
    verdicts = {r.url: (r.status, r.reason, sorted(ref.source.removeprefix(site.base) for ref in r.references))
                for r in report.results if r.url.startswith("mailto:")}
    assert verdicts == {
        mails[0]: (Status.OK, "", ["/", "/a", "/b"]),
        mails[1]: (Status.BROKEN, "invalid address 'not-an-address'", ["/", "/a", "/b"]),
    }


# -- local sitemaps --------------------------------------------------------------------------------------------


async def test_a_local_sitemap_seeds_a_crawl_as_a_fetched_one_does(site: Site, tmp_path: Path) -> None:
    site.page("/a", html("/a-child"))
    site.page("/a-child", "ok")
    site.page("/b", html("/b-missing"))
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset(site.url("/a"), site.url("/b")))
    report = await linkhound.check([str(sitemap)], recursive=True)
    status = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert status == {"/a": Status.OK, "/b": Status.OK, "/a-child": Status.OK, "/b-missing": Status.BROKEN}
    assert site.hits("/a", "GET") == 1 and site.hits("/a", "HEAD") == 0
    assert {p.url for p in report.pages if p.followed} == {site.url("/a"), site.url("/b"), site.url("/a-child")}

    site.requests.clear()  # without -r its pages are checked, not read
    report = await linkhound.check([str(sitemap)])
    assert {r.url.removeprefix(site.base) for r in report.results} == {"/a", "/b"}
    assert site.hits("/a", "HEAD") == 1 and site.hits("/a", "GET") == 0


async def test_a_local_sitemap_index_has_its_sitemaps_read(site: Site, tmp_path: Path) -> None:
    site.page("/pages.xml", urlset(site.url("/a"), site.url("/gone")), content_type="application/xml")
    site.page("/a", html("/a-child"))
    site.page("/a-child", "ok")
    index = tmp_path / "sitemap.xml"
    index.write_text('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                     f"<sitemap><loc>{site.url('/pages.xml')}</loc></sitemap></sitemapindex>")
    report = await linkhound.check([str(index)], recursive=True)
    status = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert status["/a-child"] is Status.OK and status["/gone"] is Status.BROKEN
    assert site.hits("/pages.xml", "GET") == 1


async def test_recursive_with_only_local_files_says_there_is_nothing_to_crawl(site: Site, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Readme\n")
    code, out, err = await arun("--no-progress", "-r", "README.md", cwd=tmp_path)
    assert code == 0 and "-r: nothing to crawl" in err, err
    code, out, err = await arun("--no-progress", "-r", "-q", "README.md", cwd=tmp_path)
    assert code == 0 and err == ""

    site.page("/a", html("/a-child"))
    site.page("/a-child", "ok")
    (tmp_path / "sitemap.xml").write_text(urlset(site.url("/a")))
    code, out, err = await arun("--no-progress", "-r", "sitemap.xml", cwd=tmp_path)
    assert code == 0 and err == "", err
    assert site.hits("/a-child") == 1


def test_a_run_that_checks_nothing_because_of_its_options_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[x](https://example.invalid/) [y](b.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    r = run("--no-progress", "--exclude", ".", "a.md", cwd=tmp_path)
    assert r.returncode == 0 and "nothing checked: every link was excluded or skipped" in r.stderr
    r = run("--no-progress", "--exclude-path", "md$", ".", cwd=tmp_path)
    assert r.returncode == 0 and "nothing checked: no document was read" in r.stderr
    r = run("--no-progress", "--offline", "a.md", cwd=tmp_path)  # b.md is checked: nothing to say
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.parametrize("path", [
    "/", "/a", "/a/b.md", "/a b/c%20d.md", "/d\u00e9j\u00e0/\u65e5.md", "/a/../b", "/a/#?.md", "/a/\udcff.md",
    "//a/b", "/a//b", "/a/./b", "/./a", "/a/", "/a/.", "/.", "/a/..",
])
def test_file_uri_is_what_pathlib_gives(path: str) -> None:
    assert file_uri(path) == Path(path).as_uri()

