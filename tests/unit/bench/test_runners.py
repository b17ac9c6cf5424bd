"""Command builders for nccl-tests (mpirun, srun, alone) and perftest pair sweeps: exact argv,
and the round schedule's invariants for any host count."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.bench.runners import (
    fabric_hosts,
    nccl_tests_command,
    pair_rounds,
    perftest_plan,
)
from aifabric.catalog import load_catalog
from aifabric.design import load_fabric

ROOT = Path(__file__).resolve().parents[3]


def test_mpirun_default_is_the_seed_sweep_one_rank_per_gpu() -> None:
    cmd = nccl_tests_command(["gpu1", "gpu2"], env={"NCCL_IB_HCA": "mlx5_0,mlx5_1"})
    assert cmd.argv == (
        "mpirun",
        "-np",
        "16",
        "-H",
        "gpu1:8,gpu2:8",
        "--map-by",
        "ppr:8:node",
        "-x",
        "NCCL_IB_HCA=mlx5_0,mlx5_1",
        "all_reduce_perf",
        "-b",
        "128M",
        "-e",
        "8G",
        "-f",
        "2",
        "-g",
        "1",
        "-J",
        "nccl-tests.json",
    )
    assert cmd.ranks == 16 and cmd.json_file == "nccl-tests.json"
    assert any("16 ranks = 2 hosts x 8 processes x -g 1" in n for n in cmd.notes)


def test_seed_literal_g8_is_one_rank_per_host() -> None:
    cmd = nccl_tests_command(["a", "b", "c"], gpus_per_rank=8, json_file=None)
    assert cmd.argv == (
        "mpirun",
        "-np",
        "3",
        "-H",
        "a:1,b:1,c:1",
        "--map-by",
        "ppr:1:node",
        "all_reduce_perf",
        "-b",
        "128M",
        "-e",
        "8G",
        "-f",
        "2",
        "-g",
        "8",
    )
    assert cmd.ranks == 3 and cmd.json_file is None


def test_srun_with_env_iters_and_old_version_without_json() -> None:
    cmd = nccl_tests_command(
        ["n1", "n2"],
        gpus_per_host=4,
        collective="all_gather",
        launcher="srun",
        min_bytes="8",
        max_bytes=1 << 30,
        factor=4,
        iters=50,
        warmup=10,
        nccl_tests_version="2.13.8",
        env={"NCCL_DEBUG": "INFO", "NCCL_IB_GID_INDEX": "3"},
    )
    assert cmd.argv == (
        "srun",
        "--nodes",
        "2",
        "--ntasks-per-node",
        "4",
        "--gpus-per-task",
        "1",
        "--nodelist",
        "n1,n2",
        "--export=ALL,NCCL_DEBUG=INFO,NCCL_IB_GID_INDEX=3",
        "all_gather_perf",
        "-b",
        "8",
        "-e",
        "1G",
        "-f",
        "4",
        "-g",
        "1",
        "-n",
        "50",
        "-w",
        "10",
    )
    assert cmd.json_file is None
    assert any("predates 2.17" in n for n in cmd.notes)


def test_new_version_keeps_json_and_binary_override() -> None:
    cmd = nccl_tests_command(
        ["n1"],
        launcher="none",
        gpus_per_host=8,
        nccl_tests_version="v2.17.7",
        json_file="out.json",
        binary="./build/all_reduce_perf",
    )
    assert cmd.argv == (
        "./build/all_reduce_perf",
        "-b",
        "128M",
        "-e",
        "8G",
        "-f",
        "2",
        "-g",
        "8",
        "-J",
        "out.json",
    )
    assert cmd.ranks == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hosts": []}, "no hosts"),
        ({"hosts": ["a", "a"]}, "listed twice"),
        ({"hosts": ["a"], "collective": "allreduce"}, "known are"),
        ({"hosts": ["a"], "gpus_per_host": 8, "gpus_per_rank": 3}, "multiple"),
        ({"hosts": ["a", "b"], "launcher": "none"}, "one host"),
        ({"hosts": ["a"], "min_bytes": "8G", "max_bytes": "1G"}, "min <= max"),
    ],
)
def test_bad_requests_raise_value_error(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        nccl_tests_command(**kwargs)  # type: ignore[arg-type]


def test_fabric_hosts_from_a_fabric_file() -> None:
    fabric = load_fabric(ROOT / "tests/fixtures/lab/lab-2x2.yaml", load_catalog())
    hosts, gpus = fabric_hosts(fabric)
    assert hosts == [f"srv0{i}" for i in range(1, 9)] and gpus == 4
    cmd = nccl_tests_command(hosts, gpus_per_host=gpus)
    assert cmd.argv[:4] == ("mpirun", "-np", "32", "-H")


def test_perftest_all_pairs_plan_exact_argv() -> None:
    plan = perftest_plan(
        ["h1", "h2", "h3", "h4"],
        device="mlx5_0",
        gid_index=3,
        addresses={"h1": "10.0.0.1", "h2": "10.0.0.2"},
    )
    assert len(plan) == 6 and {p.round for p in plan} == {0, 1, 2}
    first = plan[0]
    assert (first.round, first.server, first.client) == (0, "h1", "h4")
    assert first.server_argv == (
        "ib_write_bw",
        "-d",
        "mlx5_0",
        "-x",
        "3",
        "-F",
        "--report_gbits",
        "-a",
        "-p",
        "18515",
    )
    assert first.client_argv == (*first.server_argv, "10.0.0.1")
    assert [(p.round, p.server, p.client, p.client_argv[-1]) for p in plan] == [
        (0, "h1", "h4", "10.0.0.1"),
        (0, "h2", "h3", "10.0.0.2"),
        (1, "h1", "h3", "10.0.0.1"),
        (1, "h4", "h2", "h4"),  # no address given: the name
        (2, "h1", "h2", "10.0.0.1"),
        (2, "h3", "h4", "h3"),
    ]


def test_perftest_ring_without_gid_for_infiniband() -> None:
    plan = perftest_plan(["a", "b", "c", "d"], device="mlx5_1", mode="ring", port=20000)
    assert [(p.round, p.server, p.client) for p in plan] == [
        (0, "a", "b"),
        (0, "c", "d"),
        (1, "b", "c"),
        (1, "d", "a"),
    ]
    assert plan[0].server_argv == (
        "ib_write_bw",
        "-d",
        "mlx5_1",
        "-F",
        "--report_gbits",
        "-a",
        "-p",
        "20000",
    )
    with pytest.raises(ValueError, match="RDMA device"):
        perftest_plan(["a", "b"], device="")


@given(st.integers(min_value=0, max_value=23))
def test_all_pairs_rounds_are_a_round_robin_tournament(n: int) -> None:
    """Every unordered pair exactly once; no host twice in a round; n-1 rounds (n even) or
    n rounds (n odd)."""
    hosts = [f"h{i}" for i in range(n)]
    rounds = pair_rounds(hosts)
    pairs = [frozenset(p) for r in rounds for p in r]
    assert sorted(pairs, key=sorted) == sorted(
        (frozenset(c) for c in itertools.combinations(hosts, 2)), key=sorted
    )
    for r in rounds:
        used = [h for p in r for h in p]
        assert len(used) == len(set(used))
    assert len(rounds) == (0 if n < 2 else n - 1 if n % 2 == 0 else n)


@given(st.integers(min_value=2, max_value=30))
def test_ring_rounds_cover_each_neighbour_pair_in_at_most_3_rounds(n: int) -> None:
    hosts = [f"h{i}" for i in range(n)]
    rounds = pair_rounds(hosts, "ring")
    pairs = [p for r in rounds for p in r]
    want = [(hosts[i], hosts[(i + 1) % n]) for i in range(n if n > 2 else 1)]
    assert sorted(pairs) == sorted(want)
    for r in rounds:
        used = [h for p in r for h in p]
        assert len(used) == len(set(used))
    assert len(rounds) <= (2 if n % 2 == 0 else 3)
