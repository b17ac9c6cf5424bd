"""bench compare, pairwise sweeps: find the bad node (MAD over all pairs, issue 20)."""

from __future__ import annotations

import random
from itertools import combinations

from aifabric.bench.compare import outlier_hosts
from aifabric.bench.model import BenchRun
from aifabric.findings import exit_code_for

from .bench_synth import T0, healthy_busbw, make_run

HOSTS = [f"h{i}" for i in range(1, 7)]
SIZES = [1 << 20, 64 << 20, 1 << 30]


def sweep(
    low: dict[str, float] | None = None,
    *,
    seed: int = 3,
    bad_pair: tuple[str, str] | None = None,
    hosts: list[str] = HOSTS,
) -> list[BenchRun]:
    """A pairwise sweep (15 pairs for 6 hosts) with +-2% noise; pairs touching a host of
    ``low`` are scaled by its factor; ``bad_pair`` alone at 0.6."""
    rng = random.Random(seed)
    low = low or {}
    runs = []
    for a, b in combinations(hosts, 2):
        f = low.get(a, 1.0) * low.get(b, 1.0) * (0.6 if (a, b) == bad_pair else 1.0)
        noise = {s: rng.uniform(0.98, 1.02) for s in SIZES}
        runs.append(
            make_run(
                lambda s, f=f, noise=noise: healthy_busbw(s) * f * noise[s],  # type: ignore[misc]
                sizes=SIZES,
                pair=(a, b),
                ranks=2,
                collective="sendrecv",
                started=T0,
            )
        )
    return runs


def test_bad_host_found() -> None:
    found = outlier_hosts(sweep({"h3": 0.6}))
    assert [(f.target, f.severity) for f in found] == [("h3", "error")]
    (f,) = found
    assert f.check == "bench.outlier-host"
    assert f.message.startswith("5 of 5 sendrecv pairs with h3 are low")
    assert "1 GiB" in f.message
    assert isinstance(f.actual, float) and isinstance(f.expected, float)
    assert 0.57 < f.actual / f.expected < 0.63
    assert sum("(low)" in e.text for e in f.evidence) == 5
    assert exit_code_for(found) == 1


def test_healthy_sweep_has_no_outlier() -> None:
    for seed in range(10):
        assert outlier_hosts(sweep(seed=seed)) == []


def test_one_bad_cable_blames_no_host() -> None:
    """One low pair (a link, not a host): neither end has all its pairs low."""
    assert outlier_hosts(sweep(bad_pair=("h2", "h5"))) == []


def test_too_few_pairs_say_nothing() -> None:
    assert outlier_hosts(sweep({"h2": 0.5}, hosts=["h1", "h2", "h3"])) == []


def test_non_pair_runs_ignored() -> None:
    runs = [make_run(healthy_busbw) for _ in range(6)]
    assert outlier_hosts(runs) == []
