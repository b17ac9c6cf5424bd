"""``aifabric monitor ...``: the Prometheus integration (issue 21, S22).

* ``monitor exporter [--listen 127.0.0.1:9877] [--lab NAME | --node NAME] [--interface GLOB]...
  [--sysfs-root DIR] [--no-rdma] [--optics/--no-optics] [--nccl-log GLOB]... [--sonic SPEC]
  [--allow RE]... [--deny RE]... [--max-series N] [--web-config FILE] [--catalogue FILE]
  [--once]``: serve ``/metrics`` (``--once``: print one scrape on stdout and exit, for a cron
  textfile or a look at what would be published).
* ``monitor rules -o FILE [--tests FILE] [--window 5m] [--for DUR] [--lossless-priority N]...
  [--docs-url URL]``: alert and recording rules (and their promtool unit tests).
* ``monitor dashboard -o FILE``: the Grafana dashboard.
* ``monitor catalogue [-F json]``: the metrics, their sources and whether they are on.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aifabric.cli.common import FormatOpt, OutputFormat, emit_json, err_console, out_console
from aifabric.errors import InputError
from aifabric.monitor.catalogue import Catalogue, Selection, load_catalogue
from aifabric.monitor.sources import (
    Collector,
    ModuleCollector,
    NcclLogCollector,
    NetCollector,
    RdmaSysfsCollector,
    Target,
)

monitor_app = typer.Typer(
    name="monitor",
    help="Prometheus integration: exporter, alert rules, Grafana dashboard (S22).",
    no_args_is_help=True,
)

CatalogueOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalogue", help="metric catalogue YAML (default: the packaged one)", show_default=False
    ),
]


def _selection(catalogue: Catalogue, allow: list[str] | None, deny: list[str] | None) -> Catalogue:
    sel = Selection(tuple(allow or ()), tuple(deny or ()))
    unused = sel.check(m.name for m in catalogue.metrics)
    for pattern in unused:
        err_console.print(f"warning: --allow/--deny {pattern!r} matches no metric", highlight=False)
    return catalogue.selected(sel)


def _lab_targets(name: str, interfaces: tuple[str, ...]) -> list[Target]:
    from aifabric.lab.state import load_state  # noqa: PLC0415 - lab only when asked for

    state = load_state(name)
    return [Target(node.name, node.ns, interfaces) for node in state.plan.nodes.values()]


def build_collectors(
    *,
    lab: str | None,
    node: str | None,
    interfaces: tuple[str, ...],
    sysfs_root: Path,
    rdma: bool,
    optics: bool,
    optics_interval: float,
    nccl_logs: list[str],
    sonic: str | None,
) -> list[Collector]:
    """The collectors an ``exporter`` invocation asks for."""
    me = node or socket.gethostname()
    collectors: list[Collector] = []
    if lab is not None:
        collectors.append(NetCollector(_lab_targets(lab, interfaces)))
    else:
        net = NetCollector([Target(me, None, interfaces)])
        collectors.append(net)
        if rdma:
            collectors.append(RdmaSysfsCollector(me, sysfs_root))
        if optics:
            names = _local_interfaces(interfaces)
            mod = ModuleCollector(me, names, interval_s=optics_interval)
            mod.start()
            collectors.append(mod)
    if nccl_logs:
        collectors.append(NcclLogCollector(me, nccl_logs))
    if sonic is not None:
        collectors.append(_sonic_collector(me, sonic))
    return collectors


def _local_interfaces(interfaces: tuple[str, ...]) -> list[str]:
    """Physical interfaces of this host (those with a ``device`` link in sysfs) that match."""
    target = Target("", None, interfaces)
    root = Path("/sys/class/net")
    if not root.is_dir():
        return []
    return [
        p.name for p in sorted(root.iterdir()) if (p / "device").exists() and target.wants(p.name)
    ]


def _sonic_collector(node: str, spec: str) -> Collector:
    from aifabric.monitor.sonic import SonicCollector  # noqa: PLC0415

    return SonicCollector.from_spec(node, spec)


@monitor_app.command("exporter")
def exporter_cmd(
    listen: Annotated[str, typer.Option(help="HOST:PORT to serve /metrics on")] = "127.0.0.1:9877",
    lab: Annotated[
        str | None,
        typer.Option(
            help="collect from every node of this lab (its "
            "network namespaces), node label = lab node name",
            show_default=False,
        ),
    ] = None,
    node: Annotated[
        str | None, typer.Option(help="node label (default: the host name)", show_default=False)
    ] = None,
    interface: Annotated[
        list[str] | None,
        typer.Option(
            "--interface",
            help="interface name glob to include (repeatable; default: all but lo)",
            show_default=False,
        ),
    ] = None,
    sysfs_root: Annotated[Path, typer.Option(help="RDMA sysfs class directory")] = Path(
        "/sys/class/infiniband"
    ),
    rdma: Annotated[bool, typer.Option(help="RDMA port counters from sysfs")] = True,
    optics: Annotated[bool, typer.Option(help="optics DOM by ethtool -m (background)")] = True,
    optics_interval: Annotated[float, typer.Option(help="seconds between DOM reads")] = 60.0,
    nccl_log: Annotated[
        list[str] | None,
        typer.Option(
            "--nccl-log", help="NCCL/PyTorch log file glob to tail (repeatable)", show_default=False
        ),
    ] = None,
    sonic: Annotated[
        str | None,
        typer.Option(
            help="SONiC counters: db | db:NAMESPACE | json:FILE | cli | cli-dir:DIR",
            show_default=False,
        ),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            "--allow",
            help="metric name regex to publish even if off by default (repeatable)",
            show_default=False,
        ),
    ] = None,
    deny: Annotated[
        list[str] | None,
        typer.Option(
            "--deny", help="metric name regex never to publish (repeatable)", show_default=False
        ),
    ] = None,
    max_series: Annotated[int, typer.Option(help="most series one scrape may return")] = 200_000,
    web_config: Annotated[
        Path | None,
        typer.Option(
            help="TLS / basic auth file (Prometheus exporter-toolkit format)", show_default=False
        ),
    ] = None,
    catalogue: CatalogueOpt = None,
    once: Annotated[bool, typer.Option(help="print one scrape on stdout and exit")] = False,
) -> None:
    """Serve RoCE/InfiniBand health metrics for Prometheus: PFC pause frames and duration,
    drops, ECN/CNP, retransmissions, PHY errors, link flaps, optics DOM, qdisc drops, NCCL log
    events (S22)."""
    from aifabric.monitor.exporter import (  # noqa: PLC0415
        Exporter,
        load_web_config,
        parse_listen,
        serve,
    )

    if lab is not None and node is not None:
        raise InputError("--lab names every node itself: give --lab or --node, not both")
    if max_series < 1:
        raise InputError("--max-series must be at least 1")
    host, port = parse_listen(listen)
    web = load_web_config(web_config) if web_config is not None else None
    cat = _selection(load_catalogue(catalogue), allow, deny)
    collectors = build_collectors(
        lab=lab,
        node=node,
        interfaces=tuple(interface or ()),
        sysfs_root=sysfs_root,
        rdma=rdma,
        optics=optics and not once,
        optics_interval=optics_interval,
        nccl_logs=list(nccl_log or ()),
        sonic=sonic,
    )
    exporter = Exporter(cat, collectors, max_series=max_series)
    try:
        if once:
            sys.stdout.write(exporter.scrape().decode())
            sys.stdout.flush()
            for source, error in exporter.last_errors.items():
                err_console.print(f"warning: source {source}: {error}", highlight=False)
            return
        server = serve(exporter, host, port, web)
        scheme = "https" if web is not None and web.cert_file is not None else "http"
        err_console.print(
            f"aifabric exporter on {scheme}://{listen}/metrics "
            f"({len(cat.metrics)} metrics, sources: {', '.join(c.name for c in collectors)})",
            highlight=False,
        )
        stop = threading.Event()

        def on_signal(_sig: int, _frame: Any) -> None:
            stop.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
    finally:
        exporter.close()


@monitor_app.command("catalogue")
def catalogue_cmd(
    catalogue: CatalogueOpt = None,
    allow: Annotated[list[str] | None, typer.Option("--allow", show_default=False)] = None,
    deny: Annotated[list[str] | None, typer.Option("--deny", show_default=False)] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List the metrics: name, type, unit, labels, sources, seed references, on or off."""
    cat = load_catalogue(catalogue)
    sel = Selection(tuple(allow or ()), tuple(deny or ()))
    rows = [
        {
            "name": m.name,
            "type": m.type,
            "unit": m.unit,
            "group": m.group,
            "labels": m.labels,
            "sources": sorted(m.sources),
            "seed": m.seed,
            "enabled": sel.enabled(m),
            "help": m.help,
        }
        for m in cat.metrics
    ]
    if fmt is OutputFormat.json:
        emit_json({"metrics": rows})
        return
    table = Table(title=f"aifabric metrics ({cat.path})")
    for col in ("metric", "type", "labels", "sources", "seed", "on"):
        table.add_column(col)
    for m in cat.metrics:
        table.add_row(
            m.name,
            m.type,
            ",".join(m.labels),
            ",".join(sorted(m.sources)),
            ",".join(m.seed),
            "yes" if sel.enabled(m) else "no",
        )
    out_console.print(table)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None


@monitor_app.command("rules")
def rules_cmd(
    output: Annotated[Path, typer.Option("-o", "--output", help="rule file to write")],
    tests: Annotated[
        Path | None,
        typer.Option(
            help="also write promtool unit tests (promtool test rules FILE)", show_default=False
        ),
    ] = None,
    window: Annotated[str, typer.Option(help="rate window of the rules")] = "5m",
    for_: Annotated[
        str | None,
        typer.Option("--for", help="override every alert's for: duration", show_default=False),
    ] = None,
    lossless_priority: Annotated[
        list[int] | None,
        typer.Option(
            "--lossless-priority", help="lossless (PFC) priorities; default 3", show_default=False
        ),
    ] = None,
    docs_url: Annotated[
        str | None,
        typer.Option(help="base URL of the aifabric docs for runbook links", show_default=False),
    ] = None,
    catalogue: CatalogueOpt = None,
) -> None:
    """Write Prometheus alert and recording rules for PFC, ECN/CNP, drops, retransmissions,
    optics, link flaps and NCCL timeouts (S20.3, S20.5, S22)."""
    from aifabric.monitor import rules  # noqa: PLC0415

    lossless = tuple(lossless_priority or (3,))
    if any(not 0 <= p <= 7 for p in lossless):
        raise InputError("--lossless-priority takes priorities 0..7")
    cat = load_catalogue(catalogue)
    kwargs: dict[str, Any] = {"window": window, "for_": for_, "lossless": lossless}
    if docs_url is not None:
        kwargs["docs_url"] = docs_url
    built = rules.build_rules(cat, **kwargs)
    test_doc = None
    if tests is not None:  # built first: an option the tests do not fit writes nothing
        rel = os.path.relpath(output.resolve(), tests.resolve().parent)
        test_doc = rules.build_rule_tests(cat, rules_file=rel, **kwargs)
    _write(output, rules.dump_yaml(built))
    n = sum(len(g["rules"]) for g in built["groups"])
    msg = f"wrote {n} rules to {output}"
    if tests is not None and test_doc is not None:
        _write(tests, rules.dump_yaml(test_doc))
        msg += f"; promtool tests to {tests}"
    err_console.print(msg, highlight=False)


@monitor_app.command("dashboard")
def dashboard_cmd(
    output: Annotated[Path, typer.Option("-o", "--output", help="dashboard JSON to write")],
    title: Annotated[str, typer.Option(help="dashboard title")] = "aifabric: RoCE fabric health",
    lossless_priority: Annotated[
        list[int] | None, typer.Option("--lossless-priority", show_default=False)
    ] = None,
    catalogue: CatalogueOpt = None,
) -> None:
    """Write a Grafana dashboard (JSON, importable) built from the metric catalogue."""
    from aifabric.monitor import dashboard  # noqa: PLC0415

    cat = load_catalogue(catalogue)
    doc = dashboard.build_dashboard(cat, title=title, lossless=tuple(lossless_priority or (3,)))
    _write(output, json.dumps(doc, indent=2) + "\n")
    err_console.print(f"wrote the dashboard to {output}", highlight=False)
