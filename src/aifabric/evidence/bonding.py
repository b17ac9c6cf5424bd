"""Linux bonding state: ``cat /proc/net/bonding/BOND`` → one :class:`BondInfo` and one
:class:`BondSlave` per member.

RoCE LAG (``mlx5_bond_0``: one RDMA device over a bond of the NIC's two ports) and dual-homed
hosts run NCCL over a Linux bond; the bond's own file is what shows that a member is down, that
LACP never found a partner, or that members ended in different aggregators.

Format (kernel ``drivers/net/bonding/bond_procfs.c``, ``bond_info_show_master`` and
``bond_info_show_slave``, v6.8; older kernels print a subset, 2.4 kernels the same labels under
``/proc/net/BOND/info``): ``Ethernet Channel Bonding Driver: vX``, then ``Bonding Mode: <name>``
(``load balancing (round-robin)``, ``fault-tolerance (active-backup)``, ``IEEE 802.3ad Dynamic
link aggregation``...), ``Transmit Hash Policy: <name> (<n>)``, ``MII Status: up|down``, timers;
``Currently Active Slave: X`` (active-backup); an ``802.3ad info`` section (``LACP rate``,
``Active Aggregator Info:`` with ``Aggregator ID``, ``Number of ports``, ``Partner Mac
Address``); then per member ``Slave Interface: X`` followed by ``MII Status``, ``Speed: N Mbps``
(``Unknown`` when down), ``Duplex``, ``Link Failure Count``, ``Permanent HW addr``, ``Aggregator
ID`` (802.3ad) and LACP churn counters. Every field line is ``Label: value``; unknown labels are
kept in ``fields``.

Records: :class:`BondInfo` (``bond`` from the command line when shown, ``mode``,
``xmit_hash_policy``, ``mii_status``, ``active_slave``, ``lacp_rate``, ``active_aggregator``,
``aggregator_ports``, ``partner_mac``) and :class:`BondSlave` (``interface``, ``mii_status``,
``speed_mbps``, ``duplex``, ``link_failures``, ``aggregator_id``). A line that is no ``Label:
value`` is a warning; the rest is still read.

Detection: ``Bonding Mode:`` with ``MII Status:`` scores 0.95, and so do ``grep`` lines that
carry the file name (``/proc/net/bonding/bond0:Bonding Mode: ...``): each file's lines then
belong to that bond.

Sources: https://github.com/torvalds/linux/blob/v6.8/drivers/net/bonding/bond_procfs.c;
https://www.kernel.org/doc/Documentation/networking/bonding.rst ("Querying Bonding
Configuration"); the real captures under ``tests/fixtures/evidence/proc-bonding/``. Seed refs:
S20 (a link down), S6 (hashing decides which member a flow takes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["BondInfo", "BondSlave", "parse_proc_bonding"]


@dataclass(slots=True, kw_only=True)
class BondInfo(Record):
    """The bond's own part of the file (everything before the first ``Slave Interface``)."""

    record_type: ClassVar[str] = "bond_info"

    bond: str | None = None
    """``bond0``, from ``cat /proc/net/bonding/bond0`` when the paste shows the command."""
    mode: str | None = None
    xmit_hash_policy: str | None = None
    """``layer2``, ``layer2+3``, ``layer3+4``, ``encap3+4``... (the number dropped)."""
    mii_status: str | None = None
    active_slave: str | None = None
    lacp_rate: str | None = None
    active_aggregator: int | None = None
    aggregator_ports: int | None = None
    partner_mac: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def is_8023ad(self) -> bool:
        return self.mode is not None and "802.3ad" in self.mode


@dataclass(slots=True, kw_only=True)
class BondSlave(Record):
    """One ``Slave Interface:`` block."""

    record_type: ClassVar[str] = "bond_slave"

    bond: str | None = None
    interface: str
    mii_status: str | None = None
    speed_mbps: int | None = None
    duplex: str | None = None
    link_failures: int | None = None
    aggregator_id: int | None = None
    fields: dict[str, str] = field(default_factory=dict)


_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_FIELD_RE = re.compile(r"^(?P<key>[A-Za-z0-9][^:]{0,60}):[ \t]*(?P<value>.*)$")
_CMD_RE = re.compile(r"/proc/net/(?:bonding/(?P<b1>[\w.\-]+)|(?P<b2>[\w.\-]+)/info)\b")
_SECTIONS = ("802.3ad info", "Active Aggregator Info:", "Slave Information:")
_PROMPT_RE = re.compile(r"^(?:\S*[$#]\s|\$$|#$)")
_BOND_KEYS = frozenset(
    {"Bonding Mode", "Transmit Hash Policy", "MII Status", "Currently Active Slave",
     "Primary Slave", "MII Polling Interval (ms)"}
)  # fmt: skip
"""Labels that open the bond's own part; another ``Label:`` before one of them is prose."""


def _int(raw: str) -> int | None:
    head = raw.split(maxsplit=1)[0] if raw.split() else ""
    return int(head) if head.isdecimal() and len(head) <= 12 else None


_GREP_PREFIX_RE = re.compile(r"^/proc/net/bonding/(?P<bond>[^\s:/]+):(?=[A-Z])")
"""``grep -H`` (or ``grep PATTERN /proc/net/bonding/bond*``, several files) puts the file name
before each line: ``/proc/net/bonding/bond0:Bonding Mode: IEEE 802.3ad ...``."""
_GREP_DETECT_RE = re.compile(
    r"(?m)^/proc/net/bonding/[^\s:/]+:(?:Bonding Mode|MII Status|Slave Interface|"
    r"Transmit Hash Policy):"
)


def _detect(text: str) -> float:
    if "Bonding Mode:" in text and "MII Status:" in text:
        return 0.95
    if "/proc/net/bonding/" in text and _GREP_DETECT_RE.search(text, 0, 200_000):
        return 0.95
    if "Slave Interface:" in text and "MII Status:" in text and (
        "Link Failure Count:" in text or "Permanent HW addr:" in text
    ):
        return 0.9  # a member's section alone, pasted without the bond's header
    return 0.0


@register(
    "proc-bonding",
    summary="cat /proc/net/bonding/BOND (Linux bonding: mode, hash policy, LACP, members' link)",
    detect=_detect,
    refs=("S20", "S6"),
)
def parse_proc_bonding(text: str) -> ParseResult:
    """Parse ``/proc/net/bonding/*`` files; never raises."""
    res = ParseResult("proc-bonding")
    bond_name: str | None = None
    info: BondInfo | None = None
    slave: BondSlave | None = None
    in_aggregator = False
    for no, raw in enumerate(text.splitlines(), 1):
        line = (_QUOTE_RE.sub("", raw) if raw[:1] == ">" else raw).strip()
        if not line or line.startswith("```"):
            continue
        grep = _GREP_PREFIX_RE.match(line) if line[:1] == "/" else None
        if grep is not None:
            if grep.group("bond") != bond_name:  # the next file of a grep over several bonds
                bond_name = grep.group("bond")
                info, slave, in_aggregator = None, None, False
            line = line[grep.end() :]
        cmd = _CMD_RE.search(line)
        if cmd is not None and (_PROMPT_RE.match(line) or line.startswith(("cat ", "sudo "))):
            bond_name = cmd.group("b1") or cmd.group("b2")
            info, slave, in_aggregator = None, None, False
            continue
        if line in _SECTIONS:
            in_aggregator = line == "Active Aggregator Info:"
            continue
        m = _FIELD_RE.match(line)
        if m is None:
            res.warn(no, "not a 'Label: value' line of /proc/net/bonding", line)
            continue
        key, value = m.group("key").strip(), m.group("value").strip()
        if key == "Ethernet Channel Bonding Driver":
            info, slave, in_aggregator = None, None, False
            continue
        if key == "Slave Interface":
            slave = BondSlave(line=no, bond=bond_name, interface=value)
            res.records.append(slave)
            in_aggregator = False
            continue
        if slave is not None:
            slave.end_line = no
            if key == "MII Status":
                slave.mii_status = value
            elif key == "Speed":
                slave.speed_mbps = _int(value)
            elif key == "Duplex":
                slave.duplex = value
            elif key == "Link Failure Count":
                slave.link_failures = _int(value)
            elif key == "Aggregator ID":
                slave.aggregator_id = _int(value)
            else:
                slave.fields[key] = value
            continue
        if info is None:
            if key not in _BOND_KEYS:
                res.warn(no, "not a /proc/net/bonding line", line)
                continue
            info = BondInfo(line=no, bond=bond_name)
            res.records.append(info)
        info.end_line = no
        if key == "Bonding Mode":
            info.mode = value
        elif key == "Transmit Hash Policy":
            info.xmit_hash_policy = value.split(" (", 1)[0]
        elif key == "MII Status":
            info.mii_status = value
        elif key == "Currently Active Slave":
            info.active_slave = value
        elif key == "LACP rate":
            info.lacp_rate = value
        elif in_aggregator and key == "Aggregator ID":
            info.active_aggregator = _int(value)
        elif in_aggregator and key == "Number of ports":
            info.aggregator_ports = _int(value)
        elif in_aggregator and key == "Partner Mac Address":
            info.partner_mac = value.lower()
        else:
            info.fields[key] = value
    return res
