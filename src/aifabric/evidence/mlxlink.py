"""NVIDIA/Mellanox ``mlxlink`` (MFT / mstflint): the physical-layer view of one NIC or switch
port, as the firmware sees it.

``mlxlink -d <dev> [-p <port>]`` prints titled sections, each title underlined by as many dashes
as it has characters, then one ``Key<padding>: value`` line per field (the key is padded to a
fixed column, 32 characters in older releases and 35 in current ones; ``N/A`` is printed for a
field the device cannot read). The options add sections:

* always: ``Operational Info`` (``State``, ``Physical state``, ``Speed``, ``Width``, ``FEC``,
  ``Loopback Mode``, ``Auto Negotiation``), ``Supported Info`` (``Enabled Link Speed`` and
  ``Supported Cable Speed``, each ``0x<mask> (<speed,speed,...>)``, with ``(Ext.)`` on Ethernet
  ports using the extended speed register), ``Troubleshooting Info`` (``Status Opcode``, ``Group
  Opcode``, ``Recommendation``: the firmware's own diagnosis of the port) and ``Tool Information``;
* ``-m`` / ``--show_module``: ``Module Info`` (``Temperature [C]``, ``Voltage [mV]``, ``Bias
  Current [mA]``, ``Rx Power Current [dBm]``, ``Tx Power Current [dBm]`` as ``v1,v2,...
  [low..high]`` with the module's alarm thresholds; identifier, compliance, cable type, vendor,
  wavelength, length; CMIS module state and per-lane fault flags);
* ``-c`` / ``--show_counters``: ``Physical Counters and BER Info`` (``Time Since Last Clear
  [Min]``, ``Effective Physical Errors``, ``Effective Physical BER``, ``Raw Physical Errors Per
  Lane``, ``Raw Physical BER``, ``Link Down Counter``, ``Link Error Recovery Counter``; on
  InfiniBand also ``Symbol Errors``/``Symbol BER``). A BER is printed ``<coef>E-<magnitude>``;
  ``15E-255`` is what mlxlink prints when no error was counted;
* ``-e`` / ``--show_eye``: ``EYE Opening Info`` (per-lane grades), kept as raw values.

``State`` is the port's PHY manager state (``Active`` when the link is up; ``Polling``,
``Disable``, ``Training``...). ``Physical state`` is the auto-negotiation sub-state: on InfiniBand
``LinkUp`` when up, on Ethernet the AN state machine (``ETH_AN_FSM_ENABLE`` is printed for
ports that are Active), ``N/A`` on NVLink. Only ``State`` therefore says whether the link is up.

Records, one set per report (a report starts at an ``mlxlink`` command line or at an
``Operational Info`` section after one was already seen): :class:`MlxlinkLink` (operational,
supported and tool info), :class:`MlxlinkTroubleshooting`, :class:`MlxlinkModule`,
:class:`MlxlinkBer`, :class:`MlxlinkEye`. Error and note lines (``-E- ...``, ``-W- ...``,
``Warning: ...``) are kept in ``MlxlinkLink.messages``. Sections other than these are kept in
``MlxlinkLink.other_sections`` by title.

Sources: mstflint ``mlxlink/modules/mlxlink_commander.cpp`` (sections and field names),
``printutil/mlxlink_record.cpp`` (layout), ``mlxlink_maps.cpp`` (state names) and the PRM
``monitor_opcode`` description in ``tools_layouts/adb/prm/hca/ext/register_access_table.adb``
(https://github.com/Mellanox/mstflint); the MFT user manual "mlxlink Utility"
(https://docs.nvidia.com/networking/display/mftv4320/mlxlink+Utility); the real captures under
``tests/fixtures/evidence/mlxlink/``. Seed refs: S16 (optics), S20 (dark or flapping links).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record, remap_lines
from aifabric.evidence.registry import register
from aifabric.inputs import close_truncated_json, loads_json

__all__ = [
    "OPCODE_FAMILIES",
    "MlxlinkBer",
    "MlxlinkEye",
    "MlxlinkLink",
    "MlxlinkModule",
    "MlxlinkTroubleshooting",
    "opcode_family",
    "parse_ber",
    "parse_mlxlink",
    "speed_value",
]


@dataclass(slots=True, kw_only=True)
class _Port(Record):
    """Fields every mlxlink record carries to name its port."""

    device: str | None = None
    """The ``-d`` argument of the command line when the capture shows it."""
    port: str | None = None
    """The ``-p`` argument (``1``, ``0x2``), when given."""


@dataclass(slots=True, kw_only=True)
class MlxlinkLink(_Port):
    """``Operational Info`` + ``Supported Info`` + ``Tool Information`` of one report."""

    record_type: ClassVar[str] = "mlxlink_link"

    state: str | None = None
    """PHY manager state: ``Active`` when the link is up."""
    physical_state: str | None = None
    speed: str | None = None
    """As printed: ``100G``, ``25GbE``, ``IB-HDR``, ``NVLink-XDR``."""
    width: int | None = None
    """Active lanes (``4x`` → 4)."""
    fec: str | None = None
    loopback: str | None = None
    auto_negotiation: str | None = None
    enabled_speeds: list[str] = field(default_factory=list)
    """Speeds enabled on the port (``Enabled Link Speed``)."""
    enabled_mask: str | None = None
    cable_speeds: list[str] | None = None
    """Speeds the cable supports; None when printed ``N/A`` (backplane, NVLink) or absent."""
    cable_mask: str | None = None
    firmware_version: str | None = None
    mft_version: str | None = None
    amber_version: str | None = None
    messages: list[str] = field(default_factory=list)
    """``-E-``/``-W-``/``Warning:`` lines printed with the report."""
    other_sections: dict[str, dict[str, str]] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    """Every ``key: value`` of the operational, supported and tool sections, verbatim."""

    @property
    def is_up(self) -> bool | None:
        return None if self.state is None else self.state.lower() == "active"


@dataclass(slots=True, kw_only=True)
class MlxlinkTroubleshooting(_Port):
    """``Troubleshooting Info``: the firmware's diagnosis (PDDR monitor opcode)."""

    record_type: ClassVar[str] = "mlxlink_troubleshooting"

    status_opcode: int | None = None
    group_opcode: str | None = None
    """``N/A`` for opcodes 0 and 1023, else ``PHY FW`` (< 1023), ``MNG FW`` (1024-2047),
    ``CORE/DRIVER``."""
    recommendation: str | None = None
    family: str | None = None
    """Opcode family from the PRM table (:data:`OPCODE_FAMILIES`), e.g. ``bad signal integrity``."""
    state: str | None = None
    """The report's ``State`` (copied from ``Operational Info``)."""


@dataclass(slots=True, kw_only=True)
class MlxlinkModule(_Port):
    """``Module Info`` (``mlxlink -m``)."""

    record_type: ClassVar[str] = "mlxlink_module"

    identifier: str | None = None
    compliance: str | None = None
    cable_technology: str | None = None
    cable_type: str | None = None
    vendor_name: str | None = None
    vendor_pn: str | None = None
    vendor_sn: str | None = None
    wavelength_nm: int | None = None
    length_m: float | None = None
    """``Transfer Distance [m]``."""
    ddm: bool | None = None
    """``Digital Diagnostic Monitoring`` Yes/No."""
    temperature_c: float | None = None
    temperature_low_c: float | None = None
    temperature_high_c: float | None = None
    voltage_mv: float | None = None
    voltage_low_mv: float | None = None
    voltage_high_mv: float | None = None
    bias_ma: list[float] = field(default_factory=list)
    bias_low_ma: float | None = None
    bias_high_ma: float | None = None
    rx_power_dbm: list[float] = field(default_factory=list)
    rx_power_low_dbm: float | None = None
    """The module's low *alarm* threshold for received power (PRM ``rx_power_low_th``)."""
    rx_power_high_dbm: float | None = None
    tx_power_dbm: list[float] = field(default_factory=list)
    tx_power_low_dbm: float | None = None
    tx_power_high_dbm: float | None = None
    module_state: str | None = None
    datapath_state: list[str] = field(default_factory=list)
    tx_fault: list[int] = field(default_factory=list)
    rx_los: list[int] = field(default_factory=list)
    tx_los: list[int] = field(default_factory=list)
    rx_cdr_lol: list[int] = field(default_factory=list)
    tx_cdr_lol: list[int] = field(default_factory=list)
    module_fw_fault: int | None = None
    datapath_fw_fault: int | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def passive_copper(self) -> bool:
        text = f"{self.cable_type or ''} {self.cable_technology or ''}".lower()
        return "copper" in text and "passive" in text

    @property
    def thresholds_valid(self) -> bool:
        """False when mlxlink printed ``[0..0]`` (no DDM thresholds)."""
        return not (self.rx_power_low_dbm in (None, 0.0) and self.rx_power_high_dbm in (None, 0.0))


@dataclass(slots=True, kw_only=True)
class MlxlinkBer(_Port):
    """``Physical Counters and BER Info`` (``mlxlink -c``)."""

    record_type: ClassVar[str] = "mlxlink_ber"

    time_since_clear_min: float | None = None
    symbol_errors: int | None = None
    symbol_ber: float | None = None
    effective_errors: int | None = None
    """Errors left after FEC (post-FEC)."""
    effective_ber: float | None = None
    raw_errors_per_lane: list[int] = field(default_factory=list)
    raw_ber: float | None = None
    """Pre-FEC BER."""
    raw_ber_per_lane: list[float] = field(default_factory=list)
    link_down_count: int | None = None
    link_error_recovery_count: int | None = None
    fec: str | None = None
    """The report's ``FEC`` (copied from ``Operational Info``)."""
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class MlxlinkEye(_Port):
    """``EYE Opening Info`` (``mlxlink -e``): per-lane values as printed."""

    record_type: ClassVar[str] = "mlxlink_eye"

    values: dict[str, list[str]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# facts from the sources

OPCODE_FAMILIES: tuple[tuple[frozenset[int], str], ...] = (
    (frozenset({0}), "no issue"),
    (frozenset({1}), "port closed by command"),
    (frozenset({2, 3, 4, 38, 39, 60, 69}), "auto-negotiation failure"),
    (frozenset({5, 6, 7, 8, 62, 63, 64, 65, 66}), "link training failure"),
    (frozenset({9, 10, 11, 12, 13}), "logical mismatch between link partners"),
    (frozenset({14}), "remote fault received"),
    (frozenset({15, 42, 17, 48, 49, 52}), "bad signal integrity"),
    (frozenset({16, *range(24, 33)}), "cable compliance code mismatch"),
    (frozenset({18, 19, 22, 23, 50, 55}), "internal error"),
    (frozenset({34, 35}), "speed degradation"),
    (frozenset({56}), "module lanes frequency not synced"),
    (frozenset({57}), "signal not detected"),
    (frozenset({68}), "data collection timeout"),
    (frozenset({70}), "link not healthy, BER does not meet criteria"),
    (frozenset({128}), "troubleshooting in process"),
    (frozenset({1023}), "info not available"),
    (frozenset({1024}), "cable is unplugged"),
    (frozenset({1025}), "long range for non-NVIDIA cable or module"),
    (frozenset({1026}), "bus stuck (I2C data or clock shorted)"),
    (frozenset({1027}), "bad or unsupported EEPROM"),
    (frozenset({1028}), "part number list"),
    (frozenset({1029}), "unsupported cable"),
    (frozenset({1030}), "module temperature shutdown"),
    (frozenset({1031}), "shorted cable"),
    (frozenset({1032}), "power budget exceeded"),
    (frozenset({1033}), "management forced the port down"),
    (frozenset({1034}), "module disabled by command"),
    (frozenset({1035, 1040}), "system power exceeded, module powered off"),
    (frozenset({1036}), "module PMD type not enabled"),
    (frozenset({1042}), "module state machine fault"),
    (frozenset({1043, 1044, 1045, 1046}), "module stamping speed degeneration"),
    (frozenset({1047, 1048}), "module data path state machine fault"),
    (frozenset({1050, 1051, 1052, 1053}), "module boot error"),
    (frozenset({1054}), "module forced to low power by command"),
    (frozenset(range(1055, 1064)), "external laser source fault"),
)
"""``monitor_opcode`` families from the PRM register description shipped with mstflint
(``tools_layouts/adb/prm/hca/ext/register_access_table.adb``, field ``monitor_opcode``)."""


def opcode_family(opcode: int) -> str:
    """The PRM family of a Troubleshooting ``Status Opcode``."""
    for codes, name in OPCODE_FAMILIES:
        if opcode in codes:
            return name
    if opcode < 1023:
        return "PHY firmware indication"
    if opcode < 2048:
        return "management firmware indication"
    return "core/driver indication"


# Per-lane data rate (Gb/s) of the InfiniBand / NVLink speed names mlxlink prints.
_IB_LANE_GBPS = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
    "GDR": 400.0,
}
_ETH_SPEED_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([GT])(?:bE|b/s)?(?:_(\d+)X)?$", re.IGNORECASE)


def speed_value(token: str) -> tuple[str, float] | None:
    """A speed name → (family, value): ``("ib", per-lane Gb/s)`` for ``IB-HDR``/``HDR``/
    ``NVLink-XDR``, ``("eth", total Gb/s)`` for ``100G``/``25GbE``/``100G_4X``; None if unknown."""
    t = token.strip()
    for prefix in ("IB-", "NVLink-", "NVLINK-"):
        if t.startswith(prefix):
            t = t[len(prefix) :]
    up = t.upper()
    if up in _IB_LANE_GBPS:
        return ("ib", _IB_LANE_GBPS[up])
    m = _ETH_SPEED_RE.match(t)
    if m is None:
        return None
    value = float(m.group(1)) * (1000.0 if m.group(2).upper() == "T" else 1.0)
    return ("eth", value)


# --------------------------------------------------------------------------------------------
# line shapes

_KV_RE = re.compile(r"^(?P<key>[^:]*?\S)\s*:(?:\s(?P<val>.*))?$")
_DASHES_RE = re.compile(r"^-{3,}$")
_TITLE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 ()./_&-]*$")
_CMD_RE = re.compile(r"(?:^|[\s/])mlxlink\s")
_DEV_RE = re.compile(r"(?:^|\s)(?:-d|--device)[\s=]+(\S+)")
_PORT_RE = re.compile(r"(?:^|\s)(?:-p|--port)[\s=]+(\S+)")
_PROMPT_RE = re.compile(r"^(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")
_MSG_RE = re.compile(r"^(?:-[EWI]-|Warning:|Note:|Error:)")
_MASK_RE = re.compile(r"^(?P<mask>0x[0-9a-fA-F]+)\s*\((?P<list>[^)]*)\)\s*$")
# ``vals`` ends at its last non-blank before the final "[lo..hi]" (greedy: the bracket is the last
# "[" of the line either way), and the lookahead checks the bracket's contents once before the
# lo/hi split is tried (a lazy ``vals`` and the split each rescanned long runs: quadratic).
_RANGE_RE = re.compile(
    r"^(?P<vals>(?:.*\S)?)\s*\[(?=[-+0-9.eE]*\]\s*$)(?P<lo>[-+0-9.eE]+)\.\.(?P<hi>[-+0-9.eE]+)\]\s*$"
)
_BER_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)[Ee]([-+]?\d+)\s*$")

_KNOWN_TITLES = frozenset(
    {
        "Operational Info",
        "Supported Info",
        "Troubleshooting Info",
        "Tool Information",
        "Module Info",
        "Physical Counters and BER Info",
        "EYE Opening Info",
        "Port Info",
        "FEC Capability Info",
        "Test Mode Info",
        "Device Info",
        "BER Monitor Info",
        "External PHY Info",
        "PLR Info",
        "KR Info",
        "Rx Recovery Counters",
        "PEQ info",
    }
)
_LINK_SECTIONS = ("Operational Info", "Supported Info", "Tool Information", "Port Info")


def _detect(text: str) -> float:
    head = text[:200_000]
    if "Operational Info" in head and ("Troubleshooting Info" in head or "Physical state" in head):
        return 0.95
    if "Troubleshooting Info" in head and "Status Opcode" in head:
        return 0.95
    if "Physical Counters and BER Info" in head or "Effective Physical BER" in head:
        return 0.95
    if "Rx Power Current [dBm]" in head or "Bias Current [mA]" in head:
        return 0.9
    if '"Operational Info"' in head and '"result"' in head:
        return 0.95  # mlxlink --json
    return 0.0


def parse_ber(text: str) -> float | None:
    """``15E-255`` / ``2E-9`` / ``1.5E-12`` → float; anything else (``N/A``) → None."""
    m = _BER_RE.match(text)
    if m is None:
        return None
    return float(f"{m.group(1)}e{m.group(2)}")


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip()
    try:
        return int(t, 16) if t.lower().startswith("0x") else int(t)
    except ValueError:
        return None


def _num(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip())
    except ValueError:
        return None


def _nums(text: str) -> list[float]:
    out: list[float] = []
    for part in text.split(","):
        v = _num(part)
        if v is not None:
            out.append(v)
    return out


def _ints(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        v = _int(part)
        if v is not None:
            out.append(v)
    return out


def _ranged(value: str) -> tuple[str, float | None, float | None]:
    """``"-0.77,-0.58 [-10..5]"`` → (``"-0.77,-0.58"``, -10.0, 5.0)."""
    m = _RANGE_RE.match(value)
    if m is None:
        return value, None, None
    return m.group("vals"), _num(m.group("lo")), _num(m.group("hi"))


def _speeds(value: str) -> tuple[str | None, list[str] | None]:
    m = _MASK_RE.match(value.strip())
    if m is None:
        return None, None
    return m.group("mask"), [s.strip() for s in m.group("list").split(",") if s.strip()]


def _clean(value: str) -> str | None:
    v = value.strip()
    return None if v in ("", "N/A") else v


# --------------------------------------------------------------------------------------------
# parser


@dataclass(slots=True)
class _Section:
    title: str
    line: int
    end_line: int
    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Report:
    device: str | None
    port: str | None
    sections: list[_Section] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    first_line: int | None = None

    def titles(self) -> set[str]:
        return {s.title for s in self.sections}


def _is_title(lines: list[str], i: int) -> bool:
    """Line ``i`` is a section title: one of the titles mlxlink prints, or a line underlined by
    dashes of its own length (a section this parser does not model)."""
    title = lines[i].strip()
    if not title or ":" in title:
        return False
    if title in _KNOWN_TITLES or title.startswith("EYE Opening Info"):
        return True
    if _TITLE_RE.match(title) is None:
        return False
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return _DASHES_RE.match(nxt) is not None and len(nxt) == len(title)


def _emit(rep: _Report, res: ParseResult) -> None:
    by_title: dict[str, _Section] = {}
    for s in rep.sections:
        by_title.setdefault(s.title, s)
    link_secs = [by_title[t] for t in _LINK_SECTIONS if t in by_title]
    op = by_title.get("Operational Info")
    state = _clean(op.values.get("State", "")) if op is not None else None
    fec = _clean(op.values.get("FEC", "")) if op is not None else None
    if link_secs or rep.messages:
        first = min((s.line for s in link_secs), default=rep.first_line or 0)
        last = max((s.end_line for s in link_secs), default=first)
        link = MlxlinkLink(line=first, end_line=last if last > first else None)
        link.device, link.port, link.messages = rep.device, rep.port, list(rep.messages)
        for s in link_secs:
            link.fields.update(s.values)
        _fill_link(link)
        known = {"Troubleshooting Info", "Module Info", "Physical Counters and BER Info"}
        for s in rep.sections:
            if s.title not in _LINK_SECTIONS and s.title not in known and "EYE" not in s.title:
                link.other_sections.setdefault(s.title, dict(s.values))
        res.records.append(link)
    for s in rep.sections:
        rec: Record | None = None
        if s.title == "Troubleshooting Info":
            rec = _troubleshooting(s, state)
        elif s.title == "Module Info":
            rec = _module(s)
        elif s.title.startswith("Physical Counters and BER Info") and "PRBS" not in s.title:
            rec = _ber(s, fec)
        elif s.title.startswith("EYE Opening Info"):
            values = {k: [x.strip() for x in v.split(",")] for k, v in s.values.items()}
            rec = MlxlinkEye(line=s.line, values=values)
        if rec is not None:
            rec.end_line = s.end_line if s.end_line > s.line else None
            assert isinstance(rec, _Port)
            rec.device, rec.port = rep.device, rep.port
            res.records.append(rec)
    res.records.sort(key=lambda r: r.line)


def _fill_link(link: MlxlinkLink) -> None:
    f = link.fields
    link.state = _clean(f.get("State", ""))
    link.physical_state = _clean(f.get("Physical state", ""))
    link.speed = _clean(f.get("Speed", ""))
    width = _clean(f.get("Width", ""))
    if width is not None and width.lower().endswith("x"):
        link.width = _int(width[:-1])
    link.fec = _clean(f.get("FEC", ""))
    link.loopback = _clean(f.get("Loopback Mode", ""))
    link.auto_negotiation = _clean(f.get("Auto Negotiation", ""))
    for key, value in f.items():
        if key.startswith("Enabled Link Speed"):
            mask, speeds = _speeds(value)
            link.enabled_mask, link.enabled_speeds = mask, speeds or []
        elif key.startswith("Supported Cable Speed"):
            link.cable_mask, link.cable_speeds = _speeds(value)
    link.firmware_version = _clean(f.get("Firmware Version", ""))
    link.amber_version = _clean(f.get("amBER Version", ""))
    for key, value in f.items():
        if key.endswith("Version") and key.split()[0] in ("MFT", "MSTFLINT", "mstflint"):
            link.mft_version = _clean(value)


def _troubleshooting(s: _Section, state: str | None) -> MlxlinkTroubleshooting:
    v = s.values
    rec = MlxlinkTroubleshooting(line=s.line, state=state)
    rec.status_opcode = _int(v.get("Status Opcode"))
    rec.group_opcode = _clean(v.get("Group Opcode", ""))
    rec.recommendation = _clean(v.get("Recommendation", ""))
    if rec.status_opcode is not None:
        rec.family = opcode_family(rec.status_opcode)
    return rec


def _module(s: _Section) -> MlxlinkModule:
    v = s.values
    rec = MlxlinkModule(line=s.line, fields=dict(v))
    rec.identifier = _clean(v.get("Identifier", ""))
    rec.compliance = _clean(v.get("Compliance", ""))
    rec.cable_technology = _clean(v.get("Cable Technology", ""))
    rec.cable_type = _clean(v.get("Cable Type", ""))
    rec.vendor_name = _clean(v.get("Vendor Name", ""))
    rec.vendor_pn = _clean(v.get("Vendor Part Number", ""))
    rec.vendor_sn = _clean(v.get("Vendor Serial Number", ""))
    rec.wavelength_nm = _int(v.get("Wavelength [nm]"))
    rec.length_m = _num(v.get("Transfer Distance [m]"))
    ddm = _clean(v.get("Digital Diagnostic Monitoring", ""))
    rec.ddm = None if ddm is None else ddm.lower().startswith("y")
    vals, lo, hi = _ranged(v.get("Temperature [C]", ""))
    rec.temperature_c, rec.temperature_low_c, rec.temperature_high_c = _num(vals), lo, hi
    vals, lo, hi = _ranged(v.get("Voltage [mV]", ""))
    rec.voltage_mv, rec.voltage_low_mv, rec.voltage_high_mv = _num(vals), lo, hi
    vals, rec.bias_low_ma, rec.bias_high_ma = _ranged(v.get("Bias Current [mA]", ""))
    rec.bias_ma = _nums(vals)
    vals, rec.rx_power_low_dbm, rec.rx_power_high_dbm = _ranged(v.get("Rx Power Current [dBm]", ""))
    rec.rx_power_dbm = _nums(vals)
    vals, rec.tx_power_low_dbm, rec.tx_power_high_dbm = _ranged(v.get("Tx Power Current [dBm]", ""))
    rec.tx_power_dbm = _nums(vals)
    rec.module_state = _clean(v.get("Module State", ""))
    dps = _clean(v.get("DataPath state [per lane]", ""))
    rec.datapath_state = [x.strip() for x in dps.split(",")] if dps else []
    rec.tx_fault = _ints(v.get("Tx Fault [per lane]", ""))
    rec.rx_los = _ints(v.get("Rx LOS [per lane]", ""))
    rec.tx_los = _ints(v.get("Tx LOS [per lane]", ""))
    rec.rx_cdr_lol = _ints(v.get("Rx CDR LOL [per lane]", ""))
    rec.tx_cdr_lol = _ints(v.get("Tx CDR LOL [per lane]", ""))
    rec.module_fw_fault = _int(v.get("Module FW Fault"))
    rec.datapath_fw_fault = _int(v.get("DataPath FW Fault"))
    return rec


def _ber(s: _Section, fec: str | None) -> MlxlinkBer:
    v = s.values
    rec = MlxlinkBer(line=s.line, fec=fec, fields=dict(v))
    rec.time_since_clear_min = _num(v.get("Time Since Last Clear [Min]"))
    rec.symbol_errors = _int(v.get("Symbol Errors"))
    rec.symbol_ber = parse_ber(v.get("Symbol BER", ""))
    rec.effective_errors = _int(v.get("Effective Physical Errors"))
    rec.effective_ber = parse_ber(v.get("Effective Physical BER", ""))
    rec.raw_errors_per_lane = _ints(v.get("Raw Physical Errors Per Lane", ""))
    rec.raw_ber = parse_ber(v.get("Raw Physical BER", ""))
    per_lane = v.get("Raw Physical BER Per Lane", "")
    rec.raw_ber_per_lane = [b for b in (parse_ber(x) for x in per_lane.split(",")) if b is not None]
    rec.link_down_count = _int(v.get("Link Down Counter"))
    rec.link_error_recovery_count = _int(v.get("Link Error Recovery Counter"))
    return rec


def _json_value(value: Any) -> str:
    """A ``--json`` field value in the text report's form (``0x3f (IB-SDR,IB-DDR)`` for a
    mask with its list, ``a,b`` for a list)."""
    if isinstance(value, dict):
        mask, listed = value.get("mask"), value.get("values")
        if mask is not None:
            inner = ",".join(str(v) for v in listed) if isinstance(listed, list) else ""
            return f"{mask} ({inner})" if inner else str(mask)
        return ",".join(f"{k}={_json_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ",".join(_json_value(v) for v in value)
    return str(value)


def _from_json(text: str) -> tuple[str, list[int], bool] | None:
    """``mlxlink --json`` (``{"result": {"output": {"Operational Info": {"State": "Active",
    ...}}}}``) as the equivalent text report, the JSON line of each text line, and whether the
    JSON was cut short (closed after its last complete member); None when it is not such JSON."""
    start = text.find("{")
    if start < 0:
        return None
    body = text[start:]
    cut = False
    try:
        data: Any = loads_json(body)
    except ValueError:
        closed = close_truncated_json(body)
        if closed is None:
            return None
        try:
            data = loads_json(closed[0])
        except ValueError:
            return None
        cut = True
    output = data.get("result", {}).get("output") if isinstance(data, dict) else None
    if not isinstance(output, dict):
        return None
    offset = text.count("\n", 0, start)
    src = body.split("\n")
    out: list[str] = []
    where: list[int] = []
    pos = 0

    def line_of(key: str) -> int:
        nonlocal pos
        needle = f'"{key}"'
        for i in range(pos, len(src)):
            if needle in src[i]:
                pos = i
                return offset + i + 1
        return offset + pos + 1

    command = text[:start].strip().splitlines()[-1:] if start else []
    if command:
        out.append(command[0].lstrip("#").strip())
        where.append(offset)
    for title, fields in output.items():
        if not isinstance(fields, dict):
            continue
        out += [title, "-" * len(title)]
        at = line_of(title)
        where += [at, at]
        for key, value in fields.items():
            out.append(f"{key} : {_json_value(value)}")
            where.append(line_of(key))
    return "\n".join(out), where, cut


@register(
    "mlxlink",
    summary="mlxlink -d DEV [-p PORT] [-m] [-c] [-e] (NVIDIA MFT / mstflint)",
    detect=_detect,
    refs=("S16", "S20"),
)
def parse_mlxlink(text: str) -> ParseResult:
    """``mlxlink`` reports (text or ``--json``) → link, troubleshooting, module, BER and eye
    records per report."""
    if '"output"' in text[:4096] and '"result"' in text[:4096]:
        converted = _from_json(text)
        if converted is not None:
            synthetic, where, cut = converted
            res = _parse_text_report(synthetic)
            remap_lines(res, where)
            if cut:
                res.warn(None, "JSON cut short: read up to the last complete member")
            return res
    return _parse_text_report(text)


def _parse_text_report(text: str) -> ParseResult:
    res = ParseResult("mlxlink")
    lines = text.splitlines()
    rep: _Report | None = None
    sec: _Section | None = None
    pending_dev: str | None = None
    pending_port: str | None = None
    have_cmd = False

    def new_report(device: str | None, port: str | None, lineno: int) -> _Report:
        nonlocal rep
        if rep is not None:
            _emit(rep, res)
        rep = _Report(device, port, first_line=lineno)
        return rep

    for idx, raw in enumerate(lines):
        lineno = idx + 1
        stripped = raw.strip()
        if not stripped:
            continue
        if _DASHES_RE.match(stripped) is not None:
            continue  # a title's underline
        if _is_title(lines, idx):
            title = stripped
            if rep is None or (title == "Operational Info" and title in rep.titles()):
                rep = new_report(pending_dev if have_cmd else None, pending_port, lineno)
                have_cmd = False
            sec = _Section(title, lineno, lineno + 1)
            rep.sections.append(sec)
            continue
        if _CMD_RE.search(stripped) is not None and (
            _PROMPT_RE.match(stripped) is not None
            or stripped.startswith(("mlxlink", "sudo", "/"))
            or _DEV_RE.search(stripped) is not None
        ):
            dm, pm = _DEV_RE.search(stripped), _PORT_RE.search(stripped)
            pending_dev = dm.group(1) if dm is not None else None
            pending_port = pm.group(1) if pm is not None else None
            if rep is not None:
                _emit(rep, res)
                rep = None
            have_cmd, sec = True, None
            continue
        if _MSG_RE.match(stripped) is not None:
            if rep is None:
                rep = new_report(pending_dev if have_cmd else None, pending_port, lineno)
                have_cmd = False
            rep.messages.append(stripped)
            continue
        if _PROMPT_RE.match(stripped) is not None:
            sec = None
            continue
        kv = _KV_RE.match(stripped)
        if kv is not None and sec is not None:
            key, value = kv.group("key"), (kv.group("val") or "").strip()
            sec.values.setdefault(key, value)
            sec.lines.setdefault(key, lineno)
            sec.end_line = lineno
            continue
        res.warn(lineno, "expected an mlxlink section title or 'Key : value' line", raw)
    if rep is not None:
        _emit(rep, res)
    if not res.records and text.strip():
        res.warn(None, "no mlxlink section found (Operational Info, Module Info, ...)")
    return res
