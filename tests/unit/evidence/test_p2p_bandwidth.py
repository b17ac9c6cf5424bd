"""p2pBandwidthLatencyTest parser against real captures, and the P2P-versus-staged verdict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.p2p_bandwidth import P2PAccess, P2PDevice, P2PMatrix, parse_p2p_bandwidth
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    draw_garbage_insertion,
    load,
)

KIND = "p2p-bandwidth"
CASES = [c for c in all_cases() if c.kind == KIND]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == KIND
    res = c.parse()
    assert res.records
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_three_real_fixtures() -> None:
    assert len(CASES) >= 3


def _matrices(name: str) -> list[P2PMatrix]:
    return load(KIND, name).of_type(P2PMatrix)


def test_devices_access_and_matrices_of_a_full_run() -> None:
    res = load(KIND, "tinygrad-44-4090-pair-prompt")
    devs = res.of_type(P2PDevice)
    assert [(d.index, d.name, d.bus_id) for d in devs] == [
        (0, "NVIDIA GeForce RTX 4090", "0:2"),
        (1, "NVIDIA GeForce RTX 4090", "0:17"),
    ]
    assert [(a.src, a.dst, a.can) for a in res.of_type(P2PAccess)] == [(0, 1, True), (1, 0, True)]
    conn, uni_off, uni_on, bi_off = _matrices("tinygrad-44-4090-pair-prompt")
    assert conn.measure == "connectivity" and conn.rows == {0: [1.0, 1.0], 1: [1.0, 1.0]}
    assert (uni_off.direction, uni_off.p2p) == ("uni", False)
    assert (uni_off.line, uni_off.end_line) == (16, 19)
    assert uni_on.method == "writes" and uni_on.value(0, 1) == 6.60 and uni_on.value(1, 0) == 6.60
    assert uni_on.staged == uni_off.rows
    assert bi_off.direction == "bi" and bi_off.value(1, 0) == 8.67


def test_tabbed_connectivity_rows_and_trailing_blanks() -> None:
    conn, off = _matrices("nccl-1264-h100-nvlink-tabs")
    assert conn.columns == list(range(8)) and all(v == [1.0] * 8 for v in conn.rows.values())
    assert off.value(0, 0) == 2474.76 and off.value(7, 6) == 37.38
    assert off.staged is None  # a P2P=Disabled matrix has no staged twin


def test_reads_matrix_is_linked_to_the_unidirectional_staged_one() -> None:
    off, writes, reads = _matrices("nccl-814-p2p-writes-below-staged")
    assert writes.method == "writes" and reads.method == "reads"
    assert writes.staged == off.rows and reads.staged == off.rows
    assert reads.value(3, 2) == 10.45


def test_peer_access_lines_alone() -> None:
    access = load(KIND, "aikitoria-5-mixed-cannot-access").of_type(P2PAccess)
    assert len(access) == 18
    assert [(a.src, a.dst) for a in access if a.can] == [(0, 1), (1, 0), (2, 3)]


@pytest.mark.parametrize(
    ("name", "after"),
    [("tinygrad-44-4090-pair-prompt", 17), ("nccl-814-p2p-writes-below-staged", 10)],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning(KIND, name, after)


@given(st.data())
@settings(max_examples=40)
def test_drawn_garbage_is_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, CASES, lambda kind: lambda t: parse_text(t, kind))


@given(st.text())
def test_never_raises(text: str) -> None:
    parse_p2p_bandwidth(text)


@given(
    st.integers(1, 8).flatmap(
        lambda n: st.lists(
            st.lists(st.floats(0, 3000, allow_nan=False).map(lambda x: round(x, 2)),
                     min_size=n, max_size=n),
            min_size=n, max_size=n,
        )
    )
)  # fmt: skip
def test_matrix_printed_as_the_sample_prints_it_reads_back(grid: list[list[float]]) -> None:
    # the sample's own format: "   D\\D" then "%6d " per column; "%6d " row index then
    # "%6.02f " per cell (p2pBandwidthLatencyTest.cu, outputBandwidthMatrix)
    n = len(grid)
    text = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D"
    text += "".join(f"{j:6d} " for j in range(n)) + "\n"
    for i, row in enumerate(grid):
        text += f"{i:6d} " + "".join(f"{v:6.02f} " for v in row) + "\n"
    (m,) = parse_p2p_bandwidth(text).of_type(P2PMatrix)
    assert m.rows == {i: [float(f"{v:.2f}") for v in row] for i, row in enumerate(grid)}


def test_verdict_names_the_worst_pair_of_a_redirected_p2p_path() -> None:
    c = case(KIND, "nccl-814-p2p-writes-below-staged")
    found = [
        f for f in diagnose(load_evidence([c.path])).findings
        if f.check == "diagnose.gpu-p2p-slower-than-host-copy"
    ]  # fmt: skip
    assert found and found[0].severity == "error" and found[0].cause == "host.pcie"
    # by hand from the capture: writes GPU4 -> GPU1 9.64 GB/s against 22.39 staged = 0.4305,
    # the lowest ratio; GPU3 -> GPU4 10.23 / 20.46 = 0.5 exactly is the one pair not below half
    assert "29 of 30 GPU pairs" in found[0].message
    assert "GPU4 -> GPU1" in found[0].message and "(43%)" in found[0].message


@pytest.mark.parametrize(
    "name",
    [
        "tinygrad-44-4090-pair-prompt",
        "tinygrad-6-bidirectional-window",
        "nccl-1264-h100-nvlink-tabs",
    ],
)
def test_healthy_runs_give_no_verdict(name: str) -> None:
    c = case(KIND, name)
    assert not [f for f in diagnose(load_evidence([c.path])).findings if f.severity != "info"]
