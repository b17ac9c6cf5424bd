"""Where benchmark runs are kept: SQLite by default, PostgreSQL by URL (issue 20, S23).

Location (:func:`resolve_url`): the ``url`` argument (the CLI's ``--db``), else
``$AIFABRIC_DB``, else the SQLite file ``$XDG_DATA_HOME/aifabric/bench.db`` (default
``~/.local/share/aifabric/bench.db``). A value without ``://`` is a file path (SQLite);
``postgresql://USER@HOST:PORT/DB`` uses psycopg 3 (``postgresql+psycopg://``), as does
``postgres://``; ``sqlite:///PATH`` and ``sqlite://`` (in memory) are SQLAlchemy URLs.

Schema (SQLAlchemy Core, created and upgraded by the alembic revisions shipped in
``aifabric/bench/migrations``; :func:`open_store` upgrades to the newest on every open and
records the revision in ``aifabric_bench_alembic_version``, not ``alembic_version``, so the
tables can share a database with another alembic-managed application):

* ``bench_runs``: one row per :class:`~aifabric.bench.model.BenchRun`; ``hosts`` (in order)
  and ``env`` as JSON text; indexes ``(collective, started)``, ``(collective, cluster,
  started)`` (the history query), ``(cluster, started)``, ``(started)``, ``(label)``;
* ``bench_rows``: one row per :class:`~aifabric.bench.model.BenchRow`, keyed ``(run_id, seq)``
  (``WITHOUT ROWID`` on SQLite, so a run's rows are stored together), index
  ``(run_id, size_bytes)`` for the per-size history;
* ``bench_run_hosts``: ``(run_id, host)`` with index ``(host, run_id)``: the ``hosts=`` filter;
* ``bench_changes``: the change log, index ``(cluster, at)``.

Times are stored as naive UTC and read back as aware UTC.

Concurrency: every SQLite connection sets ``busy_timeout`` (30 s), ``journal_mode=WAL`` (readers
never block the writer), ``synchronous=NORMAL`` and ``foreign_keys=ON``; write transactions
start with ``BEGIN IMMEDIATE`` (the write lock is taken, or waited for, before anything is
read, so two writers never deadlock into an instant ``database is locked``), and a transaction
that still fails with ``database is locked``/``busy`` (or, on PostgreSQL, a serialization
failure or deadlock) is rolled back and run again, up to :data:`RETRIES` times with jittered
backoff. Schema upgrades run under the same write lock on SQLite and under a transaction-level
advisory lock on PostgreSQL, so processes opening a new database at once do not race.

Errors: a file that is not an SQLite database (or a damaged one), a URL that does not parse,
an unknown backend or a schema revision this version does not know are :class:`InputError`
(exit 2, one line naming the database and the fix); a server that cannot be reached, a missing
driver, a directory that cannot be created or a lock that never clears are
:class:`EnvironmentProblem` (exit 3).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from aifabric.bench.model import BenchRow, BenchRun, Change, utc
from aifabric.errors import EnvironmentProblem, InputError

__all__ = [
    "MIGRATIONS_DIR",
    "RETRIES",
    "VERSION_TABLE",
    "Store",
    "alembic_config",
    "default_db_path",
    "metadata",
    "open_store",
    "opened",
    "resolve_url",
]

T = TypeVar("T")

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
"""The alembic script directory shipped inside the package."""
VERSION_TABLE = "aifabric_bench_alembic_version"
"""alembic's version table for this schema (not the default ``alembic_version``)."""
RETRIES = 8
"""Attempts per transaction on ``database is locked`` / serialization failures."""
BUSY_TIMEOUT_MS = 30_000
"""SQLite ``busy_timeout``: how long one statement waits for a lock before failing."""
HISTORY_LIMIT = 20
"""Default number of runs :meth:`Store.history` returns."""
_PG_LOCK_KEY = 0x41494642  # "AIFB": advisory lock held while migrating
_CHUNK = 500  # ids per IN (...) when loading rows
_BEGIN_MODES = frozenset({"DEFERRED", "IMMEDIATE"})


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A naive ``DATETIME``/``TIMESTAMP`` column holding UTC; aware UTC in Python."""

    impl = sa.DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        return None if value is None else utc(value).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # a SQLite value written by hand
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = sa.MetaData()
"""The schema as this version of the code expects it (the migrations create exactly this;
``tests/unit/bench/test_store.py`` compares the two with alembic's autogenerate)."""

changes_t = sa.Table(
    "bench_changes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("cluster", sa.Text),
    sa.Index("ix_bench_changes_cluster_at", "cluster", "at"),
)

runs_t = sa.Table(
    "bench_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("collective", sa.Text, nullable=False),
    sa.Column("tool", sa.Text, nullable=False),
    sa.Column("started", UTCDateTime, nullable=False),
    sa.Column("recorded", UTCDateTime, nullable=False),
    sa.Column("cluster", sa.Text),
    sa.Column("fabric_hash", sa.Text),
    sa.Column("nccl_version", sa.Text),
    sa.Column("driver_version", sa.Text),
    sa.Column("env", sa.Text, nullable=False),
    sa.Column("hosts", sa.Text, nullable=False),
    sa.Column("ranks", sa.Integer),
    sa.Column("change_id", sa.Integer, sa.ForeignKey("bench_changes.id")),
    sa.Column("label", sa.Text),
    sa.Column("source", sa.Text),
    sa.Column("pair_a", sa.Text),
    sa.Column("pair_b", sa.Text),
    sa.Column("avg_busbw_gbps", sa.Double),
    sa.Index("ix_bench_runs_collective_started", "collective", "started"),
    sa.Index("ix_bench_runs_collective_cluster_started", "collective", "cluster", "started"),
    sa.Index("ix_bench_runs_cluster_started", "cluster", "started"),
    sa.Index("ix_bench_runs_started", "started"),
    sa.Index("ix_bench_runs_label", "label"),
)

rows_t = sa.Table(
    "bench_rows",
    metadata,
    sa.Column(
        "run_id",
        sa.Integer,
        sa.ForeignKey("bench_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("count", sa.BigInteger),
    sa.Column("dtype", sa.Text),
    sa.Column("redop", sa.Text),
    sa.Column("time_us", sa.Double, nullable=False),
    sa.Column("algbw_gbps", sa.Double, nullable=False),
    sa.Column("busbw_gbps", sa.Double, nullable=False),
    sa.Column("in_place", sa.Boolean, nullable=False),
    sa.Column("wrong", sa.Double),
    sa.Index("ix_bench_rows_run_size", "run_id", "size_bytes"),
    sqlite_with_rowid=False,
)

hosts_t = sa.Table(
    "bench_run_hosts",
    metadata,
    sa.Column(
        "run_id",
        sa.Integer,
        sa.ForeignKey("bench_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("host", sa.Text, primary_key=True),
    sa.Index("ix_bench_run_hosts_host", "host", "run_id"),
    sqlite_with_rowid=False,
)


# --------------------------------------------------------------------------------------------
# locating the database


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/aifabric/bench.db``, ``~/.local/share/aifabric/bench.db`` when unset (a
    relative ``XDG_DATA_HOME`` is ignored, as the XDG base directory spec says)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "aifabric" / "bench.db"


def resolve_url(url: str | None = None) -> str:
    """The SQLAlchemy URL for ``url`` / ``$AIFABRIC_DB`` / the default file (see module doc)."""
    chosen = (url or "").strip() or os.environ.get("AIFABRIC_DB", "").strip()
    if not chosen:
        return URL.create("sqlite", database=str(default_db_path())).render_as_string()
    if "://" not in chosen:
        path = Path(chosen).expanduser().resolve()
        return URL.create("sqlite", database=str(path)).render_as_string()
    scheme, rest = chosen.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return chosen


def _redacted(url: URL) -> str:
    return url.render_as_string(hide_password=True)


# --------------------------------------------------------------------------------------------
# engine and errors


def _sqlite_engine(url: URL) -> Engine:
    engine = sa.create_engine(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # the driver's implicit BEGIN off: ours below
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = str(conn.get_execution_options().get("aifabric_begin", "DEFERRED"))
        conn.exec_driver_sql(f"BEGIN {mode if mode in _BEGIN_MODES else 'DEFERRED'}")

    return engine


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip() or exc.__class__.__name__
    return text.splitlines()[0]


def _retryable(exc: DBAPIError) -> bool:
    """``database is locked`` / ``busy`` (SQLite), serialization failure or deadlock (PG)."""
    if getattr(exc.orig, "sqlstate", None) in ("40001", "40P01", "55P03"):
        return True
    text = str(exc.orig).lower()
    return "database is locked" in text or "database table is locked" in text or "busy" in text


def _translate(exc: SQLAlchemyError, url: URL) -> Exception:
    """An :class:`InputError` or :class:`EnvironmentProblem` (one line) for a database error."""
    where = _redacted(url)
    why = _first_line(exc)
    if url.get_backend_name() == "sqlite" and isinstance(exc, DBAPIError):
        lowered = why.lower()
        if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            return InputError(
                f"{where}: not a usable aifabric bench database ({why}); give --db or "
                "AIFABRIC_DB another file, or move this one away"
            )
        if "no such table" in lowered or "no such column" in lowered:
            return InputError(
                f"{where}: the tables do not match the aifabric bench schema ({why}); "
                "use a database that aifabric created"
            )
    if isinstance(exc, DBAPIError) and _retryable(exc):
        return EnvironmentProblem(
            f"{where}: still locked after {RETRIES} attempts ({why}); another process holds "
            "a long write transaction"
        )
    if isinstance(exc, OperationalError):
        return EnvironmentProblem(f"{where}: cannot use the database ({why})")
    return EnvironmentProblem(f"{where}: database error ({why})")


# --------------------------------------------------------------------------------------------
# migrations


def alembic_config(url: str | None = None) -> Any:
    """An alembic ``Config`` for the shipped migrations (no ini file); ``url`` (resolved like
    :func:`open_store`'s) is set as ``sqlalchemy.url`` for alembic commands run without a
    connection (``command.history`` needs none)."""
    from alembic.config import Config  # noqa: PLC0415 - alembic is only needed to migrate

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    cfg.attributes["version_table"] = VERSION_TABLE
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", resolve_url(url).replace("%", "%%"))
    return cfg


_HEAD: list[str] = []


def _head_revision(cfg: Any) -> str:
    if not _HEAD:
        from alembic.script import ScriptDirectory  # noqa: PLC0415

        head = ScriptDirectory.from_config(cfg).get_current_head()
        _HEAD.append(str(head))
    return _HEAD[0]


def _upgrade(conn: Connection) -> None:
    """Bring the schema to head inside the caller's (write-locked) transaction."""
    from alembic import command  # noqa: PLC0415
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
    cfg = alembic_config()
    current = MigrationContext.configure(
        conn, opts={"version_table": VERSION_TABLE}
    ).get_current_revision()
    if current == _head_revision(cfg):
        return
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, "head")


# --------------------------------------------------------------------------------------------
# the store


def _check_text(value: str | None, what: str) -> None:
    if value is not None and "\x00" in value:
        raise InputError(f"{what} {value[:40]!r} holds a NUL character; remove it")


def _check_float(value: float | None, what: str) -> None:
    if value is not None and not math.isfinite(value):
        raise InputError(f"{what} is {value}: only finite numbers can be stored")


def _run_params(run: BenchRun, recorded: datetime) -> dict[str, Any]:
    for what in ("collective", "tool", "cluster", "fabric_hash", "nccl_version"):
        _check_text(getattr(run, what), what)
    for what in ("driver_version", "label", "source"):
        _check_text(getattr(run, what), what)
    for h in (*run.hosts, *(run.pair or ()), *run.env, *run.env.values()):
        _check_text(h, "host/env value")
    _check_float(run.avg_busbw_gbps, "avg_busbw_gbps")
    return {
        "collective": run.collective,
        "tool": run.tool,
        "started": utc(run.started),
        "recorded": recorded,
        "cluster": run.cluster,
        "fabric_hash": run.fabric_hash,
        "nccl_version": run.nccl_version,
        "driver_version": run.driver_version,
        "env": json.dumps(run.env, sort_keys=True, ensure_ascii=False),
        "hosts": json.dumps(list(run.hosts), ensure_ascii=False),
        "ranks": run.ranks,
        "change_id": run.change_id,
        "label": run.label,
        "source": run.source,
        "pair_a": run.pair[0] if run.pair else None,
        "pair_b": run.pair[1] if run.pair else None,
        "avg_busbw_gbps": run.avg_busbw_gbps,
    }


_ROW_INSERT_COLUMNS = (
    "run_id",
    "seq",
    "size_bytes",
    "count",
    "dtype",
    "redop",
    "time_us",
    "algbw_gbps",
    "busbw_gbps",
    "in_place",
    "wrong",
)
_PLACEHOLDER = {"qmark": "?", "format": "%s", "pyformat": "%s"}


def _row_values(seq: int, row: BenchRow) -> list[Any]:
    """The ``bench_rows`` values of one row in :data:`_ROW_INSERT_COLUMNS` order (``run_id``
    first, filled in once the run has an id); :class:`InputError` on non-finite or NUL."""
    time_us, algbw, busbw, wrong = row.time_us, row.algbw_gbps, row.busbw_gbps, row.wrong
    if not (
        math.isfinite(time_us)
        and math.isfinite(algbw)
        and math.isfinite(busbw)
        and (wrong is None or math.isfinite(wrong))
    ):
        for what in ("time_us", "algbw_gbps", "busbw_gbps", "wrong"):
            _check_float(getattr(row, what), what)
    if row.dtype is not None and "\x00" in row.dtype:
        _check_text(row.dtype, "dtype")
    if row.redop is not None and "\x00" in row.redop:
        _check_text(row.redop, "redop")
    return [
        0,
        seq,
        row.size_bytes,
        row.count,
        row.dtype,
        row.redop,
        time_us,
        algbw,
        busbw,
        bool(row.in_place),
        wrong,
    ]


def _insert_rows(conn: Connection, values: list[list[Any]]) -> None:
    """The rows through the driver: ``COPY ... FROM STDIN`` with psycopg, ``executemany``
    with sqlite3 (SQLAlchemy's per-row parameter processing cost more than the insert
    itself); the Core insert for any other driver."""
    if conn.dialect.driver == "psycopg":  # COPY: 4x the rows per second of executemany
        raw = conn.connection.driver_connection
        assert raw is not None
        columns = ", ".join(_ROW_INSERT_COLUMNS)
        with raw.cursor() as cur, cur.copy(f"COPY {rows_t.name} ({columns}) FROM STDIN") as cp:
            for v in values:
                cp.write_row(v)
        return
    mark = _PLACEHOLDER.get(conn.dialect.paramstyle)
    if mark is None:  # pragma: no cover - sqlite3 and psycopg are positional
        conn.execute(
            rows_t.insert(), [dict(zip(_ROW_INSERT_COLUMNS, v, strict=True)) for v in values]
        )
        return
    sql = (
        f"INSERT INTO {rows_t.name} ({', '.join(_ROW_INSERT_COLUMNS)}) "
        f"VALUES ({', '.join([mark] * len(_ROW_INSERT_COLUMNS))})"
    )
    conn.exec_driver_sql(sql, [tuple(v) for v in values])


def _latest_of(changes: Sequence[Change], cluster: str | None, before: datetime) -> int | None:
    """Id of the newest change of ``cluster`` (or without one) at or before ``before``;
    ``changes`` oldest first, as :meth:`Store.changes` gives them."""
    for c in reversed(changes):
        if c.at <= before and (c.cluster is None or c.cluster == cluster):
            return c.id
    return None


_ROW_COLUMNS = (
    rows_t.c.run_id,
    rows_t.c.size_bytes,
    rows_t.c.count,
    rows_t.c.dtype,
    rows_t.c.redop,
    rows_t.c.time_us,
    rows_t.c.algbw_gbps,
    rows_t.c.busbw_gbps,
    rows_t.c.in_place,
    rows_t.c.wrong,
)


def _chunks(ids: Sequence[int], size: int = _CHUNK) -> Iterator[Sequence[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


class Store:
    """Benchmark runs and the change log in one database (see the module doc).

    Made by :func:`open_store`; usable as a context manager (``with open_store() as s:``),
    which disposes of the connection pool on exit. Methods are safe to call from several
    processes at once; one instance is not meant to be shared between threads.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.url = _redacted(engine.url)
        """The database URL with any password hidden (for messages and reports)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    # -- plumbing ------------------------------------------------------------------------

    def _transaction(self, fn: Callable[[Connection], T], *, write: bool) -> T:
        """Run ``fn`` in one transaction, again on a lock/serialization error; DB errors
        become :class:`InputError` / :class:`EnvironmentProblem`."""
        delay = 0.02
        for attempt in range(RETRIES):
            try:
                with self.engine.connect() as conn:
                    if write and conn.dialect.name == "sqlite":
                        conn.execution_options(aifabric_begin="IMMEDIATE")
                    with conn.begin():
                        return fn(conn)
            except DBAPIError as exc:
                if attempt + 1 < RETRIES and _retryable(exc):
                    time.sleep(delay * (1 + random.random()))
                    delay = min(delay * 2, 1.0)
                    continue
                raise _translate(exc, self.engine.url) from exc
            except SQLAlchemyError as exc:
                raise _translate(exc, self.engine.url) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def upgrade(self) -> None:
        """Create or upgrade the schema to the newest revision (done by :func:`open_store`).

        The recorded revision is read first; only when it is not head is the write lock (and
        on PostgreSQL the advisory lock) taken, the revision read again and alembic run."""
        from alembic.util import CommandError  # noqa: PLC0415

        if self.revision() == _head_revision(alembic_config()):
            return  # the usual case: no write lock taken, readers never wait for writers
        try:
            self._transaction(_upgrade, write=True)
        except CommandError as exc:
            raise InputError(
                f"{self.url}: schema revision unknown to this aifabric ({_first_line(exc)}); "
                "was it written by a newer version?"
            ) from exc

    def revision(self) -> str | None:
        """The schema revision recorded in the database (``None`` before the first upgrade)."""
        from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

        def get(conn: Connection) -> str | None:
            ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
            return ctx.get_current_revision()

        return self._transaction(get, write=False)

    # -- writing ---------------------------------------------------------------------------

    def add_run(self, run: BenchRun) -> int:
        """Store one run (its rows and hosts too); returns its id. See :meth:`add_runs`."""
        return self.add_runs([run])[0]

    def add_runs(self, runs: Iterable[BenchRun]) -> list[int]:
        """Store runs in one transaction (all or none); returns their ids in order.

        A run without ``change_id`` gets the id of the latest change of its cluster (or of a
        change without a cluster) marked at or before its ``started``; the run's own ``id`` is
        ignored. Non-finite numbers and NUL characters are :class:`InputError`.
        """
        batch = list(runs)
        if not batch:
            return []
        recorded = datetime.now(UTC)
        params = [_run_params(r, recorded) for r in batch]
        # validated and built before the write lock is taken
        row_values = [[_row_values(n, row) for n, row in enumerate(r.rows)] for r in batch]
        host_lists = [sorted(set(r.hosts)) for r in batch]
        unstamped = [p for p in params if p["change_id"] is None]

        def write(conn: Connection) -> list[int]:
            if unstamped:
                q = sa.select(changes_t).order_by(changes_t.c.at, changes_t.c.id)
                changes = [_change(m) for m in conn.execute(q).mappings()]
                for p in unstamped:
                    p["change_id"] = _latest_of(changes, p["cluster"], p["started"])
            result = conn.execute(
                runs_t.insert().returning(runs_t.c.id, sort_by_parameter_order=True), params
            )
            ids = [int(i) for i in result.scalars().all()]
            all_rows: list[list[Any]] = []
            all_hosts: list[dict[str, Any]] = []
            for run_id, rows, hosts in zip(ids, row_values, host_lists, strict=True):
                for r in rows:
                    r[0] = run_id
                all_rows.extend(rows)
                all_hosts.extend({"run_id": run_id, "host": h} for h in hosts)
            if all_rows:
                _insert_rows(conn, all_rows)
            if all_hosts:
                conn.execute(hosts_t.insert(), all_hosts)
            return ids

        return self._transaction(write, write=True)

    def mark_change(self, text: str, cluster: str | None = None) -> Change:
        """Record a change (``bench mark-change "PFC on queue 3 only"``) at the current time."""
        if not text.strip():
            raise InputError("mark-change: the change text is empty; say what changed")
        _check_text(text, "change text")
        _check_text(cluster, "cluster")
        at = datetime.now(UTC)

        def write(conn: Connection) -> int:
            res = conn.execute(
                changes_t.insert().returning(changes_t.c.id),
                {"text": text, "at": at, "cluster": cluster},
            )
            return int(res.scalar_one())

        return Change(id=self._transaction(write, write=True), text=text, at=at, cluster=cluster)

    # -- reading -----------------------------------------------------------------------------

    def runs(
        self,
        *,
        cluster: str | None = None,
        collective: str | None = None,
        hosts: Iterable[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        label: str | None = None,
        limit: int | None = None,
    ) -> list[BenchRun]:
        """Runs matching every filter given, newest ``started`` first (ties: newest id first).

        ``hosts``: runs that involved all these hosts; ``since`` inclusive, ``until``
        exclusive; ``None`` means no filter.
        """
        q = sa.select(runs_t)
        if cluster is not None:
            q = q.where(runs_t.c.cluster == cluster)
        if collective is not None:
            q = q.where(runs_t.c.collective == collective)
        if label is not None:
            q = q.where(runs_t.c.label == label)
        if since is not None:
            q = q.where(runs_t.c.started >= utc(since))
        if until is not None:
            q = q.where(runs_t.c.started < utc(until))
        for host in sorted(set(hosts or ())):
            q = q.where(sa.exists().where(hosts_t.c.run_id == runs_t.c.id, hosts_t.c.host == host))
        q = q.order_by(runs_t.c.started.desc(), runs_t.c.id.desc())
        if limit is not None:
            q = q.limit(max(limit, 0))
        return self._transaction(lambda conn: self._load(conn, q, None), write=False)

    def get_run(self, run_id: int) -> BenchRun | None:
        """The run stored under ``run_id``, or ``None``."""
        q = sa.select(runs_t).where(runs_t.c.id == run_id)
        found = self._transaction(lambda conn: self._load(conn, q, None), write=False)
        return found[0] if found else None

    def history(
        self,
        collective: str,
        *,
        cluster: str | None = None,
        size_bytes: int | None = None,
        limit: int = HISTORY_LIMIT,
    ) -> list[BenchRun]:
        """The last ``limit`` runs of ``collective`` (of ``cluster`` when given), newest first.

        With ``size_bytes``: only runs that measured that size, each carrying only its rows of
        that size (both placements): the per-size history a noise band is computed from.
        """
        q = sa.select(runs_t).where(runs_t.c.collective == collective)
        if cluster is not None:
            q = q.where(runs_t.c.cluster == cluster)
        if size_bytes is not None:
            q = q.where(
                sa.exists().where(rows_t.c.run_id == runs_t.c.id, rows_t.c.size_bytes == size_bytes)
            )
        q = q.order_by(runs_t.c.started.desc(), runs_t.c.id.desc()).limit(max(limit, 0))
        return self._transaction(lambda conn: self._load(conn, q, size_bytes), write=False)

    def changes(self, cluster: str | None = None) -> list[Change]:
        """The change log, oldest first; with ``cluster``, that cluster's changes and those
        marked without one."""
        q = sa.select(changes_t)
        if cluster is not None:
            q = q.where(sa.or_(changes_t.c.cluster == cluster, changes_t.c.cluster.is_(None)))
        q = q.order_by(changes_t.c.at, changes_t.c.id)

        def read(conn: Connection) -> list[Change]:
            return [_change(m) for m in conn.execute(q).mappings()]

        return self._transaction(read, write=False)

    def latest_change(
        self, cluster: str | None = None, *, before: datetime | None = None
    ) -> Change | None:
        """The newest change of ``cluster`` (or without a cluster) marked at or before
        ``before`` (default: now); ``None`` when there is none."""
        when = utc(before) if before is not None else None
        return self._transaction(lambda conn: self._latest_change(conn, cluster, when), write=False)

    @staticmethod
    def _latest_change(
        conn: Connection, cluster: str | None, before: datetime | None
    ) -> Change | None:
        q = sa.select(changes_t)
        if cluster is not None:
            q = q.where(sa.or_(changes_t.c.cluster == cluster, changes_t.c.cluster.is_(None)))
        else:
            q = q.where(changes_t.c.cluster.is_(None))
        if before is not None:
            q = q.where(changes_t.c.at <= before)
        q = q.order_by(changes_t.c.at.desc(), changes_t.c.id.desc()).limit(1)
        m = conn.execute(q).mappings().first()
        return _change(m) if m is not None else None

    @staticmethod
    def _load(conn: Connection, q: sa.Select[Any], size_bytes: int | None) -> list[BenchRun]:
        heads = list(conn.execute(q).mappings())
        ids = [int(m["id"]) for m in heads]
        rows: dict[int, list[BenchRow]] = {i: [] for i in ids}
        for part in _chunks(ids):
            rq = sa.select(*_ROW_COLUMNS).where(rows_t.c.run_id.in_(part))
            if size_bytes is not None:
                rq = rq.where(rows_t.c.size_bytes == size_bytes)
            rq = rq.order_by(rows_t.c.run_id, rows_t.c.seq)
            for run_id, size, count, dtype, redop, t, alg, bus, ip, wrong in conn.execute(rq):
                rows[int(run_id)].append(
                    BenchRow(
                        size_bytes=int(size),
                        count=None if count is None else int(count),
                        dtype=dtype,
                        redop=redop,
                        time_us=float(t),
                        algbw_gbps=float(alg),
                        busbw_gbps=float(bus),
                        in_place=bool(ip),
                        wrong=None if wrong is None else float(wrong),
                    )
                )
        return [_run(m, tuple(rows[int(m["id"])])) for m in heads]


def _change(m: Any) -> Change:
    return Change(id=int(m["id"]), text=str(m["text"]), at=m["at"], cluster=m["cluster"])


def _run(m: Any, rows: tuple[BenchRow, ...]) -> BenchRun:
    env = json.loads(m["env"])
    hosts = json.loads(m["hosts"])
    pair = (str(m["pair_a"]), str(m["pair_b"])) if m["pair_a"] is not None else None
    return BenchRun(
        collective=str(m["collective"]),
        tool=str(m["tool"]),
        rows=rows,
        started=m["started"],
        hosts=tuple(str(h) for h in hosts),
        ranks=m["ranks"],
        cluster=m["cluster"],
        fabric_hash=m["fabric_hash"],
        nccl_version=m["nccl_version"],
        driver_version=m["driver_version"],
        env={str(k): str(v) for k, v in env.items()},
        change_id=m["change_id"],
        label=m["label"],
        source=m["source"],
        pair=pair,
        avg_busbw_gbps=m["avg_busbw_gbps"],
        id=int(m["id"]),
    )


# --------------------------------------------------------------------------------------------
# opening


def open_store(url: str | None = None) -> Store:
    """Open (creating if needed) the store at ``url`` / ``$AIFABRIC_DB`` / the default file and
    upgrade its schema to the newest revision; see the module doc for URLs and errors."""
    resolved = resolve_url(url)
    try:
        sa_url = make_url(resolved)
    except (ArgumentError, ValueError) as exc:
        shown = re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", resolved)
        raise InputError(
            f"--db {shown!r} is not a database URL ({_first_line(exc)}); expected a file "
            "path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        ) from exc
    backend = sa_url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise InputError(
            f"--db {_redacted(sa_url)}: backend {backend!r} is not supported; use a file path, "
            "sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        )
    if backend == "sqlite":
        database = sa_url.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            path = Path(database)
            if path.is_dir():
                raise InputError(f"--db {database}: is a directory; give a file name in it")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EnvironmentProblem(
                    f"cannot create {path.parent} for the bench database ({exc.strerror}); "
                    "give --db or AIFABRIC_DB a writable place"
                ) from exc
    try:
        engine = _sqlite_engine(sa_url) if backend == "sqlite" else sa.create_engine(sa_url)
    except (NoSuchModuleError, ImportError) as exc:
        raise EnvironmentProblem(
            f"--db {_redacted(sa_url)}: database driver not installed ({_first_line(exc)}); "
            "install psycopg[binary] for PostgreSQL"
        ) from exc
    store = Store(engine)
    try:
        store.upgrade()
    except BaseException:
        engine.dispose()
        raise
    return store


@contextmanager
def opened(url: str | None = None) -> Iterator[Store]:
    """``with opened(url) as store:``: :func:`open_store`, closed on exit."""
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()
