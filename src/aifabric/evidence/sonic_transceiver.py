"""SONiC transceiver state: ``show interfaces transceiver status`` and ``show interfaces
transceiver pm`` (sonic-utilities ``scripts/sfpshow``, which reads the ``TRANSCEIVER_STATUS`` /
``TRANSCEIVER_PM`` tables that xcvrd fills in STATE_DB).

Kinds:

* ``sonic-transceiver-status``: per port an ``EthernetN:`` line then indented ``Label: value``
  lines. Every transceiver type prints the ``QSFP_STATUS_MAP`` labels (``CMIS State (SW)``, ``Tx
  fault flag on media lane N``, ``Rx loss of signal flag on media lane N``, ``TX disable status
  on lane N``, ``Disabled TX channels``); CMIS modules add the ``CMIS_STATUS_MAP`` labels (``Current
  module state``, ``Reason of entering the module fault state``, firmware faults, ``Data path state
  indicator on host lane N``, output status, host-side LOS / CDR loss of lock, configuration
  status, and the latched alarm/warning flags ``Temperature high alarm flag``, ``Rx power low
  alarm flag on lane N``, ``Prefec ber high alarm flag``...); C-CMIS (ZR) modules add tuning and
  coherent-DSP flags. ``EthernetN: Transceiver status info not applicable`` when the table is
  missing. Record: :class:`SonicTransceiverStatus` (one per port).
* ``sonic-transceiver-pm``: ZR (C-CMIS) performance monitoring, a ``tabulate`` table indented four
  spaces: ``Parameter Unit Min Avg Max`` then high alarm / high warning thresholds, ``Threshold
  Crossing Alert-High`` (max above the high alarm), low alarm / low warning, ``Alert-Low`` (min
  below the low alarm), one row per parameter (``Tx Power``, ``Rx Total Power``, ``Rx Signal
  Power``, ``CD-short link``, ``PDL``, ``OSNR``, ``eSNR``, ``CFO``, ``DGD``, ``SOPMD``, ``SOP
  ROC``, ``Pre-FEC BER``, ``Post-FEC BER``, ``EVM``); ``EthernetN: Transceiver performance
  monitoring not applicable`` for other modules. Record: :class:`SonicTransceiverPm` (one per
  port, the rows in ``params``).

``show interfaces transceiver eeprom [--dom]`` and ``presence`` / ``lpmode`` are parsed by the
``ethtool-module`` kind (:mod:`aifabric.evidence.ethtool_module`), which already reads the
SONiC ``EthernetN: SFP EEPROM detected`` blocks and the presence tables.

Sources: sonic-utilities ``scripts/sfpshow``, ``utilities_common/sfp_helper.py`` (the label maps),
``doc/Command-Reference.md`` and ``tests/sfp_test.py``
(https://github.com/sonic-net/sonic-utilities); the captures under
``tests/fixtures/evidence/sonic-transceiver-{status,pm}/``. Seed refs: S16, S20, S22.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

_R = TypeVar("_R", "SonicTransceiverStatus", "SonicTransceiverPm")

__all__ = [
    "PM_PARAMETERS",
    "PmValue",
    "SonicTransceiverPm",
    "SonicTransceiverStatus",
    "StatusLane",
    "parse_sonic_transceiver_pm",
    "parse_sonic_transceiver_status",
]


@dataclass(slots=True)
class StatusLane:
    """Per-lane status of one module (media lane or host lane, as numbered by SONiC)."""

    lane: int
    tx_fault: bool | None = None
    rx_los: bool | None = None
    """Rx loss of signal on the media (optical) side."""
    tx_disable: bool | None = None
    datapath_state: str | None = None
    """CMIS data path state of the host lane, e.g. ``DataPathActivated``."""
    tx_output: bool | None = None
    rx_output: bool | None = None
    tx_los_host: bool | None = None
    tx_cdr_lol_host: bool | None = None
    rx_cdr_lol: bool | None = None
    config_status: str | None = None
    dpinit_pending: bool | None = None


@dataclass(slots=True, kw_only=True)
class SonicTransceiverStatus(Record):
    """``show interfaces transceiver status`` for one port."""

    record_type: ClassVar[str] = "sonic_transceiver_status"

    interface: str | None = None
    """``None`` when the capture starts inside a port's block."""
    applicable: bool = True
    """False for ``Transceiver status info not applicable``."""
    cmis_state: str | None = None
    """xcvrd's CMIS state machine (``READY``, ``DP_PRE_INIT_CHECK``, ``FAILED``...)."""
    module_state: str | None = None
    """Module state reported by the module (``ModuleReady``, ``ModuleFault``...)."""
    module_fault_cause: str | None = None
    datapath_fw_fault: bool | None = None
    module_fw_fault: bool | None = None
    module_state_changed: bool | None = None
    disabled_tx_channels: int | None = None
    """Bit mask of disabled Tx channels (255: all eight)."""
    lanes: dict[int, StatusLane] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    """Alarm/warning/status flags by label, lane-qualified where the label names a lane, e.g.
    ``{"Rx power low alarm flag on lane 1": False, "Temperature high alarm flag": False}``."""
    raw: dict[str, str] = field(default_factory=dict)
    """Every ``label: value`` as printed."""

    def set_flags(self) -> list[str]:
        """Alarm/warning flags that are set (``True``)."""
        return [k for k, v in self.flags.items() if v and ("alarm" in k or "warning" in k)]


@dataclass(slots=True)
class PmValue:
    """One row of the PM table."""

    parameter: str
    unit: str | None
    line: int
    min: float | None = None
    avg: float | None = None
    max: float | None = None
    high_alarm: float | None = None
    high_warning: float | None = None
    tca_high: bool | None = None
    """Threshold crossing alert: max above the high alarm."""
    low_alarm: float | None = None
    low_warning: float | None = None
    tca_low: bool | None = None
    """Threshold crossing alert: min below the low alarm."""


@dataclass(slots=True, kw_only=True)
class SonicTransceiverPm(Record):
    """``show interfaces transceiver pm`` for one port."""

    record_type: ClassVar[str] = "sonic_transceiver_pm"

    interface: str | None = None
    applicable: bool = True
    params: dict[str, PmValue] = field(default_factory=dict)

    @property
    def prefec_ber(self) -> PmValue | None:
        return self.params.get("Pre-FEC BER")


PM_PARAMETERS = (
    "Tx Power",
    "Rx Total Power",
    "Rx Signal Power",
    "CD-short link",
    "PDL",
    "OSNR",
    "eSNR",
    "CFO",
    "DGD",
    "SOPMD",
    "SOP ROC",
    "Pre-FEC BER",
    "Post-FEC BER",
    "EVM",
)
"""The rows of ``ZR_PM_INFO_MAP`` in sfpshow, in print order."""

# --------------------------------------------------------------------------------------------
# line shapes

_PROMPT_RE = re.compile(r"^(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")
# Linear on any line: values end at their last non-blank (greedy), and the key is the text
# before the first colon up to its last non-blank, or that text and the colon when a second colon
# follows (what the lazy ``[^:]*?\S`` found, without rescanning blank runs).
_HEADER_RE = re.compile(r"^(?P<iface>[A-Za-z][\w/.-]*\d):(?:\s+(?P<rest>(?:.*\S)?))?\s*$")
_KV_RE = re.compile(r"^(?P<key>[^:]*[^:\s]|[^:]*:)\s*:(?:\s+(?P<val>(?:.*\S)?))?\s*$")
_NOT_APPLICABLE_RE = re.compile(r"not applicable", re.IGNORECASE)

_LANE_FIELDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Tx fault flag on media lane (\d+)$"), "tx_fault"),
    (re.compile(r"^Rx loss of signal flag on media lane (\d+)$"), "rx_los"),
    (re.compile(r"^TX disable status on lane (\d+)$"), "tx_disable"),
    (re.compile(r"^Data path state indicator on host lane (\d+)$"), "datapath_state"),
    (re.compile(r"^Tx output status on media lane (\d+)$"), "tx_output"),
    (re.compile(r"^Rx output status on host lane (\d+)$"), "rx_output"),
    (re.compile(r"^Tx loss of signal flag on host lane (\d+)$"), "tx_los_host"),
    (
        re.compile(r"^Tx clock and data recovery loss of lock on host lane (\d+)$"),
        "tx_cdr_lol_host",
    ),
    (re.compile(r"^Rx clock and data recovery loss of lock on media lane (\d+)$"), "rx_cdr_lol"),
    (re.compile(r"^Configuration status for the data path of host line (\d+)$"), "config_status"),
    (re.compile(r"^Data path configuration updated on host lane (\d+)$"), "dpinit_pending"),
)
_STR_LANE_FIELDS = frozenset({"datapath_state", "config_status"})


def _bool(value: str) -> bool | None:
    v = value.strip().lower()
    if v in ("true", "yes", "on", "1"):
        return True
    if v in ("false", "no", "off", "0"):
        return False
    return None


def _detect_status(text: str) -> float:
    head = text[:200_000]
    if "flag on media lane" in head or "TX disable status on lane" in head:
        return 0.95
    if "CMIS State (SW)" in head or "Transceiver status info not applicable" in head:
        return 0.95
    if "Reason of entering the module fault state" in head:
        return 0.95
    return 0.0


def _detect_pm(text: str) -> float:
    head = text[:200_000]
    if "Crossing" in head and ("Alert-High" in head or "Alert-Low" in head):
        return 0.95
    if re.search(r"Transceiver performance monitoring (?:not|Not) applicable", head):
        return 0.95
    if "Pre-FEC BER" in head and "Post-FEC BER" in head:
        return 0.9
    return 0.0


# --------------------------------------------------------------------------------------------
# status


def _set_status(rec: SonicTransceiverStatus, key: str, value: str) -> bool:
    """Store one ``label: value`` pair; False when the label is not a status label."""
    rec.raw[key] = value
    for pattern, name in _LANE_FIELDS:
        m = pattern.match(key)
        if m is None:
            continue
        n = int(m.group(1))
        lane = rec.lanes.get(n)
        if lane is None:
            lane = rec.lanes[n] = StatusLane(lane=n)
        setattr(lane, name, value if name in _STR_LANE_FIELDS else _bool(value))
        return True
    if key == "CMIS State (SW)":
        rec.cmis_state = value or None
    elif key == "Current module state":
        rec.module_state = value or None
    elif key == "Reason of entering the module fault state":
        rec.module_fault_cause = value or None
    elif key == "Datapath firmware fault":
        rec.datapath_fw_fault = _bool(value)
    elif key == "Module firmware fault":
        rec.module_fw_fault = _bool(value)
    elif key == "Module state changed":
        rec.module_state_changed = _bool(value)
    elif key == "Disabled TX channels":
        rec.disabled_tx_channels = int(value) if value.isdecimal() else None
    else:
        b = _bool(value)
        if b is None and not re.search(r"flag|status|state", key, re.IGNORECASE):
            return False
        if b is not None:
            rec.flags[key] = b
    return True


class _PortBlocks(Generic[_R]):
    """The port blocks both tables share: ``EthernetN:`` headers (or ``EthernetN: ... not
    applicable``) open a record, a prompt closes it, blank and fence lines are skipped; the
    other lines are yielded to the table's own reader, with :meth:`current` the port record
    (opened on demand when a paste starts inside a block)."""

    def __init__(self, res: ParseResult, make: Callable[[int, str | None], _R]) -> None:
        self.res = res
        self.make: Callable[[int, str | None], _R] = make
        self.rec: _R | None = None

    def lines(self, text: str) -> Iterator[tuple[int, str, str]]:
        for lineno, raw in enumerate(text.splitlines(), 1):
            stripped = raw.strip()
            if not stripped or stripped.startswith("```"):
                continue
            hm = _HEADER_RE.match(stripped)
            if hm is not None:
                rest = hm.group("rest") or ""
                if not rest or _NOT_APPLICABLE_RE.search(rest):
                    self.rec = self.make(lineno, hm.group("iface"))
                    self.rec.applicable = not rest
                    self.res.records.append(self.rec)
                    continue
            if _PROMPT_RE.match(stripped) is not None:
                self.rec = None
                continue
            yield lineno, raw, stripped

    def current(self, lineno: int) -> _R:
        if self.rec is None:
            self.rec = self.make(lineno, None)
            self.res.records.append(self.rec)
        return self.rec


@register(
    "sonic-transceiver-status",
    summary="SONiC show interfaces transceiver status [PORT]",
    detect=_detect_status,
    refs=("S16", "S20", "S22"),
)
def parse_sonic_transceiver_status(text: str) -> ParseResult:
    """``show interfaces transceiver status`` → one :class:`SonicTransceiverStatus` per port."""
    res = ParseResult("sonic-transceiver-status")
    ports = _PortBlocks(
        res, lambda n, iface: SonicTransceiverStatus(line=n, interface=iface)
    )
    for lineno, raw, stripped in ports.lines(text):
        kv = _KV_RE.match(stripped)
        if kv is not None:
            key, value = kv.group("key"), kv.group("val") or ""
            rec = ports.current(lineno)
            if _set_status(rec, key, value):
                rec.end_line = lineno
                continue
            del rec.raw[key]
        res.warn(lineno, "expected 'EthernetN:' or an indented 'label: value' status line", raw)
    return res


# --------------------------------------------------------------------------------------------
# pm

_SPLIT_RE = re.compile(r"\s{2,}")
_PM_HEADER_WORDS = frozenset(
    {"Parameter", "Unit", "Min", "Avg", "Max", "Threshold", "High", "Low", "Alarm", "Warning",
     "Crossing", "Alert-High", "Alert-Low"}
)  # fmt: skip


def _pm_num(cell: str) -> float | None:
    c = cell.strip()
    if c in ("N/A", "", "-"):
        return None
    try:
        return float(c)
    except ValueError:
        return None


def _pm_tca(cell: str) -> bool | None:
    b = _bool(cell)
    if b is not None:
        return b
    num = _pm_num(cell)  # older builds printed 0.0 for a False alert on the BER rows
    return None if num is None else num != 0.0


def _pm_row(cells: list[str], lineno: int) -> PmValue | None:
    if len(cells) != 11:
        return None
    name, unit = cells[0], cells[1]
    nums = [_pm_num(c) for c in cells[2:]]
    if all(v is None for v in nums[:3]) and not all(c.strip() == "N/A" for c in cells[2:5]):
        return None
    return PmValue(
        parameter=name,
        unit=None if unit == "N/A" else unit,
        line=lineno,
        min=nums[0],
        avg=nums[1],
        max=nums[2],
        high_alarm=nums[3],
        high_warning=nums[4],
        tca_high=_pm_tca(cells[7]),
        low_alarm=nums[6],
        low_warning=nums[7],
        tca_low=_pm_tca(cells[10]),
    )


@register(
    "sonic-transceiver-pm",
    summary="SONiC show interfaces transceiver pm [PORT] (ZR / C-CMIS performance monitoring)",
    detect=_detect_pm,
    refs=("S16", "S22"),
)
def parse_sonic_transceiver_pm(text: str) -> ParseResult:
    """``show interfaces transceiver pm`` → one :class:`SonicTransceiverPm` per port."""
    res = ParseResult("sonic-transceiver-pm")
    ports = _PortBlocks(res, lambda n, iface: SonicTransceiverPm(line=n, interface=iface))
    for lineno, raw, stripped in ports.lines(text):
        if set(stripped.replace("-", " ").split()) <= {""} or set(stripped) <= {"-", " "}:
            continue  # the dashes under the header
        words = set(stripped.split())
        if words and words <= _PM_HEADER_WORDS:
            continue  # the three header lines
        row = _pm_row(_SPLIT_RE.split(stripped), lineno)
        if row is not None:
            rec = ports.current(lineno)
            rec.params[row.parameter] = row
            rec.end_line = lineno
            continue
        res.warn(lineno, "expected 'EthernetN:' or a PM table row (Parameter Unit Min Avg Max...)",
                 raw)  # fmt: skip
    return res
