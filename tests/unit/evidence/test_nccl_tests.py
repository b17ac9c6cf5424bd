"""nccl-tests parser: every real capture under tests/fixtures/evidence/nccl-tests/, values read
by hand from the captures, detection, malformed and truncated input, interleaved runs, the -J
JSON document, and the S23 baseline view (busbw per message size)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import ParseResult, detect_kind, parse_text
from aifabric.evidence.nccl_tests import (
    NcclTestsHeader,
    NcclTestsRow,
    NcclTestsSummary,
    busbw_by_size,
    detect,
    parse,
)
from tests.unit.evidence.fixtures import all_cases, case, load

KIND = "nccl-tests"
CASES = [c for c in all_cases() if c.kind == KIND]
INTERLEAVED = "independent single-rank runs interleaved"


def rows(res: ParseResult, test: int | None = None) -> list[NcclTestsRow]:
    out: list[NcclTestsRow] = res.of_type(NcclTestsRow)
    return [r for r in out if test is None or r.test == test]


def header(res: ParseResult, test: int = 0) -> NcclTestsHeader:
    headers: list[NcclTestsHeader] = res.of_type(NcclTestsHeader)
    return next(h for h in headers if h.test == test)


def summary(res: ParseResult, test: int = 0) -> NcclTestsSummary:
    summaries: list[NcclTestsSummary] = res.of_type(NcclTestsSummary)
    return next(s for s in summaries if s.test == test)


def by_size(res: ParseResult, size: int, test: int = 0) -> NcclTestsRow:
    return next(r for r in rows(res, test) if r.size_bytes == size)


# --------------------------------------------------------------------------------------------
# every fixture


def test_at_least_nine_real_fixtures() -> None:
    assert len(CASES) >= 9
    for c in CASES:
        assert str(c.meta.get("source", "")).startswith("https://"), c.id


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detected_and_warning_count(c) -> None:  # type: ignore[no-untyped-def]
    text = c.text()
    assert detect_kind(text) == KIND
    assert detect(text) >= 0.9
    res = c.parse()
    assert len(res.warnings) == int(c.meta.get("warnings", 0)), [str(w) for w in res.warnings]
    assert rows(res) or res.of_type(NcclTestsHeader)
    json.dumps(res.to_json())  # JSON-able, record "type" key not shadowed
    for r in rows(res):
        assert r.to_json()["type"] == "row"
        assert 1 <= r.line <= text.count("\n") + 1


# --------------------------------------------------------------------------------------------
# values read from the captures


def test_eks_efa_t4_tag_output_with_nccl_info_lines() -> None:
    res = load(KIND, "eks-efa-t4-tag-output-nccl-info")
    h = header(res)
    assert h.line == 3  # the "[1,0]<stdout>:# nThread" line, after two ssh warnings
    assert (h.n_threads, h.n_gpus, h.min_bytes, h.max_bytes) == (1, 1, 1, 1073741824)
    assert (h.step_factor, h.warmup_iters, h.iters, h.agg_iters) == (2, 5, 100, 1)
    assert h.validation is True and h.graph == 0
    assert h.nccl_version == "2.12.7"  # "NCCL version 2.12.7+cuda11.4" line
    assert h.ranks == 2 and h.nodes == 2
    assert h.hosts == ["test-nccl-efa-worker-0", "test-nccl-efa-worker-1"]
    d1 = h.devices[1]
    assert (d1.rank, d1.group, d1.pid, d1.device, d1.bus_id, d1.gpu) == (
        1,
        0,
        21,
        0,
        "0xf5",
        "Tesla T4",
    )
    rs = rows(res)
    assert len(rs) == 31
    assert [r.size_bytes for r in rs[:3]] == [0, 0, 4]
    assert all(r.rank == 0 for r in rs)  # [1,0]<stdout>: prefix
    r = by_size(res, 33554432)
    assert r.line == 83
    assert (r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps, r.oop_wrong) == (
        11390,
        2.95,
        2.95,
        0,
    )
    assert (r.ip_time_us, r.ip_busbw_GBps, r.ip_wrong) == (11419, 2.94, 0)
    s = summary(res)
    assert (s.out_of_bounds, s.ok, s.avg_busbw_GBps) == (0, True, 1.15327)
    assert s.line == 91


def test_aws_batch_wide_header_and_16g_row() -> None:
    res = load(KIND, "aws-batch-p5-tag-output-wide-header")
    h = header(res)
    assert h.columns[-1] == "#wrong" and h.check_column == "#wrong"
    assert h.devices == [] and h.collective is None
    r = by_size(res, 17179869184)
    assert (r.count, r.data_type, r.redop, r.root) == (4294967296, "float", "sum", -1)
    assert (r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps) == (62239, 276.03, 483.05)
    assert (r.ip_time_us, r.ip_algbw_GBps, r.ip_busbw_GBps) == (62200, 276.20, 483.35)
    assert summary(res).avg_busbw_GBps == 156.742


def test_indented_markdown_paste_with_elision() -> None:
    res = load(KIND, "eks-p5-indented-tag-output-elided")
    rs = rows(res)
    assert len(rs) == 32 and rs[0].size_bytes == 8 and rs[0].line == 5
    r = by_size(res, 1073741824)
    assert (r.oop_busbw_GBps, r.ip_busbw_GBps) == (441.85, 381.74)
    assert summary(res).avg_busbw_GBps == 123.343


def test_gb200_excerpt_keeps_highest_rank() -> None:
    res = load(KIND, "coreweave-gb200-nvl72-single-rack")
    h = header(res)
    assert h.ranks == 1 and h.highest_rank == 71  # excerpt shows only the last device line
    assert h.devices[0].gpu == "NVIDIA Graphics Device" and h.devices[0].device == 3
    assert by_size(res, 4294967296).oop_busbw_GBps == 839.16
    assert by_size(res, 4294967296).oop_time_us == 10094
    assert summary(res).avg_busbw_GBps == 745.53


def test_s23_baseline_busbw_per_size() -> None:
    """S23: keep busbw per message size (128M..8G sweep) and compare runs against it."""
    res = load(KIND, "coreweave-h100-sharp-mpijob-kubectl")
    h = header(res)
    assert h.line == 9 and (h.min_bytes, h.max_bytes, h.iters) == (4, 2147483648, 50)
    assert h.agg_iters is None  # old parameter line: "... iters: 50 validation: 1"
    assert busbw_by_size(res) == {
        536870912: 356.01,
        1073741824: 365.90,
        2147483648: 380.73,
        4294967296: 383.23,
        8589934592: 386.56,
    }
    # a regression check is a per-size comparison against that baseline
    gb200 = busbw_by_size(load(KIND, "coreweave-gb200-nvl72-single-rack"))
    assert all(gb200[size] > bw for size, bw in busbw_by_size(res).items())


def test_v2_18_header_lines_and_pci_domain_bus_ids() -> None:
    res = load(KIND, "olivia-gh200-slingshot-v2.18.3")
    h = header(res)
    assert (h.nccl_tests_version, h.nccl_headers_code, h.nccl_library_code) == (
        "2.18.3",
        23004,
        23004,
    )
    assert h.nccl_version == "2.30.4"
    assert (h.binary, h.collective, h.unalign) == ("all_reduce_perf", "all_reduce", 0)
    assert h.ranks == 8 and h.nodes == 2 and h.hosts == ["gpu-1-1", "gpu-1-2"]
    assert h.devices[5].bus_id == "0019:01:00" and h.devices[5].gpu == "NVIDIA GH200 120GB"
    assert h.devices[5].pid == 201121
    r = by_size(res, 134217728)
    assert (r.data_type, r.oop_busbw_GBps, r.ip_busbw_GBps) == ("int8", 101.70, 107.63)
    assert summary(res).avg_busbw_GBps == 17.8617


def test_corrupted_transfers_show_as_wrong_counts() -> None:
    res = load(KIND, "olivia-gh200-corrupted-wrong-counts")
    h = header(res)
    assert h.nccl_tests_version == "2.17.9" and h.nccl_version == "2.29.2"
    assert h.ranks == 16 and h.nodes == 4
    bad = [r.size_bytes for r in rows(res) if (r.oop_wrong or 0) > 0 or (r.ip_wrong or 0) > 0]
    assert bad == [2097152, 4194304, 8388608, 16777216, 33554432, 67108864]
    r = by_size(res, 33554432)
    assert (r.oop_wrong, r.ip_wrong) == (951005, 820604)
    assert by_size(res, 4194304).ip_time_us == 10542.7
    assert res.of_type(NcclTestsSummary) == []  # the documentation excerpt stops at the table


def test_old_alltoall_blank_redop_and_error_column() -> None:
    res = load(KIND, "issue78-alltoall-old-format-blank-redop")
    assert header(res).check_column == "error"
    r = by_size(res, 536870912)
    assert (r.count, r.redop, r.root) == (2097152, None, None)
    assert (r.oop_time_us, r.oop_busbw_GBps, r.oop_error, r.oop_wrong) == (1041974, 0.51, 0.0, None)
    assert r.ip_error == 1.0
    assert summary(res).avg_busbw_GBps == 0.507636


def test_broadcast_root_and_na_error_cells() -> None:
    res = load(KIND, "issue82-broadcast-root-na-nccl-warn")
    h = header(res)
    assert (h.collective, h.validation, h.nccl_version) == ("broadcast", False, "2.9.6")
    assert h.devices[0].group is None and h.devices[1].pid == 9210
    (r,) = rows(res)
    assert (r.root, r.redop, r.oop_time_us, r.oop_error, r.ip_time_us, r.ip_error) == (
        0,
        None,
        45.82,
        None,
        38.17,
        None,
    )


def test_2019_all_gather_rows_then_next_command() -> None:
    res = load(KIND, "nccl-issue340-allgather-2019-then-broadcast")
    assert len(res.of_type(NcclTestsHeader)) == 1
    r = by_size(res, 67108864)
    assert (r.data_type, r.redop, r.root) == ("float", None, None)
    assert (r.oop_time_us, r.oop_busbw_GBps, r.oop_error, r.ip_busbw_GBps) == (
        1568.3,
        21.40,
        0,
        21.5,
    )
    assert summary(res).avg_busbw_GBps == 6.6972


def test_interleaved_single_rank_runs_from_headers() -> None:
    res = load(KIND, "issue107-interleaved-single-rank-runs-v100")
    h = header(res)
    assert h.independent_runs == 2
    assert h.step_bytes == 1048576 and h.step_factor is None
    assert [d.rank for d in h.devices] == [0, 0]
    (w,) = res.warnings
    assert w.line == 2 and w.message.startswith("2 " + INTERLEAVED)
    assert "MPI=1" in w.message and "mpirun" in w.message


def test_interleaved_runs_from_restarting_sizes() -> None:
    res = load(KIND, "issue182-interleaved-rows-ib")
    assert header(res).independent_runs == 2
    assert [r.size_bytes for r in rows(res)][5:8] == [256, 8, 512]
    assert INTERLEAVED in res.warnings[0].message


def test_truncated_capture_from_the_wild() -> None:
    res = load(KIND, "dgx-spark-gb10-v2.20.0-githash-cut")
    h = header(res)
    assert h.nccl_tests_version == "2.20.0" and h.nccl_version == "2.31.2"
    assert h.hosts == ["spark-d708", "spark-dbf4"] and h.devices[0].bus_id == "000f:01:00"
    assert len(rows(res)) == 4
    (w,) = res.warnings
    assert w.line == 16 and "truncated" in w.message


# --------------------------------------------------------------------------------------------
# damaged input


def test_garbage_line_in_the_middle_warns_once_and_keeps_the_rest() -> None:
    c = case(KIND, "olivia-gh200-slingshot-v2.18.3")
    lines = c.text().split("\n")
    good = parse(c.text())
    bad_lines = [*lines[:29], "   4096  garbage##  cells", *lines[29:]]
    bad = parse("\n".join(bad_lines))
    (w,) = bad.warnings
    assert w.line == 30 and "garbage" in w.text

    def strip(res: ParseResult) -> list[dict[str, object]]:
        out = []
        for r in res.records:
            d = r.to_json()
            d.pop("line"), d.pop("end_line")
            out.append(d)
        return out

    assert strip(bad) == strip(good)
    assert [r.line for r in rows(bad)][-1] == rows(good)[-1].line + 1


def test_truncated_last_row_is_kept_with_a_warning() -> None:
    text = case(KIND, "olivia-gh200-corrupted-wrong-counts").text().rstrip("\n")
    cut = text[: text.rindex("0  3023.61")]  # last row cut after the out-of-place #wrong
    res = parse(cut)
    (w,) = res.warnings
    assert w.line == 53 and w.message.startswith("truncated last row")
    last = rows(res)[-1]
    assert (last.size_bytes, last.oop_busbw_GBps, last.ip_time_us) == (134217728, 89.85, None)


def test_rank_tag_glued_inside_a_row() -> None:
    text = case(KIND, "coreweave-gb200-nvl72-single-rack").text()
    glued = text.replace("     sum      -1    10094", "     sum      -1[0]    10094")
    assert glued != text
    res = parse(glued)
    assert res.warnings == []
    assert busbw_by_size(res) == busbw_by_size(parse(text))


def test_several_tests_in_one_file_get_their_own_index() -> None:
    a = case(KIND, "olivia-gh200-slingshot-v2.18.3").text()
    b = case(KIND, "dgx-spark-gb10-v2.20.0-githash-cut").text().replace("      131072\n", "")
    res = parse(a + b)
    assert res.warnings == []
    assert [h.test for h in res.of_type(NcclTestsHeader)] == [0, 1]
    assert header(res, 1).nccl_tests_version == "2.20.0"
    assert len(rows(res, 0)) == 28 and len(rows(res, 1)) == 4
    assert busbw_by_size(res, test=1)[65536] == 0.96


def test_datatype_sweep_is_not_mistaken_for_interleaving() -> None:
    text = case(KIND, "coreweave-gb200-nvl72-single-rack").text()
    table = [ln for ln in text.split("\n") if "float" in ln]
    swept = text.replace(table[-1], table[-1] + "\n" + "\n".join(table).replace("float", " half"))
    res = parse(swept)
    assert res.warnings == []
    assert {r.data_type for r in rows(res)} == {"float", "half"}


def test_per_iteration_columns_and_timestamp() -> None:
    # header as printed by nccl-tests 2.19 with -P (per-iteration) and the timestamp column
    # (src/util.cu writeResultHeader); the row is a real row with per-iteration cells added
    hdr = (
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
        "    i_p99    i_cv%           timestamp\n"
    )
    row = (
        "   536870912     134217728     float     sum      -1   1806.7  297.16  586.06       0"
        "   1790.1   1830.2   1829.9     0.55   1835.9  292.43  576.74       0   1801.0   1850.3"
        "   1849.8     0.61 2026-07-09 10:11:12\n"
    )
    res = parse(hdr + row)
    assert res.warnings == []
    (r,) = rows(res)
    assert (r.oop_busbw_GBps, r.oop_wrong, r.ip_time_us, r.ip_busbw_GBps) == (
        586.06,
        0,
        1835.9,
        576.74,
    )


# --------------------------------------------------------------------------------------------
# -J JSON (no real capture found: the document is built as src/util.cu writes it, filled with
# the values of the real coreweave H100 capture)


def _json_doc() -> dict[str, object]:
    res = load(KIND, "coreweave-h100-sharp-mpijob-kubectl")
    results = []
    for r in rows(res):
        results.append(
            {
                "size": r.size_bytes,
                "count": r.count,
                "type": r.data_type,
                "redop": r.redop,
                "root": "    -1",
                "out_of_place": {
                    "time": r.oop_time_us,
                    "alg_bw": r.oop_algbw_GBps,
                    "bus_bw": r.oop_busbw_GBps,
                    "nwrong": 0.0,
                },
                "in_place": {
                    "time": r.ip_time_us,
                    "alg_bw": r.ip_algbw_GBps,
                    "bus_bw": r.ip_busbw_GBps,
                    "nwrong": 0.0,
                },
                "actual_iterations": 50,
                "experiment_name": "all_reduce_perf",
            }
        )
    return {
        "version": 3,
        "start_time": "2026-07-09 10:00:00",
        "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "512M", "-e", "8G"],
        "env": [],
        "nccl_version": 22602,
        "config": {
            "nthreads": 1,
            "ngpus": 1,
            "minimum_bytes": 536870912,
            "maximum_bytes": 8589934592,
            "step_factor": 2,
            "warmup_iters": 50,
            "iterations": 50,
            "aggregated_iterations": 1,
            "validation": 1,
            "graph": 0,
            "blocking_collectives": "false",
            "devices": [
                {
                    "rank": 0,
                    "group": 0,
                    "pid": 14840,
                    "hostname": "node-0",
                    "device": 0,
                    "device_hex": "0000:18:00",
                    "device_info": "NVIDIA H100 80GB HBM3",
                }
            ],
        },
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 373.187, "okay": "unchecked"},
        "errors": [],
        "end_time": "2026-07-09 10:01:00",
    }


def test_json_output_file() -> None:
    text = json.dumps(_json_doc(), indent=None)
    assert detect_kind(text) == KIND
    res = parse_text(text)
    assert res.warnings == []
    h = header(res)
    assert (h.collective, h.nccl_version, h.max_bytes, h.step_factor) == (
        "all_reduce",
        "2.26.2",
        8589934592,
        2,
    )
    assert h.devices[0].bus_id == "0000:18:00" and h.nodes == 1
    assert busbw_by_size(res) == busbw_by_size(load(KIND, "coreweave-h100-sharp-mpijob-kubectl"))
    assert rows(res)[0].root == -1 and rows(res)[0].oop_wrong == 0
    s = summary(res)
    assert (s.avg_busbw_GBps, s.out_of_bounds, s.ok, s.avg_busbw_check) == (373.187, 0, True, None)


def test_truncated_json_warns() -> None:
    text = json.dumps(_json_doc())
    res = parse(text[: len(text) // 2])
    assert len(res.warnings) == 1 and "JSON" in res.warnings[0].message
    assert res.records == []


# --------------------------------------------------------------------------------------------
# properties


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_random_text(text: str) -> None:
    res = parse(text)
    assert isinstance(res, ParseResult)
    assert 0.0 <= detect(text) <= 1.0


_cell = st.one_of(
    st.integers(-5, 10**12).map(str),
    st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}"),
    st.sampled_from(["N/A", "float", "sum", "-1", "[0]", "#wrong", "1e+06", ":", "(us)"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_cell, min_size=0, max_size=16).map("  ".join), max_size=12))
def test_never_raises_on_table_like_lines(lines: list[str]) -> None:
    hdr = case(KIND, "coreweave-gb200-nvl72-single-rack").text()
    res = parse(hdr + "\n".join(lines))
    assert len(rows(res)) >= 5


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 1 << 40),
    st.sampled_from(["float", "half", "int8", "bfloat16"]),
    st.lists(st.floats(0, 99999, allow_nan=False), min_size=6, max_size=6),
    st.integers(0, 10**6),
)
def test_row_round_trip(size: int, dtype: str, vals: list[float], wrong: int) -> None:
    t1, a1, b1, t2, a2, b2 = (round(v, 2) for v in vals)
    line = (
        f"{size:12d}  {size // 4:12d}  {dtype:>8s}     sum      -1  {t1:7.2f}  {a1:6.2f}  "
        f"{b1:6.2f}  {wrong:6g}  {t2:7.2f}  {a2:6.2f}  {b2:6.2f}  {0:6g}"
    )
    res = parse("#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n" + line)
    (r,) = rows(res)
    assert (r.size_bytes, r.data_type, r.redop, r.root) == (size, dtype, "sum", -1)
    assert (r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps) == (t1, a1, b1)
    assert (r.ip_time_us, r.ip_algbw_GBps, r.ip_busbw_GBps) == (t2, a2, b2)
    assert r.oop_wrong == int(float(f"{wrong:g}")) and r.ip_wrong == 0


# --------------------------------------------------------------------------------------------
# captures added later: lost '#', failed runs, srun labels, N/A #wrong, collapsed spaces


def test_issue37_header_and_summary_without_hash() -> None:
    r = load(KIND, "issue37-allgather-2020-hash-lost-oob-failed")
    assert not r.warnings
    h = header(r)
    assert (h.collective, h.check_column, h.columns[3]) == ("all_gather", "error", "time")
    (row,) = rows(r)
    assert (row.line, row.size_bytes, row.count, row.data_type) == (
        5,
        4294967296,
        134217728,
        "float",
    )
    assert (row.oop_time_us, row.oop_busbw_GBps, row.oop_error) == (29122.0, 129.05, 1.0)
    assert (row.ip_time_us, row.ip_busbw_GBps, row.ip_error) == (29169.0, 128.84, 1.0)
    s = summary(r)
    assert (s.line, s.out_of_bounds, s.ok, s.avg_busbw_GBps) == (6, 2, False, 128.942)


def test_device_list_alone_without_hash_is_nccl_tests() -> None:
    """Only the header's device list of a real run, pasted unfenced (Markdown took every '#'
    and the table was not pasted): still nccl-tests, its devices read."""
    text = case(KIND, "issue107-interleaved-single-rank-runs-v100").text()
    lines = [ln.lstrip("# ") for ln in text.splitlines()[1:9] if "Rank" in ln or "Using" in ln]
    bare = "\n".join(lines) + "\n"
    assert "#" not in bare and "nThread" not in bare
    assert detect_kind(bare) == KIND
    h = header(parse_text(bare, KIND))
    assert [(d.rank, d.host) for d in h.devices] == [
        (0, "ip-172-31-20-228"), (0, "ip-172-31-22-230")]  # fmt: skip


def test_issue289_failed_run_then_rerun_are_two_tests() -> None:
    r = load(KIND, "issue289-hypercube-failed-run-then-rerun")
    assert not r.warnings  # two command lines: two runs, not interleaved single-rank runs
    first, second = header(r, 0), header(r, 1)
    assert (first.collective, first.n_gpus, first.ranks, first.nccl_version) == (
        "hypercube",
        8,
        0,
        "2.25.1",
    )
    assert first.failure == "CUDA failure common.cu:986 'invalid device ordinal'"
    assert (second.line, second.n_gpus, second.ranks, second.failure) == (11, 2, 2, None)
    assert [(d.rank, d.device, d.bus_id) for d in second.devices] == [
        (0, 0, "0x1e"),
        (1, 1, "0x22"),
    ]
    assert not rows(r)


def test_issue290_srun_label_and_validation_off() -> None:
    r = load(KIND, "issue290-srun-label-c0-na-wrong-h100")
    assert not r.warnings
    h = header(r)
    assert (h.validation, h.iters, h.ranks, h.hosts) == (False, 200, 16, ["node005", "node007"])
    assert [d.pid for d in h.devices if d.host == "node007"][:2] == [541703, 541708]
    got = rows(r)
    assert len(got) == 11 and all(x.rank == 0 for x in got)
    assert all(x.oop_wrong is None and x.ip_wrong is None for x in got)
    big = by_size(r, 8589934592)
    assert (big.oop_time_us, big.oop_algbw_GBps, big.oop_busbw_GBps) == (103530.0, 82.97, 155.57)
    assert big.ip_busbw_GBps == 155.56
    s = summary(r)
    assert (s.out_of_bounds, s.ok, s.avg_busbw_GBps) == (0, True, 142.735)


def test_issue214_sendrecv_inplace_wrong_is_na() -> None:
    r = load(KIND, "issue214-sendrecv-inplace-wrong-na")
    assert not r.warnings
    h = header(r)
    assert (h.nodes, h.hosts, h.validation) == (2, ["gpu23", "gpu24"], True)
    got = rows(r)
    assert [x.size_bytes for x in got] == [256, 512, 1024, 2048, 4096]
    assert all(x.oop_wrong == 0 and x.ip_wrong is None for x in got)
    assert (by_size(r, 2048).oop_time_us, by_size(r, 2048).ip_algbw_GBps) == (31.58, 0.07)


def test_issue291_collapsed_spaces_and_failure() -> None:
    r = load(KIND, "issue291-alltoall-collapsed-spaces-cuda-failure")
    assert not r.warnings
    h = header(r)
    assert (h.collective, h.nccl_version, h.check_column) == ("alltoall", "2.25.1", "#wrong")
    (dev,) = h.devices
    assert (dev.rank, dev.host, dev.device, dev.bus_id) == (0, "node", 0, "0000:16:00")
    assert dev.gpu == "NVIDIA GeForce RTX 5090"
    assert h.failure == "CUDA failure common.cu:297 'an illegal memory access was encountered'"
    assert not rows(r) and not r.of_type(NcclTestsSummary)


def test_error_line_and_json_errors_become_failure() -> None:
    text = "\n".join(
        [
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 1",
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 0 ",
            "# error: NET/IB : Got completion from peer 10.0.0.2<5000> with status=12",
        ]
    )
    r = parse(text)
    assert header(r).failure == "NET/IB : Got completion from peer 10.0.0.2<5000> with status=12"
    doc = {"config": {"nthreads": 1}, "results": [], "errors": ["unhandled system error"]}
    assert header(parse(json.dumps(doc))).failure == "unhandled system error"


def test_nccl_issue841_empty_hostname() -> None:
    r = load(KIND, "nccl-issue841-empty-hostname")
    assert not r.warnings
    h = header(r)
    assert (h.binary, h.n_gpus, h.max_bytes) == ("all_reduce_perf", 8, 134217728)
    assert [(d.rank, d.host, d.pid, d.device, d.bus_id) for d in h.devices] == [
        (0, "", 4349, 0, "0x01"),
        (1, "", 4349, 1, "0x23"),
    ]
    assert h.devices[0].gpu == "NVIDIA A100 80GB PCIe"
    assert (h.ranks, h.nodes) == (2, 1)


# NCCL 1's single-process tests, as printed by NVIDIA/nccl v1.3.4-1 test/single/all_reduce_test.cu
# ('printf("#   Rank %2d uses device %2d [0x%02x] %s\n", ...)' and its table header), pasted as a
# Markdown quote: the '#' marks became '>' and the device lines lost theirs.
NCCL1_QUOTED = """\
> Using devices
   Rank  0 uses device  0 [0x05] Tesla M40 24GB
   Rank  1 uses device  1 [0x08] Tesla M40 24GB
   Rank  2 uses device  2 [0x0d] Tesla M40 24GB
>
>                                                 out-of-place                    in-place
>      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res
"""  # noqa: E501


def test_nccl1_device_lines_and_a_quoted_table_header() -> None:
    r = parse_text(NCCL1_QUOTED, KIND)
    h = header(r)
    assert [(d.rank, d.device, d.bus_id, d.gpu) for d in h.devices] == [
        (0, 0, "0x05", "Tesla M40 24GB"),
        (1, 1, "0x08", "Tesla M40 24GB"),
        (2, 2, "0x0d", "Tesla M40 24GB"),
    ]
    assert (h.ranks, h.nodes, h.highest_rank, h.single_node) == (3, 1, 2, True)
    assert h.columns[:4] == ["bytes", "N", "type", "op"] and h.check_column == "error"
    assert rows(r) == []


def test_single_node_needs_every_rank_on_one_host() -> None:
    h = header(load(KIND, "issue115-amd-iommu-two-ranks-stopped-at-init"))
    assert (h.ranks, h.hosts, h.single_node, h.columns) == (2, ["SAIS1020"], True, [])
    # an excerpt that shows rank 1 alone does not say where rank 0 ran
    text = case(KIND, "issue115-amd-iommu-two-ranks-stopped-at-init").text()
    alone = "\n".join(ln for ln in text.splitlines() if "Rank  0" not in ln) + "\n"
    assert header(parse_text(alone, KIND)).single_node is False
