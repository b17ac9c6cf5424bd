"""ECMP collision arithmetic (docs/references.md#ecmp).

``k`` equal elephant flows hashed uniformly onto ``m`` equal links are balls into bins: the mean
load is ``k/m`` but the busiest link carries ``E[max]``, and a synchronous collective runs at the
pace of its slowest flow. For ``k = m``: 8 → 2.60, 16 → 3.07, 32 → 3.53, 64 → 3.95 (the
balls-into-bins maximum, computed here by Monte Carlo), so random ECMP can leave a collective at
~1/3 of line rate.
"""

from __future__ import annotations

import random
from functools import cache

__all__ = ["ecmp_expected_max", "ecmp_factor"]


@cache
def ecmp_expected_max(flows: int, links: int, trials: int = 4000) -> float:
    """E[max load] when ``flows`` equal flows hash uniformly onto ``links`` links (Monte Carlo,
    fixed seed so results repeat; m = m → 2.60 at 8, 3.53 at 32)."""
    if flows <= 0 or links <= 0:
        return 0.0
    if links == 1:
        return float(flows)
    rng = random.Random(flows * 7919 + links)
    total = 0
    for _ in range(trials):
        loads = [0] * links
        for _f in range(flows):
            loads[rng.randrange(links)] += 1
        total += max(loads)
    return total / trials


def ecmp_factor(flows: int, links: int) -> float:
    """Share of fair-share throughput a synchronous collective gets: ``(k/m) / E[max]``, at most
    1 (fewer flows than links: each flow still needs its own link)."""
    if flows <= 0 or links <= 1:
        return 1.0
    fair = max(flows / links, 1.0)
    return min(1.0, fair / ecmp_expected_max(flows, links))
