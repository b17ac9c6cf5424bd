"""iperf3 results, ``--json`` and plain text, client and server side → one :class:`Iperf3Run`
per test and one :class:`Iperf3Interval` per reporting interval (the sum, and each stream).

``--json`` (``-J``): one document per test (several when runs were appended to one file; text
around them, such as the ``^C`` a terminal prints when the client is interrupted, is skipped
with a warning). Keys read (iperf3 3.6-3.19, ``src/iperf_api.c``):

* ``start``: ``connecting_to`` (client) or ``accepted_connection`` (server), ``connected``
  (one entry per stream socket), ``version``, ``tcp_mss_default``, ``test_start``
  (``protocol``, ``num_streams``, ``duration``, ``omit``, ``reverse``, ``bidir``, ``tos``: the
  IP TOS byte, so ``--dscp 26`` is ``tos`` 104, ``target_bitrate``);
* ``intervals[]``: ``streams[]`` and ``sum`` with ``start``/``end``/``seconds``, ``bytes``,
  ``bits_per_second``, TCP ``retransmits``, ``snd_cwnd``, ``rtt`` (µs), UDP ``packets``,
  ``lost_packets``, ``jitter_ms``, and ``omitted`` (``--omit`` warm-up intervals, which restart
  the clock) and ``sender``;
* ``end``: ``sum_sent`` / ``sum_received`` (TCP, and UDP since 3.10), ``sum`` (UDP: the loss the
  receiver counted), ``streams[]`` (``sender``/``receiver`` or ``udp``),
  ``cpu_utilization_percent``, ``sender_tcp_congestion``;
* ``error``: iperf3 3.12 exits 0 with ``--json`` when it fails, and says why here
  (``unable to connect to server: Connection refused``, ``error - control socket has closed
  unexpectedly``, ``interrupt - the client has terminated``); ``end`` is then empty or partial.

Plain text: ``Connecting to host H, port P`` (client) or ``Server listening on P`` /
``Accepted connection from H, port P`` (server), ``[  5] local A port p connected to B port
q`` per stream, the ``[ ID] Interval  Transfer  Bitrate  Retr  Cwnd`` table (``Bandwidth`` before
3.7; UDP: ``Total Datagrams``, or ``Jitter  Lost/Total Datagrams`` on the receiver), ``[SUM]``
rows with ``-P``, ``[  5][TX-C]`` with ``--bidir``, the final rows ending in ``sender`` /
``receiver``, ``(omitted)`` warm-up rows, ``iperf3: error - ...`` and ``iperf Done.``.
Transfer units are binary (``MBytes`` = 2^20 bytes), rates decimal (``Mbits/sec`` = 10^6 bit/s):
iperf3's ``unit_snprintf`` (``src/units.c``). Verbose (``-V``) lines are skipped; any other
unrecognised line is a warning.

Rates are kept in Gb/s (``_gbps``), as elsewhere in aifabric. Sources:
https://github.com/esnet/iperf (``src/iperf_api.c``, ``src/units.c``, ``docs/invoking.rst``);
captures under ``tests/fixtures/evidence/iperf3/`` (network namespaces on Debian 12 with iperf3
3.12, and public iperf3 3.6/3.9 results of the CloudPilot project).

Seed refs: S17 (a middlebox throttling long flows), S20 (loss and retransmissions), S13/S14
(``--dscp`` marking).
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register
from aifabric.inputs import check_nesting

__all__ = ["Iperf3Interval", "Iperf3Run", "parse_iperf3"]


@dataclass(slots=True, kw_only=True)
class Iperf3Run(Record):
    """One iperf3 test as one side saw it: what was asked, the totals, the error if it failed."""

    record_type: ClassVar[str] = "iperf3_run"

    run: int = 0
    """0-based index of the test in the capture (several documents or tests in one file)."""
    format: str = "json"
    """``json`` or ``text``."""
    role: str | None = None
    """``client`` or ``server`` (the side that printed this)."""
    protocol: str | None = None
    """``TCP``, ``UDP`` or ``SCTP``."""
    version: str | None = None
    local_host: str | None = None
    remote_host: str | None = None
    """The server a client connected to, or the client a server accepted."""
    remote_port: int | None = None
    streams: int | None = None
    """``-P``: parallel streams."""
    duration_s: float | None = None
    omit_s: float | None = None
    reverse: bool = False
    """``-R``: the server sends, the client receives."""
    bidir: bool = False
    tos: int | None = None
    """The IP TOS byte the sender set (``-S``/``--tos``, or ``--dscp`` shifted left by 2)."""
    dscp: int | None = None
    """``tos >> 2``."""
    tcp_mss_bytes: int | None = None
    """``tcp_mss_default`` (0 on the server side: ``None``)."""
    target_gbps: float | None = None
    """``-b`` (0, unlimited, is ``None``)."""
    seconds: float | None = None
    sent_bytes: int | None = None
    sent_gbps: float | None = None
    received_bytes: int | None = None
    received_gbps: float | None = None
    retransmits: int | None = None
    """TCP segments the sender retransmitted (``tcpi_total_retrans`` summed over streams)."""
    packets: int | None = None
    """UDP datagrams sent."""
    lost_packets: int | None = None
    lost_pct: float | None = None
    jitter_ms: float | None = None
    stream_sent_gbps: list[float] = field(default_factory=list)
    stream_received_gbps: list[float] = field(default_factory=list)
    cpu_local_pct: float | None = None
    cpu_remote_pct: float | None = None
    congestion: str | None = None
    """The sender's TCP congestion control (``cubic``, ``bbr``...)."""
    error: str | None = None
    """iperf3's error text (the ``error`` key, or ``iperf3: error - ...``)."""

    @property
    def sender_side(self) -> bool:
        """Whether this side sent the data (a client, unless ``-R``; a server with ``-R``)."""
        if self.bidir:
            return True
        return (self.role == "client") != self.reverse


@dataclass(slots=True, kw_only=True)
class Iperf3Interval(Record):
    """One reporting interval (``-i``, 1 s by default) of one stream, or their sum."""

    record_type: ClassVar[str] = "iperf3_interval"

    run: int = 0
    stream: int | None = None
    """The stream's socket / ``[ID]``; ``None`` for the sum over streams."""
    start_s: float
    end_s: float
    seconds: float | None = None
    bytes: int | None = None
    gbps: float | None = None
    retransmits: int | None = None
    packets: int | None = None
    lost_packets: int | None = None
    jitter_ms: float | None = None
    cwnd_bytes: int | None = None
    rtt_us: int | None = None
    omitted: bool = False
    """A ``--omit`` warm-up interval (not counted in the totals)."""
    sender: bool | None = None
    """Whether these bytes were counted by the sending side."""
    direction: str | None = None
    """``--bidir``: ``TX`` or ``RX`` (text ``[TX-C]``/``[RX-C]``)."""


# --------------------------------------------------------------------------------------------
# helpers


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _gbps(bps: Any) -> float | None:
    v = _num(bps)
    return None if v is None else v / 1e9


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _measured(value: Any) -> dict[str, Any]:
    """A summary object that counted bytes (``{}`` for a missing one or one of zeros)."""
    d = _dict(value)
    return d if _num(d.get("bytes")) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class _Lines:
    """Character offsets → 1-based line numbers (bisect over the newline positions)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends = [m.start() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> int:
        return bisect.bisect_left(self.ends, offset) + 1

    def find(self, needle: str, start: int, end: int) -> int:
        """Offset of ``needle`` in ``text[start:end]``, or -1."""
        return self.text.find(needle, start, end)


# --------------------------------------------------------------------------------------------
# JSON

_DOC_START_RE = re.compile(r"^[ \t]*+(?:\^C)?+[ \t]*+\{", re.MULTILINE)
"""A line that opens a JSON document (``^C`` first when the client was interrupted)."""


def _json_mode(text: str) -> bool:
    """Whether the capture holds iperf3 JSON: a line opening ``{`` before any result table."""
    m = _DOC_START_RE.search(text, 0, 65536)
    if m is None:
        return False
    before = text[: m.start()]
    return "bits/sec" not in before and "[ ID]" not in before


def _run_from_json(doc: dict[str, Any], run: int, line: int) -> Iperf3Run:
    start = _dict(doc.get("start"))
    test = _dict(start.get("test_start"))
    end = _dict(doc.get("end"))
    rec = Iperf3Run(line=line, run=run, format="json")
    if "connecting_to" in start:
        rec.role = "client"
        target = _dict(start.get("connecting_to"))
        rec.remote_host = target.get("host") if isinstance(target.get("host"), str) else None
        rec.remote_port = _int(target.get("port"))
    elif "accepted_connection" in start:
        rec.role = "server"
        peer = _dict(start.get("accepted_connection"))
        rec.remote_host = peer.get("host") if isinstance(peer.get("host"), str) else None
        rec.remote_port = _int(peer.get("port"))
    connected = [c for c in _list(start.get("connected")) if isinstance(c, dict)]
    if connected and isinstance(connected[0].get("local_host"), str):
        rec.local_host = connected[0]["local_host"]
        if rec.remote_host is None and isinstance(connected[0].get("remote_host"), str):
            rec.remote_host = connected[0]["remote_host"]
    version = start.get("version")
    rec.version = version if isinstance(version, str) else None
    proto = test.get("protocol")
    rec.protocol = proto if isinstance(proto, str) else None
    rec.streams = _int(test.get("num_streams")) or (len(connected) or None)
    rec.duration_s = _num(test.get("duration"))
    rec.omit_s = _num(test.get("omit"))
    rec.reverse = bool(_int(test.get("reverse")))
    rec.bidir = bool(_int(test.get("bidir")))
    tos = _int(test.get("tos"))
    if tos is not None and 0 <= tos <= 255:
        rec.tos, rec.dscp = tos, tos >> 2
    mss = _int(start.get("tcp_mss_default"))
    rec.tcp_mss_bytes = mss if mss else None
    target_bps = _num(test.get("target_bitrate", start.get("target_bitrate")))
    rec.target_gbps = target_bps / 1e9 if target_bps else None
    # a side that did not measure a direction prints zeros for it (the server's sum_sent,
    # esnet/iperf issue 1410; an interrupted client's sum_received): zero bytes is unknown
    sent, received = _measured(end.get("sum_sent")), _measured(end.get("sum_received"))
    udp = _dict(end.get("sum"))
    if sent:
        rec.seconds = _num(sent.get("seconds"))
        rec.sent_bytes = _int(sent.get("bytes"))
        rec.sent_gbps = _gbps(sent.get("bits_per_second"))
        rec.retransmits = _int(sent.get("retransmits"))
    if received:
        rec.received_bytes = _int(received.get("bytes"))
        rec.received_gbps = _gbps(received.get("bits_per_second"))
        if rec.seconds is None:
            rec.seconds = _num(received.get("seconds"))
    if udp:
        if rec.seconds is None:
            rec.seconds = _num(udp.get("seconds"))
        if not sent and rec.sent_bytes is None and _num(udp.get("bytes")):
            rec.sent_bytes = _int(udp.get("bytes"))
            rec.sent_gbps = _gbps(udp.get("bits_per_second"))
        rec.packets = _int(udp.get("packets"))
        rec.lost_packets = _int(udp.get("lost_packets"))
        rec.lost_pct = _num(udp.get("lost_percent"))
        rec.jitter_ms = _num(udp.get("jitter_ms"))
    for entry in _list(end.get("streams")):
        one = _dict(entry)
        tx = _measured(one.get("sender")) or _measured(one.get("udp"))
        rx = _measured(one.get("receiver"))
        if tx and (g := _gbps(tx.get("bits_per_second"))) is not None:
            rec.stream_sent_gbps.append(g)
        if rx and (g := _gbps(rx.get("bits_per_second"))) is not None:
            rec.stream_received_gbps.append(g)
    cpu = _dict(end.get("cpu_utilization_percent"))
    rec.cpu_local_pct = _num(cpu.get("host_total"))
    rec.cpu_remote_pct = _num(cpu.get("remote_total"))
    cc = end.get("sender_tcp_congestion")
    rec.congestion = cc if isinstance(cc, str) else None
    err = doc.get("error")
    rec.error = err.strip() if isinstance(err, str) and err.strip() else None
    return rec


def _interval(
    obj: dict[str, Any], run: int, line: int, stream: int | None
) -> Iperf3Interval | None:
    start, end = _num(obj.get("start")), _num(obj.get("end"))
    if start is None or end is None:
        return None
    return Iperf3Interval(
        line=line,
        run=run,
        stream=stream,
        start_s=start,
        end_s=end,
        seconds=_num(obj.get("seconds")),
        bytes=_int(obj.get("bytes")),
        gbps=_gbps(obj.get("bits_per_second")),
        retransmits=_int(obj.get("retransmits")),
        packets=_int(obj.get("packets")),
        lost_packets=_int(obj.get("lost_packets")),
        jitter_ms=_num(obj.get("jitter_ms")),
        cwnd_bytes=_int(obj.get("snd_cwnd")),
        rtt_us=_int(obj.get("rtt")),
        omitted=obj.get("omitted") is True,
        sender=obj["sender"] if isinstance(obj.get("sender"), bool) else None,
    )


def _intervals_from_json(
    doc: dict[str, Any], run: int, lines: _Lines, lo: int, hi: int, result: ParseResult
) -> None:
    pos = lines.find('"intervals"', lo, hi)
    pos = lo if pos < 0 else pos
    for iv in _list(doc.get("intervals")):
        if not isinstance(iv, dict):
            continue
        at = lines.find('"streams"', pos, hi)
        if at >= 0:
            pos = at + 1
        line = lines.at(at if at >= 0 else pos)
        for s in _list(iv.get("streams")):
            if isinstance(s, dict):
                rec = _interval(s, run, line, _int(s.get("socket")))
                if rec is not None:
                    result.records.append(rec)
        total = iv.get("sum")
        if isinstance(total, dict):
            rec = _interval(total, run, line, None)
            if rec is not None:
                result.records.append(rec)


def _parse_json(text: str, result: ParseResult) -> None:
    lines = _Lines(text)
    try:
        check_nesting(text, "<input>", yaml=False)
    except ValueError as exc:
        result.warn(getattr(exc, "lineno", None), f"not read: {exc}")
        return
    decoder = json.JSONDecoder()
    pos, run = 0, 0
    n = len(text)
    while pos < n:
        m = _DOC_START_RE.search(text, pos)
        brace = text.find("{", m.start()) if m is not None else -1
        junk = text[pos : m.start() if m is not None else n].strip()
        if junk:
            skipped = [ln for ln in junk.splitlines() if ln.strip()]
            if not _prompt_only(skipped):
                result.warn(lines.at(pos + text[pos:].find(junk[0])),
                            "text outside the iperf3 JSON document(s) skipped", skipped[0])
        if brace < 0:
            break
        try:
            doc, end = decoder.raw_decode(text, brace)
        except ValueError as exc:
            result.warn(lines.at(brace), f"iperf3 JSON document not complete: {exc}")
            return
        pos = end
        if not isinstance(doc, dict):
            result.warn(lines.at(brace), "a JSON value that is not an iperf3 result object")
            continue
        err_at = lines.find('"error"', brace, end)
        sum_at = lines.find('"sum_sent"', brace, end)
        if sum_at < 0:
            end_at = lines.find('"end"', brace, end)
            sum_at = lines.find('"sum"', end_at, end) if end_at >= 0 else -1
        anchor = err_at if err_at >= 0 and isinstance(doc.get("error"), str) else sum_at
        rec = _run_from_json(doc, run, lines.at(anchor if anchor >= 0 else brace))
        rec.end_line = lines.at(end - 1)
        result.records.append(rec)
        _intervals_from_json(doc, run, lines, brace, end, result)
        run += 1


def _prompt_only(lines: list[str]) -> bool:
    """A shell prompt naming iperf3 (a paste's first line), nothing else."""
    return len(lines) == 1 and "iperf" in lines[0] and lines[0].lstrip()[:1] in "$#>"


# --------------------------------------------------------------------------------------------
# plain text

_CONNECTING_RE = re.compile(r"^Connecting to host (\S+), port (\d+)")
_LISTENING_RE = re.compile(r"^Server listening on (\d+)")
_ACCEPTED_RE = re.compile(r"^Accepted connection from (\S+), port (\d+)")
_LOCAL_RE = re.compile(r"^\[\s*(\d+)\](?:\[[A-Z]{2}-[CS]\])?\s+local (\S+) port (\d+) connected to "
                       r"(\S+) port (\d+)")
_HEADER_RE = re.compile(r"^\[ ID\]")
_ROW_RE = re.compile(
    r"^\[\s*(\d+|SUM)\](?:\[([A-Z]{2})-[CS]\])?\s+(\d+(?:\.\d+)?)-\s*(\d+(?:\.\d+)?)\s+sec\s+"
    r"(\d+(?:\.\d+)?)\s+([KMGT]?)Bytes\s+(\d+(?:\.\d+)?)\s+([KMGT]?)bits/sec(.*)$"
)
_ERROR_RE = re.compile(r"^iperf3?: (error|interrupt) - (.*)$")
_LOST_RE = re.compile(r"^(\d+)/(\d+)$")
_BYTE_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_BIT_UNIT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SKIP_PREFIXES = (
    "iperf Done", "- - -", "-----", "Reverse mode", "Starting Test", "Test Complete",
    "CPU Utilization", "snd_tcp_congestion", "rcv_tcp_congestion", "TCP MSS", "Time:",
    "Cookie:", "iperf 3", "Linux ", "Connecting to host", "Server listening",
    "Accepted connection", "Target Bitrate", "Bidirectional mode", "Warning:",
    "      Sent ", "Sent ", "local ", "[ ID]", "Server output:", "Report", "Using ",
    "Connected to ", "Thread ",
)  # fmt: skip


@dataclass(slots=True)
class _TextRun:
    run: Iperf3Run
    columns: str = ""
    sums: dict[str, list[float | int | None]] = field(default_factory=dict)
    stream_rows: dict[str, dict[int, tuple[float, int | None]]] = field(default_factory=dict)
    intervals: list[Iperf3Interval] = field(default_factory=list)
    stream_ids: set[int] = field(default_factory=set)


def _row_tail(tail: list[str], columns: str) -> dict[str, Any]:
    """The columns after the rate: Retr/Cwnd (TCP), datagrams (UDP sender), jitter and
    lost/total (UDP receiver); the trailing ``sender``/``receiver`` and ``(omitted)``."""
    out: dict[str, Any] = {}
    words = list(tail)
    roles = [i for i, w in enumerate(words) if w in ("sender", "receiver")]
    if roles:  # anything after it is the user's own mark ("sender <<<", "receiver  <- here")
        out["role"] = words[roles[-1]]
        del words[roles[-1] :]
    if words and words[-1] == "(omitted)":
        out["omitted"] = True
        words.pop()
    if "ms" in words:
        k = words.index("ms")
        try:
            out["jitter_ms"] = float(words[k - 1]) if k >= 1 else None
        except ValueError:
            out["bad"] = True
        lost = _LOST_RE.match(words[k + 1]) if k + 1 < len(words) else None
        if lost is not None:
            out["lost"], out["packets"] = int(lost.group(1)), int(lost.group(2))
        return out
    if words and words[0].isdecimal():
        if "Retr" in columns:
            out["retransmits"] = int(words[0])
            if len(words) >= 3:
                try:
                    unit = words[2][:1] if words[2][:1] in _BYTE_UNIT else ""
                    out["cwnd"] = int(float(words[1]) * _BYTE_UNIT[unit])
                except ValueError:
                    out["bad"] = True
        elif "Datagrams" in columns:
            out["packets"] = int(words[0])
        return out
    if words and not (len(words) == 2 and words[1] == "(omitted)"):
        out["bad"] = True
    return out


def _finish_text(tr: _TextRun, result: ParseResult) -> None:
    run = tr.run
    if tr.stream_ids and run.streams is None:
        run.streams = len(tr.stream_ids)
    if not any(iv.stream is None for iv in tr.intervals) and len(tr.stream_ids) <= 1:
        extra = []
        for iv in tr.intervals:
            if iv.stream is not None:
                extra.append(dataclasses.replace(iv, stream=None))
        tr.intervals.extend(extra)
    for role in ("sender", "receiver"):
        rows = tr.stream_rows.get(role, {})
        if role == "sender":
            run.stream_sent_gbps = [g for _, (g, _) in sorted(rows.items())]
        else:
            run.stream_received_gbps = [g for _, (g, _) in sorted(rows.items())]
        total = tr.sums.get(role)
        if total is None and len(rows) == 1:
            (g, b) = next(iter(rows.values()))
            total = [b, g * 1e9]
        if total is None:
            continue
        if role == "sender":
            run.sent_bytes = _int(total[0])
            run.sent_gbps = (total[1] or 0.0) / 1e9 if total[1] is not None else None
        else:
            run.received_bytes = _int(total[0])
            run.received_gbps = (total[1] or 0.0) / 1e9 if total[1] is not None else None
    result.records.append(run)
    result.records.extend(tr.intervals)


_TITLE_RE = re.compile(r"^([^\s:\[][^:\n]{0,59}):  (?=\S)", re.MULTILINE)
"""The prefix ``iperf3 --title T`` (``-T``) puts before every line it prints (``T:  ``, the
title, a colon and two blanks: iperf_printf in src/iperf_api.c)."""
TITLE_MIN_LINES = 3


def _title(text: str) -> str | None:
    """The ``--title`` prefix most lines carry, if at least :data:`TITLE_MIN_LINES` do."""
    counts: dict[str, int] = {}
    for m in _TITLE_RE.finditer(text, 0, 20000):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    best = max(counts.items(), key=lambda kv: kv[1], default=None)
    return f"{best[0]}:  " if best is not None and best[1] >= TITLE_MIN_LINES else None


def _parse_text(text: str, result: ParseResult) -> None:
    cur: _TextRun | None = None
    runs = 0
    title = _title(text)

    def new_run(lineno: int, role: str | None) -> _TextRun:
        nonlocal cur, runs
        if cur is not None:
            _finish_text(cur, result)
        cur = _TextRun(Iperf3Run(line=lineno, run=runs, format="text", role=role))
        runs += 1
        return cur

    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        if title is not None and line.startswith(title):
            line = line[len(title) :]
        stripped = line.strip()
        if not stripped or stripped.startswith(("$ ", "# ", "```")) or stripped == "^C":
            continue
        if (m := _CONNECTING_RE.match(stripped)) is not None:
            tr = new_run(lineno, "client")
            tr.run.remote_host, tr.run.remote_port = m.group(1), int(m.group(2))
            continue
        if _LISTENING_RE.match(stripped) is not None:
            new_run(lineno, "server")
            continue
        if (m := _ACCEPTED_RE.match(stripped)) is not None:
            tr = cur if cur is not None and cur.run.role == "server" else new_run(lineno, "server")
            tr.run.remote_host, tr.run.remote_port = m.group(1), int(m.group(2))
            continue
        if (m := _ERROR_RE.match(stripped)) is not None:
            tr = cur if cur is not None else new_run(lineno, None)
            tr.run.error = f"{m.group(1)} - {m.group(2)}" if m.group(1) == "interrupt" else (
                m.group(2))
            tr.run.line = lineno
            continue
        if (m := _LOCAL_RE.match(stripped)) is not None:
            tr = cur if cur is not None else new_run(lineno, None)
            tr.stream_ids.add(int(m.group(1)))
            tr.run.local_host = tr.run.local_host or m.group(2)
            if tr.run.remote_host is None:
                tr.run.remote_host = m.group(4)
            continue
        if _HEADER_RE.match(stripped) is not None:
            tr = cur if cur is not None else new_run(lineno, None)
            tr.columns = stripped
            if "Datagrams" in stripped:
                tr.run.protocol = "UDP"
            elif "Retr" in stripped or tr.run.protocol is None:
                tr.run.protocol = "TCP"
            continue
        m = _ROW_RE.match(stripped)
        if m is not None:
            tr = cur if cur is not None else new_run(lineno, None)
            _text_row(tr, m, lineno, line, result)
            continue
        if stripped.startswith(_SKIP_PREFIXES):
            continue
        result.warn(lineno, "unrecognised line in iperf3 output", line)
    if cur is not None:
        _finish_text(cur, result)


def _text_row(tr: _TextRun, m: re.Match[str], lineno: int, line: str,
              result: ParseResult) -> None:
    ident, direction = m.group(1), m.group(2)
    start, end = float(m.group(3)), float(m.group(4))
    nbytes = int(float(m.group(5)) * _BYTE_UNIT[m.group(6)])
    bps = float(m.group(7)) * _BIT_UNIT[m.group(8)]
    tail = _row_tail(m.group(9).split(), tr.columns)
    if tail.get("bad"):
        result.warn(lineno, "unexpected columns after the bitrate", line)
    stream = None if ident == "SUM" else int(ident)
    if stream is not None:
        tr.stream_ids.add(stream)
    role = tail.get("role")
    if role is None:
        tr.intervals.append(Iperf3Interval(
            line=lineno, run=tr.run.run, stream=stream, start_s=start, end_s=end,
            seconds=end - start, bytes=nbytes, gbps=bps / 1e9,
            retransmits=tail.get("retransmits"), packets=tail.get("packets"),
            lost_packets=tail.get("lost"), jitter_ms=tail.get("jitter_ms"),
            cwnd_bytes=tail.get("cwnd"), omitted=bool(tail.get("omitted")), direction=direction,
        ))  # fmt: skip
        return
    run = tr.run
    run.end_line = lineno
    if run.seconds is None:
        run.seconds = end - start
    if role == "sender" and "retransmits" in tail and (stream is None or len(tr.stream_ids) <= 1):
        run.retransmits = tail["retransmits"]
    if "lost" in tail and (stream is None or len(tr.stream_ids) <= 1):
        run.lost_packets, run.packets = tail["lost"], tail["packets"]
        run.lost_pct = 100.0 * tail["lost"] / tail["packets"] if tail["packets"] else None
        run.jitter_ms = tail.get("jitter_ms")
    if stream is None:
        tr.sums[role] = [nbytes, bps]
    else:
        tr.stream_rows.setdefault(role, {})[stream] = (bps / 1e9, nbytes)


# --------------------------------------------------------------------------------------------
# detection and entry point


def _detect_iperf3(text: str) -> float:
    head = text[:65536]
    if '"connecting_to"' in head or '"accepted_connection"' in head:
        return 0.95
    if '"test_start"' in head or ('"intervals"' in head and '"iperf 3' in head):
        return 0.95
    if '"intervals"' in head and '"end"' in head and '"error"' in head:
        return 0.9
    if "Connecting to host " in head and ("bits/sec" in head or "iperf3: error" in head):
        return 0.95
    if "[ ID] Interval" in head and ("Bitrate" in head or "Bandwidth" in head):
        return 0.92
    if "Server listening on " in head and "Accepted connection" in head:
        return 0.9
    if head.lstrip().startswith("iperf3: error - "):
        return 0.9
    if "bits/sec" in head and " sec " in head:
        rows = len(_ROW_ONLY_RE.findall(head, 0, 20000))
        if rows >= 2:
            return 0.85  # interval or [SUM] rows without the header: a window or grep of a run
        if rows and "interval_len " in head and "bytes_transferred " in head:
            return 0.85  # a window of a --debug run: its interval lines (iperf_api.c) and a row
    return 0.0


_ROW_ONLY_RE = re.compile(
    r"(?m)^[> \t*]*\[\s*(?:\d+|SUM)\](?:\[[A-Z]{2}-[CS]\])?\s+\d+\.\d+-\s*\d+\.\d+\s+sec"
    r"\s+[\d.]+\s+[KMGT]?Bytes\s+[\d.]+\s+[KMGT]?bits/sec"
)
"""An iperf3 (or iperf 2) report row: ``[  5]   0.00-1.00   sec  1.10 GBytes  9.41 Gbits/sec``,
with the role column of a ``--bidir`` run (``[  5][RX-S]``)."""


@register(
    "iperf3",
    summary="iperf3 -c HOST [--json] [-P N] [-u] [--dscp D] (client or server side, JSON or text)",
    detect=_detect_iperf3,
    refs=("S17", "S20", "S13", "S14"),
)
def parse_iperf3(text: str) -> ParseResult:
    """Parse iperf3 output (``--json`` documents or the text report); never raises."""
    result = ParseResult(kind="iperf3")
    if _json_mode(text):
        _parse_json(text, result)
    else:
        _parse_text(text, result)
    if not result.records and not result.warnings and text.strip():
        result.warn(None, "no iperf3 result found")
    return result
