"""A lab's life: ``up`` (plan, build, route, converge), ``status``, ``exec``, ``down``, ``list``.

``up`` writes the state file first (phase ``building``), so an ``up`` killed half-way still
leaves a record, and ``down`` removes everything whatever the phase: processes inside the
lab's namespaces, the pids the state recorded, the namespaces (and with them every veth), the
state directory. Running ``down`` twice, or on a lab that never existed, is not an error.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from aifabric.errors import InputError
from aifabric.lab import frr
from aifabric.lab.faults import add_fault
from aifabric.lab.netns import (
    NEIGH_SAVED,
    Progress,
    alive,
    build,
    lab_namespaces,
    restore_neighbour_limits,
    teardown,
)
from aifabric.lab.plan import NS_PREFIX, Bgp, Hash, Routing, plan_lab, validate_lab_name
from aifabric.lab.state import (
    LabState,
    lab_dir,
    lab_root,
    list_states,
    load_state,
    require_tools,
    save_state,
)
from aifabric.model import Fabric

__all__ = ["lab_down", "lab_exec", "lab_list", "lab_status", "lab_up"]


def _noop(_: str) -> None:
    return None


def lab_up(
    fabric: Fabric,
    name: str,
    *,
    fabric_path: str = "",
    servers_per_leaf: int = 2,
    routing: Routing = "frr",
    bgp: Bgp = "numbered",
    hash_policy: Hash = "l4",
    hash_seed: int = 1,
    offloads: bool = False,
    rate_scale: float | None = None,
    converge_timeout_s: float = 90.0,
    progress: Progress = _noop,
) -> LabState:
    """Build the lab twin of ``fabric`` and wait until its routing has converged."""
    validate_lab_name(name)
    require_tools(frr=routing == "frr")
    if lab_namespaces(name) or (lab_dir(name) / "state.json").exists():
        raise InputError(f"lab {name!r} already exists: `aifabric lab down {name}` first")
    plan = plan_lab(fabric, name, servers_per_leaf=servers_per_leaf, routing=routing, bgp=bgp,
                    hash_policy=hash_policy, hash_seed=hash_seed, rate_scale=rate_scale)
    state = LabState(plan=plan, phase="building", fabric_path=fabric_path, created=time.time())
    save_state(state)
    t0 = time.monotonic()
    try:
        build(plan, offloads=offloads, progress=progress)
        state.timings["build_s"] = round(time.monotonic() - t0, 3)
        if routing == "frr":
            t1 = time.monotonic()
            state.pids = frr.start_frr(plan, lab_dir(name), progress)
            save_state(state)
            state.timings["frr_start_s"] = round(time.monotonic() - t1, 3)
        t2 = time.monotonic()
        ok, short = frr.wait_converged(plan, converge_timeout_s if routing == "frr" else 5,
                                       progress)
        state.timings["converge_s"] = round(time.monotonic() - t2, 3)
        state.converged = ok
        state.phase = "up"
        if not ok:
            first = next(iter(short.items()))
            plan.notes.append(
                f"not converged after {converge_timeout_s:g} s: {len(short)} routers short "
                f"of their ECMP width, e.g. {first[0]} {dict(list(first[1].items())[:2])}"
            )
    except BaseException:
        state.phase = "failed"
        save_state(state)
        raise
    state.timings["up_s"] = round(time.monotonic() - t0, 3)
    save_state(state)
    _fabric_faults(fabric, state, progress)
    return load_state(name)


def _fabric_faults(fabric: Fabric, state: LabState, progress: Progress) -> None:
    """What the fabric itself says is on the data path: a middlebox with a per-session rate
    limit (S17's firewall) throttles each long-lived flow in the lab too, at the limit divided
    by the lab's rate scale. Recorded as a fault with ``origin: fabric``."""
    scale = state.plan.rate_scale or 1.0
    for mb in fabric.middleboxes:
        if mb.session_rate_limit_gbps is None or mb.name not in state.plan.nodes:
            continue
        rate = f"{mb.session_rate_limit_gbps / scale:g}G"
        add_fault(state.plan.name, "throttle", node=mb.name, value=rate, origin="fabric")
        progress(f"{mb.name}: per-flow limit {mb.session_rate_limit_gbps:g} Gb/s from the fabric"
                 f" file, {rate}b/s in the lab")


def lab_down(name: str) -> dict[str, Any]:
    """Remove lab ``name`` completely (idempotent, no state file needed)."""
    validate_lab_name(name)
    pids: list[int] = []
    try:
        state = load_state(name)
        pids = [p for d in state.pids.values() for p in d.values()]
    except InputError:
        pass
    removed = teardown(name, pids)
    d = lab_dir(name)
    existed = d.exists()
    shutil.rmtree(d, ignore_errors=True)
    if not lab_namespaces(None) and not list_states():
        restore_neighbour_limits(lab_root() / NEIGH_SAVED)
    return {"name": name, **removed, "state_removed": existed,
            "left": len(lab_namespaces(name))}


def lab_list() -> list[dict[str, Any]]:
    """Every lab with a state file or with namespaces (a crashed one may have only those)."""
    names = set(list_states())
    for ns in lab_namespaces(None):
        parts = ns.split(":")
        if len(parts) >= 3 and parts[0] == NS_PREFIX:
            names.add(parts[1])
    out = []
    for name in sorted(names):
        entry: dict[str, Any] = {"name": name, "namespaces": len(lab_namespaces(name))}
        try:
            state = load_state(name)
            entry.update(phase=state.phase, fabric=state.plan.fabric,
                         faults=len(state.faults), converged=state.converged)
        except InputError:
            entry.update(phase="orphaned (no state file)", fabric=None, faults=0,
                         converged=None)
        out.append(entry)
    return out


def _alive_daemons(state: LabState) -> dict[str, list[str]]:
    return {
        node: [d for d, pid in daemons.items() if alive(pid)]
        for node, daemons in state.pids.items()
    }


def lab_status(name: str, *, live: bool = True) -> dict[str, Any]:
    """The ``lab status`` document (keys ``name``, ``nodes``, ``links``, ``faults``), plus
    routing, what was kept, timings, and live BGP session and route state."""
    state = load_state(name)
    plan = state.plan
    nodes = [
        {"name": n.name, "role": n.role, "namespace": n.ns, "addresses": n.addresses(),
         **({"asn": n.asn} if n.asn is not None else {})}
        for n in plan.nodes.values()
    ]
    links = [
        {"a": link.a, "b": link.b, "mtu": link.mtu, "kind": link.kind, "fabric": link.fabric}
        for link in plan.links
    ]
    doc: dict[str, Any] = {
        "name": plan.name,
        "fabric": plan.fabric,
        "fabric_path": state.fabric_path,
        "phase": state.phase,
        "routing": plan.routing,
        "bgp": plan.bgp if plan.routing == "frr" else None,
        "hash": {"policy": plan.hash, "seed": plan.hash_seed,
                 "per_node": "seed + node index, so tiers do not polarise"},
        "kept": plan.kept,
        "notes": plan.notes,
        "nodes": nodes,
        "links": links,
        "faults": state.faults,
        "timings": state.timings,
        "converged": state.converged,
        "state_dir": str(lab_dir(name)),
    }
    if live:
        doc["namespaces_present"] = len(lab_namespaces(name))
        short = frr.shortfall(plan) if state.phase == "up" else {}
        doc["routes_short"] = {
            node: {p: {"have": h, "expected": w} for p, (h, w) in v.items()}
            for node, v in short.items()
        }
        if plan.routing == "frr" and state.phase == "up":
            established, total, down = 0, 0, []
            for node in plan.nodes.values():
                if not node.router:
                    continue
                peers = (frr.bgp_summary(lab_dir(name), node).get("ipv4Unicast") or {}).get(
                    "peers", {})
                for peer, info in peers.items():
                    total += 1
                    if isinstance(info, dict) and info.get("state") == "Established":
                        established += 1
                    else:
                        down.append(f"{node.name} -> {peer}")
            doc["bgp_sessions"] = {"established": established, "total": total, "down": down}
            doc["daemons"] = _alive_daemons(state)
    return doc


def lab_exec(name: str, node: str, argv: Sequence[str]) -> int:
    """Run ``argv`` in ``node``'s namespace with the caller's terminal; its exit code."""
    state = load_state(name)
    target = state.plan.nodes.get(node)
    if target is None:
        known = ", ".join(sorted(state.plan.nodes)[:12])
        raise InputError(f"lab {name!r} has no node {node!r} (nodes: {known}, ...)")
    if not argv:
        raise InputError("lab exec: give a command after --, e.g. -- ip -br addr")
    return subprocess.call(["ip", "netns", "exec", target.ns, *argv])
