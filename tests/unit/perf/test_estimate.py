"""The composed estimate against published figures (shared reference perf-model-and-limits.md
§2.8, §2.10, §5.1, §5.3): 24 GB/s per 200G NIC, 46–49 per 400G NIC, ~12 per 100G, ~370 GB/s
H100 NVLink ring, NVLS ~480, A100 ring 230–240. Large-message busbw within 10%."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import Catalog, builtin_catalog
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.perf.calibrate import Measurement, calibrate
from aifabric.perf.estimate import Efficiency, Platform, estimate, sweep_sizes
from aifabric.perf.fabric import platform_from_fabric
from tests.unit.perf.conftest import MakePlatform

BIG = 8 << 30
ROOT_EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _peak(p: object, coll: str = "allreduce") -> float:
    return estimate(p, coll, [BIG]).rows[0].busbw_GBps  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        # per-NIC figures x NICs per node, multi-node ring (reference §2.10: busbw = N_NIC·B_NIC)
        ({"gpu": "A100", "nodes": 4, "nic_speed_gbps": 200, "transport": "ib",
          "nic_pcie_gen": 4}, 8 * 24.0),                              # DGX-A100 8xHDR: 192
        ({"nodes": 4, "nics_per_node": 4, "nic_speed_gbps": 400}, 190.0),  # 4x400G RoCE ring
        ({"nodes": 4, "nics_per_node": 1, "gpus_per_node": 1, "nic_speed_gbps": 400,
          "transport": "ib"}, 47.5),                                   # one NDR NIC: 46-49
        ({"nodes": 4, "nics_per_node": 1, "gpus_per_node": 1, "nic_speed_gbps": 200}, 24.0),
        ({"nodes": 4, "nics_per_node": 1, "gpus_per_node": 1, "nic_speed_gbps": 100}, 12.0),
        ({"nodes": 4}, 373.0),                                          # 8x400G: 366-381 measured
        ({"nodes": 1, "disabled": frozenset({"nvls"})}, 370.0),         # H100 NVLink ring ~370
        ({"nodes": 1}, 480.0),                                          # NVLS AllReduce ~480
        ({"gpu": "A100", "nodes": 1}, 235.0),                           # A100 ring 230-240
    ],
)  # fmt: skip
def test_large_message_busbw_matches_published(
    make_platform: MakePlatform, kw: dict[str, object], expected: float
) -> None:
    assert _peak(make_platform(**kw)) == pytest.approx(expected, rel=0.10)


def test_busbw_rises_with_size_and_saturates(make_platform: MakePlatform) -> None:
    p = make_platform(nodes=16)
    rows = estimate(p, "allreduce", sweep_sizes(8, 16 << 30, 2)).rows
    bus = [r.busbw_GBps for r in rows]
    assert all(b2 >= b1 * 0.97 for b1, b2 in pairwise(bus))  # rising
    assert bus[-1] == pytest.approx(bus[-2], rel=0.02)  # saturated
    assert rows[0].bottleneck == "latency" and rows[-1].bottleneck != "latency"
    assert rows[0].time_us > 10  # small messages pay the α term


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["allreduce", "allgather", "reducescatter", "broadcast", "alltoall"]),
    st.integers(min_value=1, max_value=256),
    st.sampled_from([1, 2, 4, 8]),
)
def test_every_row_is_consistent(coll: str, nodes: int, g: int) -> None:
    cat = builtin_catalog()
    p = Platform(gpu=cat.gpu("H100"), nodes=nodes, gpus_per_node=g, nics_per_node=g,
                 nic_speed_gbps=400, transport="roce", nic_pcie=cat.pcie_gen(5),
                 gpu_pcie=cat.pcie_gen(5))  # fmt: skip
    if p.ranks < 2:
        return
    for r in estimate(p, coll, [1 << 10, 1 << 20, 1 << 30]).rows:  # type: ignore[arg-type]
        assert r.time_us > 0 and 0 <= r.latency_us <= r.time_us
        assert r.algbw_GBps == pytest.approx(r.size_bytes / 1e9 / (r.time_us * 1e-6))
        assert r.busbw_GBps <= 1000.0  # never above physical scale-up


def test_nic_on_pcie4_is_pcie_bound(make_platform: MakePlatform) -> None:
    # S9: a 400G NIC on PCIe 4.0 x16 (28.6 GB/s effective) tops out near 28 GB/s
    p = make_platform(nodes=4, gpus_per_node=1, nics_per_node=1, nic_pcie_gen=4)
    est = estimate(p, "allreduce", [BIG])
    assert est.bottleneck["kind"] == "pcie"
    assert est.peak_busbw_GBps == pytest.approx(28.6 * 0.97, rel=0.02)


def test_socket_transport_is_far_below_line_rate(make_platform: MakePlatform) -> None:
    p = make_platform(nodes=4, gpus_per_node=1, nics_per_node=1, nic_speed_gbps=100,
                      transport="socket")  # fmt: skip
    est = estimate(p, "allreduce", [BIG])
    assert est.bottleneck["kind"] == "tcp"
    assert est.peak_busbw_GBps < 0.5 * 100 / 8  # nccl#450: 4.5-5.2 GB/s on 100G TCP


def test_alltoall_does_not_aggregate_nics(make_platform: MakePlatform) -> None:
    # nccl-tests#267: AllToAll sees one NIC's bandwidth per GPU, not the node aggregate
    p = make_platform(nodes=16)
    peak = _peak(p, "alltoall")
    assert 30 < peak < 60


def test_socket_and_one_rank_edge_cases(make_platform: MakePlatform) -> None:
    one = estimate(make_platform(nodes=1, gpus_per_node=1), "allreduce", [1 << 20])
    assert one.rows[0].time_us == 0
    with pytest.raises(InputError):
        estimate(make_platform(nodes=2, nics_per_node=0), "allreduce", [1 << 20])
    with pytest.raises(InputError):
        sweep_sizes(8, 4, 2)


def test_explain_names_formula_inputs_and_sources(make_platform: MakePlatform) -> None:
    est = estimate(make_platform(nodes=4), "allreduce", [1 << 30])
    quantities = {e.quantity for e in est.explain}
    assert {"NIC goodput", "roce framing efficiency", "network bandwidth per node"} <= quantities
    assert all(e.formula and e.sources for e in est.explain)


def test_calibration_recovers_known_constants(make_platform: MakePlatform) -> None:
    p = make_platform(nodes=4)
    truth = replace(p, efficiency=Efficiency(latency=1.3, bandwidth=0.8))
    rows = estimate(truth, "allreduce", sweep_sizes(1 << 10, 8 << 30, 2)).rows
    cal = calibrate(p, "allreduce", [Measurement(r.size_bytes, r.time_us) for r in rows])
    assert cal.efficiency.latency == pytest.approx(1.3, rel=1e-6)
    assert cal.efficiency.bandwidth == pytest.approx(0.8, rel=1e-6)
    assert cal.rms_after_pct < 1e-6 < cal.rms_before_pct
    with pytest.raises(InputError):
        calibrate(p, "allreduce", [Measurement(1 << 20, 10.0)])


def test_fabric_file_platform(cat: Catalog) -> None:
    fab = load_fabric(ROOT_EXAMPLES / "s7-worked-example.yaml", cat)
    p = platform_from_fabric(fab, cat)
    assert (p.nodes, p.gpus_per_node, p.nics_per_node, p.nic_speed_gbps) == (128, 8, 8, 200.0)
    assert p.transport == "roce" and p.fabric.crosses == "spine"
    est = estimate(p, "allreduce", [BIG])
    assert est.peak_busbw_GBps == pytest.approx(8 * 24.0, rel=0.05)  # 1:1, 8x200G per node
    small = platform_from_fabric(fab, cat, nodes=8)  # one rack: one ToR leaf
    assert small.fabric.crosses == "leaf"
