"""Reports built from check results only: a text table per spec section, JSON, JUnit XML.

:func:`exit_status` is non-zero when any MUST check failed, or when no check passed at
all (SHOULD failures, "could not test" and ERRATA differences are reported but do not
fail a CI run on their own).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from meeple.check.core import Level, Result, Status

__all__ = ["exit_status", "summary", "to_json", "to_junit", "to_text"]

_MARK = {
    Status.PASS: "pass",
    Status.FAIL: "FAIL",
    Status.NOT_APPLICABLE: "n/a",
    Status.COULD_NOT_TEST: "could not test",
    Status.DIFFERS: "differs",
}


def exit_status(results: Sequence[Result]) -> int:
    """1 if a MUST check failed, or if no check passed (nothing was verified); else 0."""
    must_failed = any(r.status is Status.FAIL and r.check.level is Level.MUST for r in results)
    return int(must_failed or not any(r.status is Status.PASS for r in results))


def summary(results: Sequence[Result]) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for r in results:
        counts[r.status.value] += 1
    counts["MUST failures"] = sum(
        1 for r in results if r.status is Status.FAIL and r.check.level is Level.MUST
    )
    return counts


def _sections(results: Sequence[Result]) -> dict[str, list[Result]]:
    sections: dict[str, list[Result]] = {}
    for r in results:
        sections.setdefault(r.check.section, []).append(r)
    return sections


def _bytes(data: bytes) -> str:
    text = repr(data)[2:-1]
    return text if len(text) <= 600 else text[:300] + " [...] " + text[-300:]


def to_text(title: str, results: Sequence[Result], *, transcripts: bool = True) -> str:
    """A table per spec section, then the bytes of each failure, then the totals."""
    lines = [title, "=" * len(title), ""]
    for section, rs in _sections(results).items():
        lines.append(f"## {section}")
        for r in rs:
            lines.append(
                f"  {_MARK[r.status]:<14} {r.check.level.value:<6} {r.check.id:<34} {r.check.title}"
            )
            if r.detail and r.status is not Status.PASS:
                lines.append(f"  {'':<14} {'':<6} -> {r.detail}")
        lines.append("")
    failures = [r for r in results if r.status is Status.FAIL and r.transcript]
    if transcripts and failures:
        lines.append("## Bytes of the failures")
        for r in failures:
            lines.append(f"  {r.check.id}: {r.detail}")
            for e in r.transcript:
                lines.append(f"    [{e.label}] sent:     {_bytes(e.sent)}")
                lines.append(f"    [{e.label}] received: {_bytes(e.received)}")
        lines.append("")
    counts = summary(results)
    lines.append(
        f"{len(results)} checks: "
        + ", ".join(f"{n} {s}" for s, n in counts.items() if s != "MUST failures")
        + f"; MUST failures: {counts['MUST failures']}"
    )
    return "\n".join(lines) + "\n"


def to_json(title: str, results: Sequence[Result]) -> str:
    return json.dumps(
        {
            "title": title,
            "summary": summary(results),
            "exit_status": exit_status(results),
            "results": [r.to_json() for r in results],
        },
        indent=2,
    )


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: other control characters (a target's bytes) escaped."""
    return "".join(
        c
        if c in "\t\n\r" or (" " <= c <= "\ud7ff") or ("\ue000" <= c <= "\ufffd") or c > "\uffff"
        else repr(c)[1:-1]
        for c in text
    )


def to_junit(title: str, results: Sequence[Result]) -> str:
    """One ``<testsuite>`` per spec section; a MUST failure is a ``<failure>``, a SHOULD
    failure too but typed ``SHOULD``; n/a and "could not test" are ``<skipped>``."""
    suites = ET.Element("testsuites", name=_xml(title))
    for section, rs in _sections(results).items():
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=_xml(section),
            tests=str(len(rs)),
            failures=str(sum(r.status is Status.FAIL for r in rs)),
            skipped=str(
                sum(r.status in (Status.NOT_APPLICABLE, Status.COULD_NOT_TEST) for r in rs)
            ),
        )
        for r in rs:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=_xml(section),
                name=_xml(f"{r.check.id} [{r.check.level.value}] {r.check.title}"),
                time=f"{r.seconds:.3f}",
            )
            if r.status is Status.FAIL:
                failure = ET.SubElement(
                    case, "failure", message=_xml(r.detail), type=r.check.level.value
                )
                failure.text = "\n".join(
                    f"[{e.label}] sent: {_bytes(e.sent)}\n"
                    f"[{e.label}] received: {_bytes(e.received)}"
                    for e in r.transcript
                )
            elif r.status in (Status.NOT_APPLICABLE, Status.COULD_NOT_TEST):
                ET.SubElement(case, "skipped", message=_xml(f"{r.status.value}: {r.detail}"))
            elif r.status is Status.DIFFERS:
                out = ET.SubElement(case, "system-out")
                out.text = _xml(f"{r.status.value}: {r.detail}")
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
