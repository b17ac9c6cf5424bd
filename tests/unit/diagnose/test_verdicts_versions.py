"""Processes of one input that run different NCCL releases (``diagnose.nccl-versions-differ``)."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.engine import diagnose, load_evidence

# NCCL's INFO line format (NVIDIA/nccl src/init.cc: "NCCL version %s"), one per process
LINES = (
    "node1:1201:1201 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
    "node1:1202:1202 [1] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
    "node2:3301:3301 [0] NCCL INFO NCCL version {v}+cuda12.1\n"
)


def _found(tmp_path: Path, text: str) -> list[tuple[str, str, int | None]]:
    path = tmp_path / "job.log"
    path.write_text(text)
    return [(f.cause or "", f.message, f.evidence[0].line if f.evidence else None)
            for f in diagnose(load_evidence([path])).findings
            if f.check == "diagnose.nccl-versions-differ"]  # fmt: skip


def test_a_node_with_another_nccl_release_is_a_version_mismatch(tmp_path: Path) -> None:
    (hit,) = _found(tmp_path, LINES.format(v="2.19.3"))
    assert hit[0] == "config.version-mismatch"
    assert "2.18.3 on node1; 2.19.3 on node2" in hit[1]
    assert hit[2] == 3


def test_one_release_built_for_another_cuda_is_not_a_mismatch(tmp_path: Path) -> None:
    assert _found(tmp_path, LINES.format(v="2.18.3")) == []
