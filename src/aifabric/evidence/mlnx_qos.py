"""NVIDIA/Mellanox host QoS: ``mlnx_qos -i IFACE`` (mlnx-tools / MLNX_OFED).

``mlnx_qos`` prints the NIC's DCB state after any change it was asked to make, so ``mlnx_qos -i
eth4 --trust dscp`` and ``--pfc 0,0,0,1,0,0,0,0`` print the same report. One report is one
:class:`QosReport` record (``line``..``end_line``); a capture may hold several (a setup script run
under ``set -x``), each starting at ``DCBX mode:`` or, in builds that omit it, at ``Priority trust
state:``. Fields:

* ``DCBX mode: OS controlled`` / ``firmware controlled``;
* ``Priority trust state: dscp`` (or ``pcp``): which header field classifies RoCE traffic (S14);
* ``dscp2prio mapping:`` with ``prio:N dscp:a,b,c,`` lines (a priority may take several lines)
  → ``dscp_to_priority`` (DSCP → priority, 64 entries when complete);
* ``default priority:`` (often empty);
* ``Receive buffer size (bytes): 130944,130944,0,...,max_buffer_size=262016`` → per-buffer sizes;
* ``Cable len: 7`` (metres; the driver sizes PFC headroom from it);
* ``PFC configuration:`` with the column rows ``priority 0 1 ... 7``, ``enabled 0 0 0 1 0 0 0 0``
  and, on newer drivers, ``buffer 0 0 0 1 0 0 0 0`` (priority → receive buffer) →
  ``pfc_enabled_priorities`` (S12: exactly one, the RoCE priority) and ``priority_to_buffer``;
* ``tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%`` / ``tsa: vendor`` / ``tsa: strict`` followed by
  ``priority: 3`` lines → :class:`QosTc` entries (ratelimit in Gb/s, None when unlimited).

Layouts handled: the current indented one (MLNX_OFED 5.x and later), the older flat one with
blank lines between traffic classes (MLNX_OFED 4.x, as copied on web pages), shell prompts and
``set -x`` traces around reports. Seed refs: S12 (PFC on the RoCE priority only), S14 (DSCP
trust, RoCE DSCP mapped to its own queue), S18.

Sources: ``mlnx_qos --help`` and the NVIDIA community article "mlnx_qos"
(https://enterprise-support.nvidia.com/s/article/mlnx-qos), mlnx-tools ``python/mlnx_qos``
(https://github.com/Mellanox/mlnx-tools), and the real captures under
``tests/fixtures/evidence/mlnx-qos/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, finite_or_none
from aifabric.evidence.registry import register

__all__ = ["QosReport", "QosTc", "parse_mlnx_qos"]


@dataclass(slots=True, kw_only=True)
class QosTc:
    """One traffic class of a report."""

    tc: int
    line: int
    tsa: str | None = None
    """Transmission selection: ``ets``, ``strict``, ``vendor`` (firmware default)."""
    bw_percent: int | None = None
    """ETS bandwidth share, only with ``tsa: ets``."""
    ratelimit_gbps: float | None = None
    """None when ``unlimited``."""
    ratelimit_raw: str | None = None
    priorities: list[int] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class QosReport(Record):
    """One ``mlnx_qos`` report."""

    record_type: ClassVar[str] = "mlnx_qos"

    interface: str | None = None
    """From the command line when the capture shows it (``mlnx_qos -i eth4``)."""
    dcbx_mode: str | None = None
    trust: str | None = None
    """``dscp`` or ``pcp``."""
    default_priority: int | None = None
    dscp_to_priority: dict[int, int] = field(default_factory=dict)
    receive_buffer_bytes: list[int] = field(default_factory=list)
    max_buffer_size_bytes: int | None = None
    cable_len_m: int | None = None
    pfc_enabled_priorities: list[int] = field(default_factory=list)
    """Priorities with PFC on (S12: should be exactly the RoCE priority)."""
    pfc_priorities_listed: list[int] = field(default_factory=list)
    """The ``priority`` header row of the PFC table (normally 0..7)."""
    priority_to_buffer: dict[int, int] = field(default_factory=dict)
    tcs: list[QosTc] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    """Features mlnx_qos reported as "not supported on your system" (``Priority trust state``,
    ``Buffers commands``, ``Rate limit``, ``ETS features``): what it prints for an interface
    whose driver has no DCB/QoS support for it, e.g. a VLAN, a bond or a non-mlx5 device."""

    def priority_tc(self) -> dict[int, int]:
        """Priority → traffic class, from the ``priority:`` lines under each ``tc:``."""
        return {p: t.tc for t in self.tcs for p in t.priorities}


# Linear on any line (issue 16): key and value end at their last non-blank, found greedily;
# possessive blanks where a lazy group or a second ``\s*`` would split a run of blanks every way.
_KV_RE = re.compile(r"^\s*([A-Za-z](?:[A-Za-z0-9 ()_-]*[A-Za-z0-9()_-])?)\s*:\s*+((?:.*\S)?)\s*$")
_PRIO_DSCP_RE = re.compile(r"^\s*prio\s*:\s*(\d+)\s+dscp\s*:\s*+([\d,\s]*+)$")
_TC_RE = re.compile(r"^\s*tc\s*:\s*(\d+)\s+(.*)$")
_TC_PRIO_RE = re.compile(r"^\s*priority\s*:\s*(\d+)\s*$")
_ROW_RE = re.compile(r"^\s*(priority|enabled|buffer)(?:\s*+:|(?>\s*(?=\s)))((?:\s+\d+)+)\s*$")
_CMD_RE = re.compile(r"mlnx_qos\b.*?(?:-i|--interface)[\s=]+(\S+)")
_PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")
_UNSUPPORTED_RE = re.compile(r"^\s*(\S.{0,80}?) (?:is|are) not supported on your system!?\s*$")
_RATE_RE = re.compile(r"(?<![\d.])([\d.]++)\s*+([KMG])bps", re.IGNORECASE)  # from a run's start


def _detect_mlnx_qos(text: str) -> float:
    if "Priority trust state" in text or "dscp2prio mapping" in text or (
        "not supported on your system" in text and "mlnx_qos" in text
    ):
        return 0.95
    if "PFC configuration:" in text and "tsa:" in text:
        return 0.95
    if "tsa:" in text and "ratelimit:" in text:
        return 0.6
    return 0.0


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def _tc(lineno: int, num: int, rest: str) -> QosTc:
    tc = QosTc(tc=num, line=lineno)
    for part in rest.split(","):
        key, _, value = part.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "ratelimit":
            tc.ratelimit_raw = value
            m = _RATE_RE.search(value)
            if m is not None:
                scale = {"K": 1e-6, "M": 1e-3, "G": 1.0}[m.group(2).upper()]
                rate = finite_or_none(m.group(1))  # "1.2.3Gbps": no rate ("ratelimit_raw" keeps it)
                tc.ratelimit_gbps = rate * scale if rate is not None else None
        elif key == "tsa":
            tc.tsa = value
        elif key == "bw":
            digits = _ints(value)
            tc.bw_percent = digits[0] if digits else None
    return tc


@register(
    "mlnx-qos",
    summary="mlnx_qos -i IFACE",
    detect=_detect_mlnx_qos,
    refs=("S12", "S14", "S18"),
)
def parse_mlnx_qos(text: str) -> ParseResult:
    """``mlnx_qos -i IFACE`` → one :class:`QosReport` per report in the capture."""
    res = ParseResult("mlnx-qos")
    rep: QosReport | None = None
    pending_iface: str | None = None
    section: str | None = None  # "dscp2prio" or "pfc" while inside those blocks
    cur_tc: QosTc | None = None

    def start(lineno: int) -> QosReport:
        nonlocal pending_iface, section, cur_tc
        r = QosReport(line=lineno, interface=pending_iface)
        res.records.append(r)
        pending_iface, section, cur_tc = None, None, None
        return r

    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("DCBX mode:"):
            rep = start(lineno)
            rep.dcbx_mode = stripped.split(":", 1)[1].strip() or None
            rep.end_line = lineno
            continue
        if stripped.startswith("Priority trust state:"):
            if rep is None or rep.trust is not None:
                rep = start(lineno)
            rep.trust = stripped.split(":", 1)[1].strip() or None
            rep.end_line = lineno
            continue
        um = _UNSUPPORTED_RE.match(raw)
        if um is not None:
            if rep is None or rep.trust is not None or rep.tcs:
                rep = start(lineno)
            rep.unsupported.append(um.group(1))
            rep.end_line = lineno
            continue
        if _PROMPT_RE.match(raw):
            cm = _CMD_RE.search(raw)
            pending_iface = cm.group(1) if cm is not None else None
            rep, section, cur_tc = None, None, None
            continue
        if rep is None:
            continue
        m = _PRIO_DSCP_RE.match(raw)
        if m is not None:
            prio = int(m.group(1))
            for dscp in _ints(m.group(2)):
                rep.dscp_to_priority[dscp] = prio
            rep.end_line = lineno
            continue
        tm = _TC_RE.match(raw)
        if tm is not None:
            cur_tc = _tc(lineno, int(tm.group(1)), tm.group(2))
            rep.tcs.append(cur_tc)
            section = None
            rep.end_line = lineno
            continue
        pm = _TC_PRIO_RE.match(raw)
        if pm is not None and cur_tc is not None:
            cur_tc.priorities.append(int(pm.group(1)))
            rep.end_line = lineno
            continue
        rm = _ROW_RE.match(raw)
        if rm is not None and section == "pfc":
            values = _ints(rm.group(2))
            if rm.group(1) == "priority":
                rep.pfc_priorities_listed = values
            else:
                prios = rep.pfc_priorities_listed or list(range(len(values)))
                if rm.group(1) == "enabled":
                    pairs = zip(prios, values, strict=False)
                    rep.pfc_enabled_priorities = [p for p, v in pairs if v]
                else:
                    rep.priority_to_buffer = dict(zip(prios, values, strict=False))
            rep.end_line = lineno
            continue
        kv = _KV_RE.match(raw)
        if kv is not None:
            key, value = kv.group(1).lower(), kv.group(2)
            section = None
            if key == "dscp2prio mapping":
                section = "dscp2prio"
            elif key == "pfc configuration":
                section = "pfc"
            elif key == "default priority":
                found = _ints(value)
                rep.default_priority = found[0] if found else None
            elif key.startswith("receive buffer size"):
                sizes, _, maximum = value.partition("max_buffer_size=")
                rep.receive_buffer_bytes = _ints(sizes)
                rep.max_buffer_size_bytes = _ints(maximum)[0] if _ints(maximum) else None
            elif key == "cable len":
                found = _ints(value)
                rep.cable_len_m = found[0] if found else None
            # other "key: value" lines (new fields in newer builds) are tolerated
            rep.end_line = lineno
            continue
        res.warn(
            lineno, "expected an mlnx_qos report line (key: value, prio:/tc: line, PFC row)", raw
        )
    for r in res.records:
        if (
            isinstance(r, QosReport)
            and not r.pfc_priorities_listed
            and not r.tcs
            and not r.unsupported
        ):
            res.warn(
                r.end_line or r.line,
                "mlnx_qos report ends before its PFC and TC sections (truncated?)",
            )
    return res
