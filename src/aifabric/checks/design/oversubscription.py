"""S6/S7/S8: tiers that data-parallel traffic crosses must not be oversubscribed.

Which tiers DP traffic crosses: with no workload, all of them. With a workload, the job takes
the fabric's first servers in file order; the leaf tier is crossed when some rail (or NIC port)
of those servers lands on more than one leaf, the spine tier when their leaves sit in more than
one pod, the inter-site links when they sit in more than one site.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import SWITCH_ROLE_TIER, Endpoint, Fabric, Server, fabric_index
from aifabric.topology.capacity import fabric_capacity

__all__ = ["crossed_tiers"]


def crossed_tiers(fabric: Fabric) -> tuple[set[int], bool, list[Server]]:
    """(switch tiers whose uplinks DP traffic crosses, crosses sites?, the job's servers)."""
    servers = [s for s in fabric.servers if s.gpus > 0]
    workload = fabric.workload
    if workload is not None:
        job: list[Server] = []
        gpus = 0
        for server in servers:
            if gpus >= workload.gpus:
                break
            job.append(server)
            gpus += server.gpus
        servers = job
    if len(servers) <= 1:
        return set(), False, servers
    idx = fabric_index(fabric)
    leaves_by_rail: dict[object, set[str]] = defaultdict(set)
    leaves: set[str] = set()
    for server in servers:
        for port in server.ports:
            peer = idx.peer(Endpoint(server.name, port.name))
            if peer is None or peer.device not in idx.switches:
                continue
            key = (port.plane, port.rail if port.rail is not None else port.name)
            leaves_by_rail[key].add(peer.device)
            leaves.add(peer.device)
    tiers: set[int] = set()
    if any(len(group) > 1 for group in leaves_by_rail.values()):
        tiers.add(1)
    pods = {idx.switches[name].pod for name in leaves}
    if len(pods) > 1:
        tiers.add(2)
    sites = {s.site for s in servers}
    return tiers, len(sites) > 1, servers


@register("design.oversubscription")
def oversubscription(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.oversubscription"]
    fabric = ctx.fabric
    cap = fabric_capacity(fabric)
    tiers, cross_site, job = crossed_tiers(fabric)
    scope = (
        f"the workload's {len(job)} servers"
        if fabric.workload is not None
        else "data-parallel traffic across the whole fabric (no workload given)"
    )
    by_role: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for load in cap.switch_loads.values():
        ratio = load.oversubscription
        if ratio is not None and load.down_gbps > 0 and ratio > 1 + 1e-9:
            by_role[load.role].append((load.name, ratio))
    for role, items in sorted(by_role.items()):
        tier = SWITCH_ROLE_TIER[role]
        if fabric.workload is not None and tier not in tiers:
            continue
        items.sort(key=lambda x: -x[1])
        worst = items[0][1]
        names = [n for n, _ in items]
        busbw_share = 1 / worst
        yield meta.finding(
            target=f"{role} tier: {some(names)}",
            message=(f"{role} tier oversubscribed {worst:g}:1 on the path of {scope}"),
            expected="1:1 or better (downlink <= uplink bandwidth)",
            actual=f"{worst:g}:1",
            evidence=[f"{n}: down/up = {r:g}" for n, r in items[:5]],
            explanation=(
                f"A ring or tree AllReduce keeps every GPU sending at once, so a {role} switch "
                f"with {worst:g}x more bandwidth below than above can pass at most "
                f"{busbw_share:.0%} of its hosts' traffic upward: bus bandwidth across this tier "
                f"falls to about {busbw_share:.0%} of the NIC rate, and the queues that build "
                "trigger PFC pauses and ECN marks. S7 shows the 1:1 arithmetic (12.8 Tb/s down, "
                "12.8 Tb/s up); S8: DP gradient sync is what crosses the CLOS."
            ),
            fix=(
                f"give each {role} switch as much uplink as downlink bandwidth "
                f"(uplinks x {worst:g}, or fewer hosts per switch), or keep data-parallel "
                "groups under one switch by placement"
            ),
        )
    if "inter-site" in cap.oversubscription and (fabric.workload is None or cross_site):
        ratio = cap.oversubscription["inter-site"]
        if ratio > 1 + 1e-9:
            n_sites = max(1, len(fabric.sites))
            yield meta.finding(
                target="inter-site links",
                message=(
                    f"inter-site links oversubscribed {ratio:g}:1; DP traffic that "
                    "crosses sites runs at the inter-site rate"
                ),
                expected="1:1 for DP groups that span sites, or DP kept inside a site",
                actual=f"{ratio:g}:1",
                evidence=[
                    f"host bandwidth per site {cap.host_gbps / n_sites:g} Gb/s; inter-"
                    f"site bandwidth per site {cap.inter_site_gbps * 2 / n_sites:g} Gb/s"
                ],
                explanation=(
                    "A data-parallel ring that spans sites pushes the full gradient volume "
                    "2(n-1)/n x S across the inter-site links at every step; with "
                    f"{ratio:g}x less bandwidth there than in the site, every rank waits for "
                    "the slowest hop. The seed's case study (S17) kept only DP across sites and "
                    "replaced the firewall with a dedicated link; this is the arithmetic of "
                    "that link."
                ),
                fix=(
                    f"add inter-site links (about {math.ceil(ratio)}x), or use hierarchical "
                    "collectives so only one rank per site group crosses"
                ),
                severity="warning",
            )
