"""Record verdicts of checks/diagnose/verdicts_lab.py (and the ip-link and ping verdicts they
extend) on real captures: each fires on its faulty capture with the computed numbers, and says
nothing on the healthy ones.

The captures are the parser fixtures made by scripts/capture_lab_fixtures.py in network
namespaces (one fault at a time: a random drop, a 5-packet queue behind a 200 Mbit/s shaper, a
per-flow hashlimit, a port set down, an MTU of 1500 on one end, TCP 179 dropped, a DSCP rule),
plus public iperf3 and FRR captures. Bundles are built as ``aifabric diagnose`` reads them:
``DIR/<subject>/<file>``, loaded with :func:`load_evidence`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose.engine import Evidence
from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts, verdicts_for
from aifabric.checks.diagnose.verdicts_lab import (
    RETRANSMIT_RATE,
    linux_ifname,
    retransmit_rate,
    roce_marking,
    throttle,
)
from aifabric.evidence import parse_text
from aifabric.evidence.iperf3 import Iperf3Run
from aifabric.model import Fabric
from tests.unit.diagnose.verdict_helpers import only, problems
from tests.unit.evidence.fixtures import case, load

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EVIDENCE = FIXTURES / "evidence"


def _input(kind: str, name: str) -> Path:
    (path,) = sorted((EVIDENCE / kind / name).glob("input.*"))
    return path


def _bundle(tmp_path: Path, layout: dict[str, list[tuple[str, str]]]) -> Path:
    """``DIR/<subject>/<kind>-<case>.<ext>`` for each (kind, case) of each subject."""
    root = tmp_path / "bundle"
    for subject, captures in layout.items():
        d = root / subject
        d.mkdir(parents=True)
        for kind, name in captures:
            src = _input(kind, name)
            shutil.copy(src, d / f"{kind}-{name}{src.suffix}")
    return root


def _verdicts(ev: Evidence) -> list[tuple[str, Verdict]]:
    """(subject, verdict) for every record of ``ev``."""
    out = []
    for item in ev.items:
        for fn in verdicts_for(item.record.record_type):
            out += [(item.subject, v) for v in fn(item.record, ev)]
    return out


def _of(root: Path, fabric: Fabric | None = None) -> list[tuple[str, Verdict]]:
    return _verdicts(load_evidence([root], fabric=fabric))


def _fixture(kind: str, name: str, tmp_path: Path, subject: str = "node") -> list[Verdict]:
    return [v for _, v in _of(_bundle(tmp_path, {subject: [(kind, name)]}))]




def _fabric(port: str = "nic0") -> Fabric:
    """tests/fixtures/fabrics/two-servers.yaml (gpu1, gpu2 on leaf1, RoCE, DSCP 26), with
    gpu2's port renamed ``port``."""
    data: dict[str, Any] = yaml.safe_load((FIXTURES / "fabrics" / "two-servers.yaml").read_text())
    data["servers"][1]["nics"][0]["ports"][0]["name"] = port
    data["links"][1]["a"] = f"gpu2:{port}"
    return Fabric.model_validate(data)


# -- registration and the shape of every verdict ----------------------------------------------


def test_lab_verdicts_are_registered() -> None:
    table = load_verdicts()
    for rtype in ("bgp_peer", "iperf3_run", "tc", "iptables_rule", "sysctl", "ping_summary"):
        assert any(fn.__module__.endswith("verdicts_lab") for fn in table[rtype]), rtype


def test_new_cause_classes() -> None:
    causes = all_causes()
    for cid in ("fabric.routing", "fabric.middlebox", "fabric.ecmp-hash"):
        assert causes[cid].layer == "fabric"


# -- BGP ----------------------------------------------------------------------------------------


def test_bgp_hold_timer_expired_is_an_error(tmp_path: Path) -> None:
    vs = _fixture("frr-bgp-summary", "lab-hold-expired-json", tmp_path)
    v = only(vs, "diagnose.bgp-session-down")
    assert (v.severity, v.cause) == ("error", "fabric.routing")
    assert v.message == (
        "BGP session to f2 (10.201.9.1) AS 65202 [ipv4Unicast] is Connect for 00:00:01, not "
        "Established, 1 drop(s) after 1 established"
    )
    assert "S20" in v.refs and "hold timer" in v.explanation


def test_bgp_text_table_down_and_frr10_connect(tmp_path: Path) -> None:
    v = only(_fixture("frr-bgp-summary", "lab-hold-expired-text", tmp_path),
              "diagnose.bgp-session-down")
    assert v.severity == "error" and "is Connect" in v.message
    vs = _fixture("frr-bgp-summary", "frr-issue-16238-connect-text", tmp_path / "b")
    v = only(vs, "diagnose.bgp-session-down")
    assert v.message.startswith("BGP session to 1.1.1.1 [IPv4 Unicast] is Connect, not")


def test_bgp_admin_shutdown_is_a_warning(tmp_path: Path) -> None:
    v = only(_fixture("frr-bgp-summary", "frr-pr-7594-idle-admin-json", tmp_path),
              "diagnose.bgp-session-down")
    assert (v.severity, v.cause) == ("warning", "fabric.routing")
    assert "Idle (Admin)" in v.message


def test_bgp_established_without_prefixes(tmp_path: Path) -> None:
    for i, name in enumerate(("lab-established-zero-prefixes-json",
                              "lab-established-zero-prefixes-text")):
        v = only(_fixture("frr-bgp-summary", name, tmp_path / str(i)), "diagnose.bgp-no-prefixes")
        assert (v.severity, v.cause) == ("warning", "fabric.routing")
        assert "Established but 0 prefixes received (1 sent)" in v.message


@pytest.mark.parametrize("name", [
    "lab-numbered-established-json", "lab-numbered-established-text", "lab-ip-bgp-summary-json",
    "lab-unnumbered-established-json", "lab-unnumbered-established-text",
    "lab-hold-expired-peer-side-json",
])  # fmt: skip
def test_bgp_established_sessions_are_silent(name: str, tmp_path: Path) -> None:
    assert _fixture("frr-bgp-summary", name, tmp_path) == []


# -- iperf3 -------------------------------------------------------------------------------------


def _run(name: str) -> Iperf3Run:
    [run] = load("iperf3", name).of_type(Iperf3Run)
    return run


@pytest.mark.parametrize(("name", "rate"), [
    ("lab-tcp-p4-loss-5pct-client", 6873 * 8948 / 1047527424),  # 5.87 %
    ("lab-tcp-p4-loss-1pct-client", 4453 * 8948 / 3774218240),  # 1.06 %
    ("lab-tcp-p4-htb200-pfifo5-client", 3508 * 8948 / 72705908),  # 43.2 %
    ("cloudpilot-wan-omit3-retransmits", 1286 * 1408 / 53739520),  # 3.37 %
])  # fmt: skip
def test_retransmissions_per_segment(name: str, rate: float, tmp_path: Path) -> None:
    got = retransmit_rate(_run(name))
    assert got is not None and got[0] == pytest.approx(rate) and not got[2]
    v = only(_fixture("iperf3", name, tmp_path), "diagnose.iperf3-retransmits")
    assert (v.severity, v.cause) == ("warning", "fabric.packet-loss")
    assert f"({rate:.2%} of segments" in v.message


def test_healthy_runs_stay_under_the_retransmit_threshold(tmp_path: Path) -> None:
    got = retransmit_rate(_run("lab-tcp-p4-healthy-client"))
    assert got is not None and got[0] == pytest.approx(9 * 8948 / 4188274688)  # 0.0019 %
    assert got[0] < RETRANSMIT_RATE / 100
    for i, name in enumerate(("lab-tcp-p4-healthy-client", "lab-tcp-p4-healthy-server",
                              "lab-tcp-p2-dscp26-client", "lab-tcp-p4-tbf400-healthy-client",
                              "lab-tcp-p4-text-client", "lab-udp-50m-healthy-client",
                              "lab-udp-50m-healthy-server", "lab-udp-text-client",
                              "lab-udp-text-server")):
        assert _fixture("iperf3", name, tmp_path / str(i)) == [], name


def test_text_output_without_mss_assumes_1448() -> None:
    got = retransmit_rate(_run("lab-tcp-p4-text-client"))
    assert got is not None and got[1:] == (1448, True)
    assert got[0] == pytest.approx(2 * 1448 / int(3.46 * 2**30))


def test_udp_loss(tmp_path: Path) -> None:
    v = only(_fixture("iperf3", "lab-udp-50m-loss-5pct-client", tmp_path),
              "diagnose.iperf3-udp-loss")
    assert (v.severity, v.cause) == ("warning", "fabric.packet-loss")
    assert "89 of 2095 datagrams lost (4.25 %)" in v.message and "-b 50 Mbit/s" in v.message


def test_iperf3_errors(tmp_path: Path) -> None:
    v = only(_fixture("iperf3", "lab-connection-refused", tmp_path / "a"), "diagnose.iperf3-error")
    assert (v.severity, v.cause) == ("error", "config.firewall")
    assert "Connection refused" in v.message
    v = only(_fixture("iperf3", "cloudpilot-control-socket-closed", tmp_path / "b"),
              "diagnose.iperf3-error")
    assert (v.severity, v.cause) == ("warning", "config.firewall")
    v = only(_fixture("iperf3", "cloudpilot-interrupt-ctrl-c", tmp_path / "c"),
              "diagnose.iperf3-error")
    assert (v.severity, v.cause) == ("info", "application.usage")


def test_a_per_flow_token_bucket_is_a_throttle(tmp_path: Path) -> None:
    """10 MB/s hashlimit: 351.2 Mbit/s in the first second, then 73.4, 83.9, 83.9, 83.9, 83.9."""
    name = "lab-tcp-hashlimit-10MBps-t6-client"
    result = load("iperf3", name)
    t = throttle(result.of_type(Iperf3Run)[0], records=result.records)
    assert t is not None and t.streams == 1 and t.intervals == 6
    assert t.first_gbps[0] * 1000 == pytest.approx(351.2, abs=0.05)
    assert t.plateau_gbps[0] * 1000 == pytest.approx(83.9, abs=0.05)  # the last three intervals
    assert t.share == pytest.approx(0.239, abs=0.001)
    v = only(_fixture("iperf3", name, tmp_path), "diagnose.flow-throttled")
    assert (v.severity, v.cause) == ("warning", "fabric.middlebox")
    assert "fell from 351.2 Mbit/s in the first interval to 83.9 Mbit/s" in v.message
    assert "S17" in v.refs


def test_the_lab_throttle_caps_every_stream(tmp_path: Path) -> None:
    """connbytes 1 MB + hashlimit 40 Mbit/s per flow, 2 streams: 189.8 / 190.8 Mbit/s, then
    41.9, 31.5, 52.4 and 31.5, 41.9, 41.9 (sum 73.4, 73.4, 94.4: flat within 1.29x)."""
    name = "lab-tcp-p2-connbytes-hashlimit-40M-client"
    result = load("iperf3", name)
    t = throttle(result.of_type(Iperf3Run)[0], records=result.records)
    assert t is not None and t.streams == 2
    assert [round(g * 1000, 1) for g in t.first_gbps] == [189.8, 190.8]
    assert [round(g * 1000, 2) for g in t.plateau_gbps] == [41.95, 41.95]  # last two each
    v = only(_fixture("iperf3", name, tmp_path), "diagnose.flow-throttled")
    assert "each of 2 streams fell from 190.3 Mbit/s" in v.message


@pytest.mark.parametrize("name", [
    "lab-tcp-p4-healthy-client", "lab-tcp-p4-loss-5pct-client",
    "lab-tcp-p4-htb200-pfifo5-client", "lab-tcp-p4-tbf400-healthy-client",
    "cloudpilot-wan-omit3-retransmits", "lab-tcp-p4-text-client",
])  # fmt: skip
def test_no_throttle_without_the_pattern(name: str) -> None:
    result = load("iperf3", name)
    assert throttle(result.of_type(Iperf3Run)[0], records=result.records) is None


# -- tc -----------------------------------------------------------------------------------------


def test_shallow_queue_drops(tmp_path: Path) -> None:
    v = only(_fixture("tc", "lab-htb-200mbit-pfifo5-drops", tmp_path / "q"),
              "diagnose.qdisc-drops")
    assert (v.severity, v.cause) == ("warning", "fabric.pfc-congestion")
    assert v.message == (
        "qdisc pfifo 10: on r1 (limit 5p) dropped 3,529 packets of 11,254 (31.4%), overlimits 0"
    )
    v = only(_fixture("tc", "lab-htb-200mbit-class-drops", tmp_path / "c"), "diagnose.qdisc-drops")
    assert v.message.startswith("class htb 1:10 (rate 200Mbit) dropped 3,529 packets")


@pytest.mark.parametrize("name", [
    "lab-tbf-400mbit-healthy", "htb-fq-codel-sqm-scripts-37", "mq-fq-codel-qosmate-65",
    "mqprio-16tc-channel-dcb-go-tc-31",
])  # fmt: skip
def test_no_drops_or_aqm_drops_are_silent(name: str, tmp_path: Path) -> None:
    assert problems(_fixture("tc", name, tmp_path)) == []


# -- ip link: a link whose far end is down --------------------------------------------------------


def test_veth_with_its_peer_down_is_an_error(tmp_path: Path) -> None:
    """r1 set down in afx-r: b0 in afx-b shows NO-CARRIER; ip -d names link-netns afx-r."""
    root = _bundle(tmp_path, {"afx-r": [("ip-link", "lab-veth-admin-down-end")],
                              "afx-b": [("ip-link", "lab-veth-peer-no-carrier")]})
    got = [(s, v) for s, v in _of(root) if v.id == "diagnose.iface-no-carrier"]
    assert [s for s, _ in got] == ["afx-b"]
    v = got[0][1]
    assert (v.severity, v.cause) == ("error", "fabric.link-down")
    assert v.message.endswith(": its peer r1 is administratively down (no UP flag)")


def test_no_carrier_alone_stays_a_warning(tmp_path: Path) -> None:
    v = only(_fixture("ip-link", "lab-veth-peer-no-carrier", tmp_path, "afx-b"),
              "diagnose.iface-no-carrier")
    assert v.severity == "warning"
    for i, name in enumerate(("lab-veth-admin-down-end", "lab-veth-healthy")):
        assert _fixture("ip-link", name, tmp_path / str(i), "afx-r") == []  # admin-down: silent


def test_no_carrier_on_a_cabled_port_is_an_error(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {"gpu2": [("ip-link", "lab-veth-peer-no-carrier")]})
    got = [v for _, v in _of(root, _fabric("b0")) if v.id == "diagnose.iface-no-carrier"]
    assert [(v.severity, v.message.rsplit(": ", 1)[-1]) for v in got] == [
        ("error", "the fabric file cables it to leaf1:Ethernet2")]


def test_linux_ifname_matches_the_lab() -> None:
    assert linux_ifname("Ethernet1/2") == "Ethernet1-2"
    assert linux_ifname("swp1s0:x") == "swp1s0-x"
    assert len(linux_ifname("Ethernet1/1/1/1/1/1")) == 15


# -- ping ---------------------------------------------------------------------------------------


def test_partial_ping_loss(tmp_path: Path) -> None:
    v = only(_fixture("ping", "lab-200-probes-loss-5pct", tmp_path), "diagnose.ping-loss")
    assert (v.severity, v.cause) == ("warning", "fabric.packet-loss")
    assert v.message == "ping 10.201.2.2: 20 of 200 probes lost (10 %), 84-byte packets"


def test_silent_mtu_black_hole_when_small_pings_pass(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {"afx-a": [("ping", "lab-df-8972-receiver-mtu-1500-silent"),
                                        ("ping", "lab-small-ping-receiver-mtu-1500")]})
    vs = [v for _, v in _of(root)]
    v = only(vs, "diagnose.ping-big-packets-lost")
    assert (v.severity, v.cause) == ("error", "fabric.mtu")
    assert v.message == (
        "ping 10.201.2.2: all 3 probes of 9000 bytes lost with no ICMP error, while 3 of 3 "
        "smaller probes (84 bytes) to the same target were answered"
    )
    assert not [x for x in vs if x.id == "diagnose.ping-no-reply"]


def test_silent_loss_without_the_small_ping_is_still_no_reply(tmp_path: Path) -> None:
    v = only(_fixture("ping", "lab-df-8972-receiver-mtu-1500-silent", tmp_path),
              "diagnose.ping-no-reply")
    assert v.cause == "config.firewall"


@pytest.mark.parametrize("name", ["lab-df-8972-healthy-9000", "lab-small-ping-receiver-mtu-1500"])
def test_healthy_pings_are_silent(name: str, tmp_path: Path) -> None:
    assert _fixture("ping", name, tmp_path) == []


# -- netfilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lab-router-statistic-drop-save-c",
                                  "lab-router-statistic-drop-vnL"])
def test_random_drop_rule(name: str, tmp_path: Path) -> None:
    v = only(_fixture("iptables", name, tmp_path), "diagnose.netfilter-random-drop")
    assert (v.severity, v.cause) == ("warning", "fabric.packet-loss")
    assert v.message == (
        "a netfilter rule (filter FORWARD) drops a random 5.0% of the packets it matches "
        "(-m statistic -j DROP); matched 7,617 packets"
    )


def test_per_flow_rate_limit_rules(tmp_path: Path) -> None:
    v = only(_fixture("iptables", "lab-router-hashlimit-drop-save-c", tmp_path / "a"),
              "diagnose.netfilter-rate-limit")
    assert (v.severity, v.cause) == ("warning", "fabric.middlebox")
    assert "drops each flow (per 5-tuple) above 83.9 Mbit/s (10240 KiB/s" in v.message
    v = only(_fixture("iptables", "lab-router-connbytes-hashlimit-vnL", tmp_path / "b"),
              "diagnose.netfilter-rate-limit")
    assert "above 40.0 Mbit/s" in v.message and "carried 1,000,000 bytes" in v.message


def test_one_finding_for_a_rule_repeated_in_several_chains(tmp_path: Path) -> None:
    line = case("iptables", "lab-router-statistic-drop-save-c").text().splitlines()[5]
    text = "\n".join(["*filter", line, line.replace("FORWARD", "INPUT"), "COMMIT"])
    path = tmp_path / "b" / "leaf01" / "iptables-save.txt"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    [v] = [v for _, v in _of(tmp_path / "b")]
    assert v.message.startswith("2 netfilter rules (filter FORWARD, filter INPUT) drop a random")
    assert "matched 15,234 packets" in v.message


def test_dscp_against_the_fabric(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {"gpu1": [("iptables", "lab-host-dscp-10-save-mangle")],
                              "gpu2": [("iptables", "lab-host-dscp-26-save-c")],
                              "leaf1": [("iptables", "lab-host-dscp-10-save-mangle")]})
    got = [(s, v) for s, v in _of(root, _fabric()) if v.cause == "config.qos"]
    assert [(s, v.id, v.severity) for s, v in got] == [("gpu1", "diagnose.dscp-not-roce", "error")]
    assert got[0][1].message == (
        "gpu1 marks its traffic DSCP 10 (OUTPUT -j DSCP), the fabric's RoCE DSCP is 26")


def test_dscp_hosts_compared_without_a_fabric(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {"h1": [("iptables", "lab-host-dscp-26-save-c")],
                              "h2": [("iptables", "lab-host-mangle-classes-save-c")],
                              "h3": [("iptables", "lab-host-dscp-10-save-mangle")]})
    got = [(s, v) for s, v in _of(root) if v.cause == "config.qos"]
    assert [(s, v.id, v.severity) for s, v in got] == [("h3", "diagnose.dscp-differs", "warning")]
    assert "h3 marks its traffic DSCP 10" in got[0][1].message
    assert "2 other host(s) mark DSCP 26" in got[0][1].message


def test_a_later_rule_overrides_the_roce_marking() -> None:
    """The lab's dscp-remark fault: the RoCE marking, then a rule setting DSCP 0 after it."""
    lines = case("iptables", "lab-host-dscp-26-save-c").text().splitlines()
    lines.insert(8, "[0:0] -A OUTPUT -j DSCP --set-dscp 0x00")
    lines[7] = "[0:0] -A OUTPUT -j DSCP --set-dscp 0x1a"
    mark = roce_marking(parse_text("\n".join(lines), "iptables").records)
    assert mark is not None and (mark.set_dscp, mark.line) == (0, 9)
    only_tcp = case("iptables", "lab-host-dscp-26-save-c").text()
    assert roce_marking(parse_text(only_tcp, "iptables").records) is not None  # -p tcp: all TCP


def test_port_specific_marks_are_not_the_roce_marking() -> None:
    """udp 4791 is RoCEv2; tcp 5201 and the TOS on ssh are other traffic."""
    mark = roce_marking(load("iptables", "lab-host-mangle-classes-save-c").records)
    assert mark is not None and (mark.dport, mark.protocol, mark.set_dscp) == ("4791", "udp", 26)


# -- sysctl ---------------------------------------------------------------------------------------


def test_l3_ecmp_hash_on_a_router(tmp_path: Path) -> None:
    v = only(_fixture("sysctl", "lab-router-hash-policy-0", tmp_path, "leaf01"),
              "diagnose.ecmp-hash-l3")
    assert (v.severity, v.cause) == ("warning", "fabric.ecmp-hash")
    assert v.message == (
        "leaf01 hashes IPv4 ECMP on addresses only "
        "(net.ipv4.fib_multipath_hash_policy = 0, and it forwards: ip_forward = 1)"
    )
    assert _fixture("sysctl", "lab-router-hash-policy-1", tmp_path / "b") == []


def test_l3_hash_not_judged_on_servers_or_non_forwarding_hosts(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {"gpu1": [("sysctl", "lab-router-hash-policy-0")],
                              "leaf1": [("sysctl", "lab-router-hash-policy-0")]})
    got = [s for s, v in _of(root, _fabric()) if v.id == "diagnose.ecmp-hash-l3"]
    assert got == ["leaf1"]
    text = "net.ipv4.fib_multipath_hash_policy = 0\nnet.ipv4.ip_forward = 0\n"
    path = tmp_path / "h" / "host" / "sysctl.txt"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert _of(tmp_path / "h") == []


# -- the whole engine on lab bundles --------------------------------------------------------------

HEALTHY = {
    "afx-a": [("iperf3", "lab-tcp-p4-healthy-client"), ("ping", "lab-df-8972-healthy-9000"),
              ("iptables", "lab-host-dscp-26-save-c")],
    "afx-b": [("ip-link", "lab-veth-healthy"), ("iperf3", "lab-udp-50m-healthy-server"),
              ("iptables", "lab-host-mangle-classes-save-c")],
    "afx-r": [("sysctl", "lab-router-hash-policy-1"), ("tc", "lab-tbf-400mbit-healthy"),
              ("frr-bgp-summary", "lab-numbered-established-json")],
}  # fmt: skip


def test_a_healthy_lab_bundle_has_no_error_or_warning(tmp_path: Path) -> None:
    d = diagnose(load_evidence([_bundle(tmp_path, HEALTHY)]))
    assert [f"{f.severity} {f.check}: {f.message}" for f in d.findings
            if f.severity != "info"] == []


def test_a_faulty_lab_bundle_names_each_cause_with_its_layer(tmp_path: Path) -> None:
    root = _bundle(tmp_path, {
        "afx-a": [("iperf3", "lab-tcp-p2-connbytes-hashlimit-40M-client"),
                  ("ping", "lab-df-8972-receiver-mtu-1500-silent"),
                  ("ping", "lab-small-ping-receiver-mtu-1500"),
                  ("iptables", "lab-host-dscp-10-save-mangle")],
        "afx-b": [("iptables", "lab-host-dscp-26-save-c")],
        "afx-c": [("iptables", "lab-host-mangle-classes-save-c")],
        "afx-r": [("sysctl", "lab-router-hash-policy-0"), ("tc", "lab-htb-200mbit-pfifo5-drops"),
                  ("frr-bgp-summary", "lab-hold-expired-json"),
                  ("iptables", "lab-router-statistic-drop-save-c")],
    })  # fmt: skip
    findings = diagnose(load_evidence([root])).findings
    causes = {f.cause for f in findings if f.severity in ("error", "warning")}
    assert {"fabric.middlebox", "fabric.mtu", "config.qos", "fabric.ecmp-hash",
            "fabric.pfc-congestion", "fabric.routing", "fabric.packet-loss"} <= causes
    for f in findings:
        assert f.message.startswith(("Fabric:", "Configuration:", "Host", "Application"))
        if f.cause and f.cause.startswith("fabric."):
            assert f.message.startswith("Fabric:")
