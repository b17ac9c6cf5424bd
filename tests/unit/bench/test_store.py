"""The bench store on SQLite: round trip, filters and ordering, the change log, migrations,
locations and the errors a bad database gives (issue 20)."""

from __future__ import annotations

import io
import sqlite3
import threading
import time
from contextlib import redirect_stdout
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa

from aifabric.bench.model import BenchRow, BenchRun
from aifabric.bench.store import (
    VERSION_TABLE,
    Store,
    alembic_config,
    default_db_path,
    metadata,
    open_store,
    resolve_url,
)
from aifabric.errors import EnvironmentProblem, InputError

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def row(size: int, busbw: float, *, in_place: bool = False) -> BenchRow:
    t = size / (busbw / 1.75) / 1e3 if busbw else 1.0
    return BenchRow(size, size // 4, "float", "sum", t, busbw / 1.75, busbw, in_place, 0.0)


def run(minutes: int, busbw: float = 100.0, **kw: object) -> BenchRun:
    rows = tuple(row(s, busbw * s / 2**33) for s in (2**27, 2**30, 2**33))
    fields: dict[str, object] = {
        "collective": "all_reduce",
        "tool": "nccl-tests",
        "rows": rows,
        "started": T0 + timedelta(minutes=minutes),
        "hosts": ("node2", "node1"),
        "ranks": 16,
        "cluster": "lab",
    }
    fields.update(kw)
    return BenchRun(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(str(tmp_path / "bench.db"))
    yield s  # type: ignore[misc]
    s.close()


def test_round_trip_keeps_every_field(store: Store) -> None:
    full = run(
        0,
        fabric_hash="sha256:ab12",
        nccl_version="2.21.5",
        driver_version="cuda 12.4",
        env={"NCCL_IB_HCA": "mlx5_0", "NCCL_ALGO": "Ring", "ü": "ß"},
        label="after PFC change",
        source="/tmp/x.log",
        pair=("node1", "node2"),
        avg_busbw_gbps=123.25,
        rows=(
            BenchRow(8, 2, "float", "sum", 10.5, 0.0, 0.0, False, None),
            BenchRow(8, 2, "float", "sum", 11.0, 0.0, 0.0, True, 3.0),
            BenchRow(2**33, None, None, None, 22000.0, 390.5, 683.375, False, 1e-7),
        ),
    )
    rid = store.add_run(full)
    [got] = store.runs()
    assert got.id == rid
    assert replace(got, id=None) == full
    assert got.started.tzinfo is not None and got.started == full.started


def test_naive_datetime_is_utc_and_aware_is_converted(store: Store) -> None:
    store.add_run(run(0, started=datetime(2026, 12, 1, 12, 0)))
    store.add_run(run(0, started=datetime(2026, 12, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))))
    a, b = store.runs()
    assert a.started == b.started == T0
    assert a.started.utcoffset() == timedelta(0)


def test_runs_newest_first_and_filters(store: Store) -> None:
    ids = store.add_runs(
        [
            run(0),
            run(10, label="x"),
            run(5, cluster="other", hosts=("node3",)),
            run(20, collective="all_gather"),
            run(10),  # same time as the second: the larger id comes first
        ]
    )
    assert [r.id for r in store.runs()] == [ids[3], ids[4], ids[1], ids[2], ids[0]]
    assert [r.id for r in store.runs(cluster="lab", collective="all_reduce")] == [
        ids[4],
        ids[1],
        ids[0],
    ]
    assert [r.id for r in store.runs(label="x")] == [ids[1]]
    assert [r.id for r in store.runs(hosts=["node3"])] == [ids[2]]
    assert [r.id for r in store.runs(hosts=["node1", "node2"], limit=2)] == [ids[3], ids[4]]
    assert store.runs(hosts=["node1", "node3"]) == []
    since, until = T0 + timedelta(minutes=5), T0 + timedelta(minutes=20)
    assert [r.id for r in store.runs(since=since, until=until)] == [ids[4], ids[1], ids[2]]
    assert store.runs(limit=0) == []


def test_history_orders_newest_first_and_cuts_rows_to_the_size(store: Store) -> None:
    ids = store.add_runs([run(m, busbw=100.0 + m) for m in (3, 1, 4, 1, 5, 9, 2, 6)])
    ids.append(store.add_run(run(7, rows=(row(2**20, 5.0),))))  # no 8 GiB row
    store.add_run(run(100, collective="all_gather"))
    hist = store.history("all_reduce", limit=5)
    assert [r.started.minute for r in hist] == [9, 7, 6, 5, 4]
    per_size = store.history("all_reduce", size_bytes=2**33, limit=3)
    assert [r.started.minute for r in per_size] == [9, 6, 5]
    assert all(len(r.rows) == 1 and r.rows[0].size_bytes == 2**33 for r in per_size)
    assert [r.rows[0].busbw_gbps for r in per_size] == [109.0, 106.0, 105.0]
    assert store.history("all_reduce", cluster="nowhere") == []
    # the two runs at minute 1 tie: newest id first
    tail = store.history("all_reduce", limit=20)[-3:]
    assert [r.id for r in tail] == [ids[6], ids[3], ids[1]]


def test_change_log_and_runs_stamped_with_latest_change(store: Store) -> None:
    assert store.latest_change() is None and store.changes() == []
    early = store.add_run(run(-100_000))  # long before any change
    c1 = store.mark_change("PFC on queue 3 only")
    c2 = store.mark_change("ECN min 150 KB", cluster="lab")
    c3 = store.mark_change("other cluster change", cluster="far")
    assert [c.id for c in store.changes()] == [c1.id, c2.id, c3.id]
    assert [c.id for c in store.changes(cluster="lab")] == [c1.id, c2.id]
    assert store.latest_change("lab") == c2
    assert store.latest_change() == c1
    assert store.latest_change("lab", before=c1.at) == c1
    now = datetime.now(UTC) + timedelta(seconds=1)
    late = store.add_run(run(0, started=now))
    unlabelled = store.add_run(run(0, started=now, cluster=None))
    explicit = store.add_run(run(0, started=now, change_id=c3.id))
    got = {r.id: r.change_id for r in store.runs()}
    assert got == {early: None, late: c2.id, unlabelled: c1.id, explicit: c3.id}
    with pytest.raises(InputError):
        store.mark_change("   ")


def test_bad_values_are_input_errors(store: Store) -> None:
    with pytest.raises(InputError, match="finite"):
        store.add_run(run(0, rows=(BenchRow(8, 2, "float", "sum", float("nan"), 1, 1, False, 0),)))
    with pytest.raises(InputError, match="NUL"):
        store.add_run(run(0, label="a\x00b"))
    assert store.runs() == []  # nothing half-written
    assert store.add_runs([]) == []


def test_fresh_database_is_at_head_and_matches_the_live_schema(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata  # noqa: PLC0415
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    with open_store(str(tmp_path / "a.db")) as s:
        assert s.revision() == "0001"
        with s.engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
            diff = compare_metadata(ctx, metadata)
            names = set(sa.inspect(conn).get_table_names())
    assert diff == []
    assert {"bench_runs", "bench_rows", "bench_run_hosts", "bench_changes", VERSION_TABLE} <= names
    assert "alembic_version" not in names


def test_alembic_history_lists_the_initial_revision() -> None:
    from alembic import command  # noqa: PLC0415
    from alembic.script import ScriptDirectory  # noqa: PLC0415

    cfg = alembic_config()
    revs = list(ScriptDirectory.from_config(cfg).walk_revisions())
    assert [r.revision for r in revs][-1] == "0001"
    assert revs[-1].down_revision is None
    out = io.StringIO()
    cfg.stdout = out
    with redirect_stdout(out):
        command.history(cfg)
    assert "0001" in out.getvalue() and "Initial bench store schema" in out.getvalue()


def test_open_twice_is_idempotent_and_keeps_data(tmp_path: Path) -> None:
    url = str(tmp_path / "twice.db")
    with open_store(url) as s:
        s.add_run(run(0))
    with open_store(url) as s, open_store(url) as t:
        assert s.revision() == t.revision() == "0001"
        assert len(t.runs()) == 1
    with sqlite3.connect(tmp_path / "twice.db") as con:
        assert con.execute(f"select count(*) from {VERSION_TABLE}").fetchone() == (1,)
        assert con.execute("pragma journal_mode").fetchone() == ("wal",)


def test_existing_foreign_tables_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with sqlite3.connect(path) as con:
        con.execute("create table alembic_version (version_num varchar(32))")
        con.execute("insert into alembic_version values ('someone-elses')")
    with open_store(str(path)) as s:
        assert s.revision() == "0001"
    with sqlite3.connect(path) as con:
        assert con.execute("select * from alembic_version").fetchall() == [("someone-elses",)]


def test_not_a_database_is_one_line_input_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not an sqlite file at all\n" * 200)
    with pytest.raises(InputError) as err:
        open_store(str(path))
    msg = str(err.value)
    assert "\n" not in msg and "not a usable aifabric bench database" in msg
    assert str(path) in msg and err.value.exit_code == 2


def test_truncated_database_is_input_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.db"
    with open_store(str(path)) as s:
        s.add_runs([run(m) for m in range(50)])
    with sqlite3.connect(path) as con:
        con.execute("pragma wal_checkpoint(truncate)")
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xff" * (len(data) - 100))  # header kept, pages destroyed
    for p in (tmp_path / "cut.db-wal", tmp_path / "cut.db-shm"):
        p.unlink(missing_ok=True)
    with pytest.raises(InputError, match="not a usable"):
        open_store(str(path)).runs()


def test_unknown_revision_is_input_error(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with sqlite3.connect(path) as con:
        con.execute(f"create table {VERSION_TABLE} (version_num varchar(32) primary key)")
        con.execute(f"insert into {VERSION_TABLE} values ('9999')")
    with pytest.raises(InputError, match="revision unknown"):
        open_store(str(path))


def test_urls_and_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIFABRIC_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "aifabric" / "bench.db"
    assert resolve_url() == f"sqlite:///{tmp_path}/xdg/aifabric/bench.db"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    assert default_db_path() == Path.home() / ".local" / "share" / "aifabric" / "bench.db"
    monkeypatch.setenv("AIFABRIC_DB", "postgresql://u@db.example:5433/bench")
    assert resolve_url() == "postgresql+psycopg://u@db.example:5433/bench"
    assert resolve_url("postgres://u@h/b") == "postgresql+psycopg://u@h/b"
    assert resolve_url("sqlite://") == "sqlite://"
    monkeypatch.chdir(tmp_path)
    assert resolve_url("rel.db") == f"sqlite:///{tmp_path}/rel.db"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "made"))
    monkeypatch.delenv("AIFABRIC_DB")
    with open_store() as s:  # the default file, its directory created
        assert s.runs() == []
    assert (tmp_path / "made" / "aifabric" / "bench.db").is_file()


def test_in_memory_store_works() -> None:
    with open_store("sqlite://") as s:
        s.add_run(run(0))
        assert len(s.history("all_reduce")) == 1


def test_bad_urls(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not supported"):
        open_store("mysql://u@h/db")
    with pytest.raises(InputError, match="not a database URL"):
        open_store("postgresql://u@h:notaport/db")
    with pytest.raises(InputError, match="is a directory"):
        open_store(str(tmp_path))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(EnvironmentProblem, match="cannot create"):
        open_store(str(blocker / "sub" / "bench.db"))


def test_unreachable_postgres_is_environment_problem() -> None:
    with pytest.raises(EnvironmentProblem) as err:
        open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    assert err.value.exit_code == 3 and "\n" not in str(err.value)


def _hold_write_lock(path: Path, seconds: float) -> threading.Thread:
    """Take SQLite's write lock on ``path`` from another connection for ``seconds``."""
    ready = threading.Event()

    def hold() -> None:
        con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        con.execute("BEGIN IMMEDIATE")
        con.execute("insert into bench_changes (text, at) values ('held', '2026-01-01')")
        ready.set()
        time.sleep(seconds)
        con.execute("ROLLBACK")
        con.close()

    t = threading.Thread(target=hold)
    t.start()
    assert ready.wait(10)
    return t


def test_locked_database_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aifabric.bench.store as store_mod  # noqa: PLC0415

    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "locked.db"
    with open_store(str(path)) as s:
        holder = _hold_write_lock(path, 0.4)
        t0 = time.perf_counter()
        s.add_run(run(0))  # each statement gives up after 50 ms; the retries outlast the lock
        waited = time.perf_counter() - t0
        holder.join()
        assert len(s.runs()) == 1 and waited >= 0.3


def test_lock_that_never_clears_is_environment_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aifabric.bench.store as store_mod  # noqa: PLC0415

    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 20)
    monkeypatch.setattr(store_mod, "RETRIES", 3)
    path = tmp_path / "stuck.db"
    with open_store(str(path)) as s:
        holder = _hold_write_lock(path, 2.0)
        try:
            with pytest.raises(EnvironmentProblem, match="still locked after 3 attempts"):
                s.add_run(run(0))
        finally:
            holder.join()
        assert s.runs() == []
