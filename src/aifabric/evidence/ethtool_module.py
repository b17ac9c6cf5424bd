"""Pluggable-module EEPROM and DOM dumps: ``ethtool -m IFACE`` and SONiC ``show interfaces
transceiver eeprom --dom`` / ``sfputil show eeprom -d`` → :class:`TransceiverModule` records (one
per module), plus SONiC ``show interfaces transceiver presence|lpmode`` tables →
:class:`TransceiverPresence` records.

``ethtool -m`` prints one ``Key : value`` line per field, the key left-padded to 41 columns
(``printf("\\t%-41s : ")``), for three memory maps:

* SFF-8472 (SFP/SFP+/SFP28): one lane; ``Laser bias current``, ``Laser output power``,
  ``Receiver signal average optical power``, module-level alarm/warning flags (``Laser rx power
  low alarm : On``) and the threshold table (``Laser rx power low alarm threshold : 0.0234 mW /
  -16.31 dBm``);
* SFF-8636 (QSFP+/QSFP28): per-channel ``Laser tx bias current (Channel N)``, ``Transmit avg
  optical power (Channel N)``, ``Rcvr signal avg optical power(Channel N)`` (no space before the
  parenthesis in ethtool ≤ 6.x), per-channel flags ``Laser bias current high alarm   (Chan N)``;
* CMIS (QSFP-DD/OSFP, ethtool ≥ 5.13): the same per-channel lines with up to 16 lanes (two banks),
  ``Rcvr signal avg optical power (Channel N)`` (with a space), ``Module State : 0x03
  (ModuleReady)``, ``Active firmware version``, and since ethtool 6.5 the LOS/LOL arrays ``Rx loss
  of signal : [ Yes, No, ... ]`` (``None`` when no lane is flagged).

Power is printed as ``0.7119 mW / -1.48 dBm``; ``0.0000 mW / -inf dBm`` (no light) becomes
``*_mw = 0.0`` and ``*_dbm = None``; when only mW is printed, dBm is computed (10·log10 mW).
Temperatures ``42.17 degrees C / 107.90 degrees F`` keep the Celsius value.

SONiC (sonic-utilities ``sfpshow``/``sfputil``) prints ``EthernetN: SFP EEPROM detected`` then
indented ``Key: value`` lines and the DOM sections ``ChannelMonitorValues`` (``RX1Power:
0.3802dBm``, ``TX1Bias: 6.7500mA``, ``TX1Power``), ``ChannelThresholdValues``
(``RxPowerHighAlarm  : 3.4001dBm``), ``ModuleMonitorValues`` (``Temperature: 30.9258C``, ``Vcc:
3.2824Volts``) and ``ModuleThresholdValues``; ``-infdBm`` and ``N/A`` read as no value.

Every key/value pair is also kept verbatim in ``raw`` (repeated keys joined with ``; ``), so
fields this parser does not model (compliance codes, CDR, power class) are not lost. Lines that
are not ``key: value`` inside a module block are warned about, except a value wrapped by a mailer
onto a column-0 line (``41.59 degrees C /`` + ``106.87 degrees F``), which is folded into ``raw``;
prompts, ``...`` elisions and blank lines are skipped.

Sources: https://man7.org/linux/man-pages/man8/ethtool.8.html ; ethtool sources ``sfpdiag.c``,
``qsfp.c``, ``cmis.c``, ``sff-common.c`` (https://git.kernel.org/pub/scm/network/ethtool/ethtool.git)
for the exact labels; netdev threads in ``tests/fixtures/evidence/ethtool-module/*/meta.yaml``
(CMIS LOS/LOL patch, Module State patch, mlx4 QSFP+ high-pages report); sonic-utilities
``scripts/sfpshow`` and ``tests/sfp_test.py`` (https://github.com/sonic-net/sonic-utilities).

Seed refs: S16 (optics: matching module types, DOM rx/tx power against thresholds, LOS/LOL),
S20 (troubleshooting a flapping or dark link), S22 (optics telemetry).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, mw_to_dbm
from aifabric.evidence.registry import register

__all__ = [
    "ModuleLane",
    "Threshold",
    "TransceiverModule",
    "TransceiverPresence",
    "parse_ethtool_module",
]


@dataclass(slots=True)
class ModuleLane:
    """One optical lane (channel) of a module: DOM readings and per-lane flags."""

    lane: int
    """1-based lane number as printed (``Channel 1`` … ``Channel 16``; SFP modules: lane 1)."""
    tx_bias_ma: float | None = None
    tx_power_mw: float | None = None
    tx_power_dbm: float | None = None
    """``None`` when the module reports 0 mW (``-inf dBm``: laser off / no light)."""
    rx_power_mw: float | None = None
    rx_power_dbm: float | None = None
    rx_los: bool | None = None
    """Rx loss of signal (CMIS/SFF-8636 flag arrays); ``None`` when not reported."""
    tx_los: bool | None = None
    rx_lol: bool | None = None
    """Rx loss of lock (CDR)."""
    tx_lol: bool | None = None
    tx_fault: bool | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    """Per-lane alarm/warning flags, e.g. ``{"tx_bias_high_alarm": False}``."""


@dataclass(slots=True)
class Threshold:
    """Vendor alarm/warning thresholds of one monitored quantity (unit in the dict key)."""

    high_alarm: float | None = None
    high_warning: float | None = None
    low_alarm: float | None = None
    low_warning: float | None = None


@dataclass(slots=True, kw_only=True)
class TransceiverModule(Record):
    """One pluggable module: identity, module-level DOM, lanes, thresholds, flags, raw fields."""

    record_type: ClassVar[str] = "transceiver_module"

    interface: str | None = None
    """From the ``ethtool -m IFACE`` prompt or the SONiC ``EthernetN:`` header."""
    source: str = "ethtool"
    """``ethtool`` or ``sonic``."""
    present: bool = True
    """False for SONiC ``EthernetN: SFP EEPROM Not detected``."""
    identifier: str | None = None
    """As printed: ``0x11 (QSFP28)``, ``QSFP28 or later``."""
    identifier_code: int | None = None
    form_factor: str | None = None
    """Normalised: ``SFP``, ``QSFP+``, ``QSFP28``, ``QSFP-DD``, ``QSFP56-DD``, ``OSFP``..."""
    memory_map: str | None = None
    """``SFF-8472``, ``SFF-8636`` or ``CMIS`` (derived from the identifier)."""
    connector: str | None = None
    transceiver_types: list[str] = field(default_factory=list)
    """Every ``Transceiver type`` / compliance line, e.g. ``100G Ethernet: 100G Base-SR4``."""
    vendor_name: str | None = None
    vendor_oui: str | None = None
    vendor_pn: str | None = None
    vendor_sn: str | None = None
    vendor_rev: str | None = None
    date_code: str | None = None
    wavelength_nm: float | None = None
    lengths_m: dict[str, float] = field(default_factory=dict)
    """Supported reach per medium in metres: ``{"SMF": 10000.0, "OM3 50um": 100.0}``."""
    module_state: str | None = None
    """CMIS module state: ``ModuleReady``, ``ModuleLowPwr``, ``ModuleFault``..."""
    firmware_version: str | None = None
    temperature_c: float | None = None
    voltage_v: float | None = None
    lanes: list[ModuleLane] = field(default_factory=list)
    thresholds: dict[str, Threshold] = field(default_factory=dict)
    """Keys ``temperature_c``, ``voltage_v``, ``tx_bias_ma``, ``tx_power_dbm``, ``rx_power_dbm``."""
    flags: dict[str, bool] = field(default_factory=dict)
    """Module-level alarm/warning flags (``rx_power_low_alarm``...), On → True."""
    raw: dict[str, str] = field(default_factory=dict)

    def lane(self, n: int) -> ModuleLane:
        """Lane ``n``, created (in order) if not seen yet."""
        for ln in self.lanes:
            if ln.lane == n:
                return ln
        new = ModuleLane(lane=n)
        self.lanes.append(new)
        self.lanes.sort(key=lambda x: x.lane)
        return new

    @property
    def dark_lanes(self) -> list[int]:
        """Lanes reporting no received light (0 mW or ≤ −30 dBm)."""
        out = []
        for ln in self.lanes:
            if ln.rx_power_mw == 0.0 or (ln.rx_power_dbm is not None and ln.rx_power_dbm <= -30):
                out.append(ln.lane)
        return out


@dataclass(slots=True, kw_only=True)
class TransceiverPresence(Record):
    """A row of SONiC ``show interfaces transceiver presence`` or ``... lpmode``."""

    record_type: ClassVar[str] = "transceiver_presence"

    interface: str
    present: bool | None = None
    lpmode: bool | None = None
    """Low-power mode (``On`` → True)."""
    status: str = ""
    """The cell as printed (``Present``, ``Not present``, ``Off``)."""


# --------------------------------------------------------------------------------------------
# regexes

# Linear on any line: the key ends at its last non-blank before the first colon and the value at
# its last non-blank, both found by a greedy scan and one backtrack (a lazy key or value followed
# by ``\s*`` rescans every blank run once per character: quadratic on a long run of blanks).
_KV_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<key>[^:\s](?:[^:]*[^:\s])?)\s*:(?:[ \t]+(?P<val>(?:.*\S)?))?\s*$"
)
_PROMPT_RE = re.compile(r"^\s*(?:[#$>%]\s|[^\s@~]*[@~]\S*\s*[#$%]\s?|\^C|```)")  # linear
_ETHTOOL_CMD_RE = re.compile(
    r"ethtool\s+(?:-m|--module-info|--dump-module-eeprom)\s+(?:-\S+\s+)*(?P<iface>[\w.:@-]+)"
)
_SONIC_HDR_RE = re.compile(
    r"^(?P<iface>[A-Za-z][\w/.-]*\d): SFP EEPROM "
    r"(?P<state>detected|[Nn]ot detected|is not applicable.*)"
)
# the leading blanks are taken only from the start of their run (or none before the "(")
_CHANNEL_RE = re.compile(r"(?:(?<!\s)\s*+)?\((?:Channel|Chan|Lane)\s*+(?P<n>\d+)\)\s*")
_MW_RE = re.compile(
    r"(?P<mw>[-+]?(?<!\d)\d++(?:\.\d++)?)\s*+mW"  # from the first digit of a run only
    r"(?:\s*/\s*(?P<dbm>[-+]?(?:inf|\d+(?:\.\d+)?))\s*dBm)?"
)
_NUM_RE = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|inf)", re.IGNORECASE)
# a wrapped tail of a value: at column 0, starts like a value word, no colon
_WRAP_RE = re.compile(r"^[\w(+.-][^:]*$")
_HEXCODE_RE = re.compile(r"^0x(?P<code>[0-9a-fA-F]{2})(?:\s*\((?P<desc>.*)\))?")
_SONIC_LANE_RE = re.compile(r"^(?P<dir>RX|TX)(?P<n>\d+)(?P<what>Power|Bias)$", re.IGNORECASE)
_SONIC_THR_RE = re.compile(
    r"^(?P<qty>RxPower|TxPower|TxBias|Temp|Vcc)(?P<lvl>High|Low)(?P<kind>Alarm|Warning)$",
    re.IGNORECASE,
)
_LEVEL_RE = re.compile(r"\b(?P<lvl>high|low)\s+(?P<kind>alarm|warning)\b(?P<thr>\s+threshold)?")
_PRESENCE_HDR_RE = re.compile(r"^\s*Port\s{2,}(?P<col>Presence|Low-power Mode)\s*$", re.MULTILINE)
# ``pre`` ends at its last non-blank before the "(" (greedy, one backtrack): a lazy ``pre`` between
# two ``\s*`` tried every split of a run of blanks (cubic)
_LENGTH_RE = re.compile(
    r"^Length\s*+(?P<pre>(?:[^(]*[^(\s])?)\s*\((?P<inner>[^)]*)\)", re.IGNORECASE
)
_FORM_FACTORS = (
    ("QSFP56-DD", "QSFP56-DD"),
    ("QSFP-DD", "QSFP-DD"),
    ("QSFP112", "QSFP112"),
    ("OSFP", "OSFP"),
    ("SFP-DD", "SFP-DD"),
    ("QSFP28", "QSFP28"),
    ("QSFP56", "QSFP56"),
    ("QSFP+", "QSFP+"),
    ("QSFP", "QSFP"),
    ("SFP28", "SFP28"),
    ("SFP+", "SFP+"),
    ("SFP", "SFP"),
    ("GBIC", "GBIC"),
)
# SFF-8024 identifier codes → memory map.
_CMIS_CODES = frozenset({0x18, 0x19, 0x1A, 0x1B, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25})
_SFF8636_CODES = frozenset({0x0C, 0x0D, 0x11})
_SFF8472_CODES = frozenset({0x02, 0x03})

# Monitored quantities as ethtool names them → our key stem.
_QTY = (
    ("laser tx bias current", "tx_bias"),
    ("laser bias current", "tx_bias"),
    ("laser output power", "tx_power"),
    ("laser tx power", "tx_power"),
    ("transmit avg optical power", "tx_power"),
    ("laser rx power", "rx_power"),
    ("rcvr signal avg optical power", "rx_power"),
    ("module temperature", "temperature"),
    ("module voltage", "voltage"),
)
_RX_ALIASES = ("receiver signal average optical power", "rcvr signal", "receiver signal oma")
_THR_UNIT = {
    "tx_bias": "tx_bias_ma",
    "tx_power": "tx_power_dbm",
    "rx_power": "rx_power_dbm",
    "temperature": "temperature_c",
    "voltage": "voltage_v",
}
_LANE_FLAGS = {
    "rx loss of signal": "rx_los",
    "tx loss of signal": "tx_los",
    "rx loss of lock": "rx_lol",
    "tx loss of lock": "tx_lol",
    "tx fault": "tx_fault",
}
_YES = frozenset({"yes", "on", "true", "1"})
_NO = frozenset({"no", "off", "false", "0"})


# --------------------------------------------------------------------------------------------
# value helpers


def _num(text: str) -> float | None:
    """First number in ``text`` (``-inf`` → None); raises ValueError when there is none."""
    m = _NUM_RE.search(text)
    if m is None:
        if text.strip().upper() in {"N/A", "NA", "UNKNOWN", ""}:
            return None
        raise ValueError(text)
    v = float(m.group(0))
    return v if math.isfinite(v) else None


def _power(text: str) -> tuple[float | None, float | None]:
    """``0.7119 mW / -1.48 dBm`` → (mW, dBm); ``-2.1dBm`` → (mW computed, dBm)."""
    m = _MW_RE.search(text)
    if m is not None:
        mw = float(m.group("mw"))
        dbm_s = m.group("dbm")
        finite = dbm_s is not None and "inf" not in dbm_s
        return mw, (float(dbm_s) if finite and dbm_s else mw_to_dbm(mw))
    low = text.lower().replace(" ", "")
    if low.endswith("dbm"):
        body = low[:-3]
        if body in {"-inf", "inf", "n/a", ""}:
            return (0.0 if "inf" in body else None), None
        dbm = float(body)
        return 10 ** (dbm / 10.0), dbm
    v = _num(text)
    return v, (mw_to_dbm(v) if v is not None else None)


def _bool(text: str) -> bool | None:
    t = text.strip().lower()
    if t in _YES:
        return True
    if t in _NO:
        return False
    return None


def _norm_key(key: str) -> str:
    return " ".join(key.lower().split())


def _form_factor(identifier: str) -> str | None:
    up = identifier.upper()
    for needle, name in _FORM_FACTORS:
        if needle in up:
            return name
    return None


def _memory_map(code: int | None, form: str | None) -> str | None:
    if code is not None:
        if code in _CMIS_CODES:
            return "CMIS"
        if code in _SFF8636_CODES:
            return "SFF-8636"
        if code in _SFF8472_CODES:
            return "SFF-8472"
    if form is None:
        return None
    if "DD" in form or form in {"OSFP", "QSFP112"}:
        return "CMIS"
    if form.startswith("QSFP"):
        return "SFF-8636"
    if form.startswith("SFP"):
        return "SFF-8472"
    return None


def _length(label: str, value: str) -> tuple[str, float] | None:
    """``Length (SMF,km)`` ``20km`` → ("SMF", 20000.0); SONiC ``Length SMF(km)`` ``0.0``."""
    m = _LENGTH_RE.match(label.strip())
    if m is None:
        return None
    pre, inner = m.group("pre").strip(), m.group("inner").strip()
    if pre:  # SONiC: medium before the parenthesis, unit inside
        medium, unit = pre, inner.lower()
    else:  # ethtool: "SMF,km", "OM3 50um", "Copper or Active cable"
        medium, _, unit = inner.partition(",")
        unit = unit.strip().lower() or "m"
    v = _num(value)
    if v is None:
        return None
    tail = value.strip().lower()
    if tail.endswith("km") or (unit == "km" and not tail.endswith("m")):
        v *= 1000.0
    return medium.strip() or "cable", v


# --------------------------------------------------------------------------------------------
# the ethtool key handlers


def _apply_ethtool(mod: TransceiverModule, key: str, val: str) -> None:
    """Fold one ethtool ``key : value`` into ``mod``; raises ValueError on an unreadable value."""
    k = _norm_key(key)
    chan = _CHANNEL_RE.search(key)
    lane_no = int(chan.group("n")) if chan else None
    k_nochan = _norm_key(_CHANNEL_RE.sub(" ", key)) if chan else k

    if k == "identifier":
        mod.identifier = val
        hm = _HEXCODE_RE.match(val)
        if hm:
            mod.identifier_code = int(hm.group("code"), 16)
        mod.form_factor = _form_factor(val)
        mod.memory_map = _memory_map(mod.identifier_code, mod.form_factor)
        return
    if k == "connector":
        mod.connector = val
        return
    if k == "transceiver type":
        mod.transceiver_types.append(val)
        return
    simple = {
        "vendor name": "vendor_name",
        "vendor oui": "vendor_oui",
        "vendor pn": "vendor_pn",
        "vendor sn": "vendor_sn",
        "vendor rev": "vendor_rev",
        "date code": "date_code",
    }
    if k in simple:
        setattr(mod, simple[k], val or None)
        return
    if k == "laser wavelength":
        mod.wavelength_nm = _num(val)
        return
    if k.startswith("length ("):
        got = _length(key.strip(), val)
        if got:
            mod.lengths_m[got[0]] = got[1]
        return
    if k == "module state":
        hm = _HEXCODE_RE.match(val)
        mod.module_state = (hm.group("desc") or val) if hm else val
        return
    if k in {"active firmware version", "active firmware"}:
        mod.firmware_version = val
        return
    if k in _LANE_FLAGS:
        _lane_flag_array(mod, _LANE_FLAGS[k], val, lane_no)
        return

    qty = next((stem for name, stem in _QTY if k_nochan.startswith(name)), None)
    if qty is None:
        if not k_nochan.startswith(_RX_ALIASES):
            return
        qty = "rx_power"
    lvl = _LEVEL_RE.search(k_nochan)
    if lvl is not None:
        name = f"{qty}_{lvl.group('lvl')}_{lvl.group('kind')}"
        if lvl.group("thr"):
            _threshold(mod, qty, f"{lvl.group('lvl')}_{lvl.group('kind')}", val)
            return
        b = _bool(val)
        if b is None:
            raise ValueError(val)
        if lane_no is not None:
            mod.lane(lane_no).flags[name] = b
        else:
            mod.flags[name] = b
        return
    # a reading
    if qty == "temperature":
        mod.temperature_c = _num(val)
    elif qty == "voltage":
        mod.voltage_v = _num(val)
    else:
        ln = mod.lane(lane_no if lane_no is not None else 1)
        if qty == "tx_bias":
            ln.tx_bias_ma = _num(val)
        elif qty == "tx_power":
            ln.tx_power_mw, ln.tx_power_dbm = _power(val)
        else:
            ln.rx_power_mw, ln.rx_power_dbm = _power(val)


def _threshold(mod: TransceiverModule, qty: str, level: str, val: str) -> None:
    unit_key = _THR_UNIT[qty]
    thr = mod.thresholds.setdefault(unit_key, Threshold())
    value = _power(val)[1] if qty in {"tx_power", "rx_power"} else _num(val)
    setattr(thr, level, value)


def _lane_flag_array(mod: TransceiverModule, attr: str, val: str, lane_no: int | None) -> None:
    v = val.strip()
    if v.startswith("["):
        cells = [c.strip() for c in v.strip("[] ").split(",") if c.strip()]
        for i, cell in enumerate(cells, 1):
            b = _bool(cell)
            if b is None:
                raise ValueError(val)
            setattr(mod.lane(i), attr, b)
        return
    if v.lower() == "none":  # ethtool: no lane has the flag set
        for ln in mod.lanes:
            setattr(ln, attr, False)
        mod.flags[attr] = False
        return
    b = _bool(v)
    if b is None:
        raise ValueError(val)
    if lane_no is not None:
        setattr(mod.lane(lane_no), attr, b)
    else:
        mod.flags[attr] = b


# --------------------------------------------------------------------------------------------
# the SONiC key handlers

_SONIC_SIMPLE = {
    "vendor name": "vendor_name",
    "vendor oui": "vendor_oui",
    "vendor pn": "vendor_pn",
    "vendor sn": "vendor_sn",
    "vendor rev": "vendor_rev",
    "vendor date code(yyyy-mm-dd lot)": "date_code",
    "connector": "connector",
    "module state": "module_state",
    "active firmware": "firmware_version",
    "active firmware version": "firmware_version",
}


def _apply_sonic(mod: TransceiverModule, section: str, key: str, val: str) -> None:
    k = _norm_key(key)
    if section == "channelmonitorvalues":
        m = _SONIC_LANE_RE.match(key.strip())
        if m is None:
            return
        ln = mod.lane(int(m.group("n")))
        if m.group("what").lower() == "bias":
            ln.tx_bias_ma = None if val.upper().startswith(("N/A", "-INF")) else _num(val)
        elif m.group("dir").upper() == "RX":
            ln.rx_power_mw, ln.rx_power_dbm = _power(val)
        else:
            ln.tx_power_mw, ln.tx_power_dbm = _power(val)
        return
    if section in {"channelthresholdvalues", "modulethresholdvalues"}:
        m = _SONIC_THR_RE.match(key.strip())
        if m is None:
            return
        qty = {
            "rxpower": "rx_power",
            "txpower": "tx_power",
            "txbias": "tx_bias",
            "temp": "temperature",
            "vcc": "voltage",
        }[m.group("qty").lower()]
        _threshold(mod, qty, f"{m.group('lvl').lower()}_{m.group('kind').lower()}", val)
        return
    if section == "modulemonitorvalues":
        if k.startswith("temperature"):
            mod.temperature_c = _num(val)
        elif k in {"vcc", "voltage"}:
            mod.voltage_v = _num(val)
        return
    if k == "identifier":
        mod.identifier = val
        mod.form_factor = _form_factor(val)
        mod.memory_map = _memory_map(None, mod.form_factor)
    elif k in _SONIC_SIMPLE:
        setattr(mod, _SONIC_SIMPLE[k], val or None)
    elif k.startswith("length"):
        got = _length(key.strip(), val)
        if got:
            mod.lengths_m[got[0]] = got[1]
    elif section == "specification compliance" and val:
        mod.transceiver_types.append(f"{key.strip()}: {val}")
    elif k in {"wavelength", "laser wavelength"}:
        mod.wavelength_nm = _num(val)


# --------------------------------------------------------------------------------------------
# parse


def _keep_raw(mod: TransceiverModule, key: str, val: str, joiner: str = "; ") -> None:
    key = " ".join(key.split())
    old = mod.raw.get(key)
    mod.raw[key] = val if old is None else f"{old}{joiner}{val}"


def _is_wrap(line: str, key_indent: int) -> bool:
    """A continuation of the previous value wrapped by a mailer or terminal: at column 0 while the
    key lines are indented, starting like a value and without a colon, e.g. ``106.87 degrees F``
    after ``    Module temperature : 41.59 degrees C /``."""
    return key_indent > 0 and _WRAP_RE.match(line) is not None


_EXCERPT_KEY_RE = re.compile(
    r"^[ \t]*(Identifier|Extended identifier|Connector|Transceiver codes|Transceiver type"
    r"|Encoding|BR, Nominal|Rate identifier|Length \([^)\n]{2,12}\)|Laser wavelength"
    r"|Vendor (?:name|OUI|PN|rev|SN)|Date code|Module temperature|Module voltage"
    r"|Laser bias current|Laser output power|Transmit avg optical power"
    r"|Rcvr signal avg optical power|Receiver signal average optical power"
    r"|Optical diagnostics support|Revision compliance|Module State|Power class"
    r")[^:\n]{0,40}[ \t]+: ",
    re.MULTILINE,
)
"""Keys of ``ethtool -m`` (ethtool ``sfpid.c``, ``sff-common.c``, ``qsfp.c``, ``cmis.c``), each
padded to a column before `` : ``: an excerpt without the identifier lines is still this."""
_SONIC_EXCERPT_KEY_RE = re.compile(
    r"^[ \t]*(Vendor (?:Name|OUI|PN|Rev|SN|Date Code)|Identifier|Connector|Encoding"
    r"|Extended Identifier|Nominal Bit Rate|Specification compliance|Length [Cc]able Assembly"
    r"|Media Interface (?:Code|Technology)|Module State|CMIS Rev(?:ision)?|Active Firmware)"
    r"[^:\n]{0,30}: ",
    re.MULTILINE,
)
"""Keys of SONiC's ``show interfaces transceiver eeprom`` (sonic-utilities ``sfputil`` and
``sfpshow``: ``Vendor Name: AVAGO``, the key followed directly by its colon), indented under
the port's ``SFP EEPROM detected`` line: a window or a grep that lost that line."""


def _detect(text: str) -> float:
    if "SFP EEPROM detected" in text or "ChannelMonitorValues" in text:
        return 0.95
    if "ModuleMonitorValues:" in text or "ChannelThresholdValues:" in text:
        return 0.9  # a window of SONiC's DOM view below its channel monitor values
    has_id = "Identifier" in text
    if has_id and (
        "Vendor name" in text
        or "Vendor Name" in text
        or "Rcvr signal" in text
        or "Transceiver type" in text
    ):
        return 0.9
    if "Rcvr signal avg optical power" in text or "Receiver signal average optical power" in text:
        return 0.9
    if "Rx loss of signal" in text and ("loss of lock" in text or "Module State" in text):
        return 0.9
    if "Rx loss of lock" in text and "Module State" in text:
        return 0.85  # the tail of a CMIS module's flags (ethtool -m after kernel 6.x)
    if "Transmit avg optical power" in text or "Laser output power" in text:
        return 0.8
    if ("  : " in text or "\t: " in text) and len(
        {m.group(1) for m in _EXCERPT_KEY_RE.finditer(text)}
    ) >= 3:
        return 0.8  # an excerpt: three different keys in ethtool -m's padded layout
    if "Vendor " in text and len(
        {m.group(1) for m in _SONIC_EXCERPT_KEY_RE.finditer(text[:200_000])}
    ) >= 3:
        return 0.75  # an excerpt of SONiC's eeprom view: three of its identity keys
    if ("Presence" in text or "Low-power" in text) and _PRESENCE_HDR_RE.search(
        text[:4096].replace("\r", "")
    ) is not None:
        return 0.6
    return 0.0


@register(
    "ethtool-module",
    summary="ethtool -m IFACE / SONiC show interfaces transceiver eeprom --dom",
    detect=_detect,
    refs=("S16", "S20", "S22"),
)
def parse_ethtool_module(text: str) -> ParseResult:
    """Parse module EEPROM/DOM dumps into :class:`TransceiverModule` records."""
    result = ParseResult("ethtool-module")
    mod: TransceiverModule | None = None
    sonic_section = ""
    section_indent = -1
    pending_iface: str | None = None
    presence_col: str | None = None
    lines = text.split("\n")

    def close(end: int) -> None:
        nonlocal mod
        if mod is not None:
            for attr in ("rx_los", "tx_los", "rx_lol", "tx_lol", "tx_fault"):
                if mod.flags.get(attr) is False:  # "None" printed: no lane flagged
                    for ln in mod.lanes:
                        if getattr(ln, attr) is None:
                            setattr(ln, attr, False)
            mod.end_line = max(mod.line, end)
            result.records.append(mod)
            mod = None

    last_content = 0
    prev_key: str | None = None  # key of the previous line when it was a key/value line
    prev_indent = 0
    for no, raw_line in enumerate(lines, 1):
        line = raw_line.rstrip()
        stripped = line.strip()
        if not stripped:
            prev_key = None
            sonic_section = ""
            if presence_col is not None:
                presence_col = None
            continue
        if "ethtool" in line:
            cm = _ETHTOOL_CMD_RE.search(line)
            if cm is not None:
                close(last_content)
                pending_iface = cm.group("iface")
                continue
        if stripped == "..." or _PROMPT_RE.match(line):
            continue
        # SONiC presence / lpmode tables
        hm = _PRESENCE_HDR_RE.match(line)
        if hm is not None:
            close(last_content)
            presence_col = hm.group("col")
            continue
        if presence_col is not None:
            if stripped.startswith("---"):
                continue
            parts = stripped.split(None, 1)
            if len(parts) == 2:
                status = parts[1].strip()
                rec = TransceiverPresence(line=no, interface=parts[0], status=status)
                if presence_col == "Presence":
                    rec.present = status.lower() == "present"
                else:
                    rec.lpmode = _bool(status)
                result.records.append(rec)
            else:
                result.warn(no, "expected 'PORT STATUS' in a transceiver presence table", line)
            continue
        sm = _SONIC_HDR_RE.match(stripped)
        if sm is not None:
            close(last_content)
            mod = TransceiverModule(line=no, interface=sm.group("iface"), source="sonic")
            mod.present = sm.group("state") == "detected"
            sonic_section = ""
            last_content = no
            continue
        kv = _KV_RE.match(line)
        if kv is None:
            if mod is not None and prev_key is not None and _is_wrap(line, prev_indent):
                # a mail/terminal-wrapped value ("41.59 degrees C /" + "106.87 degrees F")
                _keep_raw(mod, prev_key, stripped, joiner=" ")
                prev_key = None
                continue
            if mod is not None:
                result.warn(no, "expected a 'key : value' line of a module dump", line)
            prev_key = None
            continue
        key = kv.group("key")
        val = (kv.group("val") or "").strip()
        if "@" in key or key.lstrip().startswith(("#", "$")):
            continue
        indent = len(kv.group("indent").expandtabs(8))
        prev_key, prev_indent = key, indent
        if mod is None or (
            mod.source == "ethtool" and _norm_key(key) == "identifier" and mod.identifier
        ):
            close(last_content)
            if mod is None:
                mod = TransceiverModule(line=no, interface=pending_iface)
                pending_iface = None
        last_content = no
        _keep_raw(mod, key, val)
        try:
            if mod.source == "sonic":
                if not val:
                    sonic_section = _norm_key(key)
                    section_indent = indent
                    continue
                if sonic_section and indent <= section_indent:
                    sonic_section = ""
                _apply_sonic(mod, sonic_section, key, val)
            else:
                _apply_ethtool(mod, key, val)
        except ValueError:
            result.warn(no, f"could not read the value of {key.strip()!r}", line)
    close(last_content)
    return result
