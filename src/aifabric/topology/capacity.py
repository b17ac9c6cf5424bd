"""Capacity of a fabric: oversubscription per switch and per tier, bisection bandwidth, counts.

Works on any fabric (designed, hand-written or imported), from its links alone.

Oversubscription of a switch = downlink bandwidth / uplink bandwidth, where *down* links go to
hosts or to switches of a lower tier and *up* links to switches of a higher tier (S6: non-blocking
when down <= up, i.e. ratio <= 1). Links between equal tiers and inter-site links are neither.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from aifabric.explain import Explained
from aifabric.model import SWITCH_ROLE_TIER, Fabric, fabric_index

__all__ = ["Capacity", "SwitchLoad", "fabric_capacity"]

_TIER_NAME = {1: "leaf", 2: "spine", 3: "super_spine"}


@dataclass(frozen=True)
class SwitchLoad:
    """Down and up bandwidth of one switch, Gb/s."""

    name: str
    role: str
    down_gbps: float
    up_gbps: float

    @property
    def oversubscription(self) -> float | None:
        """down/up, or None for a switch without uplinks (a top-tier switch)."""
        return self.down_gbps / self.up_gbps if self.up_gbps > 0 else None


@dataclass
class Capacity:
    """Counts and capacity figures of a fabric (the summary ``design`` and ``show`` print)."""

    servers: int
    gpus: int
    tiers: int
    leaves: int
    spines: int
    super_spines: int
    host_gbps: float
    oversubscription: dict[str, float]
    """tier name -> worst (highest) down/up ratio among that tier's switches"""
    bisection_gbps: float
    inter_site_gbps: float
    switch_loads: dict[str, SwitchLoad] = field(default_factory=dict)
    explain: list[Explained] = field(default_factory=list)


def fabric_capacity(fabric: Fabric) -> Capacity:
    """Counts, oversubscription per tier and bisection bandwidth of ``fabric``."""
    idx = fabric_index(fabric)
    tier_of: dict[str, int] = {s.name: SWITCH_ROLE_TIER[s.role] for s in fabric.switches}
    down: dict[str, float] = defaultdict(float)
    up: dict[str, float] = defaultdict(float)
    host_gbps = 0.0
    inter_site = 0.0
    box_sides: dict[str, dict[str | None, float]] = defaultdict(lambda: defaultdict(float))
    for link in fabric.links:
        a, b = link.a.device, link.b.device
        if link.kind == "management":
            continue
        if link.kind == "inter-site":
            box = a if a in idx.middleboxes else b if b in idx.middleboxes else None
            if box is None:
                inter_site += link.speed_gbps
            else:
                other = b if box == a else a
                site = (
                    idx.switches[other].site
                    if other in idx.switches
                    else idx.servers[other].site
                    if other in idx.servers
                    else None
                )
                box_sides[box][site] += link.speed_gbps
            continue
        ta, tb = tier_of.get(a), tier_of.get(b)
        if a in idx.servers or b in idx.servers:
            sw = b if a in idx.servers else a
            host_gbps += link.speed_gbps
            if sw in tier_of:
                down[sw] += link.speed_gbps
            continue
        if ta is None or tb is None or ta == tb:
            continue  # middlebox links, peer links
        lower, upper = (a, b) if ta < tb else (b, a)
        up[lower] += link.speed_gbps
        down[upper] += link.speed_gbps

    for box, sides in box_sides.items():
        # what can cross a middlebox between its sides: all but its best-connected side,
        # capped by its own throughput
        through = sum(sides.values()) - max(sides.values()) if len(sides) > 1 else 0.0
        limit = idx.middleboxes[box].throughput_gbps
        inter_site += min(through, limit) if limit is not None else through

    loads = {
        s.name: SwitchLoad(s.name, s.role, down[s.name], up[s.name])
        for s in fabric.switches
        if s.role != "management"
    }
    ratios: dict[str, float] = {}
    worst_of: dict[str, SwitchLoad] = {}
    tier_up: dict[int, float] = defaultdict(float)
    for s in fabric.switches:
        load = loads.get(s.name)
        if load is None:
            continue
        tier_up[tier_of[s.name]] += load.up_gbps
        ratio = load.oversubscription
        if ratio is not None and load.down_gbps > 0 and round(ratio, 6) > ratios.get(s.role, -1.0):
            ratios[s.role] = round(ratio, 6)
            worst_of[s.role] = load
    used_tiers = {
        tier_of[s.name]
        for s in fabric.switches
        if s.role != "management" and (loads[s.name].down_gbps > 0 or loads[s.name].up_gbps > 0)
    }
    tiers = max(used_tiers, default=0)
    counts = {
        t: sum(1 for s in fabric.switches if s.role != "management" and tier_of[s.name] == t)
        for t in (1, 2, 3)
    }

    cuts = [host_gbps / 2]
    cut_names = ["hosts/2"]
    for t in sorted(tier_up):
        if tier_up[t] > 0:
            cuts.append(tier_up[t] / 2)
            cut_names.append(f"{_TIER_NAME.get(t, str(t))} uplinks/2")
    if inter_site > 0:
        cuts.append(inter_site)
        cut_names.append("inter-site links")
    bisection = min(cuts) if host_gbps > 0 else 0.0
    if tiers <= 1 and inter_site == 0:
        bisection = host_gbps / 2

    if fabric.sites and len(fabric.sites) > 1 and inter_site > 0:
        per_site_host = host_gbps / len(fabric.sites)
        per_site_inter = inter_site * 2 / len(fabric.sites)
        ratios["inter-site"] = round(per_site_host / per_site_inter, 6)

    explain = [
        Explained(
            quantity="oversubscription per switch",
            value="down/up",
            formula="sum(speed of links to hosts or lower tiers) / sum(speed of links to "
            "higher tiers); the tier figure is the worst switch of the tier",
            sources=["S6"],
        ),
        *[
            Explained(
                quantity=f"{role} oversubscription",
                value=ratio,
                unit=":1",
                formula="max over the tier's switches of down_Gbps / up_Gbps",
                inputs={
                    "worst switch": worst_of[role].name,
                    "down_Gbps": worst_of[role].down_gbps,
                    "up_Gbps": worst_of[role].up_gbps,
                },
                sources=["S6", "S7"],
            )
            for role, ratio in ratios.items()
            if role in worst_of
        ],
        Explained(
            quantity="bisection bandwidth",
            value=round(bisection, 3),
            unit="Gb/s",
            formula="min(" + ", ".join(cut_names) + ")",
            inputs={name: round(v, 3) for name, v in zip(cut_names, cuts, strict=True)},
            note="the smallest cut that splits the hosts into two halves, one direction",
        ),
    ]
    if "inter-site" in ratios:
        explain.append(
            Explained(
                quantity="inter-site oversubscription",
                value=ratios["inter-site"],
                formula="host bandwidth of one site / inter-site bandwidth leaving it",
                inputs={
                    "host_Gbps_per_site": host_gbps / len(fabric.sites),
                    "inter_site_Gbps_per_site": inter_site * 2 / len(fabric.sites),
                },
                sources=["S17"],
            )
        )
    return Capacity(
        servers=len(fabric.servers),
        gpus=sum(s.gpus for s in fabric.servers),
        tiers=tiers,
        leaves=counts[1],
        spines=counts[2],
        super_spines=counts[3],
        host_gbps=host_gbps,
        oversubscription=ratios,
        bisection_gbps=bisection,
        inter_site_gbps=inter_site,
        switch_loads=loads,
        explain=explain,
    )
