"""Render a lossless-RoCE :class:`~aifabric.dialects.intent.DeviceIntent` as a Cisco NX-OS
(Nexus 9000, 8-queue Cloud Scale / Silicon One) running-config, and plan it against what a switch
has now.

The config is the chain the NX-OS interpreter (:mod:`aifabric.dialects.nxos`) reads back:

* ``class-map type qos match-all AIFABRIC-<CLASS>`` per traffic class with DSCPs
  (``match dscp 26``) → ``policy-map type qos AIFABRIC-QOS-IN`` (``set qos-group <tc>``;
  unmatched DSCPs fall in ``class-default``, qos-group 0), attached on every data port with
  ``service-policy type qos input``;
* ``policy-map type network-qos AIFABRIC-NQ``: the system classes ``c-8q-nq<tc>`` of the
  intent's classes and ``c-8q-nq-default``, ``mtu`` the device MTU, ``pause pfc-cos <p>`` on the
  PFC priorities only (S12: the RoCE class);
* ``policy-map type queuing AIFABRIC-8Q-OUT`` over ``c-out-8q-q7`` .. ``c-out-8q-q1`` and
  ``c-out-8q-q-default``: strict classes (CNP) ``priority level 1`` (then 2, ...), DWRR
  classes ``bandwidth remaining percent`` their weight, the default queue the rest, unused
  queues 0; the RoCE queue carries ``random-detect minimum-threshold X kbytes
  maximum-threshold Y kbytes drop-probability P weight 0 ecn`` (S13, S18);
* ``system qos`` attaching the network-qos and the output queuing policies;
* per fabric port (neutral ``Ethernet7`` → ``Ethernet1/7``, ``Ethernet7/2`` →
  ``Ethernet1/7/2``, broken-out ports declared with ``interface breakout module 1 port 7 map
  100g-4x``): ``description`` naming the peer, ``mtu``, ``priority-flow-control mode on``
  (lossless ports; ``off`` elsewhere so DCBX cannot turn PFC on), the PFC watchdog and the
  classification policy;
* the global PFC watchdog: ``priority-flow-control watch-dog-interval on``, ``watch-dog
  interval`` (poll, ms), ``watch-dog shutdown-multiplier`` (detection = interval x multiplier)
  and ``auto-restore multiplier`` (restoration = interval x multiplier). NX-OS's watchdog
  always drops the stuck queue's packets; an intent action ``forward``/``alert`` is noted.

**Units.** NX-OS WRED thresholds take ``packets``, ``bytes``, ``kbytes`` or ``mbytes``. The
thresholds are written in ``kbytes`` when both are whole multiples of 1024 bytes (the binary
kilobyte :func:`aifabric.evidence.qos.size_to_bytes` reads ``kbytes`` as; S18's 51200 / 102400
bytes are 50 / 100 kbytes, the lossless-lab's 153600 / 1536000 are 150 / 1500), and in
``bytes`` otherwise, so the file always reads back to the intent's exact byte counts. Cisco's
guide does not say whether its ``kbytes`` is 1000 or 1024 bytes; the ASIC rounds thresholds to
its buffer cell size either way (a difference of 2.4 %, below one cell at these depths).

**Headroom.** NX-OS sizes the no-drop ingress headroom of a ``pause pfc-cos`` class itself
(per port speed), with no per-port knob on the Nexus 9000; the IEEE bound computed by the
intent is written as a ``!`` comment above each lossless interface for the reader to compare
with ``show queuing interface``. The ECN reasoning is a comment above the queuing policy.

**Change plans** (:meth:`NxosDialect.plan`) use :func:`aifabric.dialects.render.plan_cli`, then
order the script the way NX-OS accepts it: new top-level definitions (class-maps, policy-maps)
first, then each changed mode with its ``no`` lines before its new lines (an interface or
``system qos`` holds one policy of each type: the old one is detached before the new one is
attached), and the ``no policy-map`` / ``no class-map`` of definitions nothing uses any more
last (NX-OS refuses to delete an attached policy). Owned: QoS definitions, ``system qos``,
the global watchdog, and the QoS lines (``service-policy``, ``priority-flow-control``) of the
interfaces the fabric file names. Interfaces the fabric does not name keep everything, and so
do the policies and class-maps they still use. Interface ranges of the existing config
(``interface Ethernet1/1/1 - 2``, as hand-written configs have them) are compared port by port
(:func:`per_port`), so a range covering fabric and other ports is split correctly.

Sources (also :attr:`NxosDialect.follows` and the template header): Cisco Nexus 9000 Series
NX-OS Quality of Service Configuration Guide, Release 10.5(x) ("Using Modular QoS CLI",
"Configuring Network QoS", "Configuring Queuing and Scheduling" incl. WRED/ECN, "Configuring
Priority Flow Control" incl. the PFC watchdog); Cisco "Data Center Networking Blueprint for
AI/ML Applications" white paper (RoCEv2 class on qos-group 3 with ``pause pfc-cos 3``, CNP in
strict priority, WRED ``weight 0 ecn``). Seed S11-S14, S18.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from aifabric.dialects.eos import expand_interfaces
from aifabric.dialects.intent import DeviceIntent, PortIntent
from aifabric.dialects.render import ChangePlan, RenderedFile, plan_cli, template_env
from aifabric.explain import Explained

__all__ = [
    "DIALECT",
    "FOLLOWS",
    "NAMES",
    "NxosDialect",
    "NxosNames",
    "ecn_threshold",
    "nxos_port",
    "order_plan",
    "per_port",
    "watchdog_timers",
]

FOLLOWS: tuple[str, ...] = (
    "https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/"
    "cisco-nexus-9000-series-nx-os-quality-of-service-configuration-guide-105x/"
    "m-configuring-queuing-and-scheduling.html",
    "https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/"
    "cisco-nexus-9000-series-nx-os-quality-of-service-configuration-guide-105x/"
    "m-configuring-priority-flow-control.html",
    "https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/",
    "https://www.cisco.com/c/en/us/td/docs/dcn/whitepapers/"
    "cisco-data-center-networking-blueprint-for-ai-ml-applications.html",
)
"""The public documents the template follows (named in its header too)."""


@dataclass(frozen=True, slots=True)
class NxosNames:
    """The names the rendered config gives its policies (NX-OS names: letters, digits, ``-``
    and ``_``, at most 40 characters)."""

    prefix: str = "AIFABRIC"
    qos_in: str = "AIFABRIC-QOS-IN"
    network_qos: str = "AIFABRIC-NQ"
    queuing_out: str = "AIFABRIC-8Q-OUT"

    def class_map(self, tc_name: str) -> str:
        """``AIFABRIC-ROCE`` for traffic class ``roce``."""
        clean = re.sub(r"[^A-Za-z0-9_-]", "-", tc_name).upper()
        return f"{self.prefix}-{clean}"[:40]


NAMES = NxosNames()

_NEUTRAL = re.compile(r"^Ethernet(\d+)(?:/(\d+))?$")
_WRAP = 96
_QOS_TOP = ("class-map type ", "policy-map type ")
_GLOBAL_WATCHDOG = (
    "priority-flow-control watch-dog",
    "priority-flow-control auto-restore ",
    "priority-flow-control fixed-restore ",
)
_SERVICE = re.compile(r"^service-policy (?:type \S+ )?(?:input |output )?(\S+)")
_CLASS_LINE = re.compile(r"^class (?:type \S+ )?(\S+)$")


def nxos_port(neutral: str) -> str:
    """NX-OS name of a neutral port: ``Ethernet7`` → ``Ethernet1/7``, ``Ethernet7/2`` →
    ``Ethernet1/7/2`` (module 1, breakout sub-port 2); other names are kept as given."""
    m = _NEUTRAL.match(neutral)
    if m is None:
        return neutral
    port, sub = m.group(1), m.group(2)
    return f"Ethernet1/{port}" if sub is None else f"Ethernet1/{port}/{sub}"


def ecn_threshold(nbytes: int, other: int) -> tuple[int, str]:
    """(value, unit) of a WRED threshold: ``kbytes`` when both thresholds are whole binary
    kilobytes (``nbytes`` and ``other`` divisible by 1024), else ``bytes``; either way the
    parser reads back ``nbytes`` exactly."""
    if nbytes % 1024 == 0 and other % 1024 == 0:
        return nbytes // 1024, "kbytes"
    return nbytes, "bytes"


def watchdog_timers(detection_ms: int, restoration_ms: int) -> tuple[int, int, int]:
    """(poll interval ms, shutdown multiplier, auto-restore multiplier) whose products come
    closest to the intent's detection and restoration times within NX-OS's ranges (interval
    100-1000 ms, shutdown multiplier 1-10, auto-restore multiplier 0-100): the default 100 ms
    poll when detection fits in 10 polls, else the shortest poll that does."""
    interval = min(1000, max(100, 100 * math.ceil(detection_ms / 1000)))
    shutdown = min(10, max(1, round(detection_ms / interval)))
    restore = min(100, max(0, round(restoration_ms / interval)))
    return interval, shutdown, restore


def _dscp_list(values: list[int]) -> str:
    """``[24, 25, 26, 30]`` → ``24-26,30`` (NX-OS ``match dscp`` list syntax)."""
    out: list[str] = []
    vals = sorted(set(values))
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[i]) if i == j else f"{vals[i]}-{vals[j]}")
        i = j + 1
    return ",".join(out)


def _comment(text: str) -> list[str]:
    """``text`` as ``!`` comment lines of at most ~100 characters."""
    return [
        f"! {ln}"
        for ln in textwrap.wrap(text, _WRAP, break_on_hyphens=False, break_long_words=False)
    ]


def _weights(intent: DeviceIntent, strict: set[int]) -> dict[int, int]:
    """DWRR ``bandwidth remaining percent`` per queue: each weighted class its weight, the
    unweighted classes and the default queue share the rest equally (the default queue takes
    what an uneven split leaves); queues no class uses get 0."""
    classes = {tc.tc: tc for tc in intent.qos.traffic_classes}
    explicit = {
        tc: c.weight_percent
        for tc, c in classes.items()
        if tc != 0 and tc not in strict and c.weight_percent is not None
    }
    sharing = sorted(({*classes, 0} - strict) - set(explicit))
    rest = max(0, 100 - sum(explicit.values()))
    out = {q: 0 for q in range(8)}
    out.update(explicit)
    if sharing:
        each = rest // len(sharing)
        for tc in sharing:
            out[tc] = each
        out[sharing[0]] += rest - each * len(sharing)
    return out


def _context(intent: DeviceIntent, names: NxosNames) -> dict[str, Any]:
    """Everything the template writes, as plain values."""
    qos = intent.qos
    classes = {tc.tc: tc for tc in qos.traffic_classes}
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(qos.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    qos_classes: list[dict[str, Any]] = []
    for tc, dscps in sorted(by_tc.items(), key=lambda kv: (kv[0] == 0, kv[0])):
        name = names.class_map(classes[tc].name if tc in classes else f"tc{tc}")
        if any(c["name"] == name for c in qos_classes):
            name = names.class_map(f"tc{tc}")  # two class names that clean up alike
        qos_classes.append({"name": name, "dscp": _dscp_list(dscps), "group": tc})
    mtu = intent.device_mtu or 9216
    pfc = set(qos.pfc_priorities)
    nq_tcs = sorted(({tc for tc in classes if tc != 0} | pfc) - {0})
    nq = [{"cls": f"c-8q-nq{tc}", "pause": tc in pfc, "cos": tc, "mtu": mtu} for tc in nq_tcs]
    nq.append({"cls": "c-8q-nq-default", "pause": 0 in pfc, "cos": 0, "mtu": mtu})

    strict_tcs = sorted(
        {tc for tc, c in classes.items() if c.scheduler == "strict"}
        | ({qos.cnp_priority} if qos.cnp_priority not in classes else set()),
        reverse=True,
    )
    strict = set(strict_tcs)
    weights = _weights(intent, strict)
    ecn = qos.ecn
    queues: list[dict[str, Any]] = []
    for q in [7, 6, 5, 4, 3, 2, 1, 0]:
        entry: dict[str, Any] = {
            "cls": "c-out-8q-q-default" if q == 0 else f"c-out-8q-q{q}",
            "priority": strict_tcs.index(q) + 1 if q in strict else None,
            "bandwidth": None if q in strict else weights[q],
            "red": None,
        }
        if ecn is not None and q == intent.roce_queue:
            kmin, unit_min = ecn_threshold(ecn.kmin_bytes, ecn.kmax_bytes)
            kmax, unit_max = ecn_threshold(ecn.kmax_bytes, ecn.kmin_bytes)
            entry["red"] = {
                "min": kmin,
                "min_unit": unit_min,
                "max": kmax,
                "max_unit": unit_max,
                "prob": round(ecn.pmax_percent),
            }
        queues.append(entry)

    ecn_notes: list[str] = []
    headroom: dict[str, Explained] = {}
    for e in intent.explained:
        if e.quantity.endswith("ECN thresholds on the RoCE queue"):
            ecn_notes += _comment(e.line())
        elif e.quantity.endswith(" PFC headroom"):
            port = e.quantity[len(intent.name) + 1 : -len(" PFC headroom")]
            headroom[port] = e
    if ecn is not None and round(ecn.pmax_percent) != ecn.pmax_percent:
        ecn_notes += _comment(
            f"drop-probability takes whole percent: the intent's {ecn.pmax_percent:g} % is "
            f"written {round(ecn.pmax_percent)} %"
        )

    watchdog = _watchdog(intent) if pfc else None

    return {
        "hostname": intent.name,
        "fabric": intent.fabric,
        "model": intent.model,
        "names": names,
        "qos_classes": qos_classes,
        "nq": nq,
        "queues": queues,
        "ecn_notes": ecn_notes,
        "watchdog": watchdog,
        "breakouts": _breakouts(intent),
        "interfaces": [_interface(p, headroom.get(p.name), watchdog is not None)
                       for p in intent.ports],
    }  # fmt: skip


def _watchdog(intent: DeviceIntent) -> dict[str, Any] | None:
    """The global PFC watchdog lines' values and their explanation, None when the intent
    has no enabled watchdog."""
    wd = intent.qos.pfc_watchdog
    if wd is None or not wd.enabled:
        return None
    interval, shutdown, restore = watchdog_timers(wd.detection_time_ms, wd.restoration_time_ms)
    note = (
        f"PFC watchdog: a no-drop queue still paused after {interval} ms x {shutdown} = "
        f"{interval * shutdown} ms is shut and its packets dropped; it is restored after "
        f"{interval} ms x {restore} = {interval * restore} ms without pause frames "
        f"(intent: detection {wd.detection_time_ms} ms, restoration "
        f"{wd.restoration_time_ms} ms, action {wd.action})."
    )
    if wd.action != "drop":
        note += f" NX-OS's watchdog always drops; the intent's '{wd.action}' is not available."
    return {
        "interval": interval,
        "shutdown": shutdown,
        "restore": restore,
        "note": _comment(note),
    }


def _breakouts(intent: DeviceIntent) -> list[dict[str, Any]]:
    """``interface breakout module 1 port N map <speed>g-<count>x`` for each broken-out port:
    the sub-port speed is that of the fabric's links on its sub-ports."""
    out: list[dict[str, Any]] = []
    for port, count in sorted(intent.breakouts.items()):
        speeds = [p.speed_gbps for p in intent.ports if p.name.startswith(f"Ethernet{port}/")]
        if not speeds:
            continue
        out.append({"port": port, "map": f"{max(speeds):g}g-{count}x"})
    return out


def _interface(p: PortIntent, headroom: Explained | None, watchdog: bool) -> dict[str, Any]:
    notes: list[str] = []
    if headroom is not None:
        inputs = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in headroom.inputs.items()
        )
        notes += _comment(
            f"PFC headroom (S12): IEEE bound {headroom.value} {headroom.unit} = "
            f"{headroom.formula}; {inputs}."
            + (f" {headroom.note}." if headroom.note else "")
            + " NX-OS reserves the no-drop headroom itself: compare with 'show queuing "
            "interface'."
        )
    return {
        "name": nxos_port(p.name),
        "description": f"{p.kind} link to {p.peer}",
        "mtu": p.mtu_bytes,
        "pfc": "on" if p.lossless else "off",
        "watchdog": watchdog and p.lossless,
        "classify": p.kind != "management",
        "notes": notes,
    }


@dataclass(frozen=True, slots=True)
class NxosDialect:
    """Cisco NX-OS (Nexus 9000) running-config: one ``<device>.cfg`` per switch."""

    name: str = "nxos"
    title: str = "Cisco NX-OS (Nexus 9000) running-config"
    role: Literal["switch", "host"] = "switch"
    follows: tuple[str, ...] = FOLLOWS
    names: NxosNames = NAMES

    def render(self, intent: DeviceIntent) -> list[RenderedFile]:
        """The device's running-config (kind ``nxos-config``)."""
        text = (
            template_env("aifabric.dialects.nxos")
            .get_template("running-config.j2")
            .render(**_context(intent, self.names))
        )
        return [RenderedFile(intent.name, f"{intent.name}.cfg", text, "nxos-config")]

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan:
        """A configuration-session script turning ``existing`` into ``rendered`` (see the
        module docstring for what is owned and how the script is ordered)."""
        if existing is None:
            return plan_cli(rendered.device, rendered.path, rendered.text, None, owned=_none)
        have = per_port(existing)
        owned = _owner(rendered.text, have)
        plan = plan_cli(rendered.device, rendered.path, rendered.text, have, owned=owned)
        entries = _plan_entries(plan.plan)
        twice = len(entries) - len(set(entries))  # a line the device has twice goes once
        return ChangePlan(
            plan.device, plan.path, plan.existing, plan.added, plan.removed - twice,
            order_plan(plan.plan, rendered.text),
        )  # fmt: skip


def _none(_parents: tuple[str, ...], _line: str) -> bool:
    return False


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """Top-level lines of an indented config with the stripped lines under each."""
    out: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!"):
            continue
        if raw[:1] != " ":
            out.append((s, []))
        elif out:
            out[-1][1].append(s)
    return out


def per_port(text: str) -> str:
    """``text`` with every interface range section (``interface Ethernet1/1/1 - 2``,
    ``interface ethernet1/11-12``) written once per port it names, as a running-config prints
    them, so a change plan can name each port; other lines are kept as they are."""
    out: list[str] = []
    block: list[str] = []
    ports: list[str] = []

    def flush() -> None:
        for port in ports:
            out.append(f"interface {port}")
            out.extend(block)
        block.clear()
        ports.clear()

    for raw in text.splitlines():
        if ports and (raw[:1] == " " or not raw.strip()):
            block.append(raw)
            continue
        flush()
        if raw.startswith("interface "):
            spec = raw.split(None, 1)[1].strip()
            names = expand_interfaces(spec)
            if names != [spec]:
                ports.extend(names)
                continue
        out.append(raw)
    flush()
    return "\n".join(out) + "\n"


def _owner(rendered: str, existing: str) -> Callable[[tuple[str, ...], str], bool]:
    """``owned(parents, line)`` for :func:`plan_cli`: what the rendered config may remove
    from ``existing`` (written :func:`per_port`). The interfaces the fabric does not name
    keep everything, and so do the policies they attach and the class-maps those use."""
    mine = {top for top, _ in _sections(rendered) if top.startswith("interface ")}

    def ours(top: str) -> bool:
        return top in mine

    have = _sections(existing)
    kept_policies: set[str] = set()
    for top, children in have:
        if top.startswith("interface ") and not ours(top):
            for c in children:
                m = _SERVICE.match(c)
                if m is not None:
                    kept_policies.add(m.group(1))
    kept_classes: set[str] = set()
    for top, children in have:
        if top.startswith("policy-map type ") and top.rsplit(maxsplit=1)[-1] in kept_policies:
            for c in children:
                m = _CLASS_LINE.match(c)
                if m is not None:
                    kept_classes.add(m.group(1))

    def owned(parents: tuple[str, ...], line: str) -> bool:
        if not parents:
            if line.startswith("policy-map type "):
                return line.rsplit(maxsplit=1)[-1] not in kept_policies
            if line.startswith("class-map type "):
                return line.rsplit(maxsplit=1)[-1] not in kept_classes
            return line.startswith(_GLOBAL_WATCHDOG)
        top = parents[0]
        if top.startswith(_QOS_TOP) or top == "system qos":
            return True
        if ours(top):
            return line.startswith(("service-policy ", "priority-flow-control "))
        return False

    return owned


def order_plan(plan: str, rendered: str = "") -> str:
    """Rewrite a :func:`plan_cli` script as one NX-OS configuration-session tree: each mode
    entered once with everything that changes under it (a new section's lines under its own
    header), ``no`` lines before additions inside a mode, top-level additions in rendered
    order, and top-level removals last (``no policy-map`` before ``no class-map``); top-level
    sections follow their order in ``rendered`` when given. plan_cli writes a mode group as
    its parent lines (indented by depth), its change lines (the deepest) and a closing ``!``;
    top-level changes are unindented lines outside any group."""
    root: dict[str, Any] = {}
    for parents, line in _plan_entries(plan):
        node = root
        for p in parents:
            node = node.setdefault(p, {})
        node.setdefault(line, {})
    out: list[str] = []
    rank = {top: n for n, (top, _) in enumerate(_sections(rendered))}
    tops = sorted((k for k in root if not k.startswith("no ")),
                  key=lambda k: rank.get(k, len(rank)))  # fmt: skip
    gone = sorted((k for k in root if k.startswith("no ")),
                  key=lambda k: not k.startswith("no policy-map"))  # fmt: skip
    for key in [*tops, *gone]:
        _emit(key, root[key], 0, out)
        if root[key]:
            out.append("!")
    return "\n".join(out) + ("\n" if out else "")


def _plan_entries(plan: str) -> list[tuple[tuple[str, ...], str]]:
    """(parent mode lines, change) of each change of a :func:`plan_cli` script, in order."""
    entries: list[tuple[tuple[str, ...], str]] = []
    lines = plan.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith(" ") or not nxt.startswith(" "):
            entries.append(((), line.strip()))
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j] != "!":
            j += 1
        body = lines[i:j]
        depth = max(_indent(b) for b in body)
        parents = tuple(b.strip() for b in body if _indent(b) < depth)
        entries += [(parents, b.strip()) for b in body if _indent(b) == depth]
        i = j + 1
    return entries


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _emit(line: str, children: dict[str, Any], depth: int, out: list[str]) -> None:
    out.append("   " * depth + line)
    order = [k for k in children if k.startswith("no ")]
    order += [k for k in children if not k.startswith("no ")]
    for key in order:
        _emit(key, children[key], depth + 1, out)


DIALECT = NxosDialect()
"""The NX-OS dialect (:data:`aifabric.dialects.render.BUILTIN` ``nxos``)."""
