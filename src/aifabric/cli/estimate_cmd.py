"""``aifabric estimate [FABRIC]``: the bus bandwidth and time a platform should give, and why
(stable JSON keys ``rows``, ``bottleneck``, ``explain``).

This module is the command line only: its options, gathered into an
:class:`~aifabric.cli.estimate_inputs.EstimateArgs`, turned into a platform by
:func:`~aifabric.cli.estimate_inputs.prepare`, and handed to one of the three modes in
:mod:`aifabric.cli.estimate_modes` (collective rows, training iteration, inference latency).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from aifabric.cli.common import CatalogOpt, ExplainOpt, FormatOpt, OutputFormat, get_catalog
from aifabric.cli.estimate_inputs import EstimateArgs, platform_from_flags, prepare
from aifabric.cli.estimate_modes import (
    run_collective,
    run_inference,
    run_training,
    wants_training,
)

__all__ = ["estimate_cmd", "platform_from_flags"]


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
    nic: Annotated[
        str | None,
        typer.Option("--nic", help="catalog NIC model (ConnectX-7...): speed, PCIe, vendor"),
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
    no_gdr: Annotated[
        bool,
        typer.Option(
            "--no-gdr",
            help="GPUDirect RDMA off: NIC traffic staged through host memory "
            "(like NCCL_NET_GDR_LEVEL=LOC or no nvidia-peermem)",
        ),
    ] = False,
    socket_nthreads: Annotated[
        int | None,
        typer.Option(
            "--socket-nthreads", min=0, max=16, help="like NCCL_SOCKET_NTHREADS (socket transport)"
        ),
    ] = None,
    nsocks_perthread: Annotated[
        int | None,
        typer.Option(
            "--nsocks-perthread", min=1, max=64, help="like NCCL_NSOCKS_PERTHREAD (socket)"
        ),
    ] = None,
    tcp_stream_speed: Annotated[
        str | None,
        typer.Option("--tcp-stream-speed", help="one TCP flow's rate, e.g. 16G (default 16G)"),
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
        str | None, typer.Option("--dtype", help="gradient dtype: fp32, bf16, fp16, fp8 (bf16)")
    ] = None,
    dp: Annotated[int | None, typer.Option("--dp", min=1, help="data-parallel size")] = None,
    tp: Annotated[
        int | None, typer.Option("--tp", min=1, help="tensor-parallel size (S8, default 1)")
    ] = None,
    pp: Annotated[
        int | None, typer.Option("--pp", min=1, help="pipeline-parallel size (default 1)")
    ] = None,
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
    batch: Annotated[
        int | None, typer.Option("--batch", min=1, help="inference batch (default 1)")
    ] = None,
    use_workload: Annotated[
        bool, typer.Option("--workload", help="use the fabric file's workload section")
    ] = False,
    catalog: CatalogOpt = None,
    explain: ExplainOpt = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Predict nccl-tests rows (time, algbw, busbw, NCCL's algorithm and protocol) for a fabric
    file or a platform given by flags; --calibrate fits the model to your own results first.
    Flags left out take defaults, printed as "assumed: ..." (JSON: "assumed")."""
    args = EstimateArgs(
        fabric_file=fabric_file,
        collective=collective.value,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        gpu=gpu,
        nic=nic,
        nics_per_node=nics_per_node,
        nic_speed=nic_speed,
        transport=transport.value if transport else None,
        mtu=mtu,
        pcie_gen=pcie_gen,
        no_gdr=no_gdr,
        socket_nthreads=socket_nthreads,
        nsocks_perthread=nsocks_perthread,
        tcp_stream_speed=tcp_stream_speed,
        size=size,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        factor=factor,
        nccl_version=nccl_version,
        cpu=cpu,
        sharp=sharp,
        load_balance=load_balance,
        algo=algo,
        proto=proto,
        calibrate_file=calibrate_file,
        params=params,
        dtype=dtype,
        dp=dp,
        tp=tp,
        pp=pp,
        ep=ep,
        overlap=overlap,
        zero=zero,
        hidden=hidden,
        layers=layers,
        seq_len=seq_len,
        micro_batch=micro_batch,
        micro_batches=micro_batches,
        moe_layers=moe_layers,
        top_k=top_k,
        inference=inference,
        batch=batch,
        use_workload=use_workload,
    )
    prep = prepare(get_catalog(catalog), args)
    if args.inference:
        run_inference(prep, args, fmt, explain)
    elif wants_training(args):
        run_training(prep, args, fmt, explain)
    else:
        run_collective(prep, args, fmt, explain)
