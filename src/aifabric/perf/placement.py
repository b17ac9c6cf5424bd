"""Where a communicator's ranks sit, and the platform that communicator sees (S8).

Placement rule (S8, Megatron-style launchers): ``Workload.rank_order`` lists the parallel axes
from innermost (consecutive global ranks) to outermost; a global rank ``r`` sits on server
``r // g`` (``g`` GPUs per server). A communicator (a DP, TP, EP group or a PP stage pair) is the
set of ranks that differ only along its axis; counting its ranks per server gives the
communicator's platform: ``nodes`` = servers it touches, ``gpus_per_node`` = its ranks per server
``k``, and its share of each server's NICs = ``N_NIC · k / g`` (all ``g/k`` groups on a server
communicate at the same time, each over the NICs of its own GPUs: rail-optimised servers give
one NIC per GPU). With the default order ``(tp, pp, dp)`` and ``tp · pp ≥ g``, a DP group has one
rank per server and each rank uses its own NIC (its rail): ``B`` = one NIC's goodput, which is
the picture the article's 4 s assumes. A fractional share (fewer NICs than GPUs) scales the
per-NIC efficiency (:class:`~aifabric.perf.estimate.Efficiency` ``nic``), so the estimate sees
``k · N_NIC / g`` NICs' worth of goodput per server.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.model.workload import Workload
from aifabric.perf.collectives import Collective
from aifabric.perf.estimate import Platform, Row, estimate

__all__ = ["REF_NODE_BW", "Placement", "Tier", "communicator", "placement", "time_one"]

REF_NODE_BW = (
    "a ring crosses each node once per channel, so it crosses N_NIC x B_NIC per node: "
    "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md (busbw), "
    "https://github.com/NVIDIA/nccl-tests/issues/267 (per-NIC goodput)"
)

Tier = Literal["intra-node", "inter-node"]
"""``intra-node`` (scale-up links only) or ``inter-node`` (crosses the NICs and the fabric)."""

# --------------------------------------------------------------------------------------------
# S8: where a communicator's ranks sit


@dataclass(frozen=True, slots=True)
class Placement:
    """One communicator laid onto servers (S8), and the platform that models it."""

    axis: str
    """``dp``, ``tp``, ``ep`` or ``pp`` (a stage pair)."""
    ranks: int
    nodes: int
    """Servers the communicator touches."""
    ranks_per_node: int
    """Its ranks on each server (the fewest, when uneven)."""
    nic_share: float
    """NICs of one server this communicator owns: ``N_NIC · k / g``."""
    platform: Platform
    """The communicator's platform: ``nodes × ranks_per_node`` ranks (when uneven:
    ``n/k'`` nodes of ``k'`` ranks, ``k'`` the largest divisor of ``n`` ≤ the fewest per server)
    with ``ceil(nic_share)`` NICs per node, each scaled to the share."""
    server_gpus: int
    """``g``: GPUs per server."""
    server_nics: int
    """``N_NIC``: NICs per server."""
    uneven: bool = False
    """Servers hold different numbers of its ranks (the platform uses the fewest)."""

    @property
    def tier(self) -> Tier:
        return "inter-node" if self.nodes > 1 else "intra-node"

    def explained(self) -> Explained:
        """The placement rule with this communicator's figures."""
        p = self.platform
        return Explained.fast(
            quantity=f"{self.axis} communicator placement",
            value=f"{self.nodes} node(s) x {self.ranks_per_node} rank(s)",
            formula=(
                "rank r = sum(index_a x stride_a) over rank_order (innermost first); server = "
                "r // g; k = ranks per server; NICs owned = N_NIC x k / g"
            ),
            inputs={
                "ranks": self.ranks,
                "g_gpus_per_server": self.server_gpus,
                "N_nics_per_server": self.server_nics,
                "k_ranks_per_server": self.ranks_per_node,
                "nic_share": round(self.nic_share, 4),
                "nics_per_node_modelled": p.nics_per_node,
                "nic_efficiency": round(p.efficiency.nic, 4),
                "tier": self.tier,
            },
            sources=["S8", REF_NODE_BW],
            note=(
                "servers hold different numbers of ranks: the NIC share is the fewest's, n is kept"
                if self.uneven
                else None
            ),
        )


def _layout(w: Workload) -> dict[str, int]:
    """Axis sizes used to number ranks: ``ep`` is carved out of ``dp`` when listed."""
    sizes = {"tp": w.tp, "pp": w.pp, "dp": w.dp}
    if "ep" in w.rank_order:
        sizes["ep"] = w.ep
        sizes["dp"] = w.dp // w.ep
    return sizes


def _rank(w: Workload, sizes: Mapping[str, int], coord: Mapping[str, int]) -> int:
    r, stride = 0, 1
    for axis in w.rank_order:
        r += coord.get(axis, 0) * stride
        stride *= sizes[axis]
    return r


def _group_ranks(w: Workload, axis: str) -> list[int]:
    """Global ranks of the first communicator along ``axis`` (others at index 0)."""
    sizes = _layout(w)
    if axis == "dp":
        if "ep" in sizes:
            return [
                _rank(w, sizes, {"ep": e, "dp": d})
                for d in range(sizes["dp"])
                for e in range(sizes["ep"])
            ]
        return [_rank(w, sizes, {"dp": d}) for d in range(w.dp)]
    if axis == "ep":
        if "ep" in sizes:
            return [_rank(w, sizes, {"ep": e}) for e in range(w.ep)]
        # Megatron: expert groups are ep consecutive members of the DP group
        return [_rank(w, sizes, {"dp": d}) for d in range(w.ep)]
    if axis == "tp":
        return [_rank(w, sizes, {"tp": t}) for t in range(w.tp)]
    if axis == "pp":  # the first stage boundary: stage 0 -> stage 1
        return [_rank(w, sizes, {"pp": s}) for s in range(min(w.pp, 2))]
    raise InputError(f"unknown parallel axis {axis!r}")


def communicator(node: Platform, axis: str, ranks: list[int]) -> Placement:
    g = node.gpus_per_node
    if g < 1:
        raise InputError("GPUs per server must be at least 1")
    per_node = Counter(r // g for r in ranks)
    nodes = len(per_node)
    k = min(per_node.values())
    uneven = max(per_node.values()) != k
    share = node.nics_per_node * k / g
    nics = max(1, math.ceil(share - 1e-9))
    frac = share / nics if share > 0 else 1.0
    eff = node.efficiency
    if frac < 1.0 - 1e-12:
        eff = replace(eff, nic=eff.nic * frac)
    # keep n exact: uneven servers are modelled as n/k' servers of k' ranks, k' the largest
    # divisor of n not above the fewest ranks per server (the NIC share stays that server's)
    n = len(ranks)
    k_model = max(d for d in range(1, k + 1) if n % d == 0)
    platform = replace(
        node, nodes=n // k_model, gpus_per_node=k_model, nics_per_node=nics, efficiency=eff
    )
    return Placement(axis, len(ranks), nodes, k, share, platform, g, node.nics_per_node, uneven)


def placement(node: Platform, workload: Workload, axis: str = "dp") -> Placement:
    """The communicator of ``axis`` (``dp``, ``tp``, ``ep`` or ``pp``) of ``workload`` on
    servers like ``node`` (its ``gpus_per_node``, NICs, transport; ``node.nodes`` is not used:
    the job occupies ``ceil(gpus / g)`` servers). See the module docstring for the rule (S8)."""
    return communicator(node, axis, _group_ranks(workload, axis))


def time_one(pl: Placement, coll: Collective, size: int) -> tuple[float, Row, str]:
    """(seconds, the estimate row, the bounding link) of one collective on ``pl``."""
    if pl.platform.ranks <= 1:
        return 0.0, Row(size, 0.0, 0.0, 0.0, "none", "none", "one rank"), "none"
    e = estimate(pl.platform, coll, [size])
    row = e.rows[0]
    return row.time_us * 1e-6, row, str(e.bottleneck["link"])
