"""What the hardware can carry, per direction, before any collective runs (S9, S11, S24).

Every figure is an :class:`~aifabric.explain.Explained` with its formula, inputs and sources:

* RoCEv2 and InfiniBand framing at the RDMA MTU. RoCE's path MTU is an IB MTU: the largest of
  256…4096 that fits in ``Ethernet MTU − 96`` (Linux ``iboe_get_mtu``), so Ethernet 9000 still
  means RDMA MTU 4096 and 1500 means 1024. Per packet on the wire, RoCEv2 adds preamble + IFG 20,
  Ethernet 14, [VLAN 4], IPv4 20 / IPv6 40, UDP 8, BTH 12, ICRC 4, FCS 4; IB adds LRH 8, BTH 12,
  ICRC 4, VCRC 2.
* PCIe effective bandwidth of the NIC's slot and of the GPU (GPUDirect RDMA crosses both).
* NCCL's achieved fraction of the wire goodput (``nic_efficiency``, default 0.97): 400G RoCE
  49.0·0.97 = 47.5 GB/s (NCCL maintainers: 46–49 GB/s per 400G NIC, 24 per 200G, 12 per 100G;
  nccl-tests#119, #267, #290).
* **Without GPUDirect RDMA** (``gdr=False``) NCCL stages every byte through host memory: NCCL's
  topology diverts the GPU↔NIC path through the CPU (``src/graph/paths.cc``: "We cannot use GPU
  Direct RDMA, divert all traffic through the CPU local to the GPU") and the net transport puts
  its buffers in host memory that the GPU kernels read and write (``src/transport/net.cc``).
  Three more limits then apply, each only where it is known: (1) the GPU's host link, crossed by
  SM loads and stores (an SM copy reaches ~56% of a PCIe link's raw rate: 35 of 63 GB/s H2D on
  H100 Gen5, nvbandwidth#24); (2) when the GPU and its NIC share a PCIe switch (the HGX layout),
  the switch's uplink to the CPU carries the GPU's and the NIC's flows in the same direction, so
  each pair gets half of it ("disabling GPU Direct RDMA on a topology which has the NIC and GPU
  on the same PCI switch should ~halve the performance", nccl#638, nccl#465); (3) host memory
  moves every network byte four times (GPU write + NIC read when sending, NIC write + GPU read
  when receiving), at the sustained fraction of its peak that STREAM-like traffic reaches.
* TCP (NCCL's socket transport): each connection splits its data over
  ``NCCL_SOCKET_NTHREADS × NCCL_NSOCKS_PERTHREAD`` sockets, or sends it over its control socket
  when there are no helper threads (the default except on AWS and GCP NICs,
  ``src/transport/net_socket.cc``), and "the NCCL bandwidth will be the minimum speed of the
  sockets multiplied by the number of sockets" (nccl-tests#83): ``B = connections × streams ×
  per-flow rate``, capped by the wire. The per-flow rate defaults to 2 GB/s (one TCP ring
  1.85–2.06 GB/s, nccl#209); measure yours with one iperf3 stream and give it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aifabric.catalog.models import PcieGenSpec
from aifabric.explain import Explained

__all__ = [
    "IB_MTUS",
    "HostStaging",
    "NicInputs",
    "NicPath",
    "SocketConfig",
    "framing_efficiency",
    "nic_goodput",
    "pcie_effective",
    "pfc_headroom",
    "rdma_mtu",
    "socket_config",
]

IB_MTUS = (256, 512, 1024, 2048, 4096)
ROCE_MTU_OVERHEAD = 96
"""GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (Linux iboe_get_mtu)."""

NCCL = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/"
REF_FRAMING = (
    "Linux include/rdma/ib_addr.h iboe_get_mtu (https://github.com/torvalds/linux/blob/v6.8/"
    "include/rdma/ib_addr.h); InfiniBand Architecture Spec. Vol. 1 Annex A17 (RoCEv2) headers"
)
REF_GOODPUT = (
    "https://github.com/NVIDIA/nccl-tests/issues/119, https://github.com/NVIDIA/nccl-tests/issues/"
    "267, https://github.com/NVIDIA/nccl-tests/issues/290 (NCCL maintainers: 12/24/46-49 GB/s per "
    "100/200/400G NIC)"
)
REF_SOCKET = (
    NCCL + "src/transport/net_socket.cc (ncclNetSocketGetNsockNthread: AWS 2x8, GCP 4x1, else "
    "the control socket); https://github.com/NVIDIA/nccl-tests/issues/83 (bandwidth = slowest "
    "socket x sockets); https://github.com/NVIDIA/nccl/issues/209 (one TCP ring 1.85-2.06 GB/s)"
)
REF_STAGING = (
    NCCL
    + "src/graph/paths.cc (no GDR: GPU<->NIC traffic diverted through the CPU); "
    + NCCL
    + "src/transport/net.cc (host-memory buffers); https://github.com/NVIDIA/nccl/issues/638 "
    "and https://github.com/NVIDIA/nccl/issues/465 (same PCIe switch: ~half); "
    "https://github.com/NVIDIA/nvbandwidth/issues/24 (SM copy H2D 35 of 63 GB/s on Gen5 x16)"
)

Transport = Literal["ib", "roce", "socket"]

SM_COPY_EFFICIENCY = 35.0 / 63.0
"""Share of a PCIe link's raw rate that GPU SM loads from host memory reach (H100 Gen5 x16:
35 GB/s H2D with an SM copy, nvbandwidth#24)."""
HOST_MEMORY_TRAFFIC = 4
"""Bytes of host-memory traffic per network byte per direction without GDR: the sender's GPU
writes and its NIC reads, the receiver's NIC writes and its GPU reads (``net.cc`` buffers)."""
HOST_MEMORY_SUSTAINED = 0.7
"""Sustained share of a memory system's peak under streaming traffic: STREAM reaches 67–79%
(TI SPRACV1B LPDDR4 67%, DDR4 74–78%; a DDR5 Xeon 486.7 of 614 GB/s)."""
TCP_FLOW_GBPS = 2.0
"""One TCP flow as NCCL drives it: one ring over sockets 1.85–2.06 GB/s (nccl#209)."""

_SOCKET_DEFAULTS = {"0x1d0f": (2, 8, "AWS ENA"), "0x1ae0": (4, 1, "Google gVNIC")}
"""NCCL's socket auto-tuning by the NIC's PCI vendor id (net_socket.cc at v2.30.7-1)."""


def rdma_mtu(eth_mtu: int) -> int:
    """RoCE path MTU for an Ethernet MTU: the largest IB MTU ≤ ``eth_mtu − 96`` (S11)."""
    fits = [m for m in IB_MTUS if m <= eth_mtu - ROCE_MTU_OVERHEAD]
    return fits[-1] if fits else IB_MTUS[0]


def _roce_overhead(ipv6: bool, vlan: bool) -> int:
    return 20 + 14 + (4 if vlan else 0) + (40 if ipv6 else 20) + 8 + 12 + 4 + 4


def _framing(transport: Transport, eth_mtu: int, ipv6: bool, vlan: bool) -> tuple[int, int]:
    """(payload, overhead) bytes per full-size packet on the wire."""
    if transport == "ib":
        return 4096, 8 + 12 + 4 + 2
    if transport == "roce":
        return rdma_mtu(eth_mtu), _roce_overhead(ipv6, vlan)
    mss = eth_mtu - (40 if ipv6 else 20) - 20 - 12
    return mss, eth_mtu - mss + 38 + (4 if vlan else 0)


def framing_efficiency(
    transport: Transport, *, eth_mtu: int = 9000, ipv6: bool = False, vlan: bool = False
) -> Explained:
    """Payload share of the wire for full-size packets of ``transport``."""
    payload, over = _framing(transport, eth_mtu, ipv6, vlan)
    if transport == "ib":
        formula = "eff = P / (P + LRH 8 + BTH 12 + ICRC 4 + VCRC 2)"
        inputs: dict[str, float | int | str] = {"P": payload}
    elif transport == "roce":
        formula = (
            "eff = P / (P + 20 preamble/IFG + 14 Eth + VLAN 4? + IP 20/40 + UDP 8 + BTH 12 + "
            "ICRC 4 + FCS 4), P = RDMA MTU = largest IB MTU <= eth_mtu - 96"
        )
        inputs = {"eth_mtu": eth_mtu, "P": payload, "overhead": over}
    else:
        formula = "eff = MSS / (MTU + 38 wire), MSS = MTU - IP - TCP 20 - timestamps 12"
        inputs = {"eth_mtu": eth_mtu, "MSS": payload}
    return Explained.fast(
        quantity=f"{transport} framing efficiency",
        value=round(payload / (payload + over), 4),
        formula=formula,
        inputs=inputs,
        sources=[REF_FRAMING, "S11"],
    )


def pcie_effective(spec: PcieGenSpec, lanes: int, what: str = "PCIe") -> Explained:
    """Per-direction payload bandwidth of a PCIe link (S9: the effective, not the raw figure)."""
    eff = spec.effective_GBps(lanes)
    return Explained.fast(
        quantity=f"{what} Gen{spec.gen} x{lanes} effective",
        value=round(eff, 2),
        unit="GB/s",
        formula="rate x lanes x encoding / 8 x MPS / (MPS + TLP overhead), MPS 256",
        inputs={
            "GT/s": spec.transfer_rate_GTps,
            "lanes": lanes,
            "encoding": spec.encoding_efficiency,
            "tlp_overhead_bytes": spec.tlp_overhead_bytes,
        },
        sources=["S9", spec.source],
    )


@dataclass(frozen=True, slots=True)
class SocketConfig:
    """NCCL's socket transport settings for one NIC (``NCCL_SOCKET_NTHREADS`` and
    ``NCCL_NSOCKS_PERTHREAD``) and where they came from."""

    threads: int
    socks_per_thread: int
    origin: str

    @property
    def streams(self) -> int:
        """TCP sockets carrying one connection's data: threads × sockets per thread, or the
        control socket alone when there are no helper threads."""
        return self.threads * self.socks_per_thread if self.threads > 0 else 1


def socket_config(
    pci_vendor: str | None, threads: int | None = None, socks_per_thread: int | None = None
) -> SocketConfig:
    """NCCL's socket settings: what the user set, else its auto-tuning by NIC PCI vendor
    (``0x1d0f`` AWS: 2 threads × 8 sockets; ``0x1ae0`` GCP: 4 × 1; otherwise no helper thread,
    data on the control socket). NCCL caps threads at 16 and sockets at 64 in all."""
    auto_t, auto_s, what = _SOCKET_DEFAULTS.get((pci_vendor or "").lower(), (0, 1, ""))
    t = min(threads, 16) if threads is not None else auto_t
    s = socks_per_thread if socks_per_thread is not None else auto_s
    if t > 0 and t * s > 64:
        s = 64 // t
    if threads is None and socks_per_thread is None:
        origin = f"NCCL auto ({what})" if what else "NCCL default (no helper threads)"
    else:
        origin = "NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD as given"
    return SocketConfig(t, max(s, 1), origin)


@dataclass(frozen=True, slots=True)
class HostStaging:
    """The host path without GPUDirect RDMA (every byte goes through host memory)."""

    gpu_link_GBps: float
    """Per direction, GPU ↔ host: its PCIe link (or NVLink-C2C)."""
    gpu_link: str
    """``pcie`` or ``nvlink-c2c``."""
    shared_switch: bool
    """The GPU and its NIC sit under one PCIe switch whose uplink both flows cross."""
    uplink_GBps: float
    """Effective per-direction bandwidth of that uplink (the NIC slot's generation and width)."""
    host_memory_GBps: float | None = None
    """Peak host-memory bandwidth per node (None: unknown, not modelled)."""
    nics_per_node: int = 1


@dataclass(frozen=True, slots=True)
class NicPath:
    """One NIC's achievable goodput and what limits it."""

    goodput_GBps: float
    limit: str
    """``wire``, ``nic-pcie``, ``gpu-pcie``, ``tcp``, or without GDR ``host-link``,
    ``pcie-switch`` or ``host-memory``."""
    wire_GBps: float
    inputs: NicInputs
    candidates: tuple[tuple[float, str], ...] = ()

    @property
    def steps(self) -> tuple[Explained, ...]:
        """The derivation (built on demand: estimates in a loop rarely print it)."""
        i = self.inputs
        steps: list[Explained] = [
            framing_efficiency(i.transport, eth_mtu=i.eth_mtu, ipv6=i.ipv6, vlan=i.vlan),
            pcie_effective(i.nic_pcie, i.nic_lanes, "NIC slot PCIe"),
        ]
        if i.gpu_pcie is not None and i.transport != "socket" and i.staging is None:
            steps.append(pcie_effective(i.gpu_pcie, i.gpu_lanes, "GPU PCIe"))
        socket = i.transport == "socket"
        if i.staging is not None and not socket:
            steps.append(_staging_step(i, self.candidates))
        inputs: dict[str, float | int | str] = {
            "speed_gbps": i.speed_gbps,
            "wire_GBps": round(self.wire_GBps, 2),
            "limit": self.limit,
        }
        if socket and i.sockets is not None:
            inputs.update(
                {
                    "connections_per_nic": round(i.connections, 3),
                    "socket_threads": i.sockets.threads,
                    "socks_per_thread": i.sockets.socks_per_thread,
                    "streams_per_connection": i.sockets.streams,
                    "per_flow_GBps": i.tcp_flow_GBps,
                    "settings": i.sockets.origin,
                }
            )
            formula = "min(connections x streams x per-flow rate, wire)"
        else:
            inputs["eta"] = i.nic_efficiency
            formula = (
                "min(speed/8 x framing, NIC PCIe, host staging bounds) x eta"
                if i.staging is not None
                else "min(speed/8 x framing, NIC PCIe, GPU PCIe x GPUs per NIC) x eta"
            )
        steps.append(
            Explained.fast(
                quantity="NIC goodput",
                value=round(self.goodput_GBps, 2),
                unit="GB/s",
                formula=formula,
                inputs=inputs,
                sources=[REF_SOCKET] if socket else [REF_GOODPUT, "S9"],
            )
        )
        return tuple(steps)


def _staging_step(i: NicInputs, candidates: tuple[tuple[float, str], ...]) -> Explained:
    st = i.staging
    assert st is not None
    named = {name: round(value, 2) for value, name in candidates}
    return Explained.fast(
        quantity="host staging without GPUDirect RDMA (per NIC)",
        value=round(min(v for v, _ in candidates), 2),
        unit="GB/s",
        formula=(
            "min(GPU host link x SM-copy share x NICs per GPU; PCIe switch uplink / 2 when the "
            "GPU and NIC share it; host memory x sustained / (4 x NICs per node))"
        ),
        inputs={
            "gpu_link": st.gpu_link,
            "gpu_link_GBps": round(st.gpu_link_GBps, 2),
            "sm_copy_share": round(SM_COPY_EFFICIENCY, 3),
            "shared_pcie_switch": str(st.shared_switch),
            "uplink_GBps": round(st.uplink_GBps, 2),
            "host_memory_GBps": st.host_memory_GBps if st.host_memory_GBps else "unknown",
            "memory_sustained": HOST_MEMORY_SUSTAINED,
            "memory_bytes_per_network_byte": HOST_MEMORY_TRAFFIC,
            **{f"bound_{k}": v for k, v in named.items()},
        },
        sources=[REF_STAGING],
        note=None if st.host_memory_GBps else "host memory bandwidth unknown: not modelled",
    )


@dataclass(frozen=True, slots=True)
class NicInputs:
    """What :func:`nic_goodput` was given (kept to explain the figure on demand)."""

    speed_gbps: float
    transport: Transport
    eth_mtu: int
    nic_pcie: PcieGenSpec
    nic_lanes: int
    gpu_pcie: PcieGenSpec | None
    gpu_lanes: int
    gpus_per_nic: float
    nic_efficiency: float
    tcp_flow_GBps: float = TCP_FLOW_GBPS
    sockets: SocketConfig | None = None
    connections: float = 1.0
    ipv6: bool = False
    vlan: bool = False
    staging: HostStaging | None = None


def nic_goodput(
    *,
    speed_gbps: float,
    transport: Transport,
    eth_mtu: int,
    nic_pcie: PcieGenSpec,
    nic_lanes: int,
    gpu_pcie: PcieGenSpec | None,
    gpu_lanes: int,
    gpus_per_nic: float,
    nic_efficiency: float,
    tcp_flow_GBps: float = TCP_FLOW_GBPS,
    sockets: SocketConfig | None = None,
    connections: float = 1.0,
    ipv6: bool = False,
    vlan: bool = False,
    staging: HostStaging | None = None,
) -> NicPath:
    """Goodput of one NIC port for NCCL traffic.

    RDMA: ``min(wire, NIC PCIe, GPU PCIe share) · η``, or without GPUDirect RDMA (``staging``)
    ``min(wire, NIC PCIe, GPU host link · 0.56 · GPUs per NIC, uplink/2 if shared,
    0.7 · host memory / (4 · NICs)) · η``. Socket: ``min(wire, connections · streams · flow)``
    where ``connections`` is the number of NCCL connections (ring channels) on this NIC."""
    payload, over = _framing(transport, eth_mtu, ipv6, vlan)
    wire = speed_gbps / 8.0 * round(payload / (payload + over), 4)
    candidates: list[tuple[float, str]] = [
        (wire, "wire"),
        (round(nic_pcie.effective_GBps(nic_lanes), 2), "nic-pcie"),
    ]
    socket = transport == "socket"
    if socket:
        cfg = sockets or SocketConfig(0, 1, "NCCL default (no helper threads)")
        candidates.append((max(connections, 1.0) * cfg.streams * tcp_flow_GBps, "tcp"))
        sockets = cfg
    elif staging is not None:
        per_gpu = staging.gpu_link_GBps * SM_COPY_EFFICIENCY
        candidates.append((round(per_gpu * max(gpus_per_nic, 1.0), 2), "host-link"))
        if staging.shared_switch:
            candidates.append((round(staging.uplink_GBps / 2.0, 2), "pcie-switch"))
        if staging.host_memory_GBps:
            mem = staging.host_memory_GBps * HOST_MEMORY_SUSTAINED / HOST_MEMORY_TRAFFIC
            candidates.append((round(mem / max(staging.nics_per_node, 1), 2), "host-memory"))
    elif gpu_pcie is not None:
        share = round(gpu_pcie.effective_GBps(gpu_lanes), 2) * max(gpus_per_nic, 1.0)
        candidates.append((share, "gpu-pcie"))
    raw, limit = min(candidates)
    eta = 1.0 if socket else nic_efficiency
    inputs = NicInputs(
        speed_gbps,
        transport,
        eth_mtu,
        nic_pcie,
        nic_lanes,
        gpu_pcie,
        gpu_lanes,
        gpus_per_nic,
        nic_efficiency,
        tcp_flow_GBps,
        sockets,
        connections,
        ipv6,
        vlan,
        staging,
    )
    staged = tuple(c for c in candidates if c[1] in ("host-link", "pcie-switch", "host-memory"))
    return NicPath(raw * eta, limit, wire, inputs, staged)


# PFC headroom (IEEE 802.1Qbb derivation as in Cisco's PFC white paper): upper-bound response
# delay and interface delay in bit times by port speed. No 400G interface delay is published; the
# 100G figure is used above 100G (it lands the 400G total in the 130-160 KB commonly planned per
# lossless queue).
_PFC_RESPONSE_BT: tuple[tuple[float, int], ...] = ((10, 30_720), (100, 201_728), (400, 463_360))
_PFC_INTERFACE_BT: tuple[tuple[float, int], ...] = ((100, 122_880),)
PAUSE_FRAME_WIRE_BYTES = 84
"""A PAUSE frame on the wire: 64 bytes + 20 of preamble and inter-frame gap."""
FIBRE_NS_PER_M = 5.0
"""Propagation delay in fibre (and, within 5%, twinax), ns per metre."""


def _bit_times(table: tuple[tuple[float, int], ...], speed_gbps: float) -> int:
    for speed, bt in table:
        if speed_gbps <= speed:
            return bt
    return table[-1][1]


def pfc_headroom(speed_gbps: float, cable_m: float, frame_bytes: int = 9216) -> Explained:
    """Headroom a lossless priority needs per ingress port after XOFF, in bytes.

    ``H = 2·MTU + PAUSE + 2·(cable + interface)·rate/8 + response·rate/8`` with the IEEE upper
    bounds for the response and interface delays. 100 m at 100G with 9216-byte frames gives
    ~85 KiB, 400G ~157 KB. ``inputs`` also holds ``minimum_bytes``: the part no silicon
    can avoid (two frames, the PAUSE frame and the cable round trip), below which frames are
    certainly dropped.
    """
    rate_bytes_per_ns = speed_gbps / 8.0
    cable = 2 * cable_m * FIBRE_NS_PER_M * rate_bytes_per_ns
    iface = 2 * _bit_times(_PFC_INTERFACE_BT, speed_gbps) / 8 if speed_gbps >= 100 else 0.0
    response = _bit_times(_PFC_RESPONSE_BT, speed_gbps) / 8
    minimum = 2 * frame_bytes + PAUSE_FRAME_WIRE_BYTES + cable
    total = minimum + iface + response
    return Explained.fast(
        quantity="PFC headroom per lossless priority",
        value=round(total),
        unit="bytes",
        formula="2*MTU + PAUSE + 2*(cable + interface)*rate/8 + response*rate/8",
        inputs={
            "speed_gbps": speed_gbps,
            "cable_m": cable_m,
            "frame_bytes": frame_bytes,
            "cable_round_trip_bytes": round(cable),
            "interface_delay_bytes": round(iface),
            "response_delay_bytes": round(response),
            "minimum_bytes": round(minimum),
        },
        sources=[
            "IEEE 802.1Qbb headroom derivation, Cisco 'Priority Flow Control: Build Reliable "
            "Layer 2 Infrastructure' white paper (http://www.cisco.com/en/US/prod/collateral/"
            "switches/ps9441/ps9670/white_paper_c11-542809_ns783_Networking_Solutions_White_"
            "Paper.html)"
        ],
    )
