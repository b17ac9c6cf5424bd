"""Verify building blocks against independent answers: leaf-pair MTU counting against brute
force over shortest paths, PFC headroom against the reference's worked numbers, port names."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from aifabric.catalog import load_catalog
from aifabric.checks.verify.mtu import leaf_pair_mtu
from aifabric.design import design_fabric
from aifabric.dialects.ports import (
    cumulus_neutral,
    eos_neutral,
    nxos_neutral,
    sonic_neutral_names,
)
from aifabric.model import SWITCH_ROLE_TIER, DesignSpec, Fabric
from aifabric.perf.hardware import pfc_headroom


def _fabric(**kw: object) -> Fabric:
    spec = DesignSpec.model_validate(
        {
            "gpus_per_server": 8,
            "nic_speed_gbps": 400,
            "switch_speed_gbps": 400,
            "layout": "tor",
            **kw,
        }
    )
    return design_fabric(spec, load_catalog()).fabric


def _brute(fabric: Fabric, bad: set[int]) -> tuple[int, int]:
    """Leaf pairs, and those with a bad link on any shortest (= up-down) switch path."""
    g = nx.MultiGraph()
    for i, ln in enumerate(fabric.links):
        if ln.kind in ("fabric", "core"):
            g.add_edge(ln.a.device, ln.b.device, key=i)
    host_bad = {
        (ln.b if ln.a.device in {s.name for s in fabric.servers} else ln.a).device
        for i, ln in enumerate(fabric.links)
        if ln.kind == "host" and i in bad
    }
    leaves = [s.name for s in fabric.switches if SWITCH_ROLE_TIER[s.role] == 1]
    pairs = hit = 0
    for a, b in itertools.combinations(leaves, 2):
        if not nx.has_path(g, a, b):
            continue
        pairs += 1
        if a in host_bad or b in host_bad:
            hit += 1
            continue
        used: set[int] = set()
        for path in nx.all_shortest_paths(g, a, b):
            for u, v in itertools.pairwise(path):
                used.update(g[u][v].keys())
        if used & bad:
            hit += 1
    return pairs, hit


@pytest.mark.parametrize(
    "kw",
    [
        {"gpus": 64, "nics_per_server": 1, "switch_ports": 4},  # 2 tiers, 4 leaves
        {"gpus": 128, "nics_per_server": 1, "switch_ports": 4, "tiers": "3"},  # 3 tiers, pods
        {"gpus": 128, "nics_per_server": 2, "switch_ports": 8, "planes": 2},  # two planes
    ],
)
def test_leaf_pair_mtu_matches_brute_force(kw: dict[str, object]) -> None:
    fabric = _fabric(**kw)
    rng = random.Random(7)
    switch_links = [i for i, ln in enumerate(fabric.links) if ln.kind != "host"]
    host_links = [i for i, ln in enumerate(fabric.links) if ln.kind == "host"]
    for trial in range(6):
        bad = set(rng.sample(switch_links, k=1 + trial % 3))
        if trial % 2:
            bad.add(rng.choice(host_links))
        got = leaf_pair_mtu(fabric, bad)
        assert (got.pairs, got.bad_pairs) == _brute(fabric, bad), bad


def test_leaf_pair_mtu_counts_all_pairs_of_a_plane() -> None:
    fabric = _fabric(gpus=64, nics_per_server=1, switch_ports=4)
    got = leaf_pair_mtu(fabric, set())
    assert got.leaves == 4 and got.pairs == 6 and got.bad_pairs == 0


def test_pfc_headroom_matches_the_references_worked_numbers() -> None:
    # perf-model-and-limits.md §6.2: 100G, 100 m fibre, 9216-byte frames: ~85 KiB
    h100 = pfc_headroom(100, 100)
    assert h100.value == pytest.approx(85 * 1024, rel=0.01)
    # 400G without interface delay: ~124 KiB; with the 100G interface figure: in 130-160 KB
    h400 = pfc_headroom(400, 100)
    without_iface = int(h400.value) - int(h400.inputs["interface_delay_bytes"])
    assert without_iface == pytest.approx(124 * 1024, rel=0.01)
    assert 130_000 <= int(h400.value) <= 160_000
    # the unavoidable part: 2 frames + PAUSE + cable round trip (5 ns/m)
    assert h100.inputs["minimum_bytes"] == 2 * 9216 + 84 + round(2 * 100 * 5 * 100 / 8)


def test_port_names() -> None:
    assert eos_neutral("Ethernet7/1") == "Ethernet7"
    assert eos_neutral("Et7/2") == "Ethernet7/2"
    assert eos_neutral("Ethernet3/5/1") is None
    assert nxos_neutral("Ethernet1/7") == "Ethernet7"
    assert nxos_neutral("Ethernet1/7/2") == "Ethernet7/2"
    assert cumulus_neutral("swp7") == "Ethernet7"
    assert cumulus_neutral("swp7s0") == "Ethernet7/1"
    # SONiC names a port by its first lane: 8-lane 400G ports at 0, 8, 16 ...
    names = sonic_neutral_names(
        [("Ethernet0", 8), ("Ethernet8", 8), ("Ethernet16", 4), ("Ethernet20", 4)]
    )
    assert names == {
        "Ethernet0": "Ethernet1",
        "Ethernet8": "Ethernet2",
        "Ethernet16": "Ethernet3/1",
        "Ethernet20": "Ethernet3/2",
    }
    # without lane counts: one front-panel port each, in lane order
    assert sonic_neutral_names([("Ethernet4", None), ("Ethernet0", None)]) == {
        "Ethernet0": "Ethernet1",
        "Ethernet4": "Ethernet2",
    }
