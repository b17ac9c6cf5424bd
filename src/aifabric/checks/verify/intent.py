"""The fabric file's own QoS intent against the seed's rules (S12, S13, S14, S18), before any
device is read: a policy that is wrong on paper is wrong on every switch it is rendered to."""

from __future__ import annotations

from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import fmt_set
from aifabric.findings import Finding

__all__: list[str] = []


@register("verify.qos-intent")
def qos_intent(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.qos-intent"]
    fabric = ctx.fabric
    if fabric.transport != "roce":
        return
    qos = fabric.qos
    prio = qos.roce_priority
    pfc = tuple(sorted(qos.pfc_priorities))
    if pfc != (prio,):
        extra = sorted(set(pfc) - {prio})
        yield meta.finding(
            target="qos.pfc_priorities",
            message=(
                f"PFC intended on priorities {fmt_set(pfc)}; the RoCE priority is {prio}"
                + (" (every priority)" if len(pfc) == 8 else "")
            ),
            expected=[prio],
            actual=list(pfc),
            explanation=(
                "PFC belongs on the RoCE priority only (S12, S18)."
                + (
                    f" Priorities {fmt_set(extra)} would pause other traffic and widen the "
                    "deadlock surface (S21: PFC on all queues froze a RoCE network for ten "
                    "minutes)."
                    if extra
                    else ""
                )
                + (" Without it RoCE is lossy." if prio not in pfc else "")
            ),
            fix=f"set qos.pfc_priorities: [{prio}]",
        )
    tc = qos.dscp_to_tc.get(qos.roce_dscp, 0)
    classes = {c.tc: c for c in qos.traffic_classes}
    if tc != prio:
        yield meta.finding(
            target="qos.dscp_to_tc",
            message=f"the RoCE DSCP {qos.roce_dscp} maps to TC {tc}, not the RoCE priority {prio}",
            expected=prio,
            actual=tc,
            explanation="S14: RoCE's DSCP must map to its dedicated lossless queue.",
            fix=f"set qos.dscp_to_tc[{qos.roce_dscp}] = {prio}",
        )
    roce_class = classes.get(prio)
    if roce_class is not None and not roce_class.lossless:
        yield meta.finding(
            target=f"qos.traffic_classes[tc={prio}]",
            message=f"traffic class {prio} ({roce_class.name}) carries RoCE but is not lossless",
            expected=True,
            actual=False,
            explanation="The RoCE class must be lossless (PFC) for RoCEv2 (S12).",
            fix=f"set lossless: true on traffic class {prio}",
        )
    for c in qos.traffic_classes:
        if c.lossless and c.tc not in pfc:
            yield meta.finding(
                target=f"qos.traffic_classes[tc={c.tc}]",
                message=f"traffic class {c.tc} ({c.name}) is declared lossless without PFC on it",
                expected=[c.tc],
                actual=list(pfc),
                explanation="A class is lossless only if PFC pauses it (S12).",
                fix=f"add {c.tc} to qos.pfc_priorities or declare the class lossy",
            )
    cnp_tc = qos.dscp_to_tc.get(qos.cnp_dscp, 0)
    cnp_class = classes.get(cnp_tc)
    if cnp_tc == prio or cnp_class is None or cnp_class.scheduler != "strict":
        yield meta.finding(
            target="qos.cnp",
            severity="warning",
            message=(
                f"CNP DSCP {qos.cnp_dscp} maps to TC {cnp_tc}"
                + (", the RoCE class" if cnp_tc == prio else ", which is not strict priority")
            ),
            expected=f"TC {qos.cnp_priority}, strict",
            actual=f"TC {cnp_tc}",
            explanation=(
                "Congestion notifications must overtake the data they throttle: a strict class "
                "of their own (NVIDIA default: priority 6 strict, "
                "docs/references.md#ecn-dcqcn; S14)."
            ),
            fix=f"map DSCP {qos.cnp_dscp} to a strict traffic class (TC {qos.cnp_priority})",
        )
    if qos.ecn is not None:
        per_port: list[tuple[str, int]] = []
        for sw in fabric.switches:
            model = ctx.catalog.switches.get(sw.model) if sw.model else None
            buf = sw.buffer_bytes or (model.buffer_bytes if model is not None else None)
            if buf:
                per_port.append((sw.name, buf // sw.ports))
        if per_port:
            name, smallest = min(per_port, key=lambda kv: kv[1])
            if qos.ecn.kmax_bytes > smallest:
                yield meta.finding(
                    target="qos.ecn",
                    severity="warning",
                    message=(
                        f"ECN Kmax {qos.ecn.kmax_bytes} bytes exceeds the per-port buffer share "
                        f"of {name} ({smallest} bytes)"
                    ),
                    expected=f"<= {smallest}",
                    actual=qos.ecn.kmax_bytes,
                    explanation=(
                        "A queue cannot grow past its buffer share, so marking above it never "
                        "happens and PFC does the congestion control alone (S13: thresholds at "
                        "30-50% of the port buffer)."
                    ),
                    fix=f"set qos.ecn.kmax_bytes to at most {smallest // 2}",
                )
