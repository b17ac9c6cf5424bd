"""Derivers of checks/diagnose/derive_counters.py on values computed by hand.

The small ``ethtool -S`` / hw_counters texts below are test inputs written for the arithmetic
(not captures); the real captures live in tests/fixtures/diagnose/ctr-* with their sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aifabric.checks.diagnose import load_evidence
from aifabric.checks.diagnose.derive_counters import (
    UNNAMED,
    balance,
    growth,
    is_phy_error,
    prio_bytes,
)
from aifabric.perf.ecmp import ecmp_expected_max

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _derived(paths: list[Path], rtype: str) -> list[Any]:
    ev = load_evidence(paths)
    return [i.record for i in ev.items if i.record.record_type == rtype]


def _dump(iface: str, counters: dict[str, int]) -> str:
    body = "".join(f"     {k}: {v}\n" for k, v in counters.items())
    return f"# ethtool -S {iface}\nNIC statistics:\n{body}"


# -- pure helpers -----------------------------------------------------------------------------


def test_growth_skips_resets_missing_and_non_integers() -> None:
    first = {"a": 5, "b": 10, "c": None, "e": 1}
    last = {"a": 7, "b": 4, "c": 3, "d": 2, "e": 1}
    # a: 7-5; b went down (reset); c was N/A; d is new; e did not move
    assert growth(first, last) == {"a": 2, "e": 0}


def test_prio_bytes_sums_rx_and_tx_bytes_per_priority() -> None:
    per_prio = {
        0: {"rx_prio0_bytes": 100, "tx_prio0_bytes": 50, "rx_prio0_packets": 9},
        3: {"rx_prio3_pause": 4},  # no bytes counter: not a traffic figure
    }
    assert prio_bytes(per_prio) == {0: 150}


def test_balance_over_ports_carrying_traffic() -> None:
    ports, hi, lo = balance({"a": 100, "b": 100, "c": 100, "d": 300, "e": 0})
    # four busy ports, mean 600/4 = 150: max 300/150 = 2.0, min 100/150 = 0.667
    assert ports == 4
    assert hi == pytest.approx(2.0)
    assert lo == pytest.approx(2 / 3)
    assert balance({"a": 0}) == (0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("name", "phy"),
    [
        ("rx_crc_errors_phy", True),
        ("rx_symbol_err_phy", True),
        ("rx_pcs_symbol_err", True),
        ("rx_fec_uncorrectable", True),
        ("rx_frame_errors", True),
        ("rx_tcp_checksum_errs", False),
        ("roce_drops_crc", False),
        ("rx_dropped", False),
    ],
)
def test_is_phy_error(name: str, phy: bool) -> None:
    assert is_phy_error(name) is phy


# -- prio_traffic -----------------------------------------------------------------------------

_PRIO_A = {
    "rx_prio0_bytes": 1000,
    "tx_prio0_bytes": 500,
    "rx_prio3_bytes": 100,
    "tx_prio3_bytes": 0,
    "rx_prio3_pause": 7,
}
_PRIO_B = {
    "rx_prio0_bytes": 1600,
    "tx_prio0_bytes": 900,
    "rx_prio3_bytes": 100,
    "tx_prio3_bytes": 0,
    "rx_prio3_pause": 7,
}


def test_prio_traffic_single_snapshot(tmp_path: Path) -> None:
    f = tmp_path / "eth.txt"
    f.write_text(_dump("eth2", _PRIO_A))
    [rec] = _derived([f], "prio_traffic")
    # prio 0: 1000 + 500 = 1500, prio 3: 100; share 1500 / 1600 = 0.9375
    assert rec.bytes_by_prio == {0: 1500, 3: 100}
    assert (rec.top_prio, rec.top_share, rec.share_pct) == (0, 0.9375, 93)
    assert (rec.pfc_pause, rec.pfc_counters, rec.basis) == (7, True, "snapshot")


def test_prio_traffic_growth_between_two_snapshots(tmp_path: Path) -> None:
    f = tmp_path / "eth.txt"
    f.write_text(_dump("eth2", _PRIO_A) + _dump("eth2", _PRIO_B))
    [rec] = _derived([f], "prio_traffic")
    # prio 0 grew 600 + 400 = 1000, prio 3 not at all; no new pause frame
    assert rec.bytes_by_prio == {0: 1000, 3: 0}
    assert (rec.top_prio, rec.top_share, rec.pfc_pause) == (0, 1.0, 0)
    assert (rec.basis, rec.snapshots, rec.interface) == ("growth", 2, "eth2")


def test_prio_traffic_nameless_paste_inherits_the_interface() -> None:
    # byteps#179: `ethtool -S enp178s0f0 |grep prio` pasted twice, the second without a name
    path = FIX / "evidence/ethtool-stats/mlx5-grep-prio-before-after-byteps/input.txt"
    [rec] = _derived([path], "prio_traffic")
    # rx 88171136852706 - 88034564921216 = 136571931490
    # tx 14043243801718 - 13906677385186 = 136566416532
    assert rec.interface == "enp178s0f0"
    assert rec.basis == "growth"
    assert rec.bytes_by_prio[0] == 136571931490 + 136566416532 == 273138348022
    assert rec.pfc_counters is False


# -- rdma_loss --------------------------------------------------------------------------------


def _hw(values: dict[str, int]) -> str:
    base = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters"
    return "".join(f"{base}/{k}:{v}\n" for k, v in values.items())


def test_rdma_loss_growth_over_two_files_of_one_host(tmp_path: Path) -> None:
    host = tmp_path / "bundle" / "gpu-1"
    host.mkdir(parents=True)
    (host / "1-hw.txt").write_text(
        _hw({"local_ack_timeout_err": 10, "out_of_sequence": 5, "packet_seq_err": 0})
    )
    (host / "2-hw.txt").write_text(
        _hw({"local_ack_timeout_err": 25, "out_of_sequence": 5, "packet_seq_err": 3})
    )
    [rec] = _derived([tmp_path / "bundle"], "rdma_loss")
    # 25 - 10 = 15, 5 - 5 = 0 (left out), 3 - 0 = 3
    assert rec.counters == {"local_ack_timeout_err": 15, "packet_seq_err": 3}
    assert (rec.total, rec.basis, rec.device) == (18, "growth", "mlx5_0/1")
    assert rec.summary == "local_ack_timeout_err 15, packet_seq_err 3"


def test_rdma_loss_single_snapshot_totals(tmp_path: Path) -> None:
    f = tmp_path / "hw.txt"
    f.write_text(_hw({"local_ack_timeout_err": 2705, "np_cnp_sent": 1333}))
    [rec] = _derived([f], "rdma_loss")
    assert (rec.counters, rec.total, rec.basis) == (
        {"local_ack_timeout_err": 2705},
        2705,
        "snapshot",
    )


# -- nic_rx_pressure --------------------------------------------------------------------------

_RX_A = {"tx_pause_ctrl_phy": 12, "rx_discards_phy": 30, "rx_out_of_buffer": 4, "rx_bytes": 9}
_RX_B = {"tx_pause_ctrl_phy": 20, "rx_discards_phy": 30, "rx_out_of_buffer": 9, "rx_bytes": 99}


def test_nic_rx_pressure_snapshot_and_growth(tmp_path: Path) -> None:
    one = tmp_path / "one.txt"
    one.write_text(_dump("ens1", _RX_A))
    [rec] = _derived([one], "nic_rx_pressure")
    assert (rec.tx_pause, rec.rx_discards, rec.out_of_buffer) == (12, 30, 4)
    two = tmp_path / "two.txt"
    two.write_text(_dump("ens1", _RX_A) + _dump("ens1", _RX_B))
    [rec] = _derived([two], "nic_rx_pressure")
    # pause 20 - 12 = 8, discards did not grow, out_of_buffer 9 - 4 = 5
    assert (rec.tx_pause, rec.rx_discards, rec.out_of_buffer, rec.basis) == (8, 0, 5, "growth")


# -- phy_errors -------------------------------------------------------------------------------


def test_phy_errors_growth(tmp_path: Path) -> None:
    a = {"rx_crc_errors_phy": 3, "rx_symbol_err_phy": 0, "link_down_events_phy": 1}
    b = {"rx_crc_errors_phy": 10, "rx_symbol_err_phy": 2, "link_down_events_phy": 1}
    a["rx_tcp_checksum_errs"] = b["rx_tcp_checksum_errs"] = 0
    f = tmp_path / "e.txt"
    f.write_text(_dump("ens2", a) + _dump("ens2", b))
    [rec] = _derived([f], "phy_errors")
    # crc 10 - 3 = 7, symbol 2 - 0 = 2, link down 1 - 1 = 0
    assert rec.errors == {"rx_crc_errors_phy": 7, "rx_symbol_err_phy": 2}
    assert (rec.total, rec.link_down_events, rec.basis) == (9, 0, "growth")


def test_unnamed_interface_is_labelled(tmp_path: Path) -> None:
    f = tmp_path / "e.txt"
    f.write_text("NIC statistics:\n     rx_crc_errors: 4\n     tx_bytes: 1\n")
    [rec] = _derived([f], "phy_errors")
    assert rec.interface == UNNAMED
    assert rec.total == 4


# -- pfc_storm --------------------------------------------------------------------------------


def test_pfc_storm_counts_ports_storms_and_drops() -> None:
    path = FIX / "evidence/pfc-counters/z9332-pfcwd-stats-and-pfc-tx/input.txt"
    [rec] = _derived([path], "pfc_storm")
    # Ethernet4:3 storms 2, drops 56035 + 371184; Ethernet6:3 storms 2, drops 46416 + 361565
    assert rec.ports == ["Ethernet4", "Ethernet6"]
    assert (rec.storms, rec.queues, rec.spread) == (4, [3], "2 ports")
    assert rec.dropped == 56035 + 371184 + 46416 + 361565 == 835200


def test_pfc_storm_keeps_the_last_reading_per_queue() -> None:
    # two runs of the same table: storms 1 (Ethernet36:4) + 1 (Ethernet96:3) + 5 (Ethernet96:4)
    path = FIX / "evidence/pfc-counters/pfcwd-show-stats-status-na/input.txt"
    [rec] = _derived([path], "pfc_storm")
    assert (rec.storms, rec.port_count, rec.queue_list) == (7, 2, "3, 4")


def test_no_storm_record_without_storms() -> None:
    path = FIX / "evidence/pfc-counters/pfcstat-rx-issue5540/input.txt"
    assert _derived([path], "pfc_storm") == []


# -- egress_balance ---------------------------------------------------------------------------


def test_egress_balance_from_switch_queue_counters() -> None:
    path = FIX / "evidence/pfc-counters/queue-counters-multi-asic-namespaces/input.txt"
    [rec] = _derived([path], "egress_balance")
    # Ethernet0 UC0..UC7 Counter/bytes 30..37: 8 * 33.5 = 268 (MC queues left out);
    # Ethernet-BP256 has N/A only, so it carries no measured traffic
    assert rec.loads["Ethernet0"] == 268
    assert "Ethernet-BP256" not in rec.loads
    assert rec.source == "queue-counters"


def test_egress_balance_from_parallel_nic_ports(tmp_path: Path) -> None:
    host = tmp_path / "bundle" / "gpu-2"
    host.mkdir(parents=True)
    for i, tx in enumerate((100, 100, 100, 300)):
        (host / f"eth{i}.txt").write_text(_dump(f"eth{i}", {"tx_bytes_phy": tx, "rx_bytes": 1}))
    [rec] = _derived([tmp_path / "bundle"], "egress_balance")
    # mean 150: max 300 / 150 = 2.0, min 100 / 150 = 0.667, busiest eth3
    assert (rec.ports, rec.max_over_mean, rec.min_over_mean) == (4, 2.0, 0.667)
    assert rec.busiest == "eth3"
    assert rec.hash_expectation == round(ecmp_expected_max(4, 4), 2)
    assert 1.5 < rec.hash_expectation < 3


# -- lossless_drops ---------------------------------------------------------------------------

_QUEUES = """\
     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
---------  -----  --------------  ---------------  -----------  ------------
Ethernet0    UC0             100             1000            9            90
Ethernet0    UC3             200             2000           40           400
Ethernet0    UC4             300             3000            2            20
Ethernet4    UC3             500             5000            7            70
"""
_PFC_RX = """\
   Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
----------  ------  ------  ------  ------  ------  ------  ------  ------
 Ethernet0       5       0       0       0       0       0       0       0
 Ethernet4       0       0       0      11       1       0       0       0
"""


def test_lossless_drops_joins_queue_drops_with_pfc_of_the_same_port(tmp_path: Path) -> None:
    host = tmp_path / "bundle" / "leaf-1"
    host.mkdir(parents=True)
    (host / "queues.txt").write_text(_QUEUES)
    (host / "pfc.txt").write_text(_PFC_RX)
    recs = {r.port: r for r in _derived([tmp_path / "bundle"], "lossless_drops")}
    # Ethernet0: UC3 40 + UC4 2 = 42 dropped (UC0 is lossy), PFC3 + PFC4 = 0 (PFC0 is lossy)
    assert (recs["Ethernet0"].drops, recs["Ethernet0"].pfc_frames) == (42, 0)
    assert recs["Ethernet0"].queues == "UC3, UC4"
    # Ethernet4: 7 dropped on UC3 while PFC3 + PFC4 = 11 + 1 = 12 pause frames were received
    assert (recs["Ethernet4"].drops, recs["Ethernet4"].pfc_frames) == (7, 12)


def test_lossless_drops_needs_pfc_counters_of_the_port(tmp_path: Path) -> None:
    f = tmp_path / "queues.txt"
    f.write_text(_QUEUES)
    assert _derived([f], "lossless_drops") == []


def test_lossless_drops_from_nvue_roce_counters() -> None:
    path = FIX / "evidence/nvue/show-interface-roce-counters/input.txt"
    [rec] = _derived([path], "lossless_drops")
    # rx-roce-stats no-buffer-discard 0 + tx-roce-stats unicast-no-buffer-discard 663060754115;
    # the non-RoCE discards (55) and the CNP discards (tx-cnp-stats, 0) are not RoCE data
    assert (rec.port, rec.drops, rec.pfc_frames) == ("swp16", 663060754115, 0)
    assert rec.ecn_marked == 693777677344


# -- egress_balance from show interfaces counters (port-counters) ------------------------------

_PORTSTAT = FIX / "evidence/pfc-counters"


def test_egress_balance_from_portstat_tx_ok() -> None:
    [rec] = _derived([_PORTSTAT / "portstat-fg-ecmp-issue5648/input.txt"], "egress_balance")
    # TX_OK 100, 0, 0, 0, 1, 1: three ports carry traffic, mean 102 / 3 = 34
    assert (rec.source, rec.unit, rec.basis) == ("port-counters", "packets", "snapshot")
    assert (rec.ports, rec.max_over_mean, rec.min_over_mean) == (3, 2.941, 0.029)
    assert (rec.busiest, rec.busiest_load) == ("Ethernet0", 100)
    # E[max]/mean of 3 flows on 3 links (Monte Carlo, fixed seed) 1.885: 2.941 / 1.885 = 1.56
    assert rec.hash_expectation == round(ecmp_expected_max(3, 3), 2) == 1.89
    assert 1.55 < rec.excess_over_hashing < 1.57


def test_egress_balance_leaves_out_admin_and_oper_down_ports() -> None:
    path = _PORTSTAT / "portstat-multi-asic-display-all-pr1013/input.txt"
    [rec] = _derived([path], "egress_balance")
    # Ethernet8/12 are X (admin down); 88 + 48 + 48 + 84 = 268, mean 67: 88/67, 48/67
    assert set(rec.loads) == {"Ethernet0", "Ethernet4", "Ethernet16", "Ethernet20"}
    assert (rec.ports, rec.max_over_mean, rec.min_over_mean) == (4, 1.313, 0.716)
    # every port of this paste is D (oper down): no balance at all
    assert _derived([_PORTSTAT / "portstat-huge-counters-pr676/input.txt"], "egress_balance") == []


def test_egress_balance_from_two_portstat_readings(tmp_path: Path) -> None:
    host = tmp_path / "bundle" / "leaf-1"
    host.mkdir(parents=True)
    header = (
        "      IFACE    STATE    RX_OK    RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR"
        "    TX_OK    TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
    )

    def table(tx: tuple[int, ...]) -> str:
        rows = "".join(
            f"  Ethernet{4 * i}  U  0  N/A  N/A  0  0  0  {v}  N/A  N/A  0  0  0\n"
            for i, v in enumerate(tx)
        )
        return header + rows

    (host / "a-counters.txt").write_text(table((1000, 1000, 1000, 1000)))
    (host / "b-counters.txt").write_text(table((1100, 1100, 1100, 1500)))
    [rec] = _derived([tmp_path / "bundle"], "egress_balance")
    # growth 100, 100, 100, 500: mean 200, max 2.5, min 0.5
    assert (rec.basis, rec.snapshots) == ("growth", 2)
    assert rec.loads == {"Ethernet0": 100, "Ethernet4": 100, "Ethernet8": 100, "Ethernet12": 500}
    assert (rec.max_over_mean, rec.min_over_mean, rec.busiest_load) == (2.5, 0.5, 500)
