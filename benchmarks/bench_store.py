"""Bench store benchmark (issue 20): import 10,000 runs into SQLite, then time history queries.

Run: ``python benchmarks/bench_store.py`` (``--runs N``, ``--sizes N``, ``--batch N``,
``--db URL`` for another database, e.g. a PostgreSQL URL; default a new SQLite file in a
temporary directory). Copy the table into docs/benchmarks.md.

Data: ``--runs`` synthetic nccl-tests shaped runs, each ``--sizes`` message sizes (powers of two
from 128 MiB down) with both halves (out-of-place and in-place rows, as an import of real output
gives), spread over 4 clusters, 4 collectives (all_reduce 60 %), 8 hosts per run out of 64, an
NCCL environment of 3 variables and a start time one minute apart. Steps timed:

* ``import``: :meth:`Store.add_runs` in transactions of ``--batch`` runs (a bulk import);
* ``import, 1 run per transaction``: 200 more runs with :meth:`Store.add_run` each (what
  ``bench import`` of one file does, and what concurrent importers do);
* ``history``: :meth:`Store.history` of one collective, cluster and size, last 20 runs (what
  ``bench compare`` reads per size), on a freshly opened store (cold: new connection, OS cache
  warm) and best of 5 (warm);
* ``history, all sizes``: the last 20 runs of a collective with all their rows;
* ``runs(hosts=[one host], limit=100)``: the host filter through ``bench_run_hosts``.

Target: the import of 10,000 runs and the history query on SQLite; the query under 1 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from aifabric.bench.model import BenchRow, BenchRun  # noqa: E402
from aifabric.bench.store import Store, open_store  # noqa: E402

COLLECTIVES = ("all_reduce", "all_reduce", "all_reduce", "all_gather", "reduce_scatter", "alltoall")
CLUSTERS = ("c0", "c1", "c2", "c3")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_run(i: int, sizes: int) -> BenchRun:
    """Run ``i`` of the synthetic history (deterministic)."""
    collective = COLLECTIVES[i % len(COLLECTIVES)] if i % 5 else "all_reduce"
    factor = 1.75 if collective == "all_reduce" else 0.875
    noise = 1.0 + ((i * 7919) % 101 - 50) / 1000.0  # ±5 %
    rows: list[BenchRow] = []
    for k in range(sizes):
        size = (128 << 20) >> k if k < 27 else 8
        size = max(size, 8)
        bus = 380.0 * noise * size / (size + 4e6)
        alg = bus / factor
        t = size / (alg * 1e3) if alg > 0 else 1.0
        for in_place in (False, True):
            rows.append(BenchRow(size, size // 4, "float", "sum", t, alg, bus, in_place, 0.0))
    first = (i * 8) % 64
    hosts = tuple(f"node{(first + h) % 64:02d}" for h in range(8))
    return BenchRun(
        collective=collective,
        tool="nccl-tests",
        rows=tuple(rows),
        started=T0 + timedelta(minutes=i),
        hosts=hosts,
        ranks=64,
        cluster=CLUSTERS[i % len(CLUSTERS)],
        fabric_hash="sha256:0123456789abcdef",
        nccl_version="2.21.5",
        driver_version="cuda 12.4",
        env={"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": "3", "NCCL_ALGO": "Ring"},
        label=f"nightly {i // 100}",
        source=f"/data/nccl/run{i:05d}.log",
    )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def best_of(n: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    results = [timed(fn) for _ in range(n)]
    return min(r[0] for r in results), results[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--sizes", type=int, default=25)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        url = args.db or str(Path(tmp) / "bench.db")
        runs = [make_run(i, args.sizes) for i in range(args.runs)]
        n_rows = sum(len(r.rows) for r in runs)
        t_open, store = timed(lambda: open_store(url))
        lines: list[tuple[str, float, str]] = [("open (create + migrate)", t_open, "")]

        def bulk(s: Store = store) -> int:
            for k in range(0, len(runs), args.batch):
                s.add_runs(runs[k : k + args.batch])
            return len(runs)

        t_import, _ = timed(bulk)
        lines.append(
            (
                f"import {len(runs):,} runs ({n_rows:,} rows), {args.batch} per transaction",
                t_import,
                f"{len(runs) / t_import:,.0f} runs/s, {n_rows / t_import:,.0f} rows/s",
            )
        )
        extra = [make_run(args.runs + i, args.sizes) for i in range(200)]
        t_single, _ = timed(lambda: [store.add_run(r) for r in extra])
        lines.append(
            ("import 200 runs, 1 per transaction", t_single, f"{200 / t_single:,.0f} runs/s")
        )
        store.close()

        def query(s: Store) -> list[BenchRun]:
            return s.history("all_reduce", cluster="c1", size_bytes=128 << 20, limit=20)

        cold_store = open_store(url)
        t_cold, hist = timed(lambda: query(cold_store))
        assert len(hist) == 20 and all(len(r.rows) == 2 for r in hist), "history is wrong"
        lines.append(("history(all_reduce, cluster, size, 20), cold", t_cold, "20 runs x 2 rows"))
        t_warm, _ = best_of(5, lambda: query(cold_store))
        lines.append(("history(all_reduce, cluster, size, 20), best of 5", t_warm, ""))
        t_all, full = best_of(5, lambda: cold_store.history("all_reduce", limit=20))
        lines.append(
            (
                "history(all_reduce, 20), all sizes, best of 5",
                t_all,
                f"{len(full[0].rows)} rows/run",
            )
        )
        t_host, by_host = best_of(3, lambda: cold_store.runs(hosts=["node07"], limit=100))
        lines.append(("runs(hosts=[node07], limit=100), best of 3", t_host, f"{len(by_host)} runs"))
        cold_store.close()
        size = ""
        if args.db is None:
            db = Path(url)
            total = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
            size = f", database {total / 2**20:.0f} MiB"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = platform.processor() or platform.machine()
    print(
        f"# machine: {platform.node()} {cpu}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, peak RSS {rss:.0f} MiB{size}"
    )
    print("| step | seconds | detail |")
    print("|---|---:|---|")
    for name, seconds, detail in lines:
        print(f"| {name} | {seconds:.3f} | {detail} |")


if __name__ == "__main__":
    main()
