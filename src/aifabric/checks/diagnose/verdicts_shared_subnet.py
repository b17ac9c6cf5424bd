"""Record verdict on two interfaces of one host in one IPv4 subnet: ``diagnose.shared-subnet``.

Linux chooses the interface a packet leaves by its destination alone (the main routing table),
not by the address a program bound or asked for. When two interfaces of a host carry addresses
in the same subnet, the table holds two routes to it of equal length and the first one wins:
every connection into that subnet leaves through the same interface, whichever one
``NCCL_SOCKET_IFNAME``, ``GLOO_SOCKET_IFNAME`` or ``btl_tcp_if_include`` names. NCCL's and
Gloo's sockets connect without binding a source address, so they also take that interface's
address as their source: the job runs over the slow management port although the fast one was
chosen (NVIDIA/nccl#1580/#1581), and a peer that checks the source against the addresses it was
told (Open MPI's TCP BTL) drops the connection. ARP makes it worse: by default any interface
answers ARP for any address of the host (``arp_ignore=0``), so the peers' replies for one port's
address can arrive on the other.

Several RDMA rails in one subnet work only with per-interface policy routing (``ip rule`` /
a table per port) and ``arp_ignore=1``, ``arp_announce=2``, which an ``ip addr`` listing cannot
show: the verdict is a warning that says so.

Judged per capture (one ``ip addr`` / ``ifconfig`` listing is one host): interfaces up with a
carrier and no ``master`` (a VRF member routes from its VRF's table: the same subnet in the
management VRF and the default one is normal), IPv4 addresses with a prefix shorter than /32
(a /32 is a host route: VIPs, Calico), not loopback, link-local or a default virtual-bridge
network; two different interface names in
the same network. One finding per listing, on the first interface of the first shared subnet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.checks.diagnose.verdicts_peer_address import bridge_default
from aifabric.evidence.base import Record
from aifabric.evidence.linux_net import IpLink

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["shared_subnets"]

_REF_SYSCTL = "https://docs.kernel.org/networking/ip-sysctl.html"
_REF_NCCL_1581 = "https://github.com/NVIDIA/nccl/issues/1581"


def _networks(rec: IpLink) -> Iterator[tuple[ipaddress.IPv4Network, str]]:
    for text in rec.addresses:
        try:
            iface = ipaddress.ip_interface(text.strip())
        except ValueError:
            continue
        if not isinstance(iface, ipaddress.IPv4Interface) or iface.network.prefixlen >= 32:
            continue
        ip = iface.ip
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
            continue
        if bridge_default(str(ip)) is not None:
            continue
        yield iface.network, str(iface)


def shared_subnets(records: list[Record]) -> list[tuple[str, list[tuple[IpLink, str]]]]:
    """Each IPv4 subnet that two or more interfaces of one listing carry addresses in: the
    network and its (interface record, address) pairs, in listing order (module doc)."""
    by_net: dict[ipaddress.IPv4Network, list[tuple[IpLink, str]]] = {}
    for rec in records:
        if not isinstance(rec, IpLink) or not rec.addresses:
            continue
        if "LOOPBACK" in rec.flags or rec.name == "lo" or not (rec.admin_up and rec.carrier):
            continue
        if rec.master is not None:
            continue  # a VRF's member routes from the VRF's own table; a bridge or bond port
        for net, addr in _networks(rec):
            by_net.setdefault(net, []).append((rec, addr))
    return [
        (str(net), found)
        for net, found in by_net.items()
        if len({r.name for r, _ in found}) > 1
    ]


@verdict("ip_link")
def _shared_subnet(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IpLink) or not rec.addresses:
        return
    records = _capture(rec, ev) or [rec]
    shared = shared_subnets(records)
    if not shared or shared[0][1][0][0] is not rec:
        return  # one verdict per listing, on the first interface of the first shared subnet
    net, found = shared[0]
    names = ", ".join(f"{r.name} ({addr})" for r, addr in found)
    more = f" (and {len(shared) - 1} more subnet(s) shared the same way)" if len(shared) > 1 else ""
    yield Verdict(
        id="diagnose.shared-subnet",
        severity="warning",
        cause="config.socket-interface",
        message=(
            f"{len(found)} interfaces of one host are in the same subnet {net}: {names}{more}; "
            "without per-interface policy routing, traffic to that subnet leaves through one of "
            "them, whichever interface the job names"
        ),
        explanation=(
            "Linux picks the outgoing interface by destination from the main routing table; two "
            "interfaces in one subnet give two equal routes and the first wins, so NCCL, Gloo "
            "and MPI sockets to that subnet all leave through it (with its address as source, "
            "since they connect without binding one), whatever NCCL_SOCKET_IFNAME or "
            "btl_tcp_if_include says. With arp_ignore=0 (the default) either port also answers "
            "ARP for the other's address. Several RDMA rails in one subnet work only with "
            "per-interface policy routing and arp_ignore=1 / arp_announce=2, which this listing "
            "cannot show."
        ),
        fix=(
            "Give each interface its own subnet (a management and a data network), or route by "
            "source: a table per interface (ip route add <subnet> dev <if> src <addr> table N; "
            "ip rule add from <addr> table N) and sysctl net.ipv4.conf.all.arp_ignore=1, "
            "arp_announce=2; check with ip route get <peer> from <addr>."
        ),
        refs=("S20", _REF_SYSCTL, _REF_NCCL_1581),
        confidence=0.45,
    )
