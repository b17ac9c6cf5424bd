"""Record verdicts on shared memory: ``df`` rows of ``/dev/shm`` and ``ls -l /dev/shm`` segments.

* ``/dev/shm`` smaller than 1 GiB → ``host.shm`` warning: 64 MiB is what Docker gives a container
  by default (``--shm-size``), and NCCL's troubleshooting guide names it as too small for NCCL's
  SHM transport; error when it is 256 MiB or less and already 90% used.
* ``/dev/shm`` 90% used or more → ``host.shm`` error (new segments fail: NCCL "unhandled system
  error" with ``shm_open``/``ftruncate``/``posix_fallocate`` or "No space left on device").
* An ``ls -l /dev/shm`` listing with segments of the communication libraries (``nccl-*``,
  ``psm_*``, ``ucx_*``) → one ``host.shm`` warning for the listing: a process that dies keeps
  its segments until they are deleted, so after crashes they accumulate and fill the volume
  (llm-d/llm-d#364 empties /dev/shm before each start for that reason). Their total is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.shm import DfMount, ShmSegment

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []

SHM_SMALL_BYTES = 1 << 30
"""Below this a /dev/shm is 'small' for NCCL (the guide's example raises it to 1 GiB)."""
SHM_FULL_PCT = 90
GIB = 1 << 30
MIB = 1 << 20

_REF_NCCL_SHM = (
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#docker"
)
_REF_DOCKER_SHM = "https://docs.docker.com/reference/cli/docker/container/run/#shm-size"
_REF_LLMD_364 = "https://github.com/llm-d/llm-d/pull/364"
_LIB_NAMES = {"nccl": "NCCL", "psm": "PSM", "ucx": "UCX", "torch": "PyTorch", "cuda": "CUDA"}


def _size(n: int) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / MIB:.0f} MiB"


@verdict("df_mount")
def _df_shm(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    del ev
    if not isinstance(rec, DfMount) or rec.mount.rstrip("/") != "/dev/shm":
        return
    full = rec.use_pct is not None and rec.use_pct >= SHM_FULL_PCT
    small = rec.size_bytes is not None and 0 < rec.size_bytes < SHM_SMALL_BYTES
    if not (full or small):
        return
    size = _size(rec.size_bytes) if rec.size_bytes is not None else "unknown size"
    use = f", {rec.use_pct}% used" if rec.use_pct is not None else ""
    yield Verdict(
        id="diagnose.shm-full" if full else "diagnose.shm-small",
        severity="error" if full else "warning",
        cause="host.shm",
        message=f"/dev/shm is {size}{use}"
        + (": new shared-memory segments will fail" if full else ": too small for NCCL"),
        explanation=(
            "NCCL's SHM transport and proxy, PSM, UCX and PyTorch's DataLoader workers put their "
            "buffers in /dev/shm; when a segment cannot be created or grown NCCL reports an "
            "'unhandled system error' (shm_open, ftruncate or fallocate failing, 'No space left "
            "on device'). A container gets its own /dev/shm of 64 MiB unless --shm-size (or a "
            "memory-backed emptyDir in Kubernetes) says otherwise, which NCCL's troubleshooting "
            "guide names as too small."
        ),
        fix=(
            "Docker: --shm-size=1g or more (or --ipc=host); Kubernetes: mount an emptyDir with "
            "medium: Memory at /dev/shm; delete segments left by dead processes (ls -l /dev/shm)."
        ),
        refs=("S20", _REF_NCCL_SHM, _REF_DOCKER_SHM),
        confidence=0.6 if full else 0.4,
    )


@verdict("shm_segment")
def _shm_segments(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, ShmSegment) or rec.owner_lib not in ("nccl", "psm", "ucx"):
        return
    records = _capture(rec, ev) or [rec]
    segments = [r for r in records if isinstance(r, ShmSegment) and r.owner_lib is not None]
    comm = [r for r in segments if r.owner_lib in ("nccl", "psm", "ucx")]
    if not comm or comm[0] is not rec:
        return  # one verdict per listing, on its first communication segment
    counts: dict[str, int] = {}
    for r in comm:
        counts[r.owner_lib or ""] = counts.get(r.owner_lib or "", 0) + 1
    total = sum(r.size_bytes or 0 for r in segments)
    what = ", ".join(f"{n} {_LIB_NAMES[lib]}" for lib, n in counts.items())
    yield Verdict(
        id="diagnose.shm-segments-left",
        severity="warning",
        cause="host.shm",
        message=f"/dev/shm holds {what} shared-memory segment(s), {_size(total)} in all: "
        "segments of processes that died stay there",
        explanation=(
            "NCCL (nccl-XXXXXX), PSM (psm_*) and UCX create their segments in /dev/shm and "
            "remove them when the process ends normally; a process that crashes or is killed "
            "leaves them behind, and after a few restarts of a crashing job they fill the "
            "volume, so the next start fails with 'unhandled system error'. If no job is "
            "running on the host, every segment listed is left over."
        ),
        fix=(
            "With no job running, delete them (rm /dev/shm/nccl-* /dev/shm/psm_*), or clear "
            "/dev/shm at container start as llm-d does; give the volume room (--shm-size, a "
            "memory-backed emptyDir) and check 'df -h /dev/shm'."
        ),
        refs=("S20", _REF_NCCL_SHM, _REF_LLMD_364),
        confidence=0.35,
    )
