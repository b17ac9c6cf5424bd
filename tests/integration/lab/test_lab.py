"""The lab for real: namespaces, veths, FRR, kernel ECMP, faults seen with ordinary tools.

Expected values come from the fabric files (link MTUs, ECMP widths counted from the topology)
and from what the kernel and FRR are documented to do, not from what the code printed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.lab.faults import add_fault, clear_faults
from aifabric.lab.frr import bgp_summary, route_widths
from aifabric.lab.lifecycle import lab_down, lab_list, lab_status, lab_up
from aifabric.lab.netns import lab_namespaces
from aifabric.lab.plan import LabPlan
from aifabric.lab.state import lab_dir

from .conftest import EXAMPLES, ROOT, needs_lab, new_name

pytestmark = needs_lab

LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"


def _fabric(path: Path):  # type: ignore[no-untyped-def]
    return load_fabric(path, load_catalog())


def sh(ns: str, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                          timeout=timeout, check=False)


def first_addr(plan: LabPlan, server: str) -> str:
    return plan.gateways[server][0][1].split("/")[0]


def ping_all(plan: LabPlan) -> list[str]:
    """Every server pings every other once; the failures, as 'src -> dst'."""
    servers = [n for n in plan.nodes.values() if n.role == "server"]
    procs = []
    for src in servers:
        targets = " ".join(first_addr(plan, d.name) for d in servers if d is not src)
        script = f"for a in {targets}; do ping -c1 -W2 -q $a >/dev/null || echo $a; done"
        procs.append((src.name, subprocess.Popen(["ip", "netns", "exec", src.ns, "sh", "-c",
                                                  script], stdout=subprocess.PIPE, text=True)))
    failures = []
    for name, proc in procs:
        out, _ = proc.communicate(timeout=120)
        failures += [f"{name} -> {a}" for a in out.split()]
    return failures


# ---------------------------------------------------------------------------------------------
# bring-up


def test_seed_example_scaled_converges_and_every_host_reaches_every_other(lab_name: str) -> None:
    """S7's 1,024-GPU fabric, scaled to 2 servers per leaf: all 16 leaves and 8 spines kept,
    every BGP session up, every leaf has every other leaf's host prefix over all 32 uplinks,
    and every host pings every other (inter-leaf pairs can only go through a spine)."""
    state = lab_up(_fabric(EXAMPLES / "s7-worked-example.yaml"), lab_name)
    plan = state.plan
    assert state.converged is True
    assert plan.kept["switches"] == 24 and plan.kept["servers"] == 32
    status = lab_status(lab_name)
    sessions = status["bgp_sessions"]
    # 16 leaves x 32 uplinks, each a session seen from both ends
    assert sessions["total"] == 2 * 16 * 32 and sessions["established"] == sessions["total"]
    leaf = plan.nodes["leaf01"]
    widths = route_widths(leaf.ns)
    other = [p for n, node in plan.nodes.items() if n != "leaf01" and node.role == "leaf"
             for p in node.originates]
    assert other and all(widths.get(p) == 32 for p in other)
    assert ping_all(plan) == []


def test_unnumbered_bgp_across_two_sites(lab_name: str) -> None:
    """S17 'after': two sites, rail leaves, spines joined by inter-site links, BGP unnumbered
    (IPv6 link-local next hops): converges, and a host in site 1 reaches one in site 2."""
    state = lab_up(_fabric(EXAMPLES / "s17-case-study-after.yaml"), lab_name, bgp="unnumbered")
    assert state.converged is True
    plan = state.plan
    assert all(i.address is None for n in plan.nodes.values() if n.router for i in n.ifaces
               if i.peer in plan.nodes and plan.nodes[i.peer].router)
    a = plan.nodes["site1-srv01"]
    b_addr = first_addr(plan, "site2-srv01")
    res = sh(a.ns, "ping", "-c", "2", "-W", "2", b_addr)
    assert res.returncode == 0, res.stdout


def test_static_routing_through_a_routed_firewall(lab_name: str) -> None:
    """S17 'before' with kernel multipath routes (no FRR): access -> agg over 2 parallel links,
    core -> firewall -> core between the sites; the firewall's per-session limit becomes a
    throttle fault recorded with origin 'fabric'."""
    state = lab_up(_fabric(EXAMPLES / "s17-case-study-before.yaml"), lab_name, routing="static")
    plan = state.plan
    assert state.converged is True
    access = plan.nodes["a-access1"]
    remote = plan.nodes["b-access1"].originates[0]
    assert route_widths(access.ns)[remote] == 2  # Ethernet31 and Ethernet32 to a-agg1
    assert [f["kind"] for f in state.faults] == ["throttle"]
    assert state.faults[0]["origin"] == "fabric" and state.faults[0]["node"] == "fw1"
    assert ping_all(plan) == []


# ---------------------------------------------------------------------------------------------
# faults on one small lab (2 spines x 2 leaves, 2 links per leaf-spine pair)


@pytest.fixture(scope="module")
def lab2() -> Iterator[LabPlan]:
    name = new_name("f")
    try:
        state = lab_up(_fabric(LAB_2X2), name)
        assert state.converged is True
        yield state.plan
    finally:
        lab_down(name)


@pytest.fixture
def clean(lab2: LabPlan) -> Iterator[LabPlan]:
    try:
        yield lab2
    finally:
        clear_faults(lab2.name)


def link_ends(plan: LabPlan, a: str, b: str) -> tuple[str, str, str, str]:
    """(a iface, a address, b iface, b address) of the first link between a and b."""
    ia = next(i for i in plan.nodes[a].ifaces if i.peer == b)
    ib = next(i for i in plan.nodes[b].ifaces if i.name == ia.peer_iface)
    assert ia.address and ib.address
    return ia.name, ia.address.split("/")[0], ib.name, ib.address.split("/")[0]


def ping_df(plan: LabPlan, node: str, iface: str, dst: str, size: int) -> bool:
    res = sh(plan.nodes[node].ns, "ping", "-M", "do", "-s", str(size), "-c", "2", "-i", "0.2",
             "-W", "1", "-I", iface, dst)
    return res.returncode == 0


def test_mtu_mismatch_breaks_jumbo_ping_only_across_that_link(clean: LabPlan) -> None:
    """S11: with one spine port left at 1500, `ping -M do -s 9188` (9216 - 28) fails across that
    link and passes across every other fabric link; small packets still pass everywhere."""
    plan = clean
    _, _, lf_if, _ = link_ends(plan, "spine01", "leaf02")
    add_fault(plan.name, "mtu-mismatch", link="spine01:leaf02", value="1500")
    results = {}
    for node in ("leaf01", "leaf02"):
        for iface in plan.nodes[node].ifaces:
            peer = plan.nodes[iface.peer]
            if not peer.router:
                continue
            dst = next(p for p in peer.ifaces if p.name == iface.peer_iface).address
            assert dst is not None
            results[(node, iface.name)] = ping_df(plan, node, iface.name, dst.split("/")[0],
                                                  9216 - 28)
    bad = {k for k, ok in results.items() if not ok}
    assert bad == {("leaf02", lf_if)}
    assert ping_df(plan, "leaf02", lf_if, link_ends(plan, "spine01", "leaf02")[1], 1472)


def test_loss_shows_in_ping_counters_and_retransmits(clean: LabPlan) -> None:
    """5 % random loss each way on one link: a 300-packet ping across it loses about 10 %
    (1 - 0.95^2 = 9.75 %), the netfilter rule counters moved, and TCP over the lab retransmits
    more than without the fault."""
    plan = clean
    lf_if, _, _, sp_addr = link_ends(plan, "leaf01", "spine01")
    add_fault(plan.name, "loss", link="leaf01:spine01", value="5")
    res = sh(plan.nodes["leaf01"].ns, "ping", "-c", "300", "-i", "0.005", "-W", "1", "-I",
             lf_if, sp_addr)
    loss = float(re.search(r"([\d.]+)% packet loss", res.stdout).group(1))  # type: ignore[union-attr]
    assert 3.0 <= loss <= 20.0, res.stdout
    counters = sh(plan.nodes["leaf01"].ns, "iptables", "-vnxL").stdout
    drops = [int(line.split()[0]) for line in counters.splitlines()
             if "statistic" in line and "DROP" in line]
    assert sum(drops) > 0


def _iperf(plan: LabPlan, src: str, dst: str, seconds: int, parallel: int = 1,
           port: int = 5201) -> dict:  # type: ignore[type-arg]
    dst_ns = plan.nodes[dst].ns
    addr = first_addr(plan, dst)
    server = subprocess.Popen(["ip", "netns", "exec", dst_ns, "iperf3", "-s", "-1", "-B", addr,
                               "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if sh(dst_ns, "ss", "-Htln", f"sport = :{port}").stdout.strip():
                break
            time.sleep(0.02)
        res = sh(plan.nodes[src].ns, "iperf3", "-c", addr, "-p", str(port), "-t", str(seconds),
                 "-P", str(parallel), "--json", timeout=seconds + 30)
        doc = json.loads(res.stdout)
        assert "error" not in doc, doc.get("error")
        return doc  # type: ignore[no-any-return]
    finally:
        server.kill()
        server.wait()


def test_throttle_caps_long_flows(clean: LabPlan) -> None:
    """S17's firewall: a per-flow limit of 40 Mb/s on flows past 1 MB. A 4 s flow through it
    averages far below the unthrottled rate and close to the limit (the first megabyte goes
    at full speed, so the average sits a little above 40 Mb/s)."""
    plan = clean
    free = _iperf(plan, "srv01", "srv05", 2)["end"]["sum_received"]["bits_per_second"]
    add_fault(plan.name, "throttle", node="leaf01", value="40M")
    doc = _iperf(plan, "srv01", "srv05", 4)
    got = doc["end"]["sum_received"]["bits_per_second"]
    assert got < 40e6 * 2.5, got
    assert free > 5 * got, (free, got)
    last = doc["intervals"][-1]["sum"]["bits_per_second"]
    assert last < 40e6 * 1.6, last  # the plateau, past the first megabyte


def test_shallow_buffer_drops_only_in_tc(clean: LabPlan) -> None:
    """A 200 Mb/s bottleneck with a 5-packet queue on both of leaf01's uplinks to spine01 and
    spine02 (the first of each pair): under 4 TCP flows the qdisc drops packets, which only
    `tc -s qdisc` shows; the interface counters (`ip -s link`) show no drop."""
    plan = clean
    leaf = plan.nodes["leaf01"]
    ups = [i for i in leaf.ifaces if i.peer.startswith("spine")]
    for spine in ("spine01", "spine02"):
        add_fault(plan.name, "shallow-buffer", link=f"leaf01:{spine}", value="200M")
    faulty = {next(i.name for i in leaf.ifaces if i.peer == s) for s in ("spine01", "spine02")}
    others = [i.name for i in ups if i.name not in faulty]
    for name in others:  # the second link of each pair down: every flow meets a bottleneck
        sh(leaf.ns, "ip", "link", "set", name, "down")
    prefix = plan.nodes["leaf02"].originates[0]
    try:
        _wait(lambda: route_widths(leaf.ns).get(prefix) == 2, 15)
        _iperf(plan, "srv01", "srv05", 3, parallel=4)
        tc = sh(leaf.ns, "tc", "-s", "qdisc", "show").stdout
        dropped = [int(m) for m in re.findall(r"qdisc pfifo 10: .*?dropped (\d+)", tc, re.S)]
        assert dropped and sum(dropped) > 0, tc
        stats = json.loads(sh(leaf.ns, "ip", "-s", "-j", "link", "show").stdout)
        for entry in stats:
            if entry["ifname"] in faulty:
                assert entry["stats64"]["tx"]["dropped"] == 0
    finally:
        for name in others:
            sh(leaf.ns, "ip", "link", "set", name, "up")
        _wait(lambda: route_widths(leaf.ns).get(prefix) == 4, 30)


def test_link_down_and_bgp_down_remove_that_path(clean: LabPlan) -> None:
    """A link down (carrier gone on the peer) and a BGP session whose TCP 179 is dropped both
    take one next hop out of leaf01's route to leaf02's hosts: 4 -> 3 (the link at once, BGP
    after the 9 s hold time)."""
    plan = clean
    leaf = plan.nodes["leaf01"]
    prefix = plan.nodes["leaf02"].originates[0]
    assert route_widths(leaf.ns)[prefix] == 4
    add_fault(plan.name, "link-down", link="leaf01:spine01")
    sp_if = next(i.peer_iface for i in leaf.ifaces if i.peer == "spine01")
    link = sh(plan.nodes["spine01"].ns, "ip", "link", "show", sp_if).stdout
    assert "NO-CARRIER" in link
    _wait(lambda: route_widths(leaf.ns).get(prefix) == 3, 15)
    clear_faults(plan.name)
    _wait(lambda: route_widths(leaf.ns).get(prefix) == 4, 30)

    add_fault(plan.name, "bgp-down", link="leaf01:spine02")
    _wait(lambda: route_widths(leaf.ns).get(prefix) == 3, 25)
    peers = (bgp_summary(lab_dir(plan.name), leaf).get("ipv4Unicast") or {})["peers"]
    assert sorted(p["state"] == "Established" for p in peers.values()) == [False, True, True, True]
    clear_faults(plan.name)
    _wait(lambda: route_widths(leaf.ns).get(prefix) == 4, 40)


def _wait(cond, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.25)
    raise AssertionError(f"condition not met in {timeout} s")


def test_ecmp_l3_hash_pins_every_port_pair_to_one_uplink(clean: LabPlan) -> None:
    """`ip route get` over 64 TCP source ports between one host pair: L4 hashing spreads them
    over all 4 uplinks, L3 hashing (the fault) over exactly one."""
    plan = clean
    leaf = plan.nodes["leaf01"]
    src, dst = first_addr(plan, "srv01"), first_addr(plan, "srv05")

    def devs() -> set[str]:
        out = set()
        for sport in range(40000, 40064):
            r = sh(leaf.ns, "ip", "route", "get", dst, "from", src, "iif", "br0", "ipproto",
                   "tcp", "sport", str(sport), "dport", "5201").stdout
            out.add(re.search(r" dev (\S+)", r).group(1))  # type: ignore[union-attr]
        return out

    assert len(devs()) == 4
    add_fault(plan.name, "ecmp-l3-hash")
    assert len(devs()) == 1


def test_dscp_remark_changes_what_the_host_sends(clean: LabPlan) -> None:
    """Healthy hosts mark the fabric's RoCE DSCP (26, the qos section); with the fault one host
    marks 0 instead. Counting rules on the leaf (`-m dscp`) see it on the wire."""
    plan = clean
    leaf = plan.nodes["leaf01"]
    me = first_addr(plan, "srv01")
    for d in (26, 0):
        sh(leaf.ns, "iptables", "-A", "FORWARD", "-s", me, "-m", "dscp", "--dscp", str(d))
    try:
        def counts() -> dict[int, int]:
            out = sh(leaf.ns, "iptables", "-vnxL", "FORWARD").stdout
            got = {}
            for line in out.splitlines():
                m = re.search(r"DSCP match 0x([0-9a-f]+)", line)
                if m:
                    got[int(m.group(1), 16)] = int(line.split()[0])
            return got

        dst = first_addr(plan, "srv05")
        before = counts()
        sh(plan.nodes["srv01"].ns, "ping", "-c", "5", "-i", "0.01", dst)
        mid = counts()
        assert mid[26] - before[26] >= 5 and mid[0] == before[0]
        add_fault(plan.name, "dscp-remark", node="srv01", value="0")
        sh(plan.nodes["srv01"].ns, "ping", "-c", "5", "-i", "0.01", dst)
        after = counts()
        assert after[0] - mid[0] >= 5 and after[26] == mid[26]
    finally:
        for d in (26, 0):
            sh(leaf.ns, "iptables", "-D", "FORWARD", "-s", me, "-m", "dscp", "--dscp", str(d))


# ---------------------------------------------------------------------------------------------
# teardown


def test_down_after_up_is_killed_midway_leaves_nothing() -> None:
    """`lab up` killed with SIGKILL while FRR is starting: `lab down` removes every namespace,
    every process inside them and the state; a second `down` is a no-op."""
    name = new_name("k")
    fabric = EXAMPLES / "s17-case-study-after.yaml"
    cmd = [sys.executable, "-m", "aifabric", "lab", "up", str(fabric), "--name", name]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (lab_dir(name) / "frr").exists():
            time.sleep(0.02)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert lab_namespaces(name), "the killed up should have left namespaces behind"
        assert any(entry["name"] == name for entry in lab_list())
    finally:
        first = lab_down(name)
    assert first["left"] == 0 and lab_namespaces(name) == []
    assert not lab_dir(name).exists()
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True,
                         check=True).stdout
    assert f"/{name}/" not in out  # no FRR daemon of this lab (their args name its state dir)
    again = subprocess.run([sys.executable, "-m", "aifabric", "lab", "down", name],
                           capture_output=True, text=True, check=False)
    assert again.returncode == 0


def test_unknown_lab_is_exit_2() -> None:
    res = subprocess.run([sys.executable, "-m", "aifabric", "lab", "status", "no-such-lab"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "no lab named" in res.stderr
