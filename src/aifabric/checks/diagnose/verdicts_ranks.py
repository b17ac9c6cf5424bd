"""Record verdict on the ranks processes announce when they join the process group.

Lightning logs ``Initializing distributed: GLOBAL_RANK: r, MEMBER: r+1/W`` once in every
process, just before ``torch.distributed.init_process_group`` (``_init_dist_connection`` in
src/lightning/fabric/utilities/distributed.py). In a correct launch the W processes announce W
different ranks. When the same rank is announced twice while other ranks are never announced,
two processes believe they are the same member: the launcher gave every node the same node rank
(``srun`` started without ``--ntasks-per-node`` so Lightning spawned its own processes on each
node as node 0, ``torchrun`` given the same ``--node_rank`` on every node, a hostfile listing
one host twice). The group can never fill: the store waits for the missing ranks and the job
hangs in initialisation, or the rendezvous fails with a duplicate-rank or timeout error.

A log holding two attempts (a restart) announces every rank twice with nothing missing: no
verdict then. Banners of all the files given count together (one log per node is usual).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.pytorch_log import RankBanner

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []

_REF_LIGHTNING_SLURM = "https://lightning.ai/docs/pytorch/stable/clouds/cluster_advanced.html"
_REF_TORCHRUN = "https://docs.pytorch.org/docs/stable/elastic/run.html"


def duplicate_ranks(banners: list[RankBanner]) -> tuple[int, list[int], list[int]] | None:
    """(world size, ranks announced more than once, ranks never announced) of one world size's
    banners, or ``None`` when nothing is both doubled and missing (module doc)."""
    sizes = Counter(b.world_size for b in banners)
    world = sizes.most_common(1)[0][0]
    seen = Counter(b.global_rank for b in banners if b.world_size == world)
    doubled = sorted(r for r, n in seen.items() if n > 1)
    missing = [r for r in range(world) if r not in seen]
    if not doubled or not missing:
        return None
    return world, doubled, missing


def _ranks(xs: list[int]) -> str:
    shown = ", ".join(str(x) for x in xs[:8])
    return shown + (f" and {len(xs) - 8} more" if len(xs) > 8 else "")


@verdict("rank_banner")
def _duplicate_rank(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, RankBanner):
        return
    banners = [i.record for i in ev.items if isinstance(i.record, RankBanner)]
    if not banners or banners[0] is not rec:
        return  # one verdict for the input, on its first banner
    found = duplicate_ranks(banners)
    if found is None:
        return
    world, doubled, missing = found
    yield Verdict(
        id="diagnose.duplicate-global-rank",
        severity="error",
        cause="application.usage",
        message=(
            f"{len(banners)} processes announce their rank in a group of {world}, but global "
            f"rank(s) {_ranks(doubled)} are claimed more than once and rank(s) "
            f"{_ranks(missing)} never join: the launcher gave the nodes the same node rank"
        ),
        explanation=(
            "Each process logs the global rank it joins the process group with (Lightning: "
            "'Initializing distributed: GLOBAL_RANK: r, MEMBER: r+1/W'). A correct launch of W "
            "processes announces W different ranks; the same rank twice with others absent "
            "means two processes think they are the same member, so the group never fills and "
            "initialisation hangs or times out. The usual causes: srun without "
            "--ntasks-per-node (Lightning then starts its own processes on each node, each "
            "node believing it is node 0), torchrun given the same --node_rank on every node, "
            "NODE_RANK/RANK exported identically on all nodes."
        ),
        fix=(
            "Under Slurm let srun start one task per GPU (#SBATCH --ntasks-per-node=<GPUs per "
            "node> with --nodes matching num_nodes); with torchrun give each node its own "
            "--node_rank (0..N-1) or use --rdzv-backend=c10d; check NODE_RANK, RANK and "
            "WORLD_SIZE in each node's environment."
        ),
        refs=("S20", _REF_LIGHTNING_SLURM, _REF_TORCHRUN),
        confidence=0.7,
    )
