"""Lab benchmark (issue 17): how long ``aifabric lab up`` takes to build, converge and tear down
a fabric in network namespaces, and how big a lab this machine holds.

Run as root: ``python benchmarks/lab.py`` (``-k TEXT`` runs only cases whose name contains it;
``--big`` also tries the largest step of the size ladder even when the projection says it will
not fit). Copy the tables into docs/benchmarks.md. Without root, FRR, iperf3 or iproute2 it
prints why and exits 0 (nothing measured).

Cases:

1. ``examples/lab-2x4x16.yaml`` with all 16 servers (``--servers-per-leaf 4``): FRR with
   numbered and unnumbered eBGP, and static kernel ECMP. Target: up (build + converge) plus
   down under 15 s.
2. The size ladder: ``examples/s7-worked-example.yaml`` (16 leaves x 8 spines, 32 uplinks
   each) with 2, 4 and 8 servers per leaf; rail fabrics of 2,048 GPUs (64 leaves, 32 spines)
   and 4,096 GPUs (three tiers: 128 leaves, 128 spines, 64 super-spines) designed on the fly;
   then ``examples/cluster-32k.yaml`` (2,560 switches), each with 1 server per leaf. Each
   step is projected first from the per-router memory and up time of the largest lab
   measured so far; a step whose FRR would need more than half the memory available, or
   would take longer than ``--max-up`` seconds, is reported as projected and not built
   (that is where the ladder stops: the machine is shared with other work).

Figures per lab: namespaces, veth pairs, BGP sessions established / expected (each session
counted from both ends), build / FRR start / convergence / total up / down seconds, the summed
RSS and PSS of the FRR daemons (zebra + bgpd: ``/proc/PID/status`` VmRSS and
``/proc/PID/smaps_rollup`` Pss; PSS splits shared library pages fairly), and the drop in the
machine's ``MemAvailable`` while the lab was up (daemons, namespaces, veths, routes).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@dataclass
class Case:
    name: str
    fabric: str
    """A file under examples/, or ``design:GPUS`` for a rail fabric of that many GPUs
    designed on the fly (8 GPUs and 8 x 400G NICs per server, 64 x 400G switches, 1:1)."""
    servers_per_leaf: int
    routing: str = "frr"
    bgp: str = "numbered"
    ladder: bool = False


CASES = [
    Case("2x4x16 frr numbered", "lab-2x4x16.yaml", 4),
    Case("2x4x16 frr unnumbered", "lab-2x4x16.yaml", 4, bgp="unnumbered"),
    Case("2x4x16 static", "lab-2x4x16.yaml", 4, routing="static"),
    Case("s7 spl 2", "s7-worked-example.yaml", 2, ladder=True),
    Case("s7 spl 4", "s7-worked-example.yaml", 4, ladder=True),
    Case("s7 spl 8", "s7-worked-example.yaml", 8, ladder=True),
    Case("rail 2,048 GPUs spl 1", "design:2048", 1, ladder=True),
    Case("rail 4,096 GPUs (3 tiers) spl 1", "design:4096", 1, ladder=True),
    Case("cluster-32k spl 1", "cluster-32k.yaml", 1, ladder=True),
]


def missing() -> str | None:
    """Why the benchmark cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: the lab needs network namespaces (run as root)"
    for tool in ("ip", "tc", "iptables", "ethtool", "iperf3", "vtysh"):
        if shutil.which(tool) is None:
            return (f"{tool} missing: apt-get install -y frr iperf3 iproute2 iptables ethtool "
                    "iputils-ping")
    if not Path("/usr/lib/frr/bgpd").exists():
        return "frr missing (bgpd, zebra): apt-get install -y frr"
    return None


def mem_available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def mem_total_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _kib(path: str, key: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def daemon_memory_mib(pids: dict[str, dict[str, int]]) -> tuple[float, float]:
    """(sum of VmRSS, sum of Pss) of the lab's FRR daemons, MiB."""
    rss = pss = 0
    for daemons in pids.values():
        for pid in daemons.values():
            rss += _kib(f"/proc/{pid}/status", "VmRSS:")
            pss += _kib(f"/proc/{pid}/smaps_rollup", "Pss:")
    return rss / 1024, pss / 1024


def load_case_fabric(case: Case) -> Any:
    from aifabric.catalog import load_catalog  # noqa: PLC0415
    from aifabric.design import design_fabric, load_fabric  # noqa: PLC0415
    from aifabric.model import DesignSpec  # noqa: PLC0415

    cat = load_catalog()
    if case.fabric.startswith("design:"):
        gpus = int(case.fabric.split(":", 1)[1])
        spec = DesignSpec(name=f"rail-{gpus}", gpus=gpus, gpus_per_server=8,
                          nic_speed_gbps=400, switch_ports=64, switch_speed_gbps=400,
                          layout="rail")
        return design_fabric(spec, cat).fabric
    return load_fabric(EXAMPLES / case.fabric, cat)


def fabric_counts(fabric: Any, servers_per_leaf: int) -> dict[str, int]:
    """Namespaces, routers, veth pairs and BGP sessions (counted from both ends) the lab of
    ``fabric`` would have, by the lab's scaling rule (every switch and middlebox and switch
    link; the first ``servers_per_leaf`` servers per leaf, one port per leaf reached),
    counted from the fabric directly: planning a 2,560-switch lab takes minutes."""
    routers = {s.name for s in fabric.switches} | {m.name for m in fabric.middleboxes}
    servers = {s.name for s in fabric.servers}
    reach: dict[str, list[str]] = {}
    router_links = 0
    for link in fabric.links:
        a, b = link.a.device, link.b.device
        if a in routers and b in routers:
            router_links += 1
        elif a in servers and b in routers:
            reach.setdefault(a, []).append(b)
        elif b in servers and a in routers:
            reach.setdefault(b, []).append(a)
    per_leaf: dict[str, int] = {}
    kept = host_links = 0
    for server in fabric.servers:
        leaves = [lf for lf in dict.fromkeys(reach.get(server.name, []))
                  if per_leaf.get(lf, 0) < servers_per_leaf]
        if leaves:
            kept += 1
            host_links += len(leaves)
            for lf in leaves:
                per_leaf[lf] = per_leaf.get(lf, 0) + 1
    return {"namespaces": len(routers) + kept, "routers": len(routers),
            "veths": router_links + host_links, "sessions": 2 * router_links}


def measure(case: Case, fabric: Any) -> dict[str, Any]:
    """Bring the case up, read its figures, tear it down (always)."""
    from aifabric.lab.lifecycle import lab_down, lab_status, lab_up  # noqa: PLC0415

    name = f"bench-{uuid.uuid4().hex[:6]}"
    free0 = mem_available_mib()
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    try:
        state = lab_up(fabric, name, servers_per_leaf=case.servers_per_leaf,
                       routing=case.routing, bgp=case.bgp,  # type: ignore[arg-type]
                       converge_timeout_s=600)
        out["up_s"] = time.perf_counter() - t0
        out["timings"] = state.timings
        out["converged"] = state.converged
        out["namespaces"], out["veths"] = len(state.plan.nodes), len(state.plan.links)
        status = lab_status(name)
        out["bgp"] = status.get("bgp_sessions")
        out["rss_mib"], out["pss_mib"] = daemon_memory_mib(state.pids)
        time.sleep(1.0)  # let the kernel settle before reading memory
        out["mem_used_mib"] = free0 - mem_available_mib()
    finally:
        t1 = time.perf_counter()
        lab_down(name)
        out["down_s"] = time.perf_counter() - t1
    return out


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--big", action="store_true",
                        help="build ladder steps even when the projection says they won't fit")
    parser.add_argument("--max-up", type=float, default=300.0,
                        help="projected up time (s) above which a ladder step is not built")
    args = parser.parse_args()
    why = missing()
    if why:
        print(f"lab benchmark skipped: {why}")
        return
    sys.path.insert(0, str(ROOT / "src"))
    cpu = platform.processor() or platform.machine()
    total = mem_total_mib()
    print(f"# machine: {platform.node()} {cpu}, {os.cpu_count()} cores, "
          f"{total / 1024:.1f} GiB, kernel {platform.release()}, Python "
          f"{platform.python_version()}")
    print("| lab | routing | servers/leaf | namespaces | veths | BGP sessions up/expected "
          "| build s | FRR start s | converge s | up s | down s | FRR RSS MiB (PSS) "
          "| MemAvailable drop MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    per_router_mib = per_router_s = None  # from the largest FRR lab measured so far
    for case in CASES:
        if args.k and args.k not in case.name:
            continue
        fabric = load_case_fabric(case)
        counts = fabric_counts(fabric, case.servers_per_leaf)
        routing = case.routing + (f" {case.bgp}" if case.routing == "frr" else "")
        row_head = (f"| {case.name} | {routing} | {case.servers_per_leaf} | "
                    f"{counts['namespaces']} | {counts['veths']} |")
        if case.ladder and per_router_mib is not None and per_router_s is not None:
            need_mib = counts["routers"] * per_router_mib
            need_s = counts["routers"] * per_router_s
            free = mem_available_mib()
            if (need_mib > 0.5 * free or need_s > args.max_up) and not args.big:
                print(f"{row_head} {counts['sessions']} expected | projected, not built: "
                      f"~{need_mib:,.0f} MiB for {counts['routers']} routers' FRR "
                      f"({free:,.0f} MiB available), ~{need_s:,.0f} s up | | | | | | |",
                      flush=True)
                continue
        r = measure(case, fabric)
        if (r["namespaces"], r["veths"]) != (counts["namespaces"], counts["veths"]):
            row_head = (f"| {case.name} | {routing} | {case.servers_per_leaf} | "
                        f"{r['namespaces']} | {r['veths']} |")
        t = r["timings"]
        bgp = r["bgp"] or {}
        sessions = (f"{bgp.get('established', 0)}/{counts['sessions']}"
                    if case.routing == "frr" else "static")
        mem = (f"{r['rss_mib']:.0f} ({r['pss_mib']:.0f})" if case.routing == "frr" else "-")
        conv = "" if r["converged"] else " (NOT converged)"
        print(f"{row_head} {sessions} | {_fmt(t.get('build_s'), '.2f')} | "
              f"{_fmt(t.get('frr_start_s'), '.2f')} | {_fmt(t.get('converge_s'), '.2f')}"
              f"{conv} | {r['up_s']:.2f} | {r['down_s']:.2f} | {mem} | "
              f"{r['mem_used_mib']:.0f} |", flush=True)
        if case.routing == "frr" and counts["routers"]:
            per_router_mib = max(r["pss_mib"], r["mem_used_mib"]) / counts["routers"]
            per_router_s = r["up_s"] / counts["routers"]
    target = [c for c in CASES if c.fabric == "lab-2x4x16.yaml"]
    if target and (not args.k or any(args.k in c.name for c in target)):
        print("\ntarget (issue 17): 2x4x16 with 16 servers up + down in under 15 s")


if __name__ == "__main__":
    main()
