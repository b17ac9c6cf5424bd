"""What every record read from an NCCL log shares, whichever program printed the line.

A job's output mixes NCCL's own ``NCCL INFO``/``NCCL WARN`` lines (:mod:`nccl_log`,
:mod:`nccl_graph`, :mod:`nccl_warn`), PyTorch ``ProcessGroupNCCL`` errors (:mod:`pytorch_log`)
and the reports of launchers and the kernel about ranks that died (:mod:`launcher_log`). All of
them become :class:`NcclLogRecord` subclasses of the one ``nccl-log`` kind, and every failure is
an :class:`NcclProblem` with a ``category``, so a rule can ask for "a problem" whatever printed
it. This module holds those two bases, the typed field bundles the line readers pass around,
and the exception a reader raises for a line that starts like a known message but does not
parse (the parser turns it into a warning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, TypedDict

from aifabric.evidence.base import Record

__all__ = [
    "TORCH_RANK_RE",
    "LineFields",
    "NcclLogRecord",
    "NcclProblem",
    "ProblemFields",
    "Unreadable",
    "opt_int",
]


@dataclass(slots=True, kw_only=True)
class NcclLogRecord(Record):
    """Fields from the line prefix ``host:pid:tid [cudaDev] [file.cc:N]``, each ``None`` when
    absent; ``launcher_rank`` is the MPI/Slurm/PyTorch rank of an outer prefix."""

    record_type: ClassVar[str] = "nccl_log"

    host: str | None = None
    pid: int | None = None
    tid: int | None = None
    cuda_dev: int | None = None
    launcher_rank: int | None = None


@dataclass(slots=True, kw_only=True)
class NcclProblem(NcclLogRecord):
    """A WARN line or an error line of PyTorch about NCCL, classified.

    ``category``: ``ib_completion``, ``ibv_call``, ``socket_connect``, ``socket_closed``,
    ``socket_error``, ``socket_retry``, ``proxy``, ``net_plugin``, ``dmabuf``, ``cuda``,
    ``nccl_error`` (``unhandled system error`` ...), ``remote_error``, ``watchdog_timeout``,
    ``watchdog_exception``, ``process_exit`` (:class:`~aifabric.evidence.launcher_log.ProcessExit`),
    ``other``.
    """

    record_type: ClassVar[str] = "problem"

    category: str
    message: str
    """The message after the prefix, as printed."""
    source: str | None = None
    """NCCL source location printed on WARN lines, ``transport/net_ib.cc:1295``."""
    hint: str | None = None
    """What this usually means for the fabric (network engineers' reading, S20)."""


class LineFields(TypedDict):
    """The :class:`NcclLogRecord` fields of one line, as the line readers pass them on."""

    line: int
    host: str | None
    pid: int | None
    tid: int | None
    cuda_dev: int | None
    launcher_rank: int | None


class ProblemFields(LineFields):
    """:class:`LineFields` plus the message and source location every problem carries."""

    message: str
    source: str | None


class Unreadable(Exception):
    """A message that starts like a known one but does not parse."""


TORCH_RANK_RE = re.compile(r"\[rank(\d+)\]:")
"""PyTorch's ``[rank3]:`` line prefix (the rank of the process that printed the line)."""


def opt_int(s: str | None) -> int | None:
    """``int(s)``, ``None`` for ``None`` (an optional regex group)."""
    return int(s) if s is not None else None
