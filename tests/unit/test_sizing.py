"""Sizing arithmetic against the seed's worked example (S7) and textbook CLOS figures."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.design.sizing import leaf_host_capacity, plan_fabric, smallest_divisor_at_least
from aifabric.errors import DesignError


def test_s7_leaf_takes_eight_servers_of_eight_200g_nics() -> None:
    # S7: a 64-port 400G leaf, 32 ports down as 2x200G breakouts, 32 up: 64 NIC ports.
    assert leaf_host_capacity(64, 2, 200, 400, 1.0) == 64
    plan = plan_fabric(
        servers=128,
        host_ports_per_server=8,
        nic_gbps=200,
        ports=64,
        port_gbps=400,
        breakout=2,
        oversubscription=1.0,
        spine_oversubscription=1.0,
        layout="tor",
        servers_per_su=None,
        tiers="auto",
        min_spines=2,
    )
    assert plan.servers_per_leaf == 8
    assert plan.leaf_down_ports == 32
    assert plan.uplinks == 32
    # 12.8 Tb/s each way
    assert plan.leaf_hosts * 200 == 12_800
    assert plan.uplinks * 400 == 12_800
    assert (plan.leaves, plan.spines, plan.tiers) == (16, 8, 2)
    assert plan.links_per_spine == 4


def test_three_to_one_leaf() -> None:
    # 3:1 on a 64x400G leaf with 400G NICs: 48 down, 16 up.
    assert leaf_host_capacity(64, 1, 400, 400, 3.0) == 48


def test_classic_fat_tree_limits() -> None:
    # A k-ary fat tree of k=64 ports holds k^3/4 = 65,536 hosts in three tiers; two tiers hold
    # k^2/2 = 2,048.
    two = plan_fabric(
        servers=2048,
        host_ports_per_server=1,
        nic_gbps=400,
        ports=64,
        port_gbps=400,
        breakout=1,
        oversubscription=1.0,
        spine_oversubscription=1.0,
        layout="tor",
        servers_per_su=None,
        tiers="auto",
        min_spines=2,
    )
    assert two.tiers == 2 and two.leaves == 64 and two.spines == 32
    three = plan_fabric(
        servers=2049,
        host_ports_per_server=1,
        nic_gbps=400,
        ports=64,
        port_gbps=400,
        breakout=1,
        oversubscription=1.0,
        spine_oversubscription=1.0,
        layout="tor",
        servers_per_su=None,
        tiers="auto",
        min_spines=2,
    )
    assert three.tiers == 3
    full = plan_fabric(
        servers=65536,
        host_ports_per_server=1,
        nic_gbps=400,
        ports=64,
        port_gbps=400,
        breakout=1,
        oversubscription=1.0,
        spine_oversubscription=1.0,
        layout="tor",
        servers_per_su=None,
        tiers="auto",
        min_spines=2,
    )
    assert (full.leaves, full.spines_total, full.super_spines_total) == (2048, 2048, 1024)
    with pytest.raises(DesignError):
        plan_fabric(
            servers=65537,
            host_ports_per_server=1,
            nic_gbps=400,
            ports=64,
            port_gbps=400,
            breakout=1,
            oversubscription=1.0,
            spine_oversubscription=1.0,
            layout="tor",
            servers_per_su=None,
            tiers="auto",
            min_spines=2,
        )


def test_forced_two_tiers_beyond_radix_is_an_error() -> None:
    with pytest.raises(DesignError, match="three-tier"):
        plan_fabric(
            servers=4096,
            host_ports_per_server=8,
            nic_gbps=400,
            ports=64,
            port_gbps=400,
            breakout=1,
            oversubscription=1.0,
            spine_oversubscription=1.0,
            layout="rail",
            servers_per_su=None,
            tiers="2",
            min_spines=2,
        )


def test_smallest_divisor() -> None:
    assert smallest_divisor_at_least(32, 5) == 8
    assert smallest_divisor_at_least(17, 2) == 17
    assert smallest_divisor_at_least(8, 9) is None


@given(
    ports=st.integers(4, 128),
    breakout=st.sampled_from([1, 2, 4]),
    o=st.sampled_from([1.0, 1.5, 2.0, 3.0, 4.0]),
)
def test_leaf_capacity_is_the_largest_that_fits(ports: int, breakout: int, o: float) -> None:
    port, nic = 400.0, 400.0 / breakout
    x = leaf_host_capacity(ports, breakout, nic, port, o)

    def fits(n: int) -> bool:
        return math.ceil(n / breakout) + math.ceil(round(n * nic / (o * port), 9)) <= ports

    assert x == 0 or fits(x)
    assert not fits(x + 1)
    # the uplink bandwidth never falls short of downlink / o
    if x:
        up = math.ceil(round(x * nic / (o * port), 9))
        assert x * nic / (up * port) <= o + 1e-9
