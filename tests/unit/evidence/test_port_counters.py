"""SONiC ``show interfaces counters`` / ``portstat`` tables → ``port-counters`` records; values
read by hand from the real captures in tests/fixtures/evidence/pfc-counters/portstat-*."""

from __future__ import annotations

from typing import Any

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.switch_counters import PortCounters
from tests.unit.evidence.fixtures import case, load

KIND = "pfc-counters"


def _ports(name: str) -> list[Any]:
    res = load(KIND, name)
    assert not res.warnings
    return [r for r in res.records if isinstance(r, PortCounters)]


def test_detects_portstat_as_switch_counters() -> None:
    assert detect_kind(case(KIND, "portstat-fg-ecmp-issue5648").text()) == KIND
    assert detect_kind(case(KIND, "portstat-old-states-na-pr130").text()) == KIND


def test_new_states_rates_and_counts() -> None:
    recs = _ports("portstat-fg-ecmp-issue5648")
    assert [r.port for r in recs] == [f"Ethernet{i}" for i in range(0, 24, 4)]
    e0 = recs[0]
    assert (e0.state, e0.up, e0.rx_ok, e0.tx_ok, e0.tx_bps, e0.tx_util) == (
        "U", True, 0, 100, 640.70, 0.0,
    )  # fmt: skip
    assert [r.tx_ok for r in recs] == [100, 0, 0, 0, 1, 1]
    assert e0.counters["TX_DRP"] == 0 and e0.rx_bps == 0.0


def test_blank_line_after_every_row_and_megabytes() -> None:
    recs = _ports("portstat-400g-util-issue19644")
    assert [r.port for r in recs] == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]
    e0 = recs[0]
    assert e0.rx_ok == 1_910_629_135 and e0.tx_ok == 1_910_628_891
    assert e0.tx_bps == 50908.28e6 and e0.tx_util == 101.82 and e0.rx_drp == 1


def test_old_up_down_states_and_na_rates() -> None:
    recs = _ports("portstat-old-states-na-pr130")
    assert [(r.state, r.up) for r in recs[:2]] == [("DOWN", False), ("UP", True)]
    assert recs[3].tx_ok == 28223 and recs[3].tx_bps is None and recs[3].tx_util is None


def test_admin_down_x_state() -> None:
    recs = _ports("portstat-multi-asic-display-all-pr1013")
    assert [r.up for r in recs] == [True, True, False, False, True, True]
    assert recs[0].tx_bps == 16.30


def test_printall_pps_columns_and_tx_ovr_na() -> None:
    recs = _ports("portstat-a-pps-after-intfstat-issue6834")
    # the intfstat table above (IFACE without STATE) is not a port table
    assert [r.port for r in recs] == ["Ethernet0", "Ethernet1"]
    assert (recs[0].tx_pps, recs[0].rx_pps, recs[0].tx_ovr, recs[0].up) == (0.0, 0.0, None, False)


def test_thirteen_digit_counters() -> None:
    recs = _ports("portstat-huge-counters-pr676")
    assert recs[0].tx_ok == 2_285_404_265_546 and recs[3].tx_ovr == 948_060_651_671


def test_empty_desc_cell_is_restored() -> None:
    # column layout of 'portstat -a' with the DESC column (sonic-net/SONiC#234); the row is
    # written for the empty-cell case
    text = (
        "     IFACE    DESC    STATE    RX_OK        RX_BPS       RX_PPS    RX_UTIL    RX_ERR"
        "    RX_DRP    RX_OVR    TX_OK      TX_BPS      Tx_PPS    TX_UTIL    TX_ERR    TX_DRP"
        "    TX_OVR\n"
        " Ethernet1                U  692,947  2734.32 MB/s  318571.42/s     85.45%         0"
        "       N/A         0        0    0.00 B/s      0.00/s      0.00%         0       N/A"
        "       N/A\n"
    )
    res = parse_text(text, KIND)
    assert not res.warnings
    [rec] = res.records
    assert isinstance(rec, PortCounters)
    assert (rec.description, rec.rx_ok, rec.rx_bps, rec.rx_pps, rec.rx_drp) == (
        None, 692947, 2734.32e6, 318571.42, None,
    )  # fmt: skip


def test_garbage_row_is_one_warning() -> None:
    text = case(KIND, "portstat-fg-ecmp-issue5648").text() + " Ethernet24  what is this\n"
    res = parse_text(text, KIND)
    assert len(res.warnings) == 1
    assert len([r for r in res.records if isinstance(r, PortCounters)]) == 6


def test_markdown_bold_around_a_cell_is_dropped() -> None:
    # sonic-net/SONiC#234 as posted: the reporter wrapped the RX_BPS cell in "**"
    res = load(KIND, "sonic-portstat-desc-pps-markdown-bold")
    assert res.warnings == []
    [rec] = res.records
    assert isinstance(rec, PortCounters)
    assert (rec.port, rec.state, rec.up, rec.description) == ("Ethernet1", "U", True, None)
    assert (rec.rx_ok, rec.rx_bps, rec.rx_pps, rec.rx_util) == (692947, 2734.32e6, 318571.42, 85.45)
    assert (rec.rx_err, rec.rx_drp, rec.tx_ok, rec.tx_drp) == (0, None, 0, None)


def test_table_cut_after_the_receive_columns_is_read_as_far_as_it_goes() -> None:
    res = load(KIND, "portstat-cut-after-rx-chassis-issue5330")
    recs = [r for r in res.records if isinstance(r, PortCounters)]
    assert [r.port for r in recs] == [
        "Ethernet0", "Ethernet-IB0", "Ethernet-Rec0", "Ethernet18", "Ethernet35",
        "Ethernet-IB1", "Ethernet-Rec1",
    ]  # fmt: skip
    assert [(r.up, r.rx_ok) for r in recs if r.port.startswith("Ethernet-IB")] == [
        (True, 4), (True, 3),
    ]  # fmt: skip
    assert all(r.tx_ok is None and r.rx_drp == 0 for r in recs)
