"""The junit format: XML for CI test views, a testsuite per source and a testcase per link."""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence

from ..status import Status
from ..summary import Report, Summary
from ..types import Reference, Result
from . import fixes
from .base import WholeReport
from .certificates import when
from .common import INTERRUPTED, LABELS, by_source, describe, printable, where
from .drift import drift_lines
from .forked import in_two

CERTIFICATES_SUITE = "(TLS certificates)"  # --tls-expiry: one testcase per host
WARNINGS_SUITE = "(warnings)"  # the schema lets <testsuites> hold only suites: the run's warnings get one
DRIFT_SUITE = "(sitemap drift)"  # --sitemap-drift's lists, the same way
FIXES_SUITE = "(links to fix)"
_FORK_AT = 20_000  # testcases past which a forked child writes half the suites (forked.in_two)


class JUnit(WholeReport):
    """Broken links are failures; blocked and deliberately unchecked links are skipped testcases; the run's
    warnings are the system-err of a suite of their own, with no testcase.

    A crawl has a testcase per link occurrence (half a million for 10,000 pages): each source's suite is
    written as text, a suite at a time, the same text ElementTree's indent() and tostring() make (measured on
    that crawl: about half the time, without a tree of half a million elements); the few suites of the run's
    notes are made with ElementTree."""

    def __init__(self, *, fork: bool = True) -> None:
        self.fork = fork  # a forked child may make half of a big report

    def chunks(self, report: Report) -> Iterator[str]:
        groups = by_source(report.results)
        fails = _failing(report.summary.blocked_fail)
        tests, failures, _ = _counts([p for pairs in groups.values() for p in pairs], fails)
        notes = _note_suites(report)
        tests += sum(int(suite.get("tests") or 0) for suite in notes)  # (the certificates' suite)
        failures += sum(int(suite.get("failures") or 0) for suite in notes)
        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="linkhound" tests="{tests}" failures='
                f'"{failures}" errors="0" time="{report.summary.elapsed:.3f}"')
        if not groups and not notes:
            yield head + " />\n"
            return
        yield head + ">"
        suites = functools.partial(_suites, fails=fails, timed=_first_uses(groups))
        yield from in_two(list(groups.items()), lambda group: len(group[1]), suites, _FORK_AT if self.fork else None)
        for suite in notes:
            ET.indent(suite, level=1)
            yield "\n  " + ET.tostring(suite, encoding="unicode")
        yield "\n</testsuites>\n"


def _suites(groups: Sequence[tuple[str, list[tuple[Reference | None, Result]]]], first: bool,
            fails: frozenset[Status], timed: dict[int, tuple[str, int]]) -> Iterator[str]:
    return (_suite(source, pairs, fails, timed) for source, pairs in groups)


def _first_uses(groups: dict[str, list[tuple[Reference | None, Result]]]) -> dict[int, tuple[str, int]]:
    """id(result) -> the suite and place of its first testcase: the one that gets the request's time (a URL used
    500 times was asked once; each use taking the whole time made a suite far longer than the run)."""
    first: dict[int, tuple[str, int]] = {}
    for source, pairs in groups.items():
        for i, (_, result) in enumerate(pairs):
            first.setdefault(id(result), (source, i))
    return first


def _failing(blocked_fail: bool) -> frozenset[Status]:
    """The statuses that are failures: the broken ones, and blocked with --fail-on-blocked."""
    broken = frozenset(s for s in Status if s.is_broken)
    return broken | {Status.BLOCKED} if blocked_fail else broken


def _suite(source: str, pairs: Sequence[tuple[Reference | None, Result]], fails: frozenset[Status],
           timed: dict[int, tuple[str, int]]) -> str:
    """A source's testsuite, a testcase a link, as text; a request's time on its URL's first testcase only."""
    name = _attribute(printable(source))
    tests, failures, skipped = _counts(pairs, fails)
    times = [result.elapsed if timed.get(id(result)) == (source, i) else 0.0 for i, (_, result) in enumerate(pairs)]
    lines = [f'\n  <testsuite name="{name}" tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}"'
             f' time="{sum(times):.3f}">']
    lines += [_testcase(name, ref, result, fails, time) for (ref, result), time in zip(pairs, times, strict=True)]
    lines.append("\n  </testsuite>")
    return "".join(lines)


def _testcase(classname: str, ref: Reference | None, result: Result, fails: frozenset[Status], time: float) -> str:
    position = f"{ref.line}:{ref.column} " if ref and ref.line else ""
    case = (f'\n    <testcase name="{_attribute(printable(position + as_used(result, ref)))}" classname="{classname}"'
            f' time="{time:.3f}"')
    if result.is_ok:
        return case + " />"
    message = _attribute(printable(f"{LABELS[result.status]}: {describe(result)}"))
    if result.status in fails:
        return (f'{case}>\n      <failure type="{_attribute(result.status.value)}" message="{message}">'
                f"{_text(_details(ref, result))}</failure>\n    </testcase>")
    return f'{case}>\n      <skipped message="{message}" />\n    </testcase>'


def _note_suites(report: Report) -> list[ET.Element]:
    """Suites with no link's testcase: the sitemap drift, the certificates, the warnings, the links to fix."""
    suites = []
    if report.sitemap_drift is not None:  # --sitemap-drift: noted, never a failure
        suite = _empty_suite(DRIFT_SUITE)
        ET.SubElement(suite, "system-out").text = "\n".join(drift_lines(report.sitemap_drift))
        suites.append(suite)
    suites += _certificates(report.summary)
    if report.summary.warnings or report.summary.interrupted:  # (interrupted: the cases are only a part)
        suite = _empty_suite(WARNINGS_SUITE)
        err = ET.SubElement(suite, "system-err")
        lines = [f"error: {INTERRUPTED}"] if report.summary.interrupted else []
        err.text = "\n".join(lines + [f"warning: {printable(w)}" for w in report.summary.warnings])
        suites.append(suite)
    if report.suggestions:  # not failures: a suite with no testcase, the links to fix in its system-out
        suite = _empty_suite(FIXES_SUITE)
        out = ET.SubElement(suite, "system-out")
        out.text = "\n".join("\n".join(fixes.text_lines(report, all_referrers=True)).splitlines())
        suites.append(suite)
    return suites


def _empty_suite(name: str) -> ET.Element:
    return ET.Element("testsuite", name=name, tests="0", failures="0", errors="0", skipped="0", time="0.000")


def _attribute(text: str) -> str:
    """text escaped as ElementTree escapes an attribute's value: as text, and quotes and line breaks too."""
    text = _text(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


def _text(text: str) -> str:
    """text escaped as ElementTree escapes an element's text."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def _certificates(summary: Summary) -> list[ET.Element]:
    """--tls-expiry: a suite with a testcase per host's certificate; an expiring one fails with
    --tls-expiry-fail (else it is a warning, in the warnings suite)."""
    if not summary.certificates:
        return []
    failing = [c for c in summary.certificates if c.expiring and summary.certificates_fail]
    suite = ET.Element("testsuite", name=CERTIFICATES_SUITE, tests=str(len(summary.certificates)),
                       failures=str(len(failing)), errors="0", skipped="0", time="0.000")
    for c in summary.certificates:
        case = ET.SubElement(suite, "testcase", name=printable(c.host), classname=CERTIFICATES_SUITE, time="0.000")
        if c in failing:
            ET.SubElement(case, "failure", type="tls_expiry", message=printable(f"certificate expires {when(c)}"))
    return [suite]


def _counts(pairs: Sequence[tuple[Reference | None, Result]], fails: frozenset[Status]) -> tuple[int, int, int]:
    """Tests, failures (broken links, see _failing) and skipped ones (neither ok nor failures)."""
    failures = sum(1 for _, r in pairs if r.status in fails)
    return len(pairs), failures, sum(1 for _, r in pairs if not r.is_ok) - failures


def as_used(result: Result, ref: Reference | None) -> str:
    """The result's URL with the #fragment the reference asked for: fragments that were found (or not
    checked) share their page's result, and two anchors on one page are two test cases."""
    if ref is None or "#" in result.url:
        return result.url
    fragment = ref.text.partition("#")[2]
    if not fragment or any(c.isspace() for c in fragment):  # not a fragment: a "#" in the text of a link
        return result.url
    return f"{result.url}#{fragment}"


def _details(ref: Reference | None, result: Result) -> str:
    lines = [f"url: {result.url}", f"status: {result.status.value}", f"reason: {describe(result)}"]
    if result.redirects:
        lines.append(f"redirected: {' -> '.join((result.url, *result.redirects))}")
    if ref:
        lines.append(f"at: {where(ref)}")
        lines.append(f"as written: {ref.text}")
    return "\n".join(printable(line) for line in lines)
