"""bench compare: MAD bands, regressions by size, expectation, no-history (issue 20, S23)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aifabric.bench.compare import (
    MAD_TO_SIGMA,
    Thresholds,
    compare_run,
    expectation_for,
    outlier_hosts,
    robust_band,
    run_rows,
    select_history,
)
from aifabric.bench.model import BenchRow, BenchRun
from aifabric.catalog import load_catalog
from aifabric.cli.estimate_inputs import platform_from_flags
from aifabric.findings import exit_code_for
from aifabric.units import format_bytes
from tests.unit.test_citations import ref_problem

from .bench_synth import SIZES, T0, degraded, healthy_busbw, history, make_run, noisy

GIB = 1 << 30


def test_mad_band_hand_computed_odd() -> None:
    b = robust_band([10.0, 11.0, 12.0, 13.0, 50.0], k=3.0)
    # median 12; |x-12| = 2,1,0,1,38 -> median 1
    assert b.n == 5
    assert b.median == 12.0
    assert b.mad == 1.0
    assert b.sigma == pytest.approx(1.4826)
    assert b.low == pytest.approx(12.0 - 3 * 1.4826)
    assert b.high == pytest.approx(12.0 + 3 * 1.4826)


def test_mad_band_hand_computed_even() -> None:
    b = robust_band([4.0, 1.0, 3.0, 2.0], k=2.0)
    # median 2.5; |x-2.5| = 1.5, 1.5, 0.5, 0.5 -> median 1.0
    assert (b.median, b.mad) == (2.5, 1.0)
    assert b.low == pytest.approx(2.5 - 2 * MAD_TO_SIGMA)


def test_robust_band_needs_values() -> None:
    with pytest.raises(ValueError):
        robust_band([])


def _one_size(values: list[float], new: float, size: int = GIB) -> list[BenchRun]:
    def const(v: float) -> Callable[[int], float]:
        return lambda s: v

    hist = [
        make_run(const(v), sizes=[size], started=T0 + timedelta(days=i), run_id=i + 1)
        for i, v in enumerate(values)
    ]
    return [*hist, make_run(lambda s: new, sizes=[size], started=T0 + timedelta(days=99))]


@pytest.mark.parametrize(
    ("new", "min_effect", "verdict"),
    [
        # median 100, MAD 1, sigma 1.4826: band low 95.5522; floor = min(95.5522, 100(1-e))
        (95.1, 0.05, "ok"),  # floor 95.0
        (94.9, 0.05, "regression"),
        (95.6, 0.02, "ok"),  # floor 95.5522
        (95.5, 0.02, "regression"),
        (105.1, 0.05, "improved"),  # ceiling max(104.4478, 105)
    ],
)
def test_threshold_hand_computed(new: float, min_effect: float, verdict: str) -> None:
    *hist, run = _one_size([100.0, 102.0, 98.0, 101.0, 99.0], new)
    c = compare_run(run, hist, thresholds=Thresholds(min_effect=min_effect))
    (row,) = c.rows
    assert row.busbw_band is not None
    assert row.busbw_band.median == 100.0
    assert row.busbw_band.mad == 1.0
    assert row.verdict == verdict
    assert exit_code_for(c.findings) == (1 if verdict == "regression" else 0)


def test_degraded_run_flags_exactly_the_large_sizes() -> None:
    hist = history(10)
    run = degraded(64 << 20, 0.7)
    c = compare_run(run, hist)
    assert exit_code_for(c.findings) == 1
    bad = [r.size_bytes for r in c.rows if r.verdict == "regression"]
    assert bad == [s for s in SIZES if s >= 64 << 20]
    assert all(r.verdict == "ok" for r in c.rows if r.size_bytes < 64 << 20)
    (reg,) = [f for f in c.findings if f.check == "bench.regression"]
    assert reg.severity == "error"
    named = reg.message.split(":")[0]
    for s in SIZES:
        assert (format_bytes(s) in named.split("at ", 1)[1].split(", ")) == (s >= 64 << 20)
    assert isinstance(reg.actual, dict) and len(reg.actual) == 8
    lower = int(reg.message.rsplit("(", 1)[1].split("%")[0])
    assert 28 <= lower <= 32  # x0.7 with +-2% noise on both sides
    assert "1.4826" in reg.explanation
    assert reg.refs[0] == "S23"
    assert [r for f in c.findings for r in f.refs if ref_problem(r)] == []
    assert len(c.history) == 10


def test_run_inside_band_has_no_error() -> None:
    hist = history(10)
    for seed in range(20):
        run = make_run(
            noisy(healthy_busbw, random.Random(1000 + seed)), started=T0 + timedelta(days=40)
        )
        c = compare_run(run, hist)
        assert exit_code_for(c.findings) == 0, [f.message for f in c.findings]
        assert {r.verdict for r in c.rows} <= {"ok", "improved"}


def test_small_sizes_judged_on_time_as_warning() -> None:
    hist = history(10)
    rng = random.Random(5)
    base = noisy(healthy_busbw, rng)
    run = make_run(lambda s: base(s) * (0.5 if s < 4096 else 1.0), started=T0 + timedelta(days=40))
    c = compare_run(run, hist)
    assert exit_code_for(c.findings) == 0
    slow = [r.size_bytes for r in c.rows if r.verdict == "slower"]
    assert slow == [s for s in SIZES if s < 4096]
    (warn,) = [f for f in c.findings if f.check == "bench.latency-regression"]
    assert warn.severity == "warning"


def test_too_little_history_is_info_and_falls_back_to_expectation() -> None:
    cat = load_catalog([])
    p = platform_from_flags(
        cat, nodes=2, gpus_per_node=8, gpu="H100", nics_per_node=8, nic_speed="400G",
        transport="roce", mtu=9000, pcie_gen=5, assumed=[],
    )  # fmt: skip
    run = make_run(lambda s: 100.0, sizes=[128 << 20, GIB], ranks=16)
    exp = expectation_for(p, run.collective, [r.size_bytes for r in run.rows])
    assert exp is not None
    assert exp.theoretical_gbps == pytest.approx(370.8)  # min(8 x 400/8, H100 NVLink 370.8)
    assert exp.rule70_gbps == pytest.approx(0.7 * 370.8)
    c = compare_run(run, history(2), expectation=exp)
    checks = {f.check: f for f in c.findings}
    assert checks["bench.no-history"].severity == "info"
    assert "2 runs of history" in checks["bench.no-history"].message
    below = checks["bench.below-expected"]
    assert below.severity == "warning"
    assert "70% rule (259.6 GB/s of 370.8) fails at 128 MiB, 1 GiB" in below.message
    assert exit_code_for(c.findings) == 0
    assert [r.verdict for r in c.rows] == ["below-expected", "below-expected"]
    js = c.to_json()
    assert set(js) >= {"findings", "summary", "rows"}
    assert set(js["rows"][0]) >= {
        "size_bytes", "busbw_gbps", "baseline_median", "band_low", "band_high",
        "expected_busbw", "verdict",
    }  # fmt: skip
    assert js["rows"][0]["expected_busbw"] == pytest.approx(exp.busbw_gbps[128 << 20], abs=1e-3)
    assert js["summary"]["warning"] == 1


def test_expectation_unknown_collective() -> None:
    cat = load_catalog([])
    p = platform_from_flags(
        cat, nodes=1, gpus_per_node=8, gpu="H100", nics_per_node=8, nic_speed="400G",
        transport="roce", mtu=9000, pcie_gen=5, assumed=[],
    )  # fmt: skip
    assert expectation_for(p, "sendrecv", [GIB]) is None
    assert expectation_for(p, "all_reduce", []) is None


def test_no_history_without_fabric_says_so() -> None:
    c = compare_run(degraded(), [])
    (f,) = c.findings
    assert f.check == "bench.no-history"
    assert "give --fabric" in f.message
    assert exit_code_for(c.findings) == 0


def test_history_selection() -> None:
    hist = history(12)
    other = [
        make_run(healthy_busbw, cluster="prod", run_id=100),
        make_run(healthy_busbw, ranks=8, run_id=101),
        make_run(healthy_busbw, collective="all_gather", run_id=102),
        make_run(healthy_busbw, tool="builtin", run_id=103),
        make_run(healthy_busbw, pair=("a", "b"), run_id=104),
    ]
    run = make_run(healthy_busbw, started=T0 + timedelta(days=50), collective="all_reduce_perf")
    got = select_history(run, [*other, *hist], last=10)
    assert [h.id for h in got] == list(range(12, 2, -1))  # newest 10, no foreign runs
    stored = hist[5]
    assert stored not in select_history(stored, hist)


def test_run_rows_prefers_out_of_place() -> None:
    ip = BenchRow(1024, 256, "float", "sum", 10.0, 0.1, 0.2, True, 0.0)
    oop = BenchRow(1024, 256, "float", "sum", 11.0, 0.09, 0.18, False, 0.0)
    run = BenchRun("all_reduce", "nccl-tests", (ip, oop), T0)
    assert run_rows(run) == {1024: oop}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scale=st.floats(min_value=0.01, max_value=100.0, allow_nan=False),
    seed=st.integers(0, 10_000),
    n=st.integers(1, 12),
    drop=st.floats(min_value=0.3, max_value=1.3),
)
def test_verdicts_invariant_under_common_scaling(
    scale: float, seed: int, n: int, drop: float
) -> None:
    """Scaling every busbw (run and history) by one constant changes no verdict."""
    rng = random.Random(seed)
    hist = [
        make_run(noisy(healthy_busbw, rng, 0.05), started=T0 + timedelta(days=i), run_id=i + 1)
        for i in range(n)
    ]
    new_base = noisy(healthy_busbw, rng, 0.05)
    run = make_run(
        lambda s: new_base(s) * (drop if s >= 1 << 26 else 1.0), started=T0 + timedelta(days=60)
    )

    def scaled(r: BenchRun) -> BenchRun:
        table = {row.size_bytes: row.busbw_gbps * scale for row in r.rows}
        return make_run(table.__getitem__, started=r.started, run_id=r.id)

    a = compare_run(run, hist)
    # skip draws that sit on a decision boundary to within float rounding
    for r in a.rows:
        if r.threshold is not None:
            value = r.busbw_gbps if r.judged_on == "busbw" else r.time_us
            assume(abs(value - r.threshold) > 1e-9 * abs(r.threshold))
    b = compare_run(scaled(run), [scaled(h) for h in hist])
    assert [r.verdict for r in a.rows] == [r.verdict for r in b.rows]
    assert [f.check for f in a.findings] == [f.check for f in b.findings]


_hostile_float = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def _hostile_run(draw: st.DrawFn) -> BenchRun:
    rows = tuple(
        BenchRow(
            draw(st.sampled_from([1, 8, 1 << 20, 1 << 30, 3])),
            None,
            None,
            None,
            draw(_hostile_float),
            draw(_hostile_float),
            draw(_hostile_float),
            draw(st.booleans()),
            None,
        )
        for _ in range(draw(st.integers(0, 6)))
    )
    pair = draw(st.sampled_from([None, ("a", "b"), ("b", "c"), ("a", "c"), ("c", "d"), ("a", "a")]))
    return BenchRun("all_reduce", "nccl-tests", rows, T0, pair=pair)


@settings(max_examples=80, deadline=None)
@given(run=_hostile_run(), hist=st.lists(_hostile_run(), max_size=6))
def test_hostile_numbers_never_raise(run: BenchRun, hist: list[BenchRun]) -> None:
    """NaN, infinities, zeros and negatives in any field give verdicts, never an exception."""
    c = compare_run(run, hist)
    c.to_json()
    outlier_hosts([run, *hist])
