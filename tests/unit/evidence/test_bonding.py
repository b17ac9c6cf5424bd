"""/proc/net/bonding parser and the bond verdicts, against real captures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.bonding import BondInfo, BondSlave, parse_proc_bonding
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    load,
)

CASES = [c for c in all_cases() if c.kind == "proc-bonding"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_parses_without_warnings(c: Case) -> None:
    assert detect_kind(c.text()) == "proc-bonding"
    res = c.parse()
    assert res.of_type(BondInfo) and not res.warnings
    if not c.name.startswith("grep-"):  # a grep for one label shows no members
        assert res.of_type(BondSlave)


def test_8023ad_bond_and_its_members() -> None:
    res = load("proc-bonding", "wener-notes-8023ad-four-slaves")
    (info,) = res.of_type(BondInfo)
    assert info.is_8023ad and (info.xmit_hash_policy, info.mii_status, info.lacp_rate) == (
        "layer2", "up", "slow",
    )  # fmt: skip
    members = res.of_type(BondSlave)
    assert [m.interface for m in members] == ["eth0", "eth1", "eth2", "eth3"]
    assert {(m.speed_mbps, m.duplex, m.link_failures, m.aggregator_id) for m in members} == {
        (1000, "full", 0, 1)
    }
    assert members[0].line == 17 and members[0].fields["Permanent HW addr"] == "74:00:11:22:33:40"


def test_round_robin_bond() -> None:
    res = load("proc-bonding", "40g-nic-readme-round-robin")
    (info,) = res.of_type(BondInfo)
    assert info.mode == "load balancing (round-robin)" and not info.is_8023ad
    (m,) = res.of_type(BondSlave)
    assert (m.interface, m.speed_mbps, m.mii_status) == ("eth40b", 40000, "up")


@pytest.mark.parametrize(
    ("name", "after"),
    [("wener-notes-8023ad-four-slaves", 20), ("40g-nic-readme-round-robin", 4)],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("proc-bonding", name, after)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_proc_bonding(text)


def _findings(tmp_path: Path, text: str) -> dict[str, str]:
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    path = tmp_path / "bond0.txt"
    path.write_text(text, encoding="utf-8")
    return {f.check: f.severity for f in diagnose(load_evidence([path])).findings}


def test_healthy_8023ad_bond_gives_only_the_hash_note(tmp_path: Path) -> None:
    got = _findings(tmp_path, case("proc-bonding", "wener-notes-8023ad-four-slaves").text())
    assert got == {"diagnose.bond-hash-layer2": "info"}


def test_member_down_split_aggregators_and_flaps(tmp_path: Path) -> None:
    # the real 802.3ad capture with one member down and one in another aggregator, as the
    # kernel prints them (bond_procfs.c: "MII Status: down", "Speed: Unknown")
    text = case("proc-bonding", "wener-notes-8023ad-four-slaves").text()
    lines = text.splitlines()
    i = lines.index("Slave Interface: eth1")
    lines[i + 1] = "MII Status: down"
    lines[i + 2] = "Speed: Unknown"
    lines[i + 4] = "Link Failure Count: 3"
    j = lines.index("Slave Interface: eth3")
    lines[j + 7] = "Aggregator ID: 2"
    got = _findings(tmp_path, "\n".join(lines) + "\n")
    assert got["diagnose.bond-member-down"] == "warning"
    assert got["diagnose.bond-lacp-not-bundled"] == "warning"
    assert "diagnose.bond-down" not in got


def test_bond_down_is_an_error(tmp_path: Path) -> None:
    text = case("proc-bonding", "40g-nic-readme-round-robin").text().replace(
        "MII Status: up", "MII Status: down"
    )
    got = _findings(tmp_path, text)
    assert got["diagnose.bond-down"] == "error" and got["diagnose.bond-member-down"] == "warning"


def test_one_member_section_pasted_alone_is_read() -> None:
    """A user pasting 'the port info' of one member (systemd/systemd issue 15208): the section
    from Slave Interface to Aggregator ID, without the bond's header."""
    text = (
        "Slave Interface: enp2s0f0\nMII Status: up\nSpeed: 10000 Mbps\nDuplex: full\n"
        "Link Failure Count: 0\nPermanent HW addr: 3c:fd:fe:de:fe:24\nSlave queue ID: 0\n"
        "Aggregator ID: 1\n"
    )
    assert detect_kind(text) == "proc-bonding"
    res = parse_proc_bonding(text)
    (member,) = res.of_type(BondSlave)
    assert (member.interface, member.mii_status, member.speed_mbps, member.aggregator_id) == (
        "enp2s0f0", "up", 10000, 1,
    )  # fmt: skip
    assert not res.of_type(BondInfo) and not res.warnings
