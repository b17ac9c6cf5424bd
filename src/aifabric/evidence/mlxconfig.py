"""NVIDIA/Mellanox ``mlxconfig`` (MFT) and ``mstconfig`` (mstflint): the firmware's non-volatile
configuration of a ConnectX/BlueField adapter, per device.

``mlxconfig -d <dev> query`` (``q``), ``-e q`` (extended: with the default and current values) and
``set NAME=VALUE ...`` print, for every device (mstflint ``mlxconfig/mlxcfg_ui.cpp``,
``printOpening``, ``printConfHeader`` and ``printSingleParam``, v4.14 to v4.36):

* ``Device #N:`` and a dashed rule, then ``Device type:``, ``Name:`` (the part number, ``_Ax``
  suffixed), ``Description:`` and ``Device:`` (the mst device or the PCI address), each label
  padded to 16 (before v4.30) or 20 columns;
* ``Configurations:`` followed by the column titles: ``Next Boot`` alone for a plain query,
  ``Default``/``Current``/``Next Boot`` for ``-e q`` (whichever the firmware can read), and a
  last ``New`` column for ``set``;
* one row per parameter: a ``*`` in the first column when the next-boot value differs from the
  default or current value shown (a change not yet in effect, or a non-default setting), ``RO``
  for a read-only parameter (v4.30+), the parameter name (``LINK_TYPE_P1``, ``SRIOV_EN``,
  ``ROCE_CC_PRIO_MASK_P1``) and one value per column. A value is an enum name with its number
  (``ETH(2)``, ``True(1)``, ``DEVICE_DEFAULT(0)``), a number (``255``, ``0xff``), ``N/A`` or
  ``Array[0..7]`` (an array shown collapsed);
* ``-E-``, ``-W-`` and ``-I-`` message lines (``-I- Please reboot machine to load new
  configurations.`` after a successful ``set``; ``Apply new Configuration? (y/n) [n] : y`` and
  ``Applying... Done!`` between).

Records: :class:`NvConfigDevice` (one per ``Device #N`` block), :class:`NvConfigParam` (one per
row, with the values of each column and the device it belongs to) and :class:`MftMessage` (the
``-E-``/``-W-``/``-I-`` lines). A row that is cut short (a paste trimmed at the column edge) is
kept with the values it has; a line that is neither is skipped with a warning only inside the
table (prose around the paste is not this tool's). The value helpers read ``ETH(2)`` as 2,
``True(1)`` as 1, ``0xff`` as 255, and ``N/A``/``Array[...]`` as unknown.

Detection: the ``Configurations:`` header with a ``Device type:`` line, or a ``mlxconfig`` /
``mstconfig`` command line with parameter rows, scores 0.95; parameter rows alone (two or more,
most of the lines, with at least one name mlxconfig is known to print) score 0.6.

Sources: https://github.com/Mellanox/mstflint (``mlxconfig/mlxcfg_ui.cpp``, tags v4.14.0-1,
v4.24.0-1, v4.30.0-1, v4.36.0-1); the MFT user manual, "mlxconfig - Changing Device
Configuration Tool" (https://docs.nvidia.com/networking/display/mftv4320/mlxconfig+-+changing+
device+configuration+tool); the real captures under ``tests/fixtures/evidence/mlxconfig/``.
Seed refs: S13 and S14 (the NIC's RoCE congestion control and CNP priority), S15 (link type).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["MftMessage", "NvConfigDevice", "NvConfigParam", "nv_value", "parse_mlxconfig"]


@dataclass(slots=True, kw_only=True)
class NvConfigDevice(Record):
    """One ``Device #N:`` block: what the adapter is."""

    record_type: ClassVar[str] = "nvconfig_device"

    index: int | None = None
    device_type: str | None = None
    """``ConnectX6DX``, ``BlueField3``..."""
    part: str | None = None
    """The ``Name:`` line: the part number (``MCX623106AN-CDA_Ax``)."""
    description: str | None = None
    device: str | None = None
    """The ``Device:`` line: ``/dev/mst/mt4125_pciconf0`` or a PCI address."""


@dataclass(slots=True, kw_only=True)
class NvConfigParam(Record):
    """One parameter row, with the value of every column the query printed."""

    record_type: ClassVar[str] = "nvconfig_param"

    name: str
    next_boot: str | None = None
    """The value the firmware loads at the next boot or firmware reset (what ``set`` wrote)."""
    current: str | None = None
    """The value in effect now (``-e`` queries only)."""
    default: str | None = None
    """The factory default (``-e`` queries only)."""
    new: str | None = None
    """The value a ``set`` asks for (``New`` column)."""
    modified: bool = False
    """The row starts with ``*``: next boot differs from the default or current value shown."""
    read_only: bool = False
    device: str | None = None
    """The ``Device:`` of the block the row belongs to."""
    values: list[str] = field(default_factory=list)
    """Every value of the row, in column order, as printed."""
    columns: list[str] = field(default_factory=list)
    """The column titles the row was read with, in order (empty when they cannot be told)."""

    @property
    def pending(self) -> bool:
        """A change written to the firmware but not yet in effect: next boot ≠ current."""
        return (
            self.current is not None
            and self.next_boot is not None
            and self.current != self.next_boot
        )


@dataclass(slots=True, kw_only=True)
class MftMessage(Record):
    """An MFT tool's ``-E-`` (error), ``-W-`` (warning) or ``-I-`` (information) line."""

    record_type: ClassVar[str] = "mft_message"

    level: str
    """``error``, ``warning`` or ``info``."""
    text: str


_VALUE_RE = re.compile(r"^(?:[A-Za-z_][\w\-.]*)?\((-?\d+)\)$|^(-?\d+)$|^(0x[0-9a-fA-F]+)$")
"""``ETH(2)`` / ``True(1)`` → the number in parentheses; ``255``; ``0xff``."""


def nv_value(raw: str | None) -> int | None:
    """The number of an mlxconfig value: ``ETH(2)`` → 2, ``0xff`` → 255, ``N/A`` → None."""
    if raw is None:
        return None
    m = _VALUE_RE.match(raw.strip())
    if m is None:
        return None
    if m.group(3):
        return int(m.group(3), 16)
    return int(m.group(1) or m.group(2))


_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_DEVICE_RE = re.compile(r"^Device #(\d+):\s*$")
_FIELD_RE = re.compile(r"^(Device type|Name|Description|Device):[ \t]*+(.*)$")
"""Matched against a stripped line: the value has no blank at either end."""
_HEADER_RE = re.compile(r"^Configurations:(?P<cols>.*)$")
_COLUMN_NAMES = ("Default", "Current", "Next Boot", "New")
_ROW_RE = re.compile(
    r"^(?P<star>\*)?[ \t]*(?:(?P<ro>RO)[ \t]+)?(?P<name>[A-Z][A-Za-z0-9_]*(?:\[\d+\])?)"
    r"(?P<vals>(?:[ \t]+\S+)*)[ \t]*$"
)
"""``*RO     NAME   v1  v2  v3``: mark, read-only flag, name, then the values (no blanks inside
a value). Rows are indented as printed, but a paste whose every line shares the indent reaches
the parser dedented, so a row is told from prose by its values (:func:`_row_values`)."""
_MESSAGE_RE = re.compile(r"^-(?P<level>[EWI])- ?(?P<text>.*)$")
_COMMAND_RE = re.compile(r"\b(?:mlxconfig|mstconfig)(?:\.exe)?\b")
_VALUE_TOKEN_RE = re.compile(
    r"^(?:[\w\-.]*\(-?\d+\)|-?\d+|0x[0-9a-fA-F]+|N/A|Array\[\d+\.\.\d+\])$"
)
"""One value as mlxconfig prints it: ``ETH(2)``, ``8``, ``0xff``, ``N/A``, ``Array[0..7]``."""
_ENUM_TOKEN_RE = re.compile(r"^[A-Za-z_][\w\-.]*\(-?\d+\)$")
_HEADERLESS_COLUMNS = {1: ["Next Boot"], 3: ["Default", "Current", "Next Boot"]}
"""Columns of rows pasted without their header, by value count: one value is a plain query,
three an extended (``-e``) one. Two values are ambiguous (``Current``/``Next Boot`` of an
extended query, or ``Next Boot``/``New`` of a set) and are kept unnamed in ``values``."""


def _row_values(m: re.Match[str]) -> list[str] | None:
    """The values of a row match when every one looks like an mlxconfig value, else None."""
    values = m.group("vals").split()
    if not values or not all(_VALUE_TOKEN_RE.match(v) for v in values):
        return None
    return values


def _columns(header: str) -> list[str]:
    """The value columns named after ``Configurations:`` (``Next Boot`` when none are)."""
    cols = [c for c in _COLUMN_NAMES if c in header]
    cols.sort(key=header.index)
    if not cols:
        cols = ["Next Boot"]
    return cols


def _clean(raw: str) -> str:
    return _QUOTE_RE.sub("", raw) if raw[:1] == ">" else raw


_ENUM_ROW_RE = re.compile(
    r"(?m)^[ \t*]*+(?:RO[ \t]++)?[A-Z][A-Za-z0-9_]*+[ \t]++[A-Za-z_][\w\-.]*+\(-?\d"
)
"""A line that could be a parameter row with an enum value: searched once before the loop."""


def _detect(text: str) -> float:
    if "Configurations:" in text and ("Device type:" in text or "Next Boot" in text):
        return 0.95
    if _ENUM_ROW_RE.search(text) is None:
        return 0.0  # every score below needs a row with an enum value
    rows = 0
    enums = 0
    nonblank = 0
    command = False
    for raw in text.splitlines()[:400]:
        line = _clean(raw).rstrip()
        if not line.strip():
            continue
        nonblank += 1
        if _COMMAND_RE.search(line):
            command = True
            continue
        m = _ROW_RE.match(line)
        values = _row_values(m) if m is not None else None
        if values is not None:
            rows += 1
            enums += any(_ENUM_TOKEN_RE.match(v) for v in values)
    if rows and command and enums:
        return 0.95
    if rows >= 3 and enums >= 2 and rows >= 0.8 * nonblank:
        return 0.6
    return 0.0


@register(
    "mlxconfig",
    summary="mlxconfig / mstconfig -d DEV [-e] query|set (NVIDIA MFT / mstflint: firmware "
    "configuration: link type, SR-IOV, RoCE congestion control, PCIe settings)",
    detect=_detect,
    refs=("S13", "S14", "S15"),
)
def parse_mlxconfig(text: str) -> ParseResult:
    """Parse ``mlxconfig``/``mstconfig`` query and set output; never raises."""
    res = ParseResult("mlxconfig")
    device: NvConfigDevice | None = None
    columns: list[str] | None = None
    """The value columns of the table being read; None outside a table."""
    for no, raw in enumerate(text.splitlines(), 1):
        line = _clean(raw).rstrip()
        stripped = line.strip()
        if not stripped:
            columns = None  # a table ends at its first blank line
            continue
        m = _DEVICE_RE.match(stripped)
        if m is not None:
            device = NvConfigDevice(line=no, index=int(m.group(1)))
            res.records.append(device)
            columns = None
            continue
        m = _MESSAGE_RE.match(stripped)
        if m is not None:
            level = {"E": "error", "W": "warning", "I": "info"}[m.group("level")]
            res.records.append(MftMessage(line=no, level=level, text=m.group("text")))
            continue
        m = _FIELD_RE.match(stripped)
        if m is not None and columns is None:
            if device is None:
                device = NvConfigDevice(line=no)
                res.records.append(device)
            key, value = m.group(1), m.group(2) or None
            if key == "Device type":
                device.device_type = value
            elif key == "Name":
                device.part = value
            elif key == "Description":
                device.description = value
            else:
                device.device = value
            continue
        m = _HEADER_RE.match(stripped)
        if m is not None:
            columns = _columns(m.group("cols"))
            continue
        m = _ROW_RE.match(line)
        values = _row_values(m) if m is not None else None
        if m is not None and (
            values is not None
            or (columns is not None and m.group("vals") and m.group("name").isupper())
        ):
            values = m.group("vals").split()
            cols = columns if columns is not None else _HEADERLESS_COLUMNS.get(len(values), [])
            if columns is not None and len(values) > len(cols):
                res.warn(no, f"{len(values)} values for {len(cols)} columns", stripped)
                continue
            got = dict(zip(cols, values, strict=False))
            res.records.append(
                NvConfigParam(
                    line=no,
                    name=m.group("name"),
                    next_boot=got.get("Next Boot"),
                    current=got.get("Current"),
                    default=got.get("Default"),
                    new=got.get("New"),
                    modified=m.group("star") is not None,
                    read_only=m.group("ro") is not None,
                    device=device.device if device is not None else None,
                    values=values,
                    columns=list(cols),
                )
            )
            continue
        if columns is not None and not set(stripped) <= {"-", "."}:
            res.warn(no, "not an mlxconfig parameter row", stripped)
    return res
