"""ibv-devinfo, ibstat, show-gids, iblinkinfo parsers against real captures."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.infiniband import (
    GidCount,
    GidEntry,
    IbLink,
    IbstatCA,
    IbstatPort,
    IbvDevice,
    IbvGid,
    IbvPort,
    gid_ipv4,
    parse_iblinkinfo,
    parse_ibstat,
    parse_ibv_devinfo,
    parse_show_gids,
)
from tests.unit.evidence.fixtures import all_cases, assert_garbage_line_is_one_warning, case, load

KINDS = ("ibv-devinfo", "ibstat", "show-gids", "iblinkinfo")
CASES = [c for c in all_cases() if c.kind in KINDS]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    text = c.text()
    assert detect_kind(text) == c.kind
    res = c.parse()
    assert res.records
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("kind", "name", "after"),
    [
        ("ibv-devinfo", "deepep-55-ib-ndr", 4),
        ("ibv-devinfo", "azhpc-images-pr44-hbv2", 14),
        ("ibstat", "l2fwd-nv-6-cx6dx", 8),
        ("ibstat", "linpack-19a-edr", 12),
        ("show-gids", "nccl-1538-k8s-pod-gid7", 8),
        ("show-gids", "ucx-pr9484-bond-vxlan", 4),
        ("iblinkinfo", "linpack-edr76-sb7700", 10),
        ("iblinkinfo", "linpack-19a-grep-up", 3),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(
    kind: str, name: str, after: int
) -> None:
    assert_garbage_line_is_one_warning(kind, name, after)


# ------------------------------------------------------------------------------ ibv-devinfo


def test_ibv_devinfo_azure_hbv2_truncated() -> None:
    res = load("ibv-devinfo", "azhpc-images-pr44-hbv2")
    devs = res.of_type(IbvDevice)
    ports = res.of_type(IbvPort)
    assert [d.hca_id for d in devs] == ["rdmaP23800p0s2", "ibP57247p0s2"]
    assert devs[0].fw_ver == "14.25.8102"
    assert devs[0].vendor_id == 0x02C9
    assert devs[0].vendor_part_id == 4118
    assert devs[0].board_id == "MSF0010110035"
    assert devs[0].transport == "InfiniBand"
    assert devs[1].vendor_part_id == 4120
    assert devs[1].phys_port_cnt is None
    (p,) = ports
    assert (p.hca_id, p.port, p.state, p.active) == ("rdmaP23800p0s2", 1, "PORT_ACTIVE", True)
    assert (p.max_mtu_bytes, p.active_mtu_bytes) == (4096, 1024)
    assert p.link_layer == "Ethernet"
    assert p.line == 12
    (w,) = res.warnings
    assert w.line == 28
    assert "ibP57247p0s2" in w.message


def test_ibv_devinfo_cx7_roce_then_truncated_cx6dx() -> None:
    res = load("ibv-devinfo", "deepep-38-h100-roce-cx7")
    devs = res.of_type(IbvDevice)
    assert [(d.hca_id, d.fw_ver, d.vendor_part_id) for d in devs] == [
        ("mlx5_2", "28.42.1000", 4129),
        ("mlx5_3", "16.35.4030", None),
    ]
    (p,) = res.of_type(IbvPort)
    assert p.active_mtu_bytes == 4096
    assert p.link_layer == "Ethernet"
    assert p.port_lid == 0
    assert res.warnings[0].line == 22


def test_ibv_devinfo_infiniband_lids() -> None:
    res = load("ibv-devinfo", "deepep-55-ib-ndr")
    (d,) = res.of_type(IbvDevice)
    assert d.board_id == "MT_0000000970"
    assert d.sys_image_guid == "946d:ae03:00f0:0b6a"
    (p,) = res.of_type(IbvPort)
    assert (p.port_lid, p.sm_lid, p.port_lmc) == (1690, 1, 0)
    assert p.link_layer == "InfiniBand"
    assert p.end_line == 18


def test_ibv_devinfo_verbose_flags_and_attrs() -> None:
    res = load("ibv-devinfo", "ompi-pr6137-verbose-tabs")
    (d,) = res.of_type(IbvDevice)
    assert d.hca_id == "mlx5_1"
    assert d.vendor_part_id == 4119
    assert d.attrs["max_qp"] == "262144"
    assert d.attrs["atomic_cap"] == "ATOMIC_HCA (1)"
    assert d.attrs["log atomic arg sizes (mask)"] == "0x8"
    assert d.attrs["device_cap_flags"] == "0xe5721c36"
    caps = d.flags["device_cap_flags"]
    assert caps[0] == "BAD_PKEY_CNTR"
    assert "XRC" in caps
    assert caps[-1] == "Unknown flags: 0xe5620000"
    assert len(caps) == 9
    assert len(d.flags["device_cap_exp_flags"]) == 16
    assert "EXT_SEND NOP" in d.flags["device_cap_exp_flags"]
    assert res.warnings[0].line == 53


def test_ibv_devinfo_verbose_port_rate_and_gids() -> None:
    # Format of ibv_devinfo -v port lines per rdma-core devinfo.c (GID type suffix since
    # rdma-core PR #682); values from the captures in NVIDIA/nccl issue 769.
    text = (
        "hca_id:\tmlx5_bond_0\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n"
        "\t\t\tactive_speed:\t\t25.0 Gbps (32)\n\t\t\tphys_state:\t\tLINK_UP (5)\n"
        "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:feda:1cfb, RoCE v1\n"
        "\t\t\tGID[  3]:\t\t::ffff:200.0.209.6, RoCE v2\n"
    )
    res = parse_ibv_devinfo(text)
    (p,) = res.of_type(IbvPort)
    assert p.rate_gbps == 100.0
    assert p.phys_state == "LINK_UP"
    gids = res.of_type(IbvGid)
    assert [(g.index, g.roce_version, g.ipv4) for g in gids] == [
        (0, 1, None),
        (3, 2, "200.0.209.6"),
    ]
    assert not res.warnings


# ------------------------------------------------------------------------------ ibstat


def test_ibstat_cx7_roce_truncated() -> None:
    res = load("ibstat", "mooncake-1999-cx7-roce")
    cas = res.of_type(IbstatCA)
    assert [c.ca for c in cas] == ["mlx5_0", "mlx5_1", "mlx5_10"]
    assert cas[0].ca_type == "MT4129"
    assert cas[0].firmware_version == "28.39.1002"
    assert cas[2].ca_type == "MT4125"
    ports = res.of_type(IbstatPort)
    assert [(p.ca, p.rate_gbps, p.link_layer, p.active) for p in ports[:2]] == [
        ("mlx5_0", 200.0, "Ethernet", True),
        ("mlx5_1", 200.0, "Ethernet", True),
    ]
    assert ports[1].port_guid == "0x5aa2e1fffedae627"
    last = ports[2]
    assert (last.state, last.physical_state, last.active, last.rate_gbps) == (
        "Down",
        "Disabled",
        False,
        None,
    )
    assert res.warnings[0].line == 45


def test_ibstat_mlx4_dual_port_with_ibwarn_lines() -> None:
    res = load("ibstat", "rdma-core-pr847-mlx4-ibwarn")
    (ca,) = res.of_type(IbstatCA)
    assert (ca.ca, ca.ca_type, ca.num_ports, ca.hardware_version) == ("mlx4_0", "MT4099", 2, "1")
    p1, p2 = res.of_type(IbstatPort)
    assert (p1.port, p1.state, p1.rate_gbps, p1.base_lid, p1.sm_lid) == (1, "Down", 10.0, 38, 13)
    assert p1.capability_mask == "0x02594868"
    assert (p2.port, p2.state, p2.physical_state, p2.rate_gbps, p2.active) == (
        2,
        "Active",
        "LinkUp",
        56.0,
        True,
    )
    assert "port" in res.warnings[0].message


def test_ibstat_cx6dx_complete() -> None:
    res = load("ibstat", "l2fwd-nv-6-cx6dx")
    assert [c.node_guid for c in res.of_type(IbstatCA)] == [
        "0x0c42a103001dd12a",
        "0x0c42a103001dd12b",
    ]
    ports = res.of_type(IbstatPort)
    assert all(p.rate_gbps == 100.0 and p.link_layer == "Ethernet" for p in ports)
    assert ports[0].line == 10


def test_ibstat_truncated_in_second_ca() -> None:
    lines = case("ibstat", "l2fwd-nv-6-cx6dx").text().splitlines()[:25]
    res = parse_ibstat("\n".join(lines))
    assert len(res.warnings) == 1
    assert "mlx5_1" in res.warnings[0].message


def test_ibstat_edr_infiniband() -> None:
    res = load("ibstat", "linpack-19a-edr")
    (p,) = res.of_type(IbstatPort)
    assert (p.rate_gbps, p.base_lid, p.sm_lid, p.lmc) == (100.0, 1, 1, 0)
    assert p.link_layer == "InfiniBand"
    assert p.capability_mask == "0x2651e84a"
    (ca,) = res.of_type(IbstatCA)
    assert (ca.ca_type, ca.firmware_version) == ("MT4115", "12.23.1020")


# ------------------------------------------------------------------------------ show-gids


def test_show_gids_bond_vxlan_spaces() -> None:
    res = load("show-gids", "ucx-pr9484-bond-vxlan")
    gids = res.of_type(GidEntry)
    assert len(gids) == 6
    assert gids[0].link_local and gids[0].ipv4 is None and gids[0].roce_version == 1
    g3 = gids[3]
    assert (g3.device, g3.port, g3.index, g3.ipv4, g3.roce_version, g3.netdev) == (
        "mlx5_bond_0",
        1,
        3,
        "30.153.10.175",
        2,
        "b3.vxlan.30100",
    )
    assert gids[5].netdev == "bond1"
    assert gids[5].gid == "0000:0000:0000:0000:0000:ffff:1e99:0aaf"


def test_show_gids_pod_gid_index_7_is_the_roce_v2_ipv4_gid() -> None:
    res = load("show-gids", "nccl-1538-k8s-pod-gid7")
    gids = res.of_type(GidEntry)
    assert len(gids) == 15
    assert gids[0].index == 4
    v2_ipv4 = {(g.device, g.index) for g in gids if g.roce_version == 2 and g.ipv4}
    assert ("mlx5_0", 7) in v2_ipv4
    assert ("mlx5_3", 7) not in v2_ipv4  # cut off in the paste
    g = next(g for g in gids if (g.device, g.index) == ("mlx5_2", 7))
    assert (g.ipv4, g.netdev) == ("10.156.137.132", "net3")
    assert gids[-1].line == 18


def test_show_gids_indented_paste() -> None:
    res = load("show-gids", "nccl-1131-indented")
    gids = res.of_type(GidEntry)
    assert [g.index for g in gids] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert (gids[7].device, gids[7].ipv4, gids[7].netdev) == ("mlx5_1", "11.0.0.73", "ens2np0")


def test_show_gids_infiniband_port_without_netdev() -> None:
    res = load("show-gids", "hurray0-ib-port-no-netdev")
    gids = res.of_type(GidEntry)
    assert [(g.device, g.index, g.roce_version, g.netdev) for g in gids] == [
        ("mlx5_0", 0, 1, "ens11f0"),
        ("mlx5_0", 1, 2, "ens11f0"),
        ("mlx5_1", 0, 1, None),  # IB port: GID from the port GUID, empty DEV column
    ]
    assert gids[2].gid == "fe80:0000:0000:0000:248a:0703:00b1:bc05" and gids[2].link_local
    assert all(g.ipv4 is None for g in gids)
    (count,) = res.of_type(GidCount)
    assert (count.count, count.rows_seen, count.line) == (3, 3, 7)


def test_show_gids_pasted_in_a_c_comment() -> None:
    res = load("show-gids", "c-header-comment-star-prefix")
    gids = res.of_type(GidEntry)
    assert len(gids) == 12 and gids[0].line == 4
    g = gids[3]
    assert (g.device, g.index, g.ipv4, g.roce_version, g.netdev) == (
        "mlx5_0",
        3,
        "10.110.0.33",
        2,
        "eth05",
    )
    last = gids[-1]
    assert (last.device, last.index, last.ipv4, last.netdev) == (
        "mlx5_2",
        3,
        "26.110.178.29",
        "eth03",
    )
    (count,) = res.of_type(GidCount)
    assert (count.count, count.rows_seen) == (12, 12)


def test_show_gids_count_mismatch_warns() -> None:
    text = case("show-gids", "ucx-pr9484-bond-vxlan").text() + "\nn_gids_found=7\n"
    res = parse_show_gids(text)
    (count,) = res.of_type(GidCount)
    assert (count.count, count.rows_seen) == (7, 6)
    assert len(res.warnings) == 1


def test_gid_ipv4() -> None:
    assert gid_ipv4("0000:0000:0000:0000:0000:ffff:0a9c:8184") == "10.156.129.132"
    assert gid_ipv4("not a gid") is None


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"mlx5_[0-9]{1,2}", fullmatch=True),
            st.integers(1, 2),
            st.integers(0, 255),
            st.ip_addresses(v=4),
            st.sampled_from(["v1", "v2"]),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_show_gids_round_trip(rows: list[tuple[str, int, int, Any, str]]) -> None:
    lines = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV"]
    for dev, port, idx, ip, ver in rows:
        v = int(ip)
        gid = f"0000:0000:0000:0000:0000:ffff:{v >> 16:04x}:{v & 0xFFFF:04x}"
        lines.append(f"{dev}\t{port}\t{idx}\t{gid}\t{ip}  \t{ver}\teth0")
    lines.append(f"n_gids_found={len(rows)}")
    res = parse_show_gids("\n".join(lines))
    assert not res.warnings
    got = [(g.device, g.port, g.index, g.ipv4, g.version) for g in res.of_type(GidEntry)]
    assert got == [(d, p, i, str(ip), ver) for d, p, i, ip, ver in rows]


# ------------------------------------------------------------------------------ iblinkinfo


def test_iblinkinfo_sectioned_edr() -> None:
    res = load("iblinkinfo", "linpack-edr76-sb7700")
    links = res.of_type(IbLink)
    assert len(links) == 20
    ca = links[0]
    assert (ca.node_type, ca.node_name, ca.port_guid, ca.lid, ca.port) == (
        "ca",
        "n02 HCA-1",
        "0xec0d9a03003d62be",
        4,
        1,
    )
    assert (ca.width, ca.lanes, ca.lane_speed_gbps, ca.rate_gbps) == ("4X", 4, 25.78125, 100.0)
    assert (ca.peer_lid, ca.peer_port, ca.peer_name) == (2, 17, "MF0;SB7700:MSB7700/U1")
    switch = links[2:]
    assert all(s.node_guid == "0x506b4b0300820910" for s in switch)
    assert all(s.node_type == "switch" and s.lid == 2 for s in switch)
    down = [s for s in switch if not s.active]
    assert len(down) == 16
    assert (down[0].port, down[0].state, down[0].physical_state) == (1, "Down", "Polling")
    assert down[0].width is None and down[0].peer_lid is None and down[0].peer_name is None
    p17 = switch[16]
    assert (p17.port, p17.peer_lid, p17.peer_port, p17.peer_name) == (17, 4, 1, "n02 HCA-1")


def test_iblinkinfo_grep_up_without_headers() -> None:
    res = load("iblinkinfo", "linpack-19a-grep-up")
    links = res.of_type(IbLink)
    assert len(links) == 6
    assert all(lk.active and lk.rate_gbps == 100.0 for lk in links)
    assert links[0].node_type == "ca" and links[0].port_guid == "0xec0d9a03003d62be"
    sw = links[2]
    assert (sw.node_type, sw.lid, sw.port, sw.peer_name) == (None, 2, 17, "n02 HCA-1")
    assert links[4].peer_name == "mgt mlx5_0"


def test_iblinkinfo_one_line_form_and_fdr10_label() -> None:
    # iblinkinfo -l line layout per infiniband-diags iblinkinfo.c (node GUID and name first).
    line = (
        '0x0002c90200404ad8 "SwitchX -  Mellanox Technologies"      4   18[  ] '
        "==( 4X  10.0 Gbps (FDR10) Active/  LinkUp)==>  0x0002c903000e0b72     15    1[  ] "
        '"exe0002 HCA-1" ( )'
    )
    (lk,) = parse_iblinkinfo(line).of_type(IbLink)
    assert (lk.node_guid, lk.node_name, lk.lid, lk.port) == (
        "0x0002c90200404ad8",
        "SwitchX -  Mellanox Technologies",
        4,
        18,
    )
    assert (lk.speed_label, lk.peer_guid, lk.peer_lid, lk.peer_port) == (
        "FDR10",
        "0x0002c903000e0b72",
        15,
        1,
    )


# ------------------------------------------------------------------------------ robustness


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parsers_never_raise(text: str) -> None:
    for parse in (parse_ibv_devinfo, parse_ibstat, parse_show_gids, parse_iblinkinfo):
        parse(text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "hca_id:",
                "CA 'x'",
                "Port 1:",
                "==(",
                ")==>",
                "DEV PORT INDEX GID",
                "\t\t\tstate: PORT_ACTIVE (4)",
                "port: x",
                "n_gids_found=3",
                '  2    1[  ] ==( 4X 25 Gbps Active/  LinkUp)==> "" ( )',
                "\n",
            ]
        ),
        max_size=30,
    )
)
def test_parsers_never_raise_on_marker_soup(parts: list[str]) -> None:
    text = "\n".join(parts)
    for parse in (parse_ibv_devinfo, parse_ibstat, parse_show_gids, parse_iblinkinfo):
        parse(text)


def test_ibstat_cx7_down_polling_four_space_indent() -> None:
    res = load("ibstat", "gpud-482-cx7-polling")
    assert not res.warnings
    (ca,) = res.of_type(IbstatCA)
    assert (ca.ca, ca.ca_type, ca.firmware_version, ca.node_guid) == (
        "mlx5_10",
        "MT4129",
        "28.39.1002",
        "...",
    )
    (port,) = res.of_type(IbstatPort)
    assert (port.state, port.physical_state, port.active) == ("Down", "Polling", False)
    assert (port.rate_gbps, port.base_lid, port.sm_lid) == (10.0, 868, 334)
    assert (port.link_layer, port.end_line) == ("InfiniBand", 17)


def test_ibstat_linkup_but_state_down_in_pod() -> None:
    res = load("ibstat", "network-operator-249-down-linkup")
    assert not res.warnings
    (ca,) = res.of_type(IbstatCA)
    assert (ca.ca, ca.ca_type, ca.line) == ("mlx5_7", "MT4124", 2)
    (port,) = res.of_type(IbstatPort)
    assert (port.state, port.physical_state, port.active) == ("Down", "LinkUp", False)
    assert (port.rate_gbps, port.base_lid, port.port_guid) == (200.0, 65535, "0x9aecdde4e1e642ba")


def test_ibv_devinfo_verbose_upstream_flags_truncated() -> None:
    res = load("ibv-devinfo", "k8s-rdma-shared-164-verbose-truncated")
    (dev,) = res.of_type(IbvDevice)
    assert (dev.hca_id, dev.vendor_part_id, dev.board_id, dev.fw_ver) == (
        "mlx5_0",
        4117,
        "H3C0010110034",
        "14.29.1016",
    )
    assert dev.attrs["max_qp"] == "262144"
    assert dev.attrs["device_cap_flags"] == "0x25321c36"
    assert dev.flags["device_cap_flags"][0] == "BAD_PKEY_CNTR"
    assert dev.flags["device_cap_flags"][-1] == "XRC"
    assert len(dev.flags["device_cap_flags"]) == 9
    assert not res.of_type(IbvPort)
    (w,) = res.warnings
    assert "0 of 1 port" in w.message


def test_iblinkinfo_hdr_quantum_with_sharp_aggregation_node() -> None:
    res = load("iblinkinfo", "sharp-blog-hdr-quantum-aggregation-node")
    links = res.of_type(IbLink)
    assert len(links) == 17
    an = links[1]
    assert (an.node_type, an.node_name, an.port_guid, an.lid, an.port) == (
        "ca",
        "Mellanox Technologies Aggregation Node",
        "0x0c42a103008982ac",
        4,
        1,
    )
    assert (an.lane_speed_gbps, an.rate_gbps) == (53.125, 200.0)  # 4X HDR
    assert (an.peer_lid, an.peer_port, an.peer_name) == (3, 41, "Quantum Mellanox Technologies")
    sw = [x for x in links if x.node_type == "switch"]
    assert len(sw) == 12
    assert {x.node_guid for x in sw} == {"0x0c42a103008982a4"}
    assert [x.port for x in sw if not x.active] == [5, 6]
    assert (sw[-1].port, sw[-1].peer_lid, sw[-1].peer_name) == (
        41,
        4,
        "Mellanox Technologies Aggregation Node",
    )
    assert (links[-1].node_name, links[-1].lid, links[-1].line) == ("cu02 HCA-1", 17, 24)


def test_iblinkinfo_qdr_dual_port_ca() -> None:
    res = load("iblinkinfo", "ddbms-readme-qdr-dual-port-ca")
    links = res.of_type(IbLink)
    assert len(links) == 27
    p1, p2 = (x for x in links if x.node_name == "teaker-9 HCA-1")
    assert (p1.port_guid, p1.lid, p1.port, p1.peer_port) == ("0xf45214030091ba51", 6, 1, 3)
    assert (p2.port_guid, p2.lid, p2.port, p2.peer_port) == ("0xf45214030091ba52", 4, 2, 14)
    assert (p1.lane_speed_gbps, p1.rate_gbps, p1.width) == (10.0, 40.0, "4X")  # 4X QDR
    sw = [x for x in links if x.node_type == "switch"]
    assert len(sw) == 18 and {x.lid for x in sw} == {2}
    assert [x.port for x in sw if not x.active] == [8, 10, 11, 12, 13, 15, 16, 17, 18]
    assert (sw[13].port, sw[13].peer_lid, sw[13].peer_port, sw[13].peer_name) == (
        14,
        4,
        2,
        "teaker-9 HCA-1",
    )


def test_iblinkinfo_width_glued_to_speed() -> None:
    line = (
        "0x0800380001374198     12    1[  ] ==( 4X10.0 Gbps Active/  LinkUp)==>  3   29[  ] "
        '"BC 36-Port QDR IB Switch" ( )'
    )
    res = parse_iblinkinfo("CA: chivas1010 HCA-1:\n" + line + "\n")
    (link,) = res.of_type(IbLink)
    assert not res.warnings
    assert (link.width, link.lane_speed_gbps, link.peer_lid, link.peer_port) == ("4X", 10.0, 3, 29)


def test_ibstat_of_one_port_prints_its_fields_without_indentation() -> None:
    """``ibstat mlx5_0 1``: infiniband-diags' ``ca_stat`` prints ``CA: 'mlx5_0'``, then
    ``port_dump(port, alone=1)`` the ``Port 1:`` line and the fields with no indentation
    (rdma-core v64.0, infiniband-diags/ibstat.c); also when the CA line was not pasted."""
    from aifabric.evidence import parse_text  # noqa: PLC0415
    from aifabric.evidence.infiniband import IbstatCA, IbstatPort  # noqa: PLC0415

    fields = (
        "Port 1:\nState: Active\nPhysical state: LinkUp\nRate: 100\nBase lid: 1\nLMC: 0\n"
        "SM lid: 1\nCapability mask: 0x2659e848\nPort GUID: 0x0c42a10300ab1234\n"
        "Link layer: InfiniBand\n"
    )
    text = "CA: 'mlx5_0'\n" + fields
    assert detect_kind(text) == "ibstat"
    result = parse_text(text, "ibstat")
    assert [c.ca for c in result.of_type(IbstatCA)] == ["mlx5_0"]
    [port] = result.of_type(IbstatPort)
    assert (port.ca, port.port, port.active, port.rate_gbps, port.link_layer) == (
        "mlx5_0", 1, True, 100.0, "InfiniBand",
    )  # fmt: skip
    assert not result.warnings
    orphan = parse_text(fields, "ibstat")
    assert not orphan.of_type(IbstatCA)
    [p] = orphan.of_type(IbstatPort)
    assert (p.ca, p.port, p.state, p.physical_state) == ("", 1, "Active", "LinkUp")


def test_an_ibstat_port_block_without_its_ca_line() -> None:
    # source: https://github.com/Azure/azhpc-diagnostics/issues/76 (the poster's "..." elisions)
    pad = " " * 16
    text = f"...\nPort 1:\n{pad}State: Down\n{pad}Physical state: Polling\n...\n"
    assert detect_kind(text) == "ibstat"
    (port,) = parse_ibstat(text).of_type(IbstatPort)
    assert (port.port, port.state, port.physical_state) == (1, "Down", "Polling")
