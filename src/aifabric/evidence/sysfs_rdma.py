"""RDMA port state and GID table from sysfs ``path:value`` listings (``grep -r -H .``).

What a probe bundle captures when ``ibv_devinfo``/``show_gids`` are not installed: ``grep -r -H
. /sys/class/infiniband/<dev>/ports`` (or ``grep . /sys/class/infiniband/*/ports/*/...``, or
``grep -r . /sys/class/infiniband/``), one ``path:value`` line per readable file. Files that
fail to read (unused GID slots' ``gid_attrs``, ``rate`` of a down port) make grep print an error
on stderr, which the capture does not hold.

Formats (kernel ``drivers/infiniband/core/sysfs.c``, v6.6, and
``Documentation/ABI/stable/sysfs-class-infiniband``), under ``ports/<N>/``:

* ``state``: ``"%d: %s"`` (``4: ACTIVE``; names DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER);
  ``phys_state``: ``"%u: %s"`` (``5: LinkUp``; Sleep, Polling, Disabled,
  PortConfigurationTraining, LinkErrorRecovery, Phy Test); ``link_layer``: ``InfiniBand`` /
  ``Ethernet``; ``rate``: ``"%d%s Gb/sec (%dX%s)"`` (``100 Gb/sec (4X EDR)``, ``2.5 Gb/sec
  (1X)``); ``lid`` and ``sm_lid``: ``"0x%x"``; ``cap_mask``: ``"0x%08x"``; ``sm_sl``,
  ``lid_mask_count``: ``"%u"``.
* ``gids/<i>``: ``"%pI6"``, eight groups of four hex digits, all zero for an unused slot;
  ``gid_attrs/types/<i>``: ``IB/RoCE v1`` or ``RoCE v2``; ``gid_attrs/ndevs/<i>``: the netdev
  name; ``pkeys/<i>``: ``"0x%04x"``.
* ``counters/*`` and ``hw_counters/*`` (also device-level ``<dev>/hw_counters/*``): decimal
  counters, handed to :func:`aifabric.evidence.rdma_counters.parse_rdma_counters` and returned
  as its :class:`~aifabric.evidence.rdma_counters.RdmaCounters` records.

Records: one :class:`SysfsRdmaPort` per device port that has any of state, phys_state,
link_layer, rate, lid; one :class:`SysfsGid` per non-zero GID slot (type, netdev and the IPv4
address of an IPv4-mapped GID joined by index, :func:`aifabric.evidence.infiniband.gid_ipv4`);
the counter records. All in input order of their first line. Other files under the device
(``node_guid``, ``fw_ver``, ``device/...``) and the command line are skipped; a line cut before
its value, a value not in the kernel's format, or text that is no sysfs line is a warning, and
the rest is still parsed. A GID whose ``gids/<i>`` line is absent (``grep 'RoCE v2'
.../types/*`` alone) gives no record: the address is the record.

Detection: a ``/infiniband/.../ports/N/`` path with ``gids/``, ``gid_attrs/``, ``state:``,
``phys_state:``, ``link_layer:``, ``rate:`` or ``lid:`` scores 0.95 (a counters-only listing is
left to ``rdma-hw-counters``, 0.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.infiniband import gid_ipv4
from aifabric.evidence.rdma_counters import parse_rdma_counters
from aifabric.evidence.registry import register

__all__ = ["SysfsGid", "SysfsRdmaDevices", "SysfsRdmaPort", "parse_sysfs_infiniband"]


@dataclass(slots=True, kw_only=True)
class SysfsRdmaPort(Record):
    """One RDMA device port's state from ``/sys/class/infiniband/<dev>/ports/<port>/``."""

    record_type: ClassVar[str] = "sysfs_rdma_port"

    device: str
    port: int
    state: str | None = None
    """Logical state name: ``ACTIVE``, ``DOWN``, ``INIT``, ``ARMED``, ``ACTIVE_DEFER``."""
    phys_state: str | None = None
    """Physical state name: ``LinkUp``, ``Disabled``, ``Polling``..."""
    link_layer: str | None = None
    """``InfiniBand`` or ``Ethernet`` (RoCE)."""
    rate_gbps: float | None = None
    """Active width × speed in Gb/s (``100 Gb/sec (4X EDR)`` → 100.0)."""
    lid: int | None = None
    """Port LID (0 on RoCE ports)."""
    pkeys: dict[int, int] = field(default_factory=dict)
    """P_Key table slot → P_Key (``pkeys/<i>``; 0xffff the full-member default partition)."""


@dataclass(slots=True, kw_only=True)
class SysfsGid(Record):
    """One populated GID table slot with its sysfs attributes."""

    record_type: ClassVar[str] = "sysfs_gid"

    device: str
    port: int
    index: int
    gid: str
    """As printed (``0000:0000:0000:0000:0000:ffff:0a00:0001``)."""
    gid_type: str | None
    """``RoCE v2`` or ``IB/RoCE v1``; ``None`` when the capture lacks ``gid_attrs/types``."""
    ndev: str | None
    """Netdev the GID is derived from (RoCE); ``None`` when absent (InfiniBand ports)."""
    ipv4: str | None
    """IPv4 address of an IPv4-mapped GID (``10.0.0.1``), else ``None``."""


_PORT_REL_RE = re.compile(r"^([^/\s]+)/ports/([^/\s]+)/([^/\s]+)(?:/([^/\s]+)(?:/([^/\s]+))?)?$")
_STATE_RE = re.compile(r"^\d+: ([A-Z][A-Z_]*)$")
_PHYS_RE = re.compile(r"^\d+: (\S(?:.*\S)?)$")
_RATE_RE = re.compile(r"^(\d+(?:\.\d+)?) Gb/sec \(\d+X(?: [A-Za-z0-9]+)?\)$")
_HEX_RE = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_GID_RE = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
_NDEV_RE = re.compile(r"^[^\s/]{1,15}$")
_WORD_RE = re.compile(r"^[A-Za-z]+$")
_COMMAND_RE = re.compile(r"\b(?:grep|cat|ls|find|for|echo|head|tail|tree)\b|[$#]\s")
_DETECT_RE = re.compile(
    r"/infiniband/[^/\s]+/ports/\d+/"
    r"(?:gids/\d+:|gid_attrs/|state:|phys_state:|link_layer:|rate:|lid:)"
)
_CAT_RE = re.compile(r"\bcat[ \t]+(?P<path>\S*/infiniband/(?P<rel>[^\s*?\[\]]+?))[ \t]*$")
"""``cat /sys/class/infiniband/DEV/ports/N/FILE`` (one file, no glob): its output on the next
line is that file's value, read as the ``path:value`` line ``grep -H`` would have printed."""
_CAT_VALUE_RE = re.compile(r"^[\w.:/()]+(?: [\w.:/()]+){0,3}$")
"""What one sysfs port file holds (``4: ACTIVE``, ``0x8004``, ``RoCE v2``, ``100 Gb/sec (4X
EDR)``, a GID): anything else after a ``cat`` is not its value."""
_CAT_DETECT_RE = re.compile(
    r"(?m)\bcat[ \t]+\S*/infiniband/[^/\s]+/ports/\d+/"
    r"(?:gids/\d+|gid_attrs/\S+|state|phys_state|link_layer|rate|lid|pkeys/\d+)[ \t]*$"
)
_GID_TYPES = frozenset({"RoCE v2", "IB/RoCE v1"})
_PORT_ATTRS = frozenset({"state", "phys_state", "link_layer", "rate", "lid"})
_OTHER_PORT_FILES = frozenset({"sm_lid", "sm_sl", "cap_mask", "lid_mask_count", "has_smi"})
_COUNTER_DIRS = frozenset({"counters", "hw_counters"})


def _detect(text: str) -> float:
    if "/infiniband" not in text:
        return 0.0
    if _DETECT_RE.search(text) or _CAT_DETECT_RE.search(text):
        return 0.95
    return 0.9 if _LS_RE.search(text) else 0.0


_LS_RE = re.compile(r"(?m)^[^\n]*\bls(?:\s+-[A-Za-z1]+)*\s+/sys/class/infiniband/?\s*$")
"""``ls [-l] /sys/class/infiniband``: the RDMA devices the kernel registered, one per name."""
_DEV_NAME_RE = re.compile(r"^[A-Za-z][\w.\-]*$")
_LS_LONG_RE = re.compile(r"/(?P<bdf>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])/infiniband/")


@dataclass(slots=True, kw_only=True)
class SysfsRdmaDevices(Record):
    """The RDMA devices of ``ls [-l] /sys/class/infiniband`` (empty: none registered)."""

    record_type: ClassVar[str] = "sysfs_rdma_devices"

    devices: list[str] = field(default_factory=list)
    pci: dict[str, str] = field(default_factory=dict)
    """Device → PCI address, from ``ls -l`` symlinks (``mlx5_0 -> ../../devices/.../0000:17:00.0/
    infiniband/mlx5_0``)."""


def _ls_listing(lines: list[str], start: int, res: ParseResult) -> int:
    """Read the listing after the ``ls`` command at ``start`` (0-based); the next line index."""
    rec = SysfsRdmaDevices(line=start + 1)
    i = start + 1
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("total "):
            i += 1
            continue
        if " -> " not in line and (_COMMAND_RE.search(line) or ":" in line):
            break  # the next command, or a sysfs path:value line
        if " -> " in line:  # ls -l: "lrwxrwxrwx 1 root root 0 Jan 1 00:00 mlx5_0 -> ../../..."
            name = line.split(" -> ", 1)[0].split()[-1]
            rec.devices.append(name)
            m = _LS_LONG_RE.search(" " + line)
            if m is not None:
                rec.pci[name] = m.group("bdf")
        else:
            names = line.split()
            if not all(_DEV_NAME_RE.match(n) for n in names):
                res.warn(i + 1, "expected RDMA device names in the ls listing", line)
                i += 1
                continue
            rec.devices.extend(names)
        rec.end_line = i + 1
        i += 1
    res.records.append(rec)
    return i


class _Gid:
    __slots__ = ("first", "gid", "gid_type", "last", "ndev")

    def __init__(self, line: int) -> None:
        self.first = self.last = line
        self.gid: str | None = None
        self.gid_type: str | None = None
        self.ndev: str | None = None


def _port_value(rec: SysfsRdmaPort, attr: str, value: str) -> bool:
    """Store one port attribute; False when the value is not in the kernel's format."""
    if attr == "state":
        m = _STATE_RE.match(value)
        if m is None:
            return False
        rec.state = m.group(1)
    elif attr == "phys_state":
        m = _PHYS_RE.match(value)
        if m is None:
            return False
        rec.phys_state = m.group(1)
    elif attr == "link_layer":
        if not _WORD_RE.match(value):
            return False
        rec.link_layer = value
    elif attr == "rate":
        m = _RATE_RE.match(value)
        if m is None:
            return False
        rec.rate_gbps = float(m.group(1))
    else:  # lid
        if not _HEX_RE.match(value):
            return False
        rec.lid = int(value, 16)
    return True


class _State:
    __slots__ = ("counter_lines", "gids", "ports", "res")

    def __init__(self, res: ParseResult) -> None:
        self.res = res
        self.ports: dict[tuple[str, int], SysfsRdmaPort] = {}
        self.gids: dict[tuple[str, int, int], _Gid] = {}
        self.counter_lines: list[tuple[int, str]] = []

    def _port(self, no: int, dev: str, port: int) -> SysfsRdmaPort:
        """The record of ``dev`` port ``port``, created at line ``no`` on its first line."""
        rec = self.ports.get((dev, port))
        if rec is None:
            rec = self.ports[(dev, port)] = SysfsRdmaPort(line=no, device=dev, port=port)
        return rec

    @staticmethod
    def _extend(rec: SysfsRdmaPort, no: int) -> None:
        if no > rec.line:
            rec.end_line = no

    def port_line(self, no: int, dev: str, port: int, attr: str, value: str, line: str) -> None:
        rec = self._port(no, dev, port)
        if not _port_value(rec, attr, value):
            self.res.warn(no, f"{attr} value not in the kernel's sysfs format", line)
            return
        self._extend(rec, no)

    def pkey_line(self, no: int, dev: str, port: int, index: int, pkey: int) -> None:
        rec = self._port(no, dev, port)
        rec.pkeys[index] = pkey
        self._extend(rec, no)

    def gid_line(
        self, no: int, key: tuple[str, int, int], what: str, value: str, line: str
    ) -> None:
        if what == "gids":
            ok = _GID_RE.match(value) is not None
        elif what == "types":
            ok = value in _GID_TYPES
        else:
            ok = _NDEV_RE.match(value) is not None
        if not ok:
            self.res.warn(no, f"GID {what} value not in the kernel's sysfs format", line)
            return
        entry = self.gids.get(key)
        if entry is None:
            entry = self.gids[key] = _Gid(no)
        entry.last = max(entry.last, no)
        if what == "gids":
            entry.gid = value
        elif what == "types":
            entry.gid_type = value
        else:
            entry.ndev = value

    def records(self) -> list[Record]:
        out: list[Record] = [r for r in self.ports.values() if _any_attr(r)]
        for (dev, port, index), e in self.gids.items():
            if e.gid is None or not e.gid.replace(":", "").strip("0"):
                continue  # an unused slot (all zero) or a type/netdev without its GID
            out.append(
                SysfsGid(
                    line=e.first,
                    end_line=e.last if e.last > e.first else None,
                    device=dev,
                    port=port,
                    index=index,
                    gid=e.gid,
                    gid_type=e.gid_type,
                    ndev=e.ndev,
                    ipv4=gid_ipv4(e.gid),
                )
            )
        out.extend(self._counters())
        out.sort(key=lambda r: r.line)
        return out

    def _counters(self) -> list[Record]:
        """The counter lines parsed by the rdma-hw-counters parser, line numbers mapped back."""
        if not self.counter_lines:
            return []
        numbers = [no for no, _ in self.counter_lines]
        sub = parse_rdma_counters("\n".join(text for _, text in self.counter_lines))

        def orig(n: int) -> int:
            return numbers[n - 1] if 0 < n <= len(numbers) else n

        for w in sub.warnings:
            self.res.warn(orig(w.line) if w.line is not None else None, w.message, w.text)
        for rec in sub.records:
            rec.line = orig(rec.line)
            if rec.end_line is not None:
                rec.end_line = orig(rec.end_line)
            counter_lines = getattr(rec, "counter_lines", None)
            if isinstance(counter_lines, dict):
                for name, n in counter_lines.items():
                    counter_lines[name] = orig(n)
        return sub.records


def _any_attr(rec: SysfsRdmaPort) -> bool:
    return bool(rec.pkeys) or any(
        v is not None for v in (rec.state, rec.phys_state, rec.link_layer, rec.rate_gbps, rec.lid)
    )


def _index(raw: str | None) -> int | None:
    return int(raw) if raw is not None and raw.isdecimal() and len(raw) <= 6 else None


def _on_path(st: _State, no: int, line: str, rel: str, value: str | None) -> None:
    """One ``<dev>/...:value`` line (``rel`` is the path after ``/infiniband/``)."""
    m = _PORT_REL_RE.match(rel)
    if m is None:
        parts = rel.split("/")
        if len(parts) >= 3 and parts[1] == "hw_counters" and value is not None:
            st.counter_lines.append((no, line))  # device-level hw_counters
        elif value is None:
            st.res.warn(no, "sysfs path without a value (line cut?)", line)
        return  # another file of the device (node_guid, fw_ver, device/...): not ours
    dev, port_s, top, sub, leaf = m.groups()
    port = _index(port_s)
    if port is None:
        st.res.warn(no, "port directory is not a number", line)
        return
    if top in _COUNTER_DIRS and sub is not None and leaf is None:
        if value is None:
            st.res.warn(no, "sysfs path without a value (line cut?)", line)
        else:
            st.counter_lines.append((no, line))
        return
    if value is None:
        st.res.warn(no, "sysfs path without a value (line cut?)", line)
        return
    if sub is None and top in _PORT_ATTRS:
        st.port_line(no, dev, port, top, value, line)
    elif top == "gids" and sub is not None and leaf is None:
        idx = _index(sub)
        if idx is None:
            st.res.warn(no, "GID index is not a number", line)
        else:
            st.gid_line(no, (dev, port, idx), "gids", value, line)
    elif top == "gid_attrs" and sub in ("types", "ndevs") and leaf is not None:
        idx = _index(leaf)
        if idx is None:
            st.res.warn(no, "GID index is not a number", line)
        else:
            st.gid_line(no, (dev, port, idx), sub, value, line)
    elif top == "pkeys" and sub is not None and leaf is None:
        idx = _index(sub)
        if not _HEX_RE.match(value) or idx is None:
            st.res.warn(no, "pkey value not in the kernel's sysfs format", line)
        else:
            st.pkey_line(no, dev, port, idx, int(value, 16))
    elif sub is None and top in _OTHER_PORT_FILES:
        pass  # known port files that are no record field
    # other port files (driver extensions): skipped


@register(
    "sysfs-infiniband",
    summary="grep -r -H . /sys/class/infiniband/DEV/ports (state, rate, GIDs, counters)",
    detect=_detect,
    refs=("host.gid", "host.rdma-device", "S13", "S20", "S22"),
)
def parse_sysfs_infiniband(text: str) -> ParseResult:
    """Parse sysfs ``path:value`` listings of RDMA devices; never raises."""
    res = ParseResult("sysfs-infiniband")
    st = _State(res)
    lines = text.splitlines()
    skip_to = 0
    consumed: set[int] = set()
    """1-based lines read as the value of a ``cat`` above them."""
    for no, raw in enumerate(lines, 1):
        if no <= skip_to:
            continue
        line = raw.strip()
        if not line:
            continue
        if _LS_RE.match(line):
            skip_to = _ls_listing(lines, no - 1, res)
            continue
        if no in consumed:
            continue
        cat = _CAT_RE.search(line)
        if cat is not None:
            # the value is the next line that can be one (a stray line between is warned of
            # in its turn); another command or path line first means the file printed nothing
            for j in range(no, min(no + 3, len(lines))):
                printed = lines[j].strip()
                if not printed:
                    continue
                if "/infiniband/" in printed or _COMMAND_RE.search(printed):
                    break
                if _CAT_VALUE_RE.match(printed):
                    _on_path(st, j + 1, printed, cat.group("rel"), printed)
                    consumed.add(j + 1)
                    break
            continue
        at = line.find("/infiniband/")
        if at < 0:
            res.warn(no, "not a /sys/class/infiniband path:value line", line)
            continue
        if _COMMAND_RE.search(line, 0, at) or line.startswith("grep:"):
            continue  # the command line, or a grep error that went to the capture
        rest = line[at + len("/infiniband/") :]
        colon = rest.find(":")
        rel, value = (rest, None) if colon < 0 else (rest[:colon], rest[colon + 1 :].strip())
        if not rel or " " in rel:
            res.warn(no, "not a /sys/class/infiniband path:value line", line)
            continue
        _on_path(st, no, line, rel, value)
    res.records.extend(st.records())
    return res
