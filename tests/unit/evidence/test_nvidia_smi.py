"""nvidia-smi (kind ``nvidia-smi``): the table, ``-q`` and the CSV query.

The real captures under tests/fixtures/evidence/nvidia-smi/ carry, in their meta.yaml, the values a
reader read off each capture by eye (``expected:``); the parse must give the same. A property test
renders tables in two drivers' layouts from drawn values and reads them back.
"""

# ruff: noqa: E501  (the rendered tables keep nvidia-smi's own widths)
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.nvidia_smi import GpuProcess, GpuState, SmiDriver
from aifabric.evidence.paste import parse_paste

from .fixtures import Case, all_cases, assert_garbage_line_is_one_warning

CASES = [c for c in all_cases() if c.kind == "nvidia-smi"]
WITH_EXPECTED = [c for c in CASES if c.meta.get("expected")]


def _ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


def test_there_are_real_captures_of_every_form() -> None:
    forms = {c.meta["expected"]["form"] for c in WITH_EXPECTED}
    assert {"table", "query", "csv"} <= forms, forms
    assert len(WITH_EXPECTED) >= 10


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_detected_as_nvidia_smi(case: Case) -> None:
    assert detect_kind(case.text()) == "nvidia-smi"


def _as_int(value: Any) -> int | None:
    if value is None:
        return None
    text = str(value).strip().rstrip("x").strip()
    return int(text) if text.isdigit() else None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    return {"yes": True, "no": False}.get(str(value).strip().lower())


# expected key -> (GpuState attribute, conversion of the hand-read value)
_KEYS: dict[str, tuple[str, Any]] = {
    "index": ("index", _as_int),
    "name": ("name", str),
    "bus_id": ("bus_id", str),
    "ecc_volatile_uncorr": ("ecc_volatile_uncorrectable", _as_int),
    "memory_used_mib": ("memory_used_mib", float),
    "memory_total_mib": ("memory_total_mib", float),
    "compute_mode": ("compute_mode", str),
    "pcie_gen_max": ("pcie_gen_max", _as_int),
    "pcie_gen_current": ("pcie_gen_current", _as_int),
    "link_width_max": ("link_width_max", _as_int),
    "link_width_current": ("link_width_current", _as_int),
    "remapped_rows_pending": ("remapped_rows_pending", _as_bool),
    "fabric_state": ("fabric_state", str),
    "fabric_status": ("fabric_status", str),
}
_NOT_SHOWN = {"N/A", "[N/A]", "Not Supported", "[Not Supported]"}


@pytest.mark.parametrize("case", WITH_EXPECTED, ids=_ids(WITH_EXPECTED))
def test_values_read_by_hand(case: Case) -> None:
    want = case.meta["expected"]
    res = case.parse()
    assert len(res.warnings) == case.meta.get("warnings", 0), res.warnings
    drivers = res.of_type(SmiDriver)
    gpus = res.of_type(GpuState)
    if want["form"] == "error":
        assert gpus == []
        return
    assert drivers, "no driver record"
    if want.get("driver_version") is not None:
        assert str(want["driver_version"]) in {d.driver_version for d in drivers}
        assert all(g.driver_version == str(want["driver_version"]) for g in gpus)
    cuda = want.get("cuda_version")
    if cuda is not None and str(cuda) not in _NOT_SHOWN:
        assert str(cuda) in {d.cuda_version for d in drivers}
    assert len(gpus) == want["gpus"]
    for got, exp in zip(gpus, want.get("per_gpu") or [], strict=False):
        for key, value in exp.items():
            if key not in _KEYS or value is None or str(value) in _NOT_SHOWN:
                continue
            attr, conv = _KEYS[key]
            assert getattr(got, attr) == conv(value), (key, got)


@pytest.mark.parametrize("case", WITH_EXPECTED[:6], ids=_ids(WITH_EXPECTED[:6]))
def test_garbage_line_is_one_warning(case: Case) -> None:
    lines = case.text().splitlines()
    assert_garbage_line_is_one_warning("nvidia-smi", case.name, after=min(len(lines), 4))


# -- rendered tables ---------------------------------------------------------------------------

_NAMES = ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB",
          "NVIDIA GeForce RTX 4090", "NVIDIA L40S")  # fmt: skip
_gpu = st.fixed_dictionaries({
    "name": st.sampled_from(_NAMES),
    "bus": st.integers(0, 255),
    "ecc": st.one_of(st.just("N/A"), st.integers(0, 99).map(str), st.just("ERR!")),
    "temp": st.integers(20, 95),
    "perf": st.integers(0, 12),
    "power": st.integers(10, 700),
    "cap": st.integers(100, 1000),
    "used": st.integers(0, 81920),
    "total": st.sampled_from((16384, 24564, 32768, 46068, 81559, 81920)),
    "util": st.integers(0, 100),
    "mode": st.sampled_from(("Default", "E. Process", "Prohibited")),
    "mig": st.sampled_from(("Disabled", "Enabled", "N/A")),
})  # fmt: skip


def _render_535(driver: str, cuda: str, gpus: list[dict[str, Any]]) -> str:
    rule = "+-----------------------------------------+----------------------+----------------------+"
    lines = [
        "+---------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {driver:<22} Driver Version: {driver:<12} CUDA Version: {cuda:<8} |",
        "|-----------------------------------------+----------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                      |               MIG M. |",
        "|=========================================+======================+======================|",
    ]
    for i, g in enumerate(gpus):
        lines.append(f"| {i:>3}  {g['name']:<29} On  | 00000000:{g['bus']:02X}:00.0 Off | "
                     f"{g['ecc']:>20} |")
        pwr = f"{g['power']}W / {g['cap']}W"
        lines.append(f"| N/A   {g['temp']}C    P{g['perf']:<2} {pwr:>23} | "
                     f"{g['used']:>6}MiB / {g['total']}MiB | {g['util']:>5}%  {g['mode']:>11} |")
        lines.append(f"|{'':41}|{'':22}| {g['mig']:>20} |")
        lines.append(rule)
    return "\n".join(lines) + "\n"


def _render_470(driver: str, cuda: str, gpus: list[dict[str, Any]]) -> str:
    rule = "+-------------------------------+----------------------+----------------------+"
    lines = [
        "+-----------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version: {cuda}     |",
        "|-------------------------------+----------------------+----------------------+",
        "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
        "|                               |                      |               MIG M. |",
        "|===============================+======================+======================|",
    ]
    for i, g in enumerate(gpus):
        name = g["name"][:17] + "..." if len(g["name"]) > 20 else g["name"]
        lines.append(f"| {i:>3}  {name:<20} On   | 00000000:{g['bus']:02X}:00.0 Off | "
                     f"{g['ecc']:>20} |")
        lines.append(f"| N/A   {g['temp']}C    P{g['perf']}   {g['power']}W / {g['cap']}W | "
                     f"{g['used']}MiB / {g['total']}MiB | {g['util']}%  {g['mode']} |")
        lines.append(f"|{'':31}|{'':22}| {g['mig']:>20} |")
        lines.append(rule)
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None)
@given(gpus=st.lists(_gpu, min_size=1, max_size=8),
       layout=st.sampled_from((_render_535, _render_470)),
       driver=st.sampled_from(("470.57.02", "535.104.05", "560.35.03")),
       cuda=st.sampled_from(("11.4", "12.2", "12.6")))  # fmt: skip
def test_rendered_tables_read_back(gpus: list[dict[str, Any]], layout: Any, driver: str,
                                   cuda: str) -> None:  # fmt: skip
    text = layout(driver, cuda, gpus)
    assert detect_kind(text) == "nvidia-smi"
    res = parse_text(text, "nvidia-smi", "rendered")
    assert res.warnings == []
    [drv] = res.of_type(SmiDriver)
    assert (drv.driver_version, drv.cuda_version, drv.gpus) == (driver, cuda, len(gpus))
    got = res.of_type(GpuState)
    assert len(got) == len(gpus)
    for i, (g, want) in enumerate(zip(got, gpus, strict=True)):
        assert g.index == i
        assert g.bus_id == f"00000000:{want['bus']:02X}:00.0"
        assert g.temperature_c == want["temp"]
        assert (g.power_w, g.power_cap_w) == (want["power"], want["cap"])
        assert (g.memory_used_mib, g.memory_total_mib) == (want["used"], want["total"])
        assert g.utilization_pct == want["util"]
        assert g.compute_mode == want["mode"]
        assert g.mig_mode == (None if want["mig"] == "N/A" else want["mig"])
        if want["ecc"] == "ERR!":
            assert "Volatile Uncorr. ECC" in g.errors
        else:
            assert g.ecc_volatile_uncorrectable == (None if want["ecc"] == "N/A"
                                                    else int(want["ecc"]))  # fmt: skip


def test_query_without_indentation_still_reads_sections() -> None:
    """A -q paste that lost its indentation (a forum's formatting): values are found by the
    last section names above them."""
    text = "\n".join([
        "==============NVSMI LOG==============",
        "Driver Version : 535.129.03",
        "CUDA Version : 12.2",
        "Attached GPUs : 1",
        "GPU 00000000:18:00.0",
        "Product Name : NVIDIA H100 80GB HBM3",
        "GPU Link Info",
        "PCIe Generation",
        "Max : 5",
        "Current : 5",
        "Link Width",
        "Max : 16x",
        "Current : 8x",
        "Remapped Rows",
        "Pending : Yes",
        "Remapping Failure Occurred : No",
        "Fabric",
        "State : In Progress",
        "Status : N/A",
    ])  # fmt: skip
    res = parse_text(text, "nvidia-smi", "q")
    assert res.warnings == []
    [gpu] = res.of_type(GpuState)
    assert (gpu.link_width_max, gpu.link_width_current) == (16, 8)
    assert (gpu.pcie_gen_max, gpu.pcie_gen_current) == (5, 5)
    assert gpu.remapped_rows_pending is True and gpu.remapping_failed is False
    assert gpu.fabric_state == "In Progress"
    assert gpu.driver_version == "535.129.03" and gpu.cuda_version == "12.2"


def test_process_rows_with_and_without_gi_ci() -> None:
    text = "\n".join([
        "| Processes:                                                                  |",
        "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |",
        "|        ID   ID                                                   Usage      |",
        "|=============================================================================|",
        "|    0   N/A  N/A     12345      C   /usr/bin/python3                 4000MiB |",
        "|    1    1    0      2345      C   python                            200MiB |",
    ])  # fmt: skip
    res = parse_text("| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4"
                     "     |\n" + text, "nvidia-smi", "p")  # fmt: skip
    assert res.warnings == []
    procs = res.of_type(GpuProcess)
    assert [(p.gpu, p.pid, p.type, p.name, p.memory_mib) for p in procs] == [
        (0, 12345, "C", "/usr/bin/python3", 4000.0), (1, 2345, "C", "python", 200.0)]
    old = parse_text("| NVIDIA-SMI 390.87    Driver Version: 390.87 |\n| Processes:  |\n"
                     "|    0      2156      G   /usr/lib/xorg/Xorg          40MiB |\n",
                     "nvidia-smi", "o")  # fmt: skip
    assert [(p.gpu, p.pid, p.type) for p in old.of_type(GpuProcess)] == [(0, 2156, "G")]
    [drv] = old.of_type(SmiDriver)
    assert drv.cuda_version is None


def test_csv_samples_of_one_gpu_are_one_gpu() -> None:
    """``nvidia-smi --query-gpu=... --format=csv -l 1`` repeats a row per GPU per second."""
    text = "\n".join([
        "index, temperature.gpu, utilization.gpu [%], pstate, power.draw [W]",
        "0, 56, 26 %, P3, 83.92 W",
        "0, 55, 25 %, P3, 78.22 W",
        "1, 40, 0 %, P8, ERR!",
        "0, 56, 24 %, P3, 84.77 W",
        "1, 41, 0 %, P8, 9.10 W",
    ])  # fmt: skip
    res = parse_text(text, "nvidia-smi", "csv")
    assert res.warnings == []
    gpus = res.of_type(GpuState)
    assert [(g.index, g.utilization_pct, g.power_w) for g in gpus] == [(0, 24.0, 84.77),
                                                                       (1, 0.0, 9.1)]
    assert gpus[1].errors == ["power.draw"]  # a field that failed in any sample stays failed
    [drv] = res.of_type(SmiDriver)
    assert drv.gpus == 2


def test_a_bus_id_cut_short_still_starts_a_gpu() -> None:
    table = "\n".join([
        "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "|   3  NVIDIA A100-SXM4-80GB          On  | 00000000: Off |                   On |",
        "| N/A   33C    P0              85W / 400W |                  N/A |     N/A      Default |",
        "|                                         |                      |              Enabled |",
    ])  # fmt: skip
    [gpu] = parse_text(table, "nvidia-smi", "t").of_type(GpuState)
    assert (gpu.index, gpu.bus_id, gpu.mig_mode, gpu.power_w) == (3, None, "Enabled", 85.0)


def test_a_table_after_another_tools_output_is_its_own_part() -> None:
    """An NCCL log, then nvidia-smi's timestamp and table with no prompt between them: the
    boxed NVIDIA-SMI header starts a part of its own even though the log has no known header."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
    log = (fixtures / "nccl-log" / "irdma-roce-ibext-plugin" / "input.txt").read_text()
    table = (fixtures / "nvidia-smi" / "nvgpu-15-titanxp-450" / "input.txt").read_text()
    parts = parse_paste(log + table)
    assert [p.kind for p in parts] == ["nccl-log", "nvidia-smi"]
    n_log = len(log.splitlines())
    assert parts[1].numbers[0] == n_log + 2  # the timestamp line stays above the box
    [drv] = [r for r in parts[1].result.records if isinstance(r, SmiDriver)]  # type: ignore[union-attr]
    assert drv.driver_version == "450.57"
    # the table alone, or after its own timestamp line only, is not cut
    assert [p.kind for p in parse_paste(table)] == ["nvidia-smi"]
