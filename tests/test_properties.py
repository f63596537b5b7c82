"""Properties over generated input: extractors never raise, positions point at what they report, URL keys
behave (idempotent, blind to fragments) and relative links from the web never become file: URLs."""

from __future__ import annotations

import gzip
import re
from unittest import mock

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from linkhound.extract import Kind, extract, robots_sitemaps
from linkhound.extract import nesting as nesting_module
from linkhound.extract.css import css_urls, extract_css
from linkhound.extract.html import extract_html, scan_html
from linkhound.extract.html_links import WHITESPACE, clean_url
from linkhound.extract.html_tokens import scan_tags
from linkhound.extract.nesting import nesting_hazard
from linkhound.extract.sitemap import extract_sitemap
from linkhound.urls import canonical_key, resolve

BOUNDED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BASES = ["https://example.test/dir/page.html?q=1#top", "http://example.test", "http://[::1]:8080/a/"]

# Markup-shaped text: tags and attributes that the parsers treat specially, glued with random text.
_TAG_NAMES = (
    "a div span p li ul table tr td th tbody caption select option svg math g foreignObject template "
    "script style textarea title b i font nobr object button form meta base link img iframe plaintext"
)
_TAGS = _TAG_NAMES.split()
_ATTRIBUTES = ["href", "src", "srcset", "id", "name", "style", "rel", "content", "http-equiv", "type", "disabled"]
_values = st.text(max_size=12) | st.sampled_from(["x.html", "a.png 1x, b.png 2x", "nofollow", "refresh",
                                                  "5; url=next", "url(bg.png)", "stylesheet", "image"])
_quoted = st.tuples(st.sampled_from(['"', "'", ""]), _values).map(lambda q: f"{q[0]}{q[1]}{q[0]}")
_attribute = st.tuples(st.sampled_from(_ATTRIBUTES), _quoted).map(lambda a: f" {a[0]}={a[1]}")
_tag = st.tuples(st.sampled_from(["<", "</"]), st.sampled_from(_TAGS), st.lists(_attribute, max_size=3),
                 st.sampled_from([">", "/>", ""])).map(lambda t: f"{t[0]}{t[1]}{''.join(t[2])}{t[3]}")
_piece = _tag | st.text(max_size=8) | st.sampled_from(["<!--", "-->", "&amp;", "&#0;", "\0", "\r\n", "<![CDATA["])
markup = st.lists(_piece, max_size=40).map("".join)
documents = st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode) | markup.map(str.encode)


@BOUNDED
@given(documents, st.sampled_from(list(Kind)), st.sampled_from(BASES))
def test_extractors_never_raise(body: bytes, kind: Kind, base: str) -> None:
    extraction = extract(body, base, kind)
    assert all(link.line >= 0 and link.column >= 0 for link in extraction.links)
    robots_sitemaps(body)


@BOUNDED
@given(st.binary(max_size=1000))
def test_gzipped_sitemaps_never_raise(data: bytes) -> None:
    extract_sitemap(gzip.compress(data))
    extract_sitemap(b"\x1f\x8b" + data)  # a gzip header followed by garbage


@BOUNDED
@given(st.text(max_size=500) | markup)
def test_css_extraction_never_raises_and_places_urls_in_the_text(css: str) -> None:
    for offset, url in css_urls(css):
        assert 0 <= offset <= len(css) and url
    extract_css(css, 3, 7)


@BOUNDED
@given(markup)
def test_both_html_scans_and_the_nesting_model_never_raise(text: str) -> None:
    with mock.patch.object(nesting_module, "_FEW_TAGS", 0), mock.patch.object(nesting_module, "MAX_NESTING", 3):
        nesting_hazard(text)  # the model itself, on every text however small
    for scan in (scan_html(text), scan_tags(text, "")):
        assert all(0 <= found[0] <= len(text) for found in scan.found)
    extract_html(text, BASES[0])


_href_value = st.text(st.characters(exclude_characters='"&\r', exclude_categories=("Cs",)), min_size=1, max_size=20)


@BOUNDED
@given(st.lists(st.tuples(st.text(st.sampled_from(" x\n<>/\t"), max_size=6), _href_value), min_size=1, max_size=8))
@example([("", "a\0b"), ("\n\n  ", "c")])
def test_each_html_link_is_reported_where_its_value_is_written(parts: list[tuple[str, str]]) -> None:
    source, expected = "", []
    for gap, value in parts:
        source += f'<p>{gap}</p><a href="'
        start = len(source) + len(value) - len(value.lstrip(WHITESPACE))
        source += f'{value}">x</a>'
        if url := clean_url(value.replace("\0", "\ufffd")):
            expected.append((url, source.count("\n", 0, start) + 1, start - source.rfind("\n", 0, start)))
    links = extract_html(source, "http://example.test/").links
    assert [(link.text, link.line, link.column) for link in links] == expected


# -- URLs -------------------------------------------------------------------------------------------------

urls_text = st.text(max_size=60) | st.sampled_from(
    ["//host/x", "\\\\server\\share", "/\\etc/passwd", "..//..", "file:x", "\x01file:///etc", "%2e%2e/",
     "http://[::1]/", "http://xn--n3h.example/", "?q#f", "#frag", "  x  ", "\tj\navascript:x"]
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_C0_AND_SPACE = "".join(map(chr, range(0x21)))


@BOUNDED
@given(urls_text, st.sampled_from(BASES) | st.text(max_size=30))
def test_resolve_never_raises(text: str, base: str) -> None:
    url = resolve(text, base)
    assert url is None or isinstance(url, str)


@BOUNDED
@given(urls_text, st.sampled_from(BASES))
def test_canonical_key_is_idempotent(text: str, base: str) -> None:
    url = resolve(text, base)
    if url is not None:
        key = canonical_key(url)
        assert canonical_key(key) == key


@BOUNDED
@given(urls_text.filter(lambda text: "#" not in text), st.text(max_size=20), st.sampled_from(BASES))
def test_the_canonical_key_ignores_the_fragment(text: str, fragment: str, base: str) -> None:
    text = text.strip(_C0_AND_SPACE)  # the parser trims these at the ends only: not before a "#"
    url, with_fragment = resolve(text, base), resolve(f"{text}#{fragment}", base)
    if url is not None:
        assert with_fragment is not None
        assert canonical_key(with_fragment) == canonical_key(url)


def _relative(text: str) -> bool:
    """No scheme of its own, as the URL parser reads it (C0 controls and spaces trimmed, tabs and newlines
    dropped)."""
    cleaned = re.sub(r"[\t\n\r]", "", text.strip(_C0_AND_SPACE))
    return _SCHEME.match(cleaned) is None


@BOUNDED
@given(urls_text.filter(_relative), st.sampled_from(BASES[:2]))
def test_relative_text_against_a_web_base_never_becomes_a_file_url(text: str, base: str) -> None:
    url = resolve(text, base)
    assert url is None or url.startswith(("http://", "https://"))


# URLs near the shape resolve() takes without the parser (urls._SERIALIZED): pieces that pass and pieces
# that the parser rewrites (case, default ports, numeric hosts, IDNA, dot segments, escapes, characters it
# encodes), glued in every order.
_URL_SCHEMES = st.sampled_from(["http", "https", "http", "https", "HTTP", "Https", "ftp"])
_URL_HOSTS = st.one_of(
    st.sampled_from([
        "example.test", "example.test", "127.0.0.1", "a.b-c.test", "EXAMPLE.test", "a", "a1", "1a", "127.1",
        "0x7f.0.0.1", "127.000.0.1",
        "1.2.3.256", "255.255.255.255", "0.0.0.0", "a..b", "a.b.", "xn--nxasmq6b.test", "xn--abc.test",
        "a-.b", "-a.b", "a--b.test", "exa_mple.test", "b\u00fccher.test", "a.b.1", "a.b.0x1", "09.1.1.1",
    ]),
    st.text(alphabet="abcXYZ019.-_%", min_size=1, max_size=12),
)
_URL_PORTS = st.sampled_from(["", "", "", ":8080", ":80", ":443", ":0", ":65535", ":65536", ":080", ":99999", ":"])
_URL_PIECE = st.one_of(
    st.text(alphabet="aZ09-._~!$&()*+,;=:@/?#", max_size=14),  # what the parser keeps, mostly
    st.text(alphabet="aZ09-._~!$&'()*+,;=:@/?#%2e \\\"<>`{}|^[]\t\u00e9", max_size=14),
)


@settings(max_examples=1000, deadline=None)
@given(_URL_SCHEMES, _URL_HOSTS, _URL_PORTS, _URL_PIECE, _URL_PIECE)
@example("http", "127.0.0.1", ":80", "/", "")
@example("https", "a", ":443", "/x/./y", "")
@example("http", "a.b", "", "/a/..", "?q='1'")
def test_urls_taken_as_written_are_the_ones_the_parser_writes_back(
    scheme: str, host: str, port: str, path: str, rest: str
) -> None:
    import ada_url

    from linkhound.urls import _serialized

    for text in (f"{scheme}://{host}{port}/{path}{rest}", f"{scheme}://{host}{port}{path}{rest}"):
        if _serialized(text):
            assert ada_url.check_url(text) and ada_url.URL(text).href == text
            assert resolve(text, "https://other.test/base/") == text
