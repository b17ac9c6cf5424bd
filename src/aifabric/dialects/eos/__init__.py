"""Arista EOS running-config → :class:`ObservedDevice`, resolving scopes the way EOS does.

* **Classification.** The DSCP → traffic-class map is global. EOS ships a default map and each
  ``qos map dscp <list> to traffic-class N`` line overrides only the DSCPs it names, so the
  effective map is the default with those entries replaced. The default (EOS User Manual,
  "Quality of Service", default DSCP-to-traffic-class tables for the Arad, Jericho, Trident,
  Trident II and Tomahawk platform families) is::

      DSCP   0-7  8-15  16-23  24-31  32-39  40-47  48-55  56-63
      TC       1     0      2      3      4      5      6      7

  (note the swap of TC 0 and 1 at the low end). It is applied only where the file states no
  map at all, marked ``Src(default=True)``; so RoCE's DSCP 26 lands in TC 3 and CNP's DSCP 48
  in TC 6 even on a switch without ``qos map`` lines (S11). ``qos map traffic-class N to
  tx-queue Q`` overrides the (identity) TC → queue map the same way.
* **Trust.** ``qos trust dscp|cos`` on an interface, in the ``qos profile`` it binds, or
  globally (in that order of precedence). The file does not say when it is left at the EOS
  default (DSCP on routed ports, CoS on switched ports), so it stays unknown.
* **Profiles.** ``qos profile NAME`` blocks apply to the interfaces that say
  ``service-profile NAME``; settings stated on the interface itself override the profile's
  (PFC, trust, ECN per queue, watchdog). A profile bound to no interface is not applied (one
  note); a ``service-profile`` naming no profile in the file is noted too.
* **PFC.** ``priority-flow-control on`` switches PFC on for the port; the lossless priorities
  are the ``priority-flow-control priority N no-drop`` lines. Without ``on`` the no-drop lines
  do nothing (PFC is off on the port: priorities ``()``, and a note), ``no
  priority-flow-control`` / ``off`` turn it off, and the global ``priority-flow-control all
  off`` turns it off on every interface whatever they say. ``dcbx mode ieee`` is recorded only
  in notes (the priorities are static either way).
* **ECN.** ``tx-queue`` / ``uc-tx-queue N`` with ``random-detect ecn minimum-threshold X unit
  maximum-threshold Y unit``: bytes, kbytes (×1024), mbytes (×1024²). Thresholds in
  ``segments`` (buffer cells, whose size is platform-specific and not documented per
  platform) or ``milliseconds`` keep ``kmin_bytes``/``kmax_bytes`` None and the raw text.
* **Scheduling.** ``priority strict`` → ``strict``; ``no priority`` → ``dwrr`` (weighted
  round robin by ``bandwidth percent``). A queue with only ``bandwidth percent`` has no stated
  mode and is left out.
* **Watchdog.** ``priority-flow-control pause watchdog`` on a port or its profile enables it
  there; globally the watchdog counts as on once a ``default timeout`` is set.
* **MTU.** ``mtu`` per interface; a ``channel-group N`` member without its own MTU takes
  ``Port-ChannelN``'s (the L3 MTU lives on the port-channel).
* Interface ranges (``interface Ethernet1-4``, ``Ethernet1/1-2,Ethernet1/5``) expand to each
  port; ``Ethernet7`` / ``Ethernet7/1`` get neutral names (``dialects.ports``).

Sources: Arista EOS User Manual chapters "Quality of Service" (default maps, trust, tx-queue
scheduling, ECN) and "Priority Flow Control" (``priority-flow-control on``, no-drop
priorities, pause watchdog), https://www.arista.com/en/um-eos ; AVD ``eos_cli_config_gen``
molecule configs; AMD ROCm "RoCE network configuration" (Arista 7388 DCQCN example). Seed
S11-S14, S18.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aifabric.dialects.observed import EcnObs, ObservedDevice, PortView, Src, Val
from aifabric.dialects.ports import eos_neutral
from aifabric.evidence.base import ParseResult
from aifabric.evidence.qos import (
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    PfcWatchdog,
    PortQos,
    QosSetting,
    QueueSchedule,
    TcMap,
)

__all__ = ["EOS_DEFAULT_DSCP_TO_TC", "expand_interfaces", "inherit_from_port_channel", "interpret"]

EOS_DEFAULT_DSCP_TO_TC: dict[int, int] = {
    d: (1 if d < 8 else 0 if d < 16 else d // 8) for d in range(64)
}
"""EOS default DSCP → traffic class: 0-7 → 1, 8-15 → 0, then ``dscp // 8`` (EOS manual)."""

_TRUST = {"dscp": "dscp", "cos": "pcp", "disabled": "none"}
_ITEM_RE = re.compile(r"^([A-Za-z][A-Za-z-]*?)\s*(\d.*)$")
_RANGE_RE = re.compile(r"^((?:\d+/)*)(\d+)-(?:\1)?(\d+)$")
_MAX_RANGE = 512


def expand_interfaces(spec: str) -> list[str]:
    """Interface names of a (range) spec, as EOS and NX-OS print or accept them.

    ``Ethernet1/1/1 - 2`` → ``Ethernet1/1/1``, ``Ethernet1/1/2``; ``Ethernet1-4`` → four;
    ``Ethernet1/1-2,Ethernet1/5`` and ``Ethernet1/1-2, 1/5`` → three; ``ethernet1/11-12`` →
    ``Ethernet1/11``, ``Ethernet1/12``; anything unreadable comes back unchanged.
    """
    s = re.sub(r"(?:(?<!\s)\s*+)?-\s*", "-", spec.strip())  # blanks read once: linear
    out: list[str] = []
    prefix = ""
    for item in (i.strip() for i in s.split(",")):
        if not item:
            continue
        m = _ITEM_RE.match(item)
        if m is not None:
            prefix = m.group(1)
            if prefix.lower() == "ethernet":
                prefix = "Ethernet"
            body = m.group(2)
        else:
            body = item
        if not prefix or not body[:1].isdecimal():
            return [spec.strip()]
        r = _RANGE_RE.match(body)
        if r is None:
            out.append(prefix + body)
            continue
        lo, hi = int(r.group(2)), int(r.group(3))
        if hi < lo or hi - lo > _MAX_RANGE:
            return [spec.strip()]
        out.extend(f"{prefix}{r.group(1)}{n}" for n in range(lo, hi + 1))
    return out or [spec.strip()]


@dataclass(slots=True)
class _Scope:
    """Everything one interface block or ``qos profile`` states."""

    pfc: PfcConfig | None = None
    qos: PortQos | None = None
    ecn: list[EcnConfig] = field(default_factory=list)
    sched: list[QueueSchedule] = field(default_factory=list)
    watchdog: list[PfcWatchdog] = field(default_factory=list)
    mtu: Mtu | None = None


def _gather(result: ParseResult) -> tuple[dict[str, _Scope], dict[str, _Scope], list[object]]:
    """Split the records into profile scopes, interface scopes (by their written name) and
    the global ones."""
    profiles: dict[str, _Scope] = {}
    ifaces: dict[str, _Scope] = {}
    glob: list[object] = []
    for rec in result.records:
        scope_name = getattr(rec, "scope", "global")
        if isinstance(rec, (DscpMap, TcMap)) or scope_name == "global":
            glob.append(rec)
            continue
        if scope_name.startswith("qos profile "):
            bag = profiles.setdefault(scope_name[len("qos profile ") :], _Scope())
        else:
            bag = ifaces.setdefault(scope_name, _Scope())
        if isinstance(rec, PfcConfig):
            bag.pfc = rec
        elif isinstance(rec, PortQos):
            bag.qos = rec
        elif isinstance(rec, EcnConfig):
            bag.ecn.append(rec)
        elif isinstance(rec, QueueSchedule):
            bag.sched.append(rec)
        elif isinstance(rec, PfcWatchdog):
            bag.watchdog.append(rec)
        elif isinstance(rec, Mtu):
            bag.mtu = rec
    return profiles, ifaces, glob


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read a parsed EOS running-config into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="eos", files=[file])
    profiles, ifaces, glob = _gather(result)

    def src(line: int | None, text: str | None = None) -> Src:
        return Src(file, line, text)

    _global_defaults(dev, glob, file)

    used_profiles: set[str] = set()
    pc_mtu: dict[str, Mtu] = {}
    members: dict[str, str] = {}
    pfc_without_on: list[str] = []
    dcbx: dict[str, list[str]] = {}
    for written, own in ifaces.items():
        maps = own.qos.maps if own.qos is not None else {}
        prof_name = maps.get("service-profile")
        prof = profiles.get(prof_name) if prof_name else None
        if prof_name and prof is None:
            dev.notes.append(
                f"{file} line {own.qos.line if own.qos else '?'}: {written} binds "
                f"service-profile {prof_name}, which the file does not define"
            )
        if prof_name and prof is not None:
            used_profiles.add(prof_name)
        for port in expand_interfaces(written):
            view = dev.ports.setdefault(port, PortView(port=port))
            for bag, where in ((prof, f"qos profile {prof_name}"), (own, port)):
                if bag is None:
                    continue
                _apply(view, bag, where, file, dev, pfc_without_on)
            if own.mtu is not None:
                view.mtu_bytes = Val(
                    own.mtu.mtu_bytes, src(own.mtu.line, f"mtu {own.mtu.mtu_bytes}")
                )
                if own.mtu.speed_gbps is not None:
                    view.speed_gbps = own.mtu.speed_gbps
                if port.lower().startswith("port-channel"):
                    pc_mtu[port.lower()] = own.mtu
            if "channel-group" in maps:
                members[port] = f"port-channel{maps['channel-group']}"
            if "dcbx" in maps:
                dcbx.setdefault(maps["dcbx"], []).append(port)
        for bag in (prof, own):
            if bag is not None:
                _schedulers(dev, bag, file)
    inherit_from_port_channel(dev, members, pc_mtu, file)
    kill = next(
        (r for r in glob if isinstance(r, QosSetting) and r.key == "priority-flow-control all"),
        None,
    )
    if kill is not None and kill.value.startswith("off"):
        off = Val((), src(kill.line, "priority-flow-control all off"))
        dev.defaults.pfc_priorities = off
        overridden = [
            p for p, v in dev.ports.items() if v.pfc_priorities and v.pfc_priorities.value
        ]
        for view in dev.ports.values():
            view.pfc_priorities = off
        dev.notes.append(
            f"{file} line {kill.line}: priority-flow-control all off disables PFC on every "
            f"interface" + (f", overriding {_sample(overridden)}" if overridden else "")
        )
    for unused in sorted(set(profiles) - used_profiles):
        dev.notes.append(
            f"{file}: qos profile {unused} is bound to no interface (no 'service-profile "
            f"{unused}'), so EOS does not apply it"
        )
    if pfc_without_on:
        dev.notes.append(
            f"{file}: 'priority-flow-control priority N no-drop' without 'priority-flow-control "
            f"on' (PFC stays off) on {_sample(pfc_without_on)}"
        )
    for mode, ports in sorted(dcbx.items()):
        dev.notes.append(f"{file}: dcbx mode {mode} on {_sample(ports)} (PFC is static here)")
    _policy_notes(dev, file, ifaces, profiles, used_profiles)
    return dev.finish(eos_neutral)


def _policy_notes(
    dev: ObservedDevice,
    file: str,
    ifaces: dict[str, _Scope],
    profiles: dict[str, _Scope],
    used_profiles: set[str],
) -> None:
    """Say where a ``service-policy`` is attached: its policy-map is not interpreted.

    A queuing (non-``qos``) policy may carry the ECN thresholds, so those ports' ECN is marked
    unknown (``ecn_unread``) rather than absent.

    An EOS ``policy-map type quality-of-service`` attached with ``service-policy type qos
    input`` reclassifies matching traffic (``set traffic-class``, ``set dscp``) ahead of the
    trust map, so the DSCP → traffic-class that verify shows for those ports is the trust map's
    and may not be what the policy does.
    """
    attached: dict[str, list[str]] = {}
    lines: dict[str, int | None] = {}
    scopes = [*ifaces.items(), *((f"qos profile {n}", profiles[n]) for n in sorted(used_profiles))]
    profile_ports: dict[str, list[str]] = {}
    for written, own in ifaces.items():
        prof = own.qos.maps.get("service-profile") if own.qos is not None else None
        if prof:
            profile_ports.setdefault(f"qos profile {prof}", []).append(written)
    for where, bag in scopes:
        if bag.qos is None:
            continue
        for key, policy in bag.qos.maps.items():
            if key.startswith("service-policy"):
                label = f"{key} {policy}"
                attached.setdefault(label, []).append(where)
                lines.setdefault(label, bag.qos.line)
    for label, ports in sorted(attached.items()):
        if " qos " not in f" {label} ":
            for where in ports:
                bound = profile_ports.get(where, [where] if where in ifaces else [])
                for written in bound:
                    for port in expand_interfaces(written):
                        if port in dev.ports:
                            dev.ports[port].ecn_unread = label
        why = (
            "the DSCP -> traffic-class shown is the trust map's"
            if " qos " in f" {label} "
            else "its queue settings, ECN included, are not read"
        )
        dev.notes.append(
            f"{file} line {lines[label]}: {label} on {_sample(ports)}: the policy-map is not "
            f"interpreted ({why})"
        )


def inherit_from_port_channel(
    dev: ObservedDevice, members: dict[str, str], pc_mtu: dict[str, Mtu], file: str
) -> None:
    """A ``channel-group N`` member takes what it does not state itself from its
    port-channel (``members``: member → lower-case ``port-channelN``; ``pc_mtu`` keyed the
    same): the MTU, PFC, trust and ECN configured on the bundle apply to its links."""
    by_lower = {p.lower(): p for p in dev.ports}
    for port, pc in members.items():
        view = dev.ports[port]
        m = pc_mtu.get(pc)
        if view.mtu_bytes is None and m is not None:
            view.mtu_bytes = Val(m.mtu_bytes, Src(file, m.line, f"mtu {m.mtu_bytes} (on {m.port})"))
        bundle = by_lower.get(pc)
        if bundle is not None:
            dev.ports[port] = view.merged_over(dev.ports[bundle])
        else:
            dev.notes.append(f"{file}: {port} is a member of {pc}, which states no QoS or MTU")


def _sample(ports: list[str], k: int = 4) -> str:
    shown = ", ".join(ports[:k])
    return f"{len(ports)} ports ({shown}{', ...' if len(ports) > k else ''})"


def _global_defaults(dev: ObservedDevice, glob: list[object], file: str) -> None:
    d = dev.defaults
    dscp = next((r for r in glob if isinstance(r, DscpMap)), None)
    if dscp is None:
        d.dscp_to_tc = Val(
            dict(EOS_DEFAULT_DSCP_TO_TC),
            Src(file, None, "EOS default DSCP-to-traffic-class map", default=True),
        )
    else:
        merged = dict(EOS_DEFAULT_DSCP_TO_TC)
        merged.update(dscp.mapping)
        n = len(dscp.mapping)
        d.dscp_to_tc = Val(
            merged,
            Src(file, dscp.line, f"qos map dscp ... to traffic-class ({n} DSCPs over the EOS "
                "default map)"),
        )  # fmt: skip
    for r in glob:
        if isinstance(r, TcMap) and r.kind == "tc-to-queue":
            tcq = {tc: tc for tc in range(8)}
            tcq.update(r.mapping)
            d.tc_to_queue = Val(tcq, Src(file, r.line, "qos map traffic-class ... to tx-queue"))
        elif isinstance(r, QosSetting) and r.key == "qos trust":
            word = r.value.split()[0] if r.value else ""
            if word in _TRUST:
                d.trust = Val(_TRUST[word], Src(file, r.line, f"qos trust {r.value}"))
        elif isinstance(r, TcMap) and r.kind in ("tc-to-network-qos", "exp-to-tc", "tc-to-exp"):
            dev.notes.append(f"{file} line {r.line}: {r.kind} map read but not used by verify")
    wds = [r for r in glob if isinstance(r, PfcWatchdog)]
    timeout = next((w for w in wds if w.detection_ms is not None), None)
    if timeout is not None and timeout.detection_ms is not None:
        secs = timeout.detection_ms / 1000
        d.pfc_watchdog = Val(
            True, Src(file, timeout.line, f"priority-flow-control pause watchdog timeout {secs:g}")
        )
    elif wds:
        dev.notes.append(
            f"{file} line {wds[0].line}: global PFC watchdog parameters without a default "
            "timeout: the watchdog is not enabled by them"
        )


def _apply(
    view: PortView,
    bag: _Scope,
    where: str,
    file: str,
    dev: ObservedDevice,
    pfc_without_on: list[str],
) -> None:
    """Lay one scope's settings over ``view`` (profile first, then the interface's own)."""
    if bag.pfc is not None:
        p = bag.pfc
        if p.enabled is True:
            prios = tuple(p.priorities)
            text = "priority-flow-control on" + "".join(f", priority {q} no-drop" for q in prios)
            view.pfc_priorities = Val(prios, Src(file, p.line, f"{text} ({where})"))
        elif p.enabled is False:
            view.pfc_priorities = Val((), Src(file, p.line, f"no priority-flow-control ({where})"))
        elif p.priorities:
            view.pfc_priorities = Val(
                (), Src(file, p.line, f"priority N no-drop without priority-flow-control on "
                        f"({where})")
            )  # fmt: skip
            pfc_without_on.append(view.port or where)
    if bag.qos is not None and bag.qos.trust is not None:
        word = bag.qos.trust
        if word in _TRUST:
            view.trust = Val(_TRUST[word], Src(file, bag.qos.line, f"qos trust {word} ({where})"))
    if bag.ecn:
        by_queue = {e.queue: e for e in view.ecn}
        for e in bag.ecn:
            by_queue[e.queue] = EcnObs(
                queue=e.queue,
                kmin_bytes=e.min_bytes,
                kmax_bytes=e.max_bytes,
                probability_pct=e.probability_pct,
                enabled=e.ecn_enabled,
                src=Src(file, e.line, f"tx-queue {e.queue} random-detect ecn minimum-threshold "
                        f"{e.min_raw} maximum-threshold {e.max_raw} ({where})"),
                kmin_raw=e.min_raw,
                kmax_raw=e.max_raw,
            )  # fmt: skip
            if e.min_bytes is None or e.max_bytes is None:
                note = (
                    f"{file} line {e.line}: ECN thresholds {e.min_raw} / {e.max_raw} on queue "
                    f"{e.queue} ({where}) have no byte value (cell/segment size is per platform)"
                )
                if note not in dev.notes:
                    dev.notes.append(note)
        view.ecn = [by_queue[q] for q in sorted(by_queue, key=lambda q: -1 if q is None else q)]
    if bag.watchdog:
        w = bag.watchdog[0]
        view.pfc_watchdog = Val(
            bool(w.enabled), Src(file, w.line, f"priority-flow-control pause watchdog ({where})")
        )


def _schedulers(dev: ObservedDevice, bag: _Scope, file: str) -> None:
    for q in bag.sched:
        if q.queue is None or q.strict_priority is None:
            continue
        kind = "strict" if q.strict_priority else "dwrr"
        text = "priority strict" if q.strict_priority else "no priority"
        old = dev.schedulers.get(q.queue)
        if old is None:
            dev.schedulers[q.queue] = Val(kind, Src(file, q.line, f"tx-queue {q.queue} {text}"))
        elif old.value != kind:
            note = (
                f"{file} line {q.line}: tx-queue {q.queue} is '{text}' here but {old.value} at "
                f"line {old.src.line}; the device-wide scheduler keeps the first"
            )
            if note not in dev.notes:
                dev.notes.append(note)
