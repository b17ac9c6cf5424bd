"""Record verdict on a connection that went to a virtual bridge's default address: see
:mod:`.verdicts_core`.

Container and VM software gives every host the same private bridge: libvirt's default NAT
network is 192.168.122.0/24 with the host at .1 (virbr0; libvirt ``src/network/default.xml.in``),
Docker's default bridge 172.17.0.0/16 with the host at .1 (docker0; Docker's bridge-network
documentation), Podman's default network 10.88.0.0/16. A launcher or library that advertises
every interface of a host (Open MPI's TCP BTL and out-of-band channel, NCCL's bootstrap, Gloo,
UCX) can hand that address to a peer: the peer then connects to *its own* bridge, which refuses,
times out or answers as the wrong host. IPv4 link-local 169.254.0.0/16 (an interface that never
got an address) is not routed beyond its segment either, and the loopback network 127.0.0.0/8 is
every host's own (a hostname that resolves to Debian's ``127.0.1.1`` /etc/hosts entry, an
interface list that kept ``lo``): a peer on another host that is handed it connects to itself. A
connection error, socket error or completion error whose peer is such an address names the wrong
interface, not a firewall or the fabric. Only a loopback peer in a job known to run on one node
(:func:`aifabric.checks.diagnose.verdict_support.single_node`) is left alone: there it is the right
address, and a refusal means the listening process is gone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import single_node
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["bridge_default"]

_DEFAULTS: tuple[tuple[ipaddress.IPv4Network, str, str], ...] = (
    (
        ipaddress.IPv4Network("192.168.122.0/24"),
        "libvirt's default NAT network (virbr0)",
        "https://gitlab.com/libvirt/libvirt/-/blob/v10.0.0/src/network/default.xml.in",
    ),
    (
        ipaddress.IPv4Network("172.17.0.0/16"),
        "Docker's default bridge (docker0)",
        "https://docs.docker.com/engine/network/drivers/bridge/",
    ),
    (
        ipaddress.IPv4Network("10.88.0.0/16"),
        "Podman's default network",
        "https://github.com/containers/common/blob/v0.60.0/docs/containers.conf.5.md",
    ),
    (
        ipaddress.IPv4Network("127.0.0.0/8"),
        "the loopback network (each host's own; 127.0.1.1 is the hostname's /etc/hosts entry "
        "on Debian and Ubuntu)",
        "https://www.rfc-editor.org/rfc/rfc1122#section-3.2.1.3",
    ),
    (
        ipaddress.IPv4Network("169.254.0.0/16"),
        "IPv4 link-local (an interface without an assigned address)",
        "https://www.rfc-editor.org/rfc/rfc3927",
    ),
)
_GROUPS = ("peer", "addr", "remote", "dst", "ip", "server", "host")
"""Catalogue groups (docs/signatures.md) that hold the address a connection went to."""


def bridge_default(text: str | None) -> tuple[str, str, str] | None:
    """(address, what it is, source) when ``text`` starts with an IPv4 address of a default
    virtual network (``192.168.122.1``, ``172.17.0.2<41237>``, ``[172.17.0.1]:29500``)."""
    if not text:
        return None
    head = text.strip().lstrip("[")
    end = 0
    while end < len(head) and (head[end].isdigit() or head[end] == "."):
        end += 1
    try:
        addr = ipaddress.IPv4Address(head[:end])
    except ValueError:
        return None
    for net, what, src in _DEFAULTS:
        if addr in net:
            return str(addr), what, src
    return None


def _peer_texts(rec: Record) -> Iterator[str]:
    groups = getattr(rec, "groups", None)
    if isinstance(groups, dict):
        for key in _GROUPS:
            value = groups.get(key)
            if isinstance(value, str):
                yield value
    peer = getattr(rec, "peer_address", None)
    if isinstance(peer, str):
        yield peer


@verdict("signature", "problem")
def _peer_on_bridge(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """A failed connection whose peer address is a default bridge or link-local address."""
    if rec.record_type == "signature" and (
        getattr(rec, "severity", "") not in ("error", "warning")
        or getattr(rec, "cause", "") == "config.socket-interface"
    ):
        return  # benign or info lines, and entries that already name the interface
    for text in _peer_texts(rec):
        hit = bridge_default(text)
        if hit is None:
            continue
        addr, what, src = hit
        if addr.startswith("127.") and single_node(ev):
            continue
        yield Verdict(
            id="diagnose.peer-on-virtual-bridge",
            severity="error",
            cause="config.socket-interface",
            message=(
                f"a connection failed to {addr}, an address of {what}: every host has the "
                "same one, so the job advertised or picked the wrong interface"
            ),
            explanation=(
                f"{addr} belongs to {what} ({src}). Such bridges exist with the same addresses "
                "on every host, so an address from them names no particular server: a rank "
                "that was handed it connects to its own bridge and is refused or times out. "
                "Launchers and libraries advertise every interface unless told which to use "
                "(Open MPI btl_tcp_if_include/oob_tcp_if_include, NCCL_SOCKET_IFNAME, "
                "GLOO_SOCKET_IFNAME, UCX_NET_DEVICES). The error reads like a firewall or a "
                "dead peer; the address says it is the interface choice (S21)."
            ),
            fix=(
                "Name the inter-node interface: --mca btl_tcp_if_include <if> --mca "
                "oob_tcp_if_include <if> (or btl_tcp_if_exclude virbr0,docker0,lo), "
                "NCCL_SOCKET_IFNAME=<if> (or ^docker,virbr,lo), GLOO_SOCKET_IFNAME=<if>; or "
                "remove the unused bridge (virsh net-destroy default)."
            ),
            refs=("S21", "S20", src),
            confidence=0.75,
        )
        return
