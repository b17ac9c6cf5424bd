"""PyTorch's and vLLM's environment report (kind ``collect-env``) on the real reports under
tests/fixtures/evidence/collect-env/, against the values a reader read off each by eye
(``expected:`` in its meta.yaml), and the verdicts that read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_gpu import driver_tuple, min_driver
from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.gpu_topo import GpuTopology
from aifabric.evidence.torch_env import EnvMessage, TorchEnv

from .fixtures import Case, all_cases, assert_garbage_line_is_one_warning

CASES = [c for c in all_cases() if c.kind == "collect-env"]
_UNSET = {None, "N/A", "Could not collect", "None"}


def _ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


def _norm(value: Any) -> Any:
    return None if value in _UNSET else value


def test_real_reports_of_both_layouts() -> None:
    assert len(CASES) >= 10
    assert any("vllm_version" in c.meta["expected"] and c.meta["expected"]["vllm_version"]
               for c in CASES)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_values_read_by_hand(case: Case) -> None:
    want = case.meta["expected"]
    assert detect_kind(case.text()) == "collect-env"
    res = case.parse()
    assert len(res.warnings) == case.meta.get("warnings", 0), res.warnings
    [env] = res.of_type(TorchEnv)
    assert env.torch_version == _norm(want.get("torch_version"))
    assert env.cuda_build == _norm(want.get("cuda_build"))
    assert env.driver_version == _norm(want.get("driver_version"))
    if want.get("cuda_available") is not None:
        assert env.cuda_available == bool(want["cuda_available"])
    assert env.gpus == (want.get("gpus") or [])
    if want.get("nccl_pip"):
        assert any(want["nccl_pip"] in w for w in env.nccl_wheels)
    if want.get("vllm_version"):
        assert env.vllm_version is not None
        assert env.vllm_version.startswith(want["vllm_version"])


def test_garbage_line_is_one_warning() -> None:
    assert_garbage_line_is_one_warning("collect-env", "vllm-18520-cu124-h20-nccl", after=6)
    assert_garbage_line_is_one_warning("collect-env", "pytorch-43058-cu102-driver-418", after=3)


def test_the_import_warning_before_the_report_is_read_by_the_catalogue() -> None:
    """collect_env imports torch, which warns before the report when the driver is too old."""
    case = next(c for c in CASES if c.name == "pytorch-112553-cu121-driver-470-too-old")
    res = case.parse()
    assert any("driver on your system is too old" in m.text for m in res.of_type(EnvMessage))
    found = diagnose(load_evidence([case.path])).findings
    assert any(f.cause == "config.version-mismatch" and f.severity in ("error", "warning")
               for f in found)  # fmt: skip


def test_minimum_drivers() -> None:
    """The CUDA compatibility guide's table: 12.x >= 525.60.13, 11.x >= 450.80.02, 13.x >=
    580; before CUDA 11 the release's own driver (10.1 >= 418.39)."""
    assert min_driver("12.1") == (525, 60, 13)
    assert min_driver("12.8") == (525, 60, 13)
    assert min_driver("11.7") == (450, 80, 2)
    assert min_driver("13.0") == (580,)
    assert min_driver("10.1.243") == (418, 39)
    assert min_driver("10.2") == (440, 33)
    assert min_driver("7.5") is None
    assert driver_tuple("535.104.05") == (535, 104, 5)
    assert driver_tuple("Could not collect") is None
    assert driver_tuple("410.48") < min_driver("10.1")  # type: ignore[operator]


def _findings(path: Path) -> list[tuple[str, str]]:
    return [(f.check, f.cause) for f in diagnose(load_evidence([path])).findings
            if f.severity in ("error", "warning")]  # fmt: skip


@pytest.mark.parametrize("name", ["espnet-5629-cu121-driver-460",
                                  "pytorch-28321-cu101-driver-410",
                                  "pytorch-30071-cu101-driver-410-eight-gpus",
                                  "pytorch-43058-cu102-driver-418"])  # fmt: skip
def test_driver_older_than_the_cuda_build_needs(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    assert ("diagnose.torch-driver-too-old", "config.version-mismatch") in _findings(case.path)


@pytest.mark.parametrize("name", ["pytorch-51858-cu117-driver-535-windows",
                                  "pytorch-40682-cu101-driver-442-windows-quoted",
                                  "rocm-pytorch-1232-rocm542-mi250", "vllm-18520-cu124-h20-nccl",
                                  "vllm-19607-cu124-a100-topology",
                                  "vllm-22372-cu128-b200-topology"])  # fmt: skip
def test_working_environments_give_nothing(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    assert _findings(case.path) == []


def test_cpu_only_wheel_on_a_gpu_host() -> None:
    case = next(c for c in CASES if c.name == "pytorch-122924-cpu-build-gpu-present")
    assert _findings(case.path) == [("diagnose.torch-without-cuda", "config.version-mismatch")]


def test_nccl_wheel_of_another_cuda_major(tmp_path: Path) -> None:
    """The vLLM 1726 situation (an older NCCL wheel for CUDA 11 left beside PyTorch built for
    CUDA 12): a real report with one package line added as pip prints it."""
    case = next(c for c in CASES if c.name == "vllm-18520-cu124-h20-nccl")
    text = case.text().replace("[pip3] nvidia-nccl-cu12==2.21.5",
                               "[pip3] nvidia-nccl-cu11==2.14.3\n[pip3] nvidia-nccl-cu12==2.21.5")
    assert text != case.text()
    path = tmp_path / "env.txt"
    path.write_text(text, encoding="utf-8")
    assert ("diagnose.nccl-wheel-cuda-differs", "config.version-mismatch") in _findings(path)
    res = parse_text(text, "collect-env")
    [env] = res.of_type(TorchEnv)
    assert env.nccl_wheels == ["nvidia-nccl-cu11==2.14.3", "nvidia-nccl-cu12==2.21.5"]


def test_vllm_topology_section_is_read_as_a_matrix() -> None:
    case = next(c for c in CASES if c.name == "vllm-22372-cu128-b200-topology")
    res = case.parse()
    [topo] = res.of_type(GpuTopology)
    assert topo.gpus == [f"GPU{i}" for i in range(8)]
    assert topo.link("GPU0", "GPU1") == "NV18"
    lines = case.text().splitlines()
    assert lines[topo.line - 1].lstrip().startswith("GPU0")


def test_macos_cuda_driver_is_not_judged_against_linux_drivers(tmp_path: Path) -> None:
    """macOS's CUDA driver reports its own version (``1.1.0``), not a Linux driver release."""
    case = next(c for c in CASES if c.name == "pytorch-43058-cu102-driver-418")
    text = case.text().replace("Nvidia driver version: 418.67", "Nvidia driver version: 1.1.0")
    assert text != case.text()
    path = tmp_path / "mac.txt"
    path.write_text(text, encoding="utf-8")
    assert not [f for f in _findings(path) if f[0] == "diagnose.torch-driver-too-old"]
