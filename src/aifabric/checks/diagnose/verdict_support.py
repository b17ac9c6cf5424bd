"""Shared by the verdict modules: the capture a record belongs to (per-evidence index of
records by file), line quoting, number formatting, and the public sources quoted in
explanations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from aifabric.evidence.base import Record
from aifabric.evidence.nccl_log import CommEvent
from aifabric.evidence.nccl_log_base import NcclLogRecord
from aifabric.evidence.nccl_tests import NcclTestsHeader

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item



Severity = Literal["error", "warning", "info"]

# Public sources quoted in explanations.
_IBSTAT_DOC = (
    "https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/man/ibstat.8.in.rst"
)
_DEVINFO_SRC = "https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/examples/devinfo.c"
_IBDIAG_SRC = "https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/ibdiag_common.c"
_LSPCI_SRC = "https://github.com/pciutils/pciutils/blob/master/ls-caps.c"
_AER_SRC = "https://github.com/pciutils/pciutils/blob/master/ls-ecaps.c"
_PCI_C = "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.c"
_MLX5_EVENTS = (
    "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/events.c"
)
_MLX5_EN_MAIN = "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/en_main.c"
_MLX5_HEALTH = (
    "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/health.c"
)
_ROCE_GID_SRC = (
    "https://github.com/torvalds/linux/blob/master/drivers/infiniband/core/roce_gid_mgmt.c"
)
_IB_ADDR_H = "https://github.com/torvalds/linux/blob/master/include/rdma/ib_addr.h"
_NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
_NCCL_TOPO = "https://github.com/NVIDIA/nccl/blob/master/src/graph/topo.cc"
_NCCL_TESTS_PERF = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
_NCCL_TESTS_COMMON = "https://github.com/NVIDIA/nccl-tests/blob/master/src/common.cu"
_PERFTEST = "https://github.com/linux-rdma/perftest"
_IP_LINK = "https://man7.org/linux/man-pages/man8/ip-link.8.html"
_OPERSTATES = "https://docs.kernel.org/networking/operstates.html"
_ETHTOOL = "https://man7.org/linux/man-pages/man8/ethtool.8.html"
_PING = "https://man7.org/linux/man-pages/man8/ping.8.html"



# -- the capture a record belongs to -------------------------------------------------------------


@dataclass(slots=True)
class _Index:
    ev: Evidence
    size: int
    item_of: dict[int, Item] = field(default_factory=dict)
    parts: dict[int, list[Record]] = field(default_factory=dict)
    memo: dict[tuple[str, int], object] = field(default_factory=dict)
    """Per-capture summaries computed once (keyed by kind and the capture's first record)."""


_LAST: list[_Index] = []
"""The index of the last :class:`Evidence` seen (verdicts run over one evidence at a time)."""


def _index(ev: Evidence) -> _Index:
    if _LAST and _LAST[0].ev is ev and _LAST[0].size == len(ev.items):
        return _LAST[0]
    idx = _Index(ev, len(ev.items))
    for item in ev.items:
        idx.item_of[id(item.record)] = item
        if item.file is not None:
            idx.parts.setdefault(id(item.file), []).append(item.record)
    _LAST[:] = [idx]
    return idx


def _item(rec: Record, ev: Evidence) -> Item | None:
    return _index(ev).item_of.get(id(rec))


def _capture(rec: Record, ev: Evidence) -> list[Record] | None:
    """The records of the capture (file, or part of a paste) ``rec`` comes from, in order;
    ``None`` when ``rec`` was not loaded into ``ev`` (judged alone)."""
    item = _item(rec, ev)
    if item is None:
        return None
    if item.file is None:
        return [rec]
    return _index(ev).parts.get(id(item.file), [rec])


def _line_text(rec: Record, ev: Evidence) -> str | None:
    item = _item(rec, ev)
    if item is None or item.file is None or not 1 <= rec.line <= len(item.file.lines):
        return None
    return item.file.lines[rec.line - 1]


def _fmt(x: float) -> str:
    """``200.0`` → ``200``, ``126.0308`` → ``126.0``."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def several_nodes(ev: Evidence) -> bool:
    """Whether the input shows a job on more than one node: a communicator or nccl-tests header
    saying so, NCCL lines from two hosts, or a channel over the network (``via NET/``). The
    counterpart of :func:`single_node`: both False when the input does not say."""
    hosts: set[str] = set()
    for item in ev.items:
        rec = item.record
        if isinstance(rec, CommEvent) and rec.nnodes is not None and rec.nnodes > 1:
            return True
        if isinstance(rec, NcclTestsHeader) and rec.nodes > 1:
            return True
        host = getattr(rec, "host", None) if isinstance(rec, NcclLogRecord) else None
        if host:
            hosts.add(host)
            if len(hosts) > 1:
                return True
    return any("via NET/" in line for f in ev.files for _, line in f.own_lines())


def single_node(ev: Evidence) -> bool:
    """Whether the input's jobs all ran on one node: every NCCL communicator's ``nNodes`` is 1
    and every nccl-tests header lists all its ranks on one host; False when neither says."""
    said = False
    for item in ev.items:
        rec = item.record
        if isinstance(rec, CommEvent) and rec.nnodes is not None:
            if rec.nnodes != 1:
                return False
            said = True
        elif isinstance(rec, NcclTestsHeader) and rec.ranks:
            complete = rec.highest_rank is not None and rec.ranks == rec.highest_rank + 1
            if rec.nodes != 1 or not complete or rec.independent_runs > 1:
                return False
            said = True
    return said
