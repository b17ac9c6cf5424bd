"""Legacy Cumulus Linux ``/etc/cumulus/datapath/traffic.conf`` (3.x/4.x; 5.x ``qos_features.conf``
has the same syntax) → :class:`ObservedDevice`, resolving it the way ``switchd`` does.

* Trust: ``traffic.packet_priority_source_set = [dscp]`` (``[802.1p,dscp]`` also trusts DSCP
  for IP packets; ``[802.1p]`` is PCP only; 5.x ``port`` ignores markings).
* ``traffic.cos_N.priority_source.dscp = [..]`` maps DSCP to *internal CoS* N, the switch
  priority that PFC (``pfc.<group>.cos_list``) and ECN (``ecn_red.<group>.cos_list``) name, so
  it is read into ``dscp_to_tc`` (the egress queue of internal CoS N is queue N: identity
  ``tc_to_queue``). The shipped file lists every DSCP under some ``cos_N`` (all 64 under
  ``cos_0``); a DSCP the file does not list has no class here (``dscp_default_tc`` None) and
  the gap is reported in ``notes``.
* Port groups: a ``pfc`` / ``ecn_red`` / ``link_pause`` group is applied by switchd only when
  its name is in ``<feature>.port_group_list`` (Cumulus Linux 4.x "Quality of Service": "add or
  replace port group names in the port group list"). Groups not in the list are inactive and do
  **not** count as configured (noted). When the capture elides the list line (a ``...``
  excerpt), whether the group is active is unknown: it is not applied either, and noted.
  ``port_set`` (``swp1-swp4,swp6``, ``swp50s0-swp50s3``; 5.x ``allports``) is expanded; each
  port gets the group's PFC priorities, its ECN thresholds (bytes, on the listed CoS queues) and
  as PFC headroom the group's ``xoff_size`` (the bytes buffered after XOFF is sent, consistent
  with the SONiC reading ``headroom = xoff``; ``port_buffer_bytes`` is kept in the source text).
* ``priority_group.<name>.cos_list`` with ``.weight`` gives the schedulers: weight 0 is strict
  priority ("'0' indicates strict priority", the file's own comment), any other weight DWRR.
* ``link_pause`` groups (802.3x pause, not PFC) and ``source.`` / ``remark.`` per-port-group
  overrides are reported in ``notes``: they are not modelled.

traffic.conf states nothing about MTU (that is ``/etc/network/interfaces``; Cumulus 3.x
defaulted to 1500, 4.x+ ifupdown2 to 9216), so MTU stays unknown here.

Sources: Cumulus Linux 3.7/4.1/4.4 user guide "Quality of Service" and "RDMA over Converged
Ethernet - RoCE" (github.com/CumulusNetworks/docs content/cumulus-linux-41/...); the comments in
the shipped traffic.conf (microsoft/SDN SwitchConfigExamples/Cumulus/traffic_RocE_Lossless.conf).
Seed rules S12 (PFC), S13 (ECN), S14 (DSCP trust/map).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from aifabric.dialects.observed import EcnObs, ObservedDevice, PortView, Src, Val
from aifabric.dialects.ports import cumulus_neutral
from aifabric.evidence.base import ParseResult
from aifabric.evidence.cumulus_traffic import (
    PortGroup,
    TrafficConfSetting,
    text_bool,
    text_float,
    text_int,
)
from aifabric.evidence.qos import DscpMap, QosSetting

__all__ = ["expand_ports", "interpret", "trust_of"]

_PORT = re.compile(r"^swp(\d+)(?:s(\d+))?$")
_RANGE = re.compile(r"^swp(\d+)(?:s(\d+))?-(?:swp)?(\d+)(?:s(\d+))?$")
ALL_PORTS = "allports"


def expand_ports(spec: str) -> list[str]:
    """Cumulus port list → port names, in order.

    ``swp1-swp4,swp6`` → swp1..swp4, swp6; NVUE's ``swp1-32``; breakouts ``swp50s0-swp50s3``
    and ``swp1s0-3``. A range whose ends are on different breakout ports or mix breakout and
    whole ports cannot be expanded without the port table and is returned as written.
    ``allports`` is returned as is (the caller treats it as every port).
    """
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = _RANGE.match(part)
        if m is None:
            out.append(part)
            continue
        a, sa, b, sb = m.group(1), m.group(2), m.group(3), m.group(4)
        if sa is None and sb is None and int(a) <= int(b):
            out.extend(f"swp{n}" for n in range(int(a), int(b) + 1))
        elif sa is not None and sb is None and "swp" not in part.split("-", 1)[1]:
            # swp1s0-3: sub-ports 0..3 of swp1
            if int(sa) <= int(b):
                out.extend(f"swp{a}s{n}" for n in range(int(sa), int(b) + 1))
            else:
                out.append(part)
        elif sa is not None and sb is not None and a == b and int(sa) <= int(sb):
            out.extend(f"swp{a}s{n}" for n in range(int(sa), int(sb) + 1))
        else:
            out.append(part)
    return out


def trust_of(raw: str) -> str:
    """``dscp``, ``pcp`` or ``none`` from a Cumulus/NVUE trust word or list.

    Spectrum's ``both`` (``pcp,dscp``, traffic.conf ``[802.1p,dscp]``) classifies IP packets by
    DSCP (L3 precedence), so for RoCEv2 (IP/UDP) it is ``dscp``."""
    t = raw.lower().replace(" ", "")
    if "dscp" in t or t in ("both", "l3"):
        return "dscp"
    if "pcp" in t or "802.1p" in t or "8021p" in t or t == "l2":
        return "pcp"
    return "none"


def interpret(result: ParseResult, *, file: str, name: str) -> ObservedDevice:
    """Read a parsed traffic.conf into the observed model of device ``name``."""
    dev = ObservedDevice(name=name, role="switch", dialect="cumulus", files=[file])
    settings: dict[str, tuple[str, int]] = {}
    groups: list[PortGroup] = []
    for rec in result.records:
        if isinstance(rec, TrafficConfSetting):
            settings[rec.key] = (rec.value, rec.line)
        elif isinstance(rec, PortGroup):
            groups.append(rec)

    def src(line: int | None, text: str | None = None) -> Src:
        return Src(file, line, text)

    def view(port: str) -> PortView:
        if port == ALL_PORTS:
            return dev.defaults
        if port not in dev.ports:
            dev.ports[port] = PortView(port=port)
        return dev.ports[port]

    for rec in result.records:
        if isinstance(rec, QosSetting) and rec.key == "trust":
            dev.defaults.trust = Val(
                trust_of(rec.value),
                src(rec.line, f"traffic.packet_priority_source_set = [{rec.value}]"),
            )
        elif isinstance(rec, DscpMap):
            dev.defaults.dscp_to_tc = Val(
                dict(rec.mapping),
                src(
                    rec.line,
                    f"traffic.cos_N.priority_source.dscp (lines {rec.line}-{rec.end_line})",
                ),
            )
            missing = sorted(set(range(64)) - set(rec.mapping))
            if missing:
                dev.notes.append(
                    f"{file} line {rec.line}: DSCP {_short(missing)} listed under no "
                    "traffic.cos_N.priority_source.dscp: their class is not stated"
                )
    _duplicate_dscp(dev, settings, file)
    if dev.defaults.dscp_to_tc is not None and dev.defaults.trust is None:
        dev.notes.append(
            f"{file}: DSCP map without traffic.packet_priority_source_set; "
            "whether switchd trusts DSCP is not stated in this capture"
        )

    for g in groups:
        _group(dev, g, file, settings, view)
    _schedulers(dev, settings, file)
    _default_ecn(dev, settings, file)
    for key, (value, line) in settings.items():
        if key.startswith(("source.", "remark.")) or (
            key == "traffic.packet_priority_remark_set" and value.strip("[] ")
        ):
            dev.notes.append(f"{file} line {line}: {key} = {value}: not modelled")
    dev.neutral = {n: p for p in dev.ports if (n := cumulus_neutral(p)) is not None}
    dev.settle_defaults()
    return dev


def _group(
    dev: ObservedDevice,
    g: PortGroup,
    file: str,
    settings: dict[str, tuple[str, int]],
    view: Callable[[str], PortView],
) -> None:
    list_key = f"{g.feature}.port_group_list"
    where = f"{file} line {g.line}: {g.feature}.{g.name}"
    if not g.listed:
        if list_key in settings:
            dev.notes.append(
                f"{where} is not in {list_key} = {settings[list_key][0]}: inactive, not applied"
            )
        else:
            dev.notes.append(
                f"{where}: {list_key} is not in the capture, so whether switchd applies this "
                "group is unknown; not applied"
            )
        return
    if not g.settings:
        dev.notes.append(f"{where} is listed in {list_key} but has no settings in this capture")
        return
    if g.port_set is None:
        dev.notes.append(f"{where} has no port_set: applies to no port")
        return
    ports = expand_ports(g.port_set)
    odd = [p for p in ports if p != ALL_PORTS and not _PORT.match(p)]
    if odd:
        dev.notes.append(f"{where}: port_set part(s) {', '.join(odd)} could not be expanded")
    s = g.settings
    cos = tuple(g.cos_list)
    if g.feature == "pfc":
        for p in ports:
            v = view(p)
            v.pfc_priorities = Val(cos, Src(file, g.line, f"pfc.{g.name}.cos_list = {list(cos)}"))
            xoff = text_int(s.get("xoff_size"))
            if xoff is not None:
                text = f"pfc.{g.name}.xoff_size = {xoff}"
                if "port_buffer_bytes" in s:
                    text += f", port_buffer_bytes = {s['port_buffer_bytes']}"
                v.headroom_bytes = Val(xoff, Src(file, g.line, text))
            cable = s.get("cable_length")
            if cable is not None and (c := text_float(cable)) is not None:
                v.cable_length_m = Val(c, Src(file, g.line, f"pfc.{g.name}.cable_length = {cable}"))
    elif g.feature == "ecn_red":
        obs = EcnObs(
            queue=None,
            queues=cos,
            kmin_bytes=text_int(s.get("min_threshold_bytes")),
            kmax_bytes=text_int(s.get("max_threshold_bytes")),
            probability_pct=text_float(s.get("probability")),
            enabled=text_bool(s.get("ecn_enable")),
            src=Src(file, g.line, f"ecn_red.{g.name} cos_list {list(cos)} ({g.port_set})"),
            kmin_raw=s.get("min_threshold_bytes"),
            kmax_raw=s.get("max_threshold_bytes"),
        )
        for p in ports:
            view(p).ecn.append(obs)
    else:
        dev.notes.append(f"{where}: link pause (802.3x) on {g.port_set}: not PFC, not modelled")


def _duplicate_dscp(dev: ObservedDevice, settings: dict[str, tuple[str, int]], file: str) -> None:
    """A DSCP listed under two ``cos_N``: the parser keeps the later line; say so."""
    seen: dict[int, tuple[int, int]] = {}
    for key, (value, line) in sorted(settings.items(), key=lambda kv: kv[1][1]):
        m = re.match(r"^traffic\.cos_(\d)\.(?:priority_source|packet_priorities)\.dscp$", key)
        if m is None:
            continue
        for d in _ids(value):
            if d in seen and seen[d][0] != int(m.group(1)):
                first_cos, first_line = seen[d]
                dev.notes.append(
                    f"{file} lines {first_line} and {line}: DSCP {d} is listed under "
                    f"cos_{first_cos} and cos_{m.group(1)}; taken as cos_{m.group(1)} "
                    "(the later line)"
                )
            seen[d] = (int(m.group(1)), line)


def _schedulers(dev: ObservedDevice, settings: dict[str, tuple[str, int]], file: str) -> None:
    for key, (value, _line) in settings.items():
        m = re.match(r"^priority_group\.([^.]+)\.cos_list$", key)
        if m is None:
            continue
        group = m.group(1)
        w = settings.get(f"priority_group.{group}.weight")
        if w is None:
            continue
        weight = text_int(w[0])
        if weight is None:
            dev.notes.append(f"{file} line {w[1]}: priority_group.{group}.weight = {w[0]}: unread")
            continue
        kind = "strict" if weight == 0 else "dwrr"
        text = f"priority_group.{group}.cos_list = {value}, weight = {weight}"
        for cos in _ids(value):
            dev.schedulers.setdefault(cos, Val(kind, Src(file, w[1], text)))


def _default_ecn(dev: ObservedDevice, settings: dict[str, tuple[str, int]], file: str) -> None:
    """4.x ``default_ecn_red_conf.*``: ECN on every port that no ecn_red group overrides."""
    keys = {
        k.split(".", 1)[1]: v for k, v in settings.items() if k.startswith("default_ecn_red_conf.")
    }
    if not keys or dev.defaults.ecn:
        return
    line = min(ln for _v, ln in keys.values())
    cos = _ids(keys["cos_list"][0]) if "cos_list" in keys else ()

    def get(k: str) -> str | None:
        return keys[k][0] if k in keys else None

    dev.defaults.ecn.append(
        EcnObs(
            queue=None,
            queues=cos,
            kmin_bytes=text_int(get("min_threshold_bytes")),
            kmax_bytes=text_int(get("max_threshold_bytes")),
            probability_pct=text_float(get("probability")),
            enabled=text_bool(get("ecn_enable")),
            src=Src(file, line, "default_ecn_red_conf"),
            kmin_raw=get("min_threshold_bytes"),
            kmax_raw=get("max_threshold_bytes"),
        )
    )


def _ids(raw: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", raw))


def _short(values: list[int]) -> str:
    return ",".join(map(str, values[:12])) + (
        f" (+{len(values) - 12} more)" if len(values) > 12 else ""
    )
