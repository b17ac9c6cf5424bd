"""The canonical observed model: what device configs and host state say, one shape per device.

Every dialect (SONiC config_db, Arista EOS and Cisco NX-OS running-config, NVIDIA NVUE, legacy
Cumulus ``traffic.conf``, host ``mlnx_qos``/sysfs/``cma_roce_tos``) is parsed by the evidence
parsers and then *interpreted* into :class:`ObservedDevice`: per-port settings that override
device-wide defaults, each value carrying where it was read (:class:`Src`, file and line) so a
finding can quote it (``Src.evidence``). ``verify`` compares this with the fabric
intent (:class:`aifabric.model.QosPolicy`, link MTUs) and with the seed's rules (S11-S15, S18).

Values that the configs do not state are ``None`` (unknown), never a guessed default: the checks
say what they could not check. Vendor defaults that matter (SONiC's DSCP map when none is given,
NVIDIA's ECN 150 KB/1500 KB) are applied by the dialect interpreter only where the platform
applies them itself, and marked ``default=True`` on the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from aifabric.findings import EvidenceItem

__all__ = [
    "EcnObs",
    "Observed",
    "ObservedDevice",
    "PortView",
    "Src",
    "Val",
]

T_co = TypeVar("T_co", covariant=True)

DeviceRole = Literal["switch", "host"]


@dataclass(frozen=True, slots=True)
class Src:
    """Where a value was read: file, line (1-based, ``None`` when the format has none), and the
    text it came from when short. ``default`` marks a platform default the file did not state."""

    file: str
    line: int | None = None
    text: str | None = None
    default: bool = False

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file} line {self.line}"
        if self.default:
            where += " (platform default, not stated in the file)"
        return f"{where}: {self.text}" if self.text else where

    def evidence(self, subject: str | None = None) -> EvidenceItem:
        """This place as a finding's evidence item (a platform default says so in ``text``)."""
        text = self.text or ""
        if self.default:
            text = f"{text} (platform default, not stated in the file)".strip()
        return EvidenceItem(
            source=self.file, line=self.line if self.line else None, text=text, subject=subject
        )


@dataclass(frozen=True, slots=True)
class Val(Generic[T_co]):
    """A value and where it was read."""

    value: T_co
    src: Src


@dataclass(frozen=True, slots=True)
class EcnObs:
    """ECN/WRED marking on an egress queue (``queue`` None: every queue the profile is on)."""

    queue: int | None
    kmin_bytes: int | None
    kmax_bytes: int | None
    probability_pct: float | None
    enabled: bool | None
    src: Src
    kmin_raw: str | None = None
    kmax_raw: str | None = None
    queues: tuple[int, ...] = ()

    def covers(self, queue: int) -> bool:
        """Whether this marking applies to ``queue``."""
        if self.queues:
            return queue in self.queues
        return self.queue is None or self.queue == queue


@dataclass(slots=True)
class PortView:
    """QoS settings of one port, or a device's defaults (``port`` None).

    ``pfc_priorities`` are the priorities PFC is enabled on (no-drop); ``trust`` is what ingress
    classification reads (``dscp``, ``pcp`` or ``none``); ``dscp_to_tc`` maps DSCP to the
    traffic class / switch priority (unlisted DSCP: ``dscp_default_tc``); ``tc_to_queue`` maps a
    traffic class to its egress queue (identity when None); ``headroom_bytes`` is the lossless
    buffer reserved per priority group above XOFF.
    """

    port: str | None = None
    mtu_bytes: Val[int] | None = None
    speed_gbps: float | None = None
    pfc_priorities: Val[tuple[int, ...]] | None = None
    pfc_watchdog: Val[bool] | None = None
    trust: Val[str] | None = None
    dscp_to_tc: Val[dict[int, int]] | None = None
    dscp_default_tc: int | None = None
    tc_to_queue: Val[dict[int, int]] | None = None
    ecn: list[EcnObs] = field(default_factory=list)
    ecn_unread: str | None = None
    """Why this port's ECN is unknown rather than absent (a queuing policy not interpreted)."""
    cable_length_m: Val[float] | None = None
    headroom_bytes: Val[int] | None = None
    admin_up: bool | None = None

    def merged_over(self, base: PortView) -> PortView:
        """This view with every unknown field taken from ``base`` (device defaults)."""
        return PortView(
            port=self.port,
            mtu_bytes=self.mtu_bytes or base.mtu_bytes,
            speed_gbps=self.speed_gbps if self.speed_gbps is not None else base.speed_gbps,
            pfc_priorities=self.pfc_priorities or base.pfc_priorities,
            pfc_watchdog=self.pfc_watchdog or base.pfc_watchdog,
            trust=self.trust or base.trust,
            dscp_to_tc=self.dscp_to_tc or base.dscp_to_tc,
            dscp_default_tc=(
                self.dscp_default_tc if self.dscp_to_tc is not None else base.dscp_default_tc
            ),
            tc_to_queue=self.tc_to_queue or base.tc_to_queue,
            ecn=self.ecn or base.ecn,
            ecn_unread=self.ecn_unread or base.ecn_unread,
            cable_length_m=self.cable_length_m or base.cable_length_m,
            headroom_bytes=self.headroom_bytes or base.headroom_bytes,
            admin_up=self.admin_up if self.admin_up is not None else base.admin_up,
        )

    def tc_of_dscp(self, dscp: int) -> int | None:
        """The traffic class ``dscp`` lands in, or None when no map is known."""
        if self.dscp_to_tc is None:
            return None
        return self.dscp_to_tc.value.get(dscp, self.dscp_default_tc)

    def queue_of_tc(self, tc: int) -> int:
        """The egress queue of traffic class ``tc`` (identity unless a map says otherwise)."""
        if self.tc_to_queue is None:
            return tc
        return self.tc_to_queue.value.get(tc, tc)


@dataclass(slots=True)
class ObservedDevice:
    """One device as its configs (or host state) describe it.

    ``ports`` is keyed by the vendor's port name; ``neutral`` maps aifabric's neutral names
    (``Ethernet7``, ``Ethernet7/2``) to them, so a fabric link end finds its port. Queue
    ``schedulers`` are ``strict`` or ``dwrr`` (or the vendor word). ``host_*`` fields hold what a
    GPU server marks RoCE with: the DSCP from sysfs ``traffic_class``, ``cma_roce_tos`` or the
    NIC's default, with its source.
    """

    name: str
    role: DeviceRole
    dialect: str
    files: list[str] = field(default_factory=list)
    defaults: PortView = field(default_factory=PortView)
    ports: dict[str, PortView] = field(default_factory=dict)
    neutral: dict[str, str] = field(default_factory=dict)
    schedulers: dict[int, Val[str]] = field(default_factory=dict)
    buffer_bytes: Val[int] | None = None
    host_dscp: list[Val[int]] = field(default_factory=list)
    host_interfaces: dict[str, Val[int]] = field(default_factory=dict)
    """Host: interface/RDMA device name -> its MTU in bytes (ip link, ibv_devinfo)."""
    rdma_mtu: dict[str, Val[int]] = field(default_factory=dict)
    """Host: RDMA device -> active (IB) MTU in bytes from ibv_devinfo."""
    link_layers: dict[str, Val[str]] = field(default_factory=dict)
    """Host: RDMA device (``mlx5_0`` or ``mlx5_0:1``) -> ``Ethernet`` or ``InfiniBand``."""
    notes: list[str] = field(default_factory=list)
    """What was read but could not be interpreted, one line each (reported as not checked)."""
    typical: PortView | None = None
    """Settings of a port the configs do not mention (see :meth:`settle_defaults`)."""

    def view(self, port: str | None) -> PortView:
        """Effective settings of ``port`` (vendor or neutral name): its own over the defaults."""
        if port is None:
            return self.defaults
        name = self.neutral.get(port, port)
        own = self.ports.get(name)
        if own is None:
            return self.whole()
        return own.merged_over(self.defaults)

    def finish(self, to_neutral: Callable[[str], str | None]) -> ObservedDevice:
        """Name every port neutrally (``to_neutral``: vendor name -> neutral or None) and
        settle the device defaults; the last step of every dialect interpreter."""
        for vendor in self.ports:
            neutral = to_neutral(vendor)
            if neutral is not None:
                self.neutral.setdefault(neutral, vendor)
        self.settle_defaults()
        return self

    def settle_defaults(self) -> None:
        """Compute :attr:`typical`: the device defaults, plus every setting that all the ports
        stating it state alike (MTU, PFC, trust + DSCP map, ECN, PFC watchdog). A fabric port
        the configs do not mention (a partial dump, a port named differently) is judged by it;
        a port the configs do mention keeps what it states over the device defaults only."""
        views = list(self.ports.values())
        t = PortView().merged_over(self.defaults)
        if views:
            mtus = {v.mtu_bytes.value for v in views if v.mtu_bytes is not None}
            if t.mtu_bytes is None and len(mtus) == 1:
                t.mtu_bytes = next(v.mtu_bytes for v in views if v.mtu_bytes is not None)
            pfcs = {v.pfc_priorities.value for v in views if v.pfc_priorities is not None}
            if t.pfc_priorities is None and len(pfcs) == 1:
                t.pfc_priorities = next(v.pfc_priorities for v in views if v.pfc_priorities)
            maps = {tuple(sorted(v.dscp_to_tc.value.items())) for v in views if v.dscp_to_tc}
            if t.dscp_to_tc is None and len(maps) == 1:
                first = next(v for v in views if v.dscp_to_tc is not None)
                t.dscp_to_tc, t.dscp_default_tc = first.dscp_to_tc, first.dscp_default_tc
                t.trust = t.trust or first.trust
            trusts = {v.trust.value for v in views if v.trust is not None}
            if t.trust is None and len(trusts) == 1:
                t.trust = next(v.trust for v in views if v.trust is not None)
            marks = {
                tuple((m.queue, m.queues, m.kmin_bytes, m.kmax_bytes, m.enabled) for m in v.ecn)
                for v in views
                if v.ecn
            }
            if not t.ecn and len(marks) == 1:
                t.ecn = list(next(v.ecn for v in views if v.ecn))
            unread = sorted({v.ecn_unread for v in views if v.ecn_unread})
            if not t.ecn and not marks and unread and t.ecn_unread is None:
                t.ecn_unread = unread[0]  # ECN may be in a policy not read: unknown, not absent
            dogs = {v.pfc_watchdog.value for v in views if v.pfc_watchdog is not None}
            pfc_ports = sum(1 for v in views if v.pfc_priorities and v.pfc_priorities.value)
            stated = sum(1 for v in views if v.pfc_watchdog is not None)
            if t.pfc_watchdog is None and len(dogs) == 1 and stated >= pfc_ports:
                t.pfc_watchdog = next(v.pfc_watchdog for v in views if v.pfc_watchdog)
        self.typical = t

    def whole(self) -> PortView:
        """The device as a whole: :attr:`typical` once settled, else its stated defaults."""
        return self.typical if self.typical is not None else self.defaults

    def has_port(self, port: str) -> bool:
        """Whether the configs mention ``port`` (vendor or neutral name)."""
        return self.neutral.get(port, port) in self.ports


@dataclass(slots=True)
class Observed:
    """Everything verify read: devices by fabric name, the NCCL environment, what was skipped."""

    devices: dict[str, ObservedDevice] = field(default_factory=dict)
    nccl_env: dict[str, Val[str]] | None = None
    skipped: list[str] = field(default_factory=list)
    """Files that were read but not used, each with the reason (one line)."""

    def switches(self) -> list[ObservedDevice]:
        return [d for d in self.devices.values() if d.role == "switch"]

    def hosts(self) -> list[ObservedDevice]:
        return [d for d in self.devices.values() if d.role == "host"]
