"""What the hardware can carry, per direction, before any collective runs (S9, S11, S24).

Every figure is an :class:`~aifabric.explain.Explained` with its formula, inputs and sources
(shared reference perf-model-and-limits.md §5, §6.3):

* RoCEv2 and InfiniBand framing at the RDMA MTU. RoCE's path MTU is an IB MTU: the largest of
  256…4096 that fits in ``Ethernet MTU − 96`` (Linux ``iboe_get_mtu``), so Ethernet 9000 still
  means RDMA MTU 4096 and 1500 means 1024 (§6.3). Per packet on the wire, RoCEv2 adds preamble
  + IFG 20, Ethernet 14, [VLAN 4], IPv4 20 / IPv6 40, UDP 8, BTH 12, ICRC 4, FCS 4; IB adds LRH 8,
  BTH 12, ICRC 4, VCRC 2.
* PCIe effective bandwidth of the NIC's slot and of the GPU (GPUDirect RDMA crosses both).
* TCP (NCCL's socket transport): per-connection goodput is CPU-bound, far below line rate.
* NCCL's achieved fraction of the wire goodput (``nic_efficiency``, default 0.97): 400G RoCE
  49.0·0.97 = 47.5 GB/s (measured 4×400G RoCE ring 190 GB/s = 4×47.5; NCCL maintainers: 46–49
  per 400G NIC, 24 per 200G, 12 per 100G; reference §2.8, §2.10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aifabric.catalog.models import PcieGenSpec
from aifabric.explain import Explained

__all__ = [
    "IB_MTUS",
    "NicInputs",
    "NicPath",
    "framing_efficiency",
    "nic_goodput",
    "pcie_effective",
    "pfc_headroom",
    "rdma_mtu",
]

IB_MTUS = (256, 512, 1024, 2048, 4096)
ROCE_MTU_OVERHEAD = 96
"""GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (Linux iboe_get_mtu)."""

REF_FRAMING = "shared reference perf-model-and-limits.md §6.3"
REF_GOODPUT = "nccl-tests#119, #267, #290 (NCCL maintainers: 12/24/46-49 GB/s per 100/200/400G NIC)"
REF_SOCKET = "nccl#209 (one TCP ring 1.85-2.06 GB/s), nccl#450 (100G TCP busbw 4.5-5.2 GB/s tuned)"

Transport = Literal["ib", "roce", "socket"]


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
            "tlp_overhead_B": spec.tlp_overhead_bytes,
        },
        sources=["S9", spec.source],
    )


@dataclass(frozen=True, slots=True)
class NicPath:
    """One NIC's achievable goodput and what limits it."""

    goodput_GBps: float
    limit: str
    """``wire`` (line rate after framing), ``nic-pcie``, ``gpu-pcie`` or ``tcp``."""
    wire_GBps: float
    inputs: NicInputs

    @property
    def steps(self) -> tuple[Explained, ...]:
        """The derivation (built on demand: estimates in a loop rarely print it)."""
        i = self.inputs
        steps: list[Explained] = [
            framing_efficiency(i.transport, eth_mtu=i.eth_mtu, ipv6=i.ipv6, vlan=i.vlan),
            pcie_effective(i.nic_pcie, i.nic_lanes, "NIC slot PCIe"),
        ]
        if i.gpu_pcie is not None and i.transport != "socket":
            steps.append(pcie_effective(i.gpu_pcie, i.gpu_lanes, "GPU PCIe"))
        socket = i.transport == "socket"
        steps.append(
            Explained.fast(
                quantity="NIC goodput",
                value=round(self.goodput_GBps, 2),
                unit="GB/s",
                formula=(
                    "min(streams x per-stream, wire)"
                    if socket
                    else "min(speed/8 x framing, NIC PCIe, GPU PCIe x GPUs per NIC) x eta"
                ),
                inputs={
                    "speed_gbps": i.speed_gbps,
                    "wire_GBps": round(self.wire_GBps, 2),
                    "limit": self.limit,
                    **(
                        {"streams": i.tcp_streams, "per_stream_GBps": i.tcp_stream_GBps}
                        if socket
                        else {"eta": i.nic_efficiency}
                    ),
                },
                sources=[REF_SOCKET] if socket else [REF_GOODPUT, "S9"],
            )
        )
        return tuple(steps)


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
    tcp_stream_GBps: float = 2.0
    tcp_streams: int = 2
    ipv6: bool = False
    vlan: bool = False


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
    tcp_stream_GBps: float = 2.0,
    tcp_streams: int = 2,
    ipv6: bool = False,
    vlan: bool = False,
) -> NicPath:
    """Goodput of one NIC port for NCCL traffic: ``min(wire, NIC PCIe, GPU PCIe share) · η``, or
    for TCP ``min(wire, streams · per-stream)``."""
    payload, over = _framing(transport, eth_mtu, ipv6, vlan)
    wire = speed_gbps / 8.0 * round(payload / (payload + over), 4)
    candidates: list[tuple[float, str]] = [
        (wire, "wire"),
        (round(nic_pcie.effective_GBps(nic_lanes), 2), "nic-pcie"),
    ]
    if gpu_pcie is not None and transport != "socket":
        share = round(gpu_pcie.effective_GBps(gpu_lanes), 2) * max(gpus_per_nic, 1.0)
        candidates.append((share, "gpu-pcie"))
    if transport == "socket":
        candidates.append((tcp_stream_GBps * tcp_streams, "tcp"))
    raw, limit = min(candidates)
    eta = 1.0 if transport == "socket" else nic_efficiency
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
        tcp_stream_GBps,
        tcp_streams,
        ipv6,
        vlan,
    )
    return NicPath(raw * eta, limit, wire, inputs)


# PFC headroom (perf-model-and-limits.md §6.2, IEEE 802.1Qbb derivation as in Cisco's PFC white
# paper): upper-bound response delay and interface delay in bit times by port speed. No 400G
# interface delay is published; the 100G figure is used above 100G (it lands the 400G total in
# the 130-160 KB the reference plans for).
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
    ~85 KiB, 400G ~157 KB (§6.2). ``inputs`` also holds ``minimum_bytes``: the part no silicon
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
            "IEEE 802.1Qbb headroom derivation (Cisco PFC white paper), "
            "perf-model-and-limits.md §6.2"
        ],
    )
