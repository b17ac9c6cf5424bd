"""Arista EOS running-config → observed model: values read by hand from the real captures under
tests/fixtures/evidence/eos-config, and one small config per scope rule (profile vs interface,
PFC without ``on``, global map over the default map, port-channel members)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.dialects.eos import EOS_DEFAULT_DSCP_TO_TC, expand_interfaces, interpret
from aifabric.dialects.observed import ObservedDevice
from aifabric.evidence import parse_text

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "eos-config"


def _fixture(case: str) -> ObservedDevice:
    path = FIX / case / "input.txt"
    result = parse_text(path.read_text(encoding="utf-8"), "eos-config", str(path))
    return interpret(result, file=f"{case}.cfg", name="leaf1")


def _text(config: str) -> ObservedDevice:
    return interpret(parse_text(config, "eos-config"), file="t.cfg", name="t")


# ---------------------------------------------------------------------------- the default map


def test_default_dscp_map_is_arista_table() -> None:
    # EOS manual default DSCP-to-TC table: 0-7 -> 1, 8-15 -> 0, then 8 DSCPs per class
    table = {0: 1, 7: 1, 8: 0, 15: 0, 16: 2, 23: 2, 24: 3, 26: 3, 31: 3, 32: 4, 40: 5, 46: 5}
    table |= {48: 6, 55: 6, 56: 7, 63: 7}
    for dscp, tc in table.items():
        assert EOS_DEFAULT_DSCP_TO_TC[dscp] == tc, dscp
    assert len(EOS_DEFAULT_DSCP_TO_TC) == 64


# ---------------------------------------------------------------------------- real configs


def test_amd_7388_profile_applied_through_service_profile() -> None:
    dev = _fixture("amd-7388-dcqcn-qos-profile")
    assert (dev.role, dev.dialect) == ("switch", "eos")
    assert set(dev.ports) == {"Ethernet2/5/1", "Ethernet2/5/5"}
    for port, mtu_line in (("Ethernet2/5/1", 19), ("Ethernet2/5/5", 28)):
        v = dev.view(port)
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.pfc_priorities.src.line == 8  # priority-flow-control on (in the profile)
        assert v.trust is not None and v.trust.value == "dscp"
        assert v.mtu_bytes is not None and v.mtu_bytes.value == 9214
        assert v.mtu_bytes.src.line == mtu_line
        assert v.speed_gbps == 200
        (ecn,) = v.ecn
        assert ecn.queue == 3 and ecn.enabled and ecn.probability_pct == 20
        assert ecn.kmin_bytes is None and ecn.kmax_bytes is None  # segments: no byte size
        assert (ecn.kmin_raw, ecn.kmax_raw) == ("2000 segments", "10000 segments")
        assert ecn.src.line == 12
    # no 'qos map dscp' at all: the EOS default map, marked as a platform default
    d = dev.defaults
    assert d.dscp_to_tc is not None and d.dscp_to_tc.src.default
    assert dev.view("Ethernet2/5/1").tc_of_dscp(26) == 3  # RoCE
    assert dev.view("Ethernet2/5/1").tc_of_dscp(48) == 6  # CNP
    assert any("2000 segments" in n for n in dev.notes)
    assert dev.neutral == {}  # card/port/lane names of a modular chassis have no neutral name


def test_avd_interfaces_pfc_on_off_and_drop() -> None:
    dev = _fixture("avd-ethernet-interfaces-pfc")
    pfc = {p: v.pfc_priorities for p, v in dev.ports.items()}
    assert pfc["Ethernet1"] is not None and pfc["Ethernet1"].value == ()  # only '5 drop'
    assert pfc["Ethernet2"] is not None and pfc["Ethernet2"].value == (5,)
    assert pfc["Ethernet2"].src.line == 85
    assert pfc["Ethernet3"] is not None and pfc["Ethernet3"].value == ()  # no PFC
    assert pfc["Ethernet3"].src.line == 117
    assert pfc["Ethernet4"] is not None and pfc["Ethernet4"].value == ()  # on, no priority
    mtu1 = dev.ports["Ethernet1"].mtu_bytes
    assert mtu1 is not None and (mtu1.value, mtu1.src.line) == (1500, 4)
    mtu4 = dev.ports["Ethernet4"].mtu_bytes
    assert mtu4 is not None and mtu4.value == 9100
    assert dev.ports["Ethernet2"].mtu_bytes is None
    assert dev.neutral == {f"Ethernet{i}": f"Ethernet{i}" for i in range(1, 5)}
    assert dev.view("Ethernet3") is not dev.defaults


def test_avd_qos_maps_over_default_members_and_schedulers() -> None:
    dev = _fixture("avd-qos-maps-service-profile")
    m = dev.defaults.dscp_to_tc
    assert m is not None and m.src.line == 87 and not m.src.default
    v = dev.view("Ethernet1")
    assert v.tc_of_dscp(26) == 4  # 'qos map dscp 18 20 22 26 ... to traffic-class 4'
    assert v.tc_of_dscp(46) == 5
    assert v.tc_of_dscp(49) == 1
    assert v.tc_of_dscp(0) == 1  # not listed: EOS default
    assert v.tc_of_dscp(48) == 6  # not listed: EOS default
    assert v.tc_of_dscp(56) == 7
    assert (
        v.queue_of_tc(6) == 2 and v.queue_of_tc(3) == 3
    )  # 'qos map traffic-class 6 to tx-queue 2'
    assert v.trust is not None and v.trust.value == "dscp"
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 1500  # MTU 1500: not RoCE-ready
    assert v.pfc_priorities is None and v.ecn == []  # no PFC, no ECN anywhere
    # Ethernet3/4 are 'channel-group 3' members: they take Port-Channel3's trust cos
    for member in ("Ethernet3", "Ethernet4"):
        t = dev.ports[member].trust
        assert t is not None and t.value == "pcp" and t.src.line == 42
    assert dev.ports["Ethernet6"].trust is not None
    assert dev.schedulers[2].value == "strict" and dev.schedulers[2].src.line == 34
    assert dev.schedulers[1].value == "dwrr" and dev.schedulers[1].src.line == 30
    assert dev.schedulers[3].value == "dwrr" and dev.schedulers[3].src.line == 13


def test_avd_full_qos_unbound_profiles_pfc_all_off_watchdog() -> None:
    dev = _fixture("avd-qos-full-profiles-policy-maps")
    unbound = [n for n in dev.notes if "bound to no interface" in n]
    assert {n.split("qos profile ")[1].split()[0] for n in unbound} == {
        "no_qos_trust",
        "test_with_pfc",
        "uc_mc_queues_test",
        "wred_queues_test",
        "wred_uc_queues_test",
    }
    # 'priority-flow-control all off' (line 274) switches PFC off everywhere
    d = dev.defaults
    assert d.pfc_priorities is not None and d.pfc_priorities.value == ()
    assert d.pfc_priorities.src.line == 274
    assert all(
        v.pfc_priorities is not None and not v.pfc_priorities.value for v in dev.ports.values()
    )
    # global watchdog: 'priority-flow-control pause watchdog default timeout 0.05'
    assert d.pfc_watchdog is not None and d.pfc_watchdog.value and d.pfc_watchdog.src.line == 275
    # Ethernet1 binds profile 'test': ECN 320 kbytes on queue 2, 320 segments on queue 4
    ecn = {e.queue: e for e in dev.view("Ethernet1").ecn}
    assert ecn[2].kmin_bytes == ecn[2].kmax_bytes == 320 * 1024
    assert ecn[2].probability_pct == 90 and ecn[2].src.line == 53
    assert ecn[4].kmin_bytes is None and ecn[4].kmin_raw == "320 segments"
    assert any("exp-to-tc" in n for n in dev.notes)


def test_avd_platform_sand_map_is_noted() -> None:
    dev = _fixture("avd-platform-sand-qos-map")
    assert dev.ports == {}
    assert any("tc-to-network-qos" in n and "line 28" in n for n in dev.notes)
    assert dev.defaults.tc_of_dscp(26) == 3


# ---------------------------------------------------------------------------- scope rules

_PROFILE = """qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
   tx-queue 6
      priority strict
!
"""


def test_interface_settings_override_the_profile() -> None:
    dev = _text(
        _PROFILE
        + """interface Ethernet1
   mtu 9214
   qos trust cos
   service-profile ROCE
   tx-queue 3
      random-detect ecn minimum-threshold 100 kbytes maximum-threshold 2 mbytes
!
interface Ethernet2
   mtu 9214
   service-profile ROCE
!
"""
    )
    e1, e2 = dev.view("Ethernet1"), dev.view("Ethernet2")
    assert e1.trust is not None and e1.trust.value == "pcp"  # interface beats profile
    assert e2.trust is not None and e2.trust.value == "dscp"
    assert e1.pfc_priorities is not None and e1.pfc_priorities.value == (3,)
    assert [(e.kmin_bytes, e.kmax_bytes) for e in e1.ecn] == [(100 * 1024, 2 * 1024 * 1024)]
    assert [(e.kmin_bytes, e.kmax_bytes) for e in e2.ecn] == [(150 * 1024, 1500 * 1024)]
    assert dev.schedulers[6].value == "strict"


def test_no_drop_without_pfc_on_is_off_and_noted() -> None:
    dev = _text(
        "interface Ethernet5\n   mtu 9214\n   priority-flow-control priority 3 no-drop\n!\n"
    )
    pfc = dev.view("Ethernet5").pfc_priorities
    assert pfc is not None and pfc.value == ()
    assert any("without 'priority-flow-control on'" in n for n in dev.notes)


def test_pfc_on_several_priorities() -> None:
    dev = _text(
        "interface Ethernet9\n   priority-flow-control on\n"
        "   priority-flow-control priority 3 no-drop\n   priority-flow-control priority 4 no-drop\n"
    )
    pfc = dev.view("Ethernet9").pfc_priorities
    assert pfc is not None and pfc.value == (3, 4)


def test_global_map_over_default_and_missing_profile() -> None:
    dev = _text(
        "qos map dscp 26 to traffic-class 5\n!\ninterface Ethernet1\n   service-profile NOPE\n!\n"
    )
    v = dev.view("Ethernet1")
    assert v.tc_of_dscp(26) == 5 and v.tc_of_dscp(24) == 3 and v.tc_of_dscp(48) == 6
    assert any("NOPE" in n and "does not define" in n for n in dev.notes)


def test_port_channel_mtu_flows_to_members_and_ranges_expand() -> None:
    dev = _text(
        "interface Port-Channel10\n   mtu 9214\n   priority-flow-control on\n"
        "   priority-flow-control priority 3 no-drop\n!\n"
        "interface Ethernet1-2\n   channel-group 10 mode active\n!\n"
    )
    for m in ("Ethernet1", "Ethernet2"):
        v = dev.view(m)
        assert v.mtu_bytes is not None and v.mtu_bytes.value == 9214
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert dev.neutral["Ethernet2"] == "Ethernet2"


def test_global_watchdog_without_timeout_is_noted() -> None:
    dev = _text("priority-flow-control pause watchdog action drop\n")
    assert dev.defaults.pfc_watchdog is None
    assert any("without a default timeout" in n for n in dev.notes)


# ---------------------------------------------------------------------------- ranges


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("Ethernet1/1/1 - 2", ["Ethernet1/1/1", "Ethernet1/1/2"]),
        ("Ethernet1/1-4", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"]),
        ("Ethernet1-3", ["Ethernet1", "Ethernet2", "Ethernet3"]),
        ("Ethernet1/1-2,Ethernet1/5", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/5"]),
        ("Ethernet1/1-2, 1/5", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/5"]),
        ("ethernet1/11-12", ["Ethernet1/11", "Ethernet1/12"]),
        ("Ethernet1/1-1/3", ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]),
        ("Port-Channel100.101", ["Port-Channel100.101"]),
        ("port-channel50", ["port-channel50"]),
        ("Ethernet5-2", ["Ethernet5-2"]),  # backwards: left as written
    ],
)
def test_expand_interfaces(spec: str, names: list[str]) -> None:
    assert expand_interfaces(spec) == names


@given(st.integers(1, 64), st.integers(0, 40), st.sampled_from(["", "1/", "1/1/"]))
def test_expand_interfaces_counts(lo: int, span: int, base: str) -> None:
    names = expand_interfaces(f"Ethernet{base}{lo} - {lo + span}")
    assert len(names) == span + 1
    assert names[0] == f"Ethernet{base}{lo}" and names[-1] == f"Ethernet{base}{lo + span}"


@given(st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=20))
def test_global_map_lines_override_only_the_dscps_they_name(mapping: dict[int, int]) -> None:
    """``qos map dscp ... to traffic-class N`` lines change only the DSCPs they list; every other
    DSCP keeps the EOS default class."""
    lines = [
        f"qos map dscp {' '.join(str(d) for d in sorted(ds))} to traffic-class {tc}"
        for tc in sorted(set(mapping.values()))
        for ds in [[d for d, t in mapping.items() if t == tc]]
    ]
    dev = _text("\n".join(lines) + "\ninterface Ethernet1\n   mtu 9214\n")
    for dscp in range(64):
        assert dev.view("Ethernet1").tc_of_dscp(dscp) == mapping.get(
            dscp, EOS_DEFAULT_DSCP_TO_TC[dscp]
        )
