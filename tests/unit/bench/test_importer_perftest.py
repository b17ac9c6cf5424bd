"""perftest output → BenchRun (issue 20): every real perftest fixture imports with known
values, units (Gb/sec ÷ 8, MB/sec = MiB/s), the host pair from ``--pair`` or the file name,
detection beside nccl-tests, and the "find the bad node" path through ``bench compare`` on a
6-host all-pairs sweep written as files named after their pairs."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import assume, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from aifabric.bench.importer import (
    pair_from_name,
    read_nccl_tests,
    read_perftest,
    read_results,
)
from aifabric.cli.bench_cmd import bench_app
from aifabric.errors import AifabricError, InputError

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
PERFTEST = ROOT / "perftest"
NCCL = ROOT / "nccl-tests"
CASES = sorted(p.name for p in PERFTEST.iterdir() if (p / "input.txt").is_file())
AINIC = PERFTEST / "ainic-rocm-gdr-bidir-sweep-server" / "input.txt"
MIB = 1 << 20
T = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)

# fixture → (collective, rows, (size, BW average as printed, factor to GB/s) of first and last
# row); factor 1/8 for Gb/sec, 2^20/10^9 for MB/sec (perftest's MB is MiB: module doc)
KNOWN: dict[str, tuple[str, int, tuple[int, float, float], tuple[int, float, float]] | None] = {
    "ainic-rocm-gdr-bidir-sweep-server": (
        "ib_write_bw_bidir",
        23,
        (2, 0.146905, 1 / 8),
        (8388608, 697.97, 1 / 8),
    ),
    "perftest-273-post-list-gbits": ("ib_write_bw", 1, (8, 0.48, 1 / 8), (8, 0.48, 1 / 8)),
    "pib-4-atomic-bw-softib": ("ib_atomic_bw", 1, (8, 1.67, MIB / 1e9), (8, 1.67, MIB / 1e9)),
    "ucx-8851-read-bw-ib-truncated": ("ib_read_bw", 3, (2, 4.67, MIB / 1e9), (8, 19.50, MIB / 1e9)),
    "perftest-228-connect-error": None,
    "perftest-234-server-roce-truncated": None,
    "spiderpool-read-lat-roce-sriov-indented": None,
}
WHY_NONE = {
    "perftest-228-connect-error": "perftest failed: Couldn't connect to 192.168.125.211:18515",
    "perftest-234-server-roce-truncated": "RDMA_Write BW Test has no result rows",
    "spiderpool-read-lat-roce-sriov-indented": "RDMA_Read Latency Test is a latency test",
}


def test_every_fixture_is_known() -> None:
    assert sorted(KNOWN) == CASES


@pytest.mark.parametrize("case", CASES)
def test_real_fixture_imports(case: str) -> None:
    path = PERFTEST / case / "input.txt"
    res = read_results(path, pair=("hA", "hB"), label="fx", cluster="c1", started=T)
    want = KNOWN[case]
    if want is None:
        assert res.runs == []
        assert any(WHY_NONE[case] in w for w in res.warnings), res.warnings
        return
    coll, n, first, last = want
    (run,) = res.runs
    assert (run.collective, run.tool, len(run.rows)) == (coll, "perftest", n)
    assert (run.pair, run.hosts, run.ranks) == (("hA", "hB"), ("hA", "hB"), 2)
    assert (run.label, run.cluster, run.started, run.source) == ("fx", "c1", T, str(path))
    for row, (size, printed, factor) in ((run.rows[0], first), (run.rows[-1], last)):
        gbps = printed * factor
        assert row.size_bytes == size
        assert row.busbw_gbps == pytest.approx(gbps, rel=1e-12)
        assert row.algbw_gbps == row.busbw_gbps
        assert row.time_us == pytest.approx(size / (gbps * 1e9) * 1e6, rel=1e-12)
        assert (row.count, row.dtype, row.redop, row.in_place, row.wrong) == (
            None, None, None, False, None
        )  # fmt: skip
    assert not any("no host pair" in w for w in res.warnings)


def test_ainic_values_and_connected_time() -> None:
    run = read_perftest(AINIC, pair=("a", "b")).runs[0]
    # "Connected: Thu Apr 23 01:20:55 2026" dates the run (no zone printed: taken as UTC)
    assert run.started == datetime(2026, 4, 23, 1, 20, 55, tzinfo=UTC)
    by_size = {r.size_bytes: r.busbw_gbps for r in run.rows}
    assert by_size[1 << 20] == pytest.approx(696.64 / 8)  # 87.08 GB/s, both directions summed
    assert by_size[16384] == pytest.approx(673.94 / 8)
    assert sorted(by_size) == [2 << i for i in range(23)]


def test_no_pair_warns_and_leaves_hosts_empty() -> None:
    res = read_perftest(AINIC.read_text())
    assert res.runs[0].pair is None and res.runs[0].hosts == ()
    assert any("no host pair" in w for w in res.warnings)


def test_pair_from_file_name(tmp_path: Path) -> None:
    path = tmp_path / "ib_write_bw-node-01--node-02.txt"
    path.write_text(AINIC.read_text())
    (run,) = read_results(path).runs
    assert run.pair == ("node-01", "node-02") and run.hosts == ("node-01", "node-02")


@pytest.mark.parametrize(
    ("name", "pair"),
    [
        ("ib_write_bw-h1-h3.txt", ("h1", "h3")),
        ("/runs/ib_read_bw_gpu7-gpu9.log", ("gpu7", "gpu9")),
        ("ib_write_bw-node-01--node-02.out", ("node-01", "node-02")),
        ("h5--h2", ("h5", "h2")),
        ("a.lab--b.lab.txt", ("a.lab", "b.lab")),
        ("node-01-node-02.txt", None),  # two hyphens, no "--": ambiguous
        ("ib_write_bw.txt", None),
        ("h1-h1.txt", None),
        ("h1--.txt", None),
        ("ib_write_bw-h1-h3-h4.txt", None),
    ],
)
def test_pair_from_name_known_answers(name: str, pair: tuple[str, str] | None) -> None:
    assert pair_from_name(name) == pair


HOST = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.]{0,12}(?:-[A-Za-z0-9_.]{1,6})?", fullmatch=True)


@given(HOST, HOST, st.sampled_from(["ib_write_bw-", "ib_send_bw_", ""]), st.sampled_from(
    [".txt", ".log", ""]
))  # fmt: skip
def test_pair_from_name_round_trip(a: str, b: str, prefix: str, suffix: str) -> None:
    assume(a != b and not (suffix == "" and b.endswith((".txt", ".log", ".out"))))
    assume(not (prefix == "" and re.match(r"ib_\w+_(?:bw|lat)[-_.]", a)))
    assert pair_from_name(f"{prefix}{a}--{b}{suffix}") == (a, b)


def test_nccl_tests_input_takes_the_old_path() -> None:
    for case in ("olivia-gh200-slingshot-v2.18.3", "issue214-sendrecv-inplace-wrong-na"):
        path = NCCL / case / "input.txt"
        assert read_results(path).runs == read_nccl_tests(path).runs
    path = NCCL / "olivia-gh200-slingshot-v2.18.3" / "input.txt"
    runs = read_results(path, pair=("x", "y")).runs
    assert runs and all(r.pair == ("x", "y") and r.tool == "nccl-tests" for r in runs)
    # a file name never makes an nccl-tests run a pair
    assert all(r.pair is None for r in read_results(path.read_text(), name="a-b.txt").runs)


def test_not_perftest_is_input_error() -> None:
    with pytest.raises(InputError, match="no perftest output"):
        read_perftest("hello\nworld\n")


def test_zero_average_row_is_left_out() -> None:
    text = AINIC.read_text().replace(
        " 2          20000           0.147580            0.146905",
        " 2          20000           0.00                0.00    ",
    )
    res = read_perftest(text, pair=("a", "b"))
    assert len(res.runs[0].rows) == 22 and res.runs[0].rows[0].size_bytes == 4
    assert any("no positive BW average" in w for w in res.warnings)


# -- bench import / compare on a pairwise sweep -----------------------------------------------

app = typer.Typer()


@app.callback()
def _root() -> None:
    """test root"""


app.add_typer(bench_app)


def bench(*args: str) -> tuple[int, str]:
    """``bench ARGS`` → (exit code, stdout); our errors map to their exit code as in the app."""
    r = CliRunner().invoke(app, ["bench", *args])
    if isinstance(r.exception, AifabricError):
        return r.exception.exit_code, str(r.exception)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout


_ROW_RE = re.compile(r"^(\s*\d+\s+\d+\s+)(\d+\.\d+)(\s+)(\d+\.\d+)(\s+\d+\.\d+\s*)$")


def scaled(text: str, factor: float) -> str:
    """The fixture's text with both BW columns of every results row times ``factor``."""

    def one(m: re.Match[str]) -> str:
        peak, avg = float(m.group(2)) * factor, float(m.group(4)) * factor
        return f"{m.group(1)}{peak:.6f}{m.group(3)}{avg:.6f}{m.group(5)}"

    return "\n".join(_ROW_RE.sub(one, line) for line in text.splitlines()) + "\n"


HOSTS = [f"h{i}" for i in range(1, 7)]


def sweep(tmp_path: Path, bad: str | None) -> list[str]:
    """A 6-host all-pairs sweep (15 files ``ib_write_bw-hA-hB.txt``) made of the AINIC
    capture: ±1 % per pair, pairs with ``bad`` at 50 %."""
    text = AINIC.read_text()
    out: list[str] = []
    k = 0
    for i, a in enumerate(HOSTS):
        for b in HOSTS[i + 1 :]:
            k += 1
            factor = 1.0 + 0.01 * ((k % 3) - 1)
            if bad in (a, b):
                factor *= 0.5
            path = tmp_path / f"ib_write_bw-{a}-{b}.txt"
            path.write_text(scaled(text, factor))
            out.append(str(path))
    return out


def test_scaled_really_scales() -> None:
    run = read_perftest(scaled(AINIC.read_text(), 0.5), pair=("a", "b")).runs[0]
    assert run.rows[-1].busbw_gbps == pytest.approx(697.97 / 8 * 0.5)


def test_sweep_with_bad_host_names_it(tmp_path: Path) -> None:
    files = sweep(tmp_path, "h3")
    code, out = bench("compare", *files, "--db", str(tmp_path / "b.db"), "-F", "json")
    assert code == 1, out
    doc: dict[str, Any] = json.loads(out)
    bad = [f for f in doc["findings"] if f["check"] == "bench.outlier-host"]
    assert [(f["target"], f["severity"]) for f in bad] == [("h3", "error")]
    assert "5 of 5 ib_write_bw_bidir pairs with h3 are low" in bad[0]["message"]
    assert bad[0]["actual"] == pytest.approx(697.97 / 8 * 0.5, rel=0.02)
    assert bad[0]["expected"] == pytest.approx(697.97 / 8, rel=0.02)
    assert doc["summary"]["error"] == 1


def test_healthy_sweep_exits_0(tmp_path: Path) -> None:
    files = sweep(tmp_path, None)
    code, out = bench("compare", *files, "--db", str(tmp_path / "b.db"), "-F", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert not [f for f in doc["findings"] if f["check"] == "bench.outlier-host"]
    assert len(doc["runs"]) == 15


def test_import_sweep_stores_pairs(tmp_path: Path) -> None:
    files = sweep(tmp_path, None)[:3]
    code, out = bench("import", *files, "--db", str(tmp_path / "b.db"), "-F", "json")
    assert code == 0, out
    items = json.loads(out)["imported"]
    assert [it["pair"] for it in items] == [["h1", "h2"], ["h1", "h3"], ["h1", "h4"]]
    assert {(it["tool"], it["collective"], it["sizes"]) for it in items} == {
        ("perftest", "ib_write_bw_bidir", 23)
    }
    code, out = bench("history", "--db", str(tmp_path / "b.db"), "-F", "json")
    assert code == 0 and len(json.loads(out)["runs"]) == 3


def test_import_pair_option(tmp_path: Path) -> None:
    db = str(tmp_path / "b.db")
    code, out = bench("import", str(AINIC), "--pair", "gpu1,gpu2", "--db", db, "-F", "json")
    assert code == 0, out
    assert json.loads(out)["imported"][0]["pair"] == ["gpu1", "gpu2"]
    for bad in ("gpu1", "gpu1,gpu1", "a,b,c", ",b"):
        code, msg = bench("import", str(AINIC), "--pair", bad, "--db", db)
        assert code == 2 and "--pair" in msg


def test_import_failed_run_is_input_error(tmp_path: Path) -> None:
    path = PERFTEST / "perftest-228-connect-error" / "input.txt"
    code, msg = bench("import", str(path), "--db", str(tmp_path / "b.db"))
    assert code == 2 and "no benchmark result rows" in msg


@pytest.mark.parametrize(
    "case", ["nccl-tests/aws-batch-p5-tag-output-wide-header",
             "perftest/ainic-rocm-gdr-bidir-sweep-server"]
)
def test_read_results_reads_a_file_once_and_dates_it_by_mtime_or_the_output(
    case: str, tmp_path: Path
) -> None:
    """One read per file; a start the output states wins, else the file's mtime."""
    src = next((ROOT / case).glob("input.*"))
    f = tmp_path / "ib_write_bw-a-b.txt"
    f.write_bytes(src.read_bytes())
    mtime = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    os.utime(f, (mtime.timestamp(), mtime.timestamp()))
    got = read_results(f)
    assert got.runs
    # the same text given as a string has no mtime: it is dated now unless it states a start
    from_text = read_results(src.read_text(encoding="utf-8")).runs[0].started
    states_start = datetime.now(UTC) - from_text > timedelta(minutes=5)
    for run in got.runs:
        assert run.source == str(f)
        assert run.started == (from_text if states_start else mtime)
    explicit = datetime(2025, 5, 5, tzinfo=UTC)
    assert {r.started for r in read_results(f, started=explicit).runs} == {explicit}
