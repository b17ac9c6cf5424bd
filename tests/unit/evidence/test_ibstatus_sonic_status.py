"""``ibstatus`` (infiniband-diags script over sysfs) and SONiC ``show interfaces status``: real
captures under ``tests/fixtures/evidence/{ibstatus,sonic-interfaces-status}/``; the port and
switch-port verdicts they feed."""

from __future__ import annotations

from aifabric.checks.diagnose.engine import Evidence, diagnose, load_evidence
from aifabric.checks.diagnose.verdicts import verdicts_for
from aifabric.evidence.infiniband import IbstatPort
from aifabric.evidence.registry import parse_text
from aifabric.evidence.sonic_interfaces import SonicInterfaceStatus
from tests.unit.evidence.fixtures import FIXTURES, case


def _ports(name: str) -> dict[tuple[str, int], IbstatPort]:
    return {(p.ca, p.port): p for p in case("ibstatus", name).parse().of_type(IbstatPort)}


def test_sysfs_states_map_to_ibstat_names() -> None:
    # "4: ACTIVE" / "5: LinkUp" and "1: DOWN" / "2: Polling" (kernel ib_port_state_str names)
    ports = _ports("ompi-users-7006-ofed131-dual-hca-polling")
    up, down = ports[("mlx4_0", 1)], ports[("mlx4_0", 2)]
    assert (up.state, up.physical_state, up.active) == ("Active", "LinkUp", True)
    assert (up.rate_gbps, up.base_lid, up.sm_lid) == (20.0, 0x2F, 1)
    assert (down.state, down.physical_state, down.active) == ("Down", "Polling", False)
    assert down.rate_gbps == 10.0 and down.link_layer is None  # OFED 1.3.1 prints no link_layer
    assert up.default_gid == "fe80:0000:0000:0000:0003:ba00:0100:71a1"


def test_init_state_without_blank_lines_between_blocks() -> None:
    ports = _ports("ompi-users-24833-mlx4-ddr-port2-init")
    assert any(p.state == "Initializing" and p.physical_state == "LinkUp" for p in ports.values())


def test_healthy_edr_ports_are_all_active() -> None:
    ports = _ports("cuml-wiki-mnmg-4x-edr-active")
    assert len(ports) == 4 and all(p.active and p.rate_gbps == 100.0 for p in ports.values())


def test_ibstatus_down_port_is_a_port_down_finding() -> None:
    path = FIXTURES / "ibstatus" / "ompi-users-18737-mlx4-fdr-port1-polling" / "input.txt"
    findings = diagnose(load_evidence([path])).findings
    downs = [f for f in findings if f.check == "diagnose.ib-port-down"]
    assert downs and all(f.cause == "fabric.link-down" for f in downs)


def _rows(name: str) -> dict[str, SonicInterfaceStatus]:
    res = case("sonic-interfaces-status", name).parse()
    return {r.interface: r for r in res.of_type(SonicInterfaceStatus)}


def test_status_columns_cut_at_the_dash_groups() -> None:
    rows = _rows("sonic-mgmt-11237-7260cx3-ethernet0-oper-down")
    e0 = rows["Ethernet0"]
    assert (e0.lanes, e0.speed_gbps, e0.mtu_bytes, e0.fec) == ("77,78", 50.0, 9100, "rs")
    assert (e0.alias, e0.vlan, e0.oper, e0.admin) == ("Ethernet1/1", "trunk", "down", "up")
    assert e0.port_type == "QSFP28 or later" and e0.asym_pfc == "off"
    assert rows["Ethernet2"].oper_up


def test_2019_layout_without_fec_and_vlan() -> None:
    rows = _rows("sonic-utilities-pr437-asym-pfc-no-fec-no-vlan")
    assert rows["Ethernet0"].asym_pfc == "on" and rows["Ethernet0"].fec is None
    assert rows["Ethernet12"].lanes == "12,13,14,15" and rows["Ethernet12"].speed_gbps == 40.0


def test_mtu_10_is_read() -> None:
    rows = _rows("sonic-utilities-pr1323-mtu-10-truncated")
    assert rows["Ethernet1"].mtu_bytes == 10 and rows["Ethernet2"].mtu_bytes == 9100


def test_a_row_without_its_header_is_read_in_the_modern_order() -> None:
    [row] = _rows("sonic-buildimage-15515-row-only").values()
    assert (row.interface, row.speed_gbps, row.mtu_bytes) == ("Ethernet8", 200.0, 9100)
    assert row.fec == "N/A"
    assert (row.alias, row.vlan, row.oper, row.admin) == ("etp2", "trunk", "up", "up")


def test_switch_port_down_with_a_module_warns_and_an_empty_cage_is_info() -> None:
    text = (
        "  Interface        Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin"
        "             Type    Asym PFC\n"
        "-----------  -----------  -------  -----  -----  -------  ------  ------  -------"
        "  ---------------  ----------\n"
        "  Ethernet0      0,1,2,3     100G   9100     rs     etp1  routed    down       up"
        "  QSFP28 or later         off\n"
        "  Ethernet4      4,5,6,7     100G   9100     rs     etp2  routed    down       up"
        "              N/A         off\n"
        "  Ethernet8    8,9,10,11     100G   9100     rs     etp3  routed      up       up"
        "  QSFP28 or later         off\n"
    )
    rows = parse_text(text).of_type(SonicInterfaceStatus)
    assert [r.interface for r in rows] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    ev = Evidence()
    got = {
        (v.message.split()[0], v.severity)
        for r in rows
        for fn in verdicts_for(r.record_type)
        for v in fn(r, ev)
    }
    assert got == {("Ethernet0", "warning"), ("Ethernet4", "info")}


def test_headerless_ibstatus_tail_is_read_as_ibstatus() -> None:
    # the tail of a port block, its "Infiniband device" line cut off, quoted in a review diff
    from aifabric.evidence.paste import parse_paste  # noqa: PLC0415

    path = FIXTURES.parent / "pastes" / "ibstatus-headerless-diff-tail" / "input.txt"
    parts = [p for p in parse_paste(path.read_text()) if p.result and p.result.records]
    assert [p.kind for p in parts] == ["ibstatus"]
    (port,) = parts[0].result.of_type(IbstatPort)  # type: ignore[union-attr]
    assert (port.ca, port.state, port.physical_state, port.rate_gbps, port.link_layer) == (
        "", "Down", "Disabled", 200.0, "Ethernet")  # fmt: skip
    downs = [f for f in diagnose(load_evidence([path])).findings
             if f.check == "diagnose.ib-port-down"]  # fmt: skip
    assert downs and downs[0].cause == "fabric.link-down"


def test_ibv_devinfo_labels_are_not_headerless_ibstatus() -> None:
    text = "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t3\n"
    assert parse_text(text).kind != "ibstatus"
