"""Render a switch's lossless-RoCE intent as an Arista EOS running-config, and plan the change
against the config a switch has now (``aifabric render --dialect eos``).

One file per switch, ``<device>.cfg`` (evidence kind ``eos-config``), from
``templates/running-config.cfg.j2``:

* **Classification** (S11): ``qos map dscp <list> to traffic-class N`` for *every* DSCP. EOS
  starts from its default DSCP map (0-7 → TC 1, 8-15 → TC 0, then ``dscp // 8``), which feeds
  all eight queues and puts DSCP 32-47 in TCs above RoCE's; the intent says "unlisted DSCP →
  TC 0" (:class:`aifabric.model.QosPolicy`), so the unlisted values are mapped to TC 0 in one
  line and RoCE / CNP each get theirs (S14: two or three queues in use).
* **Scheduling** (S14): EOS transmit queues are strict priority by default, higher queue
  first; ``no priority`` on a queue makes it (and every queue below it) round robin, weighted by
  ``bandwidth percent``. Each class of the intent gets its queue (TC → queue is 1:1):
  ``priority strict`` for the strict ones (CNP), ``no priority`` + ``bandwidth percent W`` for
  the DWRR ones. A strict class below a DWRR one cannot be expressed that way and gets a
  ``!`` warning in the file.
* **PFC** (S12): on lossless ports only, ``priority-flow-control on`` and one
  ``priority-flow-control priority N no-drop`` per PFC priority of the intent; the watchdog is
  enabled per port (``priority-flow-control pause watchdog``) with the global ``default
  timeout`` / ``default recovery-time`` (seconds) and ``action`` lines.
* **ECN** (S13, S18): on lossless ports, ``random-detect ecn minimum-threshold X bytes
  maximum-threshold Y bytes max-mark-probability P`` on the RoCE queue. The thresholds are
  written in ``bytes``: EOS also takes ``kbytes``/``mbytes``, but its manual does not say
  whether a kbyte is 1000 or 1024 bytes (the parser, :mod:`aifabric.evidence.eos_config`,
  reads 1024), and the ``bytes`` unit is exact either way: S18's 50 KB / 100 KB reads back as
  51200 / 102400 bytes. ``max-mark-probability`` is an integer 1-100 on EOS (rounded).
* **Ports**: the fabric's neutral ``Ethernet7`` is ``Ethernet7/1`` on a multi-lane (QSFP/OSFP,
  above 50G) port and ``Ethernet7`` on an SFP port; breakout sub-port ``Ethernet7/k`` stays
  ``Ethernet7/k`` (what :func:`aifabric.dialects.ports.eos_neutral` maps back). Each port says
  its peer (``description``), its ``mtu`` and ``qos trust dscp``.
* **Explanations** (S24): the ECN reasoning and each lossless port's PFC headroom (EOS has no
  platform-independent per-port headroom command: the figure is what the platform's buffer
  profile must reserve) are written as ``!`` comments.

:func:`EosDialect.plan` is :func:`aifabric.dialects.render.plan_cli` wrapped as a
configuration session (``configure session``; ``exit`` closes each mode, the session is left
for review, then ``commit``). What it removes (``no`` forms) is limited to the QoS lines of the
interfaces the intent renders: other PFC priorities, another trust / MTU / PFC mode,
``service-profile`` bindings (their profile would add settings underneath) and ECN on queues
other than the rendered ones. Lines the rendered config overrides by setting the same thing
(another ECN threshold, another watchdog timer, an older ``qos map dscp``) are not negated:
the new line replaces them, and a ``no`` after it would undo it. Profiles, maps and interfaces
the intent does not name are left alone.

Sources: the URLs in :data:`FOLLOWS` (named again in the template header).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from aifabric.dialects.intent import DeviceIntent, PortIntent
from aifabric.dialects.render import ChangePlan, RenderedFile, plan_cli, template_env
from aifabric.explain import Explained

__all__ = ["DIALECT", "FOLLOWS", "EosDialect", "eos_port_name"]

FOLLOWS: tuple[str, ...] = (
    "https://www.arista.com/en/um-eos/eos-quality-of-service",
    "https://www.arista.com/en/um-eos/eos-dcbx-and-flow-control",
    "https://www.arista.com/assets/data/pdf/AI-Network-Fabric_Deployment_Guide.pdf",
    "https://github.com/ROCm/gpu-cluster-networking/blob/"
    "1156b4e913f820272ff4c9702061886be3176efc/docs/how-to/roce-network-config.rst",
)
"""Arista EOS User Manual (QoS; DCBX and flow control), Arista's AI fabric deployment guide,
and AMD's DCQCN example for an Arista 7388 (the source of examples/lossless-lab spine02.cfg)."""

TEMPLATE = "running-config.cfg.j2"
SFP_MAX_GBPS = 50.0
"""Fastest single-lane (SFP) port: faster whole ports are multi-lane and named ``EthernetN/1``."""

_WD_ACTION = {"drop": "drop", "forward": "no-drop"}
_NEUTRAL = re.compile(r"^Ethernet(\d+)(?:/(\d+))?$")
_WRAP = 96


def eos_port_name(port: PortIntent) -> str:
    """The EOS interface of a neutral switch port: ``Ethernet7`` → ``Ethernet7/1`` above
    :data:`SFP_MAX_GBPS` (lane 1 of a multi-lane port), ``Ethernet7`` otherwise;
    ``Ethernet7/2`` (breakout sub-port 2) → ``Ethernet7/2``; other names unchanged."""
    m = _NEUTRAL.match(port.name)
    if m is None or m.group(2) is not None:
        return port.name
    return f"{port.name}/1" if port.speed_gbps > SFP_MAX_GBPS else port.name


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        _WRAP,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent]


def _explained(e: Explained) -> list[str]:
    """An :class:`Explained` as comment text lines (without the ``!``)."""
    unit = f" {e.unit}" if e.unit else ""
    out = _wrap(f"{e.quantity} = {e.value}{unit}")
    out += _wrap(f"formula: {e.formula}", "  ")
    if e.inputs:
        out += _wrap("inputs: " + ", ".join(f"{k}={v}" for k, v in e.inputs.items()), "  ")
    if e.sources:
        out += _wrap("sources: " + "; ".join(e.sources), "  ")
    if e.note:
        out += _wrap(f"note: {e.note}", "  ")
    return out


def _bytes_text(n: int) -> str:
    kib = f" = {n / 1024:g} KiB" if n % 1024 == 0 else ""
    return f"{n} bytes{kib}"


@dataclass
class _Queue:
    id: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Iface:
    name: str
    comments: list[str]
    lines: list[str]
    queues: list[_Queue]


def _schedule(intent: DeviceIntent) -> tuple[dict[int, list[str]], list[str]]:
    """Queue → scheduler lines for every class of the intent, and warnings (comment text)."""
    lines: dict[int, list[str]] = {}
    for tc in sorted(intent.qos.traffic_classes, key=lambda c: c.tc):
        if tc.scheduler == "strict":
            lines[tc.tc] = ["priority strict"]
        else:
            lines[tc.tc] = ["no priority"]
            if tc.weight_percent is not None:
                lines[tc.tc].append(f"bandwidth percent {tc.weight_percent}")
    strict = [c.tc for c in intent.qos.traffic_classes if c.scheduler == "strict"]
    dwrr = [c.tc for c in intent.qos.traffic_classes if c.scheduler != "strict"]
    warn: list[str] = []
    if strict and dwrr and min(strict) < max(dwrr):
        warn.append(
            f"WARNING: strict queue {min(strict)} is below round-robin queue {max(dwrr)}: "
            f"'no priority' on queue {max(dwrr)} makes every queue below it round robin on EOS, "
            f"so queue {min(strict)} will not be strict. Move the strict class above the others."
        )
    return lines, warn


def _ecn_line(intent: DeviceIntent) -> str | None:
    ecn = intent.qos.ecn
    if ecn is None:
        return None
    prob = min(100, max(1, round(ecn.pmax_percent)))
    return (
        f"random-detect ecn minimum-threshold {ecn.kmin_bytes} bytes "
        f"maximum-threshold {ecn.kmax_bytes} bytes max-mark-probability {prob}"
    )


def _watchdog(intent: DeviceIntent) -> list[str]:
    wd = intent.qos.pfc_watchdog
    if wd is None or not wd.enabled:
        return []
    out: list[str] = []
    action = _WD_ACTION.get(wd.action)
    if action is not None:
        out.append(f"priority-flow-control pause watchdog action {action}")
    out.append(
        f"priority-flow-control pause watchdog default timeout {wd.detection_time_ms / 1000:g}"
    )
    out.append(
        f"priority-flow-control pause watchdog default recovery-time "
        f"{wd.restoration_time_ms / 1000:g}"
    )
    return out


def _dscp_lines(intent: DeviceIntent) -> list[str]:
    """``qos map dscp`` lines covering all 64 DSCPs (unlisted → TC 0), one line per class."""
    by_tc: dict[int, list[int]] = {}
    for d in range(64):
        by_tc.setdefault(intent.qos.dscp_to_tc.get(d, 0), []).append(d)
    return [
        f"qos map dscp {' '.join(str(d) for d in ds)} to traffic-class {tc}"
        for tc, ds in sorted(by_tc.items())
    ]


def _context(intent: DeviceIntent) -> dict[str, object]:
    qos = intent.qos
    sched, warnings = _schedule(intent)
    ecn = _ecn_line(intent)
    wd = _watchdog(intent)
    header: list[str] = []
    header += _wrap(
        f"Intent: RoCE DSCP {qos.roce_dscp} -> TC/queue {qos.roce_priority} (lossless: PFC on "
        f"priorities {', '.join(map(str, qos.pfc_priorities)) or 'none'}); CNP DSCP "
        f"{qos.cnp_dscp} -> TC/queue {qos.cnp_priority}; every other DSCP -> TC 0."
    )
    header += _wrap(
        "EOS tx-queues are strict priority by default (higher queue first); 'no priority' "
        "makes a queue and all queues below it weighted round robin by 'bandwidth percent'."
    )
    if qos.ecn is not None:
        header += _wrap(
            f"ECN on queue {intent.roce_queue} of lossless ports: Kmin "
            f"{_bytes_text(qos.ecn.kmin_bytes)}, Kmax {_bytes_text(qos.ecn.kmax_bytes)}, "
            f"pmax {qos.ecn.pmax_percent:g} %. Written in 'bytes': EOS also takes kbytes, but "
            "its manual does not say whether a kbyte is 1000 or 1024 bytes; bytes are exact."
        )
    header += warnings
    for e in intent.explained:
        if "ECN" in e.quantity:
            header.append("")
            header += _explained(e)
    if wd:
        w = qos.pfc_watchdog
        assert w is not None
        if w.action not in _WD_ACTION:
            header += _wrap(
                f"PFC watchdog action '{w.action}' has no EOS equivalent (drop | no-drop): "
                "EOS's default action applies."
            )
    headroom = {e.quantity: e for e in intent.explained if e.quantity.endswith("PFC headroom")}
    interfaces: list[_Iface] = []
    for p in intent.ports:
        name = eos_port_name(p)
        trust = "dscp" if qos.trust == "dscp" else "cos"
        lines = [f"description {p.peer}", f"mtu {p.mtu_bytes}", f"qos trust {trust}"]
        comments: list[str] = []
        queues = {q: list(ls) for q, ls in sched.items()}
        if p.lossless:
            lines.append("priority-flow-control on")
            lines += [f"priority-flow-control priority {n} no-drop" for n in qos.pfc_priorities]
            if wd:
                lines.append("priority-flow-control pause watchdog")
            if ecn is not None:
                queues.setdefault(intent.roce_queue, []).append(ecn)
            hr = headroom.get(f"{intent.name} {p.name} PFC headroom")
            if hr is not None:
                comments += _explained(hr)
                comments += _wrap(
                    f"{name}: EOS has no platform-independent per-port headroom command; the "
                    f"platform's buffer profile must reserve at least {hr.value} bytes for "
                    f"priority {', '.join(map(str, qos.pfc_priorities))} on this port."
                )
        interfaces.append(
            _Iface(name, comments, lines, [_Queue(q, queues[q]) for q in sorted(queues)])
        )
    return {
        "hostname": intent.name,
        "fabric": intent.fabric,
        "header": header,
        "globals": [*_dscp_lines(intent), *wd],
        "interfaces": interfaces,
    }


# ---- change plan ----------------------------------------------------------------------------

_QUEUE_RE = re.compile(r"^(?:uc-|mc-)?tx-queue \d+$")


def _words(line: str) -> list[str]:
    w = line.split()
    return w[1:] if w[:1] == ["no"] else w


def _key(line: str) -> str | None:
    """What a QoS line sets (two lines with one key replace each other), None for a line the
    plan does not own (descriptions, IP addresses, ECN counters...)."""
    w = _words(line)
    if w[:2] == ["priority-flow-control", "priority"] and len(w) > 2:
        return f"pfc priority {w[2]}"
    if w[:3] == ["priority-flow-control", "pause", "watchdog"]:
        rest = w[3:]
        if not rest:
            return "pfc watchdog"
        if rest[0] in ("default", "port") and len(rest) > 1:
            return f"pfc watchdog {rest[0]} {rest[1]}"
        return f"pfc watchdog {rest[0]}"
    if w[:1] == ["priority-flow-control"]:
        return "pfc mode"
    if w[:2] == ["random-detect", "ecn"] and w[2:3] != ["count"]:
        return "random-detect ecn"
    if w[:2] == ["qos", "trust"]:
        return "qos trust"
    if w[:1] and w[0] in ("bandwidth", "priority", "mtu", "service-profile"):
        return w[0]
    return None


def _tree_children(text: str) -> dict[tuple[str, ...], list[str]]:
    """Mode chain → its child lines, for an indented EOS config (comments skipped)."""
    out: dict[tuple[str, ...], list[str]] = {}
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!") or s in ("end", "exit"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.setdefault(tuple(x for _, x in stack), []).append(s)
        stack.append((indent, s))
    return out


def _owner(rendered: str, existing: str) -> Callable[[tuple[str, ...], str], bool]:
    """The ``owned(parents, line)`` predicate of :func:`plan_cli` for one pair of configs."""
    want = _tree_children(rendered)
    have = _tree_children(existing)
    ifaces = {ln for ln in want.get((), []) if ln.startswith("interface ")}
    want_keys = {parents: {_key(ln) for ln in lines} for parents, lines in want.items()}

    def owned(parents: tuple[str, ...], line: str) -> bool:
        if not parents:
            # global watchdog lines the intent no longer has (watchdog off); maps and other
            # globals are replaced by what is rendered, never negated
            k = _key(line)
            return k is not None and k.startswith("pfc watchdog") and k not in want_keys[()]
        if parents[0] not in ifaces:
            return False
        if len(parents) == 1 and _QUEUE_RE.match(line):
            # a queue the intent does not configure: reset it only if it marks ECN (S18)
            kids = have.get((*parents, line), [])
            return any(_key(k) == "random-detect ecn" for k in kids)
        k = _key(line)
        return k is not None and k not in want_keys.get(parents, set())

    return owned


def _session(device: str, plan: str, openers: set[str]) -> str:
    """``plan_cli`` output as a configuration-session script. ``openers`` are the lines that
    open a mode in either config (``interface X``, ``tx-queue N``): after one the session is a
    level deeper, and before each line the script ``exit``s back to that line's level, so a
    global command (``priority-flow-control pause watchdog ...`` exists in both) is never typed
    inside an interface. ``plan_cli``'s ``!`` (end of a mode's changes) returns to the top."""
    if not plan:
        return ""
    out = [
        f"! aifabric change plan for {device}: paste into the switch's CLI, review with",
        "! 'show session-config diffs', then 'commit' (or 'abort').",
        f"configure session aifabric-{device}",
    ]
    level = 0

    def leave(to: int) -> None:
        nonlocal level
        while level > to:
            level -= 1
            out.append("   " * level + "exit")

    for line in plan.splitlines():
        if line == "!":
            leave(0)
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 3
        leave(depth)
        out.append(line)
        level = depth + (1 if line.strip() in openers else 0)
    leave(0)
    out.append("show session-config diffs")
    return "\n".join(out) + "\n"


class EosDialect:
    """Arista EOS (:class:`aifabric.dialects.render.Dialect`)."""

    name = "eos"
    title = "Arista EOS running-config"
    role: Literal["switch", "host"] = "switch"
    follows = FOLLOWS

    def render(self, intent: DeviceIntent) -> list[RenderedFile]:
        """``<device>.cfg`` for one switch."""
        env = template_env("aifabric.dialects.eos")
        text = env.get_template(TEMPLATE).render(**_context(intent))
        return [RenderedFile(intent.name, f"{intent.name}.cfg", text, "eos-config")]

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan:
        """A configuration-session script turning ``existing`` into ``rendered`` (see the
        module docs for what it removes); the whole config when nothing exists."""
        if existing is None:
            return plan_cli(rendered.device, rendered.path, rendered.text, None,
                            owned=lambda _p, _l: False)  # fmt: skip
        owned = _owner(rendered.text, existing)
        plan = plan_cli(rendered.device, rendered.path, rendered.text, existing, owned=owned)
        openers = {p[-1] for t in (rendered.text, existing) for p in _tree_children(t) if p}
        return ChangePlan(
            plan.device, plan.path, plan.existing, plan.added, plan.removed,
            _session(rendered.device, plan.plan, openers),
        )  # fmt: skip


DIALECT = EosDialect()
