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
