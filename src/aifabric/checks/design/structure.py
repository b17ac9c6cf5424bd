"""Structural checks: middleboxes in the data path (S17), legacy three-tier networks (S6),
TCP transport (S5, S17), uplink redundancy (S6)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import SWITCH_ROLE_TIER, fabric_index

__all__: list[str] = []


@register("design.middlebox-on-path")
def middlebox_on_path(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.middlebox-on-path"]
    fabric = ctx.fabric
    idx = fabric_index(fabric)
    for box in fabric.middleboxes:
        links = [ln for ln in idx.links_of.get(box.name, []) if ln.kind != "management"]
        peers = {(ln.b if ln.a.device == box.name else ln.a).device for ln in links}
        switches = [p for p in peers if p in idx.switches]
        if len(switches) + len([p for p in peers if p in idx.servers]) < 2:
            continue
        sites = sorted({s for s in (idx.switches[p].site for p in switches) if s})
        between = f" between {' and '.join(sites)}" if len(sites) > 1 else ""
        limit = (
            f"; it throttles each connection to {box.session_rate_limit_gbps:g} Gb/s"
            if box.session_rate_limit_gbps
            else ""
        )
        yield meta.finding(
            target=box.name,
            severity="error" if box.kind == "firewall" or box.stateful else "warning",
            message=(
                f"{box.kind} {box.name} forwards fabric traffic{between} "
                f"(joins {', '.join(sorted(peers))}){limit}"
            ),
            expected="no middlebox on the collective-communication path",
            actual=f"{box.kind} in path",
            evidence=[ln.name for ln in links[:4]],
            explanation=(
                "Collective traffic is a few long-lived, very fast flows. A stateful firewall "
                "tracks and often rate-limits such connections, and drops bursts instead of "
                "pausing them: the seed's case study (S17) found exactly this between its two "
                "sites, and the symptom table (S20.4) lists it for cross-site jitter. RoCE "
                "through a middlebox also loses PFC/ECN semantics."
            ),
            fix=(
                f"take {box.name} off the data path: connect the sites with a dedicated L2/L3 "
                "link and keep the firewall for management/north-south traffic"
            ),
        )


@register("design.legacy-three-tier")
def legacy_three_tier(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.legacy-three-tier"]
    idx = fabric_index(ctx.fabric)
    legacy = [s.name for s in ctx.fabric.switches if s.role in ("access", "aggregation", "core")]
    if not legacy:
        return
    hosts_on_access = sum(
        1
        for ln in ctx.fabric.links
        if ln.kind == "host"
        and any(
            e.device in idx.switches and idx.switches[e.device].role == "access"
            for e in (ln.a, ln.b)
        )
    )
    if hosts_on_access == 0:
        return
    yield meta.finding(
        target=some(legacy),
        message=(
            f"{hosts_on_access} GPU host link(s) hang off an access/aggregation/core hierarchy"
        ),
        expected="two-tier leaf-spine CLOS (leaf/spine roles)",
        actual="access/aggregation/core",
        evidence=[f"{n}: {idx.switches[n].role}" for n in legacy[:5]],
        explanation=(
            "A three-tier campus/enterprise design aggregates traffic north-south towards a "
            "core; AI training traffic is east-west between all GPUs at once, so it funnels "
            "through a few aggregation uplinks and their oversubscription (S6). A leaf-spine "
            "CLOS gives every leaf equal-cost paths to every other leaf."
        ),
        fix="rebuild the GPU fabric as a two-tier leaf-spine CLOS at 1:1 (aifabric design)",
    )


@register("design.transport")
def transport(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.transport"]
    fabric = ctx.fabric
    servers = [s for s in fabric.servers if s.gpus > 0]
    if fabric.transport != "socket" or len(servers) < 2:
        return
    yield meta.finding(
        target=f"fabric {fabric.name}",
        message=f"NCCL runs over TCP sockets between {len(servers)} GPU servers",
        expected="RDMA (RoCEv2 or InfiniBand)",
        actual="socket (TCP)",
        explanation=(
            "NCCL's socket transport copies every byte through the kernel and host memory, burns "
            "CPU cores and reacts to any burst loss with TCP retransmission timeouts; GPUs wait "
            "on the slowest rank. The seed's case study (S17) ran 22-minute iterations at 45% "
            "GPU utilisation this way and reached 9 minutes and 72% after moving to RoCEv2 "
            "on a lossless two-tier CLOS (S5)."
        ),
        fix="use RDMA NICs with RoCEv2 on a lossless fabric (or InfiniBand), transport: roce",
    )


@register("design.uplink-redundancy")
def uplink_redundancy(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.uplink-redundancy"]
    fabric = ctx.fabric
    idx = fabric_index(fabric)
    single: dict[str, list[str]] = defaultdict(list)
    for sw in fabric.switches:
        tier = SWITCH_ROLE_TIER[sw.role]
        uppers: set[str] = set()
        for ln in idx.links_of.get(sw.name, []):
            other = (ln.b if ln.a.device == sw.name else ln.a).device
            up = idx.switches.get(other)
            if up is not None and SWITCH_ROLE_TIER[up.role] > tier and ln.kind != "inter-site":
                uppers.add(other)
        if len(uppers) == 1:
            single[next(iter(uppers))].append(sw.name)
    if not single:
        return
    lowers = sorted(n for group in single.values() for n in group)
    pairs = sorted((low, up) for up, group in single.items() for low in group)
    yield meta.finding(
        target=some(lowers),
        message=f"{len(lowers)} switch(es) have every uplink on a single upper switch",
        expected="uplinks striped over at least two upper-tier switches",
        actual=f"{len(lowers)} single-homed switch(es)",
        evidence=[f"{low}: all uplinks to {up}" for low, up in pairs[:5]],
        explanation=(
            "With one upper switch there is no ECMP spread and no second path: "
            "losing it disconnects everything below it (S6)."
        ),
        fix=f"spread the uplinks of {some(lowers, 2)} over two or more upper-tier switches",
    )
