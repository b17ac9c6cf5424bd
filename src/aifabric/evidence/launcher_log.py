"""The death of a rank as its launcher or the kernel reported it in a job's output.

A peer's RDMA retries exceeded, a socket closed by the remote peer or a watchdog timeout may be a
fabric fault, or only the consequence of a rank that died first (S20 row 1). The launchers and the
kernel say which in the same output; each such report becomes a :class:`ProcessExit` with the
``reason`` the failure chain needs (``oom``, ``killed``, ``crash`` cause a failure; ``abort``,
``terminated``, ``exit`` usually follow one). Formats read, all from real captures:

* torchrun's ``failed (exitcode: -9) local_rank: ..`` and its ``Root Cause (first observed
  failure)`` summary block;
* Open MPI / PRRTE ``mpirun noticed that process rank N ... exited on signal 9`` (wrapped over two
  lines near 80 columns too) and ``Process name:`` / ``Exit code:`` under ``mpirun detected that
  one or more processes exited with non-zero status``;
* out of memory: PyTorch ``CUDA out of memory``, the kernel's ``Out of memory: Killed process
  N``, Slurm ``oom-kill`` events;
* Slurm ``srun: error: host: task N: Killed`` / ``Out Of Memory`` / ``Exited with exit code``;
  MPICH/Hydra ``BAD TERMINATION`` blocks; DeepSpeed ``exits with return code = -9``.

Sources: Linux signal(7) numbers; PyTorch torch/distributed/elastic (torchrun's failure summary)
at https://github.com/pytorch/pytorch; Open MPI, Slurm, MPICH and DeepSpeed output as captured
under tests/fixtures/evidence/nccl-log/ and tests/fixtures/diagnose/peer-exit-*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aifabric.evidence.nccl_log_base import TORCH_RANK_RE, NcclProblem, ProblemFields, opt_int

__all__ = ["ProcessExit", "may_be_exit", "process_exit", "reports_a_death"]


@dataclass(slots=True, kw_only=True)
class ProcessExit(NcclProblem):
    """A rank's process that ended abnormally, as its launcher or the kernel reported it.

    Formats (real captures under tests/fixtures/evidence/nccl-log/ and tests/fixtures/diagnose/
    peer-exit-*): torchrun ``failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: ...``
    and its failure summary block (``host : h`` / ``rank : 0 (local_rank: 0)`` / ``exitcode :
    -9 (pid: 14750)`` under ``Root Cause (first observed failure):``); Open MPI ``mpirun noticed
    that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).``; PyTorch
    ``torch.cuda.OutOfMemoryError: CUDA out of memory`` / ``RuntimeError: CUDA out of memory``;
    the kernel's ``Out of memory: Killed process 1234 (python)``; Slurm ``slurmstepd: error:
    Detected 1 oom-kill event(s) in StepId=...`` / ``... oom_kill event ...`` and ``srun: error:
    node107: task 0: Out Of Memory`` / ``task 1: Killed`` / ``Exited with exit code 1`` (a
    ``Killed`` after the step was aborted or cancelled, or after another task exited, is srun
    tearing down the rest: ``terminated``); MPICH/Hydra ``BAD TERMINATION OF ONE OF YOUR
    APPLICATION PROCESSES`` / ``PID n RUNNING AT host`` / ``EXIT CODE: 9`` / ``EXIT STRING:
    Killed (signal 9)`` (a code above 128 is 128 + the signal); DeepSpeed ``[launch.py:..:
    sigkill_handler] [...] exits with return code = -9``; Open MPI ``Process name:
    [[12167,1],10]`` / ``Exit code: 3`` under ``mpirun detected that one or more processes
    exited with non-zero status``.

    ``reason`` reads the exit the way the failure chain needs it: ``oom`` (GPU or host memory),
    ``killed`` (SIGKILL: the OOM killer, the scheduler or an operator), ``crash`` (SIGSEGV,
    SIGBUS, SIGILL, SIGFPE) are causes a peer's RDMA retries cannot survive; ``abort`` (SIGABRT:
    what PyTorch does to a process after an NCCL error), ``terminated`` (SIGTERM/SIGINT/SIGHUP:
    the launcher tearing down the other ranks) and ``exit`` (a non-zero exit code) usually
    follow a failure rather than cause it.
    """

    reason: str
    exit_code: int | None = None
    """As reported: torchrun gives ``-N`` for a process killed by signal N."""
    signal: int | None = None
    signal_name: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    first_failure: bool = False
    """torchrun listed it under ``Root Cause (first observed failure)``, or mpirun named it as
    the first process that died."""


_TORCHRUN_FAILED_RE = re.compile(
    r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<lr>\d+) \(pid: (?P<pid>\d+)\)"
)
_SUMMARY_EXIT_RE = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+) \(pid: (?P<pid>\d+)\)")
_SUMMARY_HOST_RE = re.compile(r"^\s*host\s*:\s*(\S+)")
_SUMMARY_RANK_RE = re.compile(r"^\s*rank\s*:\s*(\d+)(?: \(local_rank: (\d+)\))?")
_MPIRUN_SIGNAL_RE = re.compile(
    r"process rank (?P<rank>\d+)(?: with PID (?P<pid>\d+))?(?: on node (?P<host>\S+))?"
    r" exited on signal (?P<sig>\d+)"
)
_CUDA_OOM_RE = re.compile(r"(?:OutOfMemoryError|RuntimeError): CUDA out of memory")
_KERNEL_OOM_RE = re.compile(r"Out of memory: Kill(?:ed)? process (?P<pid>\d+)")
_SLURM_OOM_RE = re.compile(r"slurmstepd: error: Detected (?P<n>\d+) oom[-_]kill event")
_SRUN_TASK_RE = re.compile(
    r"srun: error: (?P<host>[^\s:]+): tasks? (?P<tasks>[\d,\-\[\]]+): (?P<what>Out Of Memory|"
    r"Killed|Segmentation fault|Bus error|Aborted|Terminated|Exited with exit code (?P<code>\d+))"
)
_SRUN_STEP_DOWN = (
    "Job step aborted",
    "_step_signal: Terminating",
    "CANCELLED AT",
    "Exited with exit code",
)
_HYDRA_CODE_RE = re.compile(r"^=\s+EXIT CODE: (?P<code>\d+)")
_HYDRA_AT_RE = re.compile(r"^=\s+PID (?P<pid>\d+) RUNNING AT (?P<host>\S+)")
_HYDRA_SIG_RE = re.compile(r"EXIT STRING: .*\(signal (?P<sig>\d+)\)")
_DS_RETURN_RE = re.compile(r"exits with return code = (?P<code>-?\d+)")
_OMPI_EXIT_RE = re.compile(r"^\s*Exit code:\s+(?P<code>\d+)")
_OMPI_NAME_RE = re.compile(r"Process name:\s+\[\[\d+,\d+\],(?P<rank>\d+)\]")
_LAUNCHER_MARKS = (
    "slurmstepd: error: Detected",
    "srun: error:",
    "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "exits with return code =",
    "mpirun detected that one or more processes exited",
    "OutOfMemoryError: CUDA out of memory",
)


def reports_a_death(text: str) -> bool:
    """Whether ``text`` holds a launcher's report of ranks that died (torchrun's elastic agent,
    mpirun/prterun, Slurm, MPICH/Hydra, DeepSpeed, a CUDA OOM): what ``nccl-log`` detection
    scores for a log without NCCL's own lines."""
    return (
        "torch.distributed.elastic" in text
        or "Root Cause (first observed failure)" in text
        or _MPIRUN_SIGNAL_RE.search(text) is not None
        or any(mark in text for mark in _LAUNCHER_MARKS)
    )


_SIGNALS: dict[int, tuple[str, str]] = {
    1: ("SIGHUP", "terminated"),
    2: ("SIGINT", "terminated"),
    4: ("SIGILL", "crash"),
    6: ("SIGABRT", "abort"),
    7: ("SIGBUS", "crash"),
    8: ("SIGFPE", "crash"),
    9: ("SIGKILL", "killed"),
    11: ("SIGSEGV", "crash"),
    15: ("SIGTERM", "terminated"),
}
"""Linux signal numbers (signal(7)) and how a rank's death by each reads in a failure chain."""


def may_be_exit(line: str) -> bool:
    """Cheap pre-filter for :func:`process_exit` (most lines of a log are neither)."""
    return (
        "exit" in line
        or "emory" in line
        or "noticed that" in line
        or "srun: error:" in line
        or "EXIT CODE" in line
        or "Exit code:" in line
        or "oom" in line
    )


def process_exit(lines: list[str], idx: int) -> ProcessExit | None:
    """A launcher's or the kernel's report of a rank that died; ``None`` for anything else
    (exit code 0 included)."""
    line = lines[idx]
    if "noticed that process rank" in line and "signal" not in line and idx + 1 < len(lines):
        # Open MPI/PRRTE wrap their help text near 80 columns ("... on node cn517 exited on" /
        # "signal 9 (Killed)."): read the report as one line, at the line where it starts
        line = f"{line.rstrip()} {lines[idx + 1].strip()}"
    elif (
        idx > 0
        and "noticed that process rank" in lines[idx - 1]
        and "signal" not in (lines[idx - 1])
    ):
        return None  # the wrapped tail of the report above, read there
    tr = TORCH_RANK_RE.search(line)
    base = ProblemFields(
        line=idx + 1,
        host=None,
        pid=None,
        tid=None,
        cuda_dev=None,
        launcher_rank=int(tr.group(1)) if tr is not None else None,
        message=line.strip(),
        source=None,
    )
    m = _TORCHRUN_FAILED_RE.search(line)
    if m is not None:
        return _exited(base, int(m["code"]), pid=int(m["pid"]), local_rank=int(m["lr"]))
    m = _SUMMARY_EXIT_RE.search(line)
    if m is not None:
        host: str | None = None
        rank: int | None = None
        local: int | None = None
        first = False
        for back in range(idx - 1, max(-1, idx - 10), -1):
            prev = lines[back]
            if host is None and (hm := _SUMMARY_HOST_RE.match(prev)) is not None:
                host = hm[1]
            elif rank is None and (rm := _SUMMARY_RANK_RE.match(prev)) is not None:
                rank, local = int(rm[1]), opt_int(rm[2])
            elif "Root Cause" in prev:
                first = True
                break
            elif "Failures:" in prev or prev.startswith("---") or prev.startswith("==="):
                break
        base["host"] = host
        return _exited(
            base, int(m["code"]), pid=int(m["pid"]), rank=rank, local_rank=local, first=first
        )
    m = _MPIRUN_SIGNAL_RE.search(line)
    if m is not None:
        base["host"] = m["host"].rstrip(".") if m["host"] else None
        base["pid"] = opt_int(m["pid"])
        sig = int(m["sig"])
        name, reason = _SIGNALS.get(sig, (f"signal {sig}", "crash"))
        return ProcessExit(
            category="process_exit",
            hint=_EXIT_HINT[reason],
            reason=reason,
            signal=sig,
            signal_name=name,
            rank=int(m["rank"]),
            first_failure="run noticed that" in line,  # mpirun (Open MPI) and prterun (PRRTE)
            **base,
        )
    launcher = _launcher_exit(lines, idx, line, base)
    if launcher is not None:
        return launcher
    if _CUDA_OOM_RE.search(line) is not None:
        return ProcessExit(category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", **base)
    m = _KERNEL_OOM_RE.search(line)
    if m is not None:
        base["pid"] = int(m["pid"])
        return ProcessExit(
            category="process_exit",
            hint=_EXIT_HINT["oom"],
            reason="oom",
            signal=9,
            signal_name="SIGKILL",
            **base,
        )
    return None


def _signalled(base: ProblemFields, sig: int, **extra: Any) -> ProcessExit:
    name, reason = _SIGNALS.get(sig, (f"signal {sig}", "crash"))
    return ProcessExit(
        category="process_exit",
        hint=_EXIT_HINT[reason],
        reason=reason,
        signal=sig,
        signal_name=name,
        **extra,
        **base,
    )


def _code_exit(base: ProblemFields, code: int, **extra: Any) -> ProcessExit | None:
    """An exit code as launchers print it: 0 is no death, a negative code is the signal that
    killed the process (Python's ``returncode``), a positive one the process's own exit."""
    if code == 0:
        return None
    if code < 0:
        return _signalled(base, -code, exit_code=code, **extra)
    return ProcessExit(
        category="process_exit",
        hint=_EXIT_HINT["exit"],
        reason="exit",
        exit_code=code,
        **extra,
        **base,
    )


def _launcher_exit(
    lines: list[str], idx: int, line: str, base: ProblemFields
) -> ProcessExit | None:
    """Slurm, MPICH/Hydra, DeepSpeed and Open MPI reports of a rank that ended (formats in
    :class:`ProcessExit`); ``None`` for anything else."""
    m = _SLURM_OOM_RE.search(line)
    if m is not None:
        return ProcessExit(category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", **base)
    m = _SRUN_TASK_RE.search(line)
    if m is not None:
        base["host"] = m["host"]
        tasks = m["tasks"]
        rank = int(tasks) if tasks.isdecimal() else None
        what = m["what"]
        if what == "Out Of Memory":
            return ProcessExit(
                category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", rank=rank, **base
            )
        if m["code"] is not None:
            return _code_exit(base, int(m["code"]), rank=rank)
        sig = {"Killed": 9, "Segmentation fault": 11, "Bus error": 7, "Aborted": 6}.get(what, 15)
        if sig == 9 and any(mark in prev for prev in lines[:idx] for mark in _SRUN_STEP_DOWN):
            # srun kills the remaining tasks once one failed or the step was cancelled: a
            # consequence, not the death that started the failure
            sig = 15
        return _signalled(base, sig, rank=rank)
    m = _HYDRA_CODE_RE.search(line)
    if m is not None and any("BAD TERMINATION" in prev for prev in lines[max(0, idx - 4) : idx]):
        code = int(m["code"])
        for prev in lines[max(0, idx - 3) : idx]:
            if (at := _HYDRA_AT_RE.search(prev)) is not None:
                base["host"], base["pid"] = at["host"], int(at["pid"])
        if code > 128:
            return _signalled(base, code - 128, exit_code=code)
        for nxt in lines[idx + 1 : idx + 6]:
            if (sm := _HYDRA_SIG_RE.search(nxt)) is not None:
                return _signalled(base, int(sm["sig"]), exit_code=code)
        return _code_exit(base, code)
    m = _DS_RETURN_RE.search(line)
    if m is not None:
        return _code_exit(base, int(m["code"]))
    m = _OMPI_EXIT_RE.search(line)
    if m is not None and idx > 0 and (nm := _OMPI_NAME_RE.search(lines[idx - 1])) is not None:
        return _code_exit(
            base,
            int(m["code"]),
            rank=int(nm["rank"]),
            first_failure=any(
                "first process to do so" in prev for prev in lines[max(0, idx - 5) : idx]
            ),
        )
    return None


_EXIT_HINT: dict[str, str] = {
    "oom": "out of memory: the rank died (or stopped answering) and its peers' RDMA "
    "retries and socket reads fail after it",
    "killed": "SIGKILL: the kernel OOM killer, the scheduler or an operator ended the rank",
    "crash": "the rank crashed (segfault, bus error, illegal instruction)",
    "abort": "SIGABRT: PyTorch aborts a rank after an NCCL error; usually a consequence",
    "terminated": "the launcher stopped the rank after another one failed; a consequence",
    "exit": "the rank exited with an error code",
}


def _exited(
    base: ProblemFields,
    code: int,
    *,
    pid: int,
    rank: int | None = None,
    local_rank: int | None = None,
    first: bool = False,
) -> ProcessExit | None:
    """torchrun's ``exitcode``: negative is the signal that killed the process."""
    base["pid"] = pid
    return _code_exit(base, code, rank=rank, local_rank=local_rank, first_failure=first)
