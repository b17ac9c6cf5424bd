"""``aifabric verify FABRIC [--configs DIR] [--bundle DIR] [--nccl-env FILE]``: the fabric intent
against the seed's rules, and against what device configs, host state and the NCCL environment
say. Findings as a table, JSON (``findings``, ``summary``), JUnit XML or SARIF."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from aifabric import __version__
from aifabric.catalog import Catalog
from aifabric.checks import CheckContext, CheckMeta, all_checks, run_checks
from aifabric.cli.common import (
    CatalogOpt,
    emit_json,
    err_console,
    findings_table,
    get_catalog,
    out_console,
    progress,
    summary_line,
)
from aifabric.design import load_fabric
from aifabric.dialects.load import load_observed
from aifabric.dialects.observed import Observed
from aifabric.errors import InputError
from aifabric.findings import FABRIC_SOURCE, Finding, exit_code_for, summarize, with_sources
from aifabric.model import Fabric

__all__ = [
    "BundleOpt",
    "ConfigsOpt",
    "NcclEnvOpt",
    "ReportFormat",
    "ReportFormatOpt",
    "VerifyRun",
    "emit_report",
    "run_verify",
    "verify",
]


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    junit = "junit"
    sarif = "sarif"


ReportFormatOpt = Annotated[
    ReportFormat,
    typer.Option(
        "--format", "-F", help="table, json, junit (XML) or sarif (2.1.0)", case_sensitive=False
    ),
]
ConfigsOpt = Annotated[
    Path | None,
    typer.Option(
        "--configs",
        help="directory of device configs: <device>.<ext> or <device>/<files> (SONiC "
        "config_db.json, EOS/NX-OS running-config, NVUE, traffic.conf, host captures)",
        show_default=False,
    ),
]
BundleOpt = Annotated[
    Path | None,
    typer.Option(
        "--bundle",
        help="probe bundle directory: <host>/<captures> (mlnx_qos, ip link, ibv_devinfo, "
        "traffic_class, default_roce_tos, nccl.env)",
        show_default=False,
    ),
]
NcclEnvOpt = Annotated[
    Path | None,
    typer.Option("--nccl-env", help="NCCL environment file (KEY=VALUE lines)", show_default=False),
]


NO_FABRIC = (
    "no fabric file: configs judged against the default lossless intent (RoCE DSCP 26 -> "
    "TC 3, PFC on 3 only, CNP DSCP 48 -> TC 6 strict, ECN 150 KB/1.5 MB, host MTU 9000), "
    "every port with lossless QoS taken as a RoCE port; links, paths, deadlock and design "
    "not checked"
)


@dataclass
class VerifyRun:
    """What one verify run found and what it could not check."""

    findings: list[Finding]
    checks: list[CheckMeta]
    not_checked: list[str] = field(default_factory=list)
    observed: Observed | None = None


def run_verify(
    fabric: Fabric,
    catalog: Catalog,
    *,
    configs: Path | None = None,
    bundle: Path | None = None,
    nccl_env: Path | None = None,
    categories: tuple[str, ...] = ("design", "verify"),
) -> VerifyRun:
    """Load the observed inputs, run the checks of ``categories``, list what was not checked."""
    observed: Observed | None = None
    if configs is not None or bundle is not None or nccl_env is not None:
        names = [s.name for s in fabric.switches] + [s.name for s in fabric.servers]
        switches = [s.name for s in fabric.switches] + [m.name for m in fabric.middleboxes]
        observed = load_observed(configs=configs, bundle=bundle, nccl_env=nccl_env,
                                 devices=names + [m.name for m in fabric.middleboxes],
                                 switches=switches)
    ctx = CheckContext(fabric=fabric, catalog=catalog, observed=observed)
    findings: list[Finding] = []
    for cat in categories:
        findings += run_checks(ctx, category=cat)
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], f.check, f.target))
    metas = [meta for meta, _ in all_checks().values() if meta.category in categories]
    return VerifyRun(
        findings, metas, _not_checked(fabric, observed, configs, bundle, nccl_env), observed
    )


def _not_checked(
    fabric: Fabric,
    obs: Observed | None,
    configs: Path | None,
    bundle: Path | None,
    nccl_env: Path | None,
) -> list[str]:
    out: list[str] = []
    if configs is None:
        out.append(
            "switch configs (--configs DIR): MTU, PFC, ECN and DSCP maps as configured on the "
            "devices; only the fabric file's intent was checked"
        )
    if bundle is None and (obs is None or not obs.hosts()):
        out.append(
            "host state (--bundle DIR): NIC trust/PFC (mlnx_qos), ToS marking (traffic_class, "
            "cma_roce_tos), interface and RDMA MTU"
        )
    if nccl_env is None and (obs is None or obs.nccl_env is None):
        out.append("NCCL environment (--nccl-env FILE): NCCL_IB_TC, GID index, HCA list, timeouts")
    if obs is None:
        return out
    known = {s.name for s in fabric.switches} | {s.name for s in fabric.servers}
    stray = sorted(d for d in obs.devices if d not in known)
    if stray and known:
        out.append(
            f"{len(stray)} config(s) name no fabric device ({', '.join(stray[:4])}"
            f"{' ...' if len(stray) > 4 else ''}): checked device-wide, not per link"
        )
    if configs is not None:
        missing = [s.name for s in fabric.switches if s.name not in obs.devices]
        if missing:
            out.append(
                f"{len(missing)} of {len(fabric.switches)} switches have no config "
                f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''})"
            )
    out += obs.skipped
    for dev in obs.devices.values():
        out += [f"{dev.name}: {note}" for note in dev.notes]
    return out


def emit_report(
    run: VerifyRun,
    fmt: ReportFormat,
    *,
    name: str,
    fabric_file: Path | None = None,
    extra: dict[str, object] | None = None,
) -> None:
    """Write the findings of ``run`` to stdout in ``fmt`` (table also lists what was skipped)."""
    summary = summarize(run.findings)
    if fmt is ReportFormat.json:
        emit_json(
            {
                "fabric": name,
                "findings": [f.model_dump() for f in run.findings],
                "summary": summary.model_dump(),
                **(extra or {}),
                "checks_run": [m.id for m in run.checks],
                "not_checked": run.not_checked,
            }
        )
    elif fmt is ReportFormat.junit:
        from aifabric.report.junit import findings_to_junit  # noqa: PLC0415

        sys.stdout.write(
            findings_to_junit(run.findings, run.checks, suite=name, not_checked=run.not_checked)
        )
        sys.stdout.write("\n")
    elif fmt is ReportFormat.sarif:
        from aifabric.report.sarif import findings_to_sarif  # noqa: PLC0415

        where = fabric_file.as_posix() if fabric_file is not None else None
        doc = findings_to_sarif(
            run.findings,
            run.checks,
            tool_version=__version__,
            artifacts={"fabric file": where} if where else None,
            default_artifact=where,
        )
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False))
        sys.stdout.write("\n")
    else:
        if run.findings:
            out_console.print(findings_table(run.findings))
        out_console.print(f"{summary_line(summary)} from {len(run.checks)} checks")
        for item in run.not_checked:
            err_console.print(f"not checked: {item}", markup=False, highlight=False)


def verify(
    fabric_file: Annotated[
        Path | None,
        typer.Argument(
            help="fabric file (YAML/JSON) or design document; without one, configs are judged "
            "against the default lossless intent",
            show_default=False,
        ),
    ] = None,
    configs: ConfigsOpt = None,
    bundle: BundleOpt = None,
    nccl_env: NcclEnvOpt = None,
    catalog: CatalogOpt = None,
    fmt: ReportFormatOpt = ReportFormat.table,
) -> None:
    """Verify lossless configuration: intent, device configs, host state, NCCL env (S11-S21)."""
    cat = get_catalog(catalog)
    if fabric_file is None and configs is None and bundle is None and nccl_env is None:
        raise InputError(
            "nothing to verify: give a fabric file and/or --configs DIR, --bundle DIR, "
            "--nccl-env FILE"
        )
    with progress(f"verifying {fabric_file or configs or bundle or nccl_env}"):
        if fabric_file is not None:
            fabric = load_fabric(fabric_file, cat)
        else:
            fabric = Fabric(name="(no fabric file)")
        run = run_verify(fabric, cat, configs=configs, bundle=bundle, nccl_env=nccl_env)
        if fabric_file is None:
            run.not_checked.insert(0, NO_FABRIC)
        else:
            run.findings = with_sources(run.findings, {FABRIC_SOURCE: fabric_file.as_posix()})
    emit_report(run, fmt, name=fabric.name, fabric_file=fabric_file)
    raise typer.Exit(exit_code_for(run.findings))
