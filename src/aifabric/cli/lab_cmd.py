"""``aifabric lab ...``: the designed fabric running in Linux network namespaces (commands:
``lab up FABRIC --name NAME``, ``lab status NAME``, ``lab exec NAME NODE -- CMD``,
``lab fault add NAME KIND``, ``lab fault clear NAME``, ``lab down NAME``, ``lab list``; status
JSON keys ``name``, ``nodes``, ``links``, ``faults``). Needs root and iproute2, iptables,
ethtool, iputils-ping, iperf3, frr: without them exit 3 with the install command."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    get_catalog,
    out_console,
)
from aifabric.cli.lab_traffic_cmd import compare, traffic
from aifabric.design import load_fabric
from aifabric.lab.capture import capture_lab
from aifabric.lab.faults import FAULT_KINDS, add_fault, clear_faults, list_faults
from aifabric.lab.lifecycle import lab_down, lab_exec, lab_list, lab_status, lab_up
from aifabric.lab.state import require_tools

__all__ = ["lab_app"]

lab_app = typer.Typer(
    name="lab",
    help="Run the fabric for real in network namespaces: FRR/BGP or static ECMP, faults, "
    "traffic (needs root).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
fault_app = typer.Typer(name="fault", help="Inject, list and clear faults.", no_args_is_help=True,
                        rich_markup_mode=None)
lab_app.add_typer(fault_app)
lab_app.command("traffic")(traffic)
lab_app.command("compare")(compare)


class RoutingOpt(StrEnum):
    frr = "frr"
    static = "static"


class BgpOpt(StrEnum):
    numbered = "numbered"
    unnumbered = "unnumbered"


class HashOpt(StrEnum):
    l3 = "l3"
    l4 = "l4"


NameArg = Annotated[str, typer.Argument(help="lab name", show_default=False)]


def _say(t0: float) -> Any:
    def progress(message: str) -> None:
        err_console.print(f"[dim]{time.monotonic() - t0:6.2f} s[/dim]  {message}",
                          highlight=False)
    return progress


@lab_app.command("up")
def up(
    fabric_file: Annotated[Path, typer.Argument(help="fabric file", show_default=False)],
    name: Annotated[str, typer.Option("--name", help="lab name (in every namespace name)")],
    routing: Annotated[RoutingOpt, typer.Option(help="FRR eBGP or static kernel ECMP")] =
        RoutingOpt.frr,
    bgp: Annotated[BgpOpt, typer.Option(help="eBGP over numbered /31s or unnumbered")] =
        BgpOpt.numbered,
    hash_policy: Annotated[HashOpt, typer.Option("--hash", help="ECMP hash: l3 or l4")] =
        HashOpt.l4,
    hash_seed: Annotated[int, typer.Option(help="ECMP hash seed (node k uses seed + k)")] = 1,
    servers_per_leaf: Annotated[int, typer.Option(help="servers kept per leaf")] = 2,
    rate_scale: Annotated[
        float | None,
        typer.Option(help="shape every link to speed / SCALE (e.g. 1000: 400G -> 400 Mb/s)",
                     show_default=False),
    ] = None,
    offloads: Annotated[bool, typer.Option(
        help="keep veth TSO/GSO/GRO (faster, but a drop removes a 64 KB burst)")] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for convergence")] = 90.0,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Bring the fabric up: a namespace per node, a veth per link at the link's MTU, routing,
    and wait until every router has every route at its full ECMP width."""
    require_tools(frr=routing is RoutingOpt.frr)
    fabric = load_fabric(fabric_file, get_catalog(catalog))
    t0 = time.monotonic()
    state = lab_up(
        fabric, name, fabric_path=str(fabric_file), servers_per_leaf=servers_per_leaf,
        routing=routing.value,
        bgp=bgp.value,
        hash_policy=hash_policy.value,
        hash_seed=hash_seed, offloads=offloads, rate_scale=rate_scale,
        converge_timeout_s=timeout, progress=_say(t0),
    )
    doc = lab_status(name)
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        _print_status(doc)
    if not state.converged:
        raise typer.Exit(1)


@lab_app.command("status")
def status(name: NameArg, fmt: FormatOpt = OutputFormat.table) -> None:
    """Nodes, links, faults, BGP sessions and route state of a lab."""
    doc = lab_status(name)
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        _print_status(doc)


@lab_app.command("down")
def down(name: NameArg, fmt: FormatOpt = OutputFormat.table) -> None:
    """Remove the lab: its processes (FRR, iperf3), namespaces, veths and state. Idempotent."""
    require_tools(frr=False, traffic=False)
    doc = lab_down(name)
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        out_console.print(
            f"lab {name}: removed {doc['namespaces']} namespaces, stopped {doc['processes']} "
            f"processes" + ("" if doc["state_removed"] else " (no state file)")
        )


@lab_app.command("list")
def list_cmd(fmt: FormatOpt = OutputFormat.table) -> None:
    """Labs on this machine (also crashed ones that only left namespaces)."""
    labs = lab_list()
    if fmt is OutputFormat.json:
        emit_json({"labs": labs})
        return
    table = Table("name", "phase", "fabric", "namespaces", "faults", "converged")
    for lab in labs:
        table.add_row(lab["name"], str(lab["phase"]), str(lab["fabric"]),
                      str(lab["namespaces"]), str(lab["faults"]), str(lab["converged"]))
    out_console.print(table if labs else "no labs")


@lab_app.command(
    "exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def exec_cmd(
    name: NameArg,
    node: Annotated[str, typer.Argument(help="node name", show_default=False)],
    command: Annotated[list[str] | None, typer.Argument(help="command after --")] = None,
) -> None:
    """Run a command inside a node's namespace: ``lab exec NAME NODE -- ping -c1 10.200.1.2``."""
    raise typer.Exit(lab_exec(name, node, command or []))


@fault_app.command("add")
def fault_add(
    name: NameArg,
    kind: Annotated[str, typer.Argument(help="; ".join(
        f"{k.name}: {k.stands_for}" for k in FAULT_KINDS.values()), show_default=False)],
    link: Annotated[str | None, typer.Option(
        help="A:B, the link between nodes A and B (fault on A's end)", show_default=False)] = None,
    node: Annotated[str | None, typer.Option(help="a node", show_default=False)] = None,
    value: Annotated[str | None, typer.Option(
        help="MTU, loss %, rate (100M), DSCP", show_default=False)] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Inject a fault: mtu-mismatch, loss, throttle, shallow-buffer, link-down, ecmp-l3-hash,
    dscp-remark, bgp-down."""
    require_tools(frr=False, traffic=False)
    record = add_fault(name, kind, link=link, node=node, value=value)
    if fmt is OutputFormat.json:
        emit_json({"fault": record})
    else:
        where = record["link"] or record["node"] or "all routers"
        out_console.print(f"{record['id']} {kind} on {where}"
                          + (f" ({record['value']})" if record["value"] else "")
                          + f": {record['stands_for']}")


@fault_app.command("clear")
def fault_clear(
    name: NameArg,
    fault_id: Annotated[str | None, typer.Option("--id", help="one fault (default: all)",
                                                 show_default=False)] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Undo one fault or all of them."""
    require_tools(frr=False, traffic=False)
    cleared = clear_faults(name, fault_id)
    if fmt is OutputFormat.json:
        emit_json({"cleared": cleared})
    else:
        out_console.print(f"cleared {len(cleared)} fault(s)"
                          + "".join(f"\n  {f['id']} {f['kind']}" for f in cleared))


@fault_app.command("list")
def fault_list(name: NameArg, fmt: FormatOpt = OutputFormat.table) -> None:
    """Faults in place."""
    faults = list_faults(name)
    if fmt is OutputFormat.json:
        emit_json({"faults": faults})
        return
    table = Table("id", "kind", "where", "value", "stands for")
    for f in faults:
        table.add_row(f["id"], f["kind"], f["link"] or f["node"] or "all routers",
                      str(f["value"] or ""), f["stands_for"])
    out_console.print(table if faults else "no faults")


def _print_status(doc: dict[str, Any]) -> None:
    routing = doc["routing"] + (f" ({doc['bgp']})" if doc.get("bgp") else "")
    out_console.print(
        f"[bold]lab {doc['name']}[/bold]  fabric {doc['fabric']}  phase {doc['phase']}  "
        f"routing {routing}  hash {doc['hash']['policy']} seed {doc['hash']['seed']}"
    )
    kept = doc["kept"]
    out_console.print(
        f"kept: {kept['switches']} switches, {kept['middleboxes']} middleboxes, "
        f"{kept['servers']}/{kept['servers_total']} servers, {kept['links']} links "
        f"({kept['rule']})"
    )
    for note in doc["notes"]:
        out_console.print(f"note: {note}")
    if "bgp_sessions" in doc:
        s = doc["bgp_sessions"]
        out_console.print(f"BGP sessions: {s['established']}/{s['total']} established"
                          + (f"; down: {', '.join(s['down'][:6])}" if s["down"] else ""))
    short = doc.get("routes_short") or {}
    conv = "converged" if doc.get("converged") and not short else (
        f"{len(short)} routers short of their ECMP width" if short else "not converged")
    timings = doc.get("timings", {})
    out_console.print(f"routes: {conv}" + (f"  (up in {timings['up_s']:.1f} s)"
                                            if "up_s" in timings else ""))
    table = Table("node", "role", "addresses", title=None)
    for n in doc["nodes"]:
        table.add_row(n["name"], n["role"], " ".join(n["addresses"]))
    out_console.print(table)
    if doc["faults"]:
        out_console.print("faults: " + "; ".join(
            f"{f['id']} {f['kind']} on {f['link'] or f['node'] or 'all routers'}"
            for f in doc["faults"]))


@lab_app.command("capture")
def capture(
    name: NameArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="bundle directory to write")],
    traffic: Annotated[bool, typer.Option(help="run a short pairwise iperf3 load first")] = True,
    duration: Annotated[float, typer.Option(help="seconds of traffic")] = 3.0,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Capture evidence with ordinary tools (ip -s link, tc -s qdisc, iptables-save, sysctl,
    FRR bgp summary, ping -M do, iperf3 JSON) into DIR/<node>/ for `aifabric diagnose DIR`."""
    require_tools(frr=False)
    t0 = time.monotonic()
    doc = capture_lab(name, output, traffic=traffic, duration_s=duration, progress=_say(t0))
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        out_console.print(f"captured {doc['files']} files from {doc['nodes']} nodes into "
                          f"{doc['bundle']}; next: aifabric diagnose {doc['bundle']}")
