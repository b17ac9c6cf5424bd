"""nccl-tests output (``all_reduce_perf``, ``all_gather_perf``, ``alltoall_perf``, ...): the
per-size bandwidth table, its header and its summary, as typed records.

(Over 800 lines because one state machine, ``_Parser``, reads every text layout nccl-tests has
printed since 2017 together with the launcher prefixes and interleaved ranks users paste, and
its cases depend on each other (a header announces the columns the rows are read by); the
``-J`` JSON reader at the end shares the records and is the seam to split along if the module
grows further.)

Input: what the NVIDIA nccl-tests binaries print on stdout (``all_reduce_perf -b 8 -e 8G -f 2
-g 8``, under ``mpirun``/``srun`` or alone), or the JSON file written with ``-J FILE.json``
(nccl-tests 2.17+). Seed: S23 keeps the bus bandwidth per message size as the baseline of a link;
S20 uses a low busbw as the symptom of ECMP imbalance or loss; S1 explains what busbw means.

Format variants handled (from the nccl-tests history in ``src/common.cu`` / ``src/util.cu`` of
https://github.com/NVIDIA/nccl-tests and the captures under tests/fixtures/evidence/nccl-tests):

* 2017-2018: ``bytes N type op time algbw busbw res`` with time in ms (converted to µs);
* 2019-2021: per-collective leading columns (``redop`` for reductions, ``root`` for rooted ones,
  neither for all_gather/alltoall, where the redop cell is blank), an ``error`` column holding
  the maximum error as a float (``2e-07``), device lines ``#   Rank  0 Pid 123 on host ...``;
* 2021+: unified ``size count type redop root`` columns and ``#wrong`` (count of wrong
  elements, printed with ``%g`` so large counts read ``1.2e+06``), device lines with ``Group``,
  bus ids ``[0x07]`` or ``[0009:01:00]``;
* 2.17+: ``# nccl-tests version 2.17.9 nccl-headers=22902 nccl-library=22902``,
  ``# Collective test starting: NAME``, ``... unalign: 0``, ``# Collective test concluded``,
  optional per-iteration columns (``i_min i_max i_p99 i_cv%``) and a timestamp column;
* ``N/A`` cells (validation disabled with ``-c 0``, in-place columns that do not apply);
* launcher prefixes on every line, also stacked and indented (pasted in Markdown lists):
  OpenMPI ``--tag-output`` ``[1,0]<stdout>:`` (with ``--timestamp-output``'s ctime date before
  it), Slurm ``--label`` ``0: ``, MPICH/Intel MPI ``[0] ``, torchrun ``--tee`` ``[default0]:``,
  SkyPilot/Ray ``(head, rank=0, pid=3808) ``, ``kubectl logs --prefix``
  ``[pod/NAME/CONTAINER] ``, pdsh/clush/dsh ``host: ``, and timestamps (``kubectl logs
  --timestamps`` / ``docker logs -t`` RFC 3339, ``[2024-05-01 10:00:00] ``, ``ts``'s
  ``May 01 10:00:00``); the rank and host they name are kept on the rows (``rank``, ``host``)
  and on the header (``launcher_rank``, ``launcher_host``); rank tags glued inside a row
  (``-1[0]``) when the stdout of several ranks interleaves;
* several processes that each print a whole test on prefixed lines (pdsh/clush running a
  single-node test on every host, or ranks of a build without ``MPI=1`` under ``srun -l``):
  the lines are sorted out by prefix, one test per host or rank;
* tables pasted as Markdown (``| 8 | 2 | float | ... |``, ``|---|`` rules skipped), or with
  their leading spaces stripped;
* NCCL INFO/WARN lines and ``NCCL version 2.x.y+cudaX`` interleaved anywhere;
* several tests in one file (each header starts a test; rows carry the ``test`` index);
* several independent single-rank runs interleaved (nccl-tests built without ``MPI=1`` or
  started without mpirun): repeated ``# nThread`` headers, rank 0 printed by several processes,
  rows from several launcher ranks, or sizes that restart; one warning says so;
* pastes that lost the leading ``#`` (Markdown headings: nccl-tests issues 37, 249) or whose
  runs of spaces were collapsed (``#Rank 0 Group 0 Pid 1 on node device 0 [0000:16:00]``);
* runs that abort: ``Test CUDA failure common.cu:986 'invalid device ordinal'`` / ``# error:``
  lines go to the header's ``failure``; a new command line after a header ends that test;
* a truncated last row (fewer value cells than the header announces): kept, with a warning;
* the ``-J`` JSON document (``config``, ``devices``, ``results`` with ``out_of_place`` /
  ``in_place`` objects, ``out_of_bounds``, ``average_bus_bandwidth``), format of
  ``jsonOutputInit``/``writeBenchmarkLine*``/``writeResultFooter`` in ``src/util.cu``.

Sources: https://github.com/NVIDIA/nccl-tests (README, doc/PERFORMANCE.md for algbw/busbw,
src/util.cu for the JSON keys), https://github.com/NVIDIA/nccl-tests/issues/107 (interleaved
single-rank runs), https://github.com/NVIDIA/nccl-tests/issues/78 (old alltoall, blank redop),
https://github.com/NVIDIA/nccl-tests/issues/82 (broadcast, ``N/A`` error cells).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record, finite_float
from aifabric.evidence.registry import register
from aifabric.inputs import loads_json

__all__ = [
    "NcclTestsDevice",
    "NcclTestsHeader",
    "NcclTestsRow",
    "NcclTestsSummary",
    "busbw_by_size",
    "detect",
    "parse",
]

# --------------------------------------------------------------------------------------------
# records


@dataclass(slots=True, kw_only=True)
class NcclTestsDevice:
    """One ``#  Rank  3 Group  0 Pid 1234 on host device  3 [0x07] NVIDIA H100`` line."""

    rank: int
    host: str
    """As printed; empty when the machine had no hostname (``on        device  0``)."""
    device: int
    bus_id: str | None
    """As printed: ``0x07`` (bus number, before 2.13) or ``0009:01:00`` (domain:bus:device)."""
    gpu: str
    pid: int | None = None
    group: int | None = None
    line: int = 0


@dataclass(slots=True, kw_only=True)
class NcclTestsHeader(Record):
    """What one test run says about itself before its table (one per test in the file)."""

    record_type: ClassVar[str] = "header"

    test: int
    """0-based index of the test in the file; rows and summaries carry the same index."""
    collective: str | None = None
    """``all_reduce``, ``alltoall``, ... from the binary name; ``None`` when not printed."""
    binary: str | None = None
    """The program name as printed (``all_reduce_perf_mpi``) or seen in a command line."""
    nccl_tests_version: str | None = None
    nccl_headers_code: int | None = None
    nccl_library_code: int | None = None
    nccl_version: str | None = None
    """``2.29.2`` from ``NCCL version 2.29.2+cuda12.9`` or from the library code ``22902``."""
    n_threads: int | None = None
    n_gpus: int | None = None
    """GPUs per process (``-g``)."""
    min_bytes: int | None = None
    max_bytes: int | None = None
    step_factor: int | None = None
    step_bytes: int | None = None
    warmup_iters: int | None = None
    iters: int | None = None
    agg_iters: int | None = None
    validation: bool | None = None
    graph: int | None = None
    unalign: int | None = None
    blocking: bool = False
    ranks: int = 0
    """Number of device lines (one per rank; an excerpt may show fewer than the job had)."""
    highest_rank: int | None = None
    nodes: int = 0
    """Distinct hosts among the device lines."""
    hosts: list[str] = field(default_factory=list)
    devices: list[NcclTestsDevice] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    """The column names of the table header line, as printed (``size``, ..., ``#wrong``)."""
    check_column: str | None = None
    """``#wrong`` (count of wrong elements) or ``error`` (max error, old format)."""
    time_unit: str = "us"
    """Unit the table printed time in (``ms`` before 2019); row fields are always µs."""
    independent_runs: int = 1
    """> 1 when several single-rank runs were interleaved (built without MPI=1)."""
    failure: str | None = None
    """Why the run aborted: the first ``Test [CUDA|NCCL] failure FILE:LINE 'reason'`` it printed
    (``NCCL failure common.cu:1279 'unhandled system error'``), else its ``# error: ...`` line or
    the ``errors`` list of the ``-J`` file (``ncclGetLastError()``, src/util.cu writeErrors)."""
    launcher_rank: int | None = None
    """Rank named by the launcher prefix of the line that started this test (``[1,0]<stdout>:``
    → 0, ``srun -l``'s ``3: `` → 3, torchrun's ``[default2]:`` → 2), when prefixed."""
    launcher_host: str | None = None
    """Host or node named by that prefix (pdsh ``node001: ``, ``kubectl logs --prefix``'s pod,
    SkyPilot/Ray's ``(head, rank=0, pid=1)`` → ``head``), when prefixed."""

    @property
    def single_node(self) -> bool:
        """Every rank of the run is listed and all are on one host: device lines ``0..N-1``
        with one host name (or none printed, as the single-process tests of NCCL 1 did), and at
        least the ``nThread x nGpus`` ranks one process drives (fewer: an excerpt)."""
        per_process = (self.n_threads or 1) * (self.n_gpus or 1)
        return (
            self.ranks > 0
            and self.nodes <= 1
            and self.highest_rank is not None
            and self.ranks == self.highest_rank + 1
            and self.ranks >= per_process
            and self.independent_runs == 1
        )


@dataclass(slots=True, kw_only=True)
class NcclTestsRow(Record):
    """One message size: out-of-place (``oop_``) and in-place (``ip_``) time and bandwidths.

    ``*_wrong`` is the count of wrong elements (``#wrong``, 2021+); ``*_error`` the maximum
    error of the old ``error`` column. Cells printed ``N/A`` are ``None``.
    """

    record_type: ClassVar[str] = "row"

    test: int
    size_bytes: int
    count: int
    """Elements per rank buffer (the ``count`` column)."""
    data_type: str
    """``float``, ``int8``, ``bfloat16``... (the ``type`` column; ``type`` names the record)."""
    redop: str | None = None
    root: int | None = None
    oop_time_us: float | None = None
    oop_algbw_GBps: float | None = None
    oop_busbw_GBps: float | None = None
    oop_wrong: int | None = None
    oop_error: float | None = None
    ip_time_us: float | None = None
    ip_algbw_GBps: float | None = None
    ip_busbw_GBps: float | None = None
    ip_wrong: int | None = None
    ip_error: float | None = None
    rank: int | None = None
    """Launcher rank of the line (``[1,3]<stdout>:`` → 3), when prefixed."""
    host: str | None = None
    """Host or node named by the line's prefix (pdsh ``node001: `` → ``node001``), when any."""

    @property
    def busbw_GBps(self) -> float | None:
        """The out-of-place bus bandwidth, or the in-place one when that is all there is."""
        return self.oop_busbw_GBps if self.oop_busbw_GBps is not None else self.ip_busbw_GBps


@dataclass(slots=True, kw_only=True)
class NcclTestsSummary(Record):
    """``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth : 123.4`` of one test."""

    record_type: ClassVar[str] = "summary"

    test: int
    avg_busbw_GBps: float | None = None
    """Mean of the busbw of all rows (both places), as nccl-tests computes it."""
    out_of_bounds: int | None = None
    ok: bool | None = None
    """``False`` when wrong values were found (out of bounds > 0) or the ``-G`` check failed."""
    avg_busbw_check: str | None = None
    """``OK``/``FAILED`` when run with a bandwidth check (``--check_avg_bw``), else ``None``."""


# --------------------------------------------------------------------------------------------
# regexes

_VERSION_RE = re.compile(
    r"nccl-tests version (?P<v>\S+)(?: \([0-9a-f]+\))?"
    r"(?: nccl-headers=(?P<h>\d+))?(?: nccl-library=(?P<l>\d+))?"
)
_STARTING_RE = re.compile(r"Collective test (?:starting|concluded): *(?P<name>\S+)")
_DEVICE_RE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?(?:Pid\s+(?P<pid>\d+)\s+)?"
    r"(?:on\s+(?:(?P<host>\S+)\s+)?|uses\s+)device\s+(?P<dev>\d+)\s*(?:\[(?P<bus>[^\]]*)\]\s*)?(?P<gpu>.*)"
)
_PARAM_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("n_threads", re.compile(r"nThread (\d+)")),
    ("n_gpus", re.compile(r"nGpus (\d+)")),
    ("min_bytes", re.compile(r"minBytes (\d+)")),
    ("max_bytes", re.compile(r"maxBytes (\d+)")),
    ("warmup_iters", re.compile(r"warmup iters: (\d+)")),
    ("iters", re.compile(r"(?<!warmup )(?<!agg )iters: (\d+)")),
    ("agg_iters", re.compile(r"agg iters: (\d+)")),
    ("validation", re.compile(r"validation: (\d+)")),
    ("graph", re.compile(r"graph: (\d+)")),
    ("unalign", re.compile(r"unalign: (\d+)")),
)
_STEP_RE = re.compile(r"step: (\d+)\((factor|bytes)\)")
_OOB_RE = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")
_AVG_RE = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?")
_NCCL_VERSION_RE = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_BINARY_RE = re.compile(r"\b([a-z][a-z_]*?)_perf(?:_mpi)?\b")
_GLUED_TAG_RE = re.compile(r"\[\d{1,6}(?:,\d{1,6})?\](?:<std(?:out|err)>:)?")
_DATE_RE = re.compile(r"\d{4}-\d\d-\d\d")
_CLOCK_RE = re.compile(r"\d\d:\d\d:\d\d")
_INT_RE = re.compile(r"^-?\d+$")
_FAILURE_RE = re.compile(r"Test (?:(?P<what>[A-Za-z]+) )?failure (?P<where>\S+:\d+)(?P<why> .*)?$")
_NA = frozenset({"N/A", "n/a", "NA", "-", "nan", "NaN"})

_DETECT_RE = re.compile(r"#\s*Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s")
_DETECT_BARE_DEVICE_RE = re.compile(
    r"^[ \t]*+Rank[ \t]++\d++[ \t]++(?:Group[ \t]++\d++[ \t]++)?Pid[ \t]++\d++[ \t]++on[ \t]",
    re.MULTILINE,
)
"""A device line whose ``#`` a Markdown renderer took (:func:`_bare_comment`)."""
_DETECT_ROW_RE = re.compile(
    r"^[^\n]{0,40}?\b\d+[ \t]+\d+[ \t]+(?:float|half|bfloat16|double|int8|uint8|int32|uint32"
    r"|int64|uint64|f8e4m3|f8e5m2|fp8_e4m3|fp8_e5m2)[ \t]+(?:(?:sum|prod|max|min|avg|none)[ \t]+)?"
    r"(?:-?\d+[ \t]+)?[\d.]+[ \t]+[\d.]+[ \t]+[\d.]+[ \t]",
    re.MULTILINE,
)
_ROW_TYPES = (" float ", " half ", " bfloat16 ", " double ", " int8 ", " uint8 ", " int32 ",
              " uint32 ", " int64 ", " uint64 ", " f8e4m3 ", " f8e5m2 ")  # fmt: skip
"""A result row (``size count type [redop] [root] time algbw busbw ...``, nccl-tests
``src/common.cu``): rows without the table's header (an excerpt, the ``#`` lines lost) are
still nccl-tests."""

_INTERLEAVED_MSG = (
    "{n} independent single-rank runs interleaved: nccl-tests was built without MPI=1 or "
    "launched without mpirun"
)


def detect(text: str) -> float:
    """0.95 on nccl-tests table/summary/header markers, 0.9 on device lines, 0.85 on a bare
    column header (``size count ... algbw busbw``); else 0. Substring tests only: launcher
    prefixes in front of the lines do not change the score."""
    try:
        if "# Avg bus bandwidth" in text or "Collective test starting:" in text:
            return 0.95
        if "out-of-place" in text and "in-place" in text:
            return 0.95
        if "nccl-tests version" in text:
            return 0.95
        head = text.lstrip()[:1]
        if head == "{" and ('"average_bus_bandwidth"' in text or '"bus_bw"' in text):
            return 0.95
        if "# nThread " in text and "minBytes" in text:
            return 0.9
        if "(B)" in text and "(elements)" in text:
            return 0.9
        if "Pid" in text and _DETECT_RE.search(text):
            return 0.9
        if "Using devices" in text and "Pid" in text and _DETECT_BARE_DEVICE_RE.search(text):
            return 0.85  # the device list with its "#" lost
        if "busbw" in text and "algbw" in text and ("count" in text or "bytes" in text):
            return 0.85  # the column header alone (a Markdown table, or "#" and units lost)
        if "Avg bus bandwidth" in text and _AVG_RE.search(text):
            return 0.9  # the summary with its "#" lost
        if any(t in text for t in _ROW_TYPES):
            rows = _DETECT_ROW_RE.finditer(text, 0, 65536)
            if next(rows, None) is not None and next(rows, None) is not None:
                return 0.85  # result rows without their header (an excerpt)
    except Exception:
        return 0.0
    return 0.0


# --------------------------------------------------------------------------------------------
# helpers


def _collective(binary: str) -> str:
    name = binary.rsplit("/", 1)[-1]
    for suffix in ("_mpi", "_perf"):
        name = name.removesuffix(suffix)
    return name


def _nccl_version_from_code(code: int) -> str | None:
    """``22902`` → ``2.29.2`` (codes ≥ 2.9: X*10000+Y*100+Z); ``2708`` → ``2.7.8``."""
    if code >= 20900:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    if code >= 2000:
        return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"
    return None


def _looks_like_error(tok: str) -> bool:
    """An old ``error`` cell (``2e-07``, ``0e+00``, ``1e+00``) rather than a ``#wrong`` count
    (``0``, ``18134``, ``1.2e+06``: ``%g`` of a count never has a negative exponent)."""
    return "e-" in tok or tok.endswith("e+00") or ("." in tok and "e" not in tok)


def _num(tok: str) -> float | None:
    if tok in _NA:
        return None
    return finite_float(tok)  # nan, inf, 1e999: ValueError, the row is warned about


def _wrong(tok: str) -> int | None:
    if tok in _NA:
        return None
    return int(finite_float(tok))


def _strip_trailing_timestamp(s: str) -> str:
    """``... 0  2025-10-14 10:22:01`` → ``... 0``: a date and time printed after a row (split from
    the right, not a regex search, so that a long line costs one pass)."""
    parts = s.rstrip().rsplit(None, 2)
    if len(parts) == 3 and _DATE_RE.fullmatch(parts[1]) and _CLOCK_RE.fullmatch(parts[2]):
        return parts[0]
    return s


# --------------------------------------------------------------------------------------------
# line prefixes added by launchers, log collectors and pastes
#
# Every pattern is anchored at the start of the line, bounded, and free of nested quantifiers:
# peeling costs a few hundred character comparisons at most, whatever the length of the line.

# OpenMPI --tag-output "[1,0]<stdout>:" (jobid,rank; orte/prrte iof), "<stddiag>" too
_TAG_RE = re.compile(r"\[\d{1,10},(\d{1,7})\]<(?:stdout|stderr|stddiag)>:")
# MPICH/Hydra -prepend-rank and Intel MPI -l: "[0] "
_BRACKET_RANK_RE = re.compile(r"\[(\d{1,7})\] ")
# torchrun --tee/--redirects: "[default0]:" ({role}{local_rank}, torch.distributed.elastic)
_TORCHRUN_RE = re.compile(r"\[([A-Za-z_][A-Za-z_-]{0,39})(\d{1,7})\]:")
# kubectl logs --prefix: "[pod/NAME/CONTAINER] "
_KUBECTL_RE = re.compile(r"\[pod/([^/\]\s]{1,253})/[^\]\s]{1,253}\]")
# Slurm srun --label (-l): "0: ", right-aligned to the widest task id (leading spaces go first)
_SRUN_RE = re.compile(r"(\d{1,7}):(?: |$)")
# SkyPilot/Ray job output: "(head, rank=0, pid=3808) ", "(worker1, rank=1, pid=2769, ip=...) "
_PAREN_RE = re.compile(r"\(([^()]{1,300})\)(?: |$)")
# pdsh/clush/dsh and most log collectors: "node001: ", "10.0.0.1: ", "launcher-x7k2p: "
# (used with .match; the lookbehind keeps a search from rescanning a long name at each character)
_HOST_RE = re.compile(r"(?<![A-Za-z0-9._-])([A-Za-z0-9][A-Za-z0-9._-]{0,252}): ")
# RFC 3339 / ISO 8601 (kubectl logs --timestamps, docker logs -t, CI logs), bracketed or not
_ISO_TS_RE = re.compile(
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]?(?=[\s\[]|$)"
)
# ctime() of OpenMPI --timestamp-output ("Thu Mar 14 15:40:48 2019[1,0]<stdout>:"), and the
# syslog-like "Mar 14 15:40:48 " of moreutils ts
_CTIME_TS_RE = re.compile(
    r"(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2} [ 0-3]\d \d\d:\d\d:\d\d(?: \d{4})?(?=[\s\[]|$)"
)
_MD_RULE_CHARS = frozenset("|-: ")


def _host_prefix_ok(rest: str) -> bool:
    """Only a line whose text after ``name: `` is nccl-tests output loses its ``name: ``: a
    ``#`` line, a row (size and count), an OpenMPI tag or ``NCCL version``. ``Warning: ...``,
    ``Error: 2 ...`` or ``Time: 12:00`` keep it (and stay prose)."""
    r = rest.lstrip()
    if not r or r[0] == "#" or r.startswith("NCCL version"):
        return True
    if r[0] == "[":
        return _TAG_RE.match(r) is not None
    if _SRUN_RE.match(r) is not None:
        return True  # "host:  3: ..." (srun --label under pdsh)
    toks = r.split(None, 2)
    return toks[0].isdecimal() and (len(toks) == 1 or toks[1].isdecimal())


def _peel(line: str) -> tuple[str, int | None, str | None]:
    """Remove the prefixes stacked in front of one line: (text, rank, host).

    ``(head, rank=0, pid=3808) [1,0]<stdout>:#  Rank ...`` → (``#  Rank ...``, 0, ``head``).
    The innermost rank wins (the MPI rank inside a node label); the outermost host wins.
    """
    s = line.strip()
    rank: int | None = None
    host: str | None = None
    for _ in range(8):
        if not s:
            break
        c = s[0]
        m: re.Match[str] | None = None
        if c == "[":
            m = _TAG_RE.match(s)
            if m is not None:
                rank = int(m.group(1))
            elif (m := _KUBECTL_RE.match(s)) is not None:
                host = host or m.group(1)
            elif (m := _TORCHRUN_RE.match(s)) is not None:
                rank = int(m.group(2))
            elif (m := _BRACKET_RANK_RE.match(s)) is not None:
                rank = int(m.group(1))
            else:
                m = _ISO_TS_RE.match(s)
        elif c == "(":
            m = _PAREN_RE.match(s)
            if m is not None:
                inner = m.group(1)
                if "pid=" not in inner:  # "(base) user@host:~$" is a conda prompt, not a prefix
                    break
                name = inner.split(",", 1)[0].strip()
                if name and "=" not in name:
                    host = host or name
        elif c.isdecimal():
            m = _ISO_TS_RE.match(s) or _SRUN_RE.match(s)
            if m is not None and m.re is _SRUN_RE:
                rank = int(m.group(1))
            elif m is None:
                m = _HOST_RE.match(s)  # pdsh by address: "10.0.0.1: "
                if m is not None and (not _host_prefix_ok(s[m.end() :]) or m.group(1).isdecimal()):
                    m = None
                if m is not None:
                    host = host or m.group(1)
        elif c.isalpha():
            m = _CTIME_TS_RE.match(s)
            if m is None:
                m = _HOST_RE.match(s)
                if m is not None and not _host_prefix_ok(s[m.end() :]):
                    m = None
                if m is not None:
                    host = host or m.group(1)
        if m is None:
            break
        s = s[m.end() :].lstrip()
    return s, rank, host


def _demarkdown(s: str) -> str | None:
    """A line of a Markdown table (``| 8 | 2 | float | sum | ... |``) → its cells separated by
    spaces; ``None`` for a rule line (``|---|:--|``)."""
    if _MD_RULE_CHARS.issuperset(s):
        return None
    return s.replace("|", " ").strip()


def _is_source_line(s: str) -> bool:
    """A line only the process running a test prints: its parameter/version line, the column
    header, or a row (size and count). Used to tell how many processes printed tests."""
    if s.startswith("#"):
        b = s[1:].lstrip()
        return b.startswith(("nThread", "nccl-tests version", "Collective test starting")) or (
            b.startswith(("size", "bytes")) and "busbw" in b
        )
    toks = s.split(None, 2)
    return len(toks) == 3 and _INT_RE.match(toks[0]) is not None and toks[1].isdecimal()


@dataclass(slots=True)
class _Layout:
    """What the column header line said about the table."""

    lead: int | None = None  # number of columns before the first time column (3..5)
    has_redop: bool | None = None
    has_root: bool | None = None
    group: int = 4  # value cells per place (4, or 8 with per-iteration columns)
    check: str | None = None  # "#wrong" or "error"
    time_unit: str = "us"


def _layout_from_header(names: list[str]) -> _Layout:
    lay = _Layout()
    times = [i for i, n in enumerate(names) if n in {"time", "cputime"}]
    if times:
        lay.lead = times[0]
        if len(times) > 1:
            lay.group = times[1] - times[0]
    lead = names[: lay.lead] if lay.lead is not None else names
    lay.has_redop = "redop" in lead or "op" in lead
    lay.has_root = "root" in lead
    if "#wrong" in names:
        lay.check = "#wrong"
    elif "error" in names or "res" in names:
        lay.check = "error"
    if "bytes" in names and "res" in names:
        lay.time_unit = "ms"  # 2017 format printed deltaSec*1e3
    return lay


@dataclass(slots=True)
class _TestState:
    header: NcclTestsHeader
    layout: _Layout = field(default_factory=_Layout)
    rows: int = 0
    params_lines: int = 0
    table_headers: int = 0
    rank0_pids: set[tuple[str, int | None]] = field(default_factory=set)
    row_ranks: set[int] = field(default_factory=set)
    row_hosts: set[str] = field(default_factory=set)
    size_counts: Counter[tuple[int, str, str | None, int | None]] = field(default_factory=Counter)
    last_size: dict[tuple[str, str | None, int | None], int] = field(default_factory=dict)
    restarts: int = 0
    summary: NcclTestsSummary | None = None


_Source = tuple[str | None, int | None]
"""(host, rank) of a line's launcher prefix: which process printed it."""


class _Parser:
    def __init__(self, demux: bool = False) -> None:
        self.result = ParseResult(kind="nccl-tests")
        self.tests: list[_TestState] = []
        self.cur: _TestState | None = None
        self.pending_nccl_version: str | None = None
        self.pending_binary: str | None = None
        self.demux = demux
        """One test state per source (host, rank): several processes printed whole tests."""
        self.source: _Source = (None, None)
        self.line_host: str | None = None
        self.line_rank: int | None = None
        self.open: dict[_Source, _TestState | None] = {}
        self.last: dict[_Source, _TestState] = {}

    # ---- sources (demultiplexed mode)

    def switch(self, source: _Source) -> None:
        """Make ``source``'s test current (only changes anything in demultiplexed mode)."""
        if not self.demux or source == self.source:
            return
        self.open[self.source] = self.cur
        self.cur = self.open.get(source)
        self.source = source

    def latest(self) -> _TestState | None:
        """The current test of this source, else its last finished one."""
        if self.cur is not None:
            return self.cur
        if self.demux:
            return self.last.get(self.source)
        return self.tests[-1] if self.tests else None

    def finish_all(self) -> None:
        self.finish_test()
        for source, st in self.open.items():
            if st is not None and source != self.source:
                self.cur = st
                self.finish_test()

    # ---- test bookkeeping

    def new_test(self, lineno: int) -> _TestState:
        self.finish_test()
        hdr = NcclTestsHeader(
            line=lineno,
            test=len(self.tests),
            launcher_rank=self.line_rank,
            launcher_host=self.line_host,
        )
        if self.pending_binary is not None:
            hdr.binary = self.pending_binary
            hdr.collective = _collective(self.pending_binary)
            if not self.demux:  # one command line started every host's test
                self.pending_binary = None
        if self.pending_nccl_version is not None:
            hdr.nccl_version = self.pending_nccl_version
        st = _TestState(hdr)
        self.tests.append(st)
        self.last[self.source] = st
        self.result.records.append(hdr)
        self.cur = st
        return st

    def test_for_header(self, lineno: int) -> _TestState:
        """The test a header line belongs to: the current one unless it already has rows."""
        if self.cur is None or self.cur.rows > 0 or self.cur.summary is not None:
            return self.new_test(lineno)
        return self.cur

    def finish_test(self) -> None:
        st = self.cur
        if st is None:
            return
        hdr = st.header
        runs = max(
            st.params_lines,
            st.table_headers,
            len(st.rank0_pids),
            len(st.row_ranks),
            len(st.row_hosts),
            1,
        )
        repeats = max(st.size_counts.values()) if st.size_counts else 1
        runs = max(runs, repeats, 2 if st.restarts else 1)
        if runs > 1:
            hdr.independent_runs = runs
            self.result.warn(hdr.line, _INTERLEAVED_MSG.format(n=runs))
        hdr.ranks = len(hdr.devices)
        hosts: list[str] = []
        for d in hdr.devices:
            if d.host not in hosts:
                hosts.append(d.host)
        hdr.hosts = hosts
        hdr.nodes = len(hosts)
        if hdr.devices:
            hdr.highest_rank = max(d.rank for d in hdr.devices)
        if hdr.collective is None and hdr.binary is not None:
            hdr.collective = _collective(hdr.binary)
        if hdr.nccl_version is None and hdr.nccl_library_code is not None:
            hdr.nccl_version = _nccl_version_from_code(hdr.nccl_library_code)
        self.cur = None

    def touch(self, lineno: int) -> None:
        st = self.cur
        if st is not None and st.rows == 0:
            st.header.end_line = lineno

    # ---- comment lines

    def comment(self, lineno: int, s: str, raw: str) -> None:
        body = s[1:].strip()
        if not body:
            return
        if body.startswith("nccl-tests version"):
            st = self.test_for_header(lineno)
            if st.header.nccl_tests_version is not None:
                st = self.new_test(lineno)
            m = _VERSION_RE.search(body)
            if m:
                st.header.nccl_tests_version = m.group("v")
                if m.group("h"):
                    st.header.nccl_headers_code = int(m.group("h"))
                if m.group("l"):
                    st.header.nccl_library_code = int(m.group("l"))
            self.touch(lineno)
            return
        if body.startswith("Collective test starting"):
            m = _STARTING_RE.search(body)
            st = self.test_for_header(lineno)
            if st.header.binary is not None and st.params_lines > 0:
                st = self.new_test(lineno)
            if m:
                st.header.binary = m.group("name")
                st.header.collective = _collective(m.group("name"))
            self.touch(lineno)
            return
        if body.startswith("Collective test concluded"):
            if self.cur is not None:
                self.finish_test()
            return
        if body.startswith("nThread"):
            st = self.test_for_header(lineno)
            st.params_lines += 1
            if st.params_lines == 1:
                self.params(st.header, body)
            self.touch(lineno)
            return
        if body.startswith("Rank") and ("device" in body):
            m = _DEVICE_RE.match("#" + body)
            if m is None:
                self.result.warn(lineno, "expected a device line '#  Rank N ... on HOST'", raw)
                return
            st = self.test_for_header(lineno)
            pid = int(m.group("pid")) if m.group("pid") else None
            dev = NcclTestsDevice(
                rank=int(m.group("rank")),
                group=int(m.group("group")) if m.group("group") else None,
                pid=pid,
                host=m.group("host") or "",  # empty hostname: "on        device  0"
                device=int(m.group("dev")),
                bus_id=m.group("bus"),
                gpu=m.group("gpu").strip(),
                line=lineno,
            )
            st.header.devices.append(dev)
            if dev.rank == 0:
                st.rank0_pids.add((dev.host, pid))
            self.touch(lineno)
            return
        if body.startswith("Blocking Enabled"):
            st = self.test_for_header(lineno)
            st.header.blocking = True
            return
        if body.startswith(("size", "bytes")) and ("busbw" in body or "algbw" in body):
            # a Markdown re-typing of the header may carry the units: "size (B)", "time (us)"
            names = [n for n in body.split() if not n.startswith("(")]
            st = self.test_for_header(lineno)
            st.table_headers += 1
            st.layout = _layout_from_header(names)
            st.header.columns = names
            st.header.check_column = st.layout.check
            st.header.time_unit = st.layout.time_unit
            self.touch(lineno)
            return
        if body.startswith("(B)") or body.startswith("(bytes)"):
            if self.cur is not None and "(ms)" in body:
                self.cur.layout.time_unit = "ms"
                self.cur.header.time_unit = "ms"
            return
        if body.startswith("Out of bounds values"):
            m = _OOB_RE.search(body)
            if m is None:
                self.result.warn(lineno, "expected '# Out of bounds values : N OK|FAILED'", raw)
                return
            summ = self.summary(lineno)
            summ.out_of_bounds = int(m.group(1))
            summ.ok = (summ.ok is not False) and summ.out_of_bounds == 0
            return
        if body.startswith("Avg bus bandwidth"):
            m = _AVG_RE.search(body)
            try:
                value = finite_float(m.group(1)) if m else None
            except ValueError:
                value = None
            if m is None or value is None:
                self.result.warn(lineno, "expected '# Avg bus bandwidth : <GB/s>'", raw)
                return
            summ = self.summary(lineno)
            summ.avg_busbw_GBps = value
            summ.avg_busbw_check = m.group(2)
            if m.group(2) == "FAILED":
                summ.ok = False
            return
        if body.startswith("error:"):
            owner = self.latest()
            reason = body[6:].strip()
            if owner is not None and reason and owner.header.failure is None:
                owner.header.failure = reason  # ncclGetLastError() printed by writeErrors()
            return
        # "# Using devices", "#   out-of-place   in-place", "# Writing JSON ...", "# GPU memory"

    def params(self, hdr: NcclTestsHeader, body: str) -> None:
        for name, rx in _PARAM_RES:
            m = rx.search(body)
            if m:
                v = int(m.group(1))
                setattr(hdr, name, bool(v) if name == "validation" else v)
        m = _STEP_RE.search(body)
        if m:
            if m.group(2) == "factor":
                hdr.step_factor = int(m.group(1))
            else:
                hdr.step_bytes = int(m.group(1))

    def summary(self, lineno: int) -> NcclTestsSummary:
        st = self.latest()
        if st is None:
            st = self.new_test(lineno)
        if st.summary is None:
            st.summary = NcclTestsSummary(line=lineno, test=st.header.test)
            self.result.records.append(st.summary)
        else:
            st.summary.end_line = lineno
        return st.summary

    def nccl_version(self, s: str) -> None:
        """``NCCL version 2.25.1+cuda12.4``: the library the tests that lack one ran with."""
        m = _NCCL_VERSION_RE.search(s)
        if m:
            self.pending_nccl_version = m.group(1)
            for st in self.tests:
                if st.header.nccl_version is None:
                    st.header.nccl_version = m.group(1)

    # ---- rows

    def in_table(self) -> bool:
        """Inside a table: after its column header or first row, before its summary."""
        st = self.cur
        return st is not None and st.summary is None and (st.rows > 0 or st.table_headers > 0)

    def row(self, lineno: int, s: str, raw: str, rank: int | None, last: bool) -> None:
        if "[" in s:
            if _GLUED_TAG_RE.search(s) is None:
                if self.in_table():
                    self.result.warn(lineno, "expected a table row of numbers", raw)
                return
            s = _GLUED_TAG_RE.sub(" ", s)
        if ":" in s:
            s = _strip_trailing_timestamp(s)
        toks = s.split()
        if not toks or not _INT_RE.match(toks[0]):
            # "10.0.0.1 slots=8", "2024-05-01T..." log lines: irrelevant outside a table
            if self.in_table():
                self.result.warn(lineno, "expected a table row starting with size and count", raw)
            return
        st = self.cur
        if st is None or st.summary is not None:
            st = self.new_test(lineno)
            st.header.end_line = None
        lay = st.layout
        try:
            size = int(toks[0])
            count = int(toks[1])
        except (ValueError, IndexError):
            if last and _INT_RE.match(toks[0]):
                self.result.warn(lineno, "truncated last row: output cut off after the size", raw)
            else:
                self.result.warn(lineno, "expected a table row starting with size and count", raw)
            return
        if len(toks) < 3 or _INT_RE.match(toks[2]) or toks[2][0].isdecimal():
            self.result.warn(lineno, "expected the data type after size and count", raw)
            return
        dtype = toks[2]
        i = 3
        redop: str | None = None
        if i < len(toks) and toks[i][0].isalpha() and toks[i] not in _NA:
            redop = toks[i]
            i += 1
        rest = toks[i:]
        root: int | None = None
        g = lay.group
        wants_root = lay.has_root or (lay.has_root is None and len(rest) % 4 == 1)
        if wants_root and rest and _INT_RE.match(rest[0]):
            root = int(rest[0])
            rest = rest[1:]
        if lay.check is None and len(rest) == 16:
            g = 8  # per-iteration columns, header not in the excerpt
        if len(rest) > 2 * g:
            self.result.warn(lineno, f"expected {2 * g} value cells, found {len(rest)}", raw)
            return
        scale = 1000.0 if lay.time_unit == "ms" else 1.0
        checks = rest[3:4] + rest[g + 3 : g + 4]
        error_col = lay.check == "error" or (
            lay.check is None and any(_looks_like_error(t) for t in checks)
        )
        row = NcclTestsRow(
            line=lineno,
            test=st.header.test,
            size_bytes=size,
            count=count,
            data_type=dtype,
            redop=redop,
            root=root,
            rank=rank,
            host=self.line_host,
        )
        try:
            for place, cells in (("oop", rest[0:4]), ("ip", rest[g : g + 4])):
                if not cells:
                    continue
                t = _num(cells[0])
                setattr(row, f"{place}_time_us", t * scale if t is not None else None)
                if len(cells) > 1:
                    setattr(row, f"{place}_algbw_GBps", _num(cells[1]))
                if len(cells) > 2:
                    setattr(row, f"{place}_busbw_GBps", _num(cells[2]))
                if len(cells) > 3:
                    if error_col:
                        setattr(row, f"{place}_error", _num(cells[3]))
                    else:
                        setattr(row, f"{place}_wrong", _wrong(cells[3]))
        except ValueError:
            self.result.warn(lineno, "expected numeric time/algbw/busbw cells", raw)
            return
        if len(rest) < 2 * g:
            what = "truncated last row" if last else "incomplete row"
            self.result.warn(
                lineno, f"{what}: {len(rest)} of {2 * g} value cells (output cut off?)", raw
            )
        self.result.records.append(row)
        st.rows += 1
        if rank is not None:
            st.row_ranks.add(rank)
        if self.line_host is not None:
            st.row_hosts.add(self.line_host)
        if size > 0:
            # -d all / -o all loop types and ops outside sizes: compare like with like only
            series = (dtype, redop, root)
            st.size_counts[(size, *series)] += 1
            if size < st.last_size.get(series, -1):
                st.restarts += 1
            st.last_size[series] = size


_BARE_COMMENTS = (
    "nThread ",
    "Rank ",
    "Using devices",
    "size ",
    "bytes ",
    "(B)",
    "Out of bounds values",
    "Avg bus bandwidth",
    "Blocking Enabled",
    "nccl-tests version",
    "Collective test ",
)
_BARE_FIRST = frozenset(t[0] for t in _BARE_COMMENTS)


def _bare_comment(s: str) -> bool:
    """A header/summary line whose leading ``#`` was lost: a paste outside a Markdown code block
    renders ``# nThread ...`` as a heading and the stored text keeps no ``#`` (nccl-tests issues
    37, 249; nccl issue 583). Only lines unmistakably from nccl-tests qualify."""
    if s.startswith(("size ", "bytes ")):
        return "busbw" in s
    if s.startswith("Rank "):  # "Rank 0 Pid 12 on host device 0", NCCL 1's "Rank 0 uses device 0"
        return (" on " in s or " uses " in s) and " device " in s
    if s.startswith("nThread "):
        return "nGpus" in s
    return True


_DEMUX_MSG = (
    "{n} ranks each printed a whole test: nccl-tests was built without MPI=1 or launched "
    "without mpirun; read as {n} separate tests"
)


def _parse_text(text: str) -> ParseResult:
    lines = text.split("\n")
    last_idx = len(lines)
    while last_idx > 0 and not lines[last_idx - 1].strip():
        last_idx -= 1
    peeled: list[tuple[str, int | None, str | None, bool]] = []
    printers: dict[_Source, int] = {}
    for idx in range(last_idx):
        raw = lines[idx]
        md = False
        if raw.lstrip()[:1] == "|":
            cells = _demarkdown(raw.strip())
            if cells is None:
                peeled.append(("", None, None, True))
                continue
            raw, md = cells, True
        s, rank, host = _peel(raw)
        peeled.append((s, rank, host, md))
        if s and (rank is not None or host is not None) and _is_source_line(s):
            printers.setdefault((host, rank), idx + 1)
    # several processes printed their own tests (pdsh on every host, srun -l without MPI=1)
    p = _Parser(demux=len(printers) > 1)
    if p.demux and all(h is None for h, _ in printers):
        p.result.warn(min(printers.values()), _DEMUX_MSG.format(n=len(printers)))
    for idx in range(last_idx):
        raw = lines[idx]
        lineno = idx + 1
        s, rank, host, md = peeled[idx]
        if not s:
            continue
        p.line_rank, p.line_host = rank, host
        if p.demux and (rank is not None or host is not None):
            p.switch((host, rank))
        c = s[0]
        if c == ">":  # a mail or Markdown quote ("> #  Rank 0 ...", ">> 8  2  float ...")
            s = s.lstrip("> \t")
            if not s:
                continue
            c = s[0]
        if c == "#":
            p.comment(lineno, s, raw)
            continue
        if c.isdecimal():
            if " NCCL " in s:
                if "NCCL version" in s:
                    p.nccl_version(s)
                continue
            if md and not p.in_table() and not _is_source_line(s):
                continue  # another Markdown table of numbers (a summary typed by hand)
            p.row(lineno, s, raw, rank, lineno == last_idx)
            continue
        if s.startswith("NCCL version") or " NCCL INFO NCCL version" in s:
            p.nccl_version(s)  # rank 0's line, or every rank's under NCCL_DEBUG=INFO
            continue
        if "failure " in s and p.cur is not None and p.cur.header.failure is None:
            fm = _FAILURE_RE.search(s)
            if fm is not None:
                what = f"{fm['what']} " if fm["what"] else ""
                p.cur.header.failure = f"{what}failure {fm['where']}{fm['why'] or ''}".strip()
                continue
        if c in _BARE_FIRST and s.startswith(_BARE_COMMENTS) and _bare_comment(s):
            p.comment(lineno, "#" + s, raw)
            continue
        if "_perf" in s and (
            p.cur is None
            or p.cur.rows > 0
            or p.cur.summary is not None
            or (p.cur.params_lines > 0 and " NCCL " not in s)
        ):
            m = _BINARY_RE.search(s)
            if m:
                p.pending_binary = m.group(0)
                if p.cur is not None and (p.cur.summary is not None or p.cur.rows == 0):
                    p.finish_test()  # a new command line: the previous run ended or failed
            continue
        if "_perf" in s and p.cur is not None and p.cur.header.binary is None:
            m = _BINARY_RE.search(s)
            if m:
                p.cur.header.binary = m.group(0)
    p.finish_all()
    return p.result


# --------------------------------------------------------------------------------------------
# JSON (-J FILE.json)


def _opt_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON NaN / Infinity
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str):
        try:
            return int(finite_float(v.strip()))
        except ValueError:
            return None
    return None


def _opt_float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        try:
            f = float(v)
        except OverflowError:  # an integer beyond a double
            return None
        return f if math.isfinite(f) else None
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _opt_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in {"true", "false"}:
        return v == "true"
    if isinstance(v, int):
        return bool(v)
    return None


def _parse_json(text: str) -> ParseResult:
    result = ParseResult(kind="nccl-tests")
    try:
        doc = loads_json(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        result.warn(line, f"not valid JSON ({exc.__class__.__name__}): truncated -J file?")
        return result
    if not isinstance(doc, dict):
        result.warn(1, "expected a JSON object (the nccl-tests -J document)")
        return result
    hdr = NcclTestsHeader(line=1, test=0)
    args = doc.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        hdr.binary = args[0].rsplit("/", 1)[-1]
        hdr.collective = _collective(hdr.binary)
    code = _opt_int(doc.get("nccl_version"))
    if code is not None:
        hdr.nccl_library_code = code
        hdr.nccl_version = _nccl_version_from_code(code)
    cfg = doc.get("config")
    if isinstance(cfg, dict):
        hdr.n_threads = _opt_int(cfg.get("nthreads"))
        hdr.n_gpus = _opt_int(cfg.get("ngpus"))
        hdr.min_bytes = _opt_int(cfg.get("minimum_bytes"))
        hdr.max_bytes = _opt_int(cfg.get("maximum_bytes"))
        hdr.step_factor = _opt_int(cfg.get("step_factor"))
        hdr.step_bytes = _opt_int(cfg.get("step_bytes"))
        hdr.warmup_iters = _opt_int(cfg.get("warmup_iters"))
        hdr.iters = _opt_int(cfg.get("iterations"))
        hdr.agg_iters = _opt_int(cfg.get("aggregated_iterations"))
        val = _opt_int(cfg.get("validation"))
        hdr.validation = bool(val) if val is not None else None
        hdr.graph = _opt_int(cfg.get("graph"))
        hdr.blocking = bool(_opt_bool(cfg.get("blocking_collectives")))
        devs = cfg.get("devices")
        if isinstance(devs, list):
            for d in devs:
                if not isinstance(d, dict):
                    continue
                hdr.devices.append(
                    NcclTestsDevice(
                        rank=_opt_int(d.get("rank")) or 0,
                        group=_opt_int(d.get("group")),
                        pid=_opt_int(d.get("pid")),
                        host=str(d.get("hostname", "")),
                        device=_opt_int(d.get("device")) or 0,
                        bus_id=str(d["device_hex"]) if "device_hex" in d else None,
                        gpu=str(d.get("device_info", "")),
                    )
                )
    hosts: list[str] = []
    for d in hdr.devices:
        if d.host not in hosts:
            hosts.append(d.host)
    hdr.hosts, hdr.nodes, hdr.ranks = hosts, len(hosts), len(hdr.devices)
    if hdr.devices:
        hdr.highest_rank = max(d.rank for d in hdr.devices)
    hdr.check_column = "#wrong"
    errors = doc.get("errors")
    if isinstance(errors, list):
        hdr.failure = next((e for e in errors if isinstance(e, str) and e.strip()), None)
    result.records.append(hdr)
    results = doc.get("results")
    if isinstance(results, list):
        for n, r in enumerate(results):
            if not isinstance(r, dict) or _opt_int(r.get("size")) is None:
                result.warn(None, f"results[{n}]: expected an object with 'size'", str(r)[:200])
                continue
            row = NcclTestsRow(
                line=0,
                test=0,
                size_bytes=_opt_int(r.get("size")) or 0,
                count=_opt_int(r.get("count")) or 0,
                data_type=str(r.get("type", "")),
                redop=str(r["redop"]) if isinstance(r.get("redop"), str) else None,
                root=_opt_int(r.get("root")),
            )
            for place, key in (("oop", "out_of_place"), ("ip", "in_place")):
                cell = r.get(key)
                if not isinstance(cell, dict):
                    continue
                t = cell.get("time", cell.get("cpu_time"))
                setattr(row, f"{place}_time_us", _opt_float(t))
                setattr(row, f"{place}_algbw_GBps", _opt_float(cell.get("alg_bw")))
                setattr(row, f"{place}_busbw_GBps", _opt_float(cell.get("bus_bw")))
                setattr(row, f"{place}_wrong", _opt_int(cell.get("nwrong")))
            result.records.append(row)
    oob = doc.get("out_of_bounds")
    avg = doc.get("average_bus_bandwidth")
    if isinstance(oob, dict) or isinstance(avg, dict):
        summ = NcclTestsSummary(line=0, test=0)
        if isinstance(oob, dict):
            summ.out_of_bounds = _opt_int(oob.get("count"))
            summ.ok = _opt_bool(oob.get("okay"))
        if isinstance(avg, dict):
            summ.avg_busbw_GBps = _opt_float(avg.get("bandwidth"))
            check = avg.get("okay")
            if isinstance(check, bool) or check in {"true", "false"}:
                passed = _opt_bool(check)
                summ.avg_busbw_check = "OK" if passed else "FAILED"
                if passed is False:
                    summ.ok = False
        result.records.append(summ)
    elif "results" in doc:
        result.warn(None, "no out_of_bounds/average_bus_bandwidth: the run did not finish")
    return result


# --------------------------------------------------------------------------------------------
# entry points


@register(
    "nccl-tests",
    summary="all_reduce_perf / all_gather_perf / alltoall_perf ... (nccl-tests; -J FILE.json)",
    detect=detect,
    refs=("S23", "S20", "S1"),
)
def parse(text: str) -> ParseResult:
    """Parse nccl-tests stdout (any version) or its ``-J`` JSON file; never raises."""
    try:
        if text.lstrip()[:1] == "{":
            result = _parse_json(text)
            if result.records or "# nThread" not in text:
                return result
            # a stray "{" above a text report (a paste's first line), not a -J file: the text
            # is read, the JSON attempt noted
            text_result = _parse_text(text)
            text_result.warnings[:0] = result.warnings
            return text_result
        return _parse_text(text)
    except Exception as exc:
        result = ParseResult(kind="nccl-tests")
        result.warn(None, f"internal parser error ({exc.__class__.__name__}: {exc})")
        return result


def busbw_by_size(result: ParseResult, test: int = 0) -> dict[int, float]:
    """S23 baseline view: message size (bytes) → bus bandwidth (GB/s) of one test.

    Uses the out-of-place busbw (in-place when that is all there is); when a size appears more
    than once (zero-size warm-up lines, interleaved runs) the last value is kept.
    """
    out: dict[int, float] = {}
    for r in result.records:
        if isinstance(r, NcclTestsRow) and r.test == test:
            bw = r.busbw_GBps
            if bw is not None:
                out[r.size_bytes] = bw
    return out
