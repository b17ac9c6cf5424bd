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
import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, ClassVar

from aifabric.errors import InputError
from aifabric.inputs import loads_json

__all__ = [
    "MAX_DIGITS",
    "MAX_LINE_CHARS",
    "ParseResult",
    "ParseWarning",
    "Record",
    "cap_line_length",
    "cut_lines_warning",
    "decode_capture",
    "drop_out_of_range",
    "finite_float",
    "finite_or_none",
    "looks_like_message",
    "mw_to_dbm",
    "parse_number",
    "remap_lines",
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
    message_line: ClassVar[bool] = False
    """The record is a message the program printed among its data (an error instead of a
    value): diagnose reads its line with the signature catalogues."""

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


UNNAMED = "?"
"""The name given to a device, interface or port whose naming line is not in the paste: an
excerpt that starts inside a block (``ethtool eth0 | grep Speed``, a window from the middle of
``ibv_devinfo``) is read as far as it goes, and its records say the name is unknown."""


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

# CSI sequences (colours, cursor) and OSC sequences (window titles, hyperlinks) ended by BEL or
# ST (ESC \). An OSC ends within its line at the next ESC: ``\x1b\][^\x07]*\x07`` ran from every
# unterminated "ESC ]" to the end of the whole text (quadratic) and swallowed lines up to a far BEL.
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b\n]*+(?:\x07|\x1b\\)")
# ESC (27) is left out: colour codes from `ls --color`-style tools are common in pastes.
_CONTROL = frozenset(range(0, 32)) - {9, 10, 12, 13, 27}
_CONTROL_BYTES = bytes(sorted(_CONTROL))


def json_array(text: str) -> list[Any] | None:
    """``text`` as the JSON array the ``-j``/``--json`` forms of ip, rdma and ethtool print (one
    object alone becomes a one-element list); ``None`` when it is not JSON or neither."""
    try:
        data = loads_json(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = [data]
    return data if isinstance(data, list) else None


def decode_capture(data: bytes, name: str = "<input>") -> str:
    """Bytes of a captured output → text with ``\\n`` line ends, no ANSI colour codes and
    straight quotes.

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
    if "\u201c" in text or "\u201d" in text:
        text = text.translate(_TYPOGRAPHIC_QUOTES)
    if "\u00a0" in text:
        text = text.replace("\u00a0", " ")
    if "\u2502" in text or "\u2503" in text:
        text = _without_pane_border(text)
    if text[:16].lstrip()[:1].isdigit():
        text = _without_line_numbers(text)
    return text


_PANE_BORDER = ("\u2502", "\u2503")  # │ ┃


def _without_pane_border(text: str) -> str:
    """``text`` without the vertical rule a terminal multiplexer (tmux, screen, a tiling terminal)
    draws beside a pane, copied with the pane's lines: removed from the start (and end) of every
    line when at least 80% of the non-blank lines start with it, each replaced by nothing so the
    columns of the output keep their relative positions."""
    lines = text.split("\n")
    body = [ln for ln in lines if ln.strip()]
    if not body or sum(ln.startswith(_PANE_BORDER) for ln in body) < 0.8 * len(body):
        return text
    out = []
    for ln in lines:
        inner = ln[1:] if ln.startswith(_PANE_BORDER) else ln
        if inner is not ln and inner.rstrip().endswith(_PANE_BORDER):
            inner = inner.rstrip()[:-1]
        out.append(inner)
    return "\n".join(out)


_GUTTER_RE = re.compile(r"(?<![ \t])[ \t]*+(\d{1,7}+)(?:\t| |$)")
"""An editor's or ``cat -n``'s line-number gutter: ``     1\t`` (cat -n, nl), ``  1 `` (vim's
``:set number`` copied with the text)."""


def _without_line_numbers(text: str) -> str:
    """``text`` without a line-number gutter copied in front of every line: removed when at
    least 90% of the non-blank lines (and at least three) start with a number and a tab or
    space, and at least 90% of those numbers are one more than the number before them (a file
    numbered by ``cat -n``, ``nl`` or an editor; ``nl`` skips blank lines, so blanks do not
    count). A column of a tool's own output is not consecutive like this (rule numbers of
    ``iptables --line-numbers`` restart at every chain, under their header)."""
    lines = text.split("\n")
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 3:
        return text
    numbers: list[int] = []
    filled = 0  # numbered lines with text after the number: a column of bare numbers is data
    for ln in body:
        m = _GUTTER_RE.match(ln)
        if m is not None:
            numbers.append(int(m.group(1)))
            filled += bool(ln[m.end():].strip())
    if len(numbers) < 0.9 * len(body) or filled < max(3, 0.5 * len(body)):
        return text
    steps = sum(b == a + 1 for a, b in itertools.pairwise(numbers))
    if steps < 0.9 * (len(numbers) - 1):
        return text
    out = []
    for ln in lines:
        m = _GUTTER_RE.match(ln)
        out.append(ln[m.end():] if m is not None else ln)
    return "\n".join(out)


_TYPOGRAPHIC_QUOTES = str.maketrans({
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u2018": "'", "\u2019": "'",
})  # fmt: skip
"""Curly quotes a web page, word processor or chat client put where the tool printed ASCII ones
(no tool prints them; a documentation page's ``config_db.json`` excerpt does): made straight
again, one character for one, so JSON excerpts parse and line and column positions stay. The
same for no-break spaces (U+00A0), which mail clients and web pages put in indentation and
between columns: a space again."""


# --------------------------------------------------------------------------------------------
# line length

MAX_LINE_CHARS = 64 * 1024
"""Longest line (characters) an evidence parser sees. :func:`aifabric.evidence.parse_text` cuts
longer lines to this length before detection and parsing, with one warning per input naming them.

No tool's output has lines near this long (the widest real lines are NCCL graph dumps and
``lspci -vvv`` capability lists, a few hundred characters), so a longer line is a capture gone
wrong (a binary blob, a log without newlines, a hostile paste). Every pattern is linear-time on
any line (``tests/unit/evidence/test_hostile.py``); the cap also bounds what a line costs.
JSON documents (``ip -j``, ``rdma -j``, ``ethtool --json``, ``nccl-tests -J``, ``config_db.json``)
are exempt: minified, they are one long line that must stay whole, and they are decoded by the
linear JSON decoder after a nesting-depth check.
"""

MAX_DIGITS = 300
"""Longest run of digits a parser sees: a line is cut before a longer one (same warning).

No capture prints a number of more than 40 digits (2^128 has 39). A longer run would make
``int()`` refuse it (beyond 4,300 digits: ``ValueError``) or ``float(int(...))`` overflow (beyond
308: ``OverflowError``), a traceback wherever a parser converts a ``\\d+``; up to 300 digits every
conversion works, and :func:`drop_out_of_range` then rejects the record holding such a number.
"""

# str.splitlines() ends lines at these too (and at "\r\n" as one break)
_BREAK_RE = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LONG_NUMBER_RE = re.compile(rf"(?<!\d)\d{{{MAX_DIGITS + 1}}}")


def _line_breaks(text: str, start: int, end: int) -> int:
    """How many line ends (as :meth:`str.splitlines` counts them) lie in ``text[start:end]``."""
    n = text.count("\n", start, end) - text.count("\r\n", start, end)
    return n + sum(text.count(c, start, end) for c in _OTHER_BREAKS)


def cap_line_length(
    text: str, limit: int = MAX_LINE_CHARS
) -> tuple[str, list[tuple[int, int, int]]]:
    """``text`` with every line longer than ``limit`` characters cut to its first ``limit``, and
    every line holding a run of more than :data:`MAX_DIGITS` digits cut before that run; the cut
    lines as (1-based line number, original length, characters kept), in input order.

    Linear and cheap on ordinary input: the scan jumps from the last newline within
    ``MAX_DIGITS + 1`` characters of a line start to the next (``str.rfind``; about 1 ms per MB
    of log), and looks into only the lines longer than that, splitting them by the other line
    ends ``str.splitlines`` knows. Line numbers count lines as ``splitlines`` does.
    """
    n = len(text)
    window = min(limit, MAX_DIGITS)  # a shorter line can hold neither
    if n <= window:
        return text, []
    out: list[str] = []
    cut: list[tuple[int, int, int]] = []
    s = kept = counted = 0  # line start; text[:kept] is in ``out``; breaks counted up to here
    line = 1
    while n - s > window:
        r = text.rfind("\n", s, s + window + 1)
        if r >= 0:
            s = r + 1  # every line that starts in text[s:r] ends by r: none is long
            continue
        e = text.find("\n", s)
        if e < 0:
            e = n
        elif text[e - 1] == "\r":
            e -= 1  # keep a "\r\n" whole, outside the stretch (e > s: text[s:e] is long)
        p, sub_line, pieces, changed = s, line + _line_breaks(text, counted, s), [], False
        for m in [*_BREAK_RE.finditer(text, s, e), None]:
            q = e if m is None else m.start()
            keep = min(q, p + limit)
            big = _LONG_NUMBER_RE.search(text, p, keep) if keep - p > MAX_DIGITS else None
            if big is not None:
                keep = big.start()
            if keep < q:
                cut.append((sub_line, q - p, keep - p))
                changed = True
            pieces.append(text[p:keep])
            if m is not None:
                pieces.append(m.group())
                sub_line += 1
                p = m.end()
        if changed:
            out.append(text[kept:s])
            out.extend(pieces)
            kept = e
        line, s, counted = sub_line, e, e
    if not cut:
        return text, []
    out.append(text[kept:])
    return "".join(out), cut


def cut_lines_warning(cut: list[tuple[int, int, int]], limit: int = MAX_LINE_CHARS) -> ParseWarning:
    """The one warning for the lines :func:`cap_line_length` cut: which, how long, how cut."""

    def why(length: int, kept: int) -> str:
        if kept == limit:
            return f"{length:,} characters"
        return f"a number of over {MAX_DIGITS} digits at character {kept + 1:,}"

    shown = ", ".join(f"line {ln} ({why(length, kept)})" for ln, length, kept in cut[:5])
    more = f" and {len(cut) - 5} more" if len(cut) > 5 else ""
    return ParseWarning(
        cut[0][0],
        f"{len(cut)} line(s) cut before parsing (to their first {limit:,} characters, or before "
        f"a number of more than {MAX_DIGITS} digits): {shown}{more}",
    )


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

    Raises ``ValueError`` for anything else (``inf`` and ``1e999`` too), so the caller can warn
    about the line.
    """
    c = cell.strip()
    if not c or c in {"N/A", "n/a", "NA", "-", "--", "nan", "NaN"}:
        return None
    return finite_float(c)


def finite_float(text: str) -> float:
    """``float(text)`` for a finite number; ``ValueError`` for ``nan``, ``inf`` and numbers a
    double cannot hold (``1e999``, a 400-digit integer: ``float`` turns them into ``inf``), so
    the caller rejects the line with a warning."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text.strip()[:40]!r}")
    return value


def finite_or_none(text: str) -> float | None:
    """:func:`finite_float`, or ``None`` where it raises (``"1.2.3"``, ``"..."``, ``nan``), for a
    value whose raw text the record keeps anyway."""
    try:
        return finite_float(text)
    except ValueError:
        return None


_U64 = 1 << 64


_PLAIN = (str, bool, type(None))


def _out_of_range(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` (a record field) holds a non-finite float or an integer beyond 64 bits.

    Plain loops rather than ``any(generator)``: every field of every record passes here."""
    t = type(value)
    if t is float:
        return not math.isfinite(value)
    if t is int:
        return not -_U64 < value < _U64
    if t in _PLAIN or depth > 3:
        return False
    if t is dict:
        values: Iterable[Any] = value.values()
    elif t is list or t is tuple:
        values = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        values = [getattr(value, f) for f in _fields(t)]
    else:
        return False
    for v in values:
        tv = type(v)
        if tv is float:
            if not math.isfinite(v):
                return True
        elif tv is int:
            if not -_U64 < v < _U64:
                return True
        elif tv not in _PLAIN and _out_of_range(v, depth + 1):
            return True
    return False


def drop_out_of_range(result: ParseResult, text: str) -> None:
    """Reject, at the record boundary, every record holding ``nan``, ``inf``, a number a double
    cannot hold or an integer beyond 64 bits (a counter is at most 2^64 - 1): the record is
    dropped and one warning quotes its line. Such a number is never a measurement, and
    consumers that compute with it would fail or mislead (issue 16)."""
    bad = [r for r in result.records if _out_of_range(r)]
    if not bad:
        return
    lines = text.splitlines()
    for rec in bad:
        quoted = lines[rec.line - 1] if 0 < rec.line <= len(lines) else ""
        result.warn(
            rec.line or None,
            f"a non-finite or out-of-range number (nan, inf, beyond a double or 64 bits): "
            f"this {rec.record_type} record is dropped",
            quoted,
        )
    dropped = {id(r) for r in bad}
    result.records = [r for r in result.records if id(r) not in dropped]


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


def remap_lines(result: ParseResult, numbers: list[int]) -> None:
    """Renumber ``result`` parsed from a derived text to the lines of the original: line ``n`` of
    the parsed text is line ``numbers[n - 1]`` of the file (a part of a paste, the text report an
    ``--json`` document was turned into). Every ``line`` / ``*_line`` field of the records and
    the warnings' lines move; a number outside ``numbers`` stays."""

    def at(n: int) -> int:
        return numbers[n - 1] if 1 <= n <= len(numbers) else n

    for rec in result.records:
        if not is_dataclass(rec):
            continue
        for f in fields(rec):
            if f.name == "line" or f.name.endswith("_line"):
                value = getattr(rec, f.name)
                if isinstance(value, int) and value > 0:
                    setattr(rec, f.name, at(value))
    result.warnings = [
        ParseWarning(at(w.line) if w.line else w.line, w.message, w.text)
        for w in result.warnings
    ]


_MESSAGE_RE = re.compile(
    r"(?i)\b(?:error|errors|fail|failed|failure|unable|cannot|can't|couldn't|not found|lost"
    r"|too old|warning|warn|fatal|exception|traceback|mismatch|insufficient)\b|UserWarning"
)


def looks_like_message(line: str) -> bool:
    """A line a tool's structured output does not hold that reads like a message (an error,
    a warning): a parser keeps it as a record with ``message_line`` set, for diagnose's
    catalogues, rather than dropping it as a parse warning."""
    return _MESSAGE_RE.search(line) is not None
