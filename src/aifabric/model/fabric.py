"""The fabric: the one declarative description every module reads (architecture.md).

A :class:`Fabric` is frozen. Lookups (device by name, link by port) go through
:func:`fabric_index`, built once per fabric object and cached on it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, PrivateAttr

from aifabric.model.addressing import Addressing
from aifabric.model.base import Endpoint, StrictModel, Tup
from aifabric.model.design_spec import DesignSpec
from aifabric.model.device import HostPort, Middlebox, Nic, Server, Switch
from aifabric.model.link import Link
from aifabric.model.qos import QosPolicy
from aifabric.model.workload import Workload

__all__ = ["Fabric", "FabricIndex", "Pod", "Site", "fabric_index", "integrity_problems"]


class Site(StrictModel):
    """A data centre / building (S17: two sites)."""

    name: str
    description: str | None = None


class Pod(StrictModel):
    """A pod: a group of leaves with their own spines under a super-spine tier."""

    name: str
    site: str | None = None


class Fabric(StrictModel):
    """A whole fabric: devices, links, QoS intent, addressing, workload, design record."""

    version: Literal[1] = Field(default=1, description="fabric file format version")
    name: str
    description: str | None = None
    transport: Literal["roce", "ib", "socket"] = Field(
        default="roce", description="what NCCL uses between servers (S5, S17)"
    )
    sites: Tup[Site] = ()
    pods: Tup[Pod] = ()
    servers: Tup[Server] = ()
    switches: Tup[Switch] = ()
    middleboxes: Tup[Middlebox] = ()
    links: Tup[Link] = ()
    qos: QosPolicy = Field(default_factory=QosPolicy)
    addressing: Addressing | None = None
    workload: Workload | None = None
    design: DesignSpec | None = None

    _index: FabricIndex | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal when every field is equal (the cached index does not count)."""
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in type(self).model_fields)

    def __hash__(self) -> int:
        return hash((self.name, len(self.links), len(self.servers), len(self.switches)))


DeviceKind = Literal["server", "switch", "middlebox"]


@dataclass
class FabricIndex:
    """Name lookups over one fabric. Build with :func:`fabric_index`."""

    servers: dict[str, Server] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    middleboxes: dict[str, Middlebox] = field(default_factory=dict)
    host_ports: dict[Endpoint, tuple[Server, Nic, HostPort]] = field(default_factory=dict)
    link_at: dict[Endpoint, Link] = field(default_factory=dict)
    links_of: dict[str, list[Link]] = field(default_factory=lambda: defaultdict(list))

    def kind(self, device: str) -> DeviceKind | None:
        if device in self.servers:
            return "server"
        if device in self.switches:
            return "switch"
        if device in self.middleboxes:
            return "middlebox"
        return None

    def peer(self, endpoint: Endpoint) -> Endpoint | None:
        """The endpoint at the other end of the link plugged into ``endpoint``."""
        link = self.link_at.get(endpoint)
        if link is None:
            return None
        return link.b if link.a == endpoint else link.a


def fabric_index(fabric: Fabric) -> FabricIndex:
    """Lookups by name for ``fabric``; computed once and kept on the (frozen) object."""
    cached = fabric._index
    if cached is not None:
        return cached
    idx = FabricIndex()
    for server in fabric.servers:
        idx.servers[server.name] = server
        for nic in server.nics:
            for port in nic.ports:
                idx.host_ports[Endpoint(server.name, port.name)] = (server, nic, port)
    idx.switches = {s.name: s for s in fabric.switches}
    idx.middleboxes = {m.name: m for m in fabric.middleboxes}
    for link in fabric.links:
        idx.link_at[link.a] = link
        idx.link_at[link.b] = link
        idx.links_of[link.a.device].append(link)
        idx.links_of[link.b.device].append(link)
    fabric._index = idx
    return idx


Path = tuple[str | int, ...]


def integrity_problems(fabric: Fabric) -> list[tuple[Path, str]]:
    """Referential integrity a schema cannot express: unique names, links that name existing
    devices and ports, each port cabled at most once, sites and pods that exist.

    Returns ``(path, message)`` pairs; the path locates the offending field (for file/line
    error messages). An empty list means the fabric is consistent.
    """
    problems: list[tuple[Path, str]] = []
    seen: dict[str, Path] = {}
    groups: tuple[tuple[str, Sequence[Server | Switch | Middlebox]], ...] = (
        ("servers", fabric.servers),
        ("switches", fabric.switches),
        ("middleboxes", fabric.middleboxes),
    )
    for group, devices in groups:
        for i, device in enumerate(devices):
            path: Path = (group, i, "name")
            if device.name in seen:
                first = seen[device.name]
                problems.append(
                    (path, f"device name {device.name!r} is already used by {first[0]}[{first[1]}]")
                )
            else:
                seen[device.name] = path
    for i, server in enumerate(fabric.servers):
        names: set[str] = set()
        for j, nic in enumerate(server.nics):
            for k, port in enumerate(nic.ports):
                if port.name in names:
                    problems.append(
                        (
                            ("servers", i, "nics", j, "ports", k, "name"),
                            f"port {port.name!r} appears twice on {server.name}",
                        )
                    )
                names.add(port.name)
    site_names = {s.name for s in fabric.sites}
    pod_names = {p.name for p in fabric.pods}
    for group, devices in groups:
        for i, device in enumerate(devices):
            site = device.site
            if site is not None and site not in site_names:
                problems.append(((group, i, "site"), f"site {site!r} is not listed under sites"))
            pod = getattr(device, "pod", None)
            if pod is not None and pod not in pod_names:
                problems.append(((group, i, "pod"), f"pod {pod!r} is not listed under pods"))
    for i, pod_ in enumerate(fabric.pods):
        if pod_.site is not None and pod_.site not in site_names:
            problems.append((("pods", i, "site"), f"site {pod_.site!r} is not listed under sites"))

    host_ports = {(s.name, p.name) for s in fabric.servers for p in s.ports}
    cabled: dict[Endpoint, int] = {}
    for i, link in enumerate(fabric.links):
        if link.a == link.b:
            problems.append((("links", i, "b"), f"link connects {link.a} to itself"))
        for end_name, end in (("a", link.a), ("b", link.b)):
            path = ("links", i, end_name)
            if end.device not in seen:
                problems.append((path, f"unknown device {end.device!r} in {end}"))
                continue
            if seen[end.device][0] == "servers" and (end.device, end.port) not in host_ports:
                problems.append((path, f"server {end.device} has no port {end.port!r}"))
            if end in cabled:
                problems.append((path, f"port {end} is already cabled by links[{cabled[end]}]"))
            else:
                cabled[end] = i
    return problems
