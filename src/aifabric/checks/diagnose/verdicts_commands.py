"""Record verdicts on settings the input shows only on a command line (derived by
:mod:`.derive_commands`): see :mod:`.verdicts_core`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.derive_commands import GidIndexChoice, MtuChoice
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.infiniband import IbstatPort, IbvPort

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []


def _roce_device(ev: Evidence, device: str | None) -> str | None:
    """The RoCE port (link layer Ethernet) the input shows for ``device`` (any device when
    ``None``), as ``dev``; None when the input shows none."""
    for item in ev.items:
        rec = item.record
        if isinstance(rec, IbvPort):
            name, layer = rec.hca_id, rec.link_layer
        elif isinstance(rec, IbstatPort):
            name, layer = rec.ca, rec.link_layer
        else:
            continue
        if layer == "Ethernet" and (device is None or name == device):
            return name
    return None


@verdict("gid_index_choice")
def _gid_index_zero(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """An RDMA test run with GID index 0 on a port the input shows is RoCE."""
    if not isinstance(rec, GidIndexChoice) or rec.index != 0:
        return
    dev = _roce_device(ev, rec.device)
    if dev is None:
        return  # InfiniBand, or nothing in the input says: index 0 is the normal IB GID
    yield Verdict(
        id="diagnose.roce-gid-index-zero",
        severity="warning",
        cause="host.gid",
        message=f"{rec.tool} uses GID index 0 on {dev}, a RoCE port: the link-local IPv6 GID",
        explanation=(
            "On a RoCE port the kernel fills GID index 0 (and 1) with the default GID, built "
            "from the netdev's MAC as an IPv6 link-local address (fe80::, "
            "drivers/infiniband/core/roce_gid_mgmt.c); on mlx5 index 0 is also RoCE v1. Such "
            "a GID reaches a peer only on the same L2 segment with IPv6 link-local addresses "
            "present on both netdevs; the routable RoCE v2 GIDs of the host's IPv4 address come "
            "later in the table (usually index 3). A test that works with one index and hangs "
            "or times out with another is almost always this (S15)."
        ),
        fix=(
            f"`show_gids {dev}` on both hosts and pass the RoCE v2 GID of the address on the "
            "same subnet (`-g 3` for ibv_*_pingpong, `-x 3` for ib_*_bw/lat); the same index "
            "goes into NCCL_IB_GID_INDEX / UCX_IB_GID_INDEX."
        ),
        refs=("S15",),
        confidence=0.45,
    )


def _active_mtu(ev: Evidence, device: str | None) -> tuple[str, int, str | None] | None:
    """(device, active MTU in bytes, link layer) of the first ibv_devinfo port the input shows
    for ``device`` (any device when ``None``)."""
    for item in ev.items:
        rec = item.record
        if isinstance(rec, IbvPort) and rec.active_mtu_bytes and (
            device is None or rec.hca_id == device
        ):
            return rec.hca_id, rec.active_mtu_bytes, rec.link_layer
    return None


@verdict("mtu_choice")
def _mtu_above_active(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """An RDMA test run with a path MTU above the port's active MTU."""
    if not isinstance(rec, MtuChoice):
        return
    port = _active_mtu(ev, rec.device)
    if port is None or rec.mtu <= port[1]:
        return
    dev, active, layer = port
    roce = layer == "Ethernet"
    why = (
        "on RoCE the active MTU is the largest IB MTU that fits the net device's MTU (1024 "
        "for an Ethernet MTU of 1500, 4096 only from about 4200 up)"
        if roce
        else "the port and subnet manager agreed on that MTU"
    )
    yield Verdict(
        id="diagnose.rdma-path-mtu-above-active",
        severity="error",
        cause="fabric.mtu",
        message=(
            f"{rec.tool} asks for a path MTU of {rec.mtu} bytes but {dev} runs with an active "
            f"MTU of {active}: packets larger than the path carries are dropped, and the "
            "first send ends in 'transport retry counter exceeded'"
        ),
        explanation=(
            f"-m/--mtu sets the queue pair's path MTU (rdma-core rc_pingpong.c usage; perftest "
            f"perftest_parameters.c). ibv_devinfo shows {dev}'s active_mtu {active}: {why}. A "
            "QP whose path MTU is larger sends packets the link (or, on RoCE, the Ethernet "
            "path) cannot carry; they are lost and the sender retries until the retry counter "
            "runs out (IBV_WC_RETRY_EXC_ERR, status 12) (S11, S20)."
        ),
        fix=(
            f"Use -m {active} (or leave -m out: perftest then uses the port's MTU), or raise "
            "the MTU of the path: on RoCE the netdev MTU on both hosts and every switch port "
            "(9000 gives an active MTU of 4096)."
        ),
        refs=("S11", "S20"),
        confidence=0.6,
    )
