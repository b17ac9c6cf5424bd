"""``aifabric probe HOST... | --lab NAME | --local [--name N] -o DIR``: collect evidence from
hosts into a bundle directory (JSON keys ``hosts`` (list of ``{host, ok, error}``) and
``bundle``).

``aifabric probe --merge BUNDLE... [--expect FILE] -o OUT [--tar]``: merge per-host bundles or
archives into one (:mod:`aifabric.probe.merge`; JSON keys ``hosts`` (rows with ``status`` ok or
missing), ``bundle``, ``missing``, ``duplicates``, ``warnings``; exit 1 when an expected host
is missing). ``aifabric probe --template slurm|slurm-array|daemonset [-o FILE]``: print a job
that runs ``--local`` on every node and merges (:mod:`aifabric.probe.templates`)."""

from __future__ import annotations

import asyncio
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from aifabric.cli.common import FormatOpt, OutputFormat, emit_json, err_console, out_console
from aifabric.errors import InputError
from aifabric.lab.state import load_state, require_tools
from aifabric.probe.fanout import parse_targets, read_hosts_file
from aifabric.probe.merge import MergeResult, merge_bundles, read_expect
from aifabric.probe.runner import LocalRunner, Runner
from aifabric.probe.sweep import Peer, SweepResult, lab_runners, sweep
from aifabric.probe.templates import TEMPLATES, TemplateOptions, render_template

__all__ = ["probe"]


def probe(
    hosts: Annotated[list[str] | None, typer.Argument(
        help="hosts to probe over SSH (user@host:port)", show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="bundle directory to write (default ./bundle; --merge: ./merged;"
        " --template: the file to write, default stdout)", show_default=False)] = None,
    lab: Annotated[str | None, typer.Option(
        "--lab", help="probe every node of this lab (in its namespace)",
        show_default=False)] = None,
    local: Annotated[bool, typer.Option("--local", help="probe this machine")] = False,
    name: Annotated[str | None, typer.Option(
        "--name", help="with --local: the host folder name (default: the short hostname)",
        show_default=False)] = None,
    merge: Annotated[bool, typer.Option(
        "--merge", help="merge the bundles or .tar.gz archives given as arguments into -o OUT"
    )] = False,
    expect: Annotated[Path | None, typer.Option(
        "--expect", help="with --merge: hosts file of the hosts that must be there; each one "
        "without a folder is a missing row (exit 1)", show_default=False)] = None,
    template: Annotated[str | None, typer.Option(
        "--template", help=f"print a job to probe every node: {', '.join(TEMPLATES)}",
        show_default=False)] = None,
    nodes: Annotated[int, typer.Option(
        help="--template slurm: nodes of the allocation; slurm-array: array tasks")] = 2,
    shared_dir: Annotated[str | None, typer.Option(
        "--shared-dir", help="--template: Slurm, a directory every node mounts (default "
        "$HOME/aifabric-probe); daemonset, the hostPath (default /var/lib/aifabric-probe)",
        show_default=False)] = None,
    partition: Annotated[str | None, typer.Option(
        help="--template slurm*: partition", show_default=False)] = None,
    time_limit: Annotated[str, typer.Option(
        "--time-limit", help="--template slurm*: job time limit")] = "00:30:00",
    aifabric_cmd: Annotated[str, typer.Option(
        "--aifabric", help="--template: the aifabric command on the nodes / in the image"
    )] = "aifabric",
    image: Annotated[str, typer.Option(help="--template daemonset: container image")] =
        "aifabric:latest",
    namespace: Annotated[str, typer.Option(help="--template daemonset: namespace")] = "default",
    job_name: Annotated[str, typer.Option(
        "--job-name", help="--template: Slurm job / DaemonSet name")] = "aifabric-probe",
    pvc: Annotated[str | None, typer.Option(
        help="--template daemonset: write to this ReadWriteMany PVC instead of a hostPath",
        show_default=False)] = None,
    node_selector: Annotated[list[str] | None, typer.Option(
        "--node-selector", help="--template daemonset: KEY=VALUE node label (repeatable)",
        show_default=False)] = None,
    probe_arg: Annotated[list[str] | None, typer.Option(
        "--probe-arg", help="--template: extra argument for the per-node probe, e.g. "
        "--probe-arg=--timeout --probe-arg=600 (repeatable; --peer and --mtu given with "
        "--template are passed on too)", show_default=False)] = None,
    run_id: Annotated[str | None, typer.Option(
        "--run-id", help="--template daemonset: output subfolder (default: UTC time)",
        show_default=False)] = None,
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
    concurrency: Annotated[int, typer.Option(
        help="targets probed at once; --template slurm-array: tasks running at once")] = 16,
    timeout: Annotated[float, typer.Option(help="seconds per target")] = 300.0,
    tarball: Annotated[bool, typer.Option(
        "--tar", help="also write DIR.tar.gz (with --merge: OUT.tar.gz)")] = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Collect NIC, PCIe, RDMA, optics, qdisc, sysctl, module and NCCL state, and the path MTU
    and RTT to peers, into DIR/<host>/ for `aifabric diagnose DIR` and `verify --bundle DIR`;
    merge per-host bundles (--merge); print a Slurm or Kubernetes job for every node
    (--template)."""
    if template is not None:
        if merge or local or lab or hosts or hosts_file or expect or name:
            raise InputError("--template: give no hosts, --local, --lab, --merge, --expect "
                             "or --name with it")
        opts = TemplateOptions(
            shared_dir=shared_dir, nodes=nodes, throttle=concurrency, partition=partition,
            time_limit=time_limit, aifabric=aifabric_cmd, image=image, namespace=namespace,
            name=job_name, pvc=pvc, node_selector=tuple(node_selector or ()),
            probe_args=(*[a for p in peer or [] for a in ("--peer", p)],
                        *(("--mtu", str(mtu)) if mtu != 9000 else ()), *(probe_arg or ())),
            run_id=run_id or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
        text = render_template(template, opts, "aifabric " + shlex.join(sys.argv[1:]))
        if output is None:
            sys.stdout.write(text)
        else:
            try:
                output.write_text(text, encoding="utf-8")
                if template.startswith("slurm"):
                    output.chmod(0o755)
            except OSError as exc:
                raise InputError(f"{output}: cannot write: {exc.strerror or exc}") from None
            err_console.print(f"wrote {output}")
        return
    if merge:
        if local or lab or hosts_file or name:
            raise InputError("--merge: the arguments are bundles; no --local, --lab, "
                             "--hosts-file or --name")
        _merge(hosts or [], output or Path("merged"), expect, tarball, fmt)
        return
    if expect is not None:
        raise InputError("--expect goes with --merge")
    if name is not None and not local:
        raise InputError("--name goes with --local")
    output = output or Path("bundle")
    targets: dict[str, tuple[Runner | None, list[Peer]]]
    connect = None
    peers = [Peer(p, mtu, p) for p in (peer or [])]
    if lab is not None:
        require_tools(frr=False, traffic=False)
        targets = lab_runners(load_state(lab).plan)
    elif local:
        targets = {name or _short_hostname(): (LocalRunner(), peers)}
    elif hosts or hosts_file:
        specs = [t.spec for t in parse_targets(hosts or [])]
        if hosts_file is not None:
            specs += [t.spec for t in read_hosts_file(hosts_file)]
        targets = {spec: (None, peers) for spec in dict.fromkeys(specs)}
        from aifabric.probe.ssh import ssh_connector  # noqa: PLC0415 - asyncssh only when probing

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


def _short_hostname() -> str:
    """This machine's name up to the first dot (``hostname -s``); ``localhost`` if empty."""
    return socket.gethostname().split(".")[0] or "localhost"


def _merge(inputs: list[str], out: Path, expect: Path | None, tarball: bool,
           fmt: OutputFormat) -> None:
    """``--merge``: rows, missing, duplicates; exit 1 when an expected host is missing."""
    expected = read_expect(expect) if expect is not None else None
    with Progress(TextColumn("merging"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console,
                  transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task("", total=len(inputs))

        def tick(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, description=label)

        result = merge_bundles([Path(p) for p in inputs], out, expected, tarball=tarball,
                               progress=tick)
    _report_merge(result, fmt)
    if result.missing:
        raise typer.Exit(1)


def _report_merge(result: MergeResult, fmt: OutputFormat) -> None:
    if fmt is OutputFormat.json:
        emit_json(result.to_json())
        return
    ok = sum(1 for h in result.hosts if h["status"] == "ok")
    for host in result.missing:
        out_console.print(f"MISSING {host}: no folder in any input", markup=False)
    for d in result.duplicates:
        out_console.print(f"duplicate {d['host']}: kept {d['kept']}, dropped {d['dropped']}",
                          markup=False)
    for w in result.warnings:
        if not w.startswith(tuple(d["host"] + ":" for d in result.duplicates)):
            err_console.print(f"warning: {w}", markup=False, highlight=False)
    tar = f", archive {result.tarball}" if result.tarball else ""
    out_console.print(f"merged {ok} hosts from {len(result.inputs)} inputs, "
                      f"{len(result.missing)} missing, {len(result.duplicates)} duplicates "
                      f"({result.seconds:.1f} s)", markup=False)
    out_console.print(f"bundle: {result.bundle}{tar}; next: aifabric diagnose {result.bundle}",
                      markup=False)


def _document(result: SweepResult) -> dict[str, Any]:
    return {
        "hosts": [{"host": o.host, "ok": o.ok, "error": o.error} for o in result.outcomes],
        "bundle": str(result.bundle),
        "tarball": str(result.tarball) if result.tarball else None,
        "seconds": round(result.seconds, 2),
        "mtu": result.mtu,
    }
