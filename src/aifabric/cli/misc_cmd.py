"""Small commands: ``schema`` (JSON Schema of fabric files) and ``catalog`` (hardware data)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    get_catalog,
    out_console,
)
from aifabric.errors import InputError
from aifabric.model import fabric_json_schema

__all__ = ["catalog", "schema"]

_KINDS = ("gpus", "nics", "pcie", "switches", "modules", "cables")


def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="write to a file")] = None,
) -> None:
    """Print the JSON Schema of fabric files (for editor completion and validation)."""
    text = fabric_json_schema()
    if output is None:
        typer.echo(text)
    else:
        try:
            output.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{output}: cannot write: {exc}") from None


def catalog(
    kind: Annotated[
        str | None, typer.Argument(help="gpus, nics, pcie, switches, modules, cables")
    ] = None,
    catalog_files: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List the hardware catalog (built-in plus --catalog files), each entry with its source."""
    cat = get_catalog(catalog_files)
    if kind is not None and kind not in _KINDS:
        raise InputError(f"unknown catalog kind {kind!r}; known: {', '.join(_KINDS)}")
    kinds = [kind] if kind else list(_KINDS)
    doc: dict[str, list[dict[str, Any]]] = {}
    for k in kinds:
        table: dict[Any, Any] = getattr(cat, k)
        doc[k] = [entry.model_dump(mode="json", exclude_none=True) for entry in table.values()]
    if fmt is OutputFormat.json:
        emit_json(doc)
        return
    for k, entries in doc.items():
        t = Table(title=k, title_justify="left")
        t.add_column("name")
        t.add_column("key figures", max_width=60)
        t.add_column("source", max_width=50)
        for e in entries:
            figures = ", ".join(
                f"{f}={e[f]}"
                for f in e
                if f not in {"name", "source", "note"} and not isinstance(e[f], dict | list)
            )
            t.add_row(str(e.get("name", e.get("gen"))), figures, str(e.get("source")))
        out_console.print(t)
