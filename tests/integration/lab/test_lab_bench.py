"""The built-in collective benchmark across a real lab: ring all-reduce between four servers'
namespaces over TCP, healthy and then with the lab's throttle fault on the ring's path; the
drop is flagged by ``bench compare`` against the healthy history.

Known answers come from the lab's shaping: ``--rate-scale 1000`` shapes every 100G link to
100 Mb/s = 0.0125 GB/s, and a ring all-reduce that is bound by its links has busbw equal to
the per-link rate (nccl-tests doc/PERFORMANCE.md: busbw = algbw · 2(n-1)/n is defined so);
the throttle's per-flow limit (20 Mb/s = 0.0025 GB/s) bounds every ring step that crosses
leaf01."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aifabric.bench.compare import compare_run
from aifabric.bench.store import opened
from aifabric.bench.worker import parse_sizes
from aifabric.catalog import load_catalog
from aifabric.cli.bench_cmd import bench_app
from aifabric.cli.bench_run_cmd import bench_run
from aifabric.design import load_fabric
from aifabric.evidence.nccl_tests import NcclTestsRow, parse
from aifabric.lab.bench import LabBench, run_lab_bench
from aifabric.lab.faults import add_fault, clear_faults
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.lab.plan import LabPlan
from aifabric.lab.state import lab_dir

from .conftest import ROOT, needs_lab, new_name

pytestmark = needs_lab

LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"
LINK_GBPS = 100 / 1000 / 8  # 100G shaped to 1/1000, in GB/s
LIMIT_GBPS = 20e6 / 8 / 1e9  # the throttle's 20 Mb/s per flow
SIZES = parse_sizes("1M:4M")


@pytest.fixture(scope="module")
def lab() -> Iterator[LabPlan]:
    """tests/fixtures/lab/lab-2x2.yaml with 2 servers per leaf (srv01 srv02 | srv05 srv06):
    the ring srv01 → srv02 → srv05 → srv06 → srv01 crosses the spines twice."""
    name = new_name("b3")
    try:
        state = lab_up(load_fabric(LAB_2X2, load_catalog()), name, rate_scale=1000)
        assert state.converged is True
        yield state.plan
    finally:
        lab_down(name)


def _busbw(b: LabBench) -> dict[int, float]:
    return {r.size_bytes: r.out_of_place.busbw_gbps for r in b.result.rows}


def test_all_reduce_across_lab_healthy_then_throttled(lab: LabPlan, tmp_path: Path) -> None:
    """Healthy: busbw at every size within 80-102 % of the shaped link rate, no wrong value,
    the text parses to the measured values. Throttled (20 Mb/s per flow on leaf01, which
    routes srv02 → srv05 and srv06 → srv01): busbw at 2 and 4 MiB below 0.5 × healthy and
    within 1.5 × the limit (the first megabyte of a flow and the limiter's burst pass at
    full rate; the 1 MiB row still spends them). Then bench compare flags the throttled run
    against three healthy ones (exit 1, the sizes named)."""
    healthy: list[LabBench] = []
    for _ in range(3):
        b = run_lab_bench(lab.name, sizes=SIZES, iters=3, cluster=lab.name)
        assert b.result.wrong == 0
        assert [r.name for r in b.result.ranks] == ["srv01", "srv02", "srv05", "srv06"]
        for size, bw in _busbw(b).items():
            assert 0.8 * LINK_GBPS <= bw <= 1.02 * LINK_GBPS, (size, bw)
        healthy.append(b)
    # the printed table is what was measured (to its 3 significant digits)
    rows = [r for r in parse(healthy[0].text).records if isinstance(r, NcclTestsRow)]
    for row, m in zip(rows, healthy[0].result.rows, strict=True):
        assert row.oop_busbw_GBps == pytest.approx(m.out_of_place.busbw_gbps, rel=5e-3)
    assert healthy[0].run.env["AIFABRIC_LAB_RATE_SCALE"] == "1000"
    assert "AIFABRIC_LAB_FAULTS" not in healthy[0].run.env

    add_fault(lab.name, "throttle", node="leaf01", value="20M")
    try:
        bad = run_lab_bench(lab.name, sizes=SIZES, iters=3, cluster=lab.name)
    finally:
        clear_faults(lab.name)
    assert bad.result.wrong == 0
    assert bad.run.env["AIFABRIC_LAB_FAULTS"] == "f1 throttle leaf01 20M"
    ok = {s: sum(_busbw(h)[s] for h in healthy) / 3 for s in _busbw(bad)}
    for size in (2 << 20, 4 << 20):
        got = _busbw(bad)[size]
        assert got < 0.5 * ok[size], (size, got, ok[size])
        assert got < 1.5 * LIMIT_GBPS, (size, got)
    print("healthy busbw GB/s", ok, "throttled", _busbw(bad))

    # the engine: the throttled builtin run against the three healthy ones
    cmp = compare_run(bad.run, [h.run for h in healthy])
    errors = [f for f in cmp.findings if f.severity == "error"]
    assert errors and errors[0].check == "bench.regression", cmp.findings
    assert "2 MiB" in errors[0].message and "4 MiB" in errors[0].message, errors[0].message

    # the CLI: import the healthy texts, compare the throttled one -> exit 1
    db = f"sqlite:///{tmp_path / 'bench.db'}"
    for k, h in enumerate(healthy):
        f = tmp_path / f"healthy{k}.txt"
        f.write_text(h.text, encoding="utf-8")
        res = CliRunner().invoke(bench_app, ["import", str(f), "--db", db, "--cluster", lab.name])
        assert res.exit_code == 0, res.output
    f = tmp_path / "throttled.txt"
    f.write_text(bad.text, encoding="utf-8")
    res = CliRunner().invoke(
        bench_app, ["compare", str(f), "--db", db, "--cluster", lab.name, "--format", "json"]
    )
    assert res.exit_code == 1, res.output
    assert "bench.regression" in res.output


def test_cli_bench_run_in_lab_stores_the_run(lab: LabPlan, tmp_path: Path) -> None:
    """``bench run --lab`` (the lead wires it into the bench group; here as a bare command):
    the text on stdout, the run stored with its lab context; nothing left behind."""
    app = typer.Typer()
    app.command()(bench_run)
    db = f"sqlite:///{tmp_path / 'run.db'}"
    res = CliRunner().invoke(
        app,
        [
            "--lab",
            lab.name,
            "--sizes",
            "1M",
            "--iters",
            "2",
            "--collective",
            "all_gather",
            "--db",
            db,
            "--label",
            "b3",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "# Collective test starting: all_gather_perf" in res.output
    with opened(db) as store:
        runs = store.runs()
    assert len(runs) == 1 and runs[0].tool == "builtin" and runs[0].label == "b3"
    assert runs[0].hosts == ("srv01", "srv02", "srv05", "srv06")
    assert runs[0].env["AIFABRIC_LAB"] == lab.name
    assert [p.name for p in (lab_dir(lab.name) / "bench").iterdir()] == [".lock"]
