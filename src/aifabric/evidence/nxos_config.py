"""Cisco NX-OS ``show running-config`` (whole or the QoS sections) → shared switch-QoS records.

The NX-OS lossless chain is ``class-map type qos`` (``match dscp 24-31`` / ``match cos 3``) →
``policy-map type qos`` (``set qos-group 3``) → ``policy-map type network-qos``
(``class type network-qos c-8q-nq3``: ``pause pfc-cos 3`` or ``pause no-drop``, ``mtu 9216``)
→ ``policy-map type queuing`` (``class type queuing c-out-8q-q3``: ``bandwidth [remaining]
percent N``, ``priority level 1``, ``random-detect minimum-threshold 150 kbytes
maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn``) → ``system qos``
(``service-policy type ...``) and interfaces (``priority-flow-control mode on|auto|off
[send-tlv]``, ``priority-flow-control watch-dog-interval on``, ``mtu``, ``service-policy type
qos input [no-stats]``, ``channel-group N``: the last two in the ``port-qos`` ``maps``).
Each ``policy-map type qos`` becomes one ``dscp-map`` (DSCP → qos-group) built from
its classes' DSCP matches (``tc-map`` ``cos-to-qos-group`` for CoS matches); the queue number
of a queuing/network-qos class comes from its system class name (``c-out-8q-q3`` → 3,
``c-8q-nq3`` → 3, ``*-default`` → 0) or, for a user class, from ``match qos-group N`` in its
``class-map type network-qos|queuing``. Blocks are found by keyword (indentation optional, so
flattened pastes and pastes indented as a whole, e.g. Markdown code blocks, parse too;
``class-map type``, ``policy-map type``, ``system qos`` and ``interface`` always open a block);
``switch(config)#`` prompts are stripped. A file whose ``interface`` lines are followed by
unindented lines (a session typed or generated flat) keeps those lines in the interface block
until a top-level command; ``exit`` leaves a class or block, ``end`` every block.

Sources: Cisco Nexus 9000 NX-OS Quality of Service Configuration Guide 10.5(x), chapters
"Configuring Network QoS", "Configuring Queuing and Scheduling", "Configuring Priority Flow
Control" (https://www.cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/);
Cisco "RoCE Storage Implementation over NX-OS VXLAN Fabrics" white paper; AMD ROCm RoCE network
configuration (github.com/ROCm/gpu-cluster-networking); Microsoft Azure Local QoS TSG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    parse_id_list,
    size_to_bytes,
)
from aifabric.evidence.registry import register

__all__ = ["parse_nxos_config"]

_PROMPT_RE = re.compile(r"^\S+\(config[^)]*\)#\s?")
_CLASS_MAP_RE = re.compile(
    r"^class-map type (qos|network-qos|queuing)(?: (match-all|match-any))? (\S+)"
)
_POLICY_RE = re.compile(r"^policy-map type (qos|network-qos|queuing) (\S+)")
_CLASS_RE = re.compile(r"^class(?: type (?:qos|network-qos|queuing))? (\S+)")
_QNUM_RE = re.compile(r"(?:q|nq)(\d)$")
_ALWAYS_TOP_RE = re.compile(r"^(?:interface \S|class-map type |policy-map type |system qos$)")
_RED_RE = re.compile(
    r"random-detect minimum-threshold (?P<min>\d+(?:\.\d+)?) (?P<minu>\S+) "
    r"maximum-threshold (?P<max>\d+(?:\.\d+)?) (?P<maxu>\S+)"
    r"(?: drop-probability (?P<prob>\d+(?:\.\d+)?))?(?: weight (?P<w>\d+))?(?P<ecn> ecn)?"
)
_BW_RE = re.compile(r"^bandwidth (remaining )?percent (\d+(?:\.\d+)?)")
_TOP_WORDS = frozenset(
    {
        "interface", "class-map", "policy-map", "system", "feature", "hostname", "version",
        "vlan", "router", "vrf", "hardware", "priority-flow-control", "qos", "ip", "ipv6",
        "spanning-tree", "line", "boot", "username", "ntp", "logging", "snmp-server", "vpc",
        "port-channel", "mac", "no", "cfs", "control-plane", "role", "copp", "banner",
    }
)  # fmt: skip
_CHILD_WORDS = frozenset(
    {
        "class", "match", "set", "pause", "mtu", "random-detect", "bandwidth", "priority",
        "service-policy", "congestion-control", "queue-limit", "shape",
    }
)  # fmt: skip


_FLAT_TOP = frozenset(
    {
        "interface", "class-map", "policy-map", "system", "feature", "hostname", "version",
        "vlan", "router", "vrf", "line", "boot", "username", "ntp", "logging", "snmp-server",
        "vpc", "cfs", "control-plane", "role", "copp", "banner", "conf", "configure",
        "copy", "show", "qos",
    }
)  # fmt: skip
"""Words that still open a top-level command after an unindented ``interface`` line."""


def _flattened(lines: list[str]) -> bool:
    """Whether interface blocks are written unindented (a session pasted or generated flat).

    A running-config indents every interface sub-command by two spaces; a file whose
    ``interface`` lines are followed by unindented lines only is read as flat, and inside an
    ``interface`` block its unindented lines (``priority-flow-control mode on``, ``mtu 9216``,
    ``service-policy ...``) belong to that interface until a top-level command or ``exit``.
    """
    after_interface = False
    saw_flat = False
    for raw in lines:
        line = _PROMPT_RE.sub("", raw.rstrip())
        s = line.strip()
        if not s or s.startswith(("!", "#")):
            continue
        if s.startswith("interface ") and not line.startswith(" "):
            after_interface = True
            continue
        if after_interface:
            if line.startswith(" "):
                return False
            saw_flat = True
            after_interface = False
    return saw_flat


def _detect(text: str) -> float:
    head = text[:200_000]
    if (
        "policy-map type network-qos" in head
        or "pause pfc-cos" in head
        or "class-map type qos" in head
        or "policy-map type queuing" in head
    ):
        return 0.95
    if "priority-flow-control watch-dog" in head or "priority-flow-control mode on" in head:
        return 0.8
    if "!Command: show running-config" in head and "\nfeature " in head:
        return 0.6
    if "!RANCID-CONTENT-TYPE: cisco-nx" in head or "\nboot nxos " in head:
        return 0.6  # RANCID's NX-OS collector header; 'boot nxos' exists only on NX-OS
    if "\nboot kickstart " in head and "interface Ethernet" in head:
        return 0.6
    if "priority-flow-control mode " in head and "interface Ethernet1/" in head:
        return 0.6  # 'mode auto' in a 'show running-config all'; EOS has no 'mode'
    if "\nfeature " in head and "interface Ethernet" in head:
        return 0.6
    return 0.0


def _queue_of(class_name: str) -> int | None:
    if class_name.endswith("-default") or class_name == "class-default":
        return 0
    m = _QNUM_RE.search(class_name)
    return int(m.group(1)) if m else None


@dataclass(slots=True)
class _Ctx:
    kind: str  # class-map-qos | policy-qos | policy-nq | policy-queuing | system | interface
    name: str
    line: int
    cls: str | None = None
    cls_line: int = 0
    maps: dict[str, str] = field(default_factory=dict)
    pfc_mode: str | None = None
    pfc_line: int = 0


@register(
    "nxos-config",
    summary="Cisco NX-OS 'show running-config' (QoS, network-qos, queuing, PFC sections)",
    detect=_detect,
    refs=("S11", "S12", "S13", "S14", "S18"),
)
def parse_nxos_config(text: str) -> ParseResult:
    """Parse an NX-OS running-config into normalised QoS records."""
    result = ParseResult(kind="nxos-config")
    rec = result.records.append
    class_dscp: dict[str, tuple[int, ...]] = {}
    class_cos: dict[str, tuple[int, ...]] = {}
    policy_sets: dict[str, tuple[int, list[tuple[str, int]]]] = {}
    class_group: dict[str, int] = {}
    ctx: _Ctx | None = None

    def close(c: _Ctx | None) -> None:
        if c is None or c.kind not in ("interface", "system"):
            return
        if c.kind == "interface" and c.pfc_mode is not None:
            rec(
                PfcConfig(
                    line=c.pfc_line,
                    scope=c.name,
                    port=c.name,
                    enabled=c.pfc_mode.split()[0] != "off",
                    mode=c.pfc_mode,
                )
            )
        if c.maps or c.pfc_mode is not None:
            rec(
                PortQos(
                    line=c.line,
                    scope=c.name,
                    port=c.name if c.kind == "interface" else None,
                    maps=dict(c.maps),
                )
            )

    lines = text.split("\n")
    flat = _flattened(lines)
    for lineno, raw in enumerate(lines, 1):
        line = _PROMPT_RE.sub("", raw.rstrip())
        s = line.strip()
        if not s or s.startswith(("!", "#")):
            continue
        indent = len(line) - len(line.lstrip(" "))
        word = s.split(None, 1)[0]
        if word in ("end", "exit"):
            # what a pasted session types: 'exit' leaves the innermost mode, 'end' all modes
            if word == "end" or indent == 0 or (ctx is not None and ctx.cls is None):
                close(ctx)
                ctx = None
            elif ctx is not None:
                ctx.cls = None
            continue
        is_child = ctx is not None and (indent > 0 or word in _CHILD_WORDS)
        if word in _TOP_WORDS and indent == 0 and not (word == "priority-flow-control" and ctx):
            is_child = False
        if flat and ctx is not None and ctx.kind == "interface" and word not in _FLAT_TOP:
            is_child = True  # flattened paste: interface sub-commands are not indented
        if _ALWAYS_TOP_RE.match(s):
            is_child = False  # never nested: pastes indented as a whole, or flattened
        if not is_child:
            close(ctx)
            ctx = _top(s, lineno, result, policy_sets)
            continue
        assert ctx is not None
        _child(ctx, s, lineno, result, class_dscp, class_cos, policy_sets, class_group)
    close(ctx)

    for policy, (pline, sets) in policy_sets.items():
        dscp: dict[int, int] = {}
        cos: dict[int, int] = {}
        for cls, group in sets:
            for d in class_dscp.get(cls, ()):
                dscp[d] = group
            for c in class_cos.get(cls, ()):
                cos[c] = group
        if dscp:
            rec(
                DscpMap(
                    line=pline,
                    name=policy,
                    scope=f"policy-map {policy}",
                    mapping=dict(sorted(dscp.items())),
                    target="qos-group",
                )
            )
        if cos:
            rec(
                TcMap(
                    line=pline,
                    kind="cos-to-qos-group",
                    name=policy,
                    scope=f"policy-map {policy}",
                    mapping=dict(sorted(cos.items())),
                )
            )
    return result


def _top(
    s: str,
    lineno: int,
    result: ParseResult,
    policy_sets: dict[str, tuple[int, list[tuple[str, int]]]],
) -> _Ctx | None:
    if s.startswith("interface "):
        return _Ctx("interface", s.split(None, 1)[1], lineno)
    if s == "system qos":
        return _Ctx("system", "system qos", lineno)
    m = _CLASS_MAP_RE.match(s)
    if m is not None:
        return _Ctx(f"class-map-{m.group(1)}", m.group(3), lineno)
    m = _POLICY_RE.match(s)
    if m is not None:
        kind = {"qos": "policy-qos", "network-qos": "policy-nq", "queuing": "policy-queuing"}
        if m.group(1) == "qos":
            policy_sets.setdefault(m.group(2), (lineno, []))
        return _Ctx(kind[m.group(1)], m.group(2), lineno)
    if s.startswith("priority-flow-control watch-dog"):
        result.records.append(_watchdog(s, lineno, "global", None))
    return None


def _watchdog(s: str, lineno: int, scope: str, port: str | None) -> PfcWatchdog:
    wd = PfcWatchdog(line=lineno, scope=scope, port=port)
    if s.startswith("priority-flow-control watch-dog-interval"):
        wd.enabled = s.rsplit(maxsplit=1)[-1] != "off"
    m = re.search(r"interval (\d+)", s)
    if m:
        wd.poll_interval_ms = float(m.group(1))
    m = re.search(r"shutdown-multiplier (\d+)", s)
    if m:
        wd.action = f"shutdown-multiplier {m.group(1)}"
    return wd


def _child(
    c: _Ctx,
    s: str,
    lineno: int,
    result: ParseResult,
    class_dscp: dict[str, tuple[int, ...]],
    class_cos: dict[str, tuple[int, ...]],
    policy_sets: dict[str, tuple[int, list[tuple[str, int]]]],
    class_group: dict[str, int],
) -> None:
    rec = result.records.append
    if c.kind in ("class-map-network-qos", "class-map-queuing"):
        m = re.match(r"^match qos-group (\d+)\s*$", s)
        if m is not None:
            class_group[c.name] = int(m.group(1))
        return
    if c.kind.startswith("policy-"):
        m = _CLASS_RE.match(s)
        if m is not None:
            c.cls, c.cls_line = m.group(1), lineno
            return
    scope = f"policy-map {c.name} class {c.cls}" if c.cls else c.name
    if c.kind == "class-map-qos" and s.startswith("match "):
        parts = s.split()
        kind_ix = 2 if len(parts) > 2 and parts[1] == "ip" else 1
        if len(parts) <= kind_ix + 1:
            result.warn(lineno, "expected 'match dscp|cos <values>'", s)
            return
        what, values = parts[kind_ix], " ".join(parts[kind_ix + 1 :])
        if what not in ("dscp", "cos", "precedence"):
            return
        try:
            ids = parse_id_list(values)
        except ValueError:
            result.warn(lineno, f"match {what}: expected numbers like 24-31 or 26", s)
            return
        target = class_dscp if what == "dscp" else class_cos if what == "cos" else None
        if target is not None:
            target[c.name] = tuple(sorted(set(target.get(c.name, ())) | set(ids)))
        return
    if c.kind == "policy-qos" and s.startswith("set qos-group"):
        try:
            group = int(s.split()[2])
        except (IndexError, ValueError):
            result.warn(lineno, "expected 'set qos-group N'", s)
            return
        if c.cls is not None:
            policy_sets.setdefault(c.name, (c.line, []))[1].append((c.cls, group))
        return
    if c.kind == "policy-nq":
        if s.startswith("pause"):
            _pause(c, s, lineno, result, scope, class_group)
        elif s.startswith("mtu "):
            try:
                rec(Mtu(line=lineno, scope=scope, mtu_bytes=int(s.split()[1])))
            except (IndexError, ValueError):
                result.warn(lineno, "expected 'mtu <bytes>'", s)
        return
    if c.kind == "policy-queuing":
        q = _queue_of(c.cls) if c.cls else None
        if q is None and c.cls is not None:
            q = class_group.get(c.cls)
        if s.startswith("random-detect"):
            m = _RED_RE.search(s)
            if m is None:
                if "threshold" in s:
                    result.warn(lineno, "expected 'random-detect minimum-threshold N unit ...'", s)
                return
            rec(
                EcnConfig(
                    line=lineno,
                    scope=scope,
                    queue=q,
                    profile=c.name,
                    min_bytes=size_to_bytes(m.group("min"), m.group("minu")),
                    max_bytes=size_to_bytes(m.group("max"), m.group("maxu")),
                    min_raw=f"{m.group('min')} {m.group('minu')}",
                    max_raw=f"{m.group('max')} {m.group('maxu')}",
                    probability_pct=float(m.group("prob")) if m.group("prob") else None,
                    weight=int(m.group("w")) if m.group("w") else None,
                    mode="ecn" if m.group("ecn") else "drop",
                    ecn_enabled=m.group("ecn") is not None,
                )
            )
            return
        bw = _BW_RE.match(s)
        if bw is not None:
            rec(
                QueueSchedule(
                    line=lineno,
                    scope=scope,
                    queue=q,
                    bandwidth_pct=float(bw.group(2)),
                    bandwidth_remaining=bw.group(1) is not None,
                )
            )
            return
        if s.startswith("priority"):
            m2 = re.search(r"level (\d+)", s)
            rec(
                QueueSchedule(
                    line=lineno,
                    scope=scope,
                    queue=q,
                    strict_priority=True,
                    priority_level=int(m2.group(1)) if m2 else None,
                )
            )
        return
    if c.kind in ("system", "interface"):
        _port_line(c, s, lineno, result)


def _pause(
    c: _Ctx, s: str, lineno: int, result: ParseResult, scope: str, class_group: dict[str, int]
) -> None:
    m = re.match(r"pause pfc-cos ([\d,\s-]+)", s)
    prios: tuple[int, ...] = ()
    if m is not None:
        try:
            prios = parse_id_list(m.group(1))
        except ValueError:
            result.warn(lineno, "expected 'pause pfc-cos N[,M]'", s)
            return
    elif "no-drop" not in s:
        return
    if not prios and c.cls is not None:
        q = _queue_of(c.cls)
        if q is None:
            q = class_group.get(c.cls)  # user class: 'match qos-group 3' in its class-map
        prios = (q,) if q is not None else ()
    for r in result.records:
        if isinstance(r, PfcConfig) and r.scope == scope:
            r.priorities = tuple(sorted(set(r.priorities) | set(prios)))
            return
    result.records.append(
        PfcConfig(line=lineno, scope=scope, priorities=prios, enabled=True, mode="no-drop")
    )


def _port_line(c: _Ctx, s: str, lineno: int, result: ParseResult) -> None:
    port = c.name if c.kind == "interface" else None
    if s.startswith("service-policy "):
        parts = s.split()
        if parts[-1] == "no-stats":
            parts = parts[:-1]
        if len(parts) >= 3:
            c.maps[" ".join(parts[1:-1])] = parts[-1]
        return
    if c.kind != "interface":
        return
    if s.startswith("channel-group "):
        c.maps["channel-group"] = s.split()[1]
        return
    if s.startswith("mtu "):
        try:
            result.records.append(
                Mtu(line=lineno, scope=c.name, port=port, mtu_bytes=int(s.split()[1]))
            )
        except (IndexError, ValueError):
            result.warn(lineno, "expected 'mtu <bytes>'", s)
        return
    if s.startswith("priority-flow-control mode "):
        c.pfc_mode, c.pfc_line = s.split(None, 2)[2], lineno
        return
    if s.startswith("priority-flow-control watch-dog"):
        result.records.append(_watchdog(s, lineno, c.name, port))
        return
    if s.startswith("no priority-flow-control watch-dog"):
        wd = _watchdog(s[3:], lineno, c.name, port)
        wd.enabled = False
        result.records.append(wd)
