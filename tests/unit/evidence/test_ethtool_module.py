"""ethtool-module: ``ethtool -m`` (SFF-8472, SFF-8636, CMIS) and SONiC transceiver DOM output.

Expected values were read by hand from the captures under
``tests/fixtures/evidence/ethtool-module/``; dBm values computed from mW are 10·log10(mW)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.ethtool_module import TransceiverModule, TransceiverPresence
from tests.unit.evidence.fixtures import case, load

KIND = "ethtool-module"
CASES = [
    "jc-sfp-10g-lr-no-rx-light",
    "jc-sfp-dac-no-dom",
    "netdev-mlx4-qsfp-plus-40g-sr4",
    "netdev-cmis-qsfp-dd-16-lanes",
    "netdev-cmis-los-lol-link-down",
    "sonic-utilities-qsfp28-aoc-dom",
    "sonic-utilities-presence-table",
    "netdev-sfp-1000base-sx-mail-wrapped",
    "netdev-sff8636-qsfp28-power-mode-elided",
    "cumulus-docs-sfp-10g-sr-prompt",
]


def _module(name: str) -> TransceiverModule:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    mods: list[TransceiverModule] = result.of_type(TransceiverModule)
    assert len(mods) == 1
    return mods[0]


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_sff8472_sfp_lr_without_receive_light() -> None:
    m = _module("jc-sfp-10g-lr-no-rx-light")
    assert (m.identifier_code, m.form_factor, m.memory_map) == (0x03, "SFP", "SFF-8472")
    assert m.connector == "0x07 (LC)"
    assert m.vendor_name == "EDGE" and m.vendor_pn == "SFP-10/25GLR-31"
    assert m.vendor_sn == "EO11111111111" and m.date_code == "230619"
    assert m.wavelength_nm == 1310.0
    assert m.lengths_m["SMF"] == 10000.0  # "Length (SMF,km) : 10km"
    assert "Extended: 100G Base-LR4 or 25GBase-LR" in m.transceiver_types
    assert len(m.transceiver_types) == 5
    assert m.temperature_c == 34.99 and m.voltage_v == 3.2995
    [lane] = m.lanes
    assert lane.lane == 1 and lane.tx_bias_ma == 51.494
    assert (lane.tx_power_mw, lane.tx_power_dbm) == (0.8183, -0.87)
    assert (lane.rx_power_mw, lane.rx_power_dbm) == (0.0001, -40.0)
    assert m.dark_lanes == [1]
    assert m.flags["rx_power_low_alarm"] is True
    assert m.flags["rx_power_low_warning"] is True
    assert m.flags["rx_power_high_alarm"] is False
    assert m.flags["tx_bias_high_alarm"] is False
    rx = m.thresholds["rx_power_dbm"]
    assert (rx.high_alarm, rx.low_alarm, rx.high_warning, rx.low_warning) == (
        5.0,
        -16.31,
        2.0,
        -13.3,
    )
    assert m.thresholds["tx_power_dbm"].low_warning == -7.0
    assert m.thresholds["tx_bias_ma"].high_alarm == 110.0
    assert m.thresholds["temperature_c"].low_alarm == -50.0
    assert m.thresholds["voltage_v"].high_warning == 3.465
    assert m.raw["Option"] == (
        "RX_LOS implemented; TX_FAULT implemented; TX_DISABLE implemented; "
        "Retimer or CDR implemented"
    )


def test_sff8472_passive_dac_has_no_dom() -> None:
    m = _module("jc-sfp-dac-no-dom")
    assert m.form_factor == "SFP"
    assert m.connector == "0x21 (Copper pigtail)"
    assert m.vendor_name == "UbiquitiNetworks" and m.vendor_pn == "UDC-2"
    assert m.vendor_rev is None  # "Vendor rev : " printed empty
    assert m.lengths_m["Copper"] == 2.0
    assert len(m.transceiver_types) == 9
    assert m.lanes == [] and m.temperature_c is None and m.thresholds == {}


def test_sff8636_qsfp_plus_one_lit_lane_and_thresholds() -> None:
    m = _module("netdev-mlx4-qsfp-plus-40g-sr4")
    assert m.interface == "eth2"  # from the "# ethtool -m eth2" prompt
    assert m.line == 2 and m.end_line == 120
    assert (m.identifier_code, m.form_factor, m.memory_map) == (0x0D, "QSFP+", "SFF-8636")
    assert m.vendor_name == "AVAGO" and m.vendor_oui == "00:17:6a"
    assert m.vendor_pn == "<REDACTED>"
    assert m.transceiver_types == ["40G Ethernet: 40G Base-SR4"]
    assert m.lengths_m["OM3 50um"] == 100.0
    assert m.wavelength_nm == 850.0
    assert m.temperature_c == 42.17 and m.voltage_v == 3.2917
    assert [ln.lane for ln in m.lanes] == [1, 2, 3, 4]
    l1, l2 = m.lanes[0], m.lanes[1]
    assert l1.tx_bias_ma == 6.662
    assert (l1.tx_power_mw, l1.tx_power_dbm) == (0.7119, -1.48)
    assert (l1.rx_power_mw, l1.rx_power_dbm) == (0.7682, -1.15)
    # "0.0000 mW / -inf dBm": no light → 0 mW and no dBm value
    assert (l2.rx_power_mw, l2.rx_power_dbm, l2.tx_bias_ma) == (0.0, None, 0.0)
    assert m.dark_lanes == [2, 3, 4]
    assert m.lanes[2].flags["tx_bias_high_alarm"] is False  # "(Chan 3)"
    assert m.lanes[3].flags["rx_power_low_warning"] is False  # "(Channel 4)"
    assert len(m.lanes[0].flags) == 12  # bias, tx and rx power x 4 levels
    assert m.flags["temperature_high_alarm"] is False
    rx = m.thresholds["rx_power_dbm"]
    assert (rx.high_alarm, rx.low_alarm, rx.low_warning) == (3.40, -13.51, -9.50)
    assert m.thresholds["tx_power_dbm"].high_alarm is None  # 0.0000 mW / -inf dBm
    assert m.thresholds["tx_bias_ma"].low_alarm == 0.5
    assert m.thresholds["temperature_c"].high_warning == 70.0
    assert m.thresholds["voltage_v"].low_warning == 3.1349
    assert m.raw["Extended identifier description"].count(";") == 2  # three repeated lines


def test_cmis_qsfp_dd_16_lanes_excerpt() -> None:
    m = _module("netdev-cmis-qsfp-dd-16-lanes")
    assert m.interface == "swp11"
    assert (m.identifier_code, m.form_factor, m.memory_map) == (0x18, "QSFP-DD", "CMIS")
    assert m.module_state == "ModuleReady"
    assert m.raw["LowPwrRequestSW"] == "Off"
    assert len(m.lanes) == 16
    # "Rcvr signal avg optical power (Channel 10) : 1.1603 mW / 0.65 dBm" (space before "(")
    assert (m.lanes[9].rx_power_mw, m.lanes[9].rx_power_dbm) == (1.1603, 0.65)
    assert (m.lanes[15].tx_power_mw, m.lanes[15].tx_power_dbm) == (1.3408, 1.27)
    assert m.dark_lanes == []


def test_cmis_los_lol_arrays() -> None:
    m = _module("netdev-cmis-los-lol-link-down")
    assert m.interface == "swp11" and m.module_state == "ModuleReady"
    assert m.line == 3 and m.end_line == 7
    assert len(m.lanes) == 16
    assert all(ln.rx_los for ln in m.lanes)
    assert [ln.tx_los for ln in m.lanes] == [True] * 8 + [False] * 8
    assert [ln.rx_lol for ln in m.lanes] == [True] * 8 + [False] * 8
    assert m.lanes[8].tx_lol is False and m.lanes[7].tx_lol is True


def test_sonic_dom_qsfp28_aoc() -> None:
    m = _module("sonic-utilities-qsfp28-aoc-dom")
    assert (m.interface, m.source, m.present) == ("Ethernet0", "sonic", True)
    assert m.identifier == "QSFP28 or later" and m.form_factor == "QSFP28"
    assert m.vendor_name == "Mellanox" and m.vendor_pn == "MFA1A00-C003"
    assert m.vendor_sn == "MT1706FT02064" and m.date_code == "2017-01-13"
    assert m.lengths_m == {"Cable Assembly": 3.0}
    assert m.transceiver_types == ["10/40G Ethernet Compliance Code: 40G Active Cable (XLPPI)"]
    assert len(m.lanes) == 4
    lane2 = m.lanes[1]
    assert lane2.rx_power_dbm == -0.4871
    assert lane2.rx_power_mw == pytest.approx(10 ** (-0.04871), rel=1e-9)  # ≈ 0.8939 mW
    assert lane2.tx_bias_ma == 6.75 and lane2.tx_power_dbm is None  # AOC: no TX power
    assert m.temperature_c == 30.9258 and m.voltage_v == 3.2824
    rx = m.thresholds["rx_power_dbm"]
    assert (rx.high_alarm, rx.high_warning, rx.low_alarm, rx.low_warning) == (
        3.4001,
        2.4,
        -13.5067,
        -9.5001,
    )
    assert m.thresholds["tx_bias_ma"].low_warning == 1.0
    assert m.thresholds["temperature_c"].low_alarm == -5.0
    assert m.thresholds["voltage_v"].low_warning == 3.1349


def test_sonic_presence_table() -> None:
    result = load(KIND, "sonic-utilities-presence-table")
    rows = result.of_type(TransceiverPresence)
    assert [(r.interface, r.present, r.line) for r in rows] == [
        ("Ethernet0", True, 3),
        ("Ethernet4", False, 4),
        ("Ethernet64", True, 5),
    ]


def test_dbm_computed_from_mw_when_only_mw_printed() -> None:
    text = (
        case(KIND, "netdev-mlx4-qsfp-plus-40g-sr4")
        .text()
        .replace("0.7682 mW / -1.15 dBm", "0.5882 mW")
    )
    lane1 = parse_text(text, KIND).of_type(TransceiverModule)[0].lanes[0]
    assert lane1.rx_power_mw == 0.5882
    assert lane1.rx_power_dbm == pytest.approx(10 * math.log10(0.5882))  # -2.3047 dBm
    assert round(lane1.rx_power_dbm, 2) == -2.30


def _without_lines(mod: TransceiverModule) -> dict[str, object]:
    d = mod.to_json()
    d.pop("line")
    d.pop("end_line")
    return d


def test_garbage_line_in_the_middle_warns_once_and_changes_nothing_else() -> None:
    lines = case(KIND, "netdev-mlx4-qsfp-plus-40g-sr4").text().split("\n")
    clean = parse_text("\n".join(lines), KIND).of_type(TransceiverModule)[0]
    lines.insert(40, "#@!garbage without a colon")
    result = parse_text("\n".join(lines), KIND)
    assert [w.line for w in result.warnings] == [41]
    assert _without_lines(result.of_type(TransceiverModule)[0]) == _without_lines(clean)


def test_unreadable_value_warns_and_keeps_raw() -> None:
    text = (
        case(KIND, "jc-sfp-10g-lr-no-rx-light")
        .text()
        .replace(
            "Laser bias current                        : 51.494 mA",
            "Laser bias current                        : ?? mA",
        )
    )
    result = parse_text(text, KIND)
    [w] = result.warnings
    assert w.line == 34 and "Laser bias current" in w.message
    mod = result.of_type(TransceiverModule)[0]
    assert mod.raw["Laser bias current"] == "?? mA"
    assert mod.lanes[0].tx_power_mw == 0.8183


def test_truncated_capture_keeps_what_was_read() -> None:
    text = case(KIND, "netdev-mlx4-qsfp-plus-40g-sr4").text()
    cut = text[: text.index("Rcvr signal avg optical power(Channel 3)")]
    result = parse_text(cut, KIND)
    mod = result.of_type(TransceiverModule)[0]
    assert [ln.lane for ln in mod.lanes] == [1, 2, 3, 4]  # tx lanes were printed before the cut
    assert mod.lanes[2].rx_power_mw is None and mod.thresholds == {}


_KEY = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll")), min_size=1, max_size=20)
_VAL = st.text(
    alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters=" .-/"),
    max_size=30,
).map(str.strip)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_KEY, _VAL, min_size=1, max_size=12))
def test_unknown_keys_round_trip_through_raw(pairs: dict[str, str]) -> None:
    lines = ["\tIdentifier                                : 0x11 (QSFP28)"]
    lines += [f"\tX {k:<39} : {v}" for k, v in pairs.items()]
    mod = parse_text("\n".join(lines), KIND).of_type(TransceiverModule)[0]
    for k, v in pairs.items():
        assert mod.raw[f"X {k}"] == v


def test_sfp_dump_wrapped_by_a_mailer() -> None:
    m = _module("netdev-sfp-1000base-sx-mail-wrapped")
    assert (m.interface, m.identifier_code, m.memory_map) == ("eth1", 0x03, "SFF-8472")
    assert (
        m.vendor_name == "OPTOWAY" and m.vendor_pn == "SPM-7100AWG" and m.vendor_sn == "154501267"
    )
    assert m.raw["Extended identifier"] == "0x04 (GBIC/SFP defined by 2-wire interface ID)"
    assert m.raw["Transceiver codes"] == "0x00 0x00 0x00 0x01 0x20 0x40 0x0c 0x01 0x00"
    assert m.transceiver_types[0] == "Ethernet: 1000BASE-SX" and len(m.transceiver_types) == 6
    assert m.lengths_m["50um"] == 550.0 and m.lengths_m["62.5um"] == 300.0
    assert m.temperature_c == 41.59 and m.voltage_v == 3.2744
    [lane] = m.lanes
    assert lane.tx_bias_ma == 4.128
    assert (lane.tx_power_mw, lane.tx_power_dbm) == (0.2104, -6.77)
    assert (lane.rx_power_mw, lane.rx_power_dbm) == (0.1683, -7.74)
    t = m.thresholds["temperature_c"]
    assert (t.high_alarm, t.low_alarm, t.high_warning, t.low_warning) == (95.0, -35.0, 85.0, -30.0)
    r = m.thresholds["rx_power_dbm"]
    assert (r.high_alarm, r.low_alarm, r.high_warning, r.low_warning) == (-2.0, -19.0, -3.0, -16.99)
    assert m.thresholds["tx_bias_ma"].high_alarm == 20.0
    assert not any(m.flags.values()) and len(m.flags) == 20
    assert m.end_line == 87


def test_sff8636_three_elided_dumps_around_power_mode_changes() -> None:
    result = load(KIND, "netdev-sff8636-qsfp28-power-mode-elided")
    assert not result.warnings
    mods = result.of_type(TransceiverModule)
    assert [(m.interface, m.form_factor, m.line) for m in mods] == [
        ("swp13", "QSFP28", 2),
        ("swp13", "QSFP28", 20),
        ("swp13", "QSFP28", 38),
    ]
    assert [m.raw["Power set"] for m in mods] == ["Off", "On", "Off"]
    first, low, high = mods
    assert [ln.rx_power_dbm for ln in first.lanes] == [-0.34, -0.40, -0.36, -0.60]
    assert first.lanes[3].tx_power_mw == 0.7739
    assert [(ln.tx_power_mw, ln.tx_power_dbm, ln.rx_power_mw) for ln in low.lanes] == [
        (0.0, None, 0.0)
    ] * 4
    assert low.dark_lanes == [1, 2, 3, 4]
    assert high.lanes[3].rx_power_mw == 0.8785 and high.dark_lanes == []


def test_sfp_plus_on_cumulus_with_prompts() -> None:
    m = _module("cumulus-docs-sfp-10g-sr-prompt")
    assert (m.interface, m.form_factor, m.line, m.end_line) == ("swp10", "SFP", 2, 75)
    assert m.vendor_name == "FINISAR CORP." and m.vendor_pn == "FTLX8574D3BCL"
    assert m.transceiver_types == ["10G Ethernet: 10G Base-SR"]
    assert m.lengths_m["OM3"] == 300.0 and m.wavelength_nm == 850.0
    [lane] = m.lanes
    assert (lane.tx_bias_ma, lane.tx_power_dbm, lane.rx_power_mw) == (8.546, -2.78, 0.5426)
    tx = m.thresholds["tx_power_dbm"]
    assert (tx.high_alarm, tx.low_alarm, tx.high_warning, tx.low_warning) == (0.0, -6.0, -1.0, -5.0)
    assert m.thresholds["rx_power_dbm"].low_alarm == -20.0
    assert m.thresholds["voltage_v"].low_alarm == 2.9


def test_sonic_eeprom_identity_lines_without_their_port_line() -> None:
    # the identity block of a real SONiC eeprom capture, as a window or a grep leaves it (no
    # "EthernetN: SFP EEPROM detected" line, no DOM): still a module, with its vendor fields
    c = case("ethtool-module", "sonic-utilities-qsfp28-aoc-dom")
    keep = ("Vendor ", "Specification compliance", "Nominal Bit Rate", "Connector")
    rows = [ln for ln in c.text().splitlines() if ln.strip().startswith(keep)]
    text = "\n".join(rows) + "\n"
    assert detect_kind(text) == "ethtool-module"
    mods = parse_text(text, "ethtool-module").of_type(TransceiverModule)
    whole = c.parse().of_type(TransceiverModule)[0]
    assert len(mods) == 1
    assert (mods[0].vendor_name, mods[0].vendor_pn, mods[0].vendor_sn) == (
        whole.vendor_name, whole.vendor_pn, whole.vendor_sn,
    )  # fmt: skip
    assert mods[0].vendor_name


def test_two_vendor_lines_are_not_a_module() -> None:
    with pytest.raises(InputError):
        detect_kind("Vendor Name: ACME\nVendor PN: 1234\nsome other text here\n")
