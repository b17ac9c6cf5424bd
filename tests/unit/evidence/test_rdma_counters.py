"""RDMA counter listings and rdma statistic: real captures and variants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.rdma_counters import RdmaCounters, parse_rdma_counters
from tests.unit.evidence.fixtures import case, load

KIND = "rdma-hw-counters"
CASES = (
    "iproute2-stat-show-cover-letter",
    "omnipath-hfi1-printf-netdata-9091",
    "i40iw-grep-na-no-pma-node-exporter-966",
    "lore-netdev-qp-show-rocep-quoted",
    "lore-optional-counters-mode-rocep8s0f0",
)


def test_detect_every_fixture() -> None:
    for name in CASES:
        assert detect_kind(case(KIND, name).text()) == KIND, name


def test_rdma_stat_show_wrapped_and_p_form() -> None:
    res = load(KIND, "iproute2-stat-show-cover-letter")
    assert res.warnings == []
    one, table = res.records
    assert isinstance(one, RdmaCounters) and isinstance(table, RdmaCounters)
    for rec in (one, table):
        assert (rec.device, rec.port, rec.source) == ("mlx5_0", 1, "rdma-statistic")
        assert len(rec.counters) == 21
        assert rec.counters["np_cnp_sent"] == 0 and rec.counters["out_of_buffer"] == 0
        assert rec.congestion["np_ecn_marked_roce_packets"] == 0
        assert rec.nonzero_errors() == {}
    assert one.counters == table.counters
    assert one.line == 2 and one.counter_lines["np_cnp_sent"] == 8
    assert one.counter_lines["out_of_buffer"] == 3  # value wrapped onto the next line
    assert table.line == 11 and table.counter_lines["np_cnp_sent"] == 32


def test_omnipath_bare_columns_under_cd() -> None:
    res = load(KIND, "omnipath-hfi1-printf-netdata-9091")
    assert res.warnings == []
    (rec,) = res.records
    assert isinstance(rec, RdmaCounters)
    assert (rec.device, rec.port, rec.source) == ("hfi1_0", 1, "sysfs-hw_counters")
    assert len(rec.counters) == 37
    assert rec.counters["RcResend"] == 2079 and rec.counter_lines["RcResend"] == 12
    assert rec.nonzero_errors() == {"PktDrop": 134, "RcResend": 2079}


def test_i40iw_na_no_pma() -> None:
    res = load(KIND, "i40iw-grep-na-no-pma-node-exporter-966")
    assert res.warnings == []
    (rec,) = res.records
    assert isinstance(rec, RdmaCounters)
    assert (rec.device, rec.port, rec.source) == ("i40iw0", 1, "sysfs-counters")
    assert len(rec.counters) == 8
    assert rec.counters["port_rcv_errors"] is None
    assert rec.line == 3 and rec.end_line == 10
    assert rec.errors == {}


def test_garbled_line_in_listing() -> None:
    text = case(KIND, "omnipath-hfi1-printf-netdata-9091").text()
    clean = parse_rdma_counters(text).records[0]
    lines = text.split("\n")
    lines.insert(10, "@@ garbage ##")  # line 11
    res = parse_rdma_counters("\n".join(lines))
    assert [w.line for w in res.warnings] == [11]
    assert len(res.records) == 1
    assert res.records[0].counters == clean.counters  # type: ignore[attr-defined]


def test_truncated_link_line() -> None:
    text = case(KIND, "iproute2-stat-show-cover-letter").text()
    cut = "\n".join(text.split("\n")[:2]) + "\n"  # "... rx_atomic_requests" without its value
    res = parse_rdma_counters(cut)
    assert len(res.warnings) == 1 and res.warnings[0].line == 2
    assert res.records[0].counters["rx_read_requests"] == 0  # type: ignore[attr-defined]


def test_grep_paths_and_qp_counters() -> None:
    text = (
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:3773741\n"
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:12\n"
        "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent:4232220\n"
        "link mlx5_2/1 cntn 4 qp-type RC pid 30233 comm ib_send_bw rx_write_requests 0 "
        "out_of_sequence 5 LQPN: <178 181>\n"
    )
    res = parse_rdma_counters(text)
    assert res.warnings == []
    a, b, qp = res.records
    assert isinstance(a, RdmaCounters) and isinstance(qp, RdmaCounters)
    assert a.device == "mlx5_0" and a.congestion == {"np_cnp_sent": 3773741}
    assert a.errors == {"out_of_sequence": 12}
    assert b.device == "mlx5_1"  # type: ignore[attr-defined]
    assert qp.source == "rdma-statistic-qp"
    assert qp.attributes == {
        "cntn": "4",
        "qp-type": "RC",
        "pid": "30233",
        "comm": "ib_send_bw",
        "lqpn": "178 181",
    }
    assert qp.counters == {"rx_write_requests": 0, "out_of_sequence": 5}


@given(st.text(max_size=400))
@settings(max_examples=150, deadline=None)
def test_never_raises(text: str) -> None:
    parse_rdma_counters(text)


def test_qp_show_and_rocep_link_in_a_double_mail_quote() -> None:
    res = load(KIND, "lore-netdev-qp-show-rocep-quoted")
    assert res.warnings == []
    qp, one, table = res.records
    assert isinstance(qp, RdmaCounters) and isinstance(one, RdmaCounters)
    assert isinstance(table, RdmaCounters)
    assert (qp.device, qp.port, qp.source) == ("mlx5_2", 1, "rdma-statistic-qp")
    assert qp.attributes == {"cntn": "5", "pid": "31609", "comm": "client.1", "lqpn": "178"}
    assert len(qp.counters) == 18 and qp.counters["out_of_sequence"] == 0
    assert qp.line == 3 and qp.counter_lines["req_cqe_flush_error"] == 9
    for rec in (one, table):
        assert (rec.device, rec.port, rec.source) == ("rocep1s0f5", 1, "rdma-statistic")
        assert len(rec.counters) == 21 and "out_of_sequence" not in rec.counters
        assert rec.congestion == {
            "rp_cnp_ignored": 0,
            "rp_cnp_handled": 0,
            "np_ecn_marked_roce_packets": 0,
            "np_cnp_sent": 0,
        }
    assert one.line == 12 and one.counter_lines["np_cnp_sent"] == 15
    assert table.line == 17 and table.counter_lines["np_cnp_sent"] == 38
    assert one.counters == table.counters


def test_statistic_mode_lines_are_not_counter_sets() -> None:
    res = load(KIND, "lore-optional-counters-mode-rocep8s0f0")
    assert res.warnings == []
    (rec,) = res.records
    assert isinstance(rec, RdmaCounters)
    assert (rec.device, rec.port, rec.line, rec.end_line) == ("rocep8s0f0", 1, 10, 17)
    assert len(rec.counters) == 30
    assert rec.counters["cc_rx_ce_pkts"] == 0 and rec.counter_lines["cc_rx_cnp_pkts"] == 17
    assert rec.counters["roce_adp_retrans_to"] == 0 and "roce_adp_retrans" in rec.errors


def test_rdma_json_statistic_show() -> None:
    # ``rdma -j statistic show`` shape: one object per port, counters as keys.
    text = (
        '[{"ifindex":0,"ifname":"mlx5_0","port":1,"rx_write_requests":0,'
        '"out_of_sequence":12,"np_cnp_sent":7},{"ifindex":1,"ifname":"mlx5_1","port":1,'
        '"cntn":4,"qp-type":"RC","pid":31609,"comm":"ib_send_bw","out_of_buffer":3}]'
    )
    assert detect_kind(text) == KIND
    res = parse_rdma_counters(text)
    assert res.warnings == []
    a, b = res.records
    assert isinstance(a, RdmaCounters) and isinstance(b, RdmaCounters)
    assert (a.device, a.port, a.source) == ("mlx5_0", 1, "rdma-statistic")
    assert a.errors == {"out_of_sequence": 12} and a.congestion == {"np_cnp_sent": 7}
    assert b.source == "rdma-statistic-qp" and b.attributes["comm"] == "ib_send_bw"
    assert b.attributes["cntn"] == "4" and b.counters == {"out_of_buffer": 3}
