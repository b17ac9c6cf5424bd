"""PFC: on exactly the lossless priority (S12, S18, S21), the same on both ends of a link,
watched by a watchdog (S20.3), with enough headroom (docs/references.md#pfc-headroom)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import (
    Group,
    RoceEnd,
    dialect_of,
    evidence_of,
    fmt_set,
    roce_ends,
    roce_ports,
)
from aifabric.checks.verify._fixes import fix_pfc, fix_watchdog
from aifabric.findings import Finding
from aifabric.perf.hardware import pfc_headroom

__all__: list[str] = []


def _wanted(ctx: CheckContext) -> tuple[int, ...]:
    return tuple(sorted(ctx.fabric.qos.pfc_priorities))


@register("verify.pfc-priorities")
def pfc_priorities(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-priorities"]
    if ctx.fabric.transport != "roce":
        return
    qos = ctx.fabric.qos
    want = (qos.roce_priority,)
    groups: dict[tuple[str, tuple[int, ...]], Group] = defaultdict(Group)
    unknown: dict[str, Group] = defaultdict(Group)
    for e in roce_ports(ctx.fabric, ctx.observed):
        seen = e.view.pfc_priorities
        if seen is None:
            unknown[e.device.name].add(e.label)
            continue
        if tuple(sorted(seen.value)) != want:
            groups[(e.device.name, tuple(sorted(seen.value)))].add(e.label, evidence_of(seen))
    for (dev, prios), g in sorted(groups.items()):
        got = prios
        missing = qos.roce_priority not in got
        extra = sorted(set(got) - set(want))
        if missing and not got:
            what = f"PFC is off on {g.count()} RoCE port(s)"
            why = (
                "Without PFC on the RoCE priority the fabric is lossy for RoCE: every buffer "
                "overflow drops packets and RoCE's go-back-N retransmission collapses throughput "
                "(S12)."
            )
        elif missing:
            what = (
                f"PFC on priorities {fmt_set(got)} but not on the RoCE priority "
                f"{qos.roce_priority}, on {g.count()} RoCE port(s)"
            )
            why = (
                "RoCE on a priority without PFC is dropped under congestion (S12), while the "
                "paused priorities carry other traffic."
            )
        else:
            what = (
                f"PFC also on priorities {fmt_set(extra)} (enabled: {fmt_set(got)}) on "
                f"{g.count()} RoCE port(s)"
            )
            why = (
                "PFC belongs on the RoCE priority only (S12, S18). On more priorities a pause "
                "storm stops management, storage and best-effort traffic too and the cyclic "
                "buffer dependencies multiply: the seed's incident (S21) enabled PFC on all "
                "queues after an upgrade and froze the RoCE network for ten minutes."
            )
        if len(got) == 8:
            what += " (every priority)"
        yield meta.finding(
            target=g.target(),
            message=f"{dev}: {what}",
            expected=list(want),
            actual=list(got),
            evidence=g.evidence,
            explanation=why,
            fix=f"{dev}: " + fix_pfc(dialect_of(ctx.observed, dev), qos.roce_priority),
        )
    for dev, g in sorted(unknown.items()):
        if ctx.observed is not None and ctx.observed.devices[dev].role == "switch":
            yield meta.finding(
                target=g.target(),
                severity="info",
                message=f"{dev}: the configs do not state PFC for {g.count()} RoCE port(s)",
                expected=list(want),
                actual=None,
                explanation="Not checked: no PFC setting was found for these ports or the device.",
                fix="give --configs the PFC configuration of these ports (or the whole config)",
            )


@register("verify.pfc-symmetry")
def pfc_symmetry(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-symmetry"]
    if ctx.fabric.transport != "roce":
        return
    by_link: dict[str, list[RoceEnd]] = defaultdict(list)
    for e in roce_ends(ctx.fabric, ctx.observed):
        if e.view.pfc_priorities is not None:
            by_link[e.link.name].append(e)
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], Group] = defaultdict(Group)
    for name, ends in sorted(by_link.items()):
        if len(ends) != 2:
            continue
        a, b = ends
        assert a.view.pfc_priorities is not None and b.view.pfc_priorities is not None
        pa, pb = (
            tuple(sorted(a.view.pfc_priorities.value)),
            tuple(sorted(b.view.pfc_priorities.value)),
        )
        if pa != pb:
            # one group per pair of settings, whichever end is a or b
            key = (pa, pb) if (pa, pb) <= (pb, pa) else (pb, pa)
            groups[key].add(name, evidence_of(a.view.pfc_priorities, b.view.pfc_priorities))
    for (pa, pb), g in sorted(groups.items()):
        only_a = sorted(set(pa) - set(pb))
        only_b = sorted(set(pb) - set(pa))
        yield meta.finding(
            target=g.target(),
            message=(
                f"PFC priorities differ across {g.count()} link(s): {fmt_set(pa)} on one end, "
                f"{fmt_set(pb)} on the other"
            ),
            expected=list(pa),
            actual=list(pb),
            evidence=g.evidence,
            explanation=(
                "Pause is a contract between the two ends of a link: the receiver sends PAUSE "
                "for a priority and the sender must honour it. A priority paused by one end "
                "only "
                f"({fmt_set(only_a)} / {fmt_set(only_b)}) is lossy in one direction: the end "
                "that does not send PAUSE drops when its buffer fills, and the one that ignores "
                "PAUSE overruns its peer (S12)."
            ),
            fix=f"set the same PFC priorities ({fmt_set(_wanted(ctx))}) on both ends",
        )


@register("verify.pfc-watchdog")
def pfc_watchdog(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-watchdog"]
    if ctx.fabric.transport != "roce":
        return
    qos = ctx.fabric.qos
    if qos.pfc_priorities and (qos.pfc_watchdog is None or not qos.pfc_watchdog.enabled):
        yield meta.finding(
            target="qos.pfc_watchdog",
            message="the fabric's QoS intent has PFC but no PFC watchdog",
            expected="enabled",
            actual="absent" if qos.pfc_watchdog is None else "disabled",
            explanation=(
                "A PFC watchdog notices a queue that stays paused (a NIC sending endless "
                "PAUSE, or a deadlock) and drops or forwards its traffic, so one broken host "
                "cannot freeze the fabric (S20.3)."
            ),
            fix="set qos.pfc_watchdog (enabled: true, detection 200 ms, restoration 200 ms)",
        )
    groups: dict[str, Group] = defaultdict(Group)
    for e in roce_ports(ctx.fabric, ctx.observed):
        if e.device.role != "switch" or e.view.pfc_priorities is None:
            continue
        if not e.view.pfc_priorities.value:
            continue
        wd = e.view.pfc_watchdog
        if wd is None or not wd.value:
            groups[e.device.name].add(e.label, evidence_of(e.view.pfc_priorities, wd))
    for dev, g in sorted(groups.items()):
        yield meta.finding(
            target=g.target(),
            message=f"{dev}: {g.count()} PFC-enabled RoCE port(s) without a PFC watchdog",
            expected="watchdog on every PFC-enabled port",
            actual="none found in the config",
            evidence=g.evidence,
            explanation=(
                "Without a watchdog a pause storm or a PFC deadlock lasts until someone "
                "reboots a switch or a host (S20.3: the seed's symptom table, S21: a 10-minute "
                "freeze). The watchdog detects a queue paused longer than its detection time "
                "and drops its traffic until the pauses stop."
            ),
            fix=f"{dev}: " + fix_watchdog(dialect_of(ctx.observed, dev)),
        )


@register("verify.pfc-headroom")
def pfc_headroom_check(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-headroom"]
    if ctx.fabric.transport != "roce":
        return
    groups: dict[tuple[str, int, int], Group] = defaultdict(Group)
    detail: dict[tuple[str, int, int], str] = {}
    for e in roce_ports(ctx.fabric, ctx.observed):
        h = e.view.headroom_bytes
        speed = e.speed_gbps
        if e.device.role != "switch" or h is None or speed is None:
            continue
        cable = e.link.length_m if e.link is not None else None
        if cable is None and e.view.cable_length_m is not None:
            cable = e.view.cable_length_m.value
        assumed = cable is None
        if cable is None:
            cable = 5.0  # a short DAC: the least that can be assumed
        # the largest frame either end may send on this link: its MTU + 22 bytes of Ethernet
        # header, VLAN tag and FCS
        mtus = [e.view.mtu_bytes.value] if e.view.mtu_bytes is not None else []
        if e.link is not None:
            mtus.append(e.link.mtu_bytes)
        need = pfc_headroom(speed, cable, max(mtus or [9216]) + 22)
        minimum = int(need.inputs["minimum_bytes"])
        if h.value < minimum:
            key = (e.device.name, h.value, minimum)
            groups[key].add(e.label, evidence_of(h))
            detail[key] = (
                f"{need.formula}: at {speed:g} Gb/s over {cable:g} m"
                + (" (length unknown: assumed)" if assumed else "")
                + " with "
                f"{need.inputs['frame_bytes']}-byte frames the "
                f"unavoidable part (2 frames + PAUSE + cable round trip) is {minimum} bytes and "
                f"the IEEE upper bound {need.value} bytes "
                f"(cable {need.inputs['cable_round_trip_bytes']} B, interface "
                f"{need.inputs['interface_delay_bytes']} B, response "
                f"{need.inputs['response_delay_bytes']} B). Source: {need.sources[0]}."
            )
    for key, g in sorted(groups.items()):
        dev, have, minimum = key
        yield meta.finding(
            target=g.target(),
            message=(
                f"{dev}: lossless headroom {have} bytes on {g.count()} port(s), below the "
                f"{minimum} bytes in flight after XOFF"
            ),
            expected=minimum,
            actual=have,
            evidence=g.evidence,
            explanation=(
                "After a port sends XOFF, everything already on the wire and in the sender's "
                "pipeline still arrives; the headroom must hold it or the lossless priority "
                "drops. " + detail[key]
            ),
            fix=(
                "raise the lossless profile's xoff/headroom for this speed and cable length "
                "(or let the switch compute it: SONiC dynamic buffer model with the right "
                "CABLE_LENGTH)"
            ),
        )
