"""Cisco NX-OS running-config → :class:`ObservedDevice`, resolving policies the way NX-OS does.

The lossless chain is built from policies that only act once attached:

* **Classification** (``policy-map type qos``): ``class`` → ``match dscp|cos`` (its
  ``class-map type qos``) → ``set qos-group N``. The qos-group is the traffic class. A policy
  acts where it is attached: ``system qos`` → ``service-policy type qos input P`` for every
  port, an interface's own ``service-policy type qos input P`` for that port (overriding).
  DSCP matches give ``dscp_to_tc`` (trust ``dscp``); unmatched DSCPs fall in
  ``class-default``, qos-group 0 (``dscp_default_tc`` 0); CoS-only matches give trust ``pcp``
  and no DSCP map.
* **No-drop classes** (``policy-map type network-qos``, attached only under ``system qos``):
  ``pause pfc-cos N`` / ``pause no-drop`` make the class lossless, ``mtu`` sets its frame
  size. The device's PFC priorities are those classes' CoS; its MTU is the lossless class's
  MTU (else ``class-default``'s). An interface's own ``mtu`` overrides for that port.
* **Per-port PFC**: ``priority-flow-control mode on`` forces PFC on the no-drop classes,
  ``off`` disables it (priorities ``()``); ``auto`` (the default) enables it only when DCBX
  agrees with the peer, so ports left at auto keep the device's classes and are listed in a
  note. ``priority-flow-control watch-dog-interval on`` (global or per port) turns the PFC
  watchdog on.
* **Egress** (``policy-map type queuing``, ``system qos`` ``type queuing output`` or an
  interface's own): ``priority level 1`` → ``strict``; ``bandwidth [remaining] percent`` →
  ``dwrr``; ``random-detect minimum-threshold X kbytes maximum-threshold Y kbytes ... ecn``
  → ECN on that class's queue (without ``ecn`` it is WRED drop: ``enabled`` False).
* **qos-group → queue**: on 8-queue platforms the system queuing classes ``c-out-8q-qN``
  match ``qos-group N`` (Cisco Nexus 9000 NX-OS QoS Configuration Guide, "Configuring
  Queuing and Scheduling", system-defined type queuing class maps), so the map is identity,
  recorded with ``Src(default=True)`` when such classes are used.
* A policy that is defined but attached nowhere, and an attachment naming a policy the file
  does not define, are noted. A file with no ``system qos`` at all (a fragment) takes its
  only network-qos / queuing policy as the device's, with a note.
* **MTU**: an interface block shown without ``mtu`` runs at the NX-OS default 1500 bytes
  (``Src(default=True)``, quoting the block's line) after taking its port-channel's MTU
  if it is a member; this is what makes a jumbo-less peer link visible.
* Interface ranges (``Ethernet1/1/1 - 2``, ``ethernet1/11-20``) expand to each port;
  ``channel-group N`` members take what they do not state from ``port-channelN``;
  ``Ethernet1/7`` and ``Ethernet1/7/2`` get neutral names (``dialects.ports``).

Sources: Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide 10.5(x)
("Configuring Network QoS", "Configuring Queuing and Scheduling", "Configuring Priority Flow
Control"; https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/);
AMD ROCm "RoCE network configuration" (N9364E example); Microsoft Azure Local ToR reference
configurations. Seed S11-S14, S18.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aifabric.dialects.eos import expand_interfaces, inherit_from_port_channel
from aifabric.dialects.observed import EcnObs, ObservedDevice, PortView, Src, Val
from aifabric.dialects.ports import nxos_neutral
from aifabric.evidence.base import ParseResult
from aifabric.evidence.qos import (
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    PfcWatchdog,
    PortQos,
    QueueSchedule,
    TcMap,
)

__all__ = ["NXOS_DEFAULT_MTU", "interpret"]

NXOS_DEFAULT_MTU = 1500
"""Interface MTU when an interface block states none (Cisco Nexus 9000 NX-OS Interfaces
Configuration Guide, "Configuring Layer 2 Interfaces": default MTU 1500 bytes)."""

_CLASS_SCOPE = re.compile(r"^policy-map (\S+) class (\S+)$")


@dataclass(slots=True)
class _Policy:
    """One policy-map as the records describe it."""

    name: str
    kind: str  # qos | network-qos | queuing
    line: int
    dscp: DscpMap | None = None
    cos: TcMap | None = None
    pause: list[PfcConfig] = field(default_factory=list)
    mtu: dict[str, Mtu] = field(default_factory=dict)
    ecn: list[EcnConfig] = field(default_factory=list)
    sched: list[QueueSchedule] = field(default_factory=list)


@dataclass(slots=True)
class _Iface:
    qos: PortQos | None = None
    pfc: PfcConfig | None = None
    mtu: Mtu | None = None
    watchdog: PfcWatchdog | None = None


def _policy_of(scope: str) -> tuple[str, str | None]:
    m = _CLASS_SCOPE.match(scope)
    if m is not None:
        return m.group(1), m.group(2)
    if scope.startswith("policy-map "):
        return scope.split(None, 1)[1], None
    return scope, None


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read a parsed NX-OS running-config into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="nxos", files=[file])
    policies: dict[str, _Policy] = {}
    ifaces: dict[str, _Iface] = {}
    system: PortQos | None = None
    global_wd: list[PfcWatchdog] = []

    def policy(scope: str, kind: str, line: int) -> tuple[_Policy, str | None]:
        pname, cls = _policy_of(scope)
        pol = policies.setdefault(pname, _Policy(pname, kind, line))
        pol.line = min(pol.line, line)
        return pol, cls

    for rec in result.records:
        port = getattr(rec, "port", None)
        if isinstance(rec, DscpMap):
            policy(rec.scope, "qos", rec.line)[0].dscp = rec
        elif isinstance(rec, TcMap) and rec.kind == "cos-to-qos-group":
            policy(rec.scope, "qos", rec.line)[0].cos = rec
        elif isinstance(rec, PortQos) and rec.scope == "system qos":
            system = rec
        elif port is not None:
            bag = ifaces.setdefault(port, _Iface())
            if isinstance(rec, PortQos):
                bag.qos = rec
            elif isinstance(rec, PfcConfig):
                bag.pfc = rec
            elif isinstance(rec, Mtu):
                bag.mtu = rec
            elif isinstance(rec, PfcWatchdog):
                bag.watchdog = rec
        elif isinstance(rec, PfcConfig):
            policy(rec.scope, "network-qos", rec.line)[0].pause.append(rec)
        elif isinstance(rec, Mtu):
            pol, cls = policy(rec.scope, "network-qos", rec.line)
            pol.mtu[cls or ""] = rec
        elif isinstance(rec, EcnConfig):
            policy(rec.scope, "queuing", rec.line)[0].ecn.append(rec)
        elif isinstance(rec, QueueSchedule):
            policy(rec.scope, "queuing", rec.line)[0].sched.append(rec)
        elif isinstance(rec, PfcWatchdog):
            global_wd.append(rec)

    attached: set[str] = set()
    missing: dict[tuple[str, str], tuple[int, list[str]]] = {}
    sysmaps = system.maps if system is not None else {}

    def lookup(pname: str | None, kind: str, line: int, where: str) -> _Policy | None:
        if pname is None:
            return None
        attached.add(pname)
        pol = policies.get(pname)
        if pol is None:
            missing.setdefault((kind, pname), (line, []))[1].append(where)
        return pol

    def lone(kind: str) -> _Policy | None:
        cands = [p for p in policies.values() if p.kind == kind]
        if system is None and len(cands) == 1:
            dev.notes.append(
                f"{file}: no 'system qos' in the file; policy-map type {kind} {cands[0].name} "
                "taken as the device's"
            )
            attached.add(cands[0].name)
            return cands[0]
        return None

    sline = system.line if system is not None else 0
    nq = lookup(sysmaps.get("type network-qos"), "network-qos", sline, "system qos") or lone(
        "network-qos"
    )
    queuing = lookup(sysmaps.get("type queuing output"), "queuing", sline, "system qos") or lone(
        "queuing"
    )
    classify = lookup(_qos_input(sysmaps), "qos", sline, "system qos")

    d = dev.defaults
    nq_prios: Val[tuple[int, ...]] | None = None
    if nq is not None:
        nq_prios = _nq_pfc(dev, nq, file)
        d.pfc_priorities = nq_prios
        d.mtu_bytes = _nq_mtu(nq, file)
    if queuing is not None:
        _queuing(dev, d, queuing, file)
    if classify is not None:
        _classify(d, classify, file)
    wd_on = next((w for w in global_wd if w.enabled), None)
    if wd_on is not None:
        d.pfc_watchdog = Val(
            True, Src(file, wd_on.line, "priority-flow-control watch-dog-interval on")
        )

    members: dict[str, str] = {}
    pc_mtu: dict[str, Mtu] = {}
    auto_ports: list[str] = []
    first_line: dict[str, int] = {}
    pfc_on: set[str] = set()
    for written, bag in ifaces.items():
        maps = bag.qos.maps if bag.qos is not None else {}
        line = bag.qos.line if bag.qos is not None else 0
        own_classify = lookup(_qos_input(maps), "qos", line, written)
        own_queuing = lookup(maps.get("type queuing output"), "queuing", line, written)
        block_line = bag.qos.line if bag.qos is not None else None
        for port in expand_interfaces(written):
            view = dev.ports.setdefault(port, PortView(port=port))
            if block_line is not None:
                first_line[port] = block_line
            if own_classify is not None:
                _classify(view, own_classify, file)
            if own_queuing is not None:
                _queuing(dev, view, own_queuing, file)
            if bag.mtu is not None:
                view.mtu_bytes = Val(
                    bag.mtu.mtu_bytes, Src(file, bag.mtu.line, f"mtu {bag.mtu.mtu_bytes}")
                )
                if port.lower().startswith("port-channel"):
                    pc_mtu[port.lower()] = bag.mtu
            if bag.pfc is not None:
                mode = bag.pfc.mode or ""
                text = f"priority-flow-control mode {mode}"
                if mode.startswith("off"):
                    view.pfc_priorities = Val((), Src(file, bag.pfc.line, text))
                elif mode.startswith("on") and nq_prios is None:
                    pfc_on.add(port)
                elif mode.startswith("on") and nq_prios is not None:
                    view.pfc_priorities = Val(
                        nq_prios.value, Src(file, bag.pfc.line, f"{text} + {nq_prios.src.text}")
                    )
                elif mode.startswith("auto"):
                    auto_ports.append(port)
            elif not port.lower().startswith(("port-channel", "vlan", "loopback", "mgmt")):
                auto_ports.append(port)
            if bag.watchdog is not None:
                w = bag.watchdog
                view.pfc_watchdog = Val(
                    bool(w.enabled), Src(file, w.line, "priority-flow-control watch-dog-interval")
                )
            if "channel-group" in maps:
                members[port] = f"port-channel{maps['channel-group']}"
    inherit_from_port_channel(dev, members, pc_mtu, file)
    for port, view in dev.ports.items():
        if view.mtu_bytes is None and port in first_line:
            view.mtu_bytes = Val(
                NXOS_DEFAULT_MTU,
                Src(file, first_line[port], f"{port}: no mtu (NX-OS default 1500)", default=True),
            )
    if auto_ports and nq_prios is not None and nq_prios.value:
        shown = ", ".join(auto_ports[:4]) + (", ..." if len(auto_ports) > 4 else "")
        dev.notes.append(
            f"{file}: {len(auto_ports)} interfaces ({shown}) leave priority-flow-control at mode "
            "auto: PFC runs there only if DCBX agrees with the peer"
        )
    for (kind, pname), (line, wheres) in missing.items():
        shown = ", ".join(wheres[:4]) + (", ..." if len(wheres) > 4 else "")
        dev.notes.append(
            f"{file} line {line}: {shown} attach{'es' if len(wheres) == 1 else ''} {kind} "
            f"policy {pname}, which the file does not define"
        )
    forced = [p for p, v in dev.ports.items() if v.pfc_priorities is None and p in pfc_on]
    if forced and nq_prios is None:
        shown = ", ".join(forced[:4]) + (", ..." if len(forced) > 4 else "")
        dev.notes.append(
            f"{file}: priority-flow-control mode on at {len(forced)} interfaces ({shown}) but no "
            "network-qos policy with a pause class in the file: the no-drop CoS is unknown"
        )
    for pname in sorted(set(policies) - attached):
        pol = policies[pname]
        dev.notes.append(
            f"{file} line {pol.line}: policy-map type {pol.kind} {pname} is attached nowhere "
            "(no service-policy names it), so NX-OS does not apply it"
        )
    if nq is None and any(p.kind == "network-qos" for p in policies.values()):
        dev.notes.append(f"{file}: no network-qos policy under system qos: no no-drop class")
    return dev.finish(nxos_neutral)


def _qos_input(maps: dict[str, str]) -> str | None:
    return maps.get("type qos input") or maps.get("input")


def _nq_pfc(dev: ObservedDevice, nq: _Policy, file: str) -> Val[tuple[int, ...]] | None:
    prios: set[int] = set()
    first = None
    for p in nq.pause:
        if not p.priorities:
            dev.notes.append(
                f"{file} line {p.line}: 'pause no-drop' in {p.scope}: the class's CoS is not "
                "in the file (system class without a queue number, no 'match qos-group')"
            )
            continue
        prios.update(p.priorities)
        first = first or p
    if first is None:
        if nq.pause:
            return None
        return Val((), Src(file, nq.line, f"policy-map type network-qos {nq.name}: no pause class"))
    cos = ",".join(map(str, sorted(prios)))
    return Val(
        tuple(sorted(prios)),
        Src(file, first.line, f"pause pfc-cos {cos} (policy-map type network-qos {nq.name})"),
    )


def _nq_mtu(nq: _Policy, file: str) -> Val[int] | None:
    lossless = {_policy_of(p.scope)[1] for p in nq.pause}
    pick = next((m for cls, m in nq.mtu.items() if cls in lossless), None)
    if pick is None:
        pick = next((m for cls, m in nq.mtu.items() if cls.endswith("default")), None)
    if pick is None:
        return None
    cls = _policy_of(pick.scope)[1]
    return Val(pick.mtu_bytes, Src(file, pick.line, f"mtu {pick.mtu_bytes} (class {cls})"))


def _classify(view: PortView, pol: _Policy, file: str) -> None:
    if pol.dscp is not None:
        text = f"policy-map type qos {pol.name}: match dscp → set qos-group"
        view.dscp_to_tc = Val(dict(pol.dscp.mapping), Src(file, pol.dscp.line, text))
        view.dscp_default_tc = 0  # class-default → qos-group 0
        view.trust = Val("dscp", Src(file, pol.dscp.line, text))
    elif pol.cos is not None:
        view.trust = Val(
            "pcp", Src(file, pol.cos.line, f"policy-map type qos {pol.name}: match cos")
        )


def _queuing(dev: ObservedDevice, view: PortView, pol: _Policy, file: str) -> None:
    view.ecn = []
    eight_q = False
    for e in pol.ecn:
        cls = _policy_of(e.scope)[1] or ""
        eight_q = eight_q or "-8q-" in cls
        view.ecn.append(
            EcnObs(
                queue=e.queue,
                kmin_bytes=e.min_bytes,
                kmax_bytes=e.max_bytes,
                probability_pct=e.probability_pct,
                enabled=e.ecn_enabled,
                src=Src(file, e.line, f"random-detect minimum-threshold {e.min_raw} "
                        f"maximum-threshold {e.max_raw}{' ecn' if e.ecn_enabled else ''} "
                        f"(class {cls})"),
                kmin_raw=e.min_raw,
                kmax_raw=e.max_raw,
            )
        )  # fmt: skip
        if e.queue is None:
            dev.notes.append(f"{file} line {e.line}: WRED/ECN on class {cls}: queue unknown")
    for q in pol.sched:
        cls = _policy_of(q.scope)[1] or ""
        eight_q = eight_q or "-8q-" in cls
        if q.queue is None:
            dev.notes.append(f"{file} line {q.line}: class {cls}: queue unknown, not scheduled")
            continue
        kind = "strict" if q.strict_priority else "dwrr"
        text = "priority level 1" if q.strict_priority else f"bandwidth percent ({cls})"
        if view is dev.defaults or q.queue not in dev.schedulers:
            dev.schedulers.setdefault(q.queue, Val(kind, Src(file, q.line, text)))
    if eight_q:
        view.tc_to_queue = Val(
            {g: g for g in range(8)},
            Src(file, pol.line, "NX-OS 8q: c-out-8q-qN matches qos-group N", default=True),
        )
