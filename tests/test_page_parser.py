"""Pages parsed in a worker process give exactly what parsing in this process gives."""

from __future__ import annotations

import asyncio

import pytest

from linkhound import page_parser
from linkhound.links import LinkRules
from linkhound.page_parser import PageParser, parse_page
from linkhound.settings import Settings

PAGE = b"""<!doctype html><html><head><base href="/docs/"></head><body>
<a href="a.html#x" rel="nofollow">a</a> <img srcset="i.png 1x, j.png 2x"> <a href="http://exa mple/">bad</a>
<h2 id="sec">s</h2> <a name="old"></a> <a href="javascript:void(0)">js</a>
</body></html>"""


async def test_worker_parse_equals_in_process_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_parser, "WARMUP_PAGES", 0)
    rules = LinkRules.from_settings(Settings())
    expected = parse_page(rules, PAGE, "http://h.test/x/y.html", "text/html", False)
    parser = PageParser(rules, include_code=False, workers=1)
    try:
        for _ in range(200):  # the first pages are parsed here while the worker starts
            got = await asyncio.wait_for(parser.parse(PAGE, "http://h.test/x/y.html", "text/html"), 30)
            assert got == expected
            if parser.in_workers >= 3:
                break
            await asyncio.sleep(0.05)
        assert parser.in_workers >= 3
        assert await parser.parse(b"\\x89PNG", "http://h.test/i.png", "image/png") is None
    finally:
        await parser.close()


async def test_a_parser_started_with_a_crawl_gives_pages_to_its_worker_before_the_warm_up_is_over() -> None:
    rules = LinkRules.from_settings(Settings())
    expected = parse_page(rules, PAGE, "http://h.test/x/y.html", "text/html", False)
    parser = PageParser(rules, include_code=False, workers=1)
    parser.start()
    try:
        for _ in range(page_parser.WARMUP_PAGES - 10):  # (without start(), all of these are parsed here)
            assert await asyncio.wait_for(parser.parse(PAGE, "http://h.test/x/y.html", "text/html"), 30) == expected
            if parser.in_workers:
                break
            await asyncio.sleep(0.25)
        assert parser.in_workers == 1
    finally:
        await parser.close()


class _Text(str):
    pass


def test_a_parsed_page_crosses_as_marshal_and_as_a_pickle_where_marshal_cannot_carry_it() -> None:
    from linkhound.parsed_page import HEADER, flatten, load_result, result_frame

    rules = LinkRules.from_settings(Settings())
    flat = flatten(parse_page(rules, PAGE, "http://h.test/x/y.html", "text/html", False))
    assert flat is not None
    odd = (*flat[:7], _Text("not fully parsed"))  # (a str subclass: marshal refuses it)
    for page, tag in ((flat, b"m"), (None, b"m"), (odd, b"p")):
        data = result_frame(7, page)  # type: ignore[arg-type]
        size = HEADER.unpack(data[:HEADER.size])[0]
        assert size == len(data) - HEADER.size and data[HEADER.size:HEADER.size + 1] == tag
        assert load_result(data[HEADER.size:]) == (7, page)
