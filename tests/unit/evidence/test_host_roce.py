"""rdma-traffic-class and cma-roce-tos: the ToS a GPU server marks RoCE with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence import detect_kind, detect_scores, parse_text
from aifabric.evidence.host_roce import RoceTos, TrafficClass
from tests.unit.evidence.fixtures import load


def test_ucx_readback_is_dscp_26_ect0() -> None:
    (rec,) = load("rdma-traffic-class", "ucx-pr11105-readback").records
    assert isinstance(rec, TrafficClass)
    # 106 = 0b011010_10: DSCP 26 (AF31, the seed's RoCE DSCP), ECN 10 = ECT(0) (RFC 3168)
    assert (rec.tos, rec.dscp, rec.ecn, rec.ecn_name) == (106, 26, 2, "ECT(0)")
    assert (rec.device, rec.port, rec.scope, rec.line) == ("mlx5_0", 1, "global", 2)


def test_cma_roce_tos_trace() -> None:
    (rec,) = load("cma-roce-tos", "att-netarbiter-setup-trace").records
    assert isinstance(rec, RoceTos)
    assert (rec.device, rec.port, rec.tos, rec.dscp, rec.line) == ("mlx5_2", 1, 106, 26, 3)


def test_bare_number_needs_an_explicit_kind() -> None:
    assert not [k for _, k in detect_scores("106\n") if k in {"rdma-traffic-class", "cma-roce-tos"}]
    with pytest.raises(InputError):
        detect_kind("106\n")
    (tc,) = parse_text("106\n", "rdma-traffic-class").records
    assert isinstance(tc, TrafficClass) and tc.dscp == 26 and tc.device is None
    (tos,) = parse_text("104\n", "cma-roce-tos").records
    assert isinstance(tos, RoceTos) and (tos.dscp, tos.ecn) == (26, 0)


def test_rule_lines_and_options() -> None:
    res = parse_text("Global tclass=104\ntclass=96,dst_ip=10.0.0.0/8\n", "rdma-traffic-class")
    glob, rule = res.records
    assert isinstance(rule, TrafficClass) and rule.scope == "rule"
    assert rule.match == "dst_ip=10.0.0.0/8" and rule.dscp == 24
    assert isinstance(glob, TrafficClass) and glob.dscp == 26 and glob.ecn == 0
    res = parse_text("# cma_roce_tos -d mlx5_3 -p 2 -t 96\n96\n", "cma-roce-tos")
    (rec,) = res.records
    assert isinstance(rec, RoceTos) and (rec.device, rec.port, rec.dscp) == ("mlx5_3", 2, 24)
    res = parse_text(
        "# cat /sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos\n0\n", "cma-roce-tos"
    )
    (rec,) = res.records
    assert isinstance(rec, RoceTos) and (rec.device, rec.tos, rec.ecn_name) == (
        "mlx5_1",
        0,
        "Not-ECT",
    )


def test_script_error_is_a_warning() -> None:
    # cma_roce_tos (mlnx-tools) prints this instead of a value when not run as root
    res = parse_text("$ cma_roce_tos -d mlx5_0\nYou must be root to run this\n", "cma-roce-tos")
    assert not res.records and len(res.warnings) == 1 and res.warnings[0].line == 2


@given(st.integers(0, 255))
def test_tos_splits_into_dscp_and_ecn(tos: int) -> None:
    (rec,) = parse_text(f"Global tclass={tos}\n", "rdma-traffic-class").records
    assert isinstance(rec, TrafficClass)
    assert rec.dscp == tos // 4 and rec.ecn == tos % 4 and rec.dscp * 4 + rec.ecn == tos
