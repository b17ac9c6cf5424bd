"""The built-in TCP collective benchmark: ranks on 127.0.0.1 (threads in this process for the
algorithms, real subprocesses for the worker), checked against exact answers; its output read
back by the nccl-tests parser with the values that were measured."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.bench.collective import (
    CollectiveResult,
    PlaceResult,
    SizeResult,
    _bw,
    _count,
    all_gather,
    all_reduce,
    busbw_factor,
    format_nccl_tests,
    result_from_dict,
    run_benchmark,
    sendrecv,
    size_sweep,
    to_bench_run,
)
from aifabric.bench.importer import read_nccl_tests
from aifabric.bench.ring import RankInfo, Ring, RingError, connect_ring
from aifabric.bench.worker import main as worker_main
from aifabric.bench.worker import parse_sizes
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow, NcclTestsSummary, parse

LOCAL = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOCAL, 0))
        port: int = s.getsockname()[1]
        return port


def on_ring(n: int, body: Callable[[Ring], Any], timeout_s: float = 20.0) -> list[Any]:
    """Run ``body(ring)`` on ``n`` ranks (threads) wired through 127.0.0.1; results by rank."""
    port = free_port()
    out: list[Any] = [None] * n
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        try:
            ring = connect_ring(
                r, n, (LOCAL, port), listen=(LOCAL, 0), name=f"r{r}", timeout_s=timeout_s
            )
            try:
                out[r] = body(ring)
            finally:
                ring.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s + 10)
    assert not errors, errors
    return out


# ---------------------------------------------------------------------------------------------
# the algorithms, against numpy's own answer


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("count", [1, 7, 1000, 4099])
def test_ring_all_reduce_sums_exactly(n: int, count: int) -> None:
    """Random integers (exact in float32): every rank ends with the elementwise sum; counts
    below n (empty chunks) and not divisible by n included; in-place gives the same."""
    rng = np.random.default_rng(n * 10_000 + count)
    data = [rng.integers(-1000, 1000, count).astype(np.float32) for _ in range(n)]
    want = np.sum(data, axis=0)

    def body(ring: Ring) -> tuple[Any, Any]:
        send = data[ring.rank].copy()
        recv = np.zeros(count, dtype=np.float32)
        all_reduce(ring, send, recv)
        assert np.array_equal(send, data[ring.rank])  # out-of-place leaves the input alone
        inplace = data[ring.rank].copy()
        all_reduce(ring, inplace, inplace)
        return recv, inplace

    for recv, inplace in on_ring(n, body):
        assert np.array_equal(recv, want)
        assert np.array_equal(inplace, want)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_ring_all_gather_and_sendrecv(n: int) -> None:
    count = 513

    def mine(r: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        return (np.arange(count) * (r + 1)).astype(np.float32)

    def body(ring: Ring) -> tuple[Any, Any, Any]:
        r = ring.rank
        gathered = np.zeros(n * count, dtype=np.float32)
        all_gather(ring, mine(r), gathered)
        inplace = np.zeros(n * count, dtype=np.float32)
        inplace[r * count : (r + 1) * count] = mine(r)
        all_gather(ring, inplace[r * count : (r + 1) * count], inplace)
        got = np.zeros(count, dtype=np.float32)
        sendrecv(ring, mine(r), got)
        return gathered, inplace, got

    want = np.concatenate([mine(k) for k in range(n)])
    for r, (gathered, inplace, got) in enumerate(on_ring(n, body)):
        assert np.array_equal(gathered, want)
        assert np.array_equal(inplace, want)
        assert np.array_equal(got, mine((r - 1) % n))


def test_barrier_and_sum_to_root() -> None:
    """sum_to_root gives rank 0 the sum 0+1+2+3 = 6; the others keep their own value."""

    def body(ring: Ring) -> int:
        ring.barrier()
        return ring.sum_to_root(ring.rank)

    out = on_ring(4, body)
    assert out == [6, 1, 2, 3]


def test_ring_table_names_every_rank() -> None:
    tables = on_ring(3, lambda ring: ring.ranks)
    assert tables[0] == tables[1] == tables[2]
    assert [r.name for r in tables[0]] == ["r0", "r1", "r2"]
    assert all(r.addr == LOCAL and r.port > 0 for r in tables[0])


def test_missing_rank_times_out_with_ring_error() -> None:
    with pytest.raises(RingError, match="no rank connected"):
        connect_ring(0, 2, (LOCAL, free_port()), timeout_s=0.3)
    with pytest.raises(RingError, match="cannot connect"):
        connect_ring(1, 2, (LOCAL, free_port()), listen=(LOCAL, 0), timeout_s=0.3)
    with pytest.raises(RingError, match="at least 2 ranks"):
        connect_ring(0, 1, (LOCAL, free_port()))


# ---------------------------------------------------------------------------------------------
# sizes, factors, formatting


def test_busbw_factors_are_nccl_tests_definitions() -> None:
    assert busbw_factor("all_reduce", 4) == 1.5
    assert busbw_factor("all_reduce", 2) == 1.0
    assert busbw_factor("all_gather", 4) == 0.75
    assert busbw_factor("sendrecv", 8) == 1.0
    with pytest.raises(ValueError, match="known are"):
        busbw_factor("alltoall", 4)


def test_sizes_round_down_like_nccl_tests() -> None:
    assert _count("all_reduce", 1 << 20, 4) == (262144, 1 << 20)
    assert _count("all_reduce", 10, 4) == (2, 8)
    # all-gather: per-rank count a multiple of 4 elements, size = count * 4 B * ranks
    assert _count("all_gather", 65536, 32) == (512, 65536)
    assert _count("all_gather", 1000, 3) == (80, 960)
    assert _count("sendrecv", 4096, 3) == (1024, 4096)


def test_size_sweep_and_parse_sizes() -> None:
    assert size_sweep(1 << 20, 1 << 28) == [1 << k for k in range(20, 29)]
    assert parse_sizes("1M:4M") == [1 << 20, 2 << 20, 4 << 20]
    assert parse_sizes("64K") == [65536]
    assert parse_sizes("1K,8K") == [1024, 8192]
    assert parse_sizes("1M:64M", 4) == [1 << 20, 4 << 20, 16 << 20, 64 << 20]
    with pytest.raises(ValueError):
        parse_sizes("8M:1M")
    with pytest.raises(ValueError):
        parse_sizes("1Mb:2M")


def test_bandwidth_cells() -> None:
    """%6.2f from 1 GB/s (nccl-tests' getFloatStr), 3 significant digits below."""
    assert _bw(101.7) == "101.70"
    assert _bw(1.054) == "  1.05"
    assert _bw(0.0125) == "0.0125"
    assert _bw(0.5528) == " 0.553"
    assert _bw(0.0) == "  0.00"


def _synthetic(collective: str = "all_reduce", in_place: bool = True) -> CollectiveResult:
    ranks = tuple(RankInfo(r, f"srv0{r + 1}", f"10.0.0.{r + 2}", 29500, 100 + r) for r in range(4))
    rows = []
    for k, size in enumerate((1 << 20, 2 << 20)):
        t = 1000.0 * (k + 1) * 1.5
        alg = size / (t / 1e6) / 1e9
        bus = alg * busbw_factor(collective, 4)
        rows.append(
            SizeResult(
                size,
                size // 4,
                PlaceResult(t, alg, bus, 0),
                PlaceResult(t * 2, alg / 2, bus / 2, 3) if in_place else None,
            )
        )
    return CollectiveResult(
        collective, ranks, tuple(rows), datetime_utc(), 1, 5, 1 << 20, 2 << 20, 2
    )


def datetime_utc() -> datetime:
    return datetime(2026, 12, 4, 16, 0, tzinfo=UTC)


def test_format_is_read_by_the_nccl_tests_parser() -> None:
    result = _synthetic()
    text = format_nccl_tests(result)
    parsed = parse(text)
    assert parsed.warnings == []
    hdr = next(r for r in parsed.records if isinstance(r, NcclTestsHeader))
    rows = [r for r in parsed.records if isinstance(r, NcclTestsRow)]
    summ = next(r for r in parsed.records if isinstance(r, NcclTestsSummary))
    assert hdr.collective == "all_reduce"
    assert hdr.ranks == 4 and hdr.hosts == ["srv01", "srv02", "srv03", "srv04"]
    assert hdr.check_column == "#wrong" and hdr.iters == 5 and hdr.warmup_iters == 1
    assert [r.size_bytes for r in rows] == [1 << 20, 2 << 20]
    # 1 MiB in 1500 µs: algbw 0.699 GB/s, busbw x1.5 = 1.048576 -> 1.05
    assert rows[0].oop_time_us == 1500.0
    assert rows[0].oop_algbw_GBps == 0.699
    assert rows[0].oop_busbw_GBps == 1.05
    assert rows[0].ip_wrong == 3 and rows[0].oop_wrong == 0
    assert summ.out_of_bounds == 6 and summ.ok is False
    assert summ.avg_busbw_GBps == pytest.approx(result.avg_busbw_gbps, rel=1e-5)


def test_sendrecv_in_place_prints_na_and_all_gather_redop_none() -> None:
    text = format_nccl_tests(_synthetic("sendrecv", in_place=False))
    rows = [r for r in parse(text).records if isinstance(r, NcclTestsRow)]
    assert rows[0].ip_time_us is None and rows[0].ip_busbw_GBps is None
    assert rows[0].oop_busbw_GBps == rows[0].oop_algbw_GBps  # factor 1
    text = format_nccl_tests(_synthetic("all_gather"))
    rows = [r for r in parse(text).records if isinstance(r, NcclTestsRow)]
    assert {r.redop for r in rows} == {"none"}


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e-4, max_value=1e4, allow_nan=False))
def test_bandwidth_text_keeps_half_a_percent(value: float) -> None:
    """Whatever the bandwidth, the printed cell reads back within 0.5 % (or 0.005 GB/s)."""
    cell = _bw(value)
    assert "e" not in cell
    assert abs(float(cell) - value) <= max(0.005 * value, 0.005 + 1e-12)


def test_to_bench_run_and_json_round_trip() -> None:
    result = _synthetic()
    assert result_from_dict(json.loads(json.dumps(result.to_dict()))) == result
    run = to_bench_run(result, label="lab", env={"AIFABRIC_LAB": "x"})
    assert run.tool == "builtin" and run.collective == "all_reduce" and run.ranks == 4
    assert run.hosts == ("srv01", "srv02", "srv03", "srv04")
    assert len(run.rows) == 4
    first = run.rows[0]
    assert (first.size_bytes, first.in_place, first.time_us, first.wrong) == (
        1 << 20,
        False,
        1500.0,
        0.0,
    )
    assert first.busbw_gbps == pytest.approx(1.048576)
    assert run.rows[1].in_place and run.rows[1].wrong == 3.0
    assert run.avg_busbw_gbps == pytest.approx(result.avg_busbw_gbps)


def test_run_benchmark_in_threads_measures_and_verifies() -> None:
    results = on_ring(
        3, lambda ring: run_benchmark(ring, "all_reduce", [4096, 65536], warmup=1, iters=2)
    )
    res: CollectiveResult = results[0]
    assert [r.size_bytes for r in res.rows] == [4096, 65536]
    for row in res.rows:
        for p in (row.out_of_place, row.in_place):
            assert p is not None and p.wrong == 0 and p.busbw_gbps > 0
            assert p.busbw_gbps == pytest.approx(p.algbw_gbps * 4 / 3)
            assert p.algbw_gbps == pytest.approx(row.size_bytes / p.time_us / 1e3)


# ---------------------------------------------------------------------------------------------
# the worker as separate processes


def _spawn(rank: int, n: int, port: int, extra: list[str], tmp: Path) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        "-m",
        "aifabric.bench.worker",
        "--rank",
        str(rank),
        "--world",
        str(n),
        "--master",
        f"{LOCAL}:{port}",
        "--name",
        f"host{rank}",
        "--timeout",
        "30",
        *extra,
    ]
    if rank:
        argv += ["--listen", LOCAL]
    else:
        argv += ["--json", str(tmp / "result.json")]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(
    ("collective", "n"), [("all_reduce", 4), ("all_gather", 3), ("sendrecv", 3)]
)
def test_worker_processes_on_loopback(collective: str, n: int, tmp_path: Path) -> None:
    """n ranks as real processes: exit 0, #wrong 0, busbw > 0, and the printed table parses
    to the values rank 0 measured (its --json file), to the printed precision."""
    port = free_port()
    extra = ["--collective", collective, "--sizes", "64K:256K", "--iters", "2"]
    procs = [_spawn(r, n, port, extra, tmp_path) for r in range(n)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=60))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0] * n, [o[1] for o in outs]
    text = outs[0][0]
    assert all(o[0] == "" for o in outs[1:])
    measured = result_from_dict(json.loads((tmp_path / "result.json").read_text()))
    assert measured.wrong == 0 and measured.collective == collective
    parsed = parse(text)
    assert parsed.warnings == []
    rows = [r for r in parsed.records if isinstance(r, NcclTestsRow)]
    hdr = next(r for r in parsed.records if isinstance(r, NcclTestsHeader))
    assert hdr.collective == collective and hdr.ranks == n
    assert hdr.hosts == [f"host{r}" for r in range(n)]
    assert len(rows) == len(measured.rows) == 3
    for row, m in zip(rows, measured.rows, strict=True):
        assert row.size_bytes == m.size_bytes and row.count == m.count
        assert row.oop_wrong == 0
        assert m.out_of_place.busbw_gbps > 0
        assert row.oop_busbw_GBps == pytest.approx(m.out_of_place.busbw_gbps, rel=5e-3, abs=5e-3)
        assert row.oop_time_us == pytest.approx(m.out_of_place.time_us, rel=1e-3, abs=0.01)
        if collective == "sendrecv":
            assert row.ip_time_us is None
        else:
            assert m.in_place is not None and row.ip_wrong == 0
            assert row.ip_busbw_GBps == pytest.approx(m.in_place.busbw_gbps, rel=5e-3, abs=5e-3)


def test_worker_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert worker_main(["--rank", "0", "--world", "2", "--master", "nohostport"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
    assert (
        worker_main(["--rank", "0", "--world", "2", "--master", f"{LOCAL}:1", "--sizes", "8M:1M"])
        == 2
    )
    assert worker_main(["--rank", "0", "--world", "1", "--master", f"{LOCAL}:0"]) == 2
    assert worker_main(["--rank"]) == 2


def test_worker_missing_peer_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert (
        worker_main(
            ["--rank", "1", "--world", "2", "--master", f"{LOCAL}:{port}", "--timeout", "0.3"]
        )
        == 3
    )
    assert "cannot connect" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_parse_sizes_never_raises_anything_but_value_error(text: str) -> None:
    """Whatever --sizes says, the answer is a list of positive sizes or a ValueError."""
    try:
        sizes = parse_sizes(text)
    except ValueError:
        return
    assert sizes and all(s > 0 for s in sizes)


def test_importer_stores_builtin_output_as_tool_builtin() -> None:
    got = read_nccl_tests(format_nccl_tests(_synthetic()), name="builtin.txt")
    runs = got.runs
    assert [r.tool for r in runs] == ["builtin"]
    assert runs[0].collective == "all_reduce"
    assert [r.size_bytes for r in runs[0].rows if not r.in_place] == [1 << 20, 2 << 20]
