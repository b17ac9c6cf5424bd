"""Rendering a fabric's summary, BOM and port map (shared by ``design``, ``show``, ``check``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from rich.table import Table

from aifabric.design.bom import BomItem
from aifabric.errors import InputError
from aifabric.model import Fabric
from aifabric.topology.capacity import Capacity
from aifabric.units import format_gbps

__all__ = [
    "bom_table",
    "port_map_rows",
    "port_map_table",
    "summary_json",
    "summary_table",
    "write_cabling_csv",
]


def summary_json(cap: Capacity, bom: list[BomItem]) -> dict[str, Any]:
    """The contract keys of ``design``/``show`` (their JSON output)."""
    return {
        "servers": cap.servers,
        "gpus": cap.gpus,
        "tiers": cap.tiers,
        "leaves": cap.leaves,
        "spines": cap.spines,
        "super_spines": cap.super_spines,
        "oversubscription": cap.oversubscription,
        "bom": [b.as_json() for b in bom],
        "bisection_Gbps": round(cap.bisection_gbps, 3),
        "host_bandwidth_Gbps": round(cap.host_gbps, 3),
    }


def summary_table(fabric: Fabric, cap: Capacity) -> Table:
    table = Table(title=f"Fabric {fabric.name}", title_justify="left", show_header=False)
    table.add_column("quantity", style="bold")
    table.add_column("value")
    table.add_row("GPUs / servers", f"{cap.gpus} / {cap.servers}")
    table.add_row("tiers", str(cap.tiers))
    table.add_row(
        "leaves / spines / super-spines", f"{cap.leaves} / {cap.spines} / {cap.super_spines}"
    )
    if fabric.middleboxes:
        table.add_row("middleboxes", ", ".join(f"{m.name} ({m.kind})" for m in fabric.middleboxes))
    ratios = ", ".join(f"{tier} {ratio:g}:1" for tier, ratio in cap.oversubscription.items())
    table.add_row("oversubscription (down:up)", ratios or "n/a (single tier)")
    table.add_row("host bandwidth", format_gbps(cap.host_gbps))
    table.add_row("bisection bandwidth", format_gbps(cap.bisection_gbps))
    if fabric.addressing is not None:
        table.add_row("IP plan", f"{fabric.addressing.scheme}: {fabric.addressing.rationale}")
    table.add_row("transport", fabric.transport)
    return table


def bom_table(bom: list[BomItem]) -> Table:
    table = Table(title="Bill of materials", title_justify="left")
    table.add_column("item")
    table.add_column("category")
    table.add_column("count", justify="right")
    table.add_column("of which spares", justify="right")
    for item in bom:
        table.add_row(item.item, item.category, str(item.count), str(item.spares or ""))
    return table


_PORT_MAP_FIELDS = (
    "a",
    "b",
    "kind",
    "speed_gbps",
    "length_m",
    "cable",
    "a_module",
    "b_module",
    "plane",
    "a_ipv4",
    "b_ipv4",
    "mtu_bytes",
)


def port_map_rows(fabric: Fabric) -> list[dict[str, Any]]:
    """Every link as a flat row: the cabling plan."""
    rows = []
    for link in fabric.links:
        data = link.model_dump(mode="json")
        rows.append({k: data.get(k) for k in _PORT_MAP_FIELDS})
    return rows


def port_map_table(fabric: Fabric, limit: int) -> Table:
    table = Table(
        title=f"Port map ({len(fabric.links)} links"
        + (f", first {limit}" if len(fabric.links) > limit else "")
        + ")",
        title_justify="left",
    )
    for col in ("a", "b", "kind", "speed", "media", "length"):
        table.add_column(col)
    for link in fabric.links[:limit]:
        media = link.cable or ""
        if link.a_module or link.b_module:
            media = f"{link.a_module} / {link.b_module} + {media}"
        table.add_row(
            str(link.a),
            str(link.b),
            link.kind,
            f"{link.speed_gbps:g}G",
            media,
            f"{link.length_m:g} m" if link.length_m else "",
        )
    return table


def write_cabling_csv(fabric: Fabric, path: Path) -> None:
    """The full port map as CSV (one row per cable run), for the people who cable it."""
    try:
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(_PORT_MAP_FIELDS))
            writer.writeheader()
            writer.writerows(port_map_rows(fabric))
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc}") from None
