"""Parsing and formatting of the quantities engineers type on input.

Conventions used everywhere in aifabric:

* Link and port speeds are **bits** per second, decimal: ``400G`` = 400 Gb/s. Fields end in
  ``_gbps``. A bare number (``400``) is refused: is it Gb/s, GB/s or Mb/s?
* Byte quantities (MTU, buffers, message sizes) are bytes; the suffixes ``K``, ``M``, ``G``
  (with or without ``B``, or as ``KiB``...) are powers of two, as nccl-tests reads ``-b 8K``.
  A bare number is bytes (``9000``). Fields end in ``_bytes``.
* Bandwidths in bytes per second are decimal GB/s (1 GB/s = 1e9 B/s), the way nccl-tests
  reports algbw/busbw. Fields end in ``_GBps``.
* Durations become integer nanoseconds. Fields end in ``_ns`` / ``_us`` / ``_ms``.
* Lengths become metres. Fields end in ``_m``.

Ambiguity is an error, not a guess: ``400GB/s`` for a link speed is refused with a hint.
"""

from __future__ import annotations

import math
import re

from aifabric.errors import UnitError

__all__ = [
    "format_bytes",
    "format_gbps",
    "gbps_to_GBps",
    "parse_bytes",
    "parse_duration_ns",
    "parse_length_m",
    "parse_ratio",
    "parse_speed_gbps",
]

_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"

_SPEED_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<prefix>[kKmMgGtT])?(?P<rest>[A-Za-z/]*)\s*$")
_SPEED_PREFIX_GBPS = {"k": 1e-6, "m": 1e-3, "g": 1.0, "t": 1e3}
_SPEED_BIT_SUFFIXES = {"", "b", "bps", "b/s", "bit/s", "bits/s", "be", "bit"}


def parse_speed_gbps(text: str | float | int, *, what: str = "speed") -> float:
    """Parse a link speed such as ``400G``, ``400Gbps``, ``200Gb/s``, ``100GbE`` or ``1.6T``.

    Returns Gb/s (decimal). Numbers without a unit, byte units (``GB/s``) and unknown suffixes
    raise :class:`UnitError`.

    >>> parse_speed_gbps("200Gb/s")
    200.0
    >>> parse_speed_gbps("1.6T")
    1600.0
    """
    if isinstance(text, bool):
        raise UnitError(f"{what} {text!r}: expected a speed such as 400G")
    if isinstance(text, int | float):
        raise UnitError(
            f"{what} {text!r} has no unit: write it as {text:g}G (Gb/s) so it cannot be read as "
            "GB/s or Mb/s"
        )
    match = _SPEED_RE.match(text)
    if match is None:
        raise UnitError(f"{what} {text!r}: expected a number with a unit, such as 400G or 200Gb/s")
    prefix = match.group("prefix")
    rest = match.group("rest")
    if prefix is None:
        if rest == "":
            raise UnitError(
                f"{what} {text!r} has no unit: write {text.strip()}G for Gb/s "
                "(a bare number could be Gb/s, GB/s or Mb/s)"
            )
        raise UnitError(f"{what} {text!r}: unknown unit {rest!r}; use G, Gbps, Gb/s or T")
    if rest.startswith("B") or rest.lower() in {"byte", "bytes", "bytes/s"}:
        raise UnitError(
            f"{what} {text!r} is in bytes per second; link speeds are written in bits "
            f"(did you mean {match.group('num')}{prefix.upper()}b/s?)"
        )
    if rest.lower() not in _SPEED_BIT_SUFFIXES:
        raise UnitError(f"{what} {text!r}: unknown unit {prefix + rest!r}; use G, Gbps, Gb/s or T")
    value = float(match.group("num")) * _SPEED_PREFIX_GBPS[prefix.lower()]
    if value <= 0:
        raise UnitError(f"{what} {text!r} must be positive")
    return value


_BYTES_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-z]*)\s*$")
_BYTE_MULTIPLIERS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tib": 1024**4,
}


def parse_bytes(text: str | int, *, what: str = "size") -> int:
    """Parse a byte quantity: ``9000``, ``9216B``, ``100KB``, ``1.5MB``, ``128M``, ``8G``.

    ``K``/``M``/``G`` are powers of two (nccl-tests semantics). A lower-case ``b`` after a
    prefix (``8Gb``) means bits and is refused. The result must be a whole number of bytes.

    >>> parse_bytes("1.5MB")
    1572864
    """
    if isinstance(text, bool):
        raise UnitError(f"{what} {text!r}: expected a byte count such as 9000 or 128M")
    if isinstance(text, int):
        if text < 0:
            raise UnitError(f"{what} {text} must not be negative")
        return text
    match = _BYTES_RE.match(text)
    if match is None:
        raise UnitError(f"{what} {text!r}: expected a byte count such as 9000, 100KB or 8G")
    unit = match.group("unit")
    if len(unit) >= 2 and unit[-1] == "b" and unit[-2] != "i":
        raise UnitError(
            f"{what} {text!r}: '{unit}' reads as bits; write {match.group('num')}"
            f"{unit[:-1].upper()}B for bytes"
        )
    multiplier = _BYTE_MULTIPLIERS.get(unit.lower())
    if multiplier is None:
        raise UnitError(f"{what} {text!r}: unknown unit {unit!r}; use B, K/KB, M/MB or G/GB")
    value = float(match.group("num")) * multiplier
    if not math.isclose(value, round(value), rel_tol=0, abs_tol=1e-6):
        raise UnitError(f"{what} {text!r} is not a whole number of bytes ({value:g})")
    return round(value)


_DURATION_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>ns|us|µs|μs|ms|s|min)\s*$")
_NS_PER = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60_000_000_000,
}


def parse_duration_ns(text: str, *, what: str = "duration") -> int:
    """Parse ``5us``, ``2ms``, ``100ns``, ``1.5s`` into integer nanoseconds (unit required)."""
    match = _DURATION_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise UnitError(f"{what} {text!r}: expected a duration with a unit: ns, us, ms, s or min")
    value = float(match.group("num")) * _NS_PER[match.group("unit")]
    return round(value)


_LENGTH_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>m|km|cm|ft)\s*$")
_M_PER = {"m": 1.0, "km": 1000.0, "cm": 0.01, "ft": 0.3048}


def parse_length_m(text: str, *, what: str = "length") -> float:
    """Parse a cable length: ``3m``, ``0.5m``, ``2km``, ``10ft`` into metres (unit required)."""
    match = _LENGTH_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise UnitError(f"{what} {text!r}: expected a length with a unit, such as 3m or 2km")
    return float(match.group("num")) * _M_PER[match.group("unit")]


_RATIO_RE = re.compile(rf"^\s*{_NUMBER}\s*(?::\s*(?P<den>[0-9]+(?:\.[0-9]+)?))?\s*$")


def parse_ratio(text: str, *, what: str = "oversubscription") -> float:
    """Parse an oversubscription ratio ``down:up`` (``1:1``, ``3:1``, ``1.5:1``) or a plain
    number (``2`` means 2:1). Returns down/up as a float > 0."""
    match = _RATIO_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise UnitError(f"{what} {text!r}: expected a ratio such as 1:1 or 3:1")
    num = float(match.group("num"))
    den = float(match.group("den")) if match.group("den") is not None else 1.0
    if num <= 0 or den <= 0:
        raise UnitError(f"{what} {text!r}: both sides of the ratio must be positive")
    return num / den


def gbps_to_GBps(gbps: float) -> float:
    """Gb/s to decimal GB/s (divide by 8)."""
    return gbps / 8.0


def format_gbps(gbps: float) -> str:
    """``400 -> '400 Gb/s'``, ``12800 -> '12.8 Tb/s'``, ``0.1 -> '100 Mb/s'``."""
    if gbps >= 1000:
        return f"{gbps / 1000:g} Tb/s"
    if gbps < 1:
        return f"{gbps * 1000:g} Mb/s"
    return f"{gbps:g} Gb/s"


def format_bytes(n: int) -> str:
    """Binary-prefixed byte count: ``153600 -> '150 KiB'``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:g} {unit}" if unit == "B" else f"{value:.4g} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - loop always returns
