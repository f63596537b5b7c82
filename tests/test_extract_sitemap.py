"""Tests of sitemap extraction (urlset, sitemapindex, gzip, hostile XML) and robots.txt Sitemap lines."""

from __future__ import annotations

import gzip

from linkhound.extract import extract_sitemap, robots_sitemaps
from linkhound.extract.sitemap import gunzip
from linkhound.types import RawLink

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-01-01</lastmod>
  </url>
  <url>
    <loc>
      https://example.com/a?x=1&amp;y=2
    </loc>
    <image:image><image:loc>https://example.com/pic.png</image:loc></image:image>
  </url>
</urlset>
"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.com/sitemap-1.xml.gz</loc></sitemap>
  <sitemap><loc>https://example.com/sitemap-2.xml</loc></sitemap>
</sitemapindex>
"""


def test_urlset_locs_with_positions_and_decoded_entities() -> None:
    result = extract_sitemap(URLSET)
    assert result.links == (
        RawLink("https://example.com/", "loc", "sitemap", 5, 10),
        RawLink("https://example.com/a?x=1&y=2", "loc", "sitemap", 10, 7),
    )
    assert result.anchors == frozenset()


def test_sitemapindex_locs_have_attribute_sitemapindex() -> None:
    assert [(link.text, link.attribute, link.line, link.column) for link in extract_sitemap(INDEX).links] == [
        ("https://example.com/sitemap-1.xml.gz", "sitemapindex", 3, 17),
        ("https://example.com/sitemap-2.xml", "sitemapindex", 4, 17),
    ]


def test_gzip_sitemap_is_decompressed_transparently() -> None:
    assert extract_sitemap(gzip.compress(URLSET)).links == extract_sitemap(URLSET).links


def test_corrupt_gzip_gives_no_links() -> None:
    assert extract_sitemap(b"\x1f\x8b\x08\x00garbage").links == ()


def test_gunzip_stops_at_its_limit() -> None:
    bomb = gzip.compress(b"\0" * 1_000_000)
    assert gunzip(bomb, limit=1000) is None
    assert gunzip(bomb, limit=2_000_000) == b"\0" * 1_000_000


def test_gzip_bomb_over_100_mb_gives_no_links() -> None:
    body = b"<urlset><url><loc>https://x.example/</loc></url>" + b" " * (101 * 1024 * 1024) + b"</urlset>"
    assert extract_sitemap(gzip.compress(body, compresslevel=1)).links == ()


def test_doctype_and_entity_declarations_are_rejected() -> None:
    laughs = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<urlset><url><loc>https://x.example/&lol2;</loc></url></urlset>"""
    assert extract_sitemap(laughs).links == ()
    external = b'<!DOCTYPE urlset SYSTEM "http://evil.example/x.dtd"><urlset><url><loc>https://x/</loc></url></urlset>'
    assert extract_sitemap(external).links == ()


def test_malformed_xml_falls_back_to_loc_elements() -> None:
    broken = b"<urlset>\n<url><loc>https://x.example/one</loc></url>\n<url><loc>https://x.example/two&amp;b</loc>\n"
    assert [(link.text, link.line, link.column) for link in extract_sitemap(broken).links] == [
        ("https://x.example/one", 2, 11),
        ("https://x.example/two&b", 3, 11),
    ]


def test_malformed_sitemapindex_fallback_keeps_its_attribute() -> None:
    broken = b"<sitemapindex><sitemap><loc>https://x.example/s.xml</loc></sitemap><oops"
    assert [link.attribute for link in extract_sitemap(broken).links] == ["sitemapindex"]


def test_old_google_namespace_and_no_namespace_are_accepted() -> None:
    old = b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://o.example/</loc></url></urlset>'
    bare = b"<urlset><url><loc>https://b.example/</loc></url></urlset>"
    assert [link.text for link in extract_sitemap(old).links] == ["https://o.example/"]
    assert [link.text for link in extract_sitemap(bare).links] == ["https://b.example/"]


def test_loc_outside_url_or_sitemap_is_ignored() -> None:
    odd = b"<urlset><loc>https://stray.example/</loc><url><x><loc>https://deep.example/</loc></x></url></urlset>"
    assert extract_sitemap(odd).links == ()


def test_other_xml_documents_give_no_links() -> None:
    assert (
        extract_sitemap(b"<rss><channel><url><loc>https://x.example/</loc></url></channel></rss>").links == ()
    )
    assert extract_sitemap(b"").links == ()


def test_namespace_uris_and_urls_of_other_xml_are_not_links() -> None:
    pom = b"""<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <url>https://project.example/</url>
</project>"""
    assert extract_sitemap(pom).links == ()


def test_malformed_xml_that_is_not_a_sitemap_gives_no_links() -> None:
    broken = b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><loc>https://x.example/</loc></entry><oops'
    assert extract_sitemap(broken).links == ()


def test_empty_loc_is_skipped_and_non_ascii_is_decoded() -> None:
    body = "<urlset><url><loc> </loc></url><url><loc>https://x.example/ü</loc></url></urlset>".encode()
    assert [link.text for link in extract_sitemap(body).links] == ["https://x.example/ü"]


def test_robots_sitemap_lines() -> None:
    robots = b"""User-agent: *
Disallow: /private
Sitemap: https://example.com/sitemap.xml
sitemap:https://example.com/news.xml   # news
  SITEMAP :  https://example.com/sitemap.xml.gz\r
# Sitemap: https://example.com/commented.xml
Crawl-delay: 2
"""
    assert robots_sitemaps(robots) == [
        "https://example.com/sitemap.xml",
        "https://example.com/news.xml",
        "https://example.com/sitemap.xml.gz",
    ]


def test_robots_without_sitemaps() -> None:
    assert robots_sitemaps(b"User-agent: *\nDisallow:\n") == []
    assert robots_sitemaps(b"") == []
