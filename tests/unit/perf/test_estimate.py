"""The composed estimate against published figures: 24 GB/s per 200G NIC, ~12 per 100G
(nccl-tests#119), 46–49 per 400G NIC (nccl-tests#267, #290), ~370 GB/s H100 NVLink ring and
NVLS ~480 (nccl-tests#212), DGX-A100 8 x HDR 192 (nccl#812), A100 ring 230–240. Large-message
busbw within 10%. Two-node and GDR-off measurements: ``published.yaml``."""

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
from aifabric.perf.hardware import socket_config
from tests.unit.perf.conftest import MakePlatform

BIG = 8 << 30
ROOT_EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _peak(p: object, coll: str = "allreduce") -> float:
    return estimate(p, coll, [BIG]).rows[0].busbw_GBps  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        # per-NIC figures x NICs per node, multi-node ring (a ring crosses each node once per
        # channel: busbw = N_NIC·B_NIC)
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


# --------------------------------------------------------------------------- two nodes


def test_two_node_explanation_says_which_algorithm_and_why(make_platform: MakePlatform) -> None:
    # A100 with 8 x 100G: NCCL's tree graph climbs to 24 GB/s intra-node (2 x 12) and Tree wins
    p = make_platform(gpu="A100", nodes=2, nic_speed_gbps=100, transport="ib", nic_pcie_gen=4)
    est = estimate(p, "allreduce", [BIG])
    assert est.rows[0].algorithm == "Tree"
    steps = {e.quantity: e for e in est.explain}
    graph = steps["NCCL tree graph (two nodes)"]
    assert "24 GB/s intra-node" in str(graph.value)
    choice = steps[f"algorithm NCCL runs at {BIG} B"]
    assert choice.value == "Tree/Simple"
    assert "once per direction" in (choice.note or "")
    assert float(choice.inputs["Tree/Simple"]) < float(choice.inputs["Ring/Simple"])
    # Tree's algbw is min(B_net, B_intra/2): 8 NICs x 12.5 x 0.9937 x 0.97 = 96.4 GB/s
    assert est.peak_busbw_GBps == pytest.approx(96.39 * 2 * 15 / 16, rel=0.01)


def test_three_nodes_and_more_keep_the_ring(make_platform: MakePlatform) -> None:
    # the 2-node tree graph is not used beyond two nodes: same A100 8 x 100G on 4 nodes
    p = make_platform(gpu="A100", nodes=4, nic_speed_gbps=100, transport="ib", nic_pcie_gen=4)
    est = estimate(p, "allreduce", [BIG])
    assert est.rows[0].algorithm == "Ring"
    assert est.peak_busbw_GBps == pytest.approx(8 * 12.5 * 0.9937 * 0.97, rel=0.01)


# ------------------------------------------------------------------- GPUDirect RDMA off


def test_no_gdr_on_a_shared_pcie_switch_is_bound_by_its_uplink(
    make_platform: MakePlatform,
) -> None:
    # 4 nodes of 8 x H100 + 8 x 400G on Gen5: the switch uplink (57.0 GB/s effective) carries
    # the GPU's and the NIC's flows: 28.5 GB/s per NIC, x 0.97
    on = make_platform(nodes=4)
    off = replace(on, gdr=False)
    est = estimate(off, "allreduce", [BIG])
    assert est.bottleneck["kind"] == "pcie"
    assert "host memory" in est.bottleneck["reason"]
    assert est.peak_busbw_GBps == pytest.approx(8 * 57.0 / 2 * 0.97, rel=0.01)
    assert est.peak_busbw_GBps < 0.65 * estimate(on, "allreduce", [BIG]).peak_busbw_GBps
    quantities = {e.quantity for e in est.explain}
    assert "host staging without GPUDirect RDMA (per NIC)" in quantities


def test_no_gdr_without_a_shared_switch_is_bound_elsewhere(make_platform: MakePlatform) -> None:
    # NICs off the CPU (no shared switch): the GPU's own PCIe link read by SMs bounds it,
    # Gen4 x16 raw 31.5 x 35/63 = 17.5 GB/s per GPU
    p = make_platform(gpu="A100", nodes=4, gpus_per_node=1, nics_per_node=1, nic_speed_gbps=200,
                      transport="ib", nic_pcie_gen=4, gdr=False,
                      shared_pcie_switch=False)  # fmt: skip
    est = estimate(p, "allreduce", [BIG])
    assert est.peak_busbw_GBps == pytest.approx(31.5 * 35 / 63 * 0.97, rel=0.01)


def test_fabric_file_says_gdr_off(cat: Catalog) -> None:
    fab = load_fabric(ROOT_EXAMPLES / "s7-worked-example.yaml", cat)
    data = fab.model_dump()
    for server in data["servers"]:
        for nic in server["nics"]:
            nic["gdr"] = False
    off = type(fab).model_validate(data)
    p = platform_from_fabric(off, cat, nodes=8)
    assert p.gdr is False
    assert platform_from_fabric(fab, cat, nodes=8).gdr is True
    # 200G NICs on Gen5: half the switch uplink (28.6 GB/s) still feeds 24.5 GB/s of wire
    est = estimate(p, "allreduce", [BIG])
    assert est.peak_busbw_GBps == pytest.approx(
        estimate(platform_from_fabric(fab, cat, nodes=8), "allreduce", [BIG]).peak_busbw_GBps
    )
    staging = next(e for e in est.explain if e.quantity.startswith("host staging"))
    assert staging.inputs["bound_pcie-switch"] == pytest.approx(
        cat.pcie_gen(5).effective_GBps(16) / 2, abs=0.01
    )


# ---------------------------------------------------------------------- socket transport


@pytest.mark.parametrize(
    ("vendor", "threads", "socks", "streams"),
    [("0x15b3", 0, 1, 1), ("0x1d0f", 2, 8, 16), ("0x1ae0", 4, 1, 4), (None, 0, 1, 1)],
)
def test_socket_defaults_follow_nccl_by_nic_vendor(
    vendor: str | None, threads: int, socks: int, streams: int
) -> None:
    # net_socket.cc v2.30.7-1: AWS (0x1d0f) 2 threads x 8 sockets, GCP (0x1ae0) 4 x 1, else no
    # helper thread and the control socket carries the data
    cfg = socket_config(vendor)
    assert (cfg.threads, cfg.socks_per_thread, cfg.streams) == (threads, socks, streams)


def test_socket_limits_are_nccls() -> None:
    assert socket_config(None, threads=32).threads == 16  # MAX_THREADS
    cfg = socket_config(None, threads=16, socks_per_thread=8)
    assert cfg.threads * cfg.socks_per_thread == 64  # MAX_SOCKETS


def test_socket_rate_scales_with_streams(make_platform: MakePlatform) -> None:
    # one 100G NIC, one GPU per node: one ring channel, so one connection; default one stream
    # at 2 GB/s; 4 threads x 1 socket: 8 GB/s; AWS's 16 streams: the wire (12.5 x 0.9828 TCP)
    base = make_platform(nodes=4, gpus_per_node=1, nics_per_node=1, nic_speed_gbps=100,
                         transport="socket")  # fmt: skip
    assert estimate(base, "allreduce", [BIG]).peak_busbw_GBps == pytest.approx(2.0, rel=0.01)
    four = replace(base, socket_threads=4)
    assert estimate(four, "allreduce", [BIG]).peak_busbw_GBps == pytest.approx(8.0, rel=0.01)
    aws = replace(base, nic_pci_vendor="0x1d0f")
    est = estimate(aws, "allreduce", [BIG])
    assert est.bottleneck["kind"] == "network"
    assert est.peak_busbw_GBps == pytest.approx(12.5 * 8948 / 9038, rel=0.01)
