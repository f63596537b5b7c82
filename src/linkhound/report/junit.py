"""The junit format: XML for CI test views, a testsuite per source and a testcase per link."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from ..summary import Report, Summary
from ..types import Reference, Result
from . import fixes
from .base import WholeReport
from .certificates import when
from .common import LABELS, by_source, describe, printable
from .drift import drift_lines

CERTIFICATES_SUITE = "(TLS certificates)"  # --tls-expiry: one testcase per host
WARNINGS_SUITE = "(warnings)"  # the schema lets <testsuites> hold only suites: the run's warnings get one
DRIFT_SUITE = "(sitemap drift)"  # --sitemap-drift's lists, the same way
FIXES_SUITE = "(links to fix)"


class JUnit(WholeReport):
    """Broken links are failures; blocked and deliberately unchecked links are skipped testcases; the run's
    warnings are the system-err of a suite of their own, with no testcase."""

    def finish(self, report: Report) -> str:
        groups = by_source(report.results)
        root = ET.Element("testsuites", name="linkhound")
        _counts(root, [p for pairs in groups.values() for p in pairs])
        root.set("time", f"{report.summary.elapsed:.3f}")
        for source, pairs in groups.items():
            suite = ET.SubElement(root, "testsuite", name=printable(source))
            _counts(suite, pairs)
            suite.set("time", f"{sum(result.elapsed for _, result in pairs):.3f}")
            for ref, result in pairs:
                _testcase(suite, source, ref, result)
        if report.sitemap_drift is not None:  # --sitemap-drift: noted, never a failure
            suite = ET.SubElement(root, "testsuite", name=DRIFT_SUITE)
            _counts(suite, [])
            suite.set("time", "0.000")
            ET.SubElement(suite, "system-out").text = "\n".join(drift_lines(report.sitemap_drift))
        _certificates(root, report.summary)
        if report.summary.warnings:
            suite = ET.SubElement(root, "testsuite", name=WARNINGS_SUITE)
            _counts(suite, [])
            suite.set("time", "0.000")
            err = ET.SubElement(suite, "system-err")
            err.text = "\n".join(f"warning: {printable(w)}" for w in report.summary.warnings)
        if report.suggestions:  # not failures: a suite with no testcase, the links to fix in its system-out
            suite = ET.SubElement(root, "testsuite", name=FIXES_SUITE)
            _counts(suite, [])
            suite.set("time", "0.000")
            out = ET.SubElement(suite, "system-out")
            out.text = "\n".join("\n".join(fixes.text_lines(report, all_referrers=True)).splitlines())
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _certificates(root: ET.Element, summary: Summary) -> None:
    """--tls-expiry: a suite with a testcase per host's certificate; an expiring one fails with
    --tls-expiry-fail (else it is a warning, in the warnings suite)."""
    if not summary.certificates:
        return
    suite = ET.SubElement(root, "testsuite", name=CERTIFICATES_SUITE)
    failing = [c for c in summary.certificates if c.expiring and summary.certificates_fail]
    suite.set("tests", str(len(summary.certificates)))
    suite.set("failures", str(len(failing)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", "0.000")
    for c in summary.certificates:
        case = ET.SubElement(suite, "testcase", name=printable(c.host), classname=CERTIFICATES_SUITE, time="0.000")
        if c in failing:
            ET.SubElement(case, "failure", type="tls_expiry", message=printable(f"certificate expires {when(c)}"))


def _counts(element: ET.Element, pairs: Sequence[tuple[Reference | None, Result]]) -> None:
    element.set("tests", str(len(pairs)))
    element.set("failures", str(sum(1 for _, r in pairs if r.status.is_broken)))
    element.set("errors", "0")  # a broken link is a failed check, never an error of the checker
    if element.tag == "testsuite":  # the schema allows "skipped" on suites only
        element.set("skipped", str(sum(1 for _, r in pairs if not r.is_ok and not r.is_broken)))


def _testcase(suite: ET.Element, source: str, ref: Reference | None, result: Result) -> None:
    position = f"{ref.line}:{ref.column} " if ref and ref.line else ""
    case = ET.SubElement(
        suite,
        "testcase",
        name=printable(position + as_used(result, ref)),
        classname=printable(source),
        time=f"{result.elapsed:.3f}",
    )
    message = f"{LABELS[result.status]}: {describe(result)}"
    if result.is_broken:
        failure = ET.SubElement(case, "failure", type=result.status.value, message=printable(message))
        failure.text = _details(ref, result)
    elif not result.is_ok:
        ET.SubElement(case, "skipped", message=printable(message))


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
        lines.append(f"at: {ref.position()} ({ref.element} {ref.attribute})")
        lines.append(f"as written: {ref.text}")
    return "\n".join(printable(line) for line in lines)
