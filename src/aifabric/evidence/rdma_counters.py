"""RDMA port counters → one :class:`RdmaCounters` record per device/port (and counter set).

Inputs, as engineers capture them:

* sysfs listings of ``/sys/class/infiniband/<dev>/ports/<port>/hw_counters/*`` (driver counters:
  mlx5 ``np_cnp_sent``, ``rp_cnp_handled``, ``np_ecn_marked_roce_packets``, ``out_of_sequence``,
  ``packet_seq_err``, ``local_ack_timeout_err``, ``out_of_buffer``...; Omni-Path hfi1
  ``RcResend``, ``PktDrop``...) and ``.../counters/*`` (the standard IB PMA port counters
  ``port_rcv_errors``, ``symbol_error``, ``link_downed``, ``port_xmit_discards``,
  ``port_xmit_wait``...), in the forms ``grep . <paths>`` (``path:value``), ``for f in ...; do
  echo $f $(cat $f)`` (``path value``), ``cat <one path>`` followed by the value, and bare
  ``name value`` / ``name: value`` columns after a ``cd <dir>`` / ``ls <dir>`` line or a
  ``show_counters DEV`` ``Port N hw counters:`` header. Paths through ``/sys/devices/...`` work
  too. ``N/A (no PMA)`` (iWARP devices without a PMA) becomes ``None``.
* ``rdma statistic [show] [link DEV/PORT]`` (iproute2): ``link mlx5_0/1 name value name value
  ...`` on one line (mail clients wrap it: continuation lines are accepted), the ``-p`` form
  (``link mlx5_0/1`` then one tab-indented ``name value`` per line), and ``rdma statistic qp
  show`` lines carrying ``cntn N qp-type RC pid N comm NAME`` and ``LQPN: <...>``, which become
  ``attributes``. Devices may be named after their netdev (``rocep1s0f5``). ``rdma statistic
  [qp] mode [supported]`` lines (``link X/1 supported optional-counters a,b``) list enabled
  counters without values and are skipped. ``rdma -j statistic show`` (a JSON list of objects
  with ``ifname``, ``port`` and one key per counter) is read too.
* Any of the above quoted in a mail (``> `` / ``> > `` prefixes).

Sources: https://man7.org/linux/man-pages/man8/rdma-statistic.8.html ;
https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband ;
NVIDIA "Understanding mlx5 Linux counters and status parameters" (enterprise-support.nvidia.com
/s/article/understanding-mlx5-linux-counters-and-status-parameters) ;
captures under ``tests/fixtures/evidence/rdma-hw-counters/`` (iproute2 statistics series cover
letter on netdev, its qp-show review reply, the optional-counters cover letter, netdata PR 9091,
node_exporter issue 966).

Seed refs: S13/S22 (ECN marks and CNPs: congestion signal trend), S20/S22 (retransmission and
drop counters: out_of_sequence, packet_seq_err, local_ack_timeout_err, out_of_buffer), S16
(symbol_error, link_downed: physical layer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, json_array
from aifabric.evidence.registry import register

__all__ = ["RdmaCounters", "classify_counters", "parse_rdma_counters"]


@dataclass(slots=True, kw_only=True)
class RdmaCounters(Record):
    """Counters of one RDMA device port, from one listing or one ``rdma statistic`` line."""

    record_type: ClassVar[str] = "rdma_counters"

    device: str | None
    """``mlx5_0``, ``hfi1_0``...; ``None`` when the capture does not say."""
    port: int | None
    """Port number; ``None`` for device-level counters (``/sys/class/infiniband/X/hw_counters``)."""
    source: str
    """``sysfs-hw_counters``, ``sysfs-counters``, ``rdma-statistic``, ``rdma-statistic-qp`` or
    ``rdma-statistic-mr`` (one memory region: ``attributes`` holds its ``mrn``)."""
    counters: dict[str, int | None] = field(default_factory=dict)
    """name → value in capture order; ``None`` for ``N/A`` (no PMA)."""
    counter_lines: dict[str, int] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)
    """Non-counter fields of ``rdma statistic qp show``: cntn, qp-type, pid, comm, LQPN."""
    congestion: dict[str, int] = field(default_factory=dict)
    """ECN/CNP counters (DCQCN): ``np_ecn_marked_roce_packets``, ``np_cnp_sent``, ``rp_cnp_*``."""
    errors: dict[str, int] = field(default_factory=dict)
    """Loss, retransmission and error counters (``*err*``, ``out_of_sequence``,
    ``out_of_buffer``, ``*discard*``, ``symbol_error``, ``link_downed``, ``*timeout*``...)."""

    def nonzero_errors(self) -> dict[str, int]:
        """The error counters that are not zero."""
        return {k: v for k, v in self.errors.items() if v}


_SYSFS_RE = re.compile(
    r"/infiniband/(?P<dev>[^/\s]+)/(?:ports/(?P<port>\d+)/)?(?P<dir>hw_counters|counters)"
    r"(?:/(?P<name>[^\s:/*]+))?"
)
_VALUE_RE = re.compile(r"^[:\s]\s*(-?\d+|N/A\b.*)\s*$")
_DETECT_DIR_RE = re.compile(r"/infiniband/[^/\s]++/ports/\d++/counters\b")
_FILE_HDR_RE = re.compile(r"^(?:===|==>)[ \t]*+(\S+)[ \t]*+(?:===|<==)$")
# linear: the separator's blanks are read once (``\s*`` then ``\s+`` split a run every way) and
# the value ends at its last non-blank, found greedily
_PAIR_RE = re.compile(r"^\s*([A-Za-z_][\w.\-]*+)(?:\s*+:\s*+|\s++)(\S(?:.*\S)?)\s*$")
_LINK_RE = re.compile(r"^\s*link\s+([^\s/]+)/(\d+)(?:\s+(.*))?$")
_MR_RE = re.compile(r"^\s*dev\s+(\S+)\s+(mrn\s+\d+(?:\s+.*)?)$")
"""``rdma statistic mr`` (iproute2 ``rdma/stat-mr.c``): ``dev rocep8s0f0 mrn 8 page_faults 27
...``, one memory region per line (ODP page-fault counters), no port."""
_STAT_COMMAND_RE = re.compile(r"\brdma\s+(?:-\w+\s+)*stat(?:istic)?\b")
_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_MODE_WORDS = frozenset({"supported", "optional-counters", "optional-set:", "qp", "mr", "auto"})
"""First token after ``link DEV/PORT`` on ``rdma statistic [qp] mode [supported]`` lines: a
configuration listing, not counters."""
_SHOW_COUNTERS_RE = re.compile(r"show_(?:rdma_)?counters\s+(\S+)")
_PORT_HEADER_RE = re.compile(r"^\s*Port\s+(\d+)\s+(hw\s+)?counters:\s*$", re.IGNORECASE)
_QP_ATTRS = frozenset({"cntn", "qp-type", "pid", "comm", "lqpn", "mrn", "type", "mode"})
_CONGESTION_WORDS = ("cnp", "ecn")
_ERROR_WORDS = (
    "err",
    "out_of_sequence",
    "out_of_buffer",
    "discard",
    "drop",
    "timeout",
    "symbol_error",
    "link_downed",
    "link_error_recovery",
    "duplicate_request",
    "retrans",
    "nak",
    "resend",
    "timeout",
    "vl15_dropped",
)


def _int_or_none(raw: str) -> tuple[bool, int | None]:
    """(ok, value) for a counter cell: an integer, or N/A → None; ok False for anything else."""
    s = raw.strip()
    digits = s[1:] if s[:1] == "-" else s
    if digits.isdecimal() and len(digits) <= 20:  # a counter is 64 bits: at most 20 digits
        return True, int(s)
    if s.startswith("N/A") or s in {"NA", "-"}:
        return True, None
    return False, None


def classify_counters(rec: RdmaCounters) -> None:
    """Fill ``congestion`` and ``errors`` from ``counters`` by name (module constants)."""
    for name, value in rec.counters.items():
        if value is None:
            continue
        low = name.lower()
        if any(w in low for w in _CONGESTION_WORDS):
            rec.congestion[name] = value
        elif any(w in low for w in _ERROR_WORDS) or low in {"pktdrop", "othernak"}:
            rec.errors[name] = value


class _State:
    """Parser state: the open record and lines waiting to be judged."""

    __slots__ = (
        "cat_target",
        "ctx",
        "cur",
        "file_target",
        "link_tokens",
        "mode_line",
        "pending",
        "records",
        "result",
    )

    def __init__(self, result: ParseResult) -> None:
        self.result = result
        self.records: list[RdmaCounters] = []
        self.cur: RdmaCounters | None = None
        self.ctx: tuple[str | None, int | None, str] | None = None
        self.pending: list[tuple[int, str]] = []
        self.link_tokens: list[tuple[int, str]] | None = None
        self.cat_target: tuple[str, int | None, str, str] | None = None
        self.file_target: tuple[str | None, int | None, str, str] | None = None
        """A ``=== ./name ===`` / ``==> path <==`` file header whose value is the next line."""
        self.mode_line = False

    def close(self) -> None:
        if self.link_tokens is not None:
            self._finish_link()
        if self.cur is not None:
            if self.cur.counters or self.cur.attributes:
                self.cur.end_line = max(self.cur.counter_lines.values(), default=self.cur.line)
                classify_counters(self.cur)
                self.records.append(self.cur)
            self.cur = None
        self.pending.clear()

    def open(self, line: int, dev: str | None, port: int | None, source: str) -> RdmaCounters:
        self.close()
        self.cur = RdmaCounters(line=line, device=dev, port=port, source=source)
        return self.cur

    def into(self, line: int, dev: str | None, port: int | None, source: str, name: str) -> None:
        """Make the open record the one for (dev, port, source), opening a new one when the
        open record is another port's or already holds ``name`` (the next snapshot)."""
        cur = self.cur
        if (
            cur is None
            or cur.device != dev
            or cur.port != port
            or cur.source != source
            or name in cur.counters
        ):
            self.open(line, dev, port, source)

    def add(self, line: int, name: str, value: int | None) -> None:
        assert self.cur is not None
        if self.pending:
            for bad_line, text in self.pending:
                self.result.warn(bad_line, "expected a counter line (name and value)", text)
            self.pending.clear()
        self.cur.counters[name] = value
        self.cur.counter_lines[name] = line

    def _finish_link(self) -> None:
        tokens = self.link_tokens or []
        self.link_tokens = None
        rec = self.cur
        if rec is None:
            return
        i = 0
        n = len(tokens)
        while i < n:
            line, name = tokens[i]
            if name == "LQPN:" or name.upper() == "LQPN:":
                vals = []
                i += 1
                while i < n:
                    vals.append(tokens[i][1])
                    i += 1
                    if vals[-1].endswith(">"):
                        break
                rec.attributes["lqpn"] = " ".join(vals).strip("<>")
                continue
            if i + 1 >= n:
                self.result.warn(line, f"counter {name!r} has no value (truncated line?)", name)
                break
            raw = tokens[i + 1][1]
            ok, value = _int_or_none(raw)
            if name in _QP_ATTRS or not ok:
                if not ok and name not in _QP_ATTRS:
                    self.result.warn(line, f"expected an integer value for {name!r}", raw)
                rec.attributes[name] = raw
                if name in _QP_ATTRS and rec.source == "rdma-statistic":
                    rec.source = "rdma-statistic-qp"
            else:
                rec.counters[name] = value
                rec.counter_lines[name] = line
            i += 2


def _on_link(st: _State, lineno: int, m: re.Match[str]) -> None:
    rest = m.group(3)
    if rest and rest.split()[0].lower() in _MODE_WORDS:
        st.close()  # ``rdma statistic mode`` output: which counters are enabled, no values
        st.ctx = None
        st.mode_line = True
        return
    st.open(lineno, m.group(1), int(m.group(2)), "rdma-statistic")
    st.link_tokens = [(lineno, t) for t in rest.split()] if rest else []
    st.ctx = None


_LINK_LINE_RE = re.compile(r"^[ \t>]*link[ \t]+[\w.\-]+/\d+\b", re.MULTILINE)
_MR_LINE_RE = re.compile(r"^[ \t>]*dev[ \t]+\S+[ \t]+mrn[ \t]+\d+", re.MULTILINE)
_DETECT_NAMES = (
    "np_cnp_sent",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "out_of_sequence",
    "local_ack_timeout_err",
    "implied_nak_seq_err",
)


_IB_PORT_COUNTERS = (
    r"port_(?:rcv|xmit)_\w+|(?:unicast|multicast)_(?:rcv|xmit)_packets|symbol_error"
    r"|link_downed|link_error_recovery|local_link_integrity_errors"
    r"|excessive_buffer_overrun_errors|VL15_dropped"
)
_IB_PORT_COUNTER_RE = re.compile(rf"(?:{_IB_PORT_COUNTERS})$")
_FILE_HEADER_COUNTER_RE = re.compile(
    rf"^(?:=== |==> )(?:\./)?(?P<name>{_IB_PORT_COUNTERS}|\w+_err|out_of_\w+|\w*cnp\w*)"
    r"(?: ===| <==)",
    re.MULTILINE,
)
"""``=== ./port_rcv_data ===`` (or ``==> port_rcv_data <==`` from ``head``): one counter file of
the port's ``counters``/``hw_counters`` directory by its kernel name (ib_core ``sysfs.c``, mlx5
``counters.c``)."""


def _detect(text: str) -> float:
    if "/hw_counters" in text or ("/infiniband/" in text and "/counters/" in text):
        return 0.9
    if "/infiniband/" in text and _DETECT_DIR_RE.search(text):
        return 0.9  # the counters directory as a prompt's cwd or a loop's argument
    if "link mlx5_" in text or "rx_write_requests" in text:
        return 0.9
    if "stat" in text and _STAT_COMMAND_RE.search(text, 0, 65536) and (
        _LINK_LINE_RE.search(text, 0, 65536) or _MR_LINE_RE.search(text, 0, 65536)
    ):
        return 0.9  # the command, then its link DEV/PORT (or dev DEV mrn N) output
    if any(n in text for n in _DETECT_NAMES):
        return 0.85
    if ("=== " in text or "==> " in text) and len(
        {m.group(1) for m in _FILE_HEADER_COUNTER_RE.finditer(text, 0, 65536)}
    ) >= 3:
        return 0.85  # a loop over the counters directory, its path cut off (an excerpt)
    return 0.0


def _parse_json(text: str, result: ParseResult) -> bool:
    """``rdma -j [-p] statistic [qp] show``: a list of objects with ``ifname``, ``port`` and one key
    per counter; False when the text is not such JSON."""
    data = json_array(text)
    if data is None or not all(isinstance(d, dict) for d in data):
        return False
    for obj in data:
        if "ifname" not in obj:
            continue
        port = obj.get("port")
        rec = RdmaCounters(
            line=1,
            device=str(obj["ifname"]),
            port=port if isinstance(port, int) else None,
            source="rdma-statistic",
        )
        for key, val in obj.items():
            if key in {"ifname", "port", "ifindex"}:
                continue
            if isinstance(val, bool) or not isinstance(val, int) or key in _QP_ATTRS:
                rec.attributes[key] = " ".join(map(str, val)) if isinstance(val, list) else str(val)
                if key in _QP_ATTRS:
                    rec.source = "rdma-statistic-qp"
            else:
                rec.counters[key] = val
                rec.counter_lines[key] = 1
        if rec.counters or rec.attributes:
            classify_counters(rec)
            result.records.append(rec)
    return True


@register(
    "rdma-hw-counters",
    summary="/sys/class/infiniband/DEV/ports/N/{hw_counters,counters} listings, rdma statistic",
    detect=_detect,
    refs=("S13", "S20", "S22", "S16"),
)
def parse_rdma_counters(text: str) -> ParseResult:
    """Parse RDMA counter listings and ``rdma statistic`` output; never raises."""
    result = ParseResult(kind="rdma-hw-counters")
    if text.lstrip()[:1] in ("[", "{") and _parse_json(text, result):
        return result
    st = _State(result)
    for lineno, raw_line in enumerate(text.split("\n"), 1):
        line = raw_line.rstrip("\r")
        if line.startswith(">"):
            line = _QUOTE_RE.sub("", line)  # a mail or markdown quote of the capture
        stripped = line.strip()
        mode_line, st.mode_line = st.mode_line, False
        if mode_line and line[:1] in (" ", "\t") and stripped.lower().startswith("optional-set:"):
            st.mode_line = True  # ``    Optional-set: cc_rx_ce_pkts`` under a mode line
            continue
        if not stripped:
            if st.link_tokens is not None or (
                st.cur is not None and st.ctx is None and st.file_target is None
                and not st.cur.source.startswith("sysfs-")
            ):
                st.close()
            st.cat_target = None
            continue
        fh = _FILE_HDR_RE.match(stripped)
        if fh is not None:
            # one file per header (`head FILES`, a `for f in ...; do echo "=== $f ==="; cat
            # "$f"; done` loop): the value is on the next line
            path = fh.group(1)
            pm = _SYSFS_RE.search(path) if "/infiniband/" in path else None
            if pm is not None and pm.group("name"):
                port_n = int(pm.group("port")) if pm.group("port") else None
                st.file_target = (pm.group("dev"), port_n, pm.group("dir"), pm.group("name"))
            elif st.ctx is not None and "/" not in path.removeprefix("./"):
                st.file_target = (*st.ctx, path.removeprefix("./"))
            elif st.ctx is None and _FILE_HEADER_COUNTER_RE.match(stripped) is not None:
                # the loop's directory line was cut off (an excerpt): device and port unknown,
                # the directory told by the name (IB PortCounters live in counters/)
                counter = path.removeprefix("./")
                where = "counters" if _IB_PORT_COUNTER_RE.match(counter) else "hw_counters"
                st.file_target = (None, None, where, counter)
            continue
        if st.file_target is not None:
            fdev, fport, fdir, fname = st.file_target
            st.file_target = None
            ok, value = _int_or_none(stripped)
            if ok:
                st.into(lineno, fdev, fport, f"sysfs-{fdir}", fname)
                st.add(lineno, fname, value)
                continue
        if st.cat_target is not None:
            target = st.cat_target
            st.cat_target = None
            ok, value = _int_or_none(stripped)
            if ok:
                st.open(lineno, target[0], target[1], f"sysfs-{target[2]}")
                st.add(lineno, target[3], value)
                st.close()
                continue
        # ---- rdma statistic
        if stripped.startswith("link "):
            m = _LINK_RE.match(stripped)
            if m is not None:
                _on_link(st, lineno, m)
                continue
        if stripped.startswith("dev ") and "mrn" in stripped:
            mm = _MR_RE.match(stripped)
            if mm is not None:
                st.open(lineno, mm.group(1), None, "rdma-statistic-mr")
                st.link_tokens = [(lineno, t) for t in mm.group(2).split()]
                st.ctx = None
                continue
        if st.link_tokens is not None:
            if "$ " in line or "# " in line or "/infiniband/" in line:
                st.close()
            else:
                st.link_tokens.extend((lineno, t) for t in stripped.split())
                continue
        # ---- sysfs paths
        if "/infiniband/" in line:
            m = _SYSFS_RE.search(line)
            if m is not None:
                sdev: str = m.group("dev")
                sdir: str = m.group("dir")
                port_s: str | None = m.group("port")
                name: str | None = m.group("name")
                port = int(port_s) if port_s else None
                tail = line[m.end() :]
                if name is not None:
                    vm = _VALUE_RE.match(tail) if tail else None
                    if vm is not None:
                        ok, value = _int_or_none(vm.group(1))
                        st.into(lineno, sdev, port, f"sysfs-{sdir}", name)
                        st.ctx = None
                        if ok:
                            st.add(lineno, name, value)
                        else:
                            result.warn(lineno, f"expected an integer value for {name!r}", line)
                        continue
                    if "cat " in line and "*" not in line and not tail.strip():
                        st.close()
                        st.cat_target = (sdev, port, sdir, name)
                        continue
                    # a path without value (ls -R, a diff header): not a counter line
                    st.pending.clear()
                    continue
                # a directory: cd/ls/for-loop context for bare "name value" lines
                st.close()
                st.ctx = (sdev, port, sdir)
                continue
        if "show_counters" in line or "show_rdma_counters" in line:
            sm = _SHOW_COUNTERS_RE.search(line)
            if sm is not None and not sm.group(1).startswith("<"):
                st.close()
                st.ctx = (sm.group(1), 1, "hw_counters")
                continue
        ph = _PORT_HEADER_RE.match(line)
        if ph is not None:
            hdev = st.ctx[0] if st.ctx is not None else None
            st.close()
            st.ctx = (hdev, int(ph.group(1)), "hw_counters" if ph.group(2) else "counters")
            continue
        # ---- bare name/value under a context
        if st.ctx is not None:
            pm = _PAIR_RE.match(line)
            if pm is not None:
                ok, value = _int_or_none(pm.group(2))
                if ok:
                    if st.cur is None or pm.group(1) in st.cur.counters:
                        cdev, cport, cdir = st.ctx
                        st.open(lineno, cdev, cport, f"sysfs-{cdir}")
                    st.add(lineno, pm.group(1), value)
                    continue
            if st.cur is not None and line[:1] in (" ", "\t"):
                result.warn(lineno, "expected a counter line (name and value)", line)
                continue
            if st.cur is not None:
                st.pending.append((lineno, line))
            continue
        if st.cur is not None:
            if st.cur.source == "rdma-statistic" and line[:1] in (" ", "\t"):
                pm = _PAIR_RE.match(line)
                if pm is not None:
                    ok, value = _int_or_none(pm.group(2))
                    if ok:
                        st.add(lineno, pm.group(1), value)
                        continue
                result.warn(lineno, "expected 'name value' under a link line", line)
                continue
            st.pending.append((lineno, line))
    st.close()
    result.records.extend(st.records)
    return result
