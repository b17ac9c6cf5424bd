"""The built-in collective benchmark: ring all-reduce, all-gather and send/recv between ranks
over TCP, numpy ``float32`` buffers on the CPU, so a fabric has a baseline before it has GPUs
or RDMA (issue 20, S23). One process per rank (:mod:`aifabric.bench.worker`); rank 0 prints
the result in nccl-tests' text format, which :mod:`aifabric.evidence.nccl_tests` reads.

Wiring and transport: :mod:`aifabric.bench.ring`.

Algorithms (``n`` ranks, ``c`` elements, chunk ``k`` = elements ``[k·c/n, (k+1)·c/n)``):

* all-reduce: reduce-scatter then all-gather, ``2(n-1)`` steps. Reduce-scatter step ``s``
  sends chunk ``(r-s) mod n`` and receives chunk ``(r-s-1) mod n`` into a scratch buffer that
  is added to the own copy; after ``n-1`` steps rank ``r`` holds the complete sum of chunk
  ``(r+1) mod n``. All-gather step ``s`` sends chunk ``(r+1-s) mod n`` and receives chunk
  ``(r-s) mod n`` in place. Each rank sends ``2(n-1)/n · S`` bytes for an ``S``-byte buffer;
* all-gather: ``n-1`` steps passing ``c``-element blocks round the ring (step ``s`` sends block
  ``(r-s) mod n``, receives block ``(r-s-1) mod n``), ``(n-1)/n · S`` bytes per rank for an
  ``S``-byte result;
* send/recv: every rank sends its buffer to the next rank and receives the previous one's (the
  pattern of nccl-tests' ``sendrecv_perf``: ``sendPeer = rank+1``, ``recvPeer = rank-1``).

Measurement per message size and placement (out-of-place, then in-place unless turned off;
send/recv has no in-place variant here: its cells print ``N/A``): ``warmup`` untimed
iterations, a barrier, ``iters`` timed iterations back to back, a barrier; ``time`` = rank 0's
wall time between the two barriers / ``iters`` (the closing barrier waits for the slowest rank,
so the time covers every rank; it adds one round trip to rank 0, divided by ``iters``). Then
the buffers are filled afresh, the collective runs once more and every rank counts the
elements that differ from the exact expected value (small integers in ``float32`` sum
exactly); ``#wrong`` is the sum over ranks.

Bandwidths (nccl-tests' definitions, https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
``algbw = size / time`` in GB/s (10⁹ B/s) and ``busbw = algbw · factor`` with factor
``2(n-1)/n`` for all-reduce, ``(n-1)/n`` for all-gather (whose ``size`` is the gathered
result, ``n`` times the per-rank ``count``) and ``1`` for send/recv. Sizes round down as in
nccl-tests: whole ``float32`` elements, and for all-gather a per-rank count that is a multiple
of 4 elements (16 bytes).

Output (:func:`format_nccl_tests`): nccl-tests 2.17's layout (``# Collective test starting``,
the ``# nThread`` parameter line, one ``#  Rank`` line per rank with its host name and
``[tcp ADDR:PORT]`` where nccl-tests names the GPU's bus id, the three-line column header,
one row per size, ``# Out of bounds values`` and ``# Avg bus bandwidth``). One deliberate
difference: nccl-tests prints bandwidths as ``%6.2f`` GB/s, which would round every TCP run in
a rate-scaled lab (a few MB/s) to ``0.00``/``0.01``; here a bandwidth below 1 GB/s keeps 3
significant digits (``0.0125``), so the text carries what was measured (to 0.5 %).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from aifabric.bench.model import BenchRow, BenchRun
from aifabric.bench.ring import F32, RankInfo, Ring

__all__ = [
    "COLLECTIVES",
    "CollectiveResult",
    "PlaceResult",
    "SizeResult",
    "all_gather",
    "all_reduce",
    "busbw_factor",
    "format_nccl_tests",
    "result_from_dict",
    "run_benchmark",
    "sendrecv",
    "size_sweep",
    "to_bench_run",
]

COLLECTIVES = ("all_reduce", "all_gather", "sendrecv")
"""The collectives the built-in benchmark runs (nccl-tests' names without ``_perf``)."""

TOOL_NAME = "aifabric built-in collective benchmark"
_ELT = 4  # float32

# --------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class PlaceResult:
    """One placement of one size: µs per iteration, GB/s, and the ``#wrong`` count."""

    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: int


@dataclass(frozen=True)
class SizeResult:
    """One message size: ``size_bytes`` as nccl-tests prints it, ``count`` elements per rank
    buffer (all-gather: per rank's contribution), and the two placements."""

    size_bytes: int
    count: int
    out_of_place: PlaceResult
    in_place: PlaceResult | None


@dataclass(frozen=True)
class CollectiveResult:
    """A whole run as rank 0 saw it."""

    collective: str
    ranks: tuple[RankInfo, ...]
    rows: tuple[SizeResult, ...]
    started: datetime
    warmup: int
    iters: int
    min_bytes: int
    max_bytes: int
    factor: int

    @property
    def wrong(self) -> int:
        """All ``#wrong`` counts summed (nccl-tests' "Out of bounds values")."""
        total = 0
        for row in self.rows:
            total += row.out_of_place.wrong + (row.in_place.wrong if row.in_place else 0)
        return total

    @property
    def avg_busbw_gbps(self) -> float:
        """Mean busbw over every row and placement, as nccl-tests' "Avg bus bandwidth"."""
        vals = [p.busbw_gbps for r in self.rows for p in (r.out_of_place, r.in_place) if p]
        return sum(vals) / len(vals) if vals else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``started`` as ISO 8601); :func:`result_from_dict` reads it back."""
        d = asdict(self)
        d["started"] = self.started.isoformat()
        return d


def result_from_dict(data: dict[str, Any]) -> CollectiveResult:
    """Inverse of :meth:`CollectiveResult.to_dict` (the worker's ``--json`` file)."""

    def place(p: dict[str, Any] | None) -> PlaceResult | None:
        return None if p is None else PlaceResult(**p)

    rows = []
    for r in data["rows"]:
        oop = place(r["out_of_place"])
        assert oop is not None
        rows.append(SizeResult(r["size_bytes"], r["count"], oop, place(r["in_place"])))
    return CollectiveResult(
        collective=data["collective"],
        ranks=tuple(RankInfo(**r) for r in data["ranks"]),
        rows=tuple(rows),
        started=datetime.fromisoformat(data["started"]),
        warmup=data["warmup"],
        iters=data["iters"],
        min_bytes=data["min_bytes"],
        max_bytes=data["max_bytes"],
        factor=data["factor"],
    )


def busbw_factor(collective: str, n: int) -> float:
    """nccl-tests' bus bandwidth factor: ``2(n-1)/n`` all-reduce, ``(n-1)/n`` all-gather,
    ``1`` send/recv (doc/PERFORMANCE.md)."""
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective == "all_gather":
        return (n - 1) / n
    if collective == "sendrecv":
        return 1.0
    raise ValueError(f"collective {collective!r}: known are {', '.join(COLLECTIVES)}")


def size_sweep(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """``min, min·f, min·f², ... <= max`` (nccl-tests ``-b -e -f``)."""
    if min_bytes <= 0 or max_bytes < min_bytes or factor < 2:
        raise ValueError(
            f"sizes {min_bytes}..{max_bytes} x{factor}: need 0 < min <= max and factor >= 2"
        )
    out, size = [], min_bytes
    while size <= max_bytes:
        out.append(size)
        size *= factor
    return out


def _count(collective: str, size_bytes: int, n: int) -> tuple[int, int]:
    """(elements per rank buffer, size as printed) for a requested size, rounded down the way
    nccl-tests does (all-gather: per-rank count a multiple of 16 bytes)."""
    if collective == "all_gather":
        base = (size_bytes // _ELT // n) & ~3
        return base, base * _ELT * n
    count = size_bytes // _ELT
    return count, count * _ELT


# --------------------------------------------------------------------------------------------
# collectives


def _chunks(count: int, n: int) -> list[tuple[int, int]]:
    return [(k * count // n, (k + 1) * count // n) for k in range(n)]


def all_reduce(ring: Ring, send: F32, recv: F32) -> None:
    """Ring all-reduce (sum) of ``send`` into ``recv``; ``recv is send`` for in-place."""
    if recv is not send:
        np.copyto(recv, send)
    n, r = ring.size, ring.rank
    b = _chunks(recv.size, n)
    scratch = np.empty(max(hi - lo for lo, hi in b), dtype=np.float32)
    for s in range(n - 1):
        slo, shi = b[(r - s) % n]
        rlo, rhi = b[(r - s - 1) % n]
        tmp = scratch[: rhi - rlo]
        ring.exchange(recv[slo:shi], tmp)
        recv[rlo:rhi] += tmp
    for s in range(n - 1):
        slo, shi = b[(r + 1 - s) % n]
        rlo, rhi = b[(r - s) % n]
        ring.exchange(recv[slo:shi], recv[rlo:rhi])


def all_gather(ring: Ring, send: F32, recv: F32) -> None:
    """Ring all-gather: ``recv`` (``n`` blocks of ``send.size``) gets every rank's ``send`` in
    rank order; in-place when ``send`` is ``recv``'s own block."""
    n, r, c = ring.size, ring.rank, send.size
    own = recv[r * c : (r + 1) * c]
    if not np.shares_memory(own, send):
        np.copyto(own, send)
    for s in range(n - 1):
        k_send, k_recv = (r - s) % n, (r - s - 1) % n
        ring.exchange(recv[k_send * c : (k_send + 1) * c], recv[k_recv * c : (k_recv + 1) * c])


def sendrecv(ring: Ring, send: F32, recv: F32) -> None:
    """Send ``send`` to the next rank, receive the previous rank's into ``recv``."""
    ring.exchange(send, recv)


_OPS: dict[str, Callable[[Ring, F32, F32], None]] = {
    "all_reduce": all_reduce,
    "all_gather": all_gather,
    "sendrecv": sendrecv,
}


def _pattern(count: int, rank: int) -> F32:
    """Rank ``rank``'s data: small integers (exact in float32, sums included)."""
    return ((np.arange(count, dtype=np.int64) % 251) + 256 * rank).astype(np.float32)


def _expected(collective: str, count: int, rank: int, n: int) -> F32:
    if collective == "all_reduce":
        base = (np.arange(count, dtype=np.int64) % 251) * n + 256 * (n * (n - 1) // 2)
        return base.astype(np.float32)
    if collective == "all_gather":
        return np.concatenate([_pattern(count, k) for k in range(n)])
    return _pattern(count, (rank - 1) % n)


class _Buffers:
    """Send and receive buffers of one size and placement."""

    def __init__(self, collective: str, count: int, n: int, rank: int, in_place: bool) -> None:
        self.collective, self.count, self.n, self.rank = collective, count, n, rank
        out = count * n if collective == "all_gather" else count
        self.recv: F32 = np.zeros(out, dtype=np.float32)
        if in_place:
            self.send = (
                self.recv[rank * count : (rank + 1) * count]
                if collective == "all_gather"
                else self.recv
            )
        else:
            self.send = np.empty(count, dtype=np.float32)

    def fill(self) -> None:
        self.recv.fill(0)
        self.send[:] = _pattern(self.count, self.rank)

    def wrong(self) -> int:
        want = _expected(self.collective, self.count, self.rank, self.n)
        return int(np.count_nonzero(self.recv != want))


def _measure(
    ring: Ring,
    collective: str,
    count: int,
    size_bytes: int,
    *,
    warmup: int,
    iters: int,
    in_place: bool,
) -> PlaceResult:
    op = _OPS[collective]
    buf = _Buffers(collective, count, ring.size, ring.rank, in_place)
    buf.fill()
    with np.errstate(all="ignore"):  # in-place sums grow; only the timing matters here
        for _ in range(warmup):
            op(ring, buf.send, buf.recv)
        ring.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            op(ring, buf.send, buf.recv)
        ring.barrier()
        elapsed = time.perf_counter() - t0
    buf.fill()
    op(ring, buf.send, buf.recv)
    wrong = ring.sum_to_root(buf.wrong())
    sec = elapsed / iters
    algbw = size_bytes / sec / 1e9 if sec > 0 else 0.0
    return PlaceResult(sec * 1e6, algbw, algbw * busbw_factor(collective, ring.size), wrong)


def run_benchmark(
    ring: Ring,
    collective: str,
    sizes: Sequence[int],
    *,
    warmup: int = 1,
    iters: int = 5,
    in_place: bool = True,
    factor: int = 2,
    on_row: Callable[[SizeResult], None] | None = None,
) -> CollectiveResult:
    """Sweep ``sizes`` (bytes, as requested; rounded as nccl-tests does) on a connected ring.
    Every rank calls it with the same arguments; the result is meaningful at rank 0 (times
    and ``#wrong`` sums are rank 0's). ``on_row`` sees each size as it completes."""
    if collective not in _OPS:
        raise ValueError(f"collective {collective!r}: known are {', '.join(COLLECTIVES)}")
    if iters < 1 or warmup < 0:
        raise ValueError(f"iters {iters} / warmup {warmup}: need iters >= 1, warmup >= 0")
    started = datetime.now(UTC)
    rows: list[SizeResult] = []
    for requested in sizes:
        count, size_bytes = _count(collective, requested, ring.size)
        if count == 0:
            continue
        oop = _measure(
            ring, collective, count, size_bytes, warmup=warmup, iters=iters, in_place=False
        )
        ip = (
            _measure(ring, collective, count, size_bytes, warmup=warmup, iters=iters, in_place=True)
            if in_place and collective != "sendrecv"
            else None
        )
        row = SizeResult(size_bytes, count, oop, ip)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return CollectiveResult(
        collective=collective,
        ranks=ring.ranks,
        rows=tuple(rows),
        started=started,
        warmup=warmup,
        iters=iters,
        min_bytes=min(sizes, default=0),
        max_bytes=max(sizes, default=0),
        factor=factor,
    )


# --------------------------------------------------------------------------------------------
# output


def _float(value: float, width: int) -> str:
    """nccl-tests' getFloatStr (``%.2f``, else ``%.1f``, else ``%.0f`` to fit ``width``)."""
    for digits in (2, 1, 0):
        text = f"{value:{width}.{digits}f}"
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}"


def _bw(value: float) -> str:
    """A bandwidth cell: ``%6.2f`` from 1 GB/s up (as nccl-tests), below that 3 significant
    digits (see the module docstring), never an exponent."""
    if value >= 1 or value <= 0 or not math.isfinite(value):
        return _float(value, 6)
    digits = min(9, 2 - math.floor(math.log10(value)))
    return f"{value:6.{digits}f}"


def _place(p: PlaceResult | None) -> str:
    if p is None:
        return f"  {'N/A':>7}  {'N/A':>6}  {'N/A':>6}  {'N/A':>6}"
    return f"  {_float(p.time_us, 7)}  {_bw(p.algbw_gbps)}  {_bw(p.busbw_gbps)}  {p.wrong:6g}"


def format_nccl_tests(result: CollectiveResult) -> str:
    """The run in nccl-tests' text layout (see the module docstring)."""
    binary = f"{result.collective}_perf"
    redop = "sum" if result.collective != "all_gather" else "none"
    lines = [
        f"# {TOOL_NAME} (python -m aifabric.bench.worker): ring over TCP sockets, numpy "
        "float32 buffers on the CPU, no GPU; output in the nccl-tests format",
        f"# Collective test starting: {binary}",
        f"# nThread 1 nGpus 1 minBytes {result.min_bytes} maxBytes {result.max_bytes} step: "
        f"{result.factor}(factor) warmup iters: {result.warmup} iters: {result.iters} "
        "agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for r in result.ranks:
        lines.append(
            f"#  Rank {r.rank:2d} Group  0 Pid {r.pid:6d} on {r.name:>10} device  0 "
            f"[tcp {r.addr}:{r.port}] CPU numpy float32"
        )
    e = ""
    lines += [
        "#",
        f"# {e:>10}  {e:>12}  {e:>8}  {e:>6}  {e:>6}           out-of-place"
        "                       in-place          ",
        f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  {'time':>7}  "
        f"{'algbw':>6}  {'busbw':>6}  {'#wrong':>6}  {'time':>7}  {'algbw':>6}  {'busbw':>6}  "
        f"{'#wrong':>6}",
        f"# {'(B)':>10}  {'(elements)':>12}  {e:>8}  {e:>6}  {e:>6}  {'(us)':>7}  "
        f"{'(GB/s)':>6}  {'(GB/s)':>6}  {e:>6}  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}",
    ]
    for row in result.rows:
        lines.append(
            f"{row.size_bytes:12d}  {row.count:12d}  {'float':>8}  {redop:>6}  {-1:6d}"
            + _place(row.out_of_place)
            + _place(row.in_place)
        )
    wrong = result.wrong
    lines += [
        f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}",
        f"# Avg bus bandwidth    : {result.avg_busbw_gbps:.6g} ",
        "#",
        f"# Collective test concluded: {binary}",
        "",
    ]
    return "\n".join(lines)


def to_bench_run(
    result: CollectiveResult,
    *,
    label: str | None = None,
    cluster: str | None = None,
    env: dict[str, str] | None = None,
    source: str | None = None,
) -> BenchRun:
    """The run as a :class:`~aifabric.bench.model.BenchRun` (tool ``builtin``), with the
    exact measured values (not the rounded text)."""
    rows: list[BenchRow] = []
    redop = "sum" if result.collective != "all_gather" else None
    for r in result.rows:
        for p, in_place in ((r.out_of_place, False), (r.in_place, True)):
            if p is not None:
                rows.append(
                    BenchRow(
                        size_bytes=r.size_bytes,
                        count=r.count,
                        dtype="float",
                        redop=redop,
                        time_us=p.time_us,
                        algbw_gbps=p.algbw_gbps,
                        busbw_gbps=p.busbw_gbps,
                        in_place=in_place,
                        wrong=float(p.wrong),
                    )
                )
    return BenchRun(
        collective=result.collective,
        tool="builtin",
        rows=tuple(rows),
        started=result.started,
        hosts=tuple(sorted({r.name for r in result.ranks})),
        ranks=len(result.ranks),
        cluster=cluster,
        env=dict(env or {}),
        label=label,
        source=source,
        avg_busbw_gbps=result.avg_busbw_gbps,
    )
