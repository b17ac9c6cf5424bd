"""ECN on the RoCE queue (S13, S18; docs/references.md#ecn-dcqcn).

Judged per switch: marking present on the queue RoCE lands in, ECN (not WRED drop) mode,
``Kmin < Kmax``, ``Kmax`` within the buffer a port can use, ``Kmin`` above a couple of frames.
The seed's rule (thresholds at 30-50% of the port buffer, S13) and the published defaults are
shown side by side in the explanation, scaled to the link speed where the source scales them:

* NVIDIA Spectrum RoCE lossless default: Kmin 150 KB, Kmax 1500 KB (Onyx/Cumulus ``show roce``).
* SONiC ``AZURE_LOSSLESS``: 1 MiB / 2 MiB, 5% (qos_config.j2).
* HPCC ns-3 / SimAI: 100/400 KB at 25G up to 800/3200 KB at 400G (scaled with speed).
* DCQCN paper (SIGCOMM'15): 5 KB / 200 KB at 40G, Pmax 1%.
* The seed's S18 sketch: 50 KB / 100 KB.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import Group, dialect_of, roce_ports
from aifabric.checks.verify._fixes import fix_ecn
from aifabric.dialects.observed import EcnObs, ObservedDevice
from aifabric.findings import Finding, Severity
from aifabric.model import fabric_index
from aifabric.perf.ecn_reference import KB, reference_thresholds

__all__ = ["reference_thresholds"]


def _port_buffer(dev: ObservedDevice, ctx: CheckContext) -> tuple[int | None, str]:
    """The buffer one port can use (shared buffer / ports), and where it comes from."""
    idx = fabric_index(ctx.fabric)
    sw = idx.switches.get(dev.name)
    total: int | None = None
    where = ""
    if dev.buffer_bytes is not None:
        total, where = dev.buffer_bytes.value, str(dev.buffer_bytes.src)
    elif sw is not None and sw.buffer_bytes:
        total, where = sw.buffer_bytes, f"fabric file: {sw.name} buffer_bytes"
    elif sw is not None and sw.model:
        model = ctx.catalog.switches.get(sw.model)
        buf = model.buffer_bytes if model is not None else None
        if buf:
            total, where = buf, f"catalog: {sw.model} buffer_bytes"
    if total is None:
        return None, ""
    ports = sw.ports if sw is not None else max(len(dev.ports), 1)
    return total // max(ports, 1), f"{where} / {ports} ports"


@register("verify.ecn-thresholds")
def ecn_thresholds(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.ecn-thresholds"]
    fabric = ctx.fabric
    if fabric.transport != "roce":
        return
    qos = fabric.qos
    groups: dict[tuple[str, str], Group] = defaultdict(Group)
    details: dict[tuple[str, str], tuple[str, str, float | None]] = {}
    seen: set[str] = set()
    ends = [(e.device, e.label, e.view, e.speed_gbps) for e in roce_ports(fabric, ctx.observed)]
    for dev, label, v, speed in ends:
        if dev.role != "switch":
            continue
        seen.add(dev.name)
        # the lossless class's queue: where RoCE lands instead is verify.dscp-chain's finding
        queue = v.queue_of_tc(qos.roce_priority)
        marks = [m for m in v.ecn if m.covers(queue)]
        port_buf, buf_src = _port_buffer(dev, ctx)
        if not marks:
            if v.ecn_unread is not None:
                continue  # ECN unknown here (listed as not checked), not absent
            if v.ecn or v.dscp_to_tc is not None or v.pfc_priorities is not None:
                key = (dev.name, f"no ECN marking on queue {queue}")
                groups[key].add(label)
                details[key] = ("", buf_src, speed)
            continue
        for m in marks:
            problem = _problem(m, port_buf)
            if problem is None:
                continue
            key = (dev.name, problem)
            groups[key].add(label, [m.src.evidence()])
            details[key] = (_thresholds(m), buf_src, speed)
    for (dname, problem), g in sorted(groups.items()):
        shown, buf_src, speed = details[(dname, problem)]
        port_buf = None
        if ctx.observed is not None and dname in ctx.observed.devices:
            port_buf, _ = _port_buffer(ctx.observed.devices[dname], ctx)
        severity: Severity | None = _SEVERITY.get(problem)
        yield meta.finding(
            target=g.target(),
            severity=severity,
            message=f"{dname}: {problem} on {g.count()} RoCE port(s){shown}",
            expected="ECN on the RoCE queue, Kmin < Kmax <= port buffer",
            actual=problem,
            evidence=g.evidence,
            explanation=(
                "DCQCN slows senders only when switches mark ECN before the queue fills: "
                "marking too late (Kmax near the buffer) leaves PFC to do the work and spreads "
                "pauses, marking too early (Kmin of a few frames) throttles on every burst "
                "(S13). References side by side: "
                + reference_thresholds(speed, port_buf)
                + (f". Port buffer share from {buf_src}." if buf_src else ".")
            ),
            fix=(
                f"{dname}: "
                + fix_ecn(dialect_of(ctx.observed, dname), qos.roce_priority)
                + " (NVIDIA's 150 KB / 1500 KB; tune with the ECN-marked ratio under load, S22)"
            ),
        )


def _thresholds(m: EcnObs) -> str:
    lo = f"{m.kmin_bytes // KB} KB" if m.kmin_bytes is not None else (m.kmin_raw or "?")
    hi = f"{m.kmax_bytes // KB} KB" if m.kmax_bytes is not None else (m.kmax_raw or "?")
    return f" (Kmin {lo}, Kmax {hi})"


_SEVERITY: dict[str, Severity] = {
    "Kmin above Kmax": "error",
    # DCTCP-style single threshold K (Microsoft's Azure Local guidance uses 300 KB / 300 KB):
    # valid, but DCQCN's rate control is tuned for a probability ramp between Kmin and Kmax
    "Kmin equal to Kmax (step marking)": "info",
    # a shared buffer lets one congested port take more than its 1/N share (dynamic
    # thresholds), so this is a note: the marking may start later than S13 intends
    "Kmax above the port's buffer share": "info",
}


def _problem(m: EcnObs, port_buf: int | None) -> str | None:
    if m.enabled is False:
        return "WRED drops instead of ECN marking on the RoCE queue"
    lo, hi = m.kmin_bytes, m.kmax_bytes
    if lo is not None and hi is not None and lo > hi:
        return "Kmin above Kmax"
    if lo is not None and hi is not None and lo == hi:
        return "Kmin equal to Kmax (step marking)"
    if hi is not None and port_buf is not None and hi > port_buf:
        return "Kmax above the port's buffer share"
    if lo is not None and lo < 2 * 9216:
        return "Kmin below two jumbo frames"
    return None
