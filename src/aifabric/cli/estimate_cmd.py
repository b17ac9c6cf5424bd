"""``aifabric estimate [FABRIC]``: the bus bandwidth and time a platform should give, and why
(contracts.md keys ``rows``, ``bottleneck``, ``explain``)."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.table import Table

from aifabric.catalog import Catalog
from aifabric.cli.common import (
    CatalogOpt,
    ExplainOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    get_catalog,
    out_console,
    print_explain,
    unit_option,
)
from aifabric.cli.workload_view import (
    inference_json,
    parse_count,
    print_inference,
    print_training,
    training_json,
)
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.evidence import parse_file
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow
from aifabric.model.workload import DTYPE_BYTES, Workload
from aifabric.perf.calibrate import Calibration, Measurement, calibrate
from aifabric.perf.collectives import Collective, normalize_collective
from aifabric.perf.estimate import Estimate, Platform, estimate, sweep_sizes
from aifabric.perf.fabric import LoadBalance, platform_from_fabric
from aifabric.perf.workload import inference_tp_latency, training_iteration
from aifabric.units import format_bytes, parse_bytes, parse_speed_gbps

__all__ = ["estimate_cmd", "platform_from_flags"]

GradDtype = Literal["fp32", "bf16", "fp16", "fp8"]


class CollectiveOpt(StrEnum):
    allreduce = "allreduce"
    allgather = "allgather"
    reducescatter = "reducescatter"
    alltoall = "alltoall"
    broadcast = "broadcast"
    reduce = "reduce"


class TransportOpt(StrEnum):
    ib = "ib"
    roce = "roce"
    socket = "socket"


DEFAULTS = {"gpu": "H100", "gpus_per_node": 8, "nic_speed": "400G", "transport": "roce"}


def platform_from_flags(
    cat: Catalog,
    *,
    nodes: int | None,
    gpus_per_node: int | None,
    gpu: str | None,
    nics_per_node: int | None,
    nic_speed: str | None,
    transport: str | None,
    mtu: int | None,
    pcie_gen: int | None,
    assumed: list[str],
) -> Platform:
    """A platform from command-line flags; what the user left out is assumed and listed."""

    def pick(value: Any, name: str) -> Any:
        if value is None:
            assumed.append(f"--{name.replace('_', '-')} {DEFAULTS[name]}")
            return DEFAULTS[name]
        return value

    gpu_spec = cat.gpu(pick(gpu, "gpu"))
    g = int(pick(gpus_per_node, "gpus_per_node"))
    n = nodes or 1
    nics = nics_per_node if nics_per_node is not None else g
    if nics_per_node is None and n > 1:
        assumed.append(f"--nics-per-node {g} (one NIC per GPU)")
    speed = unit_option(parse_speed_gbps, pick(nic_speed, "nic_speed"), "--nic-speed") or 400.0
    tr = pick(transport, "transport")
    gen = pcie_gen or 5
    return Platform(
        gpu=gpu_spec,
        nodes=n,
        gpus_per_node=g,
        nics_per_node=nics,
        nic_speed_gbps=speed,
        transport=tr,
        nic_pcie=cat.pcie_gen(gen),
        gpu_pcie=cat.pcie_gen(gpu_spec.pcie_gen),
        eth_mtu=mtu or 9000,
    )


def _measurements(path: Path) -> tuple[Collective | None, int, list[Measurement]]:
    """nccl-tests results (any format the parser reads) → collective, ranks, out-of-place times."""
    result = parse_file(path, "nccl-tests")
    headers = [r for r in result.records if isinstance(r, NcclTestsHeader)]
    rows = [r for r in result.records if isinstance(r, NcclTestsRow)]
    if not rows:
        raise InputError(f"{path}: no nccl-tests result rows to calibrate on")
    coll = normalize_collective(headers[0].collective or "") if headers else None
    ranks = headers[0].ranks if headers else 0
    first_test = rows[0].test
    out: list[Measurement] = []
    for r in rows:
        t = r.oop_time_us if r.oop_time_us is not None else r.ip_time_us
        if r.test == first_test and t is not None and t > 0:
            out.append(Measurement(r.size_bytes, t, r.line))
    return coll, ranks, out


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


def estimate_cmd(
    fabric_file: Annotated[
        Path | None,
        typer.Argument(help="fabric file (optional: flags describe the platform otherwise)"),
    ] = None,
    collective: Annotated[
        CollectiveOpt, typer.Option("--collective", "-c", help="collective to estimate")
    ] = CollectiveOpt.allreduce,
    nodes: Annotated[int | None, typer.Option("--nodes", min=1, help="servers in the job")] = None,
    gpus_per_node: Annotated[
        int | None, typer.Option("--gpus-per-node", min=1, help="GPUs per server (default 8)")
    ] = None,
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="GPU model (A100, H100, B200...)")
    ] = None,
    nics_per_node: Annotated[
        int | None, typer.Option("--nics-per-node", min=0, help="RDMA NICs per server")
    ] = None,
    nic_speed: Annotated[str | None, typer.Option("--nic-speed", help="e.g. 400G")] = None,
    transport: Annotated[
        TransportOpt | None, typer.Option("--transport", help="ib, roce or socket (TCP)")
    ] = None,
    mtu: Annotated[
        int | None, typer.Option("--mtu", min=576, help="host Ethernet MTU (default 9000)")
    ] = None,
    pcie_gen: Annotated[
        int | None, typer.Option("--pcie-gen", min=1, max=7, help="PCIe generation of NIC slots")
    ] = None,
    size: Annotated[str | None, typer.Option("--size", help="one message size, e.g. 8G")] = None,
    min_bytes: Annotated[str, typer.Option("-b", "--minbytes", help="sweep start")] = "8",
    max_bytes: Annotated[str, typer.Option("-e", "--maxbytes", help="sweep end")] = "8G",
    factor: Annotated[float, typer.Option("-f", "--stepfactor", help="sweep factor")] = 2.0,
    nccl_version: Annotated[
        str | None, typer.Option("--nccl-version", help="NCCL release of the constants")
    ] = None,
    cpu: Annotated[
        str, typer.Option("--cpu", help="host CPU vendor: intel, amd (NCCL latency model)")
    ] = "intel",
    sharp: Annotated[bool, typer.Option("--sharp", help="InfiniBand SHARP (NCCL CollNet)")] = False,
    load_balance: Annotated[
        str, typer.Option("--load-balance", help="auto, ecmp or adaptive (fabric files)")
    ] = "auto",
    algo: Annotated[
        str | None, typer.Option("--algo", help="like NCCL_ALGO: e.g. ring or tree,ring")
    ] = None,
    proto: Annotated[
        str | None, typer.Option("--proto", help="like NCCL_PROTO: e.g. simple")
    ] = None,
    calibrate_file: Annotated[
        Path | None,
        typer.Option("--calibrate", help="fit the model to these nccl-tests results first"),
    ] = None,
    params: Annotated[
        str | None,
        typer.Option("--params", help="training: model parameters, e.g. 70B (S1)"),
    ] = None,
    dtype: Annotated[
        str, typer.Option("--dtype", help="gradient dtype: fp32, bf16, fp16, fp8")
    ] = "bf16",
    dp: Annotated[int | None, typer.Option("--dp", min=1, help="data-parallel size")] = None,
    tp: Annotated[int, typer.Option("--tp", min=1, help="tensor-parallel size (S8)")] = 1,
    pp: Annotated[int, typer.Option("--pp", min=1, help="pipeline-parallel size")] = 1,
    ep: Annotated[int, typer.Option("--ep", min=1, help="expert-parallel size")] = 1,
    overlap: Annotated[
        float, typer.Option("--overlap", min=0.0, max=1.0, help="share hidden behind compute")
    ] = 0.0,
    zero: Annotated[
        bool, typer.Option("--zero", help="ZeRO/FSDP: ReduceScatter + AllGather")
    ] = False,
    hidden: Annotated[int | None, typer.Option("--hidden", min=1, help="hidden size")] = None,
    layers: Annotated[int | None, typer.Option("--layers", min=1, help="layers")] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", min=1, help="sequence length")] = None,
    micro_batch: Annotated[
        int | None, typer.Option("--micro-batch", min=1, help="micro-batch size")
    ] = None,
    micro_batches: Annotated[
        int | None, typer.Option("--micro-batches", min=1, help="micro-batches per iteration")
    ] = None,
    moe_layers: Annotated[
        int | None, typer.Option("--moe-layers", min=0, help="MoE layers (EP all-to-all)")
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="experts per token")] = 1,
    inference: Annotated[
        bool, typer.Option("--inference", help="per-token TP AllReduce latency (S3)")
    ] = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="inference batch")] = 1,
    use_workload: Annotated[
        bool, typer.Option("--workload", help="use the fabric file's workload section")
    ] = False,
    catalog: CatalogOpt = None,
    explain: ExplainOpt = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Predict nccl-tests rows (time, algbw, busbw, NCCL's algorithm and protocol) for a fabric
    file or a platform given by flags; --calibrate fits the model to your own results first."""
    cat = get_catalog(catalog)
    assumed: list[str] = []
    coll: Collective = normalize_collective(collective.value) or "allreduce"
    measured: list[Measurement] = []
    measured_nodes: int | None = None
    if calibrate_file is not None:
        m_coll, m_ranks, measured = _measurements(calibrate_file)
        if m_coll is not None and m_coll != coll:
            if collective is not CollectiveOpt.allreduce:
                raise InputError(f"--calibrate {calibrate_file}: results are {m_coll}, not {coll}")
            coll = m_coll
        if m_ranks:
            g = min(gpus_per_node or 8, m_ranks)
            if m_ranks % g:
                raise InputError(
                    f"--calibrate {calibrate_file}: {m_ranks} ranks is not a multiple of "
                    f"{g} GPUs per node; give --gpus-per-node"
                )
            measured_nodes, gpus_per_node = m_ranks // g, g
            nodes = nodes or measured_nodes
    if cpu not in ("intel", "amd", "other"):
        raise InputError(f"--cpu {cpu!r}: expected intel, amd or other")
    if load_balance not in ("auto", "ecmp", "adaptive"):
        raise InputError(f"--load-balance {load_balance!r}: expected auto, ecmp or adaptive")
    fab_workload: Workload | None = None
    if fabric_file is not None:
        fab = load_fabric(fabric_file, cat)
        fab_workload = fab.workload
        p = platform_from_fabric(
            fab,
            cat,
            nodes=nodes,
            gpu=gpu,
            load_balance=_lb(load_balance),
        )
    else:
        p = platform_from_flags(
            cat,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            gpu=gpu,
            nics_per_node=nics_per_node,
            nic_speed=nic_speed,
            transport=transport.value if transport else None,
            mtu=mtu,
            pcie_gen=pcie_gen,
            assumed=assumed,
        )
    p = replace(
        p,
        cpu=cpu,  # type: ignore[arg-type]
        sharp=sharp,
        nccl_release=nccl_version,
        disabled=_masks(algo, proto),
    )
    cal: Calibration | None = None
    if measured:
        # fit on the platform the results came from; predict for the one asked (--nodes)
        at = replace(p, nodes=measured_nodes or p.nodes)
        cal = calibrate(at, coll, measured)
        p = replace(p, efficiency=cal.efficiency)
    if inference:
        if hidden is None:
            raise InputError("--inference needs --hidden (the model's hidden size)")
        tpl = inference_tp_latency(
            p, hidden, batch, tp, dtype_bytes=DTYPE_BYTES[_dtype(dtype)], layers=layers
        )
        if fmt is OutputFormat.json:
            emit_json(
                {
                    "rows": [],
                    "bottleneck": {"link": tpl.link},
                    "explain": [e.model_dump(exclude_none=True) for e in tpl.steps],
                    "inference": inference_json(tpl),
                    "platform": _platform_json(p),
                    "assumed": assumed,
                }
            )
            return
        print_inference(tpl)
        if explain:
            print_explain(tpl.steps)
        return
    workload: Workload | None = None
    if params is not None:
        n_params = parse_count(params, "--params")
        gpus = p.nodes * p.gpus_per_node
        dp_size = dp or max(gpus // (tp * pp), 1)
        workload = _make_workload(n_params, _dtype(dtype), dp_size, tp, pp, ep, overlap)
    elif use_workload:
        if fab_workload is None:
            raise InputError("--workload: the fabric file has no workload section")
        workload = fab_workload
    if workload is not None:
        comm = training_iteration(
            p,
            workload,
            hidden_size=hidden,
            layers=layers,
            seq_len=seq_len,
            micro_batch=micro_batch,
            micro_batches=micro_batches,
            moe_layers=moe_layers,
            top_k=top_k,
            zero=zero,
        )
        grad = comm.gradient
        grad_est = grad.estimates[0] if grad is not None and grad.estimates else None
        if fmt is OutputFormat.json:
            doc_w: dict[str, Any] = (
                grad_est.to_json() if grad_est else {"rows": [], "bottleneck": {}, "explain": []}
            )
            doc_w["training"] = training_json(comm)
            doc_w["explain"] = [e.model_dump(exclude_none=True) for e in comm.steps] + doc_w[
                "explain"
            ]
            doc_w["platform"] = _platform_json(p)
            doc_w["assumed"] = assumed
            emit_json(doc_w)
            return
        for item in assumed:
            err_console.print(f"assumed: {item}", markup=False)
        print_training(comm)
        if explain:
            print_explain(comm.steps)
        return
    if size is not None:
        sizes = [unit_option(parse_bytes, size, "--size") or 0]
    else:
        lo = unit_option(parse_bytes, min_bytes, "-b") or 1
        hi = unit_option(parse_bytes, max_bytes, "-e") or lo
        sizes = sweep_sizes(lo, hi, factor)
    est = estimate(p, coll, sizes)
    if fmt is OutputFormat.json:
        doc: dict[str, Any] = est.to_json()
        doc["platform"] = _platform_json(p)
        doc["assumed"] = assumed
        doc["calibration"] = cal.to_json() if cal else None
        if cal:
            doc["explain"] = [e.model_dump(exclude_none=True) for e in cal.explain] + doc["explain"]
        emit_json(doc)
        return
    for item in assumed:
        err_console.print(f"assumed: {item}", markup=False)
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
        print_explain([*(cal.explain if cal else ()), *est.explain])


def _dtype(value: str) -> GradDtype:
    if value == "fp32":
        return "fp32"
    if value == "fp16":
        return "fp16"
    if value == "fp8":
        return "fp8"
    if value == "bf16":
        return "bf16"
    raise InputError(f"--dtype {value!r}: expected fp32, bf16, fp16 or fp8")


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


def _lb(value: str) -> LoadBalance:
    if value == "ecmp":
        return "ecmp"
    if value == "adaptive":
        return "adaptive"
    return "auto"


_ALGO_FLAG = {
    "ring": "ring",
    "tree": "tree",
    "nvls": "nvls",
    "nvlstree": "nvls_tree",
    "collnetdirect": "collnet_direct",
    "collnetchain": "collnet_chain",
    "collnet": "collnet_direct",
    "pat": "pat",
}
_PROTO_FLAG = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}


def _masks(algo: str | None, proto: str | None) -> frozenset[str]:
    """NCCL_ALGO / NCCL_PROTO style lists (``^`` excludes) → the set of disabled names."""
    disabled: set[str] = set()
    for text, table, flag in ((algo, _ALGO_FLAG, "--algo"), (proto, _PROTO_FLAG, "--proto")):
        if not text:
            continue
        exclude = text.startswith("^")
        names = set()
        for item in text.lstrip("^").split(","):
            key = item.strip().lower().replace("_", "")
            if key not in table:
                raise InputError(f"{flag} {item!r}: expected one of {', '.join(sorted(table))}")
            names.add(table[key])
        universe = set(table.values())
        disabled |= names if exclude else universe - names
    return frozenset(disabled)


def _platform_json(p: Platform) -> dict[str, Any]:
    return {
        "gpu": p.gpu.name,
        "nodes": p.nodes,
        "gpus_per_node": p.gpus_per_node,
        "nics_per_node": p.nics_per_node,
        "nic_speed_gbps": p.nic_speed_gbps,
        "transport": p.transport,
        "eth_mtu": p.eth_mtu,
        "nic_pcie_gen": p.nic_pcie.gen,
        "nccl_constants": p.nccl_release or "default",
        "fabric_crosses": p.fabric.crosses,
        "efficiency": {
            "nic": p.efficiency.nic,
            "intra": p.efficiency.intra,
            "latency": p.efficiency.latency,
            "bandwidth": p.efficiency.bandwidth,
        },
    }
