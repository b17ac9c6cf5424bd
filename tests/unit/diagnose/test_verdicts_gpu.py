"""Verdicts on GPU state (checks/diagnose/verdicts_gpu.py) on the real nvidia-smi captures under
tests/fixtures/evidence/nvidia-smi/, beside real NCCL logs for the CUDA version check, and on
text written in nvidia-smi's ``-q`` layout for the states no capture shows (a narrower PCIe
link)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_gpu import cuda_major_minor
from aifabric.findings import Finding

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
SMI = FIXTURES / "nvidia-smi"


def _findings(*paths: Path, severities: tuple[str, ...] = ("error", "warning")) -> list[Finding]:
    return [f for f in diagnose(load_evidence(list(paths))).findings if f.severity in severities]


def _case(name: str, kind: str = "nvidia-smi") -> Path:
    return next((FIXTURES / kind / name).glob("input.*"))


HEALTHY = ("gvisor-10413-h100-535", "gpud-h100-535-fabric-completed", "gpud-128-titan-v-560-query",
           "nvgpu-15-titanxp-450", "bottlerocket-core-kit-834-a100-580-e-process",
           "sglang-27487-b200-610-kmd-header", "nvidia-container-runtime-17-k80-390-procs",
           "tensorflow-8877-grid-k520-346-no-procs", "nvitop-8-a100-mig-enabled-510",
           "triton-server-8070-csv-compute-cap", "gpu-burn-114-h100-550",
           "club-3090-1128-rtx3090-595")  # fmt: skip


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_gpus_give_nothing(name: str) -> None:
    assert _findings(_case(name)) == []


def test_err_in_the_power_field() -> None:
    [f] = _findings(_case("azhpc-diagnostics-77-v100-err-power"))
    assert (f.check, f.cause, f.severity) == ("diagnose.gpu-field-error", "host.driver", "warning")
    assert "GPU 1 (00008ED0:00:00.0)" in f.message and "Pwr:Usage/Cap" in f.message


def test_remapped_rows_pending() -> None:
    [f] = _findings(_case("gpud-80-a10-remapped-rows-pending"))
    assert (f.check, f.cause) == ("diagnose.gpu-memory-repair-pending", "host.driver")
    assert "remapped rows pending" in f.message


def test_fabric_completed_with_insufficient_resources() -> None:
    [f] = _findings(_case("azhpc-images-506-fabric-insufficient-resources"))
    assert (f.check, f.cause) == ("diagnose.gpu-fabric-not-ready", "host.driver")
    assert "status Insufficient Resources" in f.message


@pytest.mark.parametrize("name", ["akash-support-209-device-handle-unknown-error",
                                  "marian-251-gpu-is-lost",
                                  "manylinux-cuda-5-driver-not-communicating",
                                  "open-gpu-kernel-modules-862-no-devices-found"])  # fmt: skip
def test_messages_instead_of_the_table_are_read_by_the_catalogue(name: str) -> None:
    found = _findings(_case(name))
    assert found and all(f.check.startswith("signature.nvidia-smi.") for f in found)
    assert {f.cause for f in found} == {"host.driver"}


def test_cuda_major_minor() -> None:
    assert cuda_major_minor("12.4") == (12, 4)
    assert cuda_major_minor("13.0") == (13, 0)
    assert cuda_major_minor(" 11.8 ") == (11, 8)
    assert cuda_major_minor("cu121") is None
    assert cuda_major_minor(None) is None


def test_nccl_built_for_a_newer_cuda_major_than_the_driver() -> None:
    """Driver 450.57 supports CUDA 11.0; NCCL 2.27.7 was built for CUDA 13.0."""
    found = _findings(_case("nvgpu-15-titanxp-450"), _case("roce-2.27-nccl-tests-init", "nccl-log"))
    mine = [f for f in found if f.check == "diagnose.cuda-driver-too-old"]
    assert len(mine) == 1
    assert mine[0].severity == "warning" and mine[0].cause == "config.version-mismatch"
    assert "CUDA 13.0" in mine[0].message and "up to 11.0" in mine[0].message


def test_newer_minor_runs_through_minor_version_compatibility() -> None:
    """Driver 535.129.03 supports CUDA 12.2; NCCL 2.21.5 built for CUDA 12.4: info only."""
    paths = (_case("gvisor-10413-h100-535"), _case("irdma-roce-ibext-plugin", "nccl-log"))
    assert not [f for f in _findings(*paths) if f.check == "diagnose.cuda-driver-too-old"]
    infos = [f for f in _findings(*paths, severities=("info",))
             if f.check == "diagnose.cuda-driver-too-old"]  # fmt: skip
    assert len(infos) == 1 and "minor version compatibility" in infos[0].message


def test_hosts_on_different_driver_releases(tmp_path: Path) -> None:
    a = tmp_path / "node1" / "nvidia-smi.txt"
    b = tmp_path / "node2" / "nvidia-smi.txt"
    for path, src in ((a, "gvisor-10413-h100-535"), (b, "gpud-h100-535-fabric-completed")):
        path.parent.mkdir()
        path.write_text(_case(src).read_text(encoding="utf-8"), encoding="utf-8")
    found = [f for f in _findings(a, b) if f.check == "diagnose.gpu-driver-versions-differ"]
    assert len(found) == 1
    assert "535.129.03" in found[0].message and "535.161.08" in found[0].message


def _query(width: str, gen: str, util: str) -> str:
    return "\n".join([
        "==============NVSMI LOG==============",
        "",
        "Driver Version                            : 535.129.03",
        "CUDA Version                              : 12.2",
        "",
        "Attached GPUs                             : 1",
        "GPU 00000000:18:00.0",
        "    Product Name                          : NVIDIA H100 80GB HBM3",
        "    PCI",
        "        Bus Id                            : 00000000:18:00.0",
        "        GPU Link Info",
        "            PCIe Generation",
        "                Max                       : 5",
        f"                Current                   : {gen}",
        "            Link Width",
        "                Max                       : 16x",
        f"                Current                   : {width}",
        "    Utilization",
        f"        Gpu                               : {util} %",
        "        Memory                            : 0 %",
    ]) + "\n"  # fmt: skip


def test_pcie_link_narrower_than_the_gpu_supports(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text(_query("8x", "5", "0"), encoding="utf-8")
    [f] = _findings(path)
    assert (f.check, f.cause) == ("diagnose.gpu-pcie-degraded", "host.pcie")
    assert "width x8 of x16" in f.message


def test_idle_gpu_at_a_lower_generation_is_power_saving(tmp_path: Path) -> None:
    idle = tmp_path / "idle.txt"
    idle.write_text(_query("16x", "1", "0"), encoding="utf-8")
    assert _findings(idle) == []
    busy = tmp_path / "busy.txt"
    busy.write_text(_query("16x", "3", "97"), encoding="utf-8")
    [f] = _findings(busy)
    assert "generation 3 of 5 while 97% busy" in f.message
