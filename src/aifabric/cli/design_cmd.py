"""``aifabric design``: size a fabric from cluster parameters and write the fabric file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from aifabric.checks import CheckContext, run_checks
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
    unit_option,
)
from aifabric.cli.fabric_view import bom_table, summary_json, summary_table
from aifabric.design import design_fabric
from aifabric.errors import InputError
from aifabric.findings import exit_code_for, summarize
from aifabric.model import DesignSpec, write_fabric
from aifabric.units import parse_bytes, parse_length_m, parse_ratio, parse_speed_gbps

__all__ = ["design"]


_FLAG_OF = {
    "nic_speed_gbps": "--nic-speed",
    "switch_speed_gbps": "--switch-speed",
    "host_mtu_bytes": "--mtu",
    "host_cable_m": "--host-cable",
    "fabric_cable_m": "--fabric-cable",
    "core_cable_m": "--core-cable",
    "inter_site_cable_m": "--inter-site-cable",
    "inter_site_links_per_spine": "--inter-site-links",
    "spares_percent": "--spares",
}


def _spec_error(exc: ValidationError) -> InputError:
    """The first validation problem as one line naming the flag the user typed."""
    err = exc.errors()[0]
    message = str(err["msg"]).removeprefix("Value error, ")
    if not err["loc"]:
        return InputError(message)
    field = str(err["loc"][0])
    flag = _FLAG_OF.get(field, "--" + field.replace("_", "-"))
    return InputError(f"{flag}: {message}, got {err.get('input')!r}")


def design(
    gpus: Annotated[int, typer.Option("--gpus", help="total GPUs", show_default=False)],
    gpus_per_server: Annotated[int, typer.Option("--gpus-per-server", help="GPUs per server")],
    nic_speed: Annotated[str, typer.Option("--nic-speed", help="NIC port speed, e.g. 400G")],
    switch_ports: Annotated[
        int | None,
        typer.Option("--switch-ports", help="physical ports per switch (or give --switch-model)"),
    ] = None,
    switch_speed: Annotated[
        str | None, typer.Option("--switch-speed", help="switch port speed, e.g. 400G")
    ] = None,
    nics_per_server: Annotated[
        int | None,
        typer.Option("--nics-per-server", help="RDMA NICs per server [default: one per GPU]"),
    ] = None,
    nic_ports: Annotated[int, typer.Option("--nic-ports", help="cabled ports per NIC")] = 1,
    pcie_gen: Annotated[int, typer.Option("--pcie-gen", help="PCIe generation of NIC slots")] = 5,
    pcie_lanes: Annotated[int, typer.Option("--pcie-lanes", help="lanes per NIC slot")] = 16,
    oversubscription: Annotated[
        str, typer.Option("--oversubscription", help="leaf downlink:uplink, e.g. 1:1 or 3:1")
    ] = "1:1",
    spine_oversubscription: Annotated[
        str, typer.Option("--spine-oversubscription", help="pod spine down:up in three tiers")
    ] = "1:1",
    layout: Annotated[
        str,
        typer.Option(
            "--layout", help="rail (NIC k of every server in an SU to rail leaf k) or tor"
        ),
    ] = "rail",
    planes: Annotated[int, typer.Option("--planes", help="independent network planes")] = 1,
    tiers: Annotated[str, typer.Option("--tiers", help="auto, 2 or 3")] = "auto",
    servers_per_su: Annotated[
        int | None, typer.Option("--servers-per-su", help="servers per scalable unit (rail layout)")
    ] = None,
    min_spines: Annotated[int, typer.Option("--min-spines", help="at least this many spines")] = 2,
    sites: Annotated[int, typer.Option("--sites", help="data-centre sites (S17)")] = 1,
    inter_site_links: Annotated[
        int, typer.Option("--inter-site-links", help="links per top switch pair between sites")
    ] = 1,
    ip_plan: Annotated[
        str, typer.Option("--ip-plan", help="auto, l2 (one subnet, S19) or l3")
    ] = "auto",
    transport: Annotated[str, typer.Option("--transport", help="roce or ib")] = "roce",
    mtu: Annotated[str, typer.Option("--mtu", help="host MTU (S11)")] = "9000",
    gpu_model: Annotated[
        str | None, typer.Option("--gpu-model", help="catalog GPU, e.g. H100")
    ] = None,
    nic_model: Annotated[str | None, typer.Option("--nic-model", help="catalog NIC")] = None,
    switch_model: Annotated[
        str | None, typer.Option("--switch-model", help="catalog switch")
    ] = None,
    server_model: Annotated[str | None, typer.Option("--server-model", help="free text")] = None,
    host_cable: Annotated[
        str | None,
        typer.Option("--host-cable", help="server-leaf length [default: 2m tor, 10m rail]"),
    ] = None,
    fabric_cable: Annotated[str, typer.Option("--fabric-cable", help="leaf-spine length")] = "50m",
    core_cable: Annotated[
        str, typer.Option("--core-cable", help="spine-super-spine length")
    ] = "150m",
    inter_site_cable: Annotated[
        str, typer.Option("--inter-site-cable", help="between sites")
    ] = "10km",
    spares: Annotated[float, typer.Option("--spares", help="spare optics/cables, percent")] = 2.0,
    spare_switches: Annotated[int, typer.Option("--spare-switches", help="per switch model")] = 0,
    name: Annotated[str, typer.Option("--name", help="fabric name")] = "fabric",
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="write the fabric file here (.yaml, or .json for big fabrics)"
        ),
    ] = None,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
) -> None:
    """Size a leaf-spine (or three-tier) fabric: switches, port map, BOM, IP plan, findings."""
    raw: dict[str, Any] = {
        "name": name,
        "gpus": gpus,
        "gpus_per_server": gpus_per_server,
        "nics_per_server": nics_per_server,
        "nic_ports": nic_ports,
        "nic_speed_gbps": unit_option(parse_speed_gbps, nic_speed, "--nic-speed"),
        "nic_model": nic_model,
        "pcie_gen": pcie_gen,
        "pcie_lanes": pcie_lanes,
        "gpu_model": gpu_model,
        "server_model": server_model,
        "switch_model": switch_model,
        "switch_ports": switch_ports,
        "switch_speed_gbps": unit_option(parse_speed_gbps, switch_speed, "--switch-speed"),
        "oversubscription": unit_option(parse_ratio, oversubscription, "--oversubscription"),
        "spine_oversubscription": unit_option(
            parse_ratio, spine_oversubscription, "--spine-oversubscription"
        ),
        "layout": layout,
        "planes": planes,
        "tiers": tiers,
        "servers_per_su": servers_per_su,
        "min_spines": min_spines,
        "sites": sites,
        "inter_site_links_per_spine": inter_site_links,
        "ip_plan": ip_plan,
        "transport": transport,
        "host_mtu_bytes": unit_option(parse_bytes, mtu, "--mtu"),
        "host_cable_m": unit_option(parse_length_m, host_cable, "--host-cable"),
        "fabric_cable_m": unit_option(parse_length_m, fabric_cable, "--fabric-cable"),
        "core_cable_m": unit_option(parse_length_m, core_cable, "--core-cable"),
        "inter_site_cable_m": unit_option(parse_length_m, inter_site_cable, "--inter-site-cable"),
        "spares_percent": spares,
        "spare_switches": spare_switches,
    }
    try:
        spec = DesignSpec.model_validate(
            {k: v for k, v in raw.items() if v is not None}, strict=False
        )
    except ValidationError as exc:
        raise _spec_error(exc) from None
    cat = get_catalog(catalog)
    with progress(f"designing {spec.gpus} GPUs"):
        result = design_fabric(spec, cat)
        findings = run_checks(CheckContext(fabric=result.fabric, catalog=cat), category="design")
    if output is not None:
        with progress(f"writing {output}"):
            write_fabric(result.fabric, output)
    summary = summarize(findings)
    if fmt is OutputFormat.json:
        doc = summary_json(result.capacity, result.bom)
        doc.update(
            {
                "findings": [f.model_dump() for f in findings],
                "summary": summary.model_dump(),
                "ip_plan": result.fabric.addressing.scheme if result.fabric.addressing else None,
                "fabric_file": str(output) if output else None,
                "explain": [e.model_dump() for e in result.explain],
            }
        )
        emit_json(doc)
    else:
        out_console.print(summary_table(result.fabric, result.capacity))
        out_console.print(bom_table(result.bom))
        if findings:
            out_console.print(findings_table(findings, title="Design findings"))
        out_console.print(summary_line(summary))
        if explain:
            print_explain(result.explain)
        if output is not None:
            err_console.print(f"wrote {output} ({len(result.fabric.links)} links)")
        else:
            err_console.print("no fabric file written (use -o FILE)")
    raise typer.Exit(exit_code_for(findings))
