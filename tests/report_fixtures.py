"""One fixed run that every report test renders: each status, positions, redirects, unicode, hostile text."""

from __future__ import annotations

from linkhound.status import Status
from linkhound.summary import Report, summarize
from linkhound.types import Page, Reference, Result

SITE = "https://example.test/"
HOSTILE_URL = 'https://evil.test/"><script>alert(1)</script>'
HOSTILE_PAGE = "https://example.test/<img src=x onerror=alert(2)>"
HOSTILE_TEXT = '=HYPERLINK("https://evil.test")\x1b[2J\u202e'  # spreadsheet formula, terminal clear, bidi


def ref(
    source: str, line: int, column: int, element: str = "a", attribute: str = "href", text: str = ""
) -> Reference:
    return Reference(source, line, column, element, attribute, text)


def md(source: str, line: int, column: int, text: str) -> Reference:
    return Reference(source, line, column, "markdown", "inline", text)


RESULTS: tuple[Result, ...] = (
    Result(
        SITE,
        Status.OK,
        200,
        "OK",
        elapsed=0.123,
        content_type="text/html",
        references=(md("README.md", 1, 1, SITE),),
    ),
    Result(
        "https://example.test/missing",
        Status.BROKEN,
        404,
        "Not Found",
        cached=True,  # reused from an earlier run (--cache): no request, no time
        references=(
            md("docs/b.md", 2, 7, "https://example.test/missing"),
            ref("docs/a.md", 10, 1, text="https://example.test/missing"),
            md("docs/a.md", 3, 5, "https://example.test/missing"),
        ),
    ),
    Result(
        "http://example.test/old",
        Status.OK,
        200,
        "OK",
        redirects=("https://example.test/old", "https://example.test/new"),
        elapsed=0.456,
        content_type="text/html",
        references=(md("docs/a.md", 12, 3, "http://example.test/old"),),
    ),
    Result(
        "https://slow.example.test/",
        Status.TIMEOUT,
        reason="timed out after 10 s",
        elapsed=10.0,
        references=(ref(SITE, 0, 0, text="https://slow.example.test/"),),
    ),
    Result(
        "https://api.example.test/limited",
        Status.RATE_LIMITED,
        429,
        "Too Many Requests (Retry-After 120 s)",
        elapsed=1.5,
        references=(ref(SITE, 9, 5, text="https://api.example.test/limited"),),
    ),
    Result(
        "https://social.example.test/profile",
        Status.BLOCKED,
        999,
        "bot protection",
        elapsed=0.2,
        references=(md("docs/b.md", 8, 1, "https://social.example.test/profile"),),
    ),
    Result(
        "https://internal.example.test/admin",
        Status.EXCLUDED,
        reason="matches --exclude internal",
        references=(md("docs/b.md", 9, 1, "https://internal.example.test/admin"),),
    ),
    Result(
        "javascript:void(0)",
        Status.UNSUPPORTED,
        reason="javascript: links are not checked",
        references=(ref("docs/b.md", 5, 10, text="javascript:void(0)"),),
    ),
    Result(
        "https://example.test/private/",
        Status.SKIPPED,
        reason="disallowed by robots.txt",
        references=(ref(SITE, 11, 5, text="/private/"),),
    ),
    Result(
        "https://example.test/page#missing",
        Status.BROKEN,
        200,
        "no anchor #missing",
        elapsed=0.05,
        references=(md("docs/a.md", 20, 8, "https://example.test/page#missing"),),
    ),
    Result(
        "https://bücher.example.test/straße?q=日本語",
        Status.OK,
        200,
        "OK",
        elapsed=0.25,
        references=(md("docs/ünïcödé.md", 4, 2, "Bücher 📚 https://bücher.example.test/straße?q=日本語"),),
    ),
    Result(
        HOSTILE_URL,
        Status.ERROR,
        reason="connection reset by <b>peer</b>",
        elapsed=0.75,
        references=(
            ref(HOSTILE_PAGE, 7, 3, text='"><script>alert(1)</script>'),
            md("docs/b.md", 14, 1, HOSTILE_TEXT),
        ),
    ),
    Result("https://example.test/seed", Status.OK, 200, "OK", elapsed=0.1, content_type="text/html"),
    Result(
        "https://example.test/about",
        Status.OK,
        200,
        "OK",
        elapsed=0.2,
        depth=1,
        content_type="text/html",
        references=(ref(SITE, 14, 9, text="/about"),),
    ),
    Result(
        "https://example.test/about/team",
        Status.OK,
        200,
        "OK",
        elapsed=0.2,
        depth=2,
        content_type="text/html",
        references=(ref("https://example.test/about", 3, 5, text="team"),),
    ),
    Result(
        HOSTILE_PAGE,
        Status.OK,
        200,
        "OK",
        elapsed=0.1,
        depth=1,
        content_type="text/html",
        references=(ref(SITE, 15, 9, text="<img src=x onerror=alert(2)>"),),
    ),
)

PAGES: tuple[Page, ...] = (
    Page(SITE, 0, 6, True),
    Page("https://example.test/about", 1, 1, True),
    Page(HOSTILE_PAGE, 1, 1, True),
    Page("https://example.test/about/team", 2, 0, True),
)

WARNINGS: tuple[str, ...] = (
    "robots.txt of https://slow.example.test answered 503: host not crawled",
    "https://example.test/big.html: body cut at --max-body-size: links after 20 MiB not read",
)

REPORT = Report(
    results=RESULTS, summary=summarize(RESULTS, pages=8, elapsed=2.345, warnings=WARNINGS), pages=PAGES
)

# A second run for what the first can't show: a link on more pages than the folding formats list, a redirect
# loop, and fragments that were found (their references share the page's result).
GONE_PAGES = tuple(f"https://example.test/p{i}" for i in range(1, 9))
FOLDED_RESULTS: tuple[Result, ...] = (
    Result(
        "https://example.test/gone",
        Status.BROKEN,
        410,
        "Gone",
        elapsed=0.1,
        references=tuple(ref(page, 12, 5, text="/gone") for page in GONE_PAGES),
    ),
    Result(
        "https://example.test/loop",
        Status.ERROR,
        reason="redirect loop",
        redirects=("https://example.test/loop/", "https://example.test/loop/index", "https://example.test/loop/"),
        elapsed=0.3,
        references=(md("docs/c.md", 4, 1, "https://example.test/loop"),),
    ),
    Result(
        "https://example.test/guide",
        Status.OK,
        200,
        "OK",
        elapsed=0.2,
        content_type="text/html",
        references=(
            md("docs/c.md", 6, 1, "https://example.test/guide#install"),
            md("docs/c.md", 7, 1, "https://example.test/guide#usage"),
        ),
    ),
)
FOLDED = Report(results=FOLDED_RESULTS, summary=summarize(FOLDED_RESULTS, pages=9, elapsed=1.0))
