"""S10: only datacenter-class switches with PFC and ECN carry RoCE."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import fabric_index

__all__: list[str] = []

_WHY = {
    "home": (
        "a home/entry switch has a few hundred KB of buffer, no PFC, no ECN and no "
        "telemetry: one burst drops packets and RDMA collapses (S10: never in production)"
    ),
    "l3": (
        "a plain L3 switch lacks the shared buffer, PFC/ECN and RoCE visibility a lossless "
        "fabric needs; S10 keeps it for management and out-of-band networks"
    ),
}


@register("design.switch-class")
def switch_class(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.switch-class"]
    fabric = ctx.fabric
    idx = fabric_index(fabric)
    wrong_class: dict[tuple[str, str | None], list[tuple[str, int]]] = defaultdict(list)
    for sw in fabric.switches:
        if sw.role == "management":
            continue
        data_links = [ln for ln in idx.links_of.get(sw.name, []) if ln.kind != "management"]
        if not data_links:
            continue
        spec = ctx.catalog.switches.get(sw.model) if sw.model else None
        if sw.switch_class != "datacenter":
            wrong_class[(sw.switch_class, sw.model)].append((sw.name, len(data_links)))
            continue
        if spec is not None and fabric.transport == "roce" and not (spec.pfc and spec.ecn):
            missing = [f for f, ok in (("PFC", spec.pfc), ("ECN", spec.ecn)) if not ok]
            yield meta.finding(
                target=sw.name,
                message=f"{sw.name} ({spec.name}) lacks {' and '.join(missing)} for RoCEv2",
                expected="PFC and ECN",
                actual=f"no {' and no '.join(missing)}",
                evidence=[f"catalog {spec.name}: pfc={spec.pfc}, ecn={spec.ecn} ({spec.source})"],
                explanation=(
                    "RoCEv2 needs PFC on the RoCE priority to stay lossless (S12) and "
                    "ECN marking to slow senders before buffers fill (S13); without "
                    "them RoCE performs worse than TCP (S5)."
                ),
                fix=f"use a switch model with PFC and ECN in place of {spec.name}",
            )
    for (klass, model), items in sorted(wrong_class.items(), key=lambda kv: str(kv[0])):
        names = [n for n, _ in items]
        what = model or f"{klass}-class switch"
        yield meta.finding(
            target=some(names),
            message=(
                f"{len(names)} {what}{'es' if len(names) > 1 and not model else ''} "
                f"carry {sum(c for _, c in items)} data link(s) of the GPU fabric"
            ),
            expected="datacenter-class switches",
            actual=f"{klass} class",
            evidence=[f"{n}: {c} data link(s)" for n, c in items[:5]],
            explanation=_WHY[klass] + ".",
            fix=(
                f"replace {some(names, 2)} with datacenter switches (PFC, ECN, shared "
                "buffer, RoCE telemetry); keep them for management networks only"
            ),
        )
