"""Shell resource limits: ``ulimit -a`` and single-limit queries (kind ``ulimit``).

bash's ``ulimit`` builtin (``builtins/ulimit.def``) prints each limit as its description, the
units and option in parentheses, then the value, ``unlimited`` for ``RLIM_INFINITY``::

    max locked memory       (kbytes, -l) 64
    open files                      (-n) 1024

Up to bash 5.0 the format is ``printf("%-20s %16s", description, "(units, -X) ")``; bash 5.1
widened the second field to 20 (``max locked memory           (kbytes, -l) 8192``) and added
``real-time non-blocking time  (microseconds, -R) unlimited``. Both are read by one pattern, as is
a description line printed for several options at once (``ulimit -r -l``). A single option
(``ulimit -l``) prints the bare value; that line is only read when the capture shows the command
before it (``$ ulimit -l`` then ``unlimited``), since a lone number means nothing. ``-S``/``-H``
in the command (``ulimit -Sa``, ``ulimit -Hl``) set ``scope``.

Two other views of the same limits are read too, since users paste them to show what a running
job really got: ``cat /proc/PID/limits`` (the kernel's ``proc_pid_limits()`` in
``fs/proc/base.c``: a ``Limit  Soft Limit  Hard Limit  Units`` header, then ``Max locked memory
65536  65536  bytes`` rows, one soft and one hard record each, values in the kernel's units) and
``systemctl show UNIT`` (``LimitMEMLOCK=65536``, ``LimitMEMLOCKSoft=65536``, ``infinity``: the
limits systemd gives a service such as slurmd or a container runtime, in bytes).

Each limit → one :class:`ResourceLimit`. The units of the description and the block factor of the
bash limits table give ``value_bytes`` for byte-sized limits (``kbytes`` → ×1024).

Sources: bash ``builtins/ulimit.def`` (``limits[]`` table and ``printone()``, tags bash-4.4 to
bash-5.3, https://git.savannah.gnu.org/cgit/bash.git, mirror github.com/bminor/bash), and the real
captures under ``tests/fixtures/evidence/ulimit/``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["BASH_LIMITS", "PROC_LIMITS", "SYSTEMD_LIMITS", "ResourceLimit", "parse_ulimit"]

BASH_LIMITS: dict[str, tuple[str, str | None]] = {
    "P": ("number of pseudoterminals", None),
    "R": ("real-time non-blocking time", "microseconds"),
    "T": ("number of threads", None),
    "b": ("socket buffer size", "bytes"),
    "c": ("core file size", "blocks"),
    "d": ("data seg size", "kbytes"),
    "e": ("scheduling priority", None),
    "f": ("file size", "blocks"),
    "i": ("pending signals", None),
    "k": ("max kqueues", None),
    "l": ("max locked memory", "kbytes"),
    "m": ("max memory size", "kbytes"),
    "n": ("open files", None),
    "p": ("pipe size", "512 bytes"),
    "q": ("POSIX message queues", "bytes"),
    "r": ("real-time priority", None),
    "s": ("stack size", "kbytes"),
    "t": ("cpu time", "seconds"),
    "u": ("max user processes", None),
    "v": ("virtual memory", "kbytes"),
    "w": ("swap size", "kbytes"),
    "x": ("file locks", None),
}
"""bash's ``limits[]`` table: option → (description, units)."""

_UNIT_BYTES = {"kbytes": 1024, "bytes": 1, "512 bytes": 512}

PROC_LIMITS: dict[str, tuple[str, str | None]] = {
    "Max cpu time": ("t", "seconds"), "Max file size": ("f", "bytes"),
    "Max data size": ("d", "bytes"), "Max stack size": ("s", "bytes"),
    "Max core file size": ("c", "bytes"), "Max resident set": ("m", "bytes"),
    "Max processes": ("u", None), "Max open files": ("n", None),
    "Max locked memory": ("l", "bytes"), "Max address space": ("v", "bytes"),
    "Max file locks": ("x", None), "Max pending signals": ("i", None),
    "Max msgqueue size": ("q", "bytes"), "Max nice priority": ("e", None),
    "Max realtime priority": ("r", None), "Max realtime timeout": ("R", "microseconds"),
}  # fmt: skip
"""``/proc/PID/limits`` row names (``lnames[]`` in the kernel's fs/proc/base.c) → bash's option
letter and the units the kernel prints the value in."""
SYSTEMD_LIMITS: dict[str, tuple[str, str | None]] = {
    "LimitMEMLOCK": ("l", "bytes"), "LimitNOFILE": ("n", None), "LimitNPROC": ("u", None),
    "LimitSTACK": ("s", "bytes"), "LimitCORE": ("c", "bytes"), "LimitAS": ("v", "bytes"),
}  # fmt: skip
"""``systemctl show`` properties (systemd.exec(5), ``LimitX=`` hard and ``LimitXSoft=`` soft)."""


@dataclass(slots=True, kw_only=True)
class ResourceLimit(Record):
    """One resource limit as the shell printed it."""

    record_type: ClassVar[str] = "ulimit"

    option: str
    """bash's option letter: ``l`` (locked memory), ``n`` (open files), ``u`` (processes)..."""
    description: str | None = None
    units: str | None = None
    """``kbytes``, ``blocks``, ``512 bytes``, ``seconds``... None for counts."""
    value: int | None = None
    """In ``units``; None when ``unlimited`` (or ``hard``/``soft``)."""
    unlimited: bool = False
    raw: str = ""
    scope: str | None = None
    """``soft`` (``-S``), ``hard`` (``-H``) or None (bash shows the soft limit by default)."""
    command: str | None = None

    @property
    def value_bytes(self) -> int | None:
        factor = _UNIT_BYTES.get(self.units or "")
        if self.value is None or factor is None:
            return None
        return self.value * factor


_LIMIT_RE = re.compile(
    # the description ends at its last non-blank, found greedily (a lazy one followed by ``\s+``
    # rescans a long run of blanks once per character: quadratic)
    r"^(?P<desc>[A-Za-z](?:[A-Za-z -]*[A-Za-z-])?)\s+"
    r"\((?:(?P<units>[^,()]+),\s*)?-(?P<opt>[A-Za-z])\)\s+"
    r"(?P<value>\S+)\s*$"
)
_COMMAND_RE = re.compile(r"(?:^|[\s$#>%])ulimit((?:\s+-[A-Za-z]+)+)\s*$")
_VALUE_RE = re.compile(r"^(unlimited|hard|soft|\d+)$")


_GATE_RE = re.compile(r"\(-[A-Za-z]\)|, -[A-Za-z]\)|ulimit|Max [a-z]|Limit[A-Z]")
_PROC_ROW_RE = re.compile(
    r"^(?P<name>Max [a-z]+(?: [a-z]+)*)\s{2,}(?P<soft>unlimited|\d+)\s+(?P<hard>unlimited|\d+)"
    r"(?:\s+(?P<units>[a-z]+))?\s*$"
)
_PROC_HEADER_RE = re.compile(r"^Limit\s+Soft Limit\s+Hard Limit\s+Units\s*$")
_SYSTEMD_RE = re.compile(r"^(?P<prop>Limit[A-Z]+?)(?P<soft>Soft)?=(?P<value>infinity|\d+)\s*$")


def _detect(text: str) -> float:
    if _GATE_RE.search(text) is None:  # every ulimit line names its flag: cheap early exit
        return 0.0
    hits = 0
    for line in text.splitlines():
        stripped = line.strip()
        if _PROC_HEADER_RE.match(stripped) or (
            _PROC_ROW_RE.match(stripped) and stripped.startswith("Max locked memory")
        ):
            return 0.95
        sm = _SYSTEMD_RE.match(stripped)
        if sm is not None and sm.group("prop") in SYSTEMD_LIMITS:
            hits += 1
            if hits >= 2 or sm.group("prop") == "LimitMEMLOCK":
                return 0.9
            continue
        if _LIMIT_RE.match(stripped):
            hits += 1
            if hits >= 3:
                return 0.95
    if hits:
        return 0.9 if "(kbytes, -l)" in text or "(-n)" in text else 0.6
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for a, b in itertools.pairwise(lines):
        if _COMMAND_RE.search(a) and _VALUE_RE.match(b):
            return 0.9
    return 0.0


def _scope(flags: str) -> str | None:
    if "H" in flags:
        return "hard"
    if "S" in flags:
        return "soft"
    return None


def _value(raw: str) -> tuple[int | None, bool]:
    if raw == "unlimited":
        return None, True
    return (int(raw), False) if raw.isdecimal() else (None, False)


@register(
    "ulimit",
    summary="ulimit -a / ulimit -l (shell resource limits: locked memory, open files, processes)",
    detect=_detect,
    refs=("S5",),
)
def parse_ulimit(text: str) -> ParseResult:
    """``ulimit -a`` (bash 4.x/5.x) and ``$ ulimit -l`` + value → :class:`ResourceLimit` records."""
    res = ParseResult("ulimit")
    command: str | None = None
    scope: str | None = None
    pending: str | None = None  # option letter of a single-limit query awaiting its value
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        cm = _COMMAND_RE.search(line)
        if cm is not None:
            flags = "".join(f.lstrip("-") for f in cm.group(1).split())
            command, scope = line, _scope(flags)
            letters = [c for c in flags if c not in "HS"]
            pending = letters[0] if len(letters) == 1 and letters[0] in BASH_LIMITS else None
            continue
        if _PROC_HEADER_RE.match(line):
            continue
        pm = _PROC_ROW_RE.match(line)
        if pm is not None and pm.group("name") in PROC_LIMITS:
            opt, units = PROC_LIMITS[pm.group("name")]
            for which in ("soft", "hard"):
                value, unlimited = _value(pm.group(which))
                res.records.append(ResourceLimit(
                    line=lineno, option=opt, description=pm.group("name"), units=units,
                    value=value, unlimited=unlimited, raw=pm.group(which), scope=which,
                    command=command,
                ))  # fmt: skip
            pending = None
            continue
        sm = _SYSTEMD_RE.match(line)
        if sm is not None and sm.group("prop") in SYSTEMD_LIMITS:
            opt, units = SYSTEMD_LIMITS[sm.group("prop")]
            raw_value = sm.group("value")
            value, unlimited = _value("unlimited" if raw_value == "infinity" else raw_value)
            res.records.append(ResourceLimit(
                line=lineno, option=opt, description=sm.group("prop"), units=units, value=value,
                unlimited=unlimited, raw=raw_value, scope="soft" if sm.group("soft") else "hard",
                command=command,
            ))  # fmt: skip
            continue
        if line.startswith("Limit") and "=" in line:
            continue  # another systemd Limit property (LimitRTTIME=...): not a limit RDMA needs
        lm = _LIMIT_RE.match(line)
        if lm is not None:
            value, unlimited = _value(lm.group("value"))
            units = lm.group("units")
            res.records.append(
                ResourceLimit(
                    line=lineno,
                    option=lm.group("opt"),
                    description=lm.group("desc").strip(),
                    units=units.strip() if units else None,
                    value=value,
                    unlimited=unlimited,
                    raw=lm.group("value"),
                    scope=scope,
                    command=command,
                )
            )
            pending = None
            continue
        if pending is not None and _VALUE_RE.match(line):
            desc, units = BASH_LIMITS[pending]
            value, unlimited = _value(line)
            res.records.append(
                ResourceLimit(
                    line=lineno,
                    option=pending,
                    description=desc,
                    units=units,
                    value=value,
                    unlimited=unlimited,
                    raw=line,
                    scope=scope,
                    command=command,
                )
            )
            pending = None
            continue
        # an unreadable line does not cancel a pending query: its value may still follow
        res.warn(lineno, "expected a ulimit line ('description (units, -X) value')", raw)
    return res
