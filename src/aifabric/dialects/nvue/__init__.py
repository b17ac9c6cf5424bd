"""NVIDIA Cumulus Linux 5.x NVUE (``nv show ...`` output, ``nv set`` commands, ``nv config
show`` YAML/JSON) → :class:`ObservedDevice`, resolving RoCE the way the switch does.

**What ``nv show`` prints is effective state** and is used as printed, each value with its line:
``pfc-priority`` (``-`` in the lossy modes: no PFC), ``congestion-control`` (ECN min/max, the
``enabled-tc`` traffic classes = egress queues, probability), ``trust-mode`` (``pcp,dscp`` =
Spectrum "both": IP packets are classified by DSCP), the DSCP→switch-priority table (into
``dscp_to_tc``: PFC acts on the switch priority, so the "class" a DSCP lands in is its switch
priority) and the SP→TC / ETS table (``tc_to_queue``: switch priority → traffic class = egress
queue; ``strict-priority`` → ``strict``, ``DWRR-n%`` → ``dwrr``). ``nv show interface X ...``
values go to port ``X``; ``nv show interface X link`` gives its MTU.

**Configuration (``nv set``, YAML) states only what was changed**, so the switch's defaults
fill the rest. ``nv set qos roce`` equals ``nv set qos roce mode lossless`` ("NVUE defaults to
roce mode lossless"), and RoCE mode applies, per the "Default RoCE Mode Configuration" table of
the Cumulus Linux 5.10 user guide (RDMA over Converged Ethernet - RoCE), in *both* lossy and
lossless mode: port trust (printed ``pcp,dscp``), SP 3 → TC 3 (RoCE), SP 6 → TC 6 (CNP), other
SP → TC 0; ETS TC 6 strict, TC 3 and TC 0 WRR 50 %; ECN on TC 3; and in lossless mode only PFC
on switch priority 3. Values the table states in words are taken as ``nv show qos roce``
prints them on a default 5.10 switch (the ``show-qos-roce`` fixture): DSCP ``8k..8k+7`` → SP k,
ECN min 146.48 KB = 150,000 B, max 1.43 MB = 1,500,000 B (NVUE prints binary KB/MB: 150000/1024
= 146.48, 1500000/1048576 = 1.43), probability 100, ``enabled-tc 0,3``. Every such value is
marked ``Src(default=True)`` and points at the line that enabled RoCE. Explicit settings
override them: ``qos pfc <profile> switch-priority N``, ``qos mapping <profile> dscp D
switch-priority S`` / ``trust T``, ``qos egress-queue-mapping <profile> switch-priority S
traffic-class T``, ``interface <ports> link mtu N`` (ranges ``swp1-32`` expand). ``mode lossy``
has no PFC. ``nv unset qos roce`` removes RoCE; ``nv set qos roce enable on|off`` turns it on
or off. ``qos egress-scheduler default-global traffic-class N mode strict|dwrr`` sets queue
``N``'s scheduler over the RoCE default (``bw-percent`` weights are not modelled);
``interface <ports> qos pfc-watchdog`` (the QoS guide's form) and ``... qos pfc-watchdog state
enable|disable`` (the command reference's, 5.6+) turn the PFC watchdog on or off per port
(``qos pfc-watchdog polling-interval|robustness`` timers are read, not modelled); ``interface
<ports> link breakout Nx`` is read as naming the sub-ports only.
Profiles other than ``default-global`` (``qos mapping|pfc|egress-queue-mapping|
congestion-control <name> ...``, with ``congestion-control <name> traffic-class N ecn enable``,
``min-threshold``/``max-threshold`` in bytes, ``probability``) apply only to the interfaces that
bind them (``nv set interface swp12 qos pfc profile <name>``); an unbound one is noted, not
applied. ``qos traffic-pool`` settings are counted in one note (pools are not modelled).

MTU: "In Cumulus Linux, ifupdown2 assigns 9216 as the default MTU setting" (5.10 user guide,
Switch Port Attributes), so a configuration (``nv set`` / YAML) that states no MTU gets 9216 as
a default; a ``nv show`` of a QoS view says nothing about MTU and leaves it unknown.

What is read but not used (counters, LLDP TLV, pools, other ``nv set`` commands) is listed in
``notes``. Seed rules: S11 (MTU), S12 (PFC), S13 (ECN), S14 (DSCP/trust), S18 (CNP priority).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from aifabric.dialects.cumulus import expand_ports, trust_of
from aifabric.dialects.observed import EcnObs, ObservedDevice, PortView, Src, Val
from aifabric.dialects.ports import cumulus_neutral
from aifabric.evidence.base import ParseResult
from aifabric.evidence.nvue import NvueCounter, NvueSet, NvueTableRow
from aifabric.evidence.qos import (
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    QosSetting,
    QueueSchedule,
    TcMap,
    size_to_bytes,
)

__all__ = [
    "CUMULUS_DEFAULT_MTU",
    "ROCE_DEFAULT_ECN_BYTES",
    "ROCE_DEFAULT_PFC_PRIORITY",
    "interpret",
    "roce_default_dscp_map",
]

CUMULUS_DEFAULT_MTU = 9216
"""ifupdown2's default MTU on Cumulus Linux (5.10 user guide, Switch Port Attributes)."""
ROCE_DEFAULT_PFC_PRIORITY = 3
ROCE_DEFAULT_SP_TO_TC: dict[int, int] = {sp: {3: 3, 6: 6}.get(sp, 0) for sp in range(8)}
ROCE_DEFAULT_ECN_BYTES = (150_000, 1_500_000)
"""``min-threshold 146.48 KB`` / ``max-threshold 1.43 MB`` as ``nv show qos roce`` prints them."""
ROCE_DEFAULT_ECN_TCS = (0, 3)
ROCE_DEFAULT_SCHEDULERS: dict[int, str] = {0: "dwrr", 3: "dwrr", 6: "strict"}
_LOSSY_MODES = ("lossy", "lossy-multi-tc")


def roce_default_dscp_map() -> dict[int, int]:
    """NVUE's default DSCP → switch priority map: DSCP ``d`` → ``d // 8`` (``nv show qos
    roce`` on 5.x: ``24,25,26,27,28,29,30,31 → 3``)."""
    return {d: d // 8 for d in range(64)}


@dataclass
class _Roce:
    """RoCE state a configuration states: mode and the line that set it."""

    enabled: bool | None = None
    mode: str | None = None
    line: int | None = None
    text: str = ""
    printed: bool = False
    """True when the state comes from ``nv show`` (values are printed, no defaults needed)."""


@dataclass
class _Explicit:
    """``nv set`` / YAML QoS settings that override the RoCE defaults (one profile's worth)."""

    pfc: Val[tuple[int, ...]] | None = None
    trust: Val[str] | None = None
    dscp: dict[int, int] = field(default_factory=dict)
    dscp_src: Src | None = None
    sp_tc: dict[int, int] = field(default_factory=dict)
    sp_tc_src: Src | None = None
    ecn: dict[int, dict[str, str]] = field(default_factory=dict)
    """``congestion-control`` per traffic class: ``ecn``, ``min-threshold``, ... → value."""
    ecn_src: Src | None = None
    pfc_off: list[str] = field(default_factory=list)
    """``tx enable off`` / ``rx enable off`` lines of a PFC profile."""


_PROFILE_KINDS = ("mapping", "pfc", "egress-queue-mapping", "congestion-control")
"""NVUE QoS profile families (``nv set qos <kind> <profile> ...``); ``default-global`` is the
profile every interface uses unless ``nv set interface X qos <kind> profile P`` binds another
(Cumulus Linux 5.x user guide, Quality of Service: "default-global" and interface profiles)."""
_DEFAULT_PROFILE = "default-global"
_IGNORED_INTERFACE = frozenset({"description", "type", "ip", "router", "bridge", "lldp"})
"""``nv set interface X <word> ...`` settings with no bearing on lossless QoS."""


@dataclass
class _Profiles:
    """Explicit settings per ``(kind, profile)`` and which interfaces bind which profile."""

    by_name: dict[tuple[str, str], _Explicit] = field(default_factory=dict)
    bindings: dict[str, dict[str, tuple[str, Src]]] = field(default_factory=dict)
    """interface scope (``swp1-4``) → profile kind → (profile, the binding line)."""
    pools: list[int] = field(default_factory=list)

    def get(self, kind: str, name: str) -> _Explicit:
        """The settings of profile ``name`` of ``kind``, created empty on first use."""
        return self.by_name.setdefault((kind, name), _Explicit())

    def merged(self, name: str) -> _Explicit:
        """Every kind's settings of profile ``name`` in one (for ``default-global``)."""
        out = _Explicit()
        for kind in _PROFILE_KINDS:
            e = self.by_name.get((kind, name))
            if e is not None:
                _merge(out, e)
        return out


def _merge(out: _Explicit, e: _Explicit) -> None:
    """Copy what ``e`` states into ``out``."""
    out.pfc = e.pfc or out.pfc
    out.trust = e.trust or out.trust
    if e.dscp:
        out.dscp.update(e.dscp)
        out.dscp_src = e.dscp_src
    if e.sp_tc:
        out.sp_tc.update(e.sp_tc)
        out.sp_tc_src = e.sp_tc_src
    if e.ecn:
        out.ecn.update(e.ecn)
        out.ecn_src = e.ecn_src
    out.pfc_off.extend(e.pfc_off)


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read parsed NVUE output/configuration into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="nvue", files=[file])
    roce = _Roce()
    profiles = _Profiles()
    explicit = profiles.get("mapping", _DEFAULT_PROFILE)  # YAML settings go to default-global
    has_sets = any(isinstance(r, NvueSet) for r in result.records)
    is_config = _is_structured(result) or has_sets
    # 'nv config show -o yaml': its commands (NvueSet) carry it; the parser's flattened
    # key/value view of the same leaves is not read a second time
    config_doc = has_sets and _is_structured(result)
    counters = 0
    pools = 0
    unused: list[str] = []

    def src(line: int | None, text: str | None = None, default: bool = False) -> Src:
        return Src(file, line, text, default)

    def views(scope: str | None) -> list[PortView]:
        if scope is None or scope == "qos":
            return [dev.defaults]
        return [dev.ports.setdefault(p, PortView(port=p)) for p in expand_ports(scope)]

    for rec in result.records:
        if isinstance(rec, NvueSet):
            _set(rec, file, roce, profiles, dev)
        elif isinstance(rec, Mtu):
            for v in views(rec.port or rec.scope):
                v.mtu_bytes = Val(rec.mtu_bytes, src(rec.line, f"mtu {rec.mtu_bytes}"))
        elif isinstance(rec, QosSetting):
            if config_doc:
                continue
            if not _setting(rec, file, roce, explicit, views):
                unused.append(f"{rec.key}={rec.value}")
        elif isinstance(rec, PfcConfig):
            text = "pfc-priority " + (",".join(map(str, rec.priorities)) or "-")
            for v in views(rec.port or rec.scope):
                v.pfc_priorities = Val(tuple(rec.priorities), src(rec.line, text))
        elif isinstance(rec, EcnConfig):
            tcs = _ids(rec.extra.get("enabled-tc", ""))
            obs = EcnObs(
                queue=None,
                queues=tcs,
                kmin_bytes=rec.min_bytes,
                kmax_bytes=rec.max_bytes,
                probability_pct=rec.probability_pct,
                enabled=rec.ecn_enabled,
                src=src(rec.line, f"congestion-control {rec.min_raw} / {rec.max_raw} on TC "
                        f"{rec.extra.get('enabled-tc', '?')}"),
                kmin_raw=rec.min_raw,
                kmax_raw=rec.max_raw,
            )  # fmt: skip
            for v in views(rec.port or rec.scope):
                v.ecn.append(obs)
        elif isinstance(rec, DscpMap):
            for v in views(rec.scope):
                v.dscp_to_tc = Val(dict(rec.mapping), src(rec.line, rec.name))
                if len(rec.mapping) < 64:
                    dev.notes.append(
                        f"{file} line {rec.line}: {rec.name} lists {len(rec.mapping)} DSCP "
                        "values only; the others follow a map this capture does not show"
                    )
        elif isinstance(rec, TcMap) and rec.kind == "switch-priority-to-tc":
            for v in views(rec.scope):
                v.tc_to_queue = Val(dict(rec.mapping), src(rec.line, rec.name))
        elif isinstance(rec, QueueSchedule) and rec.queue is not None:
            kind = "strict" if rec.strict_priority else "dwrr"
            dev.schedulers.setdefault(rec.queue, Val(kind, src(rec.line, rec.scheduler)))
        elif isinstance(rec, NvueCounter):
            counters += 1
        elif isinstance(rec, NvueTableRow) and "ool" in rec.table:
            pools += 1

    _apply(dev, roce, profiles.merged(_DEFAULT_PROFILE), file, is_config)
    _apply_bound(dev, profiles, file)
    if profiles.pools:
        dev.notes.append(
            f"{file}: {len(profiles.pools)} 'qos traffic-pool' settings (lines "
            f"{', '.join(map(str, profiles.pools[:6]))}); buffer pools are not modelled"
        )
    if counters:
        dev.notes.append(f"{file}: {counters} NVUE counters read; counters are state, not config")
    if pools:
        dev.notes.append(f"{file}: {pools} buffer pool rows read; pools are not modelled")
    if unused:
        shown = "; ".join(unused[:15]) + (f"; +{len(unused) - 15} more" if len(unused) > 15 else "")
        dev.notes.append(f"{file}: not interpreted: {shown}")
    dev.neutral = {n: p for p in dev.ports if (n := cumulus_neutral(p)) is not None}
    dev.settle_defaults()
    return dev


def _is_structured(result: ParseResult) -> bool:
    """``nv config show`` YAML/JSON: no table rows, settings under ``qos.``/``interface.``."""
    return any(
        isinstance(r, QosSetting) and r.key.startswith(("qos.", "interface.", "system."))
        for r in result.records
    )


def _setting(
    rec: QosSetting,
    file: str,
    roce: _Roce,
    explicit: _Explicit,
    views: Callable[[str | None], list[PortView]],
) -> bool:
    """A key/value leaf (``nv show`` table or flattened YAML); True when it was used."""
    key = rec.key
    value = rec.value.strip()
    printed = "." not in key or key.startswith(("trust.", "pfc.", "congestion-control."))
    if key in ("enable", "qos.roce.enable"):
        roce.enabled = value.lower() in ("on", "true", "enabled", "yes")
    elif key in ("mode", "qos.roce.mode"):
        roce.mode = value or rec.applied
        roce.enabled = True if roce.enabled is None else roce.enabled
    elif key.startswith(("pfc.", "congestion-control.")) and not key.endswith("cable-length"):
        return True  # read through the shared pfc / ecn records
    elif key in ("cable-length", "pfc.cable-length"):
        for v in views(rec.scope):
            if (metres := _flt(value)) is not None:
                v.cable_length_m = Val(metres, Src(file, rec.line, f"cable-length {value}"))
        return True
    elif key in ("speed", "link.speed") or key.endswith(".link.speed"):
        sm = re.match(r"^(\d+(?:\.\d+)?)G$", value)
        if sm is None or rec.scope in (None, "qos"):
            return False
        for v in views(rec.scope):
            v.speed_gbps = float(sm.group(1))
        return True
    elif key == "trust.trust-mode":
        for v in views(rec.scope):
            v.trust = Val(trust_of(value), Src(file, rec.line, f"trust-mode {value}"))
        return True
    elif re.match(r"^qos\.mapping\.[^.]+\.trust$", key):
        explicit.trust = Val(trust_of(value), Src(file, rec.line, f"{key} {value}"))
        return True
    else:
        return False
    if roce.line is None or key.endswith("mode"):
        roce.line, roce.text = rec.line, f"{key} {value}"
    roce.printed = roce.printed or printed
    return True


def _set(
    rec: NvueSet,
    file: str,
    roce: _Roce,
    profiles: _Profiles,
    dev: ObservedDevice,
) -> None:
    """One ``nv set`` / ``nv unset`` command."""
    w = rec.words
    text = ("nv unset " if rec.unset else "nv set ") + " ".join(w)
    s = Src(file, rec.line, text)
    if w[:2] == ("qos", "roce"):
        if rec.unset and len(w) == 2:
            roce.enabled, roce.mode, roce.line, roce.text = False, None, rec.line, text
            return
        if len(w) == 2:
            roce.enabled = True
            roce.line, roce.text = rec.line, text
            return
        if len(w) == 4 and w[2] == "mode":
            roce.enabled, roce.mode, roce.line, roce.text = True, w[3], rec.line, text
            return
        if len(w) == 4 and w[2] in ("enable", "state"):
            # 'nv set qos roce enable on|off' (5.x); 'state enabled|disabled' in some pastes
            on = w[3].lower() in ("on", "enabled", "true", "yes")
            roce.enabled = on and not rec.unset
            if roce.line is None or not on:
                roce.line, roce.text = rec.line, text
            return
    elif len(w) in (4, 6) and w[0] == "interface" and w[2:4] == ("qos", "pfc-watchdog"):
        # 'qos pfc-watchdog' (QoS guide) = 'qos pfc-watchdog state enable' (command reference)
        if len(w) == 4 or w[4] == "state":
            on = not rec.unset and (len(w) == 4 or w[5].lower() in ("enable", "enabled", "on"))
            for p in expand_ports(w[1]):
                dev.ports.setdefault(p, PortView(port=p)).pfc_watchdog = Val(on, s)
            return
    elif rec.unset:
        pass
    elif len(w) == 7 and w[:4] == ("qos", "egress-scheduler", _DEFAULT_PROFILE, "traffic-class"):
        if w[5] == "mode" and w[6].lower() in ("strict", "dwrr"):
            for tc in _ids(w[4]):
                dev.schedulers[tc] = Val(w[6].lower(), s)  # explicit: over the RoCE defaults
            return
        if w[5] == "bw-percent":
            return  # DWRR weights: not modelled
    elif w[:2] == ("qos", "pfc-watchdog") and len(w) == 4:
        if w[2] in ("polling-interval", "robustness"):
            return  # watchdog timers: not modelled
    elif len(w) >= 5 and w[0] == "interface" and w[2:4] == ("link", "breakout"):
        return  # port breakout: the sub-ports' names carry it
    elif len(w) >= 4 and w[0] == "qos" and w[1] in _PROFILE_KINDS:
        if _profile_set(w[1], w[2], w[3:], s, profiles.get(w[1], w[2])):
            return
    elif w[:2] == ("qos", "traffic-pool"):
        profiles.pools.append(rec.line)
        return
    elif len(w) == 6 and w[0] == "interface" and w[2] == "qos" and w[4] == "profile":
        if w[3] in _PROFILE_KINDS:
            profiles.bindings.setdefault(w[1], {})[w[3]] = (w[5], s)
            return
    elif len(w) == 5 and w[0] == "interface" and w[2:4] == ("link", "mtu"):
        return  # the parser's Mtu record carries it
    elif (
        len(w) >= 3
        and w[0] == "interface"
        and (w[2] in _IGNORED_INTERFACE or w[2:4] == ("link", "state"))
    ):
        return  # addressing, descriptions, admin state: nothing lossless QoS depends on
    dev.notes.append(f"{file} line {rec.line}: {text}: not interpreted")


def _profile_set(kind: str, name: str, rest: tuple[str, ...], s: Src, e: _Explicit) -> bool:
    """``nv set qos <kind> <name> <rest...>`` into profile ``e``; False when not understood."""
    if kind == "pfc" and len(rest) == 2 and rest[0] == "switch-priority":
        e.pfc = Val(_ids(rest[1]), s)
        return True
    if kind == "pfc" and rest[:1] in (("tx",), ("rx",)) and rest[1:2] == ("enable",):
        # 'tx enable' (value omitted) and 'tx enable on' both enable
        if len(rest) == 3 and rest[2].lower() in ("off", "disabled", "false", "no"):
            e.pfc_off.append(str(s.text))
        return len(rest) in (2, 3)
    if kind == "pfc" and rest[:1] in (("cable-length",), ("port-buffer",), ("xoff-threshold",)):
        return True  # headroom sizing inputs: the switch computes headroom from them
    if kind == "mapping" and len(rest) == 2 and rest[0] == "trust":
        e.trust = Val(trust_of(rest[1]), s)
        return True
    if kind == "mapping" and len(rest) == 4 and rest[0] == "dscp" and rest[2] == "switch-priority":
        for d in _ids(rest[1]):
            e.dscp[d] = int(rest[3])
        e.dscp_src = s
        return True
    if (
        kind == "egress-queue-mapping"
        and len(rest) == 4
        and rest[0] == "switch-priority"
        and rest[2] == "traffic-class"
    ):
        for sp in _ids(rest[1]):
            e.sp_tc[sp] = int(rest[3])
        e.sp_tc_src = s
        return True
    if kind == "congestion-control" and len(rest) >= 3 and rest[0] == "traffic-class":
        key = rest[2]
        if key in ("ecn", "red"):
            # 'ecn enable' = 'ecn enable on'; 'ecn enable off' / 'ecn disable' turn it off
            tail = rest[3:]
            value = (
                tail[1]
                if tail[:1] == ("enable",) and len(tail) > 1
                else ("off" if tail[:1] == ("disable",) else "on")
            )
        elif len(rest) == 4:
            value = rest[3]
        else:
            return False
        if key not in ("ecn", "red", "min-threshold", "max-threshold", "probability"):
            return False
        for tc in _ids(rest[1]):
            e.ecn.setdefault(tc, {})[key] = value
        e.ecn_src = s
        return True
    return False


def _threshold(raw: str | None) -> int | None:
    """An NVUE threshold: bytes (``150000``) or with a unit (``150KB``, ``1.5 MB``)."""
    if raw is None:
        return None
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([KMG]?B)?$", raw.strip(), re.IGNORECASE)
    if m is None:
        return None
    if m.group(2) is None or m.group(2).upper() == "B":
        return int(float(m.group(1)))
    return size_to_bytes(m.group(1), m.group(2))


def _ecn_of(e: _Explicit) -> list[EcnObs]:
    """A congestion-control profile's ECN markings, one per traffic class it names."""
    out: list[EcnObs] = []
    assert e.ecn_src is not None or not e.ecn
    for tc, kv in sorted(e.ecn.items()):
        on = kv.get("ecn", "on").lower() not in ("off", "disable", "disabled", "false", "no")
        assert e.ecn_src is not None
        out.append(
            EcnObs(
                queue=tc,
                queues=(tc,),
                kmin_bytes=_threshold(kv.get("min-threshold")),
                kmax_bytes=_threshold(kv.get("max-threshold")),
                probability_pct=_flt(kv.get("probability", "")),
                enabled=on,
                src=e.ecn_src,
                kmin_raw=kv.get("min-threshold"),
                kmax_raw=kv.get("max-threshold"),
            )
        )
    return out


def _apply_bound(dev: ObservedDevice, profiles: _Profiles, file: str) -> None:
    """Named profiles bound to interfaces override the defaults on those ports; named
    profiles no interface binds are not applied (and said so)."""
    used: set[tuple[str, str]] = set()
    base = dev.defaults
    for scope, kinds in profiles.bindings.items():
        views = [dev.ports.setdefault(p, PortView(port=p)) for p in expand_ports(scope)]
        for kind, (name, bsrc) in kinds.items():
            used.add((kind, name))
            e = profiles.by_name.get((kind, name))
            if name == _DEFAULT_PROFILE:
                continue
            if e is None:
                dev.notes.append(
                    f"{file} line {bsrc.line}: {scope} binds {kind} profile {name}, which the "
                    "file does not define (NVUE rejects that; the default-global profile is "
                    "taken)"
                )
                continue
            for v in views:
                _apply_profile(v, base, e)
    for (kind, name), e in profiles.by_name.items():
        if name != _DEFAULT_PROFILE and (kind, name) not in used and _stated(e):
            src = e.pfc or e.trust or e.dscp_src or e.sp_tc_src or e.ecn_src
            line = getattr(src, "line", None) if not isinstance(src, Val) else src.src.line
            dev.notes.append(
                f"{file} line {line}: qos {kind} profile {name} is bound to no interface "
                f"('nv set interface X qos {kind} profile {name}'), so the switch does not "
                "apply it"
            )


def _stated(e: _Explicit) -> bool:
    return bool(e.pfc or e.trust or e.dscp or e.sp_tc or e.ecn)


def _apply_profile(v: PortView, base: PortView, e: _Explicit) -> None:
    """One bound named profile onto port view ``v`` (unstated entries from the defaults)."""
    if e.pfc is not None:
        v.pfc_priorities = Val((), e.pfc.src) if e.pfc_off else e.pfc
    if e.trust is not None:
        v.trust = e.trust
    if e.dscp:
        assert e.dscp_src is not None
        dscp = dict(base.dscp_to_tc.value) if base.dscp_to_tc is not None else {}
        dscp.update(e.dscp)
        v.dscp_to_tc = Val(dscp, e.dscp_src)
        v.trust = v.trust or base.trust
    if e.sp_tc:
        assert e.sp_tc_src is not None
        sp_tc = dict(base.tc_to_queue.value) if base.tc_to_queue is not None else {}
        sp_tc.update(e.sp_tc)
        v.tc_to_queue = Val(sp_tc, e.sp_tc_src)
    if e.ecn:
        v.ecn = _ecn_of(e)


def _apply(
    dev: ObservedDevice, roce: _Roce, explicit: _Explicit, file: str, is_config: bool
) -> None:
    """RoCE defaults where the file states nothing, then the explicit overrides."""
    d = dev.defaults
    if roce.enabled and not roce.printed:
        mode = roce.mode or "lossless"

        def dsrc(what: str) -> Src:
            return Src(file, roce.line, f"{roce.text} ({mode} default: {what})", default=True)

        if d.trust is None:
            d.trust = Val("dscp", dsrc("trust pcp,dscp"))
        if d.dscp_to_tc is None:
            d.dscp_to_tc = Val(roce_default_dscp_map(), dsrc("DSCP 8k..8k+7 -> switch-priority k"))
        if d.tc_to_queue is None:
            d.tc_to_queue = Val(
                dict(ROCE_DEFAULT_SP_TO_TC), dsrc("SP 3 -> TC 3, SP 6 -> TC 6, others TC 0")
            )
        if d.pfc_priorities is None:
            if mode in _LOSSY_MODES:
                d.pfc_priorities = Val((), dsrc("no PFC"))
            else:
                d.pfc_priorities = Val(
                    (ROCE_DEFAULT_PFC_PRIORITY,), dsrc("PFC on switch-priority 3")
                )
        if not d.ecn:
            kmin, kmax = ROCE_DEFAULT_ECN_BYTES
            d.ecn.append(
                EcnObs(
                    queue=None,
                    queues=ROCE_DEFAULT_ECN_TCS,
                    kmin_bytes=kmin,
                    kmax_bytes=kmax,
                    probability_pct=100.0,
                    enabled=True,
                    src=dsrc("ECN 146.48 KB / 1.43 MB on TC 0,3"),
                    kmin_raw="146.48 KB",
                    kmax_raw="1.43 MB",
                )
            )
        for q, kind in ROCE_DEFAULT_SCHEDULERS.items():
            dev.schedulers.setdefault(q, Val(kind, dsrc("ETS TC 6 strict, TC 3 / TC 0 DWRR 50%")))
    elif roce.enabled is False and not roce.printed:
        dev.notes.append(f"{file} line {roce.line}: {roce.text}: RoCE is off")
    if explicit.pfc is not None:
        d.pfc_priorities = Val((), explicit.pfc.src) if explicit.pfc_off else explicit.pfc
    if explicit.ecn:
        d.ecn = _ecn_of(explicit)
    if explicit.trust is not None:
        d.trust = explicit.trust
    if explicit.dscp:
        assert explicit.dscp_src is not None
        base = dict(d.dscp_to_tc.value) if d.dscp_to_tc is not None else {}
        base.update(explicit.dscp)
        d.dscp_to_tc = Val(base, explicit.dscp_src)
        if len(base) < 64:
            dev.notes.append(
                f"{file}: DSCP map states {len(base)} DSCP values; the others follow the "
                "default-global map, which this file does not show"
            )
    if explicit.sp_tc:
        assert explicit.sp_tc_src is not None
        base = dict(d.tc_to_queue.value) if d.tc_to_queue is not None else {}
        base.update(explicit.sp_tc)
        d.tc_to_queue = Val(base, explicit.sp_tc_src)
    if is_config and d.mtu_bytes is None:
        d.mtu_bytes = Val(
            CUMULUS_DEFAULT_MTU,
            Src(file, None, "ifupdown2 default MTU 9216 (no MTU set)", default=True),
        )


def _flt(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


def _ids(raw: str) -> tuple[int, ...]:
    """``0,3`` / ``1-3`` / ``2`` → integers (``-`` alone: none)."""
    out: list[int] = []
    for part in re.split(r"[,\s]+", raw.strip()):
        if not part or part == "-":
            continue
        m = re.match(r"^(\d+)-(\d+)$", part)
        if m:
            out.extend(range(int(m.group(1)), int(m.group(2)) + 1))
        elif part.isdecimal():
            out.append(int(part))
    return tuple(out)
