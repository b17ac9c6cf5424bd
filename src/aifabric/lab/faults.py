"""Faults a lab can inject, each what a real fabric suffers, made with kernel tools only (this
machine kind has no netem: the qdiscs are pfifo, bfifo, tbf and htb, the netfilter matches
statistic, hashlimit, connbytes, dscp; checked in ``docs/lab.md``).

Every fault is recorded in the lab's state with the exact commands that made it and the
commands that undo it, so ``lab fault clear`` restores the healthy lab and ``lab status`` shows
what is broken. netfilter rules carry the comment ``aifabric-lab:<lab>:<id>``.

Place: ``--link A:B`` (the link between nodes A and B; the fault sits on A's end) or
``--node N``. Value: ``--value`` (an MTU, a loss percentage, a rate such as ``100M``, a DSCP).

=================  ==========================================================================
kind               what it stands for in a real fabric
=================  ==========================================================================
mtu-mismatch       one port left at 1500 after a 9000/9216 rollout (S11, S21): big frames
                   vanish at the receiver, or the sender gets "Frag needed"
loss               a dirty fibre or failing optic dropping a share of packets (S20, S22)
throttle           a stateful firewall between sites that rate-limits long-lived flows
                   (S17): per-flow token bucket on flows past 1 MB
shallow-buffer     a shallow-buffer switch port at a bottleneck (S12, S18): a slower egress
                   with a 5-packet queue; drops show only in ``tc -s``
link-down          a pulled cable or shut port: the ECMP member goes away
ecmp-l3-hash       switches hashing on IP addresses only (S6, S7): every flow of a host pair
                   takes one path, the other spines idle (polarisation)
dscp-remark        a host marking RoCE with the wrong DSCP (S13, S14): its traffic lands in
                   the lossy class
bgp-down           a BGP session silently dying on one spine link (TCP 179 dropped): the hold
                   timer expires and the route loses that ECMP member
=================  ==========================================================================
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from aifabric.errors import InputError
from aifabric.lab.netns import L4_POLICY, ns_exec, shaped_mbit
from aifabric.lab.plan import LabIface, LabNode, LabPlan
from aifabric.lab.state import load_state, save_state
from aifabric.units import parse_speed_gbps

__all__ = ["FAULT_KINDS", "add_fault", "clear_faults", "list_faults"]


@dataclass(frozen=True)
class FaultKind:
    name: str
    place: str  # "link" | "node" | "link-or-node"
    default: str | None
    stands_for: str
    refs: tuple[str, ...]


FAULT_KINDS: dict[str, FaultKind] = {
    k.name: k
    for k in (
        FaultKind("mtu-mismatch", "link", "1500",
                  "one port left at a smaller MTU after a jumbo rollout: large packets vanish "
                  "where the smaller end receives them, or the sender gets Frag needed",
                  ("S11", "S21")),
        FaultKind("loss", "link", "5",
                  "a dirty fibre or failing optic dropping a share of packets in both "
                  "directions", ("S20", "S22")),
        FaultKind("throttle", "link-or-node", "100M",
                  "a stateful firewall that rate-limits each long-lived flow (per-flow token "
                  "bucket on flows past 1 MB) on the data path between sites", ("S17",)),
        FaultKind("shallow-buffer", "link", "200M",
                  "a shallow-buffer port at a bottleneck: egress at the given rate with a "
                  "5-packet queue, drops visible only in tc -s", ("S12", "S18")),
        FaultKind("link-down", "link", None,
                  "a pulled cable or a shut port: the ECMP member goes away", ("S20",)),
        FaultKind("ecmp-l3-hash", "link-or-node", None,
                  "switches hashing on IP addresses only: every flow between one host pair "
                  "takes the same path (polarisation)", ("S6", "S7")),
        FaultKind("dscp-remark", "node", "0",
                  "a host marking its RoCE traffic with the wrong DSCP: it lands in the lossy "
                  "class", ("S13", "S14")),
        FaultKind("bgp-down", "link", None,
                  "a BGP session silently dying on one spine link (TCP 179 dropped): after the "
                  "hold time the route loses that ECMP member", ("S20",)),
    )
}


def _iface(plan: LabPlan, link: str) -> tuple[LabNode, LabIface]:
    try:
        a, b = link.split(":", 1)
    except ValueError:
        raise InputError(f"--link {link!r}: expected A:B, two node names") from None
    node = plan.nodes.get(a)
    if node is None or b not in plan.nodes:
        bad = a if node is None else b
        raise InputError(f"--link {link!r}: lab {plan.name!r} has no node {bad!r}")
    iface = next((i for i in node.ifaces if i.peer == b), None)
    if iface is None:
        raise InputError(f"--link {link!r}: {a} and {b} are not linked in this lab")
    return node, iface


def _tag(plan: LabPlan, fid: str) -> str:
    return f"aifabric-lab:{plan.name}:{fid}"


def _ipt(node: LabNode, table: str, chain: str, rule: str, tag: str) -> tuple[list[str], list[str]]:
    matches, _, target = f" {rule}".rpartition(" -j ")
    body = f"{matches} -m comment --comment {tag} -j {target}".strip()
    return ([f"iptables -w -t {table} -A {chain} {body}"],
            [f"iptables -w -t {table} -D {chain} {body}"])


def _routers(plan: LabPlan) -> list[LabNode]:
    return [n for n in plan.nodes.values() if n.router]


def _commands(
    plan: LabPlan, kind: str, fid: str, node: LabNode | None, iface: LabIface | None,
    value: str,
) -> list[tuple[LabNode, list[str], list[str]]]:
    """(node, do, undo) shell commands for one fault."""
    tag = _tag(plan, fid)
    if kind == "mtu-mismatch" and node and iface:
        mtu = int(value)
        if not 68 <= mtu <= 65535:
            raise InputError(f"--value {value}: an MTU between 68 and 65535")
        return [(node, [f"ip link set dev {iface.name} mtu {mtu}"],
                 [f"ip link set dev {iface.name} mtu {iface.mtu}"])]
    if kind in {"loss", "throttle"} and node and iface and iface.bridged:
        # routed packets leave and enter through br0, and iptables does not see frames a
        # bridge switches: a rule on the port would silently never match
        raise InputError(
            f"{node.name}'s {iface.name} is a port of its bridge br0, which iptables does not "
            f"see: put the {kind} fault on the other end (--link {iface.peer}:{node.name})"
        )
    if kind == "loss" and node and iface:
        pct = float(value.rstrip("%"))
        if not 0 < pct <= 100:
            raise InputError(f"--value {value}: a loss percentage in (0, 100]")
        stat = f"-m statistic --mode random --probability {pct / 100:.6f} -j DROP"
        do: list[str] = []
        undo: list[str] = []
        chains = [("FORWARD", f"-i {iface.name}"), ("FORWARD", f"-o {iface.name}"),
                  ("INPUT", f"-i {iface.name}"), ("OUTPUT", f"-o {iface.name}")]
        for chain, match in chains:
            d, u = _ipt(node, "filter", chain, f"{match} {stat}", tag)
            do += d
            undo += u
        return [(node, do, undo)]
    if kind == "throttle" and node:
        gbps = parse_speed_gbps(value)
        kbytes = max(1, round(gbps * 1e9 / 8 / 1024))
        match = f"-o {iface.name} " if iface else ""
        rule = (
            f"{match}-p tcp -m connbytes --connbytes 1000000: --connbytes-dir original "
            f"--connbytes-mode bytes -m hashlimit --hashlimit-above {kbytes}kb/s "
            f"--hashlimit-burst {max(64, kbytes * 6 // 5)}kb "
            f"--hashlimit-mode srcip,dstip,srcport,dstport --hashlimit-name af{fid} -j DROP"
        )
        d, u = _ipt(node, "filter", "FORWARD", rule, tag)
        return [(node, d, u)]
    if kind == "shallow-buffer" and node and iface:
        mbit = max(1, round(parse_speed_gbps(value) * 1000))
        dev = iface.name
        restore = (
            [f"tc qdisc replace dev {dev} root handle 1: tbf rate "
             f"{shaped_mbit(plan, iface.speed_gbps)}mbit burst 64kb latency 50ms"]
            if plan.rate_scale else [f"tc qdisc del dev {dev} root"]
        )
        return [(node, [
            f"tc qdisc replace dev {dev} root handle 1: htb default 10",
            f"tc class add dev {dev} parent 1: classid 1:10 htb rate {mbit}mbit ceil {mbit}mbit "
            "quantum 9000",
            f"tc qdisc add dev {dev} parent 1:10 handle 10: pfifo limit 5",
        ], [f"tc qdisc del dev {dev} root", *restore[-1:]] if plan.rate_scale else restore)]
    if kind == "link-down" and node and iface:
        return [(node, [f"ip link set dev {iface.name} down"],
                 [f"ip link set dev {iface.name} up"])]
    if kind == "ecmp-l3-hash":
        targets = [node] if node else _routers(plan)
        policy = str(L4_POLICY) if plan.hash == "l4" else "0"
        return [(n, ["sysctl -qw net.ipv4.fib_multipath_hash_policy=0"],
                 [f"sysctl -qw net.ipv4.fib_multipath_hash_policy={policy}"]) for n in targets]
    if kind == "dscp-remark" and node:
        dscp = int(value)
        if not 0 <= dscp <= 63:
            raise InputError(f"--value {value}: a DSCP between 0 and 63")
        d, u = _ipt(node, "mangle", "OUTPUT", f"-j DSCP --set-dscp {dscp}", tag)
        return [(node, d, u)]
    if kind == "bgp-down" and node and iface:
        if plan.routing != "frr":
            raise InputError("bgp-down needs a lab with --routing frr")
        do, undo = [], []
        for chain, flag in (("INPUT", "-i"), ("OUTPUT", "-o")):
            for port in ("--dport 179", "--sport 179"):
                a, b = _ipt(node, "filter", chain, f"{flag} {iface.name} -p tcp {port} -j DROP",
                            tag)
                do += a
                undo += b
        return [(node, do, undo)]
    raise InputError(f"fault {kind}: give {FAULT_KINDS[kind].place.replace('-or-', ' or ')}")


def _apply(node: LabNode, commands: list[str], *, check: bool) -> None:
    if commands:
        ns_exec(node.ns, ["sh", "-ec" if check else "-c", "\n".join(commands)], check=check)


def add_fault(
    name: str, kind: str, *, link: str | None = None, node: str | None = None,
    value: str | None = None, origin: str = "user",
) -> dict[str, Any]:
    """Inject one fault into lab ``name``; the fault record (also kept in the state).
    ``origin`` is ``user`` or ``fabric`` (implied by the fabric file, e.g. a firewall's
    per-session limit)."""
    if kind not in FAULT_KINDS:
        raise InputError(f"fault kind {kind!r}: known kinds are {', '.join(FAULT_KINDS)}")
    fk = FAULT_KINDS[kind]
    state = load_state(name)
    plan = state.plan
    if state.phase != "up":
        raise InputError(f"lab {name!r} is {state.phase}, not up")
    target_node: LabNode | None = None
    target_if: LabIface | None = None
    if link:
        if fk.place == "node":
            raise InputError(f"fault {kind} takes --node, not --link")
        target_node, target_if = _iface(plan, link)
    elif node:
        if fk.place == "link":
            raise InputError(f"fault {kind} takes --link A:B, not --node")
        target_node = plan.nodes.get(node)
        if target_node is None:
            raise InputError(f"--node {node!r}: lab {name!r} has no such node")
        if kind == "dscp-remark" and target_node.router:
            raise InputError("dscp-remark marks a host's traffic: give a server with --node")
    elif fk.place in ("link", "node"):
        where = " A:B" if fk.place == "link" else " N"
        raise InputError(f"fault {kind}: give --{fk.place}{where}")
    elif kind == "throttle":
        boxes = [n for n in plan.nodes.values() if n.role == "middlebox"]
        if not boxes:
            raise InputError("throttle: give --node or --link (this lab has no middlebox)")
        target_node = boxes[0]
    the_value = value if value is not None else fk.default or ""
    fid = f"f{max([int(f['id'][1:]) for f in state.faults] + [0]) + 1}"
    try:
        steps = _commands(plan, kind, fid, target_node, target_if, the_value)
    except ValueError as exc:
        raise InputError(f"--value {the_value!r} for {kind}: {exc}") from None
    done: list[tuple[LabNode, list[str], list[str]]] = []
    try:
        for n, do, undo in steps:
            _apply(n, do, check=True)
            done.append((n, do, undo))
    except BaseException:
        for n, _, undo in reversed(done):
            _apply(n, undo, check=False)
        raise
    record = {
        "id": fid,
        "kind": kind,
        "link": link,
        "node": node or (target_node.name if target_node and not link else None),
        "value": the_value or None,
        "stands_for": fk.stands_for,
        "refs": list(fk.refs),
        "origin": origin,
        "added": time.time(),
        "steps": [{"node": n.name, "do": do, "undo": undo} for n, do, undo in steps],
    }
    state.faults.append(record)
    save_state(state)
    return record


def clear_faults(name: str, fault_id: str | None = None) -> list[dict[str, Any]]:
    """Undo one fault (``fault_id``) or all of them, newest first; the records cleared."""
    state = load_state(name)
    chosen = [f for f in state.faults if fault_id is None or f["id"] == fault_id]
    if fault_id is not None and not chosen:
        ids = ", ".join(f["id"] for f in state.faults) or "none"
        raise InputError(f"lab {name!r} has no fault {fault_id!r} (faults: {ids})")
    for record in reversed(chosen):
        for step in reversed(record["steps"]):
            node = state.plan.nodes[step["node"]]
            _apply(node, step["undo"], check=False)
    if any(r["kind"] == "mtu-mismatch" for r in chosen):
        # hosts and routers keep the path MTU they learnt from "Frag needed" as route
        # exceptions; without a flush the healed lab still looks broken to ping -M do
        for node in state.plan.nodes.values():
            _apply(node, ["ip route flush cache"], check=False)
    state.faults = [f for f in state.faults if f not in chosen]
    save_state(state)
    return chosen


def list_faults(name: str) -> list[dict[str, Any]]:
    return load_state(name).faults
