"""Collective performance: what busbw and time a platform should give, and why (issue 4).

* :mod:`~aifabric.perf.collectives`: nccl-tests definitions (algbw, busbw factors, S);
* :mod:`~aifabric.perf.constants`: NCCL's tuner constants per release (data);
* :mod:`~aifabric.perf.tuner`: NCCL's α-β model and its algorithm/protocol selection;
* :mod:`~aifabric.perf.hardware`: framing, PCIe and TCP limits of the host path;
* :mod:`~aifabric.perf.estimate`: rows like nccl-tests, the bounding link, the explanation;
* :mod:`~aifabric.perf.fabric`: a platform from a fabric file (tiers crossed, ECMP);
* :mod:`~aifabric.perf.calibrate`: fit the efficiency constants to measured results;
* :mod:`~aifabric.perf.workload`: training iteration communication (S1 ledger beside the ring,
  TP/PP/EP/DP placed per S8) and inference tensor-parallel latency (S3).
"""

from aifabric.perf.collectives import COLLECTIVES, Collective, busbw_factor
from aifabric.perf.estimate import Efficiency, Estimate, Platform, Row, estimate, sweep_sizes

__all__ = [
    "COLLECTIVES",
    "Collective",
    "Efficiency",
    "Estimate",
    "Platform",
    "Row",
    "busbw_factor",
    "estimate",
    "sweep_sizes",
]
