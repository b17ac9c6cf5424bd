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
has no PFC. ``nv unset qos roce`` removes RoCE.

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
from aifabric.evidence.sonic_config import (
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    QosSetting,
    QueueSchedule,
    TcMap,
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
    """``nv set`` / YAML QoS settings that override the RoCE defaults."""

    pfc: Val[tuple[int, ...]] | None = None
    trust: Val[str] | None = None
    dscp: dict[int, int] = field(default_factory=dict)
    dscp_src: Src | None = None
    sp_tc: dict[int, int] = field(default_factory=dict)
    sp_tc_src: Src | None = None


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read parsed NVUE output/configuration into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="nvue", files=[file])
    roce = _Roce()
    explicit = _Explicit()
    is_config = _is_structured(result) or any(isinstance(r, NvueSet) for r in result.records)
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
            _set(rec, file, roce, explicit, dev)
        elif isinstance(rec, Mtu):
            for v in views(rec.port or rec.scope):
                v.mtu_bytes = Val(rec.mtu_bytes, src(rec.line, f"mtu {rec.mtu_bytes}"))
        elif isinstance(rec, QosSetting):
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

    _apply(dev, roce, explicit, file, is_config)
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
    explicit: _Explicit,
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
    elif rec.unset:
        pass
    elif len(w) == 5 and w[:2] == ("qos", "pfc") and w[3] == "switch-priority":
        explicit.pfc = Val(_ids(w[4]), s)
        return
    elif len(w) == 5 and w[:2] == ("qos", "mapping") and w[3] == "trust":
        explicit.trust = Val(trust_of(w[4]), s)
        return
    elif (
        len(w) == 7 and w[:2] == ("qos", "mapping") and w[3] == "dscp" and w[5] == "switch-priority"
    ):
        for d in _ids(w[4]):
            explicit.dscp[d] = int(w[6])
        explicit.dscp_src = s
        return
    elif (
        len(w) == 7
        and w[:2] == ("qos", "egress-queue-mapping")
        and w[3] == "switch-priority"
        and w[5] == "traffic-class"
    ):
        for sp in _ids(w[4]):
            explicit.sp_tc[sp] = int(w[6])
        explicit.sp_tc_src = s
        return
    elif len(w) == 5 and w[0] == "interface" and w[2:4] == ("link", "mtu"):
        return  # the parser's Mtu record carries it
    dev.notes.append(f"{file} line {rec.line}: {text}: not interpreted")


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
        d.pfc_priorities = explicit.pfc
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
        elif part.isdigit():
            out.append(int(part))
    return tuple(out)
