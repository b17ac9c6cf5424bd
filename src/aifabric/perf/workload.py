"""What a training or inference job asks of the fabric, per iteration or per token (S1, S3, S8).

The article's communication ledger (S1) is a back-of-envelope: ``S = parameters × bytes``
(50B × 4 B = 200 GB) over ``speed/8`` (400 Gb/s = 50 GB/s) gives 4 s, "doubled to 8 s or more"
for overhead. This module computes the figure a ring AllReduce really needs and prints the
article's figure beside it, with the reasons they differ (S24):

* a ring AllReduce moves ``2(n−1)/n · S`` through every rank (reduce-scatter, then all-gather),
  so its bandwidth term is ``t_bw = 2(n−1)/n · S / B``: about twice the seed's figure at large
  ``n`` for the same ``B`` (nccl-tests' busbw factor, doc/PERFORMANCE.md);
* ``B`` is the per-rank bottleneck bandwidth, not the line rate: NIC goodput after RoCE/IB
  framing and NCCL's efficiency (47.5 GB/s on 400G RoCE, nccl-tests#267), and when several ranks
  of one communicator share a server, the server's NIC aggregate is what the ring crosses
  (a ring leaves each node once per channel: ``t = 2(n−1)/n · S / (N_NIC · B_NIC)``, capped
  by NVLink);
* with tensor or pipeline parallelism each data-parallel rank syncs only its shard
  ``parameters / (tp · pp)``; gradients are often bf16 (2 bytes), which halves ``S``.

Where the ranks of each communicator sit, and so which NICs it crosses, is
:mod:`aifabric.perf.placement` (S8); per-token inference is :mod:`aifabric.perf.inference` (S3).

All times come from :func:`aifabric.perf.estimate.estimate` (NCCL's α-β model and algorithm
choice on the communicator's platform); the bandwidth term ``t_bw`` is shown beside the full time
so the ring factor stays visible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.model.workload import DTYPE_BYTES, Workload
from aifabric.perf.collectives import Collective, busbw_factor
from aifabric.perf.estimate import Estimate, Platform, Row, estimate
from aifabric.perf.inference import REF_MEGATRON, TpLatency, inference_tp_latency
from aifabric.perf.placement import (
    REF_NODE_BW,
    Placement,
    Tier,
    communicator,
    placement,
    time_one,
)

__all__ = [
    "CommComponent",
    "GradientSync",
    "Placement",
    "TpLatency",
    "TrainingComm",
    "gradient_sync",
    "inference_tp_latency",
    "placement",
    "seed_ledger",
    "training_iteration",
]

REF_BUSBW = (
    "nccl-tests busbw 2(n-1)/n: https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
)


# --------------------------------------------------------------------------------------------
# S1: the article's ledger


def seed_ledger(parameters: int, dtype_bytes: int, nic_speed_gbps: float) -> Explained:
    """The article's back-of-envelope gradient-sync time (S1), exactly as it computes it.

    ``S = parameters × dtype_bytes`` and ``t = S / (speed/8)``: 50B × 4 B = 200 GB over
    400 Gb/s = 50 GB/s is 4.0 s. The article then doubles it for "protocol overhead, congestion
    and queueing" (8 s); the doubled figure is in the note (and in
    :attr:`GradientSync.seed_with_overhead`). No ring factor, no framing, no NCCL efficiency:
    see :func:`gradient_sync` for the figure a ring AllReduce needs.
    """
    if parameters <= 0 or dtype_bytes <= 0:
        raise InputError("parameters and bytes per gradient must be positive")
    if nic_speed_gbps <= 0:
        raise InputError("NIC speed must be positive")
    size = parameters * dtype_bytes
    bw_GBps = nic_speed_gbps / 8.0
    t = size / (nic_speed_gbps * 1e9 / 8.0)
    return Explained.fast(
        quantity="seed gradient sync time (S1 back-of-envelope)",
        value=t,
        unit="s",
        formula="t = S / (speed/8), S = parameters x bytes per gradient",
        inputs={
            "parameters": parameters,
            "dtype_bytes": dtype_bytes,
            "S_bytes": size,
            "S_GB": size / 1e9,
            "nic_speed_gbps": nic_speed_gbps,
            "B_GBps": bw_GBps,
        },
        sources=["S1"],
        note=(
            f"the article doubles this for protocol overhead, congestion and queueing: {2 * t:g} s;"
            " it counts S once (no ring factor 2(n-1)/n) at line rate (no framing)"
        ),
    )


def _seed_doubled(seed: Explained) -> Explained:
    t = float(seed.value)
    return Explained.fast(
        quantity="seed gradient sync time with overhead (S1)",
        value=2.0 * t,
        unit="s",
        formula="t_seed x 2 (the article: overhead, congestion and queueing double it)",
        inputs={"t_seed_s": t},
        sources=["S1"],
        note="a flat x2, not a model: the ring factor alone is ~x2 at large n (see t_bw)",
    )


# --------------------------------------------------------------------------------------------
# S1 done right: the data-parallel gradient sync


@dataclass(frozen=True, slots=True)
class GradientSync:
    """The data-parallel gradient sync of one DP group, and the article's figure beside it."""

    size_bytes: int
    """``S``: bytes each DP rank reduces (its gradient shard)."""
    ranks: int
    placement: Placement
    ring_factor: float
    """``2(n−1)/n`` (AllReduce, or ReduceScatter + AllGather under ZeRO)."""
    bandwidth_GBps: float
    """``B``: the per-rank bottleneck bandwidth (bus bandwidth bound of the communicator)."""
    bandwidth_term_s: float
    """``2(n−1)/n · S / B``."""
    nccl_time_s: float
    """The estimate's full time: NCCL's algorithm and protocol, α + S/bw."""
    algorithm: str
    protocol: str
    link: str
    """What bounds ``B`` (the estimate's bottleneck link)."""
    zero: bool
    seed: Explained
    seed_with_overhead: Explained
    ratio_to_seed: float
    """``t_bw / t_seed``; ≈ ``2(n−1)/n · (speed/8) / B`` when S is the whole gradient."""
    steps: tuple[Explained, ...]
    differences: tuple[str, ...]
    """Plain-language reasons the figure differs from the article's."""
    estimates: tuple[Estimate, ...] = ()

    def lines(self) -> list[str]:
        """Human lines: every figure with its derivation, then the differences."""
        return [s.line() for s in self.steps] + [f"- {d}" for d in self.differences]


def gradient_sync(
    node: Platform,
    workload: Workload,
    *,
    gradient_bytes: int | None = None,
    zero: bool = False,
) -> GradientSync:
    """Data-parallel gradient sync of ``workload`` on servers like ``node`` (S1, S8).

    * ``S`` = ``ceil(parameters / (tp · pp)) × bytes(gradient_dtype)`` per DP rank, or
      ``gradient_bytes`` when given (e.g. the article's 200 GB);
    * the DP communicator comes from :func:`placement` (S8);
    * ``t_bw = 2(n−1)/n · S / B`` with ``B`` the communicator's bottleneck per-rank bandwidth
      (the estimate's bounding link: one NIC's goodput when the DP ranks sit on different
      servers and each uses its own rail NIC);
    * ``nccl_time_s``: :func:`~aifabric.perf.estimate.estimate` for AllReduce of ``S`` (with
      ``zero``: ReduceScatter of ``S`` then AllGather of ``S``, ZeRO/FSDP; same bytes on the
      wire, factor ``(n−1)/n`` each);
    * the article's figure: :func:`seed_ledger` ``(parameters, bytes, node.nic_speed_gbps)``
      and its doubled 8 s, with :attr:`GradientSync.differences` explaining the gap.
    """
    dtype_bytes = DTYPE_BYTES[workload.gradient_dtype]
    shard = math.ceil(workload.parameters / (workload.tp * workload.pp))
    size = gradient_bytes if gradient_bytes is not None else shard * dtype_bytes
    if size <= 0:
        raise InputError("gradient bytes must be positive")
    pl = placement(node, workload, "dp")
    n = pl.ranks
    seed = seed_ledger(workload.parameters, dtype_bytes, node.nic_speed_gbps)
    seed_x2 = _seed_doubled(seed)
    t_seed = float(seed.value)
    steps: list[Explained] = [pl.explained()]
    steps.append(
        Explained.fast(
            quantity="gradient bytes per DP rank",
            value=size,
            unit="B",
            formula=(
                "S = given" if gradient_bytes is not None else "S = ceil(P / (tp x pp)) x bytes"
            ),
            inputs={
                "P": workload.parameters,
                "tp": workload.tp,
                "pp": workload.pp,
                "dtype": workload.gradient_dtype,
                "bytes": dtype_bytes,
            },
            sources=["S1", "S8"],
        )
    )
    if n <= 1:
        steps.append(seed)
        return GradientSync(
            size, n, pl, 0.0, 0.0, 0.0, 0.0, "none", "none", "none", zero, seed, seed_x2, 0.0,
            tuple(steps), ("dp = 1: no gradient sync crosses any link",),
        )  # fmt: skip
    colls: tuple[Collective, ...] = ("reducescatter", "allgather") if zero else ("allreduce",)
    ests = tuple(estimate(pl.platform, c, [size]) for c in colls)
    rows: list[Row] = [e.rows[0] for e in ests]
    factor = sum(busbw_factor(c, n) for c in colls)
    bw = float(ests[0].bottleneck["limit_GBps"])
    link = str(ests[0].bottleneck["link"])
    t_bw = factor * size / (bw * 1e9)
    t_nccl = sum(r.time_us for r in rows) * 1e-6
    alpha_us = sum(r.latency_us for r in rows)
    steps.append(
        Explained.fast(
            quantity="ring factor",
            value=round(factor, 6),
            formula="f = 2(n-1)/n" if not zero else "f = (n-1)/n + (n-1)/n (RS + AG)",
            inputs={"n": n},
            sources=[REF_BUSBW, "S1"],
        )
    )
    steps.append(
        Explained.fast(
            quantity="per-rank bottleneck bandwidth",
            value=bw,
            unit="GB/s",
            formula="B = estimate's bounding link (min(B_intra, N_NIC,owned x NIC goodput))",
            inputs={"link": link, "reason": str(ests[0].bottleneck.get("reason", ""))},
            sources=[REF_NODE_BW, "S9"],
        )
    )
    steps.append(
        Explained.fast(
            quantity="gradient sync bandwidth term",
            value=t_bw,
            unit="s",
            formula="t_bw = f x S / B",
            inputs={"f": round(factor, 6), "S_bytes": size, "B_GBps": bw},
            sources=[REF_BUSBW, "S1"],
        )
    )
    steps.append(
        Explained.fast(
            quantity="gradient sync time (NCCL model)",
            value=t_nccl,
            unit="s",
            formula="t = sum over collectives of (alpha + S / bw) at NCCL's (algorithm, protocol)",
            inputs={
                "collectives": "+".join(colls),
                "algorithm": "+".join(r.algorithm for r in rows),
                "protocol": "+".join(r.protocol for r in rows),
                "alpha_us": round(alpha_us, 2),
            },
            sources=["aifabric.perf.estimate", "S23"],
        )
    )
    steps.extend([seed, seed_x2])
    ratio = t_bw / t_seed if t_seed > 0 else 0.0
    steps.append(
        Explained.fast(
            quantity="bandwidth term / seed figure",
            value=round(ratio, 6),
            formula="t_bw / t_seed = f x (S / S_seed) x (speed/8) / B",
            inputs={
                "f": round(factor, 6),
                "S_over_S_seed": round(size / (workload.parameters * dtype_bytes), 6),
                "line_GBps": node.nic_speed_gbps / 8.0,
                "B_GBps": bw,
            },
            sources=["S1", "S24"],
        )
    )
    diffs = _differences(
        workload,
        node,
        pl,
        size,
        dtype_bytes,
        factor,
        bw,
        link,
        str(ests[0].bottleneck["kind"]),
        t_bw,
        t_seed,
        t_nccl,
        alpha_us,
    )
    return GradientSync(
        size_bytes=size,
        ranks=n,
        placement=pl,
        ring_factor=factor,
        bandwidth_GBps=bw,
        bandwidth_term_s=t_bw,
        nccl_time_s=t_nccl,
        algorithm="+".join(r.algorithm for r in rows),
        protocol="+".join(r.protocol for r in rows),
        link=link,
        zero=zero,
        seed=seed,
        seed_with_overhead=seed_x2,
        ratio_to_seed=ratio,
        steps=tuple(steps),
        differences=diffs,
        estimates=ests,
    )


def _differences(
    w: Workload,
    node: Platform,
    pl: Placement,
    size: int,
    dtype_bytes: int,
    factor: float,
    bw: float,
    link: str,
    kind: str,
    t_bw: float,
    t_seed: float,
    t_nccl: float,
    alpha_us: float,
) -> tuple[str, ...]:
    n = pl.platform.ranks
    line = node.nic_speed_gbps / 8.0
    seed_size = w.parameters * dtype_bytes
    out = [
        f"ring factor: a ring AllReduce sends and receives 2(n-1)/n x S per rank (reduce-scatter"
        f" then all-gather); n = {n} gives {factor:.4f} x S, approaching 2 as n grows. The "
        f"article counts S once, so at equal bandwidth its figure is {factor:.2f}x too small.",
        f"bandwidth: the article divides by the line rate speed/8 = {line:g} GB/s; a rank gets "
        f"B = {bw:g} GB/s ({link}). "
        + (
            "The whole group is inside one server: only its scale-up links carry it."
            if pl.nodes == 1
            else (
                f"The group has {pl.ranks_per_node} rank(s) per server and owns "
                f"{pl.nic_share:g} of the server's {pl.server_nics} NICs (all the server's GPUs "
                "sync at once, each over its own NICs); "
                + (
                    "those NICs give more than the scale-up links, so NVLink bounds the ring."
                    if kind in ("nvlink", "pcie") and pl.ranks_per_node > 1
                    else "B is their goodput after framing and NCCL's efficiency."
                )
            )
        ),
    ]
    if size != seed_size:
        out.append(
            f"shard: the article syncs the whole gradient (P x bytes = {seed_size / 1e9:g} GB); "
            f"each DP rank here reduces S = {size / 1e9:g} GB"
            + (
                f" (P / (tp x pp) with tp = {w.tp}, pp = {w.pp})."
                if w.tp * w.pp > 1
                else " (given)."
            )
        )
    out.append(
        f"overhead: the article doubles its {t_seed:g} s to {2 * t_seed:g} s for protocol "
        f"overhead, congestion and queueing. The ring factor alone is {factor:.2f}x; framing "
        "and efficiency are in B; congestion (oversubscription, ECMP collisions) is the "
        "fabric factor, not a flat x2. Bandwidth term here: "
        f"{t_bw:.4g} s; NCCL model with latency {alpha_us:.4g} us: {t_nccl:.4g} s."
    )
    if dtype_bytes == 4:
        out.append(
            f"dtype: gradients are often bf16 (2 bytes), which halves S and every time above: "
            f"{t_bw / 2:.4g} s bandwidth term."
        )
    else:
        out.append(
            f"dtype: this job's gradients are {w.gradient_dtype} ({dtype_bytes} bytes), the "
            "article assumes fp32 (4 bytes)."
        )
    out.append(
        "overlap: frameworks overlap gradient buckets with the backward pass; only the exposed "
        "share costs iteration time (training_iteration: exposed = total x (1 - overlap))."
    )
    return tuple(out)


# --------------------------------------------------------------------------------------------
# one training iteration (S8)


@dataclass(frozen=True, slots=True)
class CommComponent:
    """One kind of communication of an iteration, per rank."""

    name: str
    """``dp-gradient``, ``tp-activations``, ``pp-p2p`` or ``ep-alltoall``."""
    collective: str
    ranks: int
    count: int
    """Operations per iteration per rank."""
    message_bytes: int
    bytes_total: int
    """``count × message_bytes``."""
    time_each_s: float
    time_s: float
    """``count × time_each_s``."""
    tier: Tier
    link: str
    steps: tuple[Explained, ...]
    note: str | None = None


@dataclass(frozen=True, slots=True)
class TrainingComm:
    """Per-iteration communication of a Megatron-style job, per rank."""

    components: tuple[CommComponent, ...]
    skipped: tuple[str, ...]
    """Components not computed, and why (missing model shape)."""
    total_s: float
    exposed_s: float
    overlap_fraction: float
    gradient: GradientSync | None
    tp_penalty: float | None
    """TP all-reduce time as placed / inside one scale-up domain (1.0 when inside)."""
    steps: tuple[Explained, ...]

    def component(self, name: str) -> CommComponent | None:
        return next((c for c in self.components if c.name == name), None)


def _component(
    name: str,
    coll: Collective,
    label: str,
    pl: Placement,
    count: int,
    size: int,
    formula: str,
    inputs: dict[str, float | int | str],
    sources: list[str],
    note: str | None = None,
) -> CommComponent:
    t, row, link = time_one(pl, coll, size)
    step = Explained.fast(
        quantity=f"{name} per iteration",
        value=count * t,
        unit="s",
        formula=f"t = count x t_each; count = {formula}; t_each = estimate({label}, S)",
        inputs={
            **inputs,
            "count": count,
            "S_bytes": size,
            "t_each_us": round(row.time_us, 3),
            "alpha_us": round(row.latency_us, 3),
            "algorithm": row.algorithm,
            "protocol": row.protocol,
            "tier": pl.tier,
        },
        sources=sources,
        note=note,
    )
    return CommComponent(
        name, label, pl.ranks, count, size, count * size, t, count * t, pl.tier, link,
        (pl.explained(), step), note,
    )  # fmt: skip


def training_iteration(
    node: Platform,
    workload: Workload,
    *,
    hidden_size: int | None = None,
    layers: int | None = None,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    micro_batches: int | None = None,
    moe_layers: int | None = None,
    top_k: int = 1,
    activation_bytes: int = 2,
    zero: bool = False,
) -> TrainingComm:
    """Per-iteration communication of a Megatron-style training job on servers like ``node``.

    Components (per rank, each with its communicator placed by :func:`placement`, S8):

    * ``dp-gradient``: :func:`gradient_sync` of ``parameters / (tp·pp)`` gradients (``zero``:
      ReduceScatter + AllGather); once per iteration.
    * ``tp-activations`` (needs ``hidden_size``, ``layers``, ``seq_len``, ``micro_batch``):
      Megatron's 2 all-reduces forward + 2 backward per layer of ``b·s·h·activation_bytes``;
      ``count = 4 · ceil(layers/pp) · m``. Inside one server when the TP group fits (S8);
      otherwise it crosses the NICs, and ``tp_penalty`` = its time / the time inside one
      scale-up domain of ``tp`` GPUs (hypothetical when ``tp > g``).
    * ``pp-p2p`` (``pp > 1``, needs ``hidden_size``, ``seq_len``, ``micro_batch``): activations
      forward and their gradients backward, ``b·s·h·activation_bytes`` per micro-batch per stage
      boundary; a middle stage sends ``2m`` messages; modelled as a 2-rank broadcast (α + S/bw).
    * ``ep-alltoall`` (``ep > 1``, needs ``moe_layers``, ``hidden_size``, ``seq_len``,
      ``micro_batch``): dispatch + combine forward and backward, ``4 · ceil(moe_layers/pp) · m``
      all-to-alls of ``b·s·h·activation_bytes·top_k``; skipped with a note otherwise.

    ``m = micro_batches`` (1 when not given). ``total_s`` sums the components;
    ``exposed_s = total_s · (1 − overlap_fraction)``. Sequence parallelism, activation
    recomputation and overlap inside the pipeline schedule are not modelled.
    """
    for nm, v in (
        ("hidden_size", hidden_size),
        ("layers", layers),
        ("seq_len", seq_len),
        ("micro_batch", micro_batch),
        ("micro_batches", micro_batches),
        ("moe_layers", moe_layers),
    ):
        if v is not None and v <= 0:
            raise InputError(f"{nm} must be positive, got {v}")
    if top_k < 1 or activation_bytes < 1:
        raise InputError("top_k and activation_bytes must be at least 1")
    m = micro_batches or 1
    comps: list[CommComponent] = []
    skipped: list[str] = []
    steps: list[Explained] = []

    grad = gradient_sync(node, workload, zero=zero)
    dp_pl = grad.placement
    n_ops = 2 if zero else 1
    comps.append(
        CommComponent(
            "dp-gradient",
            "reducescatter+allgather" if zero else "allreduce",
            grad.ranks,
            n_ops,
            grad.size_bytes,
            n_ops * grad.size_bytes,
            grad.nccl_time_s / n_ops,
            grad.nccl_time_s,
            dp_pl.tier,
            grad.link,
            grad.steps,
        )
    )

    shape_ok = None not in (hidden_size, seq_len, micro_batch)
    act = (micro_batch or 0) * (seq_len or 0) * (hidden_size or 0) * activation_bytes
    shape_inputs: dict[str, float | int | str] = {
        "b": micro_batch or 0,
        "s": seq_len or 0,
        "h": hidden_size or 0,
        "bytes": activation_bytes,
        "m": m,
        "pp": workload.pp,
    }
    tp_penalty: float | None = None
    if workload.tp > 1:
        if shape_ok and layers is not None:
            per_stage = math.ceil(layers / workload.pp)
            tp_pl = placement(node, workload, "tp")
            comp = _component(
                "tp-activations", "allreduce", "allreduce", tp_pl, 4 * per_stage * m, act,
                "4 x ceil(layers / pp) x m (2 forward + 2 backward per layer)",
                {**shape_inputs, "layers": layers, "S": "b x s x h x bytes"},
                [REF_MEGATRON, "S8"],
            )  # fmt: skip
            comps.append(comp)
            ideal = communicator(
                replace(node, gpus_per_node=max(node.gpus_per_node, workload.tp)),
                "tp",
                list(range(workload.tp)),
            )
            t_ideal, _, _ = time_one(ideal, "allreduce", act)
            tp_penalty = comp.time_each_s / t_ideal if t_ideal > 0 else 1.0
            steps.append(
                Explained.fast(
                    quantity="TP placement penalty",
                    value=round(tp_penalty, 4),
                    formula="t_each(TP as placed) / t_each(TP inside one scale-up domain)",
                    inputs={
                        "tp": workload.tp,
                        "g": node.gpus_per_node,
                        "tier": tp_pl.tier,
                        "t_placed_us": round(comp.time_each_s * 1e6, 3),
                        "t_inside_us": round(t_ideal * 1e6, 3),
                    },
                    sources=["S8"],
                    note=(
                        "tp > GPUs per server: the 'inside' figure is a hypothetical scale-up "
                        "domain of tp GPUs"
                        if workload.tp > node.gpus_per_node
                        else None
                    ),
                )
            )
        else:
            skipped.append(
                "tp-activations: needs hidden_size, layers, seq_len and micro_batch "
                "(Megatron TP traffic is model-dependent)"
            )
    if workload.pp > 1:
        if shape_ok:
            pp_pl = placement(node, workload, "pp")
            comps.append(
                _component(
                    "pp-p2p", "broadcast", "send/recv (2-rank broadcast)", pp_pl, 2 * m, act,
                    "2 x m (activations forward, gradients backward, per micro-batch)",
                    {**shape_inputs, "S": "b x s x h x bytes"},
                    ["S8", "Megatron-LM pipeline schedule (Narayanan et al. 2021)"],
                    note="a middle stage's sends; the pipeline bubble is not included",
                )
            )  # fmt: skip
        else:
            skipped.append("pp-p2p: needs hidden_size, seq_len and micro_batch")
    if workload.ep > 1:
        if shape_ok and moe_layers is not None:
            ep_pl = placement(node, workload, "ep")
            comps.append(
                _component(
                    "ep-alltoall", "alltoall", "alltoall", ep_pl,
                    4 * math.ceil(moe_layers / workload.pp) * m, act * top_k,
                    "4 x ceil(moe_layers / pp) x m (dispatch + combine, forward and backward)",
                    {**shape_inputs, "moe_layers": moe_layers, "top_k": top_k,
                     "S": "b x s x h x bytes x top_k"},
                    ["S8", "GShard / Megatron-Core MoE token dispatcher"],
                )
            )  # fmt: skip
        else:
            skipped.append(
                "ep-alltoall: needs moe_layers, hidden_size, seq_len and micro_batch "
                "(tokens x hidden x bytes per dispatch)"
            )
    total = sum(c.time_s for c in comps)
    ov = workload.overlap_fraction
    exposed = total * (1.0 - ov)
    steps.append(
        Explained.fast(
            quantity="communication per iteration",
            value=total,
            unit="s",
            formula="T = sum of component times",
            inputs={c.name: round(c.time_s, 6) for c in comps},
            sources=["S8", "S1"],
        )
    )
    steps.append(
        Explained.fast(
            quantity="exposed communication per iteration",
            value=exposed,
            unit="s",
            formula="T_exposed = T x (1 - overlap_fraction)",
            inputs={"T_s": round(total, 6), "overlap_fraction": ov},
            sources=["S17"],
            note="the part not hidden behind compute: what stretches the iteration",
        )
    )
    return TrainingComm(
        tuple(comps), tuple(skipped), total, exposed, ov, grad, tp_penalty, tuple(steps)
    )
