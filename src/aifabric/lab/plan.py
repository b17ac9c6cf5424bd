"""From a fabric to a lab plan: which nodes and links a network-namespace twin builds, with
which names, addresses, ASNs, routes and expected ECMP widths. Pure: no process is started here.

Scaling rule (stated in every plan's ``kept`` record): every switch and middlebox is kept with
every switch-to-switch link; of the servers, each leaf keeps the first ``servers_per_leaf``
servers cabled to it (file order), and a kept server keeps one port per leaf it reaches (the
first in file order). A rail-optimised server therefore keeps one port per rail leaf; a server
whose eight ports all reach one leaf keeps one. The lab carries the fabric's MTUs exactly.

Addressing follows the fabric where it can be emulated:

* switch-to-switch links use the fabric's ``a_ipv4``/``b_ipv4`` when both ends have one, else
  a /31 from ``10.200.128.0/17``; switch loopbacks are the fabric's ``loopback_ipv4`` or a /32
  from ``10.200.255.0/24`` (the BGP router id either way);
* host links with ``a_ipv4``/``b_ipv4`` (the routed ``l3-ebgp`` plan) are routed /31s; any other
  host link joins a bridge ``br0`` on its leaf with a /24 per leaf from ``10.200.0.0/17``. A
  single L2 subnet spanning leaves (``l2-single-subnet``) needs an EVPN-VXLAN overlay the lab
  does not build, so the lab gives each leaf its own /24 and says so in ``notes``.

ASNs (RFC 7938 §5.2 in the RFC 6996 private range): a switch's own ``asn`` when the fabric sets
it; otherwise a unique ASN per tier-1 switch (leaf/access), one shared ASN per tier-2 group
(spines or aggregation switches of one site and pod), one per tier-3 group, and a unique one per
middlebox (a routed firewall speaks eBGP with its neighbours here).

The expected ECMP width of every router towards every prefix comes from breadth-first
distances over the router graph: a next hop is any link to a neighbour one hop closer to the
prefix's owner. Static routing installs exactly those next hops; with FRR the same widths are
what convergence is checked against.
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict, deque
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from aifabric.errors import InputError
from aifabric.model import Fabric, fabric_index
from aifabric.model.base import Endpoint
from aifabric.model.device import SWITCH_ROLE_TIER

__all__ = [
    "HOST_POOL",
    "LOOPBACK_POOL",
    "P2P_POOL",
    "LabIface",
    "LabLink",
    "LabNode",
    "LabPlan",
    "Route",
    "namespace",
    "plan_from_dict",
    "plan_lab",
    "validate_lab_name",
]

HOST_POOL = ipaddress.IPv4Network("10.200.0.0/17")
"""Per-leaf host /24s when the fabric's host plan cannot be routed as it is."""
P2P_POOL = ipaddress.IPv4Network("10.200.128.0/18")
"""Switch-to-switch /31s when the fabric gives none."""
LOOPBACK_POOL = ipaddress.IPv4Network("10.200.255.0/24")
"""Switch loopbacks (router ids) when the fabric gives none."""

NS_PREFIX = "afl"
_LAB_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
_IFNAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")

Routing = Literal["frr", "static"]
Bgp = Literal["numbered", "unnumbered"]
Hash = Literal["l3", "l4"]


def validate_lab_name(name: str) -> str:
    """A lab name: 1-32 characters of letters, digits, ``_ . -``; no ``:`` (the separator)."""
    if _LAB_NAME_RE.match(name) is None:
        raise InputError(
            f"lab name {name!r}: expected 1-32 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def namespace(lab: str, node: str) -> str:
    """The network namespace of ``node`` in lab ``lab``: ``afl:<lab>:<node>``. The lab name is
    in every namespace name, so ``lab down`` finds everything even without its state file."""
    return f"{NS_PREFIX}:{lab}:{node}"


@dataclass(frozen=True)
class LabIface:
    """One veth end inside a node's namespace, standing for the fabric port ``port``."""

    name: str
    port: str
    peer: str
    peer_iface: str
    mtu: int
    kind: str
    address: str | None = None
    bridged: bool = False
    speed_gbps: float = 0.0


@dataclass(frozen=True)
class Route:
    """A route a node installs: ``prefix`` via one or more ``(gateway, iface)`` next hops."""

    prefix: str
    nexthops: tuple[tuple[str, str], ...]


@dataclass
class LabNode:
    """A namespace: a server, a switch or a middlebox of the fabric."""

    name: str
    role: str
    ns: str
    ifaces: list[LabIface] = field(default_factory=list)
    asn: int | None = None
    loopback: str | None = None
    bridge: str | None = None
    originates: list[str] = field(default_factory=list)
    site: str | None = None

    @property
    def router(self) -> bool:
        return self.role != "server"

    def addresses(self) -> list[str]:
        """Every address on the node (loopback, bridge, interfaces), CIDR form."""
        out = [a for a in (self.loopback, self.bridge) if a]
        out += [i.address for i in self.ifaces if i.address and not i.bridged]
        return out


@dataclass(frozen=True)
class LabLink:
    """A veth pair: ``a`` and ``b`` are ``node:iface``; ``fabric`` names the fabric link."""

    a: str
    b: str
    mtu: int
    kind: str
    fabric: str
    speed_gbps: float = 0.0


@dataclass
class LabPlan:
    """Everything ``lab up`` builds; serialisable into the lab's state file."""

    name: str
    fabric: str
    routing: Routing
    bgp: Bgp
    hash: Hash
    hash_seed: int
    nodes: dict[str, LabNode]
    links: list[LabLink]
    kept: dict[str, Any]
    notes: list[str]
    routes: dict[str, list[Route]]
    gateways: dict[str, list[tuple[str, str, str]]]
    expected_paths: dict[str, dict[str, int]]
    rate_scale: float | None = None
    """Links shaped to ``speed_gbps / rate_scale`` (None: unshaped, as fast as veth goes)."""
    host_dscp: int | None = None
    """DSCP every server marks its traffic with (the fabric's RoCE DSCP, as a NIC's
    ``traffic_class`` / ``NCCL_IB_TC`` would); None when the fabric does not run RoCE."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_from_dict(data: dict[str, Any]) -> LabPlan:
    """Inverse of :meth:`LabPlan.to_dict` (the state file)."""
    nodes = {
        k: LabNode(**{**v, "ifaces": [LabIface(**i) for i in v["ifaces"]]})
        for k, v in data["nodes"].items()
    }
    routes = {
        k: [Route(r["prefix"], tuple((g, d) for g, d in r["nexthops"])) for r in v]
        for k, v in data["routes"].items()
    }
    gateways = {k: [(a, b, c) for a, b, c in v] for k, v in data["gateways"].items()}
    return LabPlan(
        name=data["name"],
        fabric=data["fabric"],
        routing=data["routing"],
        bgp=data["bgp"],
        hash=data["hash"],
        hash_seed=data["hash_seed"],
        nodes=nodes,
        links=[LabLink(**link) for link in data["links"]],
        kept=data["kept"],
        notes=list(data["notes"]),
        routes=routes,
        gateways=gateways,
        expected_paths=data["expected_paths"],
        rate_scale=data.get("rate_scale"),
        host_dscp=data.get("host_dscp"),
    )


def _ifname(port: str, used: set[str]) -> str:
    """A Linux interface name (at most 15 characters, no ``/``) for a fabric port name."""
    name = _IFNAME_BAD.sub("-", port.replace("/", "-"))[:15] or "p"
    base, k = name, 1
    while name in used or name in ("lo", "br0"):
        suffix = f"-{k}"
        name = base[: 15 - len(suffix)] + suffix
        k += 1
    used.add(name)
    return name


class _Pool:
    """Hands out consecutive subnets of one pool."""

    def __init__(self, pool: ipaddress.IPv4Network, prefixlen: int, what: str) -> None:
        self._it = pool.subnets(new_prefix=prefixlen)
        self._what = what

    def take(self) -> ipaddress.IPv4Network:
        try:
            return next(self._it)
        except StopIteration:
            raise InputError(f"the lab ran out of {self._what} addresses") from None


def _asns(fabric: Fabric, kept_switches: list[str]) -> dict[str, int]:
    idx = fabric_index(fabric)
    asns: dict[str, int] = {}
    groups: dict[tuple[int, str | None, str | None], int] = {}
    leaf_no = 0
    for name in kept_switches:
        sw = idx.switches[name]
        if sw.asn is not None:
            asns[name] = sw.asn
            continue
        tier = SWITCH_ROLE_TIER[sw.role]
        if tier == 1:
            asns[name] = 65001 + leaf_no if leaf_no < 99 else 4200000000 + leaf_no
            leaf_no += 1
            continue
        key = (tier, sw.site, sw.pod)
        if key not in groups:
            base = 65100 if tier == 2 else 65200
            groups[key] = base + sum(1 for k in groups if k[0] == tier)
        asns[name] = groups[key]
    for i, mb in enumerate(fabric.middleboxes):
        asns[mb.name] = 65300 + i
    return asns


def _select_servers(fabric: Fabric, servers_per_leaf: int) -> dict[str, list[str]]:
    """server name -> kept fabric port names (one per leaf reached, first in file order)."""
    idx = fabric_index(fabric)
    per_leaf: dict[str, list[str]] = defaultdict(list)
    kept: dict[str, list[str]] = {}
    for server in fabric.servers:
        reached: dict[str, str] = {}
        for port in server.ports:
            peer = idx.peer(Endpoint(server.name, port.name))
            if peer is None or (peer.device not in idx.switches
                                and peer.device not in idx.middleboxes):
                continue
            reached.setdefault(peer.device, port.name)
        ports = [p for leaf, p in reached.items() if len(per_leaf[leaf]) < servers_per_leaf]
        if not ports:
            continue
        for leaf, p in reached.items():
            if p in ports:
                per_leaf[leaf].append(server.name)
        kept[server.name] = ports
    return kept


def plan_lab(
    fabric: Fabric,
    name: str,
    *,
    servers_per_leaf: int = 2,
    routing: Routing = "frr",
    bgp: Bgp = "numbered",
    hash_policy: Hash = "l4",
    hash_seed: int = 1,
    rate_scale: float | None = None,
) -> LabPlan:
    """Plan the lab twin of ``fabric`` (see the module docstring for every rule)."""
    validate_lab_name(name)
    if rate_scale is not None and rate_scale <= 0:
        raise InputError(f"--rate-scale {rate_scale:g}: expected a positive divisor, e.g. 1000")
    if servers_per_leaf < 1:
        raise InputError(f"--servers-per-leaf {servers_per_leaf}: expected at least 1")
    if routing == "static" and bgp == "unnumbered":
        raise InputError("--routing static needs numbered links; unnumbered is a BGP mode")
    idx = fabric_index(fabric)
    notes: list[str] = []
    kept_ports = _select_servers(fabric, servers_per_leaf)
    routers = [s.name for s in fabric.switches] + [m.name for m in fabric.middleboxes]
    asns = _asns(fabric, [s.name for s in fabric.switches])

    nodes: dict[str, LabNode] = {}
    for sw in fabric.switches:
        nodes[sw.name] = LabNode(sw.name, sw.role, namespace(name, sw.name), asn=asns[sw.name],
                                 site=sw.site)
    for mb in fabric.middleboxes:
        nodes[mb.name] = LabNode(mb.name, "middlebox", namespace(name, mb.name),
                                 asn=asns[mb.name], site=mb.site)
    for server in fabric.servers:
        if server.name in kept_ports:
            nodes[server.name] = LabNode(server.name, "server", namespace(name, server.name),
                                         site=server.site)

    lo_pool = _Pool(LOOPBACK_POOL, 32, "loopback")
    for sw in fabric.switches:
        nodes[sw.name].loopback = sw.loopback_ipv4.split("/")[0] + "/32" if sw.loopback_ipv4 \
            else f"{lo_pool.take().network_address}/32"
    for mb in fabric.middleboxes:
        nodes[mb.name].loopback = f"{lo_pool.take().network_address}/32"

    used: dict[str, set[str]] = defaultdict(set)
    links: list[LabLink] = []
    p2p = _Pool(P2P_POOL, 31, "switch-link")
    hosts = _Pool(HOST_POOL, 24, "host-subnet")
    leaf_subnet: dict[str, ipaddress.IPv4Network] = {}
    leaf_next_host: dict[str, int] = defaultdict(lambda: 2)
    gateways: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    dropped_links = 0
    for link in fabric.links:
        a, b = link.a, link.b
        if a.device in idx.servers:
            a, b = b, a  # the switch end first
        a_ipv4, b_ipv4 = (link.a_ipv4, link.b_ipv4) if a == link.a else (link.b_ipv4, link.a_ipv4)
        if a.device not in nodes or b.device not in nodes:
            dropped_links += 1
            continue
        host_link = b.device in idx.servers
        if host_link and b.port not in kept_ports.get(b.device, ()):
            dropped_links += 1
            continue
        ia, ib = _ifname(a.port, used[a.device]), _ifname(b.port, used[b.device])
        addr_a: str | None
        addr_b: str | None
        bridged = False
        if host_link and a_ipv4 and b_ipv4:
            addr_a, addr_b = a_ipv4, b_ipv4
            nodes[a.device].originates.append(str(ipaddress.ip_interface(a_ipv4).network))
            gateways[b.device].append((ib, b_ipv4, a_ipv4.split("/")[0]))
        elif host_link:
            bridged = True
            if a.device not in leaf_subnet:
                net = leaf_subnet[a.device] = hosts.take()
                nodes[a.device].bridge = f"{net.network_address + 1}/{net.prefixlen}"
                nodes[a.device].originates.append(str(net))
            net = leaf_subnet[a.device]
            host_no = leaf_next_host[a.device]
            leaf_next_host[a.device] += 1
            addr_a = None
            addr_b = f"{net.network_address + host_no}/{net.prefixlen}"
            gateways[b.device].append((ib, addr_b, str(net.network_address + 1)))
        elif bgp == "unnumbered":
            addr_a = addr_b = None
        elif a_ipv4 and b_ipv4:
            addr_a, addr_b = a_ipv4, b_ipv4
        else:
            net = p2p.take()
            addr_a = f"{net.network_address}/31"
            addr_b = f"{net.network_address + 1}/31"
        nodes[a.device].ifaces.append(
            LabIface(ia, a.port, b.device, ib, link.mtu_bytes, link.kind, addr_a, bridged,
                     link.speed_gbps))
        nodes[b.device].ifaces.append(
            LabIface(ib, b.port, a.device, ia, link.mtu_bytes, link.kind, addr_b, False,
                     link.speed_gbps))
        links.append(LabLink(f"{a.device}:{ia}", f"{b.device}:{ib}", link.mtu_bytes, link.kind,
                             f"{a} <-> {b}", link.speed_gbps))

    if fabric.addressing is not None and fabric.addressing.scheme == "l2-single-subnet":
        notes.append(
            "the fabric's host plan is one L2 subnet spanning leaves (EVPN-VXLAN overlay); the "
            "lab routes a /24 per leaf from 10.200.0.0/17 instead"
        )
    servers_total = len(fabric.servers)
    kept = {
        "rule": f"all switches and middleboxes; the first {servers_per_leaf} servers per leaf, "
                "one port per leaf reached",
        "switches": len(fabric.switches),
        "middleboxes": len(fabric.middleboxes),
        "servers": len(kept_ports),
        "servers_total": servers_total,
        "links": len(links),
        "links_total": len(fabric.links),
        "links_dropped": dropped_links,
    }
    if len(kept_ports) < servers_total:
        notes.append(
            f"scaled down: {len(kept_ports)} of {servers_total} servers kept "
            f"({servers_per_leaf} per leaf); every switch and switch link kept"
        )
    expected, static_routes = _paths(nodes, routers)
    server_gw = {k: sorted(v) for k, v in gateways.items()}
    return LabPlan(
        name=name, fabric=fabric.name, routing=routing, bgp=bgp, hash=hash_policy,
        hash_seed=hash_seed, nodes=nodes, links=links, kept=kept, notes=notes,
        routes=static_routes, gateways=server_gw, expected_paths=expected,
        rate_scale=rate_scale,
        host_dscp=fabric.qos.roce_dscp if fabric.transport == "roce" else None,
    )


def _paths(
    nodes: dict[str, LabNode], routers: list[str]
) -> tuple[dict[str, dict[str, int]], dict[str, list[Route]]]:
    """Expected ECMP width and static next hops of every router towards every prefix."""
    adj: dict[str, list[LabIface]] = {
        r: [i for i in nodes[r].ifaces if i.peer in nodes and nodes[i.peer].router]
        for r in routers if r in nodes
    }
    owners: dict[str, str] = {}
    for n in nodes.values():
        if n.router:
            for prefix in n.originates:
                owners[prefix] = n.name
    peer_addr: dict[tuple[str, str], str | None] = {
        (n.name, i.name): i.address for n in nodes.values() for i in n.ifaces
    }
    expected: dict[str, dict[str, int]] = defaultdict(dict)
    routes: dict[str, list[Route]] = defaultdict(list)
    dist_cache: dict[str, dict[str, int]] = {}
    for prefix, owner in sorted(owners.items()):
        if owner not in dist_cache:
            dist: dict[str, int] = {owner: 0}
            queue = deque([owner])
            while queue:
                cur = queue.popleft()
                for iface in adj.get(cur, ()):
                    if iface.peer not in dist:
                        dist[iface.peer] = dist[cur] + 1
                        queue.append(iface.peer)
            dist_cache[owner] = dist
        dist = dist_cache[owner]
        for router, ifaces in adj.items():
            if router == owner or router not in dist:
                continue
            hops = [i for i in ifaces if dist.get(i.peer, -1) == dist[router] - 1]
            if not hops:
                continue
            expected[router][prefix] = len(hops)
            nh = []
            for i in hops:
                address = peer_addr.get((i.peer, i.peer_iface))
                if address:
                    nh.append((address.split("/")[0], i.name))
            if nh:
                routes[router].append(Route(prefix, tuple(nh)))
    return dict(expected), dict(routes)
