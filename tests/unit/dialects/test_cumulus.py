"""Legacy Cumulus traffic.conf → observed model, on every real ``cumulus-traffic-conf`` fixture.

Expected values are read off the files by hand (line numbers included). Port groups that are
not in ``<feature>.port_group_list`` are inactive in switchd and must not count as configured.
"""

from __future__ import annotations

from aifabric.dialects import cumulus
from aifabric.dialects.observed import ObservedDevice
from tests.unit.evidence.fixtures import all_cases, case


def dev(name: str) -> ObservedDevice:
    c = case("cumulus-traffic-conf", name)
    return cumulus.interpret(c.parse(), file=f"{name}/input.txt", name="tor1")


def test_every_fixture_interprets() -> None:
    names = [c.name for c in all_cases() if c.kind == "cumulus-traffic-conf"]
    assert len(names) >= 3
    for n in names:
        d = dev(n)
        assert d.role == "switch" and d.dialect == "cumulus"


def test_microsoft_sdn_sn2700() -> None:
    d = dev("microsoft-sdn-sn2700-roce-37")
    assert len(d.ports) == 32 and d.neutral["Ethernet32"] == "swp32"  # swp1-swp32
    v = d.view("Ethernet7")
    assert v.trust is not None and v.trust.value == "dscp" and v.trust.src.line == 8
    assert v.tc_of_dscp(42) == 4 and v.tc_of_dscp(26) == 0  # RDMA on DSCP 42 -> cos 4
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (4,)
    assert v.pfc_priorities.src.line == 109
    assert v.headroom_bytes is not None and v.headroom_bytes.value == 18000
    (ecn,) = v.ecn
    assert ecn.queues == (4,) and (ecn.kmin_bytes, ecn.kmax_bytes) == (153_600, 1_536_000)
    assert ecn.enabled is True and ecn.probability_pct == 100
    # priority_group.control = cos 7 weight 0 (strict); service cos 4 / bulk weight 16
    assert d.schedulers[7].value == "strict" and d.schedulers[4].value == "dwrr"
    assert d.schedulers[0].value == "dwrr" and d.schedulers[7].src.line == 159
    assert d.view("Ethernet33").pfc_priorities is not None  # the default settles to (4,)
    assert v.mtu_bytes is None  # traffic.conf says nothing about MTU
    assert any("DSCP 42 is listed under cos_0 and cos_4" in n for n in d.notes)


def test_roce_cat_mismatched_group_names_are_inactive() -> None:
    d = dev("roce-pfc-ecn-cat")
    v = d.view("Ethernet1")
    assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 2 and v.tc_of_dscp(0) == 0
    assert v.trust is not None and v.trust.value == "dscp" and v.trust.src.line == 5
    # keys name pfc_port_group / ecn_red_port_group, the lists name ROCE_PFC / ROCE_ECN
    assert v.pfc_priorities is None and not v.ecn and not d.ports
    assert any("pfc.pfc_port_group is not in pfc.port_group_list" in n for n in d.notes)
    assert any("ecn_red.ecn_red_port_group is not in" in n for n in d.notes)
    assert d.schedulers[2].value == "strict" and d.schedulers[3].value == "dwrr"


def test_nclu_excerpt_unknown_pfc_listed_ecn() -> None:
    d = dev("nclu-storage-optimized-pfc-41")
    v = d.view("Ethernet1")
    assert v.pfc_priorities is None  # pfc.port_group_list elided: unknown, not applied
    assert any("pfc.ROCE_PFC" in n and "unknown" in n for n in d.notes)
    (ecn,) = v.ecn
    assert ecn.queues == (3,) and (ecn.kmin_bytes, ecn.kmax_bytes) == (150_000, 1_500_000)
    assert ecn.src.line == 11


def test_trust_words() -> None:
    assert cumulus.trust_of("802.1p,dscp") == "dscp"
    assert cumulus.trust_of("802.1p") == "pcp"
    assert cumulus.trust_of("both") == "dscp"
    assert cumulus.trust_of("port") == "none"
