"""Command lines for the external benchmarks: nccl-tests under ``mpirun``/``srun`` and
perftest (``ib_write_bw``) pairs in rounds. Pure functions: each returns argv lists (never a
shell string; nothing here runs anything) plus the notes that explain the choices.

nccl-tests (https://github.com/NVIDIA/nccl-tests, README "Arguments"): the seed's rule (S23)
benchmarks every new link with ``all_reduce_perf -b 128M -e 8G -f 2 -g 8``. ``-g`` is GPUs per
*thread* of one process, and the job's ranks are processes × threads × ``-g``; the seed's
``-g 8`` is one process driving a server's 8 GPUs. Under MPI across servers the usual layout is
one process per GPU with ``-g 1`` (``mpirun -np SERVERS·8 ... -g 1``, what ``srun
--gpus-per-task 1`` gives too), which is the default here: the same 8 GPUs per server, the
same sweep (``-b 128M -e 8G -f 2``), one rank per GPU. ``gpus_per_rank=8`` keeps the seed's
literal form (one rank per server). ``-J FILE`` (``--output_file``, nccl-tests 2.17+) writes
the JSON document :mod:`aifabric.evidence.nccl_tests` reads; it is left out when the version
given is older, or when ``json_file=None``.

perftest (https://github.com/linux-rdma/perftest): ``ib_write_bw -d DEV -x GID -F
--report_gbits -a`` on the server, the same plus the server's address on the client. A sweep
over many hosts runs pairs in rounds so that no host is in two pairs at once (two tests on one
NIC would halve each other): all pairs use the round-robin tournament schedule (circle method:
``n-1`` rounds of ``n/2`` pairs for even ``n``, ``n`` rounds with one host idle for odd ``n``);
a ring of pairs (``h[i]``–``h[i+1]``) fits in 2 rounds (3 for an odd ring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from aifabric.model import Fabric
from aifabric.units import parse_bytes

__all__ = [
    "NCCL_TESTS_BINARIES",
    "SEED_SWEEP",
    "Command",
    "PerftestPair",
    "fabric_hosts",
    "nccl_tests_command",
    "pair_rounds",
    "perftest_plan",
]

SEED_SWEEP = ("128M", "8G", 2)
"""S23's sweep: ``-b 128M -e 8G -f 2``."""

JSON_MIN_VERSION = (2, 17)
"""First nccl-tests release with ``-J``/``--output_file`` (JSON)."""

NCCL_TESTS_BINARIES = {
    c: f"{c}_perf"
    for c in (
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "broadcast",
        "reduce",
        "sendrecv",
        "gather",
        "scatter",
        "hypercube",
    )
}
"""Collective name → nccl-tests binary."""

Launcher = Literal["mpirun", "srun", "none"]


@dataclass(frozen=True)
class Command:
    """A command to run: ``argv`` (exec it, never through a shell), the ranks it starts, the
    hosts, and ``notes`` saying why each non-obvious argument is there."""

    argv: tuple[str, ...]
    ranks: int
    hosts: tuple[str, ...]
    notes: tuple[str, ...] = ()
    json_file: str | None = None


@dataclass(frozen=True)
class PerftestPair:
    """One perftest pair: start ``server_argv`` on ``server`` first, then ``client_argv`` on
    ``client`` (it ends with the server's address)."""

    round: int
    server: str
    client: str
    server_argv: tuple[str, ...]
    client_argv: tuple[str, ...]


def fabric_hosts(fabric: Fabric) -> tuple[list[str], int]:
    """The fabric's servers that have GPUs, in file order, and GPUs per server (the largest;
    a mixed fabric runs with the smallest count on every host, see the notes of
    :func:`nccl_tests_command`)."""
    servers = [s for s in fabric.servers if s.gpus > 0]
    if not servers:
        raise ValueError(f"fabric {fabric.name!r} has no server with GPUs")
    counts = {s.gpus for s in servers}
    if len(counts) > 1:
        raise ValueError(
            f"fabric {fabric.name!r}: servers have {sorted(counts)} GPUs; nccl-tests needs the "
            "same ranks on every host: give --hosts and --gpus-per-host"
        )
    return [s.name for s in servers], counts.pop()


def _version(text: str) -> tuple[int, ...] | None:
    parts = []
    for tok in text.strip().lstrip("v").split("."):
        digits = "".join(ch for ch in tok if ch.isdecimal())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) if parts else None


def nccl_tests_command(
    hosts: Sequence[str],
    *,
    gpus_per_host: int = 8,
    collective: str = "all_reduce",
    launcher: Launcher = "mpirun",
    min_bytes: str | int = SEED_SWEEP[0],
    max_bytes: str | int = SEED_SWEEP[1],
    factor: int = SEED_SWEEP[2],
    gpus_per_rank: int = 1,
    iters: int | None = None,
    warmup: int | None = None,
    json_file: str | None = "nccl-tests.json",
    nccl_tests_version: str | None = None,
    env: Mapping[str, str] | None = None,
    binary: str | None = None,
) -> Command:
    """The nccl-tests command for ``hosts`` (see the module docstring).

    ``mpirun`` (OpenMPI): ``-np RANKS -H h1:S,h2:S --map-by ppr:S:node`` with ``S`` ranks per
    host, ``-x NAME=VALUE`` per ``env`` entry (NCCL_* settings reach every rank), then the
    binary. ``srun``: ``--nodes N --ntasks-per-node S --gpus-per-task G --nodelist h1,h2``,
    ``--export=ALL,NAME=VALUE``. ``none``: the binary alone (one host, ``-g`` = its GPUs).
    ``binary`` overrides the program path (``./build/all_reduce_perf``). Raises ValueError
    for impossible combinations."""
    if not hosts:
        raise ValueError("no hosts: give at least one")
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"hosts {list(hosts)}: a host is listed twice")
    if collective not in NCCL_TESTS_BINARIES:
        raise ValueError(f"collective {collective!r}: known are {', '.join(NCCL_TESTS_BINARIES)}")
    if gpus_per_rank < 1 or gpus_per_host < 1 or gpus_per_host % gpus_per_rank:
        raise ValueError(
            f"{gpus_per_host} GPUs per host with -g {gpus_per_rank}: GPUs per host must be a "
            "multiple of GPUs per rank"
        )
    lo = parse_bytes(min_bytes, what="min bytes")
    hi = parse_bytes(max_bytes, what="max bytes")
    if lo > hi or factor < 2:
        raise ValueError(f"sweep {lo}..{hi} x{factor}: need min <= max and factor >= 2")
    notes: list[str] = []
    per_host = gpus_per_host // gpus_per_rank
    g = gpus_per_rank
    if launcher == "none":
        if len(hosts) > 1:
            raise ValueError("launcher none runs on one host; use mpirun or srun for several")
        per_host, g = 1, gpus_per_host
        notes.append(f"one process drives all {g} GPUs (-g {g}), no MPI")
    ranks = per_host * len(hosts)
    prog = binary or NCCL_TESTS_BINARIES[collective]
    args = [prog, "-b", _size(lo), "-e", _size(hi), "-f", str(factor), "-g", str(g)]
    if iters is not None:
        args += ["-n", str(iters)]
    if warmup is not None:
        args += ["-w", str(warmup)]
    if launcher != "none":
        notes.append(
            f"{ranks} ranks = {len(hosts)} hosts x {per_host} processes x -g {g} GPUs each "
            f"(the seed's -g 8 drives 8 GPUs from one process; one rank per GPU with -g 1 is "
            "the multi-node layout)"
        )
    used_json: str | None = None
    if json_file is not None:
        ver = _version(nccl_tests_version) if nccl_tests_version else None
        if ver is not None and ver[:2] < JSON_MIN_VERSION:
            notes.append(f"no -J: nccl-tests {nccl_tests_version} predates 2.17 (JSON output)")
        else:
            args += ["-J", json_file]
            used_json = json_file
            if ver is None:
                notes.append("-J needs nccl-tests 2.17+; turn it off for older builds")
    environ = dict(env or {})
    argv: list[str]
    if launcher == "mpirun":
        argv = [
            "mpirun",
            "-np",
            str(ranks),
            "-H",
            ",".join(f"{h}:{per_host}" for h in hosts),
            "--map-by",
            f"ppr:{per_host}:node",
        ]
        for k, v in environ.items():
            argv += ["-x", f"{k}={v}"]
    elif launcher == "srun":
        argv = [
            "srun",
            "--nodes",
            str(len(hosts)),
            "--ntasks-per-node",
            str(per_host),
            "--gpus-per-task",
            str(g),
            "--nodelist",
            ",".join(hosts),
        ]
        if environ:
            argv.append("--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in environ.items())]))
    else:
        argv = []
        if environ:
            argv = ["env", *(f"{k}={v}" for k, v in environ.items())]
    return Command(tuple(argv + args), ranks, tuple(hosts), tuple(notes), used_json)


def _size(n: int) -> str:
    """Bytes as nccl-tests takes them: ``128M``, ``8G``, or plain bytes."""
    for unit, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


# --------------------------------------------------------------------------------------------
# perftest pairs


def pair_rounds(
    hosts: Sequence[str], mode: Literal["all", "ring"] = "all"
) -> list[list[tuple[str, str]]]:
    """Pairs of ``hosts`` grouped in rounds, no host twice in a round.

    ``all``: every unordered pair once, by the circle method (host 0 fixed, the others rotate;
    a bye for odd counts), ``n-1`` rounds for even ``n``, ``n`` for odd. ``ring``: ``(h[i],
    h[i+1 mod n])`` for each ``i`` (one pair for two hosts), placed greedily in the first
    round where both hosts are free."""
    hs = list(hosts)
    if len(set(hs)) != len(hs):
        raise ValueError(f"hosts {hs}: a host is listed twice")
    n = len(hs)
    if n < 2:
        return []
    if mode == "ring":
        pairs = [(hs[i], hs[(i + 1) % n]) for i in range(n if n > 2 else 1)]
        rounds: list[list[tuple[str, str]]] = []
        busy: list[set[str]] = []
        for a, b in pairs:
            for k, used in enumerate(busy):
                if a not in used and b not in used:
                    rounds[k].append((a, b))
                    used |= {a, b}
                    break
            else:
                rounds.append([(a, b)])
                busy.append({a, b})
        return rounds
    slots: list[str | None] = [*hs, None] if n % 2 else list(hs)
    m = len(slots)
    out: list[list[tuple[str, str]]] = []
    for _ in range(m - 1):
        rnd: list[tuple[str, str]] = []
        for i in range(m // 2):
            x, y = slots[i], slots[m - 1 - i]
            if x is not None and y is not None:
                rnd.append((x, y))
        out.append(rnd)
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return out


def perftest_plan(
    hosts: Sequence[str],
    *,
    device: str,
    gid_index: int | None = None,
    mode: Literal["all", "ring"] = "all",
    tool: str = "ib_write_bw",
    port: int = 18515,
    addresses: Mapping[str, str] | None = None,
    extra: Sequence[str] = (),
) -> list[PerftestPair]:
    """The perftest sweep over ``hosts``: one :class:`PerftestPair` per pair of
    :func:`pair_rounds`, in round order. The first host of a pair serves, the second is the
    client. ``device`` the RDMA device (``-d mlx5_0``); ``gid_index`` the RoCE GID (``-x``,
    left out for InfiniBand); ``addresses`` maps a host to the address the client dials
    (default the host name); ``-F`` skips the CPU-frequency check, ``--report_gbits`` reports
    Gb/s, ``-a`` sweeps message sizes 2 B .. 8 MiB."""
    if not device:
        raise ValueError("perftest needs the RDMA device (-d), e.g. mlx5_0")
    base = [tool, "-d", device]
    if gid_index is not None:
        base += ["-x", str(gid_index)]
    base += ["-F", "--report_gbits", "-a", "-p", str(port), *extra]
    addr = dict(addresses or {})
    out: list[PerftestPair] = []
    for k, rnd in enumerate(pair_rounds(hosts, mode)):
        for server, client in rnd:
            out.append(
                PerftestPair(
                    round=k,
                    server=server,
                    client=client,
                    server_argv=tuple(base),
                    client_argv=(*base, addr.get(server, server)),
                )
            )
    return out
