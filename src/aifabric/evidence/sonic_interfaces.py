"""SONiC ``show interfaces status`` (``intfutil -c status``) → :class:`SonicInterfaceStatus`, one
record per port row: lanes, speed, MTU, FEC, alias, VLAN mode, operational and administrative
state, module type and asymmetric PFC.

The table is printed by sonic-utilities ``scripts/intfutil`` with ``tabulate`` (``simple``
format, cells right-aligned): a header row, a row of dash groups (one per column, as wide as the
column) and one row per port. The columns vary with the release: ``Interface Lanes Speed MTU
Alias Oper Admin Type`` (2018 images), ``... Alias Vlan Oper Admin Type Asym PFC`` (2019), ``...
MTU FEC Alias Vlan ...`` (2020 onwards); columns are found by their header names, and cells are
cut at the dash groups (a cell like ``QSFP28 or later`` holds spaces), or, when a paste lost
the alignment, split at runs of two or more blanks when that gives one cell per column.
``N/A`` stays text; ``Speed`` ``100G`` / ``400G`` / ``10M`` is read in Gb/s. Prompts, ``show``
command lines and ``For namespace asic0:`` banners between tables are skipped.

Sources: sonic-utilities ``scripts/intfutil`` and the Command Reference, "show interfaces
status" (https://github.com/sonic-net/sonic-utilities/blob/master/doc/Command-Reference.md);
the captures under ``tests/fixtures/evidence/sonic-interfaces-status/``.

Seed refs: S11 (switch-port MTU 9216 class on a lossless fabric), S16/S20 (port state).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["SonicInterfaceStatus", "parse_sonic_interfaces_status"]


@dataclass(slots=True, kw_only=True)
class SonicInterfaceStatus(Record):
    """One port row of ``show interfaces status``."""

    record_type: ClassVar[str] = "sonic_interface_status"

    interface: str
    lanes: str | None = None
    speed_gbps: float | None = None
    mtu_bytes: int | None = None
    fec: str | None = None
    alias: str | None = None
    vlan: str | None = None
    """``routed``, ``trunk``, ``PortChannel0001`` (a LAG member)..."""
    oper: str | None = None
    """``up`` / ``down`` (lower-cased as printed)."""
    admin: str | None = None
    port_type: str | None = None
    """The module type column: ``QSFP28 or later``, ``OSFP 8X Pluggable Transceiver``, ``N/A``."""
    asym_pfc: str | None = None

    @property
    def admin_up(self) -> bool:
        return self.admin == "up"

    @property
    def oper_up(self) -> bool:
        return self.oper == "up"


_HEADER_RE = re.compile(r"^\s*Interface\s+Lanes\s+Speed\s+MTU\b.*\bOper\s+Admin\b")
_DASH_RE = re.compile(r"^\s*-{3,}(?:\s+-+)+\s*$")
_SPEED_RE = re.compile(r"^(\d+(?:\.\d+)?)([MGT])$")
_SPEED_SCALE = {"M": 1e-3, "G": 1.0, "T": 1e3}
_FIELDS = {
    "Interface": "interface", "Lanes": "lanes", "Speed": "speed", "MTU": "mtu", "FEC": "fec",
    "Alias": "alias", "Vlan": "vlan", "Oper": "oper", "Admin": "admin", "Type": "port_type",
    "Asym PFC": "asym_pfc",
}  # fmt: skip
_MULTI_BLANK_RE = re.compile(r"\s{2,}")


def _detect(text: str) -> float:
    if "Ethernet" not in text:
        return 0.0
    if "Lanes" in text and _DETECT_RE.search(text):
        return 0.95
    return 0.6 if _ROW_RE.search(text) else 0.0


_ROW_RE = re.compile(
    r"(?m)^[ \t]*+Ethernet\d+[ \t]++\d++(?:,\d++)*+[ \t]++\d++[MGT][ \t]++\d++[ \t]"
)
"""A port row without its header (``Ethernet8  8,9,10,11  200G  9100  N/A  etp2 ...``)."""
_MODERN = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type",
           "Asym PFC"]  # fmt: skip
_FEC_VALUES = frozenset({"rs", "fc", "none", "N/A", "auto"})


_DETECT_RE = re.compile(r"(?m)^\s*Interface\s+Lanes\s+Speed\s+MTU\s")


def _header_names(line: str) -> list[str]:
    """``Interface  Lanes  Speed  MTU ... Type  Asym PFC`` → column names (``Asym PFC`` is one)."""
    names = _MULTI_BLANK_RE.split(line.strip())
    if len(names) == 1 or any(" " in n and n != "Asym PFC" for n in names):
        names = line.split()
        if names[-2:] == ["Asym", "PFC"]:
            names = [*names[:-2], "Asym PFC"]
    return names


def _speed(cell: str) -> float | None:
    m = _SPEED_RE.match(cell)
    return float(m.group(1)) * _SPEED_SCALE[m.group(2)] if m else None


def _record(names: list[str], cells: list[str], lineno: int) -> SonicInterfaceStatus:
    values = {_FIELDS.get(n, n): c for n, c in zip(names, cells, strict=False)}
    mtu = values.get("mtu", "")
    return SonicInterfaceStatus(
        line=lineno,
        interface=values["interface"],
        lanes=values.get("lanes") or None,
        speed_gbps=_speed(values.get("speed", "")),
        mtu_bytes=int(mtu) if mtu.isdecimal() else None,
        fec=values.get("fec") or None,
        alias=values.get("alias") or None,
        vlan=values.get("vlan") or None,
        oper=(values.get("oper") or "").lower() or None,
        admin=(values.get("admin") or "").lower() or None,
        port_type=values.get("port_type") or None,
        asym_pfc=values.get("asym_pfc") or None,
    )


def _cut(line: str, starts: list[int]) -> list[str]:
    return [
        line[s : starts[i + 1] if i + 1 < len(starts) else len(line)].strip()
        for i, s in enumerate(starts)
    ]


@register(
    "sonic-interfaces-status",
    summary="SONiC show interfaces status (port speed, MTU, FEC, oper/admin state)",
    detect=_detect,
    refs=("S11", "S16", "S20"),
)
def parse_sonic_interfaces_status(text: str) -> ParseResult:
    """``show interfaces status`` → :class:`SonicInterfaceStatus` records; never raises."""
    result = ParseResult(kind="sonic-interfaces-status")
    names: list[str] | None = None
    starts: list[int] | None = None
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r").rstrip()
        if not line.strip():
            continue
        if _HEADER_RE.match(line):
            names, starts = _header_names(line), None
            continue
        if names is None:
            if not _ROW_RE.match(line):
                continue
            # a row pasted without its header: the 2020+ column order (FEC fifth), or the older
            # one without FEC when the fifth cell is no FEC mode
            cells = _MULTI_BLANK_RE.split(line.strip())
            guess = _MODERN if len(cells) > 4 and cells[4] in _FEC_VALUES else [
                n for n in _MODERN if n != "FEC"
            ]
            result.records.append(_record(guess, cells, lineno))
            continue
        if starts is None and _DASH_RE.match(line):
            spans = [m.start() for m in re.finditer(r"-+", line)]
            starts = spans if len(spans) == len(names) else None
            continue
        cells = _cut(line, starts) if starts is not None else []
        if not cells or not cells[0] or " " in cells[0]:
            cells = _MULTI_BLANK_RE.split(line.strip())
        first = cells[0] if cells else ""
        if len(cells) < len(names) - 1 or not re.match(r"^[A-Za-z][\w./-]*\d$", first):
            if re.match(r"^\s*(?:Ethernet|Eth|PortChannel)\S*\d\s", line):
                result.warn(lineno, f"expected {len(names)} columns in a port row", line)
            else:
                names = None  # the table ended: a prompt, a banner or another tool's output
            continue
        result.records.append(_record(names, cells, lineno))
    return result
