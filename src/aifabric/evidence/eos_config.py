"""Arista EOS ``show running-config`` (whole or the QoS sections) → shared switch-QoS records.

Read: global ``qos map dscp <list> to traffic-class N [drop-precedence D]`` (one ``dscp-map``
named ``global``), ``qos map cos|traffic-class ... to traffic-class|dscp|cos|tx-queue N``
(``tc-map``), ``qos rewrite dscp|cos`` and other global ``qos ...`` lines (``qos-setting``),
``platform sand qos map traffic-class N to network-qos M`` (``tc-map`` ``tc-to-network-qos``),
``priority-flow-control pause watchdog ...`` (global and per port/profile), global
``priority-flow-control all off`` (``qos-setting``); ``interface`` and
``qos profile`` blocks with ``mtu``, ``speed``, ``qos trust dscp|cos``, ``qos dscp|cos N``,
``priority-flow-control on`` / ``mode on`` / ``no priority-flow-control`` / ``priority N
no-drop|drop``, ``service-profile``, ``channel-group N`` and ``dcbx mode M`` (in ``maps``),
``service-policy type qos input``, and ``tx-queue`` / ``uc-tx-queue`` / ``mc-tx-queue`` blocks with
``random-detect ecn minimum-threshold X <unit> maximum-threshold Y <unit>
[max-mark-probability P] [weight W]`` (units bytes/kbytes/mbytes → bytes; segments and
milliseconds kept raw) and ``bandwidth [guaranteed] percent N`` / ``priority strict`` /
``no priority``. Blocks are told by indentation (EOS indents by 3); lines inside a block that
the parser does not model (``ip address``, ``description``, ``random-detect drop``) are skipped
silently. Two pasted forms are read the way the switch reads them: a CLI session with prompts
(``Leaf-1(config-qos-profile-ROCE)# priority-flow-control on``: the mode in the prompt gives
the block, exec-mode lines and ``exit``/``end`` are skipped, line numbers kept), and a block
pasted flat (``interface Ethernet1`` followed by unindented ``priority-flow-control on``,
``mtu 9214``...: interface and profile sub-commands stay in the block until a column-0 ``!``
or a top-level command). Detection: ``class-map type qos`` is printed by EOS and NX-OS alike,
so EOS-only markers (RANCID ``arista`` header, ``policy-map type quality-of-service``,
``tx-queue`` blocks, ``platform sand qos``) score 0.95, which wins the tie against NX-OS by
registry order.

Sources: Arista EOS User Manual, "Quality of Service" and "Priority Flow Control" chapters
(https://www.arista.com/en/um-eos/eos-quality-of-service); AVD ``eos_cli_config_gen``
templates and molecule configs (github.com/aristanetworks/avd); AMD ROCm "RoCE network
configuration" (github.com/ROCm/gpu-cluster-networking).
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
    QosSetting,
    QueueSchedule,
    TcMap,
    size_to_bytes,
)
from aifabric.evidence.registry import register

__all__ = ["parse_eos_config"]

_QOS_MAP_RE = re.compile(
    r"^qos map (?P<src>dscp|cos|traffic-class|exp) (?P<list>[\d\s,-]+?) to "
    r"(?P<dst>traffic-class|dscp|cos|tx-queue|exp) (?P<val>\d+)"
    r"(?: drop-precedence (?P<dp>\d+))?\s*$"
)
_ECN_RE = re.compile(
    r"random-detect ecn minimum-threshold (?P<min>\d+(?:\.\d+)?) (?P<minu>\S+) "
    r"maximum-threshold (?P<max>\d+(?:\.\d+)?) (?P<maxu>\S+)"
    r"(?: max-mark-probability (?P<prob>\d+(?:\.\d+)?))?(?: weight (?P<w>\d+))?"
)
_PFC_PRIO_RE = re.compile(r"^priority-flow-control priority (\d+)(?: (no-drop|drop))?\s*$")
_WD_RE = re.compile(r"^priority-flow-control pause watchdog\b(?P<rest>.*)$")
_QUEUE_RE = re.compile(r"^(?:uc-|mc-)?tx-queue (\d+)\s*$")
_BW_RE = re.compile(r"^bandwidth (?:(guaranteed) )?percent (\d+(?:\.\d+)?)")
# starts only at the first digit of a run: an unanchored search would rescan the run from each
# digit (quadratic on a long line of digits)
_SPEED_RE = re.compile(r"(?<!\d)(\d++(?:\.\d++)?)g", re.IGNORECASE)
_DETECT_STRONG = (
    "qos map dscp",
    "priority-flow-control priority",
    "random-detect ecn minimum-threshold",
    "priority-flow-control pause watchdog",
    "qos profile ",
)
_DETECT_EOS_ONLY = (
    "!RANCID-CONTENT-TYPE: arista",
    "policy-map type quality-of-service",
    "platform sand qos map",
    "\n   tx-queue ",
    "\n   uc-tx-queue ",
    # EOS global QoS commands NX-OS does not have (it says qos-group and watch-dog)
    "\nqos map traffic-class ",
    "priority-flow-control pause watchdog ",
    "\nqos random-detect ecn allow ",
)
_SESSION_RE = re.compile(r"^\s*[\w.\-]+ ?\((?P<mode>config[^)]*)\) ?# ?(?P<cmd>.*)$")
_SESSION_TOP = (
    "interface ", "qos profile ", "qos map ", "platform ", "policy-map ", "class-map ",
    "hostname ", "router ", "vlan ", "ip ", "hardware ", "dcbx ",
)  # fmt: skip
"""Commands that EOS runs at the top level even when typed in a sub-mode (it leaves the mode)."""
_FLAT_CHILD = (
    "mtu ", "speed ", "priority-flow-control on", "priority-flow-control off",
    "priority-flow-control mode ", "priority-flow-control priority ", "no priority-flow-control",
    "qos trust ", "qos dscp ", "qos cos ", "service-profile ", "service-policy ",
    "channel-group ", "dcbx mode ", "tx-queue ", "uc-tx-queue ", "mc-tx-queue ",
    "random-detect ", "bandwidth ", "priority strict", "no priority", "description ",
    "switchport", "no switchport", "shutdown", "no shutdown", "ip address ", "load-interval ",
)  # fmt: skip
"""Interface / ``qos profile`` sub-commands that a flat paste writes at column 0."""
_SAND_MAP_RE = re.compile(
    r"^platform sand qos map traffic-class (?P<list>[\d\s,-]+?) to network-qos (?P<val>\d+)\s*$"
)
_MAP_KIND = {
    ("cos", "traffic-class"): "cos-to-tc",
    ("traffic-class", "dscp"): "tc-to-dscp",
    ("traffic-class", "cos"): "tc-to-cos",
    ("traffic-class", "tx-queue"): "tc-to-queue",
    ("exp", "traffic-class"): "exp-to-tc",
    ("traffic-class", "exp"): "tc-to-exp",
}


def _detect(text: str) -> float:
    head = text[:200_000]
    nxos = "policy-map type network-qos" in head or "pause pfc-cos" in head
    if nxos:
        return 0.0
    if any(m in head for m in _DETECT_EOS_ONLY):
        # also beats NX-OS's 0.95 "class-map type qos" (EOS prints it too; ties go to EOS)
        return 0.95
    if any(m in head for m in _DETECT_STRONG):
        return 0.9
    if ("! device: " in head or "transceiver qsfp default-mode" in head) and (
        "interface Ethernet" in head
    ):
        return 0.6
    if "!RANCID-CONTENT-TYPE: arista" in head:
        return 0.6
    if "\ninterface Ethernet" in head and "\n   " in head and "\nfeature " not in head:
        return 0.35
    return 0.0


@dataclass(slots=True)
class _Block:
    kind: str  # "interface" | "profile"
    name: str
    line: int
    pfc_on: bool | None = None
    pfc_mode: str | None = None
    no_drop: list[int] = field(default_factory=list)
    drop: list[int] = field(default_factory=list)
    pfc_line: int = 0
    trust: str | None = None
    maps: dict[str, str] = field(default_factory=dict)
    queue: int | None = None
    end: int = 0

    @property
    def scope(self) -> str:
        return self.name if self.kind == "interface" else f"qos profile {self.name}"

    @property
    def port(self) -> str | None:
        return self.name if self.kind == "interface" else None


@register(
    "eos-config",
    summary="Arista EOS 'show running-config' (QoS, PFC, ECN, MTU sections)",
    detect=_detect,
    refs=("S11", "S12", "S13", "S14", "S18"),
)
def parse_eos_config(text: str) -> ParseResult:
    """Parse an EOS running-config into normalised QoS records."""
    result = ParseResult(kind="eos-config")
    rec = result.records.append
    dscp: dict[int, int] = {}
    dscp_lines: list[int] = []
    tc_maps: dict[str, tuple[int, dict[int, int]]] = {}
    block: _Block | None = None

    def close(b: _Block | None) -> None:
        if b is None:
            return
        if b.pfc_on is not None or b.no_drop or b.drop:
            rec(
                PfcConfig(
                    line=b.pfc_line or b.line,
                    scope=b.scope,
                    port=b.port,
                    priorities=tuple(sorted(set(b.no_drop))),
                    drop_priorities=tuple(sorted(set(b.drop))),
                    enabled=b.pfc_on,
                    mode=b.pfc_mode,
                )
            )
        if b.trust is not None or b.maps or b.pfc_on is not None:
            rec(
                PortQos(
                    line=b.line,
                    end_line=b.end or None,
                    scope=b.scope,
                    port=b.port,
                    maps=dict(b.maps),
                    pfc_enable=tuple(sorted(set(b.no_drop))) if b.pfc_on else None,
                    trust=b.trust,
                )
            )

    for lineno, raw in enumerate(_from_session(text.split("\n")), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("!"):
            if line.startswith("!"):
                close(block)  # a column-0 '!' ends the block (what a flat paste relies on)
                block = None
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0 and block is not None and stripped.startswith(_FLAT_CHILD):
            indent = 3  # pasted flat: the block's sub-commands written at column 0
        if indent == 0:
            close(block)
            block = None
            if stripped.startswith("interface "):
                block = _Block("interface", stripped.split(None, 1)[1], lineno)
            elif stripped.startswith("qos profile "):
                block = _Block("profile", stripped.split(None, 2)[2], lineno)
            elif stripped.startswith("platform sand qos map "):
                _sand_map(stripped, lineno, result, tc_maps)
            elif stripped.startswith("qos map "):
                _qos_map(stripped, lineno, result, dscp, dscp_lines, tc_maps)
            elif stripped.startswith("priority-flow-control pause watchdog"):
                rec(_watchdog(stripped, lineno, "global", None))
            elif stripped.startswith("priority-flow-control all "):
                value = stripped.split(None, 2)[2]
                rec(QosSetting(line=lineno, scope="global", key="priority-flow-control all",
                               value=value))  # fmt: skip
            elif stripped.startswith(("qos rewrite", "qos trust", "qos random-detect")):
                key, _, value = stripped.partition(" ")[2].partition(" ")
                rec(QosSetting(line=lineno, scope="global", key=f"qos {key}", value=value))
            continue
        if block is None:
            continue
        block.end = lineno
        _block_line(block, stripped, indent, lineno, result)

    close(block)
    if dscp:
        rec(
            DscpMap(
                line=dscp_lines[0],
                end_line=dscp_lines[-1] if len(dscp_lines) > 1 else None,
                name="global",
                mapping=dict(sorted(dscp.items())),
            )
        )
    for kind, (first, mapping) in tc_maps.items():
        rec(TcMap(line=first, kind=kind, name="global", mapping=dict(sorted(mapping.items()))))
    return result


def _from_session(lines: list[str]) -> list[str]:
    """A pasted CLI session as the running-config it builds, one output line per input line.

    ``host(config)# cmd`` is a top-level command; ``host(config-if-Et1)# cmd`` and
    ``host(config-qos-profile-X)# cmd`` are indented one level, ``...-txq-N)# cmd`` two.
    Commands that only exist at the top level (``interface``, ``qos profile``, ``qos map``...)
    stay there whatever the mode they were typed in. Exec-mode lines (``host# show ...``),
    ``exit`` / ``end`` and anything else outside a ``(config...)#`` prompt become blank, so line
    numbers still point into the file as given. Text without two such prompts is returned as is.
    """
    if sum(1 for ln in lines[:5000] if _SESSION_RE.match(ln)) < 2:
        return lines
    out: list[str] = []
    for ln in lines:
        m = _SESSION_RE.match(ln)
        if m is None:
            out.append("")
            continue
        cmd = m.group("cmd").strip()
        mode = m.group("mode")
        if not cmd or cmd in ("exit", "end") or cmd.startswith(("!", "show ", "copy ", "write")):
            out.append("")
            continue
        if mode == "config" or cmd.startswith(_SESSION_TOP):
            depth = 0
        elif re.search(r"txq-\d+$", mode) and not _QUEUE_RE.match(cmd):
            depth = 2
        else:
            depth = 1
        out.append(" " * (3 * depth) + cmd)
    return out


def _qos_map(
    stripped: str,
    lineno: int,
    result: ParseResult,
    dscp: dict[int, int],
    dscp_lines: list[int],
    tc_maps: dict[str, tuple[int, dict[int, int]]],
) -> None:
    m = _QOS_MAP_RE.match(stripped)
    if m is None:
        result.warn(
            lineno, "expected 'qos map <dscp|cos|traffic-class> <values> to <x> N'", stripped
        )
        return
    try:
        values = [int(v) for v in re.split(r"[\s,]+", m.group("list").strip()) if v]
    except ValueError:
        result.warn(lineno, "qos map: value list is not integers", stripped)
        return
    target = int(m.group("val"))
    src, dst = m.group("src"), m.group("dst")
    if src == "dscp" and dst == "traffic-class":
        for v in values:
            dscp[v] = target
        dscp_lines.append(lineno)
        return
    kind = _MAP_KIND.get((src, dst), f"{src}-to-{dst}")
    _first, mapping = tc_maps.setdefault(kind, (lineno, {}))
    for v in values:
        mapping[v] = target


def _sand_map(
    stripped: str, lineno: int, result: ParseResult, tc_maps: dict[str, tuple[int, dict[int, int]]]
) -> None:
    """``platform sand qos map traffic-class 1 to network-qos 7`` (Jericho/DNX platforms)."""
    m = _SAND_MAP_RE.match(stripped)
    if m is None:
        result.warn(lineno, "expected 'platform sand qos map traffic-class N to network-qos M'",
                    stripped)  # fmt: skip
        return
    _first, mapping = tc_maps.setdefault("tc-to-network-qos", (lineno, {}))
    for v in re.split(r"[\s,]+", m.group("list").strip()):
        if v:
            mapping[int(v)] = int(m.group("val"))


def _watchdog(stripped: str, lineno: int, scope: str, port: str | None) -> PfcWatchdog:
    rest = _WD_RE.match(stripped)
    tail = rest.group("rest") if rest else ""
    wd = PfcWatchdog(line=lineno, scope=scope, port=port, enabled=True)
    m = re.search(r"action (\S+)", tail)
    if m:
        wd.action = m.group(1)
    m = re.search(r"timeout (\d+(?:\.\d+)?)", tail)
    if m:
        wd.detection_ms = float(m.group(1)) * 1000.0
    m = re.search(r"recovery-time (\d+(?:\.\d+)?)", tail)
    if m:
        wd.restoration_ms = float(m.group(1)) * 1000.0
    m = re.search(r"polling-interval (\d+(?:\.\d+)?)", tail)
    if m:
        wd.poll_interval_ms = float(m.group(1)) * 1000.0
    m = re.search(r"timer (\d+(?:\.\d+)?) milliseconds", tail)
    if m:
        wd.detection_ms = float(m.group(1))
    return wd


def _block_line(b: _Block, s: str, indent: int, lineno: int, result: ParseResult) -> None:
    rec = result.records.append
    qm = _QUEUE_RE.match(s)
    if qm is not None:
        b.queue = int(qm.group(1))
        return
    if b.queue is not None and indent <= 3 and not s.startswith(("random-detect", "bandwidth")):
        b.queue = None
    if s.startswith("random-detect ecn minimum-threshold"):
        m = _ECN_RE.search(s)
        if m is None:
            result.warn(lineno, "expected 'random-detect ecn minimum-threshold N unit ...'", s)
            return
        rec(
            EcnConfig(
                line=lineno,
                scope=b.scope,
                port=b.port,
                queue=b.queue,
                profile=b.name if b.kind == "profile" else None,
                min_bytes=size_to_bytes(m.group("min"), m.group("minu")),
                max_bytes=size_to_bytes(m.group("max"), m.group("maxu")),
                min_raw=f"{m.group('min')} {m.group('minu')}",
                max_raw=f"{m.group('max')} {m.group('maxu')}",
                probability_pct=float(m.group("prob")) if m.group("prob") else None,
                weight=int(m.group("w")) if m.group("w") else None,
                mode="ecn",
                ecn_enabled=True,
            )
        )
        return
    bw = _BW_RE.match(s)
    if bw is not None:
        rec(
            QueueSchedule(
                line=lineno,
                scope=b.scope,
                port=b.port,
                queue=b.queue,
                bandwidth_pct=float(bw.group(2)),
            )
        )
        return
    if s in ("priority strict", "no priority"):
        rec(
            QueueSchedule(
                line=lineno,
                scope=b.scope,
                port=b.port,
                queue=b.queue,
                strict_priority=s == "priority strict",
            )
        )
        return
    if s.startswith("mtu "):
        try:
            rec(Mtu(line=lineno, scope=b.scope, port=b.port, mtu_bytes=int(s.split()[1])))
        except (ValueError, IndexError):
            result.warn(lineno, "expected 'mtu <bytes>'", s)
        return
    if s.startswith("speed "):
        sm = _SPEED_RE.search(s)
        for r in reversed(result.records):
            if isinstance(r, Mtu) and r.scope == b.scope and sm is not None:
                r.speed_gbps = float(sm.group(1))
                break
        return
    if s == "no priority-flow-control":
        b.pfc_on, b.pfc_mode, b.pfc_line = False, "off", b.pfc_line or lineno
        return
    if s.startswith("priority-flow-control"):
        _pfc_line(b, s, lineno, result)
        return
    if s.startswith("qos trust "):
        b.trust = s.split()[2] if len(s.split()) > 2 else None
        return
    if s.startswith(("qos dscp ", "qos cos ")):
        parts = s.split()
        b.maps[f"default-{parts[1]}"] = parts[2] if len(parts) > 2 else ""
        return
    if s.startswith("service-profile "):
        b.maps["service-profile"] = s.split(None, 1)[1]
        return
    if s.startswith("channel-group "):
        b.maps["channel-group"] = s.split()[1]
        return
    if s.startswith("dcbx mode "):
        b.maps["dcbx"] = s.split(None, 2)[2]
        return
    if s.startswith("service-policy "):
        parts = s.split()
        if len(parts) >= 2:
            b.maps[" ".join(parts[:-1])] = parts[-1]
        return


def _pfc_line(b: _Block, s: str, lineno: int, result: ParseResult) -> None:
    if s.startswith("priority-flow-control pause watchdog"):
        result.records.append(_watchdog(s, lineno, b.scope, b.port))
        return
    if s in ("priority-flow-control on", "priority-flow-control mode on"):
        b.pfc_on, b.pfc_mode, b.pfc_line = True, "on", b.pfc_line or lineno
        return
    if s in ("priority-flow-control off", "priority-flow-control mode off"):
        b.pfc_on, b.pfc_mode, b.pfc_line = False, "off", b.pfc_line or lineno
        return
    pm = _PFC_PRIO_RE.match(s)
    if pm is not None:
        prio = int(pm.group(1))
        (b.drop if pm.group(2) == "drop" else b.no_drop).append(prio)
        b.pfc_line = b.pfc_line or lineno
        return
    if s.startswith(("priority-flow-control all", "priority-flow-control dcbx")):
        return
    result.warn(lineno, "unrecognised priority-flow-control line", s)
