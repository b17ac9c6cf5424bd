"""JUnit XML of findings: counts, outcomes and well-formedness whatever the finding text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.checks.registry import CheckMeta, metadata
from aifabric.findings import Finding
from aifabric.report.junit import findings_to_junit, xml_safe

META = metadata()
RAN = [
    META[c]
    for c in (
        "design.radix",
        "design.oversubscription",
        "verify.mtu-path",
        "verify.pfc-watchdog",
        "verify.ecn-thresholds",
        "verify.queue-count",
    )
]


def _mtu_error(target: str, actual: int) -> Finding:
    return META["verify.mtu-path"].finding(
        target=target,
        message=f"MTU {actual} on {target.split(' -> ')[1]} breaks the 9000-byte path",
        expected=9000,
        actual=actual,
        evidence=[f"configs/spine2.cfg line 212: mtu {actual}"],
        explanation="RoCEv2 needs the same jumbo MTU on every hop",
        fix="set mtu 9216 on spine2:Ethernet0",
    )


FINDINGS = [
    _mtu_error("leaf1:Ethernet4 -> spine2:Ethernet0", 1500),
    _mtu_error("leaf2:Ethernet4 -> spine2:Ethernet8", 4200),
    META["verify.pfc-watchdog"].finding(
        target="leaf1",
        message="PFC watchdog is off on 32 lossless ports",
        evidence=["configs/leaf1.json line 40: PFC_WD: {}"],
        explanation="a stuck pause storm is never broken",
        fix="enable the PFC watchdog on queue 3",
    ),
    META["verify.queue-count"].finding(
        target="leaf1", message="8 queues in use", explanation="info", fix="none needed"
    ),
    META["design.oversubscription"].finding(
        target="tier leaf",
        message="leaf tier is 2:1",
        severity="error",
        explanation="downlink 3.2T, uplink 1.6T",
        fix="add 4 spines",
    ),
]


def _parse(xml: str) -> ET.Element:
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(xml.encode("utf-8"))


def _case(root: ET.Element, name: str) -> ET.Element:
    (tc,) = [tc for tc in root.iter("testcase") if tc.get("name") == name]
    return tc


def _counts(el: ET.Element) -> tuple[int, ...]:
    """(tests, failures, errors, skipped) as the element states them."""
    return tuple(int(el.get(k, "-1")) for k in ("tests", "failures", "errors", "skipped"))


def test_counts_outcomes_and_suites() -> None:
    xml = findings_to_junit(
        FINDINGS,
        RAN,
        suite="aifabric verify",
        not_checked=[
            "verify.pfc-headroom: no buffer profile in the configs",
            "verify.ecn-thresholds: no WRED profile",
            "expected collective performance (no GPU model)",
        ],
    )
    root = _parse(xml)
    assert root.tag == "testsuites"
    assert root.get("name") == "aifabric verify"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == [
        "aifabric verify design",
        "aifabric verify verify",
        "aifabric verify not-checked",
    ]
    # design: radix (no finding: pass), oversubscription (an error finding overriding the
    # check's default warning: fail)
    assert _counts(suites["aifabric verify design"]) == (2, 1, 0, 0)
    # verify: mtu-path fail, pfc-watchdog pass (warning), ecn-thresholds skipped (it ran no
    # finding and was declared not checked), queue-count pass (info), pfc-headroom skipped
    assert _counts(suites["aifabric verify verify"]) == (5, 1, 0, 2)
    assert _counts(suites["aifabric verify not-checked"]) == (1, 0, 0, 1)
    assert _counts(root) == (8, 2, 0, 3)
    # every suite's counts match its children
    for s in root.findall("testsuite"):
        cases = s.findall("testcase")
        assert int(s.get("tests", "")) == len(cases)
        assert int(s.get("failures", "")) == sum(c.find("failure") is not None for c in cases)
        assert int(s.get("skipped", "")) == sum(c.find("skipped") is not None for c in cases)

    mtu = _case(root, "verify.mtu-path")
    assert mtu.get("classname") == "aifabric.verify"
    (failure,) = mtu.findall("failure")
    assert failure.get("type") == "error"
    assert failure.get("message") == (
        "leaf1:Ethernet4 -> spine2:Ethernet0: MTU 1500 on spine2:Ethernet0 breaks the "
        "9000-byte path (and 1 more)"
    )
    text = failure.text or ""
    assert text.count("ERROR verify.mtu-path on ") == 2
    assert "expected: 9000  actual: 1500" in text
    assert "expected: 9000  actual: 4200" in text
    assert "evidence: configs/spine2.cfg line 212: mtu 1500" in text
    assert "fix: set mtu 9216 on spine2:Ethernet0" in text
    assert "refs: S11, S21" in text

    wd = _case(root, "verify.pfc-watchdog")
    assert wd.find("failure") is None
    assert wd.find("skipped") is None
    out = wd.findtext("system-out") or ""
    assert out.startswith("WARNING verify.pfc-watchdog on leaf1")
    assert "evidence: configs/leaf1.json line 40: PFC_WD: {}" in out

    assert (_case(root, "verify.queue-count").findtext("system-out") or "").startswith("INFO ")
    radix = _case(root, "design.radix")
    assert list(radix) == []
    skipped = _case(root, "verify.pfc-headroom").find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "no buffer profile in the configs"
    free = _case(root, "expected collective performance (no GPU model)")
    assert free.get("classname") == "aifabric.not-checked"
    assert free.find("skipped") is not None


def test_warnings_fail_when_strict() -> None:
    root = _parse(findings_to_junit(FINDINGS, RAN, suite="s", warnings_fail=True))
    assert _counts(root) == (6, 3, 0, 0)
    wd = _case(root, "verify.pfc-watchdog").find("failure")
    assert wd is not None
    assert wd.get("type") == "warning"


def test_no_findings_all_pass_and_findings_of_unknown_checks_are_kept() -> None:
    root = _parse(findings_to_junit([], RAN, suite="s"))
    assert _counts(root) == (6, 0, 0, 0)
    stray = FINDINGS[0].model_copy(update={"check": "diagnose.pfc-storm"})
    root = _parse(findings_to_junit([stray], [], suite="s"))
    assert _counts(root) == (1, 1, 0, 0)
    assert _case(root, "diagnose.pfc-storm").get("classname") == "aifabric.diagnose"


def test_a_check_with_findings_is_not_skipped() -> None:
    root = _parse(findings_to_junit(FINDINGS[:1], RAN, suite="s", not_checked=["verify.mtu-path"]))
    assert _counts(root) == (6, 1, 0, 0)


def test_xml_safe_escapes_what_xml_cannot_hold() -> None:
    assert xml_safe("a\x1bb\x00c\td\ne\rf") == "a\\x1bb\\x00c\td\ne\rf"
    assert xml_safe("\ufffe\ud800") == "\\ufffe\\ud800"
    assert xml_safe("µs → 𝛼") == "µs → 𝛼"


def test_real_checks_of_every_category_fit() -> None:
    every: list[CheckMeta] = list(META.values())
    root = _parse(findings_to_junit([], every, suite="all"))
    assert int(root.get("tests", "")) == len(every)


_TEXT = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()),  # incl. controls and surrogates
    max_size=40,
) | st.sampled_from(["]]>", "<![CDATA[x]]>", "&amp;", "\"'<>&", "\x00\x1b\x7f\ufffe"])


@settings(max_examples=150, deadline=None)
@given(target=_TEXT, message=_TEXT, evidence=st.lists(_TEXT, max_size=3), fix=_TEXT, extra=_TEXT)
def test_any_text_gives_parseable_xml(
    target: str, message: str, evidence: list[str], fix: str, extra: str
) -> None:
    f = META["verify.mtu-path"].finding(
        target=target,
        message=message,
        evidence=evidence,
        explanation=extra,
        fix=fix,
        expected=extra,
        actual=message,
    )
    w = f.model_copy(update={"check": "verify.pfc-watchdog", "severity": "warning"})
    xml = findings_to_junit([f, w], RAN, suite=extra, not_checked=[extra, message])
    root = _parse(xml)
    assert int(root.get("failures", "")) == 1
    tests = int(root.get("tests", ""))
    assert tests == len(list(root.iter("testcase")))
    # the text comes back, with only the characters XML cannot hold escaped
    failure = _case(root, "verify.mtu-path").find("failure")
    assert failure is not None

    def norm(s: str) -> str:
        return s.replace("\r\n", "\n").replace("\r", "\n")

    assert norm(xml_safe(message)) in (failure.text or "")
