"""Build and tear down a lab's kernel data plane: one network namespace per node, one veth pair
per link with the fabric's MTU, a bridge per leaf for bridged hosts, forwarding, ECMP hash
policy and seed per router, and (with ``--routing static``) kernel multipath routes.

Commands are batched (``ip -batch``: one process for all namespaces and veths, one per
namespace for its addresses and routes) so a 40-namespace lab builds in about a second.

Facts this relies on (Linux 6.x, iproute2 6.1; checked on the machine the lab is tested on):

* a new namespace starts with ``fib_multipath_hash_policy=0`` (L3) and
  ``fib_multipath_hash_seed=0`` (a random seed per namespace) whatever the root namespace has,
  so both are set on every router (kernel Documentation/networking/ip-sysctl.rst);
* veth does TSO/GSO/GRO, so one skb can be a 64 KB burst; drop and queue faults are only
  per-packet with those off, which ``offloads=False`` (the default) arranges;
* deleting a namespace deletes the veth ends in it and their peers; processes must be gone
  first (``ip netns pids``), which :func:`teardown` does.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from aifabric.lab.plan import NS_PREFIX, LabNode, LabPlan
from aifabric.lab.state import lab_root, run

NEIGH_SAVED = "neighbour-limits.json"
"""File under the lab root with the neighbour-table limits found before the first lab."""

__all__ = [
    "alive",
    "build",
    "kill_pids",
    "lab_namespaces",
    "neighbour_entries",
    "ns_exec",
    "raise_neighbour_limits",
    "restore_neighbour_limits",
    "shaped_mbit",
    "shaping_lines",
    "teardown",
]

Progress = Callable[[str], None]


def _noop(_: str) -> None:
    return None


def ns_exec(
    ns: str, argv: Iterable[str], *, check: bool = True, timeout: float = 60,
    stdin: str | None = None,
) -> str:
    """Run ``argv`` inside namespace ``ns``; its stdout."""
    return run(["ip", "netns", "exec", ns, *argv], check=check, timeout=timeout,
               stdin=stdin).stdout


def lab_namespaces(name: str | None = None) -> list[str]:
    """Namespaces of lab ``name`` (all labs' when ``None``), from ``ip netns list``."""
    out = run(["ip", "netns", "list"], check=False).stdout
    prefix = f"{NS_PREFIX}:{name}:" if name is not None else f"{NS_PREFIX}:"
    return sorted(
        line.split()[0] for line in out.splitlines() if line.startswith(prefix)
    )


def _node_batch(plan: LabPlan, node: LabNode) -> list[str]:
    """``ip -batch`` lines that configure one namespace."""
    lines = ["link set lo up"]
    if node.loopback:
        lines.append(f"addr add {node.loopback} dev lo")
    bridged = [i for i in node.ifaces if i.bridged]
    if bridged:
        lines.append("link add br0 type bridge")
    for iface in node.ifaces:
        lines.append(f"link set dev {iface.name} mtu {iface.mtu}")
        if iface.bridged:
            lines.append(f"link set dev {iface.name} master br0")
        elif iface.address:
            lines.append(f"addr add {iface.address} dev {iface.name}")
        lines.append(f"link set dev {iface.name} up")
    if bridged and node.bridge:
        lines.append(f"link set dev br0 mtu {min(i.mtu for i in bridged)}")
        lines.append(f"addr add {node.bridge} dev br0")
        lines.append("link set dev br0 up")
    if node.role == "server":
        for k, (dev, address, gw) in enumerate(plan.gateways.get(node.name, [])):
            table = 100 + k
            if k == 0:
                lines.append(f"route add default via {gw} dev {dev}")
            lines.append(f"route add default via {gw} dev {dev} table {table}")
            lines.append(f"rule add from {address.split('/')[0]} table {table}")
    elif plan.routing == "static":
        for route in plan.routes.get(node.name, []):
            hops = " ".join(f"nexthop via {gw} dev {dev}" for gw, dev in route.nexthops)
            lines.append(f"route add {route.prefix} {hops}")
    return lines


def _sysctls(plan: LabPlan, node: LabNode, seed: int) -> list[str]:
    common = ["net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"]
    if not node.router:
        return common
    hash_lines = (
        [f"net.ipv4.fib_multipath_hash_policy={L4_POLICY}",
         f"net.ipv4.fib_multipath_hash_fields={L4_FIELDS}"]
        if plan.hash == "l4" else ["net.ipv4.fib_multipath_hash_policy=0"]
    )
    return [
        *common,
        "net.ipv4.ip_forward=1",
        *hash_lines,
        f"net.ipv4.fib_multipath_hash_seed={seed}",
        "net.ipv6.conf.all.forwarding=1",
    ]


L4_POLICY = 3
L4_FIELDS = "0x0037"
"""L4 hashing as a switch does it: policy 3 (custom fields) over source and destination
address, protocol, source and destination port (0x01|0x02|0x04|0x10|0x20). Policy 1 would
reuse the hash the sending socket put on the packet (veth keeps it) for forwarded TCP, so the
path would be random per connection and neither the ports nor the seed would decide it
(measured in the lab: the same client ports took different uplinks run to run; with policy 3
the per-uplink stream counts matched ``ip route get`` on three runs). ip-sysctl.rst,
``fib_multipath_hash_policy`` / ``fib_multipath_hash_fields``."""


def shaping_lines(plan: LabPlan, node: LabNode) -> list[str]:
    """``tc -batch`` lines that shape every veth end of ``node`` to its link's scaled speed
    (``plan.rate_scale``): a token bucket at ``speed_gbps / scale``, 64 KB burst, 50 ms of
    queue, the same on both ends so each direction of a link has the scaled capacity."""
    if not plan.rate_scale:
        return []
    return [
        f"qdisc replace dev {i.name} root handle 1: tbf rate {shaped_mbit(plan, i.speed_gbps)}mbit "
        "burst 64kb latency 50ms"
        for i in node.ifaces
    ]


def shaped_mbit(plan: LabPlan, speed_gbps: float) -> int:
    """A link's lab rate in Mbit/s under ``plan.rate_scale`` (at least 1)."""
    return max(1, round(speed_gbps * 1000 / (plan.rate_scale or 1)))


_NEIGH = ("gc_thresh1", "gc_thresh2", "gc_thresh3")
_NEIGH_DIRS = (Path("/proc/sys/net/ipv4/neigh/default"), Path("/proc/sys/net/ipv6/neigh/default"))


def neighbour_entries(plan: LabPlan) -> int:
    """Neighbour (ARP / ND) entries the lab needs at most: one per veth end's peer, twice over
    (IPv4 and the IPv6 link-local every interface has)."""
    return sum(len(n.ifaces) for n in plan.nodes.values()) + 2 * len(plan.nodes)


def raise_neighbour_limits(plan: LabPlan, saved: Path) -> dict[str, int] | None:
    """The kernel's neighbour tables are shared by every namespace, and their hard limit
    ``gc_thresh3`` (default 1024) lives only in the root namespace
    (Documentation/networking/ip-sysctl.rst, ``neigh/default/gc_thresh3``). A lab with a thousand
    numbered BGP sessions fills it and ARP fails everywhere ("neighbor table overflow"). So
    the limits are raised to hold every lab on the machine with room to spare, the old values
    kept in ``saved`` (restored by :func:`restore_neighbour_limits` when the last lab goes)."""
    need = neighbour_entries(plan)
    current = {f"{d.parts[-3]}.{k}": int((d / k).read_text()) for d in _NEIGH_DIRS
               for k in _NEIGH}
    want = {"gc_thresh1": 4 * need, "gc_thresh2": 8 * need, "gc_thresh3": 16 * need}
    changed = False
    for d in _NEIGH_DIRS:
        for k, v in want.items():
            key = f"{d.parts[-3]}.{k}"
            if current[key] < v:
                if not saved.exists():
                    saved.write_text(json.dumps(current), encoding="utf-8")
                (d / k).write_text(str(v))
                changed = True
    return current if changed else None


def restore_neighbour_limits(saved: Path) -> bool:
    """Put back the limits :func:`raise_neighbour_limits` found (when the last lab is gone)."""
    try:
        values = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    for d in _NEIGH_DIRS:
        for k in _NEIGH:
            key = f"{d.parts[-3]}.{k}"
            if key in values:
                (d / k).write_text(str(int(values[key])))
    saved.unlink(missing_ok=True)
    return True


def build(plan: LabPlan, *, offloads: bool = False, progress: Progress = _noop) -> None:
    """Create every namespace and veth of ``plan`` and configure them (no routing daemon)."""
    lab_root().mkdir(parents=True, exist_ok=True)
    if raise_neighbour_limits(plan, lab_root() / NEIGH_SAVED) is not None:
        progress(f"neighbour table limits raised for {neighbour_entries(plan)} entries")
    root = [f"netns add {n.ns}" for n in plan.nodes.values()]
    progress(f"{len(root)} namespaces")
    for link in plan.links:
        a_node, a_if = link.a.split(":", 1)
        b_node, b_if = link.b.split(":", 1)
        root.append(
            f"link add {a_if} netns {plan.nodes[a_node].ns} type veth "
            f"peer name {b_if} netns {plan.nodes[b_node].ns}"
        )
    run(["ip", "-batch", "-"], stdin="\n".join(root) + "\n", timeout=300)
    progress(f"{len(plan.links)} veth pairs")
    for k, node in enumerate(plan.nodes.values()):
        script = ["sysctl -qw " + " ".join(_sysctls(plan, node, plan.hash_seed + k))]
        if node.role == "server" and plan.host_dscp is not None:
            script.append(
                f"iptables -w -t mangle -A OUTPUT -m comment --comment "
                f"aifabric-lab:{plan.name}:roce-dscp -j DSCP --set-dscp {plan.host_dscp}"
            )
        if not offloads:
            script += [
                f"ethtool -K {i.name} tso off gso off gro off >/dev/null 2>&1"
                for i in node.ifaces
            ]
        ns_exec(node.ns, ["sh", "-c", "; ".join(script)])
        run(["ip", "-n", node.ns, "-batch", "-"],
            stdin="\n".join(_node_batch(plan, node)) + "\n")
        shaping = shaping_lines(plan, node)
        if shaping:
            ns_exec(node.ns, ["tc", "-batch", "-"], stdin="\n".join(shaping) + "\n")
    progress("addresses, bridges and routes" + (
        f", links shaped to 1/{plan.rate_scale:g} of their speed" if plan.rate_scale else ""))


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_pids(pids: Iterable[int], *, grace_s: float = 3.0) -> int:
    """SIGTERM then, after ``grace_s``, SIGKILL the given processes; how many were signalled.
    Zombies (reaped late by PID 1 on machines without an init) count as gone."""
    live = [p for p in set(pids) if p > 1 and alive(p)]
    for pid in live:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(alive(p) for p in live):
        time.sleep(0.05)
    for pid in live:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return len(live)


def ns_pids(ns: str) -> list[int]:
    out = run(["ip", "netns", "pids", ns], check=False).stdout
    return [int(x) for x in out.split() if x.isdecimal()]


def teardown(name: str, extra_pids: Iterable[int] = ()) -> dict[str, int]:
    """Remove everything of lab ``name``: processes inside its namespaces (FRR, iperf3, any
    ``lab exec`` child) and the pids recorded in its state, then the namespaces (their veths
    go with them). Idempotent; works without a state file. Returns what was removed."""
    namespaces = lab_namespaces(name)
    pids = [p for ns in namespaces for p in ns_pids(ns)]
    killed = kill_pids([*pids, *extra_pids])
    if namespaces:
        run(["ip", "-batch", "-"], stdin="".join(f"netns del {ns}\n" for ns in namespaces),
            check=False, timeout=300)
    left = lab_namespaces(name)
    for ns in left:  # a namespace still busy: retry once after a short wait
        time.sleep(0.2)
        run(["ip", "netns", "del", ns], check=False)
    return {"namespaces": len(namespaces), "processes": killed}
