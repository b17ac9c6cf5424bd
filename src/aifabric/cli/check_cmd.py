"""``aifabric check FABRIC``: the main job. Design checks today; verify and the expected
performance join as those capabilities land (contracts.md keys: findings, summary, estimate)."""

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
from aifabric.findings import exit_code_for, summarize
from aifabric.topology.capacity import fabric_capacity

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
        "expected collective performance (estimate: not available yet)",
    ]
    if fmt is OutputFormat.json:
        emit_json(
            {
                "fabric": fabric.name,
                "findings": [f.model_dump() for f in findings],
                "summary": summary.model_dump(),
                "estimate": None,
                "checks_run": ran,
                "not_checked": not_checked,
            }
        )
    else:
        out_console.print(summary_table(fabric, fabric_capacity(fabric)))
        if findings:
            out_console.print(findings_table(findings))
        out_console.print(f"{summary_line(summary)} from {len(ran)} checks")
        for item in not_checked:
            err_console.print(f"not checked: {item}")
    raise typer.Exit(exit_code_for(findings))
