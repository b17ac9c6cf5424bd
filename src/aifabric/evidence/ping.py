"""``ping`` output (iputils on Linux, BusyBox, macOS/FreeBSD, Windows replies) → header, reply,
error and statistics records; the evidence of a jumbo-frame/path-MTU check (``ping -M do -s 8972``).

Handled lines:

* header: ``PING host (addr) 56(84) bytes of data.`` (iputils; ``from SRC IFACE:`` with ``-I``),
  ``PING host (addr): 56 data bytes`` (BusyBox, BSD/macOS), ``PING host(addr) 56 data bytes``
  (iputils ping6), ``PING6(56=40+8+8 bytes) SRC --> DST`` (macOS ping6);
* replies: ``8980 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.123 ms`` (also ``seq=`` in
  BusyBox, ``host (addr)`` sources, ``[1595037214.261953]`` ``ping -D`` stamps, ``(DUP!)``,
  ``(truncated)``, ``time<1 ms``) and Windows ``Reply from A: bytes=32 time=41ms TTL=64``
  (after its ``Pinging A [addr] with 32 bytes of data:`` header; ``ping -f -l 1472``: ``Packet
  needs to be fragmented but DF set.``, ``Request timed out.``, ``Ping statistics for A:`` /
  ``Packets: Sent = 4, Received = 4, Lost = 0 (0% loss),`` / ``Minimum = 1ms, Maximum = 2ms,
  Average = 1ms``);
* errors: ``ping: local error: message too long, mtu=1500`` (older iputils: ``Message too long``),
  ``ping: sendmsg: Message too long``, ``From R icmp_seq=1 Frag needed and DF set (mtu = 1500)``,
  ``From R icmp_seq=1 Packet too big: mtu=1280`` (IPv6), ``From R icmp_seq=N Destination Host
  Unreachable``, BSD ``92 bytes from R: Destination Host Unreachable`` (the ICMP header dump
  that follows is skipped), ``Request timeout for icmp_seq N`` (BSD), ``no answer yet for
  icmp_seq=N`` (iputils ``-O``), ``ping: unknown host``/name-resolution and ``connect:`` errors;
* statistics: ``N packets transmitted, N [packets ]received[, +N duplicates][, +N errors], X%
  packet loss[, time Nms]`` and ``rtt min/avg/max/mdev = a/b/c/d ms[, pipe N]`` or
  ``round-trip min/avg/max[/stddev] = ...`` (BusyBox, BSD).

Times are converted to microseconds (``time_us``, ``rtt_*_us``). The IPv4 packet size on the
wire is the ICMP payload + 28 bytes (20 IP + 8 ICMP): ``-s 8972`` → 9000 bytes, exactly a 9000
MTU (S11); iputils prints it as ``8972(9000)``, for BSD/BusyBox headers it is computed (IPv4
only). ``PingSummary.path_mtu_bytes`` is the smallest MTU reported by a ``Frag needed`` or
``message too long`` error; ``PingHeader.packet_bytes`` is what the probe needed.

Prompts, ``^C``, ``WARNING:`` lines and blank lines are skipped; any other unrecognised line is
warned about, as is a run with a header but no statistics block (interrupted or truncated paste).

Sources: https://man7.org/linux/man-pages/man8/ping.8.html ; iputils ``ping/ping_common.c`` and
``ping/ping.c`` (https://github.com/iputils/iputils) for the message texts; BusyBox
``networking/ping.c``; FreeBSD ping(8); captures in ``tests/fixtures/evidence/ping/`` (jc test
fixtures from real hosts, lxc/incus issue 2405).

Seed refs: S11 (MTU 9000 end to end, 8972+28), S20 (path MTU black holes), S21 (mixed 1500/9000
ports).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["PingError", "PingHeader", "PingReply", "PingSummary", "parse_ping"]

ICMP_IPV4_OVERHEAD_BYTES = 28
"""20-byte IPv4 header + 8-byte ICMP header: ``-s 8972`` fills a 9000-byte MTU."""


@dataclass(slots=True, kw_only=True)
class PingHeader(Record):
    """The ``PING ...`` line: what was probed and how big each probe was."""

    record_type: ClassVar[str] = "ping_header"

    target: str
    address: str | None = None
    payload_bytes: int | None = None
    """ICMP data size (``-s``)."""
    packet_bytes: int | None = None
    """IP packet size on the wire: printed by iputils (``8972(9000)``), else payload + 28 for
    IPv4; this is the MTU the probe needs when sent with DF (``-M do``)."""
    packet_bytes_printed: bool = False
    ipv6: bool = False
    source: str | None = None
    """``-I`` source address / interface as printed (``from 10.0.0.1 eth0``)."""


@dataclass(slots=True, kw_only=True)
class PingReply(Record):
    """One echo reply."""

    record_type: ClassVar[str] = "ping_reply"

    seq: int | None
    bytes: int
    """ICMP bytes received (payload + 8)."""
    source: str
    """The replying host as printed (name or address)."""
    source_address: str | None = None
    ttl: int | None = None
    time_us: float | None = None
    timestamp_s: float | None = None
    """``ping -D`` Unix time of the reply."""
    duplicate: bool = False
    truncated: bool = False


@dataclass(slots=True, kw_only=True)
class PingError(Record):
    """A probe that failed: local MTU refusal, ICMP error from a router, or a timeout."""

    record_type: ClassVar[str] = "ping_error"

    kind: str
    """``message-too-long`` (local: packet above the interface/route MTU), ``frag-needed`` (a
    router's ICMP: DF set and next hop MTU smaller), ``unreachable``, ``timeout``,
    ``name-resolution``, ``other``."""
    seq: int | None = None
    mtu_bytes: int | None = None
    source: str | None = None
    """The router or host that sent the ICMP error."""
    message: str = ""


@dataclass(slots=True, kw_only=True)
class PingSummary(Record):
    """The ``--- host ping statistics ---`` block."""

    record_type: ClassVar[str] = "ping_summary"

    target: str | None
    transmitted: int
    received: int
    duplicates: int = 0
    corrupted: int = 0
    errors: int = 0
    loss_pct: float
    time_ms: int | None = None
    rtt_min_us: float | None = None
    rtt_avg_us: float | None = None
    rtt_max_us: float | None = None
    rtt_mdev_us: float | None = None
    """``mdev`` (iputils) or ``stddev`` (BSD); absent in BusyBox."""
    pipe: int | None = None
    packet_bytes: int | None = None
    """Probe size on the wire from the header of this run (see :class:`PingHeader`)."""
    path_mtu_bytes: int | None = None
    """Smallest MTU named by a ``Frag needed``/``message too long`` error of this run."""


# ``[^\s@~]*[@~]`` (not ``\S*[@~]``): the first ``@``/``~`` is found without backtracking, so a
# long line of ``@`` costs linear time (issue 16, ReDoS).
_PROMPT_RE = re.compile(r"^\s*(?:[#$%>]\s|[^\s@~]*[@~]\S*\s*[#$%]|\^C|```)")
# ``src`` grows word by word (``\S(?:\s*+\S)*?``: blank runs and the characters after them) and
# its trailing blanks are taken only before a ":", so no run of blanks is split two ways
# (``\s+from\s+(?P<src>.+?)\s*:?\s+`` was quadratic on one). "from" must name a source now:
# "from  56 bytes" used to read as source " ".
_HDR_RE = re.compile(
    r"^PING\s++(?P<target>[^\s(]*+)\s*+\((?P<addr>[^()]*(?:\([^()]*\))?)\)"
    r"(?:\s+from\s++(?P<src>\S(?:\s*+\S)*?)(?:\s*+(?=:))?)?:?\s++(?P<payload>\d+)"
    r"(?:\((?P<total>\d+)\))?\s+(?:data\s+)?bytes"
)
_HDR_ANY_RE = re.compile(_HDR_RE.pattern, re.MULTILINE)
"""The header on any line (a paste may start with the prompt and the command)."""
_HDR6_RE = re.compile(
    r"^PING6\((?P<total>\d+)=\d+\+\d+\+(?P<payload>\d+) bytes\)\s+"
    r"(?P<src>\S+)\s+-->\s+(?P<addr>\S+)"
)
_REPLY_RE = re.compile(
    r"^(?:\[(?P<ts>\d+\.\d+)\]\s*)?(?P<bytes>\d+) bytes from (?P<src>\S+?)"
    r"(?: \((?P<srcaddr>[^)]+)\))?[:,] (?P<body>.*)$"
)
_SEQ_RE = re.compile(r"\b(?:icmp_)?seq=(?P<seq>\d+)")
_TTL_RE = re.compile(r"\b(?:ttl|hlim)=(?P<ttl>\d+)")
_TIME_RE = re.compile(r"\btime[=<](?P<t>\d+(?:\.\d+)?)\s*(?P<u>ms|us|usec|s)?\b")
_WIN_REPLY_RE = re.compile(
    r"^Reply from (?P<src>[^:]+): bytes=(?P<bytes>\d+) time[=<](?P<t>\d+)ms TTL=(?P<ttl>\d+)"
)
_WIN_HDR_RE = re.compile(
    r"(?m)^\s*Pinging (?P<target>\S+)(?: \[(?P<addr>[^\]]+)\])?(?: from \S+)?"
    r" with (?P<payload>\d+) bytes"
)
_TOO_LONG_RE = re.compile(r"local error: message too long", re.IGNORECASE)
_WIN_STATS_RE = re.compile(
    r"^Packets: Sent = (?P<tx>\d+), Received = (?P<rx>\d+), Lost = \d+ \((?P<loss>\d+)% loss\)"
)
_WIN_RTT_RE = re.compile(
    r"^Minimum = (?P<min>\d+)ms, Maximum = (?P<max>\d+)ms, Average = (?P<avg>\d+)ms"
)
_WIN_STATS_HDR_RE = re.compile(r"^Ping statistics for (?P<target>[^:]+):")
_WIN_ERRORS = {
    "packet needs to be fragmented but df set.": "frag-needed",
    "request timed out.": "timeout",
    "destination host unreachable.": "unreachable",
    "destination net unreachable.": "unreachable",
    "general failure.": "other",
    "transmit failed. general failure.": "other",
}
_COMMAND_RE = re.compile(
    # the ping command pasted bare, after sudo, or after a network-OS prompt ("leaf1#ping",
    # "switch# ping", "router>ping": EOS, NX-OS and IOS run iputils-style ping from their CLI)
    r"^(?:[\w.:/()-]+[#>]\s?)?(?:sudo\s+)?ping6?\s+-?[\w.:-]"
)
_MARKUP_RE = re.compile(r"^\s*\.\. [\w-]+::")
"""A reStructuredText directive (``.. code-block:: console``) that opens a pasted capture."""
_LOCAL_MTU_RE = re.compile(r"message too long, mtu\s*=\s*(?P<mtu>\d+)", re.IGNORECASE)
_FROM_RE = re.compile(
    r"^From (?P<src>\S+)(?: \((?P<srcaddr>[^)]+)\))?:?\s+(?:icmp_seq=(?P<seq>\d+)\s+)?(?P<msg>.*)$"
)
_FRAG_RE = re.compile(r"(?:Frag needed and DF set \(mtu = |Packet too big: mtu=)(?P<mtu>\d+)")
_TIMEOUT_RE = re.compile(
    r"^(?:\[\d+\.\d+\]\s*)?(?:Request timeout for icmp_seq[= ]|no answer yet for icmp_seq=)(\d+)"
)
_PIPE_RE = re.compile(r"^pipe (\d+)$")
# an empty target ("---  ping statistics ---") is the second branch, so the blanks are not split
_STATS_HDR_RE = re.compile(r"^---(?:\s++(?P<target>\S++)\s++|\s\s++)ping6? statistics\s+---")
_STATS_RE = re.compile(
    r"^(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received(?P<mid>.*?), "
    r"(?P<loss>\d+(?:\.\d+)?)% packet loss(?:, time (?P<time>\d+)\s*ms)?"
)
_EXTRA_RE = re.compile(r"\+(?P<n>\d+) (?P<what>duplicates|errors|corrupted)")
_RTT_RE = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev|std-dev))? = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?:/(?P<mdev>[\d.]+))?\s*(?P<u>ms|us)"
    r"(?:, pipe (?P<pipe>\d+))?"
)
_BSD_DUMP_RE = re.compile(r"^(?:Vr HL TOS|\s*\d\s+\d\s+[0-9a-f]{2}\s+[0-9a-f]{4}\s)")
_UNIT_US = {"ms": 1000.0, "us": 1.0, "usec": 1.0, "s": 1_000_000.0, None: 1000.0}


def _us(value: str, unit: str | None) -> float:
    return float(value) * _UNIT_US.get(unit, 1000.0)


def _detect(text: str) -> float:
    if "packets transmitted" in text or " ping statistics ---" in text:
        return 0.95
    if "PING6(" in text or ("PING " in text and _HDR_ANY_RE.search(text, 0, 4000) is not None):
        return 0.95
    if "bytes from" in text and ("icmp_seq=" in text or " seq=" in text):
        return 0.9
    if "Frag needed and DF set" in text or (
        ("too long" in text or "TOO LONG" in text or "Too Long" in text)
        and _TOO_LONG_RE.search(text) is not None
    ):
        return 0.9
    if ("Pinging " in text and _WIN_HDR_RE.search(text) is not None) or (
        "Packet needs to be fragmented but DF set" in text
    ):
        return 0.9  # Windows ping
    return 0.0


class _Run:
    """State of one ``ping`` invocation inside the capture."""

    __slots__ = ("header", "mtus", "summary")

    def __init__(self, header: PingHeader | None) -> None:
        self.header = header
        self.summary: PingSummary | None = None
        self.mtus: list[int] = []


_GLUE_RE = re.compile(
    r"(?<=\S)(?=PING \S|--- \S{1,255} ping statistics ---|rtt min/avg/max|round-trip min)"
    r"|(?<=[^\s\d])(?=\d{1,5} bytes from |\d{1,9} packets transmitted)"
)
"""Where ping's own lines begin inside one line: a page that lost its line breaks glues the
header, the replies and the summary together ("...data.64 bytes from ...time=0.99 ms64 bytes
from ..."); a line that holds two or more of them is cut there."""


def _unglued(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``text``, a line that glues ping's lines together cut apart
    (every piece keeps the line's number)."""
    for no, raw in enumerate(text.split("\n"), 1):
        if len(raw) > 120 and ("bytes from" in raw or "ping statistics" in raw):
            cuts = [m.start() for m in _GLUE_RE.finditer(raw)]
            if len(cuts) >= 2:
                bounds = [0, *cuts, len(raw)]
                for a, b in itertools.pairwise(bounds):
                    yield no, raw[a:b]
                continue
        yield no, raw


@register(
    "ping",
    summary="ping [-M do -s 8972] HOST (iputils, BusyBox, BSD/macOS)",
    detect=_detect,
    refs=("S11", "S20", "S21"),
)
def parse_ping(text: str) -> ParseResult:
    """Parse ``ping`` output into header, reply, error and summary records."""
    result = ParseResult("ping")
    runs: list[_Run] = []
    run: _Run | None = None
    in_dump = False
    stats_target: str | None = None
    stats_line: int | None = None

    def current() -> _Run:
        nonlocal run
        if run is None:
            run = _Run(None)
            runs.append(run)
        return run

    for no, raw in _unglued(text):
        line = raw.strip()
        if not line:
            in_dump = False
            continue
        if in_dump and _BSD_DUMP_RE.match(raw):
            continue
        in_dump = False
        if line.startswith("PING"):
            hm = _HDR_RE.match(line)
            h6 = _HDR6_RE.match(line) if hm is None else None
            if hm is None and h6 is None:
                result.warn(no, "expected a 'PING host (address) N bytes' header", raw)
                continue
            if hm is not None:
                addr = hm.group("addr") or None
                if addr is not None and "(" in addr:
                    # iputils ping6 by name: "PING name(canonical (2a04::1)) 56 data bytes"
                    addr = addr[addr.index("(") + 1 : -1] or None
                payload = int(hm.group("payload"))
                total = hm.group("total")
                ipv6 = addr is not None and ":" in addr
                hdr = PingHeader(
                    line=no,
                    target=hm.group("target") or (addr or ""),
                    address=addr,
                    payload_bytes=payload,
                    ipv6=ipv6,
                    source=(hm.group("src") or "").strip() or None,
                )
            else:
                assert h6 is not None
                payload, total = int(h6.group("payload")), h6.group("total")
                hdr = PingHeader(
                    line=no,
                    target=h6.group("addr"),
                    address=h6.group("addr"),
                    payload_bytes=payload,
                    ipv6=True,
                    source=h6.group("src"),
                )
            if total is not None:
                hdr.packet_bytes, hdr.packet_bytes_printed = int(total), True
            elif not hdr.ipv6:
                hdr.packet_bytes = payload + ICMP_IPV4_OVERHEAD_BYTES
            result.records.append(hdr)
            run = _Run(hdr)
            runs.append(run)
            continue
        rm = _REPLY_RE.match(line)
        if rm is not None:
            body = rm.group("body")
            seq_m = _SEQ_RE.search(body)
            if seq_m is None:
                # BSD: "92 bytes from R (A): Destination Host Unreachable" + header dump
                kind = "unreachable" if "Unreachable" in body else "other"
                result.records.append(
                    PingError(line=no, kind=kind, source=rm.group("srcaddr") or rm.group("src"),
                              message=body.strip())
                )  # fmt: skip
                in_dump = True
                current()
                continue
            ttl_m = _TTL_RE.search(body)
            t_m = _TIME_RE.search(body)
            result.records.append(
                PingReply(
                    line=no,
                    seq=int(seq_m.group("seq")),
                    bytes=int(rm.group("bytes")),
                    source=rm.group("src"),
                    source_address=rm.group("srcaddr"),
                    ttl=int(ttl_m.group("ttl")) if ttl_m else None,
                    time_us=_us(t_m.group("t"), t_m.group("u")) if t_m else None,
                    timestamp_s=float(rm.group("ts")) if rm.group("ts") else None,
                    duplicate="(DUP!)" in body,
                    truncated="(truncated)" in body,
                )
            )
            current()
            continue
        wm = _WIN_REPLY_RE.match(line)
        if wm is not None:
            result.records.append(
                PingReply(line=no, seq=None, bytes=int(wm.group("bytes")), source=wm.group("src"),
                          ttl=int(wm.group("ttl")), time_us=_us(wm.group("t"), "ms"))
            )  # fmt: skip
            current()
            continue
        if line.startswith("From "):
            fm = _FROM_RE.match(line)
            if fm is None:
                result.warn(no, "expected 'From ROUTER icmp_seq=N MESSAGE'", raw)
                continue
            msg = fm.group("msg")
            frag = _FRAG_RE.search(msg)
            err = PingError(
                line=no,
                kind="frag-needed" if frag else ("unreachable" if "nreachable" in msg else "other"),
                seq=int(fm.group("seq")) if fm.group("seq") else None,
                mtu_bytes=int(frag.group("mtu")) if frag else None,
                source=fm.group("srcaddr") or fm.group("src"),
                message=msg.strip(),
            )
            result.records.append(err)
            if err.mtu_bytes is not None:
                current().mtus.append(err.mtu_bytes)
            continue
        tm = _TIMEOUT_RE.match(line)
        if tm is not None:
            result.records.append(
                PingError(line=no, kind="timeout", seq=int(tm.group(1)), message=line)
            )
            continue
        low = line.lower()
        if "message too long" in low:
            lm = _LOCAL_MTU_RE.search(line)
            err = PingError(
                line=no,
                kind="message-too-long",
                mtu_bytes=int(lm.group("mtu")) if lm else None,
                message=line,
            )
            result.records.append(err)
            if err.mtu_bytes is not None:
                current().mtus.append(err.mtu_bytes)
            continue
        if low.startswith(("ping:", "ping6:", "connect:", "sendmsg:", "sendto:")):
            kind = "other"
            if "unknown host" in low or "name or service" in low or "resolve" in low:
                kind = "name-resolution"
            elif "unreachable" in low:
                kind = "unreachable"
            result.records.append(PingError(line=no, kind=kind, message=line))
            continue
        sm = _STATS_HDR_RE.match(line)
        if sm is not None:
            stats_target, stats_line = sm.group("target") or None, no
            continue
        st = _STATS_RE.match(line)
        if st is not None:
            summ = PingSummary(
                line=stats_line or no,
                end_line=no if stats_line else None,
                target=stats_target,
                transmitted=int(st.group("tx")),
                received=int(st.group("rx")),
                loss_pct=float(st.group("loss")),
                time_ms=int(st.group("time")) if st.group("time") else None,
            )
            for em in _EXTRA_RE.finditer(st.group("mid")):
                setattr(summ, em.group("what"), int(em.group("n")))
            r = current()
            if r.header is not None:
                summ.packet_bytes = r.header.packet_bytes
                if summ.target is None:
                    summ.target = r.header.target
            summ.path_mtu_bytes = min(r.mtus) if r.mtus else None
            r.summary = summ
            result.records.append(summ)
            stats_target, stats_line = None, None
            continue
        rt = _RTT_RE.match(line)
        if rt is not None:
            r = current()
            if r.summary is None:
                result.warn(no, "rtt line without a packets-transmitted line before it", raw)
                continue
            u = rt.group("u")
            try:
                rtts = [_us(v, u) if v else None for v in rt.group("min", "avg", "max", "mdev")]
            except ValueError:  # "[\d.]+" also reads "1.2.3"
                result.warn(no, "expected rtt min/avg/max numbers", raw)
                continue
            summ = r.summary
            summ.rtt_min_us, summ.rtt_avg_us, summ.rtt_max_us, summ.rtt_mdev_us = rtts
            r.summary.pipe = int(rt.group("pipe")) if rt.group("pipe") else None
            r.summary.end_line = no
            continue
        pm = _PIPE_RE.match(line)
        if pm is not None and run is not None and run.summary is not None:
            # iputils prints "pipe N" alone when no reply came back (no rtt line to carry it)
            run.summary.pipe = int(pm.group(1))
            run.summary.end_line = no
            continue
        if _PROMPT_RE.match(raw) or line.startswith(("WARNING", "Warning", "PATTERN: ")):
            continue
        wh = _WIN_HDR_RE.match(line)
        if wh is not None:
            payload = int(wh.group("payload"))
            addr = wh.group("addr") or (
                wh.group("target") if wh.group("target")[0].isdecimal() else None
            )
            hdr = PingHeader(
                line=no,
                target=wh.group("target"),
                address=addr,
                payload_bytes=payload,
                ipv6=addr is not None and ":" in addr,
            )
            if not hdr.ipv6:
                hdr.packet_bytes = payload + ICMP_IPV4_OVERHEAD_BYTES
            result.records.append(hdr)
            run = _Run(hdr)
            runs.append(run)
            continue
        win_err = _WIN_ERRORS.get(low)
        if win_err is not None:
            result.records.append(PingError(line=no, kind=win_err, message=line))
            current()
            continue
        wsh = _WIN_STATS_HDR_RE.match(line)
        if wsh is not None:
            stats_target, stats_line = wsh.group("target"), no
            continue
        ws = _WIN_STATS_RE.match(line)
        if ws is not None:
            summ = PingSummary(
                line=stats_line or no,
                end_line=no if stats_line else None,
                target=stats_target,
                transmitted=int(ws.group("tx")),
                received=int(ws.group("rx")),
                loss_pct=float(ws.group("loss")),
            )
            r = current()
            if r.header is not None:
                summ.packet_bytes = r.header.packet_bytes
                summ.target = summ.target or r.header.target
            r.summary = summ
            result.records.append(summ)
            stats_target, stats_line = None, None
            continue
        wr = _WIN_RTT_RE.match(line)
        if wr is not None and run is not None and run.summary is not None:
            run.summary.rtt_min_us = _us(wr.group("min"), "ms")
            run.summary.rtt_avg_us = _us(wr.group("avg"), "ms")
            run.summary.rtt_max_us = _us(wr.group("max"), "ms")
            run.summary.end_line = no
            continue
        if (
            low.startswith(("approximate round trip times", "(0% loss)"))
            or _COMMAND_RE.match(line)
            or _MARKUP_RE.match(line)
        ):
            continue  # Windows banner line, or the ping command itself pasted without a prompt
        result.warn(no, "expected a ping reply, error or statistics line", raw)
    for r in runs:
        if r.header is not None and r.summary is None:
            result.warn(
                None,
                f"no statistics block after 'PING {r.header.target}' (line {r.header.line}): "
                "ping was interrupted or the capture is truncated",
            )
    return result
