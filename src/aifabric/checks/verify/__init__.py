"""Verify checks: the fabric intent against the seed's rules, and against what device configs,
host state and the NCCL environment say (``CheckContext.observed``)."""

from aifabric.checks.verify import (  # noqa: F401  (each module registers its checks)
    deadlock,
    dscp,
    ecn,
    intent,
    mtu,
    nccl_env,
    pfc,
    subnets,
)
