"""Record verdicts that compare the hosts of one bundle: the same interface should look the same
on every host of a fleet (a probe bundle ``DIR/<host>/<files>``, one subject per host), and the
host that differs from the rest is the one to look at.

======================================  ==================================  =======================
verdict                                  records                             cause
======================================  ==================================  =======================
``diagnose.fleet-mtu-differs``           ``ip_link`` (hosts compared)        fabric.mtu
``diagnose.fleet-speed-differs``         ``ethtool_link`` (hosts compared)   fabric.slow-link
``diagnose.fleet-driver-differs``        ``ethtool_driver`` (hosts compared) config.version-mismatch
``diagnose.fleet-firmware-differs``      ``ethtool_driver`` (hosts compared) config.version-mismatch
``diagnose.fleet-gid-index-differs``     ``sysfs_gid`` ``ibv_gid`` ``gid``   host.gid
``diagnose.fleet-rdma-device-missing``   ``ip_link`` (hosts compared)        host.rdma-device
``diagnose.fleet-module-missing``        ``kernel_module`` (hosts compared)  host.gdr / rdma-device
``diagnose.fleet-plugin-missing``        ``shared_lib`` (hosts compared)     config.nccl-env
======================================  ==================================  =======================

How hosts are compared (the approach of ``diagnose.dscp-differs`` in
:mod:`.verdicts_lab`: one value per subject, memoised per evidence, the odd ones named):

* per interface *name* (``eth0``, ``ens1f0np0``): the value of each subject that has it, from its
  first record (``ip link``: ``mtu``; ``ethtool IFACE``: ``Speed``, link-down ``Unknown!`` not
  counted; ``ethtool -i IFACE``: ``driver`` + ``version`` as one value and ``firmware-version``,
  empty values not counted). ``ethtool -i`` does not name its interface: it is taken from the
  command line in the capture, else from the probe's file name ``ethtool-i-IFACE.txt``;
* judged only when at least :data:`FLEET_MIN_HOSTS` (3) hosts have the interface and one value
  is held by a clear majority, more than half of them: with two hosts, or a 2-2 split, there is
  no telling which side is wrong, and nothing is said;
* each host whose value differs from the majority gets one warning on its own record, naming
  the interface, its value, the majority value and the counts, and the other odd hosts.

The RoCE GID index is compared the same way, keyed by RDMA device and port (``mlx5_0 port
1``): the value is the lowest index of a RoCE v2 GID that carries an IPv4 address, from sysfs
(``sysfs-infiniband``), ``ibv_devinfo -v`` or ``show_gids``. ``NCCL_IB_GID_INDEX`` is one
number for the whole job (S15): on a host whose IPv4 RoCE v2 GID sits elsewhere (an extra
address or VLAN on the port, IPv6 enabled first) it selects a link-local, RoCE v1 or IPv6 GID
and that host's connections fail or run over the wrong address.

Presence is compared per host (:func:`fleet_missing`): among the hosts that have the kind of
capture at all (``ip link`` for RDMA devices, ``/proc/modules`` for kernel modules, ``ldconfig
-p`` for NCCL net plugins), at least :data:`FLEET_MIN_HOSTS` and a clear majority have the
thing, and this host lacks it:

* an RDMA device: any record of ``ibv_devinfo``, ``ibv_devices``, ``rdma link``,
  ``ibdev2netdev``, ``show_gids`` or sysfs (``/sys/class/infiniband``); the finding sits on the
  host's first ``ip_link`` record and names the devices the others have;
* a kernel module of :data:`WATCHED_MODULES`: the peer-memory module (``nvidia_peermem`` or
  the older ``nv_peer_mem``, either counts; compared only among hosts with ``nvidia`` loaded),
  ``mlx5_ib``, ``ib_uverbs``, ``rdma_ucm``; on the host's first ``kernel_module`` record;
* an NCCL net plugin, ``libnccl-net*.so`` in the loader cache (by file name, any version); on
  the host's first ``shared_lib`` record.

A lab or a fleet that mixes NIC generations on purpose (a 100G storage port named like a 400G
compute port) trips these; the verdicts are warnings for that reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import (
    _ETHTOOL,
    _IB_ADDR_H,
    _IP_LINK,
    _NCCL_ENV,
    _ROCE_GID_SRC,
    _index,
    _item,
)
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.checks.diagnose.verdicts_host_state import _GDR_DOC
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_info import EthtoolDriver, EthtoolLink
from aifabric.evidence.infiniband import GidEntry, IbstatCA, IbvDevice, IbvGid, IbvPort
from aifabric.evidence.kernel_modules import KernelModule
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.rdma_tools import Ibdev2netdev, IbvDevicesList, RdmaDev, RdmaLink
from aifabric.evidence.shared_libs import SharedLib
from aifabric.evidence.sysfs_rdma import SysfsGid, SysfsRdmaPort

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item

__all__ = ["FLEET_MIN_HOSTS", "WATCHED_MODULES", "Missing", "Odd", "fleet_missing", "fleet_odd"]

FLEET_MIN_HOSTS = 3
"""Hosts that must have an interface before its values are compared (module doc)."""

_ETHTOOL_I_FILE_RE = re.compile(r"^ethtool-i-([\w.:@-]+)\.txt$")


@dataclass(frozen=True, slots=True)
class Odd:
    """One host whose value differs from the majority of the hosts that have the interface."""

    subject: str
    interface: str
    value: str
    majority: str
    majority_count: int
    hosts: int
    """How many hosts have the interface (with a value)."""
    others: tuple[str, ...]
    """The other odd hosts of the same interface, sorted."""


def _driver_iface(rec: EthtoolDriver, item: Item) -> str | None:
    if rec.interface:
        return rec.interface
    if item.file is None:
        return None
    m = _ETHTOOL_I_FILE_RE.match(PurePath(item.file.path).name)
    return m.group(1) if m else None


def _mtu(rec: Record, item: Item) -> tuple[str, str] | None:
    if not isinstance(rec, IpLink) or rec.mtu_bytes is None or rec.link_type == "loopback":
        return None
    return rec.name, str(rec.mtu_bytes)


def _speed(rec: Record, item: Item) -> tuple[str, str] | None:
    if not isinstance(rec, EthtoolLink) or rec.speed_mbps is None:
        return None
    return rec.interface, str(rec.speed_mbps)


def _driver(rec: Record, item: Item) -> tuple[str, str] | None:
    if not isinstance(rec, EthtoolDriver) or rec.driver is None:
        return None
    iface = _driver_iface(rec, item)
    if iface is None:
        return None
    return iface, f"{rec.driver} {rec.version}" if rec.version else rec.driver


def _firmware(rec: Record, item: Item) -> tuple[str, str] | None:
    if not isinstance(rec, EthtoolDriver) or rec.firmware is None:
        return None
    iface = _driver_iface(rec, item)
    return (iface, rec.firmware) if iface is not None else None


def roce_v2_ipv4_gid(rec: Record) -> tuple[str, int, str] | None:
    """(``DEV port N``, index, IPv4) of a RoCE v2 GID record carrying an IPv4 address (sysfs,
    ``ibv_devinfo -v`` or ``show_gids``), else None."""
    if isinstance(rec, SysfsGid):
        dev, v2 = rec.device, (rec.gid_type or "").strip().lower() == "roce v2"
    elif isinstance(rec, IbvGid):
        dev = rec.hca_id
        v2 = rec.roce_version == 2 or (rec.gid_type or "").strip().lower() == "roce v2"
    elif isinstance(rec, GidEntry):
        dev, v2 = rec.device, rec.roce_version == 2
    else:
        return None
    if not v2 or not rec.ipv4:
        return None
    return f"{dev} port {rec.port}", rec.index, rec.ipv4


def _gid(rec: Record, item: Item) -> tuple[str, str] | None:
    got = roce_v2_ipv4_gid(rec)
    return None if got is None else (got[0], str(got[1]))


_ASPECTS: dict[str, Callable[[Record, Item], tuple[str, str] | None]] = {
    "mtu": _mtu,
    "speed": _speed,
    "driver": _driver,
    "firmware": _firmware,
    "gid": _gid,
}
_LOWEST = frozenset({"gid"})
"""Aspects whose per-host value is the lowest number seen, not the first (a host with two
IPv4 RoCE v2 GIDs works with the lower index the others use)."""


def _table(ev: Evidence, aspect: str) -> dict[int, Odd]:
    """Per odd record (by ``id``), what makes it odd; computed once per evidence and aspect."""
    idx = _index(ev)
    key = (f"fleet-{aspect}", 0)
    got = idx.memo.get(key)
    if isinstance(got, dict):
        return got
    value_of = _ASPECTS[aspect]
    # with a fabric file, the fleet is its servers: a switch's port named like a host's
    # interface (a Linux switch's Ethernet1 at 9216 beside a leaf's 9000) is not an odd host
    routers = (
        {s.name for s in ev.fabric.switches} | {m.name for m in ev.fabric.middleboxes}
        if ev.fabric is not None else set()
    )
    seen: dict[str, dict[str, tuple[str, Record]]] = {}  # interface → subject → (value, record)
    for item in ev.items:
        if item.file is None or item.subject in routers:
            continue
        iv = value_of(item.record, item)
        if iv is None:
            continue
        per = seen.setdefault(iv[0], {})
        had = per.get(item.subject)
        if had is None or (aspect in _LOWEST and int(iv[1]) < int(had[0])):
            per[item.subject] = (iv[1], item.record)
    out: dict[int, Odd] = {}
    for iface, by_subject in seen.items():
        n = len(by_subject)
        values = Counter(v for v, _ in by_subject.values())
        if n < FLEET_MIN_HOSTS or len(values) < 2:
            continue
        majority, count = values.most_common(1)[0]
        if 2 * count <= n:
            continue
        odd = sorted(s for s, (v, _) in by_subject.items() if v != majority)
        for s in odd:
            value, rec = by_subject[s]
            others = tuple(o for o in odd if o != s)
            out[id(rec)] = Odd(s, iface, value, majority, count, n, others)
    idx.memo[key] = out
    return out


def fleet_odd(rec: Record, ev: Evidence, aspect: str) -> Odd | None:
    """Whether ``rec`` holds a value of ``aspect`` (``mtu``, ``speed``, ``driver``,
    ``firmware``, ``gid``) that differs from a clear majority of the bundle's hosts (module doc)."""
    if _item(rec, ev) is None:
        return None
    return _table(ev, aspect).get(id(rec))


def _others(odd: Odd) -> str:
    if not odd.others:
        return ""
    shown = ", ".join(odd.others[:5])
    more = f" and {len(odd.others) - 5} more" if len(odd.others) > 5 else ""
    return f"; also odd: {shown}{more}"


def _count(odd: Odd) -> str:
    return f"{odd.majority_count} of the {odd.hosts} hosts with {odd.interface}"


@verdict("ip_link")
def _fleet_mtu(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    odd = fleet_odd(rec, ev, "mtu")
    if odd is None:
        return
    yield Verdict(
        id="diagnose.fleet-mtu-differs",
        severity="warning",
        cause="fabric.mtu",
        message=f"{odd.subject} has MTU {odd.value} on {odd.interface} while {_count(odd)} have "
        f"MTU {odd.majority}{_others(odd)}",
        explanation=(
            "Every hop of the fabric must carry the same jumbo MTU (S11). A host whose "
            "interface has a different MTU than the rest either sends frames its peers drop "
            "(larger) or caps every RDMA and TCP path through it (smaller); RDMA picks its path "
            "MTU from the port and a mismatch shows as stalls and timeouts, not as an error "
            f"(S20, row 1). Compared across the bundle's hosts ({_IP_LINK})."
        ),
        fix=f"Set MTU {odd.majority} on {odd.subject}'s {odd.interface} (`ip link set dev "
        f"{odd.interface} mtu {odd.majority}` and in its persistent network configuration), "
        "or confirm the majority value is itself the intended one.",
        refs=("S11", "S20"),
        confidence=0.6,
    )


@verdict("ethtool_link")
def _fleet_speed(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    odd = fleet_odd(rec, ev, "speed")
    if odd is None:
        return
    yield Verdict(
        id="diagnose.fleet-speed-differs",
        severity="warning",
        cause="fabric.slow-link",
        message=f"{odd.subject}'s {odd.interface} runs at {odd.value} Mb/s while {_count(odd)} "
        f"run at {odd.majority} Mb/s{_others(odd)}",
        explanation=(
            "Ports of the same role should train at the same rate; one that links up slower "
            "(a lane down, a cable or module that cannot do the full rate, auto-negotiation "
            "settling lower, speed forced by hand) caps every collective through that host at "
            f"its rate (S20, S9). The speed is ethtool's negotiated ``Speed:`` ({_ETHTOOL})."
        ),
        fix=f"Check {odd.subject}'s {odd.interface}: `ethtool {odd.interface}` (advertised and "
        "link partner modes), `ethtool -m` (module type and lanes) and the switch port; reseat "
        "or replace the cable or module, or remove a forced speed.",
        refs=("S20", "S9"),
        confidence=0.6,
    )


@verdict("ethtool_driver")
def _fleet_driver(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    for aspect, what in (("driver", "driver"), ("firmware", "NIC firmware")):
        odd = fleet_odd(rec, ev, aspect)
        if odd is None:
            continue
        yield Verdict(
            id=f"diagnose.fleet-{aspect}-differs",
            severity="warning",
            cause="config.version-mismatch",
            message=f"{odd.subject}'s {odd.interface} has {what} {odd.value} while "
            f"{_count(odd)} have {odd.majority}{_others(odd)}",
            explanation=(
                f"A host whose {what} differs from the rest of the fleet behaves differently "
                "under the same load: fixed bugs, RoCE and congestion-control defaults, and "
                "counters differ between releases, and an odd host is where intermittent "
                "errors concentrate; the fleet should be upgraded together (S20). Read from "
                f"``ethtool -i`` ({_ETHTOOL})."
            ),
            fix=f"Bring {odd.subject} to {odd.majority} (or the fleet to one chosen release): "
            + (
                "install the same driver package and reload the module."
                if aspect == "driver"
                else "flash the same firmware (mlxfwmanager / vendor tool) and reset the NIC."
            ),
            refs=("S20",),
            confidence=0.55,
        )


@verdict("sysfs_gid", "ibv_gid", "gid")
def _fleet_gid_index(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    odd = fleet_odd(rec, ev, "gid")
    got = roce_v2_ipv4_gid(rec)
    if odd is None or got is None:
        return
    yield Verdict(
        id="diagnose.fleet-gid-index-differs",
        severity="warning",
        cause="host.gid",
        message=f"{odd.subject}'s {odd.interface} has its IPv4 RoCE v2 GID ({got[2]}) at index "
        f"{odd.value} while {_count(odd)} have it at index {odd.majority}{_others(odd)}",
        explanation=(
            "NCCL_IB_GID_INDEX (and UCX_IB_GID_INDEX) is set once for the whole job, so every "
            "host must have its routable GID, RoCE v2 with the fabric's IPv4 address, at the "
            "same index (S15). The kernel fills the GID table per port from the net device's "
            "addresses, a RoCE v1 and a v2 entry each, in the order they appear "
            f"({_ROCE_GID_SRC}); an extra address, a VLAN or IPv6 enabled first moves the IPv4 "
            "entry. On this host the fleet-wide index names a link-local, RoCE v1 or IPv6 GID: "
            "its queue pairs do not connect, or carry traffic the fabric does not route or mark "
            f"as RoCE v2 ({_IB_ADDR_H}, {_NCCL_ENV})."
        ),
        fix=f"Make {odd.subject}'s addresses on the netdev of {odd.interface} match the other "
        "hosts (same address count and order, no extra VLAN or IPv6 address before the IPv4 "
        f"one) so the IPv4 RoCE v2 GID lands at index {odd.majority}; or leave "
        "NCCL_IB_GID_INDEX unset (NCCL >= 2.21 picks a RoCE v2 GID per host, IPv4 with "
        "NCCL_IB_ADDR_FAMILY=AF_INET). Check with `show_gids` on both.",
        refs=("S15", _NCCL_ENV),
        confidence=0.6,
    )


# -- presence: what most hosts have and one lacks --------------------------------------------

WATCHED_MODULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("nvidia_peermem", ("nvidia_peermem", "nv_peer_mem"), "host.gdr"),
    ("mlx5_ib", ("mlx5_ib",), "host.rdma-device"),
    ("ib_uverbs", ("ib_uverbs",), "host.rdma-device"),
    ("rdma_ucm", ("rdma_ucm",), "host.rdma-device"),
)
"""(group, module names that satisfy it, cause): the kernel modules compared across hosts.
The peer-memory group is compared only among hosts with ``nvidia`` loaded."""

_PLUGIN_RE = re.compile(r"^(libnccl-net[\w.+-]*?\.so)(?:\.[\d.]*)?$")
_RDMA_TYPES = (
    IbvDevice, IbvPort, IbvGid, IbstatCA, RdmaLink, RdmaDev, Ibdev2netdev, GidEntry,
    SysfsRdmaPort, SysfsGid,
)


@dataclass(frozen=True, slots=True)
class Missing:
    """One host lacking what a clear majority of the comparable hosts have."""

    subject: str
    what: str
    """``RDMA device``, a module (the name most hosts load) or a plugin file name."""
    cause: str
    have: int
    """How many of the comparable hosts have it."""
    hosts: int
    """How many hosts were comparable (have the kind of capture)."""
    seen: tuple[str, ...]
    """What the others have (device names, module names), most common first."""
    others: tuple[str, ...]
    """The other hosts lacking it, sorted."""


def _rdma_names(rec: Record) -> list[str]:
    if isinstance(rec, IbvDevicesList):
        return [d.name for d in rec.devices]
    if isinstance(rec, IbvDevice | IbvPort | IbvGid):
        return [rec.hca_id]
    if isinstance(rec, IbstatCA):
        return [rec.ca]
    if isinstance(rec, _RDMA_TYPES):
        return [str(getattr(rec, "device", ""))]
    return []


def _plugin(rec: SharedLib) -> str | None:
    name = PurePath(rec.path).name if rec.path else rec.soname
    m = _PLUGIN_RE.match(name) or _PLUGIN_RE.match(rec.soname)
    return m.group(1) if m else None


@dataclass(slots=True)
class _Host:
    ip_link: Record | None = None
    rdma: Counter[str] = field(default_factory=Counter)
    module_rec: Record | None = None
    modules: set[str] = field(default_factory=set)
    lib_rec: Record | None = None
    plugins: set[str] = field(default_factory=set)


def _judge(
    have: dict[str, bool], what: str, cause: str, seen: Counter[str], attach: dict[str, Record]
) -> dict[int, list[Missing]]:
    """The hosts of ``have`` (host → has it) lacking ``what`` against a clear majority."""
    n = len(have)
    count = sum(have.values())
    out: dict[int, list[Missing]] = {}
    if n < FLEET_MIN_HOSTS or 2 * count <= n or count == n:
        return out
    lacking = sorted(h for h, ok in have.items() if not ok)
    names = tuple(k for k, _ in seen.most_common())
    for h in lacking:
        rec = attach.get(h)
        if rec is not None:
            others = tuple(o for o in lacking if o != h)
            out.setdefault(id(rec), []).append(Missing(h, what, cause, count, n, names, others))
    return out


def _presence(ev: Evidence) -> dict[int, list[Missing]]:
    """Per record (by ``id``) the :class:`Missing` findings it carries; once per evidence."""
    idx = _index(ev)
    key = ("fleet-presence", 0)
    got = idx.memo.get(key)
    if isinstance(got, dict):
        return got
    routers = (
        {s.name for s in ev.fabric.switches} | {m.name for m in ev.fabric.middleboxes}
        if ev.fabric is not None else set()
    )
    hosts: dict[str, _Host] = {}
    for item in ev.items:
        if item.file is None or item.subject is None or item.subject in routers:
            continue
        rec = item.record
        h = hosts.setdefault(item.subject, _Host())
        if isinstance(rec, IpLink):
            h.ip_link = h.ip_link or rec
        elif isinstance(rec, KernelModule):
            h.module_rec = h.module_rec or rec
            h.modules.add(rec.name)
        elif isinstance(rec, SharedLib):
            h.lib_rec = h.lib_rec or rec
            plugin = _plugin(rec)
            if plugin is not None:
                h.plugins.add(plugin)
        else:
            h.rdma.update(n for n in _rdma_names(rec) if n)
    out: dict[int, list[Missing]] = {}

    def merge(found: dict[int, list[Missing]]) -> None:
        for rid, ms in found.items():
            out.setdefault(rid, []).extend(ms)

    # RDMA devices: among hosts probed for host state (an ip link capture) or showing a device
    comparable = {s: h for s, h in hosts.items() if h.ip_link is not None or h.rdma}
    devices: Counter[str] = Counter()
    for h in comparable.values():
        devices.update(set(h.rdma))
    attach = {s: h.ip_link for s, h in comparable.items() if h.ip_link is not None}
    merge(_judge({s: bool(h.rdma) for s, h in comparable.items()}, "RDMA device",
                 "host.rdma-device", devices, attach))  # fmt: skip
    # kernel modules
    listed = {s: h for s, h in hosts.items() if h.module_rec is not None}
    mod_attach = {s: h.module_rec for s, h in listed.items() if h.module_rec is not None}
    for group, names, cause in WATCHED_MODULES:
        among = listed
        if group == "nvidia_peermem":
            among = {s: h for s, h in listed.items() if "nvidia" in h.modules}
        loaded: Counter[str] = Counter(n for h in among.values() for n in names if n in h.modules)
        what = loaded.most_common(1)[0][0] if loaded else group
        have = {s: any(n in h.modules for n in names) for s, h in among.items()}
        merge(_judge(have, what, cause, loaded, mod_attach))
    # NCCL net plugins
    libs = {s: h for s, h in hosts.items() if h.lib_rec is not None}
    lib_attach = {s: h.lib_rec for s, h in libs.items() if h.lib_rec is not None}
    for plugin in sorted({p for h in libs.values() for p in h.plugins}):
        have = {s: plugin in h.plugins for s, h in libs.items()}
        merge(_judge(have, plugin, "config.nccl-env", Counter({plugin: sum(have.values())}),
                     lib_attach))  # fmt: skip
    idx.memo[key] = out
    return out


def fleet_missing(rec: Record, ev: Evidence) -> list[Missing]:
    """What the host of ``rec`` lacks against a clear majority (module doc), for findings
    carried by ``rec`` (its host's first ``ip_link``, ``kernel_module`` or ``shared_lib``)."""
    if _item(rec, ev) is None:
        return []
    return _presence(ev).get(id(rec), [])


def _lacking(m: Missing) -> str:
    return f"{m.have} of the {m.hosts} hosts compared"


def _also(m: Missing) -> str:
    if not m.others:
        return ""
    shown = ", ".join(m.others[:5])
    more = f" and {len(m.others) - 5} more" if len(m.others) > 5 else ""
    return f"; also lacking: {shown}{more}"


@verdict("ip_link")
def _fleet_rdma_device(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    for m in fleet_missing(rec, ev):
        if m.what != "RDMA device":
            continue
        devs = ", ".join(m.seen[:6]) + (" ..." if len(m.seen) > 6 else "")
        yield Verdict(
            id="diagnose.fleet-rdma-device-missing",
            severity="warning",
            cause="host.rdma-device",
            message=f"{m.subject} shows no RDMA device while {_lacking(m)} do ({devs}){_also(m)}",
            explanation=(
                "The other hosts of the bundle list RDMA devices (ibv_devinfo, rdma link, "
                "ibdev2netdev or /sys/class/infiniband) and this one lists none: its HCA is "
                "not visible (driver or mlx5_ib not loaded, device not passed into the "
                "container or VM, firmware or PCIe fault), or its RDMA captures are missing. "
                "NCCL on such a host falls back to TCP sockets (NET/Socket) and the whole "
                "collective runs at that host's socket speed (S5, S20)."
            ),
            fix=f"On {m.subject}: `ls /sys/class/infiniband`, `lspci | grep -i mellanox`, "
            "`lsmod | grep -e mlx5 -e ib_`, `dmesg | grep -i mlx5`; load the driver "
            "(`modprobe mlx5_ib`), pass the device into the container (/dev/infiniband, "
            "the RDMA device plugin), or re-run the probe if the RDMA tools were missing.",
            refs=("S5", "S20"),
            confidence=0.55,
        )


@verdict("kernel_module")
def _fleet_module(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    for m in fleet_missing(rec, ev):
        loaded = ", ".join(m.seen) if m.seen else m.what
        if m.cause == "host.gdr":
            why = (
                "Without the peer-memory module the RDMA stack cannot register GPU memory "
                "(ibv_reg_mr on a CUDA pointer), so NCCL reports 'GPU Direct RDMA Disabled' "
                "and stages every inter-node transfer through host memory, unless it can use "
                f"DMA-BUF instead (open GPU kernel module, kernel >= 5.12) ({_GDR_DOC}, "
                f"{_NCCL_ENV} NCCL_NET_GDR_LEVEL / NCCL_DMABUF_ENABLE)."
            )
            fix = (f"`modprobe {m.what}` on {m.subject} (the module must be built for its "
                   "driver and MLNX_OFED/DOCA; `modinfo` shows it) and load it at boot like "
                   "the other hosts.")
            refs: tuple[str, ...] = ("S9", "S20", _GDR_DOC)
        else:
            why = (
                f"{m.what} is part of the RDMA stack NCCL's IB transport needs (mlx5_ib: the "
                "verbs device of a ConnectX port; ib_uverbs: /dev/infiniband/uverbs*, user "
                "verbs; rdma_ucm: the RDMA connection manager). Without it the host has no "
                "usable RDMA device and falls back to sockets, or fails where "
                "NCCL_IB_HCA is set (S5, S20)."
            )
            fix = (f"`modprobe {m.what}` on {m.subject} and find why it was not loaded "
                   "(`dmesg`, the OFED/DOCA or rdma-core install, /etc/modules-load.d).")
            refs = ("S5", "S20")
        yield Verdict(
            id="diagnose.fleet-module-missing",
            severity="warning",
            cause=m.cause,
            message=f"{m.subject} has not loaded {m.what} while {_lacking(m)} have "
            f"({loaded}){_also(m)}",
            explanation=why + " Compared across the bundle's hosts (/proc/modules or lsmod).",
            fix=fix,
            refs=refs,
            confidence=0.55,
        )


@verdict("shared_lib")
def _fleet_plugin(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    for m in fleet_missing(rec, ev):
        yield Verdict(
            id="diagnose.fleet-plugin-missing",
            severity="warning",
            cause=m.cause,
            message=f"{m.subject} has no {m.what} in its loader cache while {_lacking(m)} "
            f"have it{_also(m)}",
            explanation=(
                "NCCL loads its network plugin by name (NCCL_NET_PLUGIN, default "
                "libnccl-net.so) through the dynamic loader; a host without it silently uses "
                "NCCL's built-in IB or socket transport while the others use the plugin "
                "(AWS OFI, SHARP/collnet, a vendor plugin), and the job mixes transports or "
                f"fails to connect ({_NCCL_ENV} NCCL_NET_PLUGIN). Read from `ldconfig -p`: a "
                "plugin found only through LD_LIBRARY_PATH is not listed there."
            ),
            fix=f"Install the same plugin package on {m.subject} (or put its directory in "
            "/etc/ld.so.conf.d and run `ldconfig`), then look for 'NET/Plugin: Loaded' in "
            "its NCCL_DEBUG=INFO log.",
            refs=("S15", _NCCL_ENV),
            confidence=0.5,
        )
