"""Reports built from check results only: a one-screen text summary, HTML, JSON, JUnit XML.

The text summary opens with **"Fix these first"**: the distinct root causes
(:func:`causes`: failures and blocked checks grouped by their first unexpected
exchange, or by the transport fault the kit recognised), each with the number of checks
it FAILed or blocked, the bytes and the spec section, then what the ERRATA let pass
("tolerated"), then the checks that did not pass, then the totals. :func:`to_html` is
one self-contained page with every check's wire transcript (hex and text).

:func:`exit_status` is non-zero when any MUST check failed, or when no check passed at
all (SHOULD failures, "could not test", ERRATA differences and tolerated quirks are
reported but do not fail a CI run on their own).
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from meeple.check.core import Fault, Level, Result, Status

__all__ = [
    "Cause",
    "causes",
    "exit_status",
    "summary",
    "to_html",
    "to_json",
    "to_junit",
    "to_text",
    "tolerances",
]

_MARK = {
    Status.PASS: "pass",
    Status.FAIL: "FAIL",
    Status.NOT_APPLICABLE: "n/a",
    Status.COULD_NOT_TEST: "could not test",
    Status.DIFFERS: "differs",
    Status.TOLERATED: "tolerated",
}
# The text summary fits one screen: at most this many causes and listed checks.
MAX_CAUSES = 5
MAX_LISTED = 18
WIDTH = 110
# The kit's player names (``ck`` + 4 random letters + a tag): one cause across checks.
_NAME = re.compile(r"ck[a-z]{4}[a-z0-9]*")
_NAME_BYTES = re.compile(rb"ck[a-z]{4}[a-z0-9]*")
# A wait's detail ends with what the connection last received: not part of the cause.
_LAST = re.compile(r"; (last bytes received: .*|nothing received on this connection)$")
_SETUP = re.compile(r"^set-up step .*? failed: |^blocked by .*?: ")


def exit_status(results: Sequence[Result]) -> int:
    """1 if a MUST check failed, or if no check passed (nothing was verified); else 0."""
    must_failed = any(r.status is Status.FAIL and r.check.level is Level.MUST for r in results)
    passed = any(r.status in (Status.PASS, Status.TOLERATED) for r in results)
    return int(must_failed or not passed)


def summary(results: Sequence[Result]) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for r in results:
        counts[r.status.value] += 1
    counts["MUST failures"] = sum(
        1 for r in results if r.status is Status.FAIL and r.check.level is Level.MUST
    )
    return counts


@dataclass(frozen=True, slots=True)
class Cause:
    """One root cause: the first unexpected exchange several results share."""

    title: str  # the fault's name, or what was expected and what came
    section: str  # the spec section of the rule it breaks
    got: bytes | None  # the bytes (None: none recorded; b"": nothing came)
    advice: str  # what to change ("" if the kit cannot say more than the title)
    results: tuple[Result, ...]

    @property
    def failed(self) -> int:
        return sum(r.status is Status.FAIL for r in self.results)

    @property
    def blocked(self) -> int:
        return sum(r.status is Status.COULD_NOT_TEST for r in self.results)


def _anonymous(text: str) -> str:
    return _NAME.sub("<name>", text)


def _core(r: Result) -> str:
    """The failure's own words, without the set-up prefix and the connection's label."""
    text = _SETUP.sub("", r.detail)
    text = re.sub(r"^[\w.-]+: ", "", text)
    return _anonymous(text)


def _key(r: Result) -> tuple[str, ...]:
    if r.fault is not None and not r.fault.tolerated:
        return ("fault", r.fault.name)
    section = r.step.section if r.step is not None else r.check.section
    if r.got:
        return ("got", section, _NAME_BYTES.sub(b"<name>", r.got).decode("latin-1"))
    return ("detail", section, re.sub(r"\d+(\.\d+)? s\b", "N s", _LAST.sub("", _core(r))))


def causes(results: Sequence[Result]) -> list[Cause]:
    """The distinct root causes of the FAILs and the blocked checks, most checks first."""
    groups: dict[tuple[str, ...], list[Result]] = {}
    for r in results:
        if r.status is Status.FAIL or r.blocked:
            groups.setdefault(_key(r), []).append(r)
    found = []
    for key, rs in groups.items():
        first = next((r for r in rs if r.status is Status.FAIL), rs[0])
        fault = first.fault
        if fault is not None and key[0] == "fault":
            own = list(dict.fromkeys(r.check.section for r in rs))
            section = ", ".join(fault.sections) or ", ".join(own[:2]) + (", ..." if own[2:] else "")
            got = fault.evidence or first.got
            title, advice = fault.name, fault.advice
        else:
            section = first.step.section if first.step is not None else first.check.section
            got, title = first.got, _core(first)
            advice = fault.advice if fault is not None else ""
            if fault is not None and fault.name not in title:
                title = f"{fault.name}: {title}"
        found.append(Cause(title, section, got, advice, tuple(rs)))
    # A target that stopped accepting or answering comes first: it explains the rest.
    found.sort(key=lambda c: (not _stops(c), -c.failed - c.blocked, -c.failed))
    return found


def _stops(cause: Cause) -> bool:
    return any(r.fault is not None and r.fault.stopped for r in cause.results)


def tolerances(results: Sequence[Result]) -> list[tuple[Fault, int]]:
    """Each quirk the kit read past (ERRATA), with how many checks met it."""
    seen: dict[str, tuple[Fault, int]] = {}
    for r in results:
        for f in r.tolerated:
            fault, n = seen.get(f.name, (f, 0))
            seen[f.name] = (fault, n + 1)
    return list(seen.values())


def _bytes(data: bytes, limit: int = 600) -> str:
    text = repr(data)[2:-1]
    return text if len(text) <= limit else text[: limit // 2] + " [...] " + text[-limit // 2 :]


def _clip(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _short(r: Result) -> str:
    return r.check.id.split(".", 2)[-1]


def _ids(rs: Sequence[Result], width: int) -> str:
    names = [_short(r) for r in rs]
    text = ", ".join(names)
    return _clip(text, width)


def _totals(results: Sequence[Result]) -> str:
    counts = {s: sum(r.status is s for r in results) for s in Status}
    parts = [f"{n} {_MARK[s]}" for s, n in counts.items() if n]
    must = summary(results)["MUST failures"]
    return f"{len(results)} checks: " + ", ".join(parts) + f"; MUST failures: {must}"


def to_text(title: str, results: Sequence[Result], *, transcripts: bool = False) -> str:
    """The one-screen summary: root causes first, then the checks that did not pass.

    ``transcripts``: add the bytes of every failure after the summary (long)."""
    lines = [f"{title}: {_totals(results)}"]
    found = causes(results)
    tolerated = tolerances(results)
    numbers: dict[str, int] = {}
    if found:
        lines.append("Fix these first:")
        for n, cause in enumerate(found[:MAX_CAUSES], 1):
            for r in cause.results:
                numbers[r.check.id] = n
            counts = []
            if cause.failed:
                counts.append(f"{cause.failed} FAIL")
            if cause.blocked:
                counts.append(f"{cause.blocked} could not test")
            lines.append(_clip(f" {n}. {cause.title}"))
            lines.append(_clip(f"    spec: {cause.section}; {', '.join(counts)}"))
            if cause.got is not None:
                shown = _bytes(cause.got, 90) if cause.got else "nothing"
                lines.append(_clip(f"    bytes: {shown}"))
            if cause.advice:
                lines.append(_clip(f"    fix: {cause.advice}"))
            lines.append(_clip(f"    checks: {_ids(cause.results, WIDTH - 14)}"))
        if len(found) > MAX_CAUSES:
            more = sum(len(c.results) for c in found[MAX_CAUSES:])
            lines.append(
                f" ... {len(found) - MAX_CAUSES} more causes ({more} checks): see --html or --json"
            )
    else:
        lines.append("Nothing to fix: no check failed or was blocked.")
    if tolerated:
        text = "; ".join(f"{f.name} ({n} checks)" for f, n in tolerated)
        lines.append(_clip(f"Tolerated (ERRATA, nothing to fix): {text}"))
        for f, _ in tolerated[:2]:
            lines.append(_clip(f"    {f.name}: {_bytes(f.evidence, 60)}; better: {f.advice}"))
    listed = [
        r
        for r in results
        if r.status in (Status.FAIL, Status.DIFFERS)
        or (r.status is Status.COULD_NOT_TEST and r.check.id not in numbers)
    ]
    if listed:
        lines.append("Checks that did not pass:")
        for r in listed[:MAX_LISTED]:
            which = f" [cause {numbers[r.check.id]}]" if r.check.id in numbers else ""
            head = f"  {_MARK[r.status]:<14} {r.check.level.value:<6} {_short(r)}{which}: "
            lines.append(_clip(head + (_anonymous(r.detail) or r.check.title)))
        if len(listed) > MAX_LISTED:
            lines.append(f"  ... and {len(listed) - MAX_LISTED} more: see --html or --json")
    blocked = [r for r in results if r.status is Status.COULD_NOT_TEST and r.check.id in numbers]
    if blocked:
        lines.append(
            f"Could not test (blocked by a cause above): {len(blocked)} checks;"
            " each check's step and bytes: --html FILE"
        )
    if transcripts:
        failures = [r for r in results if r.status is Status.FAIL and r.transcript]
        if failures:
            lines.append("")
            lines.append("Bytes of the failures:")
            for r in failures:
                lines.append(f"  {r.check.id}: {r.detail}")
                for e in r.transcript:
                    lines.append(f"    [{e.label}] sent:     {_bytes(e.sent)}")
                    lines.append(f"    [{e.label}] received: {_bytes(e.received)}")
    return "\n".join(lines) + "\n"


def to_json(title: str, results: Sequence[Result]) -> str:
    return json.dumps(
        {
            "title": title,
            "summary": summary(results),
            "exit_status": exit_status(results),
            "causes": [
                {
                    "title": c.title,
                    "section": c.section,
                    "got": None if c.got is None else c.got.decode("latin-1"),
                    "advice": c.advice,
                    "checks": [r.check.id for r in c.results],
                }
                for c in causes(results)
            ],
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


def _sections(results: Sequence[Result]) -> dict[str, list[Result]]:
    sections: dict[str, list[Result]] = {}
    for r in results:
        sections.setdefault(r.check.section, []).append(r)
    return sections


def to_junit(title: str, results: Sequence[Result]) -> str:
    """One ``<testsuite>`` per spec section; a MUST failure is a ``<failure>``, a SHOULD
    failure too but typed ``SHOULD``; n/a and "could not test" are ``<skipped>``;
    "differs" and "tolerated" pass with a ``<system-out>`` saying so."""
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
            elif r.status in (Status.DIFFERS, Status.TOLERATED):
                out = ET.SubElement(case, "system-out")
                out.text = _xml(f"{r.status.value}: {r.detail}")
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


# --- HTML -------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:72em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.25em .5em;
text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;
font-size:.85em;margin:.25em 0}.s-fail{background:#fdd}.s-could-not-test{background:#ffe9c6}
.s-pass{background:#dfd}.s-tolerated{background:#e6f4d7}.s-differs{background:#e3ecfa}
.s-n-a{background:#eee}.cause{border-left:4px solid #c33;padding-left:.75em;margin:.75em 0}
.tol{border-left:4px solid #8b5;padding-left:.75em}code{font-size:.9em}
"""


def _hexdump(data: bytes) -> str:
    """16 bytes a row: offset, hex, and the bytes as text (``.`` where not printable)."""
    rows = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        rows.append(f"{at:06x}  {hexes:<47}  {text}")
    return "\n".join(rows)


def _css_class(status: Status) -> str:
    return "s-" + re.sub(r"[^a-z]+", "-", _MARK[status].lower()).strip("-")


def to_html(title: str, results: Sequence[Result]) -> str:
    """One self-contained page: the causes, the tolerances, and every check with its
    result and its wire transcript per connection (what was sent and received, as text
    and as a hex dump). Everything from the target is escaped."""
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p>{e(_totals(results))}</p>",
    ]
    found = causes(results)
    out.append("<h2>Fix these first</h2>")
    if not found:
        out.append("<p>Nothing to fix: no check failed or was blocked.</p>")
    for n, c in enumerate(found, 1):
        ids = ", ".join(f'<a href="#{e(r.check.id)}">{e(_short(r))}</a>' for r in c.results)
        out.append(
            f'<div class="cause"><p><b>{n}. {e(c.title)}</b> (spec: {e(c.section)}):'
            f" {c.failed} FAIL, {c.blocked} could not test</p>"
        )
        if c.got is not None:
            out.append(f"<pre>{e(_bytes(c.got) if c.got else 'nothing came')}</pre>")
        if c.advice:
            out.append(f"<p>Fix: {e(c.advice)}</p>")
        out.append(f"<p>Checks: {ids}</p></div>")
    tolerated = tolerances(results)
    if tolerated:
        out.append("<h2>Tolerated (ERRATA)</h2>")
        for f, n in tolerated:
            out.append(
                f'<div class="tol"><p><b>{e(f.name)}</b> in {n} checks; better: {e(f.advice)}'
                f"</p><pre>{e(_bytes(f.evidence))}</pre></div>"
            )
    out.append("<h2>Checks</h2><table><tr><th>result</th><th>level</th><th>check</th>")
    out.append("<th>section</th><th>rule</th></tr>")
    for r in results:
        out.append(
            f'<tr class="{_css_class(r.status)}" id="{e(r.check.id)}"><td>{e(_MARK[r.status])}'
            f"</td><td>{r.check.level.value}</td><td><code>{e(r.check.id)}</code></td>"
            f"<td>{e(r.check.section)}</td><td>{e(r.check.title)}</td></tr>"
        )
        body = []
        if r.detail:
            body.append(f"<p>{e(r.detail)}</p>")
        if r.step is not None:
            body.append(f"<p>set-up step: {e(r.step.what)} ({e(r.step.section)})</p>")
        if r.check.errata:
            body.append(f"<p>ERRATA: {e(r.check.errata)}</p>")
        # Every check's bytes as text; a hex dump where it did not simply pass (the page
        # of a run where most checks pass stays small).
        hexed = r.status is not Status.PASS
        for x in r.transcript:
            for direction, data in (("sent", x.sent), ("received", x.received)):
                dump = f"<pre>{e(_hexdump(data))}</pre>" if hexed else ""
                body.append(
                    f"<details><summary>[{e(x.label)}] {direction}: {len(data)} bytes"
                    f"</summary><pre>{e(_bytes(data, 4000))}</pre>{dump}</details>"
                )
        if body:
            out.append(f'<tr><td></td><td colspan="4">{"".join(body)}</td></tr>')
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"
