"""Collective performance estimate: the time and bus bandwidth a platform should give, and why.

``estimate(platform, collective, sizes)`` returns nccl-tests-shaped rows (size, time, algbw,
busbw, algorithm, protocol: the stable JSON shape), the link that bounds the result, and the
explanation.

(About 800 lines because the explanation of every number, ``_derive_steps``, lives beside the
computation it explains so the two cannot drift; the tuner, the hardware limits and the fabric
terms are already their own modules.)

How a row is computed (S23, S24):

1. *Nominal* inputs, what NCCL believes (its NVLink constant, NIC speed/8 capped by its PCIe
   model, the speed ladder), go through :func:`aifabric.perf.tuner.search_graph` and
   :func:`~aifabric.perf.tuner.choose`: the (algorithm, protocol) NCCL would run.
2. *Effective* inputs, what the wire and buses deliver (NIC goodput after RoCE/IB framing, PCIe,
   host staging without GPUDirect RDMA, TCP streams, the fabric factor for oversubscription and
   ECMP), with the same channel counts, give the time of that pair: ``t = α + S / bw``
   (:mod:`aifabric.perf.tuner`, ``physical=True``). On two nodes NCCL's tree graph differs from
   the ring's (:func:`~aifabric.perf.tuner.search_tree_graph`), which is what makes NCCL run
   Tree or NVLSTree there and busbw exceed the ring bound.
3. ``algbw = S/t``, ``busbw = algbw · factor(n)`` exactly as nccl-tests
   (:mod:`aifabric.perf.collectives`).

AlltoAll is not an NCCL collective (grouped send/recv): each rank sends ``S/n`` to every peer;
the remote share ``S·(n−g)/n`` crosses the rank's share of the node's NICs and the local share its
NVLink (one NIC per GPU at most: "Alltoall cannot aggregate the bandwidth of multiple NICs",
nccl-tests#267). Its latency is aifabric's approximation (NCCL does not model p2p): a ring Simple
step per peer batch of 8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from aifabric.catalog.models import GpuSpec, PcieGenSpec
from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.perf.collectives import Collective, busbw_factor
from aifabric.perf.constants import Arch, NcclConstants, arch_of, load_constants
from aifabric.perf.ecmp import ecmp_expected_max
from aifabric.perf.hardware import (
    HostStaging,
    NicPath,
    Transport,
    nic_goodput,
    socket_config,
)
from aifabric.perf.tuner import (
    Graph,
    NcclColl,
    TunerInputs,
    algo_time_parts,
    choose,
    search_graph,
    search_tree_graph,
    tune,
)

__all__ = [
    "Efficiency",
    "Estimate",
    "FabricFactor",
    "Platform",
    "Row",
    "estimate",
    "sweep_sizes",
]

NVLS_MAX_ARITY = 32
"""NCCL_MAX_NVLS_ARITY: the NVLS graph has one channel per local GPU, at most this many."""

NCCL_SRC = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/"
REF_TESTS = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
REF_ECMP = (
    "balls into bins: Raab & Steger, 'Balls into Bins - A Simple and Tight Analysis', "
    "RANDOM 1998, https://doi.org/10.1007/3-540-49543-6_13 (E[max load] of k flows on m links)"
)
REF_NODE_BW = (
    "a ring crosses each node once per channel: busbw = NICs per node x NIC goodput " + REF_TESTS
)
REF_TWO_NODES = (
    NCCL_SRC
    + "src/graph/search.cc (tree second pass: 'increase bwIntra for trees'), "
    + NCCL_SRC
    + "src/graph/tuning.cc (nNodes <= 2: bwIntra; NVLSTree interBw x2); "
    "https://github.com/NVIDIA/nccl/issues/946 and https://github.com/NVIDIA/nccl-tests/"
    "issues/196 (two nodes: Tree/NVLSTree above the network bottleneck)"
)
REF_NVLS_TREE = (
    "https://github.com/NVIDIA/nccl-tests/issues/153 (2 x 8 H800, 8 x 100G: busbw 161 of "
    "~178 GB/s bound); https://github.com/aws-samples/aws-do-eks/blob/701c554a6f00012781e83e5a2"
    "ea020fe6bb8cd46/Container-Root/eks/deployment/nccl-test/README.md (2 x p5.48xlarge, NVLS "
    "tree: 438.85 GB/s at 2 GiB)"
)


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Calibratable constants: what share of the physical figure NCCL achieves."""

    nic: float = 0.97
    """NCCL goodput / wire goodput per NIC: 47.5 of 49.0 GB/s at 400G RoCE (NCCL maintainers:
    46-49 GB/s per 400G NIC, nccl-tests#267, #290; 4 x 400G RoCE ring 190 GB/s)."""
    intra: float = 1.0
    """Achieved / NCCL-modeled NVLink bandwidth (H100 ring busbw ~370 = modeled 370.8,
    nccl-tests#212)."""
    latency: float = 1.0
    """Multiplier on NCCL's latency constants (fitted by calibration)."""
    bandwidth: float = 1.0
    """Multiplier on every effective bandwidth (fitted by calibration)."""
    nvls_tree: float = 0.9
    """Share of its bound ``min(B_net, NVLS)`` that NVLSTree reaches on two nodes: 161 of 178
    GB/s network-bound (2 x 8 H800 with 8 x 100G, nccl-tests#153) and 438.9 of ~460 GB/s
    NVLS-bound (2 x p5.48xlarge at 2 GiB). On more nodes the ring-like bound already matches
    published figures (4 x 8 H100, 366-381 GB/s) and no share is applied."""
    source: str = (
        "defaults: NIC 0.97 (nccl-tests#267, #290), NVLink 1.0 (nccl-tests#212), NVLSTree on "
        "two nodes 0.9 (nccl-tests#153)"
    )


@dataclass(frozen=True, slots=True)
class FabricFactor:
    """What the fabric does to inter-node traffic (see :mod:`aifabric.perf.fabric`).

    ``value`` is a fixed share of the NICs' goodput (1.0: non-blocking); when ``uplinks`` is set
    the share is computed per collective from the flows that cross the busiest leaf's uplinks
    (:meth:`share`)."""

    value: float = 1.0
    steps: tuple[Explained, ...] = field(default=(), compare=False)
    crosses: str = "leaf"
    """Highest tier the job crosses: ``none``, ``leaf``, ``spine``, ``super-spine``."""
    uplinks: int = 0
    uplink_GBps: float = 0.0
    leaf_ports: int = 0
    """The job's NIC ports on the busiest leaf."""
    rail: bool = True
    """A rail leaf (one port per server) rather than a ToR (all of a server's ports)."""
    ecmp: bool = False

    def share(
        self,
        *,
        pattern: str,
        n_channels: int,
        nics_per_node: int,
        node_GBps: float,
        explain: bool = False,
    ) -> tuple[float, Explained | None]:
        """Share of ``node_GBps`` the crossing flows get.

        Ranks are placed contiguously (a topology-aware scheduler), so a ring or tree leaves a
        leaf only at its boundary node: ``k`` = the channels on that leaf's ports of one node
        (rail leaf: nCh/NICs; ToR: nCh), each demanding ``d = B_node/nCh``. AlltoAll sends from
        every port: ``k`` = the job's ports on the leaf, ``d`` = one NIC's rate. With ``m``
        uplinks of ``u`` GB/s the busiest carries ``E[max]`` flows under hash ECMP
        (``k/m`` with adaptive routing), so the share is ``min(1, u / (E[max]·d))``."""
        if self.uplinks <= 0:
            return self.value, None
        if pattern == "alltoall":
            k = max(self.leaf_ports, 1)
            d = node_GBps / max(nics_per_node, 1)
        else:
            per_nic = max(1, math.ceil(n_channels / max(nics_per_node, 1)))
            k = per_nic if self.rail else n_channels
            d = node_GBps / max(n_channels, 1)
        m, u = self.uplinks, self.uplink_GBps
        load = ecmp_expected_max(k, m) if self.ecmp else max(k / m, 1.0)
        share = min(1.0, u / (load * d)) if d > 0 else 1.0
        if not explain:
            return share * self.value, None
        step = Explained.fast(
            quantity="fabric share",
            value=round(share, 4),
            formula=(
                "min(1, u / (E[max flows per uplink] x d))"
                if self.ecmp
                else "min(1, u / (max(k/m, 1) x d))"
            ),
            inputs={
                "pattern": pattern,
                "k_flows": k,
                "m_uplinks": m,
                "u_GBps": round(u, 2),
                "d_GBps_per_flow": round(d, 2),
                "flows_on_busiest_uplink": round(load, 3),
            },
            sources=[REF_ECMP, "S6"],
            note="hash ECMP: the collective waits for the busiest uplink" if self.ecmp else None,
        )
        return share * self.value, step


@dataclass(frozen=True, slots=True)
class Platform:
    """One communicator's hardware: ``nodes × gpus_per_node`` GPUs, NICs, transport."""

    gpu: GpuSpec
    nodes: int
    gpus_per_node: int
    nics_per_node: int
    nic_speed_gbps: float
    transport: Transport
    nic_pcie: PcieGenSpec
    nic_pcie_lanes: int = 16
    gpu_pcie: PcieGenSpec | None = None
    eth_mtu: int = 9000
    ipv6: bool = False
    vlan: bool = False
    cpu: Literal["intel", "amd", "other"] = "intel"
    sharp: bool = False
    """In-network reduction across nodes (InfiniBand SHARP → NCCL CollNet)."""
    nccl_release: str | None = None
    efficiency: Efficiency = field(default_factory=Efficiency)
    fabric: FabricFactor = field(default_factory=FabricFactor)
    disabled: frozenset[str] = frozenset()
    nic_label: str = ""
    gdr: bool = True
    """GPUDirect RDMA between the NICs and the GPUs; False stages every byte through host
    memory (:mod:`aifabric.perf.hardware`)."""
    shared_pcie_switch: bool | None = None
    """Each GPU and its NIC sit under one PCIe switch (the HGX layout). None: assumed for GPUs
    on PCIe, not for NVLink-C2C superchips. Matters only without GDR."""
    host_memory_GBps: float | None = None
    """Peak host-memory bandwidth per node (None: the GPU catalog's superchip CPU figure, else
    not modelled). Matters only without GDR."""
    nic_pci_vendor: str | None = None
    """The NIC's PCI vendor id; NCCL's socket transport tunes its threads by it."""
    socket_threads: int | None = None
    """``NCCL_SOCKET_NTHREADS`` (None: NCCL's automatic choice)."""
    socket_socks_per_thread: int | None = None
    """``NCCL_NSOCKS_PERTHREAD`` (None: NCCL's automatic choice)."""
    tcp_flow_GBps: float = 2.0
    """Rate of one TCP flow as NCCL drives it (nccl#209: one ring 1.85-2.06 GB/s)."""

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def arch(self) -> Arch:
        return arch_of(self.gpu.compute_capability)


@dataclass(frozen=True, slots=True)
class Row:
    """One size, nccl-tests style."""

    size_bytes: int
    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    algorithm: str
    protocol: str
    bottleneck: str
    """``latency`` when the α term is most of the time, else the link that bounds bandwidth."""
    latency_us: float = 0.0
    """The α part of ``time_us`` (the rest is ``S / bw``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "size_bytes": self.size_bytes,
            "time_us": round(self.time_us, 3),
            "algbw_GBps": round(self.algbw_GBps, 3),
            "busbw_GBps": round(self.busbw_GBps, 3),
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "bottleneck": self.bottleneck,
            "latency_us": round(self.latency_us, 3),
        }


@dataclass(frozen=True, slots=True)
class Estimate:
    """Rows, the bounding link and the derivation."""

    collective: Collective
    ranks: int
    rows: tuple[Row, ...]
    bottleneck: dict[str, Any]
    peak_busbw_GBps: float
    """Large-message bus bandwidth the platform bounds (the asymptote of the sweep)."""
    explainer: Callable[[], tuple[Explained, ...]] = field(repr=False, compare=False)

    @property
    def explain(self) -> tuple[Explained, ...]:
        """Formula, inputs and sources of every figure (S24), built on demand."""
        return self.explainer()

    def to_json(self) -> dict[str, Any]:
        return {
            "collective": self.collective,
            "ranks": self.ranks,
            "rows": [r.to_json() for r in self.rows],
            "bottleneck": self.bottleneck,
            "peak_busbw_GBps": round(self.peak_busbw_GBps, 3),
            "explain": [e.model_dump(exclude_none=True) for e in self.explain],
        }


@dataclass(frozen=True, slots=True)
class _Derived:
    const: NcclConstants
    nominal: TunerInputs
    effective: TunerInputs
    intra_eff: float
    net_eff: float
    share: float
    nic: NicPath
    intra_nom: float
    nic_nom: float


def sweep_sizes(min_bytes: int, max_bytes: int, factor: float = 2.0) -> list[int]:
    """nccl-tests' ``-b/-e/-f`` sweep: ``min, min·f, …`` up to ``max`` inclusive."""
    if min_bytes <= 0 or max_bytes < min_bytes:
        raise InputError("size sweep needs 0 < -b <= -e")
    if factor <= 1.0:
        raise InputError("size sweep factor -f must be > 1")
    sizes: list[int] = []
    s = float(min_bytes)
    while s <= max_bytes * (1 + 1e-12) and len(sizes) < 4096:
        sizes.append(int(s))
        s *= factor
    return sizes


def _intra_nominal(p: Platform) -> tuple[float, Literal["nvlink", "pci"]]:
    g = p.gpu
    if g.scale_up == "nvlink" and g.nccl_scale_up_GBps:
        return g.nccl_scale_up_GBps, "nvlink"
    if g.nccl_scale_up_GBps:
        return g.nccl_scale_up_GBps, "pci"
    if g.scale_up_GBps:  # no NCCL constant (e.g. Infinity Fabric): NCCL's ~82% of raw
        return 0.82 * g.scale_up_GBps, "nvlink" if g.scale_up != "pcie" else "pci"
    return 24.0, "pci"


def _shared_switch(p: Platform) -> bool:
    """GPU and NIC under one PCIe switch: as stated, else assumed for PCIe-attached GPUs (the
    HGX/DGX layout) and not for NVLink-C2C superchips, whose NICs hang off the CPU."""
    if p.shared_pcie_switch is not None:
        return p.shared_pcie_switch
    return p.gpu.host_link == "pcie"


def _staging(p: Platform) -> HostStaging | None:
    """The host path NCCL takes without GPUDirect RDMA (None when GDR is on)."""
    if p.gdr or p.transport == "socket":
        return None
    if p.gpu.host_link == "nvlink-c2c" and p.gpu.host_link_GBps:
        link, kind = p.gpu.host_link_GBps, "nvlink-c2c"
    else:
        gen = p.gpu_pcie or p.nic_pcie
        link, kind = gen.raw_GBps(p.gpu.pcie_lanes), "pcie"
    return HostStaging(
        gpu_link_GBps=link,
        gpu_link=kind,
        shared_switch=_shared_switch(p),
        uplink_GBps=p.nic_pcie.effective_GBps(p.nic_pcie_lanes),
        host_memory_GBps=p.host_memory_GBps or p.gpu.host_memory_GBps,
        nics_per_node=max(p.nics_per_node, 1),
    )


@lru_cache(maxsize=256)
def _derive(p: Platform) -> _Derived:
    """Nominal and effective tuner inputs of a platform (cached: platforms are frozen)."""
    if p.nodes < 1 or p.gpus_per_node < 1:
        raise InputError("nodes and GPUs per node must be at least 1")
    if p.nodes > 1 and (p.nics_per_node < 1 or p.nic_speed_gbps <= 0):
        raise InputError("more than one node needs --nics-per-node and --nic-speed")
    c = load_constants(p.nccl_release)
    arch = p.arch
    intra_nom, intra_hw = _intra_nominal(p)
    gpus_per_nic = p.gpus_per_node / max(p.nics_per_node, 1)
    # NCCL's own view of a NIC: speed/8 (topo.cc), capped by its PCIe model (width·speed/80);
    # without GDR the GPU<->NIC path goes up to the CPU and back down (paths.cc), so a shared
    # PCIe switch's uplink carries each channel twice
    nccl_pcie = p.nic_pcie.nccl_model_x16_GBps or p.nic_pcie.raw_GBps(16) * 0.76
    nccl_pcie *= p.nic_pcie_lanes / 16
    nic_nom = min(p.nic_speed_gbps / 8.0, nccl_pcie)
    staging = _staging(p)
    if staging is not None and staging.shared_switch:
        nic_nom = min(nic_nom, nccl_pcie / 2.0)
    if p.gpus_per_node == 1 and p.nodes > 1:
        intra_nom = max(intra_nom, nic_nom * p.nics_per_node)
    ring = search_graph(
        c,
        arch,
        n_nodes=p.nodes,
        gpus_per_node=p.gpus_per_node,
        intra_total_GBps=intra_nom,
        nic_GBps=nic_nom,
        nics_per_node=max(p.nics_per_node, 1),
    )
    # two nodes: the tree graph's intra-node speed climbs up to twice the network's
    tree = search_tree_graph(c, arch, ring, intra_total_GBps=intra_nom) if p.nodes == 2 else ring
    nic = nic_goodput(
        speed_gbps=p.nic_speed_gbps,
        transport=p.transport,
        eth_mtu=p.eth_mtu,
        nic_pcie=p.nic_pcie,
        nic_lanes=p.nic_pcie_lanes,
        gpu_pcie=p.gpu_pcie,
        gpu_lanes=p.gpu.pcie_lanes,
        gpus_per_nic=1.0 / gpus_per_nic if gpus_per_nic > 0 else 1.0,
        nic_efficiency=p.efficiency.nic,
        tcp_flow_GBps=p.tcp_flow_GBps,
        sockets=socket_config(p.nic_pci_vendor, p.socket_threads, p.socket_socks_per_thread)
        if p.transport == "socket"
        else None,
        connections=ring.n_channels / max(p.nics_per_node, 1),
        ipv6=p.ipv6,
        vlan=p.vlan,
        staging=staging,
    )
    nvls_nom: Graph | None = None
    if p.gpu.nvls and p.gpus_per_node >= 4 and "nvls" not in p.disabled:
        # the NVLS graph has one channel per local GPU (search.cc: maxChannels =
        # min(NCCL_MAX_NVLS_ARITY, GPUs)); on one node nothing crosses the network, so its
        # inter-node rate is not a limit there
        nch = min(NVLS_MAX_ARITY, p.gpus_per_node)
        s = max((x for x in c.speeds(arch, False) if x * nch <= intra_nom + 1e-9), default=0.0)
        s = s or intra_nom / nch
        inter = ring.n_channels * ring.bw_inter / nch if p.nodes > 1 else 4.0 * s
        nvls_nom = Graph(nch, s, inter, speed=s)
    collnet_nom = ring if p.sharp and p.nodes > 1 else None
    nominal = TunerInputs(
        n_nodes=p.nodes,
        n_ranks=p.ranks,
        arch=arch,
        intra_hw=intra_hw,
        ring=ring,
        tree=tree,
        nvls=nvls_nom,
        collnet=collnet_nom,
        cpu=p.cpu,
        disabled=p.disabled,
    )
    intra_eff = intra_nom * p.efficiency.intra
    if p.gpus_per_node == 1:
        intra_eff = math.inf
    node_net = nic.goodput_GBps * p.nics_per_node
    share, _ = p.fabric.share(
        pattern="ring",
        n_channels=ring.n_channels,
        nics_per_node=p.nics_per_node,
        node_GBps=node_net,
    )
    net_eff = node_net * share if p.nodes > 1 else math.inf

    def eff(g: Graph | None, nvls: bool = False) -> Graph | None:
        if g is None:
            return None
        bw_i = (intra_eff if math.isfinite(intra_eff) else net_eff) / g.n_channels
        if nvls:
            bw_i = intra_nom * p.efficiency.intra / g.n_channels
        total = min(intra_eff, net_eff)
        bw_o = total / g.n_channels if math.isfinite(total) else bw_i
        if nvls and p.nodes == 1:
            bw_o = 4.0 * bw_i
        return Graph(g.n_channels, bw_i, bw_o, speed=g.speed, duplicated=g.duplicated)

    ring_eff = eff(ring)
    assert ring_eff is not None
    effective = replace(
        nominal,
        ring=ring_eff,
        tree=ring_eff,
        nvls=eff(nvls_nom, nvls=True),
        collnet=eff(collnet_nom),
        physical=True,
    )
    return _Derived(c, nominal, effective, intra_eff, net_eff, share, nic, intra_nom, nic_nom)


def _derive_steps(p: Platform, d: _Derived) -> list[Explained]:
    """How :func:`_derive` got its figures (built only when an explanation is asked for)."""
    c, ring, nic = d.const, d.nominal.ring, d.nic
    intra_nom, nic_nom, intra_eff, net_eff, share = (
        d.intra_nom,
        d.nic_nom,
        d.intra_eff,
        d.net_eff,
        d.share,
    )
    _, share_step = p.fabric.share(
        pattern="ring",
        n_channels=ring.n_channels,
        nics_per_node=p.nics_per_node,
        node_GBps=nic.goodput_GBps * p.nics_per_node,
        explain=True,
    )
    steps: list[Explained] = []
    steps.append(
        Explained.fast(
            quantity="NCCL graph (ring/tree)",
            value=f"{ring.n_channels} channels x {ring.bw_inter:g} GB/s",
            formula=(
                f"largest n·s over the speed ladder s with n <= {c.max_search_channels}, "
                "n·s <= NVLink per GPU and "
                "(across nodes) n <= NICs·floor(NIC/s); doubled when s >= 25 (not on Hopper+ "
                "when s < 50 and n > 4)"
            ),
            inputs={
                "nvlink_GBps": round(intra_nom, 2),
                "nic_GBps_nominal": round(nic_nom, 2),
                "nics_per_node": p.nics_per_node,
                "speed_step": ring.speed,
                "duplicated": str(ring.duplicated),
            },
            sources=[c.source, NCCL_SRC + "src/graph/search.cc (speed arrays, DupChannels)"],
        )
    )
    tree = d.nominal.tree
    if p.nodes == 2:
        steps.append(
            Explained.fast(
                quantity="NCCL tree graph (two nodes)",
                value=f"{tree.n_channels} channels x {tree.bw_intra:g} GB/s intra-node, "
                f"{tree.bw_inter:g} GB/s network",
                formula=(
                    "same channels and network speed s as the ring; the second pass raises the "
                    "intra-node speed up the ladder while < 2s and n x speed <= NVLink per GPU; "
                    "NCCL's tuner uses it for Tree on <= 2 nodes (and doubles NVLSTree's network "
                    "term)"
                ),
                inputs={
                    "channels": tree.n_channels,
                    "network_speed_s": tree.bw_inter,
                    "nvlink_GBps": round(intra_nom, 2),
                },
                sources=[REF_TWO_NODES],
                note=(
                    "each node's data crosses the network once per direction (a ring: "
                    "2(n-1)/n times), so Tree's algbw is min(B_net, B_intra/2) and NVLSTree's "
                    "min(B_net, NVLS): busbw can exceed the NICs' rate"
                ),
            )
        )
    steps.append(
        Explained.fast(
            quantity="intra-node bandwidth per GPU",
            value=round(intra_eff, 2) if math.isfinite(intra_eff) else "n/a (1 GPU per node)",
            unit="GB/s",
            formula="B_intra = NCCL-modeled scale-up bandwidth x eta_intra",
            inputs={
                "gpu": p.gpu.name,
                "modeled_GBps": round(intra_nom, 2),
                "eta_intra": p.efficiency.intra,
            },
            sources=[p.gpu.source],
        )
    )
    steps.extend(nic.steps)
    if p.nodes > 1:
        steps.extend(p.fabric.steps)
        if share_step is not None:
            steps.append(share_step)
        steps.append(
            Explained.fast(
                quantity="network bandwidth per node",
                value=round(net_eff, 2),
                unit="GB/s",
                formula="B_net = NICs per node x NIC goodput x fabric factor",
                inputs={
                    "nics_per_node": p.nics_per_node,
                    "nic_GBps": round(nic.goodput_GBps, 2),
                    "fabric_share": round(share, 4),
                },
                sources=[REF_NODE_BW],
            )
        )
    return steps


def _bound(p: Platform, d: _Derived, collective: Collective) -> dict[str, Any]:
    """The link that bounds large messages. AlltoAll across nodes is always bound by each GPU's
    share of the network (its remote share ``(n−g)/n`` dwarfs the NVLink share ``(g−1)/n``)."""
    a2a_net = collective == "alltoall" and p.nodes > 1
    if not a2a_net and (p.nodes == 1 or d.intra_eff <= d.net_eff):
        kind = "nvlink" if d.nominal.intra_hw == "nvlink" else "pcie"
        return {
            "kind": kind,
            "link": f"{p.gpu.name} {kind} (intra-node)",
            "limit_GBps": round(d.intra_eff, 2),
            "reason": "intra-node bandwidth per GPU is below the network bandwidth per node"
            if p.nodes > 1
            else "one node: only the scale-up links carry the collective",
        }
    if d.share < 1.0:
        return {
            "kind": "fabric",
            "link": f"fabric ({p.fabric.crosses} uplinks)",
            "limit_GBps": round(d.net_eff, 2),
            "reason": f"the busiest leaf's uplinks give the job {d.share:.0%} of its NIC "
            "bandwidth (oversubscription or ECMP collisions)",
        }
    label = p.nic_label or f"{p.nic_speed_gbps:g}G NIC"
    staged = "without GPUDirect RDMA every byte is staged through host memory: "
    why = {
        "wire": f"{p.transport} line rate after framing",
        "nic-pcie": f"the NIC's PCIe Gen{p.nic_pcie.gen} x{p.nic_pcie_lanes} slot (S9)",
        "gpu-pcie": "the GPU's PCIe link (GPUDirect RDMA crosses it) (S9)",
        "tcp": "TCP streams: connections x sockets x per-flow rate (S5)",
        "host-link": staged + "the GPU's own host link, crossed by SM loads and stores",
        "pcie-switch": staged + "the PCIe switch uplink carries the GPU's and the NIC's flows",
        "host-memory": staged + "host memory moves each network byte four times",
    }[d.nic.limit]
    kinds = {"wire": "network", "tcp": "tcp", "host-memory": "host-memory"}
    return {
        "kind": kinds.get(d.nic.limit, "pcie"),
        "link": f"{p.nics_per_node} x {label} per node ({p.transport})",
        "limit_GBps": round(d.net_eff, 2),
        "reason": f"network bandwidth per node bounds it; each NIC is limited by {why}",
    }


def _alltoall_row(p: Platform, d: _Derived, size: int) -> Row:
    n, g = p.ranks, p.gpus_per_node
    c = d.const
    remote = size * (n - g) / n
    local = size * (g - 1) / n
    per_gpu_net = d.net_eff / g if p.nodes > 1 else math.inf
    if p.nodes > 1:
        node = d.nic.goodput_GBps * p.nics_per_node
        share, _ = p.fabric.share(
            pattern="alltoall",
            n_channels=d.nominal.ring.n_channels,
            nics_per_node=p.nics_per_node,
            node_GBps=node,
        )
        per_gpu_net = min(node * share / g, d.nic.goodput_GBps * share)
    t_net = remote / (per_gpu_net * 1e3) if remote > 0 else 0.0
    t_loc = local / (d.intra_eff * 1e3) if local > 0 and math.isfinite(d.intra_eff) else 0.0
    hw = "net" if p.nodes > 1 else d.nominal.intra_hw
    alpha = c.base_latency_us["ring"][2] + c.hw_latency_us[hw]["ring"][2] * math.ceil((n - 1) / 8)
    alpha *= p.efficiency.latency
    t = alpha + max(t_net, t_loc) / p.efficiency.bandwidth
    alg = size / 1e9 / (t * 1e-6)
    neck = "latency" if alpha >= 0.5 * t else ("network" if t_net >= t_loc else "nvlink")
    return Row(size, t, alg, alg * busbw_factor("alltoall", n), "p2p", "Simple", neck, alpha)


def estimate(p: Platform, collective: Collective, sizes: Sequence[int] | Iterable[int]) -> Estimate:
    """Predicted nccl-tests rows for ``collective`` on platform ``p``."""
    d = _derive(p)
    n = p.ranks
    rows: list[Row] = []
    sizes = list(sizes)
    if not sizes:
        raise InputError("no message sizes to estimate")
    bound = _bound(p, d, collective)
    eff_tables: dict[str, Any] = {}
    for size in sizes:
        if size <= 0:
            raise InputError(f"message size must be positive, got {size}")
        if collective == "alltoall":
            rows.append(_alltoall_row(p, d, size))
            continue
        coll: NcclColl = collective
        if n == 1:
            rows.append(Row(size, 0.0, 0.0, 0.0, "none", "none", "one rank: nothing to move"))
            continue
        pick, _ = choose(d.const, d.nominal, coll, size)
        if coll not in eff_tables:
            eff_tables[coll] = tune(d.const, d.effective, coll)
        lat, bw = eff_tables[coll].get(
            (pick.algorithm, pick.protocol), (pick.latency_us, pick.algbw_GBps)
        )
        lat *= p.efficiency.latency
        bw *= p.efficiency.bandwidth * _algo_share(p, pick.algorithm)
        alpha, beta = algo_time_parts(
            d.const, d.effective, coll, pick.algorithm, pick.protocol, lat, bw, size
        )
        t = alpha + beta
        alg = size / 1e9 / (t * 1e-6)
        neck = "latency" if alpha >= beta else str(bound["kind"])
        rows.append(
            Row(
                size,
                t,
                alg,
                alg * busbw_factor(collective, n),
                _ALGO_NAMES[pick.algorithm],
                pick.protocol,
                neck,
                alpha,
            )
        )
    peak = _peak_busbw(p, d, collective)
    last = rows[-1]

    def explain() -> tuple[Explained, ...]:
        steps = [*_derive_steps(p, d)]
        if collective != "alltoall" and n > 1:
            steps.append(_choice_explained(p, d, collective, last.size_bytes))
        steps.append(_row_explained(p, collective, last, d))
        if collective == "alltoall" and p.nodes > 1:
            _, a2a = p.fabric.share(
                pattern="alltoall",
                n_channels=d.nominal.ring.n_channels,
                nics_per_node=p.nics_per_node,
                node_GBps=d.nic.goodput_GBps * p.nics_per_node,
                explain=True,
            )
            if a2a is not None:
                steps.append(a2a)
        steps.append(
            Explained.fast(
                quantity="peak busbw (large messages)",
                value=round(peak, 2),
                unit="GB/s",
                formula=(
                    "1 node: B_intra (ring) or NVLS; n nodes, ring: min(B_intra, B_net) (does "
                    "not depend on the node count); 2 nodes, Tree: 2(n-1)/n x min(B_net, "
                    "B_intra/2); NVLSTree: 2(n-1)/n x min(B_net, NVLS) x share"
                ),
                inputs={"B_intra": _r(d.intra_eff), "B_net": _r(d.net_eff)},
                sources=[REF_NODE_BW, REF_TWO_NODES, "S23"],
            )
        )
        return tuple(steps)

    return Estimate(collective, n, tuple(rows), bound, peak, explain)


_ALGO_NAMES = {
    "ring": "Ring",
    "tree": "Tree",
    "collnet_direct": "CollNetDirect",
    "collnet_chain": "CollNetChain",
    "nvls": "NVLS",
    "nvls_tree": "NVLSTree",
    "pat": "PAT",
}


def _r(x: float) -> float | str:
    return round(x, 2) if math.isfinite(x) else "inf"


def _algo_share(p: Platform, algorithm: str) -> float:
    """NVLSTree on two nodes reaches ~0.9 of its bound (see :class:`Efficiency`)."""
    return p.efficiency.nvls_tree if algorithm == "nvls_tree" and p.nodes == 2 else 1.0


def _choice_explained(p: Platform, d: _Derived, collective: NcclColl, size: int) -> Explained:
    """Which algorithm NCCL runs at ``size`` and why: its own time for every candidate."""
    pick, times = choose(d.const, d.nominal, collective, size)
    best: dict[str, tuple[float, str]] = {}
    for (algo, proto), t in times.items():
        if algo not in best or t < best[algo][0]:
            best[algo] = (t, proto)
    ranked = sorted(best.items(), key=lambda kv: kv[1][0])
    inputs: dict[str, float | int | str] = {
        f"{_ALGO_NAMES[a]}/{proto}": round(t, 2) for a, (t, proto) in ranked
    }
    why = "the smallest lat + S/(1000 bw) in NCCL's own table (times in us, NCCL's view)"
    if p.nodes == 2 and pick.algorithm in ("tree", "nvls_tree"):
        why += (
            "; on two nodes the tree moves each node's data across the network once per "
            "direction, so it beats the ring's 2(n-1)/n"
        )
    elif p.nodes == 2 and pick.algorithm == "ring" and "tree" in best:
        why += (
            "; Tree would halve the network traffic on two nodes, but NCCL's per-channel tree "
            "caps (perChMaxTreeBw) keep Ring ahead with this many NICs"
        )
    return Explained.fast(
        quantity=f"algorithm NCCL runs at {size} B",
        value=f"{_ALGO_NAMES[pick.algorithm]}/{pick.protocol}",
        formula="argmin over (algorithm, protocol) of lat + S/(1000 bw) (NCCL's selector)",
        inputs=inputs,
        sources=[d.const.source, NCCL_SRC + "src/enqueue.cc (topoGetAlgoInfo)"],
        note=why,
    )


def _peak_busbw(p: Platform, d: _Derived, collective: Collective) -> float:
    big = 16 << 30
    if collective == "alltoall":
        return _alltoall_row(p, d, big).busbw_GBps
    if p.ranks == 1:
        return 0.0
    pick, _ = choose(d.const, d.nominal, collective, big)
    _, bw = tune(d.const, d.effective, collective).get(
        (pick.algorithm, pick.protocol), (pick.latency_us, pick.algbw_GBps)
    )
    bw *= p.efficiency.bandwidth * _algo_share(p, pick.algorithm)
    return bw * busbw_factor(collective, p.ranks)


def _row_explained(p: Platform, collective: Collective, row: Row, d: _Derived) -> Explained:
    return Explained.fast(
        quantity=f"{collective} at {row.size_bytes} B",
        value=round(row.busbw_GBps, 2),
        unit="GB/s busbw",
        formula=(
            "NCCL picks (algo, proto) = argmin lat + S/(1000·bw) over its nominal table; "
            "t = alpha + S/bw_effective; algbw = S/t; busbw = algbw x factor(n)"
        ),
        inputs={
            "algorithm": row.algorithm,
            "protocol": row.protocol,
            "time_us": round(row.time_us, 2),
            "algbw_GBps": round(row.algbw_GBps, 2),
            "factor": round(busbw_factor(collective, p.ranks), 4),
            "ranks": p.ranks,
        },
        sources=[d.const.source, REF_TESTS],
    )
