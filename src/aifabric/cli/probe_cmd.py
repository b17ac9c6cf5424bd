"""``aifabric probe HOST... | --lab NAME | --local -o DIR``: collect evidence from hosts into a
bundle directory (JSON keys ``hosts`` (list of ``{host, ok, error}``) and ``bundle``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from aifabric.cli.common import FormatOpt, OutputFormat, emit_json, err_console, out_console
from aifabric.errors import InputError
from aifabric.lab.state import load_state, require_tools
from aifabric.probe.fanout import parse_targets, read_hosts_file
from aifabric.probe.runner import LocalRunner, Runner
from aifabric.probe.ssh import ssh_connector
from aifabric.probe.sweep import Peer, SweepResult, lab_runners, sweep

__all__ = ["probe"]


def probe(
    hosts: Annotated[list[str] | None, typer.Argument(
        help="hosts to probe over SSH (user@host:port)", show_default=False)] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="bundle directory to write")] =
        Path("bundle"),
    lab: Annotated[str | None, typer.Option(
        "--lab", help="probe every node of this lab (in its namespace)",
        show_default=False)] = None,
    local: Annotated[bool, typer.Option("--local", help="probe this machine")] = False,
    peer: Annotated[list[str] | None, typer.Option(
        "--peer", help="address to probe (path MTU with DF, RTT series); repeatable",
        show_default=False)] = None,
    mtu: Annotated[int, typer.Option(help="local MTU the path-MTU probe starts from")] = 9000,
    hosts_file: Annotated[Path | None, typer.Option(
        "--hosts-file", help="file of [user@]host[:port], one per line",
        show_default=False)] = None,
    user: Annotated[str | None, typer.Option(help="SSH user (default: yours)",
                                             show_default=False)] = None,
    identity: Annotated[list[str] | None, typer.Option(
        "--identity", "-i", help="SSH private key file (repeatable)", show_default=False)] = None,
    known_hosts: Annotated[str | None, typer.Option(
        help="known_hosts file (default ~/.ssh/known_hosts); host keys are always checked",
        show_default=False)] = None,
    insecure: Annotated[bool, typer.Option(
        "--insecure-no-host-key-check", help="do not check host keys (lab use only)")] = False,
    concurrency: Annotated[int, typer.Option(help="targets probed at once")] = 16,
    timeout: Annotated[float, typer.Option(help="seconds per target")] = 300.0,
    tarball: Annotated[bool, typer.Option("--tar", help="also write DIR.tar.gz")] = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Collect NIC, PCIe, RDMA, optics, qdisc, sysctl, module and NCCL state, and the path MTU
    and RTT to peers, into DIR/<host>/ for `aifabric diagnose DIR` and `verify --bundle DIR`."""
    targets: dict[str, tuple[Runner | None, list[Peer]]]
    connect = None
    peers = [Peer(p, mtu, p) for p in (peer or [])]
    if lab is not None:
        require_tools(frr=False, traffic=False)
        targets = lab_runners(load_state(lab).plan)
    elif local:
        targets = {"localhost": (LocalRunner(), peers)}
    elif hosts or hosts_file:
        specs = [t.spec for t in parse_targets(hosts or [])]
        if hosts_file is not None:
            specs += [t.spec for t in read_hosts_file(hosts_file)]
        targets = {spec: (None, peers) for spec in dict.fromkeys(specs)}
        connect = ssh_connector(user=user, known_hosts=known_hosts, client_keys=identity,
                                insecure_no_host_key_check=insecure)
    else:
        raise InputError("nothing to probe: give --lab NAME, --local, hosts or --hosts-file")
    if concurrency < 1:
        raise InputError(f"--concurrency {concurrency}: expected at least 1")

    with Progress(TextColumn("probing"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console,
                  transient=True,
                  disable=not err_console.is_terminal) as bar:
        task = bar.add_task("", total=len(targets))

        def tick(done: int, total: int, host: str, ok: bool) -> None:
            bar.update(task, completed=done, description=f"{host} {'ok' if ok else 'failed'}")

        result = asyncio.run(sweep(targets, output, connect=connect, concurrency=concurrency,
                                   timeout_s=timeout, tarball=tarball, progress=tick))
    doc = _document(result)
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        for h in doc["hosts"]:
            out_console.print(f"{'ok    ' if h['ok'] else 'FAILED'} {h['host']}"
                              + (f": {h['error']}" if h["error"] else ""))
        for m in doc["mtu"]:
            if m["path_mtu"] != m["local_mtu"]:
                out_console.print(f"path MTU {m['host']} -> {m['peer_label']} ({m['peer']}): "
                                  f"{m['path_mtu']} (local {m['local_mtu']})")
        out_console.print(f"bundle: {doc['bundle']} ({doc['seconds']:.1f} s); next: "
                          f"aifabric diagnose {doc['bundle']}")
    if not all(h["ok"] for h in doc["hosts"]):
        raise typer.Exit(1)


def _document(result: SweepResult) -> dict[str, Any]:
    return {
        "hosts": [{"host": o.host, "ok": o.ok, "error": o.error} for o in result.outcomes],
        "bundle": str(result.bundle),
        "tarball": str(result.tarball) if result.tarball else None,
        "seconds": round(result.seconds, 2),
        "mtu": result.mtu,
    }
