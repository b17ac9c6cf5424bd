"""Release advisories (``diagnose.nccl-release-defect``): defects of the NCCL release an input
runs, matched to what its failing lines show."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose import advisories as adv
from aifabric.checks.diagnose.advisories import (
    Defect,
    Release,
    ReleaseNotes,
    Shown,
    matches,
    nccl_release_notes,
    parse_version,
    version_code,
)
from aifabric.checks.diagnose.engine import diagnose, load_evidence


def _code(x: int, y: int, z: int) -> int:
    # NVIDIA/nccl src/nccl.h.in (v2.18.5-1): NCCL_VERSION(X,Y,Z)
    return x * 1000 + y * 100 + z if x <= 2 and y <= 8 else x * 10000 + y * 100 + z


@given(st.integers(2, 2), st.integers(0, 40), st.integers(0, 99))
def test_version_code_inverts_ncclversion_for_every_release(x: int, y: int, z: int) -> None:
    assert version_code(_code(x, y, z)) == (x, y, z)


def test_version_codes_printed_by_nccl_tests() -> None:
    # "# nccl-tests version 2.17.9 nccl-headers=22902 nccl-library=22902"
    assert version_code(22902) == (2, 29, 2)
    assert version_code(21805) == (2, 18, 5)
    assert version_code(2708) == (2, 7, 8)
    assert parse_version("2.18.3") == (2, 18, 3)
    assert parse_version("2.18") is None


NOTES = ReleaseNotes(
    program="nccl",
    releases=(
        Release(
            version="2.18.1",
            sources=("https://example.invalid/rel_2-18-1",),
            known=(Defect(text="Tree with LL128 can corrupt data on H100 with one GPU per NIC",
                          components=("ll128", "tree"), symptoms=("corruption",),
                          workaround="NCCL_PROTO=^LL128", hardware=("h100",)),),
        ),
        Release(
            version="2.18.3",
            sources=("https://example.invalid/rel_2-18-3",),
            fixed=(Defect(text="Hang with NVLS when a communicator is split",
                          components=("nvls", "split"), symptoms=("hang",)),
                   Defect(text="Crash in the IB transport on completion errors",
                          components=("ib",), symptoms=("crash",))),
        ),
        Release(
            version="2.19.3",
            sources=("https://example.invalid/rel_2-19-3",),
            fixed=(Defect(text="Leak of file descriptors", components=(), symptoms=("resource",)),),
        ),
    ),
)


def _shown(symptoms: set[str], in_use: set[str], implicated: set[str] = frozenset(),
           hardware: set[str] = frozenset()) -> Shown:  # type: ignore[assignment]
    return Shown(frozenset(symptoms), frozenset(in_use), frozenset(implicated),
                 frozenset(hardware))


def test_a_fix_in_a_later_release_matches_symptom_and_component() -> None:
    got = matches((2, 18, 1), _shown({"hang"}, {"nvls"}), NOTES)
    assert [(m.release.version, m.known, m.implicated) for m in got] == [("2.18.3", False, False)]


def test_nothing_matches_the_release_that_has_the_fix_or_a_later_one() -> None:
    assert matches((2, 18, 3), _shown({"hang"}, {"nvls"}), NOTES) == []
    assert matches((2, 20, 5), _shown({"hang", "crash"}, {"nvls", "ib"}), NOTES) == []


def test_symptom_alone_or_component_alone_matches_nothing() -> None:
    assert matches((2, 18, 1), _shown({"hang"}, {"ib"}), NOTES) == []
    assert matches((2, 18, 1), _shown({"error"}, {"nvls"}), NOTES) == []
    # a defect the notes give no component for is never matched by its symptom alone
    assert matches((2, 18, 1), _shown({"resource"}, {"ib", "nvls"}), NOTES) == []


def test_known_issue_of_the_release_in_use_needs_its_hardware() -> None:
    shown = _shown({"corruption"}, {"ll128"})
    assert matches((2, 18, 1), shown, NOTES) == []
    shown = _shown({"corruption"}, {"ll128"}, hardware={"h100"})
    (m,) = matches((2, 18, 1), shown, NOTES)
    assert m.known and m.defect.workaround == "NCCL_PROTO=^LL128"
    # the known issue is of 2.18.1 only: a run of 2.17.1 is not said to have it
    assert matches((2, 17, 1), shown, NOTES) == []


def test_shipped_notes_are_ordered_unique_and_cited() -> None:
    notes = nccl_release_notes()
    versions = [parse_version(r.version) for r in notes.releases]
    assert all(v is not None for v in versions)
    assert len(set(versions)) == len(versions)
    assert len(notes.releases) >= 40
    for rel in notes.releases:
        assert all(s.startswith("https://") for s in rel.sources), rel.version


# -- end to end, NCCL's own line formats (src/init.cc "NCCL version %s", src/transport/net_ib.cc)


def _run(tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "job.log"
    path.write_text(text)
    return [(f.check, f.severity, f.message) for f in diagnose(load_evidence([path])).findings
            if f.check == "diagnose.nccl-release-defect"]  # fmt: skip


HEALTHY = (
    "node1:1201:1201 [0] NCCL INFO NCCL version {v}+cuda12.2\n"
    "node1:1201:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.1<0>\n"
    "node1:1201:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
)


@pytest.mark.parametrize("v", ["2.4.2", "2.10.3", "2.18.1", "2.23.4"])
def test_a_healthy_log_gets_no_advisory_whatever_its_release(tmp_path: Path, v: str) -> None:
    assert _run(tmp_path, HEALTHY.format(v=v)) == []


def test_a_failing_log_of_the_newest_release_gets_no_advisory(tmp_path: Path) -> None:
    newest = max(parse_version(r.version) or (0, 0, 0) for r in nccl_release_notes().releases)
    text = HEALTHY.format(v=".".join(map(str, newest))) + (
        "node1:1201:1250 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from "
        "peer 10.0.0.2<43210> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
        "Segmentation fault (core dumped)\n"
    )
    assert _run(tmp_path, text) == []


# NCCL 2.18.1's own INFO lines (src/init.cc: "NCCL_COLLNET_ENABLE set by environment to %s.",
# src/transport/coll_net.cc: "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s") and PyTorch's
# watchdog line (ProcessGroupNCCL.cpp)
COLLNET_HANG = (
    "node1:1201:1201 [0] NCCL INFO NCCL version {v}+cuda12.1\n"
    "node1:1201:1201 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 1.\n"
    "node1:1201:1250 [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0\n"
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, "
    "NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"
)


def test_a_known_issue_of_the_release_in_use_is_a_warning(tmp_path: Path) -> None:
    (hit,) = _run(tmp_path, COLLNET_HANG.format(v="2.18.1"))
    assert hit[1] == "warning"
    assert "known issue of 2.18.1" in hit[2] and "bfloat16" in hit[2]


def test_the_release_with_the_fix_gets_no_known_issue(tmp_path: Path) -> None:
    got = _run(tmp_path, COLLNET_HANG.format(v="2.18.3"))
    assert all("known issue" not in m for _, _, m in got)


def test_collnet_plugin_probe_is_not_collnet_in_use(tmp_path: Path) -> None:
    text = COLLNET_HANG.format(v="2.18.1").replace(
        "node1:1201:1201 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 1.\n"
        "node1:1201:1250 [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0\n",
        "node1:1201:1201 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v6 symbol.\n",
    )
    assert _run(tmp_path, text) == []


def test_every_pattern_is_linear_on_100k_lines() -> None:
    # the patterns run over whole parts of an input joined into one text
    tables = (adv._IN_USE_T, adv._IN_FAILURE_T, adv._HARDWARE_T, adv._SYMPTOM_T)
    texts = [c * 100_000 for c in "a:_ 1"] + [
        "NCCL_PROTO=" + "x" * 100_000, "Assertion '" * 9_000, "Bootstrap : Using a:" * 5_000,
        "NCCL version 2." * 7_000,
    ]
    for text in texts:
        start = time.perf_counter()
        adv._found([p for t in tables for p in t], [text])
        list(adv._RELEASE_RE.finditer(text))
        assert time.perf_counter() - start < 0.5, text[:20]
