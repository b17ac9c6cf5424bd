"""The IP plan: which scheme, why, and the addresses and ASNs themselves (S19, RFC 7938).

Two schemes (the choice and its reason are recorded in the fabric's ``addressing``):

* ``l2-single-subnet`` (S19): all RoCE host ports of a plane in one subnet with one anycast
  gateway, so no RoCE flow crosses a VLAN boundary and the PFC scope stays one domain. Switches
  still get /32 loopbacks and /31 underlay links (a multi-leaf L2 domain is carried as an
  EVPN-VXLAN overlay, which must copy DSCP to the outer header).
* ``l3-ebgp``: a /31 per host link and per switch link, a /32 loopback per switch, private
  4-byte ASNs (RFC 6996) laid out as RFC 7938 §5.2.1 recommends: every leaf its own ASN, the
  spines of a pod (or of a two-tier plane) one shared ASN, the super-spines of a plane one ASN.

``auto`` picks ``l2`` while a plane has at most ``l2_max_hosts`` RoCE ports (default 512) and
``l3`` above, where one broadcast/ARP domain of thousands of hosts is the larger risk and routed
DSCP-trusting hops keep the lossless class intact. The seed's advice (S19) is about not crossing
VLANs: with ``trust dscp`` on every hop, crossing a routed hop does not change the priority, so a
routed fabric keeps S19's benefit. That nuance is written into the rationale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from aifabric.model import Addressing

__all__ = ["AddressPlan", "choose_scheme"]

ASN_BASE = 4_200_000_000
"""First private 4-byte ASN (RFC 6996: 4200000000-4294967294)."""


def choose_scheme(
    requested: str, host_ports_per_plane: int, l2_max_hosts: int, transport: str
) -> tuple[str, str]:
    """The scheme and the sentence that explains it."""
    if transport == "ib":
        return "manual", (
            "InfiniBand: the subnet manager assigns LIDs and routes the fabric; "
            "no IP plan is generated for it (IPoIB, if used, is planned separately)."
        )
    if requested == "l2" or (requested == "auto" and host_ports_per_plane <= l2_max_hosts):
        why = (
            "requested with --ip-plan l2"
            if requested == "l2"
            else f"{host_ports_per_plane} RoCE ports per plane <= {l2_max_hosts}"
        )
        return "l2-single-subnet", (
            f"One RoCE subnet per plane ({why}): every GPU NIC in one L2 domain, no VLAN "
            "crossing, one PFC scope (S19). Switch links are a routed /31 underlay with "
            "loopbacks; if the subnet spans several leaves it rides an EVPN-VXLAN overlay whose "
            "outer header must copy the DSCP (trust dscp)."
        )
    why = (
        "requested with --ip-plan l3"
        if requested == "l3"
        else f"{host_ports_per_plane} RoCE ports per plane > {l2_max_hosts}"
    )
    return "l3-ebgp", (
        f"Routed to the host ({why}): a /31 per NIC and per switch link, eBGP with private "
        "ASNs per RFC 7938. S19 warns against VLAN crossings because each one re-maps priority "
        "and moves the PFC scope; with DSCP trust on every hop a routed hop keeps the RoCE class, "
        "so the fabric keeps S19's benefit without a broadcast domain of this size."
    )


def _ifc(addr: int, prefix: int) -> str:
    """``a.b.c.d/prefix`` from an integer address (fast; no ipaddress object)."""
    return f"{addr >> 24}.{(addr >> 16) & 255}.{(addr >> 8) & 255}.{addr & 255}/{prefix}"


def _block(start: int, size: int) -> tuple[IPv4Network, int]:
    """An aligned block of at least ``size`` addresses at or after ``start``."""
    bits = max(0, math.ceil(math.log2(max(size, 1))))
    block = 1 << bits
    base = (start + block - 1) // block * block
    return IPv4Network((base, 32 - bits)), base + block


@dataclass
class AddressPlan:
    """Hands out addresses and ASNs while the fabric is built, in a fixed, repeatable order."""

    scheme: str
    rationale: str
    planes: int
    host_ports_per_plane: int
    host_links: int
    switch_links: int
    switches: int
    host_subnets: list[IPv4Network] = field(default_factory=list)
    gateways: list[str] = field(default_factory=list)
    host_pool: IPv4Network | None = None
    fabric_pool: IPv4Network | None = None
    loopback_pool: IPv4Network | None = None
    _next_host: list[int] = field(default_factory=list)
    _next_host_p2p: int = 0
    _next_fabric: int = 0
    _next_loopback: int = 0

    def __post_init__(self) -> None:
        if self.scheme == "manual":
            return
        cursor = int(IPv4Address("10.0.0.0"))
        if self.scheme == "l2-single-subnet":
            for _plane in range(self.planes):
                subnet, cursor = _block(cursor, self.host_ports_per_plane + 3)
                self.host_subnets.append(subnet)
                self.gateways.append(_ifc(int(subnet.network_address) + 1, subnet.prefixlen))
                self._next_host.append(int(subnet.network_address) + 2)
        else:
            self.host_pool, cursor = _block(cursor, 2 * self.host_links)
            self._next_host_p2p = int(self.host_pool.network_address)
        self.fabric_pool, cursor = _block(cursor, 2 * self.switch_links)
        self._next_fabric = int(self.fabric_pool.network_address)
        self.loopback_pool, cursor = _block(cursor, self.switches)
        self._next_loopback = int(self.loopback_pool.network_address)

    def host(self, plane: int) -> tuple[str | None, str | None]:
        """Addresses of (host end, switch end) of the next host link in ``plane``."""
        if self.scheme == "manual":
            return None, None
        if self.scheme == "l2-single-subnet":
            subnet = self.host_subnets[plane]
            addr = self._next_host[plane]
            self._next_host[plane] += 1
            return _ifc(addr, subnet.prefixlen), None
        base = self._next_host_p2p
        self._next_host_p2p += 2
        return _ifc(base + 1, 31), _ifc(base, 31)

    def p2p(self) -> tuple[str | None, str | None]:
        """Addresses of (lower-tier end, upper-tier end) of the next switch link."""
        if self.scheme == "manual":
            return None, None
        base = self._next_fabric
        self._next_fabric += 2
        return _ifc(base, 31), _ifc(base + 1, 31)

    def loopback(self) -> str | None:
        if self.scheme == "manual":
            return None
        addr = self._next_loopback
        self._next_loopback += 1
        return _ifc(addr, 32)

    def asn(self, *, role: str, site: int, plane: int, pod: int = 0, leaf: int = 0) -> int | None:
        """RFC 7938 §5.2.1 layout inside the RFC 6996 private 4-byte range."""
        if self.scheme == "manual":
            return None
        base = ASN_BASE + site * 5_000_000 + plane * 500_000
        if role == "super_spine":
            return base
        if role == "spine":
            return base + 1 + pod
        return base + 10_000 + leaf

    def record(self) -> Addressing:
        """The ``addressing`` section of the fabric file."""
        return Addressing(
            scheme=self.scheme,  # type: ignore[arg-type]
            rationale=self.rationale,
            host_subnets=tuple(self.host_subnets),
            gateways=tuple(self.gateways),
            host_p2p_pool=self.host_pool,
            fabric_p2p_pool=self.fabric_pool,
            loopback_pool=self.loopback_pool,
            asn_scheme=None
            if self.scheme == "manual"
            else (
                "RFC 7938 §5.2.1 in the RFC 6996 private range: leaf = 4200000000 + "
                "site*5000000 + plane*500000 + 10000 + leaf index; spines of pod k = ... + 1 + k; "
                "super-spines = ... + 0"
            ),
            refs=("S19", "RFC 7938", "RFC 6996", "RFC 3021"),
        )
