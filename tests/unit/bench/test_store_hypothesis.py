"""Property: any valid :class:`BenchRun` comes back from the store equal, field for field
(strategies shared with the PostgreSQL test)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.bench.model import BenchRow, BenchRun
from aifabric.bench.store import Store, open_store

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=30,
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64)
BIG = st.integers(0, 2**63 - 1)

ROWS = st.builds(
    BenchRow,
    size_bytes=BIG,
    count=st.none() | BIG,
    dtype=st.none() | TEXT,
    redop=st.none() | TEXT,
    time_us=FLOATS,
    algbw_gbps=FLOATS,
    busbw_gbps=FLOATS,
    in_place=st.booleans(),
    wrong=st.none() | FLOATS,
)
ZONES = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-14 * 60, 14 * 60))
STARTED = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.none() | ZONES
)
RUNS = st.builds(
    BenchRun,
    collective=TEXT,
    tool=st.sampled_from(["nccl-tests", "builtin", "perftest"]) | TEXT,
    rows=st.lists(ROWS, max_size=6).map(tuple),
    started=STARTED,
    hosts=st.lists(TEXT, max_size=4).map(tuple),
    ranks=st.none() | st.integers(0, 2**31 - 1),
    cluster=st.none() | TEXT,
    fabric_hash=st.none() | TEXT,
    nccl_version=st.none() | TEXT,
    driver_version=st.none() | TEXT,
    env=st.dictionaries(TEXT, TEXT, max_size=4),
    change_id=st.none(),
    label=st.none() | TEXT,
    source=st.none() | TEXT,
    pair=st.none() | st.tuples(TEXT, TEXT),
    avg_busbw_gbps=st.none() | FLOATS,
)


def expected(run: BenchRun, run_id: int) -> BenchRun:
    """What the store gives back: the same run with its id and ``started`` in UTC."""
    started = run.started if run.started.tzinfo else run.started.replace(tzinfo=UTC)
    return replace(run, id=run_id, started=started.astimezone(UTC))


def check_round_trip(store: Store, run: BenchRun) -> None:
    rid = store.add_run(run)
    got = store.get_run(rid)
    assert got == expected(run, rid)
    assert got is not None and got.started.utcoffset() == timedelta(0)


_STORE: list[Store] = []


def _store() -> Store:
    if not _STORE:
        _STORE.append(open_store("sqlite://"))
    return _STORE[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RUNS)
def test_any_run_round_trips_through_sqlite(run: BenchRun) -> None:
    check_round_trip(_store(), run)


@settings(max_examples=25, deadline=None)
@given(st.lists(RUNS, min_size=1, max_size=5))
def test_add_runs_keeps_order_and_ids(runs: list[BenchRun]) -> None:
    store = _store()
    ids = store.add_runs(runs)
    assert len(set(ids)) == len(runs)
    assert [store.get_run(i) for i in ids] == [
        expected(r, i) for r, i in zip(runs, ids, strict=True)
    ]
