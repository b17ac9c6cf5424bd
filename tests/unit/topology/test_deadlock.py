"""PFC deadlock (cyclic buffer dependency) analysis on hand-built CLOS fabrics.

Every expected cycle below was worked out by hand from the routing model of
:mod:`aifabric.topology.deadlock`; the fabrics are written port by port here so the answers do
not depend on the designer's port map.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.model import Fabric, HostPort, Link, Nic, QosPolicy, Server, Switch
from aifabric.topology.deadlock import _healthy_cycle, _Net, analyze_deadlocks


def _server(name: str) -> Server:
    nic = Nic(name="nic0", pcie_gen=5, ports=(HostPort(name="p0", speed_gbps=400.0),))
    return Server(name=name, gpus=8, nics=(nic,))


def _switch(name: str, role: str) -> Switch:
    return Switch(name=name, role=role, switch_class="datacenter", ports=64, port_speed_gbps=400.0)  # type: ignore[arg-type]


def _link(a: str, b: str, kind: str) -> Link:
    return Link(a=a, b=b, kind=kind, speed_gbps=400.0, mtu_bytes=9216)  # type: ignore[arg-type]


def clos2(spines: int, leaves: int, parallel: int = 1, **kw: object) -> Fabric:
    """leafK: Ethernet1 to a server, Ethernet{1 + (j-1)*parallel + m} to spine j;
    spineJ: Ethernet{(k-1)*parallel + m} to leaf k. Host links come first, then leaf-spine
    links leaf by leaf, spine by spine."""
    links = [
        _link(f"srv{k:02d}:p0", f"leaf{k:02d}:Ethernet1", "host") for k in range(1, leaves + 1)
    ]
    for k in range(1, leaves + 1):
        for j in range(1, spines + 1):
            for m in range(1, parallel + 1):
                links.append(
                    _link(
                        f"leaf{k:02d}:Ethernet{1 + (j - 1) * parallel + m}",
                        f"spine{j:02d}:Ethernet{(k - 1) * parallel + m}",
                        "fabric",
                    )
                )
    return Fabric(
        name="clos2",
        servers=tuple(_server(f"srv{k:02d}") for k in range(1, leaves + 1)),
        switches=(
            *(_switch(f"leaf{k:02d}", "leaf") for k in range(1, leaves + 1)),
            *(_switch(f"spine{j:02d}", "spine") for j in range(1, spines + 1)),
        ),
        links=tuple(links),
        **kw,  # type: ignore[arg-type]
    )


def clos3(pods: int, leaves: int, spines: int, group: int) -> Fabric:
    """pP-leafK (Ethernet1 host, Ethernet{1+j} to pP-spineJ); pP-spineJ (Ethernet{k} to leaf
    k, Ethernet{leaves+g} to ssJ-G); ssJ-G (Ethernet{p} to spine J of pod p)."""
    servers, switches, links = [], [], []
    for p in range(1, pods + 1):
        for k in range(1, leaves + 1):
            servers.append(_server(f"s{p}-{k}"))
            switches.append(_switch(f"p{p}-leaf{k}", "leaf"))
            links.append(_link(f"s{p}-{k}:p0", f"p{p}-leaf{k}:Ethernet1", "host"))
        switches += [_switch(f"p{p}-spine{j}", "spine") for j in range(1, spines + 1)]
    switches += [
        _switch(f"ss{j}-{g}", "super_spine")
        for j in range(1, spines + 1)
        for g in range(1, group + 1)
    ]
    for p in range(1, pods + 1):
        for k in range(1, leaves + 1):
            for j in range(1, spines + 1):
                links.append(
                    _link(f"p{p}-leaf{k}:Ethernet{1 + j}", f"p{p}-spine{j}:Ethernet{k}", "fabric")
                )
    for p in range(1, pods + 1):
        for j in range(1, spines + 1):
            for g in range(1, group + 1):
                links.append(
                    _link(f"p{p}-spine{j}:Ethernet{leaves + g}", f"ss{j}-{g}:Ethernet{p}", "core")
                )
    return Fabric(
        name="clos3", servers=tuple(servers), switches=tuple(switches), links=tuple(links)
    )


def _cycle_of(report: object, model: str, failed: str) -> tuple[str, ...]:
    for res in report.failures[model]:  # type: ignore[attr-defined]
        if res.failed_link == failed:
            return res.cycle.links  # type: ignore[no-any-return]
    raise AssertionError(f"no cycle reported for {failed}")


# --- two tiers: 2 spines x 3 leaves ---------------------------------------------------------


def test_two_tier_up_down_has_no_cycle() -> None:
    report = analyze_deadlocks(clos2(2, 3), method="explicit")
    assert report.applicable
    assert report.switch_links == 6 and report.destinations == 3
    assert report.healthy_cycles == []


def test_two_tier_failure_bounce_cycle() -> None:
    """leaf01-spine01 fails. spine01 still gets leaf01's traffic from leaf02 and leaf03 (their
    stale ECMP sets are {spine01, spine02}); it has no down link to leaf01 left and bounces to
    leaf02 and leaf03 (both still reach leaf01 via spine02); leaf02 forwards by its ECMP set,
    spine01 included: q(leaf02->spine01) -> q(spine01->leaf02) -> q(leaf02->spine01). The
    same holds for leaf03; the report starts at the smaller queue (leaf02's link comes first).
    Every one of the 6 links gives the same picture by symmetry."""
    report = analyze_deadlocks(clos2(2, 3), method="explicit", samples=10)
    failed = "leaf01:Ethernet2 -> spine01:Ethernet1"
    assert _cycle_of(report, "stale-bounce", failed) == (
        "leaf02:Ethernet2 -> spine01:Ethernet2",
        "spine01:Ethernet2 -> leaf02:Ethernet2",
    )
    assert report.failure_counts["stale-bounce"] == 6
    res = next(r for r in report.failures["stale-bounce"] if r.failed_link == failed)
    assert res.cycle.destinations == ("leaf01",)
    # converged: spine01 -> leaf02 -> spine02 -> leaf01 is a path nobody sends on (leaf02 and
    # leaf03 use spine02 directly): no cycle
    assert report.failure_counts["converged"] == 0


def test_single_spine_has_nowhere_to_bounce() -> None:
    """One spine: after leaf01-spine01 fails no neighbour of spine01 reaches leaf01 other than
    through spine01 itself, so spine01 drops (loss, no deadlock)."""
    report = analyze_deadlocks(clos2(1, 3), method="explicit")
    assert report.failure_counts == {"stale-bounce": 0, "converged": 0}


def test_parallel_links_never_bounce() -> None:
    """Two links per leaf-spine pair: losing one leaves its twin at the same cost."""
    report = analyze_deadlocks(clos2(2, 3, parallel=2), method="explicit")
    assert report.switch_links == 12
    assert report.failure_counts == {"stale-bounce": 0, "converged": 0}
    assert analyze_deadlocks(clos2(2, 3, parallel=2), method="classes").failure_counts == {
        "stale-bounce": 0,
        "converged": 0,
    }


# --- three tiers: 2 pods x (2 leaves, 2 spines), 2 super-spines per spine group -------------


def test_three_tier_cycles() -> None:
    """Leaf-spine failure p1-leaf1 - p1-spine1: p1-spine1 bounces to p1-leaf2 (which climbs to
    p1-spine1 and p1-spine2) but not to ss1-1/ss1-2 (their only route is back down through
    p1-spine1). Core failure p1-spine1 - ss1-1: ss1-1 bounces to p2-spine1, whose stale ECMP
    set towards pod 1 is {ss1-1, ss1-2}. All 8 leaf-spine and all 8 core failures bounce."""
    report = analyze_deadlocks(clos3(2, 2, 2, 2), method="explicit", samples=16)
    assert report.healthy_cycles == []
    assert _cycle_of(report, "stale-bounce", "p1-leaf1:Ethernet2 -> p1-spine1:Ethernet1") == (
        "p1-leaf2:Ethernet2 -> p1-spine1:Ethernet2",
        "p1-spine1:Ethernet2 -> p1-leaf2:Ethernet2",
    )
    assert _cycle_of(report, "stale-bounce", "p1-spine1:Ethernet3 -> ss1-1:Ethernet1") == (
        "p2-spine1:Ethernet3 -> ss1-1:Ethernet2",
        "ss1-1:Ethernet2 -> p2-spine1:Ethernet3",
    )
    assert report.failure_counts["stale-bounce"] == 16
    assert report.failure_counts["converged"] == 0


def test_single_uplink_spine_bounces_down() -> None:
    """One super-spine per group: each spine has a single uplink. ss1-1 losing p1-spine1 has
    no neighbour with another route to pod 1 (p2-spine1's only route is back through ss1-1), so
    that end drops; but p1-spine1 loses its only route to pod 2 and bounces down to p1-leaf1
    and p1-leaf2, whose stale ECMP sets climb back to p1-spine1. 8 leaf-spine + 4 core."""
    report = analyze_deadlocks(clos3(2, 2, 2, 1), method="explicit", samples=16)
    assert _cycle_of(report, "stale-bounce", "p1-spine1:Ethernet3 -> ss1-1:Ethernet1") == (
        "p1-leaf1:Ethernet2 -> p1-spine1:Ethernet1",
        "p1-spine1:Ethernet1 -> p1-leaf1:Ethernet2",
    )
    assert report.failure_counts == {"stale-bounce": 12, "converged": 0}
    assert analyze_deadlocks(clos3(2, 2, 2, 1), method="classes").failure_counts == {
        "stale-bounce": 12,
        "converged": 0,
    }


def test_classes_agree_with_explicit_three_tier() -> None:
    fabric = clos3(2, 2, 2, 2)
    explicit = analyze_deadlocks(fabric, method="explicit")
    classes = analyze_deadlocks(fabric, method="classes")
    assert classes.method == "classes"
    assert classes.failure_counts == explicit.failure_counts


# --- applicability, ASN plan, the graph helper ----------------------------------------------


def test_ib_and_no_pfc_are_not_analysed() -> None:
    assert not analyze_deadlocks(clos2(2, 3, transport="ib")).applicable
    assert not analyze_deadlocks(clos2(2, 3, transport="socket")).applicable
    assert not analyze_deadlocks(clos2(2, 3, qos=QosPolicy(pfc_priorities=()))).applicable


def test_management_links_do_not_count() -> None:
    fabric = clos2(2, 3)
    mgmt = tuple(
        ln.model_copy(update={"kind": "management"}) if ln.kind == "fabric" else ln
        for ln in fabric.links
    )
    report = analyze_deadlocks(fabric.model_copy(update={"links": mgmt}))
    assert report.switch_links == 0 and not report.has_cycle


def test_shared_spine_asn_rejects_the_bounce() -> None:
    """RFC 7938: spines share one ASN, leaves have their own. leaf02's routes to leaf01 all
    cross a spine with spine01's ASN, so spine01 never learns them (AS-path loop check)."""
    fabric = clos2(2, 3)
    asns = {"spine01": 65000, "spine02": 65000, "leaf01": 65001, "leaf02": 65002, "leaf03": 65003}
    with_asn = fabric.model_copy(
        update={
            "switches": tuple(s.model_copy(update={"asn": asns[s.name]}) for s in fabric.switches)
        }
    )
    report = analyze_deadlocks(with_asn, method="explicit")
    assert all(r.asn_rejects for r in report.failures["stale-bounce"])
    unique = {"spine01": 65100, "spine02": 65200} | {k: v for k, v in asns.items() if "leaf" in k}
    with_unique = fabric.model_copy(
        update={
            "switches": tuple(s.model_copy(update={"asn": unique[s.name]}) for s in fabric.switches)
        }
    )
    report = analyze_deadlocks(with_unique, method="explicit")
    assert not any(r.asn_rejects for r in report.failures["stale-bounce"])
    assert analyze_deadlocks(fabric).failures["stale-bounce"][0].asn_rejects is None


def test_healthy_cycle_helper_finds_the_shortest_cycle() -> None:
    """A made-up dependency graph: 10 -> 12 -> 14 -> 10 and 14 -> 16 -> 14 (two cycles);
    the shortest, 14 <-> 16, is reported, starting at its smaller queue."""
    net = _Net(clos2(2, 3))
    edges = [(10, 12), (12, 14), (14, 10), (14, 16), (16, 14), (6, 10)]
    assert _healthy_cycle(net, edges) == [14, 16]
    assert _healthy_cycle(net, [(6, 10), (10, 12)]) is None


# --- properties -------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(spines=st.integers(1, 4), leaves=st.integers(2, 5), parallel=st.integers(1, 2))
def test_two_tier_up_down_always_acyclic(spines: int, leaves: int, parallel: int) -> None:
    fabric = clos2(spines, leaves, parallel)
    report = analyze_deadlocks(fabric, method="explicit")
    assert report.healthy_cycles == []
    # a single failure never leaves a cycle once routing converged (2 tiers)
    assert report.failure_counts["converged"] == 0
    # bounce cycles exactly when a spine has another spine to route around it and no twin link
    bounces = spines >= 2 and parallel == 1
    assert report.failure_counts["stale-bounce"] == (spines * leaves if bounces else 0)
    assert analyze_deadlocks(fabric, method="classes").failure_counts == report.failure_counts


@settings(max_examples=12, deadline=None)
@given(
    pods=st.integers(2, 3),
    leaves=st.integers(1, 3),
    spines=st.integers(1, 3),
    group=st.integers(1, 2),
)
def test_three_tier_up_down_always_acyclic(pods: int, leaves: int, spines: int, group: int) -> None:
    report = analyze_deadlocks(clos3(pods, leaves, spines, group), method="explicit")
    assert report.healthy_cycles == []


@pytest.mark.slow
def test_cluster_32k_in_seconds() -> None:
    """examples/cluster-32k.yaml: 32 pods x (32 leaves, 32 spines), 512 super-spines, each
    spine-super-spine pair joined by two links. Every one of the 1,024 x 32 = 32,768
    leaf-spine links bounces (a spine's only link to that leaf); no core link does (twin)."""
    root = Path(__file__).resolve().parents[3]
    fabric = load_fabric(root / "examples" / "cluster-32k.yaml", load_catalog())
    report = analyze_deadlocks(fabric)
    assert report.method == "classes" and report.regular
    assert report.switch_links == 65_536 and report.destinations == 1_024
    assert report.healthy_cycles == []
    assert report.failure_counts == {"stale-bounce": 32_768, "converged": 0}
    assert report.seconds < 60.0  # against blow-up only; the speed figure is in benchmarks/
