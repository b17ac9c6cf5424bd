"""nccl-tests definitions, exactly: algbw, busbw factors, and what "size" means (S23, S24).

Source: NVIDIA/nccl-tests ``doc/PERFORMANCE.md`` and the ``*GetBw()`` functions in ``src/*.cu``
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):

* ``algbw = S / t`` in decimal GB/s (``bytes / 1e9 / seconds``);
* ``busbw = algbw · factor(n)``: AllReduce ``2(n−1)/n``; ReduceScatter, AllGather, AlltoAll
  ``(n−1)/n``; Broadcast, Reduce, SendRecv ``1``;
* ``S`` is the size column nccl-tests prints: ``count·typesize`` for AllReduce, Broadcast and
  Reduce, but the **total** buffer (``count·typesize·n``) for AllGather, ReduceScatter and AlltoAll.

NCCL's own tuner works on ``nBytes`` per rank-call: ``count·typesize`` for AllReduce, Broadcast
and Reduce, and ``nRanks·count·typesize`` for AllGather/ReduceScatter, i.e. the same total as the
nccl-tests size column (``enqueue.h: ncclFuncMaxSendRecvCount``).
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "COLLECTIVES",
    "Collective",
    "algbw_GBps",
    "busbw_GBps",
    "busbw_factor",
    "normalize_collective",
]

Collective = Literal["allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce"]
COLLECTIVES: tuple[Collective, ...] = (
    "allreduce",
    "allgather",
    "reducescatter",
    "alltoall",
    "broadcast",
    "reduce",
)

_CANON: dict[str, Collective] = {c: c for c in COLLECTIVES}
_ALIASES: dict[str, Collective] = {
    "all_reduce": "allreduce",
    "all-reduce": "allreduce",
    "all_gather": "allgather",
    "all-gather": "allgather",
    "reduce_scatter": "reducescatter",
    "reduce-scatter": "reducescatter",
    "all_to_all": "alltoall",
    "all-to-all": "alltoall",
    "alltoall": "alltoall",
}


def normalize_collective(name: str) -> Collective | None:
    """``all_reduce_perf`` / ``all_reduce`` / ``AllReduce`` → ``allreduce``; ``None`` if unknown."""
    key = name.strip().lower().removesuffix("_perf")
    if key in COLLECTIVES:
        return _CANON[key]
    return _ALIASES.get(key)


def busbw_factor(collective: Collective, n: int) -> float:
    """nccl-tests' bus-bandwidth correction factor for ``n`` ranks."""
    if n <= 1:
        return 1.0 if collective in ("broadcast", "reduce") else 0.0
    if collective == "allreduce":
        return 2.0 * (n - 1) / n
    if collective in ("allgather", "reducescatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def algbw_GBps(size_bytes: float, time_us: float) -> float:
    """``S / t`` in decimal GB/s, as nccl-tests prints it."""
    return size_bytes / 1e9 / (time_us * 1e-6) if time_us > 0 else 0.0


def busbw_GBps(collective: Collective, n: int, size_bytes: float, time_us: float) -> float:
    """nccl-tests ``busbw`` for a measured or predicted time."""
    return algbw_GBps(size_bytes, time_us) * busbw_factor(collective, n)
