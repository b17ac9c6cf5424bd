"""PFC deadlock: cycles in the buffer dependency graph of the lossless priority (S12, S20.3).

The analysis is :func:`aifabric.topology.deadlock.analyze_deadlocks` (its docstring has the
graph and the three routing models). This check turns its report into at most three grouped
findings, one per kind of cycle:

* ``up-down``: a cycle under healthy ECMP routing (error; a correct CLOS never has one, so this
  means routing that is not valley-free: same-tier links used in transit, irregular wiring);
* ``stale-bounce``: single link failures after which a switch that lost its down link bounces
  traffic to a neighbour that sends it back up (before convergence, or under summarised routes);
* ``converged``: cycles that survive routing convergence.

Failure-induced cycles are errors; they are warnings when one mitigation holds: the QoS intent
has a PFC watchdog that drops or forwards (S20.3's mitigation: the deadlock still forms, but the
watchdog breaks it after its detection time), or, for bounce cycles, the switches' ASN plan makes
BGP refuse the bounce route (it then needs a summarised or default route to appear). With both,
bounce cycles are info. No cycle: no
finding. IB fabrics get one info finding (PFC does not apply; credit loops are ibdiagnet's
check); socket fabrics and fabrics without PFC priorities get none.
"""

from __future__ import annotations

from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding, Severity
from aifabric.topology.deadlock import Cycle, DeadlockReport, analyze_deadlocks

__all__: list[str] = []

_MECHANISM = (
    "PFC pauses the lossless priority per ingress queue: when the buffer at switch v for "
    "frames that came over link u->v fills, v pauses u (S12). A frame in that buffer that v "
    "forwards to w waits for room at w's ingress for v->w, so routing creates a dependency "
    "q(u->v) -> q(v->w) for every hop pair u->v->w. If the dependencies form a cycle, every "
    "buffer on it can be full and paused by the next one at the same time, and nothing ever "
    "drains: a PFC deadlock, the seed's S20.3 'all RoCE traffic suddenly frozen' (Hu et al., "
    "HotNets'16; Guo et al., SIGCOMM'16). Healthy up-down ECMP in a CLOS only climbs then "
    "descends, so its dependencies are acyclic; "
)


def _cycle_text(cycle: Cycle) -> str:
    return " => ".join(cycle.links) + " => (back to the first)"


def _names(names: tuple[str, ...], limit: int = 3) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def _severity(ctx: CheckContext) -> tuple[Severity, str]:
    wd = ctx.fabric.qos.pfc_watchdog
    if wd is not None and wd.enabled and wd.action in ("drop", "forward"):
        return (
            "warning",
            f"The QoS intent enables a PFC watchdog ({wd.action} after "
            f"{wd.detection_time_ms} ms), which breaks such a deadlock once it formed (S20.3): "
            "traffic of the priority still stops for that long and is dropped or sent lossy.",
        )
    return "error", "No PFC watchdog that drops or forwards is configured, so it would not clear."


@register("verify.pfc-deadlock")
def check(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-deadlock"]
    fabric = ctx.fabric
    if fabric.transport == "ib":
        yield meta.finding(
            target=f"fabric {fabric.name}",
            severity="info",
            message="InfiniBand fabric: PFC deadlock analysis does not apply",
            explanation=(
                "InfiniBand uses credit-based link-level flow control instead of PFC; its "
                "equivalent hazard is a credit loop, which the subnet manager's routing engine "
                "and ibdiagnet check."
            ),
            fix="run `ibdiagnet -r` on the live fabric to check for credit loops",
        )
        return
    if fabric.transport != "roce" or not fabric.qos.pfc_priorities:
        return
    report = analyze_deadlocks(fabric)
    if not report.applicable:
        return
    yield from _healthy(ctx, report)
    yield from _failures(ctx, report)


def _healthy(ctx: CheckContext, report: DeadlockReport) -> Iterator[Finding]:
    if not report.healthy_cycles:
        return
    meta = metadata()["verify.pfc-deadlock"]
    cycle = report.healthy_cycles[0]
    devices = sorted({q.split(":", 1)[0] for q in cycle.links})
    yield meta.finding(
        target=", ".join(devices[:4])
        + (f" and {len(devices) - 4} more" if len(devices) > 4 else ""),
        severity="error",
        message=(
            f"healthy ECMP routing has a buffer dependency cycle of {len(cycle.links)} queues "
            f"on the lossless priority {list(ctx.fabric.qos.pfc_priorities)}"
        ),
        expected="no cycle under up-down routing",
        actual=f"cycle through {len(cycle.links)} ingress queues",
        evidence=[f"cycle: {_cycle_text(cycle)}"],
        explanation=(
            _MECHANISM + "this fabric's routing is not (same-tier links used in transit or "
            "irregular wiring that makes shortest paths descend and climb again). Analysed: "
            f"{report.reason}."
        ),
        fix=(
            "make routing valley-free: remove or stop routing over the links on the cycle "
            "(peer links between switches of the same tier), wire every lower switch to the "
            "tier above it, or keep the lossless class off those links"
        ),
    )


_TITLES = {
    "stale-bounce": (
        "before routing converges or under summarised routes",
        "upstream switches keep their ECMP sets, the switch that lost its down link bounces "
        "the traffic to another neighbour that still has a route, and that neighbour sends it "
        "back up by its own ECMP set, the failed-link switch included: the dependencies "
        "climb after descending and close on themselves",
    ),
    "converged": (
        "even after routing converged",
        "the shortest paths after the failure descend and climb again through other switches "
        "(bounce paths) and their dependencies close a cycle",
    ),
}


def _failures(ctx: CheckContext, report: DeadlockReport) -> Iterator[Finding]:
    meta = metadata()["verify.pfc-deadlock"]
    severity, watchdog = _severity(ctx)
    converged_clean = report.failure_counts.get("converged", 0) == 0
    for model, (when, how) in _TITLES.items():
        count = report.failure_counts.get(model, 0)
        if count == 0:
            continue
        sample = report.failures[model][0]
        failed = report.failed_links.get(model, [])
        cycle = sample.cycle
        devices = sorted({q.split(":", 1)[0] for q in cycle.links})
        level = severity
        asn = ""
        if sample.asn_rejects:
            # both mitigations (BGP refuses the bounce, a watchdog breaks what forms under
            # summarised routes): what is left is worth knowing, not fixing
            level = "info" if severity == "warning" else "warning"
            asn = (
                " The switches' ASN plan puts the bouncing switch's ASN on every path of its "
                "bounce neighbours (RFC 7938: spines of a tier share one ASN), so BGP's AS-path "
                "check refuses those routes and the bounce needs a summarised or default route "
                "(or an IGP) on that switch to happen."
            )
        only_before = (
            "; none once routing has converged"
            if model == "stale-bounce" and converged_clean
            else ""
        )
        yield meta.finding(
            target=", ".join(devices[:4]),
            severity=level,
            message=(
                f"{count} of {report.switch_links} single switch-link failures create a PFC "
                f"buffer dependency cycle {when}{only_before}"
            ),
            expected="no buffer dependency cycle after any single link failure",
            actual=f"{count} failures with a cycle",
            evidence=[
                *(f"failure: {name}" for name in failed),
                f"cycle after {sample.failed_link} (to {_names(cycle.destinations)}): "
                f"{_cycle_text(cycle)}",
            ],
            explanation=(
                _MECHANISM + f"after a failure {how}. Example: with {sample.failed_link} down, "
                f"traffic to {_names(cycle.destinations)} goes round "
                f"{_cycle_text(cycle)}.{asn} {watchdog} Analysed: {report.reason}."
            ),
            fix=(
                "keep bounce traffic off the lossless class: enable the PFC watchdog on every "
                "switch (S20.3); do not summarise leaf routes on spines or leaves, so a switch "
                "that loses its last down link withdraws the route and upstream stops sending "
                "to it; use the RFC 7938 ASN plan (spines of a tier share one ASN) so BGP "
                "rejects the leaf-spine-leaf bounce path; or re-mark bounced traffic to another "
                "priority (Tagger, CoNEXT'17)"
            ),
        )
