"""Shared memory on a host: ``df -h`` (every mount, /dev/shm's size and use among them) and
``ls -l /dev/shm`` (the segments in it).

NCCL's intra-node SHM transport and its proxy, PSM/PSM2, UCX, MPI and PyTorch's DataLoader put
their buffers in POSIX shared memory under ``/dev/shm``; a container runtime gives a container
its own ``/dev/shm`` of 64 MiB unless told otherwise (Docker ``--shm-size``, Kubernetes a
memory-backed ``emptyDir``), and a process that dies keeps its segments there until someone
deletes them. ``df`` and ``ls`` of that directory are what users paste to show it.

Formats:

* ``df`` (GNU coreutils ``src/df.c``): a header ``Filesystem  Size  Used Avail Use% Mounted on``
  (``-h``/``-H``), ``1K-blocks Used Available Use%`` (default, ``-k``), ``1M-blocks`` (``-m``) or
  ``Type`` after ``Filesystem`` (``-T``); then one row per mount. Sizes with ``-h`` are powers of
  1024 with a suffix (``64M``, ``1.3G``, ``0``), with ``-H`` powers of 1000; without them, blocks
  of the header's unit. A filesystem name too long for its column is printed alone and its
  numbers continue on the next line (older coreutils, ``-P`` not given).
* ``ls -l`` (coreutils ``src/ls.c`` long format): ``total N`` then ``mode links owner group size
  month day time|year name``; ``-h`` prints sizes with suffixes. Only a listing of ``/dev/shm``
  (the command line names it, or ``ls`` was run there) is read.

Records: :class:`DfMount` (``filesystem``, ``size_bytes``, ``used_bytes``, ``avail_bytes``,
``use_pct``, ``mount``) and :class:`ShmSegment` (``name``, ``size_bytes``, ``owner``, ``owner_lib``:
``nccl`` for ``nccl-XXXXXX``, ``psm`` for ``psm_*``/``psm2_*``, ``ucx`` for ``ucx_*``,
``torch`` for ``torch_*``, ``cuda`` for ``cuda.shm.*``, else None). A row whose numbers do not
parse is a warning and the rest is still read.

Detection: a df header scores 0.95; an ``ls`` command on ``/dev/shm`` with at least one long-format
row scores 0.95.

Sources: GNU coreutils ``src/df.c`` and ``src/ls.c`` (https://github.com/coreutils/coreutils,
v9.4); NCCL troubleshooting, "Docker" and "Shared memory" (https://docs.nvidia.com/deeplearning/
nccl/user-guide/docs/troubleshooting.html); Docker ``--shm-size`` (64 MB default). Seed ref: S20.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["DfMount", "ShmSegment", "parse_df_shm", "size_bytes"]


@dataclass(slots=True, kw_only=True)
class DfMount(Record):
    """One ``df`` row."""

    record_type: ClassVar[str] = "df_mount"

    filesystem: str
    size_bytes: int | None
    used_bytes: int | None
    avail_bytes: int | None
    use_pct: int | None
    """``Use%`` as printed (``-`` for a filesystem without blocks: None)."""
    mount: str


@dataclass(slots=True, kw_only=True)
class ShmSegment(Record):
    """One file of an ``ls -l /dev/shm`` listing."""

    record_type: ClassVar[str] = "shm_segment"

    name: str
    size_bytes: int | None
    owner: str | None
    owner_lib: str | None
    """Which library names its segments so: ``nccl``, ``psm``, ``ucx``, ``torch``, ``cuda``."""


_SUFFIX = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_SIZE_RE = re.compile(r"^(\d+(?:[.,]\d+)?)([KMGTPE]?)(?:i?B)?$")


def size_bytes(raw: str, unit: int = 1, si: bool = False) -> int | None:
    """``64M`` → 67108864 (``si``: powers of 1000); a bare number is ``unit``-byte blocks."""
    m = _SIZE_RE.match(raw.strip())
    if m is None:
        return None
    number = float(m.group(1).replace(",", "."))
    suffix = m.group(2)
    if not suffix:
        return int(number * unit)
    return int(number * (1000 if si else 1024) ** _SUFFIX[suffix])


_DF_HEADER_RE = re.compile(
    r"^Filesystem(?P<type>\s+Type)?\s+(?P<unit>Size|\d+[KMG]?-blocks|\d+-blocks|Inodes)\s+"
    r"(?:Used|IUsed)\s+(?:Avail|Available|IFree)\s+(?:Use%|Capacity|IUse%)\s+Mounted\s+on\s*$"
)
_DF_ROW_RE = re.compile(
    r"^(?P<fs>\S+)?\s+(?:(?P<type>\S+)\s+)?(?P<size>\S+)\s+(?P<used>\S+)\s+(?P<avail>\S+)\s+"
    r"(?P<pct>\d+%|-)\s+(?P<mount>/\S*)\s*$"
)
_LS_CMD_RE = re.compile(
    r"\bls(?:[ \t]++-[A-Za-z]++)*+[ \t]++/dev/shm/?(?:[ \t]|$)|/dev/shm[#$][ \t]*ls\b"
)
"""``ls -alht /dev/shm`` (options, then the directory), or ``ls`` at a ``...:/dev/shm#`` prompt."""
_LS_ROW_RE = re.compile(
    r"^(?P<mode>[-dlcbps][rwxsStT\-]{9}[.+@]?)\s+\d+\s+(?P<owner>\S+)\s+(?P<group>\S+)\s+"
    r"(?P<size>\d+(?:[.,]\d+)?[KMGTPE]?)\s+(?P<date>\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})"
    r"|\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s+[+\-]\d{4})?)\s+(?P<name>\S.*)$"
)
_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_DF_CMD_RE = re.compile(r"\bdf\b")
_DF_SI_RE = re.compile(r"\s-\w*H")
"""``df -H`` / ``df -hH``...: sizes in powers of 1000."""
_LIBS = (
    (re.compile(r"^nccl-"), "nccl"),
    (re.compile(r"^psm2?_"), "psm"),
    (re.compile(r"^ucx_"), "ucx"),
    (re.compile(r"^(?:torch_|__KMP_REGISTERED_LIB)"), "torch"),
    (re.compile(r"^cuda\.shm\."), "cuda"),
)


def _lib(name: str) -> str | None:
    return next((lib for rx, lib in _LIBS if rx.search(name)), None)


def _clean(raw: str) -> str:
    return _QUOTE_RE.sub("", raw) if raw[:1] == ">" else raw


def _bare_listing(text: str) -> bool:
    """Long-format rows pasted without their ``ls`` command: at least three, nearly every
    non-blank line, and one of them a communication library's segment (``nccl-Ab12Cd``)."""
    rows = segments = nonblank = 0
    for raw in text.splitlines()[:400]:
        line = _clean(raw).strip()
        if not line or line.startswith("total "):
            continue
        nonblank += 1
        m = _LS_ROW_RE.match(line)
        if m is not None:
            rows += 1
            segments += _lib(m.group("name")) in ("nccl", "psm", "ucx")
    return rows >= 3 and segments >= 1 and rows >= 0.8 * nonblank


_LS_QUICK_RE = re.compile(r"(?m)^[ \t>]*+[-dl][rwxsStT\-]{9}")
_SIZE_TOKEN = r"\d+(?:[.,]\d+)?[KMGTPE]?"
_BARE_DF_ROW_RE = re.compile(
    rf"^(?P<fs>\S+)\s+(?P<size>{_SIZE_TOKEN})\s+(?P<used>{_SIZE_TOKEN})\s+"
    rf"(?P<avail>{_SIZE_TOKEN})\s+(?P<pct>\d+%|-)\s+(?P<mount>/\S*)\s*$"
)
"""A df row without its header (``df -h | grep shm``, an excerpt): sizes with a suffix are
``-h`` (powers of 1024), bare numbers df's default 1K blocks."""


def _bare_df_listing(text: str) -> float:
    """A window of a df table without its header: at least three rows, nearly every non-blank
    line; 0.9 when one of them is a shared-memory mount (``/dev/shm``, or a container's ``shm``
    as the host lists it: ``.../containers/ID/shm``, ``.../sandboxes/ID/shm``), else 0.6."""
    if text.count("% /", 0, 65536) < 3:
        return 0.0  # cheap: every df row ends "NN% /mount"
    rows = nonblank = shm = 0
    for raw in text.splitlines()[:200]:
        line = _clean(raw).strip()
        if not line:
            continue
        nonblank += 1
        m = _BARE_DF_ROW_RE.match(line)
        if m is not None:
            rows += 1
            mount = m.group("mount").rstrip("/")
            shm += mount == "/dev/shm" or (m.group("fs") == "shm" and mount.endswith("/shm"))
    if rows < 3 or rows < 0.8 * nonblank:
        return 0.0
    return 0.9 if shm else 0.6


def _detect(text: str) -> float:
    if (
        "Filesystem" not in text
        and "/dev/shm" not in text
        and not (
            ("nccl-" in text or "psm" in text or "ucx_" in text)
            and _LS_QUICK_RE.search(text) is not None
        )
    ):
        # no df header, no /dev/shm, no listing of a library's segments: a headerless window
        # of a df table at most
        return _bare_df_listing(text)
    bare_shm_row = False
    ls_cmd = False
    for raw in text.splitlines()[:400]:
        line = _clean(raw).strip()
        if line.startswith("Filesystem") and _DF_HEADER_RE.match(line):
            return 0.95
        if "/dev/shm" in line and not bare_shm_row:
            m = _BARE_DF_ROW_RE.match(line)
            bare_shm_row = m is not None and m.group("mount").rstrip("/") == "/dev/shm"
        if _LS_CMD_RE.search(line):
            ls_cmd = True
        elif ls_cmd and _LS_ROW_RE.match(line):
            return 0.95
    if bare_shm_row:
        return 0.9
    return 0.6 if _bare_listing(text) else 0.0


def _unit(header: re.Match[str]) -> tuple[int, bool]:
    """Bytes per number of a df table and whether suffixes are powers of 1000."""
    unit = header.group("unit")
    if unit == "Size":
        return 1, False
    m = re.match(r"(\d+)([KMG]?)-blocks", unit)
    if m is None:
        return 1, False
    return int(m.group(1)) * 1024 ** _SUFFIX[m.group(2)], False


@register(
    "df-shm",
    summary="df -h (mounts: /dev/shm size and use) and ls -l /dev/shm (shared-memory segments)",
    detect=_detect,
    refs=("host.shm", "S20"),
)
def parse_df_shm(text: str) -> ParseResult:
    """Parse ``df`` tables and ``ls -l /dev/shm`` listings; never raises."""
    res = ParseResult("df-shm")
    df: tuple[int, bool, bool] | None = None
    """(unit, si, has Type column) while inside a df table."""
    pending_fs: tuple[int, str] | None = None
    in_shm_ls = _LS_CMD_RE.search(text) is None and _bare_listing(text)
    si_flag = False
    for no, raw in enumerate(text.splitlines(), 1):
        line = _clean(raw).rstrip()
        stripped = line.strip()
        if not stripped:
            df, pending_fs = None, None
            continue
        header = _DF_HEADER_RE.match(stripped)
        if header is not None:
            unit, _ = _unit(header)
            df = (unit, si_flag, header.group("type") is not None)
            in_shm_ls = False
            continue
        if _DF_CMD_RE.search(stripped) and not stripped.startswith("/"):
            si_flag = _DF_SI_RE.search(stripped) is not None
            df = None
            continue
        if _LS_CMD_RE.search(stripped):
            in_shm_ls, df = True, None
            continue
        if df is not None:
            unit, si, typed = df
            m = _DF_ROW_RE.match(stripped if pending_fs is None else " " + stripped)
            if m is None:
                if len(stripped.split()) == 1 and pending_fs is None:
                    pending_fs = (no, stripped)  # a long name; its numbers follow
                    continue
                res.warn(no, "not a df row", stripped)
                pending_fs = None
                continue
            fs = m.group("fs") or (pending_fs[1] if pending_fs else None)
            if fs is None or (typed and m.group("type") is None):
                res.warn(no, "df row without its filesystem", stripped)
                pending_fs = None
                continue
            size = size_bytes(m.group("size"), unit, si)
            used = size_bytes(m.group("used"), unit, si)
            avail = size_bytes(m.group("avail"), unit, si)
            pct = m.group("pct")
            res.records.append(
                DfMount(
                    line=pending_fs[0] if pending_fs else no,
                    end_line=no if pending_fs else None,
                    filesystem=fs,
                    size_bytes=size,
                    used_bytes=used,
                    avail_bytes=avail,
                    use_pct=int(pct[:-1]) if pct.endswith("%") else None,
                    mount=m.group("mount"),
                )
            )
            pending_fs = None
            continue
        if not in_shm_ls:
            m = _BARE_DF_ROW_RE.match(stripped)
            if m is not None:
                suffixed = not m.group("size").replace(",", ".").replace(".", "").isdecimal()
                unit = 1 if suffixed else 1024
                pct = m.group("pct")
                res.records.append(
                    DfMount(
                        line=no,
                        filesystem=m.group("fs"),
                        size_bytes=size_bytes(m.group("size"), unit, si_flag),
                        used_bytes=size_bytes(m.group("used"), unit, si_flag),
                        avail_bytes=size_bytes(m.group("avail"), unit, si_flag),
                        use_pct=int(pct[:-1]) if pct.endswith("%") else None,
                        mount=m.group("mount"),
                    )
                )
                continue
        if in_shm_ls:
            if stripped.startswith("total "):
                continue
            m = _LS_ROW_RE.match(stripped)
            if m is None:
                in_shm_ls = False  # the listing ended (the next command, prose)
                continue
            name = m.group("name").split(" -> ", 1)[0]
            if m.group("mode")[0] == "d" or name in (".", ".."):
                continue
            res.records.append(
                ShmSegment(
                    line=no,
                    name=name,
                    size_bytes=size_bytes(m.group("size")),
                    owner=m.group("owner"),
                    owner_lib=_lib(name),
                )
            )
    return res
