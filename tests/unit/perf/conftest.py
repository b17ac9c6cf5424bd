"""Platforms built from the built-in catalog, as a user would give them on the command line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aifabric.catalog import Catalog, builtin_catalog
from aifabric.perf.estimate import Platform

MakePlatform = Callable[..., Platform]


@pytest.fixture(scope="session")
def cat() -> Catalog:
    return builtin_catalog()


@pytest.fixture(scope="session")
def make_platform(cat: Catalog) -> MakePlatform:
    def make(
        gpu: str = "H100",
        nodes: int = 1,
        gpus_per_node: int = 8,
        nics_per_node: int = 8,
        nic_speed_gbps: float = 400.0,
        transport: str = "roce",
        nic_pcie_gen: int = 5,
        **kw: Any,
    ) -> Platform:
        spec = cat.gpu(gpu)
        return Platform(
            gpu=spec,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            nics_per_node=nics_per_node,
            nic_speed_gbps=nic_speed_gbps,
            transport=transport,  # type: ignore[arg-type]
            nic_pcie=cat.pcie_gen(nic_pcie_gen),
            gpu_pcie=cat.pcie_gen(spec.pcie_gen),
            **kw,
        )

    return make
