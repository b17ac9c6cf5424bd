"""iproute2 link and traffic-control output: ``ip [-s [-s]] [-d] link show`` and ``tc -s qdisc|class
show`` → :class:`IpLink` and :class:`TcEntry` records.

``ip-link`` handles the old statistics layout (``RX: bytes  packets  errors  dropped overrun
mcast``, iproute2 < 5.10) and the new one (``RX:  bytes packets errors dropped  missed   mcast``,
right-aligned), the ``-s -s`` rows (``RX errors: length crc frame fifo missed``, ``TX errors:
aborted fifo window heartbeat transns``), ``altname`` lines, ``ip -d`` detail lines (kept as
text), ``name@parent`` (VLAN, veth), pastes wrapped by a tracker (a header line continued on the
next, unindented line) and markdown backticks around a paste, SR-IOV ``vf N MAC ..., vlan N,
spoof checking on, link-state auto, trust off`` lines (old ``MAC`` and iproute2 >= 5.2 ``vf N
link/ether ... brd ...`` forms; with ``-s`` the VF's own RX/TX rows go to that VF, not the PF)
and ``ip -j [-s] [-d] link`` JSON (``stats64.rx/tx`` mapped to the same kernel names). Column
names map to the kernel's ``/sys/class/net/X/statistics`` names (``rx_missed_errors``,
``tx_carrier_errors``...).

``tc`` handles ``qdisc`` and ``class`` entries of any kind (mq, mqprio, fq_codel, htb, ets, prio,
pfifo_fast...): the header (kind, handle, dev, root/parent, refcnt), option text, mqprio ``map``
and ``queues:(0:1) (2:3)`` continuation lines, ``Sent N bytes N pkt (dropped N, overlimits N
requeues N)``, ``[rate ...] backlog Nb Np requeues N`` (size units b/Kb/Mb powers of 1024, as
tc's sprint_size prints them) and per-kind extra statistics (fq_codel ``maxpacket``,
``ecn_mark``, htb ``lended``/``tokens``...) as integers.

Sources: https://man7.org/linux/man-pages/man8/ip-link.8.html ;
https://man7.org/linux/man-pages/man8/tc.8.html ;
https://man7.org/linux/man-pages/man8/tc-mqprio.8.html ;
captures under ``tests/fixtures/evidence/{ip-link,tc}/`` (security-onion issue 437, iproute2
issue 22, ha-unraid issues 13 and 49, ovn-kubernetes docs/ovs_offload.md, sqm-scripts issue
37, qosmate issue 65).

Seed refs: S11/S21 (MTU per interface: 1500 vs 9000), S20/S22 (drop and error counters), S14
(mqprio priority → traffic-class map).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, json_array
from aifabric.evidence.registry import register

__all__ = ["IpLink", "TcEntry", "parse_ip_lines", "parse_ip_link", "parse_tc"]


# --------------------------------------------------------------------------------------------
# ip link


@dataclass(slots=True, kw_only=True)
class IpLink(Record):
    """One interface of ``ip link show`` (with ``-s``: its counters)."""

    record_type: ClassVar[str] = "ip_link"

    index: int
    name: str
    parent: str | None = None
    """The part after ``@`` (VLAN lower device, veth peer, ``NONE``)."""
    flags: list[str] = field(default_factory=list)
    mtu_bytes: int | None = None
    qdisc: str | None = None
    state: str | None = None
    """Operational state: ``UP``, ``DOWN``, ``UNKNOWN``, ``LOWERLAYERDOWN``..."""
    master: str | None = None
    mode: str | None = None
    group: str | None = None
    qlen: int | None = None
    link_type: str | None = None
    """``ether``, ``loopback``, ``infiniband``, ``none``..."""
    mac: str | None = None
    broadcast: str | None = None
    altnames: list[str] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    """``ip addr`` / ``ifconfig`` addresses as ``address/prefix`` (``10.0.0.1/24``,
    ``fe80::1/64``)."""
    details: list[str] = field(default_factory=list)
    """``ip -d`` lines (vlan, bond, vxlan attributes), verbatim."""
    vfs: list[dict[str, str | int]] = field(default_factory=list)
    """SR-IOV VFs of a PF: ``vf`` (number), ``mac``, ``vlan``, ``spoof_checking``, ``link_state``,
    ``trust``, ``query_rss``..., and with ``-s`` the VF's ``rx_bytes``, ``rx_packets``..."""
    counters: dict[str, int] = field(default_factory=dict)
    """``rx_bytes``, ``rx_packets``, ``rx_errors``, ``rx_dropped``, ``rx_missed_errors`` /
    ``rx_over_errors``, ``multicast``, ``rx_crc_errors``..., ``tx_carrier_errors``,
    ``collisions``... (kernel statistics names)."""

    @property
    def admin_up(self) -> bool:
        """The ``UP`` flag (administratively up)."""
        return "UP" in self.flags

    @property
    def carrier(self) -> bool:
        """The ``LOWER_UP`` flag (carrier present); ``ifconfig`` prints ``RUNNING`` instead
        (IFF_RUNNING, set while the operational state is up)."""
        return "LOWER_UP" in self.flags or "RUNNING" in self.flags


_IF_RE = re.compile(r"^[`>$\s]*+(?:(\d+):\s++)?([^\s:@]++)(?:@([^\s:]+))?:\s+<([^>]*)>(.*)$")
"""An interface line; the ifindex is optional (users trim it: ``eth0: <UP,...> mtu 1500``)."""
_IF_KEYS = frozenset({"mtu", "qdisc", "state", "master", "mode", "group", "qlen", "link-netnsid"})
_STATS_HDR_RE = re.compile(r"^\s*(RX|TX)(\s+errors)?:\s+(.*)$")
_COLS = {
    ("RX", "bytes"): "rx_bytes",
    ("RX", "packets"): "rx_packets",
    ("RX", "errors"): "rx_errors",
    ("RX", "dropped"): "rx_dropped",
    ("RX", "overrun"): "rx_over_errors",
    ("RX", "missed"): "rx_missed_errors",
    ("RX", "mcast"): "multicast",
    ("RX", "nohandler"): "rx_nohandler",
    ("RX", "otherhost"): "rx_otherhost_dropped",
    ("RX", "compressed"): "rx_compressed",
    ("RX", "length"): "rx_length_errors",
    ("RX", "crc"): "rx_crc_errors",
    ("RX", "frame"): "rx_frame_errors",
    ("RX", "fifo"): "rx_fifo_errors",
    ("TX", "bytes"): "tx_bytes",
    ("TX", "packets"): "tx_packets",
    ("TX", "errors"): "tx_errors",
    ("TX", "dropped"): "tx_dropped",
    ("TX", "carrier"): "tx_carrier_errors",
    ("TX", "collsns"): "collisions",
    ("TX", "compressed"): "tx_compressed",
    ("TX", "aborted"): "tx_aborted_errors",
    ("TX", "fifo"): "tx_fifo_errors",
    ("TX", "window"): "tx_window_errors",
    ("TX", "heartbeat"): "tx_heartbeat_errors",
    ("TX", "transns"): "carrier_changes",
}


_VF_RE = re.compile(
    r"^vf\s+(?P<n>\d+)\s+(?:MAC\s+(?P<mac>[0-9a-fA-F:]+)"
    r"|link/\w+\s+(?P<addr>[0-9a-fA-F:]+)(?:\s+brd\s+[0-9a-fA-F:]+)?)\s*,?\s*(?P<rest>.*)$"
)


def _parse_vf(stripped: str) -> dict[str, str | int] | None:
    """``vf 3 MAC fa:16:3e:b9:b8:ce, vlan 57, spoof checking on, link-state enable, trust off``
    (or ``vf 0     link/ether 00:.. brd ff:.., spoof checking off, ...``, iproute2 >= 5.2)."""
    m = _VF_RE.match(stripped)
    if m is None:
        return None
    vf: dict[str, str | int] = {"vf": int(m.group("n")), "mac": m.group("mac") or m.group("addr")}
    for part in m.group("rest").split(","):
        words = part.split()
        if len(words) >= 2:
            key = "_".join(words[:-1]).replace("-", "_").lower()
            vf[key] = int(words[-1]) if words[-1].isdecimal() else words[-1]
    return vf


def _apply_if_tokens(rec: IpLink, tokens: list[str]) -> None:
    i = 0
    while i + 1 < len(tokens):
        key, val = tokens[i], tokens[i + 1]
        if key == "mtu" and val.isdecimal():
            rec.mtu_bytes = int(val)
        elif key == "qdisc":
            rec.qdisc = val
        elif key == "state":
            rec.state = val
        elif key == "master":
            rec.master = val
        elif key == "mode":
            rec.mode = val
        elif key == "group":
            rec.group = val
        elif key == "qlen" and val.isdecimal():
            rec.qlen = int(val)
        elif key not in _IF_KEYS:
            i += 1
            continue
        i += 2


_JSON_STAT_KEYS = {"multicast": "multicast", "collisions": "collisions"}


def _ip_link_json(text: str, result: ParseResult) -> bool:
    """``ip -j [-p] [-s [-s]] [-d] link show``: a list of link objects (``ifindex``, ``ifname``,
    ``flags``, ``mtu``, ``operstate``, ``stats64.rx/tx``, ``vfinfo_list``...); False when the
    text is not such JSON."""
    data = json_array(text)
    if data is None:
        return False
    for obj in data:
        if not isinstance(obj, dict) or "ifname" not in obj:
            continue
        idx = obj.get("ifindex")
        rec = IpLink(
            line=1,
            index=idx if isinstance(idx, int) else 0,
            name=str(obj["ifname"]),
            parent=str(obj["link"]) if obj.get("link") is not None else None,
            flags=[str(f) for f in obj.get("flags", []) if isinstance(f, str)],
            mtu_bytes=obj["mtu"] if isinstance(obj.get("mtu"), int) else None,
            qdisc=obj.get("qdisc"),
            state=obj.get("operstate"),
            master=obj.get("master"),
            mode=obj.get("linkmode"),
            group=obj.get("group"),
            qlen=obj["txqlen"] if isinstance(obj.get("txqlen"), int) else None,
            link_type=obj.get("link_type"),
            mac=obj.get("address"),
            broadcast=obj.get("broadcast"),
            altnames=[str(a) for a in obj.get("altnames", [])],
            addresses=[
                f"{a['local']}/{a.get('prefixlen', '')}".rstrip("/")
                for a in obj.get("addr_info", []) or []
                if isinstance(a, dict) and a.get("local")
            ],
        )
        stats = obj.get("stats64") or obj.get("stats") or {}
        if isinstance(stats, dict):
            for direction in ("rx", "tx"):
                block = stats.get(direction)
                if not isinstance(block, dict):
                    continue
                for key, val in block.items():
                    if isinstance(val, int) and not isinstance(val, bool):
                        name = _JSON_STAT_KEYS.get(key) or (
                            key if key == "carrier_changes" else f"{direction}_{key}"
                        )
                        rec.counters[name] = val
        for vf in obj.get("vfinfo_list", []) or []:
            if isinstance(vf, dict):
                rec.vfs.append({str(k): v for k, v in vf.items() if isinstance(v, (str, int))})
        result.records.append(rec)
    return True


_BRIEF_STATES = r"(?:UP|DOWN|UNKNOWN|LOWERLAYERDOWN|DORMANT|NOTPRESENT|TESTING)"
BRIEF_RE = re.compile(
    r"^(?P<name>[^\s:]{1,32})\s{1,40}(?P<state>" + _BRIEF_STATES
    + r")(?:\s++(?P<rest>\S(?:.*\S)?))?\s*$"
)
"""A line of ``ip -br addr`` (``eth0  UP  10.0.0.2/24 fe80::1/64``) or ``ip -br link`` (``eth0
UP  aa:bb:cc:dd:ee:ff <BROADCAST,MULTICAST,UP,LOWER_UP>``): iproute2's brief form, the name,
the operational state, then the addresses or the MAC and flags."""


def brief_lines(text: str) -> tuple[int, int]:
    """(brief lines, of them with an address or a MAC) among the first 200 lines."""
    n = with_data = 0
    for raw in text[:65536].split("\n")[:200]:
        m = BRIEF_RE.match(raw.strip())
        if m is None:
            continue
        n += 1
        rest = m.group("rest") or ""
        with_data += "/" in rest or rest.count(":") == 5 or "<" in rest
    return n, with_data


def _detect_ip_link(text: str) -> float:
    head = text.lstrip()[:1]
    if head in ("[", "{") and '"ifname"' in text and '"operstate"' in text:
        return 0.9
    if "RX: bytes" in text or "RX:  bytes" in text or "RX:    bytes" in text:
        return 0.9
    if ": <" in text and ("link/ether" in text or "link/loopback" in text):
        return 0.9
    if ": <BROADCAST" in text or ": <LOOPBACK" in text:
        return 0.9
    if " <" in text and ("UP" in text or "DOWN" in text):
        n, flags = brief_lines(text)
        if n >= 2 and flags >= 1 and "/" not in text.replace("</", ""):
            return 0.8  # ip -br link
    return 0.0


@register(
    "ip-link",
    summary="ip [-s [-s]] [-d] link show [dev IFACE]",
    detect=_detect_ip_link,
    refs=("S11", "S21", "S20", "S22"),
)
def parse_ip_link(text: str) -> ParseResult:
    """Parse ``ip link`` output (with or without statistics); never raises."""
    return parse_ip_lines(text, "ip-link")


_ADDR_FLAGS = frozenset({
    "global", "link", "host", "site", "dynamic", "noprefixroute", "secondary", "permanent",
    "tentative", "deprecated", "temporary", "mngtmpaddr", "dadfailed", "optimistic", "home",
    "nodad", "stable-privacy", "autojoin",
})  # fmt: skip
"""Words ``ip addr`` prints after ``scope`` before the label (iproute2 ``ipaddress.c``)."""


def _address_label(stripped: str) -> str | None:
    """The interface an IPv4 ``inet`` line names at its end (``inet 10.0.0.2/24 brd 10.0.0.255
    scope global dynamic eth0``; an alias label ``eth0:1`` is ``eth0``), else None."""
    words = stripped.split()
    if len(words) < 5 or "/" not in words[1] or "scope" not in words:
        return None
    after = words[words.index("scope") + 2 :]
    label = after[-1] if after else None
    if label is None or label in _ADDR_FLAGS:
        return None
    return label.split(":", 1)[0]


def parse_ip_lines(text: str, kind: str) -> ParseResult:
    """``ip link`` / ``ip addr`` text or ``ip -j`` JSON → :class:`IpLink` records of ``kind``
    (``ip addr`` prints the same interface lines plus ``inet``/``inet6`` address lines)."""
    result = ParseResult(kind=kind)
    if text.lstrip()[:1] in ("[", "{") and _ip_link_json(text, result):
        return result
    cur: IpLink | None = None
    vf_target: dict[str, str | int] | None = None
    """The VF whose ``RX: bytes packets mcast bcast`` rows follow (``ip -s link`` of a PF)."""
    stats_hdr: tuple[int, str, list[str]] | None = None
    last_line = 0
    headerless = False
    """``cur`` came from an address line without its interface line (``ip addr | grep inet``)."""
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip().strip("`").strip()
        if not stripped:
            continue
        if stats_hdr is not None:
            hdr_line, direction, cols = stats_hdr
            stats_hdr = None
            values = stripped.split()
            if cur is not None and values and all(v.isdecimal() for v in values):
                if len(values) != len(cols):
                    result.warn(
                        lineno, f"expected {len(cols)} values under the {direction} header", line
                    )
                for col, val in zip(cols, values, strict=False):
                    key = _COLS.get((direction, col), f"{direction.lower()}_{col}")
                    if vf_target is not None:
                        vf_target[key] = int(val)
                    else:
                        cur.counters[key] = int(val)
                cur.end_line = last_line = lineno
                continue
            result.warn(hdr_line, f"{direction} statistics header without its value row", "")
        m = _IF_RE.match(line)
        if m is not None:
            if cur is not None:
                result.records.append(cur)
            cur = IpLink(
                line=lineno,
                index=int(m.group(1)) if m.group(1) else 0,
                name=m.group(2),
                parent=m.group(3),
                flags=[f for f in m.group(4).split(",") if f],
            )
            _apply_if_tokens(cur, m.group(5).split())
            vf_target = None
            headerless = False
            last_line = lineno
            continue
        if (cur is None or headerless) and (b := BRIEF_RE.match(stripped)) is not None:
            if cur is not None:
                result.records.append(cur)
            cur = IpLink(line=lineno, index=0, name=b.group("name").split("@", 1)[0],
                         state=b.group("state"))  # fmt: skip
            parent = b.group("name").partition("@")[2]
            cur.parent = parent or None
            for tok in (b.group("rest") or "").split():
                if "/" in tok and tok[:1] != "<":
                    cur.addresses.append(tok)
                elif tok.count(":") == 5:
                    cur.mac = tok
                elif tok[:1] == "<":
                    cur.flags = [f for f in tok.strip("<>").split(",") if f]
            headerless = True
            continue
        if kind == "ip-addr" and (cur is None or headerless) and stripped.startswith("inet "):
            label = _address_label(stripped)
            if label is not None and (cur is None or label != cur.name):
                if cur is not None:
                    result.records.append(cur)
                cur = IpLink(line=lineno, index=0, name=label)
                headerless = True
        if cur is None:
            continue
        if not line[:1].isspace():
            tokens = stripped.split()
            if lineno == last_line + 1 and tokens[0] in _IF_KEYS:
                _apply_if_tokens(cur, tokens)  # header wrapped by the paste
                cur.end_line = last_line = lineno
            continue
        if stripped.startswith("link/"):
            parts = stripped.split()
            cur.link_type = parts[0][5:]
            if len(parts) > 1 and ":" in parts[1]:
                cur.mac = parts[1]
            if "brd" in parts and parts.index("brd") + 1 < len(parts):
                cur.broadcast = parts[parts.index("brd") + 1]
            cur.end_line = last_line = lineno
            continue
        if stripped.startswith("vf "):
            vf = _parse_vf(stripped)
            if vf is not None:
                cur.vfs.append(vf)
                vf_target = vf
                cur.end_line = last_line = lineno
                continue
        if stripped.startswith(("inet ", "inet6 ")):
            words = stripped.split()
            cur.addresses.append(words[1])
            cur.end_line = last_line = lineno
            continue
        if cur.addresses and stripped.startswith("valid_lft "):
            cur.end_line = last_line = lineno  # the lifetime line under an address
            continue
        if stripped.startswith("altname "):
            cur.altnames.append(stripped.split(None, 1)[1])
            cur.end_line = last_line = lineno
            continue
        hm = _STATS_HDR_RE.match(line)
        if hm is not None:
            cols = [c for c in hm.group(3).split() if c]
            stats_hdr = (lineno, hm.group(1), cols)
            cur.end_line = last_line = lineno
            continue
        if stripped.split()[0].isdecimal():
            result.warn(lineno, "value row without an RX/TX header", line)
            continue
        cur.details.append(stripped)
        cur.end_line = last_line = lineno
    if stats_hdr is not None:
        result.warn(stats_hdr[0], f"{stats_hdr[1]} statistics header without its value row", "")
    if cur is not None:
        result.records.append(cur)
    return result


# --------------------------------------------------------------------------------------------
# tc


@dataclass(slots=True, kw_only=True)
class TcEntry(Record):
    """One ``qdisc`` or ``class`` of ``tc -s qdisc|class show``."""

    record_type: ClassVar[str] = "tc"

    object: str
    """``qdisc`` or ``class``."""
    kind: str
    """``mq``, ``mqprio``, ``fq_codel``, ``htb``, ``ets``..."""
    handle: str
    """Qdisc handle (``1:``, ``0:``) or class id (``1:11``)."""
    dev: str | None = None
    parent: str | None = None
    """``root``, or the parent id (``1:11``, ``:4``, ``ffff:fff1``)."""
    refcnt: int | None = None
    options: str = ""
    """Everything after the header fields, continuation lines (mqprio queues/mode) included."""
    num_tc: int | None = None
    prio_tc_map: list[int] = field(default_factory=list)
    """mqprio/prio ``map``: traffic class (or band) of each skb priority 0..15."""
    queues: list[tuple[int, int]] = field(default_factory=list)
    """mqprio ``queues:(first:last)`` per traffic class."""
    sent_bytes: int | None = None
    sent_packets: int | None = None
    dropped: int | None = None
    overlimits: int | None = None
    requeues: int | None = None
    backlog_bytes: int | None = None
    backlog_raw: str | None = None
    """Backlog size as printed (``0b``, ``12Kb``), when the unit made it a rounded value."""
    backlog_packets: int | None = None
    xstats: dict[str, int] = field(default_factory=dict)
    """Kind-specific statistics rows (fq_codel ``ecn_mark``, ``drop_overlimit``; htb
    ``lended``...)."""


_TC_HDR_RE = re.compile(r"^[`>$#\s]*(qdisc|class)\s+(\S+)\s+(\S+)(.*)$")
_SENT_RE = re.compile(
    r"Sent\s+(\d+)\s+bytes\s+(\d+)\s+pkts?\s*\(dropped\s+(\d+),\s*overlimits\s+(\d+)"
    r"(?:\s+requeues\s+(\d+))?\)"
)
_BACKLOG_RE = re.compile(r"backlog\s+(\d+(?:\.\d+)?)([KMG]?)b\s+(\d+)p(?:\s+requeues\s+(\d+))?")
# A search starts only at the beginning of a word and skips to its first letter or "_" (where the
# unanchored ``[A-Za-z_]\w*`` started), so a long word is read once, not once per character.
_PAIR_INT_RE = re.compile(r"(?<!\w)[^\WA-Za-z_]*+([A-Za-z_]\w*+):?\s+(-?\d+)(?=\s|$)")
_QUEUES_RE = re.compile(r"\((\d+):(\d+)\)")
_UNIT = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def _tc_header(rec: TcEntry, rest: str) -> None:
    tokens = rest.split()
    opts: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if t == "dev" and nxt is not None and rec.dev is None:
            rec.dev = nxt
            i += 2
        elif t == "root":
            rec.parent = "root"
            i += 1
        elif t == "parent" and nxt is not None and rec.parent is None:
            rec.parent = nxt
            i += 2
        elif t == "refcnt" and nxt is not None and nxt.isdecimal():
            rec.refcnt = int(nxt)
            i += 2
        else:
            opts.append(t)
            i += 1
    rec.options = " ".join(opts)
    _tc_options(rec, opts)


def _tc_options(rec: TcEntry, opts: list[str]) -> None:
    for i, t in enumerate(opts):
        if t in ("tc", "num_tc", "bands") and i + 1 < len(opts) and opts[i + 1].isdecimal():
            rec.num_tc = int(opts[i + 1])
        elif t in ("map", "priomap") and not rec.prio_tc_map:
            vals = []
            for v in opts[i + 1 :]:
                if not v.isdecimal():
                    break
                vals.append(int(v))
            rec.prio_tc_map = vals


_TC_HEAD_RE = re.compile(
    r"^(?:qdisc|class) [a-z_]+ [0-9a-f]*:[0-9a-f]*:? (?:dev \S+ )?(?:root|parent [0-9a-f]*:|leaf )",
    re.MULTILINE,
)


def _detect_tc(text: str) -> float:
    if "qdisc " in text and " Sent " in text and " pkt (dropped" in text:
        return 0.92
    if _TC_HEAD_RE.search(text) is not None:
        return 0.85  # a tc header without statistics (tc qdisc show, no -s)
    if ("qdisc " in text or "class " in text) and "refcnt" in text:
        return 0.6
    return 0.0


@register(
    "tc",
    summary="tc -s qdisc show / tc -s class show dev IFACE",
    detect=_detect_tc,
    refs=("S14", "S20", "S22"),
)
def parse_tc(text: str) -> ParseResult:
    """Parse ``tc [-s] qdisc|class show`` output; never raises."""
    result = ParseResult(kind="tc")
    cur: TcEntry | None = None
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        if "qdisc " in line or "class " in line:
            m = _TC_HDR_RE.match(line)
            if m is not None and (m.group(3)[0].isalnum() or m.group(3)[0] == ":"):
                if cur is not None:
                    result.records.append(cur)
                cur = TcEntry(line=lineno, object=m.group(1), kind=m.group(2), handle=m.group(3))
                _tc_header(cur, m.group(4))
                cur.end_line = lineno
                continue
        if cur is None:
            continue
        if not line[:1].isspace():
            continue  # prompt, prose: not part of an entry
        cur.end_line = lineno
        if stripped.startswith("Sent "):
            sm = _SENT_RE.search(stripped)
            if sm is None:
                result.warn(lineno, "expected 'Sent N bytes N pkt (dropped N, ...)'", line)
                continue
            cur.sent_bytes, cur.sent_packets = int(sm.group(1)), int(sm.group(2))
            cur.dropped, cur.overlimits = int(sm.group(3)), int(sm.group(4))
            cur.requeues = int(sm.group(5)) if sm.group(5) else None
            continue
        if "backlog " in stripped:
            bm = _BACKLOG_RE.search(stripped)
            if bm is None:
                result.warn(lineno, "expected 'backlog Nb Np requeues N'", line)
                continue
            num, unit = bm.group(1), bm.group(2)
            cur.backlog_bytes = int(float(num) * _UNIT[unit])
            if unit or "." in num:
                cur.backlog_raw = f"{num}{unit}b"
            cur.backlog_packets = int(bm.group(3))
            if bm.group(4) is not None and cur.requeues is None:
                cur.requeues = int(bm.group(4))
            continue
        if stripped.startswith("queues:") or "queues:(" in stripped:
            cur.queues = [(int(a), int(b)) for a, b in _QUEUES_RE.findall(stripped)]
            cur.options = f"{cur.options} {stripped}".strip()
            continue
        if cur.sent_bytes is None and ":" in stripped and not _PAIR_INT_RE.search(stripped):
            cur.options = f"{cur.options} {stripped}".strip()  # mqprio mode:/shaper: lines
            continue
        pairs = _PAIR_INT_RE.findall(stripped)
        if pairs:
            for key, val in pairs:
                cur.xstats[key] = int(val)
            continue
        if cur.sent_bytes is None:
            cur.options = f"{cur.options} {stripped}".strip()
            continue
        result.warn(lineno, "unrecognised line inside a tc entry", line)
    if cur is not None:
        result.records.append(cur)
        if cur.sent_bytes is not None and cur.backlog_packets is None:
            result.warn(
                cur.end_line,
                f"{cur.object} {cur.kind} {cur.handle} has Sent but no backlog line "
                "(truncated capture?)",
                "",
            )
    return result
