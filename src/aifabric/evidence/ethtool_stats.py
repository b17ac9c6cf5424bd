"""``ethtool -S IFACE`` (NIC statistics) → one :class:`EthtoolStats` record per dump.

Input: what ``ethtool -S`` prints (``NIC statistics:`` then ``     name: value`` lines, one per
driver counter, in driver order), as engineers paste it:

* one or several dumps in one file, each introduced by a shell prompt (``# ethtool -S eth2``,
  ``$ ethtool -S eth0``, ``[root@h ~]# ethtool -S ens1f0 | grep prio``), a ``==> name <==`` header
  (``tail``/``head`` of several files) or a bare interface name printed by a ``for`` loop just
  before ``NIC statistics:``;
* partial pastes without the header (``ethtool -S X | grep prio``): indented ``name: value``
  lines start a headerless dump; prose between two pastes ends it, and a dump that repeats a
  counter name after prose is a new dump (before/after snapshots);
* any driver: mlx5 (``rx_prio3_pause``, ``rx_prio3_pause_duration`` in µs, ``rx_prio3_discards``,
  ``*_phy`` port counters, ``rx_out_of_buffer``, per-channel ``rx0_packets``), Broadcom bnx2x /
  bnxt_en (``[0]: rx_bytes`` per-queue names, ``rx_pfc_ena_frames_pri3``), Intel ice / i40e
  (``rx_priority_3_xoff.nic``, ``port.rx_priority_3_xon``), be2net, virtio (``rx_queue_0_*``),
  r8169... Counter names are kept exactly as printed (they may contain ``:``, ``.``, spaces).

A line inside a dump that is indented like a counter but is not ``name: <integer>`` is warned
about (garbled paste); ``ethtool -i`` style ``name: text`` lines outside a dump are ignored.

Performance (issue 3 target: 5,000 mlx5 dumps/s on 2 cores): one compiled regex classifies every
line in C (``re.findall``), the Python loop only stores ``name → int``, and the per-name grouping
(priority, pause, discard, error) is memoised per counter name, so a fleet sweep of one driver
classifies each name once.

Sources (formats and counter meanings):
https://man7.org/linux/man-pages/man8/ethtool.8.html ;
https://docs.kernel.org/networking/device_drivers/ethernet/mellanox/mlx5/counters.html
(mlx5 ethtool counters: ``rx_prioN_pause_duration`` in microseconds, ``rx_discards_phy``,
``rx_out_of_buffer``, ``rx_symbol_err_phy``, ``rx_corrected_bits_phy``) ;
https://docs.kernel.org/networking/device_drivers/ethernet/intel/ice.html (``*.nic`` port names) ;
fixture captures under ``tests/fixtures/evidence/ethtool-stats/`` (bpf list, isc-projects/ethq
issues 6 and 7, bytedance/byteps issue 179, netdata issue 17015, node_exporter fixtures).

Seed refs: S20 (drop counters ``ethtool -S`` for stalls), S22 (NIC drop and pause counters),
S12/S18 (PFC on the RoCE priority only), S16 (PHY error counters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["EthtoolStats", "classify_counter", "extend_dump", "parse_ethtool_stats"]


@dataclass(slots=True, kw_only=True)
class EthtoolStats(Record):
    """One ``ethtool -S`` dump.

    ``counters`` keeps every counter in driver order. Line numbers: counter *i* (in
    ``counters`` order) sits on ``first_counter_line + i`` unless ``counter_lines`` is set (the
    dump had gaps: blank or garbled lines); use :meth:`line_of`.

    The normalised views serve diagnosis without knowing driver names:
    ``rx_pause_by_prio`` / ``tx_pause_by_prio`` (PFC pause frames per priority: mlx5
    ``rx_prioN_pause``, Intel ``rx_priority_N_xoff``, bnxt ``rx_pfc_ena_frames_priN``),
    ``*_pause_duration_us_by_prio`` (mlx5, µs), ``discards_by_prio`` (mlx5
    ``rx_prioN_discards`` / ``_buf_discard`` / ``_cong_discard``), and port-level (not per-queue)
    ``pause_counters``, ``discard_counters``, ``error_counters`` (CRC/FCS/symbol/PCS/length/
    jabber...), plus ``out_of_buffer`` (mlx5 ``rx_out_of_buffer``: no receive WQE, host too
    slow), ``corrected_bits_phy`` (FEC-corrected bits) and ``link_down_events``.
    """

    record_type: ClassVar[str] = "ethtool_stats"

    interface: str | None = None
    """From the prompt or header before the dump; ``None`` for a bare paste."""
    header: bool = False
    """Whether the dump had its ``NIC statistics:`` line (False: partial paste, e.g. ``| grep``)."""
    counters: dict[str, int] = field(default_factory=dict)
    first_counter_line: int = 0
    counter_lines: dict[str, int] | None = None
    """name → line, only when the counters are not on consecutive lines."""
    per_priority: dict[int, dict[str, int]] = field(default_factory=dict)
    """priority → {counter name: value} for every name carrying a priority (prioN, priority_N)."""
    rx_pause_by_prio: dict[int, int] = field(default_factory=dict)
    tx_pause_by_prio: dict[int, int] = field(default_factory=dict)
    rx_pause_duration_us_by_prio: dict[int, int] = field(default_factory=dict)
    tx_pause_duration_us_by_prio: dict[int, int] = field(default_factory=dict)
    discards_by_prio: dict[int, int] = field(default_factory=dict)
    pause_counters: dict[str, int] = field(default_factory=dict)
    """Port-level pause counters (global 802.3x and totals): ``rx_pause_ctrl_phy``,
    ``tx_global_pause``, ``rx_pause_frames``..."""
    discard_counters: dict[str, int] = field(default_factory=dict)
    error_counters: dict[str, int] = field(default_factory=dict)
    out_of_buffer: int | None = None
    corrected_bits_phy: int | None = None
    link_down_events: int | None = None

    def line_of(self, name: str) -> int | None:
        """1-based input line of counter ``name``, ``None`` if the dump has no such counter."""
        if name not in self.counters:
            return None
        if self.counter_lines is not None:
            return self.counter_lines.get(name)
        for i, key in enumerate(self.counters):
            if key == name:
                return self.first_counter_line + i
        return None  # pragma: no cover - unreachable, name is in counters

    def nonzero(self, names: dict[str, int] | None = None) -> dict[str, int]:
        """The counters (or the given group) whose value is not zero."""
        src = self.counters if names is None else names
        return {k: v for k, v in src.items() if v}


# --------------------------------------------------------------------------------------------
# name classification (memoised: a fleet has few distinct drivers)

_PRIO_RE = re.compile(r"(?:prio_?|priority_|_pri|_pb_)(\d)(?!\d)")
_PER_QUEUE_RE = re.compile(
    r"^(?:\[\d+\]|(?:rx|tx|ch|xdp|xsk|ptp|rxq|txq|rq|sq)\d+[_:]|(?:rx|tx)-\d+\.|(?:rx|tx)_queue_\d+"
    r"|queue_\d+|q\d+_)"
)
_ERROR_WORDS = (
    "crc",
    "fcs",
    "symbol_err",
    "alignment",
    "align_err",
    "pcs_symbol",
    "jabber",
    "fragments",
    "undersize",
    "oversize",
    "length_err",
    "frame_err",
    "in_range_err",
    "out_range_err",
    "errors_phy",
)
_DISCARD_WORDS = ("discard", "drop", "missed", "no_buf", "out_of_buffer", "fifo_err", "over_err")

# group codes
_G_RX_PAUSE = "rx_pause"
_G_TX_PAUSE = "tx_pause"
_G_RX_PAUSE_DUR = "rx_pause_dur"
_G_TX_PAUSE_DUR = "tx_pause_dur"
_G_PRIO_DISCARD = "prio_discard"
_G_PRIO = "prio"
_G_PAUSE = "pause"
_G_DISCARD = "discard"
_G_ERROR = "error"
_G_OOB = "out_of_buffer"
_G_CORR = "corrected_bits"
_G_LINKDOWN = "link_down"

_Class = tuple[str, int | None] | None
_CACHE: dict[str, _Class] = {}
_CACHE_MAX = 50_000


def classify_counter(name: str) -> tuple[str, int | None] | None:
    """(group, priority) of an ethtool counter name, ``None`` for counters no group needs.

    >>> classify_counter("rx_prio3_pause")
    ('rx_pause', 3)
    >>> classify_counter("rx_priority_3_xoff.nic")
    ('rx_pause', 3)
    >>> classify_counter("rx_discards_phy")
    ('discard', None)
    >>> classify_counter("rx0_packets") is None
    True
    """
    hit = _CACHE.get(name, False)
    if hit is not False:
        return hit  # type: ignore[return-value]
    result = _classify(name)
    if len(_CACHE) < _CACHE_MAX:
        _CACHE[name] = result
    return result


def _classify(name: str) -> _Class:
    low = name.lower()
    m = _PRIO_RE.search(low)
    if m is not None and not _PER_QUEUE_RE.match(low):
        prio = int(m.group(1))
        tx = low.startswith("tx") or "_tx" in low or ".tx" in low
        if "pause_duration" in low or ("pfc_" in low and "_duration_us" in low):
            # mlx5 rx_prio3_pause_duration; bnxt_en pfc_pri3_rx_duration_us (both µs)
            return (_G_TX_PAUSE_DUR if tx else _G_RX_PAUSE_DUR), prio
        if "pause_transition" in low or "transitions" in low:
            return _G_PRIO, prio
        if "pause" in low or ("xoff" in low and "xon_2_xoff" not in low) or "pfc_ena" in low:
            return (_G_TX_PAUSE if tx else _G_RX_PAUSE), prio
        if "discard" in low or "drop" in low:
            return _G_PRIO_DISCARD, prio
        return _G_PRIO, prio
    if _PER_QUEUE_RE.match(low):
        return None
    if "out_of_buffer" in low:
        return _G_OOB, None
    if "corrected_bits" in low:
        return _G_CORR, None
    if "link_down_events" in low:
        return _G_LINKDOWN, None
    if (
        "pause" in low
        and "duration" not in low
        and "transition" not in low
        and "admin_q" not in low  # ena admin_q_pause: the driver's admin queue, not a frame
    ):
        return _G_PAUSE, None
    if any(w in low for w in _ERROR_WORDS) and "checksum" not in low and "csum" not in low:
        return _G_ERROR, None
    if any(w in low for w in _DISCARD_WORDS) and "xdp" not in low:
        return _G_DISCARD, None
    return None


def _fill_groups(rec: EthtoolStats) -> None:
    for name, value in rec.counters.items():
        cls = classify_counter(name)
        if cls is None:
            continue
        group, prio = cls
        if prio is not None:
            bucket = rec.per_priority.get(prio)
            if bucket is None:
                bucket = rec.per_priority[prio] = {}
            bucket[name] = value
            if group == _G_RX_PAUSE:
                rec.rx_pause_by_prio[prio] = rec.rx_pause_by_prio.get(prio, 0) + value
            elif group == _G_TX_PAUSE:
                rec.tx_pause_by_prio[prio] = rec.tx_pause_by_prio.get(prio, 0) + value
            elif group == _G_RX_PAUSE_DUR:
                rec.rx_pause_duration_us_by_prio[prio] = value
            elif group == _G_TX_PAUSE_DUR:
                rec.tx_pause_duration_us_by_prio[prio] = value
            elif group == _G_PRIO_DISCARD:
                rec.discards_by_prio[prio] = rec.discards_by_prio.get(prio, 0) + value
        elif group == _G_PAUSE:
            rec.pause_counters[name] = value
        elif group == _G_DISCARD:
            rec.discard_counters[name] = value
        elif group == _G_ERROR:
            rec.error_counters[name] = value
        elif group == _G_OOB:
            rec.out_of_buffer = value if rec.out_of_buffer is None else rec.out_of_buffer + value
            rec.discard_counters[name] = value
        elif group == _G_CORR:
            rec.corrected_bits_phy = value
        elif group == _G_LINKDOWN:
            rec.link_down_events = value


# --------------------------------------------------------------------------------------------
# parsing

# Every line matches exactly one alternative; findall returns (indent, name, value, other).
#   counter: optional leading backtick/space, "name: 123" (name may hold ':' '.' ' '), then
#            optionally an annotation pasted after the value ("# ...", "← ...", "<- ...")
#   other:   anything else (header, prompt, prose, blank, garbled)
_LINE_RE = re.compile(
    r"^(?:([ \t]*)([^\s:][^\n]*?):[ \t]*(-?\d{1,20})[ \t]*(?:(?:#|\u2190|<-|//)[^\n]*)?\r?"
    r"|([^\n]*))$",
    re.MULTILINE,
)
_PROMPT_RE = re.compile(r"ethtool\s+(?:-S|--statistics)\s+(?:--\S+\s+)*([\w.@:-]+)")
_TAIL_RE = re.compile(r"^==>\s*(\S+?)\s*<==$")
_IFNAME_RE = re.compile(r"^[A-Za-z][\w.@-]{0,31}:?$")


def _new(line: int, interface: str | None, header: bool) -> EthtoolStats:
    return EthtoolStats(line=line, interface=interface, header=header)


# trailing blanks are common in pastes (an editor, a tracker's rendering)
_DETECT_RE = re.compile(r"^[ \t]+(?:rx|tx)_[\w.]+: \d+[ \t]*\r?$", re.MULTILINE)
_DETECT_FLAT_RE = re.compile(r"^(?:rx|tx)_[\w.]+: \d+[ \t]*\r?$", re.MULTILINE)
# a name holding an underscore, checked by a lookahead so that one scan reads the name (two
# adjacent ``[\w.-]*`` around the ``_`` would try every split of a long name: quadratic)
_DETECT_PAIR_RE = re.compile(
    r"^[ \t]*+[A-Za-z](?=[\w.-]*?_)[\w.-]*+: -?\d++[ \t]*\r?$", re.MULTILINE
)
_DETECT_PAIR_MIN = 8
"""Fewest ``snake_case: integer`` lines before a headerless list reads as ``ethtool -S``."""


def _detect(text: str) -> float:
    if "NIC statistics:" in text:
        return 0.95
    if "x_" in text:  # rx_/tx_ names: the line scans only where such a name is present
        if _DETECT_RE.search(text) is not None:
            return 0.5
        # flush-left "rx_bytes: 12" lines (indent stripped by a tool or an editor): several
        flat = _DETECT_FLAT_RE.findall(text, 0, 20_000)
        if len(flat) >= 4 and any(f.startswith("tx_") for f in flat):
            return 0.45
    # a flush-left dump of a driver whose names do not start with rx_/tx_ (AWS ena:
    # "queue_0_tx_cnt: 2005711", "ena_admin_q_aborted_cmd: 0"), stored without its header:
    # nearly every line a "snake_case_name: integer" pair
    head = text[:20_000]
    pairs = len(_DETECT_PAIR_RE.findall(head))
    if pairs >= _DETECT_PAIR_MIN:
        lines = sum(1 for ln in head.splitlines() if ln.strip())
        if pairs >= 0.9 * lines:
            return 0.4
    return 0.0


# The common case, one clean dump ("NIC statistics:" then indented "name: integer" lines only),
# takes a fast path with the same result as the general loop below (a test holds them equal).
# (values have at most 20 digits, 64 bits: a longer one is an unreadable line, not a traceback)
_FAST_PAIR_RE = re.compile(r"^[ \t]*([A-Za-z_][\w.\[\]/-]*): (-?\d{1,20})$", re.MULTILINE)


def _parse_fast(text: str) -> ParseResult | None:
    body = text if text.endswith("\n") else text + "\n"
    header = body.startswith("NIC statistics:")
    if header and body[: body.index("\n")].rstrip() != "NIC statistics:":
        return None
    pairs = _FAST_PAIR_RE.findall(body)
    # every line after the optional header must be a counter: the anchored pattern matches a
    # line at most once, so equal counts mean no other line is present
    if not pairs or len(pairs) != body.count("\n") - header:
        return None
    if not header and body[0] not in " \t" and "_" not in pairs[0][0]:
        return None  # a flush-left first line without "_" is not taken as a counter
    first = 2 if header else 1
    rec = _new(1, None, header)
    rec.first_counter_line = first
    rec.counters = {name: int(value) for name, value in pairs}
    rec.end_line = first + len(pairs) - 1
    _fill_groups(rec)
    result = ParseResult(kind="ethtool-stats")
    result.records.append(rec)
    return result


@register(
    "ethtool-stats",
    summary="ethtool -S IFACE (NIC statistics: per-driver counters)",
    detect=_detect,
    refs=("S20", "S22", "S12", "S16"),
)
def parse_ethtool_stats(text: str) -> ParseResult:
    """Parse one or more ``ethtool -S`` dumps; never raises."""
    fast = _parse_fast(text)
    if fast is not None:
        return fast
    return _parse_general(text)


def _parse_general(text: str) -> ParseResult:
    result = ParseResult(kind="ethtool-stats")
    recs: list[EthtoolStats] = []
    cur: EthtoolStats | None = None
    cur_lines: list[int] = []
    contiguous = True
    pending_iface: str | None = None
    pending_iface_line = -10
    pending_bad: list[tuple[int, str]] = []
    after_prose = False

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        if cur.counters:
            cur.end_line = cur_lines[-1] if cur_lines else cur.line
            if not contiguous:
                cur.counter_lines = dict(zip(cur.counters, cur_lines, strict=False))
            _fill_groups(cur)
            recs.append(cur)
        elif cur.header:
            cur.end_line = cur.line
            recs.append(cur)
        cur = None

    lineno = 0
    for indent, name, value, other in _LINE_RE.findall(text):
        lineno += 1
        if name:
            if cur is None or (after_prose and name in cur.counters):
                if cur is None and not indent and (" " in name or "_" not in name):
                    continue  # a stray "key: 12" line outside any dump (ethtool -i, prose)
                close()
                iface = pending_iface if lineno - pending_iface_line <= 3 else None
                cur = _new(lineno, iface, False)
                cur_lines = []
                contiguous = True
                pending_iface = None
                pending_bad.clear()
            elif pending_bad:
                for bad_line, bad_text in pending_bad:
                    result.warn(bad_line, "expected an ethtool counter 'name: integer'", bad_text)
                pending_bad.clear()
            if not cur.counters:
                cur.first_counter_line = lineno
            elif contiguous and lineno != cur_lines[-1] + 1:
                contiguous = False
            cur.counters[name.lstrip("`") if name[0] == "`" else name] = int(value)
            cur_lines.append(lineno)
            after_prose = False
            continue
        stripped = other.strip()
        if not stripped:
            after_prose = cur is not None
            continue
        if "NIC statistics" in stripped:
            close()
            iface = pending_iface if lineno - pending_iface_line <= 3 else None
            cur = _new(lineno, iface, True)
            cur_lines = []
            contiguous = True
            pending_iface = None
            pending_bad.clear()
            after_prose = False
            continue
        if "ethtool" in stripped:
            m = _PROMPT_RE.search(stripped)
            if m is not None:
                close()
                pending_iface = m.group(1)
                pending_iface_line = lineno
                pending_bad.clear()
                continue
        if stripped[0] == "=" and stripped.endswith("<=="):
            t = _TAIL_RE.match(stripped)
            if t is not None:
                close()
                pending_iface = t.group(1).rstrip("/").rsplit("/", 1)[-1]
                pending_iface_line = lineno
                continue
        if cur is None:
            if _IFNAME_RE.match(stripped) and not stripped.endswith(":"):
                pending_iface = stripped
                pending_iface_line = lineno
            continue
        if other[:1] in (" ", "\t"):
            # indented like a counter but not "name: integer": a garbled or truncated counter
            result.warn(lineno, "expected an ethtool counter 'name: integer'", other)
        else:
            # prose between pastes, or a garbled line inside one: decided by the next counter
            pending_bad.append((lineno, other))
            after_prose = True
    close()
    if recs and recs[-1].header and not recs[-1].counters:
        result.warn(recs[-1].line, "'NIC statistics:' header without counters (truncated?)", "")
    result.records.extend(recs)
    return result


def extend_dump(rec: EthtoolStats, more: EthtoolStats) -> None:
    """Continue ``rec`` with ``more``: the rest of the same dump, parsed from the next chunk of a
    file read in chunks (a headerless dump longer than a chunk, e.g. a ``while sleep 1; do
    ethtool -S ...; done | grep`` series that never prints a new ``NIC statistics:`` line).

    The result is the record one pass over the whole text gives: a counter seen again keeps its
    first position and takes its last value, and the grouped views are recomputed from the
    merged counters (they sum per priority, so they are rebuilt rather than added)."""
    first_lines = None
    if rec.counter_lines is not None or more.counter_lines is not None:
        first_lines = {name: rec.line_of(name) or rec.line for name in rec.counters}
        for name in more.counters:
            if name not in first_lines:
                first_lines[name] = more.line_of(name) or more.line
    rec.counters.update(more.counters)
    rec.counter_lines = first_lines
    rec.end_line = more.end_line if more.end_line is not None else more.line
    rec.per_priority = {}
    rec.rx_pause_by_prio, rec.tx_pause_by_prio = {}, {}
    rec.rx_pause_duration_us_by_prio, rec.tx_pause_duration_us_by_prio = {}, {}
    rec.discards_by_prio = {}
    rec.pause_counters, rec.discard_counters, rec.error_counters = {}, {}, {}
    rec.out_of_buffer = rec.corrected_bits_phy = rec.link_down_events = None
    _fill_groups(rec)
