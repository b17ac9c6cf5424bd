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

A lab or a fleet that mixes NIC generations on purpose (a 100G storage port named like a 400G
compute port) trips these; the verdicts are warnings for that reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _ETHTOOL, _IP_LINK, _index, _item
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_info import EthtoolDriver, EthtoolLink
from aifabric.evidence.linux_net import IpLink

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item

__all__ = ["FLEET_MIN_HOSTS", "Odd", "fleet_odd"]

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


_ASPECTS: dict[str, Callable[[Record, Item], tuple[str, str] | None]] = {
    "mtu": _mtu,
    "speed": _speed,
    "driver": _driver,
    "firmware": _firmware,
}


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
        if iv is not None:
            seen.setdefault(iv[0], {}).setdefault(item.subject, (iv[1], item.record))
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
    ``firmware``) that differs from a clear majority of the bundle's hosts (module doc)."""
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
