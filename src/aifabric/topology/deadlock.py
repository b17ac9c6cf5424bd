"""PFC deadlock analysis: the cyclic buffer dependency (CBD) graph of the lossless priority.

**The graph.** PFC pauses a priority per ingress queue: when the buffer at switch ``v`` for
frames that arrived over the directed link ``u -> v`` fills, ``v`` pauses ``u``. Call that
buffer ``q(u->v)``. A frame held in ``q(u->v)`` that ``v`` forwards to ``w`` waits for room in
``q(v->w)``, so the CBD has an edge ``q(u->v) -> q(v->w)`` whenever some routed path goes
``u -> v -> w``. A cycle in the CBD means a set of full buffers can pause each other forever: a
PFC deadlock (Hu et al., HotNets'16, "Deadlocks in datacenter networks: why do they form, and
how to avoid them"; Guo et al., SIGCOMM'16, "RDMA over commodity Ethernet at scale"; the seed's
S12 and S20.3 symptom "all RoCE traffic suddenly frozen"). Queues are per *directed link*:
parallel links between the same two switches are distinct queues (the fabric link index and a
direction bit; the report names them ``device:port -> device:port`` from the fabric's links).

Only links that carry the lossless class count: kinds host, fabric, core and inter-site (never
management), and only when ``fabric.transport == "roce"`` with non-empty PFC priorities (an
InfiniBand fabric has credit loops instead, which ibdiagnet checks; sockets use no PFC). A host
ingress queue ``q(server->leaf)`` has no CBD predecessor and ``q(leaf->server)`` no successor,
so neither can lie on a cycle: the graph is built over switch-to-switch links, with the switches
that have RoCE host links as traffic sources and destinations ("edge switches").

**Routing models.** Forwarding is per destination edge switch ``d``: each switch ``x`` has a
FIB, the set of directed links ``x -> y`` it spreads ``d``'s traffic over (ECMP); a frame is
forwarded by the FIB of the switch it is at, whatever link it came in on. Tiers come from the
switch roles (1 leaf, 2 spine, 3 super-spine).

1. ``up-down`` (healthy ECMP, valley-free): the shortest paths that climb (tier strictly
   increasing), cross at most one same-tier link at the top (the inter-site spine links), then
   descend. ``down(x)`` = hops of the shortest strictly-descending path to ``d``;
   ``full(x) = min(down(x), 1 + min down(y) over same-tier y, 1 + min full(y) over higher y)``;
   the FIB holds every neighbour link achieving ``full(x)``. *Theorem:* when every switch's
   FIB is consistent (a frame that descends keeps descending), every CBD edge goes from an up
   queue to a higher up queue, from an up (or the one lateral) queue to a down queue, or from a
   down queue to a lower down queue; ordering queues by (phase, tier) is then a topological
   order, so the healthy graph of any CLOS (2 or 3 tiers, planes, two sites) is acyclic.
2. ``stale-bounce`` (one switch-to-switch link ``x - z`` failed, before convergence or under
   route summarisation: every switch keeps its healthy FIB, the two ends drop the dead link).
   If an end ``v`` is left with an empty FIB for ``d`` it *bounces*: it forwards over every
   surviving link to a neighbour ``y`` whose own (stale) FIB for ``d`` reaches ``d`` without
   coming straight back to ``v`` (``y == d`` also counts). The neighbour then forwards by its
   stale ECMP set, which in a CLOS is "up to all my spines", the failed-link spine ``v``
   included: ``q(v->y) -> q(y->v) -> q(v->y)`` is a cycle (and a routing loop until TTL), and
   ``q(y->v) -> q(v->y') -> q(y'->s)`` spreads it. This is the realistic PFC deadlock of a CLOS.
3. ``converged`` (the same failure after routing converged, plain shortest paths with ECMP,
   no valley-free rule: what an IGP or a BGP without AS-path loop protection gives). Bounce
   paths ``spine -> other leaf -> other spine -> leaf`` appear but in a 2-tier CLOS a single
   failure gives no cycle. RFC 7938's ASN plan (spines share one ASN) makes BGP reject the
   bounce path altogether.

A failure only changes the graph of a destination ``d`` when an end of the failed link loses
*every* FIB entry for ``d`` (otherwise ECMP just shrinks and edges only disappear, which cannot
create a cycle): those are the *affected* destinations of the failure.

**Search.** ``explicit`` (when failures x destinations x directed links is below
:data:`EXPLICIT_LIMIT`, whatever the shape): the healthy graph of every destination is built
and searched for a cycle; for each failure the graph is the healthy edges of unaffected
destinations (edge multiplicities per destination are kept, so an edge only the affected
destinations used goes) plus the recomputed edges of the affected ones, and a shortest cycle
through a new edge is searched by BFS (the rest is a sub-graph of the acyclic healthy graph, so
every cycle uses a new edge). This is exact for the model.

``classes`` (larger fabrics): the healthy graph is taken as acyclic by the theorem above;
failures are grouped by (tiers of the ends, links between the pair, local signatures of both
ends: tier, edge switch or not, neighbours per (tier, multiplicity)) and one representative
per class is analysed on the per-destination graphs of its affected destinations, searched
from the changed FIB entries (a cycle found there is a cycle of the full graph; cycles that
need edges of several destinations are only searched in explicit mode; in particular a
converged per-destination graph is a shortest-path DAG, so classes mode can only find bounce
cycles). Candidates for the
affected destinations are the edge switches below the lower end (for the upper end's down
routes) and, when an end has fewer than two up links, every edge switch; a parallel twin link
means no end can lose its route. When every switch of a tier has the same signature (a regular
CLOS, :attr:`DeadlockReport.regular`) all members of a class are images of each other and the
answer is the same for all; for an irregular fabric this large it is an approximation.
On examples/cluster-32k.yaml (65,536 switch links, 1,024 leaves) this takes about 1.5 s.

**ASN plan.** For a bounce cycle the report also says whether BGP's AS-path loop check would
refuse the bounce route (every path of every bounce neighbour crosses a switch with the
bouncing switch's ASN, as with RFC 7938's shared spine ASN): the bounce then needs a summarised
or default route (or an IGP) to exist.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from aifabric.model import SWITCH_ROLE_TIER, Fabric, Link, fabric_index

__all__ = [
    "EXPLICIT_LIMIT",
    "LOSSLESS_KINDS",
    "Cycle",
    "DeadlockReport",
    "FailureResult",
    "RoutingModel",
    "analyze_deadlocks",
]

RoutingModel = Literal["up-down", "stale-bounce", "converged"]
FAILURE_MODELS: tuple[RoutingModel, ...] = ("stale-bounce", "converged")
LOSSLESS_KINDS = frozenset({"host", "fabric", "core", "inter-site"})
EXPLICIT_LIMIT = 2_000_000
"""Explicit search when failures x destinations x directed links stays below this."""

_INF = 1 << 30
_Fib = list[list[int]]
_Edge = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Cycle:
    """One buffer-dependency cycle: its queues in cycle order, each the directed link whose
    ingress buffer it is (``leaf01:Ethernet3 -> spine01:Ethernet1`` is the buffer at spine01)."""

    model: RoutingModel
    links: tuple[str, ...]
    failed_link: str | None = None
    destinations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FailureResult:
    """A failed link and the cycle it produces under one routing model."""

    failed_link: str
    cycle: Cycle
    asn_rejects: bool | None = None
    """Stale-bounce only: True when BGP's AS-path loop check would refuse every bounce route
    of this failure (the bouncing switch's ASN lies on every path of its bounce neighbours, as
    with RFC 7938's shared spine ASN), so the cycle needs a summary or default route to
    appear; None when the switches carry no ASNs."""


@dataclass
class DeadlockReport:
    """What :func:`analyze_deadlocks` found."""

    applicable: bool
    reason: str
    method: Literal["explicit", "classes", "none"] = "none"
    switches: int = 0
    switch_links: int = 0
    destinations: int = 0
    failures_analysed: int = 0
    regular: bool = True
    """Every switch of a tier has the same neighbour signature (classes search is exact)."""
    healthy_cycles: list[Cycle] = field(default_factory=list)
    failures: dict[str, list[FailureResult]] = field(default_factory=dict)
    """Per failure model: failures that produce a cycle, each with its cycle (explicit: the
    first ``samples``; classes: one representative per class of failures)."""
    failed_links: dict[str, list[str]] = field(default_factory=dict)
    """Per failure model: names of up to ``samples`` failed links that produce a cycle."""
    failure_counts: dict[str, int] = field(default_factory=dict)
    """Per failure model: how many single failures produce a cycle."""
    seconds: float = 0.0

    @property
    def has_cycle(self) -> bool:
        return bool(self.healthy_cycles) or any(self.failure_counts.values())


class _Net:
    """Switch graph of the lossless switch-to-switch links; directed link ``2*i + dir``."""

    def __init__(self, fabric: Fabric) -> None:
        idx = fabric_index(fabric)
        self.fabric = fabric
        self.names: list[str] = [s.name for s in fabric.switches]
        self.node: dict[str, int] = {n: k for k, n in enumerate(self.names)}
        self.tier: list[int] = [SWITCH_ROLE_TIER[s.role] for s in fabric.switches]
        self.out: list[list[tuple[int, int]]] = [[] for _ in self.names]
        self.head: dict[int, int] = {}
        self.tail: dict[int, int] = {}
        self.links: list[int] = []
        edge: set[int] = set()
        for i, link in enumerate(fabric.links):
            if link.kind not in LOSSLESS_KINDS:
                continue
            a, b = self.node.get(link.a.device), self.node.get(link.b.device)
            if link.kind == "host":
                sw, other = (a, link.b) if a is not None else (b, link.a)
                host = idx.host_ports.get(other)
                if sw is not None and host is not None and host[2].purpose in ("roce", "ib"):
                    edge.add(sw)
                continue
            if a is None or b is None or a == b:
                continue
            self.links.append(i)
            self.out[a].append((2 * i, b))
            self.out[b].append((2 * i + 1, a))
            self.head[2 * i], self.tail[2 * i] = b, a
            self.head[2 * i + 1], self.tail[2 * i + 1] = a, b
        if not edge:
            edge = {k for k, t in enumerate(self.tier) if t == 1 and self.out[k]}
        self.edge: list[int] = sorted(edge)
        self.asn: list[int | None] = [sw.asn for sw in fabric.switches]
        self.by_tier_desc = sorted(range(len(self.names)), key=lambda k: -self.tier[k])

    def qname(self, dl: int) -> str:
        link: Link = self.fabric.links[dl >> 1]
        return f"{link.a} -> {link.b}" if dl % 2 == 0 else f"{link.b} -> {link.a}"

    def link_name(self, i: int) -> str:
        return self.fabric.links[i].name

    # -- routing -------------------------------------------------------------------------

    def updown(self, d: int, dead: int = -1) -> tuple[_Fib, list[int]]:
        """Valley-free ECMP FIB towards ``d`` (model 1) and the hop counts."""
        tier, out = self.tier, self.out
        down = [_INF] * len(self.names)
        down[d] = 0
        todo = deque([d])
        while todo:
            v = todo.popleft()
            for dl, u in out[v]:
                if dl >> 1 != dead and tier[u] > tier[v] and down[u] == _INF:
                    down[u] = down[v] + 1
                    todo.append(u)
        full = down[:]
        for x in self.by_tier_desc:
            best = full[x]
            for dl, y in out[x]:
                if dl >> 1 == dead:
                    continue
                if tier[y] == tier[x]:
                    best = min(best, down[y] + 1)
                elif tier[y] > tier[x]:
                    best = min(best, full[y] + 1)
            full[x] = best
        fib: _Fib = [[] for _ in self.names]
        for x in range(len(self.names)):
            fx = full[x]
            if x == d or fx >= _INF:
                continue
            for dl, y in out[x]:
                if dl >> 1 == dead:
                    continue
                cost = full[y] if tier[y] > tier[x] else down[y]
                if cost + 1 == fx:
                    fib[x].append(dl)
        return fib, full

    def shortest(self, d: int, dead: int = -1) -> tuple[_Fib, list[int]]:
        """Plain shortest-path ECMP FIB towards ``d`` (model 3), without link ``dead``."""
        dist = [_INF] * len(self.names)
        dist[d] = 0
        todo = deque([d])
        while todo:
            v = todo.popleft()
            for dl, u in self.out[v]:
                if dl >> 1 != dead and dist[u] == _INF:
                    dist[u] = dist[v] + 1
                    todo.append(u)
        fib: _Fib = [[] for _ in self.names]
        for x in range(len(self.names)):
            if x == d or dist[x] >= _INF:
                continue
            fib[x] = [dl for dl, y in self.out[x] if dl >> 1 != dead and dist[y] + 1 == dist[x]]
        return fib, dist

    def bounce(self, base: _Fib, d: int, i: int) -> _Fib:
        """Model 2: stale FIBs, the ends of failed link ``i`` drop it and bounce if emptied."""
        a, b = self.tail[2 * i], self.head[2 * i]
        fib = list(base)
        for v in (a, b):
            if not base[v]:
                continue
            kept = [dl for dl in base[v] if dl >> 1 != i]
            if not kept:
                kept = [
                    dl
                    for dl, y in self.out[v]
                    if dl >> 1 != i and (y == d or any(self.head[e] != v for e in base[y]))
                ]
            fib[v] = kept
        return fib

    def asn_rejects(self, base: _Fib, d: int, i: int) -> bool | None:
        """Would BGP's AS-path check refuse the bounce routes of failure ``i`` towards ``d``?

        The bouncing end ``v`` can only have learned a route through neighbour ``y`` if some
        path of ``y``'s FIB to ``d`` avoids every switch with ``v``'s ASN; rejected when no
        bounce neighbour has such a path."""
        fib = self.bounce(base, d, i)
        verdicts: list[bool] = []
        for v in (self.tail[2 * i], self.head[2 * i]):
            if fib[v] == base[v] or not fib[v]:
                continue
            own = self.asn[v]
            if own is None:
                return None
            ok = False
            for dl in fib[v]:
                y = self.head[dl]
                seen = {y}
                todo = [y]
                while todo and not ok:
                    u = todo.pop()
                    if u == d:
                        ok = True
                        break
                    for e in base[u]:
                        w = self.head[e]
                        if w not in seen and w != v and self.asn[w] != own:
                            seen.add(w)
                            todo.append(w)
                if ok:
                    break
            verdicts.append(not ok)
        return all(verdicts) if verdicts else None

    def affected(self, base: _Fib, i: int) -> bool:
        """Does losing link ``i`` empty an end's FIB (the only way new edges appear)?"""
        for v in (self.tail[2 * i], self.head[2 * i]):
            if base[v] and all(dl >> 1 == i for dl in base[v]):
                return True
        return False

    def cbd(self, fib: _Fib, d: int) -> set[_Edge]:
        """CBD edges of destination ``d``: follow the FIBs from every source edge switch."""
        edges: set[_Edge] = set()
        seen: set[int] = set()
        todo: deque[int] = deque()
        for s in self.edge:
            if s != d:
                for dl in fib[s]:
                    if dl not in seen:
                        seen.add(dl)
                        todo.append(dl)
        head = self.head
        while todo:
            q = todo.popleft()
            v = head[q]
            if v == d:
                continue
            for r in fib[v]:
                edges.add((q, r))
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        return edges


def _shortest_cycle(
    starts: Iterable[_Edge], succ: dict[int, list[int]] | None, fib: _Fib | None, net: _Net
) -> list[int] | None:
    """Shortest cycle through one of the ``starts`` edges (a, b): BFS from b back to a."""

    def nexts(q: int) -> Iterable[int]:
        if succ is not None:
            return succ.get(q, ())
        assert fib is not None
        return fib[net.head[q]]

    best: list[int] | None = None
    for a, b in starts:
        parent: dict[int, int] = {b: -1}
        todo = deque([b])
        found = False
        while todo and not found:
            q = todo.popleft()
            for r in nexts(q):
                if r in parent:
                    continue
                parent[r] = q
                if r == a:
                    found = True
                    break
                todo.append(r)
        if found:
            path = [a]
            q = parent[a]
            while q != -1:
                path.append(q)
                q = parent[q]
            cycle = list(reversed(path))  # b ... a
            cycle = _rotate([cycle[-1], *cycle[:-1]])  # a, b, ... from its smallest queue
            if best is None or (len(cycle), cycle) < (len(best), best):
                best = cycle
    return best


def _rotate(cycle: list[int]) -> list[int]:
    """Start a cycle at its smallest queue (stable output)."""
    k = cycle.index(min(cycle))
    return cycle[k:] + cycle[:k]


def _healthy_cycle(net: _Net, edges: Iterable[_Edge]) -> list[int] | None:
    succ: dict[int, list[int]] = defaultdict(list)
    indeg: Counter[int] = Counter()
    nodes: set[int] = set()
    for a, b in edges:
        succ[a].append(b)
        indeg[b] += 1
        nodes.update((a, b))
    # Kahn: whatever is left is on or behind a cycle
    todo = deque(n for n in nodes if indeg[n] == 0)
    left = set(nodes)
    while todo:
        n = todo.popleft()
        left.discard(n)
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                todo.append(m)
    if not left:
        return None
    starts = [(a, b) for a in sorted(left) for b in succ[a] if b in left]
    return _shortest_cycle(starts[:200], succ, None, net)


_Class = tuple[object, ...]


def _signature(net: _Net) -> tuple[bool, dict[int, _Class]]:
    """Regularity and the failure class of each switch link.

    A switch's signature is its tier, whether it is an edge switch and how many neighbours it
    has per (neighbour tier, links to that neighbour). The fabric is regular when every switch
    of a tier has the same signature. A link's class is (upper tier, lower tier, links between
    the pair, signatures of both ends): in a regular fabric that is just the first three."""
    mult: Counter[tuple[int, int]] = Counter()
    for i in net.links:
        a, b = net.tail[2 * i], net.head[2 * i]
        mult[(min(a, b), max(a, b))] += 1
    edge = set(net.edge)
    per_node: dict[int, Counter[tuple[int, int]]] = defaultdict(Counter)
    for (a, b), m in mult.items():
        per_node[a][(net.tier[b], m)] += 1
        per_node[b][(net.tier[a], m)] += 1
    node_sig = [
        (net.tier[k], k in edge, tuple(sorted(per_node[k].items()))) for k in range(len(net.names))
    ]
    by_tier: dict[int, set[object]] = defaultdict(set)
    for k, sig in enumerate(node_sig):
        by_tier[net.tier[k]].add(sig)
    regular = all(len(sigs) == 1 for sigs in by_tier.values())
    classes: dict[int, _Class] = {}
    for i in net.links:
        a, b = net.tail[2 * i], net.head[2 * i]
        if net.tier[a] < net.tier[b] or (net.tier[a] == net.tier[b] and node_sig[a] < node_sig[b]):
            a, b = b, a
        classes[i] = (
            net.tier[a],
            net.tier[b],
            mult[(min(a, b), max(a, b))],
            node_sig[a],
            node_sig[b],
        )
    return regular, classes


def analyze_deadlocks(
    fabric: Fabric, *, method: Literal["auto", "explicit", "classes"] = "auto", samples: int = 5
) -> DeadlockReport:
    """CBD analysis of ``fabric``'s lossless priority under the three routing models.

    ``method="auto"`` is explicit when failures x destinations x directed links stays below
    :data:`EXPLICIT_LIMIT`, classes otherwise (module docstring; an irregular fabric that
    large is searched by classes of links whose ends have the same local signature, which is
    an approximation that ``report.regular`` flags).
    """
    start = time.perf_counter()
    if fabric.transport != "roce":
        return DeadlockReport(
            False,
            f"transport is {fabric.transport}: no PFC (InfiniBand uses credit-based flow "
            "control; its credit loops are ibdiagnet's job)",
        )
    if not fabric.qos.pfc_priorities:
        return DeadlockReport(False, "no PFC priority is enabled: nothing can deadlock on pause")
    net = _Net(fabric)
    report = DeadlockReport(
        True,
        "",
        switches=len(net.names),
        switch_links=len(net.links),
        destinations=len(net.edge),
        failures_analysed=len(net.links),
    )
    if not net.links:
        report.reason = "no switch-to-switch lossless links"
        return report
    regular, classes = _signature(net)
    work = len(net.links) * len(net.edge) * 2 * len(net.links)
    chosen = method
    if chosen == "auto":
        chosen = "explicit" if work <= EXPLICIT_LIMIT else "classes"
    report.method = chosen
    report.regular = regular
    if chosen == "explicit":
        _explicit(net, report, samples)
    else:
        _by_class(net, report, classes, samples)
    report.reason = (
        f"{len(net.links)} lossless switch links, {len(net.edge)} destination edge switches, "
        f"every single link failure ({chosen} search"
        + ("" if regular or chosen == "explicit" else ", irregular fabric: approximate")
        + ")"
    )
    report.seconds = time.perf_counter() - start
    return report


def _make_cycle(
    net: _Net, qs: Sequence[int], model: RoutingModel, failed: int | None, dests: Iterable[int]
) -> Cycle:
    return Cycle(
        model,
        tuple(net.qname(q) for q in qs),
        net.link_name(failed) if failed is not None else None,
        tuple(sorted(net.names[d] for d in dests)),
    )


def _explicit(net: _Net, report: DeadlockReport, samples: int) -> None:
    routers = {"stale-bounce": net.updown, "converged": net.shortest}
    healthy_edges: set[_Edge] = set()
    for model in ("up-down", *FAILURE_MODELS):
        router = net.updown if model == "up-down" else routers[model]
        base: dict[int, _Fib] = {}
        per_dest: dict[int, set[_Edge]] = {}
        count: Counter[_Edge] = Counter()
        for d in net.edge:
            fib, _ = router(d)
            base[d] = fib
            edges = net.cbd(fib, d)
            per_dest[d] = edges
            count.update(edges)
        if model == "up-down":
            healthy_edges = set(count)
            qs = _healthy_cycle(net, healthy_edges)
            if qs is not None:
                report.healthy_cycles.append(_make_cycle(net, qs, "up-down", None, ()))
            continue
        succ_all: dict[int, list[int]] = defaultdict(list)
        for a, b in count:
            succ_all[a].append(b)
        found: list[FailureResult] = []
        total = 0
        for i in net.links:
            hit = [d for d in net.edge if net.affected(base[d], i)]
            if not hit:
                continue
            new: set[_Edge] = set()
            gone: Counter[_Edge] = Counter()
            for d in hit:
                if model == "stale-bounce":
                    fib = net.bounce(base[d], d, i)
                else:
                    fib, _ = net.shortest(d, dead=i)
                new |= net.cbd(fib, d)
                gone.update(per_dest[d])
            succ: dict[int, list[int]] = defaultdict(list)
            for a, bs in succ_all.items():
                for b in bs:
                    if count[(a, b)] - gone[(a, b)] > 0 and (a >> 1) != i and (b >> 1) != i:
                        succ[a].append(b)
            fresh = [e for e in new if count[e] - gone[e] <= 0]
            for a, b in new:
                succ[a].append(b)
            qs = _shortest_cycle(fresh, succ, None, net)
            if qs is not None:
                total += 1
                if len(found) < samples:
                    rej = (
                        net.asn_rejects(base[hit[0]], hit[0], i)
                        if model == "stale-bounce"
                        else None
                    )
                    found.append(
                        FailureResult(net.link_name(i), _make_cycle(net, qs, model, i, hit), rej)
                    )
        report.failures[model] = found
        report.failed_links[model] = [r.failed_link for r in found]
        report.failure_counts[model] = total


def _down_closure(net: _Net, x: int) -> set[int]:
    seen = {x}
    todo = [x]
    while todo:
        v = todo.pop()
        for _, u in net.out[v]:
            if net.tier[u] < net.tier[v] and u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def _by_class(net: _Net, report: DeadlockReport, classes: dict[int, _Class], samples: int) -> None:
    members: dict[_Class, list[int]] = defaultdict(list)
    for i in net.links:
        members[classes[i]].append(i)
    edge = set(net.edge)
    for model in FAILURE_MODELS:
        report.failures[model] = []
        report.failed_links[model] = []
        report.failure_counts[model] = 0
    for cls, links in members.items():
        i = links[0]
        a, b = net.tail[2 * i], net.head[2 * i]
        ends = (a, b)
        if isinstance(cls[2], int) and cls[2] >= 2:
            continue  # a parallel twin has the same cost: no end's FIB can empty
        cands: set[int] = set()
        for v, w in ((a, b), (b, a)):
            if net.tier[w] < net.tier[v]:
                cands |= _down_closure(net, w) & edge
            ups = [dl for dl, y in net.out[v] if net.tier[y] > net.tier[v]]
            if len(ups) < 2:
                cands |= edge
        for model in FAILURE_MODELS:
            for d in sorted(cands):
                base, _ = net.updown(d) if model == "stale-bounce" else net.shortest(d)
                if not net.affected(base, i):
                    continue
                if model == "stale-bounce":
                    fib = net.bounce(base, d, i)
                else:
                    fib, _ = net.shortest(d, dead=i)
                changed = [v for v in ends if fib[v] != base[v]]
                starts = [(q, r) for v in changed for q in _into(net, v, i) for r in fib[v]]
                qs = _shortest_cycle(starts, None, fib, net)
                if qs is None:
                    continue
                sources = {net.tail[q] for q in qs} & edge
                if not (sources - {d}) and not _carries(net, fib, d, qs[0]):
                    continue
                report.failure_counts[model] += len(links)
                rej = net.asn_rejects(base, d, i) if model == "stale-bounce" else None
                report.failures[model].append(
                    FailureResult(net.link_name(i), _make_cycle(net, qs, model, i, (d,)), rej)
                )
                names = report.failed_links[model]
                names.extend(net.link_name(j) for j in links[: max(0, samples - len(names))])
                break


def _into(net: _Net, v: int, dead: int) -> list[int]:
    return [dl ^ 1 for dl, _ in net.out[v] if dl >> 1 != dead]


def _carries(net: _Net, fib: _Fib, d: int, q: int) -> bool:
    """Does queue ``q`` carry traffic for ``d`` (forward walk from every source)?"""
    return any(q in (e[0], e[1]) for e in net.cbd(fib, d))
