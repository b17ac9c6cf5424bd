"""The DSCP chain end to end (S12, S14, S15): host marking → switch trust → DSCP→TC map → queue
with PFC; CNP on a strict class; few queues.

A RoCE packet leaves the host with a ToS byte (sysfs ``traffic_class``, rdma_cm
``default_roce_tos``, or ``NCCL_IB_TC``; DSCP = ToS >> 2). Each switch classifies it by DSCP
(trust dscp; PCP does not survive a routed hop and is absent without a VLAN tag), maps the DSCP
to a traffic class, and queues it. The chain holds when that class is the RoCE priority and PFC
is on it, on every switch. SONiC's default map sends DSCP 26, the usual RoCE marking, to lossy
TC 1 (docs/references.md#sonic-qos), and a host left at ToS 0 lands in the default class
whatever PFC says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import (
    Group,
    Marking,
    dialect_of,
    evidence_of,
    fmt_set,
    host_markings,
    roce_dscps,
    roce_ports,
)
from aifabric.checks.verify._fixes import DIALECT_NAMES, fix_dscp_map, fix_pfc
from aifabric.dialects.observed import Observed, ObservedDevice, PortView
from aifabric.findings import Finding

__all__: list[str] = []


_CLASS_WORD = {
    "nvue": "switch priority",
    "cumulus": "switch priority",
    "nxos": "qos-group",
    "eos": "traffic-class",
}
"""What each dialect calls the class a DSCP is mapped to (PFC is set on it): NVUE and Cumulus
map DSCP to a switch priority, NX-OS sets a qos-group, EOS a traffic-class, SONiC a TC."""


def _switch_views(ctx: CheckContext) -> Iterator[tuple[ObservedDevice, str, PortView]]:
    """(switch, port label, view) of every RoCE port of the observed switches."""
    for e in roce_ports(ctx.fabric, ctx.observed):
        if e.device.role == "switch":
            yield e.device, e.label, e.view


def _vendor(obs: Observed | None, device: str) -> str:
    name = DIALECT_NAMES.get(dialect_of(obs, device))
    return f" ({name})" if name else ""


@register("verify.dscp-chain")
def dscp_chain(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.dscp-chain"]
    fabric = ctx.fabric
    if fabric.transport != "roce":
        return
    qos = fabric.qos
    prio = qos.roce_priority
    # 1. host marking against the intent (NCCL_IB_TC is verify.nccl-env's finding; its DSCP
    #    still follows the chain through the switches below)
    for m in host_markings(fabric, ctx.observed):
        if m.dscp != qos.roce_dscp and not m.origin.startswith("NCCL_IB_TC"):
            yield meta.finding(
                target=m.origin,
                message=(
                    f"{m.origin} marks RoCE with DSCP {m.dscp} (ToS {m.dscp << 2}); the "
                    f"fabric's lossless class expects DSCP {qos.roce_dscp} (ToS "
                    f"{qos.nccl_ib_tc})"
                ),
                expected=qos.roce_dscp,
                actual=m.dscp,
                evidence=list(m.evidence),
                explanation=(
                    "The switches put RoCE in the lossless queue by its DSCP. A host marking "
                    "another DSCP (ToS 0 by default) lands in a lossy class whatever PFC says "
                    "(S14; https://github.com/chimera-nas/chimera/pull/617). NCCL_IB_TC and the "
                    "sysfs/rdma_cm ToS are the IP ToS byte: DSCP << 2 (S15)."
                ),
                fix=(
                    f"mark RoCE with ToS {qos.nccl_ib_tc}: NCCL_IB_TC={qos.nccl_ib_tc}, "
                    f"`echo {qos.nccl_ib_tc} > /sys/class/infiniband/<dev>/tc/1/traffic_class`, "
                    f"`cma_roce_tos -d <dev> -t {qos.nccl_ib_tc}`"
                ),
            )
    obs = ctx.observed
    if obs is None:
        return
    dscps = roce_dscps(fabric, obs)
    # 2. host NIC: trust and DSCP -> priority, PFC on that priority
    for dev in obs.hosts():
        for name, view in sorted(dev.ports.items()):
            v = view.merged_over(dev.defaults)
            if v.trust is not None and v.trust.value == "pcp" and qos.trust == "dscp":
                yield meta.finding(
                    target=f"{dev.name}:{name}",
                    message=f"{dev.name} {name}: NIC trust state pcp; the fabric trusts DSCP",
                    expected="dscp",
                    actual="pcp",
                    evidence=evidence_of(v.trust),
                    explanation=(
                        "With trust pcp the NIC picks the egress priority from the VLAN PCP; "
                        "untagged RoCE then leaves on priority 0 and the NIC's PFC on priority "
                        f"{prio} never applies to it."
                    ),
                    fix=f"mlnx_qos -i {name} --trust dscp",
                )
            for dscp in dscps:
                p = v.tc_of_dscp(dscp)
                if p is not None and v.trust is not None and v.trust.value == "dscp" and p != prio:
                    yield meta.finding(
                        target=f"{dev.name}:{name}",
                        message=(
                            f"{dev.name} {name}: the NIC maps DSCP {dscp} to priority {p}, "
                            f"not the RoCE priority {prio}"
                        ),
                        expected=prio,
                        actual=p,
                        evidence=evidence_of(v.dscp_to_tc),
                        explanation=(
                            "The NIC's dscp2prio map decides the priority its PFC and ETS apply "
                            "to; a mismatch leaves RoCE unpaused at the host."
                        ),
                        fix=f"mlnx_qos -i {name} --dscp2prio set,{dscp},{prio}",
                    )
    # 3. every switch: trust, map, PFC on the class RoCE lands in
    trust_bad: dict[tuple[str, str], Group] = defaultdict(Group)
    lossy: dict[tuple[str, int, int], Group] = defaultdict(Group)
    lossy_pfc: dict[tuple[str, int, int, tuple[int, ...]], Group] = defaultdict(Group)
    origins: dict[int, list[Marking]] = dscps
    for dev, label, v in _switch_views(ctx):
        if v.trust is not None and v.trust.value != qos.trust:
            trust_bad[(dev.name, v.trust.value)].add(label, evidence_of(v.trust))
        for dscp in dscps:
            tc = v.tc_of_dscp(dscp)
            if tc is None:
                continue
            if tc != prio:
                lossy[(dev.name, dscp, tc)].add(label, evidence_of(v.dscp_to_tc))
            elif v.pfc_priorities is not None and tc not in v.pfc_priorities.value:
                key = (dev.name, dscp, tc, tuple(sorted(v.pfc_priorities.value)))
                lossy_pfc[key].add(label, evidence_of(v.dscp_to_tc, v.pfc_priorities))
    for (dname, trust), g in sorted(trust_bad.items()):
        yield meta.finding(
            target=g.target(),
            message=f"{dname}: classifies on {trust}, the fabric's QoS intent trusts {qos.trust}",
            expected=qos.trust,
            actual=trust,
            evidence=g.evidence,
            explanation=(
                "On routed (L3) hops only the DSCP survives; PCP lives in the VLAN tag, which "
                "is rewritten at every router and absent on untagged ports (S14, S19)."
            ),
            fix=f"set the trust mode of {g.target()} to {qos.trust}",
        )
    for (dname, dscp, tc), g in sorted(lossy.items()):
        why = ", ".join(m.origin for m in origins.get(dscp, []))
        dialect = dialect_of(obs, dname)
        word = _CLASS_WORD.get(dialect, "TC")
        pfc_note = (
            " SONiC's default map (qos_config.j2) makes only DSCP 3 and 4 lossless and sends 26 "
            "to TC 1 (docs/references.md#sonic-qos)."
            if dialect == "sonic"
            else ""
        )
        yield meta.finding(
            target=g.target(),
            message=(
                f"{dname}{_vendor(obs, dname)}: RoCE DSCP {dscp} is mapped to {word} {tc}, not "
                f"the lossless {word} {prio}: "
                f"RoCE is lossy on {g.count()} port(s)"
            ),
            expected=prio,
            actual=tc,
            evidence=[*g.evidence, *[e for m in origins.get(dscp, []) for e in m.evidence]][:6],
            explanation=(
                f"RoCE is marked DSCP {dscp} ({why}); this switch's DSCP map sends it to "
                f"{word} {tc}, which has no PFC, so congestion drops RoCE and go-back-N "
                "retransmission follows (S12, S14)." + pfc_note
            ),
            fix=(
                f"{dname}: "
                + fix_dscp_map(dialect_of(obs, dname), dscp, prio)
                + "; or mark RoCE on every host with a DSCP this switch already treats as "
                "lossless"
            ),
        )
    for (dname, dscp, tc, pfc), g in sorted(lossy_pfc.items()):
        yield meta.finding(
            target=g.target(),
            message=(
                f"{dname}: RoCE DSCP {dscp} reaches TC {tc}, but PFC is on "
                + (f"{fmt_set(pfc)} only" if pfc else "no priority")
            ),
            expected=[tc],
            actual=list(pfc),
            evidence=g.evidence,
            explanation="The class RoCE lands in is not paused: the chain breaks at PFC (S12).",
            fix=f"{dname}: " + fix_pfc(dialect_of(obs, dname), tc),
        )


@register("verify.cnp-priority")
def cnp_priority(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.cnp-priority"]
    fabric = ctx.fabric
    if fabric.transport != "roce":
        return
    qos = fabric.qos
    groups: dict[tuple[str, int, str], Group] = defaultdict(Group)
    for dev, label, v in _switch_views(ctx):
        tc = v.tc_of_dscp(qos.cnp_dscp)
        if tc is None:
            continue
        queue = v.queue_of_tc(tc)
        sched = dev.schedulers.get(queue)
        if tc == qos.roce_priority:
            groups[(dev.name, tc, "it shares the RoCE class")].add(label, evidence_of(v.dscp_to_tc))
        elif sched is not None and sched.value != "strict":
            groups[(dev.name, tc, f"its queue {queue} is scheduled {sched.value}, not strict")].add(
                label, evidence_of(v.dscp_to_tc, sched)
            )
    for (dname, tc, what), g in sorted(groups.items()):
        yield meta.finding(
            target=g.target(),
            message=f"{dname}: CNP (DSCP {qos.cnp_dscp}) lands in TC {tc}; {what}",
            expected=f"TC {qos.cnp_priority}, strict priority",
            actual=f"TC {tc}, {what}",
            evidence=g.evidence,
            explanation=(
                "Congestion notification packets tell senders to slow down; queued behind the "
                "very data they throttle they arrive late and DCQCN reacts to congestion that "
                "already dropped or paused traffic. NVIDIA's default: CNP DSCP 48 on priority 6, "
                "strict (docs/references.md#ecn-dcqcn)."
            ),
            fix=(
                f"map DSCP {qos.cnp_dscp} to TC {qos.cnp_priority} and schedule that queue "
                "strict priority"
            ),
        )


@register("verify.queue-count")
def queue_count(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.queue-count"]
    qos = ctx.fabric.qos
    if len(qos.traffic_classes) > 3:
        yield meta.finding(
            target="qos.traffic_classes",
            message=f"the QoS intent defines {len(qos.traffic_classes)} traffic classes",
            expected="at most 3",
            actual=len(qos.traffic_classes),
            explanation="S14: RoCE, CNP and everything else; more classes split buffer and "
            "weight and add mapping steps to get wrong.",
            fix="fold the extra classes into best effort",
        )
    obs = ctx.observed
    if obs is None:
        return
    for dev in obs.switches():
        v = dev.whole()
        if v.dscp_to_tc is None:
            continue
        tcs = sorted({v.queue_of_tc(tc) for tc in v.dscp_to_tc.value.values()})
        if len(tcs) > 3:
            yield meta.finding(
                target=dev.name,
                message=f"{dev.name}: its DSCP map feeds {len(tcs)} queues ({fmt_set(tcs)})",
                expected="at most 3",
                actual=len(tcs),
                evidence=evidence_of(v.dscp_to_tc),
                explanation=(
                    "S14: ideally two queues (RoCE lossless and best effort) plus strict CNP. "
                    "Each further class takes buffer and scheduling weight and is one more "
                    "mapping step that can disagree between vendors."
                ),
                fix="map every DSCP other than RoCE's and CNP's to one best-effort class",
            )
