"""Optics DOM gauges from Prometheus become a TransceiverModule, so the optics verdicts judge
them as they judge an ``ethtool -m`` capture.

Known answer (the cumulus-docs SFP-10G-SR thresholds, tests/fixtures/evidence/ethtool-module):
low alarm -20.00 dBm, low warning -18.01 dBm. A lane at -21.5 dBm is below the low alarm: the
optics verdict must name swp1 and its -21.5 dBm; a lane at -2.66 dBm (the capture's own value)
is inside the thresholds and gives no optics finding. A dark lane (-Inf) reads as 0 mW."""

from __future__ import annotations

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.evidence.ethtool_module import TransceiverModule
from aifabric.monitor.fleet import prometheus_captures

from .test_fleet import AT, START, FakeProm, s


def _dom(rx: float, lane2: float = -2.0) -> list:  # type: ignore[type-arg]
    t = AT
    dbm = "aifabric_optics_rx_power_threshold_dbm"
    return [
        s("aifabric_optics_rx_power_dbm", rx, t, node="h1", interface="swp1", lane="1"),
        s("aifabric_optics_rx_power_dbm", lane2, t, node="h1", interface="swp1", lane="2"),
        s("aifabric_optics_tx_bias_amperes", 0.0066, t, node="h1", interface="swp1", lane="1"),
        s("aifabric_optics_temperature_celsius", 41.5, t, node="h1", interface="swp1"),
        s(dbm, -20.0, t, node="h1", interface="swp1", level="low_alarm"),
        s(dbm, -18.01, t, node="h1", interface="swp1", level="low_warning"),
        s(dbm, 0.0, t, node="h1", interface="swp1", level="high_alarm"),
        s(dbm, -1.0, t, node="h1", interface="swp1", level="high_warning"),
    ]


def _optics_findings(rx: float, lane2: float = -2.0) -> tuple[TransceiverModule, list[str]]:
    fe = prometheus_captures(
        FakeProm(_dom(rx, lane2), _dom(rx, lane2)), window_s=AT - START, at_s=AT
    )
    mods = [r for c in fe.captures for r in c.result.records if isinstance(r, TransceiverModule)]
    assert len(mods) == 1
    ev = load_evidence([], captures=fe.captures)
    found = [f"{f.check} {f.message}" for f in diagnose(ev).findings if "optic" in f.check]
    return mods[0], found


def test_low_rx_power_against_the_modules_thresholds() -> None:
    mod, found = _optics_findings(-21.5)
    assert mod.interface == "swp1" and mod.temperature_c == 41.5
    assert mod.lanes[0].rx_power_dbm == -21.5
    assert mod.lanes[0].tx_bias_ma == 6.6
    assert mod.thresholds["rx_power_dbm"].low_alarm == -20.0
    assert found and any("-21.5" in f for f in found), found


def test_healthy_power_gives_no_optics_finding() -> None:
    _mod, found = _optics_findings(-2.66)
    assert found == []


def test_dark_lane_is_zero_milliwatts() -> None:
    mod, _found = _optics_findings(-2.66, float("-inf"))
    assert mod.lanes[1].rx_power_dbm is None and mod.lanes[1].rx_power_mw == 0.0
