"""mlxlink parser against real captures."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.mlxlink import (
    MlxlinkBer,
    MlxlinkLink,
    MlxlinkModule,
    MlxlinkTroubleshooting,
    opcode_family,
    parse_ber,
    parse_mlxlink,
    speed_value,
)
from tests.unit.evidence.fixtures import (
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    draw_garbage_insertion,
    load,
    without_lines,
)

KIND = "mlxlink"
CASES = [c for c in all_cases() if c.kind == KIND]


def test_at_least_three_real_fixtures() -> None:
    assert len(CASES) >= 3


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    assert detect_kind(c.text()) == KIND
    res = c.parse()
    assert res.of_type(MlxlinkLink)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("sigcomm26-bluefield3-100g-dac-module-counters", 5),
        ("sigcomm26-bluefield3-100g-dac-module-counters", 40),
        ("bluebanquise-cx5-ib-sdr-cable-speed-not-enabled", 16),
        ("cluster-toolkit-b200-nvlink-xdr-bug-report", 3),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning(KIND, name, after)


def test_bluefield3_dac_two_reports_with_module_and_counters() -> None:
    res = load(KIND, "sigcomm26-bluefield3-100g-dac-module-counters")
    links = res.of_type(MlxlinkLink)
    assert [(lk.device, lk.port, lk.line) for lk in links] == [
        ("/dev/mst/mt41692_pciconf0", "1", 3),
        ("/dev/mst/mt41692_pciconf0.1", "1", 98),
    ]
    link = links[0]
    assert (link.state, link.physical_state, link.speed, link.width) == (
        "Active",
        "LinkUp",
        "100G",
        4,
    )
    assert link.fec == "Standard RS-FEC - RS(528,514)"
    assert (link.loopback, link.auto_negotiation) == ("No Loopback", "ON")
    assert (link.enabled_mask, link.enabled_speeds) == ("0x00000200", ["100G_4X"])
    assert link.cable_speeds == ["100G_4X", "50G_2X", "40G", "25G", "10G", "1G"]
    assert (link.firmware_version, link.amber_version, link.mft_version) == (
        "32.43.2402",
        "3.6",
        "mft 4.30.1-8",
    )
    assert link.is_up
    trouble = res.of_type(MlxlinkTroubleshooting)
    assert [(t.status_opcode, t.group_opcode, t.recommendation) for t in trouble] == [
        (0, None, "No issue was observed")
    ] * 2
    mods = res.of_type(MlxlinkModule)
    assert [m.vendor_sn for m in mods] == ["S2202655321-1", "S2202655321-2"]
    mod = mods[0]
    assert (mod.identifier, mod.vendor_name, mod.vendor_pn, mod.length_m) == (
        "QSFP28",
        "FS",
        "Q28-PC03",
        3.0,
    )
    assert mod.cable_type == "Passive copper cable"
    assert mod.passive_copper
    assert mod.ddm is False
    assert mod.rx_power_dbm == [] and mod.temperature_c is None  # every DOM value N/A
    assert (mod.line, mod.end_line) == (30, 84)
    bers = res.of_type(MlxlinkBer)
    assert [b.time_since_clear_min for b in bers] == [25074.8, 25075.2]
    ber = bers[0]
    assert (ber.effective_errors, ber.raw_errors_per_lane) == (0, [0, 0, 0, 0])
    assert ber.effective_ber == pytest.approx(15e-255)
    assert ber.raw_ber == pytest.approx(15e-255)
    assert (ber.link_down_count, ber.link_error_recovery_count) == (0, 0)
    assert ber.fec == "Standard RS-FEC - RS(528,514)"
    assert (ber.line, ber.end_line) == (86, 94)


def test_connectx5_sdr_with_opcode_25_indented_rst_block() -> None:
    res = load(KIND, "bluebanquise-cx5-ib-sdr-cable-speed-not-enabled")
    (link,) = res.of_type(MlxlinkLink)
    assert (link.device, link.port) == (None, None)
    assert (link.state, link.speed, link.width, link.fec) == ("Active", "IB-SDR", 4, "No FEC")
    assert link.enabled_speeds == ["SDR"] and link.cable_speeds == ["SDR"]
    assert (link.firmware_version, link.mft_version, link.amber_version) == (
        "16.35.4506",
        "mft 4.30.1-113",
        None,
    )
    (trouble,) = res.of_type(MlxlinkTroubleshooting)
    assert (trouble.status_opcode, trouble.group_opcode) == (25, "PHY FW")
    assert trouble.recommendation == "Cable speed not enabled"
    assert trouble.family == "cable compliance code mismatch"
    assert trouble.state == "Active"
    assert (trouble.line, trouble.end_line) == (16, 20)
    assert not res.of_type(MlxlinkModule) and not res.of_type(MlxlinkBer)


def test_nvlink_port_physical_state_na_and_no_cable_speed() -> None:
    res = load(KIND, "cluster-toolkit-b200-nvlink-xdr-bug-report")
    (link,) = res.of_type(MlxlinkLink)
    assert link.device == "/dev/mst/netir10497_00.cc.00_gpu7"
    assert (link.state, link.physical_state, link.speed, link.width) == (
        "Active",
        None,
        "NVLink-XDR",
        2,
    )
    assert link.fec == "Interleaved_Standard_RS_FEC_PLR - (544,514)"
    assert link.enabled_speeds == ["XDR"]
    assert link.cable_speeds is None
    assert link.fields["Physical state"] == "N/A"
    (trouble,) = res.of_type(MlxlinkTroubleshooting)
    assert trouble.status_opcode == 0 and trouble.group_opcode is None


def test_error_lines_are_kept_as_messages() -> None:
    # message text from mstflint mlxlink_main.cpp ("-E- " + exception) and
    # mlxlink_commander.cpp ("\"--show_ber_monitor\" option is not supported for HCA")
    lines = case(KIND, "bluebanquise-cx5-ib-sdr-cable-speed-not-enabled").text().splitlines()
    text = "\n".join([*lines, '-E- "--show_ber_monitor" option is not supported for HCA'])
    res = parse_mlxlink(text)
    (link,) = res.of_type(MlxlinkLink)
    assert link.messages == ['-E- "--show_ber_monitor" option is not supported for HCA']
    assert not res.warnings


def test_command_line_starts_a_new_report_even_without_a_repeat_title() -> None:
    text = case(KIND, "cluster-toolkit-b200-nvlink-xdr-bug-report").text()
    res = parse_text(text + "\n" + text, KIND)
    links = res.of_type(MlxlinkLink)
    assert len(links) == 2
    assert without_lines(links[0].to_json()) == without_lines(links[1].to_json())


def test_ber_and_speed_helpers() -> None:
    assert parse_ber("15E-255") == pytest.approx(1.5e-254)
    assert parse_ber("2E-9") == pytest.approx(2e-9)
    assert parse_ber("N/A") is None
    assert speed_value("IB-HDR") == ("ib", 50.0)
    assert speed_value("NVLink-XDR") == ("ib", 200.0)
    assert speed_value("100G_4X") == ("eth", 100.0)
    assert speed_value("25GbE") == ("eth", 25.0)
    assert speed_value("50G_2X") == ("eth", 50.0)
    assert speed_value("bogus") is None
    assert opcode_family(0) == "no issue"
    assert opcode_family(1024) == "cable is unplugged"
    assert opcode_family(999) == "PHY firmware indication"
    assert opcode_family(5000) == "core/driver indication"


def test_text_without_sections_warns() -> None:
    res = parse_mlxlink("hello\n")
    assert not res.records
    assert len(res.warnings) == 2


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_mlxlink(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inserted_garbage_line_gives_exactly_one_warning(data: st.DataObject) -> None:
    text_cases = [c for c in CASES if '"result"' not in c.text()]  # --json is not line-oriented
    draw_garbage_insertion(data, text_cases, lambda kind: parse_mlxlink)
