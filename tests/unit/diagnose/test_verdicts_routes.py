"""Verdicts on routing tables (checks/diagnose/verdicts_routes.py) on the real captures under
tests/fixtures/evidence/ip-route/ (the lab's leaf-spine fabric before and after a BGP session
died, FRR and kernel forms) and on tables written in FRR's format for the cases no capture has."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.findings import Finding

ROUTES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "ip-route"


def _findings(*paths: Path) -> list[Finding]:
    return [f for f in diagnose(load_evidence(list(paths))).findings
            if f.severity in ("error", "warning")]


def _case(name: str) -> Path:
    return next((ROUTES / name).glob("input.*"))


def test_healthy_tables_give_nothing() -> None:
    for name in ("lab-frr-text-leaf-healthy", "lab-ip-json-route-leaf-healthy",
                 "frr-22564-frr10-kernel-weights"):
        assert _findings(_case(name)) == [], name


def test_prefixes_over_different_links_are_not_a_missing_member() -> None:
    """spine01 after the fault: leaf01's /24 over one link, leaf02's over two; the links go to
    different leaves, so neither set contains the other and nothing is claimed."""
    assert _findings(_case("lab-frr-text-spine-bgp-down")) == []
    assert _findings(_case("lab-ip-route-spine-bgp-down")) == []


def test_before_and_after_a_session_died(tmp_path: Path) -> None:
    before = tmp_path / "before.txt"
    before.write_text(_case("lab-frr-text-leaf-healthy").read_text(encoding="utf-8"))
    [f] = _findings(before, _case("lab-frr-json-leaf-bgp-down"))
    assert (f.check, f.cause, f.severity) == ("diagnose.ecmp-width-changed", "fabric.routing",
                                              "warning")
    assert "10.200.1.0/24 (bgp) has 3 next hop(s) here and 4 in before.txt" in f.message


def test_a_prefix_missing_one_uplink(tmp_path: Path) -> None:
    table = tmp_path / "leaf.txt"
    table.write_text(
        "B>* 10.200.1.0/24 [20/0] via 10.0.0.17, Ethernet5, weight 1, 00:00:14\n"
        "  *                      via 10.0.0.19, Ethernet6, weight 1, 00:00:14\n"
        "  *                      via 10.0.0.21, Ethernet7, weight 1, 00:00:14\n"
        "  *                      via 10.0.0.23, Ethernet8, weight 1, 00:00:14\n"
        "B>* 10.200.2.0/24 [20/0] via 10.0.0.19, Ethernet6, weight 1, 00:00:07\n"
        "  *                      via 10.0.0.21, Ethernet7, weight 1, 00:00:07\n"
        "  *                      via 10.0.0.23, Ethernet8, weight 1, 00:00:07\n",
        encoding="utf-8",
    )
    [f] = _findings(table)
    assert (f.check, f.cause) == ("diagnose.ecmp-member-missing", "fabric.routing")
    assert "10.200.2.0/24 (bgp) goes over 3 next hop(s)" in f.message
    assert "no path through Ethernet5" in f.message


def test_dead_next_hop() -> None:
    [f] = _findings(_case("iproute2-cheatsheet-23-dead-linkdown"))
    assert (f.check, f.cause, f.severity) == ("diagnose.nexthop-dead", "fabric.link-down",
                                              "warning")
    assert "eth0 (dead linkdown)" in f.message and "forwards over 0 of 1" in f.message


def test_selected_route_not_in_the_fib(tmp_path: Path) -> None:
    table = tmp_path / "queued.txt"
    table.write_text("B>q 10.1.0.0/24 [20/0] via 10.0.0.1, swp1, weight 1, 00:00:02\n"
                     "C>* 10.0.0.0/31 is directly connected, swp1, 00:05:00\n", encoding="utf-8")
    [f] = _findings(table)
    assert (f.check, f.cause) == ("diagnose.route-not-in-fib", "fabric.routing")
    assert "queued for the kernel" in f.message
