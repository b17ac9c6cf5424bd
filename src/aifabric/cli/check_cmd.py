"""``aifabric check FABRIC [--configs DIR] [--bundle DIR] [--nccl-env FILE]``: the main job.
Design checks, verify (intent, device configs, host state, NCCL environment) and the expected
collective performance in one report (JSON keys: findings, summary, estimate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aifabric.cli.common import (
    CatalogOpt,
    err_console,
    findings_table,
    get_catalog,
    out_console,
    progress,
    summary_line,
)
from aifabric.cli.fabric_view import summary_table
from aifabric.cli.verify_cmd import (
    BundleOpt,
    ConfigsOpt,
    NcclEnvOpt,
    ReportFormat,
    ReportFormatOpt,
    emit_report,
    run_verify,
)
from aifabric.design import load_fabric
from aifabric.errors import AifabricError
from aifabric.findings import FABRIC_SOURCE, exit_code_for, summarize, with_sources
from aifabric.perf.estimate import Estimate, estimate, sweep_sizes
from aifabric.perf.fabric import platform_from_fabric
from aifabric.topology.capacity import fabric_capacity
from aifabric.units import format_bytes

__all__ = ["check"]


def check(
    fabric_file: Annotated[
        Path, typer.Argument(help="fabric file (YAML/JSON) or design document", show_default=False)
    ],
    configs: ConfigsOpt = None,
    bundle: BundleOpt = None,
    nccl_env: NcclEnvOpt = None,
    catalog: CatalogOpt = None,
    fmt: ReportFormatOpt = ReportFormat.table,
) -> None:
    """Check a fabric: design (S6-S10, S16, S17) and verify (S11-S21) findings, expected
    AllReduce performance (S23), and what was and was not checked."""
    cat = get_catalog(catalog)
    with progress(f"checking {fabric_file}"):
        fabric = load_fabric(fabric_file, cat)
        run = run_verify(fabric, cat, configs=configs, bundle=bundle, nccl_env=nccl_env)
        run.findings = with_sources(run.findings, {FABRIC_SOURCE: fabric_file.as_posix()})
    est: Estimate | None = None
    try:
        platform = platform_from_fabric(fabric, cat)
        # S23's baseline sweep: all_reduce_perf -b 128M -e 8G -f 2
        est = estimate(platform, "allreduce", sweep_sizes(128 << 20, 8 << 30, 2))
    except AifabricError as exc:
        run.not_checked.append(f"expected collective performance ({exc})")
    if fmt is ReportFormat.table:
        out_console.print(summary_table(fabric, fabric_capacity(fabric)))
        if run.findings:
            out_console.print(findings_table(run.findings))
        if est is not None:
            out_console.print(_estimate_text(est))
        out_console.print(f"{summary_line(summarize(run.findings))} from {len(run.checks)} checks")
        for item in run.not_checked:
            err_console.print(f"not checked: {item}", markup=False, highlight=False)
    else:
        emit_report(
            run,
            fmt,
            name=fabric.name,
            fabric_file=fabric_file,
            extra={"estimate": est.to_json() if est else None},
        )
    raise typer.Exit(exit_code_for(run.findings))


def _estimate_text(est: Estimate) -> str:
    """Two lines: the expected AllReduce busbw over S23's sweep and what bounds it."""
    sizes = ", ".join(
        f"{format_bytes(r.size_bytes)} {r.busbw_GBps:.0f}"
        for r in est.rows[:: max(len(est.rows) // 4, 1)]
    )
    b = est.bottleneck
    return (
        f"Expected AllReduce busbw on {est.ranks} GPUs (GB/s): {sizes}; peak "
        f"{est.peak_busbw_GBps:.0f}\n  bound by {b['link']}: {b['reason']} "
        "(aifabric estimate FABRIC --explain)"
    )
