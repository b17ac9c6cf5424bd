"""S23: can this fabric reach the bus bandwidth a healthy cluster shows?

Estimates a large AllReduce on all GPU servers (``aifabric.perf``) and compares the expected bus
bandwidth with the lower of the node's NIC line rate and its NVLink bandwidth. The seed's
acceptance rule is ``busbw >= 70%`` of the theoretical link bandwidth (S23); healthy RoCE/IB
clusters reach ~95% (46–49 GB/s per 400G NIC, docs/references.md#nic-goodput). A fabric
whose *design* already caps the figure below 70% (PCIe slots, TCP, oversubscription, ECMP
collisions) is reported with the link that bounds it.
"""

from __future__ import annotations

from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.errors import AifabricError
from aifabric.findings import Finding
from aifabric.perf.estimate import estimate
from aifabric.perf.fabric import platform_from_fabric

__all__ = ["HEALTHY_SHARE", "SIZE_BYTES"]

HEALTHY_SHARE = 0.70
"""S23: a healthy result reaches at least 70% of the theoretical link bandwidth."""
SIZE_BYTES = 8 << 30
"""The top of S23's baseline sweep (``all_reduce_perf -b 128M -e 8G``)."""


@register("design.expected-busbw")
def expected_busbw(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.expected-busbw"]
    try:
        p = platform_from_fabric(ctx.fabric, ctx.catalog)
    except AifabricError:
        return  # no GPU model or data NICs: nothing to estimate (check says so)
    if p.nodes < 2:
        return
    est = estimate(p, "allreduce", [SIZE_BYTES])
    line = p.nics_per_node * p.nic_speed_gbps / 8.0
    nvlink = p.gpu.nccl_scale_up_GBps or line
    reference = min(line, nvlink) if p.gpus_per_node > 1 else line
    busbw = est.rows[0].busbw_GBps
    if busbw >= HEALTHY_SHARE * reference:
        return
    b = est.bottleneck
    yield meta.finding(
        target=f"{p.nodes} servers x {p.gpus_per_node} {p.gpu.name}",
        message=(
            f"expected AllReduce busbw {busbw:.0f} GB/s is {busbw / reference:.0%} of the "
            f"{reference:.0f} GB/s the links could carry: below S23's 70%"
        ),
        expected=round(HEALTHY_SHARE * reference, 1),
        actual=round(busbw, 1),
        evidence=[f"bound by {b['link']} ({b['limit_GBps']} GB/s): {b['reason']}"],
        explanation=(
            "The estimate (aifabric estimate FABRIC --explain) takes NIC goodput after framing, "
            "PCIe, transport and the fabric's oversubscription and ECMP collisions into account; "
            "a nccl-tests baseline on this design cannot pass the seed's acceptance rule."
        ),
        fix=_fix(str(b.get("kind", ""))),
    )


def _fix(kind: str) -> str:
    return {
        "pcie": "put the NICs in PCIe slots that carry their line rate (S9: PCIe 5.0 x16 for 400G)",
        "tcp": "move the collective traffic to RDMA (RoCEv2 or InfiniBand) instead of TCP sockets",
        "fabric": (
            "reduce leaf oversubscription to 1:1 for the training traffic, and use adaptive "
            "routing / packet spraying or more QPs per connection instead of plain ECMP hashing"
        ),
    }.get(kind, "add NIC bandwidth per server (more or faster NICs)")
