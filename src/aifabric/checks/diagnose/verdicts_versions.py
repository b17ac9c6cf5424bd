"""Record verdict on processes of one input that run different NCCL releases:
``diagnose.nccl-versions-differ``.

Every rank of a communicator must load the same NCCL release: the ranks exchange their
version in the bootstrap and NCCL stops with "Mismatched NCCL version detected : rank R version
V rank R' version V'" (``ncclInvalidUsage``; NVIDIA/nccl ``src/init.cc``), or, where the check
does not run (two releases with the same bootstrap layout, a plugin or a container image with
its own copy), hangs or fails in the first collective. The processes' ``NCCL version
X.Y.Z+cudaA.B`` lines (one per process since 2.9, rank 0's alone before) show it before NCCL
does: a node whose container image or Python wheel (``nvidia-nccl-cu12``) carries another
release.

Judged over the whole input, once: the release (``X.Y.Z``, the CUDA suffix aside) of each
process (host and pid from the line prefix, else the capture's subject). When more than one
release is seen, one warning sits on the first line of a release other than the first one seen,
naming every release with its hosts. Two runs pasted one after the other (before and after an
upgrade) look the same: the finding says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _index
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.nccl_log import NcclVersion

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["nccl_releases"]


def nccl_releases(ev: Evidence) -> tuple[int, dict[str, list[str]]] | None:
    """(``id`` of the record to flag, release → hosts seen with it) when the input's processes
    run more than one NCCL release; computed once per evidence."""
    idx = _index(ev)
    key = ("nccl-releases", 0)
    if key in idx.memo:
        got = idx.memo[key]
        return got if isinstance(got, tuple) else None
    hosts: dict[str, list[str]] = {}
    flagged: int | None = None
    for item in ev.items:
        rec = item.record
        if not isinstance(rec, NcclVersion):
            continue
        host = rec.host or item.subject
        seen = hosts.setdefault(rec.version, [])
        if host not in seen:
            seen.append(host)
        if flagged is None and len(hosts) > 1:
            flagged = id(rec)
    result = (flagged, hosts) if flagged is not None else None
    idx.memo[key] = result
    return result


@verdict("nccl_version")
def _nccl_versions_differ(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    found = nccl_releases(ev)
    if found is None or found[0] != id(rec):
        return
    shown = "; ".join(
        f"{version} on {', '.join(hosts[:3])}{' ...' if len(hosts) > 3 else ''}"
        for version, hosts in found[1].items()
    )
    yield Verdict(
        id="diagnose.nccl-versions-differ",
        severity="warning",
        cause="config.version-mismatch",
        message=f"the processes run different NCCL releases: {shown}",
        explanation=(
            "Every rank of a communicator must load the same NCCL release: NCCL compares the "
            "ranks' versions in its bootstrap and stops with 'Mismatched NCCL version detected' "
            "(ncclInvalidUsage), and where that check does not catch it the job hangs or fails "
            "in the first collective. Unless these lines come from two separate runs (before and "
            "after an upgrade), a node loads another copy of NCCL: its container image, its "
            "Python wheel (nvidia-nccl-cu12) or LD_LIBRARY_PATH."
        ),
        fix=(
            "Use one NCCL release on every node: the same container image, the same "
            "nvidia-nccl wheel (pip show nvidia-nccl-cu12 on each node), or NCCL's own "
            "libnccl.so.2 first on LD_LIBRARY_PATH everywhere."
        ),
        refs=("S20", "https://github.com/NVIDIA/nccl/blob/v2.18.6-1/src/init.cc"),
        confidence=0.6,
    )
