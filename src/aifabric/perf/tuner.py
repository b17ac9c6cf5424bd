"""NCCL's performance model, re-implemented from its source (S24: explainable numbers).

This follows NCCL ``src/graph/tuning.cc`` (``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime``) and
the graph search of ``src/graph/search.cc`` (speed ladders, channel duplication, the tree
graph's second pass) at tag v2.30.7-1 (https://github.com/NVIDIA/nccl/tree/v2.30.7-1); the
constants are data (``perf/data/nccl.yaml``).

For every (collective, algorithm, protocol) the model gives a latency ``lat`` (µs) and an
algorithm bandwidth ``bw`` (GB/s, after NCCL's bus→algorithm conversion); the time of one call on
``nBytes`` is ``t = lat + nBytes / (1000·bw)`` µs, and NCCL runs the pair with the smallest ``t``.

The same function serves twice (see :mod:`aifabric.perf.estimate`): with NCCL's *nominal*
inputs (what NCCL itself believes: NIC speed/8, its NVLink constants, the speed ladder) it picks
the algorithm and protocol as NCCL would; with *effective* inputs (goodput after framing, PCIe,
oversubscription; ``physical=True``) it predicts the time the chosen pair actually takes.
``physical=True`` changes what NCCL's selector over- or under-states on purpose:

* NVLS AllReduce: NCCL doubles the per-channel NVLS bandwidth ("pipelines two operations");
  measured NVLS AllReduce on 8×H100 is algbw ≈ 275 GB/s, busbw ≈ 480 (nccl-tests#212), which
  is ``B·η·(nCh−1)/nCh`` without the doubling (370.8·0.85·7/8 = 276).
* Tree and NVLSTree on **two nodes**: each node's data crosses the network once per direction
  (the root node receives the other node's reduced data and sends the result back), where a
  ring sends ``2(n−1)/n·S`` through every node: "on 2 nodes, traffic is not uniformly balanced
  and we have 2x less traffic on the network than on the intra-node connections ... Tree
  performance can go up to ~2x the network speed" (nccl#946). The intra-node chain carries the
  data up and back down, so Tree's algorithm bandwidth is ``min(B_net, B_intra/2)``; NVLSTree's
  is ``min(B_net, NVLS)``. NCCL's tuner sees the same through its tree graph: on two nodes the
  search raises the tree's intra-node speed up to twice the network speed (search.cc, "increase
  bwIntra for trees (2 nodes or collnet)") and the tuner uses that speed when ``nNodes <= 2``
  (and doubles NVLSTree's network term); with many NICs the per-channel tree caps keep Ring
  ahead ("if you have 8 NICs, Tree will struggle to get better performance than ring",
  nccl-tests#196). On 3 nodes a tree sends ``4/3`` less than a ring (SimAI calbusbw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from aifabric.perf.collectives import Collective
from aifabric.perf.constants import (
    ALGORITHMS,
    PROTOCOLS,
    Algorithm,
    Arch,
    NcclConstants,
    Protocol,
    load_constants,
)

__all__ = [
    "Choice",
    "Graph",
    "TunerInputs",
    "algo_time_parts",
    "algo_time_us",
    "choose",
    "search_graph",
    "search_tree_graph",
    "tune",
]

NcclColl = Literal["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]
_P = {p: i for i, p in enumerate(PROTOCOLS)}


@dataclass(frozen=True, slots=True)
class Graph:
    """What NCCL's graph search found for one algorithm: channels and per-channel bandwidth."""

    n_channels: int
    bw_intra: float
    """GB/s per channel inside a node."""
    bw_inter: float
    """GB/s per channel across nodes."""
    speed: float = 0.0
    """The speed-ladder step the search settled on, before channel duplication."""
    duplicated: bool = False


@dataclass(frozen=True, slots=True)
class TunerInputs:
    """The communicator as NCCL's tuner sees it."""

    n_nodes: int
    n_ranks: int
    arch: Arch
    intra_hw: Literal["nvlink", "pci"]
    ring: Graph
    tree: Graph
    nvls: Graph | None = None
    """Present when the GPUs sit on an NVSwitch with NVLink SHARP (H100, B200...)."""
    collnet: Graph | None = None
    """Present when the network reduces in-switch (InfiniBand SHARP)."""
    cpu: Literal["intel", "amd", "other"] = "intel"
    latency_inter_us: float = 0.0
    physical: bool = False
    disabled: frozenset[str] = field(default_factory=frozenset)
    """Algorithms or protocols masked out (``NCCL_ALGO`` / ``NCCL_PROTO``)."""

    @property
    def ppn(self) -> float:
        return self.n_ranks / self.n_nodes


def _nsteps(coll: NcclColl, n: int) -> int:
    """Ring steps: 2(n−1) for AllReduce, n−1 for AllGather/ReduceScatter, n otherwise."""
    if coll == "allreduce":
        return 2 * (n - 1)
    if coll in ("allgather", "reducescatter"):
        return n - 1
    return n


def _col(n_nodes: int) -> int:
    return 0 if n_nodes == 1 else 1 if n_nodes == 2 else 2


def search_graph(
    c: NcclConstants,
    arch: Arch,
    *,
    n_nodes: int,
    gpus_per_node: int,
    intra_total_GBps: float,
    nic_GBps: float,
    nics_per_node: int,
    max_channels: int | None = None,
    duplicate: bool = True,
) -> Graph:
    """Emulate the graph search's outcome: the speed-ladder step ``s`` and channel count ``nCh``
    that maximise ``nCh·s`` under the per-GPU intra-node bandwidth and (across nodes) the NIC
    bandwidth, at most ``max_search_channels`` channels, trying lower speeds only while they
    stay above 0.49 of the best one found (search.cc: ``speedArray[speedIndex + 1] /
    graph->bwInter > .49``); then NCCL's channel duplication
    (``ncclTopoDupChannels``: double when ``s ≥ 25``, except on Hopper+ when ``s < 50`` and
    ``nCh > 4``; the per-channel bandwidth halves, the total is unchanged).

    A simplification of search.cc, which also explores ring orders and PCI paths; it reproduces
    the channel counts seen in real logs (e.g. 8×H100 one node: 6 channels at 60 → 12 at 30)."""
    inter = n_nodes > 1
    cap = max_channels or c.max_search_channels
    key = (c.release, c.tag, arch, inter, intra_total_GBps, nic_GBps, nics_per_node, cap, duplicate)
    hit = _SEARCHED.get(key)
    if hit is not None:
        return hit
    graph = _search(c, arch, inter, intra_total_GBps, nic_GBps, nics_per_node, cap, duplicate)
    if len(_SEARCHED) > 4096:
        _SEARCHED.clear()
    _SEARCHED[key] = graph
    return graph


_SEARCHED: dict[tuple[object, ...], Graph] = {}


def search_tree_graph(
    c: NcclConstants, arch: Arch, ring: Graph, *, intra_total_GBps: float
) -> Graph:
    """NCCL's tree graph on two nodes (search.cc ``ncclTopoCompute`` with the tree pattern).

    The tree is searched with exactly the ring's channel count (``init.cc``: ``treeGraph->
    minChannels = maxChannels = ringGraph->nChannels``) and the ring's per-channel network speed
    ``s``; its second pass then raises the intra-node speed one step of the inter-node ladder at
    a time while it is below ``2·s`` and the channels still fit the NVLink of one GPU
    (``nCh·bwIntra <= B_NVLink``). The result keeps ``bw_inter = s``; ``bw_intra`` is what
    NCCL's tuner uses for Tree on two nodes."""
    inter = ring.bw_inter
    intra = inter
    for step in sorted(x for x in c.speeds(arch, True) if x > inter):
        if intra >= 2.0 * inter - 1e-9 or ring.n_channels * step > intra_total_GBps + 1e-9:
            break
        intra = step
    return Graph(ring.n_channels, intra, inter, speed=ring.speed, duplicated=ring.duplicated)


def _search(
    c: NcclConstants,
    arch: Arch,
    inter: bool,
    intra_total_GBps: float,
    nic_GBps: float,
    nics_per_node: int,
    cap: int,
    duplicate: bool,
) -> Graph:
    best: tuple[float, int, float] = (0.0, 0, 0.0)
    target = max(intra_total_GBps, nic_GBps * nics_per_node if inter else 0.0)
    for s in c.speeds(arch, inter):
        if best[2] and s / best[2] <= 0.49:
            break  # search.cc lowers the speed only while next / found > .49
        n = min(cap, math.floor(intra_total_GBps / s + 1e-9))
        if inter:
            n = min(n, nics_per_node * math.floor(nic_GBps / s + 1e-9))
        if n < 1:
            continue
        if n * s > best[0] + 1e-9:
            best = (n * s, n, s)
        if n * s >= target - 1e-9:
            break
    _, n_ch, s = best
    if n_ch == 0:  # slower than the last ladder step: one channel at whatever there is
        s = min(intra_total_GBps, nic_GBps if inter else intra_total_GBps)
        n_ch = 1
    dup = (
        duplicate and s >= 25.0 and not (arch in ("hopper", "blackwell") and s < 50.0 and n_ch > 4)
    )
    if dup:
        n2 = min(n_ch * 2, c.max_search_channels)
        if n2 > n_ch:
            factor = math.ceil(n2 / n_ch)
            return Graph(n2, s / factor, s / factor, speed=s, duplicated=True)
    return Graph(n_ch, s, s, speed=s)


def _enabled(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl, algo: Algorithm, proto: Protocol
) -> bool:
    if algo in inp.disabled or proto in inp.disabled:
        return False
    if algo not in c.algorithms:  # e.g. PAT before 2.23
        return False
    if coll in ("broadcast", "reduce") and algo != "ring":
        return False
    if coll in ("allgather", "reducescatter") and algo not in (
        "pat",
        "ring",
        "nvls",
        "collnet_direct",
    ):
        return False
    if coll == "allreduce" and algo == "pat":
        return False
    if (
        algo in ("nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat")
        and proto != "Simple"
    ):
        return False
    if algo == "pat" and not (inp.n_nodes == inp.n_ranks and inp.n_nodes > 1):
        return False  # PAT needs one GPU per node
    if algo in ("nvls", "nvls_tree") and inp.nvls is None:
        return False
    if algo == "nvls_tree" and inp.n_nodes == 1:
        return False
    if algo == "nvls" and inp.n_nodes > 1 and inp.collnet is None:
        return False
    if algo in ("collnet_direct", "collnet_chain") and inp.collnet is None:
        return False
    if (
        algo in ("nvls", "collnet_direct")
        and coll in ("allgather", "reducescatter")
        and inp.n_nodes > 1
    ):
        return False  # needs collnet AllGather/ReduceScatter support and 1:1 GPU:NIC heads
    # LL128 only on NVLink-class intra paths (tuning.cc: typeIntra <= PATH_NVB)
    return not (proto == "LL128" and inp.intra_hw != "nvlink")


def _graph(inp: TunerInputs, algo: Algorithm) -> Graph:
    if algo in ("nvls", "nvls_tree") and inp.nvls is not None:
        return inp.nvls
    if algo in ("collnet_direct", "collnet_chain") and inp.collnet is not None:
        return inp.collnet
    if algo == "tree":
        return inp.tree
    return inp.ring


def _bandwidth(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl, algo: Algorithm, proto: Protocol
) -> float:
    """Algorithm bandwidth (GB/s) of one (coll, algo, proto): tuning.cc busBw, its refinements and
    the bus→algorithm conversion."""
    g = _graph(inp, algo)
    col = _col(inp.n_nodes)
    n, nodes, ppn = inp.n_ranks, inp.n_nodes, inp.ppn
    arch = inp.arch
    llrow = arch if nodes == 1 else ("ampere" if inp.cpu == "amd" else "volta")
    ll_max = c.ll_max_bw_GBps[llrow][col]
    collnet = algo in ("collnet_direct", "collnet_chain")
    bw = g.bw_intra if nodes <= 2 or collnet else g.bw_inter
    if algo in ("nvls", "nvls_tree") and c.nvls_algbw_ratio is not None and not inp.physical:
        # before 2.28 (tuning.cc at v2.26.6-1): NVLS bw = min(bwIntra, bwInter), NVLSTree
        # min(bwIntra, bwInter or bwInter/2 past two nodes), busBw = nChannels·bw, then a fixed
        # bus→algorithm ratio (5/6; 0.75 in 2.18.1), none for AllGather/ReduceScatter
        inter = g.bw_inter if algo == "nvls" or nodes <= 2 else g.bw_inter / 2
        bus = g.n_channels * min(g.bw_intra, inter)
        return bus if coll in ("allgather", "reducescatter") else bus * c.nvls_algbw_ratio
    if algo in ("nvls", "nvls_tree"):
        if g.n_channels < 2:
            return 0.0
        # what NVLS SHARP delivers is the hardware's, whatever the release: where the release
        # predates NCCL's measured nvlsEfficiency (2.28), the physical path uses the newest one
        eff = c.nvls_efficiency[arch] or load_constants().nvls_efficiency[arch]
        intra = g.bw_intra * eff * (g.n_channels - 1) / g.n_channels
        if coll == "allreduce":
            # NCCL: x2 ("pipelines two operations"); measured: algbw = B·η·(nCh−1)/nCh, i.e. a
            # busBw of that x 2(n−1)/n before the bus→algorithm conversion below
            intra *= 2.0 * (n - 1) / n if inp.physical else 2.0
        else:
            intra *= (ppn - 1) / ppn
        two = nodes <= 2 and algo == "nvls_tree"
        # NCCL: network term x2 on two nodes; physically each node's data crosses the network
        # once per direction, i.e. algbw = B_net, a per-channel busBw of bw_inter x 2(n-1)/n
        inter = g.bw_inter * ((2.0 * (n - 1) / n if inp.physical else 2.0) if two else 1.0)
        bw = min(intra, inter)
        if algo == "nvls_tree":
            bw = min(bw, c.per_ch_max_nvls_tree_bw_GBps[arch][col])
    tree_factor = 0.92
    cap_channels = g.n_channels
    if inp.physical and nodes > 1 and not collnet and algo in ("ring", "tree"):
        # what the wire carries: the network-bound per-channel rate, never NVLink's, even on 2
        # nodes (NCCL's selector uses bwIntra there); a tree on 2 or 3 nodes sends S per node
        # where a ring sends ~2S, so its network term is x2 or x4/3
        boost = (
            2.0
            if (algo == "tree" and nodes == 2)
            else 4.0 / 3.0
            if algo == "tree" and nodes == 3
            else 1.0
        )
        bw = min(g.bw_inter * boost, g.bw_intra)
        if algo == "tree" and nodes == 2:
            # the data-movement bound min(2 B_net, B_intra) itself: NCCL's 0.92 belongs to its
            # selector; the per-channel SM caps apply to the channels that run, twice the
            # graph's (connect.cc ncclTopoPostset: "Duplication should be complete now")
            tree_factor = 1.0
            cap_channels = min(c.max_channels, 2 * g.n_channels)
    bus = g.n_channels * bw
    if algo == "ring" and proto == "LL":
        # 0.5 since 2.21; before, 1/4 (several nodes, AllReduce, Reduce) or 1/3
        ll = c.ring_ll_factor[0 if nodes > 1 or coll in ("allreduce", "reduce") else 1]
        bus = min(ll_max, bus * ll)
    if algo == "ring" and proto == "LL128":
        factor = c.ring_ll128_factor if ppn >= 2 else c.ring_ll128_factor_ppn1
        bus = min(bus * factor, g.n_channels * c.per_ch_max_ring_ll128_bw_GBps[arch][col])
    if algo == "tree" and coll == "allreduce":
        bus = min(bus * tree_factor, cap_channels * c.per_ch_max_tree_bw_GBps[arch][col])
    if algo == "tree" and proto == "LL":
        bus = min(bus / 3.8, ll_max)
    if algo == "tree" and proto == "LL128":
        bus = min(
            bus * (7.0 / 9.0 if nodes == 1 else 120.0 / 128.0),
            cap_channels * c.per_ch_max_tree_ll128_bw_GBps[arch][col],
        )
    if algo == "pat":
        bus *= c.pat_factor  # 0.85 in 2.23, 0.75 since 2.24
    if algo == "collnet_direct":
        if coll in ("allgather", "reducescatter"):
            bus = ppn * min(g.bw_intra, g.bw_inter * 0.9)
        else:
            f = ppn / g.n_channels
            f -= (f - 1) / 2
            bus /= f
            if arch in ("hopper", "blackwell"):
                bus *= 0.85
    # bus -> algorithm bandwidth
    if not (algo != "ring" and coll in ("allgather", "reducescatter")):
        if algo in ("ring", "nvls", "nvls_tree"):
            bus *= n / _nsteps(coll, n)
        else:
            bus *= 0.5
    return bus


def _latency(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl, algo: Algorithm, proto: Protocol
) -> float:
    """Latency (µs) of one call: tuning.cc base + hardware latencies per step."""
    p = _P[proto]
    n, nodes = inp.n_ranks, inp.n_nodes
    ppn = n // nodes
    intra_lat = c.hw_latency_us[inp.intra_hw][algo][p]
    inter_algo = "tree" if ppn == 1 else algo
    inter_lat = c.hw_latency_us["net"][inter_algo][p] + inp.latency_inter_us
    if proto == "Simple":
        inter_lat += inp.latency_inter_us
    lat = c.base_latency_us[algo][p]
    log2n = int(math.log2(nodes)) if nodes > 0 else 0
    if algo == "ring":
        hw = "net" if nodes > 1 else inp.intra_hw
        step = c.hw_latency_us[hw]["ring"][p]
        nsteps = _nsteps(coll, n)
        if coll in ("broadcast", "reduce"):
            # rings differ per channel in general: one chunk latency per step
            step = c.hw_latency_us[hw]["tree"][p] if proto == "Simple" else step
            return lat + nsteps * step
        overhead = 0.0
        if nodes > 1:
            overhead = c.net_overhead_us.get(inp.cpu, 1.0) * (3.0 if proto == "Simple" else 1.0)
        intra = max(intra_lat, overhead)
        inter_steps = 0 if nodes == 1 else 2 * (nodes - 1) if coll == "allreduce" else nodes - 1
        return lat + (nsteps - inter_steps) * intra + inter_steps * inter_lat
    if algo == "tree":
        return lat + 2 * ((ppn - 1) * intra_lat + log2n * inter_lat)
    if algo == "collnet_direct":
        return lat + 2 * (min(1, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat
    if algo == "collnet_chain":
        return lat + 2 * (ppn - 1) * intra_lat + inter_lat
    if algo == "nvls":
        return intra_lat + (inter_lat if nodes > 1 else 0.0)
    if algo == "nvls_tree":
        return lat + intra_lat + 2 * log2n * inter_lat
    # pat
    return lat + log2n * (inter_lat / 3.5) + n * 2.8


def tune(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl
) -> dict[tuple[Algorithm, Protocol], tuple[float, float]]:
    """``{(algo, proto): (latency_us, algbw_GBps)}`` for every enabled pair with bandwidth > 0
    (cached per release, inputs and collective; treat the result as read-only)."""
    key = (c.release, c.tag, inp, coll)
    table = _TUNED.get(key)
    if table is None or _TUNED_CONST.get(key) is not c:
        table = _tune(c, inp, coll)
        if len(_TUNED) > 4096:
            _TUNED.clear()
            _TUNED_CONST.clear()
        _TUNED[key] = table
        _TUNED_CONST[key] = c
    return table


_TUNED: dict[
    tuple[str, str, TunerInputs, str], dict[tuple[Algorithm, Protocol], tuple[float, float]]
] = {}
_TUNED_CONST: dict[tuple[str, str, TunerInputs, str], NcclConstants] = {}


def _tune(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl
) -> dict[tuple[Algorithm, Protocol], tuple[float, float]]:
    table: dict[tuple[Algorithm, Protocol], tuple[float, float]] = {}
    for algo in ALGORITHMS:
        for proto in PROTOCOLS:
            if not _enabled(c, inp, coll, algo, proto):
                continue
            bw = _bandwidth(c, inp, coll, algo, proto)
            if bw > 0:
                table[(algo, proto)] = (_latency(c, inp, coll, algo, proto), bw)
    return table


def algo_time_parts(
    c: NcclConstants,
    inp: TunerInputs,
    coll: NcclColl,
    algo: Algorithm,
    proto: Protocol,
    lat: float,
    bw: float,
    n_bytes: float,
) -> tuple[float, float]:
    """``ncclTopoGetAlgoTime`` split in its two terms ``(lat, S/(1000·bw))`` in µs, after the
    tree correction by size and the ring plateau."""
    log_size = int(math.log2(n_bytes / 64)) if n_bytes >= 64 else -1
    if algo == "tree" and coll == "allreduce" and 0 <= log_size < 23:
        bw *= c.tree_correction[_P[proto]][log_size]
    if (
        algo == "nvls_tree"
        and coll == "allreduce"
        and 0 <= log_size < len(c.tree_correction[_P[proto]])
        and c.nvls_tree_correction
        and inp.arch == "blackwell"
        and inp.cpu in ("intel", "amd")
    ):
        bw *= c.tree_correction[_P[proto]][log_size]
    if (
        algo == "ring"
        and proto == "Simple"
        and inp.n_nodes > 1
        and coll == "allreduce"
        and n_bytes / (inp.ring.n_channels * inp.n_ranks) >= 64
    ):
        lat *= c.ring_plateau[0] if inp.arch == "volta" else c.ring_plateau[1]
    return lat, n_bytes / (1000.0 * bw)


def algo_time_us(
    c: NcclConstants,
    inp: TunerInputs,
    coll: NcclColl,
    algo: Algorithm,
    proto: Protocol,
    lat: float,
    bw: float,
    n_bytes: float,
) -> float:
    """``ncclTopoGetAlgoTime``: ``lat + S/(1000·bw)`` µs (see :func:`algo_time_parts`)."""
    a, b = algo_time_parts(c, inp, coll, algo, proto, lat, bw, n_bytes)
    return a + b


@dataclass(frozen=True, slots=True)
class Choice:
    """The pair NCCL would run and the model's figures for it."""

    algorithm: Algorithm
    protocol: Protocol
    time_us: float
    latency_us: float
    algbw_GBps: float
    """Model algorithm bandwidth, before the size-dependent tree correction."""


def choose(
    c: NcclConstants, inp: TunerInputs, coll: NcclColl, n_bytes: float
) -> tuple[Choice, dict[tuple[Algorithm, Protocol], float]]:
    """The minimum-time pair (NCCL's selection) and the time of every candidate."""
    table = tune(c, inp, coll)
    times = {
        key: algo_time_us(c, inp, coll, key[0], key[1], lat, bw, n_bytes)
        for key, (lat, bw) in table.items()
    }
    if not times:
        raise ValueError(f"no algorithm enabled for {coll}")
    best = min(times, key=lambda k: times[k])
    lat, bw = table[best]
    return Choice(best[0], best[1], times[best], lat, bw), times


def collective_for_tuner(coll: Collective) -> NcclColl | None:
    """AlltoAll is not an NCCL collective (it is grouped send/recv); everything else maps 1:1."""
    return None if coll == "alltoall" else coll
