"""Closing the loop: for each fault, `lab capture` (ordinary tools inside the namespaces) and
then `aifabric diagnose` on that bundle alone must name the fault by cause class and layer;
on the healthy lab, diagnose reports no error and no warning."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aifabric.catalog import load_catalog
from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.design import load_fabric
from aifabric.findings import Finding
from aifabric.lab.capture import capture_lab
from aifabric.lab.faults import add_fault, clear_faults
from aifabric.lab.frr import shortfall
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.lab.plan import LabPlan
from aifabric.lab.state import load_state

from .conftest import ROOT, needs_lab, new_name

pytestmark = needs_lab

LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"


@pytest.fixture(scope="module")
def loop_lab() -> Iterator[LabPlan]:
    name = new_name("d")
    try:
        state = lab_up(load_fabric(LAB_2X2, load_catalog()), name)
        assert state.converged is True
        yield state.plan
    finally:
        lab_down(name)


def _settle(plan: LabPlan, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while shortfall(plan) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert not shortfall(plan), "the lab did not return to full ECMP width"


def _diagnose(plan: LabPlan, out: Path) -> list[Finding]:
    capture_lab(plan.name, out, duration_s=3)
    fabric = load_fabric(LAB_2X2, load_catalog())
    ev = load_evidence([out], fabric=fabric, catalog=load_catalog())
    return diagnose(ev).findings


def _describe(findings: list[Finding]) -> str:
    return "\n".join(f"{f.severity} {f.check} {f.cause} {f.target}: {f.message}"
                     for f in findings)


def test_healthy_lab_is_clean(loop_lab: LabPlan, tmp_path: Path) -> None:
    findings = _diagnose(loop_lab, tmp_path / "bundle")
    bad = [f for f in findings if f.severity in ("error", "warning")]
    assert bad == [], _describe(bad)


# fault kind, place, value, settle seconds, expected cause class
CASES = [
    ("mtu-mismatch", {"link": "spine01:leaf02", "value": "1500"}, 0, "fabric.mtu"),
    ("loss", {"link": "leaf01:spine01", "value": "5"}, 0, "fabric.packet-loss"),
    ("throttle", {"node": "leaf01", "value": "40M"}, 0, "fabric.middlebox"),
    # on the leaf's port to srv05, which every flow to srv05 crosses (an uplink may be missed by
    # the ECMP hash of a 3 s pairwise load: 4 uplinks, few flows)
    ("shallow-buffer", {"link": "leaf02:srv05", "value": "100M"}, 0, "fabric.pfc-congestion"),
    ("link-down", {"link": "leaf01:spine02"}, 2, "fabric.link-down"),
    ("ecmp-l3-hash", {}, 0, "fabric.ecmp-hash"),
    ("dscp-remark", {"node": "srv01", "value": "0"}, 0, "config.qos"),
    ("bgp-down", {"link": "leaf01:spine02"}, 12, "fabric.routing"),
]


@pytest.mark.parametrize(("kind", "where", "wait_s", "cause"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_fault_is_named_by_diagnose(
    loop_lab: LabPlan, tmp_path: Path, kind: str, where: dict[str, str], wait_s: float,
    cause: str,
) -> None:
    plan = loop_lab
    try:
        add_fault(plan.name, kind, **where)
        assert [f["kind"] for f in load_state(plan.name).faults] == [kind]
        time.sleep(wait_s)
        findings = _diagnose(plan, tmp_path / "bundle")
    finally:
        clear_faults(plan.name)
        _settle(plan)
    named = [f for f in findings if f.cause == cause and f.severity in ("error", "warning")]
    assert named, f"{kind}: no finding with cause {cause}:\n{_describe(findings)}"
    layer = cause.split(".", 1)[0]
    assert all(f.cause and f.cause.startswith(layer + ".") for f in named)
