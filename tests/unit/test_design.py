"""Design end to end on the real catalog: the seed's numbers and properties of every design."""

from __future__ import annotations

import ipaddress
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aifabric.catalog import Catalog, load_catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import design_fabric
from aifabric.errors import CatalogError, DesignError
from aifabric.model import (
    DesignSpec,
    Endpoint,
    dump_fabric,
    integrity_problems,
    parse_document,
    parse_switch_port,
)
from aifabric.model.device import SWITCH_ROLE_TIER


def test_s7_reproduced(catalog: Catalog) -> None:
    spec = DesignSpec(
        gpus=1024,
        gpus_per_server=8,
        nic_speed_gbps=200,
        switch_ports=64,
        switch_speed_gbps=400,
        oversubscription=1.0,
        layout="tor",
    )
    result = design_fabric(spec, catalog)
    cap = result.capacity
    assert (cap.servers, cap.leaves, cap.spines, cap.super_spines, cap.tiers) == (128, 16, 8, 0, 2)
    assert cap.oversubscription == {"leaf": 1.0}
    leaf = next(s for s in result.fabric.switches if s.role == "leaf")
    host_links = [ln for ln in result.fabric.links if ln.b.device == leaf.name]
    up_links = [ln for ln in result.fabric.links if ln.a.device == leaf.name]
    # 8 servers x 8 x 200G = 12.8 Tb/s down, 32 x 400G = 12.8 Tb/s up
    assert sum(ln.speed_gbps for ln in host_links) == 12_800
    assert sum(ln.speed_gbps for ln in up_links) == 12_800
    assert len({ln.a.device for ln in host_links}) == 8
    # 32 physical ports down, each broken out into 2 x 200G
    phys = {parse_switch_port(ln.b.port)[0] for ln in host_links}  # type: ignore[index]
    assert phys == set(range(1, 33))
    assert leaf.breakouts[0].count == 2 and leaf.breakouts[0].speed_gbps == 200


def test_32k_gpus_need_three_tiers(catalog: Catalog) -> None:
    spec = DesignSpec(
        gpus=32768,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
    )
    cap = design_fabric(spec, catalog).capacity
    assert cap.tiers == 3
    # k=64 fat tree per plane: 1024 leaves, 1024 pod spines, 512 super-spines
    assert (cap.leaves, cap.spines, cap.super_spines) == (1024, 1024, 512)
    assert cap.oversubscription == {"leaf": 1.0, "spine": 1.0}
    assert cap.bisection_gbps == 32768 * 400 / 2


def test_pcie4_with_400g_nic_warns_with_effective_numbers(catalog: Catalog) -> None:
    spec = DesignSpec(
        gpus=64,
        gpus_per_server=8,
        nic_speed_gbps=400,
        pcie_gen=4,
        switch_ports=64,
        switch_speed_gbps=400,
    )
    result = design_fabric(spec, catalog)
    findings = run_checks(CheckContext(result.fabric, catalog), category="design")
    pcie = [f for f in findings if f.check == "design.nic-pcie-bandwidth"]
    assert len(pcie) == 1
    f = pcie[0]
    assert f.severity == "warning" and "S9" in f.refs
    assert f.expected == "PCIe 5.0 x16"
    # raw 31.5 GB/s, effective 28.6 GB/s at MPS 256 (reference perf-model-and-limits §5.2)
    assert "31.5" in f.explanation and "28.6" in f.explanation
    ok = design_fabric(spec.model_copy(update={"pcie_gen": 5}), catalog)
    assert not [
        g
        for g in run_checks(CheckContext(ok.fabric, catalog), category="design")
        if g.check == "design.nic-pcie-bandwidth"
    ]


def test_multi_site_design_has_inter_site_links_and_ratio(catalog: Catalog) -> None:
    spec = DesignSpec(
        gpus=64,
        gpus_per_server=8,
        nic_speed_gbps=400,
        switch_ports=64,
        switch_speed_gbps=400,
        layout="rail",
        sites=2,
    )
    result = design_fabric(spec, catalog)
    inter = [ln for ln in result.fabric.links if ln.kind == "inter-site"]
    assert inter and all(ln.length_m == 10_000 for ln in inter)
    sites = {result.fabric.switches[0].site}
    assert len({s.site for s in result.fabric.switches}) == 2 and sites
    # 4 servers x 8 x 400G per site = 12.8 Tb/s; 2 spines x 1 x 400G leave each site
    assert result.capacity.oversubscription["inter-site"] == pytest.approx(16.0)


def test_ip_plan_choice_is_recorded(catalog: Catalog) -> None:
    small = design_fabric(
        DesignSpec(
            gpus=64, gpus_per_server=8, nic_speed_gbps=400, switch_ports=64, switch_speed_gbps=400
        ),
        catalog,
    )
    assert small.fabric.addressing is not None
    assert small.fabric.addressing.scheme == "l2-single-subnet"
    assert "S19" in small.fabric.addressing.rationale
    subnet = small.fabric.addressing.host_subnets[0]
    hosts = [ipaddress.ip_interface(ln.a_ipv4) for ln in small.fabric.links if ln.kind == "host"]
    assert all(h.network == subnet for h in hosts)
    big = design_fabric(
        DesignSpec(
            gpus=1024, gpus_per_server=8, nic_speed_gbps=400, switch_ports=64, switch_speed_gbps=400
        ),
        catalog,
    )
    assert big.fabric.addressing is not None and big.fabric.addressing.scheme == "l3-ebgp"
    leaf_asns = [s.asn for s in big.fabric.switches if s.role == "leaf"]
    spine_asns = {s.asn for s in big.fabric.switches if s.role == "spine"}
    assert len(set(leaf_asns)) == len(leaf_asns)  # RFC 7938: a unique ASN per leaf
    assert len(spine_asns) == 1  # spines share one
    assert all(4_200_000_000 <= a <= 4_294_967_294 for a in leaf_asns if a)  # RFC 6996


def test_unknown_switch_model_lists_known(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="known:"):
        design_fabric(
            DesignSpec(gpus=8, gpus_per_server=8, nic_speed_gbps=400, switch_model="NoSuchSwitch"),
            catalog,
        )


def test_nic_faster_than_switch_is_refused(catalog: Catalog) -> None:
    with pytest.raises(DesignError, match="faster"):
        design_fabric(
            DesignSpec(
                gpus=8,
                gpus_per_server=8,
                nic_speed_gbps=800,
                switch_ports=64,
                switch_speed_gbps=400,
            ),
            catalog,
        )


# -- properties over random valid inputs ------------------------------------------------------

SPEEDS = [
    (400.0, 400.0),
    (400.0, 200.0),
    (400.0, 100.0),
    (800.0, 400.0),
    (800.0, 800.0),
    (200.0, 200.0),
    (100.0, 100.0),
]


@st.composite
def specs(draw: st.DrawFn) -> DesignSpec:
    gps = draw(st.sampled_from([1, 2, 4, 8]))
    nics = draw(st.sampled_from([n for n in (1, 2, 4, 8) if n <= max(gps, 1)] or [1]))
    planes = draw(st.sampled_from([p for p in (1, 2) if nics % p == 0]))
    servers = draw(st.integers(1, 160))
    port, nic = draw(st.sampled_from(SPEEDS))
    return DesignSpec(
        gpus=servers * gps,
        gpus_per_server=gps,
        nics_per_server=nics,
        nic_speed_gbps=nic,
        switch_ports=draw(st.sampled_from([16, 32, 48, 64])),
        switch_speed_gbps=port,
        oversubscription=draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])),
        layout=draw(st.sampled_from(["rail", "tor"])),
        planes=planes,
        ip_plan=draw(st.sampled_from(["auto", "l2", "l3"])),
        spares_percent=0.0,
        sites=1,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs())
def test_design_properties(spec: DesignSpec) -> None:
    catalog = load_catalog()
    try:
        result = design_fabric(spec, catalog)
    except DesignError:
        assume(False)
        return
    fabric = result.fabric
    assert integrity_problems(fabric) == []

    # every NIC port is cabled exactly once
    host_ends: Counter[Endpoint] = Counter()
    for ln in fabric.links:
        for end in (ln.a, ln.b):
            host_ends[end] += 1
    ports = {Endpoint(s.name, p.name) for s in fabric.servers for p in s.ports}
    assert all(host_ends[p] == 1 for p in ports)
    assert all(c == 1 for c in host_ends.values())  # no port used twice at all

    # no switch exceeds its radix; no design finding about radix or speed
    by_switch: dict[str, set[int]] = {}
    for ln in fabric.links:
        for end in (ln.a, ln.b):
            parsed = parse_switch_port(end.port)
            if parsed is not None and end not in ports:
                by_switch.setdefault(end.device, set()).add(parsed[0])
    for sw in fabric.switches:
        used = by_switch.get(sw.name, set())
        assert len(used) <= sw.ports and all(1 <= n <= sw.ports for n in used)
    findings = run_checks(CheckContext(fabric, catalog), category="design")
    assert not [
        f
        for f in findings
        if f.check
        in {"design.radix", "design.link-speed", "design.optics-mismatch", "design.optics-reach"}
    ]

    # oversubscription = downlink / uplink bandwidth, per switch, recomputed from links
    tier = {s.name: SWITCH_ROLE_TIER[s.role] for s in fabric.switches}
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for ln in fabric.links:
        ta, tb = tier.get(ln.a.device, 0), tier.get(ln.b.device, 0)
        lo, hi = (ln.a.device, ln.b.device) if ta < tb else (ln.b.device, ln.a.device)
        if hi in tier:
            down[hi] += ln.speed_gbps
        if lo in tier:
            up[lo] += ln.speed_gbps
    worst: dict[str, float] = {}
    for sw in fabric.switches:
        if up[sw.name] and down[sw.name]:
            ratio = down[sw.name] / up[sw.name]
            assert result.capacity.switch_loads[sw.name].oversubscription == pytest.approx(ratio)
            worst[sw.role] = max(worst.get(sw.role, 0), ratio)
            if sw.role == "leaf":
                assert ratio <= spec.oversubscription + 1e-9
    assert {k: pytest.approx(v) for k, v in worst.items()} == result.capacity.oversubscription

    # BOM counts equal link counts by type (no spares asked): one cable per link, except a
    # breakout cable, which is one per broken-out physical port on its wide end
    bom_by_cable: Counter[str] = Counter()
    for item in result.bom:
        if item.category in {"cable", "fiber", "breakout-cable"}:
            bom_by_cable[item.item.rsplit(" ", 2)[0]] += item.count
    expected: Counter[str] = Counter()
    wide_ports: set[tuple[str, str, str]] = set()
    for ln in fabric.links:
        assert ln.cable is not None
        if catalog.cables[ln.cable].breakout > 1:
            wide_ports.add((ln.b.device, ln.b.port.split("/")[0], ln.cable))
        else:
            # a twin-port module ("dual MPO-12") at full speed takes two fibre cords
            mod = catalog.modules.get(ln.a_module) if ln.a_module else None
            twin = mod is not None and mod.connector.startswith("dual")
            expected[ln.cable] += 2 if twin and mod.speed_gbps == ln.speed_gbps else 1
    for _, _, cable in wide_ports:
        expected[cable] += 1
    assert bom_by_cable == expected
    cages = set()
    for ln in fabric.links:
        for end, module in ((ln.a, ln.a_module), (ln.b, ln.b_module)):
            if module:
                cages.add((end.device, end.port.split("/")[0], module))
    assert sum(i.count for i in result.bom if i.category == "transceiver") == len(cages)
    assert sum(i.count for i in result.bom if i.category == "switch") == len(fabric.switches)

    # addresses are unique
    addrs = [a for ln in fabric.links for a in (ln.a_ipv4, ln.b_ipv4) if a]
    addrs += [s.loopback_ipv4 for s in fabric.switches if s.loopback_ipv4]
    hosts = [ipaddress.ip_interface(a).ip for a in addrs]
    assert len(hosts) == len(set(hosts))
    for ln in fabric.links:
        if ln.a_ipv4 and ln.b_ipv4:
            assert (
                ipaddress.ip_interface(ln.a_ipv4).network
                == ipaddress.ip_interface(ln.b_ipv4).network
            )

    # the fabric file round-trips
    if len(fabric.links) < 3000:
        assert parse_document(dump_fabric(fabric), file="roundtrip.yaml") == fabric
