"""Benchmark results: keep, compare and track collective benchmarks over time (issue 20, S23).

* :mod:`~aifabric.bench.model`: :class:`BenchRow`, :class:`BenchRun`, :class:`Change`, the
  nccl-tests shaped records every runner, importer and the store exchange;
* :mod:`~aifabric.bench.store`: the SQLAlchemy store (SQLite by default, PostgreSQL by URL),
  migrated to the newest schema by alembic on open (``open_store``);
* :mod:`~aifabric.bench.importer`: nccl-tests text or ``-J`` JSON → one :class:`BenchRun` per test.

Only the model is imported here: the store pulls SQLAlchemy in, so it is imported on use.
"""

from aifabric.bench.model import BenchRow, BenchRun, Change

__all__ = ["BenchRow", "BenchRun", "Change"]
