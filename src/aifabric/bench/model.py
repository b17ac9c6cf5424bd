"""The records benchmarks are kept as: nccl-tests shaped, whatever ran them (issue 20).

A :class:`BenchRun` is one test of one tool (one ``all_reduce_perf`` invocation, one
``ib_write_bw`` pair, one built-in collective) with one :class:`BenchRow` per message size.
Rows follow nccl-tests' columns: ``size`` in bytes, ``count`` elements, ``type``, ``redop``,
``time`` in µs, ``algbw`` and ``busbw`` in GB/s (10⁹ bytes per second, as nccl-tests prints)
and ``#wrong``; in-place and out-of-place results are separate rows told apart by
``in_place``. ``busbw = algbw · factor`` with nccl-tests' per-collective factor
(``2(n-1)/n`` for all-reduce; see :mod:`aifabric.perf.collectives`).

:class:`Change` is one entry of the change log (``bench mark-change "PFC on queue 3 only"``):
runs imported afterwards carry its id in :attr:`BenchRun.change_id`, which is what the
before/after reports of S23 group by.

All datetimes are timezone-aware UTC; :func:`utc` normalises naive ones (taken as UTC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = ["BenchRow", "BenchRun", "Change", "utc"]


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (naive values are taken to be UTC already)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One message size of one run, as nccl-tests prints it.

    ``size_bytes`` message size; ``count`` elements (``None`` when the tool has none);
    ``dtype``/``redop`` nccl-tests' ``type``/``redop`` (``None`` for collectives without a
    reduction or tools without types); ``time_us`` time per iteration in µs; ``algbw_gbps`` =
    size / time and ``busbw_gbps`` = algbw · collective factor, both GB/s (10⁹ B/s);
    ``in_place`` the in-place half of a nccl-tests line; ``wrong`` the ``#wrong`` column
    (``None`` when printed as ``N/A`` or absent).
    """

    size_bytes: int
    count: int | None
    dtype: str | None
    redop: str | None
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    in_place: bool
    wrong: float | None


@dataclass(frozen=True)
class BenchRun:
    """One benchmark run: a collective (or a perftest pair) swept over message sizes.

    ``collective`` e.g. ``"all_reduce"``, ``"all_gather"``, ``"sendrecv"``, ``"alltoall"``,
    ``"ib_write_bw"``; ``tool`` ``"nccl-tests"`` | ``"builtin"`` | ``"perftest"``; ``rows`` one
    per size and placement; ``started`` UTC. The keys S23's history is searched by:
    ``cluster``, ``hosts`` (sorted, distinct), ``fabric_hash`` (of the fabric file in use),
    ``nccl_version``, ``driver_version``, ``env`` (NCCL_* and the like), ``change_id`` (the
    latest :class:`Change` when the run was recorded) and ``label`` (``--label``, a note).
    ``source`` names the imported file; ``pair`` marks one member of a pairwise sweep;
    ``avg_busbw_gbps`` nccl-tests' "Avg bus bandwidth" line; ``id`` is set by the store.
    """

    collective: str
    tool: str
    rows: tuple[BenchRow, ...]
    started: datetime
    hosts: tuple[str, ...] = ()
    ranks: int | None = None
    cluster: str | None = None
    fabric_hash: str | None = None
    nccl_version: str | None = None
    driver_version: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    change_id: int | None = None
    label: str | None = None
    source: str | None = None
    pair: tuple[str, str] | None = None
    avg_busbw_gbps: float | None = None
    id: int | None = None


@dataclass(frozen=True)
class Change:
    """One change-log entry: ``text`` what changed, ``at`` when (UTC), ``cluster`` where."""

    id: int
    text: str
    at: datetime
    cluster: str | None
