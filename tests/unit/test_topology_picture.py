"""Topology pictures: real rendering (SVG and PNG) of hand-built and designed fabrics, from one
leaf to 32,768 GPUs, with repeated units collapsed."""

from __future__ import annotations

import dataclasses
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from aifabric.catalog import Catalog
from aifabric.design import design_fabric
from aifabric.errors import InputError
from aifabric.model import DesignSpec, Fabric, integrity_problems
from aifabric.report import PictureStats, draw_topology

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _server(name: str, site: str | None = None, ports: int = 1) -> dict[str, Any]:
    return {
        "name": name,
        "site": site,
        "gpus": 8,
        "nics": [
            {
                "name": f"nic{i}",
                "pcie_gen": 5,
                "ports": [{"name": f"nic{i}", "speed_gbps": 400.0}],
            }
            for i in range(ports)
        ],
    }


def _switch(name: str, role: str, site: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "switch_class": "datacenter",
        "ports": 64,
        "port_speed_gbps": 400.0,
        "site": site,
    }


def _link(a: str, b: str, kind: str) -> dict[str, Any]:
    return {"a": a, "b": b, "kind": kind, "speed_gbps": 400.0, "mtu_bytes": 9216}


def tiny_fabric() -> Fabric:
    """One leaf, two servers."""
    return Fabric.model_validate(
        {
            "name": "tiny",
            "servers": [_server("srv1"), _server("srv2")],
            "switches": [_switch("leaf01", "leaf")],
            "links": [
                _link("srv1:nic0", "leaf01:Ethernet1", "host"),
                _link("srv2:nic0", "leaf01:Ethernet2", "host"),
            ],
        }
    )


def firewall_fabric() -> Fabric:
    """Two sites, each a spine, a leaf and two servers; a firewall joins the two spines."""
    servers, switches, links = [], [], []
    for site in ("east", "west"):
        spine, leaf = f"{site}-spine01", f"{site}-leaf01"
        switches += [_switch(spine, "spine", site), _switch(leaf, "leaf", site)]
        links.append(_link(f"{leaf}:Ethernet33", f"{spine}:Ethernet1", "fabric"))
        for n in (1, 2):
            name = f"{site}-srv{n}"
            servers.append(_server(name, site))
            links.append(_link(f"{name}:nic0", f"{leaf}:Ethernet{n}", "host"))
    links += [
        _link("east-spine01:Ethernet64", "fw01:inside", "inter-site"),
        _link("fw01:outside", "west-spine01:Ethernet64", "inter-site"),
    ]
    return Fabric.model_validate(
        {
            "name": "two-sites-firewall",
            "sites": [{"name": "east"}, {"name": "west"}],
            "servers": servers,
            "switches": switches,
            "middleboxes": [{"name": "fw01", "kind": "firewall", "site": "east"}],
            "links": links,
        }
    )


SPECS: dict[str, DesignSpec] = {
    "s7": DesignSpec(
        name="s7",
        gpus=1024,
        gpus_per_server=8,
        nic_speed_gbps=200,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="tor",
    ),
    "rail1k": DesignSpec(
        name="rail-1k",
        gpus=1024,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
    ),
    "two_sites": DesignSpec(
        name="two-sites",
        gpus=64,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
        sites=2,
    ),
    "rail32k": DesignSpec(
        name="rail-32k",
        gpus=32768,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
    ),
}

# labels each picture must show (as SVG text)
EXPECTED: dict[str, tuple[str, ...]] = {
    "tiny": ("tiny", "leaf01", "srv1", "srv2", "1x400G"),
    "firewall": ("firewall", "fw01", "east", "west", "east-spine01", "west-leaf01"),
    "s7": ("s7", "1,024 GPUs", "leaf01", "leaf16", "spine01", "more", "rack01", "servers"),
    "rail1k": ("leaf01", "spine01", "more", "su01", "32 servers", "x 8 GPUs"),
    "two_sites": ("site1", "site2", "site1-leaf01", "site2-spine01", "inter-site links"),
    "rail32k": ("32,768 GPUs", "leaf0001", "pod01", "more", "su001", "super-spines", "core links"),
}


@pytest.fixture(scope="module")
def fabric_of(catalog: Catalog) -> Callable[[str], Fabric]:
    @cache
    def build(case: str) -> Fabric:
        if case == "tiny":
            return tiny_fabric()
        if case == "firewall":
            return firewall_fabric()
        return design_fabric(SPECS[case], catalog).fabric

    return build


def _svg_text(path: Path) -> str:
    root = ET.parse(path).getroot()  # parses, or raises: the SVG is well-formed XML
    assert root.tag.endswith("svg")
    return "\n".join(t for el in root.iter() for t in el.itertext())


def test_hand_built_fabrics_are_consistent() -> None:
    assert integrity_problems(tiny_fabric()) == []
    assert integrity_problems(firewall_fabric()) == []


@pytest.mark.parametrize("case", list(EXPECTED))
def test_svg_shows_the_fabric(
    case: str, fabric_of: Callable[[str], Fabric], tmp_path: Path
) -> None:
    path = tmp_path / f"{case}.svg"
    stats = draw_topology(fabric_of(case), path)
    assert stats.path == path
    assert path.stat().st_size > 5_000
    text = _svg_text(path)
    missing = [label for label in EXPECTED[case] if label not in text]
    assert missing == []
    assert stats.nodes_drawn > 0
    assert stats.edges_drawn > 0


@pytest.mark.parametrize("case", list(EXPECTED))
def test_png_is_written(case: str, fabric_of: Callable[[str], Fabric], tmp_path: Path) -> None:
    path = tmp_path / f"{case}.PNG"  # the suffix is case-insensitive
    draw_topology(fabric_of(case), path, title=f"picture of {case}")
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 20_000


def test_tiny_fabric_draws_every_device(tmp_path: Path) -> None:
    stats = draw_topology(tiny_fabric(), tmp_path / "tiny.svg")
    assert (stats.nodes_drawn, stats.edges_drawn, stats.collapsed_groups) == (3, 2, 0)


def test_firewall_sits_between_the_sites(tmp_path: Path) -> None:
    stats = draw_topology(firewall_fabric(), tmp_path / "fw.svg")
    # 2 sites x (spine, leaf, 2 servers) + the firewall; its two links + 2 x (3 per site)
    assert (stats.nodes_drawn, stats.edges_drawn, stats.collapsed_groups) == (9, 8, 0)
    text = _svg_text(tmp_path / "fw.svg")
    assert "inter-site links" in text


def test_1024_gpus_are_collapsed(fabric_of: Callable[[str], Fabric], tmp_path: Path) -> None:
    stats = draw_topology(fabric_of("rail1k"), tmp_path / "rail.svg")
    assert stats.collapsed_groups > 0
    assert stats.nodes_drawn < 60


def test_a_larger_limit_draws_more(fabric_of: Callable[[str], Fabric], tmp_path: Path) -> None:
    stats = draw_topology(fabric_of("s7"), tmp_path / "s7.svg", max_per_group=16)
    # 16 leaves, 8 spines and 16 rack boxes: nothing hidden
    assert (stats.nodes_drawn, stats.collapsed_groups) == (40, 0)
    assert "leaf09" in _svg_text(tmp_path / "s7.svg")


def test_32768_gpus_stay_small_and_fast(fabric_of: Callable[[str], Fabric], tmp_path: Path) -> None:
    fabric = fabric_of("rail32k")
    assert len(fabric.links) > 90_000
    start = time.perf_counter()
    stats = draw_topology(fabric, tmp_path / "big.png")
    elapsed = time.perf_counter() - start
    assert stats.nodes_drawn < 120
    assert stats.edges_drawn < 200
    assert stats.collapsed_groups > 0
    assert elapsed < 30, f"the 32,768-GPU picture took {elapsed:.1f} s"


@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_output_is_deterministic(
    suffix: str, fabric_of: Callable[[str], Fabric], tmp_path: Path
) -> None:
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    assert draw_topology(fabric_of("two_sites"), first) == dataclasses.replace(
        draw_topology(fabric_of("two_sites"), second), path=first
    )
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("name", ["topology.jpg", "topology", "topology.svg.txt"])
def test_other_suffixes_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"use \.svg or \.png") as info:
        draw_topology(tiny_fabric(), tmp_path / name)
    assert "\n" not in str(info.value)
    assert not (tmp_path / name).exists()


def test_too_small_a_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="max_per_group 2"):
        draw_topology(tiny_fabric(), tmp_path / "t.svg", max_per_group=2)


def test_unwritable_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        draw_topology(tiny_fabric(), tmp_path / "missing-dir" / "t.svg")


def test_stats_are_frozen(tmp_path: Path) -> None:
    stats = draw_topology(tiny_fabric(), tmp_path / "t.svg")
    assert isinstance(stats, PictureStats)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.nodes_drawn = 0  # type: ignore[misc]


def legacy_fabric() -> Fabric:
    """Core, aggregation and access pairs, twelve servers, a management switch (left out of the
    picture) and a firewall hanging off the aggregation pair."""
    switches = [
        _switch(name, role)
        for name, role in (
            ("core1", "core"),
            ("core2", "core"),
            ("agg1", "aggregation"),
            ("agg2", "aggregation"),
            ("acc1", "access"),
            ("acc2", "access"),
            ("mgmt1", "management"),
        )
    ]
    links = [
        _link(f"agg{a}:Ethernet{c}", f"core{c}:Ethernet{a}", "core") for a in (1, 2) for c in (1, 2)
    ]
    links += [
        _link(f"acc{a}:Ethernet{40 + g}", f"agg{g}:Ethernet{10 + a}", "fabric")
        for a in (1, 2)
        for g in (1, 2)
    ]
    servers = []
    for i in range(12):
        servers.append(_server(f"h{i:02d}"))
        links.append(_link(f"h{i:02d}:nic0", f"acc{1 + i % 2}:Ethernet{1 + i}", "host"))
    links += [
        _link("mgmt1:Ethernet1", "acc1:Ethernet60", "management"),
        _link("agg1:Ethernet60", "fw1:in", "fabric"),
        _link("agg2:Ethernet60", "fw1:out", "fabric"),
    ]
    return Fabric.model_validate(
        {
            "name": "legacy",
            "switches": switches,
            "servers": servers,
            "links": links,
            "middleboxes": [{"name": "fw1", "kind": "firewall"}],
        }
    )


def test_three_tier_legacy_with_firewall(tmp_path: Path) -> None:
    fabric = legacy_fabric()
    assert integrity_problems(fabric) == []
    stats = draw_topology(fabric, tmp_path / "legacy.svg")
    text = _svg_text(tmp_path / "legacy.svg")
    assert all(label in text for label in ("core1", "agg2", "acc1", "fw1", "firewall", "core"))
    assert "mgmt1" not in text  # management switches are left out
    # 6 switches, 2 server boxes (12 servers > 6, grouped by their access switch), 1 firewall
    assert (stats.nodes_drawn, stats.collapsed_groups) == (9, 0)
    assert "acc1: 6 servers" in text.replace("\n", " ")


def test_many_sites_are_collapsed(catalog: Catalog, tmp_path: Path) -> None:
    spec = DesignSpec(
        gpus=512,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
        sites=8,
    )
    stats = draw_topology(design_fabric(spec, catalog).fabric, tmp_path / "sites.svg")
    text = _svg_text(tmp_path / "sites.svg")
    assert "site1" in text and "site8" in text
    assert "site5-spine01" not in text
    assert "3 more" in text
    assert stats.collapsed_groups >= 1
