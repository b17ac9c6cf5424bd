"""perftest parser against real captures."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence import detect_kind
from aifabric.evidence.perftest import (
    MIB,
    PerftestAddress,
    PerftestBwRow,
    PerftestLatRow,
    PerftestNotice,
    PerftestParams,
    parse_perftest,
)
from tests.unit.evidence.fixtures import all_cases, assert_garbage_line_is_one_warning, case, load

CASES = [c for c in all_cases() if c.kind == "perftest"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    assert detect_kind(c.text()) == "perftest"
    res = c.parse()
    assert res.of_type(PerftestParams) or res.of_type(PerftestNotice)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("perftest-273-post-list-gbits", 6),
        ("pib-4-atomic-bw-softib", 10),
        ("ucx-8851-read-bw-ib-truncated", 21),
        ("perftest-234-server-roce-truncated", 12),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("perftest", name, after)


def test_post_list_gbits() -> None:
    res = load("perftest", "perftest-273-post-list-gbits")
    (p,) = res.of_type(PerftestParams)
    assert (p.test, p.verb, p.measure, p.bidirectional) == (
        "RDMA_Write Post List BW Test",
        "write",
        "bw",
        False,
    )
    assert (p.device, p.num_qps, p.connection_type, p.using_srq) == ("ib0", 1, "RC", False)
    assert (p.tx_depth, p.post_list, p.cq_moderation, p.mtu_bytes) == (256, 128, 128, 4096)
    assert (p.link_type, p.gid_index, p.rdma_cm, p.pcie_relax_order) == (
        "Ethernet",
        2,
        False,
        "Unsupported",
    )
    (row,) = res.of_type(PerftestBwRow)
    assert (row.size_bytes, row.iterations, row.unit) == (8, 224958464, "Gb/sec")
    assert row.bw_avg_gbps == pytest.approx(0.48)
    assert row.bw_avg_GBps == pytest.approx(0.06)
    assert row.bw_peak_gbps == 0.0
    assert row.msg_rate_mpps == pytest.approx(7.498617)
    assert row.line == 18


def test_read_bw_ib_mib_units_and_truncation() -> None:
    res = load("perftest", "ucx-8851-read-bw-ib-truncated")
    (p,) = res.of_type(PerftestParams)
    assert (p.role, p.verb, p.link_type, p.outstanding_reads) == ("client", "read", "IB", 16)
    local, remote = res.of_type(PerftestAddress)
    assert (local.side, local.lid, local.qpn, local.psn) == ("local", 6, 0x0D02, 0xC8533E)
    assert (remote.lid, remote.rkey, remote.gid) == (5, 0x0805B9, None)
    rows = res.of_type(PerftestBwRow)
    assert [r.size_bytes for r in rows] == [2, 4, 8]
    r8 = rows[2]
    # 19.50 MB/sec is MiB/s in perftest: 19.50 * 2^20 * 8 / 1e9 Gb/s
    assert r8.bw_avg_raw == 19.50
    assert r8.bw_avg_gbps == pytest.approx(19.50 * MIB * 8 / 1e9)
    assert r8.bw_avg_gbps == pytest.approx(0.163578, abs=1e-6)
    assert r8.bw_avg_GBps == pytest.approx(0.0204472, abs=1e-7)
    (w,) = res.warnings
    assert w.line == 20
    assert "3 row(s)" in w.message


def test_server_side_roce_gids() -> None:
    res = load("perftest", "perftest-234-server-roce-truncated")
    (p,) = res.of_type(PerftestParams)
    assert (p.role, p.gid_index, p.cq_moderation, p.data_exchange) == ("server", 3, 1, "Ethernet")
    local, remote = res.of_type(PerftestAddress)
    assert local.qpn == 0x0108
    assert local.vaddr == 0x007F760C947000
    assert local.gid == "0000:0000:0000:0000:0000:ffff:0aff:ff05"
    assert (local.gid_ipv4, remote.gid_ipv4) == ("10.255.255.5", "10.255.255.4")
    assert local.end_line == 20
    assert not res.of_type(PerftestBwRow)
    assert res.warnings[0].line == 24


def test_atomic_bw_old_perftest_with_notice() -> None:
    res = load("perftest", "pib-4-atomic-bw-softib")
    (n,) = res.of_type(PerftestNotice)
    assert n.code == "inline"
    assert n.line == 3
    (p,) = res.of_type(PerftestParams)
    assert (p.verb, p.device, p.using_srq, p.connection_type) == ("atomic", "pib_1", None, "RC")
    (row,) = res.of_type(PerftestBwRow)
    assert (row.size_bytes, row.iterations, row.bw_peak_raw, row.bw_avg_raw) == (8, 1000, 1.7, 1.67)
    assert row.bw_peak_gbps == pytest.approx(1.70 * 1048576 * 8 / 1e9)


def test_truncated_before_table_close() -> None:
    lines = case("perftest", "perftest-273-post-list-gbits").text().splitlines()[:18]
    res = parse_perftest("\n".join(lines))
    assert len(res.of_type(PerftestBwRow)) == 1
    assert len(res.warnings) == 1


def test_latency_table_columns_from_header() -> None:
    # Column header text as perftest prints it (src/perftest_parameters.h RESULT_LINE / lat
    # headers); no citable full latency capture was found, so only the row layout is tested.
    header = (
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
        "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
    )
    text = "\n".join(
        [
            "                    Send Latency Test",
            " Dual-port       : OFF\t\tDevice         : mlx5_0",
            "-" * 87,
            header,
            "Conflicting CPU frequency values detected: 3295.212000 != 5023.444000. "
            "CPU Frequency is not max.",
            " 2       1000          1.24           5.19         1.27     \t       1.27        "
            "\t0.00   \t\t1.37    \t\t5.19   ",
            "-" * 87,
        ]
    )
    res = parse_perftest(text)
    assert not res.warnings
    (p,) = res.of_type(PerftestParams)
    assert (p.verb, p.measure) == ("send", "lat")
    (row,) = res.of_type(PerftestLatRow)
    assert (row.size_bytes, row.iterations) == (2, 1000)
    assert (row.t_min_us, row.t_max_us, row.t_typical_us, row.t_avg_us) == (1.24, 5.19, 1.27, 1.27)
    assert (row.t_stdev_us, row.p99_us, row.p999_us) == (0.0, 1.37, 5.19)
    assert res.of_type(PerftestNotice)[0].code == "cpu_freq"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_perftest(text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
                " 65536 1000 1 2 3",
                " 1 2",
                "-" * 87,
                "                    RDMA_Write BW Test",
                " local address: LID 0000 QPN 0xzz",
                " GID: 1:2:3",
                " Mtu : x[B]",
                "x",
            ]
        ),
        max_size=30,
    )
)
def test_never_raises_on_marker_soup(parts: list[str]) -> None:
    parse_perftest("\n".join(parts))


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("spiderpool-read-lat-roce-sriov-indented", 12),
        ("spiderpool-read-lat-roce-sriov-indented", 27),
        ("ainic-rocm-gdr-bidir-sweep-server", 20),
        ("ainic-rocm-gdr-bidir-sweep-server", 60),
    ],
)
def test_garbage_line_in_new_captures(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("perftest", name, after)


def test_read_lat_indented_roce_vf_in_pod() -> None:
    res = load("perftest", "spiderpool-read-lat-roce-sriov-indented")
    assert not res.warnings
    (p,) = res.of_type(PerftestParams)
    assert (p.test, p.verb, p.measure, p.role) == (
        "RDMA_Read Latency Test",
        "read",
        "lat",
        "client",
    )
    assert (p.device, p.mtu_bytes, p.link_type, p.gid_index) == ("mlx5_5", 1024, "Ethernet", 2)
    assert (p.tx_depth, p.outstanding_reads, p.rdma_cm) == (1, 16, False)
    local, remote = res.of_type(PerftestAddress)
    assert (local.qpn, local.psn, local.gid_ipv4) == (0x0B69, 0xD476C2, "172.81.0.105")
    assert (remote.qpn, remote.gid_ipv4) == (0x0D69, "172.81.0.118")
    assert [n.code for n in res.of_type(PerftestNotice)] == ["cpu_freq", "cpu_freq"]
    (row,) = res.of_type(PerftestLatRow)
    assert (row.size_bytes, row.iterations, row.line) == (2, 1000, 28)
    assert (row.t_min_us, row.t_max_us, row.t_typical_us, row.t_avg_us) == (6.66, 20.37, 6.74, 6.82)
    assert (row.t_stdev_us, row.p99_us, row.p999_us) == (0.78, 7.15, 20.37)


def test_rocm_gdr_bidirectional_sweep_server() -> None:
    res = load("perftest", "ainic-rocm-gdr-bidir-sweep-server")
    assert not res.warnings
    (p,) = res.of_type(PerftestParams)
    assert (p.test, p.bidirectional, p.role) == ("RDMA_Write Bidirectional BW Test", True, "server")
    assert (p.device, p.num_qps, p.gid_index, p.gpu_memory) == ("ionic_1", 4, 1, "ROCm")
    assert p.params["Lock-free"] == "OFF"
    assert p.params["CQE Poll Batch"] == "16"
    assert p.params["CPU freq"] == "3295[MHz]"
    addrs = res.of_type(PerftestAddress)
    assert [a.side for a in addrs] == ["local"] * 4 + ["remote"] * 4
    assert addrs[0].gid == "fd93:16d3:59b6:014f:0690:81ff:fe3a:3650"
    assert addrs[0].gid_ipv4 is None
    assert addrs[4].qpn == 0x0002
    rows = res.of_type(PerftestBwRow)
    assert [r.size_bytes for r in rows] == [2**k for k in range(1, 24)]
    assert all(r.unit == "Gb/sec" and r.iterations == 20000 for r in rows)
    assert rows[0].bw_peak_gbps == pytest.approx(0.147580)
    assert rows[-1].bw_avg_gbps == pytest.approx(697.97)
    assert rows[-1].msg_rate_mpps == pytest.approx(0.010401)


def test_connect_error_only_capture_is_perftest() -> None:
    c = case("perftest", "perftest-228-connect-error")
    assert detect_kind(c.text()) == "perftest"
    res = c.parse()
    assert not res.warnings
    assert not res.of_type(PerftestParams)
    errors = res.of_type(PerftestNotice)
    assert [(n.line, n.code) for n in errors] == [(2, "error"), (3, "error")]
    assert errors[0].text == "Couldn't connect to 192.168.125.211:18515"


def test_a_run_that_fails_before_its_banner_is_perftest() -> None:
    """perftest's own last words (``*_bw.c``: " Couldn't create IB resources" after ctx_init,
    " Parser function exited with Error" after parser()) name the tool without any banner."""
    for text in (
        "Couldn't allocate MR\nfailed to create mr\n Couldn't create IB resources\n",
        "CUDA DMA-BUF cannot be used without CUDA\n Parser function exited with Error\n",
    ):
        assert detect_kind(text) == "perftest", text
        res = parse_perftest(text)
        assert "error" in [n.code for n in res.of_type(PerftestNotice)], text
    with pytest.raises(InputError):  # no line only perftest prints
        detect_kind("Couldn't allocate MR\nfailed to create mr\n")


def test_error_inside_a_run_is_a_notice_not_a_warning() -> None:
    text = (
        "                    RDMA_Write BW Test\n"
        " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
        " Data ex. method : Ethernet\n"
        "---------------------------------------------------------------------------------------\n"
        "ethernet_read_keys: Couldn't read remote address\n"
        " Unable to read to socket/rdma_cm\n"
        "Failed to exchange data between server and clients\n"
    )
    res = parse_perftest(text)
    assert not res.warnings
    assert [n.code for n in res.of_type(PerftestNotice)] == ["error"] * 3


def test_extra_columns_dual_port_cpu_util_and_duration_latency() -> None:
    text = (
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
        "    CPU_Util[%]\n"
        " 65536      5000             97.50              97.40              0.185800"
        "\t    12.50\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes        #iterations       t_avg[usec]    tps average\n"
        " 2             1234567           1.62           617283.50\n"
        "---------------------------------------------------------------------------------------\n"
    )
    res = parse_perftest(text)
    assert not res.warnings
    (bw,) = res.of_type(PerftestBwRow)
    assert bw.extra == {"CPU_Util[%]": 12.5}
    assert bw.bw_avg_gbps == pytest.approx(97.4)
    (lat,) = res.of_type(PerftestLatRow)
    assert (lat.iterations, lat.t_avg_us, lat.t_min_us) == (1234567, 1.62, None)
    assert lat.extra == {"tps average": 617283.5}


def test_a_ud_run_that_dies_before_its_banner_is_perftest() -> None:
    # perftest_parameters.c prints the UD clamp before anything else; the run then crashed
    text = (" Max msg size in UD is MTU 1024\n Changing to this MTU\n"
            "*** stack smashing detected ***: terminated\nAborted\n")  # fmt: skip
    assert detect_kind(text) == "perftest"
    (n,) = parse_perftest(text).of_type(PerftestNotice)
    assert (n.line, n.code) == (1, "ud_msg_size")
