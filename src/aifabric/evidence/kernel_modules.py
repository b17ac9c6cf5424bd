"""Loaded kernel modules: ``cat /proc/modules`` and ``lsmod`` → one :class:`KernelModule` each.

A GPU server does GPUDirect RDMA only when ``nvidia_peermem`` (or the older ``nv_peer_mem``) is
loaded next to ``ib_core``/``mlx5_ib``; whether a module is loaded, who uses it and whether it is
out of tree are what a probe bundle keeps these two listings for.

Formats, from the sources:

* **/proc/modules** (kernel ``kernel/module/procfs.c`` ``m_show``, v6.6; ``kernel/module.c``
  before v5.19): ``"%s %u"`` name and size in bytes, then ``print_unload_info``: ``" %i "`` the
  reference count and every user module as ``"%s,"`` (each one comma-terminated, also the last),
  ``"[permanent],"`` for a module that cannot be unloaded, ``"-"`` when nothing was printed;
  then ``" %s"`` the state ``Live`` / ``Loading`` / ``Unloading``, ``" 0x%px"`` the load address
  (``0x0000000000000000`` for readers without CAP_SYSLOG) and, for a tainting or changing
  module, ``" (%s)"`` its flags (``module_flags``: taint letters such as ``O`` out-of-tree,
  ``E`` unsigned, ``P`` proprietary, then ``+`` loading / ``-`` unloading). Example:
  ``nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)``. A kernel built without
  CONFIG_MODULE_UNLOAD prints `` - -`` in place of the count and users.
* **lsmod** (kmod ``tools/lsmod.c``, v31): the header ``Module                  Size  Used
  by``, then ``"%-19s %8lu  %d"`` name, size and use count, and the holders as `` a,b,c`` (one
  blank, comma-separated, no trailing comma). ``lsmod | grep X`` drops the header; mail and
  markdown pastes indent the rows.

Records: ``name``, ``size`` (bytes), ``refcount``, ``used_by`` (tuple, empty for ``-``),
``state`` (``None`` for lsmod, which does not print it) and ``taint`` (the letters inside the
parentheses, ``"OE"``, ``None`` when absent). A /proc/modules line that a mail client wrapped
before its address (``... Live`` then ``0x0000000000000000`` on the next line) is joined; a
line cut anywhere else is a warning and the rest is still parsed. Prompt and command lines
(``$ lsmod | grep nvidia``, ``cat /proc/modules``) are skipped.

Detection: a /proc/modules row (``Live 0x...``) or the lsmod header scores 0.95; headerless
lsmod rows score 0.9 after an ``lsmod`` command line, 0.6 when every line is a row and one names
an RDMA/GPU module or lists users, else 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["KernelModule", "ModuleQuery", "parse_kernel_modules"]


@dataclass(slots=True, kw_only=True)
class KernelModule(Record):
    """One loaded module, from a /proc/modules or lsmod row."""

    record_type: ClassVar[str] = "kernel_module"

    name: str
    size: int | None
    """Bytes of module memory (core + init), as printed."""
    refcount: int | None
    """Reference count; ``None`` when the kernel or kmod could not tell (``-``, negative)."""
    used_by: tuple[str, ...]
    """Modules holding this one (``[permanent]`` kept as printed); empty for ``-``."""
    state: str | None
    """``Live``, ``Loading`` or ``Unloading``; ``None`` for lsmod rows."""
    taint: str | None
    """Flags inside the parentheses (``"OE"``, ``"POE"``, ``"+"``); ``None`` when absent."""


@dataclass(slots=True, kw_only=True)
class ModuleQuery(Record):
    """``lsmod | grep PATTERN`` (or ``grep PATTERN /proc/modules``) that printed no row: no loaded
    module name contains ``pattern``. A query that printed rows gives only the rows."""

    record_type: ClassVar[str] = "module_query"

    pattern: str
    found: bool = False


_GREP_CMD_RE = re.compile(r"\blsmod\s*\|\s*grep(?:\s+-\w+)*\s+['\"]?(?P<pat>[\w\-]+)")
"""``lsmod | grep -i nv_peer``: the pattern is the first word after the options."""
_GREP_FILE_RE = re.compile(r"\bgrep(?:\s+-\w+)*\s+['\"]?(?P<pat>[\w\-]+)['\"]?\s+/proc/modules")


# name size refcount users state [address] [(flags)]: every field is one run of non-blanks
_PROC_RE = re.compile(
    r"^(\S+) (\d+) (-?\d+|-) (\S+) (Live|Loading|Unloading)"
    r"(?: (0x[0-9a-fA-F]+))?(?: \(([A-Z+\-]*)\))?\s*$"
)
_ADDR_RE = re.compile(r"^(0x[0-9a-fA-F]+)(?: \(([A-Z+\-]*)\))?\s*$")
_LSMOD_HEADER_RE = re.compile(r"^Module\s+Size\s+Used\s+by\s*$")
_LSMOD_ROW_RE = re.compile(r"^([\w\-]+)\s+(\d+)\s+(-?\d+)(?:\s+(\S+))?\s*$")
_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_PROMPT_ONLY_RE = re.compile(r"^(?:\[[^\]]*\]|[\w@.~:/\-]*)[$#]$")
_COMMAND_RE = re.compile(r"\blsmod\b|/proc/modules|^(?:\[[^\]]*\]|[\w@.~:/\-]*)[$#]\s")
_RDMA_GPU_NAMES = ("nvidia", "peer_mem", "peermem", "ib_core", "mlx5", "mlx4", "rdma", "ib_uverbs")


_ANY_ROW_RE = re.compile(r"^(?:[^\S\n]|>)*[\w\-]+[^\S\n]+\d+[^\S\n]+-?\d", re.MULTILINE)
"""A line that could be an lsmod row, searched once before the per-line loop."""
_ROW_SCAN_CHARS = 400 * 256
"""The loop below reads 400 lines; a row after this many characters is never scored."""
_OTHER_BREAKS_RE = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""Line breaks ``str.splitlines`` honours besides ``\\n`` (the cheap test assumes none)."""


def _detect(text: str) -> float:
    if (
        " Live 0x" not in text
        and not ("Module" in text and "Used" in text)
        and _ANY_ROW_RE.search(text, 0, _ROW_SCAN_CHARS) is None
        and _OTHER_BREAKS_RE.search(text) is None
        and "lsmod" not in text
        and "/proc/modules" not in text
    ):
        return 0.0  # no marker and no line that could be a row: the loop below scores 0
    rows = 0
    relevant = False
    command = False
    nonblank = 0
    for raw in text.splitlines()[:400]:
        line = _QUOTE_RE.sub("", raw).strip()
        if not line:
            continue
        nonblank += 1
        if " Live 0x" in line and _PROC_RE.match(line):
            return 0.95
        if _LSMOD_HEADER_RE.match(line):
            return 0.95
        m = _LSMOD_ROW_RE.match(line)
        if m is not None:
            rows += 1
            relevant |= bool(m.group(4)) or any(n in m.group(1) for n in _RDMA_GPU_NAMES)
        elif "lsmod" in line:
            command = True
    if rows and command:
        return 0.9
    if command and not rows and _query_of(text) is not None:
        return 0.6  # an empty lsmod | grep: the module is not loaded
    if rows >= 2 and relevant and rows >= 0.8 * nonblank:
        return 0.6
    if rows >= 2 and relevant and rows == nonblank - 1:
        return 0.55  # two lsmod rows and one line of something else pasted with them
    return 0.0


def _query_of(line: str) -> str | None:
    """The pattern of an ``lsmod | grep`` / ``grep ... /proc/modules`` command, else None."""
    m = _GREP_FILE_RE.search(line) or _GREP_CMD_RE.search(line)
    return m.group("pat") if m is not None else None


def _int(raw: str) -> int | None:
    value = int(raw)
    return value if value >= 0 else None


def _users(raw: str | None) -> tuple[str, ...]:
    if not raw or raw == "-":
        return ()
    return tuple(u for u in raw.split(",") if u)


@register(
    "proc-modules",
    summary="cat /proc/modules, lsmod [| grep nvidia_peermem]",
    detect=_detect,
    refs=("host.gdr",),
)
def parse_kernel_modules(text: str) -> ParseResult:
    """Parse /proc/modules and lsmod listings; never raises."""
    res = ParseResult("proc-modules")
    pending: KernelModule | None = None
    """A /proc/modules row that ended before its address: joined with an address-only line."""
    pending_text = ""
    query: ModuleQuery | None = None
    """The last ``lsmod | grep`` command, until a row answers it or the next command."""

    def close_query() -> None:
        nonlocal query
        if query is not None and not query.found:
            res.records.append(query)
        query = None

    for no, raw in enumerate(text.splitlines(), 1):
        line = (_QUOTE_RE.sub("", raw) if raw[:1] == ">" else raw).strip()
        if not line:
            continue
        m = _PROC_RE.match(line)
        if m is not None:
            if pending is not None:
                res.warn(pending.line, "line ends before the module address (cut?)", pending_text)
                pending = None
            users = m.group(4)
            if users != "-" and not users.endswith(","):
                res.warn(no, "used-by list of /proc/modules must end with ',' or be '-'", line)
                continue
            count = m.group(3)
            rec = KernelModule(
                line=no,
                name=m.group(1),
                size=int(m.group(2)),
                refcount=None if count == "-" else _int(count),
                used_by=_users(users),
                state=m.group(5),
                taint=m.group(7) or None,
            )
            res.records.append(rec)
            if m.group(6) is None and m.group(7) is None:
                pending, pending_text = rec, line
            continue
        a = _ADDR_RE.match(line)
        if a is not None and pending is not None:
            pending.end_line = no
            pending.taint = a.group(2) or None
            pending = None
            continue
        if _LSMOD_HEADER_RE.match(line):
            continue
        r = _LSMOD_ROW_RE.match(line)
        if r is not None:
            if query is not None:
                query.found = True
            res.records.append(
                KernelModule(
                    line=no,
                    name=r.group(1),
                    size=int(r.group(2)),
                    refcount=_int(r.group(3)),
                    used_by=_users(r.group(4)),
                    state=None,
                    taint=None,
                )
            )
            continue
        if _COMMAND_RE.search(line):
            close_query()
            pat = _query_of(line)
            if pat is not None:
                query = ModuleQuery(line=no, pattern=pat)
            continue  # the prompt and command that produced the listing
        if _PROMPT_ONLY_RE.match(line):
            close_query()  # an empty prompt after the command: the query printed nothing
            continue
        res.warn(no, "not a /proc/modules or lsmod line", line)
    if pending is not None:
        res.warn(pending.line, "line ends before the module address (cut?)", pending_text)
    close_query()
    res.records.sort(key=lambda r: r.line)
    return res
