"""``aifabric bench`` commands on a real SQLite file: import, compare, history, mark-change,
report (issue 20, S23). The group is mounted on a test app (the lead adds it to the real one)."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from aifabric.bench.importer import import_nccl_tests
from aifabric.bench.store import opened
from aifabric.cli.bench_cmd import bench_app
from aifabric.errors import AifabricError

from .bench_synth import SIZES, T0, degraded, healthy_busbw, history, make_run, nccl_text

FIXTURES = Path(__file__).parents[2] / "fixtures" / "evidence" / "nccl-tests"
OLIVIA = FIXTURES / "olivia-gh200-slingshot-v2.18.3" / "input.txt"

app = typer.Typer()


@app.callback()
def _root() -> None:
    """test root"""


app.add_typer(bench_app)


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> Any:
        return json.loads(self.out)


def bench(*args: str) -> Result:
    """Run ``bench ARGS``; our errors become their exit code as in ``aifabric.cli.app.main``."""
    r = CliRunner().invoke(app, ["bench", *args])
    if isinstance(r.exception, AifabricError):
        return Result(r.exception.exit_code, r.stdout, str(r.exception))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return Result(r.exit_code, r.stdout, r.stderr)


def _write(path: Path, text: str, day: int) -> Path:
    path.write_text(text)
    when = (T0 + timedelta(days=day)).timestamp()
    os.utime(path, (when, when))  # the importer dates a run by its file
    return path


@pytest.fixture
def db_with_history(tmp_path: Path) -> str:
    db = str(tmp_path / "bench.db")
    files = [
        str(_write(tmp_path / f"h{i}.txt", nccl_text(run), i)) for i, run in enumerate(history(10))
    ]
    r = bench("import", *files, "--db", db, "--cluster", "lab", "--label", "baseline", "-F", "json")
    assert r.code == 0, r.err
    assert len(r.json()["imported"]) == 10
    return db


def test_degraded_run_exits_1_and_names_the_sizes(db_with_history: str, tmp_path: Path) -> None:
    new = _write(tmp_path / "new.txt", nccl_text(degraded(64 << 20, 0.7)), 40)
    svg = tmp_path / "cmp.svg"
    r = bench("compare", str(new), "--db", db_with_history, "--cluster", "lab", "-F", "json",
              "--plot", str(svg))  # fmt: skip
    assert r.code == 1, r.err
    doc = r.json()
    assert set(doc) >= {"findings", "summary", "rows"}
    assert doc["summary"]["error"] == 1
    bad = [row["size_bytes"] for row in doc["rows"] if row["verdict"] == "regression"]
    assert bad == [s for s in SIZES if s >= 64 << 20]
    (reg,) = [f for f in doc["findings"] if f["check"] == "bench.regression"]
    assert "64 MiB, 128 MiB, 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB:" in reg["message"]
    assert all(row["baseline_median"] is not None for row in doc["rows"])
    assert doc["runs"][0]["history_ids"] and len(doc["runs"][0]["history_ids"]) == 10
    assert svg.read_text().startswith("<?xml")


def test_run_inside_band_exits_0(db_with_history: str, tmp_path: Path) -> None:
    ok = _write(tmp_path / "ok.txt", nccl_text(history(11, seed=12345)[-1]), 41)
    r = bench("compare", str(ok), "--db", db_with_history, "--cluster", "lab")
    assert r.code == 0, r.out
    assert "0 error(s)" in r.out


def test_compare_with_fabric_expectation(db_with_history: str, tmp_path: Path) -> None:
    new = _write(tmp_path / "new.txt", nccl_text(degraded()), 40)
    fabric = Path(__file__).parents[3] / "examples" / "lab-2x4x16.yaml"
    r = bench("compare", str(new), "--db", db_with_history, "--fabric", str(fabric), "-F", "json")
    assert r.code == 1, r.err
    doc = r.json()
    exp = doc["runs"][0]["expectation"]
    assert exp is not None and exp["rule70_gbps"] == pytest.approx(0.7 * exp["theoretical_gbps"])
    assert all(row["expected_busbw"] is not None for row in doc["rows"])


def test_history_mark_change_report(db_with_history: str, tmp_path: Path) -> None:
    r = bench("mark-change", "PFC on queue 3 only", "--db", db_with_history, "-F", "json")
    assert r.code == 0, r.err
    change = r.json()["change"]
    assert change["id"] == 1 and change["text"] == "PFC on queue 3 only"
    # runs after the change: slower at large sizes (dated after the change: now + days)
    with opened(db_with_history) as store:
        at = store.changes()[0].at
        store.add_runs(make_run(_slow, started=at + timedelta(hours=h)) for h in (1, 2, 3))
    r = bench("history", "--db", db_with_history, "--size", "8G", "-F", "json",
              "--plot", str(tmp_path / "trend.svg"))  # fmt: skip
    assert r.code == 0, r.err
    doc = r.json()
    assert len(doc["runs"]) == 13
    assert doc["runs"][0]["change_id"] == 1 and doc["runs"][-1]["change_id"] is None
    assert all(it["size_bytes"] == 8 << 30 for it in doc["runs"])
    assert [c["text"] for c in doc["changes"]] == ["PFC on queue 3 only"]
    assert "#1 PFC on queue 3 only" in (tmp_path / "trend.svg").read_text()
    r = bench("report", "--change", "PFC", "--db", db_with_history, "-F", "json")
    assert r.code == 1, r.out
    rep = r.json()
    worse = sorted({row["size_bytes"] for row in rep["rows"] if row["verdict"] == "regression"})
    assert worse == [s for s in SIZES if s >= 64 << 20]
    r = bench("report", "1", "--db", db_with_history)
    assert r.code == 1 and "change #1: PFC on queue 3 only" in r.out
    assert bench("report", "9", "--db", db_with_history).code == 2


def _slow(size: int) -> float:
    return healthy_busbw(size) * (0.75 if size >= 64 << 20 else 1.0)


def test_bad_input_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("hello\n")
    db = str(tmp_path / "b.db")
    assert bench("import", str(empty), "--db", db).code == 2
    assert bench("compare", str(empty), "--db", db).code == 2
    assert bench("compare", str(tmp_path / "missing.txt"), "--db", db).code == 2
    assert bench("mark-change", "  ", "--db", db).code == 2
    assert bench("report", "--db", db).code == 2
    assert bench("history", "--db", db, "--size", "lots").code == 2


# -- real nccl-tests outputs -------------------------------------------------------------------


def test_every_real_fixture_imports(tmp_path: Path) -> None:
    files = sorted(str(p / "input.txt") for p in FIXTURES.iterdir() if (p / "input.txt").exists())
    counts = {f: len(import_nccl_tests(Path(f))) for f in files}
    expected = sum(counts.values())
    db = str(tmp_path / "real.db")
    r = bench("import", *files, "--db", db, "--cluster", "public", "-F", "json")
    assert r.code == 0, r.err
    doc = r.json()
    assert len(doc["imported"]) == expected
    # fixtures holding only aborted runs are warned about and store nothing
    assert {it["source"] for it in doc["imported"]} == {f for f, n in counts.items() if n}
    # most fixtures are whole runs; a few hold only a failed or stalled run
    assert len(files) >= 20 and sum(1 for n in counts.values() if n) >= 0.75 * len(files)
    assert any("no result rows" in w for w in doc["warnings"])
    r = bench("history", "--db", db, "--last", "1000", "-F", "json")
    assert len(r.json()["runs"]) == expected


def _scaled(text: str, min_size: int, share: float) -> str:
    """The fixture with time / share and algbw, busbw x share on rows >= ``min_size``."""
    out = []
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 13 and tok[0].isdigit() and int(tok[0]) >= min_size:
            for i in (5, 9):
                tok[i] = f"{float(tok[i]) / share:.2f}"
            for i in (6, 7, 10, 11):
                tok[i] = f"{float(tok[i]) * share:.2f}"
            out.append("  ".join(tok))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def test_real_fixture_history_flags_degraded_copy(tmp_path: Path) -> None:
    """The Olivia GH200 all_reduce (1 B..128 MiB) imported as 4 runs of history; a copy 30%
    slower at >= 64 MiB is flagged at exactly 64 MiB and 128 MiB, the copy itself is not."""
    text = OLIVIA.read_text()
    db = str(tmp_path / "o.db")
    files = [str(_write(tmp_path / f"o{i}.txt", text, i)) for i in range(4)]
    assert bench("import", *files, "--db", db).code == 0
    same = _write(tmp_path / "same.txt", text, 10)
    assert bench("compare", str(same), "--db", db).code == 0
    slow = _write(tmp_path / "slow.txt", _scaled(text, 64 << 20, 0.7), 11)
    r = bench("compare", str(slow), "--db", db, "-F", "json")
    assert r.code == 1
    doc = r.json()
    assert [row["size_bytes"] for row in doc["rows"] if row["verdict"] == "regression"] == [
        64 << 20,
        128 << 20,
    ]
    row = next(row for row in doc["rows"] if row["size_bytes"] == 128 << 20)
    assert row["baseline_median"] == pytest.approx(101.70)  # out-of-place busbw of the fixture
    assert row["busbw_gbps"] == pytest.approx(71.19)


def test_import_collective_option_names_what_the_output_does_not(tmp_path: Path) -> None:
    """issue 214's capture is a sendrecv_perf table that never prints its binary name."""
    src = (Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "nccl-tests"
           / "issue214-sendrecv-inplace-wrong-na" / "input.txt")
    db = tmp_path / "b.db"
    r = bench("import", str(src), "--db", str(db), "--collective", "sendrecv", "-F", "json")
    assert r.code == 0, r.err
    assert [x["collective"] for x in r.json()["imported"]] == ["sendrecv"]
