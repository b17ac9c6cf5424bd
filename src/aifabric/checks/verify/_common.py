"""Helpers shared by the verify checks: which link ends carry RoCE, how a fabric port finds its
observed settings, and grouping of like findings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aifabric.dialects.observed import Observed, ObservedDevice, PortView, Val
from aifabric.findings import FABRIC_SOURCE, EvidenceItem
from aifabric.model import Endpoint, Fabric, Link, fabric_index

__all__ = [
    "Group",
    "RoceEnd",
    "dialect_of",
    "evidence_of",
    "fabric_evidence",
    "fmt_set",
    "roce_ends",
    "roce_links",
]


def roce_links(fabric: Fabric) -> Iterator[Link]:
    """Links that carry lossless RoCE (or IB) traffic: host links of RoCE/IB ports and every
    switch-to-switch link of the fabric, not management or frontend/storage host ports."""
    idx = fabric_index(fabric)
    for link in fabric.links:
        if link.kind == "management":
            continue
        if link.kind == "host":
            host = idx.host_ports.get(link.a) or idx.host_ports.get(link.b)
            if host is not None and host[2].purpose not in ("roce", "ib"):
                continue
        yield link


@dataclass(frozen=True, slots=True)
class RoceEnd:
    """One end of a RoCE link with what the configs say about it."""

    link: Link
    end: Endpoint
    device: ObservedDevice
    view: PortView
    stated: bool
    """Whether the configs name this port (else the device's defaults are used)."""


def roce_ends(fabric: Fabric, obs: Observed | None) -> Iterator[RoceEnd]:
    """Every end of every RoCE link whose device has observed state."""
    if obs is None or not obs.devices:
        return
    for link in roce_links(fabric):
        for end in (link.a, link.b):
            dev = obs.devices.get(end.device)
            if dev is None:
                continue
            yield RoceEnd(link, end, dev, dev.view(end.port), dev.has_port(end.port))


def dialect_of(obs: Observed | None, device: str) -> str:
    """The dialect of an observed device (``""`` when unknown)."""
    if obs is None or device not in obs.devices:
        return ""
    return obs.devices[device].dialect


def evidence_of(*vals: Val[object] | None) -> list[EvidenceItem]:
    """Evidence items (file, line, text) of the values that are known."""
    return [v.src.evidence() for v in vals if v is not None]


def fabric_evidence(subject: str, text: str) -> EvidenceItem:
    """What the fabric file (the intent) says about ``subject``, as an evidence item."""
    return EvidenceItem(source=FABRIC_SOURCE, text=f"{subject} {text}", subject=subject)


def fmt_set(values: tuple[int, ...] | list[int] | set[int]) -> str:
    """``3`` / ``3,4`` / ``none``."""
    items = sorted(set(values))
    return ",".join(map(str, items)) if items else "none"


def _some(names: list[str], limit: int = 4) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


@dataclass(slots=True)
class Group:
    """Targets and evidence of one distinct problem, so a finding is one per problem."""

    targets: list[str] = field(default_factory=list)
    evidence: list[EvidenceItem] = field(default_factory=list)

    def add(self, target: str, evidence: list[EvidenceItem] | None = None) -> None:
        if target not in self.targets:
            self.targets.append(target)
        for e in evidence or []:
            if e not in self.evidence and len(self.evidence) < 6:
                self.evidence.append(e)

    def target(self) -> str:
        return _some(self.targets)

    def count(self) -> int:
        return len(self.targets)


@dataclass(frozen=True, slots=True)
class Marking:
    """A DSCP RoCE is (or should be) marked with, and where that comes from."""

    dscp: int
    origin: str
    evidence: tuple[EvidenceItem, ...] = ()


def host_markings(fabric: Fabric, obs: Observed | None) -> list[Marking]:
    """What the hosts mark RoCE with: sysfs traffic_class / cma_roce_tos per host, and
    NCCL_IB_TC (ToS byte, DSCP = TC >> 2, S15). Empty when nothing observed says it."""
    out: list[Marking] = []
    if obs is None:
        return out
    for dev in obs.hosts():
        for val in dev.host_dscp:
            out.append(
                Marking(val.value, f"{dev.name} host marking", (val.src.evidence(dev.name),))
            )
    env = obs.nccl_env or {}
    tc = env.get("NCCL_IB_TC")
    if tc is not None and tc.value.strip().isdecimal():
        tos = int(tc.value.strip())
        out.append(Marking(tos >> 2, f"NCCL_IB_TC={tos}", (tc.src.evidence(),)))
    return out


def roce_dscps(fabric: Fabric, obs: Observed | None) -> dict[int, list[Marking]]:
    """The DSCP values RoCE is sent with (observed, else the intent's ``roce_dscp``)."""
    marks = host_markings(fabric, obs)
    if not marks:
        marks = [Marking(fabric.qos.roce_dscp, "the fabric's qos.roce_dscp (intent)")]
    out: dict[int, list[Marking]] = {}
    for m in marks:
        out.setdefault(m.dscp, []).append(m)
    return out


@dataclass(frozen=True, slots=True)
class PortRef:
    """A RoCE port of an observed device: a fabric link end (``link``/``end`` set), or, for a
    device the fabric does not place on any RoCE link (no fabric file, or a config naming no
    fabric device), each port its config puts under lossless QoS, else the device as a whole."""

    device: ObservedDevice
    label: str
    view: PortView
    link: Link | None = None
    end: Endpoint | None = None

    @property
    def speed_gbps(self) -> float | None:
        return self.link.speed_gbps if self.link is not None else self.view.speed_gbps


def roce_ports(fabric: Fabric, obs: Observed | None) -> Iterator[PortRef]:
    """Every RoCE port the observed state describes (see :class:`PortRef`)."""
    if obs is None:
        return
    placed: set[str] = set()
    for e in roce_ends(fabric, obs):
        placed.add(e.device.name)
        yield PortRef(e.device, str(e.end), e.view, e.link, e.end)
    for dev in obs.devices.values():
        if dev.name in placed:
            continue
        lossless = sorted(
            p
            for p, v in dev.ports.items()
            if dev.role == "host" or v.pfc_priorities or v.dscp_to_tc or v.ecn
        )
        if not lossless:
            yield PortRef(dev, dev.name, dev.whole())
        for port in lossless:
            yield PortRef(dev, f"{dev.name}:{port}", dev.view(port))
