"""Tests of the HTML extractor: which attributes are links, positions, base href, anchors, odd markup."""

from __future__ import annotations

import pytest

from linkhound.extract import extract_html
from linkhound.extract.html import refresh_url, srcset_urls
from linkhound.types import Extraction, RawLink

BASE = "https://example.com/docs/page.html"


def links(doc: str | bytes, base: str = BASE) -> list[tuple[str, str, str]]:
    return [(link.text, link.element, link.attribute) for link in extract_html(doc, base).links]


def texts(doc: str | bytes) -> list[str]:
    return [link.text for link in extract_html(doc, BASE).links]


def where(doc: str, text: str) -> list[tuple[int, int]]:
    """(line, column) of every link with this text."""
    return [(link.line, link.column) for link in extract_html(doc, BASE).links if link.text == text]


def at(doc: str, line: int, column: int) -> str:
    """The source text starting at a 1-based (line, column)."""
    return doc.split("\n")[line - 1][column - 1 :]


# --- which attributes are links ------------------------------------------------------------------


def test_extract_html_returns_an_extraction_with_the_given_base() -> None:
    result = extract_html('<a href="a.html">a</a>', BASE)
    assert isinstance(result, Extraction)
    assert result.base == BASE
    assert result.links == (RawLink("a.html", "a", "href", 1, 10),)


def test_every_link_bearing_attribute_is_extracted_in_document_order() -> None:
    doc = """<html><head>
<link rel="stylesheet" href="s.css"><script src="s.js"></script>
</head><body background="body.png">
<a href="a.html">a</a><map><area href="area.html"></map>
<img src="i.png" longdesc="desc.html"><iframe src="if.html" longdesc="ifdesc.html"></iframe>
<embed src="e.swf"><audio src="au.mp3"></audio>
<video src="v.mp4" poster="poster.jpg"><source src="s.webm"><track src="t.vtt"></video>
<picture><source srcset="pic.webp"></picture>
<input type="image" src="button.png"><object data="o.svg"></object>
<blockquote cite="bq.html">b</blockquote><q cite="q.html">q</q>
<del cite="del.html">d</del><ins cite="ins.html">i</ins>
<table background="table.png"><tr><th background="th.png">h</th><td background="td.png">d</td></tr></table>
</body></html>"""
    assert links(doc) == [
        ("s.css", "link", "href"),
        ("s.js", "script", "src"),
        ("body.png", "body", "background"),
        ("a.html", "a", "href"),
        ("area.html", "area", "href"),
        ("i.png", "img", "src"),
        ("desc.html", "img", "longdesc"),
        ("if.html", "iframe", "src"),
        ("ifdesc.html", "iframe", "longdesc"),
        ("e.swf", "embed", "src"),
        ("au.mp3", "audio", "src"),
        ("v.mp4", "video", "src"),
        ("poster.jpg", "video", "poster"),
        ("s.webm", "source", "src"),
        ("t.vtt", "track", "src"),
        ("pic.webp", "source", "srcset"),
        ("button.png", "input", "src"),
        ("o.svg", "object", "data"),
        ("bq.html", "blockquote", "cite"),
        ("q.html", "q", "cite"),
        ("del.html", "del", "cite"),
        ("ins.html", "ins", "cite"),
        ("table.png", "table", "background"),
        ("th.png", "th", "background"),
        ("td.png", "td", "background"),
    ]


def test_frame_src_and_longdesc_are_links() -> None:
    doc = '<frameset><frame src="f.html" longdesc="l.html"></frameset>'
    assert links(doc) == [("f.html", "frame", "src"), ("l.html", "frame", "longdesc")]


def test_input_src_counts_only_for_type_image() -> None:
    doc = '<input src="text.png"><input type=IMAGE src="image.png"><input type="file" src="f.png">'
    assert texts(doc) == ["image.png"]


def test_formaction_is_checked_but_form_action_is_not() -> None:
    # form action is often a POST-only endpoint; formaction is in the list of link attributes
    doc = '<form action="/search"><button formaction="/post">go</button><input formaction="/x"></form>'
    assert texts(doc) == ["/post", "/x"]


def test_preconnect_and_dns_prefetch_links_are_skipped_entirely() -> None:
    doc = """<link rel="preconnect" href="https://fonts.example">
<link rel="dns-prefetch" href="//cdn.example"><link rel="DNS-Prefetch preconnect" href="https://x.example">
<link rel="preload" href="font.woff2"><link rel="canonical" href="https://example.com/">"""
    assert texts(doc) == ["font.woff2", "https://example.com/"]


def test_javascript_data_and_tel_links_are_returned_for_the_checker_to_classify() -> None:
    doc = '<a href="javascript:void(0)">j</a><img src="data:image/png;base64,AAAA"><a href="tel:+123">t</a>'
    assert texts(doc) == ["javascript:void(0)", "data:image/png;base64,AAAA", "tel:+123"]


def test_empty_href_is_skipped_but_a_lone_hash_is_kept() -> None:
    assert texts('<a href="">e</a><a href>n</a><a href="   ">s</a><a href="#">h</a><a>none</a>') == ["#"]


def test_whitespace_around_a_url_is_stripped_and_newlines_inside_removed() -> None:
    doc = '<a href="\n   a.html  ">a</a><a href="b\n.html">b</a>'
    assert texts(doc) == ["a.html", "b.html"]
    assert where(doc, "a.html") == [(2, 4)]


# --- srcset ---------------------------------------------------------------------------------------


def test_srcset_candidates_with_descriptors_and_commas_inside_urls() -> None:
    doc = '<img srcset="a.jpg 1x, b,c.jpg 2x,d.jpg 100w">'
    assert texts(doc) == ["a.jpg", "b,c.jpg", "d.jpg"]
    assert [at(doc, *position) for position in where(doc, "b,c.jpg")] == ['b,c.jpg 2x,d.jpg 100w">']
    assert where(doc, "d.jpg") == [(1, 35)]


def test_an_attribute_written_inside_another_attributes_value_is_not_the_links_place() -> None:
    # (`linkhound fix` edits the text at a link's place: the tooltip must not be taken for the href)
    doc = """<p title='see href="m.html"'>t</p>\n<a href="m.html">real</a> <img alt='src="i.png"' src="i.png">"""
    assert where(doc, "m.html") == [(2, 10)] and at(doc, 2, 10).startswith('m.html">real')
    assert where(doc, "i.png") == [(2, 55)] and at(doc, 2, 55).startswith('i.png">')


def test_inline_svg_image_use_and_xlink_href_are_links_at_their_place() -> None:
    doc = ('<a href="a.html">a</a><svg>\n<image href="i.png"/><use xlink:href="sprite.svg#icon"/>\n'
           '<a xlink:href="x.html">x</a><a href="s.html">s</a><feImage href="f.png"/><use href="#own"/></svg>\n'
           '<image src="plain.png">')  # (outside SVG, the parser makes it an <img>)
    assert sorted(links(doc)) == sorted([
        ("a.html", "a", "href"), ("i.png", "image", "href"), ("sprite.svg#icon", "use", "xlink:href"),
        ("x.html", "a", "xlink:href"), ("s.html", "a", "href"), ("f.png", "feImage", "href"), ("#own", "use", "href"),
        ("plain.png", "img", "src"),
    ])
    assert where(doc, "sprite.svg#icon") == [(2, 39)] and where(doc, "#own") == [(3, 85)]
    assert where(doc, "x.html") == [(3, 16)] and where(doc, "s.html") == [(3, 38)]


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("a.jpg", [(0, "a.jpg")]),
        ("a.jpg,b.jpg", [(0, "a.jpg,b.jpg")]),  # no whitespace: one URL with a comma in it
        ("a.jpg, b.jpg", [(0, "a.jpg"), (7, "b.jpg")]),
        ("a.jpg 1x,b.jpg 2x", [(0, "a.jpg"), (9, "b.jpg")]),
        (",, a.jpg,, b.jpg,,", [(3, "a.jpg"), (11, "b.jpg")]),
        ("a.jpg 100w (x, y), b.jpg", [(0, "a.jpg"), (19, "b.jpg")]),  # a comma inside parentheses
        ("  \n a.jpg\n2x , b.jpg ", [(4, "a.jpg"), (15, "b.jpg")]),
        ("", []),
        (" , ", []),
    ],
)
def test_srcset_urls_follow_the_html_spec_algorithm(srcset: str, expected: list[tuple[int, str]]) -> None:
    assert srcset_urls(srcset) == expected


def test_img_with_src_and_srcset_yields_src_then_each_candidate_once() -> None:
    doc = '<img src="a.png" srcset="a.png 1x, a@2x.png 2x" alt="x">'
    assert links(doc) == [("a.png", "img", "src"), ("a.png", "img", "srcset"), ("a@2x.png", "img", "srcset")]
    assert where(doc, "a.png") == [(1, 11), (1, 26)]


def test_srcset_with_entities_keeps_positions_of_each_candidate() -> None:
    doc = '<img srcset="a.png?x=1&amp;y=2 1x, b.png 2x">'
    assert texts(doc) == ["a.png?x=1&y=2", "b.png"]
    assert where(doc, "b.png") == [(1, 36)]


# --- base href ------------------------------------------------------------------------------------


def test_base_href_absolute_replaces_the_base() -> None:
    result = extract_html('<head><base href="https://cdn.example/v2/"></head><a href="x">x</a>', BASE)
    assert result.base == "https://cdn.example/v2/"
    assert [link.text for link in result.links] == ["x"]  # not resolved, and <base> itself is no link


def test_relative_base_href_resolves_against_the_given_base() -> None:
    assert extract_html('<base href="../api/">', BASE).base == "https://example.com/api/"


def test_first_base_with_an_href_wins() -> None:
    doc = '<base target="_blank"><base href="/one/"><base href="/two/">'
    assert extract_html(doc, BASE).base == "https://example.com/one/"


def test_invalid_base_href_is_ignored() -> None:
    assert extract_html('<base href="http://[broken">', BASE).base == BASE
    assert extract_html('<base href="   ">', BASE).base == BASE


def test_absolute_base_href_is_used_even_when_the_given_base_is_not_a_url() -> None:
    assert extract_html('<base href="https://other.example/x/">', "").base == "https://other.example/x/"
    assert extract_html('<base href="relative/">', "").base == ""


# --- entities, quoting, case ----------------------------------------------------------------------


def test_entities_in_urls_are_decoded_and_the_position_is_the_raw_value() -> None:
    doc = '<p>\n  <a href="search?q=1&amp;lang=en&#38;x=&#x79;">s</a>'
    assert texts(doc) == ["search?q=1&lang=en&x=y"]
    assert where(doc, "search?q=1&lang=en&x=y") == [(2, 12)]


def test_a_legacy_entity_name_before_equals_is_not_decoded_in_an_attribute() -> None:
    doc = '<a href="/p?a=1&copy=2&amp;b=3">x</a>'
    assert texts(doc) == ["/p?a=1&copy=2&b=3"]
    assert where(doc, "/p?a=1&copy=2&b=3") == [(1, 10)]


def test_unquoted_and_single_quoted_attributes() -> None:
    doc = "<a href=plain.html>a</a> <a href='single.html'>b</a> <a href = spaced.html >c</a>"
    assert texts(doc) == ["plain.html", "single.html", "spaced.html"]
    assert where(doc, "plain.html") == [(1, 9)]
    assert where(doc, "single.html") == [(1, 35)]
    assert where(doc, "spaced.html") == [(1, 64)]


def test_uppercase_tags_and_attributes() -> None:
    doc = '<A HREF="UP.html">x</A>\n<IMG SRC=pic.PNG>\n<Link Rel=Stylesheet Href="s.css">'
    assert links(doc) == [("UP.html", "a", "href"), ("pic.PNG", "img", "src"), ("s.css", "link", "href")]
    assert [(link.line, link.column) for link in extract_html(doc, BASE).links] == [(1, 10), (2, 10), (3, 28)]


# --- malformed markup and text that only looks like links ------------------------------------------


def test_malformed_markup_unclosed_tags_and_stray_less_than() -> None:
    doc = "<div><p>1 < 2 <a href=one.html>one<p>x <b>bold <a href=two.html>two\n<<a href=three.html>three"
    assert texts(doc) == ["one.html", "two.html", "three.html"]
    assert where(doc, "three.html") == [(2, 10)]


def test_link_like_text_in_title_textarea_xmp_script_and_comments_is_not_a_link() -> None:
    doc = """<title><a href="t.html">t</a></title>
<textarea><a href="ta.html"></a></textarea><xmp><a href="x.html"></xmp>
<script>var s = '<a href="s.html">';</script><!-- <a href="c.html"> -->
<noscript><a href="ns.html">visible without scripts</a></noscript>
<p>a href="p.html" is only text</p>"""
    assert texts(doc) == ["ns.html"]


def test_same_url_twice_gives_two_links_at_their_own_positions() -> None:
    doc = '<a href="same.html">1</a>\n<p><a href="same.html">2</a>\n<img src="same.html">'
    assert links(doc) == [("same.html", "a", "href"), ("same.html", "a", "href"), ("same.html", "img", "src")]
    assert where(doc, "same.html") == [(1, 10), (2, 13), (3, 11)]


def test_a_link_copied_in_a_comment_or_script_does_not_take_its_position() -> None:
    doc = '<!-- <a href="x.html"> -->\n<script>"<a href=\'x.html\'>"</script>\n<a href="x.html">x</a>'
    assert where(doc, "x.html") == [(3, 10)]


def test_misnested_anchor_that_the_parser_clones_is_reported_once() -> None:
    doc = '<p><a href="clone.html">one<p>two</p>three'
    assert texts(doc) == ["clone.html"]


def test_links_inside_template_are_not_extracted() -> None:
    doc = '<template><a href="t.html">t</a></template>\n<a href="t.html">real</a>'
    assert where(doc, "t.html") == [(2, 10)]


def test_garbage_input_never_raises() -> None:
    for doc in (b"", b"\x00\xff\xfe<<<>>>", "<a href=", "<a href='unterminated", "<<<<a", "<!--", "<script>"):
        extract_html(doc, BASE)


# --- meta -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("5; url=next.html", [(7, "next.html")]),
        ("0;URL='quoted.html'", [(7, "quoted.html")]),
        ('1 ; url = "spaced.html" ', [(11, "spaced.html")]),
        ("3,comma.html", [(2, "comma.html")]),
        ("0 no-url-keyword.html", [(2, "no-url-keyword.html")]),
        ("0; urlish.html", [(3, "urlish.html")]),
        (".5; url=fraction.html", [(8, "fraction.html")]),
        ("5", []),
        ("5;", []),
        ("soon; url=x.html", []),
        ("", []),
    ],
)
def test_meta_refresh_url_variants(content: str, expected: list[tuple[int, str]]) -> None:
    assert refresh_url(content) == expected


def test_meta_refresh_is_a_link_at_the_url_inside_content() -> None:
    doc = '<head>\n<meta http-equiv="Refresh" content="0; URL=\'/moved/here.html\'">'
    assert links(doc) == [("/moved/here.html", "meta", "content")]
    assert where(doc, "/moved/here.html") == [(2, 45)]


def test_other_meta_content_is_not_a_link() -> None:
    assert texts('<meta name="description" content="see https://x.example/">') == []


@pytest.mark.parametrize("content", ["nofollow", "noindex, nofollow", "NONE", "noindex,NoFollow"])
def test_meta_robots_nofollow_or_none_sets_extraction_nofollow(content: str) -> None:
    assert extract_html(f'<meta name="Robots" content="{content}">', BASE).nofollow is True


@pytest.mark.parametrize(
    "doc", ['<meta name="robots" content="noindex">', '<meta name="googlebot" content="nofollow">', "<p>"]
)
def test_meta_robots_without_nofollow_keeps_following(doc: str) -> None:
    assert extract_html(doc, BASE).nofollow is False


def test_rel_nofollow_marks_a_area_and_link_links() -> None:
    doc = """<a href="a.html" rel="nofollow">a</a><a href="b.html" rel="noopener NoFollow">b</a>
<a href="c.html" rel="noopener">c</a><map><area href="d.html" rel=nofollow></map>
<link href="e.css" rel="stylesheet nofollow"><img src="f.png" rel="nofollow">"""
    result = extract_html(doc, BASE)
    assert [(link.text, link.nofollow) for link in result.links] == [
        ("a.html", True),
        ("b.html", True),
        ("c.html", False),
        ("d.html", True),
        ("e.css", True),
        ("f.png", False),
    ]
    assert result.nofollow is False


# --- CSS --------------------------------------------------------------------------------------------


def test_style_attribute_urls_in_every_quoting() -> None:
    doc = """<div style="background: url(&quot;dq.png&quot;)">a</div>
<div style='background-image: url("dq2.png"), url(bare.png)'>b</div>
<span style="cursor: url('sq.cur'), auto; background: url(data:image/png;base64,AA)">c</span>"""
    assert links(doc) == [
        ("dq.png", "div", "style"),
        ("dq2.png", "div", "style"),
        ("bare.png", "div", "style"),
        ("sq.cur", "span", "style"),
    ]
    assert where(doc, "dq2.png") == [(2, 36)]
    assert where(doc, "bare.png") == [(2, 51)]
    assert where(doc, "sq.cur") == [(3, 27)]


def test_style_element_urls_with_positions_and_data_urls_skipped() -> None:
    doc = """<style>
body { background: url("bg.png") }
@import "print.css";
/* url(commented.png) */
.icon { background: url(data:image/svg+xml;utf8,<svg/>) }
</style>"""
    assert links(doc) == [("bg.png", "style", "css"), ("print.css", "style", "css")]
    assert where(doc, "bg.png") == [(2, 25)]
    assert where(doc, "print.css") == [(3, 10)]


# --- anchors ------------------------------------------------------------------------------------------


def test_anchors_are_every_id_and_a_name_as_written() -> None:
    doc = '<h1 id="Intro">x</h1><div id="section-2"><a name="Old-Name"></a>'
    doc += '<p name="not-an-anchor"></p><b id=""></b>'
    assert extract_html(doc, BASE).anchors == frozenset({"Intro", "section-2", "Old-Name"})


# --- positions ------------------------------------------------------------------------------------------


def test_line_and_column_in_a_multiline_document() -> None:
    doc = """<!DOCTYPE html>
<html>
  <body>
    <p>Intro
       <a class="x"
          href="deep/link.html">link</a>
    </p>
    <img
src="pic.png">
  </body>
</html>"""
    result = extract_html(doc, BASE)
    assert [(link.text, link.line, link.column) for link in result.links] == [
        ("deep/link.html", 6, 17),
        ("pic.png", 9, 6),
    ]
    for link in result.links:
        assert at(doc, link.line, link.column).startswith(link.text)


def test_crlf_and_cr_line_endings_count_as_one_line_break() -> None:
    doc = '<p>\r\n<a href="one.html">1</a>\r<a href="two.html">2</a>'
    assert [(link.line, link.column) for link in extract_html(doc, BASE).links] == [(2, 10), (3, 10)]


def test_columns_count_characters_not_bytes() -> None:
    doc = '<p>Ünïcödé — “quotes” <a href="after.html">x</a>'
    assert where(doc, "after.html") == [(1, 32)]
    assert where(doc.encode("utf-8").decode("utf-8"), "after.html") == [(1, 32)]
    assert [(link.line, link.column) for link in extract_html(doc.encode(), BASE).links] == [(1, 32)]


def test_minified_single_line_page_positions() -> None:
    doc = "".join(f'<li><a href="p{index}.html">{index}</a></li>' for index in range(200))
    result = extract_html(doc, BASE)
    assert len(result.links) == 200
    for link in result.links:
        assert link.line == 1
        assert at(doc, link.line, link.column).startswith(link.text + '"')


# --- decoding -------------------------------------------------------------------------------------------


def test_meta_charset_decides_the_encoding() -> None:
    doc = '<meta charset="iso-8859-1"><a href="caf\xe9.html">x</a>'.encode("latin-1")
    assert texts(doc) == ["café.html"]


def test_http_equiv_content_type_charset() -> None:
    meta = b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    doc = meta + "<a href='д.html'>".encode("cp1251")
    assert texts(doc) == ["д.html"]


def test_utf8_bom_and_undecodable_bytes_do_not_fail() -> None:
    assert texts(b'\xef\xbb\xbf<a href="b\xc3\xa9.html">x</a>') == ["bé.html"]
    assert texts(b'<a href="bad\xff.html">x</a>') == ["bad\ufffd.html"]


def test_unknown_charset_falls_back_to_utf8() -> None:
    assert texts('<meta charset="no-such-codec"><a href="é.html">'.encode()) == ["é.html"]
