"""`linkhound fix`: links that moved for good are rewritten in Markdown and HTML files, and nothing else changes."""

from __future__ import annotations

import re
from pathlib import Path

from cli_run import arun, run
from linkhound.fix_plan import FileFix
from linkhound.link_rewriter import Edit, rewrite_links, written_end
from server import Site


def _site(site: Site) -> None:
    site.page("/new", '<h1 id="top">new</h1>')
    site.page("/q", "query page")
    site.redirect("/old", "/new", 301)
    site.redirect("/oldq", "/q?a=1&b=2", 308)
    site.redirect("/temp", "/new", 302)


async def test_fix_prints_a_diff_and_write_rewrites_only_the_links(site: Site, tmp_path: Path) -> None:
    _site(site)
    old, oldq, temp = site.url("/old"), site.url("/oldq"), site.url("/temp")
    md = tmp_path / "doc.md"
    md_text = (
        "\ufeff# Links, with CRLF endings\r\n\r\n"
        f"See [the *old* page]({old}#top \"title\"), <{old}> and bare {old}.\r\n"
        f"Also [temporary]({temp}) and [ref][r] and `{old}` in code.\r\n\r\n"
        f"[r]: {old}#top\r\n"
        "no final newline: é"
    )
    md.write_bytes(md_text.encode("utf-8"))
    page = tmp_path / "page.html"
    page_text = (f'<p><a href="{oldq}">q</a> <a class=x href=\'{old}#top\'>x</a>\n'
                 f'<img src="{old.replace("/old", "/o&#108;d")}"></p>\n')
    page.write_text(page_text)
    code, out, err = await arun("fix", "--no-config", str(md), str(page), cwd=tmp_path)
    assert code == 2, err
    new, q = site.url("/new"), site.url("/q?a=1&b=2")
    assert f"-See [the *old* page]({old}#top \"title\"), <{old}> and bare {old}.\r\n" in out
    assert f"+See [the *old* page]({new}#top \"title\"), <{new}> and bare {new}.\r\n" in out
    assert f"+[r]: {new}#top\r\n" in out
    assert md.read_bytes() == md_text.encode("utf-8")  # a dry run: nothing written
    assert "to fix: 7 links in 2 files (--write to apply)" in err
    hits = len(site.requests)

    code, out, err = await arun("fix", "--no-config", "--write", str(md), str(page), cwd=tmp_path)
    assert code == 0 and out == "", err
    assert md.read_bytes() == md_text.replace(f"{old}", new).replace(f"`{new}`", f"`{old}`").encode("utf-8")
    assert page.read_text() == (f'<p><a href="{q}">q</a> <a class=x href=\'{new}#top\'>x</a>\n'
                                f'<img src="{new}"></p>\n')
    assert "fixed 7 links in 2 files" in err
    assert len(site.requests) > hits  # checked again: the fix is decided on what the links answer now

    code, out, err = await arun("fix", "--no-config", str(md), str(page), cwd=tmp_path)
    assert (code, out) == (0, ""), err
    assert "to fix: 0 links in 0 files" in err


async def test_fix_keeps_entities_as_the_file_spelled_them(site: Site, tmp_path: Path) -> None:
    site.page("/q", "query page")
    site.redirect("/a", "/q?x=1&y=2", 301)
    page = tmp_path / "page.html"
    page.write_text(f'<a href="{site.url("/a")}?k=1&amp;v=2">a</a>\n')  # /a?k=1&v=2: 404 (routes are exact)
    site.redirect("/a?k=1&v=2", "/q?x=1&y=2", 301)
    code, _, err = await arun("fix", "--no-config", "--write", str(page), cwd=tmp_path)
    assert code == 0, err
    assert page.read_text() == f'<a href="{site.url("/q")}?x=1&amp;y=2">a</a>\n'


def test_fix_usage_errors_are_one_line(tmp_path: Path) -> None:
    done = run("fix", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "linkhound fix: error:" in done.stderr
    done = run("fix", "--no-config", "--max-concurrency", "0", "x.md", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_an_edit_whose_link_is_gone_is_skipped_and_the_rest_applied() -> None:
    data = b"a http://x.test/1 b\nc http://x.test/2 d\n"
    done = rewrite_links(data, [Edit(1, 3, "http://x.test/1", "https://y.test/1"),
                                Edit(2, 3, "http://x.test/9", "https://y.test/9"),
                                Edit(7, 1, "http://x.test/3", "https://y.test/3")])
    assert done.data == b"a https://y.test/1 b\nc http://x.test/2 d\n"
    assert [e.line for e, _ in done.skipped] == [2, 7]


def test_a_link_that_has_grown_since_it_was_checked_is_left_alone() -> None:
    # the file changed between the check and the fix: /old became /old-page, which was never checked
    grown = [b"[a](http://x.test/old-page)\n", b"<a href=\"http://x.test/old.html\">\n", b"http://x.test/old?x=1\n"]
    for data in grown:
        done = rewrite_links(data, [Edit(1, 5 if data[:1] == b"[" else 10 if data[:1] == b"<" else 1,
                                         "http://x.test/old", "http://x.test/new")])
        assert done.data == data and "not there any more" in done.skipped[0][1], data
    ends = b"[a](http://x.test/old) <http://x.test/old>, see http://x.test/old. Or http://x.test/old?\n"
    columns = [m.start() + 1 for m in re.finditer("http://x.test/old", ends.decode())]
    done = rewrite_links(ends, [Edit(1, column, "http://x.test/old", "http://x.test/new") for column in columns])
    assert done.data == ends.replace(b"/old", b"/new") and not done.skipped


def test_the_diff_splits_lines_where_patch_does(tmp_path: Path) -> None:
    # a form feed, U+0085 and U+2028 are inside a line for patch (str.splitlines would split there)
    before = "x\x0cy [a](http://x.test/old)\nnext\u2028line\x85\nlast".encode()
    done = rewrite_links(before, [Edit(1, 9, "http://x.test/old", "http://x.test/new")])
    diff = FileFix(str(tmp_path / "f.md"), before, done.data, done.applied, done.skipped).diff()
    name = f"{str(tmp_path).lstrip('/')}/f.md"  # (an absolute path: a/tmp/..., not a//tmp/...)
    assert diff.split("\n")[:2] == [f"--- a/{name}", f"+++ b/{name}"]
    assert diff.split("\n")[2:] == ["@@ -1,3 +1,3 @@", "-x\x0cy [a](http://x.test/old)", "+x\x0cy [a](http://x.test/new)",
                                     " next\u2028line\x85", " last", "\\ No newline at end of file", ""]


def test_a_new_url_with_a_parenthesis_alone_is_written_with_it_escaped() -> None:
    data = b"[p](http://x.test/old) [w](http://x.test/w)\n"
    done = rewrite_links(data, [Edit(1, 5, "http://x.test/old", "http://x.test/ok_(x"),
                                Edit(1, 28, "http://x.test/w", "http://x.test/Foo_(bar)")])
    assert done.data == b"[p](http://x.test/ok_%28x) [w](http://x.test/Foo_(bar))\n"  # a pair is left as it is


def test_a_new_url_with_the_quote_of_its_attribute_is_written_with_it_escaped() -> None:
    # <a href='/ok/it's'> would end the attribute at the apostrophe: another link, checked fine
    data = b"""<a href='http://x.test/q'>q</a> <a href="http://x.test/d">d</a> [m](http://x.test/m)\n"""
    done = rewrite_links(data, [Edit(1, 10, "http://x.test/q", "http://x.test/ok/it's"),
                                Edit(1, 42, "http://x.test/d", 'http://x.test/say"hi"'),
                                Edit(1, 69, "http://x.test/m", "http://x.test/it's")])
    assert done.data == (b"""<a href='http://x.test/ok/it%27s'>q</a> <a href="http://x.test/say%22hi%22">d</a> """
                         b"""[m](http://x.test/it's)\n""")


def test_two_links_on_one_line_are_both_rewritten_and_lengths_may_change() -> None:
    data = b"x http://a.test/ y http://b.test/ z\r"
    done = rewrite_links(data, [Edit(1, 3, "http://a.test/", "https://a.test/longer/"),
                                Edit(1, 20, "http://b.test/", "https://b.test/")])
    assert done.data == b"x https://a.test/longer/ y https://b.test/ z\r"


def test_a_file_that_is_not_utf8_is_left_alone() -> None:
    data = "caf\xe9 http://a.test/\n".encode("latin-1")
    done = rewrite_links(data, [Edit(1, 6, "http://a.test/", "https://a.test/")])
    assert done.data == data and done.skipped[0][1] == "not UTF-8: left as it is"


def test_written_end_reads_entities_and_markdown_escapes() -> None:
    assert written_end('"http://a.test/?a=1&amp;b=2"', 1, "http://a.test/?a=1&b=2") == 27
    assert written_end("(http://a.test/a\\_b)", 1, "http://a.test/a_b") == 19
    assert written_end("(http://a.test/ab)", 1, "http://a.test/a_b") is None


async def test_a_file_that_cant_be_written_is_a_warning_not_a_traceback(site: Site, tmp_path: Path) -> None:
    _site(site)
    doc = tmp_path / "doc.md"
    doc.write_text(f"[x]({site.url('/old')})\n")
    (tmp_path / "doc.md.linkhound-fix").mkdir()  # where the new bytes would be written first: can't be
    code, _, err = await arun("fix", "--no-config", "--write", str(doc), cwd=tmp_path)
    assert code == 2 and "Traceback" not in err
    assert f"{doc}: not fixed: can't write it: is a directory" in err
    assert doc.read_text() == f"[x]({site.url('/old')})\n"


async def test_write_through_a_symlink_or_a_hard_link_rewrites_the_one_file(site: Site, tmp_path: Path) -> None:
    _site(site)
    real = tmp_path / "CHANGELOG.md"
    real.write_text(f"[a]({site.url('/old')})\n")
    (tmp_path / "docs").mkdir()
    link = tmp_path / "docs" / "changelog.md"
    link.symlink_to("../CHANGELOG.md")
    other = tmp_path / "hard.md"
    other.write_text(f"[b]({site.url('/old')})\n")
    twin = tmp_path / "twin.md"
    twin.hardlink_to(other)
    code, _, err = await arun("fix", "--no-config", "--write", str(link), str(twin), cwd=tmp_path)
    assert code == 0, err
    assert link.is_symlink() and real.read_text() == f"[a]({site.url('/new')})\n"
    assert other.read_text() == twin.read_text() == f"[b]({site.url('/new')})\n"
    assert other.stat().st_ino == twin.stat().st_ino


async def test_links_fix_cannot_rewrite_are_named_with_why(site: Site, tmp_path: Path) -> None:
    _site(site)
    (tmp_path / "urls.txt").write_text(f"{site.url('/old')}\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rel.md").write_text("[rel](old)\n")
    code, out, err = await arun("fix", "--no-config", "--base-url", site.url("/"), "--root-dir", "docs",
                                str(tmp_path / "urls.txt"), str(tmp_path / "docs" / "rel.md"), cwd=tmp_path)
    assert (code, out) == (2, ""), err
    assert f"{tmp_path / 'urls.txt'}:1:1: not fixed: a URL in a plain-text list: not rewritten" in err
    assert f"{tmp_path / 'docs' / 'rel.md'}:1:7: not fixed: written relative: not rewritten" in err

