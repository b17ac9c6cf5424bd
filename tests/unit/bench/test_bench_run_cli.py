"""``bench run`` without root: the lab's rank commands (pure, from a lab plan), the loopback
run end to end into a SQLite store, the printed commands for real hosts, and bad usage."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from aifabric.bench.store import opened
from aifabric.catalog import load_catalog
from aifabric.cli.bench_run_cmd import bench_run
from aifabric.design import load_fabric
from aifabric.errors import EnvironmentProblem, InputError
from aifabric.lab.bench import lab_bench_argv, run_ranks
from aifabric.lab.plan import plan_lab

ROOT = Path(__file__).resolve().parents[3]
LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"

app = typer.Typer()
app.command()(bench_run)


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        if isinstance(res.exception, InputError):
            return 2, str(res.exception)
        raise res.exception
    return res.exit_code, res.stdout


def test_lab_rank_commands_exact_argv() -> None:
    plan = plan_lab(load_fabric(LAB_2X2, load_catalog()), "x1")
    argvs = lab_bench_argv(
        plan, sizes=[1 << 20, 2 << 20], servers=["srv05", "srv01"], json_file=Path("/tmp/r.json")
    )
    common = [
        "--collective",
        "all_reduce",
        "--sizes",
        "1048576,2097152",
        "--warmup",
        "1",
        "--iters",
        "3",
        "--timeout",
        "60",
        "--no-in-place",
    ]
    py = [sys.executable, "-m", "aifabric.bench.worker"]
    assert argvs == [
        [
            "ip",
            "netns",
            "exec",
            "afl:x1:srv05",
            *py,
            "--rank",
            "0",
            "--world",
            "2",
            "--master",
            "10.200.1.2:29500",
            "--listen",
            "10.200.1.2:29500",
            "--name",
            "srv05",
            *common,
            "--json",
            "/tmp/r.json",
        ],
        [
            "ip",
            "netns",
            "exec",
            "afl:x1:srv01",
            *py,
            "--rank",
            "1",
            "--world",
            "2",
            "--master",
            "10.200.1.2:29500",
            "--listen",
            "10.200.0.2:29500",
            "--name",
            "srv01",
            *common,
        ],
    ]
    # default: every server in plan order
    assert [a[3] for a in lab_bench_argv(plan, sizes=[1 << 20])] == [
        "afl:x1:srv01",
        "afl:x1:srv02",
        "afl:x1:srv05",
        "afl:x1:srv06",
    ]
    with pytest.raises(InputError, match="no such server"):
        lab_bench_argv(plan, sizes=[1], servers=["leaf01", "srv01"])
    with pytest.raises(InputError, match="at least 2"):
        lab_bench_argv(plan, sizes=[1], servers=["srv01"])
    with pytest.raises(InputError, match="known are"):
        lab_bench_argv(plan, sizes=[1], collective="alltoall")


def test_failed_rank_stops_the_others(tmp_path: Path) -> None:
    """One rank that cannot start (exit 2) ends the run with its message; the other rank,
    waiting for a peer, is killed (run_ranks returns within the grace time)."""
    waiting = [sys.executable, "-c", "import time; time.sleep(30)"]
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"]
    with pytest.raises(EnvironmentProblem, match="rank 1 failed \\(exit 3\\): boom"):
        run_ranks([waiting, failing], tmp_path, timeout_s=20)
    assert list(tmp_path.iterdir()) == []


def test_local_run_stores_a_builtin_run(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'b.db'}"
    code, out = _run(
        "--local",
        "3",
        "--sizes",
        "64K:128K",
        "--iters",
        "2",
        "--db",
        db,
        "--label",
        "smoke",
        "--format",
        "json",
        "--save",
        str(tmp_path / "t.txt"),
    )
    assert code == 0, out
    doc = json.loads(out)
    assert doc["run"]["tool"] == "builtin" and doc["run"]["ranks"] == 3
    assert [r["size_bytes"] for r in doc["run"]["rows"]] == [65536, 65536, 131072, 131072]
    assert all(r["wrong"] == 0 and r["busbw_gbps"] > 0 for r in doc["run"]["rows"])
    assert (tmp_path / "t.txt").read_text() == doc["text"]
    with opened(db) as store:
        runs = store.runs()
    assert [r.id for r in runs] == [doc["stored_id"]]
    assert runs[0].label == "smoke" and runs[0].collective == "all_reduce"
    assert runs[0].rows[0].busbw_gbps == pytest.approx(doc["run"]["rows"][0]["busbw_gbps"])


def test_print_commands(tmp_path: Path) -> None:
    code, out = _run(
        "--print-command",
        "nccl-tests",
        "--hosts",
        "a,b",
        "--env",
        "NCCL_IB_HCA=mlx5_0",
        "--nccl-tests-version",
        "2.16.2",
    )
    assert code == 0
    assert out.splitlines()[-1] == (
        "mpirun -np 16 -H a:8,b:8 --map-by ppr:8:node -x NCCL_IB_HCA=mlx5_0 all_reduce_perf "
        "-b 128M -e 8G -f 2 -g 1"
    )
    code, out = _run(
        "--print-command",
        "nccl-tests",
        "--fabric",
        str(LAB_2X2),
        "--launcher",
        "srun",
        "--sizes",
        "1M:1G",
        "--format",
        "json",
    )
    assert code == 0
    argv = json.loads(out)["commands"][0]["argv"]
    assert argv[:9] == [
        "srun",
        "--nodes",
        "8",
        "--ntasks-per-node",
        "4",
        "--gpus-per-task",
        "1",
        "--nodelist",
        "srv01,srv02,srv03,srv04,srv05,srv06,srv07,srv08",
    ]
    assert argv[9:] == [
        "all_reduce_perf",
        "-b",
        "1M",
        "-e",
        "1G",
        "-f",
        "2",
        "-g",
        "1",
        "-J",
        "nccl-tests.json",
    ]
    code, out = _run(
        "--print-command",
        "perftest",
        "--hosts",
        "a",
        "--hosts",
        "b",
        "--device",
        "mlx5_0",
        "--format",
        "json",
    )
    cmds = json.loads(out)["commands"]
    assert [(c["host"], c["argv"][-1]) for c in cmds] == [("a", "18515"), ("b", "a")]
    code, out = _run("--print-command", "builtin", "--hosts", "h1,h2", "--sizes", "1M")
    assert code == 0
    assert "python3 -m aifabric.bench.worker --rank 1 --world 2 --master h1:29500" in out


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((), "give one of --lab NAME or --local N"),
        (("--local", "2", "--lab", "x"), "give one of"),
        (("--local", "2", "--collective", "alltoall"), "runs all_reduce"),
        (("--local", "2", "--sizes", "4M:1M"), "--sizes"),
        (("--print-command", "nccl-tests"), "needs the hosts"),
        (("--print-command", "perftest", "--hosts", "a,b"), "RDMA device"),
        (("--print-command", "nccl-tests", "--hosts", "a", "--env", "NOVALUE"), "NAME=VALUE"),
        (("--local", "1"), "at least 2"),
    ],
)
def test_bad_usage_is_input_error(args: tuple[str, ...], match: str) -> None:
    code, out = _run(*args)
    assert code == 2 and match in out, out
