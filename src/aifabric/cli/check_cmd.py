"""``aifabric check FABRIC``: the main job. Design checks and the expected collective
performance today; verify joins when it lands (contracts.md keys: findings, summary, estimate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aifabric.checks import CheckContext, all_checks, run_checks
from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    findings_table,
    get_catalog,
    out_console,
    progress,
    summary_line,
)
from aifabric.cli.fabric_view import summary_table
from aifabric.design import load_fabric
from aifabric.errors import AifabricError
from aifabric.findings import exit_code_for, summarize
from aifabric.perf.estimate import Estimate, estimate, sweep_sizes
from aifabric.perf.fabric import platform_from_fabric
from aifabric.topology.capacity import fabric_capacity
from aifabric.units import format_bytes

__all__ = ["check"]


def check(
    fabric_file: Annotated[
        Path, typer.Argument(help="fabric file (YAML/JSON) or design document", show_default=False)
    ],
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Check a fabric: design findings (S6-S10, S16, S17), with what was and was not checked."""
    cat = get_catalog(catalog)
    with progress(f"checking {fabric_file}"):
        fabric = load_fabric(fabric_file, cat)
        findings = run_checks(CheckContext(fabric=fabric, catalog=cat))
    summary = summarize(findings)
    ran = sorted(all_checks())
    not_checked = [
        "device configs, host state and NCCL environment (verify: not available yet)",
    ]
    est: Estimate | None = None
    try:
        platform = platform_from_fabric(fabric, cat)
        # S23's baseline sweep: all_reduce_perf -b 128M -e 8G -f 2
        est = estimate(platform, "allreduce", sweep_sizes(128 << 20, 8 << 30, 2))
    except AifabricError as exc:
        not_checked.append(f"expected collective performance ({exc})")
    if fmt is OutputFormat.json:
        emit_json(
            {
                "fabric": fabric.name,
                "findings": [f.model_dump() for f in findings],
                "summary": summary.model_dump(),
                "estimate": est.to_json() if est else None,
                "checks_run": ran,
                "not_checked": not_checked,
            }
        )
    else:
        out_console.print(summary_table(fabric, fabric_capacity(fabric)))
        if findings:
            out_console.print(findings_table(findings))
        if est is not None:
            out_console.print(_estimate_text(est))
        out_console.print(f"{summary_line(summary)} from {len(ran)} checks")
        for item in not_checked:
            err_console.print(f"not checked: {item}")
    raise typer.Exit(exit_code_for(findings))


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
