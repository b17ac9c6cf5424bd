"""Fleet diagnosis: the aifabric exporter's series in Prometheus turned back into evidence.

``aifabric diagnose --prometheus URL`` runs the same rules and verdicts as on captured files
(``checks/rules/counters.yaml``: RoCE on a lossy priority, NIC receive overload, PFC storms,
physical-layer errors...). They read ``ethtool -S`` dumps, RDMA port counters and SONiC PFC /
watchdog / queue counters; this module rebuilds those records from two instant queries of every
``aifabric_*`` series, at the window's start and at its end
(https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries), so the counter
derivers see two snapshots of each interface and compute the growth over the window exactly as
they do for two captured dumps.

How a series becomes a record (per ``node`` label, the subject):

* **NIC** (an ``interface`` label that is not a SONiC port ``Ethernet<N>``, a metric with an
  ``ethtool`` source in the catalogue): the catalogue's canonical driver name
  (:meth:`aifabric.monitor.catalogue.Mapper.canonical`: ``aifabric_port_pfc_frames_total
  {direction="rx",priority="3"}`` → ``rx_prio3_pause``) with the exporter's scale undone
  (pause durations are published in seconds, mlx5 counts µs), written as ``name: value`` lines
  and parsed by :func:`aifabric.evidence.ethtool_stats.parse_ethtool_stats`, so the normalised
  views (``per_priority``, ``rx_pause_by_prio``...) are filled by the same code as for a paste.
  One :class:`~aifabric.evidence.ethtool_stats.EthtoolStats` per interface and time.
* **RDMA port** (``device`` and ``port`` labels, an ``rdma`` source): the hw_counters name
  (``out_of_sequence``, ``port_rcv_data`` in 4-byte words...) parsed as ``rdma statistic -p``
  output by :func:`aifabric.evidence.rdma_counters.parse_rdma_counters`: one
  :class:`~aifabric.evidence.rdma_counters.RdmaCounters` per port and time.
* **SONiC switch port** (``interface`` ``Ethernet<N>``): ``PfcCounters`` (frames per priority
  per direction), ``PfcwdStats`` (storms detected/restored, watchdog drops per queue) and
  ``QueueCounters`` (queue bytes, drops, ECN marks), with the values the ports counted *during
  the window* (end minus start; a series first seen inside the window counts from 0). The
  switch derivers read one reading per port, so the growth is what they get; a storm a month
  ago does not make a finding today.

Every capture is one ``prometheus:<url>#<node>`` evidence file whose lines are the series as
``metric{labels} value @ RFC3339-time (+growth since HH:MM:SSZ) # raw-name`` (the growth on
window-end lines): a finding's evidence names the series, the value and the time each number
came from. Nodes that have ``aifabric_*`` series in the window
but none at its start or end (scrape gaps, exporter down), and series no record takes, are
listed in :attr:`FleetEvidence.notes` for the report's ``not_checked``.

Prometheus instant queries return the newest sample within the lookback (5 minutes by default)
before the evaluation time; the value is quoted with the evaluation time.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from aifabric.errors import InputError
from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.ethtool_module import Threshold, TransceiverModule
from aifabric.evidence.ethtool_stats import EthtoolStats, parse_ethtool_stats
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.rdma_counters import RdmaCounters, parse_rdma_counters
from aifabric.evidence.switch_counters import PfcCounters, PfcwdStats, QueueCounters
from aifabric.monitor.catalogue import Catalogue, load_catalogue
from aifabric.monitor.exposition import escape_label, format_value
from aifabric.monitor.promql import Sample, format_time

__all__ = [
    "SELECTOR",
    "Capture",
    "FleetEvidence",
    "PromQuery",
    "parse_time",
    "parse_window",
    "prometheus_captures",
]

SELECTOR = '{__name__=~"aifabric_.+"}'
"""Every series of the aifabric exporter (all metric names start with ``aifabric_``)."""

SONIC_PORT = re.compile(r"^Ethernet\d+$")
"""SONiC front-panel port names (``Ethernet0``, ``Ethernet124``): the interface is a switch
port, its counters come from COUNTERS_DB (source ``sonic``), not from ``ethtool``."""

_DROPPED = frozenset({"instance", "job"})
"""Labels Prometheus adds at scrape time: not part of a record's identity, left out of quotes."""


class PromQuery(Protocol):
    """What :func:`prometheus_captures` needs of a client (:class:`~.promql.PromClient`, or a
    fake in tests)."""

    @property
    def url(self) -> str: ...

    def query(self, expr: str, *, at: float | None = None) -> list[Sample]: ...

    def series(
        self, match: Sequence[str], *, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]: ...


@dataclass(slots=True)
class Capture:
    """One synthesized capture: what :func:`aifabric.checks.diagnose.engine.load_evidence`
    takes as ``captures`` (the shape of one evidence file part)."""

    path: str
    kind: str
    lines: Sequence[str]
    result: ParseResult
    subject: str
    numbers: list[int] | None = None
    """1-based lines of ``lines`` that are this capture's (several kinds share one node's
    lines, like the parts of a multi-tool paste)."""


@dataclass(slots=True)
class FleetEvidence:
    """The captures of every node and what could not be used."""

    url: str
    start_s: float
    end_s: float
    captures: list[Capture] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    """Nodes with at least one record."""
    notes: list[str] = field(default_factory=list)
    """For ``not_checked``: the window, nodes without data, series no record takes."""


# -- time arguments ---------------------------------------------------------------------------

_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d|w)\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_window(text: str) -> float:
    """``30s``, ``15m``, ``1h``, ``2d`` (Prometheus duration units, one number) → seconds.

    >>> parse_window("15m"), parse_window("1.5h"), parse_window("30s")
    (900.0, 5400.0, 30.0)
    """
    m = _WINDOW.match(text)
    if m is None:
        raise InputError(f"--window {text!r}: expected a duration like 30s, 15m, 1h or 2d")
    seconds = float(m.group(1)) * _UNIT_S[m.group(2)]
    if seconds < 1:
        raise InputError(f"--window {text!r}: the window must be at least 1 s")
    return seconds


def parse_time(text: str) -> float:
    """RFC 3339 (``2026-12-04T17:00:00Z``, ``...+01:00``) or unix seconds → unix seconds.

    >>> parse_time("2023-11-14T22:13:20Z"), parse_time("1700000000.5")
    (1700000000.0, 1700000000.5)
    """
    s = text.strip()
    try:
        value = float(s)
    except ValueError:
        pass
    else:
        if math.isfinite(value) and value >= 0:
            return value
        raise InputError(f"--at {text!r}: unix seconds must be a finite number >= 0")
    try:
        dt = datetime.fromisoformat(s.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"--at {text!r}: expected RFC 3339 (2026-12-04T17:00:00Z) or unix seconds"
        ) from None
    if dt.tzinfo is None:
        raise InputError(f"--at {text!r}: give a time zone (Z or +HH:MM)")
    return dt.timestamp()


# -- building records -------------------------------------------------------------------------

Key = tuple[str, tuple[tuple[str, str], ...]]
"""(metric, labels without node/instance/job, sorted)."""


def _quote(sample: Sample, raw: str | None, before: Sample | None = None) -> str:
    """``metric{labels} value @ time`` (the node is the capture's subject, named in its path),
    with the growth since ``before`` when given, then ``# raw-name``: the quoted part of a
    finding's evidence keeps the first 160 characters, so the raw name goes last."""
    labels = ",".join(
        f'{k}="{escape_label(v)}"'
        for k, v in sorted(sample.labels.items())
        if k != "__name__" and k not in _DROPPED and k != "node"
    )
    name = sample.labels.get("__name__", "")
    grew = ""
    if before is not None:
        delta = sample.value - before.value
        sign = "+" if delta >= 0 else ""
        grew = f" ({sign}{format_value(delta)} since {format_time(before.time_s)[11:]})"
    tail = f" # {raw}" if raw else ""
    when = format_time(sample.time_s)
    return f"{name}{{{labels}}} {format_value(sample.value)} @ {when}{grew}{tail}"


def _unscale(value: float, scale: float) -> int | None:
    if not math.isfinite(value) or scale == 0:
        return None
    return round(value / scale)


@dataclass(slots=True)
class _Node:
    """One node's lines and records while they are built."""

    name: str
    lines: list[str] = field(default_factory=list)
    parts: dict[str, tuple[list[Record], list[int]]] = field(default_factory=dict)

    def add(self, kind: str, rec: Record, numbers: Sequence[int]) -> None:
        recs, nums = self.parts.setdefault(kind, ([], []))
        recs.append(rec)
        nums.extend(numbers)

    def line(self, text: str) -> int:
        self.lines.append(text)
        return len(self.lines)


@dataclass(frozen=True, slots=True)
class _Raw:
    """A series read back as a raw counter: name, unscaled value, the sample it came from."""

    name: str
    value: int
    sample: Sample


class _Reader:
    """Turns one node's samples at one time into raw counters per NIC, RDMA port, switch port."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.cat = catalogue
        self.ethtool = catalogue.mapper("ethtool")
        self.rdma = catalogue.mapper("rdma")
        self.sonic = catalogue.mapper("sonic")

    def raw(self, source: str, sample: Sample) -> _Raw | None:
        metric = sample.labels.get("__name__", "")
        spec = self.cat.by_name.get(metric)
        if spec is None or source not in spec.sources:
            return None
        mapper = self.cat.mapper(source)
        labels = {k: v for k, v in sample.labels.items() if k in spec.labels}
        name = mapper.canonical(metric, labels)
        if name is None:
            return None
        scale = next((m.scale for m in mapper.map(name) if m.metric == metric), 1.0)
        value = _unscale(sample.value, scale)
        return None if value is None else _Raw(name, value, sample)


def _identity(sample: Sample) -> tuple[str, str, str] | None:
    """(family, first key, second key) of a sample: ``nic`` (interface, ""), ``rdma`` (device,
    port), ``switch`` (port, ""), or ``None``."""
    labels = sample.labels
    if "device" in labels and "port" in labels:
        return "rdma", labels["device"], labels["port"]
    iface = labels.get("interface")
    if iface is None:
        return None
    return ("switch" if SONIC_PORT.match(iface) else "nic"), iface, ""


def _nic_record(
    node: _Node, iface: str, raws: list[_Raw], when: str, before: Mapping[str, _Raw]
) -> None:
    """One EthtoolStats of ``iface`` (``before``: the same interface's counters at the window
    start, quoted beside the end values)."""
    by_name = {r.name: r for r in sorted(raws, key=lambda r: r.name)}
    head = node.line(f"# ethtool -S {iface} as read from Prometheus at {when}")
    for r in by_name.values():
        prev = before.get(r.name)
        node.line(_quote(r.sample, r.name, prev.sample if prev is not None else None))
    text = "NIC statistics:\n" + "".join(f"     {r.name}: {r.value}\n" for r in by_name.values())
    result = parse_ethtool_stats(text)
    for rec in result.of_type(EthtoolStats):
        offset = head - 1
        rec.line += offset
        rec.first_counter_line += offset
        if rec.end_line is not None:
            rec.end_line += offset
        if rec.counter_lines is not None:
            rec.counter_lines = {k: v + offset for k, v in rec.counter_lines.items()}
        rec.interface = iface
        node.add("ethtool-stats", rec, range(head, head + len(by_name) + 1))


def _rdma_record(
    node: _Node, dev: str, port: str, raws: list[_Raw], when: str, before: Mapping[str, _Raw]
) -> None:
    """One RdmaCounters of ``dev``/``port`` (``before`` as for :func:`_nic_record`)."""
    by_name = {r.name: r for r in sorted(raws, key=lambda r: r.name)}
    head = node.line(f"# rdma statistic show link {dev}/{port} as read from Prometheus at {when}")
    for r in by_name.values():
        prev = before.get(r.name)
        node.line(_quote(r.sample, r.name, prev.sample if prev is not None else None))
    text = f"link {dev}/{port}\n" + "".join(f"\t{r.name} {r.value}\n" for r in by_name.values())
    result = parse_rdma_counters(text)
    for rec in result.of_type(RdmaCounters):
        offset = head - 1
        rec.line += offset
        if rec.end_line is not None:
            rec.end_line += offset
        rec.counter_lines = {k: v + offset for k, v in rec.counter_lines.items()}
        node.add("rdma-hw-counters", rec, range(head, head + len(by_name) + 1))


_QUEUE = re.compile(r"^([A-Za-z]*)(\d+)$")


def _switch_records(
    node: _Node,
    port: str,
    start: Mapping[str, list[_Raw]],
    end: Mapping[str, list[_Raw]],
    when: str,
) -> None:
    """PfcCounters, PfcwdStats and QueueCounters of one SONiC port: growth over the window."""
    head = node.line(f"# SONiC counters of {port}: growth over {when}")

    def grown(raw_name: str) -> dict[tuple[tuple[str, str], ...], tuple[int, int]]:
        """labels (without node/interface) → (growth, quote line) of the series with that
        canonical SAI name."""
        firsts = {_extra(r.sample): r for r in start.get(raw_name, [])}
        out: dict[tuple[tuple[str, str], ...], tuple[int, int]] = {}
        for r in end.get(raw_name, []):
            key = _extra(r.sample)
            first = firsts.get(key)
            line = node.line(_quote(r.sample, raw_name, first.sample if first else None))
            base = first.value if first is not None else 0
            out[key] = (r.value - base if r.value >= base else r.value, line)  # reset: since it
        return out

    # PFC frames per direction and priority
    for direction, sai in (("rx", "RX"), ("tx", "TX")):
        frames: list[int | None] = [None] * 8
        lines: list[int] = []
        for p in range(8):
            for _key, (n, line) in grown(f"SAI_PORT_STAT_PFC_{p}_{sai}_PKTS").items():
                frames[p] = (frames[p] or 0) + n
                lines.append(line)
        if lines:
            rec = PfcCounters(line=min(lines), port=port, direction=direction, frames=tuple(frames))
            rec.end_line = max(lines)
            node.add("pfc-counters", rec, [head, *lines])
    # watchdog and queues, per queue label
    per_queue: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for sai, fld in (
        ("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "storms_detected"),
        ("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", "storms_restored"),
        ("PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS", "tx_drop"),
        ("PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS", "rx_drop"),
        ("SAI_QUEUE_STAT_BYTES", "tx_bytes"),
        ("SAI_QUEUE_STAT_DROPPED_PACKETS", "drop_pkts"),
        ("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "ecn_marked_pkts"),
    ):
        for key, got in grown(sai).items():
            queue = dict(key).get("queue")
            if queue is not None:
                per_queue[queue][fld] = got
    for queue, fields in sorted(per_queue.items()):
        m = _QUEUE.match(queue)
        index = int(m.group(2)) if m else None
        lines = [line for _, line in fields.values()]
        val = {k: n for k, (n, _) in fields.items()}
        if {"storms_detected", "storms_restored", "tx_drop", "rx_drop"} & set(val):
            wd = PfcwdStats(
                line=min(lines), port=port, queue=index, status=None,
                storms_detected=val.get("storms_detected"),
                storms_restored=val.get("storms_restored"),
                tx_ok=None, tx_drop=val.get("tx_drop"), rx_ok=None, rx_drop=val.get("rx_drop"),
                tx_last_ok=None, tx_last_drop=None, rx_last_ok=None, rx_last_drop=None,
            )  # fmt: skip
            node.add("pfc-counters", wd, [head, *lines])
        if {"tx_bytes", "drop_pkts", "ecn_marked_pkts"} & set(val):
            qtype = (m.group(1).upper() or "UC") if m else "UC"
            qc = QueueCounters(
                line=min(lines), port=port, queue=f"{qtype}{index}" if m else queue,
                queue_type=qtype, queue_index=index, tx_bytes=val.get("tx_bytes"),
                drop_pkts=val.get("drop_pkts"), ecn_marked_pkts=val.get("ecn_marked_pkts"),
            )  # fmt: skip
            node.add("pfc-counters", qc, [head, *lines])


def _extra(sample: Sample) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (k, v)
            for k, v in sample.labels.items()
            if k not in _DROPPED and k not in ("__name__", "node", "interface")
        )
    )


def prometheus_captures(
    client: PromQuery,
    *,
    window_s: float,
    at_s: float,
    catalogue: Catalogue | None = None,
) -> FleetEvidence:
    """Every node's NIC, RDMA and switch counters at ``at_s - window_s`` and ``at_s`` as
    captures for :func:`aifabric.checks.diagnose.engine.load_evidence` (three API calls: two
    instant queries of :data:`SELECTOR` and one series listing of the window)."""
    cat = catalogue or load_catalogue()
    reader = _Reader(cat)
    start_s, end_s = at_s - window_s, at_s
    out = FleetEvidence(client.url, start_s, end_s)
    t0, t1 = format_time(start_s), format_time(end_s)
    out.notes.append(
        f"Prometheus {client.url}: counters compared between {t0} and {t1} "
        f"(window {format_value(window_s)} s); only aifabric exporter series were read"
    )
    at_start = client.query(SELECTOR, at=start_s)
    at_end = client.query(SELECTOR, at=end_s)
    seen = {s.get("node") for s in client.series([SELECTOR], start=start_s, end=end_s)}
    by_node: dict[str, tuple[list[Sample], list[Sample]]] = defaultdict(lambda: ([], []))
    for i, samples in enumerate((at_start, at_end)):
        for s in samples:
            who = s.labels.get("node")
            if who:
                by_node[who][i].append(s)
    unused: set[str] = set()
    for name in sorted(by_node):
        first, last = by_node[name]
        node = _Node(name)
        _build_node(node, reader, first, last, t0, t1, unused)
        if not node.parts:
            continue
        out.nodes.append(name)
        path = f"prometheus:{client.url}#{name}"
        for kind, (recs, nums) in node.parts.items():
            result = ParseResult(kind, records=list(recs))
            out.captures.append(Capture(path, kind, node.lines, result, name, sorted(set(nums))))
    no_start = sorted(n for n, (a, b) in by_node.items() if b and not a)
    no_end = sorted(n for n, (a, b) in by_node.items() if a and not b)
    silent = sorted(n for n in seen - set(by_node) if n)
    if no_start:
        out.notes.append(
            f"no sample at the window start {t0} (counters read as totals, not growth): "
            + ", ".join(no_start)
        )
    if no_end:
        out.notes.append(f"no sample at the window end {t1} (exporter down?): " + ", ".join(no_end))
    if silent:
        out.notes.append(
            "series in the window but no sample at its start or end: " + ", ".join(silent)
        )
    if not by_node:
        out.notes.append(
            f"no aifabric_* series with a node label at {t0} or {t1}: is the aifabric exporter "
            "scraped by this Prometheus?"
        )
    if unused:
        out.notes.append(
            "series not turned into evidence (no counter diagnosis reads them yet): "
            + ", ".join(sorted(unused)[:20])
            + (" ..." if len(unused) > 20 else "")
        )
    return out


def _build_node(
    node: _Node,
    reader: _Reader,
    first: list[Sample],
    last: list[Sample],
    t0: str,
    t1: str,
    unused: set[str],
) -> None:
    """Records of one node: NICs and RDMA ports at both times, then switch ports' growth."""
    nic: dict[str, list[list[_Raw]]] = defaultdict(lambda: [[], []])
    rdma: dict[tuple[str, str], list[list[_Raw]]] = defaultdict(lambda: [[], []])
    switch: dict[str, list[dict[str, list[_Raw]]]] = defaultdict(
        lambda: [defaultdict(list), defaultdict(list)]
    )
    optics: dict[str, list[Sample]] = defaultdict(list)
    links: dict[str, list[Sample]] = defaultdict(list)
    for i, samples in enumerate((first, last)):
        for s in samples:
            if s.labels.get("__name__", "") in _OPTICS and "interface" in s.labels:
                if i == 1:  # gauges: the state at the window's end
                    optics[s.labels["interface"]].append(s)
                continue
            if s.labels.get("__name__", "") in _LINK_STATE and "interface" in s.labels:
                if i == 1:
                    links[s.labels["interface"]].append(s)
                continue
            ident = _identity(s)
            raw: _Raw | None = None
            if ident is not None:
                family, a, b = ident
                if family == "nic":
                    raw = reader.raw("ethtool", s)
                    if raw is not None:
                        nic[a][i].append(raw)
                elif family == "rdma":
                    raw = reader.raw("rdma", s)
                    if raw is not None:
                        rdma[(a, b)][i].append(raw)
                else:
                    raw = reader.raw("sonic", s)
                    if raw is not None:
                        switch[a][i][raw.name].append(raw)
            if raw is None:
                unused.add(s.labels.get("__name__", "?"))
    for i, when in enumerate((t0, t1)):  # all first snapshots, then all last ones
        for iface in sorted(nic):
            if nic[iface][i]:
                prev = {r.name: r for r in nic[iface][0]} if i else {}
                _nic_record(node, iface, nic[iface][i], when, prev)
        for dev, port in sorted(rdma):
            if rdma[(dev, port)][i]:
                prev = {r.name: r for r in rdma[(dev, port)][0]} if i else {}
                _rdma_record(node, dev, port, rdma[(dev, port)][i], when, prev)
    for port in sorted(switch):
        before, after = switch[port]
        _switch_records(node, port, before, after, f"{t0} .. {t1}")
    for iface in sorted(optics):
        _optics_record(node, iface, optics[iface], t1)
    for n, iface in enumerate(sorted(links), 1):
        _link_record(node, n, iface, links[iface], t1)


_LINK_STATE = ("aifabric_link_mtu_bytes", "aifabric_link_up", "aifabric_link_admin_up")
"""Interface gauges that become an ``ip link`` record (MTU, admin and operational state)."""


def _link_record(node: _Node, index: int, iface: str, samples: list[Sample], when: str) -> None:
    """One IpLink of ``iface`` at the window's end, so the interface verdicts (no carrier, MTU
    below the fabric's, MTU different from the fleet's majority) judge it as they judge ``ip
    link`` captures. ``LOWER_UP`` stands for an operational state of up (the exporter reads
    operstate, which follows carrier); ``UP`` only when the admin state was exported."""
    head = node.line(f"# ip link show {iface} as read from Prometheus at {when}")
    values: dict[str, float] = {}
    for smp in sorted(samples, key=lambda x: x.labels["__name__"]):
        node.line(_quote(smp, None))
        values[smp.labels["__name__"]] = smp.value
    flags: list[str] = []
    admin, oper = values.get("aifabric_link_admin_up"), values.get("aifabric_link_up")
    if admin == 1 or (admin is None and oper == 1):
        flags.append("UP")
    if oper == 1:
        flags.append("LOWER_UP")
    mtu = values.get("aifabric_link_mtu_bytes")
    rec = IpLink(
        line=head, index=index, name=iface, flags=flags,
        mtu_bytes=int(mtu) if mtu is not None and math.isfinite(mtu) else None,
        state=None if oper is None else ("UP" if oper == 1 else "DOWN"),
        # the exporter does not publish the ARPHRD type: IPoIB netdevs are named ib*, and the
        # verdicts' own filter still skips virtual interfaces (veth, docker, bridges...)
        link_type="infiniband" if iface.startswith("ib") else "ether",
    )  # fmt: skip
    node.add("ip-link", rec, range(head, len(node.lines) + 1))


_OPTICS = {
    "aifabric_optics_rx_power_dbm": "rx_power_dbm",
    "aifabric_optics_tx_power_dbm": "tx_power_dbm",
    "aifabric_optics_tx_bias_amperes": "tx_bias_ma",
    "aifabric_optics_temperature_celsius": "temperature_c",
    "aifabric_optics_voltage_volts": "voltage_v",
    "aifabric_optics_rx_power_threshold_dbm": "rx_power_dbm",
    "aifabric_optics_tx_power_threshold_dbm": "tx_power_dbm",
    "aifabric_optics_temperature_threshold_celsius": "temperature_c",
}
"""Optics gauges → the :class:`TransceiverModule` field (or threshold key) they fill."""


def _optics_record(node: _Node, iface: str, samples: list[Sample], when: str) -> None:
    """One TransceiverModule of ``iface`` from its DOM gauges at the window's end, so the
    optics verdicts (Rx power against the module's own thresholds, S16/S20.5) run on it."""
    head = node.line(f"# ethtool -m {iface} (DOM) as read from Prometheus at {when}")
    mod = TransceiverModule(line=head, interface=iface, source="prometheus")
    for s in sorted(samples, key=lambda x: sorted(x.labels.items())):
        node.line(_quote(s, None))
        metric, v = s.labels["__name__"], s.value
        key = _OPTICS[metric]
        level = s.labels.get("level")
        if level is not None:
            if level in {"high_alarm", "high_warning", "low_warning", "low_alarm"}:
                setattr(mod.thresholds.setdefault(key, Threshold()), level, v)
        elif key in {"temperature_c", "voltage_v"}:
            setattr(mod, key, v)
        elif s.labels.get("lane", "").isdecimal():
            lane = mod.lane(int(s.labels["lane"]))
            if key == "tx_bias_ma":
                lane.tx_bias_ma = v * 1e3
            elif math.isinf(v) and v < 0:  # a dark lane: 0 mW
                setattr(lane, key, None)
                setattr(lane, key.replace("_dbm", "_mw"), 0.0)
            else:
                setattr(lane, key, v)
    node.add("ethtool-module", mod, range(head, len(node.lines) + 1))
