"""NVUE → observed model, on every real ``nvue`` fixture.

Expected values are read off the captures by hand (line numbers included) and, for the RoCE
defaults, off the Cumulus Linux 5.10 "Default RoCE Mode Configuration" table: PFC on switch
priority 3 in lossless mode only, SP 3 → TC 3, SP 6 → TC 6 strict, ECN 150,000 / 1,500,000 B
(what ``nv show qos roce`` prints as 146.48 KB / 1.43 MB, binary units: 150000 / 1024 = 146.48).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.dialects import nvue
from aifabric.dialects.cumulus import expand_ports
from aifabric.dialects.observed import ObservedDevice
from aifabric.evidence import parse_text
from tests.unit.evidence.fixtures import all_cases, case

KB = 1024
MB = 1024 * 1024


def dev(name: str) -> ObservedDevice:
    c = case("nvue", name)
    return nvue.interpret(c.parse(), file=f"{name}/input.txt", name="leaf1")


def test_every_nvue_fixture_interprets() -> None:
    names = [c.name for c in all_cases() if c.kind == "nvue"]
    assert len(names) >= 11
    for n in names:
        d = dev(n)
        assert d.role == "switch" and d.dialect == "nvue" and d.name == "leaf1"


def test_show_qos_roce_lossless() -> None:
    d = dev("show-qos-roce")
    v = d.view("Ethernet5")  # no per-port settings: the device defaults
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.pfc_priorities.src.line == 17 and not v.pfc_priorities.src.default
    assert v.trust is not None and v.trust.value == "dscp" and v.trust.src.line == 21
    assert v.tc_of_dscp(26) == 3  # "3  3    24,25,26,27,28,29,30,31  3"
    assert v.tc_of_dscp(48) == 6 and v.tc_of_dscp(0) == 0 and v.tc_of_dscp(63) == 7
    assert v.queue_of_tc(3) == 3 and v.queue_of_tc(6) == 6 and v.queue_of_tc(5) == 0
    (ecn,) = v.ecn
    assert ecn.covers(3) and ecn.covers(0) and not ecn.covers(6)
    assert ecn.kmin_bytes is not None and abs(ecn.kmin_bytes - 146.48 * KB) < 0.01 * KB
    assert ecn.kmax_bytes is not None and abs(ecn.kmax_bytes - 1.43 * MB) < 0.01 * MB
    assert ecn.probability_pct == 100 and ecn.enabled is True and ecn.src.line == 7
    assert d.schedulers[6].value == "strict" and d.schedulers[6].src.line == 46
    assert d.schedulers[3].value == "dwrr" and d.schedulers[0].value == "dwrr"
    assert v.mtu_bytes is None  # a QoS view says nothing about MTU
    assert any("lldp-app-tlv" in n for n in d.notes)  # read, not used: said so


def test_show_qos_roce_cl50_and_single_ipool() -> None:
    for name, pfc_line, cable in (
        ("show-qos-roce-cl50-description", 13, 6),
        ("show-qos-roce-single-ipool", 7, 10),
    ):
        d = dev(name)
        v = d.defaults
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.pfc_priorities.src.line == pfc_line
        assert v.cable_length_m is not None and v.cable_length_m.value == 100.0
        assert v.cable_length_m.src.line == cable
        assert v.tc_of_dscp(26) == 3 and d.schedulers[6].value == "strict"


def test_show_qos_roce_lossy_multi_tc_has_no_pfc() -> None:
    d = dev("show-qos-roce-lossy-multi-tc")
    v = d.defaults
    assert v.pfc_priorities is not None and v.pfc_priorities.value == ()  # "pfc-priority  -"
    assert v.pfc_priorities.src.line == 7
    assert v.tc_of_dscp(26) == 4 and v.tc_of_dscp(5) == 3 and v.tc_of_dscp(48) == 0
    (ecn,) = v.ecn
    assert ecn.queues == (1, 2, 3) and ecn.probability_pct == 5
    assert ecn.kmin_bytes == 163 * KB and ecn.kmax_bytes == 234 * KB
    assert {q: s.value for q, s in d.schedulers.items()} == {q: "dwrr" for q in range(8)}


def test_show_interface_status_goes_to_the_port() -> None:
    d = dev("show-interface-roce-status")
    assert list(d.ports) == ["swp16"] and d.neutral == {"Ethernet16": "swp16"}
    v = d.view("Ethernet16")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 6
    assert v.tc_of_dscp(10) is None  # only the roce/cnp rows are printed
    (ecn,) = v.ecn
    assert ecn.kmin_bytes == 153 * KB and ecn.src.line == 5
    assert d.schedulers[6].value == "strict" and d.schedulers[3].value == "dwrr"
    assert any("lists 2 DSCP" in n for n in d.notes)


def test_counters_are_noted_not_config() -> None:
    d = dev("show-interface-roce-counters")
    assert d.defaults.pfc_priorities is None and not d.ports
    assert any("33 NVUE counters" in n for n in d.notes)


def test_show_interface_link_mtu() -> None:
    d = dev("show-int-link-sn2700")
    v = d.view("Ethernet11")
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 9216 and v.mtu_bytes.src.line == 8
    assert not v.mtu_bytes.src.default and v.speed_gbps == 100.0


def test_nv_set_roce_applies_lossless_defaults() -> None:
    d = dev("nv-set-roce-lossless")
    v = d.view("Ethernet1")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.pfc_priorities.src.default and v.pfc_priorities.src.line == 1
    assert v.trust is not None and v.trust.value == "dscp" and v.trust.src.default
    assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 6
    assert v.queue_of_tc(3) == 3 and v.queue_of_tc(6) == 6 and v.queue_of_tc(1) == 0
    (ecn,) = v.ecn
    assert (ecn.kmin_bytes, ecn.kmax_bytes) == (150_000, 1_500_000) and ecn.covers(3)
    assert ecn.src.default
    assert d.schedulers[6].value == "strict" and d.schedulers[3].value == "dwrr"
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 9216 and v.mtu_bytes.src.default


def test_nv_set_roce_lossy_has_no_pfc() -> None:
    v = dev("nv-set-roce-lossy").defaults
    assert v.pfc_priorities is not None and v.pfc_priorities.value == ()
    assert v.pfc_priorities.src.default and "lossy" in (v.pfc_priorities.src.text or "")
    assert v.tc_of_dscp(26) == 3 and v.ecn and v.ecn[0].covers(3)


def test_nv_set_switch_priority_2_problem_case() -> None:
    d = dev("nv-set-roce-sp2")
    v = d.defaults
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (2,)
    assert v.pfc_priorities.src.line == 1 and not v.pfc_priorities.src.default
    assert v.tc_of_dscp(26) == 2 and v.dscp_to_tc is not None and v.dscp_to_tc.src.line == 5
    assert v.queue_of_tc(2) == 3 and v.queue_of_tc(3) == 0
    assert v.trust is not None and v.trust.value == "dscp" and v.trust.src.line == 4
    assert v.tc_of_dscp(24) is None  # not stated; not guessed
    assert not v.ecn  # RoCE not enabled in this file: no ECN defaults


def test_nv_set_mtu_1500_problem_case() -> None:
    d = dev("nv-set-link-mtu-1500")
    v = d.view("Ethernet1")
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 1500 and v.mtu_bytes.src.line == 1
    other = d.view("Ethernet2")  # not set: ifupdown2's 9216
    assert other.mtu_bytes is not None and other.mtu_bytes.value == 9216
    assert other.mtu_bytes.src.default


def test_unset_roce_turns_it_off() -> None:
    text = "cumulus@switch:~$ nv unset qos roce\ncumulus@switch:~$ nv config apply\n"
    d = nvue.interpret(parse_text(text, "nvue"), file="f", name="s")
    assert d.defaults.pfc_priorities is None and any("RoCE is off" in n for n in d.notes)


def test_config_yaml_ranges_and_roce() -> None:
    # constructed for this test (not a capture): the nv config show YAML shape
    text = (
        "- set:\n    interface:\n      swp1-4:\n        link:\n          mtu: 1500\n"
        "    qos:\n      roce:\n        enable: on\n        mode: lossless\n"
    )
    d = nvue.interpret(parse_text(text, "nvue"), file="f", name="s")
    assert sorted(d.ports) == ["swp1", "swp2", "swp3", "swp4"]
    v = d.view("Ethernet3")
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 1500 and v.mtu_bytes.src.line == 5
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.pfc_priorities.src.default
    assert d.view("Ethernet9").mtu_bytes is not None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("swp1-4", ["swp1", "swp2", "swp3", "swp4"]),
        ("swp1-swp3,swp6", ["swp1", "swp2", "swp3", "swp6"]),
        ("swp50s0-swp50s3", ["swp50s0", "swp50s1", "swp50s2", "swp50s3"]),
        ("swp1s0-1", ["swp1s0", "swp1s1"]),
        ("allports", ["allports"]),
    ],
)
def test_expand_ports(spec: str, expected: list[str]) -> None:
    assert expand_ports(spec) == expected


@given(st.integers(1, 64), st.integers(0, 64))
def test_expand_range_count(lo: int, width: int) -> None:
    hi = lo + width
    ports = expand_ports(f"swp{lo}-{hi}")
    assert len(ports) == width + 1 and ports[0] == f"swp{lo}" and ports[-1] == f"swp{hi}"


def test_default_dscp_map_is_dscp_over_8() -> None:
    m = nvue.roce_default_dscp_map()
    assert len(m) == 64 and m[26] == 3 and m[48] == 6 and m[7] == 0 and m[63] == 7
