"""Fit the model's efficiency constants to the user's own nccl-tests results.

Every predicted time is ``t(S) = x·α(S) + y·β(S)``: ``α`` the latency term and ``β = S/bw`` the
bandwidth term of the pair NCCL picks at size ``S`` (selection uses NCCL's nominal table, which
the constants do not change). So fitting the latency multiplier ``x`` and the bandwidth
multiplier ``1/y`` is linear least squares; we minimise the *relative* error
``Σ ((x·α_i + y·β_i − t_i) / t_i)²`` so that small (latency-bound) and large (bandwidth-bound)
sizes weigh alike, by the 2×2 normal equations, with both multipliers kept positive.
The fitted :class:`~aifabric.perf.estimate.Efficiency` then predicts other sizes and scales.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.perf.collectives import Collective
from aifabric.perf.estimate import Efficiency, Platform, estimate

__all__ = ["Calibration", "Measurement", "calibrate"]

MIN_POINTS = 2


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured size: nccl-tests' out-of-place time (µs)."""

    size_bytes: int
    time_us: float
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Calibration:
    """Fitted constants, the residual per size before and after, and the derivation."""

    efficiency: Efficiency
    rows: tuple[dict[str, Any], ...]
    rms_before_pct: float
    rms_after_pct: float
    explain: tuple[Explained, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "latency_factor": round(self.efficiency.latency, 4),
            "bandwidth_factor": round(self.efficiency.bandwidth, 4),
            "rms_error_before_pct": round(self.rms_before_pct, 2),
            "rms_error_after_pct": round(self.rms_after_pct, 2),
            "rows": list(self.rows),
        }


def _rms(errors: Sequence[float]) -> float:
    return math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.0


def calibrate(
    platform: Platform, collective: Collective, measured: Sequence[Measurement]
) -> Calibration:
    """Fit latency and bandwidth multipliers of ``platform`` to ``measured`` times."""
    points = [m for m in measured if m.size_bytes > 0 and m.time_us > 0]
    if len(points) < MIN_POINTS:
        raise InputError(
            f"calibration needs at least {MIN_POINTS} measured sizes with a time; got {len(points)}"
        )
    base = replace(platform, efficiency=replace(platform.efficiency, latency=1.0, bandwidth=1.0))
    rows = estimate(base, collective, [m.size_bytes for m in points]).rows
    a = [r.latency_us for r in rows]
    b = [r.time_us - r.latency_us for r in rows]
    t = [m.time_us for m in points]
    # weighted normal equations, weights 1/t_i^2
    saa = sum(ai * ai / ti**2 for ai, ti in zip(a, t, strict=True))
    sbb = sum(bi * bi / ti**2 for bi, ti in zip(b, t, strict=True))
    sab = sum(ai * bi / ti**2 for ai, bi, ti in zip(a, b, t, strict=True))
    sat = sum(ai / ti for ai, ti in zip(a, t, strict=True))
    sbt = sum(bi / ti for bi, ti in zip(b, t, strict=True))
    det = saa * sbb - sab * sab
    x = y = 1.0
    if det > 1e-12 * max(saa * sbb, 1e-300):
        x = (sat * sbb - sbt * sab) / det
        y = (saa * sbt - sab * sat) / det
    if det <= 1e-12 * max(saa * sbb, 1e-300) or x <= 0 or y <= 0:
        # degenerate (all sizes latency- or bandwidth-bound) or a negative term: fit one at a time
        if sbb > 0 and (saa == 0 or sbb >= saa):
            x, y = 1.0, max((sbt - sab) / sbb, 1e-3)
        else:
            x, y = max((sat - sab) / saa, 1e-3), 1.0
    x = min(max(x, 1e-3), 1e3)
    y = min(max(y, 1e-3), 1e3)
    eff = replace(
        platform.efficiency,
        latency=x,
        bandwidth=1.0 / y,
        source=f"calibrated on {len(points)} measured sizes",
    )
    before = estimate(platform, collective, [m.size_bytes for m in points]).rows
    after = estimate(
        replace(platform, efficiency=eff), collective, [m.size_bytes for m in points]
    ).rows
    out_rows = []
    err_before, err_after = [], []
    for m, rb, ra in zip(points, before, after, strict=True):
        eb = (rb.time_us - m.time_us) / m.time_us * 100
        ea = (ra.time_us - m.time_us) / m.time_us * 100
        err_before.append(eb)
        err_after.append(ea)
        out_rows.append(
            {
                "size_bytes": m.size_bytes,
                "measured_us": round(m.time_us, 3),
                "model_us": round(rb.time_us, 3),
                "calibrated_us": round(ra.time_us, 3),
                "residual_pct": round(ea, 2),
                "algorithm": ra.algorithm,
                "protocol": ra.protocol,
            }
        )
    step = Explained.fast(
        quantity="calibration",
        value=f"latency x{x:.3g}, bandwidth x{1 / y:.3g}",
        formula="min over x, y of sum(((x·alpha_i + y·beta_i - t_i) / t_i)^2); bandwidth = 1/y",
        inputs={
            "sizes": len(points),
            "rms_before_pct": round(_rms(err_before), 2),
            "rms_after_pct": round(_rms(err_after), 2),
        },
        sources=["the measured nccl-tests results given to --calibrate"],
    )
    return Calibration(eff, tuple(out_rows), _rms(err_before), _rms(err_after), (step,))
