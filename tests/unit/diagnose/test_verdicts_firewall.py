"""A host firewall whose filter INPUT chain admits only fixed ports (``diagnose.host-firewall-
closed``): rulesets captured with the real iptables 1.8.9 in a network namespace (the stock
RHEL/CentOS 7 iptables-services ruleset, a policy-DROP ruleset), in ``iptables-save``, ``-S``,
``-L -n`` and ``-L -n -v`` forms."""

from __future__ import annotations

import pytest

from aifabric.checks.diagnose.engine import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_firewall import input_chain_closed
from tests.unit.evidence.fixtures import FIXTURES, load


def _closed(name: str) -> list[str]:
    path = FIXTURES / "iptables" / name / "input.txt"
    found = diagnose(load_evidence([path])).findings
    return [f.message for f in found if f.check == "diagnose.host-firewall-closed"]


@pytest.mark.parametrize(
    "name", ["ns-firewall-rhel7-save", "ns-firewall-rhel7-L", "ns-firewall-rhel7-Lv"]
)
def test_stock_rhel7_ruleset_closes_all_but_ssh(name: str) -> None:
    [msg] = _closed(name)
    assert "REJECT rule for everything" in msg and msg.endswith("TCP ports opened: 22")


@pytest.mark.parametrize("name", ["ns-firewall-drop-ssh-S", "ns-firewall-drop-ssh-Lv"])
def test_policy_drop_with_ssh_and_a_store_port(name: str) -> None:
    [msg] = _closed(name)
    assert "policy is DROP" in msg and msg.endswith("TCP ports opened: 22, 29500")


def test_the_cluster_subnet_opened_before_the_reject_is_not_closed() -> None:
    assert _closed("ns-firewall-rhel7-subnet-S") == []
    assert input_chain_closed(load("iptables", "ns-firewall-rhel7-subnet-S").records) is None


def test_chains_of_the_lab_captures_are_not_judged_closed() -> None:
    # the mangle-table and router captures of the lab: no filter INPUT chain that closes
    for name in ("lab-host-dscp-26-save-c", "lab-router-statistic-drop-save-c"):
        assert input_chain_closed(load("iptables", name).records) is None
