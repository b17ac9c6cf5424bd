"""``aifabric bench run``: run the built-in collective benchmark (across a lab's servers or
ranks on this machine's loopback) and keep the result, or print the command lines of
nccl-tests, perftest pairs or the built-in workers for real hosts.

``bench_run`` is a plain typer command; the ``bench`` group registers it. Modes:

* ``--lab NAME``: :func:`aifabric.lab.bench.run_lab_bench` (root; one rank per lab server);
* ``--local N``: N ranks on 127.0.0.1 (a smoke test of this machine, no network measured);
* ``--print-command nccl-tests|perftest|builtin`` with ``--hosts h1,h2`` or ``--fabric FILE``:
  the commands (:mod:`aifabric.bench.runners`), one argv per line, shell-quoted for copying;
  nothing runs.

A run prints rank 0's nccl-tests text on stdout (``--format json``: one document with ``run``,
``stored_id``, ``text``) and is stored (``--db``; ``--no-store`` to skip) as a tool
``builtin`` run. Exit 1 when values came back wrong (``#wrong`` > 0).
"""

from __future__ import annotations

import shlex
import tempfile
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aifabric.bench.model import BenchRun
from aifabric.bench.runners import fabric_hosts, nccl_tests_command, perftest_plan
from aifabric.cli.common import (
    CatalogOpt,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    get_catalog,
)
from aifabric.design import load_fabric
from aifabric.errors import InputError

if TYPE_CHECKING:
    from aifabric.lab.bench import LabBench

__all__ = ["bench_run"]

LAB_SIZES = "1M:8M"
"""Default sweep in a lab: its links are shaped to speed / rate-scale (100G → 100 Mb/s at
1000), where 256 MiB would take minutes per iteration."""
LOCAL_SIZES = "1M:256M"


class PrintOpt(StrEnum):
    nccl_tests = "nccl-tests"
    perftest = "perftest"
    builtin = "builtin"


class LauncherOpt(StrEnum):
    mpirun = "mpirun"
    srun = "srun"
    none = "none"


class PairsOpt(StrEnum):
    all = "all"
    ring = "ring"


def _hosts(
    hosts: list[str] | None, fabric: Path | None, catalog: CatalogOpt, gpus: int | None
) -> tuple[list[str], int]:
    names = [h.strip() for item in hosts or [] for h in item.split(",") if h.strip()]
    if names:
        return names, gpus or 8
    if fabric is None:
        raise InputError("--print-command needs the hosts: --hosts h1,h2,... or --fabric FILE")
    try:
        found, per = fabric_hosts(load_fabric(fabric, get_catalog(catalog)))
    except ValueError as exc:
        raise InputError(f"--fabric {fabric}: {exc}") from None
    return found, gpus or per


def _env(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--env {item!r}: expected NAME=VALUE (e.g. NCCL_IB_HCA=mlx5_0)")
        out[key] = value
    return out


def _print_commands(
    what: PrintOpt,
    hosts: list[str],
    gpus: int,
    *,
    collective: str,
    launcher: LauncherOpt,
    json_file: str | None,
    version: str | None,
    env: dict[str, str],
    device: str | None,
    gid: int | None,
    pairs: PairsOpt,
    sizes: str | None,
    iters: int | None,
    fmt: OutputFormat,
) -> None:
    from aifabric.bench.worker import parse_sizes  # noqa: PLC0415 (numpy on use)
    from aifabric.lab.bench import DEFAULT_PORT  # noqa: PLC0415

    commands: list[dict[str, Any]] = []
    try:
        if what is PrintOpt.nccl_tests:
            lo, hi = ("128M", "8G")
            if sizes:
                got = parse_sizes(sizes)
                lo, hi = str(got[0]), str(got[-1])
            cmd = nccl_tests_command(
                hosts,
                gpus_per_host=gpus,
                collective=collective,
                launcher=launcher.value,
                min_bytes=lo,
                max_bytes=hi,
                iters=iters,
                json_file=json_file,
                nccl_tests_version=version,
                env=env,
            )
            commands.append({"host": None, "argv": list(cmd.argv), "notes": list(cmd.notes)})
        elif what is PrintOpt.perftest:
            for p in perftest_plan(hosts, device=device or "", gid_index=gid, mode=pairs.value):
                commands.append({"round": p.round, "host": p.server, "argv": list(p.server_argv)})
                commands.append({"round": p.round, "host": p.client, "argv": list(p.client_argv)})
        else:
            if len(hosts) < 2:
                raise ValueError("the built-in benchmark needs at least 2 hosts")
            master = f"{hosts[0]}:{DEFAULT_PORT}"
            for r, h in enumerate(hosts):
                argv = [
                    "python3",
                    "-m",
                    "aifabric.bench.worker",
                    "--rank",
                    str(r),
                    "--world",
                    str(len(hosts)),
                    "--master",
                    master,
                    "--listen",
                    f"{h}:{DEFAULT_PORT}" if r == 0 else h,
                    "--name",
                    h,
                    "--collective",
                    collective,
                    "--sizes",
                    sizes or LOCAL_SIZES,
                ]
                if iters is not None:
                    argv += ["--iters", str(iters)]
                commands.append({"host": h, "argv": argv})
    except ValueError as exc:
        raise InputError(f"--print-command {what.value}: {exc}") from None
    if fmt is OutputFormat.json:
        emit_json({"commands": commands})
        return
    for c in commands:
        prefix = (
            f"# round {c['round']} on {c['host']}\n"
            if "round" in c
            else (f"# on {c['host']}\n" if c.get("host") else "")
        )
        for note in c.get("notes", []):
            prefix += f"# {note}\n"
        typer.echo(prefix + shlex.join(c["argv"]))


def _run_json(run: BenchRun) -> dict[str, Any]:
    return {
        "collective": run.collective,
        "tool": run.tool,
        "hosts": list(run.hosts),
        "ranks": run.ranks,
        "started": run.started.isoformat(),
        "label": run.label,
        "cluster": run.cluster,
        "env": run.env,
        "avg_busbw_gbps": run.avg_busbw_gbps,
        "rows": [
            {
                "size_bytes": r.size_bytes,
                "count": r.count,
                "in_place": r.in_place,
                "time_us": r.time_us,
                "algbw_gbps": r.algbw_gbps,
                "busbw_gbps": r.busbw_gbps,
                "wrong": r.wrong,
            }
            for r in run.rows
        ],
    }


def bench_run(
    lab: Annotated[
        str | None,
        typer.Option("--lab", help="run across this lab's servers (root)", show_default=False),
    ] = None,
    local: Annotated[
        int | None,
        typer.Option(
            "--local",
            help="run N ranks on 127.0.0.1 (a smoke test of this machine)",
            show_default=False,
        ),
    ] = None,
    hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--hosts", help="hosts for --print-command (comma list, repeatable)", show_default=False
        ),
    ] = None,
    fabric: Annotated[
        Path | None,
        typer.Option(
            "--fabric",
            help="take the hosts (servers with GPUs) from this fabric file",
            show_default=False,
        ),
    ] = None,
    collective: Annotated[
        str,
        typer.Option(
            "--collective",
            help="all_reduce, all_gather or sendrecv (nccl-tests: any of its collectives)",
        ),
    ] = "all_reduce",
    sizes: Annotated[
        str | None,
        typer.Option(
            "--sizes",
            help=f"MIN:MAX (doubling), SIZE or a comma list; default {LAB_SIZES} in a "
            f"lab, {LOCAL_SIZES} otherwise, the seed's 128M:8G for nccl-tests",
            show_default=False,
        ),
    ] = None,
    iters: Annotated[
        int | None,
        typer.Option(
            "--iters",
            min=1,
            help="timed iterations per size (default 3 in a lab, 5 otherwise)",
            show_default=False,
        ),
    ] = None,
    warmup: Annotated[int, typer.Option("--warmup", min=0, help="untimed iterations")] = 1,
    in_place: Annotated[
        bool | None,
        typer.Option(
            "--in-place/--no-in-place",
            help="measure in-place too (default: not in a lab)",
            show_default=False,
        ),
    ] = None,
    servers: Annotated[
        list[str] | None,
        typer.Option(
            "--server",
            help="lab servers to use, in ring order (repeatable; default all)",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds for the whole run")] = 600.0,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="database (file path or URL; default $AIFABRIC_DB, else "
            "~/.local/share/aifabric/bench.db)",
            show_default=False,
        ),
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="do not store the run")] = False,
    label: Annotated[
        str | None, typer.Option("--label", help="a note kept with the run", show_default=False)
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", help="cluster name the run belongs to", show_default=False),
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save",
            help="also write rank 0's nccl-tests text here (for bench import/compare)",
            show_default=False,
        ),
    ] = None,
    print_command: Annotated[
        PrintOpt | None,
        typer.Option(
            "--print-command",
            help="print the nccl-tests, perftest or built-in commands for "
            "--hosts/--fabric instead of running",
            show_default=False,
        ),
    ] = None,
    launcher: Annotated[
        LauncherOpt, typer.Option("--launcher", help="nccl-tests launcher")
    ] = LauncherOpt.mpirun,
    gpus_per_host: Annotated[
        int | None,
        typer.Option(
            "--gpus-per-host",
            min=1,
            help="nccl-tests ranks per host (default: the fabric's GPUs per server, else 8)",
            show_default=False,
        ),
    ] = None,
    no_json: Annotated[
        bool, typer.Option("--no-json", help="nccl-tests: leave out -J (builds before 2.17)")
    ] = False,
    nccl_tests_version: Annotated[
        str | None,
        typer.Option(
            "--nccl-tests-version",
            help="nccl-tests version of the build (decides -J)",
            show_default=False,
        ),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            help="NAME=VALUE passed to every nccl-tests rank (repeatable)",
            show_default=False,
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option("--device", help="perftest RDMA device (-d), e.g. mlx5_0", show_default=False),
    ] = None,
    gid_index: Annotated[
        int | None,
        typer.Option("--gid-index", help="perftest RoCE GID index (-x)", show_default=False),
    ] = None,
    pairs: Annotated[
        PairsOpt, typer.Option("--pairs", help="perftest: all pairs or a ring of pairs")
    ] = PairsOpt.all,
    catalog: CatalogOpt = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Run the built-in collective benchmark (--lab NAME or --local N) and store the result,
    or print nccl-tests / perftest / built-in commands for real hosts (--print-command)."""
    from aifabric.bench.collective import COLLECTIVES  # noqa: PLC0415 (numpy on use)
    from aifabric.bench.store import opened  # noqa: PLC0415 (SQLAlchemy on use)
    from aifabric.bench.worker import parse_sizes  # noqa: PLC0415
    from aifabric.lab.bench import run_lab_bench, run_loopback_bench  # noqa: PLC0415

    if print_command is not None:
        names, gpus = _hosts(hosts, fabric, catalog, gpus_per_host)
        _print_commands(
            print_command,
            names,
            gpus,
            collective=collective,
            launcher=launcher,
            json_file=None if no_json else "nccl-tests.json",
            version=nccl_tests_version,
            env=_env(env),
            device=device,
            gid=gid_index,
            pairs=pairs,
            sizes=sizes,
            iters=iters,
            fmt=fmt,
        )
        return
    if (lab is None) == (local is None):
        raise InputError(
            "bench run: give one of --lab NAME or --local N (or --print-command "
            "with --hosts/--fabric for real hosts)"
        )
    if collective not in COLLECTIVES:
        raise InputError(
            f"--collective {collective!r}: the built-in benchmark runs {', '.join(COLLECTIVES)}"
        )
    try:
        size_list = parse_sizes(sizes or (LAB_SIZES if lab else LOCAL_SIZES))
    except ValueError as exc:
        raise InputError(f"--sizes: {exc}") from None
    t0 = time.monotonic()

    def say(message: str) -> None:
        err_console.print(f"[dim]{time.monotonic() - t0:6.2f} s[/dim]  {message}", highlight=False)

    got: LabBench
    if lab is not None:
        got = run_lab_bench(
            lab,
            collective=collective,
            sizes=size_list,
            warmup=warmup,
            iters=iters or 3,
            in_place=bool(in_place),
            servers=servers or None,
            timeout_s=timeout,
            label=label,
            cluster=cluster,
            progress=say,
        )
    else:
        with tempfile.TemporaryDirectory(prefix="aifabric-bench-") as tmp:
            got = run_loopback_bench(
                local or 0,
                Path(tmp),
                collective=collective,
                sizes=size_list,
                warmup=warmup,
                iters=iters or 5,
                in_place=True if in_place is None else in_place,
                timeout_s=timeout,
                label=label,
                cluster=cluster,
                progress=say,
            )
    if save is not None:
        save.write_text(got.text, encoding="utf-8")
    stored: int | None = None
    if not no_store:
        with opened(db) as store:
            stored = store.add_run(got.run)
            say(f"stored as run #{stored} in {store.url}")
    if fmt is OutputFormat.json:
        emit_json({"run": _run_json(got.run), "stored_id": stored, "text": got.text})
    else:
        typer.echo(got.text, nl=False)
    if got.result.wrong:
        raise typer.Exit(1)
