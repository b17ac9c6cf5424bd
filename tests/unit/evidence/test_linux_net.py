"""ip link and tc parsers: real captures and variants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.linux_net import IpLink, TcEntry, parse_ip_link, parse_tc
from tests.unit.evidence.fixtures import case, load


def test_detect_every_fixture() -> None:
    for kind, name in (
        ("ip-link", "old-s-s-eth4-security-onion-437"),
        ("ip-link", "old-s-lo-iproute2-22"),
        ("ip-link", "new-format-bond-backticks-ha-unraid-13"),
        ("ip-link", "ovn-k8s-sriov-pf-vf-mac-vlan"),
        ("ip-link", "ha-unraid-49-tunl0-none-ipip-backtick-prompt"),
        ("tc", "htb-fq-codel-sqm-scripts-37"),
        ("tc", "mq-fq-codel-qosmate-65"),
        ("tc", "mqprio-16tc-channel-dcb-go-tc-31"),
    ):
        assert detect_kind(case(kind, name).text()) == kind, name


def test_ip_s_s_old_format_wrapped_header() -> None:
    res = load("ip-link", "old-s-s-eth4-security-onion-437")
    assert res.warnings == []
    (rec,) = res.records
    assert isinstance(rec, IpLink)
    assert (rec.index, rec.name, rec.mtu_bytes, rec.qdisc) == (6, "eth4", 1500, "mq")
    assert rec.state == "UP" and rec.qlen == 1000  # from the wrapped continuation line
    assert rec.admin_up and rec.carrier and "PROMISC" in rec.flags
    assert rec.mac == "9c:8e:99:53:e3:30"
    c = rec.counters
    assert c["rx_bytes"] == 1361950677217 and c["rx_dropped"] == 179
    assert c["rx_over_errors"] == 47323 and c["multicast"] == 12119074
    assert c["rx_missed_errors"] == 1725828 and c["rx_crc_errors"] == 0
    assert c["tx_heartbeat_errors"] == 0
    assert rec.line == 2 and rec.end_line == 12


def test_ip_s_old_format_loopback() -> None:
    (rec,) = load("ip-link", "old-s-lo-iproute2-22").records
    assert isinstance(rec, IpLink)
    assert (rec.name, rec.mtu_bytes, rec.state, rec.link_type) == (
        "lo",
        65536,
        "UNKNOWN",
        "loopback",
    )
    assert rec.counters["rx_packets"] == 2 and rec.counters["tx_bytes"] == 100


def test_ip_s_new_format_in_backticks() -> None:
    res = load("ip-link", "new-format-bond-backticks-ha-unraid-13")
    assert res.warnings == []
    bond, lo = res.records
    assert isinstance(bond, IpLink) and isinstance(lo, IpLink)
    assert (bond.index, bond.name, bond.mtu_bytes, bond.master) == (10, "bond1", 9000, "br1")
    assert bond.counters["rx_dropped"] == 185979
    assert bond.counters["rx_missed_errors"] == 0
    assert bond.counters["tx_bytes"] == 355853126292 and bond.counters["tx_dropped"] == 1
    assert lo.counters["rx_bytes"] == 247490817 and lo.line == 10


def test_ip_link_garbled_and_truncated() -> None:
    text = case("ip-link", "old-s-s-eth4-security-onion-437").text()
    clean = parse_ip_link(text).records[0]
    lines = text.split("\n")
    lines.insert(4, "    1361950 garbled 0")  # line 5, before the RX header
    res = parse_ip_link("\n".join(lines))
    assert [w.line for w in res.warnings] == [5]
    assert res.records[0].counters == clean.counters  # type: ignore[attr-defined]
    cut = "\n".join(text.split("\n")[:9])  # ends on the "TX: bytes ..." header
    res = parse_ip_link(cut)
    assert [w.line for w in res.warnings] == [9]


def test_ip_link_altname_and_vlan_parent() -> None:
    text = (
        "3: eth0.100@eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP\n"
        "    link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff\n"
        "    altname enp0s3.100\n"
    )
    (rec,) = parse_ip_link(text).records
    assert isinstance(rec, IpLink)
    assert (rec.name, rec.parent, rec.altnames, rec.mtu_bytes) == (
        "eth0.100",
        "eth0",
        ["enp0s3.100"],
        9000,
    )


def test_tc_htb_fq_codel_truncated_last_entry() -> None:
    res = load("tc", "htb-fq-codel-sqm-scripts-37")
    assert [w.line for w in res.warnings] == [16]  # excerpt cut before the last backlog line
    htb, _a, b, c = res.records
    assert isinstance(htb, TcEntry) and isinstance(b, TcEntry) and isinstance(c, TcEntry)
    assert (htb.kind, htb.handle, htb.dev, htb.parent, htb.refcnt) == (
        "htb",
        "1:",
        "eth0.2",
        "root",
        2,
    )
    assert (htb.sent_bytes, htb.sent_packets, htb.dropped, htb.overlimits) == (
        195450545,
        2252952,
        213,
        65672,
    )
    assert htb.backlog_bytes == 0 and htb.backlog_packets == 0 and htb.requeues == 0
    assert (b.parent, b.dropped) == ("1:12", 213)
    assert b.xstats["ecn_mark"] == 1 and b.xstats["new_flow_count"] == 232568
    assert c.backlog_packets is None and c.sent_bytes == 0


def test_tc_mq_fq_codel() -> None:
    res = load("tc", "mq-fq-codel-qosmate-65")
    assert res.warnings == []
    lo, mq, *leaves = res.records
    assert isinstance(mq, TcEntry)
    assert (lo.dev, mq.kind, mq.dropped, mq.requeues) == ("lo", "mq", 28660, 243670)  # type: ignore[attr-defined]
    assert [x.parent for x in leaves] == [":4", ":3", ":2"]  # type: ignore[attr-defined]
    assert sum(x.dropped for x in leaves) == 7051 + 7288 + 6826  # type: ignore[attr-defined]


def test_tc_garbled_line() -> None:
    text = case("tc", "mq-fq-codel-qosmate-65").text()
    clean = parse_tc(text).records
    lines = text.split("\n")
    lines.insert(9, " @@@ garbage @@@")  # line 10, inside the first fq_codel entry
    res = parse_tc("\n".join(lines))
    assert [w.line for w in res.warnings] == [10]
    assert [r.to_json()["sent_bytes"] for r in res.records] == [
        r.to_json()["sent_bytes"] for r in clean
    ]


def test_tc_mqprio_map_queues() -> None:
    text = (
        "qdisc mqprio 8001: root tc 2 map 0 1 2 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        "             queues:(0:1) (2:9) (10:13)\n"
        "             mode:channel\n"
        " Sent 15362 bytes 13 pkt (dropped 0, overlimits 0 requeues 0)\n"
        " backlog 1.5Kb 2p requeues 0\n"
    )
    (rec,) = parse_tc(text).records
    assert isinstance(rec, TcEntry)
    assert rec.num_tc == 2 and rec.prio_tc_map[:3] == [0, 1, 2]
    assert rec.queues == [(0, 1), (2, 9), (10, 13)]
    assert rec.backlog_bytes == 1536 and rec.backlog_raw == "1.5Kb"


def test_tc_mqprio_header_only_16_tcs() -> None:
    res = load("tc", "mqprio-16tc-channel-dcb-go-tc-31")
    assert res.warnings == []
    (rec,) = res.records
    assert isinstance(rec, TcEntry)
    assert (rec.object, rec.kind, rec.handle, rec.dev, rec.parent) == (
        "qdisc",
        "mqprio",
        "8001:",
        "ens785f0",
        "root",
    )
    assert rec.num_tc == 16 and rec.prio_tc_map == list(range(16))
    assert rec.queues[0] == (0, 3) and rec.queues[-1] == (60, 63) and len(rec.queues) == 16
    assert "shaper:dcb" in rec.options and rec.sent_bytes is None
    assert (rec.line, rec.end_line) == (1, 4)


@given(st.text(max_size=400))
@settings(max_examples=150, deadline=None)
def test_never_raises(text: str) -> None:
    parse_ip_link(text)
    parse_tc(text)


def test_ip_link_sriov_vf_lines() -> None:
    res = load("ip-link", "ovn-k8s-sriov-pf-vf-mac-vlan")
    assert res.warnings == []
    (pf,) = res.records
    assert isinstance(pf, IpLink)
    assert (pf.index, pf.name, pf.master, pf.mtu_bytes, pf.mac) == (
        6,
        "enp3s0f0",
        "ovs-system",
        1500,
        "ec:0d:9a:46:9e:84",
    )
    assert (pf.line, pf.end_line) == (2, 7) and pf.details == []
    assert [v["vf"] for v in pf.vfs] == [0, 1, 2, 3]
    assert pf.vfs[0] == {
        "vf": 0,
        "mac": "00:00:00:00:00:00",
        "spoof_checking": "off",
        "link_state": "enable",
        "trust": "off",
        "query_rss": "off",
    }
    assert pf.vfs[3]["mac"] == "fa:16:3e:b9:b8:ce" and pf.vfs[3]["vlan"] == 57
    assert pf.vfs[3]["spoof_checking"] == "on"


def test_ip_link_tunl0_none_ipip_and_backtick_prompt() -> None:
    res = load("ip-link", "ha-unraid-49-tunl0-none-ipip-backtick-prompt")
    assert res.warnings == []
    lo, tunl, eth0 = res.records
    assert isinstance(lo, IpLink) and isinstance(tunl, IpLink) and isinstance(eth0, IpLink)
    assert (lo.index, lo.link_type, lo.mtu_bytes, lo.state) == (1, "loopback", 65536, "UNKNOWN")
    assert (tunl.name, tunl.parent, tunl.flags, tunl.state) == ("tunl0", "NONE", ["NOARP"], "DOWN")
    assert (tunl.link_type, tunl.mac, tunl.qdisc, tunl.mtu_bytes) == ("ipip", None, "noop", 1480)
    assert not tunl.admin_up and eth0.carrier and eth0.master == "br0"
    assert (eth0.line, eth0.end_line, eth0.mac) == (6, 7, "2c:27:d7:f0:d6:59")


def test_ip_link_vf_new_format_and_vf_stats() -> None:
    # iproute2 >= 5.2 prints ``vf N link/ether MAC brd BRD, ...``; with -s each VF gets its own
    # RX/TX rows (lines from the ovn-kubernetes DPU doc and the intel-wired-lan review).
    text = (
        "3: enp2s0f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode "
        "DEFAULT group default qlen 1000\n"
        "    link/ether 10:70:fd:09:81:aa brd ff:ff:ff:ff:ff:ff\n"
        "    RX: bytes  packets  errors  dropped overrun mcast\n"
        "    100        2        0       0       0       0\n"
        "    vf 0  link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff, spoof checking off, "
        "link-state auto, trust off, query_rss off\n"
        "    RX: bytes  packets  mcast   bcast\n"
        "    0          0        0       0\n"
        "    TX: bytes  packets\n"
        "    0          0\n"
    )
    res = parse_ip_link(text)
    assert res.warnings == []
    (pf,) = res.records
    assert isinstance(pf, IpLink)
    assert pf.counters["rx_bytes"] == 100 and "tx_bytes" not in pf.counters
    (vf,) = pf.vfs
    assert vf["vf"] == 0 and vf["mac"] == "00:00:00:00:00:00" and vf["link_state"] == "auto"
    assert vf["rx_bytes"] == 0 and vf["rx_bcast"] == 0 and vf["tx_packets"] == 0


def test_ip_j_s_link_json() -> None:
    # ``ip -details -s -j -p link`` object (gs_usb CAN adapter) as iproute2 prints it.
    text = """[ {
    "ifindex": 9,
    "ifname": "can0",
    "flags": [ "NOARP","UP","LOWER_UP","ECHO" ],
    "mtu": 16,
    "qdisc": "pfifo_fast",
    "operstate": "UP",
    "linkmode": "DEFAULT",
    "group": "default",
    "txqlen": 10,
    "link_type": "can",
    "stats64": {
        "rx": { "bytes": 10755, "packets": 9761, "errors": 0, "dropped": 0,
                "over_errors": 0, "multicast": 0 },
        "tx": { "bytes": 39, "packets": 20, "errors": 0, "dropped": 0,
                "carrier_errors": 0, "collisions": 0 }
    }
} ]"""
    assert detect_kind(text) == "ip-link"
    res = parse_ip_link(text)
    assert res.warnings == []
    (can,) = res.records
    assert isinstance(can, IpLink)
    assert (can.index, can.name, can.mtu_bytes, can.state, can.qlen) == (9, "can0", 16, "UP", 10)
    assert can.flags == ["NOARP", "UP", "LOWER_UP", "ECHO"] and can.carrier
    assert can.counters == {
        "rx_bytes": 10755,
        "rx_packets": 9761,
        "rx_errors": 0,
        "rx_dropped": 0,
        "rx_over_errors": 0,
        "multicast": 0,
        "tx_bytes": 39,
        "tx_packets": 20,
        "tx_errors": 0,
        "tx_dropped": 0,
        "tx_carrier_errors": 0,
        "collisions": 0,
    }
