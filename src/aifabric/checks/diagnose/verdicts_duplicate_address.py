"""Record verdict on one IPv4 address held by two machines: ``diagnose.duplicate-address``.

An address belongs to one interface of one host. When two interfaces with different hardware
addresses (MACs) both carry the same unicast IPv4 address, a connection to it reaches whichever
answers ARP first, or the connecting host itself when it holds the address too. Launchers and
libraries that publish every interface of a host (Open MPI's TCP BTL and out-of-band channel,
NCCL's bootstrap without ``NCCL_SOCKET_IFNAME``, Gloo, UCX) hand such an address to their
peers, and the connections fail (refused, timed out) although the hosts' real network is fine:
typically a second port left at a vendor's or an installer's default (``192.168.0.1``) on every
node, unplugged or on a switch of its own.

Judged over the whole input, once: every ``ip addr`` / ``ifconfig`` interface record
(:class:`~aifabric.evidence.linux_net.IpLink`) with a MAC and IPv4 addresses. Not counted:
loopback, link-local and the default networks of virtual bridges, which every host has on
purpose (:func:`~.verdicts_peer_address.bridge_default`: docker0, virbr0, Podman), an all-zero
MAC, and two records with the same MAC (the same interface pasted twice, before and after). The
finding sits on the first record holding the address and names the others.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _index
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.checks.diagnose.verdicts_peer_address import bridge_default
from aifabric.evidence.base import Record
from aifabric.evidence.linux_net import IpLink

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["duplicate_addresses"]

_ZERO_MAC = frozenset({"00:00:00:00:00:00", ""})

Holder = tuple[str, str, str, Record]
"""(subject, interface, MAC, record) of one interface holding an address."""


def _ipv4(address: str) -> ipaddress.IPv4Address | None:
    try:
        ip = ipaddress.ip_interface(address.strip()).ip
    except ValueError:
        return None
    return ip if isinstance(ip, ipaddress.IPv4Address) else None


def duplicate_addresses(ev: Evidence) -> dict[int, tuple[str, list[Holder]]]:
    """Per first holder record (by ``id``): the address and every interface holding it, when
    interfaces with different MACs hold it (module doc); computed once per evidence."""
    idx = _index(ev)
    key = ("duplicate-address", 0)
    got = idx.memo.get(key)
    if isinstance(got, dict):
        return got
    holders: dict[str, list[Holder]] = {}
    for item in ev.items:
        rec = item.record
        if not isinstance(rec, IpLink) or not rec.addresses:
            continue
        mac = (rec.mac or "").lower()
        if mac in _ZERO_MAC or "LOOPBACK" in rec.flags or rec.name == "lo":
            continue
        for text in rec.addresses:
            ip = _ipv4(text)
            if ip is None or ip.is_loopback or ip.is_link_local or ip.is_unspecified:
                continue
            if bridge_default(str(ip)) is not None:
                continue
            holders.setdefault(str(ip), []).append((item.subject, rec.name, mac, rec))
    out: dict[int, tuple[str, list[Holder]]] = {}
    for address, found in holders.items():
        if len({mac for _, _, mac, _ in found}) > 1:
            out[id(found[0][3])] = (address, found)
    idx.memo[key] = out
    return out


@verdict("ip_link")
def _duplicate_address(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IpLink) or not rec.addresses:
        return
    hit = duplicate_addresses(ev).get(id(rec))
    if hit is None:
        return
    ip, found = hit
    seen: dict[str, str] = {}
    for subject, name, mac, _ in found:
        seen.setdefault(mac, f"{name} ({mac}) on {subject}")
    holders = "; ".join(seen.values())
    yield Verdict(
        id="diagnose.duplicate-address",
        severity="warning",
        cause="config.socket-interface",
        message=f"{ip} is held by {len(seen)} different interfaces: {holders}",
        explanation=(
            f"The interfaces holding {ip} have different hardware addresses, so they are "
            "different machines (or ports) with one address: a connection to it reaches "
            "whichever answers ARP first, or the connecting host itself. Launchers and "
            "libraries that publish every interface of a host (Open MPI's TCP BTL and "
            "out-of-band channel, NCCL's bootstrap without NCCL_SOCKET_IFNAME, Gloo, UCX) hand "
            "it to their peers and the connections fail although the hosts' own network works."
        ),
        fix=(
            "Give each host its own address on that network, or take the port out of the job: "
            "NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME / --mca btl_tcp_if_include and "
            "oob_tcp_if_include set to the interface the hosts share (or down the unused port)."
        ),
        refs=("S20", "https://www.rfc-editor.org/rfc/rfc5227"),
        confidence=0.6,
    )
