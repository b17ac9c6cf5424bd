"""Derived evidence records from NIC, RDMA and switch counters (fabric versus host).

Each ``@deriver`` here turns counter records (``ethtool_stats``, ``rdma_counters``,
``pfcwd-stats``, ``queue-counters``) into one small record per interface, device or subject that
a rule in ``checks/rules/counters.yaml`` can test with plain operators:

* ``prio_traffic`` - where an interface's bytes go by priority, and whether any per-priority PFC
  pause frame was counted (S12: RoCE must ride the lossless priority);
* ``rdma_loss`` - the RoCE retransmission counters of one RDMA port (``local_ack_timeout_err``,
  ``packet_seq_err``, ``out_of_sequence``...; S20, S22);
* ``nic_rx_pressure`` - the NIC's own receive path overflowing: global pause sent and port
  discards (mlx5 ``tx_pause_ctrl_phy``, ``rx_discards_phy``, ``rx_out_of_buffer``; S22);
* ``phy_errors`` - CRC/FCS/symbol/PCS errors and link-down events (S20.5, S16);
* ``pfc_storm`` - PFC watchdog storms over a switch's ports (S20.3);
* ``lossless_drops`` - RoCE / lossless-queue drops of a switch port next to its PFC counters
  (NVUE ``qos roce counters``; SONiC ``show queue counters`` + ``show pfc counters``; S12);
* ``egress_balance`` - max/mean of the egress load of parallel ports (S20.2,
  docs/references.md#ecmp): switch unicast queue bytes, SONiC ``show interfaces
  counters`` TX_OK packets of the ports that are up, or the tx bytes of a host's NIC ports.

Counters only mean something when they grow: with two or more snapshots of the same interface
every record is computed from the growth (last minus first) and says ``basis: growth``; with one
snapshot it uses the totals since the counters were last cleared and says ``basis: snapshot``
(rules that accept it carry a lower confidence).

Snapshots of one interface are grouped per subject by name; a dump without a name (``ethtool -S
X | grep prio`` pasted twice with prose between) takes the name of the dump before it in the same
file when it prints the same counters (or a subset: a paste cut short).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.checks.diagnose.engine import Evidence, Item, deriver, weight
from aifabric.evidence.base import Record
from aifabric.perf.ecmp import ecmp_expected_max

__all__ = [
    "IB_PHY_COUNTERS",
    "UNNAMED",
    "EgressBalance",
    "LosslessDrops",
    "NicRxPressure",
    "PfcStorm",
    "PhyErrors",
    "PrioTraffic",
    "RdmaLoss",
    "balance",
    "growth",
    "is_phy_error",
    "prio_bytes",
]

# -- helpers (pure, unit-tested) --------------------------------------------------------------


def growth(first: Mapping[str, Any], last: Mapping[str, Any]) -> dict[str, int]:
    """Per-counter growth ``last - first`` for integer counters in both (a reset, i.e. a counter
    that went down, is left out)."""
    out: dict[str, int] = {}
    for key, vb in last.items():
        va = first.get(key)
        if isinstance(va, int) and isinstance(vb, int) and vb >= va:
            out[key] = vb - va
    return out


def prio_bytes(per_priority: Mapping[int, Mapping[str, int]]) -> dict[int, int]:
    """rx + tx bytes per priority from ``EthtoolStats.per_priority`` (``rx_prio3_bytes``...)."""
    out: dict[int, int] = {}
    for prio, names in per_priority.items():
        total = sum(v for k, v in names.items() if k.lower().endswith("bytes"))
        if any(k.lower().endswith("bytes") for k in names):
            out[prio] = total
    return out


def balance(loads: Mapping[str, int]) -> tuple[int, float, float]:
    """(ports carrying traffic, max/mean, min/mean) over the loads that are not zero."""
    busy = [v for v in loads.values() if v > 0]
    if not busy:
        return 0, 0.0, 0.0
    mean = sum(busy) / len(busy)
    return len(busy), max(busy) / mean, min(busy) / mean


# -- records ----------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class _Derived(Record):
    basis: str = "snapshot"
    """``growth`` (two or more snapshots: last minus first) or ``snapshot`` (totals)."""
    snapshots: int = 1


@dataclass(slots=True, kw_only=True)
class PrioTraffic(_Derived):
    """Bytes per priority of one interface and the PFC pause frames counted on it."""

    record_type: ClassVar[str] = "prio_traffic"
    interface: str | None
    bytes_by_prio: dict[int, int] = field(default_factory=dict)
    total_bytes: int = 0
    top_prio: int | None = None
    top_share: float = 0.0
    """Share of the bytes on ``top_prio`` (0..1)."""
    share_pct: int = 0
    pfc_pause: int = 0
    """Per-priority PFC pause frames, rx + tx, all priorities (0 also when none is printed)."""
    pfc_counters: bool = False
    """Whether the dump prints per-priority pause counters at all (mlx5 prints
    ``rx_prioN_pause`` only for priorities with PFC enabled)."""


@dataclass(slots=True, kw_only=True)
class RdmaLoss(_Derived):
    """RoCE retransmission / loss counters of one RDMA port."""

    record_type: ClassVar[str] = "rdma_loss"
    device: str | None
    counters: dict[str, int] = field(default_factory=dict)
    """The loss counters that are not zero (growth or totals, per ``basis``)."""
    total: int = 0
    summary: str = ""


@dataclass(slots=True, kw_only=True)
class NicRxPressure(_Derived):
    """A NIC that drops on its own receive path and sends link-level pause to slow the peer."""

    record_type: ClassVar[str] = "nic_rx_pressure"
    interface: str | None
    tx_pause: int = 0
    """Global (802.3x) pause frames the NIC sent: mlx5 ``tx_pause_ctrl_phy`` /
    ``tx_global_pause``, generic ``tx_pause_frames``."""
    rx_discards: int = 0
    """Port-level receive discards: mlx5 ``rx_discards_phy``, i40e ``port.rx_dropped``."""
    out_of_buffer: int = 0
    """mlx5 ``rx_out_of_buffer``: packets dropped because no receive WQE was posted."""


@dataclass(slots=True, kw_only=True)
class PhyErrors(_Derived):
    """Physical-layer errors of one interface (CRC/FCS, symbol, PCS, link down)."""

    record_type: ClassVar[str] = "phy_errors"
    interface: str | None
    errors: dict[str, int] = field(default_factory=dict)
    total: int = 0
    link_down_events: int = 0
    corrected_bits: int | None = None
    summary: str = ""


@dataclass(slots=True, kw_only=True)
class PfcStorm(Record):
    """PFC watchdog storms on one switch (one subject)."""

    record_type: ClassVar[str] = "pfc_storm"
    storms: int = 0
    ports: list[str] = field(default_factory=list)
    port_count: int = 0
    queues: list[int] = field(default_factory=list)
    queue_list: str = ""
    port_list: str = ""
    spread: str = ""
    """``one port`` (a single misbehaving neighbour) or ``N ports`` (fabric-wide back-pressure)."""
    dropped: int = 0
    """Packets the watchdog dropped (tx + rx) while the queues were stormed."""


@dataclass(slots=True, kw_only=True)
class EgressBalance(_Derived):
    """Egress load spread over parallel ports of one device."""

    record_type: ClassVar[str] = "egress_balance"
    source: str = ""
    """``queue-counters`` or ``port-counters`` (switch ports) or ``ethtool`` (NIC ports of one
    host)."""
    unit: str = "bytes"
    """``bytes`` or ``packets`` (``port-counters`` TX_OK)."""
    loads: dict[str, int] = field(default_factory=dict)
    ports: int = 0
    """Ports carrying traffic."""
    busiest_load: int = 0
    """The load of the busiest port (bytes or packets, per ``unit``)."""
    max_over_mean: float = 0.0
    min_over_mean: float = 0.0
    busiest: str = ""
    hash_expectation: float = 0.0
    """E[max]/mean for as many equal elephant flows as ports hashed at random
    (docs/references.md#ecmp)."""
    excess_over_hashing: float = 0.0
    """``max_over_mean / hash_expectation``: above 1 the spread is worse than random hashing
    of as many flows as ports gives on average."""


# -- grouping snapshots -----------------------------------------------------------------------


UNNAMED = "(interface not named in the capture)"


def _ethtool_series(ev: Evidence) -> dict[tuple[str, str | None], list[Item]]:
    """ethtool_stats items per (subject, interface), in input order; a nameless dump inherits
    the name of the previous dump of the same file when it prints the same counter names."""
    out: dict[tuple[str, str | None], list[Item]] = defaultdict(list)
    prev: dict[int, tuple[str | None, frozenset[str]]] = {}
    for item in ev.items:
        if item.record.record_type != "ethtool_stats":
            continue
        rec: Any = item.record
        name: str | None = rec.interface
        keys = frozenset(rec.counters)
        fid = id(item.file)
        if name is None and fid in prev:
            pname, pkeys = prev[fid]
            if pname is not None and (keys <= pkeys or pkeys <= keys):
                name = pname
        prev[fid] = (name, keys)
        out[(item.subject, name)].append(item)
    return out


def _rdma_series(ev: Evidence) -> dict[tuple[str, str | None], list[Item]]:
    out: dict[tuple[str, str | None], list[Item]] = defaultdict(list)
    for item in ev.items:
        if item.record.record_type != "rdma_counters":
            continue
        rec: Any = item.record
        if rec.source == "rdma-statistic-qp":
            continue
        name = f"{rec.device}/{rec.port}" if rec.device else None
        out[(item.subject, name)].append(item)
    return out


def _values(items: list[Item], view: str) -> tuple[dict[Any, int], str]:
    """A counter view (``counters``, ``per-prio``...) as growth over the series, or the last
    snapshot's totals when there is one snapshot."""
    last: Any = items[-1].record
    if len(items) < 2:
        return {k: v for k, v in getattr(last, view).items() if isinstance(v, int)}, "snapshot"
    first: Any = items[0].record
    return growth(getattr(first, view), getattr(last, view)), "growth"


def _at(item: Item, rec: Any, *names: str) -> int:
    """The input line of the first named counter present in ``rec`` (for quoting)."""
    for name in names:
        line = rec.line_of(name) if hasattr(rec, "line_of") else rec.counter_lines.get(name)
        if line:
            return int(line)
    return int(item.record.line)


# -- derivers ---------------------------------------------------------------------------------


@deriver
def _prio_traffic(ev: Evidence) -> Iterator[Item]:
    for (subject, name), items in _ethtool_series(ev).items():
        last = items[-1]
        rec: Any = last.record
        if not rec.per_priority:
            continue
        if len(items) >= 2:
            first: Any = items[0].record
            by_prio = prio_bytes(
                {
                    p: growth(first.per_priority.get(p, {}), names)
                    for p, names in rec.per_priority.items()
                }
            )
            rx_pause = growth(first.rx_pause_by_prio, rec.rx_pause_by_prio)
            tx_pause = growth(first.tx_pause_by_prio, rec.tx_pause_by_prio)
            basis = "growth"
        else:
            by_prio = prio_bytes(rec.per_priority)
            rx_pause, tx_pause = dict(rec.rx_pause_by_prio), dict(rec.tx_pause_by_prio)
            basis = "snapshot"
        total = sum(by_prio.values())
        if total <= 0:
            continue
        top = max(sorted(by_prio), key=lambda p: by_prio[p])
        share = by_prio[top] / total
        out = PrioTraffic(
            line=_at(last, rec, f"rx_prio{top}_bytes", f"tx_prio{top}_bytes"),
            interface=name or UNNAMED,
            bytes_by_prio=by_prio,
            total_bytes=total,
            top_prio=top,
            top_share=round(share, 6),
            share_pct=int(share * 100),
            pfc_pause=sum(rx_pause.values()) + sum(tx_pause.values()),
            pfc_counters=bool(rec.rx_pause_by_prio or rec.tx_pause_by_prio),
            basis=basis,
            snapshots=weight(items),
        )
        yield Item(out, last.file, subject, last.kind)


RDMA_LOSS_COUNTERS = (
    "local_ack_timeout_err",
    "packet_seq_err",
    "out_of_sequence",
    "implied_nak_seq_err",
    "duplicate_request",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "req_transport_retries_exceeded",
)
"""mlx5 hw_counters that count retransmissions, NAKs and sequence gaps: packets lost on the path
(NVIDIA "Understanding mlx5 Linux counters"; S20, S22)."""


@deriver
def _rdma_loss(ev: Evidence) -> Iterator[Item]:
    for (subject, name), items in _rdma_series(ev).items():
        values, basis = _values(items, "counters")
        loss = {k: values[k] for k in RDMA_LOSS_COUNTERS if values.get(k)}
        if not any(k in values for k in RDMA_LOSS_COUNTERS):
            continue
        last = items[-1]
        rec: Any = last.record
        out = RdmaLoss(
            line=_at(last, rec, *loss) if loss else rec.line,
            device=name,
            counters=loss,
            total=sum(loss.values()),
            summary=", ".join(f"{k} {v}" for k, v in loss.items()) or "none",
            basis=basis,
            snapshots=weight(items),
        )
        yield Item(out, last.file, subject, last.kind)


def _tx_global_pause(counters: Mapping[str, int]) -> tuple[int, str | None]:
    for name in ("tx_pause_ctrl_phy", "tx_global_pause", "tx_pause_frames", "port.link_xoff_tx"):
        if name in counters:
            return counters[name], name
    return 0, None


def _rx_port_discards(counters: Mapping[str, int]) -> tuple[int, str | None]:
    for name in ("rx_discards_phy", "port.rx_dropped", "rx_dropped.nic"):
        if name in counters:
            return counters[name], name
    return 0, None


@deriver
def _nic_rx_pressure(ev: Evidence) -> Iterator[Item]:
    for (subject, name), items in _ethtool_series(ev).items():
        values, basis = _values(items, "counters")
        pause, pause_name = _tx_global_pause(values)
        discards, disc_name = _rx_port_discards(values)
        if pause_name is None and disc_name is None:
            continue
        last = items[-1]
        rec: Any = last.record
        out = NicRxPressure(
            line=_at(last, rec, disc_name or "", pause_name or ""),
            interface=name or UNNAMED,
            tx_pause=pause,
            rx_discards=discards,
            out_of_buffer=values.get("rx_out_of_buffer", 0),
            basis=basis,
            snapshots=weight(items),
        )
        yield Item(out, last.file, subject, last.kind)


_PHY_WORDS = ("crc", "fcs", "symbol", "pcs", "alignment", "align_err", "frame_err", "jabber")
_PHY_SKIP = ("roce_drops_crc", "checksum", "csum")


def is_phy_error(name: str) -> bool:
    """Whether an ethtool counter counts physical-layer receive errors (CRC/FCS, symbol, PCS,
    alignment/framing, FEC uncorrectable), not per-queue or checksum counters."""
    low = name.lower()
    if any(s in low for s in _PHY_SKIP):
        return False
    if "uncorrectable" in low and ("fec" in low or "phy" in low):
        return True
    return any(w in low for w in _PHY_WORDS)


@deriver
def _phy_errors(ev: Evidence) -> Iterator[Item]:
    for (subject, name), items in _ethtool_series(ev).items():
        last = items[-1]
        rec: Any = last.record
        names = [k for k in rec.error_counters if is_phy_error(k)]
        names += [k for k in rec.counters if "uncorrectable" in k.lower() and is_phy_error(k)]
        link = [k for k in rec.counters if "link_down_events" in k.lower()]
        if not names and not link:
            continue
        values, basis = _values(items, "counters")
        errors = {k: values[k] for k in dict.fromkeys(names) if values.get(k)}
        link_down = sum(values.get(k, 0) for k in link)
        out = PhyErrors(
            line=_at(last, rec, *errors) if errors else rec.line,
            interface=name or UNNAMED,
            errors=errors,
            total=sum(errors.values()),
            link_down_events=link_down,
            corrected_bits=values.get("rx_corrected_bits_phy"),
            summary=", ".join(f"{k} {v}" for k, v in errors.items()) or "none",
            basis=basis,
            snapshots=weight(items),
        )
        yield Item(out, last.file, subject, last.kind)


IB_PHY_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "local_link_integrity_errors",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "excessive_buffer_overrun_errors",
)
"""InfiniBand PortCounters that count a bad signal on the link (the sysfs names): symbol
errors, link retraining, local link integrity and receive errors (a malformed packet, a bad CRC),
errors the far end marked, and buffer overruns from credit errors."""



@deriver
def _ib_phy_errors(ev: Evidence) -> Iterator[Item]:
    """``phy_errors`` of InfiniBand ports from their PortCounters (sysfs, perfquery,
    ibqueryerrors): the link-signal counters, and ``link_downed`` as link-down events. A single
    reading (one snapshot, or ibqueryerrors, whose default threshold is 0) holds totals since
    the counters were last cleared: its signal errors count (they say the link was bad at some
    time), its ``link_downed`` does not (every reboot of the far end adds one); two snapshots
    count any growth of either."""
    for (subject, name), items in _rdma_series(ev).items():
        last = items[-1]
        rec: Any = last.record
        if not any(k in rec.counters for k in (*IB_PHY_COUNTERS, "link_downed")):
            continue
        values, basis = _values(items, "counters")
        errors = {k: values[k] for k in IB_PHY_COUNTERS if values.get(k)}
        link_down = values.get("link_downed", 0) if basis == "growth" else 0
        if not errors and not link_down:
            continue
        out = PhyErrors(
            line=_at(last, rec, *errors, "link_downed"),
            interface=name or UNNAMED,
            errors=errors,
            total=sum(errors.values()),
            link_down_events=link_down,
            summary=", ".join(f"{k} {v}" for k, v in errors.items()) or "none",
            basis=basis,
            snapshots=weight(items),
        )
        yield Item(out, last.file, subject, last.kind)


@deriver
def _pfc_storm(ev: Evidence) -> Iterator[Item]:
    by_subject: dict[str, list[Item]] = defaultdict(list)
    for item in ev.items:
        if item.record.record_type == "pfcwd-stats":
            by_subject[item.subject].append(item)
    for subject, items in by_subject.items():
        # the last line printed per (port, queue) is the newest reading
        latest: dict[tuple[str, int | None], Item] = {}
        for item in items:
            rec: Any = item.record
            latest[(rec.port, rec.queue)] = item
        stormed = [i for i in latest.values() if (getattr(i.record, "storms_detected", 0) or 0)]
        if not stormed:
            continue
        ports = sorted({str(getattr(i.record, "port", "")) for i in stormed}, key=_port_key)
        queues = sorted({q for i in stormed if (q := getattr(i.record, "queue", None)) is not None})
        storms = sum(int(getattr(i.record, "storms_detected", 0) or 0) for i in stormed)
        dropped = sum(
            int(getattr(i.record, f, 0) or 0) for i in stormed for f in ("tx_drop", "rx_drop")
        )
        first = stormed[0]
        out = PfcStorm(
            line=first.record.line,
            storms=storms,
            ports=ports,
            port_count=len(ports),
            queues=queues,
            queue_list=", ".join(str(q) for q in queues) or "?",
            port_list=", ".join(ports[:8]) + (" ..." if len(ports) > 8 else ""),
            spread="one port" if len(ports) == 1 else f"{len(ports)} ports",
            dropped=dropped,
        )
        yield Item(out, first.file, subject, first.kind)


def _port_key(name: str) -> tuple[str, int]:
    digits = "".join(c for c in name if c.isdecimal())
    return name.rstrip("0123456789"), int(digits) if digits else -1


def _egress_item(
    subject: str,
    loads: dict[str, int],
    src: str,
    basis: str,
    snaps: int,
    at: Item,
    unit: str = "bytes",
) -> Item | None:
    ports, hi, lo = balance(loads)
    if ports < 2:
        return None
    busiest = max(sorted(loads), key=lambda k: loads[k])
    expect = ecmp_expected_max(ports, ports)
    rec = EgressBalance(
        line=at.record.line,
        source=src,
        unit=unit,
        loads=loads,
        ports=ports,
        busiest_load=loads[busiest],
        max_over_mean=round(hi, 3),
        min_over_mean=round(lo, 3),
        busiest=busiest,
        hash_expectation=round(expect, 2),
        excess_over_hashing=round(hi / expect, 3),
        basis=basis,
        snapshots=snaps,
    )
    return Item(rec, at.file, subject, at.kind)


@deriver
def _egress_balance(ev: Evidence) -> Iterator[Item]:
    # switch: unicast queue tx bytes summed per port, per subject (last reading per queue)
    per_subject: dict[str, dict[tuple[str | None, str], dict[str, int]]] = defaultdict(dict)
    last_item: dict[str, Item] = {}
    for item in ev.items:
        if item.record.record_type != "queue-counters":
            continue
        rec: Any = item.record
        if rec.queue_type not in ("UC", "ALL", "Q") or rec.tx_bytes is None:
            continue
        per_subject[item.subject].setdefault((rec.namespace, rec.port), {})[rec.queue] = int(
            rec.tx_bytes
        )
        last_item[item.subject] = item
    for subject, ports in per_subject.items():
        loads = {port: sum(q.values()) for (_ns, port), q in ports.items()}
        made = _egress_item(subject, loads, "queue-counters", "snapshot", 1, last_item[subject])
        if made is not None:
            yield made
    yield from _port_counter_balance(ev)
    # host: tx bytes of the parallel NIC ports of one host
    hosts: dict[str, dict[str, int]] = defaultdict(dict)
    host_at: dict[str, Item] = {}
    snaps: dict[str, int] = {}
    for (subject, name), items in _ethtool_series(ev).items():
        if name is None:
            continue
        values, _basis = _values(items, "counters")
        tx = values.get("tx_bytes_phy", values.get("tx_bytes"))
        if tx is None:
            continue
        hosts[subject][name] = tx
        host_at[subject] = items[-1]
        snaps[subject] = min(snaps.get(subject, weight(items)), weight(items))
    for subject, loads in hosts.items():
        basis = "growth" if snaps[subject] >= 2 else "snapshot"
        made = _egress_item(subject, loads, "ethtool", basis, snaps[subject], host_at[subject])
        if made is not None:
            yield made


def _port_counter_balance(ev: Evidence) -> Iterator[Item]:
    """TX_OK of the switch ports that are up (``show interfaces counters``), per subject; the
    growth between the first and last reading of a port when it was read more than once.
    PortChannel rows (a sum of their members) and ports down or admin down are left out."""
    series: dict[str, dict[tuple[str | None, str], list[Item]]] = defaultdict(dict)
    for item in ev.items:
        if item.record.record_type != "port-counters":
            continue
        rec: Any = item.record
        if rec.up is False or rec.tx_ok is None or rec.port.lower().startswith("portchannel"):
            continue
        series[item.subject].setdefault((rec.namespace, rec.port), []).append(item)
    for subject, ports in series.items():
        loads: dict[str, int] = {}
        snaps = min(weight(items) for items in ports.values())
        for (_ns, port), items in ports.items():
            a: Any = items[0].record
            b: Any = items[-1].record
            first, last = int(a.tx_ok), int(b.tx_ok)
            if len(items) >= 2 and last >= first:
                loads[port] = last - first
            elif len(items) < 2:
                loads[port] = last
        basis = "growth" if snaps >= 2 else "snapshot"
        at = max(
            (items[-1] for items in ports.values()),
            key=lambda i: loads.get(str(getattr(i.record, "port", "")), -1),
        )
        made = _egress_item(subject, loads, "port-counters", basis, snaps, at, unit="packets")
        if made is not None:
            yield made


@dataclass(slots=True, kw_only=True)
class LosslessDrops(Record):
    """Drops of RoCE / lossless-queue traffic on one switch port, next to its PFC counters."""

    record_type: ClassVar[str] = "lossless_drops"
    port: str
    source: str
    """``nvue`` (``nv show interface X qos roce counters``) or ``sonic`` (``show queue
    counters`` joined with ``show pfc counters`` of the same port)."""
    drops: int = 0
    """RoCE no-buffer discards (NVUE rx + tx) or drops on the lossless queues (SONiC)."""
    pfc_frames: int = 0
    """PFC pause frames counted on the port (rx + tx; for SONiC on the lossless priorities)."""
    ecn_marked: int | None = None
    queues: str = ""


LOSSLESS_QUEUES = (3, 4)
"""SONiC's default lossless priorities / queues (PFC on 3 and 4)."""


def _nvue_drops(ev: Evidence) -> Iterator[Item]:
    ports: dict[tuple[str, str], dict[str, Item]] = defaultdict(dict)
    for item in ev.items:
        if item.record.record_type == "nvue-counter":
            rec: Any = item.record
            ports[(item.subject, rec.scope)][rec.path] = item
    for (subject, port), paths in ports.items():

        def value(path: str, _paths: dict[str, Item] = paths) -> int | None:
            it = _paths.get(path)
            v = getattr(it.record, "value", None) if it is not None else None
            return None if v is None else int(v)

        drop_paths = [
            p for p in paths if "roce-stats" in p and "non-roce" not in p and "discard" in p
        ]
        pfc_paths = [p for p in paths if "pfc-stats" in p and p.endswith("pause-packets")]
        if not drop_paths or not pfc_paths:
            continue
        drops = sum(value(p) or 0 for p in drop_paths)
        worst = max(drop_paths, key=lambda p: value(p) or 0)
        at = paths[worst]
        yield Item(
            LosslessDrops(
                line=at.record.line,
                port=port,
                source="nvue",
                drops=drops,
                pfc_frames=sum(value(p) or 0 for p in pfc_paths),
                ecn_marked=value("tx-stats.tx-ecn-stats.ecn-marked-packets"),
                queues="RoCE",
            ),
            at.file,
            subject,
            at.kind,
        )


def _sonic_drops(ev: Evidence) -> Iterator[Item]:
    drops: dict[tuple[str, str], dict[str, tuple[int, Item]]] = defaultdict(dict)
    pfc: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for item in ev.items:
        rtype = item.record.record_type
        rec: Any = item.record
        if rtype == "queue-counters" and rec.queue_index in LOSSLESS_QUEUES:
            if rec.queue_type in ("UC", "ALL") and rec.drop_pkts is not None:
                drops[(item.subject, rec.port)][rec.queue] = (int(rec.drop_pkts), item)
        elif rtype == "pfc-counters":
            frames = [rec.frames[q] for q in LOSSLESS_QUEUES if q < len(rec.frames)]
            pfc[(item.subject, rec.port)][rec.direction] = sum(f or 0 for f in frames)
    for key, queues in drops.items():
        if key not in pfc:
            continue  # no PFC reading for this port: nothing to compare
        total = sum(n for n, _ in queues.values())
        worst = max(queues.values(), key=lambda t: t[0])[1]
        yield Item(
            LosslessDrops(
                line=worst.record.line,
                port=key[1],
                source="sonic",
                drops=total,
                pfc_frames=sum(pfc[key].values()),
                queues=", ".join(sorted(queues)),
            ),
            worst.file,
            key[0],
            worst.kind,
        )


@deriver
def _lossless_drops(ev: Evidence) -> Iterator[Item]:
    yield from _nvue_drops(ev)
    yield from _sonic_drops(ev)
