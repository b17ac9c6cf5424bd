"""Verify rules on hand-built observed devices: each check fails and passes where the rule
says (thresholds from the seed and perf-model-and-limits.md, not from the code's output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.catalog import load_catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import load_fabric
from aifabric.dialects.observed import EcnObs, Observed, ObservedDevice, PortView, Src, Val
from aifabric.findings import Finding
from aifabric.model import Fabric

SMALL = Path(__file__).resolve().parents[2] / "fixtures" / "verify" / "_fabrics" / "small-l3.yaml"
SRC = Src("leaf01.cfg", 1, "test")


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return load_fabric(SMALL, load_catalog())


def _leaf(**view: object) -> Observed:
    dev = ObservedDevice(name="leaf01", role="switch", dialect="test")
    base = {
        "mtu_bytes": Val(9216, SRC),
        "pfc_priorities": Val((3,), SRC),
        "pfc_watchdog": Val(True, SRC),
        "trust": Val("dscp", SRC),
        "dscp_to_tc": Val({26: 3, 48: 6}, SRC),
        "dscp_default_tc": 0,
    }
    base.update(view)
    dev.defaults = PortView(**base)  # type: ignore[arg-type]
    dev.schedulers = {6: Val("strict", SRC), 3: Val("dwrr", SRC), 0: Val("dwrr", SRC)}
    dev.settle_defaults()
    return Observed(devices={"leaf01": dev})


def _run(fabric: Fabric, obs: Observed, check: str) -> list[Finding]:
    ctx = CheckContext(fabric, load_catalog(), obs)
    return [f for f in run_checks(ctx, category="verify") if f.check == check]


def _ecn(lo: int, hi: int, enabled: bool = True) -> list[EcnObs]:
    return [
        EcnObs(queue=3, kmin_bytes=lo, kmax_bytes=hi, probability_pct=100, enabled=enabled, src=SRC)
    ]


def test_good_leaf_passes_every_verify_check(fabric: Fabric) -> None:
    obs = _leaf(ecn=_ecn(150_000, 1_500_000))
    ctx = CheckContext(fabric, load_catalog(), obs)
    bad = [f for f in run_checks(ctx, category="verify") if f.severity != "info"]
    assert bad == []


@pytest.mark.parametrize(
    ("lo", "hi", "enabled", "severity", "words"),
    [
        (1_500_000, 150_000, True, "error", "Kmin above Kmax"),
        (300 * 1024, 300 * 1024, True, "info", "step marking"),
        (150_000, 1_500_000, False, "warning", "WRED drops"),
        (5_000, 200_000, True, "warning", "Kmin below two jumbo frames"),  # DCQCN paper at 40G
    ],
)
def test_ecn_rules(
    fabric: Fabric, lo: int, hi: int, enabled: bool, severity: str, words: str
) -> None:
    (f,) = _run(fabric, _leaf(ecn=_ecn(lo, hi, enabled)), "verify.ecn-thresholds")
    assert f.severity == severity and words in f.message


def test_ecn_missing_on_the_roce_queue(fabric: Fabric) -> None:
    other = [
        EcnObs(
            queue=0,
            kmin_bytes=150_000,
            kmax_bytes=1_500_000,
            probability_pct=100,
            enabled=True,
            src=SRC,
        )
    ]
    (f,) = _run(fabric, _leaf(ecn=other), "verify.ecn-thresholds")
    assert "no ECN marking on queue 3" in f.message


@pytest.mark.parametrize(("headroom", "hit"), [(10_000, True), (60_000, False)])
def test_headroom_against_the_unavoidable_bytes(fabric: Fabric, headroom: int, hit: bool) -> None:
    # leaf01's uplinks: 400G over 50 m. Unavoidable: 2 frames of 9216+22, a PAUSE frame (84 B)
    # and the cable round trip, 2 x 50 m x 5 ns/m x 50 B/ns = 25,000 B: 43,560 B in all
    obs = _leaf(ecn=_ecn(150_000, 1_500_000), headroom_bytes=Val(headroom, SRC))
    found = [f for f in _run(fabric, obs, "verify.pfc-headroom") if "Ethernet3" in f.target]
    assert bool(found) is hit
    if hit:
        assert found[0].expected == 2 * (9216 + 22) + 84 + 25_000


def test_cnp_on_a_dwrr_queue_and_on_the_roce_class(fabric: Fabric) -> None:
    obs = _leaf(ecn=_ecn(150_000, 1_500_000), dscp_to_tc=Val({26: 3, 48: 3}, SRC))
    (f,) = _run(fabric, obs, "verify.cnp-priority")
    assert "shares the RoCE class" in f.message
    obs = _leaf(ecn=_ecn(150_000, 1_500_000), dscp_to_tc=Val({26: 3, 48: 0}, SRC))
    (f,) = _run(fabric, obs, "verify.cnp-priority")
    assert "queue 0 is scheduled dwrr, not strict" in f.message


def test_trust_pcp_breaks_the_chain(fabric: Fabric) -> None:
    obs = _leaf(ecn=_ecn(150_000, 1_500_000), trust=Val("pcp", SRC))
    found = _run(fabric, obs, "verify.dscp-chain")
    assert any("classifies on pcp" in f.message and f.severity == "error" for f in found)
