"""Derived records from nccl-tests results, pluggable-module DOM and ping series (see
:func:`aifabric.checks.diagnose.engine.deriver`), for ``checks/rules/perf-optics-ping.yaml``.

- ``nccl_tests_run``: one per nccl-tests test: how many ranks it really had (device lines, or the
  highest rank + 1 when the excerpt shows fewer), whether it was a single-rank run (one process,
  one GPU: busbw is 0 by definition, nothing crosses a link) and whether several single-rank runs
  interleaved (built without ``MPI=1`` or launched without mpirun: every process ran alone).
- ``busbw_gap``: the measured busbw of the largest message next to what
  :func:`aifabric.perf.estimate.estimate` gives for the hardware of the fabric file
  (``Evidence.fabric``, ``--fabric``), with the link that bounds the estimate. Without a fabric
  file nothing is derived: the hardware a nccl-tests table ran on (NICs, their speed, the
  topology) is not in its output, so the rule that needs this record cannot fire.
- ``optics_fault``: one per ``ethtool -m`` module with the lanes whose received power is under
  the module's own low alarm/warning threshold, that receive no light, or that flag LOS while
  their transmitter is lit. Lanes whose laser is off (0 mA bias or 0 mW Tx power: the unused
  lanes of a single-lambda or breakout module, a disabled transmitter, a module in low-power
  mode) are listed as ``unused_lanes`` and never counted as faults (S16, S20.5).
- ``rtt_jitter``: one per ping run with its RTT statistics from the replies (the first reply is
  left out when there are more than three: it often carries ARP/ND resolution), ``mdev`` as
  iputils computes it, ``jitter_ratio = mdev / avg``, ``spike_ratio = max / median`` and the
  loss; ``jittery`` when the variance is large for the path (S20.4).
- ``mtu_blackhole``: a ping that a router answered with *Frag needed and DF set* or that the
  sender refused (*message too long*), with the largest probe of the same subject that did pass
  (S11, S21).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.checks.diagnose.engine import Evidence, Item, deriver
from aifabric.errors import InputError
from aifabric.evidence.base import Record
from aifabric.perf.collectives import normalize_collective

__all__ = [
    "BusbwGap",
    "MtuBlackhole",
    "NcclTestsRun",
    "OpticsFault",
    "RttJitter",
    "infer_collective",
    "lane_state",
    "rtt_stats",
    "size_label",
]

ACCEPTANCE_SHARE = 0.7
"""S23: a healthy baseline reaches at least 70 % of what the links should give."""


# -- nccl-tests --------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class NcclTestsRun(Record):
    """What one nccl-tests test says about how it was launched."""

    record_type: ClassVar[str] = "nccl_tests_run"
    test: int
    collective: str | None = None
    """From the binary name, else inferred from the table (:func:`infer_collective`)."""
    collective_inferred: bool = False
    ranks: int = 0
    """Ranks of the run: ``max(device lines, highest rank + 1)``; 0 when no device line."""
    nodes: int = 0
    independent_runs: int = 1
    single_rank: bool = False
    """One rank in total (one process, one GPU) and not several interleaved runs."""
    rows: int = 0
    max_size_bytes: int | None = None
    busbw_at_max_GBps: float | None = None
    gpu: str | None = None


@dataclass(slots=True, kw_only=True)
class BusbwGap(Record):
    """Measured vs estimated busbw at the largest message of a test (S23)."""

    record_type: ClassVar[str] = "busbw_gap"
    test: int
    collective: str
    size_bytes: int
    size_label: str
    """``8 GiB``, ``512 MiB``: the size for messages."""
    measured_GBps: float
    expected_GBps: float
    ratio: float
    """measured / expected."""
    percent: int
    """``round(100 * ratio)``."""
    below_acceptance: bool
    """``ratio < 0.7`` (S23's acceptance share)."""
    nodes: int
    ranks: int
    bound_kind: str
    """What bounds the estimate: ``nvlink``, ``pcie``, ``network``, ``fabric``, ``tcp``."""
    bound_link: str
    algorithm: str


def _rows_by_test(items: list[Item]) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = defaultdict(list)
    for it in items:
        if it.record.record_type == "row":
            out[int(getattr(it.record, "test", 0))].append(it.record)
    return out


_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2,
    "int32": 4, "uint32": 4, "int": 4, "float": 4, "float32": 4,
    "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}  # fmt: skip


def infer_collective(rows: list[Any]) -> str | None:
    """``all_reduce`` when the table can only be AllReduce: a reduction (``redop`` not
    ``none``), no root (``-1`` or no root column), and ``count · typesize == size`` (the size of
    ReduceScatter and AllGather is ``count · typesize · nranks``, nccl-tests src/*.cu). ``None``
    when the rows do not say."""
    seen = False
    for r in rows:
        width = _TYPE_BYTES.get(str(r.data_type).lower())
        if r.size_bytes <= 0 or width is None:
            continue
        if r.redop in (None, "none") or (r.root is not None and r.root >= 0):
            return None
        if r.count * width != r.size_bytes:
            return None
        seen = True
    return "all_reduce" if seen else None


def _run_of(header: Any, rows: list[Any]) -> NcclTestsRun:
    ranks = int(header.ranks or 0)
    if header.highest_rank is not None:
        ranks = max(ranks, int(header.highest_rank) + 1)
    sized = [r for r in rows if r.size_bytes > 0 and r.busbw_GBps is not None]
    big = max(sized, key=lambda r: r.size_bytes) if sized else None
    independent = int(header.independent_runs or 1)
    return NcclTestsRun(
        line=header.line,
        test=header.test,
        collective=header.collective or infer_collective(rows),
        collective_inferred=header.collective is None and bool(rows),
        ranks=ranks,
        nodes=int(header.nodes or 0),
        independent_runs=independent,
        single_rank=ranks == 1 and independent == 1 and (header.n_gpus or 1) == 1,
        rows=len(rows),
        max_size_bytes=big.size_bytes if big else None,
        busbw_at_max_GBps=big.busbw_GBps if big else None,
        gpu=header.devices[0].gpu if header.devices else None,
    )


@deriver
def _nccl_tests_runs(ev: Evidence) -> Iterator[Item]:
    by_file: dict[int, list[Item]] = defaultdict(list)
    for item in ev.items:
        if item.kind == "nccl-tests" and item.file is not None:
            by_file[id(item.file)].append(item)
    for items in by_file.values():
        rows = _rows_by_test(items)
        for it in items:
            if it.record.record_type != "header":
                continue
            run = _run_of(it.record, rows.get(int(getattr(it.record, "test", 0)), []))
            yield Item(run, it.file, it.subject, it.kind)
            gap = _busbw_gap(ev, run, it.record)
            if gap is not None:
                yield Item(gap, it.file, it.subject, it.kind)


def _busbw_gap(ev: Evidence, run: NcclTestsRun, header: Any) -> BusbwGap | None:
    """The estimate of the fabric file at the largest measured size (``None`` without one)."""
    if ev.fabric is None or ev.catalog is None or run.single_rank or run.independent_runs > 1:
        return None
    if run.max_size_bytes is None or run.busbw_at_max_GBps is None:
        return None
    coll = normalize_collective(run.collective or "")
    if coll is None:
        return None
    from aifabric.perf.estimate import estimate  # noqa: PLC0415  (heavy: only with --fabric)
    from aifabric.perf.fabric import platform_from_fabric  # noqa: PLC0415

    try:
        platform = platform_from_fabric(ev.fabric, ev.catalog, nodes=run.nodes or None)
        est = estimate(platform, coll, [run.max_size_bytes])
    except (InputError, ValueError, KeyError):
        return None
    expected = est.rows[0].busbw_GBps
    if expected <= 0:
        return None
    ratio = run.busbw_at_max_GBps / expected
    return BusbwGap(
        line=header.line,
        test=run.test,
        collective=coll,
        size_bytes=run.max_size_bytes,
        size_label=size_label(run.max_size_bytes),
        measured_GBps=run.busbw_at_max_GBps,
        expected_GBps=round(expected, 2),
        ratio=round(ratio, 3),
        percent=round(100 * ratio),
        below_acceptance=ratio < ACCEPTANCE_SHARE,
        nodes=platform.nodes,
        ranks=platform.ranks,
        bound_kind=str(est.bottleneck.get("kind", "")),
        bound_link=str(est.bottleneck.get("link", "")),
        algorithm=est.rows[0].algorithm,
    )


def size_label(n: int) -> str:
    """``8589934592`` → ``8 GiB``; sizes that are not a whole binary unit stay in bytes."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


# -- optics -----------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class OpticsFault(Record):
    """Faulty and unused lanes of one pluggable module against its own thresholds."""

    record_type: ClassVar[str] = "optics_fault"
    interface: str | None = None
    vendor_pn: str | None = None
    faults: int = 0
    """Lanes at or beyond a low-alarm level, dark while lit, or LOS while lit."""
    warnings: int = 0
    """Lanes only under the low-warning threshold."""
    faulty_lanes: list[int] = field(default_factory=list)
    warning_lanes: list[int] = field(default_factory=list)
    unused_lanes: list[int] = field(default_factory=list)
    worst_rx_dbm: float | None = None
    rx_low_alarm_dbm: float | None = None
    rx_low_warning_dbm: float | None = None
    reasons: list[str] = field(default_factory=list)
    summary: str = ""
    """The reasons joined with ``; `` (for messages)."""


def _lit(lane: Any) -> bool | None:
    """The lane's own laser: on (bias or Tx power > 0), off (a 0 reading), unknown (None)."""
    readings = [v for v in (lane.tx_bias_ma, lane.tx_power_mw) if v is not None]
    if not readings:
        return None
    return any(v > 0 for v in readings)


def lane_state(lane: Any, low_alarm: float | None, low_warning: float | None) -> str:
    """``unused``, ``alarm`` (a fault), ``warning``, ``ok`` or ``unknown`` for one lane."""
    lit = _lit(lane)
    rx_mw, rx_dbm = lane.rx_power_mw, lane.rx_power_dbm
    if lit is False:
        return "unused"  # laser off: unused lane, Tx disabled, low-power mode
    if rx_mw is None and rx_dbm is None:
        if lane.rx_los and lit:
            return "alarm"
        return "unknown"  # LOS flags alone (port admin down?) or nothing measured
    if lane.rx_los and lit:
        return "alarm"
    dark = rx_mw == 0.0 or (rx_dbm is not None and rx_dbm <= -30.0)
    if dark and lit is None and not (low_alarm is not None and rx_dbm is not None):
        return "unknown"
    if dark:
        return "alarm"
    if rx_dbm is not None and low_alarm is not None and rx_dbm < low_alarm:
        return "alarm"
    if rx_dbm is not None and low_warning is not None and rx_dbm < low_warning:
        return "warning"
    return "ok"


@deriver
def _optics(ev: Evidence) -> Iterator[Item]:
    for item in ev.items:
        mod = item.record
        if mod.record_type != "transceiver_module" or not getattr(mod, "present", True):
            continue
        thr = getattr(mod, "thresholds", {}).get("rx_power_dbm")
        low_a = getattr(thr, "low_alarm", None)
        low_w = getattr(thr, "low_warning", None)
        out = OpticsFault(
            line=mod.line,
            interface=getattr(mod, "interface", None) or "its port",
            vendor_pn=getattr(mod, "vendor_pn", None),
            rx_low_alarm_dbm=low_a,
            rx_low_warning_dbm=low_w,
        )
        lanes = list(getattr(mod, "lanes", []))
        for lane in lanes:
            state = lane_state(lane, low_a, low_w)
            if state == "unused":
                out.unused_lanes.append(lane.lane)
                continue
            if lane.rx_power_dbm is not None and (
                out.worst_rx_dbm is None or lane.rx_power_dbm < out.worst_rx_dbm
            ):
                out.worst_rx_dbm = lane.rx_power_dbm
            if state == "alarm":
                out.faulty_lanes.append(lane.lane)
                if lane.rx_los:
                    out.reasons.append(f"lane {lane.lane}: Rx LOS with its transmitter lit")
                else:
                    out.reasons.append(
                        f"lane {lane.lane}: Rx {_dbm(lane.rx_power_dbm)} below the low alarm "
                        f"{_dbm(low_a)}"
                    )
            elif state == "warning":
                out.warning_lanes.append(lane.lane)
        flags = getattr(mod, "flags", {})
        single = len(lanes) <= 1 and not out.unused_lanes
        if flags.get("rx_power_low_alarm") and single and not out.faulty_lanes:
            out.faulty_lanes.append(1)
            out.reasons.append("module flags Rx power low alarm")
        out.faults, out.warnings = len(out.faulty_lanes), len(out.warning_lanes)
        out.summary = "; ".join(out.reasons)
        yield Item(out, item.file, item.subject, item.kind)


def _dbm(v: float | None) -> str:
    return "no light" if v is None else f"{v:.2f} dBm"


# -- ping -------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class RttJitter(Record):
    """RTT statistics of one ping run (ms)."""

    record_type: ClassVar[str] = "rtt_jitter"
    target: str | None = None
    samples: int = 0
    min_ms: float | None = None
    avg_ms: float | None = None
    median_ms: float | None = None
    max_ms: float | None = None
    mdev_ms: float | None = None
    jitter_ratio: float | None = None
    """mdev / avg."""
    trimmed_mdev_ms: float | None = None
    """mdev without the slowest tenth of the replies (at least one); None from a summary alone."""
    trimmed_ratio: float | None = None
    """trimmed mdev / the average of the same replies."""
    spike_ratio: float | None = None
    """max / median."""
    loss_pct: float | None = None
    lost: int | None = None
    """probes sent without a reply (transmitted − received), from the summary."""
    duplicates: int = 0
    jittery: bool = False
    reason: str = ""


def rtt_stats(times_ms: list[float]) -> dict[str, float]:
    """min, avg, median, max and mdev (iputils: ``sqrt(mean(t²) − mean(t)²)``) of a series."""
    n = len(times_ms)
    avg = sum(times_ms) / n
    mdev = math.sqrt(max(sum(t * t for t in times_ms) / n - avg * avg, 0.0))
    return {
        "min": min(times_ms),
        "avg": avg,
        "median": statistics.median(times_ms),
        "max": max(times_ms),
        "mdev": mdev,
    }


JITTER_RATIO = 0.5
"""mdev at half the average RTT or more: the path's queueing varies as much as its length."""
JITTER_MIN_MDEV_MS = 0.1
"""...and at least 0.1 ms of mdev: below that the variance is the kernel's own ping path
(scheduling, softirq), not a queue. Six healthy pings between network namespaces on one 2-core
machine (aifabric lab, issue 17) had mdev 0.017-0.045 ms at 65-100 % of averages of
0.023-0.056 ms; a queue that matters to a collective holds packets for hundreds of
microseconds (1 ms is 12.5 MB at 100 Gb/s)."""
SPIKE_RATIO = 5.0
SPIKE_MIN_MS = 5.0
MIN_SAMPLES = 10
TRIM_SHARE = 0.1
"""Share of the slowest replies left out of the trimmed mdev. Jitter is a variance that lasts (a
queue that fills and drains); one late reply lifts iputils' mdev by itself (29 replies at
0.05 ms and one at 1.8 ms give mdev 0.31 ms, 290 % of the average) and is the spike test's to
judge (``SPIKE_*``). So the mdev test also holds on the replies without the slowest tenth."""


def _judge(j: RttJitter) -> None:
    if j.samples < MIN_SAMPLES or j.duplicates:
        return  # too short to judge, or a broadcast ping (every host answers)
    why = []
    if (
        j.jitter_ratio is not None
        and j.jitter_ratio >= JITTER_RATIO
        and (j.mdev_ms or 0.0) >= JITTER_MIN_MDEV_MS
        and (j.trimmed_ratio is None or j.trimmed_ratio >= JITTER_RATIO)
        and (j.trimmed_mdev_ms is None or j.trimmed_mdev_ms >= JITTER_MIN_MDEV_MS)
    ):
        why.append(f"mdev {j.mdev_ms:.3f} ms is {j.jitter_ratio:.0%} of the average")
    if (
        j.spike_ratio is not None
        and j.max_ms is not None
        and j.median_ms is not None
        and j.spike_ratio >= SPIKE_RATIO
        and j.max_ms - j.median_ms >= SPIKE_MIN_MS
    ):
        why.append(f"max {j.max_ms:.3f} ms is {j.spike_ratio:.1f}x the median {j.median_ms:.3f}")
    if j.loss_pct is not None and 0 < j.loss_pct < 100 and why:
        # loss on its own is the ping-loss verdict's (fabric.packet-loss); here it only adds to
        # a variance that is already there
        why.append(f"{j.loss_pct:g}% loss")
    j.jittery = bool(why)
    j.reason = "; ".join(why)


def _jitter(target: str | None, replies: list[Item], summary: Any | None) -> RttJitter | None:
    recs: list[Any] = [r.record for r in replies]
    times = [r.time_us / 1000.0 for r in recs if r.time_us is not None and not r.duplicate]
    dups = sum(1 for r in recs if r.duplicate)
    if summary is not None:
        dups = max(dups, int(getattr(summary, "duplicates", 0) or 0))
    line = replies[0].record.line if replies else int(getattr(summary, "line", 0) or 0)
    j = RttJitter(line=line, target=target)
    if len(times) > 3:
        times = times[1:]  # the first probe often waits for ARP/ND
    if times:
        s = {k: round(v, 3) for k, v in rtt_stats(times).items()}
        j.samples = len(times)
        j.min_ms, j.avg_ms, j.median_ms = s["min"], s["avg"], s["median"]
        j.max_ms, j.mdev_ms = s["max"], s["mdev"]
        kept = sorted(times)[: len(times) - max(1, int(len(times) * TRIM_SHARE))]
        if len(kept) >= 2:
            t = rtt_stats(kept)
            j.trimmed_mdev_ms = round(t["mdev"], 3)
            j.trimmed_ratio = round(t["mdev"] / t["avg"], 4) if t["avg"] else None
    elif summary is not None and summary.rtt_avg_us is not None:
        j.samples = int(summary.received)
        j.min_ms = summary.rtt_min_us / 1000.0
        j.avg_ms = summary.rtt_avg_us / 1000.0
        j.max_ms = summary.rtt_max_us / 1000.0
        if summary.rtt_mdev_us is not None:
            j.mdev_ms = summary.rtt_mdev_us / 1000.0
    else:
        return None
    if j.avg_ms and j.mdev_ms is not None:
        j.jitter_ratio = round(j.mdev_ms / j.avg_ms, 4)
    if j.median_ms and j.max_ms is not None:
        j.spike_ratio = round(j.max_ms / j.median_ms, 3)
    j.duplicates = dups
    j.loss_pct = getattr(summary, "loss_pct", None) if summary is not None else None
    if summary is not None and getattr(summary, "transmitted", None) is not None:
        j.lost = max(int(summary.transmitted) - int(summary.received), 0)
    _judge(j)
    return j


@dataclass(slots=True, kw_only=True)
class MtuBlackhole(Record):
    """A probe too big for the path: where it failed and what did pass (S11)."""

    record_type: ClassVar[str] = "mtu_blackhole"
    target: str | None = None
    failed_bytes: int | None = None
    """IP packet size of the failing probe (payload + 28 for IPv4)."""
    mtu_bytes: int | None = None
    """MTU the router (``Frag needed``) or the local stack (``mtu=N``) reported."""
    reported_by: str | None = None
    """The router's address for ``Frag needed``; ``local`` for ``message too long``."""
    kind: str = ""
    passed_bytes: int | None = None
    """Largest probe of the same subject that got replies (``None``: none in the evidence)."""


@dataclass(slots=True)
class _PingRun:
    header: Any | None = None
    replies: list[Item] = field(default_factory=list)
    errors: list[Item] = field(default_factory=list)
    summary: Any | None = None
    first: Item | None = None


def _ping_runs(items: list[Item]) -> list[_PingRun]:
    runs: list[_PingRun] = []
    cur: _PingRun | None = None
    for it in items:
        rtype = it.record.record_type
        if rtype == "ping_header":
            cur = _PingRun(header=it.record, first=it)
            runs.append(cur)
            continue
        if cur is None or cur.summary is not None:
            cur = _PingRun(first=it)
            runs.append(cur)
        if rtype == "ping_reply":
            cur.replies.append(it)
        elif rtype == "ping_error":
            cur.errors.append(it)
        elif rtype == "ping_summary":
            cur.summary = it.record
    return runs


@deriver
def _ping(ev: Evidence) -> Iterator[Item]:
    by_file: dict[int, list[Item]] = defaultdict(list)
    for item in ev.items:
        if item.kind == "ping" and item.file is not None:
            by_file[id(item.file)].append(item)
    passed: dict[str, list[tuple[int, str | None]]] = defaultdict(list)
    failed: list[tuple[Item, MtuBlackhole]] = []
    for items in by_file.values():
        for run in _ping_runs(items):
            target = (
                getattr(run.header, "target", None)
                or getattr(run.summary, "target", None)
                or (getattr(run.replies[0].record, "source", None) if run.replies else None)
            )
            size = getattr(run.header, "packet_bytes", None)
            anchor = run.first
            if anchor is None:
                continue
            if run.replies or run.summary is not None:
                j = _jitter(target, run.replies, run.summary)
                if j is not None:
                    yield Item(j, anchor.file, anchor.subject, anchor.kind)
            if run.replies and size is not None:
                passed[anchor.subject].append((size, target))
            mtu_errs: list[Any] = [
                e.record
                for e in run.errors
                if getattr(e.record, "kind", None) in ("frag-needed", "message-too-long")
            ]
            if mtu_errs:
                rec = next((e for e in mtu_errs if e.kind == "frag-needed"), mtu_errs[0])
                router = next(e for e in run.errors if e.record is rec)
                mtus = [e.mtu_bytes for e in mtu_errs if e.mtu_bytes is not None]
                hole = MtuBlackhole(
                    line=rec.line,
                    target=target,
                    failed_bytes=size,
                    mtu_bytes=min(mtus) if mtus else None,
                    reported_by=rec.source if rec.kind == "frag-needed" else "local",
                    kind=rec.kind,
                )
                failed.append((router, hole))
    for item, hole in failed:
        ok = [s for s, _ in passed.get(item.subject, []) if hole.failed_bytes is None
              or s < hole.failed_bytes]  # fmt: skip
        hole.passed_bytes = max(ok) if ok else None
        yield Item(hole, item.file, item.subject, item.kind)
