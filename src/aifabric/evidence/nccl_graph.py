"""NCCL's connection graph as its INFO lines print it: channels, rings and trees.

``NCCL_DEBUG=INFO`` prints, per communicator, the hops of every channel and the transport each
uses, the rank order of the rings and each rank's place in the trees. Formats, NCCL 2.4 to 2.27:

* ``Ring 00 : 26[2] -> 30[6] via P2P/IPC`` (≤2.6), ``Channel 00/0 : 0[0] -> 1[1] via
  P2P/CUMEM/read`` (≥2.7), ``via NET/IB/0/GDRDMA``, ``via NET/IB/0(1)`` (PXN),
  ``via NET/AWS Libfabric/0``, ``via direct shared memory``: :class:`ChannelHop`;
* ``Channel 00/24 :    0   1   2   3`` and the 2.2x per-rank ``Ring 00 : prev -> r -> next``:
  :class:`RingOrder`;
* ``Trees [0] a/b/c->r->p`` with the 2.5-2.7 ``|`` down-tree, 2.2x per-channel
  ``Tree 0 : p -> r -> a/b/c``: :class:`TreeLinks`;
* ``Connected all rings`` / ``Connected all trees`` / ``Connected NVLS`` and the ≥2.23 ``use ring
  PXN 0 GDR 1`` suffix: :class:`Connected`.

Sources: NCCL src/graph/connect.cc (``Tree``), src/graph/rings.cc (``Channel NN/MM :``),
src/init.cc (``Trees``, ``Ring``, ``Connected all``), src/transport/net.cc and p2p.cc (hops
``via``) at https://github.com/NVIDIA/nccl (tag v2.21.5-1); the captures under
tests/fixtures/evidence/nccl-log/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import Record
from aifabric.evidence.nccl_log_base import LineFields, NcclLogRecord, Unreadable, opt_int

__all__ = [
    "ChannelHop",
    "Connected",
    "RingOrder",
    "TreeEdge",
    "TreeLinks",
    "channel_or_ring",
    "connected",
    "tree_links",
]


@dataclass(slots=True, kw_only=True)
class ChannelHop(NcclLogRecord):
    """One connection of a ring/tree/p2p channel and its transport:
    ``Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA``."""

    record_type: ClassVar[str] = "channel_hop"

    channel: int
    src_rank: int
    dst_rank: int
    src_dev: str | None = None
    """Bracketed value after the rank: a local GPU index (≥2.12) or PCI bus id (2.7-2.11)."""
    dst_dev: str | None = None
    direction: str | None = None
    """``send`` / ``receive`` for network hops, ``None`` otherwise."""
    transport: str
    """``P2P``, ``SHM``, ``NET``, ``COLLNET``, ``NVLS`` ... (first element of ``via``)."""
    net: str | None = None
    """For NET hops: ``IB``, ``Socket``, ``AWS Libfabric``, ``IBext_v8`` ..."""
    net_dev: int | None = None
    """NIC index in the ``Using [i]`` list."""
    proxy_rank: int | None = None
    """PXN: ``NET/IB/0(1)`` routes through local rank 1's NIC."""
    gdr: bool = False
    """``/GDRDMA``: data moves NIC <-> GPU memory directly."""
    via: str
    """Everything after ``via`` as printed (``P2P/CUMEM/read``)."""
    legacy_ring: bool = False
    """Printed as ``Ring NN :`` (NCCL ≤2.6) instead of ``Channel``."""


@dataclass(slots=True, kw_only=True)
class RingOrder(NcclLogRecord):
    """``Channel 00/24 :    0   1   2   3`` (rank order of ring 0 of 24 channels) or the
    per-rank ``Ring 00 : prev -> rank -> next`` of NCCL ≥2.19 (``ranks`` = the three)."""

    record_type: ClassVar[str] = "ring_order"

    channel: int
    nchannels: int | None = None
    ranks: tuple[int, ...] = ()
    neighbours_only: bool = False
    """True for ``prev -> rank -> next`` lines: ``ranks`` is (prev, rank, next)."""


@dataclass(frozen=True, slots=True)
class TreeEdge:
    """A rank's place in one channel's tree."""

    channel: int
    rank: int
    parent: int
    """-1: root."""
    children: tuple[int, ...]
    """-1 entries removed."""


@dataclass(slots=True, kw_only=True)
class TreeLinks(NcclLogRecord):
    """``Trees [0] -1/-1/-1->0->1 [1] ...`` (children->rank->parent) or NCCL ≥2.19
    ``Tree 0 : parent -> rank -> c/c/c``; the 2.5-2.7 ``|down`` part is dropped."""

    record_type: ClassVar[str] = "tree_links"

    trees: tuple[TreeEdge, ...] = ()


@dataclass(slots=True, kw_only=True)
class Connected(NcclLogRecord):
    """``Connected all rings`` / ``Connected all trees`` / ``Connected NVLS`` milestones."""

    record_type: ClassVar[str] = "connected"

    graph: str
    """``rings``, ``trees``, ``nvls``, ``collnet`` ..."""
    pxn: bool | None = None
    gdr: bool | None = None
    """From ``use ring PXN 0 GDR 1`` (NCCL ≥2.23)."""


_HOP_RE = re.compile(
    r"^(?P<kw>Channel|Ring) (?P<ch>\d+)(?:/\d+)? : (?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-F]+)\])?"
    r" -> (?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-F]+)\])?(?: \[(?P<dir>send|receive)\])?"
    r" via (?P<via>\S(?:.*\S)?)\s*$"  # greedy to the last non-blank: linear (issue 16)
)
_RING_ORDER_RE = re.compile(r"^(?:Channel|Ring) (\d+)(?:/(\d+))? :((?:\s+\d+)+)\s*$")
_RING_NEIGH_RE = re.compile(r"^Ring (\d+) : (-?\d+) -> (\d+) -> (-?\d+)\s*$")
_TREES_ENTRY_RE = re.compile(r"\[(\d+)\] ([-\d/]+)->(-?\d+)->(-?\d+)")
_TREE_RE = re.compile(r"^Tree (\d+) : (-?\d+) -> (\d+) -> ([-\d/]+)\s*$")


def _parse_via(via: str) -> tuple[str, str | None, int | None, int | None, bool]:
    """``NET/IB/0(1)/GDRDMA`` → (NET, IB, 0, 1, True)."""
    if via.startswith("direct shared memory"):
        return "SHM", None, None, None, False
    parts = via.split("/")
    transport = parts[0].strip().upper() or via
    if transport != "NET" or len(parts) < 2:
        return transport, None, None, None, False
    net = parts[1].strip()
    dev: int | None = None
    proxy: int | None = None
    gdr = False
    if len(parts) >= 3:
        d = parts[2]
        base, _, rest = d.partition("(")
        if base.isdecimal():
            dev = int(base)
        if rest[:-1].isdecimal() and rest.endswith(")"):
            proxy = int(rest[:-1])
        gdr = any(x.startswith("GDRDMA") for x in parts[3:])
    return transport, net, dev, proxy, gdr


def _children(spec: str) -> tuple[int, ...]:
    out = []
    for part in spec.split("/"):
        c = part.strip()
        if c.isdecimal():
            out.append(int(c))
    return tuple(out)


def channel_or_ring(msg: str, base: LineFields) -> Record | None:
    """A ``Channel``/``Ring`` message: a hop with its transport, or a ring's rank order; ``None``
    for other ``Channel``/``Ring`` lines. :class:`Unreadable` for a cut or mangled one."""
    if " via " in msg or msg.endswith(" via"):
        m = _HOP_RE.match(msg)
        if m is None:
            raise Unreadable("expected 'Channel NN : SRC[dev] -> DST[dev] [send|receive] via T'")
        via = m["via"]
        transport, net, dev, proxy, gdr = _parse_via(via)
        return ChannelHop(
            channel=int(m["ch"]),
            src_rank=int(m["src"]),
            dst_rank=int(m["dst"]),
            src_dev=m["sdev"],
            dst_dev=m["ddev"],
            direction=m["dir"],
            transport=transport,
            net=net,
            net_dev=dev,
            proxy_rank=proxy,
            gdr=gdr,
            via=via,
            legacy_ring=m["kw"] == "Ring",
            **base,
        )
    if " -> " in msg:
        nm = _RING_NEIGH_RE.match(msg)
        if nm is None:
            raise Unreadable("expected 'Ring NN : prev -> rank -> next' or a hop with 'via'")
        return RingOrder(
            channel=int(nm[1]),
            ranks=(int(nm[2]), int(nm[3]), int(nm[4])),
            neighbours_only=True,
            **base,
        )
    om = _RING_ORDER_RE.match(msg)
    if om is None:
        if " : " in msg and msg.split(" ", 2)[1][:1].isdecimal():
            tail = msg.partition(" : ")[2].strip()
            if not tail or tail[0].isdecimal() or tail[0] == "-":
                raise Unreadable("expected 'Channel NN/MM : r r r ...'")
        return None
    return RingOrder(
        channel=int(om[1]),
        nchannels=opt_int(om[2]),
        ranks=tuple(int(x) for x in om[3].split()),
        **base,
    )


def connected(msg: str, base: LineFields) -> Record | None:
    """``Connected all rings`` / ``Connected NVLS`` ...; ``None`` for other ``Connected`` lines."""
    if not msg.startswith("Connected all ") and not msg.startswith("Connected NVLS"):
        return None
    graph = (
        "nvls"
        if msg.startswith("Connected NVLS")
        else msg[14:].split(",", maxsplit=1)[0].split(maxsplit=1)[0]
    )
    pxn = gdr = None
    if "PXN " in msg:
        pxn = msg.partition("PXN ")[2][:1] == "1"
    if "GDR " in msg:
        gdr = msg.partition("GDR ")[2][:1] == "1"
    return Connected(graph=graph, pxn=pxn, gdr=gdr, **base)


def tree_links(msg: str, base: LineFields) -> Record | None:
    """A ``Trees [ch] c/c/c->rank->parent ...`` or ``Tree N : parent -> rank -> c/c/c`` message;
    ``None`` for other messages; :class:`Unreadable` for a cut or mangled one."""
    if msg.startswith("Trees "):
        entries = []
        for tm in _TREES_ENTRY_RE.finditer(msg):
            ch, kids, rank, parent = tm.groups()
            entries.append(TreeEdge(int(ch), int(rank), int(parent), _children(kids)))
        if not entries:
            raise Unreadable("expected 'Trees [ch] c/c/c->rank->parent ...'")
        return TreeLinks(trees=tuple(entries), **base)
    if msg.startswith("Tree "):
        t1 = _TREE_RE.match(msg)
        if t1 is None:
            raise Unreadable("expected 'Tree N : parent -> rank -> c/c/c'")
        edge = TreeEdge(int(t1[1]), int(t1[3]), int(t1[2]), _children(t1[4]))
        return TreeLinks(trees=(edge,), **base)
    return None
