"""Derived ``switch_qos`` records: a switch config (SONiC config_db, EOS, NX-OS, NVUE, Cumulus
traffic.conf) read into the observed model ``aifabric verify`` uses (:mod:`aifabric.dialects`),
reduced to what its lossless priorities need: the priorities with PFC on, the DSCP map into
them, the ECN marking of their egress queues. Judged by :mod:`.verdicts_switch_qos`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from aifabric.checks.diagnose.engine import Evidence, Item, deriver
from aifabric.dialects.load import SWITCH_KINDS, interpreter
from aifabric.dialects.observed import PortView
from aifabric.evidence.base import Record

if TYPE_CHECKING:
    from aifabric.dialects.observed import ObservedDevice

__all__ = ["SwitchQos", "switch_qos"]


@dataclass(slots=True, kw_only=True)
class SwitchQos(Record):
    """What one switch config says about its lossless priorities (its typical port)."""

    record_type: ClassVar[str] = "switch_qos"
    device: str
    dialect: str
    lossless: tuple[int, ...] = ()
    """Priorities with PFC on."""
    trust: str | None = None
    dscp_to_tc: dict[int, int] | None = None
    dscp_default_tc: int | None = None
    ecn_queues: tuple[int, ...] = ()
    """Egress queues with ECN marking enabled."""
    ecn_known: bool = False
    """The config states ECN/WRED somewhere (so a queue without it is a choice, not a cut)."""
    lossless_without_ecn: tuple[int, ...] = ()
    """Egress queues of lossless priorities without ECN marking (when ``ecn_known``)."""
    bad_thresholds: list[str] = field(default_factory=list)
    """``queue N: min X > max Y`` for lossless queues with inverted ECN thresholds."""


def _queue(view: PortView, priority: int) -> int:
    tcq = view.tc_to_queue.value if view.tc_to_queue is not None else None
    return tcq.get(priority, priority) if tcq else priority


def switch_qos(dev: ObservedDevice, line: int) -> SwitchQos | None:
    """The ``switch_qos`` record of an interpreted switch config (None: no PFC stated)."""
    view = dev.typical or dev.whole()
    if view.pfc_priorities is None or not view.pfc_priorities.value:
        return None
    lossless = tuple(sorted(view.pfc_priorities.value))
    enabled = [e for e in view.ecn if e.enabled is not False]
    ecn_known = bool(view.ecn) and view.ecn_unread is None
    ecn_queues = sorted(
        {q for e in enabled for q in range(8) if e.covers(q)}
    )  # a profile without a queue covers every queue
    missing = tuple(
        sorted({_queue(view, p) for p in lossless} - set(ecn_queues))
    ) if ecn_known else ()
    bad: list[str] = []
    for p in lossless:
        q = _queue(view, p)
        for e in enabled:
            lo, hi = e.kmin_bytes, e.kmax_bytes
            if e.covers(q) and lo is not None and hi is not None and lo > hi:
                bad.append(f"queue {q}: min {lo} B > max {hi} B")
    d2t = view.dscp_to_tc.value if view.dscp_to_tc is not None else None
    return SwitchQos(
        line=line,
        device=dev.name,
        dialect=dev.dialect,
        lossless=lossless,
        trust=view.trust.value if view.trust is not None else None,
        dscp_to_tc=dict(d2t) if d2t else None,
        dscp_default_tc=view.dscp_default_tc,
        ecn_queues=tuple(ecn_queues),
        ecn_known=ecn_known,
        lossless_without_ecn=missing,
        bad_thresholds=bad,
    )


@deriver
def _switch_configs(ev: Evidence) -> Iterator[Item]:
    """One ``switch_qos`` record per switch-config capture that states PFC."""
    for ef in ev.files:
        if ef.kind not in SWITCH_KINDS or not ef.result.records:
            continue
        try:
            dev = interpreter(ef.kind)(ef.result, file=ef.path, name=ef.subject)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # an excerpt the interpreter cannot place: the parse warnings say so
        first = min((r.line for r in ef.result.records if r.line), default=1)
        rec = switch_qos(dev, first)
        if rec is not None:
            yield Item(rec, ef, ef.subject, ef.kind)
