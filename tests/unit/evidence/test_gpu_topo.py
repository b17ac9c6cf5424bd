"""nvidia-smi topo -m parser against real captures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.gpu_topo import GpuTopology, link_rank, parse_nvidia_smi_topo
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    load,
)

CASES = [c for c in all_cases() if c.kind == "nvidia-smi-topo"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == "nvidia-smi-topo"
    res = c.parse()
    assert res.of_type(GpuTopology)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_three_real_fixtures() -> None:
    assert len(CASES) >= 3


def _one(name: str) -> GpuTopology:
    (topo,) = load("nvidia-smi-topo", name).of_type(GpuTopology)
    assert isinstance(topo, GpuTopology)
    return topo


def test_tab_separated_capture_with_empty_affinity_cells() -> None:
    t = _one("princeton-della-pli-h100-6nic")
    assert t.command == "jdh4@della-k17g3:~$ nvidia-smi topo -m" and not t.pci_only
    assert t.gpus == [f"GPU{i}" for i in range(8)]
    assert t.nics == [f"NIC{i}" for i in range(6)]
    assert t.links["GPU0"]["GPU0"] == "X" and t.links["GPU0"]["GPU5"] == "NV18"
    assert t.links["GPU0"]["NIC0"] == "PIX" and t.links["GPU0"]["NIC2"] == "NODE"
    assert t.links["NIC3"]["NIC4"] == "PIX"
    # "GPU0\t...\tNODE\t\t0\t\tN/A": no CPU affinity printed, NUMA 0
    assert t.cpu_affinity["GPU0"] is None and t.numa_affinity["GPU0"] == "0"
    assert t.cpu_affinity["GPU4"] == "1" and t.numa_affinity["GPU7"] == "1"
    assert t.gpu_numa_id["GPU3"] == "N/A"
    assert t.nic_names == {f"NIC{i}": f"mlx5_{i}" for i in range(6)}
    assert t.legend["NV#"] == "Connection traversing a bonded set of # NVLinks"
    assert t.legend["PIX"] == "Connection traversing at most a single PCIe bridge"
    assert (t.line, t.end_line, t.row_line("GPU0"), t.row_line("NIC5")) == (2, 35, 3, 16)
    assert t.nearest_nics("GPU0") == ("PIX", ["NIC0", "NIC1"])
    assert t.nearest_nics("GPU1") == ("NODE", [f"NIC{i}" for i in range(6)])
    assert t.nearest_nics("GPU6") == ("PIX", ["NIC5"])
    assert len(t.nvlink_peers("GPU1")) == 7


def test_space_separated_small_node_with_nic_legend() -> None:
    t = _one("nccl-tests-320-3gpu-node-phb")
    assert t.command == "[nccl-tests]$ nvidia-smi topo -m"
    assert (t.gpus, t.nics) == (["GPU0", "GPU1", "GPU2"], ["NIC0", "NIC1"])
    assert t.link("GPU0", "GPU1") == "NV4" and t.link("GPU2", "GPU0") == "NODE"
    assert t.cpu_affinity == {"GPU0": "64-71", "GPU1": "64-71", "GPU2": "64-71"}
    assert t.numa_affinity["GPU2"] == "1" and t.gpu_numa_id["GPU2"] == "N/A"
    assert t.nearest_nics("GPU0") == ("NODE", ["NIC0", "NIC1"])
    assert t.nearest_nics("GPU2") == ("PHB", ["NIC0", "NIC1"])
    assert t.nic_name("NIC1") == "mlx5_1"
    assert t.nvlink_peers("GPU0") == ["GPU1"] and t.nvlink_peers("GPU2") == []


def test_old_layout_named_nic_columns() -> None:
    t = _one("nccl-tests-78-dgx2-mlx5-columns")
    assert len(t.gpus) == 16 and t.nics == [f"mlx5_{i}" for i in range(10)]
    assert set(t.links) == {"GPU0", "GPU1", "GPU2", "GPU3"}
    assert t.links["GPU2"]["mlx5_1"] == "PIX" and t.links["GPU0"]["mlx5_9"] == "SYS"
    assert t.cpu_affinity["GPU3"] == "0-23,48-71"
    assert t.numa_affinity == {} and t.gpu_numa_id == {} and t.nic_names == {}
    assert t.nic_name("mlx5_0") == "mlx5_0"


def test_topo_mp_is_pci_only() -> None:
    t = _one("deepep-55-topo-mp-phb")
    assert t.pci_only and t.command is not None and t.command.endswith("nvidia-smi topo -mp")
    assert t.link("GPU0", "GPU1") == "PHB" and t.link("GPU0", "GPU4") == "SYS"
    assert t.nearest_nics("GPU0") == ("PHB", ["NIC1", "NIC2", "NIC3", "NIC4"])
    assert t.cpu_affinity["GPU5"] == "88-175" and t.numa_affinity["GPU5"] == "1"


def test_tabbed_rows_without_trailing_affinity_cells() -> None:
    t = _one("nccl-1453-h100-9nic-tabs")
    assert len(t.nics) == 9 and t.row_line("NIC5") == 15
    assert all(t.nearest_nics(g)[0] == "PIX" for g in t.gpus)
    assert t.nearest_nics("GPU7") == ("PIX", ["NIC1"])
    assert t.cpu_affinity["GPU7"] == "80-159" and t.gpu_numa_id["GPU7"] == "N/A"
    assert all(t.links["NIC0"][g] == "SYS" for g in t.gpus)


def test_link_rank_order() -> None:
    assert [link_rank(k) for k in ("PIX", "PXB", "PHB", "NODE", "SYS")] == [1, 2, 3, 4, 5]
    assert link_rank("NV18") is None and link_rank("X") is None


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("princeton-della-pli-h100-6nic", 6),
        ("princeton-della-pli-h100-6nic", 20),
        ("nccl-tests-320-3gpu-node-phb", 4),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("nvidia-smi-topo", name, after)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_nvidia_smi_topo(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["princeton-della-pli-h100-6nic", "nccl-tests-320-3gpu-node-phb"]),
    st.integers(min_value=0, max_value=40),
    st.text(alphabet=" 0123456789%$@!*()[]{}<>=+-_.,;:/|~^&'\"?#\t", max_size=60),
)
def test_inserted_noise_line_is_one_warning_at_most(name: str, where: int, noise: str) -> None:
    c = case("nvidia-smi-topo", name)
    lines = c.text().splitlines()
    lines.insert(min(where, len(lines)), noise)
    res = parse_nvidia_smi_topo("\n".join(lines))
    assert len(res.warnings) - len(c.parse().warnings) <= 1
