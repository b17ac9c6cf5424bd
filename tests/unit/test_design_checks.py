"""Each design check: a fabric that fails it and one that passes (real catalog, no mocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.catalog import Catalog, ModuleSpec
from aifabric.checks import CheckContext, all_checks, metadata, run_checks
from aifabric.findings import Finding
from aifabric.model import (
    Breakout,
    Endpoint,
    Fabric,
    Link,
    Middlebox,
    Site,
    Switch,
    Workload,
    read_document,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fabrics" / "two-servers.yaml"


@pytest.fixture
def base() -> Fabric:
    fabric = read_document(FIXTURE)
    assert isinstance(fabric, Fabric)
    return fabric


def findings(fabric: Fabric, catalog: Catalog, check: str) -> list[Finding]:
    return [
        f for f in run_checks(CheckContext(fabric, catalog), category="design") if f.check == check
    ]


def test_every_check_has_metadata_and_every_metadata_a_check() -> None:
    assert set(all_checks()) == set(metadata())
    for meta in metadata().values():
        assert meta.refs and all(r.startswith("S") for r in meta.refs)


def test_base_fixture_is_clean(base: Fabric, catalog: Catalog) -> None:
    assert run_checks(CheckContext(base, catalog), category="design") == []


def _with_nic(base: Fabric, **update: object) -> Fabric:
    servers = []
    for server in base.servers:
        nics = tuple(n.model_copy(update=update) for n in server.nics)
        servers.append(server.model_copy(update={"nics": nics}))
    return base.model_copy(update={"servers": tuple(servers)})


def test_pcie_slot_too_slow(base: Fabric, catalog: Catalog) -> None:
    slow = _with_nic(base, pcie_gen=4)
    found = findings(slow, catalog, "design.nic-pcie-bandwidth")
    assert len(found) == 1 and found[0].expected == "PCIe 5.0 x16"
    assert "2 NICs" in found[0].target
    narrow = _with_nic(base, pcie_lanes=8)  # Gen5 x8 = 28.6 GB/s effective < 50 GB/s
    assert findings(narrow, catalog, "design.nic-pcie-bandwidth")


def test_nic_card_limits_the_slot(base: Fabric, catalog: Catalog) -> None:
    gen4_cards = [n for n in catalog.nics.values() if n.pcie_gen == 4 and n.pcie_lanes == 16]
    assert gen4_cards, "catalog has a PCIe Gen4 NIC (ConnectX-6)"
    limited = _with_nic(base, model=gen4_cards[0].name)  # Gen4 card in a Gen5 slot at 400G
    found = findings(limited, catalog, "design.nic-pcie-bandwidth")
    assert found and f"{gen4_cards[0].name} runs at most PCIe 4.0" in found[0].message


def _with_switch(base: Fabric, **update: object) -> Fabric:
    return base.model_copy(
        update={"switches": tuple(s.model_copy(update=update) for s in base.switches)}
    )


@pytest.mark.parametrize("klass", ["home", "l3"])
def test_non_datacenter_switch(base: Fabric, catalog: Catalog, klass: str) -> None:
    found = findings(_with_switch(base, switch_class=klass), catalog, "design.switch-class")
    assert len(found) == 1 and found[0].severity == "error" and "S10" in found[0].refs


def test_catalog_switch_without_pfc(base: Fabric, catalog: Catalog) -> None:
    no_pfc = [s for s in catalog.switches.values() if s.switch_class == "datacenter" and not s.pfc]
    home = [s for s in catalog.switches.values() if s.switch_class == "home"]
    assert home
    if no_pfc:
        bad = _with_switch(base, model=no_pfc[0].name)
        assert findings(bad, catalog, "design.switch-class")
    good = [
        s for s in catalog.switches.values() if s.switch_class == "datacenter" and s.pfc and s.ecn
    ]
    assert not findings(_with_switch(base, model=good[0].name), catalog, "design.switch-class")


def _module(catalog: Catalog, speed: float, standard_part: str) -> ModuleSpec:
    for m in sorted(catalog.modules.values(), key=lambda m: m.name):
        if m.speed_gbps == speed and standard_part in m.standard:
            return m
    raise AssertionError(f"catalog lacks a {speed}G {standard_part} module")


def _with_link(base: Fabric, i: int, **update: object) -> Fabric:
    links = list(base.links)
    links[i] = links[i].model_copy(update=update)
    return base.model_copy(update={"links": tuple(links)})


def test_optics_mismatch(base: Fabric, catalog: Catalog) -> None:
    sr4 = _module(catalog, 400, "SR")
    dr4 = _module(catalog, 400, "DR4")
    bad = _with_link(base, 0, a_module=sr4.name, b_module=dr4.name, length_m=30.0)
    found = findings(bad, catalog, "design.optics-mismatch")
    assert len(found) == 1 and found[0].severity == "error" and "S16" in found[0].refs
    good = _with_link(base, 0, a_module=dr4.name, b_module=dr4.name, length_m=30.0)
    assert not findings(good, catalog, "design.optics-mismatch")


def test_optics_reach(base: Fabric, catalog: Catalog) -> None:
    sr = _module(catalog, 400, "SR")
    too_far = _with_link(base, 0, a_module=sr.name, b_module=sr.name, length_m=sr.reach_m + 100)
    found = findings(too_far, catalog, "design.optics-reach")
    assert found and found[0].actual == f"{sr.reach_m + 100:g} m"
    unknown = _with_link(base, 0, cable="MyCustomCable")
    info = findings(unknown, catalog, "design.optics-reach")
    assert info and info[0].severity == "info"


def test_radix_exceeded(base: Fabric, catalog: Catalog) -> None:
    small = _with_switch(base, ports=1)
    found = findings(small, catalog, "design.radix")
    assert found and "2 physical ports in use" in found[0].message
    bad_sub = _with_link(base, 1, b=Endpoint("leaf1", "Ethernet2/1"))
    assert "no breakout" in findings(bad_sub, catalog, "design.radix")[0].message
    declared = _with_switch(bad_sub, breakouts=(Breakout(ports="2", count=2, speed_gbps=200),))
    slow_leg = findings(declared, catalog, "design.radix")
    assert slow_leg and "200G breakout leg" in slow_leg[0].message


def test_link_speed_vs_nic(base: Fabric, catalog: Catalog) -> None:
    bad = _with_link(base, 0, speed_gbps=200.0)
    found = findings(bad, catalog, "design.link-speed")
    assert found and found[0].expected == "400G" and found[0].actual == "200G"


def test_tp_spanning_servers(base: Fabric, catalog: Catalog) -> None:
    ok = base.model_copy(update={"workload": Workload(parameters=7_000_000_000, tp=8, dp=2)})
    assert not findings(ok, catalog, "design.tp-spans-servers")
    span = base.model_copy(update={"workload": Workload(parameters=7_000_000_000, tp=16, dp=1)})
    assert findings(span, catalog, "design.tp-spans-servers")[0].actual == "1 groups cross servers"
    # tp=8 but tp outermost: each group strides over both servers
    outer = base.model_copy(
        update={
            "workload": Workload(
                parameters=7_000_000_000, tp=8, dp=2, rank_order=("dp", "pp", "tp")
            )
        }
    )
    assert findings(outer, catalog, "design.tp-spans-servers")
    toobig = base.model_copy(update={"workload": Workload(parameters=1, tp=8, dp=4)})
    assert findings(toobig, catalog, "design.tp-spans-servers")[0].severity == "error"


def test_firewall_between_sites(base: Fabric, catalog: Catalog) -> None:
    leaf2 = base.switches[0].model_copy(update={"name": "leaf2", "site": "b"})
    fw = Middlebox(name="fw1", kind="firewall", session_rate_limit_gbps=1.0)
    links = (
        *base.links,
        Link(
            a=Endpoint("leaf1", "Ethernet31"),
            b=Endpoint("fw1", "eth0"),
            kind="inter-site",
            speed_gbps=100,
            mtu_bytes=1500,
        ),
        Link(
            a=Endpoint("fw1", "eth1"),
            b=Endpoint("leaf2", "Ethernet31"),
            kind="inter-site",
            speed_gbps=100,
            mtu_bytes=1500,
        ),
    )
    bad = base.model_copy(
        update={
            "sites": (*base.sites, Site(name="b")),
            "switches": (*base.switches, leaf2),
            "middleboxes": (fw,),
            "links": links,
        }
    )
    found = findings(bad, catalog, "design.middlebox-on-path")
    assert len(found) == 1 and found[0].severity == "error"
    assert "between b and lab" in found[0].message and "S17" in found[0].refs


def test_socket_transport(base: Fabric, catalog: Catalog) -> None:
    assert findings(base.model_copy(update={"transport": "socket"}), catalog, "design.transport")


def test_legacy_three_tier_and_single_uplink(base: Fabric, catalog: Catalog) -> None:
    agg = Switch(
        name="agg1", role="aggregation", switch_class="datacenter", ports=32, port_speed_gbps=400
    )
    uplink = Link(
        a=Endpoint("leaf1", "Ethernet32"),
        b=Endpoint("agg1", "Ethernet1"),
        kind="fabric",
        speed_gbps=400,
        mtu_bytes=9216,
    )
    legacy = base.model_copy(
        update={
            "switches": (base.switches[0].model_copy(update={"role": "access"}), agg),
            "links": (*base.links, uplink),
        }
    )
    assert findings(legacy, catalog, "design.legacy-three-tier")
    single = findings(legacy, catalog, "design.uplink-redundancy")
    assert single and "leaf1: all uplinks to agg1" in [e.text for e in single[0].evidence]


def test_oversubscription_and_workload_scope(base: Fabric, catalog: Catalog) -> None:
    spines = tuple(
        Switch(
            name=f"spine{i}", role="spine", switch_class="datacenter", ports=32, port_speed_gbps=400
        )
        for i in (1, 2)
    )
    leaf2 = base.switches[0].model_copy(update={"name": "leaf2"})
    # move gpu2 to leaf2; each leaf has one 400G host link and one 100G uplink per spine: 2:1
    links = [base.links[0], base.links[1].model_copy(update={"b": Endpoint("leaf2", "Ethernet1")})]
    for leaf in ("leaf1", "leaf2"):
        for i, spine in enumerate(("spine1", "spine2")):
            links.append(
                Link(
                    a=Endpoint(leaf, f"Ethernet{31 + i}"),
                    b=Endpoint(spine, f"Ethernet{1 if leaf == 'leaf1' else 2}"),
                    kind="fabric",
                    speed_gbps=100,
                    mtu_bytes=9216,
                )
            )
    fabric = base.model_copy(
        update={"switches": (base.switches[0], leaf2, *spines), "links": tuple(links)}
    )
    found = findings(fabric, catalog, "design.oversubscription")
    assert len(found) == 1 and found[0].actual == "2:1"
    one_server = fabric.model_copy(update={"workload": Workload(parameters=1, tp=8)})
    assert not findings(one_server, catalog, "design.oversubscription")
    two = fabric.model_copy(update={"workload": Workload(parameters=1, tp=8, dp=2)})
    assert findings(two, catalog, "design.oversubscription")
