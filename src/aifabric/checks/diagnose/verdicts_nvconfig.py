"""Record verdicts for ``mlxconfig``/``mstconfig`` captures (the adapter's firmware configuration).

* A parameter whose current value differs from its next-boot value (``-e`` query): a change was
  written but is not in effect until the adapter is reset → ``host.driver`` warning. MFT's own
  ``set`` ends with "-I- Please reboot machine to load new configurations." (mstflint
  ``mlxconfig/mlxcfg_ui.cpp``); the value in ``Current`` is what the NIC does now.
* ``ROCE_CC_PRIO_MASK_P<n>`` = 0: RoCE congestion control (DCQCN) is off on every priority of
  the port, so the NIC ignores the CNPs its peers send for ECN-marked packets and only PFC slows
  it down (S13) → ``config.qos`` warning. The factory default is 255 (all priorities), which is
  what NVIDIA's NIC configuration operator sets for ``roceOptimized``.
* ``LINK_TYPE_P<n>`` = ``IB(1)``: the port runs InfiniBand; RoCE and any Ethernet use need
  ``ETH(2)`` → ``host.rdma-device`` info (right for an InfiniBand fabric, so only info).
* ``ATS_ENABLED`` = ``True(1)``: PCIe Address Translation Services on. The mlx5 kernel driver
  documents that ATS "slows down the PCI performance" and is only for peer-to-peer setups that
  need it (virtual machines); NVIDIA's operator sets ``ATS_ENABLED=0`` for GPUDirect on bare
  metal → ``host.pcie`` info.

The value in effect is ``Current`` when the query shows it, else ``Next Boot`` (a plain query
shows only that column; the firmware applies it at the next reset).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.mlxconfig import NvConfigParam, nv_value

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []

_REF_MLXCFG_UI = "https://github.com/Mellanox/mstflint/blob/v4.36.0-1/mlxconfig/mlxcfg_ui.cpp"
_REF_MFT = (
    "https://docs.nvidia.com/networking/display/mftv4320/"
    "mlxconfig+-+changing+device+configuration+tool"
)
_REF_NIC_OPERATOR = "https://github.com/Mellanox/nic-configuration-operator"
_REF_MLX5_ATS = "https://lore.kernel.org/r/4-v1-bd147097458e+ede-umem_dmabuf_jgg@nvidia.com"
"""The mlx5 ATS patch (RDMA/mlx5, umem dma-buf series): "ATS slows down the PCI performance"."""

_PORT_RE = re.compile(r"_P(\d+)$")


def _in_effect(rec: NvConfigParam) -> str | None:
    return rec.current if rec.current is not None else rec.next_boot


def _where(rec: NvConfigParam) -> str:
    return f" on {rec.device}" if rec.device else ""


@verdict("nvconfig_param")
def _nvconfig(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    del ev
    if not isinstance(rec, NvConfigParam):
        return
    if rec.pending:
        yield Verdict(
            id="diagnose.nic-config-pending",
            severity="warning",
            cause="host.driver",
            message=f"{rec.name} is {rec.current} now but {rec.next_boot} after the next reset"
            f"{_where(rec)}: the firmware change is not in effect",
            explanation=(
                "mlxconfig writes the adapter's non-volatile configuration; the firmware loads "
                "it only at the next boot or firmware reset (MFT ends every 'set' with 'Please "
                "reboot machine to load new configurations'). Until then the NIC keeps running "
                "with the Current column's value, whatever the Next Boot column says."
            ),
            fix="Apply it with 'mlxfwreset -d <device> reset' (or a cold reboot of the host), "
            "then check that 'mlxconfig -d <device> -e q' shows the same Current and Next Boot "
            "value.",
            refs=("S20", _REF_MLXCFG_UI, _REF_MFT),
            confidence=0.45,
        )
    value = nv_value(_in_effect(rec))
    port = _PORT_RE.search(rec.name)
    if rec.name.startswith("ROCE_CC_PRIO_MASK_P") and value == 0:
        yield Verdict(
            id="diagnose.roce-cc-disabled",
            severity="warning",
            cause="config.qos",
            message=f"RoCE congestion control (DCQCN) is off on every priority of port "
            f"{port.group(1) if port else '?'}{_where(rec)}: {rec.name} = 0",
            explanation=(
                "ROCE_CC_PRIO_MASK is the per-priority bitmask of the NIC's RoCE congestion "
                "control: a priority whose bit is clear ignores the CNPs that the receiver "
                "returns for ECN-marked packets, so the sender never slows down and congestion "
                "is left to PFC pauses (seed S13: ECN marks early so that PFC is the last "
                "resort). The factory default is 255, all priorities."
            ),
            fix=f"mlxconfig -d <device> set {rec.name}=255 (or at least the RoCE priority's "
            "bit), then reset the adapter; NVIDIA's NIC configuration operator sets 255 for "
            "RoCE.",
            refs=("S13", "S14", _REF_NIC_OPERATOR, _REF_MFT),
            confidence=0.5,
        )
    elif rec.name.startswith("LINK_TYPE_P") and value == 1:
        yield Verdict(
            id="diagnose.nic-port-infiniband",
            severity="info",
            cause="host.rdma-device",
            message=f"port {port.group(1) if port else '?'}{_where(rec)} runs InfiniBand "
            f"({rec.name} = {_in_effect(rec)})",
            explanation=(
                "A VPI adapter's port runs InfiniBand (IB(1)) or Ethernet (ETH(2)) as the "
                "firmware configuration says. On an Ethernet/RoCE fabric an IB port gets no "
                "link and no net device; on an InfiniBand fabric this is right."
            ),
            fix=f"For RoCE: mlxconfig -d <device> set {rec.name}=2, then reset the adapter "
            "(mlxfwreset or a cold reboot).",
            refs=("S5", "S15", _REF_MFT),
            confidence=0.25,
        )
    elif rec.name == "ATS_ENABLED" and value == 1:
        yield Verdict(
            id="diagnose.nic-ats-enabled",
            severity="info",
            cause="host.pcie",
            message=f"PCIe ATS is enabled on the adapter{_where(rec)} (ATS_ENABLED = "
            f"{_in_effect(rec)})",
            explanation=(
                "With Address Translation Services on, the mlx5 device sends ATS requests for "
                "some DMA, which the kernel driver notes slows down PCIe; it is meant for "
                "peer-to-peer transfers in virtual machines. NVIDIA's NIC configuration operator "
                "turns it off for GPUDirect RDMA on bare metal."
            ),
            fix="On bare metal: mlxconfig -d <device> set ATS_ENABLED=0, then reset the "
            "adapter; keep it on only where a VM's GPUDirect path needs it.",
            refs=("S9", _REF_NIC_OPERATOR, _REF_MLX5_ATS),
            confidence=0.2,
        )
