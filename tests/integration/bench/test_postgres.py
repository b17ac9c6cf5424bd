"""The bench store on a real PostgreSQL 15 server started by the test (issue 20): migrations,
round trip (hypothesis too), history, the change log, and eight processes importing at once
into one database without losing a row. Skipped, with the reason, when not root or without the
server binaries (pg_harness.why_not)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings

from aifabric.bench.model import BenchRun
from aifabric.bench.store import VERSION_TABLE, Store, metadata, open_store
from tests.integration.bench.pg_harness import PgCluster, why_not
from tests.unit.bench.test_store import run
from tests.unit.bench.test_store_concurrency import check_nothing_lost, run_workers
from tests.unit.bench.test_store_hypothesis import RUNS, check_round_trip

REASON = why_not()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = PgCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def store(pg: PgCluster) -> Iterator[Store]:
    s = open_store(pg.new_database())
    try:
        yield s
    finally:
        s.close()


def test_fresh_database_is_at_head_and_matches_the_live_schema(store: Store) -> None:
    from alembic.autogenerate import compare_metadata  # noqa: PLC0415
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    assert store.engine.dialect.name == "postgresql"
    assert store.engine.dialect.driver == "psycopg"
    assert store.revision() == "0001"
    with store.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        assert compare_metadata(ctx, metadata) == []
        names = set(sa.inspect(conn).get_table_names())
    assert {"bench_runs", "bench_rows", "bench_run_hosts", "bench_changes"} <= names


def test_open_twice_and_over_the_unix_socket(pg: PgCluster) -> None:
    url = pg.new_database()
    with open_store(url) as s:
        s.add_run(run(0))
    name = url.rsplit("/", 1)[1]
    with open_store(url) as s, open_store(pg.url(name, unix=True)) as t:
        assert s.revision() == t.revision() == "0001"
        assert len(t.runs()) == 1
        with t.engine.connect() as conn:
            n = conn.execute(sa.text(f"select count(*) from {VERSION_TABLE}")).scalar_one()
        assert n == 1


def test_round_trip_history_and_changes(store: Store) -> None:
    full = run(0, env={"NCCL_IB_HCA": "mlx5_0"}, pair=("node1", "node2"), avg_busbw_gbps=1.5)
    rid = store.add_run(full)
    assert store.get_run(rid) == replace(full, id=rid)
    ids = store.add_runs([run(m, busbw=100.0 + m) for m in (3, 1, 4, 1, 5)])
    hist = store.history("all_reduce", size_bytes=2**33, limit=3)
    assert [r.started.minute for r in hist] == [5, 4, 3]
    assert [r.rows[0].busbw_gbps for r in hist] == [105.0, 104.0, 103.0]
    tail = store.history("all_reduce")[-3:-1]  # the two at minute 1: newest id first
    assert [r.id for r in tail] == [ids[3], ids[1]]
    c = store.mark_change("PFC on queue 3 only", cluster="lab")
    late = store.add_run(run(0, started=c.at + timedelta(seconds=1)))
    assert store.get_run(late) is not None
    assert store.get_run(late).change_id == c.id  # type: ignore[union-attr]
    assert store.changes("lab") == [c] and store.latest_change("lab") == c
    assert [r.id for r in store.runs(hosts=["node1"], since=c.at)] == [late]


_PG_STORE: list[Store] = []


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(RUNS)
def test_any_run_round_trips_through_postgres(pg: PgCluster, run: BenchRun) -> None:
    if not _PG_STORE:
        _PG_STORE.append(open_store(pg.new_database()))
    check_round_trip(_PG_STORE[0], run)


def test_eight_processes_lose_no_row(pg: PgCluster) -> None:
    url = pg.new_database()  # empty: the eight race to create the schema too
    run_workers(url)
    check_nothing_lost(url)
    with open_store(url) as s, s.engine.connect() as conn:
        assert conn.execute(sa.text(f"select count(*) from {VERSION_TABLE}")).scalar_one() == 1


def teardown_module() -> None:
    for s in _PG_STORE:
        s.close()
