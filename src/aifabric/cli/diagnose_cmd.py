"""``aifabric diagnose PATH...``: root causes from evidence (files, bundle directories), ranked,
each saying whether the fabric, the host, the configuration or the application is at fault
(JSON keys: ``findings``, ``summary``).

``--prometheus URL`` adds the fleet's counters as evidence: the aifabric exporter's series at the
start and end of ``--window`` before ``--at`` (:mod:`aifabric.monitor.fleet`), so the counter
rules see their growth over the window; paths are then optional."""

from __future__ import annotations

import os
import time
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
from aifabric.monitor.fleet import FleetEvidence, parse_time, parse_window, prometheus_captures
from aifabric.monitor.promql import PromClient

PASSWORD_ENV = "AIFABRIC_PROMETHEUS_PASSWORD"
"""Where ``--prometheus-user``'s password comes from (never a command-line argument, which
other users of the host can read in the process list)."""

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
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus",
            help="Prometheus base URL: diagnose the aifabric exporter's counters over --window",
            show_default=False,
        ),
    ] = None,
    window: Annotated[
        str,
        typer.Option("--window", help="with --prometheus: the span compared (30s, 15m, 1h)"),
    ] = "15m",
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="with --prometheus: the window's end, RFC 3339 or unix seconds (default: now)",
            show_default=False,
        ),
    ] = None,
    prometheus_user: Annotated[
        str | None,
        typer.Option(
            "--prometheus-user",
            help=f"basic-auth user for --prometheus (password from ${PASSWORD_ENV})",
            show_default=False,
        ),
    ] = None,
    prometheus_ca: Annotated[
        Path | None,
        typer.Option(
            "--prometheus-ca",
            help="CA file (PEM) for an https --prometheus URL with a private certificate",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Find root causes in evidence: NCCL logs, nccl-tests, ethtool, RDMA counters, optics, PFC
    counters, ping, lspci... (S20, S21), or a fleet's counters in Prometheus (--prometheus).
    Says fabric, host, configuration or application."""
    if prometheus is None and (prometheus_user or at is not None or prometheus_ca):
        raise InputError("--at, --prometheus-user and --prometheus-ca need --prometheus URL")
    if not paths and prometheus is None:
        raise InputError(
            "nothing to diagnose: give captured files or bundle directories, or --prometheus URL"
        )
    fleet = _fleet(prometheus, window, at, prometheus_user, prometheus_ca)
    cat = get_catalog(catalog)
    with progress("diagnosing"):
        fabric = load_fabric(fabric_file, cat) if fabric_file is not None else None
        ev = load_evidence(
            paths or [],
            fabric=fabric,
            catalog=cat,
            captures=fleet.captures if fleet is not None else (),
        )
        result = diagnose(ev)
    kinds = sorted({f.kind for f in ev.files})
    not_checked = list(ev.skipped)
    if fleet is not None:
        not_checked += fleet.notes
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


def _fleet(
    url: str | None, window: str, at: str | None, user: str | None, ca_file: Path | None
) -> FleetEvidence | None:
    """The captures read from Prometheus (``None`` without ``--prometheus``)."""
    if url is None:
        return None
    window_s = parse_window(window)
    at_s = parse_time(at) if at is not None else time.time()
    password = os.environ.get(PASSWORD_ENV) if user is not None else None
    if user is not None and password is None:
        raise InputError(f"--prometheus-user {user}: set the password in ${PASSWORD_ENV}")
    client = PromClient(url, user=user, password=password, ca_file=ca_file)
    with progress("reading counters from Prometheus"):
        return prometheus_captures(client, window_s=window_s, at_s=at_s)
