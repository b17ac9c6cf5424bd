"""Derived records from NCCL logs and PyTorch watchdog errors (see
:func:`aifabric.checks.diagnose.engine.deriver`), for ``checks/rules/nccl-host-app.yaml``.

- ``nccl_iface``: one record per interface NCCL's bootstrap or socket transport uses
  (``Bootstrap : Using ...``, ``NET/Socket : Using ...``), with what kind of virtual interface
  its name says it is (Docker bridge, veth, libvirt bridge, tunnel, CNI) and whether its address
  is IPv6 link-local. Such interfaces do not reach the other servers: NCCL picks them when
  ``NCCL_SOCKET_IFNAME`` is unset (it only skips ``lo`` and ``docker*`` by default).
- ``nccl_link_layers``: per subject, the link layers of the HCA ports NCCL uses (``NET/IB :
  Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE``), split into IB and RoCE; ``mixed`` when both. Also
  the make of each device as its kernel driver names it (``mlx5_0`` ConnectX, ``irdma0``/``i40iw0``
  Intel E810/X722, ``bnxt_re0`` Broadcom, ``rxe0`` Soft-RoCE, ``siw0`` Soft-iWARP, ...):
  ``mixed_makes`` when NCCL uses devices of two hardware makes (the software emulations are
  not a second make). NCCL's IB transport opens every device ``ibv_get_device_list`` returns
  whose port is active, whatever its make, unless ``NCCL_IB_HCA`` narrows the list (NVIDIA/nccl
  ``src/transport/net_ib.cc``, ``ncclIbInit``): a server's onboard RDMA-capable port (an Intel
  E810/X722 LOM, a Broadcom management NIC) joins the training NICs that way. Names given by
  rdma-core's predictable naming (``rocep1s0f0``, ``ibp1s0``) carry no make and are left out.
- ``collective_desync``: over all input, the watchdog timeouts of one process group grouped by
  rank; ``op_mismatch`` when ranks time out in different collectives (OpType) at the same
  SeqNum or different OpTypes at all, ``seq_spread`` the difference between the highest and the
  lowest SeqNum. On a network stall every rank waits in the same collective; ranks in
  different collectives called them in a different order (a desync, PyTorch's
  ``TORCH_NCCL_DESYNC_DEBUG`` reports the same thing).
- ``socket_transport``: per subject whose NCCL runs its network traffic over TCP sockets:
  ``Using network Socket``, or (logs filtered to a few lines, NCCL_DEBUG_SUBSYS) a ``NET/Socket :
  Using`` line while nothing in the input shows an RDMA network in use (NCCL initialises the
  Socket transport only when the IB transport and the plugins found no device). ``reason`` is
  what the log says about why (a plugin or libibverbs error, ``NCCL_IB_DISABLE=1``, ``NET/IB :
  No device found``); ``iface_unreachable`` names a virtual interface (veth, tunnel, bridge) in
  NCCL's socket list when the input also shows socket connections failing: the failure is that
  interface (``nccl_iface``), and the Socket transport is a side remark then.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.checks.diagnose.engine import Evidence, Item, deriver
from aifabric.evidence.base import Record

__all__ = [
    "CollectiveDesync",
    "NcclIface",
    "NcclLinkLayers",
    "SocketTransport",
    "rdma_make",
    "virtual_kind",
]

# name prefix -> what the interface is; none of them leaves the server as a routed fabric port
_VIRTUAL = (
    (re.compile(r"^docker\d*$|^br-[0-9a-f]{6,}$"), "Docker bridge"),
    (re.compile(r"^veth"), "container veth"),
    (re.compile(r"^virbr\d*"), "libvirt bridge"),
    (re.compile(r"^(?:cni|flannel|cali|cilium|weave|kube-ipvs|vxlan\.calico)"), "CNI overlay"),
    (
        re.compile(r"^(?:tun|tap|wg|tailscale|zt|ipip|gre|sit|vxlan|ip6tnl|ip6gre|ip_vti)\d*"),
        "tunnel",
    ),
    (re.compile(r"^lo$"), "loopback"),
)


def virtual_kind(name: str) -> str | None:
    """What kind of virtual interface ``name`` is (``None``: looks like a real port)."""
    for pattern, kind in _VIRTUAL:
        if pattern.search(name):
            return kind
    return None


# device-name prefix (as the kernel driver names the ib_device) -> make
_RDMA_MAKES = (
    (re.compile(r"^mlx[45]_\d"), "NVIDIA/Mellanox ConnectX (mlx4/mlx5)"),
    (re.compile(r"^(?:irdma|i40iw)\d"), "Intel E810/X722 (irdma)"),
    (re.compile(r"^bnxt_re\d"), "Broadcom (bnxt_re)"),
    (re.compile(r"^efa_?\d"), "AWS EFA"),
    (re.compile(r"^hns_?\d"), "HiSilicon (hns)"),
    (re.compile(r"^qedr\d"), "Marvell/QLogic (qedr)"),
    (re.compile(r"^erdma_?\d"), "Alibaba eRDMA"),
    (re.compile(r"^mana_?\d"), "Microsoft MANA"),
    (re.compile(r"^ionic_?\d"), "AMD Pensando (ionic)"),
    (re.compile(r"^vmw_pvrdma\d"), "VMware PVRDMA"),
    (re.compile(r"^rxe"), "Soft-RoCE (rdma_rxe, software)"),
    (re.compile(r"^siw"), "Soft-iWARP (siw, software)"),
)
_SOFTWARE_MAKES = frozenset({"Soft-RoCE (rdma_rxe, software)", "Soft-iWARP (siw, software)"})


def rdma_make(name: str) -> str | None:
    """The make of an RDMA device from the name its kernel driver gives it (``None``: the name
    does not say, e.g. rdma-core's predictable ``rocep1s0f0``)."""
    for pattern, make in _RDMA_MAKES:
        if pattern.search(name):
            return make
    return None


def _link_local(address: str | None) -> bool:
    if not address:
        return False
    a = address.lower()
    return a.startswith("fe80:") or a.startswith("169.254.")


@dataclass(slots=True, kw_only=True)
class NcclIface(Record):
    """One interface of NCCL's bootstrap or socket transport."""

    record_type: ClassVar[str] = "nccl_iface"
    role: str
    """``bootstrap`` or ``socket``."""
    name: str
    address: str | None = None
    virtual_kind: str | None = None
    """``Docker bridge``, ``container veth``, ``libvirt bridge``, ``CNI overlay``, ``tunnel``,
    ``loopback``; ``None`` for a physical-looking name."""
    link_local: bool = False
    """IPv6 ``fe80::`` or IPv4 ``169.254.x.x``: reaches only the same L2 segment."""
    index: int = 0
    """Position in NCCL's list (``[0]`` is the bootstrap's own address and the socket
    transport's first interface)."""
    host: str | None = None


@dataclass(slots=True, kw_only=True)
class NcclLinkLayers(Record):
    """Link layers of the HCA ports NCCL's IB transport uses on one subject."""

    record_type: ClassVar[str] = "nccl_link_layers"
    layers: tuple[str, ...] = ()
    mixed: bool = False
    ib_ports: str = ""
    """``mlx5_8:1, mlx5_9:1`` (comma separated, for messages)."""
    roce_ports: str = ""
    ib_hca_env: str | None = None
    """``NCCL_IB_HCA`` as the log echoes it, when set."""
    mixed_makes: bool = False
    """Devices of two or more hardware makes (software devices aside)."""
    makes: str = ""
    """Make: ports, for messages (``Intel E810/X722 (irdma): irdma0:1; ...``)."""


@dataclass(slots=True, kw_only=True)
class CollectiveDesync(Record):
    """Watchdog timeouts of one process group whose ranks disagree on the collective."""

    record_type: ClassVar[str] = "collective_desync"
    process_group: str | None = None
    ranks: int = 0
    op_types: tuple[str, ...] = ()
    seq_nums: tuple[int, ...] = ()
    op_mismatch: bool = False
    seq_spread: int = 0
    summary: str = ""
    """``rank 3: ALLREDUCE #80078; rank 7: BROADCAST #80078``."""
    by_rank: dict[int, str] = field(default_factory=dict)


@deriver
def _nccl_ifaces(ev: Evidence) -> Iterator[Item]:
    for item in list(ev.items):
        rec = item.record
        if rec.record_type != "net_devices" or getattr(rec, "role", None) not in (
            "bootstrap",
            "socket",
        ):
            continue
        for pos, dev in enumerate(getattr(rec, "devices", ())):
            derived = NcclIface(
                line=rec.line,
                index=dev.index if dev.index is not None else pos,
                role=str(getattr(rec, "role", "")),
                name=dev.name,
                address=dev.address,
                virtual_kind=virtual_kind(dev.name),
                link_local=_link_local(dev.address),
                host=getattr(rec, "host", None),
            )
            yield Item(derived, item.file, item.subject, item.kind)


@deriver
def _nccl_link_layers(ev: Evidence) -> Iterator[Item]:
    ports: dict[str, dict[str, dict[str, None]]] = defaultdict(lambda: defaultdict(dict))
    first: dict[str, Item] = {}
    hca_env: dict[str, str] = {}
    for item in ev.items:
        rec = item.record
        if rec.record_type == "nccl_env" and getattr(rec, "name", None) == "NCCL_IB_HCA":
            hca_env[item.subject] = str(getattr(rec, "value", ""))
            continue
        if rec.record_type != "net_devices" or getattr(rec, "role", None) not in (
            "ib",
            "ib_probe",
        ):
            continue
        for dev in getattr(rec, "devices", ()):
            if dev.link_layer:
                port = f"{dev.name}:{dev.port}" if dev.port is not None else dev.name
                ports[item.subject][dev.link_layer][port] = None
                first.setdefault(item.subject, item)
    for subject, by_layer in ports.items():
        item = first[subject]
        layers = tuple(sorted(by_layer))
        by_make: dict[str, dict[str, None]] = defaultdict(dict)
        for layer_ports in by_layer.values():
            for port in layer_ports:
                make = rdma_make(port)
                if make is not None:
                    by_make[make][port] = None
        hardware = [m for m in by_make if m not in _SOFTWARE_MAKES]
        rec = NcclLinkLayers(
            line=item.record.line,
            layers=layers,
            mixed=len(layers) > 1,
            ib_ports=", ".join(by_layer.get("IB", {})),
            roce_ports=", ".join(by_layer.get("RoCE", {})),
            ib_hca_env=hca_env.get(subject),
            mixed_makes=len(hardware) > 1,
            makes="; ".join(f"{m}: {', '.join(p)}" for m, p in by_make.items()),
        )
        yield Item(rec, item.file, subject, item.kind)


_PG_RE = re.compile(r"\[PG (?:ID )?(\S+)")


@deriver
def _collective_desync(ev: Evidence) -> Iterator[Item]:
    groups: dict[str | None, dict[int, Item]] = defaultdict(dict)
    for item in ev.items:
        rec = item.record
        if rec.record_type != "problem" or getattr(rec, "category", None) != "watchdog_timeout":
            continue
        rank = getattr(rec, "rank", None)
        if rank is None:
            rank = getattr(rec, "launcher_rank", None)
        if rank is None:
            continue
        m = _PG_RE.search(str(getattr(rec, "message", "")))
        groups[m[1] if m else None][int(rank)] = item  # the last timeout of each rank
    for pg, by_rank in groups.items():
        if len(by_rank) < 2:
            continue
        ops = {r: str(getattr(i.record, "op_type", "")) for r, i in by_rank.items()}
        seqs = {r: int(getattr(i.record, "seq_num", 0)) for r, i in by_rank.items()}
        op_types = tuple(sorted(set(ops.values())))
        seq_nums = tuple(sorted(set(seqs.values())))
        if len(op_types) < 2 and len(seq_nums) < 2:
            continue  # every rank waits in the same collective: not a desync
        ranks = sorted(by_rank)
        first = by_rank[ranks[0]]
        rec = CollectiveDesync(
            line=first.record.line,
            process_group=pg,
            ranks=len(ranks),
            op_types=op_types,
            seq_nums=seq_nums,
            op_mismatch=len(op_types) > 1,
            seq_spread=seq_nums[-1] - seq_nums[0],
            summary="; ".join(f"rank {r}: {ops[r]} #{seqs[r]}" for r in ranks[:8]),
            by_rank={r: f"{ops[r]} #{seqs[r]}" for r in ranks},
        )
        yield Item(rec, first.file, first.subject, first.kind)


@dataclass(slots=True, kw_only=True)
class SocketTransport(Record):
    """NCCL's inter-node traffic goes over TCP sockets on this subject."""

    record_type: ClassVar[str] = "socket_transport"
    name: str = "Socket"
    explicit: bool = True
    """``Using network Socket`` was printed (else inferred from ``NET/Socket : Using``)."""
    reason: str = "not printed"
    iface_unreachable: str | None = None
    """A virtual interface in NCCL's socket list, when socket connections also fail."""
    rdma_expected: bool = True
    """Whether RDMA was meant to be there: the input shows an RDMA device or port, an RDMA
    library or plugin that failed to load, or an ``NCCL_IB_*`` setting other than the switch
    itself. ``False`` when NCCL found no RDMA device, or the environment switched the transport
    off (``NCCL_IB_DISABLE=1``, ``NCCL_NET=Socket``), and nothing else in the input says the
    hosts have one (a cloud VM or a cluster run over Ethernet on purpose)."""


_NO_RDMA = frozenset({"socket"})
_RDMA_HARDWARE = frozenset(
    {
        "ibv_device", "ibv_port", "ibstat_ca", "ibstat_port", "gid", "ib_link", "ibdev2netdev",
        "rdma_link", "rdma_dev", "sysfs_rdma_port", "perftest_bw", "perftest_lat", "mlnx_qos",
        "nvconfig_device", "mlxlink_link", "traffic_class", "cma_roce_tos",
    }
)  # fmt: skip
"""Record types that exist only where an RDMA adapter is (docs/evidence.md)."""


def _rdma_expected(ev: Evidence, reason: str) -> bool:
    """Whether the input says RDMA should have been used (see :class:`SocketTransport`)."""
    chosen = reason in _CHOSEN_REASONS
    if (not chosen and reason not in ("NET/IB : No device found", "not printed")
            and "libibverbs" not in reason):  # fmt: skip
        return True  # a network plugin that failed to load
    # no device, no verbs library, or sockets chosen by the environment: what a server without
    # an RDMA adapter prints too (an Ethernet-only cluster sets NCCL_IB_DISABLE=1 on purpose)
    for item in ev.items:
        rec = item.record
        kind = rec.record_type
        if kind in _RDMA_HARDWARE:
            return True
        if kind == "ibv_devices" and getattr(rec, "devices", None):
            return True
        name = str(getattr(rec, "name", ""))
        if kind == "nccl_env" and name.startswith("NCCL_IB_") and name != "NCCL_IB_DISABLE":
            return True
        if kind == "pci_device" and (
            str(getattr(rec, "vendor_device_id", "")).lower().startswith("15b3:")
            or getattr(rec, "kernel_driver", None) in ("mlx5_core", "mlx4_core", "bnxt_en", "irdma")
            or "Mellanox" in str(getattr(rec, "description", ""))
        ):
            return True
    return False


_CHOSEN_REASONS = frozenset(
    {"NCCL_IB_DISABLE=1 set by the environment", "NCCL_NET=Socket set by the environment"}
)
"""Reasons :func:`_socket_reason` gives when the environment chose sockets itself."""
_CONNECT_FAILED = ("timed out", "refused", "unreachable", "No route")


def _socket_reason(items: list[Item]) -> str | None:
    for item in items:
        rec = item.record
        kind = rec.record_type
        if kind == "problem" and getattr(rec, "category", None) == "net_plugin":
            return str(getattr(rec, "message", ""))
    for item in items:
        rec = item.record
        if rec.record_type != "nccl_env":
            continue
        name, value = getattr(rec, "name", None), str(getattr(rec, "value", ""))
        if name == "NCCL_IB_DISABLE" and value == "1":
            return "NCCL_IB_DISABLE=1 set by the environment"
        if name == "NCCL_NET" and value.lower() == "socket":
            return "NCCL_NET=Socket set by the environment"
    for item in items:
        rec = item.record
        if (
            rec.record_type == "net_devices"
            and getattr(rec, "role", None) == "ib"
            and not getattr(rec, "devices", ())
        ):
            return "NET/IB : No device found"
    return None


@deriver
def _socket_transport(ev: Evidence) -> Iterator[Item]:
    by_subject = ev.subjects()
    rdma_in_use = any(
        (i.record.record_type == "net_selected" and getattr(i.record, "transport", "") != "socket")
        or (
            i.record.record_type == "net_devices"
            and getattr(i.record, "role", None) == "ib"
            and getattr(i.record, "devices", ())
        )
        for i in ev.items
    )
    failing = any(
        i.record.record_type == "problem"
        and getattr(i.record, "category", None)
        in ("socket_connect", "socket_retry", "socket_error")
        and any(w in str(getattr(i.record, "message", "")) for w in _CONNECT_FAILED)
        for i in ev.items
    )
    for subject, items in sorted(by_subject.items()):
        chosen = [
            i
            for i in items
            if i.record.record_type == "net_selected"
            and getattr(i.record, "transport", "") in _NO_RDMA
        ]
        selected_any = any(i.record.record_type == "net_selected" for i in items)
        sockets = [
            i
            for i in items
            if i.record.record_type == "net_devices"
            and getattr(i.record, "role", None) == "socket"
            and getattr(i.record, "devices", ())
        ]
        if chosen:
            first, explicit = chosen[0], True
        elif sockets and not selected_any and not rdma_in_use:
            first, explicit = sockets[0], False
        else:
            continue
        virtual = None
        if failing:
            for i in items:
                if i.record.record_type == "net_devices" and getattr(i.record, "role", None) in (
                    "bootstrap",
                    "socket",
                ):
                    for dev in getattr(i.record, "devices", ()):
                        if virtual is None and virtual_kind(dev.name) is not None:
                            virtual = dev.name
        reason = _socket_reason(items) or _socket_reason(ev.items) or "not printed"
        rec = SocketTransport(
            line=first.record.line,
            name=str(getattr(first.record, "name", "Socket")) if explicit else "Socket",
            explicit=explicit,
            reason=reason,
            iface_unreachable=virtual,
            rdma_expected=_rdma_expected(ev, reason),
        )
        yield Item(rec, first.file, subject, first.kind)
