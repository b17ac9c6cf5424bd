"""SONiC `show interfaces transceiver status|pm` parsers against real captures and the
sonic-utilities documentation / test expected output."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.sonic_transceiver import (
    PM_PARAMETERS,
    SonicTransceiverPm,
    SonicTransceiverStatus,
    parse_sonic_transceiver_pm,
    parse_sonic_transceiver_status,
)
from tests.unit.evidence.fixtures import (
    all_cases,
    assert_garbage_line_is_one_warning,
    draw_garbage_insertion,
    load,
    without_lines,
)

STATUS = "sonic-transceiver-status"
PM = "sonic-transceiver-pm"
CASES = [c for c in all_cases() if c.kind in (STATUS, PM)]


def test_at_least_three_fixtures_per_kind() -> None:
    assert sum(c.kind == STATUS for c in CASES) >= 3
    assert sum(c.kind == PM for c in CASES) >= 3


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    assert detect_kind(c.text()) == c.kind
    res = c.parse()
    assert res.records
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("kind", "name", "after"),
    [
        (STATUS, "sonic-utilities-docs-ccmis-zr-ethernet100", 30),
        (STATUS, "sonic-buildimage-29494-lumentum-cmis-failed", 10),
        (STATUS, "sonic-utilities-pr3238-cmis-state-ready", 1),
        (PM, "sonic-utilities-docs-zr-ethernet100", 4),
        (PM, "sonic-utilities-pr2927-zr-window-rows", 5),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(
    kind: str, name: str, after: int
) -> None:
    assert_garbage_line_is_one_warning(kind, name, after)


# ---- status ---------------------------------------------------------------------------------


def test_status_cmis_state_ready_single_lane() -> None:
    (rec,) = load(STATUS, "sonic-utilities-pr3238-cmis-state-ready").of_type(SonicTransceiverStatus)
    assert (rec.interface, rec.applicable, rec.cmis_state) == ("Ethernet256", True, "READY")
    assert rec.disabled_tx_channels == 0
    assert list(rec.lanes) == [1]
    lane = rec.lanes[1]
    assert (lane.tx_fault, lane.rx_los, lane.tx_disable) == (False, False, False)
    assert (rec.line, rec.end_line) == (2, 7)


def test_status_qsfp_c_stuck_in_dp_pre_init_with_los_on_four_lanes() -> None:
    (rec,) = load(STATUS, "sonic-utilities-4065-qsfpc-dp-pre-init-rx-los").of_type(
        SonicTransceiverStatus
    )
    assert (rec.interface, rec.cmis_state) == ("Ethernet128", "DP_PRE_INIT_CHECK")
    assert sorted(n for n, ln in rec.lanes.items() if ln.rx_los) == [1, 2, 3, 4]
    assert not any(ln.tx_fault for ln in rec.lanes.values())
    assert [rec.lanes[n].tx_disable for n in range(1, 5)] == [False] * 4
    assert rec.lanes[5].tx_disable is None  # cut in the excerpt
    assert rec.module_state is None


def test_status_lumentum_failed_all_lanes_dark() -> None:
    (rec,) = load(STATUS, "sonic-buildimage-29494-lumentum-cmis-failed").of_type(
        SonicTransceiverStatus
    )
    assert (rec.interface, rec.cmis_state, rec.disabled_tx_channels) == ("Ethernet0", "FAILED", 255)
    assert all(ln.rx_los and ln.tx_disable and ln.tx_fault is False for ln in rec.lanes.values())
    assert len(rec.lanes) == 8
    assert (rec.module_state, rec.module_fault_cause) == ("ModuleReady", "No Fault detected")
    assert (rec.datapath_fw_fault, rec.module_fw_fault, rec.module_state_changed) == (
        False,
        False,
        True,
    )


def test_status_ccmis_docs_example_full() -> None:
    (rec,) = load(STATUS, "sonic-utilities-docs-ccmis-zr-ethernet100").of_type(
        SonicTransceiverStatus
    )
    assert rec.interface == "Ethernet100"
    assert rec.cmis_state is None
    assert (rec.module_state, rec.module_fault_cause) == ("ModuleReady", "No Fault detected")
    assert len(rec.lanes) == 8
    lane = rec.lanes[8]
    assert lane.datapath_state == "DataPathActivated"
    assert lane.config_status == "ConfigSuccess"
    assert (lane.tx_output, lane.rx_output, lane.rx_cdr_lol, lane.dpinit_pending) == (
        False,
        True,
        False,
        False,
    )
    assert rec.flags["Rx power low alarm flag on lane 3"] is False
    assert rec.flags["Prefec ber high alarm flag"] is False
    assert rec.flags["Laser unlocked status"] is False
    assert rec.set_flags() == []
    assert rec.raw["Rxtotpower low alarm flag"] == "False"
    assert (rec.line, rec.end_line) == (2, 279)


def test_status_not_applicable_line() -> None:
    # sfpshow's display_invalid_intf_status(): "<port>: Transceiver status info not applicable"
    res = parse_sonic_transceiver_status("Ethernet0: Transceiver status info not applicable\n")
    (rec,) = res.of_type(SonicTransceiverStatus)
    assert (rec.interface, rec.applicable) == ("Ethernet0", False)
    assert not res.warnings


# ---- pm -------------------------------------------------------------------------------------


def test_pm_docs_example_all_rows() -> None:
    (rec,) = load(PM, "sonic-utilities-docs-zr-ethernet100").of_type(SonicTransceiverPm)
    assert rec.interface == "Ethernet100"
    assert list(rec.params) == list(PM_PARAMETERS)
    tx = rec.params["Tx Power"]
    assert (tx.unit, tx.min, tx.avg, tx.max) == ("dBm", -8.22, -8.23, -8.24)
    assert (tx.high_alarm, tx.high_warning, tx.tca_high) == (-5.0, -6.0, False)
    assert (tx.low_alarm, tx.low_warning, tx.tca_low) == (-16.99, -16.003, False)
    sig = rec.params["Rx Signal Power"]
    assert (sig.min, sig.max, sig.tca_high, sig.tca_low) == (-40.0, 40.0, True, True)
    ber = rec.prefec_ber
    assert ber is not None
    assert (ber.unit, ber.max, ber.high_alarm, ber.high_warning) == (None, 5.76e-4, 1.25e-2, 1.1e-2)
    assert (ber.tca_high, ber.tca_low) == (False, False)  # printed 0.0 by older sfpshow
    roc = rec.params["SOP ROC"]
    assert (roc.high_alarm, roc.tca_high) == (None, None)
    assert rec.params["EVM"].unit == "%"
    assert (rec.line, rec.end_line) == (2, 20)


def test_pm_rows_without_header() -> None:
    (rec,) = load(PM, "sonic-utilities-pr2927-zr-window-rows").of_type(SonicTransceiverPm)
    assert rec.interface is None
    assert list(rec.params) == list(PM_PARAMETERS[3:13])
    cfo = rec.params["CFO"]
    assert (cfo.min, cfo.avg, cfo.max, cfo.low_alarm) == (-768.0, -660.0, -561.0, -3800.0)
    post = rec.params["Post-FEC BER"]
    assert (post.max, post.high_alarm, post.high_warning) == (0.0, 1000.0, 1.0)
    assert not any(p.tca_high or p.tca_low for p in rec.params.values())


def test_pm_not_applicable() -> None:
    (rec,) = load(PM, "sonic-utilities-pr2615-not-applicable").of_type(SonicTransceiverPm)
    assert (rec.interface, rec.applicable, rec.params) == ("Ethernet0", False, {})


def test_pm_test_mock_matches_docs_except_alert_cells() -> None:
    mock = load(PM, "sonic-utilities-test-mock-qsfp-dd-ethernet44").of_type(SonicTransceiverPm)[0]
    docs = load(PM, "sonic-utilities-docs-zr-ethernet100").of_type(SonicTransceiverPm)[0]
    assert mock.interface == "Ethernet44"
    assert without_lines(mock.to_json()["params"]) == without_lines(docs.to_json()["params"])


# ---- properties -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_sonic_transceiver_status(text)
    parse_sonic_transceiver_pm(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inserted_garbage_line_gives_exactly_one_warning(data: st.DataObject) -> None:
    parsers = {STATUS: parse_sonic_transceiver_status}
    draw_garbage_insertion(
        data, CASES, lambda kind: parsers.get(kind, parse_sonic_transceiver_pm)
    )
