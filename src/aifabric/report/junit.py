"""Findings as JUnit XML, for CI test-report panes (GitLab, Jenkins, GitHub test-report actions).

There is no official JUnit XML specification; this writer follows the common subset that the
consumers agree on: the Apache Ant schema as published by Windy Road
(``windyroad/JUnit-Schema``, ``JUnit.xsd``), Jenkins' ``junit-4.xsd`` (dtkit), and the
conventions collected by Testmo (``testmoapp/junitxml``, "Common JUnit XML Format & Examples").

Shape::

    <testsuites name=SUITE tests= failures= errors= skipped=>
      <testsuite name="SUITE design|verify|diagnose|not-checked" tests= failures= errors= skipped=>
        <testcase classname="aifabric.<category>" name="<check id>">
          <failure message=... type="error">findings as text</failure>   (failed check)
          <skipped message="why"/>                                        (check that did not run)
          <system-out>warnings and infos</system-out>                     (passed, with notes)
        </testcase>

Decisions (and why):

* **One testsuite per check category** (design / verify / diagnose), plus one ``not-checked``
  suite for what could not be checked and is not a known check. Categories are the stages a CI
  user reasons about ("the design is fine, the configs are not"), they are stable from run to
  run (a per-input suite would rename itself whenever a file moves), and ``check`` mixes design
  and verify findings of one fabric, so a per-input split would not even be well defined for
  design checks. GitLab shows ``testcase/@classname`` as the suite column (gitlab-org/gitlab
  issue 299086), so classname carries the category too: ``aifabric.verify``; Jenkins splits it
  at the last dot into package ``aifabric`` and class ``verify``.
* **One testcase per check that ran**, named by the check id; a check with no finding passes.
* **Errors fail.** A check with at least one finding of severity ``error`` gets one
  ``<failure type="error">`` whose ``message`` is the first error's message (and how many more)
  and whose text lists every finding of that check: severity, target, message,
  expected/actual, evidence, explanation, fix and refs.
* **Warnings pass.** JUnit has no warning outcome (the Ant schema knows only failure, error and
  skipped; GitLab and Jenkins show only those), and a warning is not a reason to block a merge,
  which is what a failed test does in CI. A check whose findings are only warnings or infos
  passes and carries them in ``<system-out>`` (both GitLab and Jenkins show a case's
  system-out), each line starting ``WARNING``/``INFO``. ``warnings_fail=True`` (a ``--strict``
  switch) turns warnings into failures instead.
* **Skipped** for what could not run: each ``not_checked`` entry. An entry that starts with a
  check id (``"verify.pfc-headroom"`` or ``"verify.pfc-headroom: no --configs given"``) marks
  that check skipped with the rest as the reason (unless it reported findings: then it ran);
  any other entry (``"expected collective performance (no GPU model)"``) becomes a skipped case
  in the ``not-checked`` suite named by its text. Findings whose check is not in ``checks`` are
  never dropped: they get a test case of their own.
* ``errors`` is always 0: a check reports problems as failures; an aifabric crash is not a test
  result. No ``time``/``timestamp``/``hostname``: offline checks take no measurable time and the
  output stays byte-for-byte reproducible (all three are optional for GitLab, Jenkins and Testmo).

XML 1.0 cannot carry most C0 control characters (not even as character references), nor lone
surrogates or U+FFFE/U+FFFF; they are written as visible ``\\xNN``/``\\uNNNN`` escapes so the
document always parses. ElementTree escapes ``<``, ``>`` and ``&``, so ``]]>`` is harmless.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from aifabric.findings import Finding

__all__ = ["CATEGORIES", "CheckInfo", "findings_to_junit", "xml_safe"]

CATEGORIES: tuple[str, ...] = ("design", "verify", "diagnose")
"""Check categories, in report order (``CheckMeta.category``)."""

NOT_CHECKED_SUITE = "not-checked"

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
_CHECK_ID = re.compile(r"^([a-z0-9]+(?:\.[a-z0-9\-]+)+)(?::\s*(.*))?$", re.DOTALL)
# XML 1.0 Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class CheckInfo(Protocol):
    """What the reports need of a check's metadata (``aifabric.checks.CheckMeta`` fits; the
    report engine may not import the checks engine, architecture.md)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def refs(self) -> Sequence[str]: ...
    @property
    def description(self) -> str: ...


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by a visible escape.

    ``"a\\x1bb"`` → ``"a\\\\x1bb"`` (a backslash, ``x1b``); a lone surrogate ``\\ud800`` →
    ``\\\\ud800``; tabs, newlines and carriage returns stay.
    """

    def esc(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML_CHAR.sub(esc, text)


def _value(v: object) -> str:
    return "-" if v is None else str(v)


def _finding_text(f: Finding) -> str:
    """A finding as indented plain text (one block per finding)."""
    lines = [f"{f.severity.upper()} {f.check} on {f.target}", f"  {f.message}"]
    if f.expected is not None or f.actual is not None:
        lines.append(f"  expected: {_value(f.expected)}  actual: {_value(f.actual)}")
    lines += [f"  evidence: {e}" for e in f.evidence]
    if f.explanation:
        lines.append(f"  why: {f.explanation}")
    lines.append(f"  fix: {f.fix}")
    lines += [f"  {a.status}: {a.cause} - check: {a.check}" for a in f.alternatives]
    if f.refs:
        lines.append(f"  refs: {', '.join(f.refs)}")
    if f.confidence is not None:
        lines.append(f"  confidence: {f.confidence:g}")
    return "\n".join(lines)


@dataclass
class _Case:
    category: str
    check_id: str
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None


def _category_of(check_id: str) -> str:
    head = check_id.split(".", 1)[0]
    return head if head in CATEGORIES else NOT_CHECKED_SUITE


def _cases(
    findings: Sequence[Finding], checks: Sequence[CheckInfo], not_checked: Sequence[str]
) -> dict[str, _Case]:
    cases: dict[str, _Case] = {}
    for meta in checks:
        cases.setdefault(meta.id, _Case(meta.category, meta.id))
    for f in findings:
        cases.setdefault(f.check, _Case(_category_of(f.check), f.check)).findings.append(f)
    for entry in not_checked:
        m = _CHECK_ID.match(entry.strip())
        if m:
            cid, reason = m.group(1), (m.group(2) or "").strip()
            case = cases.setdefault(cid, _Case(_category_of(cid), cid))
            if not case.findings:
                case.skipped = reason or "not checked: its inputs were not given"
        else:
            key = f"{NOT_CHECKED_SUITE}\0{entry}"
            cases.setdefault(key, _Case(NOT_CHECKED_SUITE, entry, skipped=entry))
    return cases


def findings_to_junit(
    findings: Sequence[Finding],
    checks: Sequence[CheckInfo],
    *,
    suite: str,
    not_checked: Sequence[str] = (),
    warnings_fail: bool = False,
) -> str:
    """JUnit XML of a run: ``checks`` are the checks that ran, ``findings`` what they found,
    ``not_checked`` what could not be checked (check ids, ``"id: reason"`` or free text).

    Returns the document as text with an XML declaration (UTF-8 when written to a file).
    """
    failing = {"error", "warning"} if warnings_fail else {"error"}
    by_suite: dict[str, list[_Case]] = {}
    for case in _cases(findings, checks, not_checked).values():
        by_suite.setdefault(case.category, []).append(case)
    order = [*CATEGORIES, NOT_CHECKED_SUITE]

    root = ET.Element("testsuites", name=xml_safe(suite))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for category in sorted(by_suite, key=order.index):
        cases = sorted(by_suite[category], key=lambda c: c.check_id)
        el = ET.SubElement(root, "testsuite", name=xml_safe(f"{suite} {category}"))
        counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
        for case in cases:
            tc = ET.SubElement(
                el, "testcase", classname=f"aifabric.{category}", name=xml_safe(case.check_id)
            )
            fs = sorted(case.findings, key=lambda f: (_SEVERITY_ORDER[f.severity], f.target))
            bad = [f for f in fs if f.severity in failing]
            if bad:
                counts["failures"] += 1
                more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
                fail = ET.SubElement(
                    tc,
                    "failure",
                    message=xml_safe(f"{bad[0].target}: {bad[0].message}{more}"),
                    type=bad[0].severity,
                )
                fail.text = xml_safe("\n\n".join(_finding_text(f) for f in fs))
            elif case.skipped is not None:
                counts["skipped"] += 1
                ET.SubElement(tc, "skipped", message=xml_safe(case.skipped))
            elif fs:
                out = ET.SubElement(tc, "system-out")
                out.text = xml_safe("\n\n".join(_finding_text(f) for f in fs))
        for key, n in counts.items():
            el.set(key, str(n))
            totals[key] += n
    for key, n in totals.items():
        root.set(key, str(n))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
