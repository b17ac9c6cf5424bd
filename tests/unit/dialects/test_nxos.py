"""Cisco NX-OS running-config → observed model: values read by hand from the real captures under
tests/fixtures/evidence/nxos-config, and one small config per attachment rule (system qos vs
interface policy, PFC mode off, WRED without ECN, unattached policies)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.dialects.nxos import interpret
from aifabric.dialects.observed import ObservedDevice
from aifabric.evidence import parse_text

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "nxos-config"


def _fixture(case: str) -> ObservedDevice:
    path = FIX / case / "input.txt"
    result = parse_text(path.read_text(encoding="utf-8"), "nxos-config", str(path))
    return interpret(result, file=f"{case}.cfg", name="leaf1")


def _text(config: str) -> ObservedDevice:
    return interpret(parse_text(config, "nxos-config"), file="t.cfg", name="t")


# ---------------------------------------------------------------------------- real configs


def test_amd_n9364e_dcqcn() -> None:
    dev = _fixture("amd-n9364e-dcqcn")
    assert (dev.role, dev.dialect) == ("switch", "nxos")
    d = dev.defaults
    # classification is attached per interface; both ports of 'Ethernet1/1/1 - 2' get it
    assert set(dev.ports) == {"Ethernet1/1/1", "Ethernet1/1/2"}
    for port in dev.ports:
        v = dev.view(port)
        assert v.tc_of_dscp(26) == 3  # ROCEv2 -> set qos-group 3
        assert v.tc_of_dscp(48) == 7  # CNP -> set qos-group 7
        assert v.tc_of_dscp(0) == 0  # class-default
        assert v.trust is not None and v.trust.value == "dscp"
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.pfc_priorities.src.line == 45  # priority-flow-control mode on
        assert v.pfc_watchdog is not None and v.pfc_watchdog.value
        assert v.pfc_watchdog.src.line == 46
        assert v.mtu_bytes is not None and (v.mtu_bytes.value, v.mtu_bytes.src.line) == (9216, 44)
        (ecn,) = v.ecn  # system queuing policy QOS_EGRESS_PORT
        assert ecn.queue == 3 and ecn.enabled and ecn.src.line == 30
        assert (ecn.kmin_bytes, ecn.kmax_bytes) == (950 * 1024, 3000 * 1024)
        assert ecn.probability_pct == 7
        assert v.queue_of_tc(3) == 3
    # device-wide: network-qos 'pause pfc-cos 3' (line 5) and class MTU 9216 (line 4)
    assert d.pfc_priorities is not None and (d.pfc_priorities.value, d.pfc_priorities.src.line) == (
        (3,),
        5,
    )
    assert d.mtu_bytes is not None and d.mtu_bytes.value == 9216 and d.mtu_bytes.src.line == 4
    assert d.tc_to_queue is not None and d.tc_to_queue.src.default  # 8q identity
    assert dev.schedulers[7].value == "strict" and dev.schedulers[7].src.line == 38
    assert dev.schedulers[3].value == "dwrr" and dev.schedulers[3].src.line == 29
    assert dev.schedulers[0].value == "dwrr"  # c-out-8q-q-default
    # Ethernet1/1/1 is breakout sub-port 1 of front-panel port 1
    assert dev.neutral == {"Ethernet1/1": "Ethernet1/1/1", "Ethernet1/2": "Ethernet1/1/2"}
    assert dev.view("Ethernet1/2") is not dev.defaults


def test_azure_local_cos_classification() -> None:
    dev = _fixture("azure-local-storage-qos")
    d = dev.defaults
    v = dev.view("Ethernet17")  # neutral name of Ethernet1/17
    assert v.port == "Ethernet1/17"
    assert v.trust is not None and v.trust.value == "pcp"  # match cos 3 / cos 7
    assert v.dscp_to_tc is None and v.tc_of_dscp(26) is None
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.pfc_priorities.src.line == 48  # 'priority-flow-control mode on send-tlv'
    assert d.pfc_priorities is not None and d.pfc_priorities.src.line == 4
    (ecn,) = v.ecn
    assert ecn.kmin_bytes == ecn.kmax_bytes == 300 * 1024 and ecn.probability_pct == 100
    assert dev.schedulers[7].value == "dwrr"  # 'bandwidth percent 1', not priority
    assert all(s.value == "dwrr" for s in dev.schedulers.values())


def test_n3132_lossless_class_mtu_2240() -> None:
    dev = _fixture("n3132-rdma-flat-msdocs")
    d = dev.defaults
    # the no-drop class RDMA (match qos-group 3) has mtu 2240: too small for RoCE 4096 frames
    assert d.mtu_bytes is not None and (d.mtu_bytes.value, d.mtu_bytes.src.line) == (2240, 18)
    assert d.pfc_priorities is not None and d.pfc_priorities.value == (3,)
    assert d.pfc_priorities.src.line == 19  # pause no-drop
    assert d.trust is not None and d.trust.value == "pcp"  # system qos: match cos 3
    assert dev.schedulers[3].value == "dwrr" and dev.schedulers[3].src.line == 11
    assert dev.ports == {}


def test_n5k_fragment_without_system_qos() -> None:
    dev = _fixture("n5k-fcoe-network-qos-blog")
    d = dev.defaults
    assert d.mtu_bytes is not None and d.mtu_bytes.value == 2158  # the no-drop class-fcoe
    assert d.pfc_priorities is None  # 'pause no-drop' on a class whose CoS is not stated
    assert any("no 'system qos'" in n for n in dev.notes)
    assert any("class-fcoe" in n and "CoS is not" in n for n in dev.notes)


def test_azure_local_disaggregated_tor1() -> None:
    dev = _fixture("azure-local-disaggregated-tor1")
    mtu = {p: v.mtu_bytes for p, v in dev.ports.items()}
    for port in ("Ethernet1/1", "Ethernet1/15", "Ethernet1/41", "port-channel50"):
        m = mtu[port]
        assert m is not None and m.value == 9216 and not m.src.default
    # HSRP ToR-to-ToR link members state no mtu: NX-OS default 1500
    for port, line in (("Ethernet1/49", 82), ("Ethernet1/50", 92)):
        m = mtu[port]
        assert m is not None and (m.value, m.src.line, m.src.default) == (1500, line, True)
    assert dev.whole().mtu_bytes is None  # ports disagree
    assert any("AZS_SERVICES" in n and "does not define" in n for n in dev.notes)
    assert any("no-drop CoS is unknown" in n for n in dev.notes)
    assert dev.view("Ethernet15").port == "Ethernet1/15"
    assert dev.ports["Ethernet1/15"].pfc_priorities is None


def test_azure_local_fully_converged_range() -> None:
    dev = _fixture("azure-local-fully-converged-tor1")
    for port in ("Ethernet1/1", "Ethernet1/2", "Ethernet1/3"):
        m = dev.ports[port].mtu_bytes
        assert m is not None and (m.value, m.src.line) == (9216, 32)
    assert {"Ethernet1", "Ethernet2", "Ethernet3"} <= set(dev.neutral)
    assert dev.whole().mtu_bytes is not None and dev.whole().mtu_bytes.value == 9216
    assert sum("AZS_SERVICES" in n for n in dev.notes) == 1


def test_azure_local_switchless_peer_link_pfc_at_1500() -> None:
    dev = _fixture("azure-local-switchless-vpc-peer-link")
    for port, line in (
        ("port-channel101", 49),
        ("Ethernet1/49", 59),
        ("Ethernet1/50", 70),
        ("Ethernet1/51", 81),
    ):
        m = dev.ports[port].mtu_bytes
        assert m is not None and (m.value, m.src.line, m.src.default) == (1500, line, True)
    host = dev.ports["Ethernet1/1"].mtu_bytes
    assert host is not None and host.value == 9216
    assert any("mode on at 4 interfaces" in n for n in dev.notes)


# ---------------------------------------------------------------------------- attachment rules

_POLICIES = """class-map type qos match-any ROCE
  match dscp 24,26
class-map type qos match-any CNP
  match dscp 48
policy-map type qos SYS_IN
  class ROCE
    set qos-group 3
policy-map type qos PORT_IN
  class ROCE
    set qos-group 4
  class CNP
    set qos-group 6
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3
    mtu 9216
  class type network-qos c-8q-nq4
    pause pfc-cos 4
    mtu 9216
policy-map type queuing OUT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 60
    random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes weight 0
policy-map type queuing UNUSED
  class type queuing c-out-8q-q3
    priority level 1
system qos
  service-policy type qos input SYS_IN
  service-policy type network-qos NQ
  service-policy type queuing output OUT
"""


def test_interface_policy_overrides_system_and_pfc_off() -> None:
    dev = _text(
        _POLICIES
        + """interface Ethernet1/1
  service-policy type qos input PORT_IN no-stats
  priority-flow-control mode on
interface Ethernet1/2
  priority-flow-control mode off
interface Ethernet1/3
  mtu 9216
"""
    )
    e1, e2, e3 = dev.view("Ethernet1"), dev.view("Ethernet2"), dev.view("Ethernet3")
    assert e1.tc_of_dscp(26) == 4 and e1.tc_of_dscp(48) == 6  # its own policy
    assert e2.tc_of_dscp(26) == 3 and e2.tc_of_dscp(48) == 0  # system policy, class-default
    # PFC on two priorities (3 and 4) from the network-qos policy
    assert e1.pfc_priorities is not None and e1.pfc_priorities.value == (3, 4)
    assert e2.pfc_priorities is not None and e2.pfc_priorities.value == ()  # mode off
    assert e3.pfc_priorities is not None and e3.pfc_priorities.value == (3, 4)  # default (auto)
    assert e2.mtu_bytes is not None and e2.mtu_bytes.value == 1500 and e2.mtu_bytes.src.default
    assert e3.mtu_bytes is not None and e3.mtu_bytes.value == 9216
    # WRED without 'ecn': drops, no marking
    (ecn,) = e3.ecn
    assert ecn.queue == 3 and ecn.enabled is False
    assert any("UNUSED" in n and "attached nowhere" in n for n in dev.notes)
    assert any("mode auto" in n and "Ethernet1/3" in n for n in dev.notes)
    assert dev.schedulers[3].value == "dwrr"  # the unattached strict policy does not count


# ---------------------------------------------------------------------------- property


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.integers(0, 63), st.integers(1, 7), min_size=1, max_size=12))
def test_dscp_to_qos_group_matches_the_policy(mapping: dict[int, int]) -> None:
    """Any DSCP → qos-group policy attached under system qos reads back exactly; every DSCP
    it does not match falls in class-default, qos-group 0."""
    lines = []
    for group in sorted(set(mapping.values())):
        dscps = ",".join(str(d) for d in sorted(d for d, g in mapping.items() if g == group))
        lines += [f"class-map type qos match-any G{group}", f"  match dscp {dscps}"]
    lines.append("policy-map type qos IN")
    for group in sorted(set(mapping.values())):
        lines += [f"  class G{group}", f"    set qos-group {group}"]
    lines += ["system qos", "  service-policy type qos input IN"]
    dev = _text("\n".join(lines) + "\n")
    for dscp in range(64):
        assert dev.defaults.tc_of_dscp(dscp) == mapping.get(dscp, 0)
