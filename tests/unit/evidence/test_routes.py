"""Routing tables (kind ``ip-route``): ``ip route``, ``ip -j route`` and FRR ``show ip route``
(text and JSON). Expected values were read by hand from the captures under
``tests/fixtures/evidence/ip-route/`` (FRR 8.4.4 and iproute2 6.1 in the lab's namespaces; FRR
issue 22564; iproute2-cheatsheet issue 23)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.routes import Route
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load

KIND = "ip-route"
CASES = sorted(c.name for c in all_cases() if c.kind == KIND)
TEXT_CASES = [c for c in all_cases() if c.kind == KIND and c.path.suffix == ".txt"]


def _routes(name: str) -> dict[str, Route]:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    return {r.prefix: r for r in result.of_type(Route) if r.selected is not False}


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_frr_text_leaf_spreads_the_remote_prefix_over_four_uplinks() -> None:
    routes = _routes("lab-frr-text-leaf-healthy")
    r = routes["10.200.1.0/24"]
    assert (r.protocol, r.selected, r.installed, r.distance, r.metric) == ("bgp", True, True, 20,
                                                                           0)
    assert [(n.via, n.dev, n.weight) for n in r.next_hops] == [
        ("10.0.0.17", "Ethernet5", 1), ("10.0.0.19", "Ethernet6", 1),
        ("10.0.0.21", "Ethernet7", 1), ("10.0.0.23", "Ethernet8", 1),
    ]  # fmt: skip
    assert r.width == 4 and (r.line, r.end_line) == (14, 17)
    c = routes["10.200.0.0/24"]
    assert (c.protocol, c.width, c.next_hops[0].dev, c.next_hops[0].via) == ("connected", 1,
                                                                              "br0", None)
    assert len(routes) == 7


def test_frr_text_and_kernel_agree_after_a_session_died() -> None:
    frr = _routes("lab-frr-text-spine-bgp-down")
    kernel = _routes("lab-ip-route-spine-bgp-down")
    for routes in (frr, kernel):
        assert routes["10.200.0.0/24"].width == 1  # one of the two links to leaf01 lost
        assert routes["10.200.1.0/24"].width == 2
        assert routes["10.200.0.0/24"].protocol == "bgp"
    assert [n.dev for n in kernel["10.200.1.0/24"].next_hops] == ["Ethernet3", "Ethernet4"]
    assert kernel["10.200.0.0/24"].next_hops[0].via == "10.0.0.20"
    assert kernel["10.200.1.0/24"].metric == 20
    assert kernel["10.0.0.16/31"].protocol == "kernel"


def test_frr_json_keeps_three_of_four_uplinks() -> None:
    routes = _routes("lab-frr-json-leaf-bgp-down")
    r = routes["10.200.1.0/24"]
    assert (r.protocol, r.selected, r.installed, r.form) == ("bgp", True, True, "frr-json")
    assert [n.dev for n in r.next_hops] == ["Ethernet6", "Ethernet7", "Ethernet8"]
    assert r.width == 3
    assert (r.distance, r.metric, r.vrf) == (20, 0, "default")


def test_ip_json_route() -> None:
    routes = _routes("lab-ip-json-route-leaf-healthy")
    r = routes["10.200.1.0/24"]
    assert (r.protocol, r.metric, r.width, r.form) == ("bgp", 20, 4, "linux-json")
    assert routes["10.0.0.16/31"].next_hops[0].dev == "Ethernet5"
    assert {x.line for x in routes.values()} == {1}  # one-line JSON


def test_frr10_local_routes_and_weights() -> None:
    result = load(KIND, "frr-22564-frr10-kernel-weights")
    assert not result.warnings
    routes = result.of_type(Route)
    assert len(routes) == 8
    assert [r.protocol for r in routes[:2]] == ["local", "connected"]
    assert routes[0].selected is False and routes[0].installed is True
    k = routes[6]
    assert (k.prefix, k.protocol, k.vrf, k.selected) == ("10.0.0.2/32", "kernel", "default", True)
    assert [(n.dev, n.weight, n.flags) for n in k.next_hops] == [
        ("wg-wan2", 1, ["onlink"]), ("wg-wan1", 2, ["onlink"])]
    assert k.width == 2


def test_dead_linkdown_next_hop_is_not_used() -> None:
    [r] = load(KIND, "iproute2-cheatsheet-23-dead-linkdown").of_type(Route)
    assert (r.prefix, r.protocol, r.metric) == ("default", "static", 9)
    [n] = r.next_hops
    assert (n.via, n.dev, n.weight, n.used) == ("192.168.122.1", "eth0", 1, False)
    assert n.flags == ["dead", "linkdown"]
    assert r.width == 0


def test_queued_and_rejected_routes_keep_their_status() -> None:
    text = (
        "B>q 10.1.0.0/24 [20/0] via 10.0.0.1, swp1, weight 1, 00:00:02\n"
        "  q                    via 10.0.0.3, swp2, weight 1, 00:00:02\n"
        "B>r 10.2.0.0/24 [20/0] via 10.0.0.1, swp1, weight 1, 00:00:02\n"
    )
    a, b = parse_text(text, KIND).of_type(Route)
    assert (a.status, a.installed, a.width, len(a.next_hops)) == ("q", False, 0, 2)
    assert (b.status, b.installed, b.width) == ("r", False, 0)


def test_multipath_kernel_route_with_a_dead_member() -> None:
    text = ("198.51.100.0/24\n"
            "\tnexthop via 192.0.2.2 dev dummy1 weight 1\n"
            "\tnexthop via 192.0.2.18 dev dummy2 weight 1 dead linkdown\n")
    [r] = parse_text(text, KIND).of_type(Route)
    assert [n.used for n in r.next_hops] == [True, False]
    assert (r.width, r.end_line) == (1, 3)


@given(st.data())
def test_a_garbage_line_in_a_table_is_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, TEXT_CASES, lambda kind: lambda t: parse_text(t, kind))


_HOP = st.fixed_dictionaries({
    "gateway": st.ip_addresses(v=4).map(str),
    "dev": st.from_regex(r"eth[0-9]{1,2}", fullmatch=True),
    "weight": st.integers(1, 255),
    "flags": st.lists(st.sampled_from(["dead", "linkdown", "onlink"]), unique=True),
})  # fmt: skip


@given(st.lists(st.lists(_HOP, min_size=1, max_size=8), min_size=1, max_size=6))
def test_width_counts_the_next_hops_not_dead(groups: list[list[dict[str, object]]]) -> None:
    doc = [{"dst": f"10.{i}.0.0/16", "protocol": "bgp", "nexthops": hops}
           for i, hops in enumerate(groups)]
    routes = parse_text(json.dumps(doc), KIND).of_type(Route)
    assert [r.width for r in routes] == [
        sum(1 for h in hops if "dead" not in h["flags"]) for hops in groups  # type: ignore[operator]
    ]
    # the same routes as ip route's text form read alike
    lines = []
    for r, hops in zip(routes, groups, strict=True):
        lines.append(f"{r.prefix} proto bgp metric 20")
        lines += [f"\tnexthop via {h['gateway']} dev {h['dev']} weight {h['weight']} "
                  + " ".join(h["flags"]) for h in hops]  # type: ignore[arg-type]
    text_routes = parse_text("\n".join(lines) + "\n", KIND).of_type(Route)
    assert [r.width for r in text_routes] == [r.width for r in routes]
