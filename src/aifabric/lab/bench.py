"""The built-in collective benchmark (:mod:`aifabric.bench.collective`) across a running lab's
servers, or across ranks on this machine's loopback.

Lab: one worker process per server, started inside the server's namespace
(``ip netns exec NS python -m aifabric.bench.worker ...``), each listening on the server's
first address (the one the lab routes by its NIC) on the same port; rank ``i`` is the ``i``-th
server in plan order (fabric-file order: leaf by leaf), so the ring runs srv01 → srv02 → ... →
back to srv01 and crosses the spines wherever consecutive servers sit under different leaves.
Rank 0 writes its nccl-tests text to stdout and its exact values to a JSON file under
``<lab dir>/bench/``; both are read back and the files removed. Processes are watched by PID:
when one rank fails the others are killed (by PID, ``ip netns exec`` execs the worker in
place), and whatever happens, no rank outlives :func:`run_lab_bench` (``finally``).

The run's :class:`~aifabric.bench.model.BenchRun` (tool ``builtin``) carries the lab's context
in ``env``: ``AIFABRIC_LAB`` (name), ``AIFABRIC_LAB_RATE_SCALE`` (links shaped to speed /
scale, when shaped) and ``AIFABRIC_LAB_FAULTS`` (the faults active during the run, ``id kind
place value``), so a run with a fault stays told apart from a healthy one in the store.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aifabric.bench.collective import (
    COLLECTIVES,
    CollectiveResult,
    result_from_dict,
    to_bench_run,
)
from aifabric.bench.model import BenchRun
from aifabric.errors import EnvironmentProblem, InputError
from aifabric.lab.netns import kill_pids
from aifabric.lab.plan import LabPlan
from aifabric.lab.state import lab_dir, load_state, require_tools

__all__ = [
    "DEFAULT_PORT",
    "LabBench",
    "lab_bench_argv",
    "run_lab_bench",
    "run_loopback_bench",
    "run_ranks",
]

DEFAULT_PORT = 29500
"""Port every rank listens on (each in its own namespace, on its own address)."""

Progress = Callable[[str], None]


def _noop(_: str) -> None:
    return None


@dataclass(frozen=True)
class LabBench:
    """One built-in benchmark run: rank 0's nccl-tests text, the exact result, the run as
    the store keeps it, and the commands that were started (one per rank)."""

    text: str
    result: CollectiveResult
    run: BenchRun
    argv: tuple[tuple[str, ...], ...]


def _worker_args(
    rank: int,
    world: int,
    master: str,
    listen: str,
    name: str,
    *,
    collective: str,
    sizes: Sequence[int],
    warmup: int,
    iters: int,
    in_place: bool,
    timeout_s: float,
) -> list[str]:
    args = [
        sys.executable,
        "-m",
        "aifabric.bench.worker",
        "--rank",
        str(rank),
        "--world",
        str(world),
        "--master",
        master,
        "--listen",
        listen,
        "--name",
        name,
        "--collective",
        collective,
        "--sizes",
        ",".join(str(s) for s in sizes),
        "--warmup",
        str(warmup),
        "--iters",
        str(iters),
        "--timeout",
        f"{timeout_s:g}",
    ]
    if not in_place:
        args.append("--no-in-place")
    return args


def _servers(plan: LabPlan, chosen: Sequence[str] | None) -> list[tuple[str, str, str]]:
    """(server, namespace, first address) in plan order, or in the order given."""
    known = {
        n.name: n for n in plan.nodes.values() if n.role == "server" and plan.gateways.get(n.name)
    }
    names = list(chosen) if chosen else list(known)
    for s in names:
        if s not in known:
            some = ", ".join(list(known)[:8])
            raise InputError(
                f"--server {s!r}: lab {plan.name!r} has no such server "
                f"(servers: {some}{', ...' if len(known) > 8 else ''})"
            )
    if len(set(names)) != len(names):
        raise InputError(f"servers {names}: a server is listed twice")
    if len(names) < 2:
        raise InputError(f"lab {plan.name!r}: the benchmark needs at least 2 servers")
    return [(s, known[s].ns, plan.gateways[s][0][1].split("/")[0]) for s in names]


def lab_bench_argv(
    plan: LabPlan,
    *,
    collective: str = "all_reduce",
    sizes: Sequence[int],
    warmup: int = 1,
    iters: int = 3,
    in_place: bool = False,
    servers: Sequence[str] | None = None,
    port: int = DEFAULT_PORT,
    timeout_s: float = 60.0,
    json_file: Path | None = None,
) -> list[list[str]]:
    """The command of every rank (rank order), each ``ip netns exec NS python -m
    aifabric.bench.worker ...``; rank 0 also writes ``--json json_file``. Pure."""
    if collective not in COLLECTIVES:
        raise InputError(f"--collective {collective!r}: known are {', '.join(COLLECTIVES)}")
    rows = _servers(plan, servers)
    master = f"{rows[0][2]}:{port}"
    out = []
    for rank, (name, ns, addr) in enumerate(rows):
        argv = [
            "ip",
            "netns",
            "exec",
            ns,
            *_worker_args(
                rank,
                len(rows),
                master,
                f"{addr}:{port}",
                name,
                collective=collective,
                sizes=sizes,
                warmup=warmup,
                iters=iters,
                in_place=in_place,
                timeout_s=timeout_s,
            ),
        ]
        if rank == 0 and json_file is not None:
            argv += ["--json", str(json_file)]
        out.append(argv)
    return out


def run_ranks(
    argvs: Sequence[Sequence[str]],
    workdir: Path,
    *,
    timeout_s: float,
    progress: Progress = _noop,
) -> str:
    """Start every rank's command (rank 0 first), wait for all; rank 0's stdout. Outputs go to
    files in ``workdir`` (no pipe can fill up). A rank that exits with 2 or 3, or a run past
    ``timeout_s``, ends the others (killed by PID) and raises EnvironmentProblem quoting that
    rank's last stderr line; rank 0's exit 1 (wrong values) is not an error here."""
    workdir.mkdir(parents=True, exist_ok=True)
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    outs = [workdir / f"rank{r}-{tag}.out" for r in range(len(argvs))]
    errs = [workdir / f"rank{r}-{tag}.err" for r in range(len(argvs))]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for argv, out, err in zip(argvs, outs, errs, strict=True):
            with out.open("wb") as fo, err.open("wb") as fe:
                procs.append(
                    subprocess.Popen(list(argv), stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)
                )
        progress(f"{len(procs)} ranks started")
        deadline = time.monotonic() + timeout_s
        while True:
            codes = [p.poll() for p in procs]
            bad = next((r for r, c in enumerate(codes) if c not in (None, 0, 1)), None)
            if bad is not None:
                tail = _tail(errs[bad])
                raise EnvironmentProblem(f"benchmark rank {bad} failed (exit {codes[bad]}): {tail}")
            if all(c is not None for c in codes):
                break
            if time.monotonic() > deadline:
                raise EnvironmentProblem(
                    f"benchmark did not finish in {timeout_s:g} s (ranks still running: "
                    f"{[r for r, c in enumerate(codes) if c is None]}); try fewer or smaller "
                    "sizes (--sizes) or fewer iterations"
                )
            time.sleep(0.05)
        return outs[0].read_text(encoding="utf-8", errors="replace")
    finally:
        live = [p.pid for p in procs if p.poll() is None]
        if live:
            kill_pids(live, grace_s=1.0)
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
        for f in (*outs, *errs):
            f.unlink(missing_ok=True)


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else "(no message)"


@contextlib.contextmanager
def _bench_lock(d: Path, lab: str) -> Iterator[None]:
    d.mkdir(parents=True, exist_ok=True)
    with (d / ".lock").open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"lab {lab!r}: another benchmark run is in progress") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _read_result(path: Path) -> CollectiveResult:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return result_from_dict(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EnvironmentProblem(f"rank 0 wrote no usable result ({path}): {exc}") from None
    finally:
        path.unlink(missing_ok=True)


def _fault_text(faults: list[dict[str, Any]]) -> str:
    parts = []
    for f in faults:
        place = f.get("link") or f.get("node") or "-"
        parts.append(f"{f.get('id')} {f.get('kind')} {place} {f.get('value') or ''}".strip())
    return "; ".join(parts)


def run_lab_bench(
    name: str,
    *,
    collective: str = "all_reduce",
    sizes: Sequence[int],
    warmup: int = 1,
    iters: int = 3,
    in_place: bool = False,
    servers: Sequence[str] | None = None,
    port: int = DEFAULT_PORT,
    timeout_s: float = 300.0,
    label: str | None = None,
    cluster: str | None = None,
    progress: Progress = _noop,
) -> LabBench:
    """Run the built-in benchmark across lab ``name``'s servers (all, or ``servers`` in that
    order) and return what rank 0 measured. Needs root (namespaces); InputError for a lab that
    is not up or unknown servers, EnvironmentProblem when a rank fails or times out."""
    require_tools(frr=False, traffic=False)
    state = load_state(name)
    if state.phase != "up":
        raise InputError(f"lab {name!r} is {state.phase}, not up")
    plan = state.plan
    d = lab_dir(name) / "bench"
    with _bench_lock(d, name):
        result_file = d / f"result-{os.getpid()}.json"
        argvs = lab_bench_argv(
            plan,
            collective=collective,
            sizes=sizes,
            warmup=warmup,
            iters=iters,
            in_place=in_place,
            servers=servers,
            port=port,
            timeout_s=min(60.0, timeout_s),
            json_file=result_file,
        )
        progress(
            f"{collective} over {len(argvs)} servers of lab {name}, sizes "
            f"{sizes[0]}..{sizes[-1]} B, {iters} iterations"
        )
        try:
            text = run_ranks(argvs, d, timeout_s=timeout_s, progress=progress)
            result = _read_result(result_file)
        finally:
            result_file.unlink(missing_ok=True)
    env = {"AIFABRIC_LAB": name}
    if plan.rate_scale:
        env["AIFABRIC_LAB_RATE_SCALE"] = f"{plan.rate_scale:g}"
    if state.faults:
        env["AIFABRIC_LAB_FAULTS"] = _fault_text(state.faults)
    run = to_bench_run(result, label=label, cluster=cluster, env=env)
    return LabBench(text, result, run, tuple(tuple(a) for a in argvs))


def run_loopback_bench(
    ranks: int,
    workdir: Path,
    *,
    collective: str = "all_reduce",
    sizes: Sequence[int],
    warmup: int = 1,
    iters: int = 5,
    in_place: bool = True,
    port: int = 0,
    timeout_s: float = 300.0,
    label: str | None = None,
    cluster: str | None = None,
    progress: Progress = _noop,
) -> LabBench:
    """The same benchmark with ``ranks`` processes on 127.0.0.1 (no root, no lab): a smoke
    test of the machine itself, CPU- and memory-bound rather than a network measurement.
    ``port`` 0 picks a free port for rank 0."""
    if collective not in COLLECTIVES:
        raise InputError(f"--collective {collective!r}: known are {', '.join(COLLECTIVES)}")
    if ranks < 2:
        raise InputError(f"--local {ranks}: the benchmark needs at least 2 ranks")
    if port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    result_file = workdir / f"result-{os.getpid()}-{time.monotonic_ns()}.json"
    argvs = []
    for r in range(ranks):
        argv = _worker_args(
            r,
            ranks,
            f"127.0.0.1:{port}",
            "127.0.0.1" if r else f"127.0.0.1:{port}",
            f"rank{r}",
            collective=collective,
            sizes=sizes,
            warmup=warmup,
            iters=iters,
            in_place=in_place,
            timeout_s=min(60.0, timeout_s),
        )
        if r == 0:
            argv += ["--json", str(result_file)]
        argvs.append(argv)
    try:
        text = run_ranks(argvs, workdir, timeout_s=timeout_s, progress=progress)
        result = _read_result(result_file)
    finally:
        result_file.unlink(missing_ok=True)
    run = to_bench_run(result, label=label, cluster=cluster, env={"AIFABRIC_BENCH": "loopback"})
    return LabBench(text, result, run, tuple(tuple(a) for a in argvs))
