"""Synthetic nccl-tests shaped runs for the compare, plot and CLI tests (seeded, no I/O).

``healthy_busbw(size)`` is a saturating curve ``peak · S / (S + S½)`` (180 GB/s peak, half of it
at 4 MiB), the shape of a measured all-reduce sweep; ``make_run`` turns a busbw per size into
rows whose ``time_us`` and ``algbw`` agree with it exactly as nccl-tests computes them
(``busbw = algbw · 2(n-1)/n``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from aifabric.bench.model import BenchRow, BenchRun

PEAK_GBPS = 180.0
HALF_BYTES = 4 << 20
RANKS = 16
SIZES: tuple[int, ...] = tuple(8 << i for i in range(31))  # 8 B .. 8 GiB
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def factor(ranks: int = RANKS) -> float:
    return 2.0 * (ranks - 1) / ranks


def healthy_busbw(size: int) -> float:
    return PEAK_GBPS * size / (size + HALF_BYTES)


def make_run(
    busbw: Callable[[int], float],
    *,
    sizes: Sequence[int] = SIZES,
    started: datetime = T0,
    cluster: str | None = "lab",
    ranks: int = RANKS,
    pair: tuple[str, str] | None = None,
    collective: str = "all_reduce",
    tool: str = "nccl-tests",
    source: str | None = None,
    run_id: int | None = None,
) -> BenchRun:
    """A run whose busbw at each size is ``busbw(size)`` (time and algbw consistent)."""
    rows = []
    for s in sizes:
        b = busbw(s)
        alg = b / factor(ranks)
        t = s / (alg * 1e9) * 1e6
        rows.append(BenchRow(s, s // 4, "float", "sum", t, alg, b, False, 0.0))
    return BenchRun(
        collective=collective,
        tool=tool,
        rows=tuple(rows),
        started=started,
        ranks=ranks,
        cluster=cluster,
        pair=pair,
        source=source,
        id=run_id,
    )


def noisy(
    base: Callable[[int], float], rng: random.Random, noise: float = 0.02
) -> Callable[[int], float]:
    """``base`` times a uniform factor in ``[1 - noise, 1 + noise]`` per size."""
    table = {s: base(s) * rng.uniform(1.0 - noise, 1.0 + noise) for s in SIZES}
    return lambda s: table[s] if s in table else base(s)


def history(n: int = 10, *, seed: int = 7, noise: float = 0.02) -> list[BenchRun]:
    """``n`` healthy runs a day apart, newest last, ids 1..n."""
    rng = random.Random(seed)
    return [
        make_run(noisy(healthy_busbw, rng, noise), started=T0 + timedelta(days=i), run_id=i + 1)
        for i in range(n)
    ]


def degraded(min_size: int = 64 << 20, share: float = 0.7, *, seed: int = 99) -> BenchRun:
    """A new run: busbw x ``share`` at sizes >= ``min_size``, healthy noise elsewhere."""
    rng = random.Random(seed)
    healthy = noisy(healthy_busbw, rng)
    return make_run(
        lambda s: healthy(s) * (share if s >= min_size else 1.0),
        started=T0 + timedelta(days=30),
        source="new.txt",
    )


def nccl_text(run: BenchRun, *, gpus_per_host: int = 8) -> str:
    """``run`` printed as ``all_reduce_perf`` prints it (header, device lines, table with
    the out-of-place and the in-place half equal, summary), for the import/compare CLI."""
    ranks = run.ranks or 1
    name = f"{run.collective}_perf"
    sizes = [r.size_bytes for r in run.rows]
    lines = [
        "# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22602",
        f"# Collective test starting: {name}",
        f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in range(ranks):
        host = f"node{rank // gpus_per_host + 1}"
        dev = rank % gpus_per_host
        lines.append(
            f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {host:>10} device {dev:2d} "
            f"[0000:{dev:02x}:00] NVIDIA H100 80GB HBM3"
        )
    lines += [
        "#",
        "#                                                              out-of-place"
        "                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
        "      (us)  (GB/s)  (GB/s)         ",
    ]
    for r in run.rows:
        half = f"{r.time_us:8.2f} {r.algbw_gbps:7.2f} {r.busbw_gbps:7.2f}      0"
        lines.append(
            f"{r.size_bytes:12d} {r.size_bytes // 4:13d}     float     sum      -1 {half} {half}"
        )
    avg = sum(r.busbw_gbps for r in run.rows) / len(run.rows)
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {avg:.4f} ",
        "#",
        f"# Collective test concluded: {name}",
        "#",
    ]
    return "\n".join(lines) + "\n"
