"""The built-in hardware catalog (``aifabric/catalog/data/*.yaml``) validates and agrees with
independently known facts: PCIe arithmetic, NCCL's NVLink constants, breakout sums, IEEE reaches,
and coverage of every speed and breakout by cables and optics."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from aifabric.catalog.models import CatalogFile

KINDS = ("gpus", "nics", "pcie", "switches", "modules", "cables")
SPEEDS_GBPS = (100, 200, 400, 800)
BREAKOUTS = ((400, 2, 200), (400, 4, 100), (800, 2, 400))  # (wide speed, legs, leg speed)


def _load(kind: str) -> CatalogFile:
    text = (files("aifabric.catalog") / "data" / f"{kind}.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    assert isinstance(raw, dict)
    assert list(raw) == [kind], f"{kind}.yaml must hold exactly one top-level key {kind!r}"
    return CatalogFile.model_validate(raw)


@pytest.fixture(scope="module")
def catalog() -> dict[str, CatalogFile]:
    return {kind: _load(kind) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_file_validates_with_unique_names_and_sources(kind: str) -> None:
    entries = getattr(_load(kind), kind)
    assert entries, f"{kind}.yaml is empty"
    names = [e.name for e in entries]
    assert len(names) == len(set(names)), f"duplicate names in {kind}.yaml"
    for entry in entries:
        assert entry.source.strip(), f"{kind}/{entry.name} has no source"


def test_pcie_raw_and_effective_bandwidth(catalog: dict[str, CatalogFile]) -> None:
    gens = {g.gen: g for g in catalog["pcie"].pcie}
    assert sorted(gens) == [1, 2, 3, 4, 5, 6]
    assert gens[4].raw_GBps(16) == pytest.approx(31.5, abs=0.1)
    assert gens[4].raw_GBps(16) * 8 == pytest.approx(252, abs=1)
    assert 28.0 <= gens[4].effective_GBps(16) <= 29.5
    assert gens[5].raw_GBps(16) == pytest.approx(63.0, abs=0.1)
    assert gens[5].raw_GBps(16) * 8 == pytest.approx(504, abs=1)
    assert gens[5].effective_GBps(16) == pytest.approx(57.0, abs=0.5)
    assert gens[3].nccl_model_x16_GBps == 12
    assert gens[4].nccl_model_x16_GBps == 24
    assert gens[5].nccl_model_x16_GBps == 48
    for gen in gens.values():
        assert gen.raw_GBps(16) == pytest.approx(gen.raw_GBps(1) * 16)


def test_nccl_nvlink_model_matches_topo_h(catalog: dict[str, CatalogFile]) -> None:
    gpus = {g.name: g for g in catalog["gpus"].gpus}
    assert gpus["H100"].nccl_scale_up_GBps == pytest.approx(18 * 20.6)
    assert gpus["H100"].nccl_scale_up_GBps == pytest.approx(370.8)
    assert gpus["B200"].nccl_scale_up_GBps == pytest.approx(18 * 40.1)
    assert gpus["A100"].nccl_scale_up_GBps == pytest.approx(12 * 20.0)
    assert gpus["H100"].scale_up_GBps == 450
    assert gpus["H100"].nvls and gpus["B200"].nvls
    assert gpus["L40S"].scale_up == "pcie"
    assert gpus["MI300X"].scale_up == "infinity-fabric"
    # topo.h: SM70 20.0 GB/s per NVLink2 link, 6 links on V100 SXM2 (300 GB/s bidirectional)
    for v100 in ("V100", "V100-16GB"):
        assert gpus[v100].nccl_scale_up_GBps == pytest.approx(6 * 20.0)
        assert gpus[v100].scale_up_GBps == 150 and gpus[v100].compute_capability == "7.0"
    assert (gpus["V100"].memory_GiB, gpus["V100-16GB"].memory_GiB) == (32, 16)
    # B300 (sm_103): NCCL's SM100 constant applies to every CC >= 10.0; 1.8 TB/s bidirectional
    assert gpus["B300"].nccl_scale_up_GBps == pytest.approx(18 * 40.1)
    assert gpus["B300"].scale_up_GBps == 900 and gpus["B300"].compute_capability == "10.3"
    assert gpus["B300"].nvls and gpus["B300"].memory_GiB == 288
    # PCIe cards: NCCL's PCIe model width x speed / 80 (Gen4 x16 24, Gen5 x16 48 GB/s)
    pcie_model = {4: 24.0, 5: 48.0}
    for name in ("L40S", "RTX-6000-Ada", "RTX-PRO-6000", "A100-PCIe", "H100-PCIe", "H100-NVL"):
        gpu = gpus[name]
        assert gpu.scale_up == "pcie" and not gpu.nvls, name
        assert gpu.nccl_scale_up_GBps == pcie_model[gpu.pcie_gen], name
    # Grace superchips reach host memory over NVLink-C2C: 900 GB/s bidirectional
    assert gpus["GH200"].host_link == "nvlink-c2c" and gpus["GH200"].host_link_GBps == 450
    assert gpus["H100"].host_link == "pcie"


def test_sources_are_public(catalog: dict[str, CatalogFile]) -> None:
    for kind in ("gpus", "nics"):
        for entry in getattr(catalog[kind], kind):
            text = f"{entry.source} {entry.note or ''}"
            assert "shared reference" not in text and "perf-model-and-limits" not in text
            assert "reference §" not in text, f"{kind}/{entry.name}"


def test_switch_breakouts_add_up(catalog: dict[str, CatalogFile]) -> None:
    for switch in catalog["switches"].switches:
        for mode in switch.breakouts:
            assert mode.count * mode.speed_gbps == switch.port_speed_gbps, switch.name


def test_module_breakouts_add_up_and_reaches(catalog: dict[str, CatalogFile]) -> None:
    for module in catalog["modules"].modules:
        assert module.reach_m > 0, module.name
        if module.breakout is not None:
            assert module.breakout.count * module.breakout.speed_gbps == module.speed_gbps
        if "DR4" in module.standard:
            assert module.reach_m >= 500, module.name
        if "FR4" in module.standard:
            assert module.reach_m >= 2000, module.name


def test_breakout_cables_add_up(catalog: dict[str, CatalogFile]) -> None:
    for cable in catalog["cables"].cables:
        if cable.breakout > 1:
            assert cable.leg_speed_gbps is not None, cable.name
            assert cable.speed_gbps == cable.breakout * cable.leg_speed_gbps, cable.name
        if cable.kind == "fiber":
            assert cable.fiber_type is not None, cable.name


@pytest.mark.parametrize("speed", SPEEDS_GBPS)
def test_every_speed_has_dac_mmf_and_smf_options(
    catalog: dict[str, CatalogFile], speed: int
) -> None:
    cables = catalog["cables"].cables
    modules = catalog["modules"].modules
    assert any(c.kind == "dac" and c.breakout == 1 and c.speed_gbps == speed for c in cables)
    assert any(m.media == "mmf" and m.speed_gbps == speed for m in modules)
    assert any(m.media == "smf" and m.speed_gbps == speed for m in modules)
    assert any(m.speed_gbps == speed and m.reach_m >= 2000 for m in modules)


@pytest.mark.parametrize(("wide", "legs", "leg_speed"), BREAKOUTS)
def test_every_breakout_has_cable_and_matching_module(
    catalog: dict[str, CatalogFile], wide: int, legs: int, leg_speed: int
) -> None:
    cables = catalog["cables"].cables
    modules = catalog["modules"].modules
    assert any(
        c.kind == "dac"
        and c.speed_gbps == wide
        and c.breakout == legs
        and c.leg_speed_gbps == leg_speed
        for c in cables
    )
    leg_standards = {m.standard for m in modules if m.speed_gbps == leg_speed}
    splitters = [
        m
        for m in modules
        if m.speed_gbps == wide
        and m.breakout is not None
        and m.breakout.count == legs
        and m.breakout.speed_gbps == leg_speed
    ]
    assert splitters, f"no {wide}G module breaking out {legs}x{leg_speed}G"
    for module in splitters:
        assert module.breakout is not None
        assert module.breakout.standard in leg_standards, module.name
