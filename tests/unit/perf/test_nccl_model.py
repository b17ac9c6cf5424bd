"""nccl-tests definitions and NCCL's tuner, against independently known answers.

Known answers: nccl-tests doc/PERFORMANCE.md busbw factors; a worked example computed by hand
from NCCL v2.30.7-1 tuning.cc constants (8×H100 per node, ring/tree graph of 8 channels at
48 GB/s); the tree graph's second pass of search.cc worked by hand on NCCL's speed arrays;
RoCEv2/IB framing arithmetic; Linux iboe_get_mtu; ECMP balls-into-bins (Monte Carlo).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.perf.collectives import algbw_GBps, busbw_factor, busbw_GBps, normalize_collective
from aifabric.perf.constants import arch_of, load_constants
from aifabric.perf.ecmp import ecmp_expected_max, ecmp_factor
from aifabric.perf.hardware import framing_efficiency, rdma_mtu
from aifabric.perf.tuner import Graph, TunerInputs, choose, search_graph, search_tree_graph

C = load_constants("2.30")


# ----------------------------------------------------------------------- nccl-tests definitions


@pytest.mark.parametrize(
    ("coll", "n", "factor"),
    [
        ("allreduce", 8, 2 * 7 / 8),
        ("allreduce", 2, 1.0),
        ("allgather", 16, 15 / 16),
        ("reducescatter", 4, 3 / 4),
        ("alltoall", 8, 7 / 8),
        ("broadcast", 64, 1.0),
        ("reduce", 64, 1.0),
    ],
)
def test_busbw_factor_is_nccl_tests(coll: str, n: int, factor: float) -> None:
    assert busbw_factor(coll, n) == pytest.approx(factor)  # type: ignore[arg-type]


def test_algbw_is_decimal_GBps() -> None:
    # 1 GiB in 10 ms: 1073741824 / 1e9 / 0.01 = 107.37 GB/s (nccl-tests divides by 1e9)
    assert algbw_GBps(1 << 30, 10_000) == pytest.approx(107.3741824)
    assert busbw_GBps("allreduce", 16, 1 << 30, 10_000) == pytest.approx(107.3741824 * 30 / 16)


@pytest.mark.parametrize(
    ("name", "canon"),
    [("all_reduce_perf", "allreduce"), ("AllGather", "allgather"),
     ("reduce_scatter", "reducescatter"), ("alltoall_perf", "alltoall"), ("sendrecv", None)],
)  # fmt: skip
def test_collective_names(name: str, canon: str | None) -> None:
    assert normalize_collective(name) == canon


# ----------------------------------------------------------------------------- constants


# Constants per release, against values quoted from each release's source: test_nccl_constants.py


@pytest.mark.parametrize(("cc", "arch"), [("7.0", "volta"), ("8.0", "ampere"), ("9.0", "hopper"),
                                          ("10.0", "blackwell"), ("8.9", "ampere")])  # fmt: skip
def test_arch_rows(cc: str, arch: str) -> None:
    assert arch_of(cc) == arch


# --------------------------------------------------------------------------- the α-β model

# worked by hand from tuning.cc at v2.30.7-1: (algorithm, protocol, time µs, busbw GB/s)
# per size, 8×H100 per node
R, T = "ring", "tree"
WORKED = {
    4: [(T, "LL", 46, 2.8), (T, "LL128", 81, 25), (T, "LL128", 226, 144),
        (R, "Simple", 1750, 297), (R, "Simple", 5800, 358), (R, "Simple", 43700, 381)],
    16: [(T, "LL", 66, None), (T, "LL128", 115, 18), (T, "LL128", 260, 128),
         (T, "Simple", 2250, 237), (R, "Simple", 7200, 295), (R, "Simple", 46000, 370)],
    128: [(T, "LL", 96, None), (T, "LL128", 166, 13), (T, "LL128", 311, 108),
          (T, "Simple", 2300, 230), (T, "Simple", 7700, 278), (R, "Simple", 58000, 295)],
}  # fmt: skip
SIZES = [64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30, 8 << 30]


@pytest.mark.parametrize("nodes", sorted(WORKED))
def test_tuner_reproduces_hand_worked_example(nodes: int) -> None:
    g = Graph(8, 48.0, 48.0)
    inp = TunerInputs(
        n_nodes=nodes, n_ranks=nodes * 8, arch="hopper", intra_hw="nvlink", ring=g, tree=g
    )
    n = nodes * 8
    for size, (algo, proto, t_us, bus) in zip(SIZES, WORKED[nodes], strict=True):
        choice, _ = choose(C, inp, "allreduce", size)
        assert (choice.algorithm, choice.protocol) == (algo, proto), size
        assert choice.time_us == pytest.approx(t_us, rel=0.02), size
        if bus is not None:
            got = size / 1e9 / (choice.time_us * 1e-6) * 2 * (n - 1) / n
            assert got == pytest.approx(bus, rel=0.03, abs=0.3), size


def test_tree_beats_ring_at_small_sizes_on_many_nodes() -> None:
    g = Graph(8, 48.0, 48.0)
    inp = TunerInputs(n_nodes=128, n_ranks=1024, arch="hopper", intra_hw="nvlink", ring=g, tree=g)
    _, times = choose(C, inp, "allreduce", 1 << 20)
    best_tree = min(t for (a, _), t in times.items() if a == "tree")
    best_ring = min(t for (a, _), t in times.items() if a == "ring")
    assert best_tree < best_ring / 5  # ring latency grows with 2(n-1) steps: 2.48 ms for LL


def test_graph_search_channel_counts() -> None:
    # 8×H100 on one node: 6 channels at 60 GB/s (360 of 370.8), doubled to 12 at 30
    one = search_graph(C, "hopper", n_nodes=1, gpus_per_node=8, intra_total_GBps=370.8,
                       nic_GBps=50.0, nics_per_node=8)  # fmt: skip
    assert (one.n_channels, one.bw_intra, one.duplicated) == (12, 30.0, True)
    # 8×400G across nodes: 48 would need 384 > 370.8 of NVLink; 8 channels at 45 GB/s, and no
    # duplication on Hopper below 50 GB/s with more than 4 channels
    multi = search_graph(C, "hopper", n_nodes=4, gpus_per_node=8, intra_total_GBps=370.8,
                         nic_GBps=50.0, nics_per_node=8)  # fmt: skip
    assert (multi.n_channels, multi.bw_inter, multi.duplicated) == (8, 45.0, False)
    # A100 with 8×200G (25 GB/s nominal): 24 per channel, doubled (24 < 25: no) -> 8 at 24
    a100 = search_graph(C, "ampere", n_nodes=4, gpus_per_node=8, intra_total_GBps=240.0,
                        nic_GBps=25.0, nics_per_node=8)  # fmt: skip
    assert (a100.n_channels, a100.bw_inter) == (8, 24.0)


@given(st.integers(min_value=2, max_value=512), st.integers(min_value=6, max_value=34))
def test_chosen_pair_is_the_minimum_time(nodes: int, log_size: int) -> None:
    g = Graph(8, 48.0, 48.0)
    inp = TunerInputs(
        n_nodes=nodes, n_ranks=nodes * 8, arch="hopper", intra_hw="nvlink", ring=g, tree=g
    )
    choice, times = choose(C, inp, "allreduce", 1 << log_size)
    assert choice.time_us == min(times.values())
    assert all(t > 0 and math.isfinite(t) for t in times.values())


# ------------------------------------------------------------------------------- hardware


def test_roce_mtu_rule() -> None:
    # Linux iboe_get_mtu: largest IB MTU <= netdev MTU - 96
    assert rdma_mtu(9000) == 4096
    assert rdma_mtu(1500) == 1024
    assert rdma_mtu(4192) == 4096
    assert rdma_mtu(4191) == 2048


@pytest.mark.parametrize(
    ("transport", "mtu", "ipv6", "vlan", "eff"),
    [("roce", 9000, False, False, 4096 / 4178), ("roce", 1500, False, False, 1024 / 1106),
     ("roce", 9000, True, True, 4096 / 4202), ("ib", 9000, False, False, 4096 / 4122)],
)  # fmt: skip
def test_framing_efficiency(transport: str, mtu: int, ipv6: bool, vlan: bool, eff: float) -> None:
    got = framing_efficiency(transport, eth_mtu=mtu, ipv6=ipv6, vlan=vlan)  # type: ignore[arg-type]
    assert float(got.value) == pytest.approx(eff, abs=1e-4)


@pytest.mark.parametrize(("m", "expected"), [(8, 2.60), (16, 3.07), (32, 3.53), (64, 3.95)])
def test_ecmp_expected_max_load(m: int, expected: float) -> None:
    assert ecmp_expected_max(m, m) == pytest.approx(expected, rel=0.03)  # Monte Carlo


def test_ecmp_factor_bounds() -> None:
    assert ecmp_factor(1, 8) == 1.0
    assert ecmp_factor(32, 32) == pytest.approx(1 / ecmp_expected_max(32, 32))
    assert ecmp_expected_max(5, 1) == 5.0


# ------------------------------------------------------------------ two nodes: the tree graph


def _ring(arch: str, intra: float, nic: float, nics: int) -> Graph:
    return search_graph(C, arch, n_nodes=2, gpus_per_node=8, intra_total_GBps=intra,  # type: ignore[arg-type]
                        nic_GBps=nic, nics_per_node=nics)  # fmt: skip


@pytest.mark.parametrize(
    ("arch", "intra", "nic", "nics", "ring", "tree_intra"),
    [
        # A100, 8 x 100G: ring 8 ch at 12; the tree climbs 15, 18, 20, 24 (= 2 x 12), 8 x 24 <= 240
        ("ampere", 240.0, 12.5, 8, (8, 12.0), 24.0),
        # A100, 4 x 200G: ring 4 ch at 24; climbs 28, 30 and 48 (from 30 < 48; 4 x 48 <= 240)
        ("ampere", 240.0, 25.0, 4, (4, 24.0), 48.0),
        # H100, 8 x 400G: ring 8 ch at 45; 48 would need 8 x 48 = 384 > 370.8 of NVLink
        ("hopper", 370.8, 50.0, 8, (8, 45.0), 45.0),
        # H100 PCIe, 1 x 100G: ring 1 ch at 12; the tree climbs to 24 on 48 GB/s of PCIe
        ("hopper", 48.0, 12.5, 1, (1, 12.0), 24.0),
    ],
)
def test_two_node_tree_graph(
    arch: str, intra: float, nic: float, nics: int, ring: tuple[int, float], tree_intra: float
) -> None:
    r = _ring(arch, intra, nic, nics)
    assert (r.n_channels, r.bw_inter) == ring
    t = search_tree_graph(C, arch, r, intra_total_GBps=intra)  # type: ignore[arg-type]
    assert (t.n_channels, t.bw_inter, t.bw_intra) == (ring[0], ring[1], tree_intra)


@pytest.mark.parametrize(
    ("nic", "nics", "algo"),
    [(12.5, 8, "tree"), (25.0, 8, "ring"), (25.0, 4, "ring")],
)
def test_two_node_selection_follows_ncc_tuner(nic: float, nics: int, algo: str) -> None:
    # A100 on two nodes at 8 GiB. 8 x 100G: Tree busBw min(8 x 24 x 0.92, 8 x 23.6) = 176.6,
    # algBw 88.3 > Ring 8 x 12 x 16/30 = 51.2. 8 x 200G: Tree capped at 8 x 23.6 x 0.5 = 94.4
    # < Ring 8 x 24 x 16/30 = 102.4. 4 x 200G: Tree 4 x 23.6 x 0.5 = 47.2 < Ring 51.2.
    ring = _ring("ampere", 240.0, nic, nics)
    tree = search_tree_graph(C, "ampere", ring, intra_total_GBps=240.0)
    inp = TunerInputs(n_nodes=2, n_ranks=16, arch="ampere", intra_hw="nvlink", ring=ring,
                      tree=tree)  # fmt: skip
    choice, _ = choose(C, inp, "allreduce", 8 << 30)
    assert (choice.algorithm, choice.protocol) == (algo, "Simple")


# ------------------------------------------------------------------ per-release tuner paths


def test_pat_is_not_chosen_where_the_release_has_none() -> None:
    """PAT (one GPU per node, AllGather) exists from 2.23 (tuning.cc gained NCCL_ALGO_PAT)."""
    g = Graph(2, 48.0, 48.0)
    inp = TunerInputs(n_nodes=8, n_ranks=8, arch="hopper", intra_hw="nvlink", ring=g, tree=g)
    old, _ = choose(load_constants("2.21"), inp, "allgather", 1 << 20)
    assert old.algorithm != "pat"
    _, times = choose(load_constants("2.24"), inp, "allgather", 1 << 20)
    assert any(a == "pat" for a, _ in times)


def test_pre_2_28_nvls_selector_uses_the_fixed_ratio() -> None:
    """tuning.cc at v2.26.6-1: NVLS busBw = nChannels·min(bwIntra, bwInter), algbw = busBw·5/6;
    at v2.18.1-1 the ratio was 0.75."""
    g = Graph(16, 40.0, 40.0)
    nvls = Graph(16, 40.0, 40.0)
    inp = TunerInputs(
        n_nodes=1, n_ranks=8, arch="hopper", intra_hw="nvlink", ring=g, tree=g, nvls=nvls
    )
    for release, ratio in (("2.26", 5.0 / 6.0), ("2.18.1", 0.75)):
        _, times = choose(load_constants(release), inp, "allreduce", 8 << 30)
        t = times[("nvls", "Simple")]
        algbw = (8 << 30) / 1e3 / t  # GB/s from µs
        assert algbw == pytest.approx(16 * 40.0 * ratio, rel=0.01), release


def test_blackwell_nvlstree_correction_only_where_the_release_has_it() -> None:
    """2.28 has 23 tree-correction sizes and no NVLSTree correction: no IndexError at 768 MiB."""
    c = load_constants("2.28")
    assert not c.nvls_tree_correction and len(c.tree_correction[2]) == 23
    g = Graph(16, 40.0, 40.0)
    inp = TunerInputs(
        n_nodes=4, n_ranks=32, arch="blackwell", intra_hw="nvlink", ring=g, tree=g, nvls=g
    )
    choose(c, inp, "allreduce", 768 << 20)
