"""bench report: before/after a change of the change log (S23)."""

from __future__ import annotations

import random
from datetime import timedelta

from aifabric.bench.before_after import before_after
from aifabric.bench.model import BenchRun, Change
from aifabric.findings import exit_code_for
from aifabric.units import format_bytes

from .bench_synth import SIZES, T0, healthy_busbw, make_run, noisy

CHANGE = Change(7, "PFC on queue 3 only", T0 + timedelta(days=10), "lab")


def _runs(after_share: float, *, seed: int = 1) -> list[BenchRun]:
    rng = random.Random(seed)
    runs = []
    for day in range(20):
        base = noisy(healthy_busbw, rng)
        share = after_share if day >= 10 else 1.0
        runs.append(
            make_run(
                lambda s, base=base, share=share: base(s) * (share if s >= 64 << 20 else 1.0),  # type: ignore[misc]
                started=T0 + timedelta(days=day),
                run_id=day + 1,
            )
        )
    return runs


def test_change_that_hurts_is_a_regression() -> None:
    rep = before_after(_runs(0.8), CHANGE)
    worse = [r.size_bytes for r in rep.rows if r.verdict == "regression"]
    assert worse == [s for s in SIZES if s >= 64 << 20]
    assert all(r.before_n == 10 and r.after_n == 10 for r in rep.rows)
    (f,) = rep.findings
    assert (f.check, f.severity) == ("bench.regression", "error")
    assert f.target == "change #7: PFC on queue 3 only"
    assert f.message.endswith("at " + ", ".join(format_bytes(s) for s in worse))
    row = next(r for r in rep.rows if r.size_bytes == 8 << 30)
    assert row.delta is not None and -0.23 < row.delta < -0.17
    assert exit_code_for(rep.findings) == 1
    js = rep.to_json()
    assert set(js) >= {"change", "findings", "summary", "rows"}
    assert js["change"]["id"] == 7


def test_neutral_change_is_ok_and_better_is_info() -> None:
    assert before_after(_runs(1.0), CHANGE).findings == ()
    rep = before_after(_runs(1.25), CHANGE)
    assert [(f.check, f.severity) for f in rep.findings] == [("bench.improvement", "info")]


def test_until_bounds_the_after_side() -> None:
    rep = before_after(_runs(0.8), CHANGE, until=T0 + timedelta(days=12))
    assert {r.after_n for r in rep.rows} == {2}
    # two runs after are enough for a median; the before side has 10
    worse = [r.size_bytes for r in rep.rows if r.verdict == "regression"]
    assert worse == [s for s in SIZES if s >= 64 << 20]
    assert exit_code_for(rep.findings) == 1


def test_nothing_before_is_no_data() -> None:
    rep = before_after(_runs(0.8)[10:], CHANGE)
    assert {r.verdict for r in rep.rows} == {"no-data"}
    assert rep.findings == ()
