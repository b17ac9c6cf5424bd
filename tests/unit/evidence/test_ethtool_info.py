"""ethtool-info: ``ethtool IFACE`` and ``ethtool -i IFACE``.

Expected values were read by hand from the captures under
``tests/fixtures/evidence/ethtool-info/``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import decode_capture, detect_kind, detect_scores, parse_text
from aifabric.evidence.ethtool_info import EthtoolDriver, EthtoolLink
from tests.unit.evidence.fixtures import (
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    draw_garbage_insertion,
    load,
)

KIND = "ethtool-info"
CASES = [
    "captured-virtio-link",
    "captured-virtio-driver",
    "ethq-mlx5-connectx4lx-driver",
    "openshift-checks-i40e-driver",
    "aqc111-1g-link-prompt",
    "rtl8126-link-down-unknown",
]


def _one(name: str, cls: type[EthtoolDriver] | type[EthtoolLink]) -> EthtoolDriver | EthtoolLink:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    assert len(result.records) == 1
    rec = result.records[0]
    assert isinstance(rec, cls)
    return rec


def _driver(name: str) -> EthtoolDriver:
    rec = _one(name, EthtoolDriver)
    assert isinstance(rec, EthtoolDriver)
    return rec


def _link(name: str) -> EthtoolLink:
    rec = _one(name, EthtoolLink)
    assert isinstance(rec, EthtoolLink)
    return rec


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_connectx4_lx_driver_firmware_and_prompt_interface() -> None:
    d = _driver("ethq-mlx5-connectx4lx-driver")
    assert (d.interface, d.driver, d.version) == ("p3p1", "mlx5_core", "3.0-1 (January 2015)")
    assert (d.firmware, d.expansion_rom, d.bus_info) == ("14.23.1020", None, "0000:af:00.0")
    assert d.supports == {"statistics": True, "test": False, "eeprom-access": False,
                          "register-dump": False, "priv-flags": False}  # fmt: skip
    assert (d.line, d.end_line) == (2, 11)


def test_i40e_firmware_with_spaces_and_bare_command() -> None:
    d = _driver("openshift-checks-i40e-driver")
    assert (d.interface, d.driver, d.version) == ("ens3f0", "i40e", "2.8.20-k")
    assert d.firmware == "6.00 0x800036cb 1.1747.0"
    assert all(d.supports.values()) and len(d.supports) == 5


def test_virtio_driver_empty_firmware_is_none() -> None:
    d = _driver("captured-virtio-driver")
    assert (d.interface, d.driver, d.version, d.firmware) == (None, "virtio_net", "1.0.0", None)
    assert d.bus_info == "0000:00:03.0"


def test_virtio_link_unknown_speed_but_detected() -> None:
    ln = _link("captured-virtio-link")
    assert (ln.interface, ln.speed_mbps, ln.duplex, ln.link_detected) == ("eth0", None, None, True)
    assert (ln.port, ln.autoneg) == ("Other", False)
    assert ln.supported_modes == [] and ln.advertised_modes == []  # "Not reported"


def test_1g_link_with_prompt_and_continuations() -> None:
    ln = _link("aqc111-1g-link-prompt")
    assert (ln.interface, ln.speed_mbps, ln.duplex) == ("eth2", 1000, "Full")
    assert ln.link_detected is True
    assert ln.port == "MII" and ln.autoneg is True
    assert ln.supported_modes == ["100baseT/Full", "1000baseT/Full"]
    assert ln.advertised_modes == ["100baseT/Full", "1000baseT/Full"]
    assert ln.raw["Current message level"] == "0x00000007 (7) drv probe link"
    assert (ln.line, ln.end_line) == (2, 22)


def test_link_down_several_modes_per_line() -> None:
    ln = _link("rtl8126-link-down-unknown")
    assert (ln.speed_mbps, ln.duplex, ln.link_detected) == (None, None, False)
    assert ln.port == "Twisted Pair"
    assert len(ln.supported_modes) == 7 and ln.supported_modes[-1] == "5000baseT/Full"
    assert ln.advertised_modes == ["1000baseT/Full"]


def test_400g_speed_and_two_blocks_in_one_paste() -> None:
    text = (
        "$ ethtool eth1\nCannot get wake-on-lan settings: Operation not permitted\n"
        "Settings for eth1:\n\tSpeed: 400000Mb/s\n\tDuplex: Full\n\tPort: Direct Attach Copper\n"
        "\tLink detected: yes\n$ ethtool -i eth1\ndriver: mlx5_core\nversion: 24.10-1.1.4\n"
        "firmware-version: 28.39.1002 (MT_0000000838)\nbus-info: 0000:1a:00.0\n"
    )
    res = parse_text(text, KIND)
    assert not res.warnings, [str(w) for w in res.warnings]
    [ln] = res.of_type(EthtoolLink)
    [d] = res.of_type(EthtoolDriver)
    assert (ln.interface, ln.speed_mbps, ln.port) == ("eth1", 400000, "Direct Attach Copper")
    assert (d.interface, d.firmware) == ("eth1", "28.39.1002 (MT_0000000838)")


@pytest.mark.parametrize(("name", "after"), [("ethq-mlx5-connectx4lx-driver", 4),
                                              ("aqc111-1g-link-prompt", 5)])  # fmt: skip
def test_a_garbage_line_is_one_warning(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning(KIND, name, after)


def test_other_key_value_text_is_not_ethtool() -> None:
    scores = dict((k, s) for s, k in detect_scores("driver: foo\nname: bar\nvalue: 3\n"))
    assert scores.get(KIND, 0.0) == 0.0
    assert parse_text("driver: x\nspeed: fast\n", KIND).warnings  # unknown key warns


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_garbage_insertion_property(data: st.DataObject) -> None:
    cases = [c for c in all_cases() if c.kind == KIND]
    draw_garbage_insertion(data, cases, lambda kind: lambda text: parse_text(text, kind))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**9 - 1), st.sampled_from(["Full", "Half"]), st.booleans())
def test_speed_round_trips(speed: int, duplex: str, up: bool) -> None:
    text = (f"Settings for ens1f0np0:\n\tSpeed: {speed}Mb/s\n\tDuplex: {duplex}\n"
            f"\tLink detected: {'yes' if up else 'no'}\n")  # fmt: skip
    assert detect_kind(text) == KIND
    [ln] = parse_text(text, KIND).of_type(EthtoolLink)
    assert (ln.speed_mbps, ln.duplex, ln.link_detected) == (speed, duplex, up)


@pytest.mark.parametrize("c", [c for c in all_cases() if c.kind == KIND], ids=lambda c: c.id)
def test_no_break_space_indentation_reads_as_spaces(c: Any) -> None:
    # mail clients and web pages indent with U+00A0 (a real ixgbe capture on intel-wired-lan was
    # indented so): the capture decoded with them reads like the original
    nbsp = c.text().replace("    ", "\u00a0\u00a0 \u00a0").encode("utf-8")
    text = decode_capture(nbsp, "x")
    assert detect_kind(text) == "ethtool-info"
    a, b = c.parse(), parse_text(text, "ethtool-info")
    assert [r.to_json() for r in b.records] == [r.to_json() for r in a.records]
