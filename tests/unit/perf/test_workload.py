"""Workload communication (S1, S3, S8): the article's ledger, the ring figure beside it, the
per-iteration components of a Megatron-style job and per-token TP latency of inference.

Hand arithmetic used below (nccl-tests doc/PERFORMANCE.md busbw factors; RoCEv2 headers; NCCL
maintainers' 46-49 GB/s per 400G NIC, nccl-tests#267):

* RoCEv2 at Ethernet MTU 9000: RDMA MTU 4096, per-packet overhead 20 + 14 + 20 + 8 + 12 + 4 + 4
  = 82 B, framing = round(4096 / 4178, 4) = 0.9804; one 400G NIC's NCCL goodput
  = 50 GB/s x 0.9804 x 0.97 = 47.5494 GB/s.
* The article (S1): S = 50e9 x 4 B = 200e9 B; t = 200e9 / 50e9 = 4 s; doubled 8 s.
* Ring AllReduce bandwidth term: t_bw = 2(n-1)/n x S / B.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.model.workload import Workload
from aifabric.perf.workload import (
    TrainingComm,
    gradient_sync,
    inference_tp_latency,
    placement,
    seed_ledger,
    training_iteration,
)
from tests.unit.perf.conftest import MakePlatform

P50B = 50_000_000_000
S_SEED = 200_000_000_000  # 50e9 x 4 B
GOODPUT_400G_ROCE = 50.0 * round(4096 / (4096 + 82), 4) * 0.97  # 47.5494 GB/s
H100_NVLINK = 370.8  # NCCL-modeled: topo.h SM90 20.6 GB/s x 18 links


def _ring(n: int) -> float:
    return 2 * (n - 1) / n


def _all_explained(steps: tuple[Explained, ...]) -> None:
    assert steps
    for s in steps:
        assert s.formula and s.sources, s.line()


# ------------------------------------------------------------------------------ S1: the seed


def test_seed_ledger_is_the_articles_arithmetic() -> None:
    e = seed_ledger(P50B, 4, 400)
    assert e.value == 4.0  # 200e9 B / (400e9 / 8 B/s), exactly
    assert e.unit == "s"
    assert e.inputs["S_bytes"] == S_SEED
    assert e.inputs["B_GBps"] == 50.0
    assert "S1" in e.sources
    assert e.note is not None and "8 s" in e.note  # "doubled to 8 s or more"
    assert seed_ledger(P50B, 2, 400).value == 2.0  # bf16 halves it


@pytest.mark.parametrize(("p", "b", "s"), [(0, 4, 400), (P50B, 0, 400), (P50B, 4, 0)])
def test_seed_ledger_rejects_nonsense(p: int, b: int, s: float) -> None:
    with pytest.raises(InputError):
        seed_ledger(p, b, s)


@pytest.mark.parametrize("n", [2, 4, 16, 64])
def test_200GB_fp32_on_400G_rails_shows_seed_and_ring_figure(
    make_platform: MakePlatform, n: int
) -> None:
    """The issue's must-show: H100 servers, 8 GPUs and 8 x 400G RoCE each; TP = 8 keeps a
    server's GPUs in one TP group, so a DP group has one rank per server and each rank crosses
    its own rail NIC. 200 GB of fp32 gradients per rank."""
    node = make_platform(nodes=n)
    w = Workload(parameters=P50B, gradient_dtype="fp32", tp=8, dp=n)
    gs = gradient_sync(node, w, gradient_bytes=S_SEED)

    assert (gs.placement.nodes, gs.placement.ranks_per_node, gs.placement.nic_share) == (n, 1, 1)
    assert gs.ranks == n
    assert gs.ring_factor == pytest.approx(_ring(n))
    assert gs.bandwidth_GBps == pytest.approx(GOODPUT_400G_ROCE, rel=1e-3)
    # n = 16: 1.875 x 200e9 / 47.5494e9 = 7.8865 s
    assert gs.bandwidth_term_s == pytest.approx(
        _ring(n) * S_SEED / GOODPUT_400G_ROCE / 1e9, rel=1e-3
    )
    # the article's figures, exactly
    assert gs.seed.value == 4.0
    assert gs.seed_with_overhead.value == 8.0
    # ring figure ≈ 2(n-1)/n x 4 s, the rest is framing + NCCL efficiency (50 / 47.55)
    assert gs.bandwidth_term_s == pytest.approx(_ring(n) * 4.0 * 50 / GOODPUT_400G_ROCE, rel=1e-3)
    assert gs.ratio_to_seed == pytest.approx(_ring(n) * 50 / GOODPUT_400G_ROCE, rel=1e-3)
    # NCCL's full time adds only latency at 200 GB
    assert gs.bandwidth_term_s <= gs.nccl_time_s <= gs.bandwidth_term_s * 1.01
    assert gs.algorithm == "Ring"
    text = " ".join(gs.differences)
    for must in ("2(n-1)/n", "8 s", "bf16", "47.55", "line rate"):
        assert must in text
    _all_explained(gs.steps)
    assert any(s.quantity == "gradient sync bandwidth term" for s in gs.steps)


def test_one_gpu_servers_take_the_whole_gradient(make_platform: MakePlatform) -> None:
    """The article's literal picture: one GPU and one 400G NIC per server, S = P x 4 B."""
    n = 32
    node = make_platform(nodes=n, gpus_per_node=1, nics_per_node=1)
    gs = gradient_sync(node, Workload(parameters=P50B, gradient_dtype="fp32", dp=n))
    assert gs.size_bytes == S_SEED
    # 2 x 31/32 x 200e9 / 47.5494e9 = 8.150 s
    assert gs.bandwidth_term_s == pytest.approx(1.9375 * 200 / GOODPUT_400G_ROCE, rel=1e-3)
    assert not any(d.startswith("shard") for d in gs.differences)


def test_pure_dp_on_8_gpu_servers_is_bounded_by_nvlink(make_platform: MakePlatform) -> None:
    """tp = pp = 1: the DP ring spans all 8 GPUs of a server; the server's egress is
    2(n-1)/n x S over its 8 NICs (8 x 47.55 = 380.4 GB/s) but NVLink gives 370.8."""
    node = make_platform(nodes=16)
    gs = gradient_sync(node, Workload(parameters=P50B, gradient_dtype="fp32", dp=128))
    assert gs.placement.ranks_per_node == 8
    assert gs.bandwidth_GBps == pytest.approx(H100_NVLINK)
    assert gs.bandwidth_term_s == pytest.approx(_ring(128) * 200 / H100_NVLINK, rel=1e-6)
    assert "NVLink bounds the ring" in " ".join(gs.differences)


def test_shard_and_bf16(make_platform: MakePlatform) -> None:
    # 70e9 / (8 x 4) = 2.1875e9 parameters per rank x 2 B = 4.375e9 B
    w = Workload(parameters=70_000_000_000, tp=8, pp=4, dp=4)
    gs = gradient_sync(make_platform(nodes=16), w)
    assert gs.size_bytes == 4_375_000_000
    assert gs.seed.value == pytest.approx(140e9 / 50e9)  # the article's whole-model figure
    assert any(d.startswith("shard") for d in gs.differences)


@pytest.mark.parametrize(
    ("kw", "tp", "dp", "k", "share", "bw"),
    [
        ({}, 8, 4, 1, 1.0, GOODPUT_400G_ROCE),  # own rail NIC
        ({}, 4, 8, 2, 2.0, 2 * GOODPUT_400G_ROCE),  # 2 ranks per server own 2 NICs
        ({"nics_per_node": 4}, 8, 4, 1, 0.5, 0.5 * GOODPUT_400G_ROCE),  # half a NIC per GPU
        ({"nics_per_node": 4}, 2, 8, 4, 2.0, 2 * GOODPUT_400G_ROCE),
    ],
)
def test_placement_rule(
    make_platform: MakePlatform,
    kw: dict[str, int],
    tp: int,
    dp: int,
    k: int,
    share: float,
    bw: float,
) -> None:
    node = make_platform(nodes=4, **kw)
    w = Workload(parameters=10**9, tp=tp, dp=dp)
    pl = placement(node, w, "dp")
    assert (pl.ranks, pl.ranks_per_node, pl.nic_share) == (dp, k, share)
    assert pl.platform.ranks == dp
    assert gradient_sync(node, w).bandwidth_GBps == pytest.approx(bw, rel=2e-3)


def test_uneven_placement_keeps_the_rank_count(make_platform: MakePlatform) -> None:
    # tp = 3 on 8-GPU servers: DP ranks 0, 3, ..., 21 sit 3, 3, 2 per server
    pl = placement(make_platform(nodes=4), Workload(parameters=10**9, tp=3, dp=8), "dp")
    assert pl.uneven and pl.nodes == 3 and pl.ranks_per_node == 2
    assert pl.platform.ranks == 8


def test_zero_moves_the_same_bytes(make_platform: MakePlatform) -> None:
    node = make_platform(nodes=8)
    w = Workload(parameters=8 * 10**9, tp=8, dp=8)
    ar = gradient_sync(node, w)
    rs_ag = gradient_sync(node, w, zero=True)
    assert rs_ag.ring_factor == pytest.approx(ar.ring_factor)  # (n-1)/n + (n-1)/n
    assert rs_ag.bandwidth_term_s == pytest.approx(ar.bandwidth_term_s)
    assert rs_ag.algorithm == "Ring+Ring"
    assert rs_ag.nccl_time_s == pytest.approx(ar.nccl_time_s, rel=0.02)


def test_dp_1_has_nothing_to_sync(make_platform: MakePlatform) -> None:
    gs = gradient_sync(make_platform(nodes=1), Workload(parameters=10**9, tp=8))
    assert gs.ranks == 1 and gs.nccl_time_s == 0.0 and gs.bandwidth_term_s == 0.0
    assert gs.seed.value == pytest.approx(2e9 / 50e9)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 512), extra=st.integers(1, 512))
def test_bandwidth_term_grows_toward_twice(make_platform: MakePlatform, n: int, extra: int) -> None:
    def sync(nodes: int) -> float:
        node = make_platform(nodes=nodes, gpus_per_node=1, nics_per_node=1)
        w = Workload(parameters=P50B, gradient_dtype="fp32", dp=nodes)
        gs = gradient_sync(node, w)
        # the ring factor stays below 2; the ratio to the seed below 2 x 50 / goodput
        assert gs.ring_factor < 2.0
        assert gs.ratio_to_seed < 2 * 50 / GOODPUT_400G_ROCE * 1.001
        return gs.bandwidth_term_s

    small, large = sync(n), sync(n + extra)
    assert large > small
    limit = 2 * 200 / GOODPUT_400G_ROCE  # 8.41 s
    assert small < large < limit * 1.001


# ------------------------------------------------------------------------------ S8: an iteration


def _iteration(make_platform: MakePlatform, overlap: float = 0.5, **node_kw: int) -> TrainingComm:
    node = make_platform(nodes=16, **node_kw)
    w = Workload(parameters=70_000_000_000, tp=8, pp=4, dp=4, ep=2, overlap_fraction=overlap)
    return training_iteration(
        node, w, hidden_size=8192, layers=80, seq_len=4096, micro_batch=1, micro_batches=16,
        moe_layers=40,
    )  # fmt: skip


def test_training_iteration_components_hand_counted(make_platform: MakePlatform) -> None:
    tc = _iteration(make_platform)
    act = 1 * 4096 * 8192 * 2  # b x s x h x 2 B = 67,108,864 B
    dp, tp, pp, ep = (
        tc.component(x) for x in ("dp-gradient", "tp-activations", "pp-p2p", "ep-alltoall")
    )
    assert dp and tp and pp and ep
    assert dp.message_bytes == 4_375_000_000 and dp.count == 1  # 70e9 / 32 x 2 B
    assert dp.tier == "inter-node"  # one DP rank per server (tp = 8 = g)
    assert tp.count == 4 * (80 // 4) * 16 == 1280  # 2 fwd + 2 bwd per layer, 20 layers/stage
    assert tp.message_bytes == act and tp.bytes_total == 1280 * act
    assert tp.tier == "intra-node"  # S8: TP inside the server
    assert pp.count == 2 * 16 and pp.message_bytes == act and pp.tier == "inter-node"
    assert ep.count == 4 * (40 // 4) * 16 == 640 and ep.message_bytes == act
    for c in tc.components:
        assert c.time_s == pytest.approx(c.count * c.time_each_s)
        _all_explained(c.steps)
    assert tc.total_s == pytest.approx(sum(c.time_s for c in tc.components))
    assert tc.exposed_s == pytest.approx(tc.total_s * 0.5)
    assert tc.tp_penalty == pytest.approx(1.0)
    assert tc.gradient is not None and tc.gradient.size_bytes == 4_375_000_000
    _all_explained(tc.steps)


def test_zero_iteration_counts_two_collectives(make_platform: MakePlatform) -> None:
    w = Workload(parameters=8 * 10**9, tp=8, dp=8)
    tc = training_iteration(make_platform(nodes=8), w, zero=True)
    dp = tc.component("dp-gradient")
    assert dp is not None and dp.count == 2 and dp.bytes_total == 2 * dp.message_bytes
    assert dp.time_s == pytest.approx(dp.count * dp.time_each_s)


def test_missing_model_shape_is_skipped_with_a_note(make_platform: MakePlatform) -> None:
    w = Workload(parameters=70_000_000_000, tp=8, pp=4, dp=4, ep=2)
    tc = training_iteration(make_platform(nodes=16), w)
    assert [c.name for c in tc.components] == ["dp-gradient"]
    assert len(tc.skipped) == 3
    assert any("moe_layers" in s for s in tc.skipped)


@settings(max_examples=20, deadline=None)
@given(overlap=st.floats(0.0, 1.0))
def test_exposed_is_total_times_one_minus_overlap(
    make_platform: MakePlatform, overlap: float
) -> None:
    tc = _iteration(make_platform, overlap)
    assert tc.exposed_s == pytest.approx(tc.total_s * (1 - overlap))
    assert 0.0 <= tc.exposed_s <= tc.total_s


def test_full_overlap_exposes_nothing(make_platform: MakePlatform) -> None:
    tc = _iteration(make_platform, 1.0)
    assert tc.total_s > 0 and tc.exposed_s == 0.0


def test_tp_across_servers_is_slower_than_inside(make_platform: MakePlatform) -> None:
    """S8: the same TP = 8 all-reduce on 4-GPU servers crosses the NICs."""
    inside = _iteration(make_platform).component("tp-activations")
    across_tc = _iteration(make_platform, gpus_per_node=4, nics_per_node=4)
    across = across_tc.component("tp-activations")
    assert inside and across
    assert across.tier == "inter-node" and inside.tier == "intra-node"
    assert across.time_each_s > 1.5 * inside.time_each_s
    assert across_tc.tp_penalty is not None and across_tc.tp_penalty > 1.5


def test_rank_order_that_spreads_tp_pays_the_penalty(make_platform: MakePlatform) -> None:
    """tp = 8 fits a server, but rank order (dp, pp, tp) puts TP ranks 4 servers apart."""
    node = make_platform(nodes=4)

    def run(w: Workload) -> TrainingComm:
        return training_iteration(node, w, hidden_size=8192, layers=8, seq_len=4096, micro_batch=1)

    good = run(Workload(parameters=10**10, tp=8, dp=4))
    bad = run(Workload(parameters=10**10, tp=8, dp=4, rank_order=("dp", "pp", "tp")))
    t_good, t_bad = good.component("tp-activations"), bad.component("tp-activations")
    assert t_good and t_bad and t_bad.tier == "inter-node"
    assert t_bad.time_s > t_good.time_s
    assert bad.tp_penalty is not None and bad.tp_penalty > 1.0
    # and the DP group is then inside one server, over NVLink
    assert bad.gradient is not None and bad.gradient.placement.tier == "intra-node"


def test_training_iteration_rejects_nonsense(make_platform: MakePlatform) -> None:
    w = Workload(parameters=10**9, tp=2, dp=4)
    with pytest.raises(InputError):
        training_iteration(make_platform(), w, hidden_size=0)


# ------------------------------------------------------------------------------ S3: inference


def test_inference_tp_is_latency_bound(make_platform: MakePlatform) -> None:
    r = inference_tp_latency(make_platform(), hidden_size=8192, batch=1, tp=8, layers=80)
    assert r.message_bytes == 1 * 8192 * 2 == 16384
    assert r.tier == "intra-node"
    assert r.latency_bound and r.alpha_share > 0.9  # α dominates a 16 KiB all-reduce
    assert r.per_layer_us == pytest.approx(2 * r.allreduce_us)
    assert r.per_token_us == pytest.approx(2 * 80 * r.allreduce_us)
    _all_explained(r.steps)


def test_inference_tp_across_servers_is_slower(make_platform: MakePlatform) -> None:
    inside = inference_tp_latency(make_platform(nodes=2), 8192, 1, 8)
    across = inference_tp_latency(make_platform(nodes=2), 8192, 1, 16)
    assert across.tier == "inter-node" and across.allreduce_us > inside.allreduce_us
    assert inside.per_token_us is None


def test_inference_tp_edge_cases(make_platform: MakePlatform) -> None:
    one = inference_tp_latency(make_platform(), 8192, 1, 1, layers=10)
    assert one.allreduce_us == 0.0 and one.per_token_us == 0.0
    with pytest.raises(InputError):
        inference_tp_latency(make_platform(nodes=2), 8192, 1, 12)  # 12 is not a multiple of 8
    with pytest.raises(InputError):
        inference_tp_latency(make_platform(), 0, 1, 8)


def test_bigger_batches_move_toward_bandwidth(make_platform: MakePlatform) -> None:
    shares = [inference_tp_latency(make_platform(), 8192, b, 8).alpha_share for b in (1, 64, 4096)]
    assert shares[0] > shares[-1]
    assert math.isclose(shares[0], max(shares))
