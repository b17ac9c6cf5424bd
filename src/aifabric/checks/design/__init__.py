"""Design checks: what the fabric file alone (plus the hardware catalog) can tell."""

from aifabric.checks.design import (  # noqa: F401  (each module registers its checks)
    optics,
    oversubscription,
    parallelism,
    pcie,
    performance,
    radix,
    structure,
    switch_class,
)
