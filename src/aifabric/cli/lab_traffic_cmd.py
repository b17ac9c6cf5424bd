"""``aifabric lab traffic`` and ``aifabric lab compare``: iperf3 patterns through a running lab
with per-link counters, and the seed's case study (S17) as two labs side by side.

The functions are plain typer commands; ``lab_cmd`` registers them on ``lab_app``. Progress
and the live view (a bar for the run and the busiest links, refreshed every second) go to
stderr when it is a terminal; stdout carries the table or the one JSON document."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.live import Live

from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    get_catalog,
    out_console,
)
from aifabric.design import load_fabric
from aifabric.lab.compare import compare_labs, compare_table
from aifabric.lab.state import require_tools
from aifabric.lab.traffic import TrafficSample, run_traffic, sample_view, traffic_table

__all__ = ["compare", "traffic"]


class PatternOpt(StrEnum):
    pairwise = "pairwise"
    incast = "incast"
    ring = "ring"
    cross_site = "cross-site"


def _say(t0: float) -> Callable[[str], None]:
    def progress(message: str) -> None:
        err_console.print(f"[dim]{time.monotonic() - t0:6.2f} s[/dim]  {message}",
                          highlight=False)
    return progress


@contextmanager
def _live() -> Iterator[Callable[[TrafficSample], None] | None]:
    """A live view on stderr while traffic runs, only when stderr is a terminal."""
    if not err_console.is_terminal:
        yield None
        return
    with Live(console=err_console, refresh_per_second=4, transient=True) as live:
        def update(sample: TrafficSample) -> None:
            live.update(sample_view(sample))
        yield update


def traffic(
    name: Annotated[str, typer.Argument(help="lab name", show_default=False)],
    pattern: Annotated[PatternOpt, typer.Option(
        help="pairwise (i -> i+n/2), incast (all -> first), ring (i -> i+1), cross-site "
             "(first site -> second)")] = PatternOpt.pairwise,
    duration: Annotated[int, typer.Option(help="seconds of traffic (iperf3 -t)")] = 5,
    parallel: Annotated[int, typer.Option("--parallel", "-P",
                                          help="TCP streams per flow (iperf3 -P)")] = 1,
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", help="SRC:DST server names (repeatable); replaces --pattern",
        show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", help="write each flow's iperf3 JSON here as <src>-<dst>.iperf3.json "
                       "(for aifabric diagnose)", show_default=False)] = None,
    omit: Annotated[int, typer.Option(
        help="seconds left out at the start (iperf3 -O: slow start, a throttle's burst)")] = 0,
    port_base: Annotated[int, typer.Option(help="first iperf3 port (one per flow)")] = 5201,
    dscp: Annotated[int | None, typer.Option(help="DSCP the clients mark (iperf3 --dscp)",
                                             show_default=False)] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Run an iperf3 pattern between the lab's servers and show what every link carried
    (router interface counters before, during and after). Exit 1 when a flow failed."""
    require_tools(frr=False)
    t0 = time.monotonic()
    with _live() as on_sample:
        result = run_traffic(
            name, pattern.value, duration_s=duration, parallel=parallel, pairs=pair or None,
            port_base=port_base, dscp=dscp, omit_s=omit, save_dir=save, progress=_say(t0),
            on_sample=on_sample,
        )
    if fmt is OutputFormat.json:
        emit_json(result)
    else:
        out_console.print(traffic_table(result))
    if result["summary"]["flows_failed"]:
        raise typer.Exit(1)


def compare(
    before: Annotated[Path, typer.Argument(help="fabric file before (e.g. "
                                                "examples/s17-case-study-before.yaml)",
                                           show_default=False)],
    after: Annotated[Path, typer.Argument(help="fabric file after", show_default=False)],
    name: Annotated[str, typer.Option(
        "--name", help="base name: labs NAME-before and NAME-after")] = "cmp",
    rate_scale: Annotated[float, typer.Option(
        help="shape every link to speed / SCALE (and the firewall's per-session limit)")] =
        1000.0,
    duration: Annotated[int, typer.Option(help="seconds of traffic per lab")] = 4,
    parallel: Annotated[int, typer.Option("--parallel", "-P",
                                          help="TCP streams per flow")] = 2,
    omit: Annotated[int, typer.Option(help="seconds left out at the start (iperf3 -O)")] = 1,
    servers_per_leaf: Annotated[int, typer.Option(help="servers kept per leaf")] = 2,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Bring both fabrics up side by side, run the same cross-site traffic through each, tear
    both down, and explain the gain (per-session limit x sessions vs the bottleneck link)."""
    require_tools(frr=True)
    cat = get_catalog(catalog)
    fb, fa = load_fabric(before, cat), load_fabric(after, cat)
    t0 = time.monotonic()
    with _live() as on_sample:
        result = compare_labs(
            fb, fa, name=name, rate_scale=rate_scale, duration_s=duration, parallel=parallel,
            omit_s=omit, servers_per_leaf=servers_per_leaf, progress=_say(t0),
            on_sample=on_sample,
        )
    if fmt is OutputFormat.json:
        emit_json(result)
    else:
        out_console.print(compare_table(result))
    failed = sum(result[s]["traffic"]["summary"]["flows_failed"] for s in ("before", "after"))
    if failed:
        raise typer.Exit(1)
