"""PFC counters and PFC watchdog tables (SONiC pfcstat / show pfc counters / show pfcwd, NX-OS
show interface priority-flow-control); values read by hand from the real captures."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.qos import PfcWatchdog
from aifabric.evidence.switch_counters import (
    PORTSTAT_COLUMNS,
    QUEUESTAT_COLUMNS,
    IndexedCounters,
    PfcCounters,
    PfcPortTotals,
    PfcwdStats,
    PortCounters,
    QueueCounters,
)
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


def test_nxos_n5k_blog_paste_auto_off_without_bitmap() -> None:
    r = load(KIND, "nxos-n5k-auto-off-blog-paste")
    assert not r.warnings
    rows = {p.port: p for p in r.of_type(PfcPortTotals)}
    assert list(rows) == ["Ethernet1/47", "Ethernet1/48", "Ethernet4/15", "Ethernet4/16"]
    e47 = rows["Ethernet1/47"]
    assert (e47.mode, e47.oper, e47.vl_bitmap) == ("Auto", "Off", None)
    assert (e47.rx_pause, e47.tx_pause, e47.line) == (7316, 762946, 6)
    assert rows["Ethernet1/48"].tx_pause == 761362 and rows["Ethernet4/16"].line == 9


def test_sonic_queue_counters_and_trim_tables() -> None:
    r = load(KIND, "sonic-queue-counters-and-trim-cmdref")
    assert not r.warnings
    q = r.of_type(QueueCounters)
    assert len(q) == 60  # 2 ports x 20 queues, then 20 trim rows of Ethernet0
    first = q[0]
    assert (first.port, first.queue, first.queue_type, first.queue_index) == (
        "Ethernet0",
        "UC0",
        "UC",
        0,
    )
    assert (first.tx_pkts, first.drop_bytes, first.line) == (0, 0, 4)
    mc9 = next(x for x in q if x.port == "Ethernet4" and x.queue == "MC9")
    assert mc9.queue_index == 9 and mc9.line == 46
    trim = {x.queue: x for x in q if "Trim/pkts" in x.counters}
    assert len(trim) == 20
    assert trim["UC2"].counters == {"Trim/pkts": 200, "TrimSent/pkts": 100, "TrimDrop/pkts": 100}
    assert trim["UC2"].line == 55 and trim["UC2"].tx_pkts is None
    assert trim["MC9"].counters["Trim/pkts"] is None  # N/A


def test_sonic_wredcounters_blank_line_after_rule() -> None:
    r = load(KIND, "sonic-queue-wredcounters-cmdref")
    assert not r.warnings
    q = r.of_type(QueueCounters)
    assert len(q) == 40 and q[0].line == 5 and q[0].queue == "UC0"  # after the blank
    assert set(q[0].counters) == {
        "WredDrp/pkts",
        "WredDrp/bytes",
        "EcnMarked/pkts",
        "EcnMarked/bytes",
    }
    assert q[0].wred_drop_pkts == 0 and q[0].ecn_marked_pkts == 0


def test_voq_wred_ecn_system_ports() -> None:
    r = load(KIND, "queue-voq-wred-ecn-utilities-test")
    assert not r.warnings
    q = {(x.port, x.queue): x for x in r.of_type(QueueCounters)}
    assert len(q) == 24
    v = q[("testsw|Ethernet0", "VOQ3")]
    assert (v.queue_type, v.queue_index, v.line) == ("VOQ", 3, 6)
    assert (v.wred_drop_pkts, v.counters["WredDrp/bytes"], v.ecn_marked_pkts) == (11, 59, 12)
    assert v.counters["EcnMarked/bytes"] == 94
    assert q[("testsw|Ethernet8", "VOQ3")].ecn_marked_pkts == 70


def test_multi_asic_queue_counters_namespaces() -> None:
    r = load(KIND, "queue-counters-multi-asic-namespaces")
    assert not r.warnings
    q = r.of_type(QueueCounters)
    assert len(q) == 96
    assert q[0].namespace == "asic0" and (q[0].tx_pkts, q[0].drop_pkts) == (68, 56)
    bp0 = next(x for x in q if x.port == "Ethernet-BP0" and x.queue == "UC0")
    assert (bp0.line, bp0.tx_pkts, bp0.tx_bytes, bp0.drop_bytes) == (44, 100, 62, 42)
    last = q[-1]
    assert last.namespace == "asic1" and last.queue == "ALL15" and last.tx_pkts is None


def test_pg_drop_and_watermark_tables() -> None:
    r = load(KIND, "pgdropstat-nonzero-utilities-test")
    assert not r.warnings
    rows = {x.port: x for x in r.of_type(IndexedCounters)}
    e0 = rows["Ethernet0"]
    assert e0.stat == "Ingress PG dropped packets" and e0.line == 4
    assert e0.columns[3] == "PG3" and e0.values[3] == 803
    assert rows["Ethernet8"].values == (100, 101, 102, 103, 104, 105, 106, 107)

    doc = load(KIND, "sonic-pg-watermark-and-drop-cmdref")
    assert not doc.warnings  # Markdown fences and bullets between the examples
    stats = [(x.stat, x.port, x.line) for x in doc.of_type(IndexedCounters)]
    assert stats[0] == ("Ingress shared pool occupancy per PG", "Ethernet0", 5)
    assert stats[-1] == ("Ingress PG dropped packets", "Ethernet12", 35)
    assert len(stats) == 8


def test_queue_counter_tables_detected() -> None:
    for name in (
        "sonic-queue-counters-and-trim-cmdref",
        "queue-voq-wred-ecn-utilities-test",
        "pgdropstat-nonzero-utilities-test",
        "nxos-n5k-auto-off-blog-paste",
    ):
        assert detect_kind(case(KIND, name).text()) == KIND


def test_older_portstat_header_without_state_and_with_rate_columns() -> None:
    """Before 2019 portstat printed ``Iface`` without a STATE column and RX_RATE/TX_RATE for
    the byte rates (the SONiC User Manual's example); values read by hand from the capture."""
    from aifabric.evidence.switch_counters import PortCounters  # noqa: PLC0415

    name = "sonic-manual-portstat-rate-columns"
    assert detect_kind(case(KIND, name).text()) == KIND
    rows = load(KIND, name).of_type(PortCounters)
    assert [r.port for r in rows] == [f"Ethernet{i}" for i in range(0, 28, 4)]
    first = rows[0]
    assert (first.rx_ok, first.rx_drp, first.tx_ok, first.state) == (
        471_729_839_997, 18_682, 409_682_385_925, None,
    )  # fmt: skip
    assert first.rx_bps == 653.87e6 and first.rx_util == 12.77


def test_portstat_rows_without_their_header() -> None:
    # a window of a real capture: only the rows (what a grep or a scroll leaves), read against
    # portstat's standard columns
    c = case("pfc-counters", "portstat-400g-util-issue19644")
    rows = [ln for ln in c.text().splitlines() if ln.strip().startswith("Ethernet")][:3]
    text = "\n".join(rows) + "\n"
    assert detect_kind(text) == "pfc-counters"
    got = parse_text(text, "pfc-counters")
    assert not got.warnings
    ports = got.of_type(PortCounters)
    whole = [p for p in c.parse().of_type(PortCounters)][:3]
    assert [p.port for p in ports] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert [(p.rx_ok, p.tx_ok, p.rx_drp, p.rx_util) for p in ports] == [
        (p.rx_ok, p.tx_ok, p.rx_drp, p.rx_util) for p in whole
    ]
    assert ports[0].rx_ok == 1_910_629_135 and ports[0].rx_bps == 50905.16e6
    assert len(PORTSTAT_COLUMNS) == 14


def _rows_of(kind_case: str, start: str) -> tuple[str, list[str]]:
    c = case("pfc-counters", kind_case)
    rows = [ln for ln in c.text().splitlines() if ln.strip().startswith(start)]
    return c.text(), rows


def test_queue_counter_rows_without_their_header() -> None:
    # rows of a real queuestat capture (what a window or a grep of it leaves): read against
    # queuestat's standard columns, the same numbers as with the header
    whole_text, rows = _rows_of("queue-counters-multi-asic-namespaces", "Ethernet")
    text = "\n".join(rows[:4]) + "\n"
    assert detect_kind(text) == "pfc-counters"
    got = parse_text(text, "pfc-counters")
    assert not got.warnings
    queues = got.of_type(QueueCounters)
    whole = parse_text(whole_text, "pfc-counters").of_type(QueueCounters)[:4]
    assert [(q.port, q.queue, q.tx_pkts, q.drop_pkts) for q in queues] == [
        (q.port, q.queue, q.tx_pkts, q.drop_pkts) for q in whole
    ]
    assert QUEUESTAT_COLUMNS[1] == "TxQ" and len(QUEUESTAT_COLUMNS) == 6


def test_pfcwd_rows_without_their_header() -> None:
    _, rows = _rows_of("pfcwd-show-stats-status-na", "Ethernet")
    text = "\n".join(rows[:3]) + "\n"
    assert detect_kind(text) == "pfc-counters"
    stats = parse_text(text, "pfc-counters").of_type(PfcwdStats)
    assert [(s.port, s.queue, s.storms_detected, s.tx_drop) for s in stats] == [
        ("Ethernet36", 4, 1, 100), ("Ethernet96", 3, 1, 0), ("Ethernet96", 4, 5, 400),
    ]  # fmt: skip


def test_a_few_counter_like_rows_in_prose_are_not_a_capture() -> None:
    # one queue-like row among sentences is not a queuestat paste
    row = "Ethernet12    UC3      1317938061      89619788148            0             0"
    text = f"we saw drops on\n{row}\nthen it stopped and\nnothing else happened here\n"
    with pytest.raises(InputError):
        detect_kind(text)
