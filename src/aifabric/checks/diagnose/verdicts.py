"""Record verdicts: each kind of record judged on its own, independent of combination rules.

A rule (:mod:`.rules`) ranks and explains a combination of evidence; a verdict makes sure that
nothing visible in one record is missed: a port that is not Active, a PCIe link below what the
device can do, GPUDirect RDMA off, a locked-memory limit RDMA cannot live with, no RoCE v2 GID,
a busbw curve that collapses, optics past a threshold. Verdict functions are registered per
record type with :func:`verdict` in the ``verdicts_*.py`` modules beside this one (imported by
:func:`load_verdicts`), and get the record and the whole :class:`~.engine.Evidence` (for the
fabric file and the catalog)::

    @verdict("ib_port")
    def _port_state(rec: Record, ev: Evidence) -> Iterator[Verdict]:
        if rec.state != "Active":
            yield Verdict(id="diagnose.port-not-active", severity="error", cause="fabric.link-down",
                          message=f"{rec.device} port {rec.port} is {rec.state}", ...)

A verdict says *why*, with a cause class from ``checks/causes.yaml``. When a rule already names
the same cause for the same subject, the engine keeps the rule's finding and drops the verdict.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from aifabric.evidence.base import Record

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["Verdict", "VerdictFn", "load_verdicts", "verdict", "verdicts_for"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one record says on its own."""

    id: str
    """check id of the finding, ``diagnose.<slug>``."""
    severity: Literal["error", "warning", "info"]
    cause: str
    """a cause class of ``checks/causes.yaml``."""
    message: str
    explanation: str
    fix: str
    refs: tuple[str, ...] = ()
    confidence: float = 0.6
    """An authored prior: how often this reading of the record names the real cause."""
    line: int | None = None
    """line to quote; the record's own line when ``None``."""


VerdictFn = Callable[[Record, "Evidence"], Iterable[Verdict]]
_VERDICTS: dict[str, list[VerdictFn]] = defaultdict(list)
_LOADED = False


def verdict(*record_types: str) -> Callable[[VerdictFn], VerdictFn]:
    """Register ``fn`` as a verdict on records of these types."""

    def deco(fn: VerdictFn) -> VerdictFn:
        for rt in record_types:
            _VERDICTS[rt].append(fn)
        return fn

    return deco


def load_verdicts() -> dict[str, list[VerdictFn]]:
    """Import every ``verdicts_*`` module once; the registered functions by record type."""
    global _LOADED  # noqa: PLW0603 - one-time import of the verdict modules
    if not _LOADED:
        import aifabric.checks.diagnose as pkg  # noqa: PLC0415

        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("verdicts_"):
                importlib.import_module(f"aifabric.checks.diagnose.{info.name}")
        _LOADED = True
    return _VERDICTS


def verdicts_for(record_type: str) -> list[VerdictFn]:
    return load_verdicts().get(record_type, [])
