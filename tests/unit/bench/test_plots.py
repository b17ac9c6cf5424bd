"""bench plots: busbw vs size with band/expected/70% lines, trend with change markers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from aifabric.bench.compare import Comparison, compare_run, expectation_for
from aifabric.bench.model import Change
from aifabric.bench.plots import plot_comparison, plot_trend
from aifabric.catalog import load_catalog
from aifabric.cli.estimate_inputs import platform_from_flags
from aifabric.errors import InputError

from .bench_synth import T0, degraded, history


def _comparison(with_expectation: bool = True) -> Comparison:
    run = degraded()
    exp = None
    if with_expectation:
        p = platform_from_flags(
            load_catalog([]), nodes=2, gpus_per_node=8, gpu="H100", nics_per_node=8,
            nic_speed="400G", transport="roce", mtu=9000, pcie_gen=5, assumed=[],
        )  # fmt: skip
        exp = expectation_for(p, run.collective, [r.size_bytes for r in run.rows])
    return compare_run(run, history(10), expectation=exp)


def test_comparison_svg_is_deterministic_and_labelled(tmp_path: Path) -> None:
    c = _comparison()
    a = plot_comparison(c, tmp_path / "a.svg").read_bytes()
    b = plot_comparison(c, tmp_path / "b.svg").read_bytes()
    assert a == b
    text = a.decode()
    for label in (
        "history band",
        "history median",
        "this run",
        "expected (aifabric estimate)",
        "S23: 70% of 371 GB/s",
        "regression / below expected",
        "8 GiB",
    ):
        assert label in text, label
    assert "<dc:date>" not in text


def test_comparison_without_history_or_expectation(tmp_path: Path) -> None:
    c = compare_run(degraded(), [])
    text = plot_comparison(c, tmp_path / "c.svg").read_text()
    assert "this run" in text
    assert "history band" not in text
    assert "S23" not in text


def test_png(tmp_path: Path) -> None:
    data = plot_comparison(_comparison(False), tmp_path / "c.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_suffix_and_unwritable(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"use \.svg or \.png"):
        plot_comparison(_comparison(False), tmp_path / "c.pdf")
    with pytest.raises(InputError, match="cannot write picture"):
        plot_comparison(_comparison(False), tmp_path / "missing" / "c.svg")


def test_trend_marks_changes(tmp_path: Path) -> None:
    points = [(T0 + timedelta(days=i), 180.0 - (40.0 if i >= 5 else 0.0)) for i in range(10)]
    changes = [
        Change(1, "PFC on queue 3 only", T0 + timedelta(days=4, hours=12), "lab"),
        Change(2, "after the last run", T0 + timedelta(days=30), "lab"),
    ]
    out = plot_trend(points, changes, tmp_path / "t.svg", title="all_reduce 8 GiB")
    text = out.read_text()
    assert "#1 PFC on queue 3 only" in text
    assert "after the last run" not in text
    assert "all_reduce 8 GiB" in text
    again = plot_trend(points, changes, tmp_path / "t2.svg", title="all_reduce 8 GiB")
    assert again.read_bytes() == out.read_bytes()


def test_trend_needs_points(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no runs match"):
        plot_trend([], [], tmp_path / "t.svg", title="x")
