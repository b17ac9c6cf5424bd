"""Tensor-parallel inference: the per-token AllReduce cost (S3).

Each transformer layer of a tensor-parallel model all-reduces its activations twice per token
(Megatron-LM's partitioning); at inference batch sizes the message is small (``batch · hidden ·
dtype``), so the time is mostly the collective's latency ``α``, which is why S3 asks for
low-latency links and keeps TP inside a server.
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.perf.estimate import Platform
from aifabric.perf.placement import Tier, communicator, time_one

__all__ = ["REF_MEGATRON", "TpLatency", "inference_tp_latency"]

REF_MEGATRON = (
    "Megatron-LM (Shoeybi et al. 2019 §3, https://arxiv.org/abs/1909.08053; Narayanan et al. "
    "2021, https://arxiv.org/abs/2104.04473): 2 TP all-reduces forward and "
    "2 backward per transformer layer, of b·s·h activations"
)

# --------------------------------------------------------------------------------------------
# S3: tensor-parallel inference, per token


@dataclass(frozen=True, slots=True)
class TpLatency:
    """Per-token tensor-parallel AllReduce latency of inference (S3)."""

    message_bytes: int
    tp: int
    tier: Tier
    allreduce_us: float
    alpha_us: float
    alpha_share: float
    """``α / t``: near 1 means latency-bound (small messages, S3)."""
    per_layer_us: float
    per_token_us: float | None
    algorithm: str
    protocol: str
    link: str
    steps: tuple[Explained, ...]

    @property
    def latency_bound(self) -> bool:
        return self.alpha_share >= 0.5


def inference_tp_latency(
    platform: Platform,
    hidden_size: int,
    batch: int,
    tp: int,
    dtype_bytes: int = 2,
    layers: int | None = None,
) -> TpLatency:
    """Per-token TP AllReduce cost of inference on servers like ``platform`` (S3).

    Each decoded token runs 2 all-reduces per layer (after attention and after the MLP) of
    ``batch · hidden_size · dtype_bytes`` bytes: a few KiB to a few hundred KiB, so the α term
    (NCCL's base + hop latency) dominates ``t = α + S/bw`` and jitter adds directly to per-token
    latency. The TP group is ``tp`` consecutive ranks (inside one server when ``tp ≤ g``,
    otherwise ``tp / g`` whole servers, S8). ``per_token = 2 · layers · t`` when ``layers`` given.
    """
    if hidden_size <= 0 or batch <= 0 or tp <= 0 or dtype_bytes <= 0:
        raise InputError("hidden_size, batch, tp and dtype_bytes must be positive")
    if layers is not None and layers <= 0:
        raise InputError("layers must be positive")
    g = platform.gpus_per_node
    if tp > g and tp % g != 0:
        raise InputError(f"tp ({tp}) across servers must be a multiple of GPUs per server ({g})")
    size = batch * hidden_size * dtype_bytes
    pl = communicator(platform, "tp", list(range(tp)))
    t, row, link = time_one(pl, "allreduce", size)
    t_us = t * 1e6
    share = row.latency_us / row.time_us if row.time_us > 0 else 0.0
    per_layer = 2.0 * t_us
    per_token = per_layer * layers if layers is not None else None
    steps: list[Explained] = [
        pl.explained(),
        Explained.fast(
            quantity="TP all-reduce message",
            value=size,
            unit="B",
            formula="S = batch x hidden x bytes",
            inputs={"batch": batch, "hidden": hidden_size, "bytes": dtype_bytes},
            sources=["S3"],
        ),
        Explained.fast(
            quantity="TP all-reduce time",
            value=round(t_us, 4),
            unit="us",
            formula="t = alpha + S / bw at NCCL's (algorithm, protocol)",
            inputs={
                "alpha_us": round(row.latency_us, 4),
                "alpha_share": round(share, 4),
                "algorithm": row.algorithm,
                "protocol": row.protocol,
                "tier": pl.tier,
            },
            sources=["aifabric.perf.estimate", "S3"],
            note="latency-bound: alpha dominates" if share >= 0.5 else None,
        ),
        Explained.fast(
            quantity="TP communication per layer per token",
            value=round(per_layer, 4),
            unit="us",
            formula="2 x t (after attention, after the MLP)",
            inputs={"t_us": round(t_us, 4)},
            sources=[REF_MEGATRON, "S3"],
        ),
    ]
    if per_token is not None:
        steps.append(
            Explained.fast(
                quantity="TP communication per token",
                value=round(per_token, 4),
                unit="us",
                formula="2 x layers x t",
                inputs={"layers": layers or 0, "t_us": round(t_us, 4)},
                sources=["S3"],
            )
        )
    return TpLatency(
        size, tp, pl.tier, t_us, row.latency_us, share, per_layer, per_token,
        row.algorithm, row.protocol, link, tuple(steps),
    )  # fmt: skip
