"""Capture the real tool outputs behind the fabric lab's parser and verdict fixtures (issue 17).

Run as root on a machine with iproute2, iptables, ethtool, iputils-ping, iperf3 and frr::

    .venv/bin/python scripts/capture_lab_fixtures.py [--out tests/fixtures/evidence]

It builds its own network namespaces (prefix ``afx-``, addresses in 10.201.0.0/16 only), makes
each fault with kernel tools, runs the tool an engineer would run, and writes every output as
a fixture ``OUT/<kind>/<case>/input.{txt,json}`` with a ``meta.yaml`` (``origin: captured``, the
exact command in ``source``). Every daemon it starts is stopped by PID and every namespace it
made is deleted in a ``finally``, also when a step fails. Nothing leaves the namespaces.

The tests read numbers from these captures by hand (tests/unit/evidence/test_{iperf3,frr,
netfilter,sysctl}.py, tests/unit/diagnose/test_verdicts_lab.py): a new capture has new numbers.
To look at new outputs without touching the fixtures, give ``--out`` a scratch directory (and
``--only STEP...`` to run some steps); the healthy-baseline retransmission rates it measured are
printed at the end (``stats``).

Topology::

    afx-a (client) a0 ── r0 afx-r (router) r1 ── b0 afx-b (server)
      10.201.1.2/24    10.201.1.1/24     10.201.2.1/24    10.201.2.2/24
    afx-f1 (FRR, AS 65201) f0 ── f0 afx-f2 (FRR, AS 65202)   10.201.9.0/31, numbered eBGP
    afx-u1 (FRR, AS 65211) u0 ── u0 afx-u2 (FRR, AS 65212)   unnumbered eBGP (IPv6 link-local)

Offloads (TSO/GSO/GRO) are off on every veth, as in the lab (one skb = one packet), and every
interface runs MTU 9000 unless a fault changes it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATE = time.strftime("%Y-%m-%d")
WHERE = f"captured on Debian 12 in network namespaces (aifabric issue 17), {DATE}"
PREFIX = "afx-"
NS = ("afx-a", "afx-r", "afx-b", "afx-f1", "afx-f2", "afx-u1", "afx-u2")
B_ADDR = "10.201.2.2"
FRR_BIN = Path("/usr/lib/frr")

_children: list[subprocess.Popen[str]] = []
_pidfiles: list[Path] = []
_stats: dict[str, Any] = {}


# -- running commands --------------------------------------------------------------------------


def sh(argv: list[str], *, check: bool = True, timeout: float = 60) -> str:
    """stdout of ``argv``; with ``check=False`` stdout and stderr interleaved as a terminal
    shows them (a failing tool's messages are part of its capture)."""
    if not check:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, check=False)
        return proc.stdout
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: rc {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def nx(ns: str, *argv: str, check: bool = True, timeout: float = 60) -> str:
    return sh(["ip", "netns", "exec", ns, *argv], check=check, timeout=timeout)


def ipt(ns: str, rule: str) -> None:
    nx(ns, "iptables", "-w", *rule.split())


# -- fixtures ----------------------------------------------------------------------------------


class Saver:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.written: list[str] = []

    def save(
        self, kind: str, case: str, text: str, command: str, notes: str, *, ext: str = "txt",
        warnings: int = 0,
    ) -> None:
        d = self.out / kind / case
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("input.*"):
            old.unlink()
        (d / f"input.{ext}").write_text(text, encoding="utf-8")
        meta: dict[str, Any] = {
            "source": f"{WHERE}: {command}",
            "origin": "captured",
            "notes": " ".join(notes.split()),
        }
        if warnings:
            meta["warnings"] = warnings
        (d / "meta.yaml").write_text(
            yaml.safe_dump(meta, sort_keys=False, width=100), encoding="utf-8"
        )
        self.written.append(f"{kind}/{case}")


# -- topology ----------------------------------------------------------------------------------


def offloads_off(ns: str, iface: str) -> None:
    nx(ns, "ethtool", "-K", iface, "tso", "off", "gso", "off", "gro", "off")


def build_abr() -> None:
    for n in ("afx-a", "afx-r", "afx-b"):
        sh(["ip", "netns", "add", n])
        sh(["ip", "-n", n, "link", "set", "lo", "up"])
    sh(["ip", "link", "add", "a0", "netns", "afx-a", "type", "veth", "peer", "name", "r0",
        "netns", "afx-r"])
    sh(["ip", "link", "add", "r1", "netns", "afx-r", "type", "veth", "peer", "name", "b0",
        "netns", "afx-b"])
    for ns, dev, addr in (("afx-a", "a0", "10.201.1.2/24"), ("afx-r", "r0", "10.201.1.1/24"),
                          ("afx-r", "r1", "10.201.2.1/24"), ("afx-b", "b0", "10.201.2.2/24")):
        sh(["ip", "-n", ns, "link", "set", dev, "mtu", "9000"])
        sh(["ip", "-n", ns, "addr", "add", addr, "dev", dev])
        sh(["ip", "-n", ns, "link", "set", dev, "up"])
        offloads_off(ns, dev)
    sh(["ip", "-n", "afx-a", "route", "add", "default", "via", "10.201.1.1"])
    sh(["ip", "-n", "afx-b", "route", "add", "default", "via", "10.201.2.1"])
    nx("afx-r", "sysctl", "-qw", "net.ipv4.ip_forward=1")
    nx("afx-r", "sysctl", "-qw", "net.ipv4.fib_multipath_hash_seed=1")
    # first packet may wait for ARP: warm the path once
    nx("afx-a", "ping", "-c", "1", "-W", "2", B_ADDR)


def iperf3(client_args: list[str], *, port: int = 5201, server_json: bool = True,
           client_json: bool = True, server_ns: str = "afx-b") -> tuple[str, str, str]:
    """(client output, server output, client command as typed) for one iperf3 run."""
    srv = ["iperf3", "-s", "-1", "-B", B_ADDR, "-p", str(port)] + (["--json"] if server_json
                                                                    else [])
    proc = subprocess.Popen(["ip", "netns", "exec", server_ns, *srv], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    _children.append(proc)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if nx(server_ns, "ss", "-Htln", f"sport = :{port}").strip():
            break
        time.sleep(0.02)
    cli = ["iperf3", "-c", B_ADDR, "-p", str(port), *client_args] + (["--json"] if client_json
                                                                      else [])
    out = nx("afx-a", *cli, check=False, timeout=60)
    try:
        server_out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        server_out, _ = proc.communicate()
    return out, server_out, " ".join(cli)


def tcp_summary(text: str) -> dict[str, Any]:
    d = json.loads(text)
    end = d["end"]
    sent = end["sum_sent"]
    mss = d["start"].get("tcp_mss_default") or 1448
    return {
        "Mbps": round(sent["bits_per_second"] / 1e6, 1),
        "bytes": sent["bytes"],
        "retransmits": sent.get("retransmits"),
        "retx_per_segment_pct": round(100 * sent.get("retransmits", 0) / (sent["bytes"] / mss), 4),
        "intervals_Mbps": [round(i["sum"]["bits_per_second"] / 1e6, 1) for i in d["intervals"]],
    }


# -- FRR ---------------------------------------------------------------------------------------


def frr_start(work: Path, ns: str, name: str, bgpd_conf: str) -> Path:
    d = work / "frr" / name
    d.mkdir(parents=True)
    (d / "zebra.conf").write_text(
        f"hostname {name}\nlog file {d}/zebra.log\nno zebra nexthop kernel enable\n")
    (d / "bgpd.conf").write_text(bgpd_conf.format(d=d))
    shutil.chown(d, "frr", "frr")
    for f in d.iterdir():
        shutil.chown(f, "frr", "frr")
    common = ["-d", "-F", "datacenter", "-P", "0", "-z", f"{d}/zserv.api", "--vty_socket", str(d)]
    for daemon in ("zebra", "bgpd"):
        pidfile = d / f"{daemon}.pid"
        _pidfiles.append(pidfile)
        nx(ns, str(FRR_BIN / daemon), *common, "-i", str(pidfile), "-f", str(d / f"{daemon}.conf"))
        deadline = time.monotonic() + 15
        want = d / "zserv.api" if daemon == "zebra" else pidfile
        while not want.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return d


def vtysh(ns: str, d: Path, *commands: str) -> str:
    argv = ["vtysh", "--vty_socket", str(d)]
    for c in commands:
        argv += ["-c", c]
    return nx(ns, *argv, check=False, timeout=30)


def wait_state(ns: str, d: Path, want_established: bool, timeout: float = 40) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    data: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            data = json.loads(vtysh(ns, d, "show bgp summary json") or "{}")
        except ValueError:
            data = {}
        peers = data.get("ipv4Unicast", {}).get("peers", {})
        states = [p.get("state") for p in peers.values()]
        settled = peers and all((s == "Established") == want_established for s in states)
        if settled and (not want_established or all(p.get("pfxRcd", 0) > 0
                                                    for p in peers.values())):
            return data
        time.sleep(0.5)
    raise RuntimeError(f"{ns}: BGP did not reach established={want_established}: {data}")


BGPD_NUMBERED = """hostname {name}
log file {{d}}/bgpd.log
router bgp {asn}
 bgp router-id {rid}
 no bgp ebgp-requires-policy
 bgp bestpath as-path multipath-relax
 timers bgp 3 9
 neighbor {peer} remote-as {peer_asn}
 address-family ipv4 unicast
  network {net}
  maximum-paths 16
 exit-address-family
"""

BGPD_UNNUMBERED = """hostname {name}
log file {{d}}/bgpd.log
router bgp {asn}
 bgp router-id {rid}
 no bgp ebgp-requires-policy
 bgp bestpath as-path multipath-relax
 timers bgp 3 9
 neighbor u0 interface remote-as external
 address-family ipv4 unicast
  network {net}
  maximum-paths 16
 exit-address-family
"""


# -- the captures ------------------------------------------------------------------------------


def capture_iperf3(s: Saver) -> None:
    healthy = []
    for k in range(3):
        cli, srv, cmd = iperf3(["-t", "3", "-P", "4"])
        healthy.append(tcp_summary(cli))
        if k == 0:
            s.save("iperf3", "lab-tcp-p4-healthy-client", cli, cmd,
                   "iperf3 --json, client side, TCP, 4 streams, 3 s, through one router "
                   "namespace, MTU 9000, offloads off: the healthy baseline.", ext="json")
            s.save("iperf3", "lab-tcp-p4-healthy-server", srv,
                   f"iperf3 -s -1 -B {B_ADDR} -p 5201 --json (server of: {cmd})",
                   "iperf3 --json, server side of the healthy 4-stream TCP run.", ext="json")
    _stats["healthy_tcp_p4"] = healthy

    cli, srv, cmd = iperf3(["-t", "3", "-P", "2", "--dscp", "26"])
    s.save("iperf3", "lab-tcp-p2-dscp26-client", cli, cmd,
           "iperf3 --json, client side, TCP, 2 streams with --dscp 26 (test_start.tos 104 = "
           "26 << 2).", ext="json")

    cli, srv, cmd = iperf3(["-u", "-b", "50M", "-t", "3"])
    s.save("iperf3", "lab-udp-50m-healthy-client", cli, cmd,
           "iperf3 --json, client side, UDP at 50 Mbit/s, healthy: lost_packets 0.", ext="json")
    s.save("iperf3", "lab-udp-50m-healthy-server", srv,
           f"iperf3 -s -1 -B {B_ADDR} -p 5201 --json (server of: {cmd})",
           "iperf3 --json, server side of a healthy UDP run (jitter, lost_packets).", ext="json")

    cli, _, cmd = iperf3(["-t", "3", "-P", "4"], server_json=False, client_json=False)
    s.save("iperf3", "lab-tcp-p4-text-client", cli, cmd,
           "iperf3 plain text, client side, TCP, 4 streams, 3 s: the [ ID] table, [SUM] "
           "lines, sender/receiver summary.")
    cli, srv, cmd = iperf3(["-u", "-b", "20M", "-t", "2"], server_json=False, client_json=False)
    s.save("iperf3", "lab-udp-text-client", cli, cmd,
           "iperf3 plain text, client side, UDP 20 Mbit/s: Jitter and Lost/Total columns.")
    s.save("iperf3", "lab-udp-text-server", srv,
           f"iperf3 -s -1 -B {B_ADDR} -p 5201 (server of: {cmd})",
           "iperf3 plain text, server side of a UDP run (one test, then exit).")

    # a closed port: iperf3 3.12 exits 0 with an "error" key
    cmd = f"iperf3 -c {B_ADDR} -p 5299 -t 2 --json"
    out = nx("afx-a", *cmd.split(), check=False)
    s.save("iperf3", "lab-connection-refused", out, cmd,
           "iperf3 --json to a port where nothing listens: exit status 0, an \"error\" key "
           "(unable to connect to server: Connection refused), no end block.", ext="json")


def capture_loss(s: Saver) -> None:
    rule = "-A FORWARD -m statistic --mode random --probability 0.05 -j DROP"
    ipt("afx-r", rule)
    cli, _, cmd = iperf3(["-t", "3", "-P", "4"])
    _stats["loss5_tcp_p4"] = tcp_summary(cli)
    s.save("iperf3", "lab-tcp-p4-loss-5pct-client", cli, cmd,
           "iperf3 --json, TCP, 4 streams, through a router dropping 5 % of forwarded packets "
           f"at random (iptables {rule}), offloads off: retransmits.", ext="json")
    cli, _, cmd = iperf3(["-u", "-b", "50M", "-t", "3"])
    s.save("iperf3", "lab-udp-50m-loss-5pct-client", cli, cmd,
           f"iperf3 --json, UDP 50 Mbit/s through the 5 % random drop ({rule}): lost_packets.",
           ext="json")
    cmd = f"ping -c 200 -i 0.01 {B_ADDR}"
    out = nx("afx-a", *cmd.split(), check=False)
    s.save("ping", "lab-200-probes-loss-5pct", f"$ {cmd}\n{out}", cmd,
           f"200 small pings through a router dropping 5 % of forwarded packets both ways "
           f"({rule}): partial loss (about 1-(0.95^2) = 9.75 % expected).")
    save = nx("afx-r", "iptables-save", "-c")
    s.save("iptables", "lab-router-statistic-drop-save-c", save, "iptables-save -c",
           f"iptables-save -c on the router after the lossy runs: the random-drop rule "
           f"({rule}) with its [packets:bytes] counters.")
    vnl = nx("afx-r", "iptables", "-vnL", "FORWARD")
    s.save("iptables", "lab-router-statistic-drop-vnL", vnl, "iptables -vnL FORWARD",
           "iptables -vnL FORWARD on the lossy router: the statistic match in the options "
           "column, packet and byte counters.")
    nx("afx-r", "iptables", "-F", "FORWARD")
    ipt("afx-r", "-A FORWARD -m statistic --mode random --probability 0.01 -j DROP")
    cli, _, cmd = iperf3(["-t", "3", "-P", "4"])
    _stats["loss1_tcp_p4"] = tcp_summary(cli)
    s.save("iperf3", "lab-tcp-p4-loss-1pct-client", cli, cmd,
           "iperf3 --json, TCP, 4 streams, through a router dropping 1 % of forwarded packets "
           "(iptables -A FORWARD -m statistic --mode random --probability 0.01 -j DROP).",
           ext="json")
    nx("afx-r", "iptables", "-F", "FORWARD")


def capture_shallow_buffer(s: Saver) -> None:
    steps = [
        "tc qdisc add dev r1 root handle 1: htb default 10",
        "tc class add dev r1 parent 1: classid 1:10 htb rate 200mbit ceil 200mbit quantum 9000",
        "tc qdisc add dev r1 parent 1:10 handle 10: pfifo limit 5",
    ]
    for step in steps:
        nx("afx-r", *step.split())
    cli, _, cmd = iperf3(["-t", "3", "-P", "4"])
    _stats["htb_tcp_p4"] = tcp_summary(cli)
    how = "; ".join(steps)
    s.save("iperf3", "lab-tcp-p4-htb200-pfifo5-client", cli, cmd,
           f"iperf3 --json, TCP, 4 streams through a 200 Mbit/s htb bottleneck with a "
           f"5-packet pfifo on the router's egress ({how}): retransmits from tail drops.",
           ext="json")
    q = nx("afx-r", "tc", "-s", "qdisc", "show")
    s.save("tc", "lab-htb-200mbit-pfifo5-drops", q, "tc -s qdisc show",
           f"tc -s qdisc show on the router after the run ({how}): drops in the pfifo leaf and "
           "the htb root, noqueue on the other veth.")
    c = nx("afx-r", "tc", "-s", "class", "show", "dev", "r1")
    s.save("tc", "lab-htb-200mbit-class-drops", c, "tc -s class show dev r1",
           f"tc -s class show dev r1 after the run ({how}): the htb class with its drops, "
           "lended/borrowed/tokens.")
    nx("afx-r", "tc", "qdisc", "del", "dev", "r1", "root")
    # the lab's rate-scale shaping (tbf at the scaled speed, 50 ms of queue): no drops
    tbf = "tc qdisc add dev r1 root handle 1: tbf rate 400mbit burst 64kb latency 50ms"
    nx("afx-r", *tbf.split())
    cli, _, cmd = iperf3(["-t", "3", "-P", "4"])
    _stats["tbf400_tcp_p4"] = tcp_summary(cli)
    q = nx("afx-r", "tc", "-s", "qdisc", "show")
    s.save("tc", "lab-tbf-400mbit-healthy", q, "tc -s qdisc show",
           f"tc -s qdisc show on the router after a 4-stream iperf3 run through the lab's "
           f"rate-scale shaper ({tbf}): a token bucket with 50 ms of queue, no drops.")
    s.save("iperf3", "lab-tcp-p4-tbf400-healthy-client", cli, cmd,
           f"iperf3 --json, TCP, 4 streams through a 400 Mbit/s token bucket with 50 ms of "
           f"queue ({tbf}), the lab's --rate-scale shaping: healthy, capped at the rate.",
           ext="json")
    nx("afx-r", "tc", "qdisc", "del", "dev", "r1", "root")


def capture_throttle(s: Saver) -> None:
    rule = ("-A FORWARD -p tcp -m hashlimit --hashlimit-above 10mb/s --hashlimit-burst 12mb "
            "--hashlimit-mode srcip,dstip,srcport,dstport --hashlimit-name afxel -j DROP")
    ipt("afx-r", rule)
    cli, _, cmd = iperf3(["-t", "6"])
    _stats["hashlimit_tcp_p1"] = tcp_summary(cli)
    s.save("iperf3", "lab-tcp-hashlimit-10MBps-t6-client", cli, cmd,
           f"iperf3 --json, one TCP stream for 6 s through a per-flow throttle on the router "
           f"(iptables {rule}; mb/s = MiB/s): fast first second(s), then a plateau at 10 MiB/s "
           "= 83.9 Mbit/s.", ext="json")
    save = nx("afx-r", "iptables-save", "-c")
    s.save("iptables", "lab-router-hashlimit-drop-save-c", save, "iptables-save -c",
           f"iptables-save -c on the throttling router ({rule}) after the run: the hashlimit "
           "DROP rule and its counters.")
    nx("afx-r", "iptables", "-F", "FORWARD")
    rule2 = ("-A FORWARD -p tcp -m connbytes --connbytes 1000000: --connbytes-dir original "
             "--connbytes-mode bytes -m hashlimit --hashlimit-above 4883kb/s "
             "--hashlimit-burst 5859kb --hashlimit-mode srcip,dstip,srcport,dstport "
             "--hashlimit-name afxf1 -j DROP")
    ipt("afx-r", rule2)
    cli, _, cmd = iperf3(["-t", "4", "-P", "2"])
    _stats["connbytes_hashlimit_tcp_p2"] = tcp_summary(cli)
    s.save("iperf3", "lab-tcp-p2-connbytes-hashlimit-40M-client", cli, cmd,
           f"iperf3 --json, TCP, 2 streams for 4 s through the lab's throttle fault at 40 "
           f"Mbit/s per flow (iptables {rule2}): flows past 1 MB are capped.", ext="json")
    vnl = nx("afx-r", "iptables", "-vnL", "FORWARD")
    s.save("iptables", "lab-router-connbytes-hashlimit-vnL", vnl, "iptables -vnL FORWARD",
           f"iptables -vnL FORWARD on the router with the lab's throttle rule ({rule2}).")
    nx("afx-r", "iptables", "-F", "FORWARD")


def capture_dscp(s: Saver) -> None:
    ipt("afx-a", "-t mangle -A OUTPUT -p tcp -j DSCP --set-dscp 26")
    out = nx("afx-a", "iptables-save", "-c")
    s.save("iptables", "lab-host-dscp-26-save-c", out, "iptables-save -c",
           "iptables-save -c on a host marking its TCP with DSCP 26 (iptables -t mangle -A "
           "OUTPUT -p tcp -j DSCP --set-dscp 26): printed as --set-dscp 0x1a.")
    nx("afx-a", "iptables", "-t", "mangle", "-F", "OUTPUT")
    ipt("afx-b", "-t mangle -A OUTPUT -p tcp -j DSCP --set-dscp 10")
    out = nx("afx-b", "iptables-save", "-t", "mangle")
    s.save("iptables", "lab-host-dscp-10-save-mangle", out, "iptables-save -t mangle",
           "iptables-save -t mangle on a host marking its TCP with DSCP 10 (iptables -t "
           "mangle -A OUTPUT -p tcp -j DSCP --set-dscp 10): --set-dscp 0x0a.")
    nx("afx-b", "iptables", "-t", "mangle", "-F", "OUTPUT")
    rules = [
        "-t mangle -A OUTPUT -p udp --dport 4791 -j DSCP --set-dscp-class af31",
        "-t mangle -A OUTPUT -p tcp --dport 5201 -j DSCP --set-dscp 26",
        "-t mangle -A POSTROUTING -p tcp --sport 22 -j TOS --set-tos 0x10",
        "-t mangle -A FORWARD -m dscp --dscp 26",
    ]
    for r in rules:
        ipt("afx-a", r)
    nx("afx-a", "ping", "-c", "1", "-W", "1", B_ADDR, check=False)
    iperf3(["-t", "1"])
    how = "; ".join(f"iptables {r}" for r in rules)
    out = nx("afx-a", "iptables", "-t", "mangle", "-vnL")
    s.save("iptables", "lab-host-mangle-vnL", out, "iptables -t mangle -vnL",
           f"iptables -t mangle -vnL on a host with DSCP class, DSCP, TOS targets and a DSCP "
           f"counter rule ({how}), after a short iperf3 run.")
    out = nx("afx-a", "iptables", "-t", "mangle", "-S")
    s.save("iptables", "lab-host-mangle-S", out, "iptables -t mangle -S",
           f"iptables -t mangle -S on the same host ({how}).")
    out = nx("afx-a", "iptables-save", "-c", "-t", "mangle")
    s.save("iptables", "lab-host-mangle-classes-save-c", out, "iptables-save -c -t mangle",
           f"iptables-save -c -t mangle on the same host ({how}): --set-dscp-class af31 is "
           "saved as --set-dscp 0x1a, TOS as --set-tos 0x10/0xff.")
    nx("afx-a", "iptables", "-t", "mangle", "-F")


def capture_sysctl(s: Saver) -> None:
    keys = ["net.ipv4.fib_multipath_hash_policy", "net.ipv4.fib_multipath_hash_seed",
            "net.ipv4.ip_forward"]
    for policy in ("0", "1"):
        nx("afx-r", "sysctl", "-qw", f"net.ipv4.fib_multipath_hash_policy={policy}")
        out = nx("afx-r", "sysctl", *keys)
        s.save("sysctl", f"lab-router-hash-policy-{policy}", out, "sysctl " + " ".join(keys),
               f"sysctl on a forwarding router namespace with fib_multipath_hash_policy "
               f"{policy} ({'L3: addresses only' if policy == '0' else 'L4: 5-tuple'}), seed 1.")
    cmd = "cat /proc/sys/net/ipv4/fib_multipath_hash_policy"
    out = nx("afx-r", *cmd.split())
    s.save("sysctl", "lab-proc-sys-cat-prompt", f"$ {cmd}\n{out}", cmd,
           "cat of one /proc/sys file after a shell prompt naming it (the value alone is "
           "printed: the key comes from the prompt).")
    out = nx("afx-r", "sh", "-c", "grep . /proc/sys/net/ipv4/fib_multipath_*")
    s.save("sysctl", "lab-proc-sys-grep", out, "grep . /proc/sys/net/ipv4/fib_multipath_*",
           "grep . over /proc/sys files: PATH:VALUE per line.")
    out = nx("afx-r", "sysctl", "-a", "--pattern", "^net.ipv4.(fib|ip_|tcp_ecn)")
    s.save("sysctl", "lab-sysctl-a-pattern", out,
           "sysctl -a --pattern '^net.ipv4.(fib|ip_|tcp_ecn)'",
           "sysctl -a filtered by a pattern: the ECMP, forwarding and ECN keys of a router "
           "namespace (tab-separated values such as ip_local_port_range).")
    nx("afx-r", "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1")


def capture_link_down(s: Saver) -> None:
    nx("afx-r", "ip", "link", "set", "r1", "down")
    time.sleep(0.3)
    out = nx("afx-r", "ip", "-s", "-d", "link", "show")
    s.save("ip-link", "lab-veth-admin-down-end", out, "ip -s -d link show",
           "ip -s -d link show in the router namespace after `ip link set r1 down`: r1 has no "
           "UP flag, state DOWN; r0 is healthy.")
    out = nx("afx-b", "ip", "-s", "-d", "link", "show")
    s.save("ip-link", "lab-veth-peer-no-carrier", out, "ip -s -d link show",
           "ip -s -d link show in the namespace of r1's peer (b0) after `ip link set r1 down` "
           "on the other end: b0 is UP with NO-CARRIER, state DOWN.")
    out = nx("afx-b", "ip", "-d", "link", "show", "dev", "b0")
    s.save("ip-link", "lab-veth-peer-no-carrier-d", out, "ip -d link show dev b0",
           "ip -d link show dev b0 (veth details, link-netns) while its peer r1 is down.")
    nx("afx-r", "ip", "link", "set", "r1", "up")
    time.sleep(0.5)
    out = nx("afx-b", "ip", "-s", "-d", "link", "show")
    s.save("ip-link", "lab-veth-healthy", out, "ip -s -d link show",
           "ip -s -d link show in a server namespace with its veth up (LOWER_UP), MTU 9000, "
           "after traffic: the healthy case.")


def capture_mtu(s: Saver) -> None:
    big = f"ping -M do -s 8972 -c 3 -W 1 {B_ADDR}"
    small = f"ping -c 3 -W 1 {B_ADDR}"
    out = nx("afx-a", *big.split(), check=False)
    s.save("ping", "lab-df-8972-healthy-9000", f"$ {big}\n{out}", big,
           "ping -M do -s 8972 across a router, MTU 9000 on every hop: 9000-byte probes pass.")
    nx("afx-r", "ip", "link", "set", "r1", "mtu", "1500")
    out = nx("afx-a", *big.split(), check=False)
    s.save("ping", "lab-df-8972-router-port-mtu-1500", f"$ {big}\n{out}", big,
           "ping -M do -s 8972 when the router's egress port toward the target is at MTU 1500 "
           "(ip link set r1 mtu 1500): Frag needed from the router, then local message too "
           "long; 100 % loss.")
    nx("afx-a", "ip", "route", "flush", "cache")
    nx("afx-r", "ip", "link", "set", "r1", "mtu", "9000")
    nx("afx-b", "ip", "link", "set", "b0", "mtu", "1500")
    out = nx("afx-a", *big.split(), check=False)
    s.save("ping", "lab-df-8972-receiver-mtu-1500-silent", f"$ {big}\n{out}", big,
           "ping -M do -s 8972 when the receiving end of the last link is at MTU 1500 (ip "
           "link set b0 mtu 1500, the router side still 9000): a silent black hole, 100 % "
           "loss and no ICMP error.")
    out = nx("afx-a", *small.split(), check=False)
    s.save("ping", "lab-small-ping-receiver-mtu-1500", f"$ {small}\n{out}", small,
           "small pings to the same target while its port is at MTU 1500: they pass (the "
           "black hole only eats big packets).")
    nx("afx-b", "ip", "link", "set", "b0", "mtu", "9000")


def capture_frr(s: Saver, work: Path) -> None:
    for n in ("afx-f1", "afx-f2", "afx-u1", "afx-u2"):
        sh(["ip", "netns", "add", n])
        sh(["ip", "-n", n, "link", "set", "lo", "up"])
    sh(["ip", "link", "add", "f0", "netns", "afx-f1", "type", "veth", "peer", "name", "f0",
        "netns", "afx-f2"])
    sh(["ip", "link", "add", "u0", "netns", "afx-u1", "type", "veth", "peer", "name", "u0",
        "netns", "afx-u2"])
    for ns, dev, addr, lo in (("afx-f1", "f0", "10.201.9.0/31", "10.201.91.1/24"),
                              ("afx-f2", "f0", "10.201.9.1/31", "10.201.92.1/24"),
                              ("afx-u1", "u0", None, "10.201.93.1/24"),
                              ("afx-u2", "u0", None, "10.201.94.1/24")):
        if addr:
            sh(["ip", "-n", ns, "addr", "add", addr, "dev", dev])
        sh(["ip", "-n", ns, "addr", "add", lo, "dev", "lo"])
        sh(["ip", "-n", ns, "link", "set", dev, "mtu", "9000"])
        sh(["ip", "-n", ns, "link", "set", dev, "up"])
        nx(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    work.chmod(0o755)
    (work / "frr").mkdir()
    (work / "frr").chmod(0o755)
    d1 = frr_start(work, "afx-f1", "f1", BGPD_NUMBERED.format(
        name="f1", asn=65201, rid="10.201.255.1", peer="10.201.9.1", peer_asn=65202,
        net="10.201.91.0/24"))
    d2 = frr_start(work, "afx-f2", "f2", BGPD_NUMBERED.format(
        name="f2", asn=65202, rid="10.201.255.2", peer="10.201.9.0", peer_asn=65201,
        net="10.201.92.0/24"))
    du1 = frr_start(work, "afx-u1", "u1", BGPD_UNNUMBERED.format(
        name="u1", asn=65211, rid="10.201.255.11", net="10.201.93.0/24"))
    frr_start(work, "afx-u2", "u2", BGPD_UNNUMBERED.format(
        name="u2", asn=65212, rid="10.201.255.12", net="10.201.94.0/24"))
    t0 = time.monotonic()
    wait_state("afx-f1", d1, True)
    _stats["bgp_numbered_established_s"] = round(time.monotonic() - t0, 1)
    wait_state("afx-f2", d2, True)
    how = ("FRR 8.4.4 zebra+bgpd in two namespaces (-d -F datacenter -P 0), numbered eBGP "
           "AS 65201 <-> 65202 on 10.201.9.0/31, timers bgp 3 9, one network each")
    s.save("frr-bgp-summary", "lab-numbered-established-json",
           vtysh("afx-f1", d1, "show bgp summary json"), "vtysh -c 'show bgp summary json'",
           f"{how}: f1's view, peer Established with 1 prefix received.", ext="json")
    s.save("frr-bgp-summary", "lab-numbered-established-text",
           vtysh("afx-f1", d1, "show bgp summary"), "vtysh -c 'show bgp summary'",
           f"{how}: the plain-text summary table of f1.")
    s.save("frr-bgp-summary", "lab-ip-bgp-summary-json",
           vtysh("afx-f2", d2, "show ip bgp summary json"),
           "vtysh -c 'show ip bgp summary json'",
           f"{how}: `show ip bgp summary json` on f2 (the IPv4 unicast table alone, no "
           "address-family key).", ext="json")
    route = vtysh("afx-f1", d1, "show ip route json")
    _stats["route_json_bytes"] = len(route)
    (Path(tempfile.gettempdir()) / "afx-show-ip-route.json").write_text(route)
    wait_state("afx-u1", du1, True)
    how_u = ("FRR 8.4.4 zebra+bgpd in two namespaces, unnumbered eBGP (neighbor u0 interface "
             "remote-as external, IPv6 link-local), timers bgp 3 9")
    s.save("frr-bgp-summary", "lab-unnumbered-established-json",
           vtysh("afx-u1", du1, "show bgp summary json"), "vtysh -c 'show bgp summary json'",
           f"{how_u}: the peer is keyed by interface (idType interface), hostname u2.",
           ext="json")
    s.save("frr-bgp-summary", "lab-unnumbered-established-text",
           vtysh("afx-u1", du1, "show bgp summary"), "vtysh -c 'show bgp summary'",
           f"{how_u}: the plain-text table, neighbor printed as u2(u0).")
    # Established, but the peer withdraws its only prefix
    vtysh("afx-f2", d2, "configure terminal", "router bgp 65202", "address-family ipv4 unicast",
          "no network 10.201.92.0/24")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        data = json.loads(vtysh("afx-f1", d1, "show bgp summary json") or "{}")
        peer = data.get("ipv4Unicast", {}).get("peers", {}).get("10.201.9.1", {})
        if peer.get("state") == "Established" and peer.get("pfxRcd") == 0:
            break
        time.sleep(0.3)
    s.save("frr-bgp-summary", "lab-established-zero-prefixes-json",
           vtysh("afx-f1", d1, "show bgp summary json"), "vtysh -c 'show bgp summary json'",
           f"{how}, after f2 withdrew its network (no network 10.201.92.0/24): f1's peer is "
           "Established with pfxRcd 0.", ext="json")
    s.save("frr-bgp-summary", "lab-established-zero-prefixes-text",
           vtysh("afx-f1", d1, "show bgp summary"), "vtysh -c 'show bgp summary'",
           f"{how}, after f2 withdrew its network: State/PfxRcd 0 in the text table.")
    # silent failure: TCP 179 dropped on f1, the hold timer (9 s) expires
    for port in ("--dport", "--sport"):
        ipt("afx-f1", f"-A INPUT -p tcp {port} 179 -j DROP")
    t0 = time.monotonic()
    wait_state("afx-f1", d1, False, timeout=30)
    _stats["bgp_hold_expired_s"] = round(time.monotonic() - t0, 1)
    time.sleep(1.0)
    drop = ("iptables -A INPUT -p tcp --dport 179 -j DROP; "
            "iptables -A INPUT -p tcp --sport 179 -j DROP")
    s.save("frr-bgp-summary", "lab-hold-expired-json",
           vtysh("afx-f1", d1, "show bgp summary json"), "vtysh -c 'show bgp summary json'",
           f"{how}, after `{drop}` on f1 and the 9 s hold timer: f1's peer is not Established "
           "(connectionsDropped 1).", ext="json")
    s.save("frr-bgp-summary", "lab-hold-expired-text",
           vtysh("afx-f1", d1, "show bgp summary"), "vtysh -c 'show bgp summary'",
           f"{how}, after `{drop}` on f1: the text table with the state in State/PfxRcd.")
    s.save("frr-bgp-summary", "lab-hold-expired-peer-side-json",
           vtysh("afx-f2", d2, "show bgp summary json"), "vtysh -c 'show bgp summary json'",
           f"{how}, one second after f1's hold timer expired (`{drop}` on f1 only): f2 "
           "still shows the session Established (its own hold timer has not run out: f1's "
           "outgoing keepalives still reach it).",
           ext="json")


# -- cleanup -----------------------------------------------------------------------------------


def cleanup() -> None:
    for proc in _children:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    pids = []
    for pf in _pidfiles:
        try:
            pids.append(int(pf.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if Path(f"/proc/{pid}/status").exists():
            state = Path(f"/proc/{pid}/status").read_text()
            if "zombie" not in state:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    existing = sh(["ip", "netns", "list"], check=False)
    for ns in NS:
        if any(line.split()[:1] == [ns] for line in existing.splitlines()):
            sh(["ip", "netns", "del", ns], check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "evidence")
    ap.add_argument("--only", nargs="*", default=None,
                    help="run only these steps: iperf3 loss shallow throttle dscp sysctl "
                    "linkdown mtu frr")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 3
    taken = [n for n in NS if n in sh(["ip", "netns", "list"], check=False).split()]
    if taken:
        print(f"namespaces already exist: {taken}; remove them first", file=sys.stderr)
        return 2
    s = Saver(args.out)
    work = Path(tempfile.mkdtemp(prefix="afx-frr-"))
    steps = {
        "iperf3": lambda: capture_iperf3(s),
        "loss": lambda: capture_loss(s),
        "shallow": lambda: capture_shallow_buffer(s),
        "throttle": lambda: capture_throttle(s),
        "dscp": lambda: capture_dscp(s),
        "sysctl": lambda: capture_sysctl(s),
        "linkdown": lambda: capture_link_down(s),
        "mtu": lambda: capture_mtu(s),
        "frr": lambda: capture_frr(s, work),
    }
    try:
        build_abr()
        for name, fn in steps.items():
            if args.only is None or name in args.only:
                t = time.monotonic()
                fn()
                print(f"{name}: {time.monotonic() - t:.1f} s", file=sys.stderr)
    finally:
        cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"written": s.written, "stats": _stats}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
