"""Capture a lab's state with the ordinary tools an engineer would run, into a bundle that
``aifabric diagnose DIR`` and ``aifabric verify --bundle DIR`` read: ``DIR/<node>/<file>``.

What is captured, in this order (load first, so queue drops and retransmissions are in the
counters read after it):

1. traffic (unless ``traffic=False``): ``lab traffic``'s pairwise iperf3 pattern for a few
   seconds, each flow's ``iperf3 --json`` saved on its source server;
2. every node: ``ip -s -d link show``; ``iptables-save -c`` (filter and mangle);
3. routers: ``tc -s qdisc show``, ``ip -j route show`` (each prefix's ECMP next hops),
   ``sysctl`` of the ECMP hash policy and seed, and FRR's ``show bgp summary json`` when FRR
   routes the lab;
4. servers: ``ping -M do -s <MTU-28>`` (don't fragment, the largest packet the host's MTU
   allows: S11's test) and a 100-packet small ping to every other server's first address;
   routers: the same two pings across every numbered switch-to-switch link, from one end to
   the other (``-I <iface>``), which is how a rollout checks each link rather than each path
   (ECMP hides a bad link from most host-to-host pings).

Nothing here interprets what it captures: the parsers and rules do (the loop is closed only if
diagnose names the fault from these files alone).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aifabric.lab.frr import vtysh
from aifabric.lab.netns import ns_exec
from aifabric.lab.plan import LabNode, LabPlan
from aifabric.lab.state import lab_dir, load_state
from aifabric.probe.active import PROBE_HEADER_BYTES
from aifabric.probe.sweep import lab_targets

__all__ = ["capture_lab"]

Progress = Callable[[str], None]


def _noop(_: str) -> None:
    return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _oper_up(node: LabNode) -> set[str]:
    """Interfaces of ``node`` whose operational state is up (``ip -j link``)."""
    try:
        links = json.loads(ns_exec(node.ns, ["ip", "-j", "link", "show"], check=False) or "[]")
    except ValueError:
        return set()
    return {
        str(e.get("ifname")) for e in links
        if isinstance(e, dict) and e.get("operstate") in ("UP", "UNKNOWN")
    }


_PING_BATCH = 64
"""Pings run at once (each mostly waits; 64 keep a 2-core machine responsive)."""


def _pings(plan: LabPlan, out: Path) -> int:
    """Start every ping at once (each is mostly waiting); files per source node. Who pings
    whom is :func:`aifabric.probe.sweep.lab_targets` (the sweep's own computation): servers
    every other server, routers each numbered link to another router, here one direction per
    link (either end's MTU breaks it) and only from an interface that is up."""
    jobs: list[tuple[Path, list[str]]] = []
    for name, (ns, peers) in lab_targets(plan).items():
        node = plan.nodes[name]
        up = _oper_up(node) if node.router and peers else set()
        for peer in peers:
            pin: list[str] = []
            if peer.iface is not None:
                if peer.iface not in up:
                    continue  # a down port has nothing to test; ip-link.txt shows its state
                if peer.node is not None and peer.node < name:
                    continue  # one direction per link is enough
                pin = ["-I", peer.iface]
            size = peer.local_mtu - PROBE_HEADER_BYTES
            for fname, args in (
                (f"ping-mtu-{peer.tag}.txt",
                 ["ping", "-M", "do", "-s", str(size), "-c", "5", "-i", "0.2", "-W", "1", *pin,
                  peer.address]),
                (f"ping-{peer.tag}.txt",
                 ["ping", "-c", "100", "-i", "0.01", "-W", "1", *pin, peer.address]),
            ):
                jobs.append((out / name / fname, ["ip", "netns", "exec", ns, *args]))
    for start in range(0, len(jobs), _PING_BATCH):
        batch = [
            (path, cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True))
            for path, cmd in jobs[start:start + _PING_BATCH]
        ]
        for path, cmd, proc in batch:
            text, _ = proc.communicate(timeout=60)
            _write(path, f"$ {' '.join(cmd[4:])}\n{text}")
    return len(jobs)


def _node_files(plan: LabPlan, node: LabNode, out: Path) -> int:
    d = out / node.name
    files = {
        "ip-link.txt": ["ip", "-s", "-d", "link", "show"],
        "iptables-save.txt": ["iptables-save", "-c"],
    }
    if node.router:
        files["tc-qdisc.txt"] = ["tc", "-s", "qdisc", "show"]
        files["ip-route.json"] = ["ip", "-j", "route", "show"]
        files["sysctl.txt"] = ["sysctl", "net.ipv4.fib_multipath_hash_policy",
                               "net.ipv4.fib_multipath_hash_fields",
                               "net.ipv4.fib_multipath_hash_seed", "net.ipv4.ip_forward"]
    for fname, argv in files.items():
        _write(d / fname, ns_exec(node.ns, argv, check=False))
    if node.router and plan.routing == "frr":
        _write(d / "bgp-summary.json", vtysh(lab_dir(plan.name), node, "show bgp summary json"))
        return len(files) + 1
    return len(files)


def capture_lab(
    name: str, out: Path, *, traffic: bool = True, duration_s: float = 3.0,
    progress: Progress = _noop,
) -> dict[str, Any]:
    """Capture lab ``name`` into ``out`` (see the module docstring); a summary dict."""
    state = load_state(name)
    plan = state.plan
    out.mkdir(parents=True, exist_ok=True)
    flows = 0
    if traffic:
        from aifabric.lab.traffic import run_traffic  # noqa: PLC0415 (only when traffic runs)

        tmp = out / ".traffic"
        result = run_traffic(name, "pairwise", duration_s=duration_s, parallel=4,
                             save_dir=tmp)
        for f in sorted(tmp.glob("*.iperf3.json")):
            src = f.name.split("-")[0]
            for node in plan.nodes:
                if f.name.startswith(f"{node}-"):
                    src = node
            dest = out / src / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(f), dest)
            flows += 1
        shutil.rmtree(tmp, ignore_errors=True)
        progress(f"traffic: {flows} iperf3 flows, {result.get('summary', {})}")
    files = sum(_node_files(plan, node, out) for node in plan.nodes.values())
    progress(f"{files} node captures")
    pings = _pings(plan, out)
    progress(f"{pings} pings")
    return {
        "lab": name,
        "bundle": str(out),
        "nodes": len(plan.nodes),
        "files": files + pings + flows,
        "faults": [f"{f['id']} {f['kind']}" for f in state.faults],
    }
