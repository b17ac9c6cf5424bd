"""The seed's case study (S17) in the lab: two fabrics up side by side, the same cross-site
traffic through both, the gain measured and explained.

``compare_labs(before, after)`` builds ``<base>-before`` and ``<base>-after`` (both shaped to
``speed / rate_scale``), runs the ``cross-site`` pattern in one and then in the other (one at
a time, so they do not compete for the machine's cores), tears both down whatever happens,
and returns the measured totals, their ratio, what the fabric files predict, and why.

What decides the size of the gain
---------------------------------
Each flow's rate is capped by the narrowest thing on its way, and flows share links fairly
(max-min: :func:`expected_throughput`):

* **before**: a stateful firewall with a per-session limit ``L`` (``session_rate_limit_gbps``)
  on every path between the sites lets each TCP connection through at ``L``; a flow of ``P``
  streams gets ``P * L`` unless a link is narrower. The total is ``flows * P * L``: it grows
  with the number of connections, not with the links.
* **after**: no middlebox; a flow gets its share of the path's bottleneck link (here the
  server's 400G NIC, and the inter-site links shared by every flow that crosses them).

So ``gain = after_total / before_total = min(sum of NIC speeds, inter-site capacity) /
(flows * P * L)`` when those are the binding limits: the per-session limit times the number of
sessions against the path's bottleneck link speed. ``rate_scale`` divides every link speed
and the firewall limit alike, so the ratio is the fabric's, not the lab's.

What the lab cannot show
------------------------
Both labs carry TCP over veth: the after fabric's RoCEv2 transport (kernel bypass, no TCP
slow start or retransmission timeouts), PFC (a lossless class) and ECN are not emulated, so
the lab measures the bandwidth part of the gain only. The article's retransmissions and
stalls come partly from the transport change.

Iteration time
--------------
An iteration is compute plus communication: ``T = C + M``. A communication gain ``G`` turns
it into ``T' = C + M / G``; with ``c = M / T`` the share of the iteration that is
communication (unknown), ``T' / T = (1 - c) + c / G``. The article reports 22 -> 9 minutes; if
all of that came from communication, ``c = (22 - 9) / (22 * (1 - 1 / G))``, at least
``13 / 22 = 59 %`` even for an infinite gain. So the iteration gain (22 / 9 = 2.4x) is
smaller than the communication gain, and the measured ``G`` says how much of the iteration
must have been communication for the network alone to explain it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from aifabric.errors import InputError
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.lab.netns import lab_namespaces, shaped_mbit
from aifabric.lab.plan import LabNode, LabPlan, validate_lab_name
from aifabric.lab.state import lab_dir, require_tools
from aifabric.lab.traffic import Flow, TrafficSample, plan_flows, run_traffic
from aifabric.model import Fabric

__all__ = [
    "ARTICLE_ITERATION_MIN",
    "comm_fraction",
    "compare_labs",
    "compare_table",
    "expected_throughput",
    "goodput_factor",
]

ARTICLE_ITERATION_MIN = (22.0, 9.0)
"""The case study's iteration time before and after the rebuild, minutes (S17)."""

TCP_OVERHEAD_BYTES = 52
"""IPv4 (20) + TCP (20) + timestamp option (12) bytes per segment: payload = MTU - 52."""
ETHERNET_HEADER_BYTES = 14
"""What tbf and veth count on top of the IP packet (no FCS, preamble or gap on a veth)."""

Progress = Callable[[str], None]
Edge = tuple[str, str]
"""(node, iface): the transmit side of one veth end."""


def _noop(_: str) -> None:
    return None


def goodput_factor(mtu: int, *, l2: bool = True) -> float:
    """TCP payload per byte a shaper counts: ``(mtu - 52) / (mtu + 14)`` on a link (tbf
    counts the Ethernet header), ``(mtu - 52) / mtu`` for a limit on IP bytes (iptables)."""
    payload = mtu - TCP_OVERHEAD_BYTES
    return payload / (mtu + ETHERNET_HEADER_BYTES if l2 else mtu)


def _first_iface(plan: LabPlan, server: str) -> tuple[LabNode, str, int, float]:
    """(leaf node, leaf iface toward the server, mtu, speed_gbps) of the server's first NIC."""
    dev = plan.gateways[server][0][0]
    iface = next(i for i in plan.nodes[server].ifaces if i.name == dev)
    return plan.nodes[iface.peer], iface.peer_iface, iface.mtu, iface.speed_gbps


def _fractions(
    plan: LabPlan, adj: dict[str, list[tuple[str, str]]], src_router: str, dst_router: str,
    *, even: bool,
) -> tuple[dict[Edge, float], dict[str, float]]:
    """Share of one flow on every router-to-router edge, and the share reaching each router,
    along the shortest paths from ``src_router`` to ``dst_router``: split evenly over the
    next hops at each router (``even``, ideal hashing) or all on the first one (polarised)."""
    dist = {dst_router: 0}
    queue = deque([dst_router])
    while queue:
        cur = queue.popleft()
        for _, peer in adj.get(cur, ()):
            if peer not in dist:
                dist[peer] = dist[cur] + 1
                queue.append(peer)
    edges: dict[Edge, float] = {}
    reach: dict[str, float] = {src_router: 1.0}
    if src_router not in dist:
        return edges, reach
    for node in sorted(dist, key=lambda n: -dist[n]):
        share = reach.get(node, 0.0)
        if share <= 0 or node == dst_router:
            continue
        hops = [(i, p) for i, p in adj[node] if dist.get(p, -1) == dist[node] - 1]
        if not even:
            hops = hops[:1]
        for iface, peer in hops:
            part = share / len(hops)
            edges[(node, iface)] = edges.get((node, iface), 0.0) + part
            reach[peer] = reach.get(peer, 0.0) + part
    return edges, reach


def expected_throughput(
    plan: LabPlan, flows: list[Flow], *, parallel: int,
    session_limits_gbps: dict[str, float] | None = None, even: bool = True,
) -> dict[str, Any]:
    """What each flow should get on ``plan``: max-min fair shares of the shaped link rates
    over the shortest paths (progressive filling), each flow capped at ``parallel`` times the
    per-session limit of a middlebox that all its paths cross. ``even``: every router splits a
    flow evenly over its next hops (ideal L4 hashing of many streams); otherwise every flow
    takes the first next hop (all flows polarised onto one path). Rates are TCP payload
    Mb/s (see :func:`goodput_factor`); unshaped labs use the links' full speeds."""
    limits = session_limits_gbps or {}
    scale = plan.rate_scale or 1.0
    adj = {
        n.name: [(i.name, i.peer) for i in n.ifaces
                 if i.peer in plan.nodes and plan.nodes[i.peer].router]
        for n in plan.nodes.values() if n.router
    }
    caps: dict[Edge, float] = {}
    for node in plan.nodes.values():
        for i in node.ifaces:
            caps[(node.name, i.name)] = (
                float(shaped_mbit(plan, i.speed_gbps)) if plan.rate_scale else i.speed_gbps * 1e3)
    load: dict[int, dict[Edge, float]] = {}
    flow_cap: dict[int, float] = {}
    factor: dict[int, float] = {}
    reason: dict[int, str] = {}
    cap_reason: dict[int, str] = {}
    for k, f in enumerate(flows):
        a, _, mtu_a, _ = _first_iface(plan, f.src)
        b, b_if, mtu_b, _ = _first_iface(plan, f.dst)
        mtu = min(mtu_a, mtu_b)
        src_dev = plan.gateways[f.src][0][0]
        edges, reach = _fractions(plan, adj, a.name, b.name, even=even)
        edges[(f.src, src_dev)] = 1.0
        edges[(b.name, b_if)] = 1.0
        load[k] = edges
        factor[k] = goodput_factor(mtu)
        flow_cap[k] = float("inf")
        for box, limit in limits.items():
            if reach.get(box, 0.0) >= 0.999:  # every path crosses it
                # the limit counts IP bytes; in link (frame) units it is a little higher
                cap = parallel * limit * 1e3 / scale * (mtu + ETHERNET_HEADER_BYTES) / mtu
                if cap < flow_cap[k]:
                    flow_cap[k] = cap
                    cap_reason[k] = (f"{box}: {parallel} session(s) x {limit:g} Gb/s "
                                     f"/ {scale:g}")
    rate = dict.fromkeys(load, 0.0)
    active = set(load)
    while active:
        step = float("inf")
        for e, cap in caps.items():
            slope = sum(load[k].get(e, 0.0) for k in active)
            if slope > 0:
                used = sum(rate[k] * load[k].get(e, 0.0) for k in load)
                step = min(step, (cap - used) / slope)
        for k in active:
            step = min(step, flow_cap[k] - rate[k])
        if step == float("inf"):
            break
        for k in active:
            rate[k] += max(0.0, step)
        frozen = {k for k in active if flow_cap[k] - rate[k] <= 1e-9}
        for k in frozen:
            reason[k] = cap_reason[k]
        full: dict[int, list[str]] = {}
        for e, cap in caps.items():
            if any(load[k].get(e, 0.0) > 0 for k in active):
                used = sum(rate[k] * load[k].get(e, 0.0) for k in load)
                if cap - used <= 1e-6 * cap:
                    for k in active:
                        if load[k].get(e, 0.0) > 0:
                            full.setdefault(k, []).append(f"{e[0]}:{e[1]}")
        for k, links in full.items():
            frozen.add(k)
            text = f"link(s) full at their shaped rate: {', '.join(links[:4])}"
            reason[k] = f"{reason[k]}; {text}" if k in reason else text
        if not frozen:
            break
        active -= frozen
    mbps = [round(rate[k] * factor[k], 2) for k in range(len(flows))]
    rows = [
        {"src": f.src, "dst": f.dst, "expected_mbps": mbps[k],
         "limited_by": reason.get(k, "nothing (unbounded)")}
        for k, f in enumerate(flows)
    ]
    return {"flows": rows, "total_mbps": round(sum(mbps), 2),
            "spread": "even" if even else "polarised"}


def comm_fraction(gain: float, before_min: float, after_min: float) -> float | None:
    """Share of the before-iteration that is communication if a communication gain ``gain``
    alone took the iteration from ``before_min`` to ``after_min``:
    ``(before - after) / (before * (1 - 1 / gain))``; None when ``gain <= 1``."""
    if gain <= 1:
        return None
    return (before_min - after_min) / (before_min * (1 - 1 / gain))


def _iteration(gain: float) -> dict[str, Any]:
    before_min, after_min = ARTICLE_ITERATION_MIN
    c = comm_fraction(gain, before_min, after_min)
    floor = (before_min - after_min) / before_min
    return {
        "formula": "T_after / T_before = (1 - c) + c / G, c = communication share of the "
                   "before-iteration (unknown), G = communication gain",
        "article_min": {"before": before_min, "after": after_min},
        "iteration_gain": round(before_min / after_min, 3),
        "communication_gain": round(gain, 3),
        "implied_comm_fraction": None if c is None else round(c, 4),
        "implied_comm_fraction_infinite_gain": round(floor, 4),
        "explains_article": c is not None and c <= 1,
        "speedup_for_c": {f"{c_:.2f}": round(1 / ((1 - c_) + c_ / gain), 3)
                          for c_ in (0.25, 0.5, 0.75)} if gain > 0 else {},
    }


def _limits(fabric: Fabric) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in fabric.middleboxes:
        if m.session_rate_limit_gbps is not None:
            out[m.name] = m.session_rate_limit_gbps
    return out


def _prefixed(say: Progress, side: str) -> Progress:
    def inner(message: str) -> None:
        say(f"{side}: {message}")
    return inner


def _side(
    fabric: Fabric, plan: LabPlan, traffic: dict[str, Any], parallel: int, up_s: float,
    converged: bool | None,
) -> dict[str, Any]:
    flows = plan_flows(plan, "cross-site")
    limits = _limits(fabric)
    even = expected_throughput(plan, flows, parallel=parallel, session_limits_gbps=limits)
    polar = expected_throughput(plan, flows, parallel=parallel, session_limits_gbps=limits,
                                even=False)
    s = traffic["summary"]
    return {
        "fabric": fabric.name,
        "lab": plan.name,
        "transport": fabric.transport,
        "middleboxes": [{"name": m.name, "session_rate_limit_gbps": m.session_rate_limit_gbps,
                         "throughput_gbps": m.throughput_gbps} for m in fabric.middleboxes],
        "flows": len(flows),
        "total_mbps": round(s["total_gbps"] * 1e3, 3),
        "total_gbps_at_fabric_scale": s["total_gbps_at_fabric_scale"],
        "retransmits": s["retransmits"],
        "expected_mbps": even["total_mbps"],
        "expected_polarised_mbps": polar["total_mbps"],
        "expected_flows": even["flows"],
        "up_s": round(up_s, 2),
        "converged": converged,
        "traffic": traffic,
    }


def _explanation(before: dict[str, Any], after: dict[str, Any], rate_scale: float,
                 parallel: int, duration_s: int, omit_s: int) -> str:
    fw = [m for m in before["middleboxes"] if m["session_rate_limit_gbps"] is not None]
    fw_text = "; ".join(
        f"{m['name']} limits each session to {m['session_rate_limit_gbps']:g} Gb/s "
        f"({m['session_rate_limit_gbps'] * 1e3 / rate_scale:g} Mb/s in the lab)"
        + (f", its {m['throughput_gbps']:g} Gb/s throughput is not emulated (only its links)"
           if m["throughput_gbps"] else "")
        for m in fw
    ) or "no middlebox limits a session"
    return (
        f"Both fabrics ran in network namespaces with every link shaped to speed / "
        f"{rate_scale:g} and the same cross-site pattern ({before['flows']} and "
        f"{after['flows']} flows of {parallel} TCP streams, {duration_s} s after {omit_s} s "
        "left out for slow start and the throttle's initial burst), one lab after the other. "
        f"Before: {fw_text}; the total is about flows x streams x limit = "
        f"{before['expected_mbps']:g} Mb/s expected, {before['total_mbps']:g} measured. "
        f"After: no middlebox; each flow gets its share of the path's bottleneck link "
        f"(expected {after['expected_mbps']:g} Mb/s with an even ECMP spread, "
        f"{after['expected_polarised_mbps']:g} if every stream hashed onto one path; "
        f"measured {after['total_mbps']:g}). The gain is the per-session limit x sessions "
        "against the bottleneck link speed; rate_scale divides both alike. Expected values: "
        "max-min fair shares over shortest paths, TCP payload = (MTU - 52) / (MTU + 14) of "
        "a shaped link and (MTU - 52) / MTU of an IP-byte limit. Not in the lab: RoCEv2 vs "
        f"TCP ({before['transport']} -> {after['transport']}), PFC and ECN; the gain here "
        "is bandwidth only. An iteration also computes: T_after / T_before = (1 - c) + c / G "
        "with c the communication share (unknown); the article's 22 -> 9 min needs "
        "c = 13 / (22 (1 - 1/G)) if all of it came from the network."
    )


def compare_labs(
    before_fabric: Fabric,
    after_fabric: Fabric,
    *,
    name: str = "cmp",
    rate_scale: float = 1000.0,
    duration_s: int = 4,
    parallel: int = 2,
    omit_s: int = 1,
    servers_per_leaf: int = 2,
    progress: Progress | None = None,
    on_sample: Callable[[TrafficSample], None] | None = None,
) -> dict[str, Any]:
    """Bring up ``<name>-before`` and ``<name>-after``, run ``cross-site`` in each, tear both
    down (always), return ``before``, ``after``, ``ratio``, ``expected_ratio``,
    ``iteration`` and ``explanation`` (see the module docstring).

    Defaults keep the machine comfortable: at ``rate_scale`` 1000 the after lab moves two
    400 Mb/s flows, the before lab two flows of two 10 Mb/s sessions."""
    say = progress or _noop
    if len(name) > 25:
        raise InputError(f"--name {name!r}: at most 25 characters (the labs add -before/-after)")
    names = {"before": f"{name}-before", "after": f"{name}-after"}
    for lab in names.values():
        validate_lab_name(lab)
    require_tools(frr=True)
    for lab in names.values():
        if lab_namespaces(lab) or (lab_dir(lab) / "state.json").exists():
            raise InputError(f"lab {lab!r} already exists: `aifabric lab down {lab}` first")
    fabrics = {"before": before_fabric, "after": after_fabric}
    for side, fab in fabrics.items():
        if len({s.site for s in fab.servers if s.site}) < 2:
            raise InputError(f"{side} fabric {fab.name!r}: compare runs cross-site traffic and "
                             "needs servers in two sites")
    ours: list[str] = []
    sides: dict[str, dict[str, Any]] = {}
    try:
        states = {}
        up_s: dict[str, float] = {}
        for side, fab in fabrics.items():
            ours.append(names[side])
            t0 = time.monotonic()
            states[side] = lab_up(
                fab, names[side], servers_per_leaf=servers_per_leaf, rate_scale=rate_scale,
                progress=_prefixed(say, side))
            up_s[side] = time.monotonic() - t0
            say(f"{side}: lab {names[side]} up in {up_s[side]:.1f} s")
        for side, fab in fabrics.items():
            say(f"{side}: cross-site traffic, {duration_s} s")
            traffic = run_traffic(names[side], "cross-site", duration_s=duration_s,
                                  parallel=parallel, omit_s=omit_s,
                                  progress=_prefixed(say, side),
                                  on_sample=on_sample)
            st = states[side]
            sides[side] = _side(fab, st.plan, traffic, parallel, up_s[side], st.converged)
    finally:
        for lab in ours:
            lab_down(lab)
            say(f"lab {lab} down")
    before, after = sides["before"], sides["after"]
    ratio = after["total_mbps"] / before["total_mbps"] if before["total_mbps"] > 0 else None
    exp = (after["expected_mbps"] / before["expected_mbps"]
           if before["expected_mbps"] > 0 else None)
    exp_low = (after["expected_polarised_mbps"] / before["expected_mbps"]
               if before["expected_mbps"] > 0 else None)
    return {
        "base": name,
        "labs": names,
        "rate_scale": rate_scale,
        "duration_s": duration_s,
        "parallel": parallel,
        "omit_s": omit_s,
        "before": before,
        "after": after,
        "ratio": None if ratio is None else round(ratio, 3),
        "expected_ratio": None if exp is None else round(exp, 3),
        "expected_ratio_polarised": None if exp_low is None else round(exp_low, 3),
        "iteration": _iteration(ratio) if ratio else None,
        "explanation": _explanation(before, after, rate_scale, parallel, duration_s, omit_s),
    }


def compare_table(result: dict[str, Any]) -> RenderableType:
    """A comparison for a terminal: both sides' totals, the ratio, the iteration arithmetic."""
    table = Table("", "fabric", "flows", "measured Mb/s", "expected Mb/s", "at fabric scale",
                  "retrans", title=f"cross-site traffic, links at 1/{result['rate_scale']:g}")
    for side in ("before", "after"):
        s = result[side]
        exp = f"{s['expected_mbps']:,.1f}"
        if s["expected_polarised_mbps"] != s["expected_mbps"]:
            exp += f" ({s['expected_polarised_mbps']:,.1f} polarised)"
        scaled = s["total_gbps_at_fabric_scale"]
        table.add_row(side, s["fabric"], str(s["flows"]), f"{s['total_mbps']:,.1f}", exp,
                      "-" if scaled is None else f"{scaled:,.1f} Gb/s",
                      str(s["retransmits"] or 0))
    lines = [f"gain {result['ratio']}x measured, {result['expected_ratio']}x expected "
             f"({result['expected_ratio_polarised']}x if every stream took one path)"]
    it = result.get("iteration")
    if it:
        frac = it["implied_comm_fraction"]
        lines.append(
            f"iteration {it['article_min']['before']:g} -> {it['article_min']['after']:g} min "
            f"({it['iteration_gain']}x): with this gain the network alone explains it if "
            + (f"{100 * frac:.0f}% of the iteration was communication" if frac is not None
               else "the gain exceeded 1")
            + f" (at least {100 * it['implied_comm_fraction_infinite_gain']:.0f}% for any gain)"
        )
    return Group(table, Text("\n".join(lines)), Text(result["explanation"], style="dim"))
