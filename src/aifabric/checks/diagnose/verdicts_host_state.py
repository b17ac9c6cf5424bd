"""Record verdicts on one host's state as a probe captures it (``/proc/modules``): what the host
itself shows, without comparing it to other hosts (that is :mod:`.verdicts_fleet`).

======================================  ==================================  =======================
verdict                                  records                             cause
======================================  ==================================  =======================
``diagnose.gdr-not-ready``               ``kernel_module``                   host.gdr
======================================  ==================================  =======================

``gdr-not-ready``: in one module listing, the GPU driver (``nvidia``) and the RDMA core
(``ib_core`` or ``mlx5_ib``) are loaded but neither peer-memory module (``nvidia_peermem``,
shipped with the driver since R470, nor the older Mellanox ``nv_peer_mem``). The RDMA stack
then cannot register CUDA memory through peer memory, and NCCL's IB transport has GPUDirect
RDMA only through DMA-BUF: with NVIDIA's open GPU kernel module, Linux >= 5.12 and an rdma-core
that can register DMA-BUF memory (NCCL_DMABUF_ENABLE, on by default where supported). Neither
is visible in ``/proc/modules``, so the finding is a warning, once per listing, on the
``nvidia`` row. Sources: NVIDIA's GPUDirect RDMA guide (the nvidia-peermem section) and the
NCCL environment and troubleshooting pages (:data:`_GDR_DOC`, ``_NCCL_ENV``,
:data:`_NCCL_TROUBLE`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _NCCL_ENV, _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.kernel_modules import KernelModule, ModuleQuery

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["PEER_MEMORY_MODULES", "RDMA_CORE_MODULES", "gdr_not_ready"]

PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem")
"""Modules that let the RDMA stack register CUDA memory (either one is enough)."""
RDMA_CORE_MODULES = ("ib_core", "mlx5_ib")
"""Modules that show the host has an RDMA stack loaded."""

_GDR_DOC = "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html"
_NCCL_TROUBLE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"


def gdr_not_ready(rec: Record, ev: Evidence) -> tuple[str, ...] | None:
    """The RDMA modules loaded beside ``nvidia`` when ``rec`` is the ``nvidia`` row of a
    module listing that has no peer-memory module (module doc), else None."""
    if not isinstance(rec, KernelModule) or rec.name != "nvidia":
        return None
    listing = _capture(rec, ev)
    if listing is None:
        return None
    names = {r.name for r in listing if isinstance(r, KernelModule)}
    rdma = tuple(m for m in RDMA_CORE_MODULES if m in names)
    if not rdma or any(m in names for m in PEER_MEMORY_MODULES):
        return None
    return rdma


@verdict("kernel_module")
def _gdr_not_ready(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    rdma = gdr_not_ready(rec, ev)
    if rdma is None:
        return
    yield Verdict(
        id="diagnose.gdr-not-ready",
        severity="warning",
        cause="host.gdr",
        message=f"nvidia and {' and '.join(rdma)} are loaded but neither nvidia_peermem nor "
        "nv_peer_mem: no GPUDirect RDMA through peer memory",
        explanation=(
            "GPUDirect RDMA lets the NIC read and write GPU memory directly. Through the "
            "classic path the RDMA stack registers CUDA memory with the help of a peer-memory "
            "module, nvidia_peermem (part of the NVIDIA driver since R470) or the older "
            f"nv_peer_mem ({_GDR_DOC}); none is loaded here. NCCL then has GPUDirect RDMA only "
            "through DMA-BUF, which needs NVIDIA's open GPU kernel module, Linux >= 5.12 and "
            f"an rdma-core that registers DMA-BUF memory ({_NCCL_ENV}, NCCL_DMABUF_ENABLE); "
            "without either it prints 'GPU Direct RDMA Disabled' and stages every inter-node "
            f"transfer through host memory ({_NCCL_TROUBLE}). The module list alone cannot "
            "tell whether DMA-BUF is available, hence a warning."
        ),
        fix=(
            "`modprobe nvidia-peermem` (built for the running driver and MLNX_OFED/DOCA; add "
            "it to /etc/modules-load.d so it survives a reboot), or confirm the DMA-BUF path: "
            "open kernel module (`modinfo nvidia | grep -i license` says Dual MIT/GPL), kernel "
            ">= 5.12, and 'GPU Direct RDMA Enabled' / '/GDRDMA' in an NCCL_DEBUG=INFO log."
        ),
        refs=("S9", "S20", _GDR_DOC, _NCCL_ENV),
        confidence=0.5,
    )


@verdict("module_query")
def _module_not_loaded(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """``lsmod | grep nv_peer`` that printed nothing: the peer-memory module is not loaded."""
    if not isinstance(rec, ModuleQuery) or rec.found or len(rec.pattern) < 4:
        return
    pat = rec.pattern.lower()
    if not any(pat in m or pat.replace("-", "_") in m for m in PEER_MEMORY_MODULES):
        return
    yield Verdict(
        id="diagnose.gdr-module-not-loaded",
        severity="warning",
        cause="host.gdr",
        message=f"`grep {rec.pattern}` over the loaded modules printed nothing: neither "
        "nvidia_peermem nor nv_peer_mem is loaded",
        explanation=(
            "An empty grep of lsmod (or /proc/modules) means no loaded module name contains "
            "the pattern. Without a peer-memory module the RDMA stack cannot register CUDA "
            f"memory (ibv_reg_mr on a GPU pointer fails) ({_GDR_DOC}); NCCL then reports 'GPU "
            "Direct RDMA Disabled' and stages inter-node transfers through host memory, unless "
            f"DMA-BUF is available (open GPU kernel module, Linux >= 5.12; {_NCCL_ENV}, "
            "NCCL_DMABUF_ENABLE)."
        ),
        fix=(
            "`modprobe nvidia-peermem` (or `nv_peer_mem` on old MLNX_OFED setups; it must be "
            "built for the running driver, `modinfo` shows it) and add it to "
            "/etc/modules-load.d; or confirm the DMA-BUF path in an NCCL_DEBUG=INFO log."
        ),
        refs=("S9", "S20", _GDR_DOC),
        confidence=0.5,
    )

