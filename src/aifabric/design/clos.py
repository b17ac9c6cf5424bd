"""Building the fabric from a :class:`~aifabric.design.sizing.FabricPlan`: servers, switches,
links with their ports (the port map), media, addresses.

Port naming (vendor-neutral; renderers translate): physical switch port ``n`` (1-based) is
``Ethernet{n}``; sub-port ``k`` of a broken-out port is ``Ethernet{n}/{k}``. A leaf uses ports
``1..D`` for hosts and ``D+1..D+u`` for uplinks; a spine uses ``1..`` for leaves, then uplinks,
then inter-site links. Server ports are ``nic{i}`` (``nic{i}p{j}`` on multi-port NICs).

Wiring rules:

* ToR layout: all of a server's ports of a plane go to that plane's leaf in its rack, in order,
  so one breakout cable (S7: a 400G port as 2x200G) serves two NICs of one server.
* Rail layout: host port *r* of every server of a scalable unit goes to rail leaf *r* of that SU.
* Two tiers: uplink *j* of every leaf goes to spine ``j mod sp`` (stripes across spines first).
* Three tiers: uplink *j* of a leaf goes to spine *j* of its pod; uplink *j* of pod spine *t*
  goes to super-spine ``j mod ss`` of spine plane *t*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aifabric.catalog import Catalog, SwitchClass
from aifabric.design.addressing import AddressPlan
from aifabric.design.media import Media, select_media
from aifabric.design.sizing import FabricPlan
from aifabric.model import (
    Breakout,
    DesignSpec,
    Endpoint,
    HostPort,
    Link,
    Nic,
    Pod,
    Server,
    Site,
    Switch,
)
from aifabric.model.device import SwitchRole
from aifabric.model.link import LinkKind

__all__ = ["Hardware", "Wiring", "build_wiring"]


@dataclass(frozen=True)
class Hardware:
    """The resolved hardware choices of a design."""

    switch_model: str | None
    switch_class: SwitchClass
    ports: int
    port_gbps: float
    buffer_bytes: int | None
    nic_model: str | None
    nic_form_factor: str | None
    switch_form_factor: str | None
    breakout: int


@dataclass
class Wiring:
    """Everything the builder produced, ready to become a :class:`~aifabric.model.Fabric`."""

    sites: list[Site] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)


def _width(count: int) -> int:
    return max(2, len(str(count)))


def _port(n: int, sub: int | None = None) -> str:
    return f"Ethernet{n}" if sub is None else f"Ethernet{n}/{sub}"


class _Builder:
    def __init__(
        self,
        spec: DesignSpec,
        plan: FabricPlan,
        hw: Hardware,
        catalog: Catalog,
        addresses: AddressPlan,
    ) -> None:
        self.spec = spec
        self.plan = plan
        self.hw = hw
        self.catalog = catalog
        self.addr = addresses
        self.out = Wiring()
        self.top_tier: dict[tuple[int, int], list[Switch]] = {}
        self.next_top_port: dict[str, int] = {}
        self._media_cache: dict[tuple[float, float, float, bool], Media] = {}

    # -- helpers -----------------------------------------------------------------------------
    def media(
        self, port_gbps: float, link_gbps: float, length_m: float, *, to_host: bool = False
    ) -> Media:
        key = (port_gbps, link_gbps, length_m, to_host)
        found = self._media_cache.get(key)
        if found is None:
            ff = self.hw.switch_form_factor
            found = select_media(
                self.catalog,
                port_gbps=port_gbps,
                link_gbps=link_gbps,
                length_m=length_m,
                wide_form_factor=ff,
                narrow_form_factor=self.hw.nic_form_factor if to_host else ff,
            )
            self._media_cache[key] = found
        return found

    def switch(
        self,
        name: str,
        role: SwitchRole,
        *,
        site: str,
        plane: int | None,
        pod: str | None = None,
        su: str | None = None,
        rack: str | None = None,
        rail: int | None = None,
        breakouts: tuple[Breakout, ...] = (),
        site_i: int = 0,
        plane_i: int = 0,
        pod_i: int = 0,
        leaf_i: int = 0,
    ) -> Switch:
        sw = Switch(
            name=name,
            role=role,
            model=self.hw.switch_model,
            switch_class=self.hw.switch_class,
            ports=self.hw.ports,
            port_speed_gbps=self.hw.port_gbps,
            buffer_bytes=self.hw.buffer_bytes,
            breakouts=breakouts,
            site=site,
            pod=pod,
            su=su,
            rack=rack,
            plane=plane,
            rail=rail,
            asn=self.addr.asn(role=role, site=site_i, plane=plane_i, pod=pod_i, leaf=leaf_i),
            loopback_ipv4=self.addr.loopback(),
        )
        self.out.switches.append(sw)
        return sw

    def switch_link(
        self,
        lower: Switch,
        lower_port: str,
        upper: Switch,
        upper_port: str,
        kind: LinkKind,
        length_m: float,
        plane: int | None,
    ) -> None:
        media = self.media(self.hw.port_gbps, self.hw.port_gbps, length_m)
        a_ip, b_ip = self.addr.p2p()
        self.out.links.append(
            Link(
                a=Endpoint(lower.name, lower_port),
                b=Endpoint(upper.name, upper_port),
                kind=kind,
                speed_gbps=self.hw.port_gbps,
                mtu_bytes=self.spec.fabric_mtu_bytes,
                length_m=length_m,
                cable=media.cable,
                a_module=media.wide_module,
                b_module=media.narrow_module,
                plane=plane,
                a_ipv4=a_ip,
                b_ipv4=b_ip,
            )
        )

    # -- servers -----------------------------------------------------------------------------
    def servers(self, site: str, site_i: int, prefix: str) -> list[Server]:
        spec = self.spec
        count = self.plan.servers
        w = _width(count)
        P = spec.planes
        servers: list[Server] = []
        gpus_per_nic = max(1, spec.gpus_per_server // spec.nics)
        for i in range(count):
            nics: list[Nic] = []
            for k in range(spec.nics):
                ports: list[HostPort] = []
                for j in range(spec.nic_ports):
                    h = k * spec.nic_ports + j
                    name = f"nic{k}" if spec.nic_ports == 1 else f"nic{k}p{j}"
                    ports.append(
                        HostPort(
                            name=name,
                            speed_gbps=spec.nic_speed_gbps,
                            rail=h // P,
                            plane=h % P,
                            purpose="ib" if spec.transport == "ib" else "roce",
                        )
                    )
                first_gpu = k * gpus_per_nic
                gpus = tuple(
                    g
                    for g in range(first_gpu, first_gpu + gpus_per_nic)
                    if g < spec.gpus_per_server
                )
                nics.append(
                    Nic(
                        name=f"nic{k}",
                        model=spec.nic_model,
                        pcie_gen=spec.pcie_gen,
                        pcie_lanes=spec.pcie_lanes,
                        gpus=gpus,
                        ports=tuple(ports),
                    )
                )
            if self.plan.layout == "tor":
                group = i // self.plan.servers_per_leaf
                su, rack = None, f"{prefix}rack{group + 1:0{_width(self.plan.leaves)}d}"
            else:
                group = i // self.plan.servers_per_leaf
                su, rack = f"{prefix}su{group + 1:0{_width(self.plan.su_count)}d}", None
            servers.append(
                Server(
                    name=f"{prefix}srv{i + 1:0{w}d}",
                    site=site,
                    su=su,
                    rack=rack,
                    model=spec.server_model,
                    gpu_model=spec.gpu_model,
                    gpus=spec.gpus_per_server,
                    nics=tuple(nics),
                )
            )
        self.out.servers.extend(servers)
        return servers

    # -- one plane of one site ---------------------------------------------------------------
    def plane(
        self, servers: list[Server], site: str, site_i: int, plane_i: int, prefix: str
    ) -> None:
        plan, spec, hw = self.plan, self.spec, self.hw
        P = spec.planes
        n = plan.host_ports_per_server
        b = hw.breakout
        lw = _width(plan.leaves)
        plane_val = plane_i if P > 1 else None
        breakouts = (
            (Breakout(ports=f"1-{plan.leaf_down_ports}", count=b, speed_gbps=spec.nic_speed_gbps),)
            if b > 1
            else ()
        )
        leaves: list[Switch] = []
        for li in range(plan.leaves):
            if plan.layout == "tor":
                su, rack, rail = (
                    None,
                    servers[min(li * plan.servers_per_leaf, len(servers) - 1)].rack,
                    None,
                )
            else:
                su_i, rail = divmod(li, n)
                su = f"{prefix_site(prefix)}su{su_i + 1:0{_width(plan.su_count)}d}"
                rack = None
            pod = None
            pod_i = 0
            if plan.tiers == 3:
                pod_i = li // plan.leaves_per_pod
                pod = f"{prefix}pod{pod_i + 1:0{_width(plan.pods)}d}"
            leaves.append(
                self.switch(
                    f"{prefix}leaf{li + 1:0{lw}d}",
                    "leaf",
                    site=site,
                    plane=plane_val,
                    pod=pod,
                    su=su,
                    rack=rack,
                    rail=rail,
                    breakouts=breakouts,
                    site_i=site_i,
                    plane_i=plane_i,
                    pod_i=pod_i,
                    leaf_i=li,
                )
            )
        # host links
        host_media = self.media(hw.port_gbps, spec.nic_speed_gbps, spec.host_length_m, to_host=True)
        for si, server in enumerate(servers):
            plane_ports = [p for p in server.ports if p.plane == plane_i]
            for r, hp in enumerate(plane_ports):
                if plan.layout == "tor":
                    leaf = leaves[si // plan.servers_per_leaf]
                    slot = (si % plan.servers_per_leaf) * n + r
                else:
                    su_i = si // plan.servers_per_leaf
                    leaf = leaves[su_i * n + r]
                    slot = si % plan.servers_per_leaf
                phys, sub = divmod(slot, b)
                leaf_port = _port(phys + 1, sub + 1 if b > 1 else None)
                h_ip, l_ip = self.addr.host(plane_i)
                self.out.links.append(
                    Link(
                        a=Endpoint(server.name, hp.name),
                        b=Endpoint(leaf.name, leaf_port),
                        kind="host",
                        speed_gbps=spec.nic_speed_gbps,
                        mtu_bytes=spec.host_mtu_bytes,
                        length_m=spec.host_length_m,
                        cable=host_media.cable,
                        a_module=host_media.narrow_module,
                        b_module=host_media.wide_module,
                        plane=plane_val,
                        a_ipv4=h_ip,
                        b_ipv4=l_ip,
                    )
                )
        top: list[Switch]
        if plan.tiers == 1:
            top = leaves
        elif plan.tiers == 2:
            top = self._two_tier(leaves, site, site_i, plane_i, plane_val, prefix)
        else:
            top = self._three_tier(leaves, site, site_i, plane_i, plane_val, prefix)
        self.top_tier[(site_i, plane_i)] = top

    def _two_tier(
        self,
        leaves: list[Switch],
        site: str,
        site_i: int,
        plane_i: int,
        plane_val: int | None,
        prefix: str,
    ) -> list[Switch]:
        plan = self.plan
        sw = _width(plan.spines)
        spines = [
            self.switch(
                f"{prefix}spine{k + 1:0{sw}d}",
                "spine",
                site=site,
                plane=plane_val,
                site_i=site_i,
                plane_i=plane_i,
            )
            for k in range(plan.spines)
        ]
        m = plan.links_per_spine
        for li, leaf in enumerate(leaves):
            for j in range(plan.uplinks):
                spine_i, copy = j % plan.spines, j // plan.spines
                self.switch_link(
                    leaf,
                    _port(plan.leaf_down_ports + j + 1),
                    spines[spine_i],
                    _port(li * m + copy + 1),
                    "fabric",
                    self.spec.fabric_cable_m,
                    plane_val,
                )
        for spine in spines:
            self.next_top_port[spine.name] = len(leaves) * m + 1
        return spines

    def _three_tier(
        self,
        leaves: list[Switch],
        site: str,
        site_i: int,
        plane_i: int,
        plane_val: int | None,
        prefix: str,
    ) -> list[Switch]:
        plan = self.plan
        pw = _width(plan.pods)
        sw = _width(plan.spines)
        ssw = _width(plan.super_spines_per_plane)
        supers: list[list[Switch]] = [
            [
                self.switch(
                    f"{prefix}superspine{t + 1:0{sw}d}-{k + 1:0{ssw}d}",
                    "super_spine",
                    site=site,
                    plane=plane_val,
                    site_i=site_i,
                    plane_i=plane_i,
                )
                for k in range(plan.super_spines_per_plane)
            ]
            for t in range(plan.spines)
        ]
        for pod_i in range(plan.pods):
            pod_name = f"{prefix}pod{pod_i + 1:0{pw}d}"
            self.out.pods.append(Pod(name=pod_name, site=site))
            pod_leaves = leaves[pod_i * plan.leaves_per_pod : (pod_i + 1) * plan.leaves_per_pod]
            spines = [
                self.switch(
                    f"{pod_name}-spine{t + 1:0{sw}d}",
                    "spine",
                    site=site,
                    plane=plane_val,
                    pod=pod_name,
                    site_i=site_i,
                    plane_i=plane_i,
                    pod_i=pod_i,
                )
                for t in range(plan.spines)
            ]
            for li, leaf in enumerate(pod_leaves):
                for j in range(plan.uplinks):
                    self.switch_link(
                        leaf,
                        _port(plan.leaf_down_ports + j + 1),
                        spines[j],
                        _port(li + 1),
                        "fabric",
                        self.spec.fabric_cable_m,
                        plane_val,
                    )
            for t, spine in enumerate(spines):
                for j in range(plan.spine_uplinks):
                    k, copy = j % plan.super_spines_per_plane, j // plan.super_spines_per_plane
                    self.switch_link(
                        spine,
                        _port(plan.leaves_per_pod + j + 1),
                        supers[t][k],
                        _port(pod_i * plan.links_per_super + copy + 1),
                        "core",
                        self.spec.core_cable_m,
                        plane_val,
                    )
        flat = [s for group in supers for s in group]
        for s in flat:
            self.next_top_port[s.name] = plan.pods * plan.links_per_super + 1
        return flat

    def inter_site(self) -> None:
        """Site pairs joined top switch to top switch (S17: a dedicated link, no middlebox)."""
        spec = self.spec
        for plane_i in range(spec.planes):
            plane_val = plane_i if spec.planes > 1 else None
            for a_site in range(spec.sites):
                for b_site in range(a_site + 1, spec.sites):
                    a_top = self.top_tier[(a_site, plane_i)]
                    b_top = self.top_tier[(b_site, plane_i)]
                    for a_sw, b_sw in zip(a_top, b_top, strict=True):
                        for _ in range(spec.inter_site_links_per_spine):
                            a_port = self._take_top_port(a_sw)
                            b_port = self._take_top_port(b_sw)
                            self.switch_link(
                                a_sw,
                                a_port,
                                b_sw,
                                b_port,
                                "inter-site",
                                spec.inter_site_cable_m,
                                plane_val,
                            )

    def _take_top_port(self, sw: Switch) -> str:
        n = self.next_top_port.get(sw.name)
        if n is None:  # single-tier leaves: after the host ports
            n = self.plan.leaf_down_ports + 1
        self.next_top_port[sw.name] = n + 1
        return _port(n)


def prefix_site(prefix: str) -> str:
    """The site part of a name prefix ("site2-p1-" -> "site2-")."""
    head = prefix.split("-", maxsplit=1)[0]
    return f"{head}-" if head.startswith("site") else ""


def build_wiring(
    spec: DesignSpec, plan: FabricPlan, hw: Hardware, catalog: Catalog, addresses: AddressPlan
) -> Wiring:
    """Create every device and link of the design."""
    builder = _Builder(spec, plan, hw, catalog, addresses)
    for site_i in range(spec.sites):
        site = f"site{site_i + 1}"
        builder.out.sites.append(Site(name=site))
        site_prefix = f"{site}-" if spec.sites > 1 else ""
        servers = builder.servers(site, site_i, site_prefix)
        for plane_i in range(spec.planes):
            prefix = site_prefix + (f"p{plane_i}-" if spec.planes > 1 else "")
            builder.plane(servers, site, site_i, plane_i, prefix)
    if spec.sites > 1:
        builder.inter_site()
    return builder.out


def host_links_total(spec: DesignSpec) -> int:
    return spec.servers * spec.host_ports_per_server


def switch_links_total(spec: DesignSpec, plan: FabricPlan) -> int:
    """Switch-to-switch links in the whole fabric (for address pool sizing)."""
    per_plane = 0
    if plan.tiers >= 2:
        per_plane += plan.leaves * plan.uplinks
    if plan.tiers == 3:
        per_plane += plan.pods * plan.spines * plan.spine_uplinks
    per_site = per_plane * spec.planes
    top = {1: plan.leaves, 2: plan.spines, 3: plan.spines * plan.super_spines_per_plane}[plan.tiers]
    inter = (
        math.comb(spec.sites, 2) * spec.planes * top * spec.inter_site_links_per_spine
        if spec.sites > 1
        else 0
    )
    return per_site * spec.sites + inter


def switches_total(spec: DesignSpec, plan: FabricPlan) -> int:
    per_plane = plan.leaves + plan.spines_total + plan.super_spines_total
    return per_plane * spec.planes * spec.sites
