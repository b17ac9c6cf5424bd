"""Switch QoS configs: SONiC config_db, EOS, NX-OS, NVUE, Cumulus traffic.conf → the shared
normalised records (values read by hand from the real captures under tests/fixtures/evidence)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.cumulus_traffic import PortGroup
from aifabric.evidence.nvue import NvueCounter, NvueTableRow
from aifabric.evidence.qos import (
    BufferProfile,
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    PfcWatchdog,
    PortQos,
    QosSetting,
    QueueSchedule,
    TcMap,
    parse_id_list,
    size_to_bytes,
)
from aifabric.evidence.sonic_config import (
    BufferAssignment,
    BufferPool,
    CableLength,
    QueueConfig,
    SonicPort,
)
from tests.unit.evidence.fixtures import case, load

KINDS = ("sonic-config-db", "eos-config", "nxos-config", "nvue", "cumulus-traffic-conf")


def _sans_lines(records: list[Any]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        j = r.to_json()
        j.pop("line")
        j.pop("end_line")
        out.append(j)
    return out


def _insert(text: str, after_line: int, garbage: str) -> str:
    lines = text.split("\n")
    lines.insert(after_line, garbage)
    return "\n".join(lines)


# ---------------------------------------------------------------------------- helpers


def test_size_and_id_list_helpers() -> None:
    assert size_to_bytes("150", "kbytes") == 153600
    assert size_to_bytes("146.48 KB") == 149996  # 146.48 * 1024 = 149995.52
    assert size_to_bytes("1.43 MB") == 1499464  # 1.43 * 1048576 = 1499463.68
    assert size_to_bytes("2000", "segments") is None
    assert parse_id_list("3,4") == (3, 4)
    assert parse_id_list("0-2,5-7") == (0, 1, 2, 5, 6, 7)
    assert parse_id_list("[0, 1, 2]") == (0, 1, 2)
    with pytest.raises(ValueError):
        parse_id_list("banana")


# ---------------------------------------------------------------------------- SONiC


def test_sonic_utilities_t1_buffers() -> None:
    r = load("sonic-config-db", "utilities-qos-reload-t1-buffers")
    assert not r.warnings
    (dscp,) = r.of_type(DscpMap)
    assert dscp.name == "AZURE" and dscp.line == 461
    assert dscp.mapping[3] == 3 and dscp.mapping[4] == 4 and dscp.mapping[26] == 1
    assert dscp.mapping[8] == 0 and dscp.mapping[46] == 5 and dscp.mapping[48] == 6
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.profile == "AZURE_LOSSLESS" and ecn.mode == "ecn_all" and ecn.ecn_enabled
    assert ecn.min_bytes == 1048576 and ecn.max_bytes == 2097152 and ecn.probability_pct == 5
    profiles = {p.name: p for p in r.of_type(BufferProfile)}
    egress = profiles["egress_lossless_profile"]
    assert egress.lossless and egress.pool == "egress_lossless_pool"
    assert egress.static_th_bytes == 12766208 and egress.xoff_bytes is None
    assert profiles["egress_lossy_profile"].dynamic_th == 3
    assert profiles["egress_lossy_profile"].size_bytes == 1518
    pgs = [b for b in r.of_type(BufferAssignment) if b.kind == "pg" and b.port == "Ethernet0"]
    assert {(b.ids, b.profile) for b in pgs} == {((0,), "ingress_lossy_profile")}
    cables = {c.port: c.length_m for c in r.of_type(CableLength)}
    assert cables["Ethernet0"] == 300.0 and len(cables) == 32
    assert r.of_type(PortQos) == [] and r.of_type(QueueConfig) == []  # both tables are {}


def test_sonic_voq_linecard_port_qos_and_queues() -> None:
    r = load("sonic-config-db", "arista7800r3a-voq-linecard-qos")
    assert not r.warnings
    qos = {p.scope: p for p in r.of_type(PortQos)}
    assert qos["global"].port is None and qos["global"].maps == {"dscp_to_tc_map": "AZURE"}
    eth8 = qos["Ethernet8"]
    assert eth8.pfc_enable == (3, 4) and eth8.pfcwd_sw_enable == (3, 4)
    assert eth8.maps["tc_to_pg_map"] == "AZURE"
    pfc = {p.port: p.priorities for p in r.of_type(PfcConfig)}
    assert pfc["Ethernet136"] == (3, 4)
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.min_bytes == 2_000_000 and ecn.max_bytes == 10_000_000
    queues = r.of_type(QueueConfig)
    first = queues[0]
    assert first.port == "Ethernet0" and first.queues == (3,)
    assert first.wred_profile == "AZURE_LOSSLESS" and first.key.startswith("str3-7800-lc8-1|asic0|")
    tcpg = next(t for t in r.of_type(TcMap) if t.kind == "tc-to-pg")
    assert tcpg.mapping == {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 0, 6: 0, 7: 7} and tcpg.line == 3
    sched = {s.scheduler: s.weight for s in r.of_type(QueueSchedule)}
    assert sched == {"scheduler.0": 14, "scheduler.1": 15}


def test_sonic_reference_format_and_port_table() -> None:
    r = load("sonic-config-db", "db-migrator-reference-format-3-0-1")
    assert not r.warnings
    qos = {p.port: p for p in r.of_type(PortQos)}
    eth0 = qos["Ethernet0"]
    assert eth0.maps["dscp_to_tc_map"] == "AZURE"  # "[DSCP_TO_TC_MAP|AZURE]"
    assert eth0.pfc_enable == (3, 4)
    pg = next(b for b in r.of_type(BufferAssignment) if b.port == "Ethernet0" and b.ids == (3, 4))
    assert pg.profile == "pg_lossless_100000_40m_profile"
    ports = {p.port: p for p in r.of_type(SonicPort)}
    assert len(ports) == 66
    mtus = {m.port: m for m in r.of_type(Mtu)}
    assert mtus["Ethernet0"].mtu_bytes == ports["Ethernet0"].mtu_bytes
    assert ports["Ethernet0"].speed_gbps is not None
    q = next(x for x in r.of_type(QueueConfig) if x.port == "Ethernet0" and x.queues == (0,))
    assert q.scheduler == "scheduler.0"


def test_sonic_fragment_from_issue() -> None:
    r = load("sonic-config-db", "pfcwd-issue-pfc-json-fragment")
    (pq,) = r.of_type(PortQos)
    assert pq.port == "Ethernet120" and pq.line == 3 and pq.pfc_enable == (0, 1)
    assert pq.maps == {"pfc_to_queue_map": "AZURE", "pfc_to_pg_map": "AZURE"}
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.priorities == (0, 1)  # PFC on two priorities, not the single RoCE one (S12)


def test_sonic_flat_redis_keys() -> None:
    r = load("sonic-config-db", "utilities-mock-tables-flat-redis-keys")
    ports = {p.port: p for p in r.of_type(PortQos)}
    assert len(ports) == 7 and ports["Ethernet-BP256"].pfc_enable == (3, 4)
    assert ports["Ethernet0"].line == 127
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.profile == "AZURE_LOSSLESS" and ecn.line == 335 and ecn.mode == "ecn_all"
    assert ecn.min_bytes == 1048576 and ecn.max_bytes == 2097152 and ecn.probability_pct == 5
    queues = {(q.port, q.queues): q for q in r.of_type(QueueConfig)}
    q1 = queues[("Ethernet4", (1,))]
    assert q1.wred_profile == "AZURE_LOSSLESS" and q1.scheduler == "scheduler.0" and q1.line == 354
    (glob,) = [w for w in r.of_type(PfcWatchdog) if w.port is None]
    assert glob.poll_interval_ms == 199 and glob.line == 123
    pools = {p.name: p for p in r.of_type(BufferPool)}
    assert pools["ingress_lossless_pool_hbm"].size_bytes == 139458240
    assert pools["ingress_lossless_pool_hbm"].mode == "static"


def test_sonic_buffer_only_profile_list() -> None:
    r = load("sonic-config-db", "gcu-buffer-profile-list")
    pools = {p.name: p for p in r.of_type(BufferPool)}
    assert pools["egress_lossless_pool"].xoff_bytes == 196608
    assert pools["egress_lossless_pool"].size_bytes == 33004032
    (port,) = r.of_type(SonicPort)
    assert port.port == "Ethernet9" and port.speed_gbps == 11.1 and port.lanes == (74,)
    assert r.of_type(Mtu) == [] and r.of_type(PortQos) == []


def test_sonic_pasted_with_prompts_around() -> None:
    text = case("sonic-config-db", "pfcwd-issue-pfc-json-fragment").text()
    pasted = "admin@sonic:~$ cat /etc/sonic/pfc.json\n" + text.rstrip() + "\nadmin@sonic:~$ \n"
    r = parse_text(pasted, "sonic-config-db")
    assert not r.warnings
    assert _sans_lines(r.records) == _sans_lines(parse_text(text, "sonic-config-db").records)
    assert [x.line for x in r.records] == [x.line + 1 for x in parse_text(text).records]


def test_sonic_db_dump_wrapped_values() -> None:
    # sonic-db-dump -n CONFIG_DB wraps each hash as {"type": "hash", "value": {...}} (format as
    # in sonic-mgmt tests, which read dump["DEVICE_METADATA|localhost"]["value"], and the SONiC
    # docker-readiness design doc's "sonic-db-dump -n STATE_DB output" example); values are ours
    text = (
        '{\n  "PORT_QOS_MAP|Ethernet0": {\n    "expireat": 1700000000.1, "ttl": -0.001,\n'
        '    "type": "hash",\n    "value": {"pfc_enable": "3,4", "dscp_to_tc_map": "AZURE"}\n  },\n'
        '  "DSCP_TO_TC_MAP|AZURE": {"type": "hash", "value": {"26": "3", "48": "6"}}\n}\n'
    )
    assert detect_kind(text) == "sonic-config-db"
    r = parse_text(text)
    (pq,) = r.of_type(PortQos)
    assert pq.port == "Ethernet0" and pq.pfc_enable == (3, 4) and pq.line == 2
    assert pq.maps == {"dscp_to_tc_map": "AZURE"}
    (dscp,) = r.of_type(DscpMap)
    assert dscp.mapping == {26: 3, 48: 6} and dscp.line == 7


def test_sonic_flat_traditional_lossless_buffers() -> None:
    r = load("sonic-config-db", "utilities-flat-mellanox-traditional-buffers")
    profiles = {p.name: p for p in r.of_type(BufferProfile)}
    p10 = profiles["pg_lossless_10000_5m_profile"]
    assert p10.lossless and p10.xon_bytes == 19456 and p10.xoff_bytes == 22528
    assert p10.dynamic_th == 0 and p10.pool == "ingress_lossless_pool"
    assert profiles["pg_lossless_100000_5m_profile"].xoff_bytes == 23552
    assert not profiles["q_lossy_profile"].lossless
    pgs = {(a.port, a.ids): a for a in r.of_type(BufferAssignment) if a.kind == "pg"}
    assert pgs[("Ethernet4", (3, 4))].profile == "pg_lossless_10000_5m_profile"
    assert pgs[("Ethernet4", (3, 4))].line == 2
    queues = {(a.port, a.ids) for a in r.of_type(BufferAssignment) if a.kind == "queue"}
    assert ("Ethernet24", (5, 6)) in queues and ("Ethernet16", (0, 1, 2)) in queues
    cables = {c.port: c for c in r.of_type(CableLength)}
    assert len(cables) == 8 and cables["Ethernet28"].length_m == 5
    ports = {p.port: p for p in r.of_type(SonicPort)}
    assert ports["Ethernet8"].speed_gbps == 25 and ports["Ethernet8"].fec == "rs"
    assert ports["Ethernet0"].lanes == (0, 1, 2, 3) and ports["Ethernet0"].mtu_bytes == 9100
    assert r.of_type(PortQos) == []


def test_sonic_malformed_json_salvages_tables() -> None:
    c = case("sonic-config-db", "utilities-qos-reload-t1-buffers")
    text = c.text()
    good = parse_text(text, "sonic-config-db")
    lines = text.split("\n")
    at = lines.index('    "CABLE_LENGTH": {')  # 0-based: garbage becomes line at+1
    bad = parse_text(_insert(text, at, "this is not json"), "sonic-config-db")
    assert len(bad.warnings) == 1 and bad.warnings[0].line == at + 1
    assert sorted(map(str, _sans_lines(bad.records))) == sorted(map(str, _sans_lines(good.records)))


def test_sonic_truncated_capture() -> None:
    text = case("sonic-config-db", "utilities-qos-reload-t1-buffers").text()
    cut = "\n".join(text.split("\n")[:470])  # stops inside DSCP_TO_TC_MAP
    r = parse_text(cut, "sonic-config-db")
    assert r.warnings and "malformed JSON" in r.warnings[0].message
    assert r.of_type(BufferProfile)  # tables before the cut survive
    assert not r.of_type(DscpMap)


# ---------------------------------------------------------------------------- EOS


def test_eos_amd_dcqcn_profile() -> None:
    r = load("eos-config", "amd-7388-dcqcn-qos-profile")
    assert not r.warnings
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.scope == "qos profile QOS_ROCE_DCQCN" and pfc.priorities == (3,) and pfc.enabled
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.queue == 3 and ecn.line == 12 and ecn.min_raw == "2000 segments"
    assert ecn.min_bytes is None and ecn.probability_pct == 20 and ecn.weight == 0
    mtus = {m.port: m for m in r.of_type(Mtu)}
    assert mtus["Ethernet2/5/1"].mtu_bytes == 9214 and mtus["Ethernet2/5/1"].speed_gbps == 200
    ports = {p.port: p for p in r.of_type(PortQos)}
    assert ports["Ethernet2/5/5"].maps["service-profile"] == "QOS_ROCE_DCQCN"
    assert ports[None].trust == "dscp"
    (tc_dscp,) = r.of_type(TcMap)
    assert tc_dscp.kind == "tc-to-dscp" and tc_dscp.mapping == {3: 26, 7: 48}
    assert r.of_type(DscpMap) == []


def test_eos_avd_maps() -> None:
    r = load("eos-config", "avd-qos-maps-service-profile")
    assert not r.warnings
    (dscp,) = r.of_type(DscpMap)
    assert (dscp.line, dscp.end_line) == (87, 89)
    assert dscp.mapping[26] == 4 and dscp.mapping[8] == 1 and dscp.mapping[46] == 5
    assert 0 not in dscp.mapping
    maps = {t.kind: t.mapping for t in r.of_type(TcMap)}
    assert maps["cos-to-tc"] == {1: 2, 2: 2, 3: 3, 4: 2}  # second line overrides cos 3
    assert maps["tc-to-queue"] == {6: 2}
    (mtu,) = r.of_type(Mtu)
    assert mtu.port == "Ethernet1" and mtu.mtu_bytes == 1500 and mtu.line == 55
    assert r.of_type(PfcConfig) == [] and r.of_type(EcnConfig) == []
    rewrite = [s for s in r.of_type(QosSetting) if s.key == "qos rewrite"]
    assert rewrite[0].value == "dscp"
    strict = [q for q in r.of_type(QueueSchedule) if q.strict_priority]
    assert [(q.scope, q.queue) for q in strict] == [("qos profile test", 2)]


def test_eos_avd_full_qos_cfg_is_eos_not_nxos() -> None:
    c = case("eos-config", "avd-qos-full-profiles-policy-maps")
    assert detect_kind(c.text()) == "eos-config"  # has 'class-map type qos match-any' too
    r = load("eos-config", "avd-qos-full-profiles-policy-maps")
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.scope == "qos profile test_with_pfc" and pfc.line == 72 and pfc.enabled
    assert pfc.priorities == (0,) and pfc.drop_priorities == (1,)
    ecn = {(e.profile, e.queue): e for e in r.of_type(EcnConfig)}
    ms = ecn[("uc_mc_queues_test", 1)]
    assert ms.line == 85 and ms.min_raw == "3 milliseconds" and ms.min_bytes is None
    assert ms.max_raw == "9 milliseconds" and ms.probability_pct == 90
    assert ecn[("wred_queues_test", 3)].min_bytes == 320 * 1024
    assert ecn[("wred_queues_test", 3)].weight == 10
    assert (
        len(ecn) == 6
    )  # 'random-detect drop' and 'random-detect ecn count' are not ECN thresholds
    wd = {w.line: w for w in r.of_type(PfcWatchdog)}
    assert wd[77].detection_ms == 50 and wd[77].restoration_ms == 1110  # timeout 0.05, 1.11
    assert wd[76].action == "drop" and wd[278].action == "no-drop"
    assert wd[277].poll_interval_ms == 10001 and wd[277].scope == "global"


def test_eos_avd_interfaces_pfc_on_off_drop() -> None:
    r = load("eos-config", "avd-ethernet-interfaces-pfc")
    pfc = {p.port: p for p in r.of_type(PfcConfig)}
    assert pfc["Ethernet1"].drop_priorities == (5,) and pfc["Ethernet1"].priorities == ()
    assert pfc["Ethernet2"].priorities == (5,) and pfc["Ethernet2"].line == 85
    assert pfc["Ethernet3"].enabled is False and pfc["Ethernet3"].line == 117
    assert pfc["Ethernet4"].enabled is True and pfc["Ethernet4"].priorities == ()
    mtus = {m.port: m for m in r.of_type(Mtu)}
    assert mtus["Ethernet1"].mtu_bytes == 1500 and mtus["Ethernet1"].line == 4  # not 'l2 mtu 8000'
    assert mtus["Ethernet1"].speed_gbps == 100  # speed forced 100gfull
    assert mtus["Ethernet4"].mtu_bytes == 9100


def test_eos_platform_sand_qos_map() -> None:
    r = load("eos-config", "avd-platform-sand-qos-map")
    (m,) = r.of_type(TcMap)
    assert m.kind == "tc-to-network-qos" and m.line == 28 and m.mapping == {0: 0, 1: 7, 2: 15}


def test_eos_malformed_line() -> None:
    text = case("eos-config", "amd-7388-dcqcn-qos-profile").text()
    good = parse_text(text, "eos-config")
    bad = parse_text(_insert(text, 3, "qos map dscp banana to traffic-class 3"), "eos-config")
    assert [w.line for w in bad.warnings] == [4]
    assert _sans_lines(bad.records) == _sans_lines(good.records)


# ---------------------------------------------------------------------------- NX-OS


def test_nxos_amd_dcqcn() -> None:
    r = load("nxos-config", "amd-n9364e-dcqcn")
    assert not r.warnings
    (dscp,) = r.of_type(DscpMap)
    assert dscp.name == "QOS_CLASSIFICATION" and dscp.mapping == {26: 3, 48: 7}
    assert dscp.target == "qos-group"
    nq = [p for p in r.of_type(PfcConfig) if p.port is None]
    assert nq[0].priorities == (3,) and nq[0].line == 5
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.queue == 3 and ecn.min_bytes == 950 * 1024 and ecn.max_bytes == 3000 * 1024
    assert ecn.probability_pct == 7 and ecn.weight == 0 and ecn.ecn_enabled
    port_pfc = [p for p in r.of_type(PfcConfig) if p.port is not None]
    assert port_pfc[0].port == "Ethernet1/1/1 - 2" and port_pfc[0].mode == "on"
    wd = r.records[[x.record_type for x in r.records].index("pfc-watchdog")]
    assert wd.enabled and wd.line == 46
    q7 = next(q for q in r.of_type(QueueSchedule) if q.queue == 7)
    assert q7.strict_priority and q7.priority_level == 1
    system = next(p for p in r.of_type(PortQos) if p.scope == "system qos")
    assert system.maps["type network-qos"] == "qos_network"


def test_nxos_azure_local_cos_classification() -> None:
    r = load("nxos-config", "azure-local-storage-qos")
    assert not r.warnings
    assert r.of_type(DscpMap) == []
    (cos,) = r.of_type(TcMap)
    assert cos.kind == "cos-to-qos-group" and cos.mapping == {3: 3, 7: 7}
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.min_bytes == ecn.max_bytes == 307200 and ecn.probability_pct == 100
    mtus = [m for m in r.of_type(Mtu)]
    assert {m.mtu_bytes for m in mtus} == {9216} and mtus[-1].port == "Ethernet1/17"
    port_pfc = next(p for p in r.of_type(PfcConfig) if p.port == "Ethernet1/17")
    assert port_pfc.mode == "on send-tlv" and port_pfc.line == 48
    assert not [x for x in r.records if x.record_type == "pfc-watchdog"]


def test_nxos_malformed_line() -> None:
    text = case("nxos-config", "amd-n9364e-dcqcn").text()
    good = parse_text(text, "nxos-config")
    bad = parse_text(_insert(text, 9, "  match dscp banana"), "nxos-config")
    assert [w.line for w in bad.warnings] == [10]
    assert _sans_lines(bad.records) == _sans_lines(good.records)


def test_nxos_flat_n3132_user_classes_resolved_by_qos_group() -> None:
    r = load("nxos-config", "n3132-rdma-flat-msdocs")
    assert not r.warnings
    (cos,) = r.of_type(TcMap)
    assert (cos.kind, cos.name, cos.mapping, cos.line) == (
        "cos-to-qos-group",
        "QOS_MARKING",
        {3: 3},
        5,
    )
    (pfc,) = r.of_type(PfcConfig)
    # 'class type network-qos RDMA' has no q<N> suffix: its class-map says 'match qos-group 3'
    assert pfc.scope == "policy-map QOS_NETWORK class RDMA" and pfc.priorities == (3,)
    assert (pfc.mode, pfc.line) == ("no-drop", 19)
    mtus = {m.scope.rsplit(" ", 1)[-1]: m.mtu_bytes for m in r.of_type(Mtu)}
    assert mtus == {"RDMA": 2240, "class-default": 9216}
    sched = {q.queue: q.bandwidth_pct for q in r.of_type(QueueSchedule)}
    assert sched == {3: 50.0, 0: 50.0}
    (system,) = r.of_type(PortQos)
    assert system.scope == "system qos" and system.maps["type network-qos"] == "QOS_NETWORK"
    assert system.maps["type queuing output"] == "QOS_QUEUEING" and system.line == 22


def test_nxos_indented_blog_network_qos() -> None:
    r = load("nxos-config", "n5k-fcoe-network-qos-blog")
    assert not r.warnings
    mtu = {m.scope: (m.mtu_bytes, m.line) for m in r.of_type(Mtu)}
    assert mtu["policy-map system-level-net-qos class class-platinum"] == (9216, 4)
    assert mtu["policy-map system-level-net-qos class class-fcoe"] == (2158, 7)
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.mode == "no-drop" and pfc.line == 6 and pfc.priorities == ()


# ---------------------------------------------------------------------------- NVUE


def test_nvue_show_qos_roce() -> None:
    r = load("nvue", "show-qos-roce")
    assert not r.warnings
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.min_raw == "146.48 KB" and ecn.min_bytes == 149996
    assert ecn.max_bytes == 1499464 and ecn.probability_pct == 100 and ecn.mode == "ECN"
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.priorities == (3,) and pfc.rx_enabled and pfc.tx_enabled and pfc.line == 17
    (dscp,) = r.of_type(DscpMap)
    assert dscp.mapping[26] == 3 and dscp.mapping[48] == 6 and len(dscp.mapping) == 64
    sp_tc = next(t for t in r.of_type(TcMap) if t.kind == "switch-priority-to-tc")
    assert sp_tc.mapping[3] == 3 and sp_tc.mapping[6] == 6 and sp_tc.mapping[4] == 0
    mode = next(s for s in r.of_type(QosSetting) if s.key == "mode")
    assert mode.value == "lossless"
    enable = next(s for s in r.of_type(QosSetting) if s.key == "enable")
    assert enable.value == "on"  # only in the applied column


def test_nvue_interface_status_and_counters() -> None:
    r = load("nvue", "show-interface-roce-status")
    (dscp,) = r.of_type(DscpMap)
    assert dscp.scope == "swp16" and dscp.mapping == {26: 3, 48: 6}
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.port == "swp16" and ecn.min_bytes == 156672 and ecn.mode == "ecn, absolute"
    c = load("nvue", "show-interface-roce-counters")
    counters = {x.path: x for x in c.of_type(NvueCounter)}
    drop = counters["tx-stats.tx-roce-stats.unicast-no-buffer-discard"]
    assert drop.value == 663060754115 and drop.line == 45
    assert counters["tx-stats.tx-ecn-stats.ecn-marked-packets"].value == 693777677344
    assert counters["rx-stats.rx-non-roce-stats.buffer-max-usage"].value_bytes == 144
    assert counters["tx-stats.tx-roce-stats.buffer-usage"].value_bytes == round(7.29 * 1024**2)


def test_nvue_lossy_multi_tc_dash_cells() -> None:
    r = load("nvue", "show-qos-roce-lossy-multi-tc")
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.line == 7 and pfc.priorities == () and pfc.enabled is False  # 'pfc-priority  -'
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.min_raw == "163.00 KB" and ecn.min_bytes == 163 * 1024
    assert ecn.max_bytes == 234 * 1024 and ecn.probability_pct == 5
    assert ecn.extra["enabled-tc"] == "1,2,3"
    (dscp,) = r.of_type(DscpMap)
    assert len(dscp.mapping) == 64 and dscp.mapping[26] == 4 and dscp.mapping[5] == 3
    assert dscp.mapping[41] == 0 and 5 not in dscp.mapping.values()
    pcp = next(t for t in r.of_type(TcMap) if t.kind == "pcp-to-switch-priority")
    assert pcp.mapping[7] == 7 and len(pcp.mapping) == 8
    weights = {q.queue: q.bandwidth_pct for q in r.of_type(QueueSchedule)}
    assert weights[3] == 22 and weights[2] == 18 and weights[7] == 0


def test_nvue_tables_without_blank_lines() -> None:
    r = load("nvue", "show-qos-roce-single-ipool")
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.priorities == (3,) and pfc.line == 7 and pfc.rx_enabled
    settings_ = {s.key: s for s in r.of_type(QosSetting)}
    assert settings_["mode"].value == "lossless-single-ipool"
    assert settings_["pfc.cable-length"].value == "100" and settings_["pfc.cable-length"].line == 10
    assert "RoCE PCP/DSCP->SP mapping configurations" not in settings_
    (dscp,) = r.of_type(DscpMap)
    assert (dscp.line, dscp.end_line) == (27, 34) and dscp.mapping[26] == 3
    sp_tc = next(t for t in r.of_type(TcMap) if t.kind == "switch-priority-to-tc")
    assert sp_tc.mapping == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    pools = [row for row in r.of_type(NvueTableRow) if row.table == "RoCE pool config"]
    assert [p.cells["name"] for p in pools] == [
        "lossy-default-ingress", "lossy-default-egress", "roce-reserved-egress"
    ]  # fmt: skip
    assert pools[2].cells["size"] == "inf" and pools[2].line == 53


def test_nvue_cl50_description_column() -> None:
    r = load("nvue", "show-qos-roce-cl50-description")
    settings_ = {s.key: s for s in r.of_type(QosSetting)}
    assert settings_["cable-length"].value == "100" and settings_["cable-length"].line == 6
    assert settings_["enable"].value == "on"  # applied only; the description is not a value
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.line == 8 and ecn.min_bytes == 149996 and ecn.probability_pct is None
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.priorities == (3,) and pfc.line == 13 and pfc.tx_enabled
    pools = [row for row in r.of_type(NvueTableRow) if row.table == "RoCE pool config"]
    assert [(p.cells["name"], p.cells["size"]) for p in pools][1] == (
        "roce-reserved-ingress",
        "50.0%",
    )
    assert not [row for row in r.of_type(NvueTableRow) if row.table == "Exception List"]


def test_nvue_malformed_line() -> None:
    text = case("nvue", "show-qos-roce").text()
    good = parse_text(text, "nvue")
    bad = parse_text(_insert(text, 8, "  bogus key   with spaces  x"), "nvue")
    assert [w.line for w in bad.warnings] == [9]
    assert _sans_lines(bad.records) == _sans_lines(good.records)


def test_nvue_config_yaml() -> None:
    text = (
        "- set:\n    qos:\n      roce:\n        enable: on\n        mode: lossless\n"
        "    interface:\n      swp1:\n        link:\n          mtu: 9216\n"
    )
    r = parse_text(text, "nvue")
    (mtu,) = r.of_type(Mtu)
    assert mtu.port == "swp1" and mtu.mtu_bytes == 9216 and mtu.line == 9
    assert any(s.key == "qos.roce.mode" and s.value == "lossless" for s in r.of_type(QosSetting))


# ---------------------------------------------------------------------------- Cumulus


def test_cumulus_traffic_conf() -> None:
    r = load("cumulus-traffic-conf", "roce-pfc-ecn-cat")
    assert not r.warnings
    (dscp,) = r.of_type(DscpMap)
    assert dscp.target == "internal-cos" and dscp.mapping[26] == 3 and dscp.mapping[48] == 2
    assert (
        dscp.mapping[0] == 0 and len(dscp.mapping) == 64 and (dscp.line, dscp.end_line) == (8, 15)
    )
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.priorities == (3,) and pfc.internal_cos and pfc.rx_enabled and pfc.line == 30
    assert pfc.enabled is False  # its group is not the one named in pfc.port_group_list
    groups = {(g.feature, g.name): g for g in r.of_type(PortGroup)}
    assert groups[("pfc", "ROCE_PFC")].listed and not groups[("pfc", "ROCE_PFC")].settings
    assert groups[("pfc", "pfc_port_group")].settings["xoff_size"] == "18000"
    (ecn,) = r.of_type(EcnConfig)
    assert ecn.queue == 3 and ecn.min_bytes == 153600 and ecn.max_bytes == 1536000
    assert ecn.extra["queue_is"] == "internal-cos"


def test_cumulus_nclu_excerpt_without_pfc_group_list() -> None:
    r = load("cumulus-traffic-conf", "nclu-storage-optimized-pfc-41")
    assert not r.warnings  # prompt line and '...' elisions skipped
    (pfc,) = r.of_type(PfcConfig)
    assert pfc.scope == "pfc ROCE_PFC (swp1)" and pfc.priorities == (3,) and pfc.line == 4
    assert pfc.enabled is None  # pfc.port_group_list elided from the paste: unknown
    assert (pfc.rx_enabled, pfc.tx_enabled, pfc.internal_cos) == (True, True, True)
    (ecn,) = r.of_type(EcnConfig)
    assert (ecn.min_bytes, ecn.max_bytes, ecn.probability_pct) == (150000, 1500000, 100.0)
    assert ecn.queue == 3 and ecn.ecn_enabled and ecn.extra["listed"] == "true"
    groups = {g.name: g for g in r.of_type(PortGroup)}
    assert groups["ROCE_PFC"].settings["xoff_size"] == "18000" and not groups["ROCE_PFC"].listed


def test_cumulus_malformed_line() -> None:
    text = case("cumulus-traffic-conf", "roce-pfc-ecn-cat").text()
    good = parse_text(text, "cumulus-traffic-conf")
    bad = parse_text(_insert(text, 20, "this line has no equals sign"), "cumulus-traffic-conf")
    assert [w.line for w in bad.warnings] == [21]
    assert _sans_lines(bad.records) == _sans_lines(good.records)


# ---------------------------------------------------------------------------- all kinds


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("sonic-config-db", "utilities-qos-reload-t1-buffers"),
        ("sonic-config-db", "pfcwd-issue-pfc-json-fragment"),
        ("eos-config", "amd-7388-dcqcn-qos-profile"),
        ("eos-config", "avd-qos-maps-service-profile"),
        ("nxos-config", "amd-n9364e-dcqcn"),
        ("nxos-config", "azure-local-storage-qos"),
        ("nxos-config", "n3132-rdma-flat-msdocs"),
        ("nxos-config", "n5k-fcoe-network-qos-blog"),
        ("nvue", "show-qos-roce"),
        ("nvue", "show-interface-roce-counters"),
        ("cumulus-traffic-conf", "roce-pfc-ecn-cat"),
        ("cumulus-traffic-conf", "nclu-storage-optimized-pfc-41"),
    ],
)
def test_detected_without_kind(kind: str, name: str) -> None:
    assert detect_kind(case(kind, name).text()) == kind


def test_eos_vs_nxos_plain_running_config() -> None:
    eos = "! device: leaf1 (DCS-7050CX3-32S, EOS-4.28.3M)\n!\ninterface Ethernet1\n   mtu 9214\n"
    nxos = (
        "!Command: show running-config\nversion 9.3(8)\nfeature lldp\n"
        "interface Ethernet1/1\n  mtu 9216\n"
    )
    assert detect_kind(eos) == "eos-config"
    assert detect_kind(nxos) == "nxos-config"
    assert parse_text(nxos, "nxos-config").of_type(Mtu)[0].mtu_bytes == 9216


_TOKENS = st.sampled_from(
    [
        "interface Ethernet1", "   mtu 9214", "qos map dscp 26 to traffic-class 3",
        "   priority-flow-control priority 3 no-drop", "   tx-queue 3",
        "      random-detect ecn minimum-threshold 1 kbytes maximum-threshold 2 x",
        "policy-map type network-qos X", "  class type network-qos c-8q-nq3",
        "    pause pfc-cos 3", "class-map type qos match-all R", "  match dscp 1-",
        "system qos", "!", "", "{", "}", '"PORT": {', '"Ethernet0": {"mtu": "x"},',
        "traffic.cos_3.priority_source.dscp = [26,", "pfc.port_group_list = [A]",
        "                   operational  applied", "------------------  -----------  --------",
        "  pfc-priority      x", "RoCE PCP/DSCP->SP mapping configurations", "=====",
        "    -  ---  ----", "    0  0    a,b", "- set:", "    qos: [", "\x00\t\x1b",
    ]
)  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(_TOKENS, st.text(max_size=40)), max_size=30))
def test_parsers_never_raise(kind: str, lines: list[str]) -> None:
    result = parse_text("\n".join(lines), kind)
    assert result.kind == kind


def test_nvue_json_after_its_command_line() -> None:
    res = load("nvue", "cumulus-ref-advance-buffer-config-json-prompt")
    assert not res.warnings
    keys = {r.key: r.value for r in res.records if isinstance(r, QosSetting)}
    assert keys["default-global.egress-pool.0.memory-percent"] == "100"
    assert keys["default-global.egress-pool.0.mode"] == "dynamic"
