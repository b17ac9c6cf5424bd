"""Switch PFC counters and PFC-watchdog state (S22: PFC trigger counts are the first thing to
watch on a lossless fabric; S12: pauses on a priority that should be lossy are a misconfig).

Handled, each table found by its header so several may follow each other in one paste (shell
prompts, Markdown fences, ``Last cached time was ...`` and ``Changed polling interval to ...``
banners, the ``..`` / ``.`` elision lines of shortened pastes are skipped; a blank line between
a header and its first row is tolerated):

* SONiC ``show pfc counters`` / ``pfcstat``: ``Port Rx  PFC0 ... PFC7`` and ``Port Tx ...``
  tables (comma thousands separators, ``N/A``) → ``pfc-counters`` per port and direction;
* SONiC ``show pfc counters --history`` (``Port  Priority  RX Pause Transitions  Total RX Pause
  Time US ...``) → ``pfc-history``;
* SONiC ``show pfcwd stats`` / ``pfcwd show stats`` (``QUEUE  STATUS  STORM DETECTED/RESTORED
  TX OK/DROP ...``, queue ``Ethernet4:3``) → ``pfcwd-stats``;
* SONiC ``show pfcwd config`` (``PORT ACTION DETECTION TIME RESTORATION TIME [HISTORY]``) →
  the shared ``pfc-watchdog`` record; the polling-interval banner → a global one;
* SONiC ``show queue counters`` / ``queuestat`` (``Port  TxQ  Counter/pkts  Counter/bytes
  Drop/pkts  Drop/bytes``, and the ``--trim``, ``--voq`` (``Voq``, ``host|Ethernet0`` system
  ports) and ``show queue wredcounters`` (``WredDrp/pkts ... EcnMarked/pkts``) column sets;
  ``For namespace asic0:`` banners) → ``queue-counters``, one per port queue (``UC3``, ``MC8``,
  ``ALL0``, ``VOQ1``), every column kept by name;
* SONiC ``show priority-group drop counters`` (``Ingress PG dropped packets:``), ``show
  priority-group [persistent-]watermark headroom|shared`` and ``show queue [persistent-]watermark
  unicast|multicast`` (``Port  PG0 ... PG7`` / ``Port  UC0 ... UC7``, titled by the line above)
  → ``indexed-counters``, one per port with the title as ``stat``;
* SONiC ``show interfaces counters`` / ``portstat`` (``IFACE  STATE  RX_OK  RX_BPS  RX_UTIL
  RX_ERR  RX_DRP  RX_OVR  TX_OK ...``; the ``-a`` variant with ``RX_PPS``/``Tx_PPS`` and an
  optional ``DESC`` column that may be empty; old ``UP``/``DOWN`` and new ``U``/``D``/``X``
  states; rates like ``640.70 B/s``; ``N/A``; tab-indented or blank-line-separated pastes) →
  ``port-counters``, one per port row, every column kept by name;
* Cisco NX-OS ``show interface priority-flow-control`` (``Port  Mode Oper(VL bmap)  RxPPP
  TxPPP`` between ``=====`` rules, ``Auto Off`` rows without a bitmap, Nexus 5K/UCS FI pastes
  indented by a blog or a docstring) → ``pfc-port-totals``.

Sources: sonic-utilities ``scripts/portstat`` (``utilities_common/portstat.py``),
``scripts/pfcstat``, ``scripts/queuestat``, ``scripts/pg-drop``,
``scripts/watermarkstat``, ``pfcwd/main.py``, their tests and ``doc/Command-Reference.md``;
pastes in sonic-buildimage issues #5540, #8181, #9430 and sonic-utilities PRs #682, #1057;
Cisco Nexus 9000 QoS guide "Verifying the Priority Flow Control Configuration"; a Nexus 5K
paste in Matt Oswalt's blog (github.com/Mierdin/blog).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, finite_float
from aifabric.evidence.qos import PfcWatchdog
from aifabric.evidence.registry import register

__all__ = [
    "IndexedCounters",
    "PfcCounters",
    "PfcHistory",
    "PfcPortTotals",
    "PfcwdStats",
    "PortCounters",
    "QueueCounters",
    "parse_pfc_counters",
]


@dataclass(slots=True, kw_only=True)
class PfcCounters(Record):
    """PFC frames per priority 0..7 received (``rx``) or sent (``tx``) by one port."""

    record_type: ClassVar[str] = "pfc-counters"
    port: str
    direction: str
    frames: tuple[int | None, ...]
    """Index = priority; ``None`` where the tool printed ``N/A``."""


@dataclass(slots=True, kw_only=True)
class PfcHistory(Record):
    record_type: ClassVar[str] = "pfc-history"
    port: str
    priority: int
    rx_pause_transitions: int | None
    total_rx_pause_us: int | None
    recent_rx_pause_us: int | None
    recent_timestamp: str | None


@dataclass(slots=True, kw_only=True)
class PfcwdStats(Record):
    """PFC watchdog state of one port queue: storms detected/restored and packets let through
    (OK) or dropped while stormed, in total and during the last storm."""

    record_type: ClassVar[str] = "pfcwd-stats"
    port: str
    queue: int | None
    status: str | None
    storms_detected: int | None
    storms_restored: int | None
    tx_ok: int | None
    tx_drop: int | None
    rx_ok: int | None
    rx_drop: int | None
    tx_last_ok: int | None
    tx_last_drop: int | None
    rx_last_ok: int | None
    rx_last_drop: int | None


@dataclass(slots=True, kw_only=True)
class PfcPortTotals(Record):
    """NX-OS per-port PFC state and total pause frames (all priorities)."""

    record_type: ClassVar[str] = "pfc-port-totals"
    port: str
    mode: str
    oper: str
    vl_bitmap: str | None
    rx_pause: int | None
    tx_pause: int | None


@dataclass(slots=True, kw_only=True)
class QueueCounters(Record):
    """One egress queue of one port (SONiC ``queuestat``). ``counters`` holds every column by
    its header name (``Counter/pkts``, ``Drop/bytes``, ``EcnMarked/pkts``, ``Trim/pkts``...),
    ``None`` where the tool printed ``N/A``; the common ones are lifted into fields."""

    record_type: ClassVar[str] = "queue-counters"
    port: str
    queue: str
    """As printed: ``UC3``, ``MC8``, ``ALL0``, ``VOQ1``."""
    queue_type: str
    queue_index: int | None
    namespace: str | None = None
    tx_pkts: int | None = None
    tx_bytes: int | None = None
    drop_pkts: int | None = None
    drop_bytes: int | None = None
    wred_drop_pkts: int | None = None
    ecn_marked_pkts: int | None = None
    counters: dict[str, int | None] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class IndexedCounters(Record):
    """One port row of a ``Port  PG0 .. PG7`` / ``Port  UC0 .. UC7`` table: PG drops (S22: drops
    on a lossless PG mean headroom is short) or PG/queue watermarks (bytes)."""

    record_type: ClassVar[str] = "indexed-counters"
    port: str
    stat: str
    """The title printed above the table (``Ingress PG dropped packets``), or ``PG`` / ``UC``."""
    columns: tuple[str, ...]
    values: tuple[int | None, ...]
    namespace: str | None = None


@dataclass(slots=True, kw_only=True)
class PortCounters(Record):
    """One port row of SONiC ``show interfaces counters`` / ``portstat``: packets received and
    sent (``RX_OK``/``TX_OK``), errors, drops, overruns since the counters were last cleared,
    and the rate and utilisation of the last polling interval. ``None`` where ``N/A``."""

    record_type: ClassVar[str] = "port-counters"
    port: str
    state: str | None = None
    """As printed: ``U``/``D``/``X`` (up, oper down, admin down) or ``UP``/``DOWN`` (old)."""
    up: bool | None = None
    rx_ok: int | None = None
    rx_err: int | None = None
    rx_drp: int | None = None
    rx_ovr: int | None = None
    tx_ok: int | None = None
    tx_err: int | None = None
    tx_drp: int | None = None
    tx_ovr: int | None = None
    rx_bps: float | None = None
    """Bytes per second (portstat prints ``B/s``, ``KB/s``, ``MB/s``)."""
    tx_bps: float | None = None
    rx_util: float | None = None
    """Percent of the port speed."""
    tx_util: float | None = None
    rx_pps: float | None = None
    tx_pps: float | None = None
    description: str | None = None
    namespace: str | None = None
    counters: dict[str, int | None] = field(default_factory=dict)
    """Every packet-count column by its header name (``RX_OK``, ``TX_DRP``...)."""


_PORT_COUNTS = {
    "RX_OK": "rx_ok",
    "RX_ERR": "rx_err",
    "RX_DRP": "rx_drp",
    "RX_OVR": "rx_ovr",
    "TX_OK": "tx_ok",
    "TX_ERR": "tx_err",
    "TX_DRP": "tx_drp",
    "TX_OVR": "tx_ovr",
}
_PORT_HDR_RE = re.compile(
    r"^\s*IFACE\s+(?:DESC\s+)?(?:STATE\s+RX_(?:OK|ERR)|RX_OK\s.*\bRX_DRP\s.*\bTX_OK)\b",
    re.IGNORECASE,
)
"""``portstat`` (``show interfaces counters``) and its ``errors`` view (``show interfaces
counters errors``: RX_ERR RX_DRP RX_OVR TX_ERR TX_DRP TX_OVR only); releases before 2019
printed ``Iface`` without a ``STATE`` column and ``RX_RATE``/``TX_RATE`` for the byte rates
(told from ``intfstat``'s router-interface table, also ``Iface`` without ``STATE``, by its
``RX_DRP`` column). A header with ``STATE`` is read as far as it goes: users cut the wide table
after the receive columns."""
_RATE_UNIT_RE = re.compile(r"^[KMGT]?B/s$")
PORTSTAT_COLUMNS = [
    "IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
    "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR",
]  # fmt: skip
"""The columns ``show interfaces counters`` (sonic-utilities ``scripts/portstat``, its standard
header) prints: what a row pasted without its header is read against."""
_PORTSTAT_ROW_RE = re.compile(
    r"^\s*[A-Za-z][\w/.:-]*\s+(?:U|D|X|N/A)\s+(?:[\d,]+|N/A)\s+(?:[\d.,]+ [KMGT]?B/s|N/A)\s+"
    r"(?:[\d.]+%|N/A)\s"
)
"""A portstat row by its first cells (interface, state letter, count, rate with its unit,
utilisation): no other table prints a rate in B/s beside a state letter."""
QUEUESTAT_COLUMNS = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
"""The columns ``show queue counters`` (sonic-utilities ``scripts/queuestat``) prints by default:
what a queue row pasted without its header is read against."""
_QUEUESTAT_ROW_RE = re.compile(
    r"^\s*[A-Za-z][\w/.:|-]*\s+(?:UC|MC|ALL|VOQ)\d+(?:\s+(?:[\d,]+|N/A)){4}\s*$"
)
"""A queuestat row by its cells: a port, a unicast/multicast queue name, four counts."""
_PFCWD_ROW_RE = re.compile(
    r"^\s*[A-Za-z][\w/.-]*:\d+\s+[A-Za-z/]+(?:\s+(?:\d+|N/A)/(?:\d+|N/A)){5}\s*$"
)
"""A ``pfcwd show stats`` row by its cells: ``port:queue``, a status, five ``a/b`` pairs."""
_UNIT = {"B/s": 1.0, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12}
_UP_STATES = {"U": True, "UP": True, "D": False, "DOWN": False, "X": False}


_QUEUE_FIELDS = {
    "Counter/pkts": "tx_pkts",
    "Counter/bytes": "tx_bytes",
    "Drop/pkts": "drop_pkts",
    "Drop/bytes": "drop_bytes",
    "WredDrp/pkts": "wred_drop_pkts",
    "EcnMarked/pkts": "ecn_marked_pkts",
}
_QUEUE_HDR_RE = re.compile(r"^\s*Port\s+(TxQ|Voq)\s+\S+/\S+")
_INDEXED_HDR_RE = re.compile(
    r"^\s*(?:Port|Interface)\s+((?:PG|UC|MC|Q|ALL)\d+)(?:\s+[A-Z]+\d+)+\s*$"
)
_QNAME_RE = re.compile(r"^([A-Za-z]+)(\d+)$")
_PFC_HDR_RE = re.compile(r"^\s*Port (Rx|Tx)\s+PFC0\s+PFC1")
_NUM_RE = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)$")
_PROMPT_RE = re.compile(r"^[^\s@:]*[@:]\S*[#$]\s|^[#$]\s|^\S+# ")  # linear: first @/: fixed


def _detect(text: str) -> float:
    head = text[:200_000]
    if ("Port Rx" in head or "Port Tx" in head) and "PFC0" in head:
        return 0.95
    if "STORM DETECTED/RESTORED" in head or "RX Pause Transitions" in head:
        return 0.95
    if "DETECTION TIME" in head and "RESTORATION TIME" in head:
        return 0.95
    if "RxPPP" in head and "TxPPP" in head:
        return 0.95
    # the table-header scans run only where the header's words are present
    if _PORT_HDR_RE.search(head) or (
        ("IFACE" in head or "Iface" in head) and _DETECT_IFACE_RE.search(head)
    ):
        return 0.95
    if "Counter/pkts" in head and "TxQ" in head:
        return 0.95
    if "/pkts" in head and _DETECT_QUEUE_RE.search(head):
        return 0.95
    if "Ingress PG dropped packets" in head or "shared pool occupancy per" in head:
        return 0.95
    if "Ingress headroom per PG" in head or ("PG0" in head and _DETECT_PG_RE.search(head)):
        return 0.9
    if "B/s" in head and "%" in head:
        # rows of show interfaces counters without their header (a window, a grep)
        rows = sum(1 for ln in head.splitlines()[:400] if _PORTSTAT_ROW_RE.match(ln))
        if rows >= 2:
            return 0.9
    if "UC" in head or "MC" in head or "/" in head:
        # queuestat or pfcwd rows without their header
        lines = head.splitlines()[:400]
        rows = sum(1 for ln in lines if _QUEUESTAT_ROW_RE.match(ln) or _PFCWD_ROW_RE.match(ln))
        if rows >= 2 and rows * 2 >= sum(1 for ln in lines if ln.strip()):
            return 0.85
    return 0.0


_DETECT_IFACE_RE = re.compile(
    r"(?m)^\s*(?:IFACE|Iface)\s+(?:DESC\s+)?(?:STATE\s+RX_(?:OK|ERR)\b|RX_OK\s.*\bRX_DRP\b)"
)
_DETECT_QUEUE_RE = re.compile(r"Port\s+(?:Voq|TxQ)\s+\S+/pkts")
_DETECT_PG_RE = re.compile(r"Port\s+PG0\s+PG1\s+PG2")


def _count(cell: str) -> int | None:
    c = cell.strip()
    if c in ("N/A", "NA", "-", ""):
        return None
    if not _NUM_RE.match(c):
        raise ValueError(c)
    return int(c.replace(",", ""))


def _pair(cell: str) -> tuple[int | None, int | None]:
    a, _, b = cell.partition("/")
    return _count(a), _count(b)


@register(
    "pfc-counters",
    summary="SONiC 'show interfaces counters'/portstat, 'show pfc counters'/pfcstat, "
    "'show pfcwd stats|config', 'show queue "
    "counters|watermark', 'show priority-group drop counters|watermark'; NX-OS "
    "'show interface priority-flow-control'",
    detect=_detect,
    refs=("S12", "S20", "S22"),
)
def parse_pfc_counters(text: str) -> ParseResult:
    """Parse PFC counter and PFC watchdog tables."""
    result = ParseResult(kind="pfc-counters")
    table: str | None = None
    direction = ""
    columns: list[str] = []
    title = ""
    namespace: str | None = None
    prev = ""
    rows = 0
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if "**" in line:
            # Markdown bold a reporter put around a cell (``**2734.32 MB/s**``): no SONiC or
            # NX-OS table prints "**", so dropping it only restores the printed row
            line = line.replace("**", "")
        s = line.strip()
        last, prev = prev, s
        if not s:
            # a blank between a header and its first row is kept (NX-OS, wredcounters); port
            # tables pasted with a blank line after every line keep going
            if rows and table != "port":
                table = None
            continue
        if s.startswith("For namespace"):
            namespace = s[len("For namespace") :].strip(" :") or None
            table = None
            continue
        if _PROMPT_RE.match(s) or s.startswith(("Last cached time", "Failed to", "```")):
            table = None
            continue
        if s.endswith("Last cached time was") or re.match(r"^\S+ Last cached time was", s):
            continue
        if set(s) <= {"="}:
            continue
        if s.startswith("Changed polling interval to"):
            m = re.search(r"(?<!\d)(\d+)\s*ms", s)  # from a run's first digit: linear
            if m:
                result.records.append(
                    PfcWatchdog(line=lineno, scope="global", poll_interval_ms=float(m.group(1)))
                )
            continue
        if set(s) <= {"-", " "} or set(s) <= {"."}:
            continue
        hm = _PFC_HDR_RE.match(line)
        if hm is not None:
            table, direction = "pfc", hm.group(1).lower()
            rows = 0
            continue
        if "STORM DETECTED/RESTORED" in s:
            table = "pfcwd-stats"
            rows = 0
            continue
        if "DETECTION TIME" in s and "RESTORATION TIME" in s:
            table = "pfcwd-config"
            rows = 0
            continue
        if "RX Pause Transitions" in s:
            table = "history"
            rows = 0
            continue
        if "RxPPP" in s and "TxPPP" in s:
            table = "nxos"
            rows = 0
            continue
        if _PORT_HDR_RE.match(line):
            table, columns = "port", [c.upper() for c in s.split()]
            rows = 0
            continue
        if _QUEUE_HDR_RE.match(line):
            table, columns = "queue", s.split()
            rows = 0
            continue
        if _INDEXED_HDR_RE.match(line):
            table, columns = "indexed", s.split()
            rows = 0
            title = last.rstrip(":").strip() if last.endswith(":") else columns[1].rstrip("0")
            continue
        if table is None:
            # a row without its header, read against the tool's standard columns
            if _PORTSTAT_ROW_RE.match(line):
                table, columns = "port", list(PORTSTAT_COLUMNS)
            elif _QUEUESTAT_ROW_RE.match(line):
                table, columns = "queue", list(QUEUESTAT_COLUMNS)
            elif _PFCWD_ROW_RE.match(line):
                table = "pfcwd-stats"
            else:
                continue
            rows = 0
        rows += 1
        try:
            if table == "queue":
                _queue_row(columns, s, lineno, namespace, result)
            elif table == "port":
                _port_row(columns, s, lineno, namespace, result)
            elif table == "indexed":
                _indexed_row(columns, title, s, lineno, namespace, result)
            else:
                _row(table, direction, s, lineno, result)
        except (ValueError, IndexError):
            result.warn(lineno, f"expected a row of the {table} table", s)
    return result


def _port_cells(columns: list[str], s: str) -> list[str]:
    """Row cells: ``640.70 B/s`` joined back into one cell; an empty ``DESC`` cell restored."""
    cells: list[str] = []
    for tok in s.split():
        if cells and _RATE_UNIT_RE.match(tok):
            cells[-1] = f"{cells[-1]} {tok}"
        else:
            cells.append(tok)
    if len(cells) == len(columns) - 1 and "DESC" in columns:
        cells.insert(columns.index("DESC"), "")
    if len(cells) != len(columns):
        raise ValueError("cell count differs from the header")
    return cells


def _rate_of(row: dict[str, str], *names: str) -> float | None:
    """The first of ``names`` the header has (``RX_BPS``, or ``RX_RATE`` before 2019)."""
    return next((_rate(row[n]) for n in names if n in row), None)


def _rate(cell: str) -> float | None:
    """``640.70 B/s`` → 640.7, ``2.5 KB/s`` → 2500.0, ``318571.42/s`` → 318571.42,
    ``0.00%`` → 0.0; ``N/A`` → None."""
    c = cell.strip()
    if c in ("N/A", "NA", "-", ""):
        return None
    num, _, unit = c.partition(" ")
    if unit:
        if unit not in _UNIT:
            raise ValueError(c)
        return finite_float(num.replace(",", "")) * _UNIT[unit]
    return finite_float(c.removesuffix("%").removesuffix("/s").replace(",", ""))


def _port_row(
    columns: list[str], s: str, lineno: int, namespace: str | None, result: ParseResult
) -> None:
    cells = _port_cells(columns, s)
    row = dict(zip(columns, cells, strict=True))
    state = row.get("STATE") or None
    if state is not None and state.upper() not in _UP_STATES and state != "N/A":
        raise ValueError("state U/D/X or UP/DOWN")
    counters = {name: _count(row[name]) for name in columns if name in _PORT_COUNTS}
    rec = PortCounters(
        line=lineno,
        port=cells[0],
        state=state,
        up=_UP_STATES.get(state.upper()) if state else None,
        rx_bps=_rate_of(row, "RX_BPS", "RX_RATE"),
        tx_bps=_rate_of(row, "TX_BPS", "TX_RATE"),
        rx_util=_rate(row["RX_UTIL"]) if "RX_UTIL" in row else None,
        tx_util=_rate(row["TX_UTIL"]) if "TX_UTIL" in row else None,
        rx_pps=_rate(row["RX_PPS"]) if "RX_PPS" in row else None,
        tx_pps=_rate(row["TX_PPS"]) if "TX_PPS" in row else None,
        description=row.get("DESC") or None,
        namespace=namespace,
        counters=counters,
    )
    for name, attr in _PORT_COUNTS.items():
        if name in counters:
            setattr(rec, attr, counters[name])
    result.records.append(rec)


def _queue_row(
    columns: list[str], s: str, lineno: int, namespace: str | None, result: ParseResult
) -> None:
    t = s.split()
    if len(t) != len(columns):
        raise ValueError("cell count differs from the header")
    m = _QNAME_RE.match(t[1])
    if m is None:
        raise ValueError("queue name like UC3")
    counters = {name: _count(cell) for name, cell in zip(columns[2:], t[2:], strict=True)}
    rec = QueueCounters(
        line=lineno,
        port=t[0],
        queue=t[1],
        queue_type=m.group(1).upper(),
        queue_index=int(m.group(2)),
        namespace=namespace,
        counters=counters,
    )
    for name, attr in _QUEUE_FIELDS.items():
        if name in counters:
            setattr(rec, attr, counters[name])
    result.records.append(rec)


def _indexed_row(
    columns: list[str],
    title: str,
    s: str,
    lineno: int,
    namespace: str | None,
    result: ParseResult,
) -> None:
    t = s.split()
    if len(t) != len(columns):
        raise ValueError("cell count differs from the header")
    result.records.append(
        IndexedCounters(
            line=lineno,
            port=t[0],
            stat=title,
            columns=tuple(columns[1:]),
            values=tuple(_count(c) for c in t[1:]),
            namespace=namespace,
        )
    )


def _row(table: str, direction: str, s: str, lineno: int, result: ParseResult) -> None:
    t = s.split()
    rec = result.records.append
    if table == "pfc":
        if len(t) != 9:
            raise ValueError("need port + 8 counts")
        rec(
            PfcCounters(
                line=lineno,
                port=t[0],
                direction=direction,
                frames=tuple(_count(c) for c in t[1:]),
            )
        )
    elif table == "pfcwd-stats":
        if len(t) != 7:
            raise ValueError("need queue, status and 5 pairs")
        port, _, q = t[0].rpartition(":")
        det, res = _pair(t[2])
        tx_ok, tx_drop = _pair(t[3])
        rx_ok, rx_drop = _pair(t[4])
        txl_ok, txl_drop = _pair(t[5])
        rxl_ok, rxl_drop = _pair(t[6])
        rec(
            PfcwdStats(
                line=lineno,
                port=port or t[0],
                queue=int(q) if q.isdecimal() else None,
                status=None if t[1] == "N/A" else t[1],
                storms_detected=det,
                storms_restored=res,
                tx_ok=tx_ok,
                tx_drop=tx_drop,
                rx_ok=rx_ok,
                rx_drop=rx_drop,
                tx_last_ok=txl_ok,
                tx_last_drop=txl_drop,
                rx_last_ok=rxl_ok,
                rx_last_drop=rxl_drop,
            )
        )
    elif table == "pfcwd-config":
        if len(t) not in (4, 5):
            raise ValueError("need port, action, detection, restoration [history]")
        rec(
            PfcWatchdog(
                line=lineno,
                scope=t[0],
                port=t[0],
                enabled=True,
                action=t[1],
                detection_ms=float(t[2]),
                restoration_ms=float(t[3]),
                history=(t[4] == "enable") if len(t) == 5 else None,
            )
        )
    elif table == "history":
        if len(t) < 5 or not t[1].upper().startswith("PFC"):
            raise ValueError("need port, PFCn and counts")
        rec(
            PfcHistory(
                line=lineno,
                port=t[0],
                priority=int(t[1][3:]),
                rx_pause_transitions=_count(t[2]),
                total_rx_pause_us=_count(t[3]),
                recent_rx_pause_us=_count(t[4]),
                recent_timestamp=" ".join(t[5:]) or None,
            )
        )
    elif table == "nxos":
        bitmap = next((x.strip("()") for x in t if x.startswith("(")), None)
        rest = [x for x in t if not x.startswith("(")]
        if len(rest) < 5:
            raise ValueError("need port, mode, oper, rx, tx")
        rec(
            PfcPortTotals(
                line=lineno,
                port=rest[0],
                mode=rest[1],
                oper=rest[2],
                vl_bitmap=bitmap,
                rx_pause=_count(rest[-2]),
                tx_pause=_count(rest[-1]),
            )
        )
