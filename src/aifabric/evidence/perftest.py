"""perftest benchmarks: ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_atomic_bw``,
``ib_write_lat``, ``ib_read_lat``, ``ib_send_lat``, ``ib_atomic_lat``, ``raw_ethernet_bw`` (both
server and client side).

What one run prints, and what this parser makes of it:

* an optional ``* Waiting for client to connect... *`` banner (server side: ``role='server'``);
* the title between dash rulers (``RDMA_Write BW Test``, ``Send Latency Test``, ``RDMA_Write
  Bidirectional BW Test``, ``Atomic CMP_AND_SWAP BW Test``, ``RDMA_Write Post List BW Test``) and
  the parameter block, one or two ``Key : value`` cells per line (``Dual-port``, ``Number of qps``,
  ``Transport type``, ``Connection type``, ``Using SRQ``, ``TX depth``, ``CQ Moderation``, ``Mtu :
  4096[B]``, ``Link type``, ``GID index``, ``Max inline data``, ``rdma_cm QPs``, ``Data ex.
  method``, ...) → :class:`PerftestParams`;
* ``local address: LID 0000 QPN 0x0108 PSN ... [OUT ...] [RKey ... VAddr ...]`` and ``remote
  address:`` lines, each optionally followed by ``GID: 00:00:...:255:255:10:00:00:01`` (decimal
  bytes) → :class:`PerftestAddress` (one per QP and side);
* the results table, its columns read from its header: bandwidth ``#bytes #iterations BW
  peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]`` (``[Gb/sec]`` with ``--report_gbits``) →
  :class:`PerftestBwRow`; latency ``#bytes #iterations t_min[usec] t_max[usec] t_typical[usec]
  t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]`` (only ``t_avg`` in
  duration mode) → :class:`PerftestLatRow`;
  Extra columns (``BW Port1[..]`` of dual-port runs, ``CPU_Util[%]`` of ``--cpu_util``, ``tps
  average`` of duration-mode latency, ``#sl`` of QoS runs) are kept in the row's ``extra``;
* notices perftest prints in between (``Conflicting CPU frequency values detected``, ``Requested
  mtu is higher than active mtu``, ``WARNING: BW peak won't be measured``, ``Device not
  recognized to implement inline feature``) → :class:`PerftestNotice`;
* errors (``Couldn't connect to HOST:18515``, ``Unable to open file descriptor for socket
  connection``, ``ethernet_read_keys: Couldn't read remote address``, ``Failed to exchange data
  between server and clients``, ``Completion with error``, ``Couldn't get context for the
  device``...) → :class:`PerftestNotice` with ``code='error'``: a run that failed is evidence
  too, and a capture holding only such lines is still detected as perftest.

Between the parameter block and the results table perftest prints addresses, and GPU or raw
Ethernet runs add their own lines (``MAC attached``, CUDA/ROCm buffer messages, ``Connected:``
timestamps); lines there that are none of the above are skipped, not warned about, so a paste
with prose between two runs parses cleanly.

Units. perftest's ``MB/sec`` is MiB/s: ``print_report_bw()`` in ``src/perftest_resources.c``
divides by ``format_factor = (report_fmt == MBS) ? 0x100000 : 125000000``, i.e. 2^20 bytes/s for
MB/sec and 10^9 bit/s for Gb/sec (https://github.com/linux-rdma/perftest). Rows therefore carry
both ``*_gbps`` (Gb/s) and ``*_GBps`` (decimal GB/s) computed from the exact factor, and the raw
cell in the unit printed. Latencies are in microseconds (``_us``).

Several runs may follow each other in one capture (a loop of clients, a script log); every record
carries ``run`` (0-based) so consumers can group them. Seed refs: S23 (per-link baselines),
S20 (bandwidth far below line rate), S11 (``Mtu`` is the RDMA MTU).

Sources: perftest README and ``man perftest`` (https://github.com/linux-rdma/perftest), the real
captures under ``tests/fixtures/evidence/perftest/``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = [
    "PerftestAddress",
    "PerftestBwRow",
    "PerftestLatRow",
    "PerftestNotice",
    "PerftestParams",
    "parse_perftest",
]

MIB = 1 << 20
"""Bytes per perftest ``MB`` (MiB)."""


@dataclass(slots=True, kw_only=True)
class PerftestParams(Record):
    """The title and parameter block of one run."""

    record_type: ClassVar[str] = "perftest_params"

    run: int
    test: str
    """The title as printed, e.g. ``RDMA_Write BW Test``."""
    verb: str | None = None
    """``write``, ``read``, ``send``, ``atomic``, ``raw_ethernet``."""
    measure: str | None = None
    """``bw`` or ``lat``."""
    bidirectional: bool = False
    role: str | None = None
    """``server`` when the waiting-for-client banner was seen, else ``client`` once a remote
    address was printed, else None."""
    device: str | None = None
    dual_port: bool | None = None
    num_qps: int | None = None
    transport_type: str | None = None
    connection_type: str | None = None
    """``RC``, ``UC``, ``UD``, ``XRC``, ``DC``."""
    using_srq: bool | None = None
    tx_depth: int | None = None
    rx_depth: int | None = None
    cq_moderation: int | None = None
    post_list: int | None = None
    mtu_bytes: int | None = None
    """RDMA MTU of the QPs (256..4096)."""
    link_type: str | None = None
    """``IB`` or ``Ethernet`` (RoCE)."""
    gid_index: int | None = None
    max_inline_bytes: int | None = None
    outstanding_reads: int | None = None
    rdma_cm: bool | None = None
    data_exchange: str | None = None
    pcie_relax_order: str | None = None
    gpu_memory: str | None = None
    """``CUDA`` / ``ROCm`` when the run used GPU memory (``Use ROCm memory : ON``)."""
    params: dict[str, str] = field(default_factory=dict)
    """Every ``Key : value`` cell as printed, including those modelled above."""


@dataclass(slots=True, kw_only=True)
class PerftestAddress(Record):
    """A ``local address:`` / ``remote address:`` line (with its ``GID:`` line)."""

    record_type: ClassVar[str] = "perftest_address"

    run: int
    side: str
    """``local`` or ``remote``."""
    lid: int | None = None
    qpn: int | None = None
    psn: int | None = None
    rkey: int | None = None
    vaddr: int | None = None
    gid: str | None = None
    """Normalised to 8 hex groups (perftest prints 16 decimal bytes)."""
    gid_ipv4: str | None = None
    """The IPv4 address of an IPv4-mapped (RoCE v2) GID."""


@dataclass(slots=True, kw_only=True)
class PerftestBwRow(Record):
    """One row of a bandwidth results table."""

    record_type: ClassVar[str] = "perftest_bw"

    run: int
    size_bytes: int
    iterations: int
    bw_peak_gbps: float | None
    bw_avg_gbps: float | None
    bw_peak_GBps: float | None
    bw_avg_GBps: float | None
    msg_rate_mpps: float | None
    unit: str
    """The unit printed: ``MB/sec`` (MiB/s) or ``Gb/sec``."""
    bw_peak_raw: float | None
    bw_avg_raw: float | None
    extra: dict[str, float] = field(default_factory=dict)
    """Other columns as headed (``BW Port1[Gb/sec]``, ``CPU_Util[%]``, ``#sl``)."""


@dataclass(slots=True, kw_only=True)
class PerftestLatRow(Record):
    """One row of a latency results table (microseconds)."""

    record_type: ClassVar[str] = "perftest_lat"

    run: int
    size_bytes: int
    iterations: int
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None
    extra: dict[str, float] = field(default_factory=dict)
    """Other columns as headed (``tps average`` of duration mode)."""


@dataclass(slots=True, kw_only=True)
class PerftestNotice(Record):
    """A notice perftest printed: CPU frequency, MTU clamp, peak not measured, inline off."""

    record_type: ClassVar[str] = "perftest_notice"

    run: int
    code: str
    """``cpu_freq``, ``mtu``, ``no_peak``, ``inline``, ``ud_msg_size`` (UD messages clamped to
    the MTU), ``error``."""
    text: str


_RULER_RE = re.compile(r"^\s*-{20,}\s*$")
_TITLE_RE = re.compile(r"^\s*(?P<title>[A-Za-z_][\w ]*?\b(?:BW|Latency|Lat)\s+Test)\s*$")
# parameter cells ("Number of qps   : 1		Transport type : IB") are split by _param_cells
_NON_KEY_CHAR_RE = re.compile(r"[^A-Za-z0-9 .*/_-]")
_NON_BLANK_RE = re.compile(r"\S")
_BLANK_RE = re.compile(r"\s")
_ADDR_RE = re.compile(r"^\s*(local|remote) address:\s*(.*)$")
_ADDR_FIELD_RE = re.compile(r"\b(LID|QPN|PSN|OUT|RKey|VAddr)\s+(0x[0-9A-Fa-f]+|[0-9A-Fa-f]+)")
_GID_LINE_RE = re.compile(r"^\s*GID:\s*((?:\d{1,3}:){15}\d{1,3})\s*$")
_HEADER_RE = re.compile(r"^\s*#bytes\s+#?iterations")
# A header cell: "#bytes", "BW peak[MB/sec]", "MsgRate Port1[Mpps]", "99.9% percentile[usec]",
# "tps average". The regex reads every run of words separated by single blanks whole (possessive),
# with its "[unit]" when one follows; _header_columns keeps those with a unit and "tps average".
# (A lazy word list before "\[" restarted at every word of a long run: quadratic.)
_COL_RE = re.compile(
    r"#\w+|(?:(?<!\d)\d++(?:\.\d++)?%\s++)?[A-Za-z_][\w.]*+(?:\s[A-Za-z_][\w.]*+)*+"
    r"(?:\[[^\][]*\])?"
)
# possessive runs: "*" runs and blank runs are each read once (two ``\*+`` split a run every way)
_BANNER_RE = re.compile(
    r"^\s*+(?:\*\*++|\*++\s*+(?:Waiting for client to connect\.*+)?\s*+\*++)\s*+$"
)
_NOTICES = (
    ("Conflicting CPU frequency", "cpu_freq"),
    ("Requested mtu is higher than active mtu", "mtu"),
    ("BW peak won't be measured", "no_peak"),
    ("inline feature", "inline"),
    ("tests with inline messages", "inline"),
    ("Max msg size in UD is MTU", "ud_msg_size"),
)
# error lines of perftest (src/perftest_communication.c, perftest_resources.c, *_bw.c, *_lat.c)
_ERROR_RE = re.compile(
    r"Couldn't connect to \S+|Unable to open file descriptor|Unable to init the socket"
    r"|ethernet_read_keys|ethernet_write_keys|Unable to (?:read|write) to socket"
    r"|Failed to exchange data|Completion with error|Couldn't get context|Couldn't create QP"
    r"|Failed to create QP|Couldn't allocate MR|Couldn't create CQ|Couldn't post send"
    r"|Couldn't post recv|No IB devices found|IB device \S+ not found|Unable to find the Infiniband"
    r"|Failed to modify QP|Failed status \d+|Problems with warm up|Couldn't listen to port"
    r"|Couldn't bind|Failed to (?:init|alloc|register|create|connect)|Failed to find GID"
    r"|Test with ibv_wr\* API is not supported|is not supported for this device"
    r"|Couldn't create IB resources|Parser function exited with Error"
)
# markers only perftest prints, enough to recognise a run that failed before its banner
_ERROR_ONLY_RE = re.compile(
    r"Unable to open file descriptor for socket connection|Unable to init the socket connection"
    r"|ethernet_read_keys: Couldn't read|Failed to exchange data between server and clients"
    r"|Couldn't connect to \S+:185\d\d\b|^ ?Couldn't create IB resources$"
    r"|^ ?Parser function exited with Error$|^ ?Max msg size in UD is MTU \d+$",
    re.MULTILINE,
)
_SKIP_PREFIXES = (
    "Waiting for client rdma_cm QP to connect",
    "Please run the same command",
    "Run the same command",
    "Disabling dynamic polling",
    "Changing to this MTU",
)
_PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")


_SETTING_KEY_RE = re.compile(
    r"^[ \t]*(Number of qps|Transport type|Connection type|Using SRQ|PCIe relax order"
    r"|ibv_wr\* API|TX depth|RX depth|CQ Moderation|Mtu|Link type|GID index|Max inline data"
    r"|rdma_cm QPs|Data ex\. method|Post List|Outstand reads)[ \t]*: ",
    re.MULTILINE,
)
"""Keys of perftest's settings block (``perftest_parameters.c`` ``ctx_print_test_info``)."""


def _detect_perftest(text: str) -> float:
    if "#bytes" in text and (
        _HEADER_RE.search(text) is not None or re.search(r"#bytes\s+#iterations", text)
    ):
        return 0.95
    head = text[:100000]
    if "Dual-port" not in head:
        # the settings block from its middle (the test title and "Dual-port" cut off)
        if "depth" not in head and "Link type" not in head and "GID index" not in head:
            return 0.0
        keys = {m.group(1) for m in _SETTING_KEY_RE.finditer(head)}
        return 0.85 if len(keys) >= 3 else 0.0
    if " Test" in head and re.search(r"(?m)^\s*\S[\w ]*?(?:BW|Latency) Test\s*$", head):
        return 0.95
    if "Number of qps" in head:
        return 0.9
    return 0.0


def _detect_perftest_any(text: str) -> float:
    score = _detect_perftest(text)
    if (
        score == 0.0
        and ("Unable to" in text or "Couldn't" in text or "Failed to exchange" in text
             or "Parser function" in text or "Max msg size in UD" in text)
        and _ERROR_ONLY_RE.search(text[:100000]) is not None
    ):
        return 0.9
    return score


def _bool(value: str) -> bool | None:
    v = value.strip().upper()
    if v == "ON":
        return True
    if v == "OFF":
        return False
    return None


def _lead_int(value: str) -> int | None:
    m = re.match(r"\s*(\d+)", value)
    return int(m.group(1)) if m else None


def _apply_param(p: PerftestParams, key: str, value: str) -> None:
    p.params[key] = value
    k = key.lower()
    if k == "device":
        p.device = value
    elif k == "dual-port":
        p.dual_port = _bool(value)
    elif k == "number of qps":
        p.num_qps = _lead_int(value)
    elif k == "transport type":
        p.transport_type = value
    elif k == "connection type":
        p.connection_type = value
    elif k == "using srq":
        p.using_srq = _bool(value)
    elif k == "tx depth":
        p.tx_depth = _lead_int(value)
    elif k == "rx depth":
        p.rx_depth = _lead_int(value)
    elif k == "cq moderation":
        p.cq_moderation = _lead_int(value)
    elif k == "post list":
        p.post_list = _lead_int(value)
    elif k == "mtu":
        p.mtu_bytes = _lead_int(value)
    elif k == "link type":
        p.link_type = value
    elif k == "gid index":
        p.gid_index = _lead_int(value)
    elif k == "max inline data":
        p.max_inline_bytes = _lead_int(value)
    elif k == "outstand reads":
        p.outstanding_reads = _lead_int(value)
    elif k == "rdma_cm qps":
        p.rdma_cm = _bool(value)
    elif k == "data ex. method":
        p.data_exchange = value
    elif k == "pcie relax order":
        p.pcie_relax_order = value
    else:
        gm = re.fullmatch(r"use (\w+) memory", k)
        if gm is not None and value.upper() == "ON":
            p.gpu_memory = key.split()[1]


def _title_params(title: str, run: int, lineno: int) -> PerftestParams:
    low = title.lower()
    verb = None
    for name, key in (
        ("rdma_write", "write"),
        ("rdma_read", "read"),
        ("send", "send"),
        ("atomic", "atomic"),
        ("raw ethernet", "raw_ethernet"),
        ("raw_ethernet", "raw_ethernet"),
    ):
        if name in low:
            verb = key
            break
    measure = "lat" if "latency" in low or low.endswith("lat test") else "bw"
    return PerftestParams(
        line=lineno,
        run=run,
        test=title,
        verb=verb,
        measure=measure,
        bidirectional="bidirectional" in low,
    )


def _decimal_gid(text: str) -> tuple[str, str | None]:
    b = [int(x) for x in text.split(":")]
    groups = ":".join(f"{b[i]:02x}{b[i + 1]:02x}" for i in range(0, 16, 2))
    ipv4 = None
    if all(x == 0 for x in b[:10]) and b[10] == 255 and b[11] == 255:
        ipv4 = ".".join(str(x) for x in b[12:])
    return groups, ipv4


def _iterations(cell: dict[str, float], vals: list[float]) -> int:
    it = cell.get("#iterations", cell.get("iterations"))
    return int(it if it is not None else vals[1])


def _header_columns(raw: str) -> list[str]:
    """The column names of a results header line, in order."""
    return [
        c for c in _COL_RE.findall(raw) if c[0] == "#" or c[-1] == "]" or c == "tps average"
    ]


def _param_cells(line: str) -> list[tuple[str, str]]:
    """The ``Key : value`` cells of a parameter line, two or more to a line in perftest's layout
    (``" Number of qps   : 1\t\tTransport type : IB"``), as (key, value) with the key's trailing
    blanks dropped.

    A key is a letter, then letters, digits, spaces and ``.*/_-``, then blanks and a colon. A
    value runs from the first non-blank after the colon to the run of blanks that is followed by
    the next key, or to the end of the line without its trailing blanks (so a value may hold
    blanks and colons: ``GID : fe80::1``, ``Link type : Ethernet over IB``).

    One pass over the line, O(length): each run of key characters and each blank run is looked
    up once (memoised), where the regex this replaces (a lazy value with a key lookahead) was
    cubic on a long line of blanks or of short words.
    """
    n = len(line)
    run_lo = run_hi = colon = -1  # the last run of key characters looked up, and its colon

    def key_colon(q: int) -> int:
        """The colon ending a key that starts at ``q``, or -1 (no key starts there)."""
        nonlocal run_lo, run_hi, colon
        ch = line[q]
        if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
            return -1
        if not run_lo <= q + 1 <= run_hi:
            m = _NON_KEY_CHAR_RE.search(line, q + 1)
            run_lo, run_hi = q + 1, m.start() if m is not None else n
            b = _NON_BLANK_RE.search(line, run_hi)  # blanks other than spaces before the colon
            colon = b.start() if b is not None and b.group() == ":" else -1
        return colon

    cells: list[tuple[str, str]] = []
    i = 0
    while i < n:
        c = key_colon(i)
        if c < 0:
            i += 1
            continue
        v = _NON_BLANK_RE.search(line, c + 1)
        if v is None:
            break  # a colon with nothing after it; nothing later can hold a cell either
        key = line[i] + line[i + 1 : run_hi].rstrip(" ")
        e = n
        b = _BLANK_RE.search(line, v.start() + 1)
        while b is not None:
            q = _NON_BLANK_RE.search(line, b.start())
            if q is None or key_colon(q.start()) >= 0:
                e = b.start()
                break
            b = _BLANK_RE.search(line, q.start() + 1)
        cells.append((key, line[v.start() : e]))
        i = e
    return cells


def _bw_row(run: int, lineno: int, cols: list[str], vals: list[float], unit: str) -> PerftestBwRow:
    cell = dict(zip(cols, vals, strict=False))
    peak = next((v for c, v in cell.items() if c.startswith("BW peak")), None)
    avg = next((v for c, v in cell.items() if c.startswith("BW average")), None)
    known = ("#bytes", "#iterations", "iterations", "MsgRate[Mpps]")
    extra = {
        c: v
        for c, v in cell.items()
        if c not in known and not c.startswith(("BW peak", "BW average"))
    }
    factor = 1.0 if unit == "Gb/sec" else MIB * 8 / 1e9
    peak_g = None if peak is None else peak * factor
    avg_g = None if avg is None else avg * factor
    return PerftestBwRow(
        line=lineno,
        run=run,
        size_bytes=int(vals[0]),
        iterations=_iterations(cell, vals),
        bw_peak_gbps=peak_g,
        bw_avg_gbps=avg_g,
        bw_peak_GBps=None if peak_g is None else peak_g / 8,
        bw_avg_GBps=None if avg_g is None else avg_g / 8,
        msg_rate_mpps=cell.get("MsgRate[Mpps]"),
        unit=unit,
        bw_peak_raw=peak,
        bw_avg_raw=avg,
        extra=extra,
    )


_LAT_FIELDS = {
    "t_min[usec]": "t_min_us",
    "t_max[usec]": "t_max_us",
    "t_typical[usec]": "t_typical_us",
    "t_avg[usec]": "t_avg_us",
    "t_stdev[usec]": "t_stdev_us",
    "99% percentile[usec]": "p99_us",
    "99.9% percentile[usec]": "p999_us",
}


def _lat_row(run: int, lineno: int, cols: list[str], vals: list[float]) -> PerftestLatRow:
    cell = dict(zip(cols, vals, strict=False))
    row = PerftestLatRow(
        line=lineno, run=run, size_bytes=int(vals[0]), iterations=_iterations(cell, vals)
    )
    for c, v in cell.items():
        attr = _LAT_FIELDS.get(c)
        if attr is not None:
            setattr(row, attr, v)
        elif c not in ("#bytes", "#iterations", "iterations"):
            row.extra[c] = v
    return row


@register(
    "perftest",
    summary="ib_{write,read,send,atomic}_{bw,lat}, raw_ethernet_bw (server or client side)",
    detect=_detect_perftest_any,
    refs=("S23", "S20", "S11"),
)
def parse_perftest(text: str) -> ParseResult:
    """perftest output → params, addresses, bandwidth/latency rows and notices."""
    res = ParseResult("perftest")
    run = -1
    params: PerftestParams | None = None
    server_banner = False
    cols: list[str] | None = None
    unit = "MB/sec"
    table_line = 0
    table_rows = 0
    last_addr: PerftestAddress | None = None
    in_block = False  # between a title and the end of its results table

    def close_table(lineno: int) -> None:
        nonlocal cols
        if cols is not None and table_rows == 0:
            res.warn(lineno, "results table has a header but no rows (truncated?)")
        cols = None

    # markdown bold a user put around a figure ("**5544.28**")
    for lineno, raw in enumerate(text.replace("**", "").splitlines(), 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if _RULER_RE.match(raw):
            if cols is not None:
                close_table(lineno)
                in_block = False
            elif params is not None and params.params:
                in_block = False  # the ruler that closes the parameter block
            continue
        if _BANNER_RE.match(raw):
            if "Waiting for client" in raw:
                server_banner = True
            continue
        tm = _TITLE_RE.match(raw)
        if tm is not None and ":" not in raw:
            close_table(lineno)
            run += 1
            params = _title_params(tm.group("title"), run, lineno)
            if server_banner:
                params.role = "server"
            server_banner = False
            res.records.append(params)
            in_block = True
            last_addr = None
            continue
        notice = next((code for needle, code in _NOTICES if needle in stripped), None)
        if notice is None and _ERROR_RE.search(stripped) is not None:
            notice = "error"
        if notice is not None and not _HEADER_RE.match(raw) and "Mtu" not in raw:
            res.records.append(
                PerftestNotice(line=lineno, run=max(run, 0), code=notice, text=stripped)
            )
            continue
        if stripped.startswith(_SKIP_PREFIXES):
            continue
        if _HEADER_RE.match(raw):
            close_table(lineno)
            cols = _header_columns(raw)
            unit = "Gb/sec" if "Gb/sec" in raw else "MB/sec"
            table_line, table_rows = lineno, 0
            run = max(run, 0)
            in_block = True
            continue
        if cols is not None:
            parts = stripped.replace("\\", " ").split()
            try:
                vals = [float(x) for x in parts]
            except ValueError:
                vals = []
            if vals and not all(math.isfinite(v) for v in vals):
                res.warn(lineno, "a results row with a non-finite or overflowing number", raw)
                continue
            if len(vals) < 3 or len(vals) > len(cols):
                if _PROMPT_RE.match(raw):
                    close_table(lineno)
                    in_block = False
                    continue
                res.warn(lineno, f"expected a results row of {len(cols)} numbers", raw)
                continue
            if any(c.startswith("BW") for c in cols):
                res.records.append(_bw_row(max(run, 0), lineno, cols, vals, unit))
            else:
                res.records.append(_lat_row(max(run, 0), lineno, cols, vals))
            table_rows += 1
            continue
        am = _ADDR_RE.match(raw)
        if am is not None:
            fields = {k: int(v, 16) for k, v in _ADDR_FIELD_RE.findall(am.group(2))}
            last_addr = PerftestAddress(
                line=lineno,
                run=max(run, 0),
                side=am.group(1),
                lid=fields.get("LID"),
                qpn=fields.get("QPN"),
                psn=fields.get("PSN"),
                rkey=fields.get("RKey"),
                vaddr=fields.get("VAddr"),
            )
            res.records.append(last_addr)
            if am.group(1) == "remote" and params is not None and params.role is None:
                params.role = "client"
            continue
        gm = _GID_LINE_RE.match(raw)
        if gm is not None:
            if last_addr is not None:
                last_addr.gid, last_addr.gid_ipv4 = _decimal_gid(gm.group(1))
                last_addr.end_line = lineno
            continue
        if _PROMPT_RE.match(raw):
            in_block = False
            continue
        if params is not None and in_block:
            cells = _param_cells(raw)
            if cells:
                for key, value in cells:
                    _apply_param(params, key.strip(), value.strip())
                params.end_line = lineno
                continue
            res.warn(lineno, "expected a 'Key : value' parameter line", raw)
    if cols is not None:
        if table_rows == 0:
            res.warn(table_line, "capture ends at the results table header: no rows (truncated?)")
        else:
            res.warn(
                table_line,
                f"capture ends inside the results table after {table_rows} row(s): the closing "
                "ruler is missing (truncated?)",
            )
    return res
