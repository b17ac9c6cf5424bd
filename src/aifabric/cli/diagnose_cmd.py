"""``aifabric diagnose PATH...``: root causes from evidence (files, bundle directories), ranked,
each saying whether the fabric, the host, the configuration or the application is at fault
(JSON keys: ``findings``, ``summary``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aifabric.checks.diagnose import all_rules, diagnose, load_evidence
from aifabric.checks.diagnose.engine import TEXT_KIND
from aifabric.checks.registry import CheckMeta
from aifabric.cli.common import CatalogOpt, err_console, get_catalog, progress
from aifabric.cli.verify_cmd import ReportFormat, ReportFormatOpt, VerifyRun, emit_report
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.findings import exit_code_for

__all__ = ["diagnose_cmd", "rule_metas"]


def rule_metas() -> list[CheckMeta]:
    """The rules in the shape the JUnit/SARIF writers take (id, title, description, refs)."""
    return [
        CheckMeta(
            id=r.id,
            title=r.title,
            category="diagnose",
            severity=r.severity,
            refs=r.refs,
            inputs=("bundle",),
            description=f"{r.symptom}. Cause: {r.cause.strip()}",
        )
        for r in all_rules()
    ]


def diagnose_cmd(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="captured outputs or bundle directories (DIR/<host>/<captures>)",
            show_default=False,
        ),
    ] = None,
    fabric_file: Annotated[
        Path | None,
        typer.Option(
            "--fabric",
            help="fabric file: lets diagnose compare measured busbw with what it should give",
            show_default=False,
        ),
    ] = None,
    catalog: CatalogOpt = None,
    fmt: ReportFormatOpt = ReportFormat.table,
) -> None:
    """Find root causes in evidence: NCCL logs, nccl-tests, ethtool, RDMA counters, optics, PFC
    counters, ping, lspci... (S20, S21). Says fabric, host, configuration or application."""
    if not paths:
        raise InputError("nothing to diagnose: give captured files or bundle directories")
    cat = get_catalog(catalog)
    with progress("diagnosing"):
        fabric = load_fabric(fabric_file, cat) if fabric_file is not None else None
        ev = load_evidence(paths, fabric=fabric, catalog=cat)
        result = diagnose(ev)
    kinds = sorted({f.kind for f in ev.files})
    not_checked = list(ev.skipped)
    text = sorted({f.path for f in ev.files if f.kind == TEXT_KIND})
    if text:
        not_checked.append(
            "no parser for (read as text, every line matched against the signature catalogues): "
            + ", ".join(text)
        )
    if result.healthy:
        not_checked.insert(0, "no problem found in: " + ", ".join(result.healthy))
    run = VerifyRun(result.findings, rule_metas(), not_checked)
    emit_report(
        run,
        fmt,
        name="diagnose",
        extra={
            "inputs": [{"file": f.path, "kind": f.kind, "subject": f.subject} for f in ev.files],
            "kinds": kinds,
            "healthy": result.healthy,
        },
    )
    if fmt is ReportFormat.table and not result.findings:
        # only said when no line in the input reads like an error that nothing explains
        err_console.print("no problem found", highlight=False)
    raise typer.Exit(exit_code_for(result.findings))
