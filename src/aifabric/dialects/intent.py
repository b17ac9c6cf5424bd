"""The render intent: what one device must be configured with, derived from the fabric file.

``render`` (:mod:`aifabric.dialects.render`) turns a :class:`DeviceIntent` into each vendor's
syntax; ``verify`` reads the result back through the same dialect's parser into the observed
model (:mod:`aifabric.dialects.observed`). The intent is therefore stated in the observed
model's own vocabulary (neutral port names, DSCP → traffic class, PFC priorities, ECN per
queue, MTU, headroom), so the round trip can be compared field by field
(:func:`intent_from_observed`).

Derived numbers, each an :class:`~aifabric.explain.Explained` in
:attr:`DeviceIntent.explained` (seed S24):

* **Port MTU** (S11): the link's ``mtu_bytes``. Switches take the largest MTU of their links as
  the device default; every port also states its own.
* **PFC headroom** per lossless port (S12): :func:`aifabric.perf.hardware.pfc_headroom` at the
  link's speed and cable length with frames of ``MTU + 22`` bytes (Ethernet header, VLAN tag,
  FCS). A link without ``length_m`` takes SONiC's default ``CABLE_LENGTH`` for the neighbour
  role (5 m server-leaf, 40 m leaf-spine, 300 m above: sonic-buildimage
  ``files/build_templates/buffers_config.j2``), and says so.
* **ECN thresholds** (S13): from the fabric's ``qos.ecn`` as given; the explanation sets them
  beside the published references and, when the switch's buffer is known (fabric file or
  catalog), beside S13's 30-50 % of one port's share.
* **NCCL_IB_TC** (S15): ``roce_dscp << 2`` (:attr:`aifabric.model.QosPolicy.nccl_ib_tc`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from aifabric.catalog import Catalog
from aifabric.dialects.observed import ObservedDevice
from aifabric.explain import Explained
from aifabric.model import Fabric, QosPolicy
from aifabric.model.device import expand_port_range
from aifabric.model.qos import EcnThresholds, PfcWatchdog
from aifabric.perf.ecn_reference import reference_thresholds
from aifabric.perf.hardware import pfc_headroom

__all__ = [
    "DEFAULT_CABLE_M",
    "DeviceIntent",
    "HostNicIntent",
    "PortIntent",
    "build_intents",
    "intent_from_observed",
    "policy_from_observed",
]

DEFAULT_CABLE_M: dict[str, float] = {"host": 5.0, "fabric": 40.0, "core": 300.0}
"""Cable length assumed when a link has none: SONiC's ``CABLE_LENGTH`` defaults by neighbour
role (server-ToR 5 m, leaf-spine 40 m, spine-super-spine 300 m; sonic-buildimage
``files/build_templates/buffers_config.j2``). Other link kinds take 300 m."""

ETHERNET_OVERHEAD_BYTES = 22
"""Bytes a frame carries beyond the IP MTU: 14 header + 4 VLAN tag + 4 FCS."""


@dataclass(frozen=True, slots=True)
class PortIntent:
    """One switch port (or host interface) and what it must be set to.

    ``name`` is the fabric's neutral port name (``Ethernet7``, ``Ethernet7/2``) on a switch and
    the interface name on a host; ``lossless`` says whether the RoCE priority is no-drop on it
    (every RoCE-carrying port of a RoCE fabric)."""

    name: str
    peer: str
    mtu_bytes: int
    speed_gbps: float
    cable_m: float
    cable_assumed: bool
    lossless: bool
    headroom_bytes: int | None
    kind: str
    """The link kind: host, fabric, core, inter-site, management."""


@dataclass(frozen=True, slots=True)
class HostNicIntent:
    """A RoCE NIC port of a server: the RDMA device (the fabric's NIC name) and its port."""

    device: str
    port: str
    speed_gbps: float
    mtu_bytes: int


@dataclass(frozen=True, slots=True)
class DeviceIntent:
    """Everything a dialect needs to render one device; nothing vendor-specific.

    ``breakouts`` maps a front-panel port number to its sub-port count (S7), for the dialects
    that must declare the breakout before naming a sub-port. ``explained`` lists every derived
    number with formula, inputs and sources (seed S24)."""

    name: str
    role: Literal["switch", "host"]
    fabric: str
    transport: str
    qos: QosPolicy
    ports: tuple[PortIntent, ...]
    device_mtu: int | None
    buffer_bytes: int | None
    breakouts: dict[int, int] = field(default_factory=dict)
    model: str | None = None
    asn: int | None = None
    nics: tuple[HostNicIntent, ...] = ()
    explained: tuple[Explained, ...] = ()

    @property
    def lossless_ports(self) -> tuple[PortIntent, ...]:
        return tuple(p for p in self.ports if p.lossless)

    @property
    def roce_queue(self) -> int:
        """The egress queue RoCE uses: its traffic class (queues map 1:1 to classes)."""
        return self.qos.roce_priority

    @property
    def cnp_queue(self) -> int:
        return self.qos.cnp_priority


def _cable(kind: str, length_m: float | None) -> tuple[float, bool]:
    if length_m is not None:
        return length_m, False
    return DEFAULT_CABLE_M.get(kind, 300.0), True


def _headroom_explained(dev: str, port: PortIntent) -> Explained:
    e = pfc_headroom(port.speed_gbps, port.cable_m, port.mtu_bytes + ETHERNET_OVERHEAD_BYTES)
    note = (
        f"{dev} {port.name}: cable length not in the fabric file; {port.cable_m:g} m assumed "
        "(SONiC's default CABLE_LENGTH for this neighbour role)"
        if port.cable_assumed
        else None
    )
    return Explained.fast(
        quantity=f"{dev} {port.name} PFC headroom",
        value=e.value,
        unit=e.unit,
        formula=e.formula,
        inputs=e.inputs,
        sources=[*e.sources, "seed S12"],
        note=note,
    )


def _ecn_explained(
    dev: str, ecn: EcnThresholds, speed: float | None, buffer_bytes: int | None, ports: int
) -> Explained:
    share = buffer_bytes // max(ports, 1) if buffer_bytes else None
    inputs: dict[str, float | int | str] = {
        "kmin_bytes": ecn.kmin_bytes,
        "kmax_bytes": ecn.kmax_bytes,
        "pmax_percent": ecn.pmax_percent,
    }
    if share is not None:
        inputs["port_buffer_share_bytes"] = share
    return Explained.fast(
        quantity=f"{dev} ECN thresholds on the RoCE queue",
        value=f"{ecn.kmin_bytes} / {ecn.kmax_bytes}",
        unit="bytes",
        formula="p(mark) = pmax * (q - Kmin) / (Kmax - Kmin) for Kmin < q < Kmax, 1 above Kmax",
        inputs=inputs,
        sources=[
            "fabric file qos.ecn (the intent, rendered as given)",
            "published references: " + reference_thresholds(speed, share),
            "seed S13, S18",
        ],
        note=(
            "Kmin must leave room for a burst before marking starts and Kmax must stay below "
            "the PFC XOFF point so ECN slows senders before PFC pauses them (S13)."
        ),
    )


def build_intents(fabric: Fabric, catalog: Catalog | None = None) -> dict[str, DeviceIntent]:
    """The intent of every switch and server of ``fabric``, by device name (switches first,
    then servers, each in file order). ``catalog`` supplies a switch's buffer size when the
    fabric file gives none."""
    roce = fabric.transport == "roce"
    ends: dict[str, list[PortIntent]] = {}
    for link in fabric.links:
        cable, assumed = _cable(link.kind, link.length_m)
        carries_roce = roce and link.kind not in ("management",)
        for me, other in ((link.a, link.b), (link.b, link.a)):
            ends.setdefault(me.device, []).append(
                PortIntent(
                    name=me.port,
                    peer=str(other),
                    mtu_bytes=link.mtu_bytes,
                    speed_gbps=link.speed_gbps,
                    cable_m=cable,
                    cable_assumed=assumed,
                    lossless=carries_roce and link.kind != "inter-site",
                    headroom_bytes=None,
                    kind=link.kind,
                )
            )
    out: dict[str, DeviceIntent] = {}
    for sw in fabric.switches:
        raw = ends.get(sw.name, [])
        explained: list[Explained] = []
        ports: list[PortIntent] = []
        for raw_port in raw:
            port = raw_port
            if port.lossless:
                e = _headroom_explained(sw.name, port)
                explained.append(e)
                port = replace(port, headroom_bytes=int(e.value))
            ports.append(port)
        buffer = sw.buffer_bytes
        if buffer is None and catalog is not None and sw.model:
            model = catalog.switches.get(sw.model)
            buffer = model.buffer_bytes if model is not None else None
        if fabric.qos.ecn is not None:
            speed = max((p.speed_gbps for p in ports), default=sw.port_speed_gbps)
            explained.append(_ecn_explained(sw.name, fabric.qos.ecn, speed, buffer, sw.ports))
        breakouts: dict[int, int] = {}
        for b in sw.breakouts:
            for n in expand_port_range(b.ports):
                breakouts[n] = b.count
        out[sw.name] = DeviceIntent(
            name=sw.name,
            role="switch",
            fabric=fabric.name,
            transport=fabric.transport,
            qos=fabric.qos,
            ports=tuple(sorted(ports, key=lambda p: _port_key(p.name))),
            device_mtu=max((p.mtu_bytes for p in ports), default=None),
            buffer_bytes=buffer,
            breakouts=breakouts,
            model=sw.model,
            asn=sw.asn,
            explained=tuple(explained),
        )
    for srv in fabric.servers:
        ports = ends.get(srv.name, [])
        by_port = {p.name: p for p in ports}
        nics: list[HostNicIntent] = []
        for nic in srv.nics:
            for hp in nic.ports:
                if hp.purpose not in ("roce", "ib"):
                    continue
                mtu = by_port[hp.name].mtu_bytes if hp.name in by_port else None
                nics.append(
                    HostNicIntent(
                        device=nic.name,
                        port=hp.name,
                        speed_gbps=hp.speed_gbps,
                        mtu_bytes=mtu if mtu is not None else _host_mtu(fabric),
                    )
                )
        tc = Explained.fast(
            quantity="NCCL_IB_TC",
            value=fabric.qos.nccl_ib_tc,
            formula="ToS = DSCP << 2 (the IP ToS byte whose upper six bits are the DSCP)",
            inputs={"roce_dscp": fabric.qos.roce_dscp},
            sources=["RFC 2474 section 3", "seed S15"],
        )
        out[srv.name] = DeviceIntent(
            name=srv.name,
            role="host",
            fabric=fabric.name,
            transport=fabric.transport,
            qos=fabric.qos,
            ports=tuple(ports),
            device_mtu=max((p.mtu_bytes for p in ports), default=None),
            buffer_bytes=None,
            model=srv.model,
            nics=tuple(nics),
            explained=(tc,),
        )
    return out


def _host_mtu(fabric: Fabric) -> int:
    mtus = [lk.mtu_bytes for lk in fabric.links if lk.kind == "host"]
    return max(mtus) if mtus else 9000


def _port_key(name: str) -> tuple[int, ...]:
    """Sort key putting ``Ethernet2`` before ``Ethernet10`` and ``Ethernet7/2`` after 7."""
    nums: list[int] = []
    cur = ""
    for ch in name:
        if ch.isdecimal():
            cur += ch
        elif cur:
            nums.append(int(cur))
            cur = ""
    if cur:
        nums.append(int(cur))
    return tuple(nums) or (1 << 30,)


def policy_from_observed(dev: ObservedDevice, fallback: QosPolicy) -> QosPolicy:
    """The QoS intent an observed device states (its :meth:`ObservedDevice.whole` view): PFC
    priorities, the DSCP map, ECN on the RoCE queue (Kmin, Kmax, pmax %) and whether a PFC
    watchdog runs. What the observed model does not carry (class names, DWRR weights, watchdog
    timers, the CNP DSCP) comes from ``fallback``."""
    v = dev.whole()
    upd: dict[str, object] = {}
    if v.pfc_priorities is not None:
        upd["pfc_priorities"] = tuple(sorted(v.pfc_priorities.value))
    if v.dscp_to_tc is not None:
        upd["dscp_to_tc"] = dict(sorted(v.dscp_to_tc.value.items()))
    q = v.queue_of_tc(fallback.roce_priority)
    marks = [m for m in v.ecn if m.covers(q) and m.enabled is not False]
    if marks and marks[0].kmin_bytes is not None and marks[0].kmax_bytes is not None:
        m = marks[0]
        assert m.kmin_bytes is not None and m.kmax_bytes is not None
        pmax = m.probability_pct if m.probability_pct is not None else 100.0
        upd["ecn"] = EcnThresholds(kmin_bytes=m.kmin_bytes, kmax_bytes=m.kmax_bytes,
                                   pmax_percent=pmax)
    if v.pfc_watchdog is not None:
        upd["pfc_watchdog"] = (
            (fallback.pfc_watchdog or PfcWatchdog()) if v.pfc_watchdog.value else None
        )
    return fallback.model_copy(update=upd)


def intent_from_observed(intent: DeviceIntent, dev: ObservedDevice) -> DeviceIntent:
    """``intent`` with everything ``dev`` states put in its place: the QoS policy
    (:func:`policy_from_observed`), each port's MTU and headroom (found by neutral or vendor
    name). The round-trip contract renders this again and expects the same text: what the
    dialect writes, its parser reads back."""
    ports: list[PortIntent] = []
    for p in intent.ports:
        v = dev.view(p.name) if dev.has_port(p.name) else dev.whole()
        mtu = v.mtu_bytes.value if v.mtu_bytes is not None else p.mtu_bytes
        headroom = p.headroom_bytes
        if headroom is not None and v.headroom_bytes is not None:
            headroom = v.headroom_bytes.value
        ports.append(replace(p, mtu_bytes=mtu, headroom_bytes=headroom))
    return replace(
        intent, qos=policy_from_observed(dev, intent.qos), ports=tuple(ports)
    )
