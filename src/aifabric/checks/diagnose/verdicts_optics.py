"""Record verdicts on optics (``ethtool -m`` and SONiC eeprom --dom): DOM values against the
module's own thresholds and fault flags: see :mod:`.verdicts_core`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import (
    _ETHTOOL,
)
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_module import ModuleLane, Threshold, TransceiverModule

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence


__all__: list[str] = []


# -- optics (ethtool -m) ------------------------------------------------------------------------

_QTY = {
    "temperature_c": ("temperature", "C"),
    "voltage_v": ("supply voltage", "V"),
    "tx_bias_ma": ("laser bias", "mA"),
    "tx_power_dbm": ("Tx power", "dBm"),
    "rx_power_dbm": ("Rx power", "dBm"),
}


def _valid(t: Threshold | None) -> bool:
    """Thresholds a module really programmed (all zero / high <= low: not set)."""
    if t is None:
        return False
    hi = t.high_alarm if t.high_alarm is not None else t.high_warning
    lo = t.low_alarm if t.low_alarm is not None else t.low_warning
    return hi is not None and lo is not None and hi > lo


def _level(value: float, t: Threshold) -> tuple[str, str, float] | None:
    """(``alarm``|``warning``, ``high``|``low``, threshold) beyond which ``value`` lies."""
    for kind in ("alarm", "warning"):
        hi = getattr(t, f"high_{kind}")
        lo = getattr(t, f"low_{kind}")
        if hi is not None and value > hi:
            return kind, "high", hi
        if lo is not None and value < lo:
            return kind, "low", lo
    return None


def _lit(lane: ModuleLane) -> bool | None:
    readings = [v for v in (lane.tx_bias_ma, lane.tx_power_mw) if v is not None]
    if not readings:
        return None
    return any(v > 0 for v in readings)


@dataclass(slots=True)
class _Excess:
    qty: str
    kind: str
    side: str
    limit: float
    worst: float
    lanes: list[int] = field(default_factory=list)


def _excesses(mod: TransceiverModule) -> list[_Excess]:
    out: dict[tuple[str, str, str], _Excess] = {}

    def note(qty: str, value: float, lane: int | None) -> None:
        t = mod.thresholds.get(qty)
        if t is None or not _valid(t):
            return
        lv = _level(value, t)
        if lv is None:
            return
        kind, side, limit = lv
        if qty == "rx_power_dbm" and side == "low" and kind == "alarm":
            return  # diagnose.optics-rx-low (rule) judges Rx under the low alarm
        ex = out.setdefault((qty, kind, side), _Excess(qty, kind, side, limit, value))
        if (side == "high" and value > ex.worst) or (side == "low" and value < ex.worst):
            ex.worst = value
        if lane is not None:
            ex.lanes.append(lane)

    if mod.temperature_c is not None:
        note("temperature_c", mod.temperature_c, None)
    if mod.voltage_v is not None:
        note("voltage_v", mod.voltage_v, None)
    for lane in mod.lanes:
        if _lit(lane) is False:
            continue  # laser off: an unused lane, a disabled transmitter, low-power mode
        if lane.tx_bias_ma is not None:
            note("tx_bias_ma", lane.tx_bias_ma, lane.lane)
        if lane.tx_power_dbm is not None:
            note("tx_power_dbm", lane.tx_power_dbm, lane.lane)
        rx = lane.rx_power_dbm
        if rx is not None and rx > -30.0:  # no light at all is the rule's (dark lane)
            note("rx_power_dbm", rx, lane.lane)
    # an alarm and a warning on the same side of the same quantity: keep the alarm
    for (qty, kind, side), _ex in list(out.items()):
        if kind == "warning" and (qty, "alarm", side) in out:
            del out[(qty, kind, side)]
    return list(out.values())


_FLAG_QTY = {
    "temperature": "temperature_c",
    "voltage": "voltage_v",
    "tx_bias": "tx_bias_ma",
    "tx_power": "tx_power_dbm",
    "rx_power": "rx_power_dbm",
}


_FLAG_RE = re.compile(
    r"^(temperature|voltage|tx_bias|tx_power|rx_power)_(high|low)_(alarm|warning)$"
)


def _flag_excesses(mod: TransceiverModule, judged: set[str]) -> list[_Excess]:
    """Alarm/warning flags set for quantities the module printed no reading for."""
    out: list[_Excess] = []
    for key, on in mod.flags.items():
        m = _FLAG_RE.match(key)
        if not on or m is None:
            continue
        qty = _FLAG_QTY[m.group(1)]
        if qty in judged or (qty == "rx_power_dbm" and m.group(2) == "low"):
            continue  # a reading was judged (a set flag is latched history) / the rule's case
        out.append(_Excess(qty, m.group(3), m.group(2), float("nan"), float("nan")))
    return out


def _module_name(mod: TransceiverModule) -> str:
    what = " ".join(x for x in (mod.vendor_name, mod.vendor_pn) if x) or mod.form_factor or "module"
    return f"{mod.interface or 'port'} ({what})"


@verdict("transceiver_module")
def _optics(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, TransceiverModule) or not rec.present:
        return
    name = _module_name(rec)
    found = _excesses(rec)
    judged = {
        q
        for q in _QTY
        if (q == "temperature_c" and rec.temperature_c is not None)
        or (q == "voltage_v" and rec.voltage_v is not None)
        or (q == "tx_bias_ma" and any(ln.tx_bias_ma is not None for ln in rec.lanes))
        or (q == "tx_power_dbm" and any(ln.tx_power_dbm is not None for ln in rec.lanes))
        or (q == "rx_power_dbm" and any(ln.rx_power_dbm is not None for ln in rec.lanes))
    }
    found += _flag_excesses(rec, judged)
    for ex in found:
        label, unit = _QTY[ex.qty]
        where = f" on lane(s) {', '.join(map(str, sorted(set(ex.lanes))))}" if ex.lanes else ""
        if ex.limit == ex.limit:  # not NaN: a reading against a threshold
            detail = (
                f"{label} {ex.worst:g} {unit}{where} {'above' if ex.side == 'high' else 'below'} "
                f"the module's {ex.side} {ex.kind} {ex.limit:g} {unit}"
            )
        else:
            detail = f"the module flags {label} {ex.side} {ex.kind}"
        yield Verdict(
            id="diagnose.optics-threshold",
            severity="error" if ex.kind == "alarm" else "warning",
            cause="fabric.optics",
            message=f"{name}: {detail}",
            explanation=(
                "ethtool -m reads the module's digital optical monitoring and the alarm and "
                "warning thresholds its vendor programmed (SFF-8472, SFF-8636, CMIS; "
                f"{_ETHTOOL}). Beyond an alarm threshold the module is out of its operating "
                "range: high temperature or bias ages or shuts the laser, low Tx power or bias "
                "means a failing transmitter, Rx power above the overload level saturates the "
                "receiver (a short fibre without attenuator), Rx power in the warning band "
                "leaves little margin before errors (S16, S20.5). Lanes whose laser is off are "
                "not judged; thresholds left at zero are ignored."
            ),
            fix=(
                "Compare with the far end's ethtool -m; clean the connectors (inspection "
                "scope), check fibre type and length against the module's reach, add an "
                "attenuator for overload, improve airflow for temperature, and replace the "
                "module if its own Tx side is out of range."
            ),
            refs=("S16", "S20"),
            confidence=0.6 if ex.kind == "alarm" else 0.4,
        )
    faulty = [ln.lane for ln in rec.lanes if ln.tx_fault and _lit(ln) is not False]
    if faulty or rec.flags.get("tx_fault"):
        lanes = f" on lane(s) {', '.join(map(str, faulty))}" if faulty else ""
        yield Verdict(
            id="diagnose.optics-tx-fault",
            severity="warning",
            cause="fabric.optics",
            message=f"{name}: transmitter fault flagged{lanes}",
            explanation=(
                "TX fault is the module's own report that a laser driver failed (SFF-8472 "
                "status bits, SFF-8636/CMIS per-lane flags). In SFF-8636 and CMIS the flags are "
                "latched until read, so one read may show an old event: read ethtool -m twice "
                f"({_ETHTOOL})."
            ),
            fix=(
                "Read `ethtool -m` again; if the fault stays, replace the module; check the "
                "far end's Rx power on the flagged lanes."
            ),
            refs=("S16", "S20"),
            confidence=0.4,
        )
    if rec.module_state and "fault" in rec.module_state.lower():
        yield Verdict(
            id="diagnose.optics-module-fault",
            severity="error",
            cause="fabric.optics",
            message=f"{name}: CMIS module state {rec.module_state}",
            explanation=(
                "A CMIS module reports ModuleFault when it detected an internal fault and shut "
                f"its data path down (CMIS module state machine; {_ETHTOOL}); the port has no "
                "link through it."
            ),
            fix="Reseat the module (a power cycle clears a transient fault), else replace it.",
            refs=("S16", "S20"),
            confidence=0.65,
        )
