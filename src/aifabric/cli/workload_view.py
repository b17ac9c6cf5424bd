"""Workload output of ``aifabric estimate``: training communication (S1, S8) and inference
tensor-parallel latency (S3), as tables, lines and JSON."""

from __future__ import annotations

import re
from typing import Any

from rich.table import Table

from aifabric.cli.common import out_console
from aifabric.errors import InputError
from aifabric.perf.inference import TpLatency
from aifabric.perf.workload import GradientSync, TrainingComm
from aifabric.units import format_bytes

__all__ = [
    "gradient_json",
    "inference_json",
    "parse_count",
    "print_inference",
    "print_training",
    "training_json",
]

_COUNT_RE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[kKmMbBtT]?)\s*$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def parse_count(text: str, flag: str) -> int:
    """Model sizes as people write them: ``70B``, ``1.5T``, ``350M``, ``50000000000``
    (decimal: a "70B" model has 70·10⁹ parameters)."""
    m = _COUNT_RE.match(text)
    if m is None:
        raise InputError(f"{flag} {text!r}: expected a count such as 70B, 1.5T or 350M")
    value = float(m.group("num")) * _SCALE[m.group("unit").lower()]
    if value < 1 or value != int(value):
        raise InputError(f"{flag} {text!r}: not a whole positive count")
    return int(value)


def _s(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def gradient_json(g: GradientSync) -> dict[str, Any]:
    return {
        "size_bytes": g.size_bytes,
        "ranks": g.ranks,
        "tier": g.placement.tier,
        "ring_factor": round(g.ring_factor, 6),
        "bandwidth_GBps": round(g.bandwidth_GBps, 3),
        "bandwidth_term_s": round(g.bandwidth_term_s, 6),
        "nccl_time_s": round(g.nccl_time_s, 6),
        "algorithm": g.algorithm,
        "protocol": g.protocol,
        "link": g.link,
        "seed_s": g.seed.value,
        "seed_with_overhead_s": g.seed_with_overhead.value,
        "ratio_to_seed": round(g.ratio_to_seed, 4),
        "differences": list(g.differences),
    }


def training_json(t: TrainingComm) -> dict[str, Any]:
    return {
        "components": [
            {
                "name": c.name,
                "collective": c.collective,
                "ranks": c.ranks,
                "count": c.count,
                "message_bytes": c.message_bytes,
                "bytes_total": c.bytes_total,
                "time_each_s": round(c.time_each_s, 9),
                "time_s": round(c.time_s, 6),
                "tier": c.tier,
                "link": c.link,
                "note": c.note,
            }
            for c in t.components
        ],
        "skipped": list(t.skipped),
        "total_s": round(t.total_s, 6),
        "exposed_s": round(t.exposed_s, 6),
        "overlap_fraction": t.overlap_fraction,
        "tp_penalty": t.tp_penalty,
        "gradient": gradient_json(t.gradient) if t.gradient else None,
    }


def inference_json(t: TpLatency) -> dict[str, Any]:
    return {
        "message_bytes": t.message_bytes,
        "tp": t.tp,
        "tier": t.tier,
        "allreduce_us": round(t.allreduce_us, 3),
        "alpha_us": round(t.alpha_us, 3),
        "alpha_share": round(t.alpha_share, 4),
        "latency_bound": t.latency_bound,
        "per_layer_us": round(t.per_layer_us, 3),
        "per_token_us": round(t.per_token_us, 3) if t.per_token_us is not None else None,
        "algorithm": t.algorithm,
        "protocol": t.protocol,
        "link": t.link,
    }


def print_training(t: TrainingComm) -> None:
    table = Table(title="Communication per training iteration (per rank)", title_justify="left")
    for col, justify in (
        ("component", "left"),
        ("collective", "left"),
        ("ranks", "right"),
        ("count", "right"),
        ("message", "right"),
        ("time", "right"),
        ("tier", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for c in t.components:
        table.add_row(
            c.name,
            c.collective,
            str(c.ranks),
            str(c.count),
            format_bytes(c.message_bytes),
            _s(c.time_s),
            c.tier,
        )
    out_console.print(table)
    out_console.print(
        f"total {_s(t.total_s)}; exposed {_s(t.exposed_s)} with "
        f"{t.overlap_fraction:.0%} overlapped behind compute"
        + (
            f"; TP as placed is x{t.tp_penalty:.2f} slower than inside one server (S8)"
            if t.tp_penalty and t.tp_penalty > 1.05
            else ""
        )
    )
    for note in t.skipped:
        out_console.print(f"not computed: {note}", markup=False)
    if t.gradient is not None:
        print_gradient(t.gradient)


def print_gradient(g: GradientSync) -> None:
    out_console.print("[bold]Gradient sync (S1): the article's ledger beside the ring[/bold]")
    out_console.print(
        f"  S = {g.size_bytes / 1e9:.2f} GB per rank over {g.ranks} DP ranks   "
        f"article: {g.seed.value} s (x2 for overhead: {g.seed_with_overhead.value} s)   "
        f"ring AllReduce bandwidth term: {g.bandwidth_term_s:.3f} s "
        f"(= {g.ring_factor:.3f} x S / {g.bandwidth_GBps:.2f} GB/s)   "
        f"NCCL estimate: {g.nccl_time_s:.3f} s ({g.algorithm}/{g.protocol})",
        markup=False,
    )
    for d in g.differences:
        out_console.print(f"  - {d}", markup=False)


def print_inference(t: TpLatency) -> None:
    out_console.print(
        f"TP={t.tp} AllReduce of {format_bytes(t.message_bytes)} per layer step ({t.tier}): "
        f"{t.allreduce_us:.1f} us, of which alpha {t.alpha_us:.1f} us "
        f"({t.alpha_share:.0%}: {'latency-bound' if t.latency_bound else 'bandwidth-bound'}, "
        f"S3); {t.algorithm}/{t.protocol}",
        markup=False,
    )
    per_token = f"; per token {t.per_token_us:.1f} us" if t.per_token_us is not None else ""
    out_console.print(f"per layer (2 all-reduces) {t.per_layer_us:.1f} us{per_token}")
