"""The lab plan, without root: scaling, names, addresses, ASNs, ECMP widths, FRR configs.

Expected values are counted from the fabric files by hand (their header comments give the
design: S7's 16 leaves x 32 uplinks over 8 spines; the 2x2 test fabric's 2 links per
leaf-spine pair), not taken from the code's output."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.lab.faults import FAULT_KINDS
from aifabric.lab.frr import render_bgpd, render_zebra
from aifabric.lab.plan import _ifname, namespace, plan_from_dict, plan_lab, validate_lab_name
from aifabric.model.io import read_document

ROOT = Path(__file__).resolve().parents[3]
EX = ROOT / "examples"
LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"


def _fab(path: Path):  # type: ignore[no-untyped-def]
    doc = read_document(path)
    return doc


def test_s7_scaled_keeps_every_switch_and_two_servers_per_leaf() -> None:
    plan = plan_lab(_fab(EX / "s7-worked-example.yaml"), "x")
    # 16 leaves + 8 spines; 2 servers per leaf, one port each (all 8 NICs reach the same leaf)
    assert plan.kept["switches"] == 24 and plan.kept["servers"] == 32
    fabric_links = [link for link in plan.links if link.kind == "fabric"]
    assert len(fabric_links) == 16 * 32  # every leaf uplink kept
    assert plan.kept["links"] == 16 * 32 + 32
    # every leaf reaches every other leaf's host prefixes over all 32 uplinks (8 spines x 4)
    leaf_prefixes = {n.name: n.originates for n in plan.nodes.values() if n.role == "leaf"}
    for leaf, widths in plan.expected_paths.items():
        if plan.nodes[leaf].role != "leaf":
            continue
        for other, prefixes in leaf_prefixes.items():
            if other != leaf:
                assert all(widths[p] == 32 for p in prefixes)
    # routed /31 host links (the l3-ebgp plan): hosts keep the fabric's own addresses
    srv = plan.nodes["srv001"]
    assert srv.ifaces[0].address == "10.0.0.1/31" and srv.ifaces[0].mtu == 9000


def test_leaf_asns_unique_spines_shared() -> None:
    plan = plan_lab(_fab(LAB_2X2), "x")
    leaves = [n.asn for n in plan.nodes.values() if n.role == "leaf"]
    spines = {n.asn for n in plan.nodes.values() if n.role == "spine"}
    assert len(set(leaves)) == len(leaves) == 2 and len(spines) == 1
    # RFC 6996 private ranges; this fabric sets its own (4-byte) ASNs and the lab keeps them
    assert all(64512 <= (a or 0) <= 65534 or 4200000000 <= (a or 0) <= 4294967294
               for a in [*leaves, *spines])
    fabric_asn = {s.name: s.asn for s in _fab(LAB_2X2).switches}
    assert all(plan.nodes[k].asn == v for k, v in fabric_asn.items() if v is not None)


def test_2x2_widths_and_bridged_hosts() -> None:
    plan = plan_lab(_fab(LAB_2X2), "x")
    l2 = plan.nodes["leaf02"].originates
    assert plan.expected_paths["leaf01"] == {p: 4 for p in l2}  # 2 spines x 2 links
    assert plan.expected_paths["spine01"][l2[0]] == 2  # the two parallel links to leaf02
    # hosts on one leaf share its /24 behind a bridge; the gateway is the bridge address
    srv = plan.gateways["srv01"][0]
    bridge = ipaddress.ip_interface(plan.nodes["leaf01"].bridge or "")
    assert ipaddress.ip_interface(srv[1]).network == bridge.network
    assert srv[2] == str(bridge.ip)
    assert plan.host_dscp == 26  # the fabric's roce_dscp


def test_l2_single_subnet_is_said_and_mtus_follow_links() -> None:
    plan = plan_lab(_fab(EX / "s17-case-study-after.yaml"), "x")
    assert any("EVPN-VXLAN" in n for n in plan.notes)
    for link in plan.links:
        a_node, a_if = link.a.split(":")
        iface = next(i for i in plan.nodes[a_node].ifaces if i.name == a_if)
        assert iface.mtu == link.mtu
    assert {link.mtu for link in plan.links if link.kind == "fabric"} == {9216}


def test_three_tier_chain_through_a_firewall() -> None:
    plan = plan_lab(_fab(EX / "s17-case-study-before.yaml"), "x")
    assert plan.nodes["fw1"].role == "middlebox"
    remote = plan.nodes["b-access1"].originates[0]
    assert plan.expected_paths["a-access1"][remote] == 2  # Ethernet31 + Ethernet32 to a-agg1
    assert plan.expected_paths["fw1"][remote] == 1
    static = {r.prefix: r for r in plan.routes["a-access1"]}
    assert len(static[remote].nexthops) == 2


def test_unnumbered_has_no_switch_link_addresses_and_static_refuses_it() -> None:
    plan = plan_lab(_fab(LAB_2X2), "x", bgp="unnumbered")
    sw = [i for n in plan.nodes.values() if n.router for i in n.ifaces
          if plan.nodes[i.peer].router]
    assert sw and all(i.address is None for i in sw)
    with pytest.raises(InputError):
        plan_lab(_fab(LAB_2X2), "x", routing="static", bgp="unnumbered")


def test_state_round_trip() -> None:
    plan = plan_lab(_fab(EX / "s17-case-study-before.yaml"), "x", rate_scale=1000)
    assert plan_from_dict(plan.to_dict()) == plan


def test_frr_configs() -> None:
    plan = plan_lab(_fab(LAB_2X2), "x")
    leaf = plan.nodes["leaf01"]
    conf = render_bgpd(plan, leaf, Path("/d"))
    assert f"router bgp {leaf.asn}" in conf
    # one numbered neighbor per uplink, at the spine end's address, with the spines' ASN
    spine_asn = plan.nodes["spine01"].asn
    assert conf.count(f"remote-as {spine_asn}") == 4
    assert f"  network {leaf.originates[0]}" in conf and "maximum-paths 64" in conf
    assert "no zebra nexthop kernel enable" in render_zebra(leaf, Path("/d"))
    un = plan_lab(_fab(LAB_2X2), "x", bgp="unnumbered")
    unnumbered = render_bgpd(un, un.nodes["leaf01"], Path("/d"))
    assert unnumbered.count("interface remote-as external") == 4


@given(st.text(min_size=1, max_size=40))
def test_ifnames_are_linux_names(port: str) -> None:
    used: set[str] = set()
    a, b = _ifname(port, used), _ifname(port, used)
    for name in (a, b):
        assert 1 <= len(name) <= 15 and "/" not in name and " " not in name and ":" not in name
    assert a != b


def test_names() -> None:
    assert namespace("lab1", "leaf01") == "afl:lab1:leaf01"
    for bad in ("", "a:b", "-x", "x" * 33, "a b"):
        with pytest.raises(InputError):
            validate_lab_name(bad)
    assert _ifname("Ethernet1/2", set()) == "Ethernet1-2"


def test_fault_kinds_cover_the_contract() -> None:
    # the documented fault kinds (docs/lab.md), at least these
    assert {"mtu-mismatch", "loss", "throttle", "shallow-buffer", "link-down", "ecmp-l3-hash",
            "dscp-remark", "bgp-down"} <= set(FAULT_KINDS)
    assert all(k.stands_for and k.refs for k in FAULT_KINDS.values())
