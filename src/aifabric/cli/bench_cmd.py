"""``aifabric bench ...``: keep nccl-tests shaped results, compare each run with its history and
with the estimate, log changes and report before/after them (issue 20, S23).

Commands: ``bench import FILE... [--db URL] [--label] [--cluster] [--fabric FABRIC] [--pair
A,B]``, ``bench compare FILE... [--db URL] [--last N] [--fabric FABRIC] [--plot out.svg]
[--pair A,B]`` (JSON keys
``findings``, ``summary``, ``rows``; exit 1 on a regression), ``bench history [--collective]
[--size] [--plot trend.svg]`` (JSON keys ``runs``, ``changes``), ``bench mark-change TEXT``
(JSON key ``change``) and ``bench report CHANGE_ID|--change TEXT`` (before/after; JSON keys
``change``, ``findings``, ``summary``, ``rows``; exit 1 when the change made a size worse).
``--db`` takes a file path or URL; without it ``$AIFABRIC_DB``, else the SQLite file
``~/.local/share/aifabric/bench.db`` (:mod:`aifabric.bench.store`).

FILE is nccl-tests output, the built-in benchmark's, or perftest's (``ib_write_bw`` & co.),
told apart by the evidence registry's detection (:func:`aifabric.bench.importer.read_results`).
A perftest run's host pair is ``--pair A,B``, else its file name: ``ib_write_bw-A-B.txt`` or
``A--B.txt`` (:func:`aifabric.bench.importer.pair_from_name`); ``bench compare`` over the files
of a pairwise sweep names the bad host (``bench.outlier-host``, exit 1).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from aifabric.bench.before_after import before_after
from aifabric.bench.compare import (
    Comparison,
    Thresholds,
    compare_run,
    expectation_for,
    outlier_hosts,
    platform_for_run,
    run_rows,
)
from aifabric.bench.importer import read_results
from aifabric.bench.model import BenchRun, Change
from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    findings_table,
    get_catalog,
    out_console,
    summary_line,
)
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.findings import Finding, exit_code_for, summarize
from aifabric.inputs import read_input
from aifabric.units import format_bytes, parse_bytes

if TYPE_CHECKING:
    from aifabric.bench.store import Store

__all__ = ["bench_app"]

bench_app = typer.Typer(
    name="bench",
    help="Keep benchmark results (nccl-tests and the built-in benchmark), compare every run "
    "with its history and the estimate, log changes (S23).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="database: a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB "
        "(default $AIFABRIC_DB, else ~/.local/share/aifabric/bench.db)",
        show_default=False,
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option("--cluster", help="cluster name the runs belong to", show_default=False),
]
CollectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--collective",
        help="collective of nccl-tests output that does not name it (all_reduce, ...)",
        show_default=False,
    ),
]
PairOpt = Annotated[
    str | None,
    typer.Option(
        "--pair",
        help="the two hosts of a pairwise test, A,B (default for perftest: from the file name "
        "TOOL-A-B.txt or A--B.txt)",
        show_default=False,
    ),
]
LastOpt = Annotated[
    int, typer.Option("--last", min=1, max=1000, help="newest comparable runs in the baseline")
]


def _fabric_hash(path: Path) -> str:
    """First 16 hex digits of the fabric file's SHA-256: which design a run was measured on."""
    return hashlib.sha256(read_input(path, "fabric")).hexdigest()[:16]


def _pair(text: str | None) -> tuple[str, str] | None:
    """``--pair A,B`` → (A, B); :class:`InputError` unless two different non-empty names."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise InputError(f"--pair {text!r}: expected two different host names, A,B")
    return parts[0], parts[1]


def _peak(run: BenchRun) -> tuple[int, float] | None:
    rows = run_rows(run)
    if not rows:
        return None
    size = max(rows)
    return size, rows[size].busbw_gbps


@bench_app.command("import")
def import_cmd(
    files: Annotated[
        list[Path], typer.Argument(help="nccl-tests output (text or -J JSON) or perftest output")
    ],
    db: DbOpt = None,
    label: Annotated[str | None, typer.Option("--label", help="a note kept with the runs")] = None,
    cluster: ClusterOpt = None,
    fabric: Annotated[
        Path | None, typer.Option("--fabric", help="fabric file the runs were measured on")
    ] = None,
    pair: PairOpt = None,
    collective: CollectiveOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Store every test of every FILE as a run (one per test in a file)."""
    fh = _fabric_hash(fabric) if fabric is not None else None
    hosts = _pair(pair)
    runs: list[BenchRun] = []
    warnings: list[str] = []
    for f in files:
        got = read_results(f, pair=hosts, label=label, cluster=cluster, fabric_hash=fh,
                           collective=collective)
        runs.extend(got.runs)
        warnings.extend(f"{f}: {w}" for w in got.warnings)
    for w in warnings:
        err_console.print(f"warning: {w}", markup=False)
    if not runs:
        raise InputError(
            f"{', '.join(map(str, files))}: no benchmark result rows to import (aborted runs?)"
        )
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)

    with opened(db) as store:
        ids = store.add_runs(runs)
        where = store.url
    items: list[dict[str, Any]] = []
    for run_id, run in zip(ids, runs, strict=True):
        peak = _peak(run)
        items.append(
            {
                "id": run_id,
                "source": run.source,
                "collective": run.collective,
                "tool": run.tool,
                "ranks": run.ranks,
                "cluster": run.cluster,
                "pair": list(run.pair) if run.pair is not None else None,
                "sizes": len(run_rows(run)),
                "max_size_bytes": peak[0] if peak else None,
                "busbw_gbps_at_max": round(peak[1], 3) if peak else None,
            }
        )
    if fmt == OutputFormat.json:
        emit_json({"database": where, "imported": items, "warnings": warnings})
        return
    for it in items:
        at = (
            f"{it['busbw_gbps_at_max']} GB/s at {format_bytes(int(it['max_size_bytes']))}"
            if it["max_size_bytes"] is not None
            else "no rows"
        )
        out_console.print(
            f"#{it['id']} {it['collective']} {it['ranks'] or '?'} ranks: {it['sizes']} sizes, "
            f"{at} ({it['source']})",
            markup=False,
        )
    err_console.print(f"{len(items)} run(s) stored in {where}", markup=False)


def _history_for(store: Store, run: BenchRun, last: int) -> list[BenchRun]:
    """Candidates for :func:`~aifabric.bench.compare.select_history`: the newest runs of the
    collective (and cluster), several times ``last`` so that filtering leaves enough."""
    return store.runs(cluster=run.cluster, collective=run.collective, limit=max(10 * last, 100))


@bench_app.command("compare")
def compare_cmd(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="nccl-tests or perftest output of the run to judge (several: a pairwise sweep)"
        ),
    ],
    db: DbOpt = None,
    last: LastOpt = 10,
    cluster: ClusterOpt = None,
    fabric: Annotated[
        Path | None,
        typer.Option("--fabric", help="fabric file: the estimator's expected busbw per size"),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="write busbw vs size with the band (.svg/.png)")
    ] = None,
    k: Annotated[float, typer.Option("--k", min=0.0, help="band half-width in robust sigma")] = 3.0,
    min_effect: Annotated[
        float, typer.Option("--min-effect", min=0.0, max=1.0, help="minimum relative drop")
    ] = 0.05,
    pair: PairOpt = None,
    collective: CollectiveOpt = None,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Judge FILE per message size against the median/MAD band of the last N comparable runs
    and the estimate; find the bad host of a pairwise sweep. Exit 1 on a regression. The run is
    not stored: bench import it when it is healthy. Several FILEs (the pairs of a sweep, each
    with --pair or named TOOL-A-B.txt) are judged each and then together."""
    hosts = _pair(pair)
    runs: list[BenchRun] = []
    for file in files:
        got = read_results(file, pair=hosts, cluster=cluster, collective=collective)
        for w in got.warnings:
            err_console.print(f"warning: {file}: {w}", markup=False)
        runs.extend(got.runs)
    if not runs:
        names = ", ".join(map(str, files))
        raise InputError(f"{names}: no benchmark result rows to compare (aborted run?)")
    t = Thresholds(k=k, min_effect=min_effect, last=last)
    fab = load_fabric(fabric, get_catalog(catalog)) if fabric is not None else None
    cat = get_catalog(catalog) if fab is not None else None
    comparisons: list[Comparison] = []
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)

    with opened(db) as store:
        for run in runs:
            exp = None
            if fab is not None and cat is not None:
                p = platform_for_run(fab, cat, run)
                exp = expectation_for(p, run.collective, [r.size_bytes for r in run.rows])
            comparisons.append(
                compare_run(run, _history_for(store, run, last), expectation=exp, thresholds=t)
            )
    findings: list[Finding] = [f for c in comparisons for f in c.findings]
    findings.extend(outlier_hosts(runs, thresholds=t))
    if plot is not None:
        for i, c in enumerate(comparisons):
            out = plot if i == 0 else plot.with_name(f"{plot.stem}-{i + 1}{plot.suffix}")
            from aifabric.bench.plots import plot_comparison  # noqa: PLC0415 (matplotlib on use)

            plot_comparison(c, out)
    if fmt == OutputFormat.json:
        rows: list[dict[str, Any]] = []
        for i, c in enumerate(comparisons):
            rows.extend({"run": i, **r.to_json()} for r in c.rows)
        emit_json(
            {
                "findings": [f.model_dump(mode="json") for f in findings],
                "summary": summarize(findings).model_dump(),
                "rows": rows,
                "runs": [
                    {k2: v for k2, v in c.to_json().items() if k2 not in ("findings", "rows")}
                    for c in comparisons
                ],
            }
        )
    else:
        for c in comparisons:
            out_console.print(_rows_table(c))
        if findings:
            out_console.print(findings_table(findings))
        out_console.print(summary_line(summarize(findings)), markup=False)
    raise typer.Exit(exit_code_for(findings))


def _rows_table(c: Comparison) -> Table:
    run = c.run
    table = Table(
        title=f"{run.collective} ({run.tool}), {run.ranks or '?'} ranks, "
        f"{len(c.history)} runs of history",
        title_justify="left",
    )
    for col in ("size", "busbw GB/s", "median", "band", "expected", "verdict"):
        table.add_column(col, justify="left" if col in ("size", "verdict", "band") else "right")
    for r in c.rows:
        b = r.busbw_band
        table.add_row(
            format_bytes(r.size_bytes),
            f"{r.busbw_gbps:.2f}",
            f"{b.median:.2f}" if b else "-",
            f"{b.low:.2f}..{b.high:.2f}" if b else "-",
            f"{r.expected_busbw:.2f}" if r.expected_busbw is not None else "-",
            r.verdict + (" (time)" if r.judged_on == "time_us" and r.verdict == "slower" else ""),
        )
    return table


def _change_json(c: Change) -> dict[str, Any]:
    return {"id": c.id, "text": c.text, "at": c.at.isoformat(), "cluster": c.cluster}


@bench_app.command("history")
def history_cmd(
    db: DbOpt = None,
    collective: Annotated[
        str | None, typer.Option("--collective", help="e.g. all_reduce (as stored)")
    ] = None,
    size: Annotated[
        str | None, typer.Option("--size", help="message size to show, e.g. 8G (default: largest)")
    ] = None,
    cluster: ClusterOpt = None,
    last: Annotated[int, typer.Option("--last", min=1, help="newest runs shown")] = 50,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="trend of busbw at --size over time, changes marked"),
    ] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """The stored runs, newest first, with the busbw at one size, and the change log."""
    size_bytes = parse_bytes(size, what="--size") if size is not None else None
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)

    with opened(db) as store:
        runs = store.runs(cluster=cluster, collective=collective, limit=last)
        changes = store.changes(cluster)
    items = []
    for run in runs:
        rows = run_rows(run)
        s = size_bytes if size_bytes is not None else (max(rows) if rows else None)
        row = rows.get(s) if s is not None else None
        items.append(
            {
                "id": run.id,
                "started": run.started.isoformat(),
                "collective": run.collective,
                "tool": run.tool,
                "cluster": run.cluster,
                "ranks": run.ranks,
                "label": run.label,
                "change_id": run.change_id,
                "source": run.source,
                "size_bytes": s if row is not None else None,
                "busbw_gbps": round(row.busbw_gbps, 3) if row is not None else None,
                "avg_busbw_gbps": run.avg_busbw_gbps,
            }
        )
    if plot is not None:
        _plot_history(runs, changes, plot, collective, size_bytes)
    if fmt == OutputFormat.json:
        emit_json({"runs": items, "changes": [_change_json(c) for c in changes]})
        return
    table = Table(title=f"{len(items)} run(s), newest first", title_justify="left")
    for col in ("id", "started (UTC)", "collective", "ranks", "cluster", "label", "change",
                "size", "busbw GB/s"):  # fmt: skip
        table.add_column(col)
    for it in items:
        table.add_row(
            str(it["id"]),
            str(it["started"])[:19],
            str(it["collective"]),
            str(it["ranks"] or "-"),
            str(it["cluster"] or "-"),
            str(it["label"] or "-"),
            f"#{it['change_id']}" if it["change_id"] is not None else "-",
            format_bytes(int(it["size_bytes"])) if it["size_bytes"] is not None else "-",
            f"{it['busbw_gbps']:.2f}" if it["busbw_gbps"] is not None else "-",
        )
    out_console.print(table)
    for c in changes:
        out_console.print(f"change #{c.id} {c.at:%Y-%m-%d %H:%M} {c.text}", markup=False)


def _plot_history(
    runs: list[BenchRun],
    changes: list[Change],
    plot: Path,
    collective: str | None,
    size_bytes: int | None,
) -> None:
    kinds = sorted({r.collective for r in runs})
    if len(kinds) > 1:
        raise InputError(f"--plot: the runs hold {', '.join(kinds)}; give --collective to pick one")
    if size_bytes is None:
        newest = run_rows(runs[0]) if runs else {}
        size_bytes = max(newest) if newest else None
    points: list[tuple[datetime, float]] = []
    for run in runs:
        row = run_rows(run).get(size_bytes) if size_bytes is not None else None
        if row is not None:
            points.append((run.started, row.busbw_gbps))
    name = collective or (kinds[0] if kinds else "runs")
    at = f" at {format_bytes(size_bytes)}" if size_bytes is not None else ""
    from aifabric.bench.plots import plot_trend  # noqa: PLC0415 (matplotlib on use)

    plot_trend(points, changes, plot, title=f"{name} busbw{at}")


@bench_app.command("mark-change")
def mark_change_cmd(
    text: Annotated[str, typer.Argument(help='what changed, e.g. "PFC on queue 3 only"')],
    db: DbOpt = None,
    cluster: ClusterOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Record a change in the change log; runs imported later carry its id."""
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)

    with opened(db) as store:
        change = store.mark_change(text, cluster)
    if fmt == OutputFormat.json:
        emit_json({"change": _change_json(change)})
        return
    out_console.print(
        f"change #{change.id} recorded at {change.at:%Y-%m-%d %H:%M:%S} UTC: {change.text}",
        markup=False,
    )


def _find_change(changes: list[Change], change_id: int | None, text: str | None) -> Change:
    if change_id is not None:
        for c in changes:
            if c.id == change_id:
                return c
        raise InputError(f"bench report: no change #{change_id} (bench history lists them)")
    if text is None:
        raise InputError("bench report: give a change id or --change TEXT")
    hits = [c for c in changes if c.text == text] or [
        c for c in changes if text.lower() in c.text.lower()
    ]
    if not hits:
        raise InputError(f"bench report: no change matches {text!r} (bench history lists them)")
    return hits[-1]


@bench_app.command("report")
def report_cmd(
    change_id: Annotated[
        int | None, typer.Argument(help="change id (bench history lists them)")
    ] = None,
    change: Annotated[
        str | None, typer.Option("--change", help="the change's text (the newest match)")
    ] = None,
    db: DbOpt = None,
    cluster: ClusterOpt = None,
    last: LastOpt = 10,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Before/after a change: per size, the median of the runs after it against the band of
    the runs before it (up to the next change). Exit 1 when the change made busbw worse."""
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)

    with opened(db) as store:
        changes = store.changes(cluster)
        ch = _find_change(changes, change_id, change)
        later = [c.at for c in changes if c.at > ch.at]
        until = min(later) if later else None
        where = cluster or ch.cluster
        # the newest runs on each side (several groups share the limit)
        runs = store.runs(cluster=where, until=ch.at, limit=20 * last)
        runs += store.runs(cluster=where, since=ch.at, until=until, limit=20 * last)
    rep = before_after(runs, ch, until=until, thresholds=Thresholds(last=last))
    if fmt == OutputFormat.json:
        emit_json(rep.to_json())
    else:
        table = Table(title=f"change #{ch.id}: {ch.text}", title_justify="left")
        for col in ("group", "size", "on", "before", "after", "delta", "verdict"):
            table.add_column(col)
        for r in rep.rows:
            table.add_row(
                r.group,
                format_bytes(r.size_bytes),
                r.judged_on,
                f"{r.before_median:.4g} ({r.before_n})" if r.before_median is not None else "-",
                f"{r.after_median:.4g} ({r.after_n})" if r.after_median is not None else "-",
                f"{r.delta:+.1%}" if r.delta is not None else "-",
                r.verdict,
            )
        out_console.print(table)
        if rep.findings:
            out_console.print(findings_table(rep.findings))
        out_console.print(summary_line(rep.summary), markup=False)
    raise typer.Exit(exit_code_for(rep.findings))
