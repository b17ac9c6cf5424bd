"""The three modes of ``aifabric estimate``, one function each, from a :class:`Prepared`.

* :func:`run_collective`: nccl-tests rows for one size or a sweep (stable JSON keys ``rows``,
  ``bottleneck``, ``explain``), after the calibration table when results were given;
* :func:`run_training`: the communication of one training iteration (``--params`` or the fabric
  file's workload, ``--workload``), the gradient sync's rows under the same keys;
* :func:`run_inference`: the per-token tensor-parallel AllReduce latency (``--inference``).

Each prints what it had to assume (flags left out) before its tables, and lists it in JSON under
``assumed`` and as the first ``explain`` step.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from rich.table import Table

from aifabric.cli.common import (
    OutputFormat,
    emit_json,
    out_console,
    print_explain,
    unit_option,
)
from aifabric.cli.estimate_inputs import EstimateArgs, GradDtype, Prepared, dtype_of
from aifabric.cli.workload_view import (
    inference_json,
    parse_count,
    print_inference,
    print_training,
    training_json,
)
from aifabric.errors import InputError
from aifabric.explain import Explained
from aifabric.model.workload import DTYPE_BYTES, Workload
from aifabric.perf.calibrate import Calibration
from aifabric.perf.estimate import Estimate, Platform, estimate, sweep_sizes
from aifabric.perf.inference import inference_tp_latency
from aifabric.perf.workload import training_iteration
from aifabric.units import format_bytes, parse_bytes

__all__ = ["platform_json", "run_collective", "run_inference", "run_training", "wants_training"]


def wants_training(args: EstimateArgs) -> bool:
    """Training mode: a model size (``--params``) or the fabric file's workload (``--workload``)."""
    return args.params is not None or args.use_workload


def _explain_json(steps: list[Explained] | tuple[Explained, ...]) -> list[dict[str, Any]]:
    return [e.model_dump(exclude_none=True) for e in steps]


def _with_assumed(prep: Prepared, steps: list[Explained]) -> list[Explained]:
    step = prep.assumed_step()
    return [step, *steps] if step is not None else steps


def _print_assumed(prep: Prepared) -> None:
    """Every default used for a flag left out, before the tables (table output)."""
    for item in prep.all_assumed():
        out_console.print(f"assumed: {item}", markup=False)


def _dtype(args: EstimateArgs, prep: Prepared) -> GradDtype:
    if args.dtype is None:
        prep.assume("--dtype bf16")
        return "bf16"
    return dtype_of(args.dtype)


def _axis(value: int | None, flag: str, prep: Prepared) -> int:
    if value is None:
        prep.assume(f"{flag} 1")
        return 1
    return value


def run_inference(prep: Prepared, args: EstimateArgs, fmt: OutputFormat, explain: bool) -> None:
    """Per-token tensor-parallel AllReduce latency (S3) on the prepared platform."""
    if args.hidden is None:
        raise InputError("--inference needs --hidden (the model's hidden size)")
    p = prep.platform
    dtype = _dtype(args, prep)
    tp = args.tp
    if tp is None:  # a tensor-parallel group fills one server (S8)
        tp = p.gpus_per_node
        prep.assume(f"--tp {tp} (one server)")
    batch = args.batch
    if batch is None:
        prep.assume("--batch 1")
        batch = 1
    tpl = inference_tp_latency(
        p, args.hidden, batch, tp, dtype_bytes=DTYPE_BYTES[dtype], layers=args.layers
    )
    steps = _with_assumed(prep, list(tpl.steps))
    if fmt is OutputFormat.json:
        emit_json(
            {
                "rows": [],
                "bottleneck": {"link": tpl.link},
                "explain": _explain_json(steps),
                "inference": inference_json(tpl),
                "platform": platform_json(p),
                "assumed": prep.all_assumed(),
            }
        )
        return
    _print_assumed(prep)
    print_inference(tpl)
    if explain:
        print_explain(steps)


def _make_workload(
    n_params: int, dtype: GradDtype, dp: int, tp: int, pp: int, ep: int, overlap: float
) -> Workload:
    try:
        return Workload(
            parameters=n_params,
            gradient_dtype=dtype,
            dp=dp,
            tp=tp,
            pp=pp,
            ep=ep,
            overlap_fraction=overlap,
        )
    except ValidationError as exc:
        msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(f"workload: {msg}") from None


def _workload(prep: Prepared, args: EstimateArgs) -> Workload:
    if args.params is None:
        if prep.fabric_workload is None:
            raise InputError("--workload: the fabric file has no workload section")
        return prep.fabric_workload
    n_params = parse_count(args.params, "--params")
    dtype = _dtype(args, prep)
    tp = _axis(args.tp, "--tp", prep)
    pp = _axis(args.pp, "--pp", prep)
    ep = args.ep or 1
    gpus = prep.platform.nodes * prep.platform.gpus_per_node
    dp = args.dp or max(gpus // (tp * pp), 1)
    return _make_workload(n_params, dtype, dp, tp, pp, ep, args.overlap)


def run_training(prep: Prepared, args: EstimateArgs, fmt: OutputFormat, explain: bool) -> None:
    """Communication of one training iteration (S1 ledger beside the ring, S8 placement)."""
    p = prep.platform
    comm = training_iteration(
        p,
        _workload(prep, args),
        hidden_size=args.hidden,
        layers=args.layers,
        seq_len=args.seq_len,
        micro_batch=args.micro_batch,
        micro_batches=args.micro_batches,
        moe_layers=args.moe_layers,
        top_k=args.top_k,
        zero=args.zero,
    )
    steps = _with_assumed(prep, list(comm.steps))
    if fmt is OutputFormat.json:
        grad = comm.gradient
        grad_est = grad.estimates[0] if grad is not None and grad.estimates else None
        doc: dict[str, Any] = (
            grad_est.to_json() if grad_est else {"rows": [], "bottleneck": {}, "explain": []}
        )
        doc["training"] = training_json(comm)
        doc["explain"] = _explain_json(steps) + doc["explain"]
        doc["platform"] = platform_json(p)
        doc["assumed"] = prep.all_assumed()
        emit_json(doc)
        return
    _print_assumed(prep)
    print_training(comm)
    if explain:
        print_explain(steps)


def _sizes(args: EstimateArgs) -> list[int]:
    if args.size is not None:
        return [unit_option(parse_bytes, args.size, "--size") or 0]
    lo = unit_option(parse_bytes, args.min_bytes, "-b") or 1
    hi = unit_option(parse_bytes, args.max_bytes, "-e") or lo
    return sweep_sizes(lo, hi, args.factor)


def run_collective(prep: Prepared, args: EstimateArgs, fmt: OutputFormat, explain: bool) -> None:
    """nccl-tests rows (time, algbw, busbw, NCCL's algorithm and protocol) and the bound."""
    p, cal = prep.platform, prep.calibration
    est = estimate(p, prep.collective, _sizes(args))
    steps = _with_assumed(prep, [*(cal.explain if cal else ()), *est.explain])
    if fmt is OutputFormat.json:
        doc: dict[str, Any] = est.to_json()
        doc["platform"] = platform_json(p)
        doc["assumed"] = prep.all_assumed()
        doc["calibration"] = cal.to_json() if cal else None
        doc["explain"] = _explain_json(steps)
        emit_json(doc)
        return
    _print_assumed(prep)
    if cal is not None:
        out_console.print(_calibration_table(cal))
        out_console.print(
            f"fitted: latency x{cal.efficiency.latency:.3g}, bandwidth "
            f"x{cal.efficiency.bandwidth:.3g}; RMS error {cal.rms_before_pct:.1f}% -> "
            f"{cal.rms_after_pct:.1f}%"
        )
    out_console.print(_rows_table(est))
    b = est.bottleneck
    out_console.print(
        f"peak busbw {est.peak_busbw_GBps:.1f} GB/s; bound by {b['link']} "
        f"({b['limit_GBps']} GB/s): {b['reason']}",
        markup=False,
    )
    if explain:
        print_explain(steps)


def _rows_table(est: Estimate) -> Table:
    table = Table(title=f"{est.collective}, {est.ranks} ranks", title_justify="left")
    for name, justify in (
        ("size", "right"),
        ("time (us)", "right"),
        ("algbw (GB/s)", "right"),
        ("busbw (GB/s)", "right"),
        ("algorithm", "left"),
        ("protocol", "left"),
        ("bound by", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in est.rows:
        table.add_row(
            format_bytes(r.size_bytes),
            f"{r.time_us:,.1f}",
            f"{r.algbw_GBps:.2f}",
            f"{r.busbw_GBps:.2f}",
            r.algorithm,
            r.protocol,
            r.bottleneck,
        )
    return table


def _calibration_table(cal: Calibration) -> Table:
    table = Table(title="Calibration: measured vs model", title_justify="left")
    for col in ("size", "measured (us)", "model (us)", "calibrated (us)", "residual"):
        table.add_column(col, justify="right")
    for r in cal.rows:
        table.add_row(
            format_bytes(int(r["size_bytes"])),
            f"{r['measured_us']:,.1f}",
            f"{r['model_us']:,.1f}",
            f"{r['calibrated_us']:,.1f}",
            f"{r['residual_pct']:+.1f}%",
        )
    return table


def platform_json(p: Platform) -> dict[str, Any]:
    """The platform an estimate ran on (JSON ``platform``)."""
    return {
        "gpu": p.gpu.name,
        "nodes": p.nodes,
        "gpus_per_node": p.gpus_per_node,
        "nics_per_node": p.nics_per_node,
        "nic_speed_gbps": p.nic_speed_gbps,
        "transport": p.transport,
        "eth_mtu": p.eth_mtu,
        "nic_pcie_gen": p.nic_pcie.gen,
        "gdr": p.gdr,
        "nccl_constants": p.nccl_release or "default",
        "fabric_crosses": p.fabric.crosses,
        "efficiency": {
            "nic": p.efficiency.nic,
            "intra": p.efficiency.intra,
            "latency": p.efficiency.latency,
            "bandwidth": p.efficiency.bandwidth,
            "nvls_tree": p.efficiency.nvls_tree,
        },
    }
