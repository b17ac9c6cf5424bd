"""InfiniBand port counters read through the subnet's management datagrams (infiniband-diags):
``perfquery`` and ``ibqueryerrors`` → :class:`~aifabric.evidence.rdma_counters.RdmaCounters`
records with the kernel's sysfs counter names, so everything that reads an RDMA port's counters
(``/sys/class/infiniband/DEV/ports/N/counters``) reads these the same way.

* ``perfquery`` (``perfquery [-x] [-a] [LID|GUID] [PORT]``): one block per query, a header
  ``# Port counters: Lid 1 port 1 (CapMask: 0x5A00)`` (``# Port extended counters: ...`` with
  ``-x``), then one ``Name:......value`` line per PortCounters / PortCountersExtended field, the
  name padded with dots to a fixed column (libibmad ``mad_dump_val``).
* ``ibqueryerrors``: ``Errors for 0xGUID "node description"`` per node with errors, then one
  line per port, ``GUID 0x... port N: [SymbolErrorCounter == 65535] [LinkDownedCounter ==
  3]`` (only the counters above the threshold; ``--details`` adds ``(...)`` breakdowns, kept
  out), and the closing ``## Summary: N nodes checked, M bad nodes found`` / ``##  P ports
  checked, Q ports have errors beyond threshold`` (:class:`IbErrorsSummary`).

Field names map to the sysfs names of ``drivers/infiniband/core/sysfs.c`` (``SymbolErrorCounter``
→ ``symbol_error``, ``LinkDownedCounter`` → ``link_downed``, ``PortXmitWait`` →
``port_xmit_wait``...); a name with no sysfs twin keeps its own spelling. Sources: rdma-core
``infiniband-diags/perfquery.c``, ``infiniband-diags/ibqueryerrors.c``, ``libibmad/fields.c``
and ``libibmad/dump.c`` (https://github.com/linux-rdma/rdma-core), the InfiniBand Architecture
Specification's PortCounters attribute (the meaning of each counter), and the captures under
``tests/fixtures/evidence/{perfquery,ibqueryerrors}/``.

Seed refs: S16/S20 (link and PHY errors of every port, link flaps), S22 (discards and waits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.rdma_counters import RdmaCounters, classify_counters
from aifabric.evidence.registry import register

__all__ = ["IB_SYSFS_NAMES", "IbErrorsSummary", "parse_ibqueryerrors", "parse_perfquery"]

IB_SYSFS_NAMES: dict[str, str] = {
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
    "PortXmitWait": "port_xmit_wait",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
    # the names libibmad printed before 2010 (rdma-core 823411b45)
    "SymbolErrors": "symbol_error",
    "LinkRecovers": "link_error_recovery",
    "LinkDowned": "link_downed",
    "RcvErrors": "port_rcv_errors",
    "RcvRemotePhysErrors": "port_rcv_remote_physical_errors",
    "RcvSwRelayErrors": "port_rcv_switch_relay_errors",
    "XmtDiscards": "port_xmit_discards",
    "XmtConstraintErrors": "port_xmit_constraint_errors",
    "RcvConstraintErrors": "port_rcv_constraint_errors",
    "LinkIntegrityErrors": "local_link_integrity_errors",
    "ExcBufOverrunErrors": "excessive_buffer_overrun_errors",
    "XmtData": "port_xmit_data",
    "RcvData": "port_rcv_data",
    "XmtPkts": "port_xmit_packets",
    "RcvPkts": "port_rcv_packets",
    "XmtWait": "port_xmit_wait",
}
"""PortCounters / PortCountersExtended field names (libibmad ``fields.c``, current and pre-2010)
→ kernel sysfs counter names."""

_SKIP_FIELDS = frozenset({"PortSelect", "CounterSelect", "CounterSelect2"})
"""Fields of the query, not counters."""


def _sysfs(name: str) -> str:
    return IB_SYSFS_NAMES.get(name, name)


# -- perfquery ------------------------------------------------------------------------------------

_PQ_HEAD_RE = re.compile(
    r"^(?:#\s*)?Port (?P<ext>extended )?counters: Lid (?P<lid>\d+) port (?P<port>\d+)"
    r"(?: \(CapMask: (?P<cap>0x[0-9a-fA-F]+))?"
)
"""``# Port counters: Lid 1 port 1 (CapMask: 0x5A00)``; before 2011 without CapMask (and, in
some pastes, without the ``#``); ``-x`` adds ``CapMask2``."""
_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_PQ_FIELD_RE = re.compile(r"^(?P<name>[A-Za-z][\w]*):\.+(?P<val>\S+)\s*$")
_PQ_DETECT_RE = re.compile(r"(?m)^[ \t>]*+(?:#\s*)?Port (?:extended )?counters: Lid \d+ port \d+")


def _detect_perfquery(text: str) -> float:
    if "counters: Lid " in text and _PQ_DETECT_RE.search(text):
        return 0.95
    if any(m in text for m in ("SymbolErrorCounter:....", "PortXmitData:....", "XmtData:....")):
        return 0.9  # the dotted fields without their header (an excerpt)
    return 0.0


def _value(raw: str) -> int | None:
    if raw.isdecimal():
        return int(raw)
    if raw.lower().startswith("0x"):
        try:
            return int(raw, 16)
        except ValueError:
            return None
    return None


@register(
    "perfquery",
    summary="perfquery [-x] [LID|GUID] [PORT] (infiniband-diags: IB port counters)",
    detect=_detect_perfquery,
    refs=("S16", "S20", "S22"),
)
def parse_perfquery(text: str) -> ParseResult:
    """``perfquery`` blocks → one :class:`RdmaCounters` per block (``source`` ``perfquery`` or
    ``perfquery-extended``; the LID in ``attributes``); never raises."""
    res = ParseResult("perfquery")
    cur: RdmaCounters | None = None

    def close() -> None:
        nonlocal cur
        if cur is not None and cur.counters:
            classify_counters(cur)
            cur.end_line = max(cur.counter_lines.values())
            res.records.append(cur)
        cur = None

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _QUOTE_RE.sub("", raw).strip() if raw[:1] == ">" else raw.strip()
        if not line:
            continue
        head = _PQ_HEAD_RE.match(line)
        if head is not None:
            close()
            cur = RdmaCounters(
                line=lineno,
                device=f"LID {head.group('lid')}",
                port=int(head.group("port")),
                source="perfquery-extended" if head.group("ext") else "perfquery",
            )
            cur.attributes["lid"] = head.group("lid")
            if head.group("cap"):
                cur.attributes["cap_mask"] = head.group("cap")
            continue
        fm = _PQ_FIELD_RE.match(line)
        if fm is None:
            if not line.startswith(("#", "$", "[")) and "perfquery" not in line:
                res.warn(lineno, "expected a 'Name:....value' counter line", raw)
            continue
        name = fm.group("name")
        if cur is None:  # fields without a header (an excerpt of the block)
            cur = RdmaCounters(line=lineno, device=None, port=None, source="perfquery")
        if name in _SKIP_FIELDS:
            cur.attributes[name] = fm.group("val")
            continue
        value = _value(fm.group("val"))
        if value is None:
            res.warn(lineno, f"expected a number for {name}", raw)
            continue
        key = _sysfs(name)
        if key in cur.counters:  # the same field again: the next block of an excerpt
            close()
            cur = RdmaCounters(line=lineno, device=None, port=None, source="perfquery")
        cur.counters[key] = value
        cur.counter_lines[key] = lineno
    close()
    return res


# -- ibqueryerrors --------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class IbErrorsSummary(Record):
    """``ibqueryerrors``' closing summary: how much of the fabric was checked, how much is bad."""

    record_type: ClassVar[str] = "ib_errors_summary"

    nodes_checked: int | None = None
    bad_nodes: int | None = None
    ports_checked: int | None = None
    bad_ports: int | None = None


_IQE_NODE_RE = re.compile(
    r'^Errors for (?P<guid>0x[0-9a-fA-F]++)?[ \t]*+(?:"(?P<desc>[^"]*+)")?[ \t]*+$'
)
"""``Errors for 0x<node guid> "<description>"`` (a switch) or ``Errors for "<description>"`` (a
CA: its ports' GUIDs follow)."""
_IQE_PORT_RE = re.compile(r"^GUID (?P<guid>0x[0-9a-fA-F]+) port (?P<port>\d+|ALL):(?P<rest>.*)$")
_IQE_COUNTER_RE = re.compile(r"\[(?P<name>\w+) == (?P<val>\d+)(?: \([^)]*\))?\]")
"""`` [Name == N]``, or `` [Name == N (4.000G)]`` from the 64-bit extended counters."""
_IQE_NODES_RE = re.compile(r"^##\s*Summary:\s*(\d+) nodes checked,\s*(\d+) bad nodes found")
_IQE_PORTS_RE = re.compile(r"^##\s*(\d+) ports checked,\s*(\d+) ports have errors beyond threshold")


def _detect_ibqueryerrors(text: str) -> float:
    if "## Summary:" in text and "nodes checked" in text:
        return 0.95
    if ("Errors for 0x" in text or 'Errors for "' in text) and " port " in text and " == " in text:
        return 0.9
    if "GUID 0x" in text and " == " in text:
        # port lines without their "Errors for" node line (a grep of a saved report)
        ports = sum(
            1 for ln in text.splitlines()[:400] if _IQE_PORT_RE.match(ln.strip()) and "[" in ln
        )
        if ports >= 2:
            return 0.85
    return 0.0


@register(
    "ibqueryerrors",
    summary="ibqueryerrors (infiniband-diags: IB ports with error counters beyond threshold)",
    detect=_detect_ibqueryerrors,
    refs=("S16", "S20", "S22"),
)
def parse_ibqueryerrors(text: str) -> ParseResult:
    """``ibqueryerrors`` → one :class:`RdmaCounters` per listed port (``source``
    ``ibqueryerrors``, only the counters the tool printed: those beyond its threshold) and the
    :class:`IbErrorsSummary`; never raises."""
    res = ParseResult("ibqueryerrors")
    node: str | None = None
    summary: IbErrorsSummary | None = None
    last: RdmaCounters | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _QUOTE_RE.sub("", raw).strip() if raw[:1] == ">" else raw.strip()
        if not line:
            continue
        nm = _IQE_NODE_RE.match(line)
        if nm is not None and (nm.group("guid") or nm.group("desc")):
            node = nm.group("desc") or nm.group("guid")
            continue
        pm = _IQE_PORT_RE.match(line)
        if pm is not None:
            if pm.group("port") == "ALL":
                continue  # a switch's sum over its ports, which follow one by one
            found = {
                _sysfs(cm.group("name")): int(cm.group("val"))
                for cm in _IQE_COUNTER_RE.finditer(pm.group("rest"))
            }
            if not found:
                res.warn(lineno, "expected '[Counter == value]' after the port", raw)
                continue
            port = int(pm.group("port"))
            if last is not None and last.attributes.get("guid") == pm.group("guid") and (
                last.port == port
            ):
                rec = last  # the same port on a second line (the format before Nov 2009)
            else:
                rec = RdmaCounters(
                    line=lineno, device=node or pm.group("guid"), port=port, source="ibqueryerrors"
                )
                rec.attributes["guid"] = pm.group("guid")
                res.records.append(rec)
            for key, value in found.items():
                rec.counters[key] = value
                rec.counter_lines[key] = lineno
            rec.end_line = lineno if lineno != rec.line else None
            classify_counters(rec)
            last = rec
            continue
        sm = _IQE_NODES_RE.match(line)
        if sm is not None:
            summary = IbErrorsSummary(
                line=lineno, nodes_checked=int(sm.group(1)), bad_nodes=int(sm.group(2))
            )
            res.records.append(summary)
            continue
        sp = _IQE_PORTS_RE.match(line)
        if sp is not None:
            if summary is None:
                summary = IbErrorsSummary(line=lineno)
                res.records.append(summary)
            summary.ports_checked, summary.bad_ports = int(sp.group(1)), int(sp.group(2))
            summary.end_line = lineno
            continue
        if line.startswith(("##", "#", "$", "Suppressing", "ibwarn", "Link info:")) or (
            "ibqueryerrors" in line
        ):
            continue
        res.warn(lineno, "expected an 'Errors for', 'GUID ... port N:' or summary line", raw)
    return res
