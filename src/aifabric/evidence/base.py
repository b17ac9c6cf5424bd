"""What every evidence parser shares: the record base class, warnings, the parse result, and
the few text utilities that captured outputs need (decoding, launcher prefixes, number cells).

Parsers are pure functions ``parse(text: str) -> ParseResult``. They never raise on a bad line:
a line they cannot read becomes a :class:`ParseWarning` (line number, reason, the text) and the
rest of the input is still parsed. Only input that is not text at all (binary) is refused, by
:func:`decode_capture`, with an :class:`~aifabric.errors.InputError` (exit code 2).

Records are slotted dataclasses rather than pydantic models: a fleet sweep parses thousands of
``ethtool -S`` dumps a second (issue 3 target: 5,000/s on 2 cores), and validation of values the
parser has just produced by regex is pure overhead. Every record keeps ``line``, the 1-based line
of the input it starts on (``end_line`` when it spans several), so a finding can quote its
evidence as ``file:line``.

Units are normalised in field names, as in the rest of aifabric: ``_bytes``, ``_GBps`` (decimal
GB/s, as nccl-tests reports), ``_gbps`` (Gb/s), ``_dbm``, ``_mw``, ``_ns``, ``_us``, ``_c``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from aifabric.errors import InputError

__all__ = [
    "ParseResult",
    "ParseWarning",
    "Record",
    "decode_capture",
    "mw_to_dbm",
    "parse_number",
    "split_launcher_prefix",
    "to_jsonable",
]


@dataclass(slots=True, kw_only=True)
class Record:
    """Base of all evidence records.

    Subclasses set ``record_type`` (the ``type`` key of the JSON form, e.g. ``"row"``) and add
    their fields; all fields are keyword-only so subclasses may add required fields freely.
    """

    record_type: ClassVar[str] = "record"

    line: int
    """1-based line of the input where this record starts (0 when it has no single line)."""
    end_line: int | None = None
    """Last line of a multi-line record, ``None`` for one-line records."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form: ``{"type": record_type, field: value, ...}`` with ``None`` kept."""
        out: dict[str, Any] = {"type": self.record_type}
        for f in _fields(type(self)):
            out[f] = to_jsonable(getattr(self, f))
        return out


_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELD_CACHE.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELD_CACHE[cls] = names
    return names


def to_jsonable(value: Any) -> Any:
    """Turn records, dataclasses, enums, tuples and non-finite floats into plain JSON values."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f: to_jsonable(getattr(value, f)) for f in _fields(type(value))}
    return str(value)


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """A line the parser could not use, or something about the input the user must know
    (truncated output, two interleaved runs, an unknown format version)."""

    line: int | None
    message: str
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message, "text": self.text}

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        quoted = f" [{self.text[:120]}]" if self.text else ""
        return f"{where}{self.message}{quoted}"


@dataclass(slots=True)
class ParseResult:
    """What a parser returns: the kind, the typed records in input order, and the warnings."""

    kind: str
    records: list[Record] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)

    def warn(self, line: int | None, message: str, text: str = "") -> None:
        """Record a warning; ``text`` is the offending line, trimmed for display."""
        self.warnings.append(ParseWarning(line, message, text.strip()[:200]))

    def of_type(self, record_type: type[Record]) -> list[Any]:
        """The records of one class (and its subclasses), in input order."""
        return [r for r in self.records if isinstance(r, record_type)]

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``parse --format json`` prints: ``kind``, ``records``, ``warnings``."""
        return {
            "kind": self.kind,
            "records": [r.to_json() for r in self.records],
            "warnings": [w.to_json() for w in self.warnings],
        }


# --------------------------------------------------------------------------------------------
# decoding

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# ESC (27) is left out: colour codes from `ls --color`-style tools are common in pastes.
_CONTROL = frozenset(range(0, 32)) - {9, 10, 12, 13, 27}
_CONTROL_BYTES = bytes(sorted(_CONTROL))


def decode_capture(data: bytes, name: str = "<input>") -> str:
    """Bytes of a captured output → text with ``\\n`` line ends and no ANSI colour codes.

    Accepts UTF-8 (with or without BOM) and falls back to Latin-1 for stray bytes in otherwise
    textual output (vendor banners). Refuses binary input (NUL bytes, or more than 5% control
    characters) with one :class:`InputError` line (exit code 2).
    """
    if not data.strip():
        raise InputError(f"{name}: file is empty; nothing to parse")
    sample = data[:65536]
    if b"\x00" in sample:
        raise InputError(
            f"{name}: binary data (NUL bytes), not a captured text output; "
            "save the command's output as text"
        )
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if controls > 0.05 * len(sample):
        raise InputError(
            f"{name}: binary data ({controls} control bytes in the first {len(sample)}), "
            "not a captured text output"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        bad = data.decode("utf-8", errors="replace").count("\ufffd")
        if bad > max(4, 0.05 * len(data)):
            raise InputError(
                f"{name}: not text ({bad} undecodable bytes); save the command's output as text"
            ) from None
        text = data.decode("latin-1")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    return text


# --------------------------------------------------------------------------------------------
# launcher prefixes

# OpenMPI --tag-output: "[1,0]<stdout>:" (jobid,rank); --timestamp-output adds a date before.
# Slurm srun --label: "  0: ". MPICH/hydra -prepend-rank: "[0] ". pdsh/clush: "host: " is left to
# the parsers that need it, because "name: value" is also how ethtool prints counters.
_LAUNCHER_RE = re.compile(
    r"^(?:\[(?P<job>\d+),(?P<rank>\d+)\]<(?:stdout|stderr)>:"
    r"|(?P<srank>\s{0,4}\d{1,6}): (?=\S|\s)"
    r"|\[(?P<hrank>\d{1,6})\] (?=\S))"
)


def split_launcher_prefix(line: str) -> tuple[str, int | None]:
    """Remove an MPI/Slurm launcher prefix from ``line``; return (rest, rank or None).

    >>> split_launcher_prefix("[1,3]<stdout>:#  Rank  0 Group  0 Pid 1")
    ('#  Rank  0 Group  0 Pid 1', 3)
    >>> split_launcher_prefix("plain")
    ('plain', None)
    """
    if not line or line[0] not in "[ 0123456789":
        return line, None
    m = _LAUNCHER_RE.match(line)
    if m is None:
        return line, None
    rank = m.group("rank") or m.group("srank") or m.group("hrank")
    return line[m.end() :], int(rank) if rank is not None else None


# --------------------------------------------------------------------------------------------
# numbers


def parse_number(cell: str) -> float | None:
    """A numeric table cell → float; ``N/A``, ``-``, ``nan`` and empty → ``None``.

    Raises ``ValueError`` for anything else, so the caller can warn about the line.
    """
    c = cell.strip()
    if not c or c in {"N/A", "n/a", "NA", "-", "--", "nan", "NaN"}:
        return None
    return float(c)


def mw_to_dbm(mw: float) -> float | None:
    """Optical power in mW → dBm (10·log10(mW)); ``None`` for 0 mW (no light: −∞ dBm)."""
    if mw <= 0:
        return None
    return 10.0 * math.log10(mw)


def first_line_number(lines: Iterable[str], needle: str) -> int | None:
    """1-based number of the first line containing ``needle``, or ``None``."""
    for i, text in enumerate(lines, 1):
        if needle in text:
            return i
    return None
