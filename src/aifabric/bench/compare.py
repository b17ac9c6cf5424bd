"""Compare a benchmark run with its history and with what the hardware should give (S23, S24).

Three questions, one answer shape (:class:`~aifabric.findings.Finding`):

1. **History** (``bench.regression``, error; ``bench.latency-regression``, warning;
   ``bench.no-history``, info). Per message size, the baseline is the runs of
   :func:`select_history`: same collective, tool, cluster, rank count and pair, newest first,
   the last ``N`` (default 10). Its centre is the median ``m`` of their busbw at that size and
   its spread the median absolute deviation ``MAD = median(|x_i - m|)``; ``σ = 1.4826 · MAD``
   estimates the standard deviation of normal noise while ignoring a few wild runs. A size
   regresses when the new busbw ``b`` is below *both* ``m - k·σ`` (outside the noise, default
   ``k = 3``) and ``m · (1 - e)`` (a minimum effect size, default ``e = 5 %``, so a very quiet
   history does not flag a 0.5 % dip). Sizes below ``min_size_bytes`` (1 MiB) are
   latency-bound: their busbw is a few GB/s of launch overhead and jitter, so they are judged on
   ``time_us`` with the mirrored rule (``t > m + k·σ`` and ``t > m · (1 + e)``) and reported as a
   warning, never as the exit-1 regression. With fewer than ``min_history`` runs (3) at a size
   there is no band: the size is ``no-history`` (info) and only the expectation judges it.
2. **Expectation** (``bench.below-expected``, warning). With a platform (a fabric file), the
   estimator (:func:`aifabric.perf.estimate.estimate`, what ``aifabric estimate`` prints) gives
   the realistic busbw of every size of the run; a bandwidth-bound size more than
   ``expect_tolerance`` (20 %) below it is reported. The seed's acceptance rule (S23: ``busbw ≥
   70 %`` of the theoretical link bandwidth, ``min(NICs · speed / 8, NVLink)`` per GPU, the
   reference of ``design.expected-busbw``) is shown beside it in every row and message.
3. **Outliers** (``bench.outlier-host``): in a pairwise sweep (runs with ``pair`` set), each
   pair's busbw at the largest size all pairs share is compared with the median of all pairs
   by the same MAD rule; a host every one of whose pairs (at least two) is low is the bad node
   (error); a host with most but not all of its pairs low is a warning.

Verdict of a row (the JSON ``rows``): ``regression``, ``slower``, ``below-expected``,
``no-history``, ``improved`` or ``ok``; the worst one wins.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from aifabric.bench.model import BenchRow, BenchRun
from aifabric.catalog import Catalog
from aifabric.errors import AifabricError
from aifabric.explain import Explained
from aifabric.findings import Finding, Summary, summarize
from aifabric.model import Fabric
from aifabric.perf.collectives import Collective, normalize_collective
from aifabric.units import format_bytes

if TYPE_CHECKING:
    from aifabric.perf.estimate import Platform

__all__ = [
    "HEALTHY_SHARE",
    "MAD_TO_SIGMA",
    "Band",
    "Comparison",
    "Expectation",
    "SizeRow",
    "Thresholds",
    "Verdict",
    "compare_run",
    "expectation_for",
    "improvement_ceiling",
    "outlier_hosts",
    "platform_for_run",
    "regression_floor",
    "robust_band",
    "run_rows",
    "select_history",
]

MAD_TO_SIGMA = 1.4826
"""``σ ≈ 1.4826 · MAD`` for normally distributed noise (1 / Φ⁻¹(3/4)); Rousseeuw & Croux,
"Alternatives to the Median Absolute Deviation", JASA 88 (1993),
https://doi.org/10.1080/01621459.1993.10476408."""
HEALTHY_SHARE = 0.70
"""S23: a healthy result reaches at least 70 % of the theoretical link bandwidth."""
REFS = ["S23", "S24", "https://doi.org/10.1080/01621459.1993.10476408"]

Verdict = Literal["regression", "slower", "below-expected", "no-history", "improved", "ok"]
_RANK: dict[str, int] = {
    "regression": 5,
    "slower": 4,
    "below-expected": 3,
    "no-history": 2,
    "improved": 1,
    "ok": 0,
}


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The knobs of the comparison (defaults documented in the module docstring)."""

    k: float = 3.0
    """Band half-width in robust σ."""
    min_effect: float = 0.05
    """Minimum relative effect for a regression (0.05: 5 % below the median)."""
    min_history: int = 3
    """Runs needed at a size before it has a band."""
    last: int = 10
    """Newest runs of history used."""
    min_size_bytes: int = 1 << 20
    """Sizes below are latency-bound: judged on time_us, reported as warnings."""
    expect_tolerance: float = 0.20
    """Below-expected when busbw < expected · (1 - tolerance)."""


@dataclass(frozen=True, slots=True)
class Band:
    """Median and MAD band of ``n`` values: ``low/high = median ∓ k·1.4826·MAD``."""

    n: int
    median: float
    mad: float
    sigma: float
    low: float
    high: float


def robust_band(values: Sequence[float], k: float = 3.0) -> Band:
    """The median/MAD band of ``values`` (non-empty): see :class:`Band`.

    >>> robust_band([10.0, 11.0, 12.0, 13.0, 50.0], k=3.0).median
    12.0
    """
    if not values:
        raise ValueError("robust_band needs at least one value")
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    sigma = MAD_TO_SIGMA * mad
    return Band(len(values), med, mad, sigma, med - k * sigma, med + k * sigma)


def regression_floor(band: Band, t: Thresholds) -> float:
    """Busbw below this is a regression: ``min(m - k·σ, m·(1 - e))``."""
    return min(band.low, band.median * (1.0 - t.min_effect))


def improvement_ceiling(band: Band, t: Thresholds) -> float:
    """Busbw above: an improvement; time above: a slowdown. ``max(m + k·σ, m·(1 + e))``."""
    return max(band.high, band.median * (1.0 + t.min_effect))


def run_rows(run: BenchRun) -> dict[int, BenchRow]:
    """One row per message size of ``run``: the out-of-place result where there is one (what
    nccl-tests users quote and the calibration fits), else the in-place one; a size printed
    twice keeps its first line."""
    out: dict[int, BenchRow] = {}
    for row in run.rows:
        if row.size_bytes <= 0 or not math.isfinite(row.busbw_gbps):
            continue
        have = out.get(row.size_bytes)
        if have is None or (have.in_place and not row.in_place):
            out[row.size_bytes] = row
    return dict(sorted(out.items()))


def _coll_key(name: str) -> str:
    return name.strip().lower().removesuffix("_perf").replace("_", "").replace("-", "")


def _pair_key(pair: tuple[str, str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(pair)) if pair is not None else None


def select_history(
    run: BenchRun, candidates: Iterable[BenchRun], *, last: int = 10
) -> list[BenchRun]:
    """The newest ``last`` runs of ``candidates`` comparable with ``run``: same collective
    (``all_reduce`` = ``all_reduce_perf`` = ``allreduce``) and tool, same cluster and rank count
    where both know them, the same pair (or both not pairwise); ``run`` itself (same id, or same
    source and start) is left out."""
    want = _coll_key(run.collective)
    out: list[BenchRun] = []
    for h in candidates:
        if h is run or (run.id is not None and h.id == run.id):
            continue
        if run.source is not None and h.source == run.source and h.started == run.started:
            continue
        if _coll_key(h.collective) != want or h.tool != run.tool:
            continue
        if run.cluster is not None and h.cluster is not None and h.cluster != run.cluster:
            continue
        if run.ranks is not None and h.ranks is not None and h.ranks != run.ranks:
            continue
        if _pair_key(h.pair) != _pair_key(run.pair):
            continue
        out.append(h)
    out.sort(key=lambda r: r.started, reverse=True)
    return out[: max(last, 0)]


# -- expectation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the estimator says the platform gives, per size, and S23's theoretical reference."""

    collective: Collective
    busbw_gbps: dict[int, float]
    theoretical_gbps: float
    """Per-GPU link bandwidth S23's 70 % rule refers to: ``min(NICs·speed/8, NVLink)``."""
    bound: str
    """The link that bounds large messages (the estimator's bottleneck)."""
    platform: str
    steps: tuple[Explained, ...] = field(default=(), compare=False)

    @property
    def rule70_gbps(self) -> float:
        return HEALTHY_SHARE * self.theoretical_gbps


def platform_for_run(fabric: Fabric, catalog: Catalog, run: BenchRun) -> Platform:
    """The fabric's platform over as many servers as the run had ranks (``ranks / GPUs per
    server`` when that divides; all GPU servers of the fabric otherwise)."""
    from aifabric.perf.fabric import platform_from_fabric  # noqa: PLC0415 (heavy: --fabric only)

    p = platform_from_fabric(fabric, catalog)
    g = p.gpus_per_node
    if run.ranks and g > 0 and run.ranks % g == 0 and 0 < run.ranks // g <= p.nodes:
        return platform_from_fabric(fabric, catalog, nodes=run.ranks // g)
    if run.ranks and 0 < run.ranks < g:
        return replace(p, nodes=1, gpus_per_node=run.ranks)
    return p


def expectation_for(p: Platform, collective: str, sizes: Iterable[int]) -> Expectation | None:
    """The estimator's busbw for ``sizes`` of ``collective`` on ``p`` (``None`` for what it does
    not model: send/recv, perftest pairs, unknown names, or no sizes)."""
    coll = normalize_collective(collective)
    wanted = sorted({s for s in sizes if s > 0})
    if coll is None or not wanted:
        return None
    try:
        from aifabric.perf.estimate import estimate  # noqa: PLC0415 (heavy: --fabric only)

        est = estimate(p, coll, wanted)
    except AifabricError:
        return None
    line = p.nics_per_node * p.nic_speed_gbps / 8.0
    nvlink = p.gpu.nccl_scale_up_GBps or line
    multi = min(line, nvlink) if p.gpus_per_node > 1 else line
    reference = nvlink if p.nodes <= 1 else multi
    b = est.bottleneck
    theory = Explained.fast(
        quantity="theoretical link bandwidth (S23 reference)",
        value=round(reference, 2),
        unit="GB/s",
        formula="n > 1 node: min(NICs x speed / 8, NVLink); one node: NVLink",
        inputs={
            "NICs": p.nics_per_node,
            "speed_Gbps": p.nic_speed_gbps,
            "NVLink_GBps": round(nvlink, 2),
            "nodes": p.nodes,
        },
        sources=["S23"],
    )
    return Expectation(
        collective=coll,
        busbw_gbps={r.size_bytes: r.busbw_GBps for r in est.rows},
        theoretical_gbps=reference,
        bound=f"{b.get('link')} ({b.get('limit_GBps')} GB/s)",
        platform=f"{p.nodes} x {p.gpus_per_node} {p.gpu.name}, {p.nics_per_node} x "
        f"{p.nic_speed_gbps:g}G {p.transport}",
        steps=(theory,),
    )


# -- comparison with history ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SizeRow:
    """One message size of the comparison (the JSON ``rows``)."""

    size_bytes: int
    busbw_gbps: float
    time_us: float
    judged_on: Literal["busbw", "time_us"]
    busbw_band: Band | None
    time_band: Band | None
    expected_busbw: float | None
    rule70_gbps: float | None
    verdict: Verdict
    threshold: float | None = None
    """The value the judged quantity was compared with (busbw floor, or time ceiling)."""

    def to_json(self) -> dict[str, Any]:
        b, t = self.busbw_band, self.time_band

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)

        return {
            "size_bytes": self.size_bytes,
            "busbw_gbps": r(self.busbw_gbps),
            "baseline_median": r(b.median) if b else None,
            "band_low": r(b.low) if b else None,
            "band_high": r(b.high) if b else None,
            "expected_busbw": r(self.expected_busbw),
            "verdict": self.verdict,
            "judged_on": self.judged_on,
            "history_runs": b.n if b else 0,
            "mad": r(b.mad) if b else None,
            "time_us": r(self.time_us),
            "time_median_us": r(t.median) if t else None,
            "rule70_busbw": r(self.rule70_gbps),
            "threshold": r(self.threshold),
        }


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_run`."""

    run: BenchRun
    history: tuple[BenchRun, ...]
    rows: tuple[SizeRow, ...]
    findings: tuple[Finding, ...]
    expectation: Expectation | None = None

    @property
    def summary(self) -> Summary:
        return summarize(self.findings)

    def to_json(self) -> dict[str, Any]:
        """``findings``, ``summary``, ``rows`` (the fixed keys) and the run compared."""
        run = self.run
        return {
            "findings": [f.model_dump(mode="json") for f in self.findings],
            "summary": self.summary.model_dump(),
            "rows": [r.to_json() for r in self.rows],
            "run": {
                "collective": run.collective,
                "tool": run.tool,
                "cluster": run.cluster,
                "ranks": run.ranks,
                "source": run.source,
                "started": run.started.isoformat(),
            },
            "history_ids": [h.id for h in self.history],
            "expectation": None
            if self.expectation is None
            else {
                "platform": self.expectation.platform,
                "bound": self.expectation.bound,
                "theoretical_gbps": round(self.expectation.theoretical_gbps, 3),
                "rule70_gbps": round(self.expectation.rule70_gbps, 3),
            },
        }


def _judge(
    size: int,
    row: BenchRow,
    bw: list[float],
    times: list[float],
    exp: Expectation | None,
    t: Thresholds,
) -> SizeRow:
    busbw_band = robust_band(bw, t.k) if bw else None
    time_band = robust_band(times, t.k) if times else None
    expected = exp.busbw_gbps.get(size) if exp else None
    rule70 = exp.rule70_gbps if exp else None
    large = size >= t.min_size_bytes
    verdict: Verdict = "ok"
    threshold: float | None = None
    if len(bw) < t.min_history:
        verdict = "no-history"
    elif large and busbw_band is not None:
        threshold = regression_floor(busbw_band, t)
        if row.busbw_gbps < threshold:
            verdict = "regression"
        elif row.busbw_gbps > improvement_ceiling(busbw_band, t):
            verdict = "improved"
    elif time_band is not None and row.time_us > 0:
        threshold = improvement_ceiling(time_band, t)
        if row.time_us > threshold:
            verdict = "slower"
        elif row.time_us < regression_floor(time_band, t):
            verdict = "improved"
    if (
        large
        and expected is not None
        and row.busbw_gbps < expected * (1.0 - t.expect_tolerance)
        and _RANK[verdict] < _RANK["below-expected"]
    ):
        verdict = "below-expected"
    return SizeRow(
        size,
        row.busbw_gbps,
        row.time_us,
        "busbw" if large else "time_us",
        busbw_band,
        time_band,
        expected,
        rule70,
        verdict,
        threshold,
    )


def compare_run(
    run: BenchRun,
    history: Iterable[BenchRun],
    *,
    expectation: Expectation | None = None,
    thresholds: Thresholds | None = None,
) -> Comparison:
    """Judge every size of ``run`` against ``history`` (filtered by :func:`select_history`)
    and ``expectation``; findings as in the module docstring."""
    t = thresholds or Thresholds()
    hist = select_history(run, history, last=t.last)
    hist_rows = [run_rows(h) for h in hist]
    rows: list[SizeRow] = []
    for size, row in run_rows(run).items():
        present = [hr[size] for hr in hist_rows if size in hr]
        bw = [r.busbw_gbps for r in present]
        times = [r.time_us for r in present if r.time_us > 0]
        rows.append(_judge(size, row, bw, times, expectation, t))
    findings = _findings(run, hist, rows, expectation, t)
    return Comparison(run, tuple(hist), tuple(rows), tuple(findings), expectation)


def _target(run: BenchRun) -> str:
    where = run.cluster or "cluster ?"
    ranks = f", {run.ranks} ranks" if run.ranks else ""
    pair = f", pair {run.pair[0]}-{run.pair[1]}" if run.pair else ""
    return f"{run.collective} ({run.tool}) on {where}{ranks}{pair}"


def _sizes(rows: Sequence[SizeRow]) -> str:
    return ", ".join(format_bytes(r.size_bytes) for r in rows)


def _band_text(r: SizeRow, b: Band, value: float, unit: str) -> str:
    return (
        f"{format_bytes(r.size_bytes)}: {value:.4g} {unit}; history median {b.median:.4g}, "
        f"MAD {b.mad:.3g}, sigma {b.sigma:.3g}, band [{b.low:.4g}, {b.high:.4g}], "
        f"threshold {r.threshold:.4g}, n={b.n}"
    )


def _findings(
    run: BenchRun,
    hist: Sequence[BenchRun],
    rows: Sequence[SizeRow],
    exp: Expectation | None,
    t: Thresholds,
) -> list[Finding]:
    out: list[Finding] = []
    target = _target(run)
    src = run.source
    rule = (
        f"b < min(m - k x 1.4826 x MAD, m x (1 - e)) with k={t.k:g}, e={t.min_effect:g}, "
        f"m and MAD over the last {t.last} comparable runs (here {len(hist)})"
    )
    reg = [r for r in rows if r.verdict == "regression" and r.busbw_band]
    if reg:
        worst = min(reg, key=lambda r: r.busbw_gbps / max(_band(r.busbw_band).median, 1e-12))
        wb = _band(worst.busbw_band)
        drop = 1.0 - worst.busbw_gbps / wb.median if wb.median > 0 else 0.0
        out.append(
            Finding(
                check="bench.regression",
                severity="error",
                target=target,
                message=(
                    f"busbw below the history band at {_sizes(reg)}: worst "
                    f"{format_bytes(worst.size_bytes)} {worst.busbw_gbps:.1f} GB/s vs median "
                    f"{wb.median:.1f} GB/s ({drop:.0%} lower)" + _rule70_text(reg, exp)
                ),
                expected={
                    format_bytes(r.size_bytes): round(_band(r.busbw_band).median, 2) for r in reg
                },
                actual={format_bytes(r.size_bytes): round(r.busbw_gbps, 2) for r in reg},
                evidence=[
                    *(_band_text(r, _band(r.busbw_band), r.busbw_gbps, "GB/s") for r in reg),
                    *([f"run: {src}"] if src else []),
                ],
                explanation=(
                    "Per message size, the history's median m and median absolute deviation MAD "
                    "give a noise band robust to a few bad runs (sigma = 1.4826 x MAD); a size "
                    f"regresses when {rule}. Bandwidth-bound sizes (>= "
                    f"{format_bytes(t.min_size_bytes)}) are judged on busbw."
                ),
                fix=(
                    "compare the run's environment with the baseline's (bench history; NCCL and "
                    "driver versions, NCCL_* variables, the last bench mark-change), then look for "
                    "the slow link: a pairwise sweep judged by bench compare (it names the "
                    "outlier host), aifabric diagnose on the hosts' counters (PFC pauses, CNPs, "
                    "link errors)"
                ),
                refs=REFS,
            )
        )
    slow = [r for r in rows if r.verdict == "slower" and r.time_band]
    if slow:
        out.append(
            Finding(
                check="bench.latency-regression",
                severity="warning",
                target=target,
                message=f"time per iteration above the history band at {_sizes(slow)} "
                "(latency-bound sizes)",
                expected={
                    format_bytes(r.size_bytes): round(_band(r.time_band).median, 2) for r in slow
                },
                actual={format_bytes(r.size_bytes): round(r.time_us, 2) for r in slow},
                evidence=[_band_text(r, _band(r.time_band), r.time_us, "us") for r in slow],
                explanation=(
                    f"Sizes below {format_bytes(t.min_size_bytes)} are latency-bound, so they are "
                    "judged on time_us: t > max(m + k x 1.4826 x MAD, m x (1 + e)) with "
                    f"k={t.k:g}, e={t.min_effect:g}. Launch overhead and jitter dominate them, so "
                    "this is a warning, not a bandwidth regression."
                ),
                fix="check NCCL_ALGO/NCCL_PROTO and version changes, CPU frequency and host load",
                refs=REFS,
            )
        )
    below = [r for r in rows if r.verdict == "below-expected" and r.expected_busbw]
    if below and exp is not None:
        out.append(
            Finding(
                check="bench.below-expected",
                severity="warning",
                target=target,
                message=(
                    f"busbw more than {t.expect_tolerance:.0%} below the estimate at "
                    f"{_sizes(below)}" + _rule70_text(below, exp)
                ),
                expected={
                    format_bytes(r.size_bytes): round(r.expected_busbw or 0.0, 2) for r in below
                },
                actual={format_bytes(r.size_bytes): round(r.busbw_gbps, 2) for r in below},
                evidence=[
                    f"{format_bytes(r.size_bytes)}: {r.busbw_gbps:.4g} GB/s, estimate "
                    f"{r.expected_busbw:.4g} GB/s ({r.busbw_gbps / (r.expected_busbw or 1):.0%})"
                    for r in below
                ]
                + [f"platform: {exp.platform}; bound by {exp.bound}"]
                + [s.line() for s in exp.steps],
                explanation=(
                    "expected = the estimator's busbw for this platform and size (aifabric "
                    "estimate FABRIC --explain gives its derivation: NIC goodput, PCIe, NCCL's "
                    f"algorithm and protocol); flagged when b < expected x (1 - "
                    f"{t.expect_tolerance:g}). S23's acceptance rule b >= 0.7 x theoretical is "
                    f"{exp.rule70_gbps:.1f} GB/s (theoretical {exp.theoretical_gbps:.1f} GB/s)."
                ),
                fix=(
                    "run the pairwise sweep to find a slow host or link; check GPUDirect RDMA, "
                    "PCIe width and NIC speed on the hosts (aifabric probe, aifabric diagnose)"
                ),
                refs=REFS,
            )
        )
    nohist = [r for r in rows if _n(r) < t.min_history]
    if nohist:
        fallback = "the expectation only" if exp is not None else "nothing (give --fabric)"
        out.append(
            Finding(
                check="bench.no-history",
                severity="info",
                target=target,
                message=(
                    f"fewer than {t.min_history} comparable runs at {_sizes(nohist)} "
                    f"({len(hist)} runs of history): judged against {fallback}"
                ),
                expected=t.min_history,
                actual=len(hist),
                evidence=[f"history filter: {target}"],
                explanation=(
                    "A median/MAD band needs at least three runs; with fewer any one run would "
                    "define normal. Import healthy runs (bench import) to build the baseline."
                ),
                fix="import this and later healthy runs with aifabric bench import",
                refs=["S23"],
            )
        )
    return out


def _n(r: SizeRow) -> int:
    return r.busbw_band.n if r.busbw_band else 0


def _band(band: Band | None) -> Band:
    if band is None:  # pragma: no cover - callers filter on the band first
        raise ValueError("row without a history band")
    return band


def _rule70_text(rows: Sequence[SizeRow], exp: Expectation | None) -> str:
    if exp is None:
        return ""
    fail = [r for r in rows if r.busbw_gbps < exp.rule70_gbps]
    status = f"fails at {_sizes(fail)}" if fail else "passes"
    return f"; S23's 70% rule ({exp.rule70_gbps:.1f} GB/s of {exp.theoretical_gbps:.1f}) {status}"


# -- pairwise outliers ------------------------------------------------------------------------


def outlier_hosts(
    runs: Iterable[BenchRun], *, thresholds: Thresholds | None = None
) -> list[Finding]:
    """Find the bad node of a pairwise sweep: see the module docstring (item 3).

    Each pair's figure is its busbw at the largest size every pair measured (falling back to
    its largest size); a pair is low when ``b < min(m - k·σ, m·(1 - e))`` over all pairs of the
    same collective and tool. A host with at least two pairs, all low, is an error; a host with
    more than half of its (at least three) pairs low is a warning.
    """
    t = thresholds or Thresholds()
    groups: dict[tuple[str, str], list[BenchRun]] = defaultdict(list)
    for r in runs:
        if r.pair is not None and r.pair[0] != r.pair[1]:
            groups[(_coll_key(r.collective), r.tool)].append(r)
    out: list[Finding] = []
    for members in groups.values():
        out.extend(_outliers_of(members, t))
    return out


def _outliers_of(members: list[BenchRun], t: Thresholds) -> list[Finding]:
    tables = [run_rows(r) for r in members]
    common = set.intersection(*(set(tb) for tb in tables)) if tables else set()
    size = max(common) if common else None
    values: dict[tuple[str, str], float] = {}
    for run, tb in zip(members, tables, strict=True):
        if not tb or run.pair is None:
            continue
        s = size if size is not None else max(tb)
        pair = (min(run.pair), max(run.pair))
        values[pair] = min(values.get(pair, math.inf), tb[s].busbw_gbps)
    if len(values) < 4:
        return []
    band = robust_band(list(values.values()), t.k)
    floor = regression_floor(band, t)
    low = {p for p, v in values.items() if v < floor}
    by_host: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for p in values:
        by_host[p[0]].append(p)
        by_host[p[1]].append(p)
    out: list[Finding] = []
    coll = members[0].collective
    for host in sorted(by_host):
        pairs = by_host[host]
        bad = [p for p in pairs if p in low]
        if len(pairs) >= 2 and len(bad) == len(pairs):
            severity: Literal["error", "warning"] = "error"
        elif len(pairs) >= 3 and len(bad) * 2 > len(pairs):
            severity = "warning"
        else:
            continue
        mean_low = statistics.median(values[p] for p in bad)
        out.append(
            Finding(
                check="bench.outlier-host",
                severity=severity,
                target=host,
                message=(
                    f"{len(bad)} of {len(pairs)} {coll} pairs with {host} are low: median "
                    f"{mean_low:.1f} GB/s vs {band.median:.1f} GB/s over all {len(values)} pairs"
                    + (f" at {format_bytes(size)}" if size else "")
                ),
                expected=round(band.median, 2),
                actual=round(mean_low, 2),
                evidence=[
                    f"{a}-{b}: {values[(a, b)]:.4g} GB/s" + (" (low)" if (a, b) in low else "")
                    for a, b in pairs
                ]
                + [
                    f"all pairs: median {band.median:.4g}, MAD {band.mad:.3g}, sigma "
                    f"{band.sigma:.3g}, threshold {floor:.4g} GB/s"
                ],
                explanation=(
                    "In a pairwise sweep every host meets every other; a pair is low when "
                    f"b < min(m - k x 1.4826 x MAD, m x (1 - e)) (k={t.k:g}, e={t.min_effect:g}) "
                    "over all pairs. A host all of whose pairs are low is the common factor: "
                    "its NIC, cable, PCIe slot or leaf port, not the peers."
                ),
                fix=(
                    f"drain {host} and check its NIC link speed, PCIe width, optics and switch "
                    "port counters (aifabric probe / diagnose on that host)"
                ),
                refs=["S23"],
            )
        )
    return out
