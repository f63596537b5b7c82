"""Tests of the Markdown extractor: link kinds, code, raw HTML, bare URLs, positions, heading anchors."""

from __future__ import annotations

import re

import pytest

from linkhound.extract import MKDOCS as MKDOCS_IDS
from linkhound.extract import HeadingIds, extract_markdown
from linkhound.types import RawLink

BASE = "file:///docs/README.md"


def links(doc: str, *, include_code: bool = False) -> list[tuple[str, str, str]]:
    found = extract_markdown(doc, BASE, include_code=include_code).links
    return [(link.text, link.element, link.attribute) for link in found]


def texts(doc: str, *, include_code: bool = False) -> list[str]:
    return [link.text for link in extract_markdown(doc, BASE, include_code=include_code).links]


def positions(doc: str) -> list[tuple[str, int, int]]:
    return [(link.text, link.line, link.column) for link in extract_markdown(doc, BASE).links]


def at(doc: str, line: int, column: int) -> str:
    return doc.split("\n")[line - 1][column - 1 :]


def assert_positions_point_at_the_urls(doc: str) -> None:
    for link in extract_markdown(doc, BASE, include_code=True).links:
        assert at(doc, link.line, link.column).startswith(link.text), link


def anchors(doc: str) -> frozenset[str]:
    return extract_markdown(doc, BASE).anchors


# --- link kinds -------------------------------------------------------------------------------------


def test_inline_link_image_and_autolink() -> None:
    doc = 'See [the guide](guide.md "Guide") and ![logo](img/logo.png) at <https://example.com/a>.'
    assert extract_markdown(doc, BASE).links == (
        RawLink("guide.md", "markdown", "inline", 1, 17),
        RawLink("img/logo.png", "markdown", "image", 1, 47),
        RawLink("https://example.com/a", "markdown", "autolink", 1, 65),
    )
    assert extract_markdown(doc, BASE).base == BASE


def test_email_autolink_becomes_mailto() -> None:
    assert positions("Write to <team@example.org>.") == [("mailto:team@example.org", 1, 11)]


def test_used_reference_definitions_are_reported_once_each_at_the_definition() -> None:
    doc = """Use [one][r1], [one again][r1], [Two] and [three][].

[r1]: https://example.com/one
[two]: <two.md> "Title"
[three]:
  three.md
[unused]: https://example.com/unused
"""
    assert positions(doc) == [
        ("https://example.com/one", 3, 7),
        ("two.md", 4, 9),
        ("three.md", 6, 3),
    ]
    assert {link.attribute for link in extract_markdown(doc, BASE).links} == {"reference"}


def test_unused_definitions_render_nothing_and_are_not_links() -> None:
    assert texts("[unused]: https://example.com/unused\n\nNo use of it, nor of [missing].") == []


def test_the_first_definition_of_a_label_is_the_one_used() -> None:
    assert texts("[x]: first.md\n[X]: second.md\n\n[x]") == ["first.md"]


def test_reference_labels_match_ignoring_case_and_whitespace() -> None:
    assert positions("[a][Some  Label]\n\n> [some\n> label]:\n>   <target.md>") == [("target.md", 5, 6)]


def test_a_no_break_space_in_a_label_is_no_whitespace() -> None:
    # CommonMark folds spaces, tabs and line endings only: [a\u00a0b] is not [a b], whose definition goes unused
    assert texts("Use [a\u00a0b] here.\n\n[a\u00a0b]: used.md\n[a b]: unused.md\n") == ["used.md"]


def test_reference_image_uses_its_definition() -> None:
    assert links("![badge][b]\n\n[b]: https://img.example/b.svg") == [
        ("https://img.example/b.svg", "markdown", "reference")
    ]


def test_urls_are_kept_as_written_not_percent_encoded() -> None:
    assert texts("[a](<with space.md>) [b](ünï.md) [c](a%20b.md) [d](q?x=1&y=2)") == [
        "with space.md",
        "ünï.md",
        "a%20b.md",
        "q?x=1&y=2",
    ]


def test_backslash_escapes_and_entities_in_destinations_are_decoded() -> None:
    assert texts(r"[a](a\_b.md) [b](x?a=1&amp;b=2) [c](&#x41;.md)") == ["a_b.md", "x?a=1&b=2", "A.md"]


def test_javascript_data_and_file_links_are_returned() -> None:
    assert texts("[j](javascript:alert(1)) [f](file:///etc/hosts) ![d](data:image/png;base64,AA)") == [
        "javascript:alert(1)",
        "file:///etc/hosts",
        "data:image/png;base64,AA",
    ]


def test_fragment_only_links() -> None:
    assert texts("[top](#top) [section](other.md#section)") == ["#top", "other.md#section"]


def test_link_wrapping_an_image_gives_both() -> None:
    assert positions("[![build](badge.svg)](https://ci.example/job)") == [
        ("badge.svg", 1, 11),
        ("https://ci.example/job", 1, 23),
    ]


# --- bare URLs --------------------------------------------------------------------------------------


def test_bare_urls_in_text_drop_trailing_punctuation() -> None:
    doc = "Docs: https://example.com/docs. Also https://example.com/a, and (https://example.com/b)!"
    assert links(doc) == [
        ("https://example.com/docs", "markdown", "bare"),
        ("https://example.com/a", "markdown", "bare"),
        ("https://example.com/b", "markdown", "bare"),
    ]
    assert_positions_point_at_the_urls(doc)


def test_bare_url_keeps_balanced_parentheses() -> None:
    assert texts("See https://en.wikipedia.org/wiki/Link_(disambiguation).") == [
        "https://en.wikipedia.org/wiki/Link_(disambiguation)"
    ]


def test_bare_urls_inside_emphasis() -> None:
    assert texts("*https://a.example* and **https://b.example/x**, _https://c.example_") == [
        "https://a.example",
        "https://b.example/x",
        "https://c.example",
    ]


def test_url_as_link_text_is_not_also_a_bare_url() -> None:
    assert links("[https://shown.example](https://target.example)") == [
        ("https://target.example", "markdown", "inline")
    ]


def test_url_in_image_alt_or_title_is_not_a_link() -> None:
    assert texts('![https://alt.example](pic.png "https://title.example")') == ["pic.png"]


def test_bare_url_entities_are_decoded() -> None:
    assert texts("x https://a.example/?q=1&amp;r=2 y") == ["https://a.example/?q=1&r=2"]


def test_text_without_scheme_or_www_is_not_a_link() -> None:
    assert texts("example.com/path and https:// alone and awww.example.com") == []


def test_www_autolinks_become_http_links_as_on_github() -> None:
    doc = "Visit www.example.com/path. Or (www.commonmark.org/a_b), *www.em.example* and www.x_y.example."
    assert positions(doc) == [
        ("http://www.example.com/path", 1, 7),
        ("http://www.commonmark.org/a_b", 1, 33),
        ("http://www.em.example", 1, 59),
    ]


def test_bare_email_addresses_become_mailto_links() -> None:
    doc = "Write to team@example.org. Or to a.b+c@mail.example.co.uk, or mailto:x@y.example."
    assert positions(doc) == [
        ("mailto:team@example.org", 1, 10),
        ("mailto:a.b+c@mail.example.co.uk", 1, 34),
        ("mailto:x@y.example", 1, 63),
    ]


def test_what_is_not_an_email_autolink() -> None:
    doc = "npm i pkg@1.2.3, user@localhost, a@b.c- and @handle and https://user@host.example/x"
    assert texts(doc) == ["https://user@host.example/x"]


def test_bare_url_with_any_scheme_is_found() -> None:
    assert links("Open slack://open?team=T1 now") == [("slack://open?team=T1", "markdown", "bare")]


def test_backslash_escapes_in_bare_urls_are_decoded() -> None:
    assert texts(r"See https://x.example/a\_b\_c and www.y.example/\*x") == [
        "https://x.example/a_b_c",
        "http://www.y.example/*x",
    ]


def test_links_in_table_cells() -> None:
    doc = "| name | link |\n|---|---|\n| a | [doc](a.md) https://b.example |\n"
    assert positions(doc) == [("a.md", 3, 13), ("https://b.example", 3, 19)]


# --- footnotes and front matter ---------------------------------------------------------------------


def test_footnote_definition_is_not_a_reference_definition() -> None:
    doc = """Hashing[^siphash] is fast.

[^siphash]: [https://en.example/wiki/SipHash](https://en.example/wiki/SipHash)
"""
    assert extract_markdown(doc, BASE).links == (
        RawLink("https://en.example/wiki/SipHash", "markdown", "inline", 3, 47),
    )


def test_footnotes_have_the_anchors_github_and_mkdocs_give_them() -> None:
    assert anchors("Text[^note].\n\n[^note]: The note.\n") == {"fn-note", "fn:note", "fnref-note", "fnref:note"}


def test_footnote_text_gets_bare_urls_and_links() -> None:
    doc = "Text[^1].\n\n[^1]: See https://a.example and [b](b.md).\n"
    assert positions(doc) == [("https://a.example", 3, 11), ("b.md", 3, 37)]


def test_front_matter_is_not_a_heading_and_its_urls_are_found() -> None:
    doc = "---\ntitle: Hello\nurl: https://fm.example/page\n---\n\n# Real title\n\n[x](x.md)\n"
    result = extract_markdown(doc, BASE)
    assert result.anchors == {"real-title"}
    assert [(link.text, link.line, link.column) for link in result.links] == [
        ("https://fm.example/page", 3, 6),
        ("x.md", 8, 5),
    ]


def test_dashes_later_in_the_document_are_not_front_matter() -> None:
    assert anchors("# A\n\n---\nfoo: bar\n---\n") == {"a", "foo-bar"}


def test_toml_front_matter() -> None:
    assert anchors("+++\ntitle = 'x'\n+++\n\n## Body\n") == {"body"}


# --- code -------------------------------------------------------------------------------------------


CODE_DOC = """Run `curl https://span.example/api` first.

```sh
curl https://fenced.example/install.sh
```

    https://indented.example/

~~~
[not a link](x.md)
~~~
"""


def test_links_in_code_spans_and_blocks_are_skipped_by_default() -> None:
    assert texts(CODE_DOC) == []


def test_include_code_returns_urls_in_code_spans_and_blocks() -> None:
    result = extract_markdown(CODE_DOC, BASE, include_code=True)
    assert [(link.text, link.attribute, link.line, link.column) for link in result.links] == [
        ("https://span.example/api", "code", 1, 11),
        ("https://fenced.example/install.sh", "code", 4, 6),
        ("https://indented.example/", "code", 7, 5),
    ]


# --- raw HTML ---------------------------------------------------------------------------------------


def test_html_block_links_with_shifted_line_numbers() -> None:
    doc = """# Title

<div align="center">
  <a href="https://example.com/x"><img src="logo.png" srcset="logo@2x.png 2x"></a>
</div>
"""
    assert [
        (link.text, link.element, link.attribute, link.line, link.column)
        for link in extract_markdown(doc, BASE).links
    ] == [
        ("https://example.com/x", "a", "href", 4, 12),
        ("logo.png", "img", "src", 4, 45),
        ("logo@2x.png", "img", "srcset", 4, 63),
    ]


def test_inline_html_links_and_nofollow() -> None:
    doc = 'Text <a href="inline.html" rel="nofollow">x</a> and <img src="i.png"> end'
    result = extract_markdown(doc, BASE)
    assert [(link.text, link.element, link.line, link.column, link.nofollow) for link in result.links] == [
        ("inline.html", "a", 1, 15, True),
        ("i.png", "img", 1, 63, False),
    ]


def test_html_comments_hide_links() -> None:
    doc = "<!--\n[hidden](h.md) https://hidden.example\n-->\n\nText <!-- [x](x.md) https://y.example --> end"
    assert texts(doc) == []


@pytest.mark.parametrize(
    "tag",
    ["title", "style", "script", "textarea", "xmp", "iframe", "noembed", "noframes", "plaintext", "TITLE",
     "template", "frameset"],
)
def test_a_tag_mentioned_in_prose_hides_no_raw_html_after_it(tag: str) -> None:
    # (GitHub shows the first nine as text, GFM's tagfilter; left open, each would make the rest its text)
    doc = (f"# Doc\n\nSet it with the <{tag}> element.\n\n<img src=\"missing.png\">\n\n"
           '<a id="later"></a>\n\nText <a href="inline.md">x</a>.\n\n[self](#later)\n')
    assert positions(doc) == [("missing.png", 5, 11), ("inline.md", 9, 15), ("#later", 11, 8)]
    assert "later" in anchors(doc)


def test_an_element_left_open_takes_in_the_rest_of_its_own_block_only() -> None:
    doc = ('<div>\n<textarea>\n<img src="in.png">\n</div>\n\n'
           'Inline <script> and <a href="a.md">a</a>\n\n<p id="p"><img src="after.png"></p>\n')
    assert positions(doc) == [("a.md", 6, 30), ("after.png", 8, 21)]
    assert "p" in anchors(doc)


def test_raw_text_elements_closed_in_their_block_keep_their_content() -> None:
    doc = ("<script>\nvar s = '<img src=\"no.png\">';\n\n</script>\n\n"
           "<style>\n.x { background: url(bg.png) }\n</style>\n\n<img src=\"yes.png\">\n")
    assert positions(doc) == [("bg.png", 7, 22), ("yes.png", 10, 11)]


def test_html_inside_blockquote_gets_columns_of_the_source_line() -> None:
    doc = '> <p>\n> <a href="q.html">q</a>\n> </p>'
    assert positions(doc) == [("q.html", 2, 12)]


def test_inline_html_over_lines_in_a_list_item_or_blockquote_gets_columns_of_the_source_line() -> None:
    # (the parser's text of such a tag lacks the indent and the "> " of its second line: `linkhound fix` edits
    # the text at the column given)
    doc = ('- item <a\n  href="li.md">x</a>\n\n> quote <a\n> href="bq.md">y</a>\n\n'
           '> > deep <img\n> > alt="z"\n> > src="é.png">')
    assert positions(doc) == [("li.md", 2, 9), ("bq.md", 5, 9), ("é.png", 9, 10)]


# --- positions ----------------------------------------------------------------------------------------


def test_positions_inside_lists_and_blockquotes() -> None:
    doc = """- item [one](one.md)
  - nested [two](two.md)

> quoted [three](three.md)
> > deeper ![four](four.png)

1. numbered
   continued [five](five.md) https://six.example
"""
    assert positions(doc) == [
        ("one.md", 1, 14),
        ("two.md", 2, 18),
        ("three.md", 4, 18),
        ("four.png", 5, 20),
        ("five.md", 8, 21),
        ("https://six.example", 8, 30),
    ]
    assert_positions_point_at_the_urls(doc)


def test_destination_on_the_next_line_and_angle_brackets() -> None:
    assert positions("[a](\n  next-line.md) [b]( <angle.md> )") == [
        ("next-line.md", 2, 3),
        ("angle.md", 2, 23),
    ]


def test_same_url_twice_on_a_line_gets_two_positions() -> None:
    assert positions("[a](x.md) and [b](x.md) and https://y.example [c](https://y.example)") == [
        ("x.md", 1, 5),
        ("x.md", 1, 19),
        ("https://y.example", 1, 29),
        ("https://y.example", 1, 51),
    ]


def test_crlf_line_endings() -> None:
    assert positions("first\r\n\r\nsecond [x](x.md)\r\n") == [("x.md", 3, 12)]


def test_columns_count_characters_and_tabs_as_one() -> None:
    assert positions("Ünïcödé\t[x](x.md)") == [("x.md", 1, 13)]


def test_positions_survive_tabs_that_markdown_expands_to_spaces() -> None:
    doc = "-\tlist item [t](tab.md)\n\n\tcode https://tab.example/\n\n>\t\tquoted code https://q.example/"
    result = extract_markdown(doc, BASE, include_code=True)
    assert [(link.text, link.line, link.column) for link in result.links] == [
        ("tab.md", 1, 17),
        ("https://tab.example/", 3, 7),
        ("https://q.example/", 5, 16),
    ]


def test_positions_in_a_long_document_point_at_each_url() -> None:
    doc = "\n\n".join(
        f"## Section {index}\n\nText [link {index}](page{index}.md) and https://ex.example/{index}."
        for index in range(50)
    )
    assert len(texts(doc)) == 100
    assert_positions_point_at_the_urls(doc)


def test_lone_surrogates_in_a_str_do_not_raise() -> None:
    assert positions("[a](b\udc80.md) \udc81 https://x.example/") == [("b?.md", 1, 5), ("https://x.example/", 1, 14)]


def test_bytes_with_bom_are_decoded() -> None:
    assert texts("\ufeff[x](é.md)".encode()) == ["é.md"]


# --- anchors ----------------------------------------------------------------------------------------


def test_heading_slugs_for_atx_and_setext_headings() -> None:
    doc = """# Hello, World!

## API v2.0 (beta) ##

Setext Heading
==============

Another one
-----------
"""
    assert anchors(doc) == {"hello-world", "api-v20-beta", "setext-heading", "another-one"}


def test_repeated_headings_get_numbered_suffixes() -> None:
    assert anchors("# Usage\n## Usage\n### Usage\n## Usage-1") == {"usage", "usage-1", "usage-2", "usage-1-1"}


def test_heading_slug_uses_rendered_text() -> None:
    doc = "## `code` and *em* and [link text](https://x.example) ![badge](b.svg)\n## Üñíçødé Heading"
    assert anchors(doc) == {"code-and-em-and-link-text-", "üñíçødé-heading"}


def test_custom_heading_id_is_the_heading_anchor_and_its_slug_is_not() -> None:
    assert anchors("## Install the tool {#install}\n") == {"install"}


def test_ids_and_a_names_in_raw_html_are_anchors() -> None:
    doc = '<a name="legacy"></a>\n\n<h2 id="Custom-Case">Title</h2>\n\nText <span id="inline-id">x</span>'
    assert anchors(doc) == {"legacy", "Custom-Case", "inline-id"}


def test_heading_inside_code_block_is_not_an_anchor() -> None:
    assert anchors("```\n# not a heading\n```\n") == frozenset()


def test_mkdocs_attr_list_heading_ids() -> None:
    doc = "## In a hurry? { #in-a-hurry }\n## Install { #install .wide }\n### Plain {#plain}\nSetext {#setext}\n==="
    assert anchors(doc) == {"in-a-hurry", "install", "plain", "setext"}


def test_attr_list_id_given_as_a_key_value_pair() -> None:
    assert anchors('### 0.1.0 <small>February 9, 2016</small> { id="0.1.0" }\n') == {"0.1.0"}


def test_attr_list_ids_of_inline_elements_and_paragraphs() -> None:
    # Python-Markdown's attr_list (MkDocs): **x**{ #id } and a paragraph's last line {: #id } give those ids
    doc = ('# T\n\n* **`css_class`**{ #css_class }: text\n\nA paragraph.\n{: #para-id .note }\n\n'
           'Other *one*{: id="kv" }\n\n`{ #in-code }` and {braces} and {: .class-only }\n')
    assert anchors(doc) == {"t", "css_class", "para-id", "kv"}


def test_explicit_id_takes_its_name_from_later_slugs() -> None:
    assert anchors("## Usage {#usage}\n## Usage\n") == {"usage", "usage-1"}


def test_attribute_block_without_an_id_gives_the_mkdocs_and_the_github_slug() -> None:
    assert anchors("## Using {placeholders}\n## Options {.wide}\n") == {
        "using",
        "using-placeholders",
        "options",
        "options-wide",
    }


def test_heading_with_link_and_image_gives_link_text_and_links() -> None:
    result = extract_markdown("## See [the guide](g.md) ![icon](i.png)\n", BASE)
    assert result.anchors == {"see-the-guide-"}
    assert [link.text for link in result.links] == ["g.md", "i.png"]


# --- MkDocs blocks ----------------------------------------------------------------------------------

MKDOCS = """!!! note "Read [this](first.md)"

    Content with [a link][ref] and https://x.example

        code https://code.example

???+ tip
    Tip [b](b.md)

=== "Tab 1"

    Tab [c](c.md)

[ref]: https://ref.example
"""


def test_content_of_admonitions_and_tabs_is_markdown_as_in_mkdocs() -> None:
    assert [(link.text, link.attribute, link.line, link.column) for link in extract_markdown(MKDOCS, BASE).links] == [
        ("first.md", "inline", 1, 23),
        ("https://x.example", "bare", 3, 36),
        ("b.md", "inline", 8, 13),
        ("c.md", "inline", 12, 13),
        ("https://ref.example", "reference", 14, 8),
    ]
    assert_positions_point_at_the_urls(MKDOCS)


def test_setext_underline_and_a_lone_marker_stay_what_they_are() -> None:
    assert anchors("Title\n=== \n\n!!!\n\n    not [a](link.md)\n") == {"title"}
    assert texts("Title\n=== \n\n!!!\n\n    not [a](link.md)\n") == []


# --- MDX --------------------------------------------------------------------------------------------

MDX = """import Card from '@site/src/Card';

<Card href="https://card.example/x" title="Card">
  Text
</Card>

A <Link to="/docs/intro">link</Link> and <Image src={"/img/a.png"} alt="a" /> and <a href="std.html">x</a>.

<Tabs>
  <TabItem value="a" href={`https://tab.example/`}>x</TabItem>
</Tabs>

```jsx
<Card href="https://code.example/" />
```
"""


def test_mdx_jsx_props_are_links() -> None:
    result = extract_markdown(MDX, "file:///docs/page.mdx")
    assert [(link.text, link.element, link.attribute, link.line, link.column) for link in result.links] == [
        ("https://card.example/x", "Card", "href", 3, 13),
        ("/docs/intro", "Link", "to", 7, 13),
        ("/img/a.png", "Image", "src", 7, 55),
        ("std.html", "a", "href", 7, 92),
        ("https://tab.example/", "TabItem", "href", 10, 29),
    ]


def test_jsx_props_are_not_links_in_plain_markdown() -> None:
    result = extract_markdown(MDX, BASE)
    assert [(link.text, link.element) for link in result.links] == [("std.html", "a")]


def test_braces_in_prose_are_not_attribute_lists() -> None:
    # attr_list reads a block right after an inline element or on a block's last line, nowhere else
    doc = "# T\n\nLoop with {{#items}} ... {{/items}}, or a rule like a {#main color: red}.\n\n- item\n  {: #li }\n"
    assert anchors(doc) == {"t", "li"}


TOC_DOC = (
    "# Page\n\n## Install & Run!\n\n## Using `--jobs N` (two processes)\n\n## Café Crème\n\n## Dup\n## Dup\n\n"
    "## Foo\n\n## Bar {#foo}\n\n## Options {.wide}\n\n## ☃\n\nText *em*{ #e1 } and `c`{#c1}.\nMore.\n{: #blk }\n"
)


def test_mkdocs_heading_ids_are_python_markdowns() -> None:
    # what Python-Markdown's toc writes for the same source (checked against it in the next test)
    assert extract_markdown(TOC_DOC, BASE, heading_ids=MKDOCS_IDS).anchors == {
        "page", "install-run", "using-jobs-n-two-processes", "cafe-creme", "dup", "dup_1", "foo_1", "foo",
        "options", "_1", "e1", "c1", "blk",
    }


@pytest.mark.parametrize(
    ("ids", "config"),
    [
        (HeadingIds("toc"), {}),
        (HeadingIds("toc", separator="_"), {"separator": "_"}),
        (HeadingIds("toc", "unicode"), {"slugify": "toc.slugify_unicode"}),
        (HeadingIds("toc", "pymdownx", "lower"), {"slugify": "pymdownx.lower"}),
        (HeadingIds("toc", "pymdownx", "none"), {"slugify": "pymdownx.none"}),
    ],
)
def test_mkdocs_heading_ids_match_python_markdown_itself(ids: HeadingIds, config: dict[str, str]) -> None:
    markdown = pytest.importorskip("markdown")
    slugs = pytest.importorskip("pymdownx.slugs")
    from markdown.extensions.toc import slugify_unicode

    functions = {"toc.slugify_unicode": slugify_unicode, "pymdownx.lower": slugs.slugify(case="lower"),
                 "pymdownx.none": slugs.slugify()}
    toc = {key: functions.get(value, value) for key, value in config.items()}
    html = markdown.markdown(TOC_DOC, extensions=["toc", "attr_list"], extension_configs={"toc": toc})
    assert extract_markdown(TOC_DOC, BASE, heading_ids=ids).anchors == set(re.findall(r' id="([^"]*)"', html))
