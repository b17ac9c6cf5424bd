"""How many switches of each tier, from the cluster parameters: pure arithmetic, no objects.

Symbols used in formulas and ``--explain`` output::

    S      servers (per site)               R     physical ports per switch
    n      host ports per server per plane  p     switch port speed, Gb/s
    s      NIC port speed, Gb/s             b     breakout factor p/s (S7: 400G as 2x200G)
    o      leaf oversubscription down:up    o2    spine oversubscription down:up (3 tiers)
    x      host ports on one leaf           u     uplinks per leaf
    L      leaves per plane                 sp    spines per plane (two tiers)
    Lp     leaves per pod                   ss    super-spines per spine plane

A leaf with ``x`` host ports needs ``ceil(x/b)`` physical down ports and
``u = ceil(x*s / (o*p))`` uplinks, and both must fit: ``ceil(x/b) + u <= R``. Two tiers work while
every leaf can reach every spine: ``L * (u/sp) <= R``; beyond that, three tiers of pods
(RFC 7938 §3.2 "Clos topology"; S6, S7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aifabric.errors import DesignError
from aifabric.explain import Explained

__all__ = ["FabricPlan", "leaf_host_capacity", "plan_fabric", "smallest_divisor_at_least"]


def leaf_host_capacity(
    ports: int,
    breakout: int,
    nic_gbps: float,
    port_gbps: float,
    oversubscription: float,
    *,
    step: int = 1,
) -> int:
    """Largest host-port count ``x`` (a multiple of ``step``) one leaf can take.

    ``x`` fits when ``ceil(x / breakout) + ceil(x * nic_gbps / (oversubscription * port_gbps))
    <= ports``. S7: 64 ports, breakout 2, 200G NICs, 400G ports, 1:1 gives 64.

    >>> leaf_host_capacity(64, 2, 200, 400, 1.0)
    64
    """
    best = 0
    x = step
    while True:
        down = math.ceil(x / breakout)
        up = math.ceil(round(x * nic_gbps / (oversubscription * port_gbps), 9))
        if down + up > ports:
            return best
        best = x
        x += step


def smallest_divisor_at_least(n: int, floor: int) -> int | None:
    """Smallest divisor of ``n`` that is ``>= floor`` (None when ``floor > n``)."""
    for d in range(max(1, floor), n + 1):
        if n % d == 0:
            return d
    return None


@dataclass
class FabricPlan:
    """Switch counts and wiring rules for one plane of one site (all planes are identical)."""

    layout: str
    servers: int
    host_ports_per_server: int
    breakout: int
    leaf_hosts: int
    """host ports per (full) leaf"""
    servers_per_leaf: int
    """ToR: servers per leaf; rail: servers per scalable unit"""
    leaves: int
    leaf_down_ports: int
    uplinks: int
    tiers: int
    spines: int = 0
    links_per_spine: int = 0
    """two tiers: parallel links from each leaf to each spine"""
    leaves_per_pod: int = 0
    pods: int = 0
    spine_uplinks: int = 0
    super_spines_per_plane: int = 0
    """three tiers: super-spines in each spine plane"""
    links_per_super: int = 0
    explain: list[Explained] = field(default_factory=list)

    @property
    def su_count(self) -> int:
        return math.ceil(self.servers / self.servers_per_leaf)

    @property
    def spines_total(self) -> int:
        """Spines of one plane: shared ones (two tiers) or all pods' (three tiers)."""
        return self.spines if self.tiers == 2 else self.spines * self.pods

    @property
    def super_spines_total(self) -> int:
        return self.spines * self.super_spines_per_plane if self.tiers == 3 else 0


def plan_fabric(
    *,
    servers: int,
    host_ports_per_server: int,
    nic_gbps: float,
    ports: int,
    port_gbps: float,
    breakout: int,
    oversubscription: float,
    spine_oversubscription: float,
    layout: str,
    servers_per_su: int | None,
    tiers: str,
    min_spines: int,
    top_free_ports: int = 0,
) -> FabricPlan:
    """Size one plane of one site. ``host_ports_per_server`` counts this plane's ports only.

    ``top_free_ports`` reserves ports on the top tier (for inter-site links).
    Raises :class:`DesignError` when no fabric of at most three tiers fits.
    """
    n = host_ports_per_server
    S = servers
    R = ports
    ex: list[Explained] = []
    src = ["S6", "S7", "https://www.rfc-editor.org/rfc/rfc7938#section-3.2"]
    step = n if layout == "tor" else 1
    x_max = leaf_host_capacity(R, breakout, nic_gbps, port_gbps, oversubscription, step=step)
    if x_max == 0:
        raise DesignError(
            f"one server's {n} ports at {nic_gbps:g} Gb/s do not fit on a {R}-port leaf at "
            f"oversubscription {oversubscription:g}:1 with ToR layout; use --layout rail"
            if layout == "tor"
            else f"a {R}-port leaf cannot take even one host port at {oversubscription:g}:1"
        )
    ex.append(
        Explained(
            quantity="host ports per leaf (max)",
            value=x_max,
            formula="largest x with ceil(x/b) + ceil(x*s/(o*p)) <= R"
            + (" and x a multiple of n" if layout == "tor" else ""),
            inputs={
                "R": R,
                "b": breakout,
                "s_Gbps": nic_gbps,
                "p_Gbps": port_gbps,
                "o": oversubscription,
                "n": n,
            },
            sources=src,
        )
    )
    if layout == "tor":
        per_leaf = x_max // n
        leaves = math.ceil(S / per_leaf)
        x_full = min(S, per_leaf) * n
        ex.append(
            Explained(
                quantity="servers per leaf",
                value=per_leaf,
                formula="k = x_max / n",
                inputs={"x_max": x_max, "n": n},
            )
        )
        ex.append(
            Explained(
                quantity="leaves per plane",
                value=leaves,
                formula="L = ceil(S / k)",
                inputs={"S": S, "k": per_leaf},
            )
        )
    else:
        su = servers_per_su if servers_per_su is not None else min(x_max, S)
        if su > x_max:
            raise DesignError(
                f"--servers-per-su {su} exceeds what a {R}-port rail leaf takes ({x_max} hosts "
                f"at {oversubscription:g}:1)"
            )
        per_leaf = su
        sus = math.ceil(S / su)
        leaves = sus * n
        x_full = min(S, su)
        ex.append(
            Explained(
                quantity="servers per scalable unit",
                value=su,
                formula="SU = min(x_max, S) unless given (one port per server per rail leaf)",
                inputs={"x_max": x_max, "S": S},
                sources=["docs/references.md#rail-optimized"],
            )
        )
        ex.append(
            Explained(
                quantity="leaves per plane",
                value=leaves,
                formula="L = ceil(S / SU) * n  (one rail leaf per host port per SU)",
                inputs={"S": S, "SU": su, "n": n},
            )
        )
    down_ports = math.ceil(x_full / breakout)
    uplinks = math.ceil(round(x_full * nic_gbps / (oversubscription * port_gbps), 9))
    ex.append(
        Explained(
            quantity="downlink ports per leaf",
            value=down_ports,
            formula="ceil(x / b)",
            inputs={"x": x_full, "b": breakout},
            sources=["S7"],
        )
    )
    ex.append(
        Explained(
            quantity="uplinks per leaf",
            value=uplinks,
            formula="u = ceil(x*s / (o*p))",
            inputs={"x": x_full, "s_Gbps": nic_gbps, "o": oversubscription, "p_Gbps": port_gbps},
            sources=["S6", "S7"],
        )
    )
    plan = FabricPlan(
        layout=layout,
        servers=S,
        host_ports_per_server=n,
        breakout=breakout,
        leaf_hosts=x_full,
        servers_per_leaf=per_leaf,
        leaves=leaves,
        leaf_down_ports=down_ports,
        uplinks=uplinks,
        tiers=1,
        explain=ex,
    )

    if tiers == "auto" and leaves == 1 and top_free_ports == 0:
        ex.append(
            Explained(
                quantity="tiers", value=1, formula="one leaf holds every host port", inputs={"L": 1}
            )
        )
        plan.uplinks = 0
        return plan

    want_two = tiers in ("auto", "2")
    if want_two:
        two = _two_tier(plan, R, min_spines, top_free_ports)
        if two is not None:
            return two
        if tiers == "2":
            raise DesignError(
                f"{leaves} leaves with {uplinks} uplinks each cannot all reach {R}-port spines "
                f"(two tiers hold at most {R} leaves); drop --tiers 2 for a three-tier design, "
                "or add planes"
            )
    return _three_tier(plan, R, spine_oversubscription, top_free_ports, min_spines)


def _two_tier(plan: FabricPlan, R: int, min_spines: int, top_free: int) -> FabricPlan | None:
    L, u = plan.leaves, plan.uplinks
    usable = R - top_free
    if usable <= 0:
        return None
    floor = max(min(min_spines, u), math.ceil(L * u / usable))
    sp = smallest_divisor_at_least(u, floor)
    if sp is None:
        return None
    m = u // sp
    if L * m > usable:
        return None
    plan.tiers = 2
    plan.spines = sp
    plan.links_per_spine = m
    plan.explain.append(
        Explained(
            quantity="spines per plane",
            value=sp,
            formula="smallest divisor sp of u with "
            "sp >= max(min(min_spines, u), ceil(L*u/(R - r)))",
            inputs={"u": u, "L": L, "R": R, "r (reserved)": top_free, "min_spines": min_spines},
            sources=["S6", "https://www.rfc-editor.org/rfc/rfc7938#section-3.2"],
            note=f"each leaf has {m} link(s) to every spine; spine ports used {L * m} of {R}",
        )
    )
    plan.explain.append(
        Explained(
            quantity="tiers",
            value=2,
            formula="L * (u/sp) <= R: every leaf reaches every spine",
            inputs={"L": L, "u/sp": m, "R": R},
            sources=["S6"],
        )
    )
    return plan


def _three_tier(plan: FabricPlan, R: int, o2: float, top_free: int, min_spines: int) -> FabricPlan:
    u = plan.uplinks
    n = plan.host_ports_per_server
    # Pod spine: Lp ports down (one per leaf), ceil(Lp/o2) up.
    lp_max = 0
    for lp in range(1, R + 1):
        if lp + math.ceil(round(lp / o2, 9)) <= R:
            lp_max = lp
    if plan.layout == "rail":
        per_pod_units = lp_max // n
        if per_pod_units == 0:
            raise DesignError(f"a {R}-port spine cannot hold one scalable unit of {n} rail leaves")
        lp = per_pod_units * n
    else:
        lp = lp_max
    lp = min(lp, plan.leaves)
    pods = math.ceil(plan.leaves / lp)
    spine_up = math.ceil(round(lp / o2, 9))
    usable = R - top_free
    floor = (
        max(min(min_spines, spine_up), math.ceil(pods * spine_up / usable)) if usable > 0 else R + 1
    )
    ss = smallest_divisor_at_least(spine_up, floor)
    if ss is None or pods * (spine_up // ss) > usable:
        raise DesignError(
            f"{plan.leaves} leaves need {pods} pods of {lp} leaves, more than {R}-port "
            "super-spines can join (more than three tiers); use a larger radix, more planes "
            "or a higher oversubscription"
        )
    plan.tiers = 3
    plan.spines = u
    plan.links_per_spine = 1
    plan.leaves_per_pod = lp
    plan.pods = pods
    plan.spine_uplinks = spine_up
    plan.super_spines_per_plane = ss
    plan.links_per_super = spine_up // ss
    plan.explain.extend(
        [
            Explained(
                quantity="leaves per pod",
                value=lp,
                formula="largest Lp with Lp + ceil(Lp/o2) <= R"
                + (", whole SUs of n rail leaves" if plan.layout == "rail" else ""),
                inputs={"R": R, "o2": o2, "n": n},
                sources=["https://www.rfc-editor.org/rfc/rfc7938#section-3.2"],
            ),
            Explained(
                quantity="pods per plane",
                value=pods,
                formula="ceil(L / Lp)",
                inputs={"L": plan.leaves, "Lp": lp},
            ),
            Explained(
                quantity="spines per pod",
                value=u,
                formula="sp = u (one link from every leaf to every spine of its pod)",
                inputs={"u": u},
            ),
            Explained(
                quantity="uplinks per spine",
                value=spine_up,
                formula="ceil(Lp / o2)",
                inputs={"Lp": lp, "o2": o2},
            ),
            Explained(
                quantity="super-spines per spine plane",
                value=ss,
                formula="smallest divisor ss of spine uplinks with "
                "ss >= max(min(min_spines, up), ceil(pods*up/(R - r)))",
                inputs={"pods": pods, "up": spine_up, "R": R, "r (reserved)": top_free},
                note=f"spine plane j joins spine j of every pod; {u} spine planes, "
                f"{u * ss} super-spines per plane of the fabric",
            ),
            Explained(
                quantity="tiers",
                value=3,
                formula="L > R/(u/sp): leaves cannot all reach shared spines, so pods + "
                "super-spines",
                inputs={"L": plan.leaves, "R": R},
                sources=["S6"],
            ),
        ]
    )
    return plan
