"""Where a fault can act: a loss or throttle on a leaf's bridged server port would never match
(iptables sees routed packets on br0, not the bridge's ports), so it is refused with the end
that works; on the server's end it gives the four iptables rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.lab.faults import _commands, _iface
from aifabric.lab.plan import plan_lab

LAB = Path(__file__).resolve().parents[2] / "fixtures" / "lab" / "lab-2x2.yaml"


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    return plan_lab(load_fabric(LAB, load_catalog()), "u1", routing="static")


@pytest.mark.parametrize("kind", ["loss", "throttle"])
def test_bridged_leaf_port_is_refused(plan, kind: str) -> None:  # type: ignore[no-untyped-def]
    node, iface = _iface(plan, "leaf02:srv05")
    assert iface.bridged
    with pytest.raises(InputError, match=r"--link srv05:leaf02"):
        _commands(plan, kind, "f1", node, iface, "5" if kind == "loss" else "1G")


def test_loss_on_the_server_end(plan) -> None:  # type: ignore[no-untyped-def]
    node, iface = _iface(plan, "srv05:leaf02")
    [(where, do, undo)] = _commands(plan, "loss", "f1", node, iface, "5")
    assert where.name == "srv05" and len(do) == len(undo) == 4
    assert all("--probability 0.050000" in c and "aifabric-lab:u1:f1" in c for c in do)
