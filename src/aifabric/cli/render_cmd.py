"""``aifabric render FABRIC --dialect sonic|eos|nxos|nvue|host -o DIR [--diff EXISTING_DIR]``:
the fabric's lossless intent as device and host configuration, verified before anything is
pushed (nothing is pushed).

After rendering, the output directory is read back exactly as ``verify --configs DIR`` reads it
and the verify checks run on it: a rendered config that verify would fault is reported (exit 1),
so a template bug cannot reach a switch unnoticed. ``--diff`` compares each rendered file with
the device's current one in EXISTING_DIR (same name, or ``<device>.<any ext>``) and writes the
change plan in the device's own syntax to ``DIR/_changes/<file>.plan.<ext>`` (a folder the
config readers skip).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aifabric.cli.common import (
    CatalogOpt,
    ExplainOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    findings_table,
    get_catalog,
    out_console,
    print_explain,
    progress,
    summary_line,
)
from aifabric.cli.verify_cmd import run_verify
from aifabric.design import load_fabric
from aifabric.dialects.render import (
    CHANGES_DIR,
    ChangePlan,
    dialect_names,
    find_existing,
    get_dialect,
    render_fabric,
    write_files,
)
from aifabric.errors import InputError
from aifabric.findings import exit_code_for, summarize

__all__ = ["render"]

_PLAN_EXT = {"sonic": "json-patch.json", "nvue": "nv.txt", "host": "diff"}


def render(
    fabric_file: Annotated[Path, typer.Argument(help="fabric file (YAML/JSON)")],
    dialect: Annotated[
        str,
        typer.Option("--dialect", "-d", help="sonic, eos, nxos, nvue or host", show_default=False),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="directory to write")],
    device: Annotated[
        list[str] | None,
        typer.Option("--device", help="only this device (repeatable)", show_default=False),
    ] = None,
    diff: Annotated[
        Path | None,
        typer.Option(
            "--diff",
            help="directory of the devices' current configs: write a change plan per device",
            show_default=False,
        ),
    ] = None,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="skip reading the output back through verify")
    ] = False,
    explain: ExplainOpt = False,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Render the lossless intent for every switch (or server) in one vendor's syntax."""
    if dialect not in dialect_names():
        raise InputError(f"--dialect {dialect!r}: one of {', '.join(dialect_names())}")
    if diff is not None and not diff.is_dir():
        raise InputError(f"--diff {diff}: not a directory")
    cat = get_catalog(catalog)
    fabric = load_fabric(fabric_file, cat)
    with progress(f"rendering {fabric.name} for {dialect}", enabled=fmt == OutputFormat.table):
        result = render_fabric(fabric, dialect, catalog=cat, devices=device)
        if not result.files:
            raise InputError(
                f"fabric {fabric.name!r} has no "
                f"{'servers' if get_dialect(dialect).role == 'host' else 'switches'} to render"
            )
        paths = write_files(result.files, output)
    plans: list[ChangePlan] = []
    if diff is not None:
        d = get_dialect(dialect)
        for f in result.files:
            if f.kind is None:
                continue  # apply scripts: their effect is in the files that are read back
            found = find_existing(diff, f)
            existing = found.read_text(encoding="utf-8", errors="replace") if found else None
            plan = d.plan(f, existing)
            if found is not None:
                where = found.as_posix()
                if plan.existing not in (None, "existing"):
                    where += f" ({plan.existing})"  # e.g. another vendor's config
                plan = ChangePlan(plan.device, plan.path, where, plan.added, plan.removed,
                                  plan.plan)
            ext = _PLAN_EXT.get(dialect, "txt")
            target = output / CHANGES_DIR / f"{Path(f.path).with_suffix('')}.plan.{ext}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(plan.plan, encoding="utf-8")
            plans.append(plan)
    findings = []
    if not no_verify:
        with progress("verifying the rendered configs", enabled=fmt == OutputFormat.table):
            run = run_verify(fabric, cat, configs=output)
        findings = [f for f in run.findings if f.check.startswith("verify.")]
    explained = [e for i in result.intents.values() for e in i.explained]
    if fmt == OutputFormat.json:
        doc: dict[str, Any] = {
            "files": [
                {
                    "device": f.device,
                    "path": p.as_posix(),
                    "dialect": dialect,
                    "kind": f.kind,
                    "bytes": len(f.text.encode()),
                    "sha256": hashlib.sha256(f.text.encode()).hexdigest(),
                }
                for f, p in zip(result.files, paths, strict=True)
            ],
            "findings": [f.model_dump(mode="json") for f in findings],
            "summary": summarize(findings).model_dump(mode="json"),
        }
        if diff is not None:
            doc["changes"] = [
                {"device": p.device, "path": p.path, "existing": p.existing, "added": p.added,
                 "removed": p.removed, "plan": p.plan}
                for p in plans
            ]
        if explain:
            doc["explanation"] = [e.model_dump(mode="json") for e in explained]
        emit_json(doc)
    else:
        table = Table(title=f"{fabric.name}: {get_dialect(dialect).title}")
        for col in ("device", "file", "lines"):
            table.add_column(col)
        for f, p in zip(result.files, paths, strict=True):
            table.add_row(f.device, p.as_posix(), str(len(f.text.splitlines())))
        out_console.print(table)
        for plan in plans:
            where = plan.existing or "no current config found: everything is new"
            out_console.print(
                f"{plan.device} {plan.path}: +{plan.added} -{plan.removed} ({where})"
            )
        if explain:
            print_explain(explained)
        serious = [f for f in findings if f.severity != "info"]  # infos: counted, in JSON
        if serious:
            out_console.print(findings_table(serious, title="Verify of the rendered configs"))
        if not no_verify:
            err_console.print(f"verify of the output: {summary_line(summarize(findings))}")
    raise typer.Exit(exit_code_for(findings))
