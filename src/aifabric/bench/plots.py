"""Pictures of benchmark results (SVG or PNG, deterministic): S23's baseline at a glance.

* :func:`plot_comparison`: busbw against message size (log₂ axis) for one
  :class:`~aifabric.bench.compare.Comparison`: the history's median/MAD band shaded, its median
  dashed, the run as a line with its regressed sizes marked, the estimator's expected busbw and
  the seed's 70 % line (S23) when a platform was given.
* :func:`plot_trend`: busbw of one message size over time, one point per run, with a vertical
  marker and label for every change of the change log (``bench mark-change``), so a step in
  the series lines up with what changed.

Both draw on a bare :class:`matplotlib.figure.Figure` with the Agg canvas (no pyplot state, no
display needed) and write with a fixed SVG hash salt and no date, so the same input gives the
same bytes (as :mod:`aifabric.report.topology` does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import cast

import matplotlib
from matplotlib import dates as mdates
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, Formatter, Locator, NullLocator

from aifabric.bench.compare import Comparison
from aifabric.bench.model import Change
from aifabric.errors import InputError
from aifabric.units import format_bytes

__all__ = ["FORMATS", "plot_comparison", "plot_trend"]

FORMATS = {".svg": "svg", ".png": "png"}
PNG_DPI = 120
_RUN = "#1565c0"
_BAND = "#90a4ae"
_EXPECTED = "#2e7d32"
_RULE70 = "#ef6c00"
_BAD = "#c62828"

# matplotlib.dates is not annotated: typed views of the three callables used
_date2num = cast(Callable[[datetime], float], mdates.date2num)
_DateLocator = cast(Callable[[], Locator], mdates.AutoDateLocator)
_DateFormatter = cast(Callable[[str], Formatter], mdates.DateFormatter)


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"picture file {str(path)!r}: suffix {path.suffix or '(none)'!r} is not supported; "
            "use .svg or .png"
        )
    return fmt


def _save(fig: Figure, path: Path, fmt: str) -> Path:
    metadata: dict[str, str | None] = {"Date": None} if fmt == "svg" else {}
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "aifabric"}):
            fig.savefig(path, format=fmt, dpi=PNG_DPI, metadata=metadata)
    except OSError as exc:
        raise InputError(f"cannot write picture {str(path)!r}: {exc.strerror or exc}") from exc
    return path


def _size_ticks(sizes: Sequence[int]) -> tuple[list[float], list[str]]:
    """At most ~10 labelled ticks on the log₂ size axis, at the run's own sizes, the largest
    size always among them."""
    step = max(1, len(sizes) // 10 + (1 if len(sizes) % 10 else 0))
    picked = list(sizes[::-1][::step])[::-1]
    return [float(s) for s in picked], [format_bytes(s) for s in picked]


def plot_comparison(comparison: Comparison, path: str | Path, *, title: str | None = None) -> Path:
    """Draw busbw vs size of ``comparison`` to ``path`` (.svg or .png); see the module docstring.

    Raises :class:`~aifabric.errors.InputError` for another suffix, a run without rows, or a
    file that cannot be written."""
    out = Path(path)
    fmt = _format_of(out)
    rows = comparison.rows
    if not rows:
        raise InputError("nothing to plot: the run has no result rows")
    fig = Figure(figsize=(8.0, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = [float(r.size_bytes) for r in rows]
    banded = [r for r in rows if r.busbw_band is not None]
    if banded:
        bx = [float(r.size_bytes) for r in banded]
        lows = [max(r.busbw_band.low, 0.0) for r in banded if r.busbw_band]
        highs = [r.busbw_band.high for r in banded if r.busbw_band]
        meds = [r.busbw_band.median for r in banded if r.busbw_band]
        n = max(r.busbw_band.n for r in banded if r.busbw_band)
        ax.fill_between(
            bx,
            lows,
            highs,
            color=_BAND,
            alpha=0.35,
            lw=0,
            label=f"history band (median ± k·1.4826·MAD, ≤{n} runs)",
        )
        ax.plot(bx, meds, color=_BAND, ls="--", lw=1.2, label="history median")
    ax.plot(
        xs, [r.busbw_gbps for r in rows], color=_RUN, marker="o", ms=3.5, lw=1.6, label="this run"
    )
    bad = [r for r in rows if r.verdict in ("regression", "below-expected")]
    if bad:
        ax.scatter(
            [float(r.size_bytes) for r in bad],
            [r.busbw_gbps for r in bad],
            s=46,
            facecolors="none",
            edgecolors=_BAD,
            linewidths=1.6,
            zorder=5,
            label="regression / below expected",
        )
    expected = [r for r in rows if r.expected_busbw is not None]
    if expected:
        ax.plot(
            [float(r.size_bytes) for r in expected],
            [r.expected_busbw or 0.0 for r in expected],
            color=_EXPECTED,
            lw=1.2,
            label="expected (aifabric estimate)",
        )
    exp = comparison.expectation
    if exp is not None:
        ax.axhline(
            exp.rule70_gbps,
            color=_RULE70,
            ls=":",
            lw=1.4,
            label=f"S23: 70% of {exp.theoretical_gbps:.0f} GB/s",
        )
    ax.set_xscale("log", base=2)
    ticks, labels = _size_ticks([r.size_bytes for r in rows])
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(ticks, labels, rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("message size")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    run = comparison.run
    ax.set_title(
        title
        or f"{run.collective} ({run.tool}) on {run.cluster or '?'}"
        + (f", {run.ranks} ranks" if run.ranks else ""),
        fontsize=10,
    )
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    fig.tight_layout()
    return _save(fig, out, fmt)


def plot_trend(
    points: Sequence[tuple[datetime, float]],
    changes: Sequence[Change],
    path: str | Path,
    *,
    title: str,
    ylabel: str = "busbw (GB/s)",
) -> Path:
    """Draw ``points`` (time, value) as a series with every change of ``changes`` that falls
    inside (or before the first point, at the left edge) marked; see the module docstring.

    Raises :class:`~aifabric.errors.InputError` for another suffix, no points, or a file that
    cannot be written."""
    out = Path(path)
    fmt = _format_of(out)
    if not points:
        raise InputError("nothing to plot: no runs match (check --collective, --size, --cluster)")
    pts = sorted(points, key=lambda p: p[0])
    fig = Figure(figsize=(8.0, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(
        [_date2num(p[0]) for p in pts], [p[1] for p in pts], color=_RUN, marker="o", ms=3.5, lw=1.4
    )
    top = max(p[1] for p in pts)
    first, last = pts[0][0], pts[-1][0]
    for ch in sorted(changes, key=lambda c: c.at):
        if ch.at > last:
            continue
        at = float(_date2num(max(ch.at, first)))
        ax.axvline(at, color=_RULE70, ls="--", lw=1.0)
        ax.annotate(
            f"#{ch.id} {ch.text[:40]}",
            (at, top),
            rotation=90,
            fontsize=7,
            va="top",
            ha="right",
            color=_RULE70,
        )
    ax.xaxis.set_major_locator(_DateLocator())
    ax.xaxis.set_major_formatter(_DateFormatter("%Y-%m-%d %H:%M"))
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0, top=top * 1.1 if top > 0 else 1.0)
    ax.grid(True, alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.autofmt_xdate()
    fig.tight_layout()
    return _save(fig, out, fmt)
