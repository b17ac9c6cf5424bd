"""``aifabric show FABRIC``: summary, port map, BOM and a topology picture."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
    progress,
)
from aifabric.cli.fabric_view import (
    bom_table,
    port_map_rows,
    port_map_table,
    summary_json,
    summary_table,
    write_cabling_csv,
)
from aifabric.design import bill_of_materials, load_fabric
from aifabric.topology.capacity import fabric_capacity

__all__ = ["show"]


def show(
    fabric_file: Annotated[
        Path, typer.Argument(help="fabric file (YAML/JSON) or design document", show_default=False)
    ],
    picture: Annotated[
        Path | None, typer.Option("--picture", help="draw the topology to this .svg or .png")
    ] = None,
    port_map: Annotated[
        int,
        typer.Option(
            "--port-map", help="port-map rows to print (table); all rows in JSON when > 0"
        ),
    ] = 20,
    cabling: Annotated[
        Path | None, typer.Option("--cabling", help="write the full port map (cabling plan) as CSV")
    ] = None,
    spares: Annotated[float, typer.Option("--spares", help="spare optics/cables, percent")] = 0.0,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
) -> None:
    """Print a fabric's summary, port map and BOM; draw its topology."""
    cat = get_catalog(catalog)
    with progress(f"loading {fabric_file}"):
        fabric = load_fabric(fabric_file, cat)
        cap = fabric_capacity(fabric)
        spare_pct = spares
        if spares == 0.0 and fabric.design is not None:
            spare_pct = fabric.design.spares_percent
        bom = bill_of_materials(
            fabric,
            cat,
            spares_percent=spare_pct,
            spare_switches=fabric.design.spare_switches if fabric.design else 0,
        )
    stats = None
    if picture is not None:
        # matplotlib loads only when a picture is asked for
        from aifabric.report.topology import draw_topology  # noqa: PLC0415

        with progress(f"drawing {picture}"):
            stats = draw_topology(fabric, picture)
    if cabling is not None:
        write_cabling_csv(fabric, cabling)
    if fmt is OutputFormat.json:
        doc = summary_json(cap, bom)
        doc["name"] = fabric.name
        if port_map > 0:
            doc["port_map"] = port_map_rows(fabric)
        doc["picture"] = str(picture) if picture else None
        doc["explain"] = [e.model_dump() for e in cap.explain]
        emit_json(doc)
    else:
        out_console.print(summary_table(fabric, cap))
        if port_map > 0:
            out_console.print(port_map_table(fabric, port_map))
        out_console.print(bom_table(bom))
        if explain:
            print_explain(cap.explain)
    if stats is not None:
        err_console.print(
            f"wrote {picture} ({stats.nodes_drawn} nodes, "
            f"{stats.collapsed_groups} collapsed groups)"
        )
    if cabling is not None:
        err_console.print(f"wrote {cabling} ({len(fabric.links)} links)")
