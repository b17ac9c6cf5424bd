"""Before/after a change (S23: "keep before/after results for every configuration change").

:func:`before_after` splits the runs of a cluster at a :class:`~aifabric.bench.model.Change`:
*before* are the newest ``last`` runs started before it, *after* those started at or after it
and before the next change (when there is one). Runs are grouped by what makes them comparable
(collective, tool, rank count, pair: as :func:`~aifabric.bench.compare.select_history`); per
message size the after-median ``a`` is judged against the before runs' median/MAD band with the
rule of :mod:`aifabric.bench.compare`: ``a < min(m - k·σ, m·(1 - e))`` is a regression (error,
``bench.regression``: the change made it worse), ``a > max(m + k·σ, m·(1 + e))`` an improvement
(info, ``bench.improvement``). Latency-bound sizes (< 1 MiB) are judged on time the same way and
never raise an error. A side with fewer than ``min_history`` runs at a size gives ``no-data``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from aifabric.bench.compare import (
    REFS,
    Thresholds,
    improvement_ceiling,
    regression_floor,
    robust_band,
    run_rows,
)
from aifabric.bench.model import BenchRow, BenchRun, Change, utc
from aifabric.findings import Finding, Summary, summarize
from aifabric.units import format_bytes

__all__ = ["BeforeAfter", "ChangeRow", "before_after"]

ChangeVerdict = Literal["regression", "improved", "ok", "no-data"]


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """One group and size: before median and band, after median, relative change."""

    group: str
    size_bytes: int
    before_n: int
    after_n: int
    before_median: float | None
    before_low: float | None
    before_high: float | None
    after_median: float | None
    verdict: ChangeVerdict
    judged_on: Literal["busbw", "time_us"]

    @property
    def delta(self) -> float | None:
        """``a / m - 1`` of the judged quantity (None without both sides)."""
        if self.before_median is None or self.after_median is None or self.before_median == 0:
            return None
        return self.after_median / self.before_median - 1.0

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "group": self.group,
            "size_bytes": self.size_bytes,
            "judged_on": self.judged_on,
            "before_runs": self.before_n,
            "after_runs": self.after_n,
            "before_median": r(self.before_median),
            "band_low": r(self.before_low),
            "band_high": r(self.before_high),
            "after_median": r(self.after_median),
            "delta": r(self.delta),
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class BeforeAfter:
    """The report of :func:`before_after`."""

    change: Change
    until: datetime | None
    rows: tuple[ChangeRow, ...]
    findings: tuple[Finding, ...]

    @property
    def summary(self) -> Summary:
        return summarize(self.findings)

    def to_json(self) -> dict[str, Any]:
        c = self.change
        return {
            "change": {"id": c.id, "text": c.text, "at": c.at.isoformat(), "cluster": c.cluster},
            "until": self.until.isoformat() if self.until else None,
            "findings": [f.model_dump(mode="json") for f in self.findings],
            "summary": self.summary.model_dump(),
            "rows": [r.to_json() for r in self.rows],
        }


def _group(run: BenchRun) -> str:
    parts = [run.collective, run.tool]
    if run.ranks:
        parts.append(f"{run.ranks} ranks")
    if run.pair:
        parts.append("pair " + "-".join(sorted(run.pair)))
    return ", ".join(parts)


def before_after(
    runs: Iterable[BenchRun],
    change: Change,
    *,
    until: datetime | None = None,
    thresholds: Thresholds | None = None,
) -> BeforeAfter:
    """Compare ``runs`` started before ``change.at`` with those from it up to ``until``
    (exclusive; ``None``: no end). See the module docstring for the rule."""
    t = thresholds or Thresholds()
    at = utc(change.at)
    end = utc(until) if until is not None else None
    before: dict[str, list[BenchRun]] = defaultdict(list)
    after: dict[str, list[BenchRun]] = defaultdict(list)
    for run in runs:
        started = utc(run.started)
        if started < at:
            before[_group(run)].append(run)
        elif end is None or started < end:
            after[_group(run)].append(run)
    rows: list[ChangeRow] = []
    for group in sorted(set(before) | set(after)):
        b_runs = sorted(before[group], key=lambda r: r.started, reverse=True)[: t.last]
        a_runs = sorted(after[group], key=lambda r: r.started)[: t.last]
        rows.extend(_group_rows(group, b_runs, a_runs, t))
    return BeforeAfter(change, until, tuple(rows), tuple(_findings(change, rows, t)))


def _group_rows(
    group: str, b_runs: Sequence[BenchRun], a_runs: Sequence[BenchRun], t: Thresholds
) -> list[ChangeRow]:
    b_tabs = [run_rows(r) for r in b_runs]
    a_tabs = [run_rows(r) for r in a_runs]
    sizes = sorted({s for tab in [*b_tabs, *a_tabs] for s in tab})
    out: list[ChangeRow] = []
    for size in sizes:
        large = size >= t.min_size_bytes
        judged: Literal["busbw", "time_us"] = "busbw" if large else "time_us"

        bv, av = _values(b_tabs, size, large), _values(a_tabs, size, large)
        band = robust_band(bv, t.k) if bv else None
        a_med = statistics.median(av) if av else None
        verdict: ChangeVerdict = "ok"
        if band is None or a_med is None or len(bv) < t.min_history:
            verdict = "no-data"
        else:
            lo, hi = regression_floor(band, t), improvement_ceiling(band, t)
            worse = a_med < lo if large else a_med > hi
            better = a_med > hi if large else a_med < lo
            verdict = "regression" if worse else "improved" if better else "ok"
        out.append(
            ChangeRow(
                group,
                size,
                len(bv),
                len(av),
                band.median if band else None,
                band.low if band else None,
                band.high if band else None,
                a_med,
                verdict,
                judged,
            )
        )
    return out


def _values(tabs: Sequence[dict[int, BenchRow]], size: int, large: bool) -> list[float]:
    """Busbw (large sizes) or time (small ones) at ``size`` of every table that has it."""
    vals = [(t[size].busbw_gbps if large else t[size].time_us) for t in tabs if size in t]
    return [v for v in vals if v > 0]


def _findings(change: Change, rows: Sequence[ChangeRow], t: Thresholds) -> list[Finding]:
    out: list[Finding] = []
    target = f"change #{change.id}: {change.text}"
    by_group: dict[str, list[ChangeRow]] = defaultdict(list)
    for r in rows:
        by_group[r.group].append(r)
    for group, grows in by_group.items():
        for verdict in ("regression", "improved"):
            hit = [r for r in grows if r.verdict == verdict]
            if not hit:
                continue
            bad_bw = verdict == "regression" and any(r.judged_on == "busbw" for r in hit)
            sev: Literal["error", "warning", "info"] = (
                "error" if bad_bw else "warning" if verdict == "regression" else "info"
            )
            sizes = ", ".join(format_bytes(r.size_bytes) for r in hit)
            word = "worse" if verdict == "regression" else "better"
            out.append(
                Finding(
                    check="bench.regression" if verdict == "regression" else "bench.improvement",
                    severity=sev,
                    target=target,
                    message=f"{group} is {word} after the change at {sizes}",
                    expected={format_bytes(r.size_bytes): _r(r.before_median) for r in hit},
                    actual={format_bytes(r.size_bytes): _r(r.after_median) for r in hit},
                    evidence=[
                        f"{format_bytes(r.size_bytes)} ({r.judged_on}): before median "
                        f"{_r(r.before_median)} over {r.before_n} runs, band [{_r(r.before_low)}, "
                        f"{_r(r.before_high)}]; after median {_r(r.after_median)} over "
                        f"{r.after_n} runs ({(r.delta or 0.0):+.1%})"
                        for r in hit
                    ],
                    explanation=(
                        "The after-change median a of each size is judged against the median m "
                        "and MAD of the runs before the change: worse when a < min(m - k x "
                        f"1.4826 x MAD, m x (1 - e)) on busbw (sizes >= "
                        f"{format_bytes(t.min_size_bytes)}; time_us mirrored below), k={t.k:g}, "
                        f"e={t.min_effect:g}."
                    ),
                    fix=(
                        f"revert or revisit '{change.text}' and rerun the benchmark"
                        if verdict == "regression"
                        else "keep the change; the new runs are the baseline from now on"
                    ),
                    refs=REFS,
                )
            )
    return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)
