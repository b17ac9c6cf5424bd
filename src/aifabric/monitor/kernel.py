"""Kernel counters without a subprocess: the ethtool ioctl, rtnetlink dumps, procfs, per netns.

A scrape must stay well under 50 ms for 16 NICs (issue 21), so nothing here forks: ``ethtool
-S`` is the ``SIOCETHTOOL`` ioctl (``ETHTOOL_GSSET_INFO`` for the count, ``ETHTOOL_GSTRINGS``
for the names, both cached per interface, then ``ETHTOOL_GSTATS`` per scrape); link counters,
carrier changes, MTU and operational state come from one ``RTM_GETLINK`` dump
(``IFLA_STATS64``, ``IFLA_CARRIER_CHANGES``); qdisc drops, backlog and ECN marks from one
``RTM_GETQDISC`` dump (``TCA_STATS2``, and ``TCA_XSTATS`` for red/fq_codel marks); TCP
retransmissions from ``/proc/net/snmp`` and ``/proc/net/netstat`` read again with ``pread``.

A :class:`NetnsHandles` holds those sockets and files for one network namespace. They are
opened once, from a short-lived thread that enters the namespace with ``setns(2)`` and leaves it
again; a socket or procfs file keeps the namespace it was opened in, so every later scrape reads
that namespace from any thread (the exporter serves scrapes from several threads and never
changes its own namespace). Entering a named namespace needs CAP_SYS_ADMIN (root).

Struct layouts: ``include/uapi/linux/ethtool.h`` (``ethtool_sset_info``, ``ethtool_gstrings``,
``ethtool_stats``), ``include/uapi/linux/if_link.h`` (``IFLA_*``, ``rtnl_link_stats64``),
``include/uapi/linux/rtnetlink.h`` and ``pkt_sched.h`` / ``gen_stats.h`` (``tcmsg``,
``TCA_STATS2``, ``gnet_stats_basic``, ``gnet_stats_queue``, ``tc_red_xstats``,
``tc_fq_codel_xstats``), ``include/uapi/linux/netlink.h``; man pages netlink(7), rtnetlink(7).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = [
    "EthtoolReader",
    "LinkInfo",
    "NetnsHandles",
    "QdiscInfo",
    "dump_links",
    "dump_qdiscs",
    "in_netns",
    "parse_snmp",
]

T = TypeVar("T")

CLONE_NEWNET = 0x40000000
SIOCETHTOOL = 0x8946
ETHTOOL_GSTRINGS = 0x1B
ETHTOOL_GSTATS = 0x1D
ETHTOOL_GSSET_INFO = 0x37
ETH_SS_STATS = 1
ETH_GSTRING_LEN = 32
IFNAMSIZ = 16

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTM_NEWLINK, RTM_GETLINK = 16, 18
RTM_NEWQDISC, RTM_GETQDISC = 36, 38
IFLA_IFNAME, IFLA_MTU, IFLA_OPERSTATE = 3, 4, 16
IFLA_STATS64, IFLA_CARRIER_CHANGES = 23, 35
IF_OPER_UP = 6
IFF_UP = 0x1
TCA_KIND, TCA_XSTATS, TCA_STATS2 = 1, 4, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE = 1, 3

_STATS64 = (
    "rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors", "tx_errors", "rx_dropped",
    "tx_dropped", "multicast", "collisions", "rx_length_errors", "rx_over_errors",
    "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors", "rx_missed_errors",
    "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors", "tx_heartbeat_errors",
    "tx_window_errors", "rx_compressed", "tx_compressed", "rx_nohandler",
)  # fmt: skip
"""``struct rtnl_link_stats64`` field order (u64 each); older kernels send a prefix."""

_libc: ctypes.CDLL | None = None


def _setns(fd: int) -> None:
    global _libc  # noqa: PLW0603 - one handle, loaded on first use
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def in_netns(name: str | None, fn: Callable[[], T]) -> T:
    """Run ``fn`` inside network namespace ``name`` (``/run/netns/NAME``, what ``ip netns``
    creates; ``None``: here) on a short-lived thread, and return its result. Anything ``fn``
    opens (sockets, ``/proc/thread-self/net/*`` files) stays bound to that namespace."""
    if name is None:
        return fn()
    box: dict[str, object] = {}

    def run() -> None:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            target = os.open(f"/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            os.close(own)
            box["error"] = exc
            return
        try:
            _setns(target)
            try:
                box["value"] = fn()
            finally:
                _setns(own)
        except BaseException as exc:
            box["error"] = exc
        finally:
            os.close(target)
            os.close(own)

    t = threading.Thread(target=run, name=f"netns:{name}")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


# -- ethtool ioctl -----------------------------------------------------------------------------


class EthtoolReader:
    """``ethtool -S IFACE`` through ``SIOCETHTOOL`` on one socket (one netns).

    Names are fetched once per interface and fetched again when the driver's count changes
    (a driver reload). An interface whose driver has no statistics (``lo``: EOPNOTSUPP) is
    remembered as such and costs nothing later.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._fd = sock.fileno()
        self._sock = sock
        self._names: dict[str, list[str]] = {}
        self._none: set[str] = set()
        self._lock = threading.Lock()

    def _ioctl(self, ifname: str, buf: ctypes.Array[ctypes.c_char]) -> None:
        ifr = struct.pack(f"{IFNAMSIZ}sP", ifname.encode()[: IFNAMSIZ - 1], ctypes.addressof(buf))
        ifr += b"\0" * (40 - len(ifr))
        fcntl.ioctl(self._fd, SIOCETHTOOL, ifr)

    def _count(self, ifname: str) -> int:
        buf = ctypes.create_string_buffer(
            struct.pack("=IIQI", ETHTOOL_GSSET_INFO, 0, 1 << ETH_SS_STATS, 0)
        )
        self._ioctl(ifname, buf)
        mask = struct.unpack_from("=Q", buf, 8)[0]
        return struct.unpack_from("=I", buf, 16)[0] if mask & (1 << ETH_SS_STATS) else 0

    def _strings(self, ifname: str, n: int) -> list[str]:
        buf = ctypes.create_string_buffer(12 + n * ETH_GSTRING_LEN)
        struct.pack_into("=III", buf, 0, ETHTOOL_GSTRINGS, ETH_SS_STATS, n)
        self._ioctl(ifname, buf)
        raw = buf.raw[12:]
        return [
            raw[i * ETH_GSTRING_LEN : (i + 1) * ETH_GSTRING_LEN]
            .split(b"\0", 1)[0]
            .decode("ascii", "replace")
            .strip()
            for i in range(n)
        ]

    def read(self, ifname: str) -> dict[str, int] | None:
        """name → value of every driver counter, ``None`` when the driver has none."""
        if ifname in self._none:
            return None
        names = self._names.get(ifname)
        try:
            if names is None:
                with self._lock:
                    n = self._count(ifname)
                    if n == 0:
                        self._none.add(ifname)
                        return None
                    names = self._names[ifname] = self._strings(ifname, n)
            n = len(names)
            buf = ctypes.create_string_buffer(8 + 8 * n)
            struct.pack_into("=II", buf, 0, ETHTOOL_GSTATS, n)
            self._ioctl(ifname, buf)
            got = struct.unpack_from("=I", buf, 4)[0]
            if got != n:  # the driver changed its counter set: names again next time
                self._names.pop(ifname, None)
                n = min(n, got)
            values = struct.unpack_from(f"={n}Q", buf, 8)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL):
                self._none.add(ifname)
                return None
            if exc.errno == errno.ENODEV:  # gone; forget it (it may come back renamed)
                self._names.pop(ifname, None)
                return None
            raise
        return dict(zip(names, values, strict=False))

    def forget(self, ifname: str) -> None:
        self._names.pop(ifname, None)
        self._none.discard(ifname)


# -- rtnetlink ---------------------------------------------------------------------------------


@dataclass(slots=True)
class LinkInfo:
    """One interface from ``RTM_GETLINK``."""

    index: int
    name: str
    mtu: int | None = None
    admin_up: bool | None = None
    """``IFF_UP`` in ``ifi_flags`` (``ip link set ... up``)."""
    oper_up: bool | None = None
    carrier_changes: int | None = None
    stats: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class QdiscInfo:
    """One qdisc from ``RTM_GETQDISC`` with its ``TCA_STATS2`` counters."""

    ifindex: int
    handle: int
    parent: int
    kind: str
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def handle_text(self) -> str:
        """``tc``'s way of printing the handle (``8001:``; ``0:`` for a default one)."""
        return f"{self.handle >> 16:x}:"


def _attrs(data: bytes, offset: int, end: int) -> Iterator[tuple[int, bytes]]:
    while offset + 4 <= end:
        length, kind = struct.unpack_from("=HH", data, offset)
        if length < 4:
            return
        yield kind & 0x3FFF, data[offset + 4 : offset + length]
        offset += (length + 3) & ~3


_seq_lock = threading.Lock()
_seq = [int.from_bytes(os.urandom(2), "little")]


def _dump(sock: socket.socket, msg_type: int, body: bytes) -> Iterator[tuple[int, bytes]]:
    """Send one dump request on ``sock`` and yield (type, payload) of each answer message."""
    with _seq_lock:
        _seq[0] = (_seq[0] + 1) & 0xFFFFFFFF
        seq = _seq[0]
    msg = struct.pack("=IHHII", 16 + len(body), msg_type, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
    sock.send(msg + body)
    while True:
        data = sock.recv(1 << 20)
        offset = 0
        while offset + 16 <= len(data):
            length, mtype, _flags, mseq, _pid = struct.unpack_from("=IHHII", data, offset)
            if length < 16:
                return
            payload = data[offset + 16 : offset + length]
            offset += (length + 3) & ~3
            if mseq != seq:
                continue
            if mtype == NLMSG_DONE:
                return
            if mtype == NLMSG_ERROR:
                code = struct.unpack_from("=i", payload)[0]
                if code:
                    raise OSError(-code, os.strerror(-code))
                return
            yield mtype, payload


def dump_links(sock: socket.socket) -> list[LinkInfo]:
    """Every interface of the socket's namespace with its counters (one ``RTM_GETLINK`` dump)."""
    out: list[LinkInfo] = []
    body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)
    for mtype, payload in _dump(sock, RTM_GETLINK, body):
        if mtype != RTM_NEWLINK or len(payload) < 16:
            continue
        index, ifi_flags = struct.unpack_from("=iI", payload, 4)
        link = LinkInfo(index=index, name="", admin_up=bool(ifi_flags & IFF_UP))
        for kind, value in _attrs(payload, 16, len(payload)):
            if kind == IFLA_IFNAME:
                link.name = value.split(b"\0", 1)[0].decode("ascii", "replace")
            elif kind == IFLA_MTU and len(value) >= 4:
                link.mtu = struct.unpack_from("=I", value)[0]
            elif kind == IFLA_OPERSTATE and value:
                link.oper_up = value[0] == IF_OPER_UP
            elif kind == IFLA_CARRIER_CHANGES and len(value) >= 4:
                link.carrier_changes = struct.unpack_from("=I", value)[0]
            elif kind == IFLA_STATS64:
                n = min(len(value) // 8, len(_STATS64))
                link.stats = dict(zip(_STATS64, struct.unpack_from(f"={n}Q", value), strict=False))
        out.append(link)
    return out


def dump_qdiscs(sock: socket.socket) -> list[QdiscInfo]:
    """Every qdisc of the socket's namespace (one ``RTM_GETQDISC`` dump): bytes, packets, drops,
    overlimits, requeues, backlog, qlen, and ``ecn_mark`` where the qdisc keeps it (red: the
    ``marked`` field of ``tc_red_xstats``; fq_codel: ``ecn_mark`` of its qdisc xstats)."""
    out: list[QdiscInfo] = []
    body = struct.pack("=BxxxiIII", socket.AF_UNSPEC, 0, 0, 0, 0)
    for mtype, payload in _dump(sock, RTM_GETQDISC, body):
        if mtype != RTM_NEWQDISC or len(payload) < 20:
            continue
        _fam, ifindex, handle, parent, _info = struct.unpack_from("=BxxxiIII", payload)
        q = QdiscInfo(ifindex=ifindex, handle=handle, parent=parent, kind="")
        xstats = b""
        for kind, value in _attrs(payload, 20, len(payload)):
            if kind == TCA_KIND:
                q.kind = value.split(b"\0", 1)[0].decode("ascii", "replace")
            elif kind == TCA_XSTATS:
                xstats = value
            elif kind == TCA_STATS2:
                for sk, sv in _attrs(value, 0, len(value)):
                    if sk == TCA_STATS_BASIC and len(sv) >= 12:
                        q.stats["bytes"], q.stats["packets"] = struct.unpack_from("=QI", sv)
                    elif sk == TCA_STATS_QUEUE and len(sv) >= 20:
                        qlen, backlog, drops, requeues, overlimits = struct.unpack_from("=5I", sv)
                        q.stats.update(
                            qlen=qlen,
                            backlog=backlog,
                            drops=drops,
                            requeues=requeues,
                            overlimits=overlimits,
                        )
        if q.kind == "red" and len(xstats) >= 16:  # tc_red_xstats: early, pdrop, other, marked
            q.stats["ecn_mark"] = struct.unpack_from("=4I", xstats)[3]
        elif (
            q.kind == "fq_codel" and len(xstats) >= 28 and struct.unpack_from("=I", xstats)[0] == 0
        ):
            # tc_fq_codel_xstats: type (0 = qdisc stats), then tc_fq_codel_qd_stats: maxpacket,
            # drop_overlimit, ecn_mark, ...
            q.stats["ecn_mark"] = struct.unpack_from("=I", xstats, 12)[0]
        out.append(q)
    return out


def parse_snmp(text: str) -> dict[str, int]:
    """``/proc/net/snmp`` or ``/proc/net/netstat`` (pairs of ``Proto: names`` / ``Proto:
    values`` lines) → ``{"Tcp:RetransSegs": n, "TcpExt:TCPTimeouts": n, ...}``.

    >>> parse_snmp("Tcp: RtoMin OutSegs RetransSegs\\nTcp: 200 10 2\\n")["Tcp:RetransSegs"]
    2
    """
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in zip(lines[::2], lines[1::2], strict=False):
        proto, _, names = head.partition(":")
        proto2, _, values = vals.partition(":")
        if proto != proto2:
            continue
        for name, value in zip(names.split(), values.split(), strict=False):
            try:
                out[f"{proto}:{name}"] = int(value)
            except ValueError:
                continue
    return out


@dataclass
class NetnsHandles:
    """The sockets and procfs files of one network namespace (see the module docstring)."""

    netns: str | None
    ioctl_sock: socket.socket
    rtnl: socket.socket
    proc_fds: dict[str, int]
    ethtool: EthtoolReader = field(init=False)
    _rtnl_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.ethtool = EthtoolReader(self.ioctl_sock)

    @classmethod
    def open(cls, netns: str | None) -> NetnsHandles:
        def opener() -> NetnsHandles:
            ioctl_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            rtnl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            rtnl.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            rtnl.bind((0, 0))
            fds: dict[str, int] = {}
            for name in ("snmp", "netstat"):
                try:
                    fds[name] = os.open(f"/proc/thread-self/net/{name}", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
            return cls(netns, ioctl_sock, rtnl, fds)

        return in_netns(netns, opener)

    def links(self) -> list[LinkInfo]:
        with self._rtnl_lock:
            return dump_links(self.rtnl)

    def qdiscs(self) -> list[QdiscInfo]:
        with self._rtnl_lock:
            return dump_qdiscs(self.rtnl)

    def netstat(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for fd in self.proc_fds.values():
            chunks = []
            offset = 0
            while True:
                chunk = os.pread(fd, 65536, offset)
                if not chunk:
                    break
                chunks.append(chunk)
                offset += len(chunk)
            out.update(parse_snmp(b"".join(chunks).decode("ascii", "replace")))
        return out

    def close(self) -> None:
        self.ioctl_sock.close()
        self.rtnl.close()
        for fd in self.proc_fds.values():
            os.close(fd)
        self.proc_fds.clear()
