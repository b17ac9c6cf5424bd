"""SONiC ``config_db.json`` → :class:`ObservedDevice`, resolving bindings the way SONiC does.

* ``PORT_QOS_MAP|<port>`` binds a port's maps by name (``dscp_to_tc_map``,
  ``tc_to_queue_map``...), its PFC priorities (``pfc_enable``) and the PFC watchdog's lossless
  queues (``pfcwd_sw_enable``); the ``global`` entry (SONiC 202205+) binds device-wide maps.
  A named map that no port binds is not applied by SONiC; it is reported in ``notes``.
* Classification: a port with a ``dscp_to_tc_map`` trusts DSCP; with only a ``dot1p_to_tc_map``
  it trusts PCP. SONiC's DSCP map lists every DSCP (``qos_config.j2`` renders all 64), so an
  unlisted DSCP has no defined class here (``dscp_default_tc`` None).
* ``QUEUE|<port>|<q>`` binds a ``WRED_PROFILE`` (ECN when ``ecn`` is ``ecn_*``) and a
  ``SCHEDULER`` (``type: STRICT`` or ``DWRR``/``WRR``) to egress queues.
* ``BUFFER_PG|<port>|3-4`` binds a lossless ``BUFFER_PROFILE``; its ``xoff`` is the PFC
  headroom of that priority group (SONiC buffer design: headroom = xoff, ``size`` = xon+xoff
  for static profiles).
* ``PORT`` gives MTU, speed, admin state and lanes (for the neutral port names: see
  :func:`aifabric.dialects.ports.sonic_neutral_names`; when every front-panel port is broken
  out, no port shows the front-panel width, and the ``index`` field, shared by the sub-ports of
  one front-panel port, gives it instead: :func:`_neutral_by_index`);
  ``CABLE_LENGTH`` the cable per port; ``PFC_WD`` the watchdog per port.

Sources: sonic-buildimage ``files/build_templates/qos_config.j2`` and
``buffers_config.j2``; SONiC wiki "Configuration" and "PFC Watchdog Design";
sonic-swss ``doc/swss-schema.md`` (field meanings); docs/references.md#sonic-qos.
"""

from __future__ import annotations

import re

from aifabric.dialects.observed import EcnObs, ObservedDevice, PortView, Src, Val
from aifabric.dialects.ports import sonic_neutral_names
from aifabric.evidence.base import ParseResult
from aifabric.evidence.qos import (
    BufferProfile,
    DscpMap,
    EcnConfig,
    PfcWatchdog,
    PortQos,
    QueueSchedule,
    TcMap,
)
from aifabric.evidence.sonic_config import (
    BufferAssignment,
    BufferPool,
    CableLength,
    QueueConfig,
    SonicPort,
)

__all__ = ["interpret"]

_ETHERNET = re.compile(r"^Ethernet(\d+)$")


def _neutral_by_index(ports: list[SonicPort]) -> dict[str, str]:
    """Neutral names from ``PORT`` ``index`` when the lane counts alone cannot give them.

    Lane arithmetic takes the widest port's lane count as the front-panel width; when every
    front-panel port is broken out (4x100G on 400G ports) no port is that wide. The sub-ports
    of one front-panel port share its ``index``, so the width is the most lanes one index
    holds. Used only when that width exceeds the widest port and every port's first lane (its
    name) falls inside front-panel port ``index`` at that width (platforms that count
    ``index`` from 0 fail that test and keep the lane-based names); otherwise empty."""
    groups: dict[int, list[tuple[int, str, int]]] = {}
    for p in ports:
        m = _ETHERNET.match(p.port)
        if m is None or p.index is None or not p.lanes:
            return {}
        groups.setdefault(p.index, []).append((int(m.group(1)), p.port, len(p.lanes)))
    if not groups:
        return {}
    width = max(sum(n for _, _, n in g) for g in groups.values())
    widest = max(n for g in groups.values() for _, _, n in g)
    if width <= widest or any(
        first // width + 1 != idx for idx, g in groups.items() for first, _, _ in g
    ):
        return {}
    out: dict[str, str] = {}
    for idx, g in groups.items():
        for first, name, n in g:
            if len(g) == 1 and n == width:
                out[name] = f"Ethernet{idx}"
            else:
                out[name] = f"Ethernet{idx}/{(first % width) // n + 1}"
    return out


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read a parsed SONiC config_db into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="sonic", files=[file])
    dscp_maps: dict[str, DscpMap] = {}
    tc_maps: dict[tuple[str, str], TcMap] = {}
    wred: dict[str, EcnConfig] = {}
    schedulers: dict[str, QueueSchedule] = {}
    profiles: dict[str, BufferProfile] = {}
    port_qos: list[PortQos] = []
    queues: list[QueueConfig] = []
    pgs: list[BufferAssignment] = []
    ports: list[SonicPort] = []
    pools: list[BufferPool] = []
    watchdogs: list[PfcWatchdog] = []
    cables: list[CableLength] = []
    for rec in result.records:
        if isinstance(rec, DscpMap):
            dscp_maps[rec.name] = rec
        elif isinstance(rec, TcMap):
            tc_maps[(rec.kind, rec.name)] = rec
        elif isinstance(rec, EcnConfig):
            wred[rec.profile or rec.scope] = rec
        elif isinstance(rec, QueueSchedule):
            schedulers[rec.scheduler or rec.scope] = rec
        elif isinstance(rec, BufferProfile):
            profiles[rec.name] = rec
        elif isinstance(rec, PortQos):
            port_qos.append(rec)
        elif isinstance(rec, QueueConfig):
            queues.append(rec)
        elif isinstance(rec, BufferAssignment) and rec.kind == "pg":
            pgs.append(rec)
        elif isinstance(rec, SonicPort):
            ports.append(rec)
        elif isinstance(rec, BufferPool):
            pools.append(rec)
        elif isinstance(rec, PfcWatchdog):
            watchdogs.append(rec)
        elif isinstance(rec, CableLength):
            cables.append(rec)

    def src(line: int | None, text: str | None = None) -> Src:
        return Src(file, line, text)

    def view(port: str | None) -> PortView:
        if port is None:
            return dev.defaults
        if port not in dev.ports:
            dev.ports[port] = PortView(port=port)
        return dev.ports[port]

    for p in ports:
        v = view(p.port)
        if p.mtu_bytes is not None:
            v.mtu_bytes = Val(p.mtu_bytes, src(p.line, f'"mtu": "{p.mtu_bytes}"'))
        v.speed_gbps = p.speed_gbps
        if p.admin_status is not None:
            v.admin_up = p.admin_status == "up"
    lanes = {p.port: (len(p.lanes) or None) for p in ports}
    named = {*lanes, *(q.port for q in port_qos if q.port)}
    by_vendor = sonic_neutral_names((n, lanes.get(n)) for n in named)
    by_vendor.update(_neutral_by_index(ports))
    dev.neutral = {neutral: vendor for vendor, neutral in by_vendor.items()}

    bound_maps: set[str] = set()
    for pq in port_qos:
        v = view(pq.port)
        if pq.pfc_enable is not None:
            text = f'"pfc_enable": "{",".join(map(str, pq.pfc_enable))}"'
            v.pfc_priorities = Val(tuple(pq.pfc_enable), src(pq.line, text))
        elif pq.port is not None and pq.maps:
            # a port's PORT_QOS_MAP entry is where SONiC's qosorch reads pfc_enable: an entry
            # that binds maps but names no pfc_enable leaves PFC off on that port
            v.pfc_priorities = Val((), src(pq.line, f"PORT_QOS_MAP|{pq.port} without pfc_enable"))
        if pq.pfcwd_sw_enable is not None:
            v.pfc_watchdog = Val(bool(pq.pfcwd_sw_enable), src(pq.line, "pfcwd_sw_enable"))
        dscp_name = pq.maps.get("dscp_to_tc_map")
        if dscp_name is not None:
            bound_maps.add(dscp_name)
            m = dscp_maps.get(dscp_name)
            if m is None:
                dev.notes.append(
                    f"{file} line {pq.line}: {pq.scope} binds DSCP_TO_TC_MAP {dscp_name!r}, "
                    "which the file does not define"
                )
            else:
                v.dscp_to_tc = Val(dict(m.mapping), src(m.line, f"DSCP_TO_TC_MAP {m.name}"))
                v.trust = Val("dscp", src(pq.line, f'"dscp_to_tc_map": "{dscp_name}"'))
        elif "dot1p_to_tc_map" in pq.maps:
            v.trust = Val("pcp", src(pq.line, f'"dot1p_to_tc_map": "{pq.maps["dot1p_to_tc_map"]}"'))
        tcq = pq.maps.get("tc_to_queue_map")
        if tcq is not None and ("tc-to-queue", tcq) in tc_maps:
            tm = tc_maps[("tc-to-queue", tcq)]
            v.tc_to_queue = Val(dict(tm.mapping), src(tm.line, f"TC_TO_QUEUE_MAP {tm.name}"))
    for unbound in sorted(set(dscp_maps) - bound_maps):
        m = dscp_maps[unbound]
        if port_qos:
            dev.notes.append(
                f"{file} line {m.line}: DSCP_TO_TC_MAP {unbound!r} is bound to no port "
                "(PORT_QOS_MAP), so SONiC does not apply it"
            )
        else:
            # a fragment without PORT_QOS_MAP: the map is what the device will apply once bound
            dev.defaults.dscp_to_tc = Val(dict(m.mapping), src(m.line, f"DSCP_TO_TC_MAP {unbound}"))
            dev.notes.append(
                f"{file}: no PORT_QOS_MAP; DSCP_TO_TC_MAP {unbound!r} taken as the device's map"
            )

    sched_kind: dict[str, tuple[str, QueueSchedule]] = {}
    for sname, s in schedulers.items():
        kind = "strict" if s.strict_priority else "dwrr"
        sched_kind[sname] = (kind, s)
    for qc in queues:
        v = view(qc.port)
        qs = qc.queues
        if qc.wred_profile is not None:
            w = wred.get(qc.wred_profile)
            if w is None:
                # bound but not in this file (a configlet, a partial dump): marking unknown,
                # not absent
                v.ecn.append(
                    EcnObs(
                        queue=None,
                        queues=tuple(qc.queues),
                        kmin_bytes=None,
                        kmax_bytes=None,
                        probability_pct=None,
                        enabled=None,
                        src=src(qc.line, f"QUEUE {qc.key} wred_profile {qc.wred_profile}"),
                    )
                )
                dev.notes.append(
                    f"{file} line {qc.line}: QUEUE {qc.key} binds WRED_PROFILE "
                    f"{qc.wred_profile!r}, which the file does not define"
                )
            else:
                v.ecn.append(
                    EcnObs(
                        queue=None,
                        queues=tuple(qc.queues),
                        kmin_bytes=w.min_bytes,
                        kmax_bytes=w.max_bytes,
                        probability_pct=w.probability_pct,
                        enabled=w.ecn_enabled,
                        src=src(w.line, f"WRED_PROFILE {w.profile} (QUEUE {qc.key})"),
                        kmin_raw=w.min_raw,
                        kmax_raw=w.max_raw,
                    )
                )
        if qc.scheduler is not None and qc.scheduler in sched_kind:
            kind, s = sched_kind[qc.scheduler]
            for qn in qs:
                dev.schedulers.setdefault(qn, Val(kind, src(s.line, f"SCHEDULER {qc.scheduler}")))

    for pg in pgs:
        prof = profiles.get(pg.profile or "")
        if prof is None or not prof.lossless or prof.xoff_bytes is None:
            continue
        view(pg.port).headroom_bytes = Val(
            prof.xoff_bytes, src(prof.line, f"BUFFER_PROFILE {prof.name} xoff")
        )
    for wd in watchdogs:
        if wd.port is not None:
            view(wd.port).pfc_watchdog = Val(
                bool(wd.enabled), src(wd.line, f"PFC_WD {wd.port} action {wd.action}")
            )
    for c in cables:
        if c.length_m is not None:
            view(c.port).cable_length_m = Val(c.length_m, src(c.line, f"CABLE_LENGTH {c.raw}"))
    ingress = [p for p in pools if p.size_bytes and (p.pool_type or "ingress") == "ingress"]
    if ingress:
        big = max(ingress, key=lambda p: p.size_bytes or 0)
        assert big.size_bytes is not None
        dev.buffer_bytes = Val(big.size_bytes, src(big.line, f"BUFFER_POOL {big.name}"))
    dev.settle_defaults()
    return dev
