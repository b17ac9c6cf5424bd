"""Eight processes (``spawn``) import at once into one new SQLite file: the schema is created
once, and no run, row or host is lost (issue 20: "concurrent imports from many hosts lose
nothing"). Workers start together on a barrier and open the store (creating it) at the same
moment, then commit one transaction per run so that their writes interleave."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path
from typing import Any

from aifabric.bench.importer import import_nccl_tests
from aifabric.bench.store import VERSION_TABLE, open_store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "nccl-tests"
SOURCES = (
    "olivia-gh200-slingshot-v2.18.3",
    "aws-batch-p5-tag-output-wide-header",
    "rccl-issue1490-srun-label-allgather-then-allreduce",
)
WORKERS = 8
ROUNDS = 6


def import_many(url: str, worker: int, barrier: Any) -> None:
    """One process: import each source ``ROUNDS`` times, one transaction per run."""
    barrier.wait(timeout=120)
    with open_store(url) as store:
        for n in range(ROUNDS):
            for name in SOURCES:
                for run in import_nccl_tests(
                    FIXTURES / name / "input.txt", label=f"w{worker}-{n}", cluster="lab"
                ):
                    store.add_run(run)


def expected_per_round() -> tuple[int, int]:
    runs = [r for name in SOURCES for r in import_nccl_tests(FIXTURES / name / "input.txt")]
    return len(runs), sum(len(r.rows) for r in runs)


def run_workers(url: str) -> None:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    procs = [ctx.Process(target=import_many, args=(url, w, barrier)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(timeout=300)
        assert [p.exitcode for p in procs] == [0] * WORKERS
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()


def check_nothing_lost(url: str) -> None:
    runs_per_round, rows_per_round = expected_per_round()
    with open_store(url) as store:
        runs = store.runs()
    assert len(runs) == WORKERS * ROUNDS * runs_per_round
    assert sum(len(r.rows) for r in runs) == WORKERS * ROUNDS * rows_per_round
    labels = {f"w{w}-{n}" for w in range(WORKERS) for n in range(ROUNDS)}
    assert {r.label for r in runs} == labels
    for label in labels:
        assert sum(r.label == label for r in runs) == runs_per_round
    assert len({r.id for r in runs}) == len(runs)


def test_eight_processes_lose_no_row(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    url = str(db)
    run_workers(url)
    check_nothing_lost(url)
    with sqlite3.connect(db) as con:
        assert con.execute(f"select count(*) from {VERSION_TABLE}").fetchone() == (1,)
        assert con.execute("pragma integrity_check").fetchone() == ("ok",)
