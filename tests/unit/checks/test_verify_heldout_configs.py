"""Real configs that verify once misread, checked against what the vendor semantics say.

Each test reads a device file of a verify fixture (its source is in that case's ``case.yaml``)
through the parser and the dialect interpreter and asserts the observed values.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.dialects import eos, nvue, nxos, sonic
from aifabric.evidence.qos import PortQos
from aifabric.evidence.registry import detect_kind, parse_text

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "verify"


def _text(case: str, name: str) -> str:
    return (ROOT / case / "configs" / name).read_text()


def test_nxos_flat_interface_range_block_applies_to_every_port() -> None:
    """Unindented sub-commands after 'interface Ethernet1/1-32' belong to that range (NX-OS
    reads a pasted session line by line), and 'exit' / 'end' leave the modes."""
    text = _text("nxos-flat-script-interface-range", "leaf01.cfg")
    result = parse_text(text, kind="nxos-config")
    dev = nxos.interpret(result, file="leaf01.cfg", name="leaf01")
    assert len([p for p in dev.ports if p.lower().startswith("ethernet1/")]) == 32
    view = dev.ports["Ethernet1/7"].merged_over(dev.defaults)
    assert view.mtu_bytes is not None and view.mtu_bytes.value == 9216
    assert view.pfc_priorities is not None and view.pfc_priorities.value == (3,)
    assert view.pfc_watchdog is not None and view.pfc_watchdog.value is True
    assert view.dscp_to_tc is not None
    assert view.dscp_to_tc.value[26] == 3 and view.dscp_to_tc.value[48] == 7
    assert not any("attached nowhere" in n for n in dev.notes)
    assert dev.neutral["Ethernet7"] == "Ethernet1/7"


def test_nxos_rancid_show_running_all_is_detected() -> None:
    """A RANCID NX-OS capture with no QoS policy (batfish test config) is still NX-OS."""
    text = (
        "!RANCID-CONTENT-TYPE: cisco-nx\n!\nhostname n3k\n!\ninterface Ethernet1/21\n"
        "  priority-flow-control mode auto\n  mtu 1500\n"
    )
    assert detect_kind(text) == "nxos-config"


def test_nvue_named_profiles_apply_to_the_bound_interface_only() -> None:
    """'nv set qos <kind> <profile> ...' is applied where 'nv set interface X qos <kind> profile
    <profile>' binds it; 'nv set qos roce enable on' turns RoCE on."""
    text = _text("nvue-named-profiles-bound", "leaf01.txt")
    result = parse_text(text, kind="nvue")
    dev = nvue.interpret(result, file="leaf01.txt", name="leaf01")
    assert not any("not interpreted" in n for n in dev.notes), dev.notes
    swp12 = dev.ports["swp12"]
    assert swp12.pfc_priorities is not None and swp12.pfc_priorities.value == (3,)
    assert swp12.dscp_to_tc is not None and swp12.dscp_to_tc.value[26] == 3
    assert [(m.queues, m.kmin_bytes, m.kmax_bytes, m.enabled) for m in swp12.ecn] == [
        ((3,), 150_000, 300_000, True)
    ]
    # the device default stays NVIDIA's RoCE default (ECN 150000 / 1500000 on TC 0,3)
    assert [(m.kmin_bytes, m.kmax_bytes) for m in dev.defaults.ecn] == [(150_000, 1_500_000)]


def test_nvue_unbound_named_profile_is_not_applied() -> None:
    """A named PFC profile no interface binds changes nothing (default-global stays)."""
    text = "nv set qos roce\nnv set qos pfc SPARE switch-priority 2\n"
    dev = nvue.interpret(parse_text(text, kind="nvue"), file="f", name="leaf01")
    assert dev.defaults.pfc_priorities is not None
    assert dev.defaults.pfc_priorities.value == (3,)
    assert any("bound to no interface" in n for n in dev.notes)


def test_sonic_configlet_list_of_tables_is_merged() -> None:
    """A JSON array of table objects is one config_db (applied in order), and a QUEUE that
    binds a WRED_PROFILE the file lacks leaves ECN unknown, not off."""
    text = _text("sonic-configlet-list-undefined-wred", "leaf01.json")
    result = parse_text(text, kind="sonic-config-db")
    assert not result.warnings, result.warnings
    qos = [r for r in result.records if isinstance(r, PortQos) and r.port == "Ethernet63"]
    assert qos and qos[0].pfc_enable == (3, 4)
    dev = sonic.interpret(result, file="leaf01.json", name="leaf01")
    marks = dev.ports["Ethernet63"].ecn
    assert marks and all(m.enabled is None for m in marks)
    assert any("AZURE_LOSSLESS" in n for n in dev.notes)


def test_sonic_port_qos_map_without_pfc_enable_is_pfc_off() -> None:
    """SONiC's qosorch reads pfc_enable from a port's PORT_QOS_MAP entry: a port whose entry
    binds maps but has no pfc_enable runs without PFC (not "unknown")."""
    # source: sonic-net/sonic-buildimage src/sonic-config-engine/tests/sample_output/py3/
    # qos-arista7060x6.json @086b03bd (PORT_QOS_MAP entries, values verbatim)
    text = """{
    "PORT_QOS_MAP": {
        "global": {"dscp_to_tc_map": "AZURE"},
        "Ethernet0": {
            "dscp_to_tc_map": "AZURE", "tc_to_queue_map": "AZURE", "pfc_enable": "3,4",
            "pfcwd_sw_enable": "3,4", "tc_to_pg_map": "AZURE", "pfc_to_queue_map": "AZURE"
        },
        "Ethernet512": {
            "dscp_to_tc_map": "AZURE", "tc_to_queue_map": "AZURE", "tc_to_pg_map": "AZURE"
        }
    }
}"""
    dev = sonic.interpret(parse_text(text, kind="sonic-config-db"), file="x.json", name="x")
    on = dev.ports["Ethernet0"].pfc_priorities
    off = dev.ports["Ethernet512"].pfc_priorities
    assert on is not None and on.value == (3, 4)
    assert off is not None and off.value == ()
    assert dev.defaults.pfc_priorities is None  # the global entry says nothing about PFC


def test_eos_cli_session_prompts_give_each_command_its_block() -> None:
    """'host(config-qos-profile-X)# cmd' is cmd inside qos profile X; '...-uc-txq-3)# cmd' is
    inside that queue; '(config)#' lines are top-level (Arista EOS CLI modes)."""
    text = _text("eos-cli-session-prompts", "leaf01.txt")
    assert detect_kind(text) == "eos-config"
    result = parse_text(text, kind="eos-config")
    assert not result.warnings, result.warnings
    dev = eos.interpret(result, file="leaf01.txt", name="leaf01")
    view = dev.ports["Ethernet1"].merged_over(dev.defaults)
    assert view.pfc_priorities is not None and view.pfc_priorities.value == (3,)
    assert view.mtu_bytes is not None and view.mtu_bytes.value == 9214
    assert view.trust is not None and view.trust.value == "dscp"
    assert view.dscp_to_tc is not None and view.dscp_to_tc.value[26] == 3
    assert [(m.kmin_bytes, m.kmax_bytes) for m in view.ecn if m.covers(3)] == [
        (256 * 1024, 512 * 1024)  # EOS kbytes
    ]
    assert view.pfc_watchdog is not None and view.pfc_watchdog.value is True


def test_eos_flat_paste_keeps_sub_commands_in_the_interface() -> None:
    """Column-0 'priority-flow-control ...' after 'interface Ethernet1' belongs to it until the
    column-0 '!'; the following 'priority-flow-control pause watchdog' is global. An attached
    tx-queue service-policy is not read, so ECN there is unknown, not absent."""
    text = _text("eos-flat-paste-service-policy", "leaf01.cfg")
    result = parse_text(text, kind="eos-config")
    dev = eos.interpret(result, file="leaf01.cfg", name="leaf01")
    view = dev.ports["Ethernet1"].merged_over(dev.defaults)
    assert view.pfc_priorities is not None and view.pfc_priorities.value == (3,)
    assert view.pfc_watchdog is not None and view.pfc_watchdog.value is True
    assert view.ecn == [] and view.ecn_unread is not None
    assert any("AI-FABRIC-QOS" in n and "not interpreted" in n for n in dev.notes)


def test_eos_indented_config_unchanged_by_flat_rule() -> None:
    """A global line after a block closed by '!' stays global; 'mtu' inside stays the port's."""
    text = "interface Ethernet1\n   mtu 9214\n!\nqos map dscp 26 to traffic-class 3\n"
    dev = eos.interpret(parse_text(text, kind="eos-config"), file="f", name="leaf01")
    assert dev.ports["Ethernet1"].mtu_bytes is not None
    assert dev.ports["Ethernet1"].mtu_bytes.value == 9214
    assert dev.defaults.dscp_to_tc is not None and dev.defaults.dscp_to_tc.value[26] == 3
