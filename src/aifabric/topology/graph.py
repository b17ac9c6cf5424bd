"""The fabric as a graph (NetworkX): the view paths, ECMP and capacity analyses walk.

Nodes are device names with ``kind`` (server/switch/middlebox), ``role`` and ``tier`` (0 for
servers, 1 leaf, 2 spine, 3 super-spine; middleboxes get ``None``). Edges are links, keyed by
their index in ``fabric.links`` so parallel links stay distinct; each edge carries the
:class:`~aifabric.model.Link` as ``link`` and its ``speed_gbps``.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from aifabric.bulk import gc_paused
from aifabric.model import SWITCH_ROLE_TIER, Fabric

__all__ = ["fabric_graph"]


def fabric_graph(fabric: Fabric) -> Any:
    """A ``networkx.MultiGraph`` of ``fabric`` (see the module docstring for attributes)."""
    with gc_paused():
        graph = nx.MultiGraph(name=fabric.name)
        graph.add_nodes_from(
            (s.name, {"kind": "server", "role": "server", "tier": 0, "site": s.site})
            for s in fabric.servers
        )
        graph.add_nodes_from(
            (
                s.name,
                {
                    "kind": "switch",
                    "role": s.role,
                    "tier": SWITCH_ROLE_TIER[s.role],
                    "site": s.site,
                },
            )
            for s in fabric.switches
        )
        graph.add_nodes_from(
            (m.name, {"kind": "middlebox", "role": m.kind, "tier": None, "site": m.site})
            for m in fabric.middleboxes
        )
        graph.add_edges_from(
            (link.a.device, link.b.device, i, {"link": link, "speed_gbps": link.speed_gbps})
            for i, link in enumerate(fabric.links)
        )
    return graph
