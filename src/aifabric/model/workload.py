"""What runs on the fabric: a model, its gradient type and its parallelism (S1, S3, S8)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from aifabric.model.base import StrictModel, Tup

__all__ = ["DTYPE_BYTES", "Workload"]

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
"""Bytes per gradient element (S1 uses fp32 = 4 bytes)."""

Axis = Literal["tp", "pp", "dp", "ep"]


class Workload(StrictModel):
    """A training or inference job laid onto the GPUs.

    ``rank_order`` lists the parallel axes from innermost (consecutive global ranks) to
    outermost, the way Megatron-style launchers assign ranks: with ``("tp", "pp", "dp")`` a
    tensor-parallel group is ``tp`` consecutive ranks, so it stays inside one server whenever
    ``tp`` divides the GPUs per server (S8).
    """

    name: str = "workload"
    kind: Literal["training", "inference"] = "training"
    parameters: int = Field(gt=0, description="model parameters, e.g. 50000000000 for 50B (S1)")
    gradient_dtype: Literal["fp32", "bf16", "fp16", "fp8"] = "bf16"
    dp: int = Field(default=1, ge=1)
    tp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1, description="expert parallel, carved out of dp")
    rank_order: Tup[Axis] = ("tp", "pp", "dp")
    overlap_fraction: float = Field(
        default=0.0, ge=0.0, le=1.0, description="share of communication hidden behind compute"
    )

    @model_validator(mode="after")
    def _shape(self) -> Workload:
        if self.dp % self.ep != 0:
            raise ValueError(f"ep ({self.ep}) must divide dp ({self.dp})")
        if sorted(set(self.rank_order)) != sorted(self.rank_order) or not {"tp", "pp", "dp"} <= set(
            self.rank_order
        ):
            raise ValueError("rank_order must list tp, pp and dp once each (ep optional)")
        return self

    @property
    def gpus(self) -> int:
        """GPUs the job occupies: dp x tp x pp."""
        return self.dp * self.tp * self.pp
