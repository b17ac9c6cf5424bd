"""PFC counters and PFC watchdog tables (SONiC pfcstat / show pfc counters / show pfcwd, NX-OS
show interface priority-flow-control); values read by hand from the real captures."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.sonic_config import PfcWatchdog
from aifabric.evidence.switch_counters import PfcCounters, PfcPortTotals, PfcwdStats
from tests.unit.evidence.fixtures import case, load

KIND = "pfc-counters"


def _sans_lines(records: list[Any]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        j = r.to_json()
        j.pop("line")
        out.append(j)
    return out


def test_z9332_pfcwd_stats_and_tx_table() -> None:
    r = load(KIND, "z9332-pfcwd-stats-and-pfc-tx")
    assert not r.warnings
    stats = {(s.port, s.queue): s for s in r.of_type(PfcwdStats)}
    e4 = stats[("Ethernet4", 3)]
    assert e4.status == "operational" and (e4.storms_detected, e4.storms_restored) == (2, 2)
    assert (e4.tx_ok, e4.tx_drop, e4.rx_ok, e4.rx_drop) == (0, 56035, 14053, 371184)
    assert (e4.rx_last_ok, e4.rx_last_drop) == (8634, 316045) and e4.line == 4
    assert stats[("Ethernet6", 3)].tx_last_drop == 69
    tx = {c.port: c for c in r.of_type(PfcCounters)}
    assert all(c.direction == "tx" for c in tx.values()) and len(tx) == 6
    assert tx["Ethernet6"].frames[3] == 15437 and tx["Ethernet6"].line == 12  # "15,437"
    assert sum(f or 0 for f in tx["Ethernet10"].frames) == 0


def test_pfcwd_stats_status_na_after_stop() -> None:
    r = load(KIND, "pfcwd-show-stats-status-na")
    assert not r.warnings
    stats = r.of_type(PfcwdStats)
    assert len(stats) == 6
    first, after = stats[2], stats[5]
    assert first.port == "Ethernet96" and first.queue == 4 and first.status == "operational"
    assert (first.storms_detected, first.tx_ok, first.tx_drop) == (5, 200, 400)
    assert after.status is None and after.line == 15 and after.rx_drop == 300


def test_pfcstat_rx_all_zero() -> None:
    r = load(KIND, "pfcstat-rx-issue5540")
    assert not r.warnings
    rows = r.of_type(PfcCounters)
    assert [(c.port, c.direction, c.line) for c in rows] == [
        ("Ethernet0", "rx", 5),
        ("Ethernet4", "rx", 6),
    ]
    assert rows[0].frames == (0,) * 8


def test_pfcwd_config_polling_and_ports() -> None:
    r = load(KIND, "pfcwd-config-7050qx")
    assert not r.warnings
    wds = r.of_type(PfcWatchdog)
    assert wds[0].scope == "global" and wds[0].poll_interval_ms == 400
    ports = {w.port: w for w in wds[1:]}
    assert len(ports) == 12
    e44 = ports["Ethernet44"]
    assert e44.action == "drop" and e44.detection_ms == 400 and e44.restoration_ms == 400
    assert e44.history is None and e44.line == 15


def test_multi_asic_elisions_skipped() -> None:
    r = load(KIND, "multi-asic-pfc-tx-backplane")
    assert not r.warnings
    rows = r.of_type(PfcCounters)
    assert [c.port for c in rows][-1] == "Ethernet24" and len(rows) == 7


def test_truncated_row_warns() -> None:
    text = case(KIND, "pfcstat-rx-issue5540").text().rstrip("\n") + "\n Ethernet8       0"
    r = parse_text(text, KIND)
    assert [w.line for w in r.warnings] == [7]
    assert len(r.of_type(PfcCounters)) == 2


def test_malformed_line_in_middle() -> None:
    text = case(KIND, "z9332-pfcwd-stats-and-pfc-tx").text()
    good = parse_text(text, KIND)
    lines = text.split("\n")
    lines.insert(10, "  Ethernet1       0       x       0")
    bad = parse_text("\n".join(lines), KIND)
    assert [w.line for w in bad.warnings] == [11]
    assert _sans_lines(bad.records) == _sans_lines(good.records)


def test_history_table_and_nxos_totals() -> None:
    # Format of sonic-utilities tests/pfcstat_input (show pfc counters --history).
    hist = (
        "     Port    Priority    RX Pause Transitions    Total RX Pause Time US    Recent RX "
        "Pause Time US    Recent RX Pause Timestamp\n"
        "---------  ----------  ----------------------  ------------------------  --------------"
        "-----------  ---------------------------\n"
        "Ethernet0        PFC3                      23                20,000,003                  "
        "2,000,003         05/18/2033, 03:33:20\n"
    )
    r = parse_text(hist, KIND)
    assert not r.warnings
    (h,) = r.records
    assert h.record_type == "pfc-history" and h.priority == 3
    assert h.total_rx_pause_us == 20000003
    nx = (
        "Port               Mode Oper(VL bmap)  RxPPP      TxPPP\n"
        "====================================================================\n"
        "Ethernet1/1        On   On  (8)        1234       56\n"
    )
    r2 = parse_text(nx, KIND)
    (t,) = r2.of_type(PfcPortTotals)
    assert (t.port, t.vl_bitmap, t.rx_pause, t.tx_pause) == ("Ethernet1/1", "8", 1234, 56)


def test_detected_without_kind() -> None:
    for name in (
        "z9332-pfcwd-stats-and-pfc-tx",
        "pfcwd-show-stats-status-na",
        "pfcstat-rx-issue5540",
        "pfcwd-config-7050qx",
        "multi-asic-pfc-tx-backplane",
    ):
        assert detect_kind(case(KIND, name).text()) == KIND


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.from_regex(r"Ethernet[0-9]{1,3}", fullmatch=True), st.lists(
            st.integers(min_value=0, max_value=10**12), min_size=8, max_size=8)),
        min_size=1, max_size=10, unique_by=lambda t: t[0],
    )
)  # fmt: skip
def test_rx_table_round_trips(rows: list[tuple[str, list[int]]]) -> None:
    lines = ["   Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7", "---"]
    lines += [f"{p}  " + "  ".join(f"{v:,}" for v in vals) for p, vals in rows]
    r = parse_text("\n".join(lines), KIND)
    assert not r.warnings
    assert [(c.port, list(c.frames)) for c in r.of_type(PfcCounters)] == rows


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_never_raises(text: str) -> None:
    assert parse_text(text, KIND).kind == KIND
