"""Huge captures read in chunks (issue 16): the same findings as the whole-file path, file line
numbers in the evidence, counts of what was summarised.

The big inputs are real captures (tests/fixtures/evidence/, each with its source in
``meta.yaml``) concatenated many times; the threshold and chunk size are lowered so that a file
of a few hundred KB takes the streaming path and is cut into many chunks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aifabric.checks.diagnose import streaming
from aifabric.checks.diagnose.engine import Diagnosis, diagnose, load_evidence, weight
from aifabric.cli import parse_cmd
from aifabric.cli.common import OutputFormat
from aifabric.evidence.ethtool_stats import EthtoolStats
from aifabric.evidence.registry import parse_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
COPIES = 12


def _big(tmp_path: Path, kind: str, names: list[str] | None = None) -> Path:
    files = sorted((FIXTURES / kind).glob("*/input.*"))
    if names is not None:
        files = [f for f in files if f.parent.name in names]
    block = b""
    for f in files:
        data = f.read_bytes()
        block += data if data.endswith(b"\n") else data + b"\n"
    path = tmp_path / f"{kind}.log"
    path.write_bytes(block * COPIES)
    return path


def _run(path: Path, monkeypatch: pytest.MonkeyPatch, *, stream: bool) -> Diagnosis:
    threshold = 1 << 10 if stream else 1 << 40
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD", threshold)
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 16 << 10)
    return diagnose(load_evidence([path]))


def _key(d: Diagnosis) -> list[tuple[str, str, str, str | None, str]]:
    return sorted((f.check, f.severity, f.target, f.cause, f.message) for f in d.findings)


def _evidence_points_at_file(d: Diagnosis, path: Path) -> int:
    lines = path.read_text().split("\n")
    checked = 0
    for f in d.findings:
        for e in f.evidence:
            if e.line:
                assert lines[e.line - 1].strip()[:160] == e.text, (f.check, e.line)
                checked += 1
    return checked


def test_nccl_log_streamed_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _big(tmp_path, "nccl-log")
    whole = _run(path, monkeypatch, stream=False)
    streamed = _run(path, monkeypatch, stream=True)
    assert streamed.evidence.files[0].numbers is None
    assert isinstance(streamed.evidence.files[0].lines, streaming.SparseLines)
    assert not isinstance(whole.evidence.files[0].lines, streaming.SparseLines)
    # same checks, severities, targets, causes, and messages (counts included)
    assert _key(streamed) == _key(whole)
    assert len(whole.findings) >= 10
    # records summarised: far fewer items, each standing for its repeats
    assert len(streamed.evidence.items) < len(whole.evidence.items) / 3
    assert weight(i for i in streamed.evidence.items if i.record.record_type == "signature") == (
        sum(1 for i in whole.evidence.items if i.record.record_type == "signature")
    )
    assert _evidence_points_at_file(streamed, path) > 20


def test_nccl_log_repeat_count_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the Software-caused-connection-abort capture prints its connect failure once per copy
    path = _big(tmp_path, "nccl-log", ["socket-connect-abort-proxy"])
    text = path.read_text()
    lines = text.split("\n")
    want = sum("socketStartConnect: Connect to" in ln for ln in lines)
    assert want == COPIES * sum(
        "socketStartConnect: Connect to" in ln
        for ln in (FIXTURES / "nccl-log" / "socket-connect-abort-proxy")
        .joinpath("input.txt")
        .read_text()
        .split("\n")
    )
    streamed = _run(path, monkeypatch, stream=True)
    found = [f for f in streamed.findings if f.check == "signature.nccl.connect-failed"]
    assert found, [f.check for f in streamed.findings]
    assert f"({want} lines)" in found[0].message
    first = next(i for i, ln in enumerate(lines, 1) if "socketStartConnect: Connect to" in ln)
    assert found[0].evidence[0].line == first


def test_ethtool_series_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # dumps with headers and prompts: cut before a dump starts
    path = _big(
        tmp_path,
        "ethtool-stats",
        ["i40e-v2.3.2k-priority-xoff-rx-ethq-tests", "ice-e810-priority-xoff-nic-ethq-tests"],
    )
    whole = _run(path, monkeypatch, stream=False)
    streamed = _run(path, monkeypatch, stream=True)
    assert _key(streamed) == _key(whole)
    _evidence_points_at_file(streamed, path)
    # a series is kept as its first and latest snapshot per interface, counted in full
    w = [i for i in whole.evidence.items if isinstance(i.record, EthtoolStats)]
    s = [i for i in streamed.evidence.items if isinstance(i.record, EthtoolStats)]
    assert len(w) == 2 * COPIES
    assert len(s) == 2  # both dumps print no interface name: one series, as derive reads it
    assert weight(s) == len(w)

    def snapshots(d: Diagnosis) -> list[int]:
        items = d.evidence.items
        return [
            getattr(i.record, "snapshots", 0)
            for i in items
            if i.record.line and "delta" in i.record.record_type
        ]

    assert snapshots(streamed) == snapshots(whole) == [2 * COPIES]


def test_ethtool_headerless_dump_longer_than_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a flush-left dump with no header repeated (what `| grep` of a series gives): no line a
    # chunk may be cut before, so chunks are cut anywhere and the dump is continued across them
    path = _big(tmp_path, "ethtool-stats", ["mlx5-flush-left-no-header-ethq-tests"])
    whole = _run(path, monkeypatch, stream=False)
    streamed = _run(path, monkeypatch, stream=True)
    assert _key(streamed) == _key(whole)
    w = [i.record for i in whole.evidence.items if isinstance(i.record, EthtoolStats)]
    s = [i.record for i in streamed.evidence.items if isinstance(i.record, EthtoolStats)]
    assert len(w) == len(s) == 1
    assert s[0].to_json() == w[0].to_json()
    assert s[0].end_line == len(path.read_text().splitlines())
    name = "rx_discards_phy" if "rx_discards_phy" in w[0].counters else next(iter(w[0].counters))
    assert s[0].line_of(name) == w[0].line_of(name)


def test_small_files_take_the_whole_file_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big(tmp_path, "nccl-log")
    assert streaming.streamed_kind(path) is None  # default threshold: 32 MiB
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD", 1 << 10)
    assert streaming.streamed_kind(path) == "nccl-log"
    other = tmp_path / "mixed.txt"  # a paste of two tools is never streamed
    other.write_text(
        "$ ethtool -S eth0\nNIC statistics:\n     rx_packets: 1\n     tx_packets: 2\n" * 200
        + "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n" * 200
    )
    assert streaming.streamed_kind(other) is None


def test_chunks_cut_nccl_logs_before_nccl_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big(tmp_path, "nccl-log")
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 8 << 10)
    want = path.read_text().split("\n")[:-1]
    got: list[str] = []
    for first, chunk, _ in streaming.chunks(path, "nccl-log"):
        assert first == len(got) + 1
        got += chunk
    assert got == want
    firsts = [chunk[0] for _, chunk, clean in streaming.chunks(path, "nccl-log") if clean]
    assert len(firsts) > 10
    assert all("NCCL" in ln for ln in firsts[1:])


def test_sparse_lines() -> None:
    lines = streaming.SparseLines()
    lines.total = 5
    lines.keep(3, "three")
    assert len(lines) == 5
    assert lines[2] == "three"
    assert lines[0] == ""
    assert lines[-3] == "three"
    assert lines[1:4] == ["", "three", ""]
    with pytest.raises(IndexError):
        lines[5]
    assert re.sub(r"\s", "", "".join(lines)) == "three"


@pytest.mark.parametrize(
    ("kind", "names"),
    [("nccl-log", None), ("ethtool-stats", ["mlx5-flush-left-no-header-ethq-tests"])],
)
def test_parse_json_streamed_is_the_whole_document(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    names: list[str] | None,
) -> None:
    path = _big(tmp_path, kind, names)
    whole = parse_text(path.read_text(), kind).to_json()
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD", 1 << 10)
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 16 << 10)
    assert parse_cmd._streamed(path, kind, OutputFormat.json, 20)
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == kind
    assert doc["file"] == str(path)
    assert doc["records"] == whole["records"]
    assert len(doc["records"]) >= (COPIES if kind == "nccl-log" else 1)
    assert parse_cmd._streamed(path, None, OutputFormat.table, 2)
    assert f"{kind} (read in chunks)" in capsys.readouterr().out
