"""``ethtool -a`` (802.3x pause parameters) on real captures (tests/fixtures/evidence/ethtool-pause,
each with its ``source:``)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.ethtool_pause import EthtoolPause
from tests.unit.evidence.fixtures import case


def _one(name: str) -> EthtoolPause:
    [rec] = parse_text(case("ethtool-pause", name).text()).records
    assert isinstance(rec, EthtoolPause)
    return rec


def test_pause_off_with_a_space_before_the_colon() -> None:
    rec = _one("insights-enp0s25-autoneg-space")
    assert (rec.interface, rec.autoneg, rec.rx, rec.tx) == ("enp0s25", True, False, False)
    assert not rec.pause_on


def test_requested_but_not_negotiated_is_not_in_effect() -> None:
    # RX/TX on, but the link partner did not agree: the negotiated values decide
    rec = _one("insights-eth0-on-not-negotiated")
    assert (rec.rx, rec.tx, rec.rx_negotiated, rec.tx_negotiated) == (True, True, False, False)
    assert not rec.pause_on


def test_forced_pause_is_in_effect() -> None:
    rec = _one("nfp-lore-fixed-pause-on")
    assert (rec.interface, rec.autoneg, rec.rx, rec.tx) == ("enp1s0np0", False, True, True)
    assert rec.pause_on


def test_error_printed_before_the_header_belongs_to_that_port() -> None:
    rec = _one("insights-wlp3s0-not-supported")
    assert (rec.interface, rec.error, rec.rx) == ("__wlp3s0", "Operation not supported", None)


def test_prompted_capture_and_detection() -> None:
    text = case("ethtool-pause", "openwrt-14988-bpi-r4-negotiated-off").text()
    assert detect_kind(text) == "ethtool-pause"
    assert _one("openwrt-14988-bpi-r4-negotiated-off").interface == "eth2"


def test_json_form() -> None:
    # ethtool --json -a, the layout of ethtool's netlink/pause.c (field names as it prints them)
    doc = [{"ifname": "eth0", "autonegotiate": True, "rx": True, "tx": True,
            "negotiated": {"rx": True, "tx": False},
            "statistics": {"tx_pause_frames": 12, "rx_pause_frames": 0}}]  # fmt: skip
    [rec] = parse_text(json.dumps(doc), "ethtool-pause").records
    assert (rec.rx_negotiated, rec.tx_negotiated, rec.statistics["tx_pause_frames"]) == (
        True, False, 12
    )  # fmt: skip
    assert rec.pause_on


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([
    "Pause parameters for eth0:", "Autonegotiate:  on", "RX:             on", "TX: off",
    "RX negotiated: off", "Statistics:", "  tx_pause_frames: 7", "Cannot get device pause "
    "settings: Operation not supported", "", "junk", "# ethtool -a eth1",
]), max_size=30))  # fmt: skip
def test_any_mix_parses(lines: list[str]) -> None:
    res = parse_text("\n".join(lines) + "\n", "ethtool-pause")
    json.dumps(res.to_json())
