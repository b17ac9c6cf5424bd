"""PyTorch ``ProcessGroupNCCL`` (c10d) records in a job's output: watchdog timeouts and
exceptions, and NCCL error summaries.

PyTorch prints these without NCCL's ``NCCL INFO``/``WARN`` marker (or inside an INFO line that
quotes them), with and without its ``[rank0]:`` prefix:

* ``[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234,
  OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600021 milliseconds
  before timing out.``, with ``NumelIn``/``NumelOut`` (PyTorch 2.x) and without (1.x):
  :class:`WatchdogTimeout`;
* ``[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580,
  last enqueued NCCL work: 1582, last completed NCCL work: 1579.``: :class:`WatchdogException`;
* ``NCCL error in: ...ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3``
  and ``remote process exited or there was a network error``: :class:`NcclErrorReport`;
* PyTorch Lightning's banner of each process joining the group (``Initializing distributed:
  GLOBAL_RANK: 4, MEMBER: 5/8``; ``initializing deepspeed distributed: ...`` under its DeepSpeed
  strategy, ``initializing ddp: ...`` before Lightning 1.6):
  :class:`RankBanner`;
* an IB completion error PyTorch quotes (``Last error: NET/IB : Got completion from peer ...``):
  read by :func:`embedded_completion` into the record NCCL's own WARN line would give.

Sources: PyTorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp
(https://github.com/pytorch/pytorch); Lightning src/lightning/fabric/utilities/distributed.py
``_init_dist_connection`` (https://github.com/Lightning-AI/pytorch-lightning); the captures
under tests/fixtures/evidence/nccl-log/ (pytorch issue 68893 ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import Record
from aifabric.evidence.nccl_log_base import (
    TORCH_RANK_RE,
    LineFields,
    NcclLogRecord,
    NcclProblem,
    ProblemFields,
    Unreadable,
    opt_int,
)
from aifabric.evidence.nccl_warn import classify_problem

__all__ = [
    "NcclErrorReport",
    "RankBanner",
    "WatchdogException",
    "WatchdogTimeout",
    "embedded_completion",
    "parse_torch_line",
]


@dataclass(slots=True, kw_only=True)
class NcclErrorReport(NcclProblem):
    """PyTorch/NCCL error summaries: ``NCCL error in: ...ProcessGroupNCCL.cpp:1191, unhandled
    system error, NCCL version 2.10.3``, ``ncclSystemError: ...``, ``remote process exited or
    there was a network error``."""

    error: str
    """``unhandled system error``, ``remote process exited or there was a network error`` ..."""
    nccl_version: str | None = None


@dataclass(slots=True, kw_only=True)
class RankBanner(NcclLogRecord):
    """``Initializing distributed: GLOBAL_RANK: 4, MEMBER: 5/8``: one process announcing the
    global rank and world size it joins the process group with (Lightning logs it once per
    process, just before ``torch.distributed.init_process_group``)."""

    record_type: ClassVar[str] = "rank_banner"

    global_rank: int
    world_size: int


@dataclass(slots=True, kw_only=True)
class WatchdogTimeout(NcclProblem):
    """``[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234,
    OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600021 milliseconds
    before timing out.``"""

    rank: int | None = None
    seq_num: int
    op_type: str
    numel_in: int | None = None
    numel_out: int | None = None
    timeout_ms: int
    ran_for_ms: int


@dataclass(slots=True, kw_only=True)
class WatchdogException(NcclProblem):
    """``[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work:
    1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.``"""

    rank: int | None = None
    process_group: str | None = None
    seq_num: int
    last_enqueued: int | None = None
    last_completed: int | None = None


_WATCHDOG_RE = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+),"
    r" OpType=(?P<op>\w+)(?:, NumelIn=(?P<nin>-?\d+), NumelOut=(?P<nout>-?\d+))?[^)]*?"
    r"Timeout\(ms\)=(?P<to>\d+)\) ran for (?P<ran>\d+) milliseconds"
)
_WD_EXC_RE = re.compile(
    r"detected by watchdog at work: (?P<seq>\d+)(?:, last enqueued NCCL work: (?P<enq>-?\d+))?"
    r"(?:, last completed NCCL work: (?P<done>-?\d+))?"
)
_BANNER_RE = re.compile(
    r"(?:Initializing (?:deepspeed )?distributed|initializing ddp): "
    r"GLOBAL_RANK: (?P<rank>\d{1,7}), "
    r"MEMBER: (?P<member>\d{1,7})/(?P<world>\d{1,7})",
    re.IGNORECASE,
)
_PG_RANK_RE = re.compile(r"\[(?:PG (?P<pg>.*?) )?Rank (?P<rank>\d+)\]")
_NCCL_ERR_RE = re.compile(
    r"NCCL error(?: in: (?P<where>\S+?))?,? (?P<err>[a-z][^,]*)(?:, NCCL version (?P<ver>[\d.]+))?"
    r"\s*$"  # err greedy (stripped by the caller): a lazy one rescans trailing blanks
)


def parse_torch_line(line: str, ln: int) -> Record | None:
    """A PyTorch ProcessGroupNCCL line (no NCCL INFO/WARN marker) as its record, ``None`` when
    it holds nothing read here; :class:`Unreadable` for a watchdog line that does not parse."""
    tm = TORCH_RANK_RE.search(line)
    base = ProblemFields(
        line=ln,
        host=None,
        pid=None,
        tid=None,
        cuda_dev=None,
        launcher_rank=int(tm.group(1)) if tm is not None else None,
        message=line.strip(),
        source=None,
    )
    if "GLOBAL_RANK: " in line:
        bm = _BANNER_RE.search(line)
        if bm is None or int(bm["world"]) < 1:
            return None
        return RankBanner(
            global_rank=int(bm["rank"]), world_size=int(bm["world"]),
            **LineFields(line=ln, host=None, pid=None, tid=None, cuda_dev=None,
                         launcher_rank=base["launcher_rank"]),
        )  # fmt: skip
    if "Got completion" in line and "Watchdog caught" not in line:
        return embedded_completion(line, ln, base["launcher_rank"])
    if "Watchdog caught" in line:
        m = _WATCHDOG_RE.search(line)
        if m is None:
            raise Unreadable("expected 'Watchdog caught ... WorkNCCL(SeqNum=.., ...) ran for N'")
        rk = _PG_RANK_RE.search(line)
        return WatchdogTimeout(
            category="watchdog_timeout",
            hint="a collective did not finish in time: a stalled or lost network path, a rank "
            "that died or diverged (different OpType/SeqNum across ranks: desync)",
            rank=int(rk["rank"]) if rk else None,
            seq_num=int(m["seq"]),
            op_type=m["op"],
            numel_in=opt_int(m["nin"]),
            numel_out=opt_int(m["nout"]),
            timeout_ms=int(m["to"]),
            ran_for_ms=int(m["ran"]),
            **base,
        )
    if "detected by watchdog at work" in line:
        m = _WD_EXC_RE.search(line)
        if m is None:
            raise Unreadable("expected 'detected by watchdog at work: N, ...'")
        rk = _PG_RANK_RE.search(line)
        return WatchdogException(
            category="watchdog_exception",
            rank=int(rk["rank"]) if rk else None,
            process_group=rk["pg"] if rk else None,
            seq_num=int(m["seq"]),
            last_enqueued=opt_int(m["enq"]),
            last_completed=opt_int(m["done"]),
            **base,
        )
    if "NCCL error" in line:
        m = _NCCL_ERR_RE.search(line)
        if m is None:
            return None
        err = m["err"].split(" (run with", 1)[0].strip()
        cat = "remote_error" if "remote process" in err else "nccl_error"
        return NcclErrorReport(category=cat, error=err, nccl_version=m["ver"], **base)
    return None


def embedded_completion(line: str, ln: int, rank: int | None) -> Record | None:
    """An IB completion error PyTorch quotes (``... Last error: NET/IB : Got completion from
    peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129``) or that a
    launcher printed without NCCL's prefix; ``None`` when it does not parse."""
    at = line.find("Got completion")
    start = line.rfind("NET/", 0, at)
    common = LineFields(line=ln, host=None, pid=None, tid=None, cuda_dev=None, launcher_rank=rank)
    try:
        return classify_problem(line[start if start >= 0 else at :], common, None)
    except Unreadable:
        return None
