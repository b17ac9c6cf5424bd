"""Render a switch intent as NVIDIA Cumulus Linux 5.x NVUE configuration, and plan it against
what a switch has now.

Two files per switch, stating the same settings:

* ``<device>.nv``: the ``nv set`` command list, ending in ``nv config apply`` (evidence kind
  ``nvue``: the file verify reads back and ``--diff`` plans);
* ``<device>.startup.yaml``: the same settings as the ``- set:`` tree ``nv config show -o
  yaml`` prints and ``/etc/nvue.d/startup.yaml`` holds (``nv config replace`` / ``nv config
  patch`` take it). Its :attr:`RenderedFile.kind` is None: it is not planned separately. The
  config reader (:mod:`aifabric.dialects.load`) reads every file of a directory, so verify
  reads it too; it parses to the very ``nv set`` commands of the ``.nv`` file
  (:mod:`aifabric.evidence.nvue` turns each leaf of the tree into its command), and the
  loader's merge of two files of one device adds nothing the first did not state (tested).

What is set (paths and keywords from the Cumulus Linux 5.12 user guide, :data:`DOCS`):

* **RoCE defaults, when they are the intent.** ``nv set qos roce enable on`` and ``nv set qos
  roce mode lossless`` (the guide: ``nv set qos roce`` = ``mode lossless``) configure trust,
  DSCP ``8k..8k+7`` → switch priority ``k``, SP 3 → TC 3, SP 6 → TC 6, other SP → TC 0, ETS TC 6
  strict / TC 0 and 3 DWRR 50 %, PFC on SP 3 and ECN 150,000 / 1,500,000 bytes with
  probability 100 (what ``nv show qos roce`` prints as 146.48 KB / 1.43 MB). They are used only
  where the intent equals them (:func:`roce_defaults_match`): DSCP trust, PFC on priority 3
  only, RoCE priority 3, CNP priority 6, every DSCP the intent lists mapped as the default map
  maps it, classes TC 0 DWRR 50 %, TC 3 DWRR 50 % lossless, TC 6 strict, and ECN Kmin/Kmax/pmax
  exactly 150000 / 1500000 / 100. DSCPs the intent does not list then follow the default map
  (not TC 0), and the RoCE profile also marks ECN on TC 0: both are the switch's published
  defaults and are said so in the file.
* **Otherwise the explicit settings** (always for a non-default intent such as the S18
  example): ``qos mapping default-global trust l3`` (``l2`` for PCP trust); ``qos mapping
  default-global dscp <list> switch-priority <tc>`` for every DSCP, unlisted ones to TC 0, so
  no DSCP lands in the lossless class by the default map; ``qos egress-queue-mapping
  default-global switch-priority <sp> traffic-class <tc>``: each class's priority to its own
  queue, every other priority to TC 0 (two or three queues, S14); ``qos pfc default-global
  switch-priority <p>`` for the intent's PFC priorities only, with ``tx enable`` / ``rx enable``;
  ``qos congestion-control default-global traffic-class <roce tc> ecn enable``,
  ``min-threshold``/``max-threshold`` in bytes and ``probability`` (the pmax %), and ``ecn
  disable`` on TC 0 (the default profile marks ECN on TC 0 by default: "ECN on the RoCE queue
  only", S13/S18); ``qos egress-scheduler default-global traffic-class <tc> mode dwrr`` +
  ``bw-percent`` per DWRR class and ``mode strict`` for CNP (S18).
* **Headroom.** Spectrum switches size PFC headroom themselves from the cable length
  (``port-buffer`` and ``xoff-threshold``: "NVIDIA recommends you do not change"), so the file
  sets ``qos pfc default-global cable-length`` to the longest lossless cable of the switch in
  whole metres (rounded up; one profile for all ports, so every port reserves at least what
  its own cable needs) and records each port's IEEE headroom bound from the intent as a comment.
* **Per port** (neutral ``Ethernet7`` → ``swp7``, breakout sub-port ``Ethernet7/2`` →
  ``swp7s1``, Cumulus counting sub-ports from 0; ``interface swp7 link breakout 4x`` first):
  ``interface swpN link mtu M``; on lossless ports with a watchdog in the intent ``interface
  swpN qos pfc-watchdog state enable``, and once ``qos pfc-watchdog polling-interval 100`` /
  ``robustness ceil(detection / 100)`` (detection ≈ polling interval × robustness; NVUE has no
  restoration time or action setting, so those are left to the switch and said so).

ECN reasoning and headroom explanations (``intent.explained``) are ``#`` comments in both files.

Change plans (:meth:`NvueDialect.plan`): both sides are read as ``nv set`` commands (command
list or YAML), every id list expanded (``dscp 0-25,27`` → one setting per DSCP,
``interface swp1-4`` → one per port), and compared setting by setting: the rendered commands
that set anything missing or different, then ``nv unset`` for the owned settings the existing
configuration has and the intent does not (QoS mapping, PFC, egress mapping and scheduler,
congestion control, RoCE, watchdog, port MTU). An existing file with no ``nv set`` commands
(``nv show qos roce`` output is effective *state*, not a configuration) cannot be diffed as
commands: the plan says so, lists every rendered command (``nv set`` of a value already in
effect changes nothing), and compares the two as read (PFC, trust, DSCP classes, ECN,
schedulers, MTU), one ``#`` line per difference.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from aifabric.dialects.cumulus import expand_ports
from aifabric.dialects.intent import DeviceIntent, PortIntent
from aifabric.dialects.nvue import (
    ROCE_DEFAULT_ECN_BYTES,
    ROCE_DEFAULT_PFC_PRIORITY,
    interpret,
    roce_default_dscp_map,
)
from aifabric.dialects.observed import ObservedDevice, PortView
from aifabric.dialects.render import ChangePlan, RenderedFile, template_env
from aifabric.errors import InputError
from aifabric.evidence import parse_text
from aifabric.evidence.nvue import NvueSet
from aifabric.evidence.registry import detect_kind
from aifabric.model import QosPolicy

__all__ = [
    "DIALECT",
    "DOCS",
    "NvueDialect",
    "build_commands",
    "nvue_port",
    "roce_defaults_match",
    "yaml_tree",
]

_GUIDE = "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512"
_GITHUB = "https://github.com/CumulusNetworks/docs/blob"
DOCS: dict[str, str] = {
    "qos": f"{_GUIDE}/Layer-1-and-Switch-Ports/Quality-of-Service/",
    "roce": f"{_GUIDE}/Layer-1-and-Switch-Ports/Quality-of-Service/"
    "RDMA-over-Converged-Ethernet-RoCE/",
    "ports": f"{_GUIDE}/Layer-1-and-Switch-Ports/Interface-Configuration-and-Management/"
    "Switch-Port-Attributes/",
    "cli": f"{_GUIDE}/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-CLI/",
    "qos-source": f"{_GITHUB}/0d9c237942cebbe87320d80c7a27060743a697e3/content/"
    "cumulus-linux-512/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md",
    "roce-source": f"{_GITHUB}/045b0ce7ef33c2ce51b7e2970666b3b62b96b835/content/"
    "cumulus-linux-512/Layer-1-and-Switch-Ports/Quality-of-Service/"
    "RDMA-over-Converged-Ethernet-RoCE.md",
}
"""The NVIDIA Cumulus Linux 5.12 user guide pages the templates follow, and the guide's source
files in github.com/CumulusNetworks/docs at the commits read."""

_PROFILE = "default-global"
_NEUTRAL = re.compile(r"^Ethernet(\d+)(?:/(\d+))?$")
_ROCE_CLASSES = {0: ("dwrr", 50), 3: ("dwrr", 50), 6: ("strict", None)}
_WATCHDOG_POLL_MS = 100
"""NVUE's default PFC watchdog polling interval (QoS guide: "The default polling interval is 100
milliseconds"; the command accepts 100-5000)."""
_WRAP = 96


def nvue_port(neutral: str) -> str:
    """``Ethernet7`` → ``swp7``; ``Ethernet7/2`` → ``swp7s1`` (sub-ports count from 0 on
    Cumulus); any other name is kept as given."""
    m = _NEUTRAL.match(neutral)
    if m is None:
        return neutral
    port, sub = m.group(1), m.group(2)
    return f"swp{port}" if sub is None else f"swp{port}s{int(sub) - 1}"


def _ranges(ids: Iterable[int]) -> str:
    """``[0, 1, 2, 4, 5, 7]`` → ``0-2,4-5,7`` (NVUE id lists)."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(ids)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [i]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True, slots=True)
class Command:
    """One ``nv set`` command: its words after ``nv set`` (the last one the value, or the
    member of a collection such as ``switch-priority 3``)."""

    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return "nv set " + " ".join(self.words)


@dataclass(frozen=True, slots=True)
class Section:
    """Commands under a ``#`` comment block."""

    title: str
    comments: tuple[str, ...]
    commands: tuple[Command, ...]


def _default_tc(qos: QosPolicy) -> int:
    """Where unlisted DSCPs and unused priorities go: TC 0 when it is a class (the policy's
    "unlisted -> 0"), else the lowest lossy class."""
    tcs = sorted(tc.tc for tc in qos.traffic_classes)
    lossy = [tc.tc for tc in qos.traffic_classes if not tc.lossless]
    if 0 in tcs or not tcs:
        return 0
    return min(lossy) if lossy else tcs[0]


def _full_dscp_map(qos: QosPolicy) -> dict[int, int]:
    default = _default_tc(qos)
    return {d: qos.dscp_to_tc.get(d, default) for d in range(64)}


def roce_defaults_match(intent: DeviceIntent) -> bool:
    """Whether ``nv set qos roce mode lossless`` alone configures what the intent asks (see the
    module docstring for the list)."""
    qos = intent.qos
    ecn = qos.ecn
    classes = {tc.tc: (tc.scheduler, tc.weight_percent) for tc in qos.traffic_classes}
    lossless = {tc.tc for tc in qos.traffic_classes if tc.lossless}
    default_map = roce_default_dscp_map()
    return (
        qos.trust == "dscp"
        and tuple(qos.pfc_priorities) == (ROCE_DEFAULT_PFC_PRIORITY,)
        and qos.roce_priority == ROCE_DEFAULT_PFC_PRIORITY
        and qos.cnp_priority == 6
        and all(default_map[d] == tc for d, tc in qos.dscp_to_tc.items())
        and classes == _ROCE_CLASSES
        and lossless == {ROCE_DEFAULT_PFC_PRIORITY}
        and ecn is not None
        and (ecn.kmin_bytes, ecn.kmax_bytes) == ROCE_DEFAULT_ECN_BYTES
        and ecn.pmax_percent == 100.0
    )


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, _WRAP, break_on_hyphens=False, break_long_words=False) or [""]


def _explained(intent: DeviceIntent, what: str) -> list[str]:
    out: list[str] = []
    for e in intent.explained:
        if what in e.quantity:
            out += _wrap(e.line())
    return out


def build_commands(intent: DeviceIntent) -> tuple[bool, list[Section]]:
    """(RoCE defaults used, the sections of ``nv set`` commands) for one switch."""
    qos = intent.qos
    roce = roce_defaults_match(intent)
    sections: list[Section] = []
    lossless = intent.lossless_ports
    pfc_on = bool(qos.pfc_priorities) and bool(lossless)

    def q(*words: str | int) -> Command:
        return Command(tuple(str(w) for w in words))

    if roce:
        sections.append(
            Section(
                "RoCE lossless (the switch's RoCE defaults equal the intent)",
                (
                    "trust DSCP, DSCP 8k..8k+7 -> switch priority k, SP 3 -> TC 3, SP 6 -> TC 6, "
                    "other SP -> TC 0; ETS TC 6 strict, TC 0 and TC 3 DWRR 50%; PFC on SP 3; "
                    "ECN 150000/1500000 bytes, probability 100, on TC 0 and TC 3 (the RoCE "
                    "profile's published defaults; DSCPs the intent does not list follow the "
                    "default map).",
                ),
                (q("qos", "roce", "enable", "on"), q("qos", "roce", "mode", "lossless")),
            )
        )
    else:
        full = _full_dscp_map(qos)
        by_tc: dict[int, list[int]] = {}
        for d, tc in full.items():
            by_tc.setdefault(tc, []).append(d)
        trust = "l3" if qos.trust == "dscp" else "l2"
        cmds = [q("qos", "mapping", _PROFILE, "trust", trust)]
        cmds += [
            q("qos", "mapping", _PROFILE, "dscp", _ranges(ds), "switch-priority", tc)
            for tc, ds in sorted(by_tc.items())
        ]
        sections.append(
            Section(
                "Classification (S14): DSCP -> switch priority",
                (
                    f"trust {qos.trust}; DSCP {qos.roce_dscp} (RoCE) and {qos.cnp_dscp} (CNP) to "
                    "their classes, every other DSCP to TC "
                    f"{_default_tc(qos)} so none reaches the lossless class by the default map.",
                ),
                tuple(cmds),
            )
        )
        tcs = sorted(tc.tc for tc in qos.traffic_classes)
        default = _default_tc(qos)
        others = [sp for sp in range(8) if sp not in tcs]
        sp_to_tc: dict[int, list[int]] = {tc: [tc] for tc in tcs}
        sp_to_tc.setdefault(default, []).extend(others)
        emap = [
            q("qos", "egress-queue-mapping", _PROFILE, "switch-priority", _ranges(sps),
              "traffic-class", tc)
            for tc, sps in sorted(sp_to_tc.items())
        ]  # fmt: skip
        sections.append(
            Section(
                f"Egress queues (S14): {len(tcs)} classes, priority k -> queue k",
                (f"unused priorities {_ranges(others) or '-'} to TC {default}.",),
                tuple(emap),
            )
        )
        if pfc_on:
            prios = _ranges(qos.pfc_priorities)
            sections.append(
                Section(
                    f"PFC (S12): priority {prios} only is lossless",
                    (),
                    (
                        q("qos", "pfc", _PROFILE, "switch-priority", prios),
                        q("qos", "pfc", _PROFILE, "tx", "enable"),
                        q("qos", "pfc", _PROFILE, "rx", "enable"),
                    ),
                )
            )
        ecn_cmds: list[Command] = []
        roce_tc = intent.roce_queue
        if roce_tc != 0:
            ecn_cmds.append(q("qos", "congestion-control", _PROFILE, "traffic-class", 0, "ecn",
                              "disable"))  # fmt: skip
        if qos.ecn is not None:
            cc = ("qos", "congestion-control", _PROFILE, "traffic-class", str(roce_tc))
            ecn_cmds += [
                q(*cc, "ecn", "enable"),
                q(*cc, "min-threshold", qos.ecn.kmin_bytes),
                q(*cc, "max-threshold", qos.ecn.kmax_bytes),
                q(*cc, "probability", _num(qos.ecn.pmax_percent)),
            ]
        sections.append(
            Section(
                f"ECN (S13, S18): on the RoCE queue {roce_tc} only",
                (
                    *_explained(intent, "ECN"),
                    "The default profile marks ECN on TC 0; that is turned off.",
                ),
                tuple(ecn_cmds),
            )
        )
        sched: list[Command] = []
        for cls in sorted(qos.traffic_classes, key=lambda c: c.tc):
            base = ("qos", "egress-scheduler", _PROFILE, "traffic-class", str(cls.tc))
            if cls.scheduler == "strict":
                sched.append(q(*base, "mode", "strict"))
            else:
                sched.append(q(*base, "mode", "dwrr"))
                if cls.weight_percent is not None:
                    sched.append(q(*base, "bw-percent", cls.weight_percent))
        sections.append(
            Section(
                f"Egress scheduler (S18): CNP queue {intent.cnp_queue} strict, the others DWRR",
                (),
                tuple(sched),
            )
        )
    if pfc_on:
        cable = max(math.ceil(p.cable_m) for p in lossless)
        notes = [
            "The switch sizes each lossless priority group's headroom from the cable length "
            "(port-buffer / xoff-threshold left to it, as the QoS guide recommends). The "
            "longest lossless cable of this switch is set for the default profile; the IEEE "
            "bound per port, for comparison:",
            *_explained(intent, "PFC headroom"),
        ]
        sections.append(
            Section(
                f"PFC headroom: cable length {cable} m",
                tuple(notes),
                (q("qos", "pfc", _PROFILE, "cable-length", cable),),
            )
        )
    wd = qos.pfc_watchdog
    watchdog = pfc_on and wd is not None and wd.enabled
    if watchdog:
        assert wd is not None
        robustness = max(1, math.ceil(wd.detection_time_ms / _WATCHDOG_POLL_MS))
        sections.append(
            Section(
                "PFC watchdog (S20.3)",
                (
                    f"detection {wd.detection_time_ms} ms ~ polling interval "
                    f"{_WATCHDOG_POLL_MS} ms x robustness {robustness}; NVUE has no "
                    f"restoration-time or action setting (intent: {wd.restoration_time_ms} ms, "
                    f"{wd.action}): the switch's behaviour applies.",
                ),
                (
                    q("qos", "pfc-watchdog", "polling-interval", _WATCHDOG_POLL_MS),
                    q("qos", "pfc-watchdog", "robustness", robustness),
                ),
            )
        )
    port_cmds: list[Command] = []
    broken = sorted({int(m.group(1)) for p in intent.ports
                     if (m := _NEUTRAL.match(p.name)) and m.group(2)})  # fmt: skip
    for n in broken:
        count = intent.breakouts.get(n)
        if count:
            port_cmds.append(q("interface", f"swp{n}", "link", "breakout", f"{count}x"))
    for p in intent.ports:
        port_cmds.append(q("interface", nvue_port(p.name), "link", "mtu", p.mtu_bytes))
        if watchdog and p.lossless:
            port_cmds.append(q("interface", nvue_port(p.name), "qos", "pfc-watchdog", "state",
                               "enable"))  # fmt: skip
    sections.append(
        Section(
            "Ports (S11): MTU" + (", PFC watchdog on lossless ports" if watchdog else ""),
            tuple(_port_line(p) for p in intent.ports),
            tuple(port_cmds),
        )
    )
    return roce, sections


def _port_line(p: PortIntent) -> str:
    cable = f"{p.cable_m:g} m" + (" (assumed)" if p.cable_assumed else "")
    headroom = f", headroom {p.headroom_bytes} B" if p.headroom_bytes is not None else ""
    return (
        f"{nvue_port(p.name)} = {p.name} -> {p.peer}: {p.kind}, {p.speed_gbps:g}G, {cable}, "
        f"MTU {p.mtu_bytes}, {'lossless' if p.lossless else 'lossy'}{headroom}"
    )


def yaml_tree(commands: Iterable[Command]) -> list[str]:
    """The ``- set:`` tree of ``commands``, as NVUE prints it (4-space first level, 2 per level
    below; all-digit keys quoted; a collection member ends in ``{}``)."""
    root: dict[str, object] = {}
    for c in commands:
        node = root
        member = _is_member(c.words)
        keys = c.words if member else c.words[:-1]
        for k in keys[:-1]:
            child = node.setdefault(k, {})
            assert isinstance(child, dict)
            node = child
        if member:
            node.setdefault(keys[-1], {})
        else:
            node[keys[-1]] = _Value(c.words[-1])
    lines = ["- set:"]

    def emit(node: dict[str, object], indent: int) -> None:
        for k, v in node.items():
            key = f"'{k}'" if k.isdecimal() else k
            if isinstance(v, _Value):
                lines.append(f"{' ' * indent}{key}: {v.text}")
            elif isinstance(v, dict) and not v:
                lines.append(f"{' ' * indent}{key}: {{}}")
            else:
                assert isinstance(v, dict)
                lines.append(f"{' ' * indent}{key}:")
                emit(v, indent + 2)

    emit(root, 4)
    return lines


@dataclass(frozen=True, slots=True)
class _Value:
    text: str


def _is_member(words: tuple[str, ...]) -> bool:
    """Commands whose last word names a member of a collection, not a value."""
    return len(words) == 5 and words[:2] == ("qos", "pfc") and words[3] == "switch-priority"


# ---- change plans -------------------------------------------------------------------------

_OWNED_QOS = frozenset(
    {"mapping", "pfc", "egress-queue-mapping", "egress-scheduler", "congestion-control", "roce",
     "pfc-watchdog"}
)  # fmt: skip
_ID_AT: dict[tuple[str, str], int] = {
    ("mapping", "dscp"): 4,
    ("mapping", "pcp"): 4,
    ("egress-queue-mapping", "switch-priority"): 4,
    ("egress-scheduler", "traffic-class"): 4,
    ("congestion-control", "traffic-class"): 4,
    ("pfc", "switch-priority"): 4,
}
_Setting = tuple[tuple[str, ...], str | None]
"""(the path a setting addresses, its value; None for a collection member)."""


def _ids(raw: str) -> list[str]:
    out: list[str] = []
    for part in raw.split(","):
        m = re.match(r"^(\d+)-(\d+)$", part)
        if m and int(m.group(2)) - int(m.group(1)) < 4096:
            out += [str(i) for i in range(int(m.group(1)), int(m.group(2)) + 1)]
        elif part:
            out.append(part)
    return out


def _settings(words: tuple[str, ...]) -> list[_Setting]:
    """One command as the single settings it makes, id lists and port ranges expanded and
    equivalent short forms normalised (``qos roce`` = ``qos roce enable on`` + ``mode
    lossless``; ``qos pfc-watchdog`` on a port = ``state enable``)."""
    if not words:
        return []
    if words == ("qos", "roce"):
        return [(("qos", "roce", "enable"), "on"), (("qos", "roce", "mode"), "lossless")]
    variants: list[tuple[str, ...]] = [words]
    if words[0] == "interface" and len(words) >= 3:
        variants = [(words[0], p, *words[2:]) for p in expand_ports(words[1])]
    elif words[0] == "qos" and len(words) > 4:
        at = _ID_AT.get((words[1], words[3]))
        if at is not None:
            variants = [(*words[:at], i, *words[at + 1 :]) for i in _ids(words[at])]
    out: list[_Setting] = []
    for v in variants:
        w = (
            (*v, "state", "enable")
            if v[0] == "interface" and v[2:] == ("qos", "pfc-watchdog")
            else v
        )
        if _is_member(w):
            out.append((w, None))
        else:
            out.append((w[:-1], w[-1]))
    return out


def _owned(path: tuple[str, ...], ports: set[str]) -> bool:
    """Settings a plan may remove: the QoS families the intent states, and MTU / PFC watchdog
    of the ports the rendered config names (other ports are not the fabric's to change)."""
    if path[:1] == ("qos",):
        return len(path) > 1 and path[1] in _OWNED_QOS
    if path[:1] == ("interface",) and len(path) >= 4 and path[1] in ports:
        return path[2:4] in (("link", "mtu"), ("qos", "pfc-watchdog"))
    return False


def _commands_of(text: str) -> list[NvueSet]:
    return [r for r in parse_text(text, "nvue").records if isinstance(r, NvueSet)]


def _kind_of(text: str) -> str | None:
    try:
        return detect_kind(text)
    except InputError:
        return None


def plan_nvue(device: str, path: str, rendered: str, existing: str | None) -> ChangePlan:
    """The change plan of ``rendered`` against ``existing`` (see the module docstring)."""
    want_cmds = [r for r in _commands_of(rendered) if not r.unset]
    if existing is None:
        return ChangePlan(device, path, None, len(want_cmds), 0, rendered)
    kind = _kind_of(existing)
    if kind != "nvue":
        what = f"a {kind} file" if kind else "not a file any parser recognises"
        foreign = [
            f"# The existing file is {what}, not NVUE: nothing to compare with. All "
            f"{len(want_cmds)} rendered",
            "# commands are new.",
            *("nv set " + " ".join(r.words) for r in want_cmds),
            "nv config apply",
        ]
        return ChangePlan(device, path, "existing", len(want_cmds), 0, "\n".join(foreign) + "\n")
    have_cmds = _commands_of(existing)
    if not have_cmds:
        return _plan_from_state(device, path, rendered, existing, want_cmds)
    have: dict[tuple[str, ...], str | None] = {}
    for rec in have_cmds:
        for key, value in _settings(rec.words):
            if rec.unset:
                have.pop(key, None)
            else:
                have[key] = value
    want: dict[tuple[str, ...], str | None] = {}
    lines: list[str] = []
    for rec in want_cmds:
        settings = _settings(rec.words)
        want.update(settings)
        if any(key not in have or have[key] != value for key, value in settings):
            lines.append("nv set " + " ".join(rec.words))
    added = len(lines)
    removed = 0
    ports = {k[1] for k in want if k[0] == "interface"}
    for rec in have_cmds:
        if rec.unset:
            continue
        settings = [
            (k, v)
            for k, v in _settings(rec.words)
            if _owned(k, ports) and k in have and have[k] == v
        ]
        gone = [(k, v) for k, v in settings if k not in want]
        if not gone:
            continue
        if len(gone) == len(_settings(rec.words)):
            lines.append("nv unset " + " ".join(rec.words))
            removed += 1
        else:
            for k, v in gone:
                lines.append("nv unset " + " ".join(k if v is None else (*k, v)))
                removed += 1
        for k, _ in gone:
            have.pop(k, None)  # a later line stating the same setting is not unset twice
    text = "\n".join(lines) + ("\n" if lines else "")
    if lines:
        text += "nv config apply\n"
    return ChangePlan(device, path, "existing", added, removed, text)


def _plan_from_state(
    device: str, path: str, rendered: str, existing: str, want: list[NvueSet]
) -> ChangePlan:
    """``existing`` states no ``nv set`` commands (``nv show`` output, a foreign file): no
    command diff is possible; every rendered command is listed, with the differences between
    the two as read."""
    lines = [
        "# The existing file has no 'nv set' commands: 'nv show' output is effective state, not",
        "# a configuration, so which commands made it cannot be known and no 'nv unset' can be",
        f"# derived. All {len(want)} rendered commands follow ('nv set' of a value already in",
        "# effect changes nothing). What differs between the existing state and the rendered",
        "# configuration, as read:",
    ]
    diffs = state_differences(
        interpret(parse_text(existing, "nvue"), file="existing", name=device),
        interpret(parse_text(rendered, "nvue"), file="rendered", name=device),
    )
    lines += [f"#   {d}" for d in diffs] or ["#   none found in what both state"]
    lines += ["nv set " + " ".join(r.words) for r in want]
    lines.append("nv config apply")
    return ChangePlan(device, path, "existing", len(want), 0, "\n".join(lines) + "\n")


def _ecn_marks(v: PortView) -> dict[int, tuple[int | None, int | None, float | None]]:
    out: dict[int, tuple[int | None, int | None, float | None]] = {}
    for m in v.ecn:
        if m.enabled is False:
            continue
        queues = m.queues or ((m.queue,) if m.queue is not None else tuple(range(8)))
        for queue in queues:
            out[queue] = (m.kmin_bytes, m.kmax_bytes, m.probability_pct)
    return out


def _fmt_ecn(x: tuple[int | None, int | None, float | None] | None) -> str:
    if x is None:
        return "off"
    kmin, kmax, p = x
    return f"{kmin}/{kmax} B, p {_num(p) if p is not None else '?'}"


def state_differences(have: ObservedDevice, want: ObservedDevice) -> list[str]:
    """What differs between two devices as read (device-wide view): PFC priorities, trust, the
    class of each DSCP, SP -> TC, ECN per queue, queue schedulers and MTU; a field the existing
    side does not state is said so."""
    h, w = have.whole(), want.whole()
    out: list[str] = []

    def val(x: object) -> str:
        if x is None:
            return "not stated"
        return str(getattr(x, "value", x))

    hp = h.pfc_priorities.value if h.pfc_priorities is not None else None
    if hp != (w.pfc_priorities.value if w.pfc_priorities is not None else None):
        out.append(f"PFC priorities: existing {val(h.pfc_priorities)}, rendered "
                   f"{val(w.pfc_priorities)}")  # fmt: skip
    if (h.trust and h.trust.value) != (w.trust and w.trust.value):
        out.append(f"trust: existing {val(h.trust)}, rendered {val(w.trust)}")
    moved: dict[tuple[int | None, int | None], list[int]] = {}
    for d in range(64):
        a, b = h.tc_of_dscp(d), w.tc_of_dscp(d)
        if a != b:
            moved.setdefault((a, b), []).append(d)
    for (a, b), ds in sorted(moved.items(), key=lambda x: x[1][0]):
        out.append(f"DSCP {_ranges(ds)}: existing class {a}, rendered {b}")
    for sp in range(8):
        a2, b2 = h.queue_of_tc(sp), w.queue_of_tc(sp)
        if a2 != b2:
            out.append(f"switch priority {sp}: existing TC {a2}, rendered TC {b2}")
    he, we = _ecn_marks(h), _ecn_marks(w)
    for queue in sorted(set(he) | set(we)):
        if he.get(queue) != we.get(queue):
            out.append(f"ECN on TC {queue}: existing {_fmt_ecn(he.get(queue))}, rendered "
                       f"{_fmt_ecn(we.get(queue))}")  # fmt: skip
    for queue in sorted(set(have.schedulers) | set(want.schedulers)):
        a3, b3 = have.schedulers.get(queue), want.schedulers.get(queue)
        if (a3 and a3.value) != (b3 and b3.value):
            out.append(f"TC {queue} scheduler: existing {val(a3)}, rendered {val(b3)}")
    if h.mtu_bytes is None and w.mtu_bytes is not None:
        out.append(f"MTU: not stated in the existing file, rendered {w.mtu_bytes.value}")
    elif h.mtu_bytes is not None and w.mtu_bytes is not None and h.mtu_bytes != w.mtu_bytes:
        out.append(f"MTU: existing {h.mtu_bytes.value}, rendered {w.mtu_bytes.value}")
    return out


# ---- the dialect --------------------------------------------------------------------------


class NvueDialect:
    """NVIDIA Cumulus Linux 5.x NVUE: ``nv set`` commands plus the equivalent startup YAML."""

    name = "nvue"
    title = "NVIDIA Cumulus Linux NVUE (nv set / startup.yaml)"
    role: Literal["switch", "host"] = "switch"
    follows: tuple[str, ...] = tuple(DOCS.values())

    def render(self, intent: DeviceIntent) -> list[RenderedFile]:
        roce, sections = build_commands(intent)
        env = template_env("aifabric.dialects.nvue")
        ctx = {
            "intent": intent,
            "docs": DOCS,
            "roce": roce,
            "sections": sections,
            "wrap": _wrap,
        }
        commands = [c for s in sections for c in s.commands]
        nv = env.get_template("nv-set.j2").render(**ctx)
        startup = env.get_template("startup.yaml.j2").render(**ctx, tree=yaml_tree(commands))
        return [
            RenderedFile(intent.name, f"{intent.name}.nv", nv, "nvue"),
            RenderedFile(intent.name, f"{intent.name}.startup.yaml", startup, None),
        ]

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan:
        return plan_nvue(rendered.device, rendered.path, rendered.text, existing)


DIALECT = NvueDialect()
