"""nccl-tests output → BenchRun: every real fixture imports, known answers per field, the -J
JSON file, bad input, and a garbage line changing nothing but the warnings (issue 20)."""

from __future__ import annotations

import json
import math
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.bench.importer import import_nccl_tests, read_nccl_tests
from aifabric.bench.model import BenchRun
from aifabric.bench.store import open_store
from aifabric.errors import InputError
from aifabric.evidence import parse_text
from aifabric.evidence.nccl_tests import NcclTestsRow

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "nccl-tests"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "input.txt").is_file())
T = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
GARBAGE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters=":\n\r"),
    max_size=40,
).map(lambda s: f"%{s}%")


def text_of(name: str) -> str:
    return (FIXTURES / name / "input.txt").read_text(encoding="utf-8", errors="replace")


def test_there_are_real_fixtures() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("name", CASES)
def test_every_real_fixture_imports(name: str) -> None:
    path = FIXTURES / name / "input.txt"
    result = read_nccl_tests(path, label="fx", cluster="c1", fabric_hash="h")
    parsed = parse_text(text_of(name), "nccl-tests")
    tests_with_rows = {r.test for r in parsed.records if isinstance(r, NcclTestsRow)}
    assert len(result.runs) == len(tests_with_rows)
    for run in result.runs:
        assert run.tool == "nccl-tests" and run.collective
        assert run.rows and all(r.size_bytes >= 0 for r in run.rows)
        assert (run.label, run.cluster, run.fabric_hash, run.source) == ("fx", "c1", "h", str(path))
        assert run.started == datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
        assert list(run.hosts) == sorted(set(run.hosts)) and "" not in run.hosts
        oop = [r for r in run.rows if not r.in_place]
        assert oop, "the out-of-place half is there in every fixture"


def test_olivia_slingshot_known_answers() -> None:
    [run] = import_nccl_tests(FIXTURES / "olivia-gh200-slingshot-v2.18.3" / "input.txt", started=T)
    assert run.collective == "all_reduce" and run.started == T
    assert run.hosts == ("gpu-1-1", "gpu-1-2") and run.ranks == 8
    assert run.nccl_version == "2.30.4" and run.avg_busbw_gbps == 17.8617
    assert len(run.rows) == 56
    first, *_, oop, ip = run.rows
    assert (first.size_bytes, first.count, first.dtype, first.redop) == (1, 1, "int8", "sum")
    assert (oop.size_bytes, oop.in_place, oop.time_us, oop.algbw_gbps, oop.busbw_gbps) == (
        134217728,
        False,
        2309.49,
        58.12,
        101.7,
    )
    assert (ip.size_bytes, ip.in_place, ip.busbw_gbps, ip.wrong) == (134217728, True, 107.63, 0.0)


def test_two_tests_in_one_file_and_the_collective_fallback() -> None:
    path = FIXTURES / "rccl-issue1490-srun-label-allgather-then-allreduce" / "input.txt"
    first, second = read_nccl_tests(path).runs
    assert (first.collective, second.collective) == ("unknown", "all_reduce")
    assert (first.avg_busbw_gbps, second.avg_busbw_gbps) == (37.9868, 43.7269)
    named = import_nccl_tests(path, collective="all_gather")
    assert [r.collective for r in named] == ["all_gather", "all_reduce"]  # the header wins


def test_collective_inferred_only_when_the_numbers_allow_one() -> None:
    # busbw/algbw = 1.75 (2(n-1)/n, n = 8): only all_reduce has a factor above 1
    [p5] = import_nccl_tests(text_of("aws-batch-p5-tag-output-wide-header"))
    assert p5.collective == "all_reduce"
    # two ranks: all_reduce and sendrecv print the same columns and factor 1
    res = read_nccl_tests(text_of("issue214-sendrecv-inplace-wrong-na"))
    assert res.runs[0].collective == "unknown"
    assert any("give --collective" in w for w in res.warnings)


def test_na_cells_and_old_error_column() -> None:
    [sr] = import_nccl_tests(text_of("issue214-sendrecv-inplace-wrong-na"))
    assert {r.wrong for r in sr.rows if r.in_place} == {None}
    assert {r.wrong for r in sr.rows if not r.in_place} == {0.0}
    [ag] = import_nccl_tests(text_of("issue37-allgather-2020-hash-lost-oob-failed"))
    assert ag.collective == "all_gather" and {r.wrong for r in ag.rows} == {1.0}
    [a2a] = import_nccl_tests(text_of("issue78-alltoall-old-format-blank-redop"))
    assert {r.redop for r in a2a.rows} == {None}
    assert a2a.rows[-1].time_us == 1041299.0  # printed in ms by the old format


def test_env_nccl_version_and_driver_from_nccl_info_lines() -> None:
    text = text_of("eks-efa-t4-tag-output-nccl-info")
    [run] = import_nccl_tests(text)
    assert run.env == {"NCCL_SHM_DISABLE": "0"} and run.nccl_version == "2.12.7"
    assert run.driver_version is None
    with_driver = "node:12225:12225 [0] NCCL INFO cudaDriverVersion 12080\n" + text
    assert import_nccl_tests(with_driver)[0].driver_version == "cuda 12.8"
    assert import_nccl_tests(text, driver_version="550.54.15")[0].driver_version == "550.54.15"


def test_failed_runs_give_no_run_and_say_why() -> None:
    res = read_nccl_tests(text_of("issue291-alltoall-collapsed-spaces-cuda-failure"))
    assert res.runs == []
    assert any("no result rows" in w and "illegal memory access" in w for w in res.warnings)
    res = read_nccl_tests(text_of("issue289-hypercube-failed-run-then-rerun"))
    assert res.runs == [] and sum("no result rows" in w for w in res.warnings) == 2


def _json_doc() -> dict[str, object]:
    cell = {"time": 22000.5, "alg_bw": 390.46, "bus_bw": 683.3, "nwrong": 0}
    return {
        "version": 3,
        "start_time": "2026-07-09 10:00:00",
        "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8G", "-e", "8G"],
        "env": ["NCCL_IB_HCA=mlx5_0", "FI_PROVIDER=efa", "AWS_SECRET_ACCESS_KEY=x", "HOME=/r"],
        "nccl_version": 22602,
        "config": {
            "nthreads": 1,
            "ngpus": 1,
            "devices": [
                {"rank": 0, "hostname": "node-0", "device": 0, "device_info": "H100"},
                {"rank": 1, "hostname": "node-1", "device": 0, "device_info": "H100"},
            ],
        },
        "results": [
            {
                "size": 8589934592,
                "count": 2147483648,
                "type": "float",
                "redop": "sum",
                "root": -1,
                "out_of_place": cell,
                "in_place": {**cell, "bus_bw": 684.0},
            }
        ],
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 683.65, "okay": "unchecked"},
        "errors": [],
    }


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "ar.json"
    path.write_text(json.dumps(_json_doc()), encoding="utf-8")
    [run] = import_nccl_tests(path)
    assert run.collective == "all_reduce" and run.nccl_version == "2.26.2"
    assert run.started == datetime(2026, 7, 9, 10, 0, tzinfo=UTC)
    assert run.env == {"NCCL_IB_HCA": "mlx5_0", "FI_PROVIDER": "efa"}
    assert run.hosts == ("node-0", "node-1") and run.ranks == 2
    assert [(r.in_place, r.busbw_gbps, r.wrong) for r in run.rows] == [
        (False, 683.3, 0.0),
        (True, 684.0, 0.0),
    ]
    assert run.avg_busbw_gbps == 683.65
    assert import_nccl_tests(path, started=T)[0].started == T


def test_bytes_input_and_source_name() -> None:
    data = (FIXTURES / "olivia-gh200-slingshot-v2.18.3" / "input.txt").read_bytes()
    [run] = import_nccl_tests(data, name="olivia.log", started=T)
    assert run.source == "olivia.log" and len(run.rows) == 56


@pytest.mark.parametrize(
    "text",
    ["", "hello world\n", "PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n", "{}", "[1, 2]"],
)
def test_not_nccl_tests_is_input_error(text: str) -> None:
    with pytest.raises(InputError, match="no nccl-tests output found"):
        import_nccl_tests(text)


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        import_nccl_tests(tmp_path / "absent.log")


def test_imported_runs_round_trip_through_the_store(tmp_path: Path) -> None:
    runs: list[BenchRun] = []
    for name in CASES:
        runs.extend(import_nccl_tests(FIXTURES / name / "input.txt", cluster="lab", started=T))
    with open_store(str(tmp_path / "fx.db")) as store:
        ids = store.add_runs(runs)
        got = {r.id: r for r in store.runs()}
    assert len(got) == len(runs) >= 19
    for rid, run in zip(ids, runs, strict=True):
        assert got[rid].rows == run.rows and got[rid].collective == run.collective


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_garbage_line_changes_no_run(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from([c for c in CASES if "interleaved" not in c]))
    lines = text_of(name).splitlines()
    pos = data.draw(st.integers(0, len(lines)))
    junk = data.draw(GARBAGE)
    before = read_nccl_tests("\n".join(lines), started=T)
    after = read_nccl_tests("\n".join([*lines[:pos], junk, *lines[pos:]]), started=T)
    assert after.runs == before.runs
    # a line outside any test (before the header) is skipped silently by the parser
    assert len(after.warnings) - len(before.warnings) in (0, 1)


HOSTILE = st.sampled_from(["nan", "inf", "-inf", "1e999", "9" * 401, "\x00", "\ufffd", "N/A"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hostile_cells_raise_nothing_but_input_error(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(CASES))
    tokens = text_of(name).split(" ")
    for _ in range(data.draw(st.integers(1, 5))):
        tokens[data.draw(st.integers(0, len(tokens) - 1))] = data.draw(HOSTILE)
    if data.draw(st.booleans()):
        tokens.insert(data.draw(st.integers(0, len(tokens))), "9" * 50_000)
    blob = " ".join(tokens).encode("utf-8", "surrogatepass")
    if data.draw(st.booleans()):
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    try:
        runs = import_nccl_tests(blob, started=T)
    except InputError:
        return
    for run in runs:
        for r in run.rows:
            for v in (r.time_us, r.algbw_gbps, r.busbw_gbps, r.wrong or 0.0):
                assert math.isfinite(v)


def test_driver_pattern_is_linear() -> None:
    from aifabric.bench.importer import _DRIVER_RE  # noqa: PLC0415

    line = "cudaDriverVersion " + "1" * 200_000
    t0 = time.perf_counter()
    assert _DRIVER_RE.search(line) is None
    assert time.perf_counter() - t0 < 0.25

