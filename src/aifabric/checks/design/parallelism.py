"""S8: topology follows parallelism: tensor parallel stays inside a server.

Ranks are laid out by the workload's ``rank_order`` (innermost axis first) and filled into the
fabric's servers in file order, ``gpus`` ranks per server. A tensor-parallel group is the set of
ranks that differ only in their tp coordinate: ``tp`` ranks ``stride`` apart, where ``stride`` is
the product of the sizes of the axes inside tp.
"""

from __future__ import annotations

from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import Workload

__all__ = ["tp_groups_spanning"]


def tp_groups_spanning(workload: Workload, gpus_per_server: int) -> tuple[int, int]:
    """(TP groups that span more than one server, total TP groups)."""
    sizes = {"tp": workload.tp, "pp": workload.pp, "dp": workload.dp, "ep": 1}
    stride = 1
    for axis in workload.rank_order:
        if axis == "tp":
            break
        stride *= sizes[axis]
    total = workload.gpus // workload.tp
    spanning = 0
    block = stride * workload.tp
    for group in range(total):
        base = (group // stride) * block + group % stride
        first = base // gpus_per_server
        last = (base + (workload.tp - 1) * stride) // gpus_per_server
        if first != last:
            spanning += 1
    return spanning, total


@register("design.tp-spans-servers")
def tp_spans_servers(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.tp-spans-servers"]
    fabric = ctx.fabric
    workload = fabric.workload
    if workload is None:
        return
    gpu_servers = [s for s in fabric.servers if s.gpus > 0]
    total_gpus = sum(s.gpus for s in gpu_servers)
    if workload.gpus > total_gpus:
        yield meta.finding(
            target=f"workload {workload.name}",
            severity="error",
            message=(
                f"workload needs {workload.gpus} GPUs (dp {workload.dp} x tp {workload.tp} x "
                f"pp {workload.pp}); the fabric has {total_gpus}"
            ),
            expected=f"<= {total_gpus} GPUs",
            actual=workload.gpus,
            explanation="The parallel layout must fit the GPUs the fabric connects.",
            fix="reduce dp/tp/pp or add servers",
        )
        return
    if not gpu_servers:
        return
    gps = min(s.gpus for s in gpu_servers)
    spanning, groups = tp_groups_spanning(workload, gps)
    if spanning == 0:
        return
    yield meta.finding(
        target=f"workload {workload.name}",
        message=(
            f"{spanning} of {groups} tensor-parallel groups (tp={workload.tp}) span servers "
            f"of {gps} GPUs with rank order {'-'.join(workload.rank_order)}"
        ),
        expected=f"each TP group inside one server (tp divides {gps}, tp innermost)",
        actual=f"{spanning} groups cross servers",
        explanation=(
            "Tensor parallelism exchanges activations at every layer (and at every token in "
            "inference, S3): inside a server that rides NVLink at hundreds of GB/s, across "
            "servers it rides the NICs at a tenth of that and adds network latency to every "
            "layer. Keep TP inside a server, at worst inside a rack (S8); let data parallelism "
            "cross the fabric."
        ),
        fix=(
            f"use tp <= {gps} dividing {gps} and put tp innermost in the rank order (e.g. tp-pp-dp)"
        ),
    )
