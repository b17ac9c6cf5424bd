"""iptables rules as the host prints them: ``iptables-save [-c] [-t TABLE]`` (also
``ip6tables-save``), ``iptables [-t TABLE] -S`` and ``iptables [-t TABLE] [-v] [-x] -n -L
[--line-numbers]`` → one :class:`NetfilterRule` per rule and one :class:`NetfilterChain` per
chain (policy and counters).

What the rules say that a fabric diagnosis needs:

* **marking**: the ``DSCP`` target (``--set-dscp 0x1a``; ``--set-dscp-class af31`` is saved as
  the number), the ``TOS`` target (``--set-tos 0x10/0xff``: value/mask of the whole TOS byte,
  DSCP = TOS >> 2) and the ``dscp`` match (``-m dscp --dscp 26``), in ``-L`` form ``DSCP set
  0x1a``, ``TOS set 0x10/0xff``, ``DSCP match 0x1a``. Class names follow iptables'
  ``extensions/dscp_helper.c`` (the IANA DSCP registry: CS0-CS7 = 8·n, AFxy = 8·x + 2·y, EF 46);
* **deliberate drops**: ``DROP``/``REJECT`` rules with the ``statistic`` match (``--mode random
  --probability P`` or ``--mode nth --every N``: a share of packets), ``hashlimit``
  (``--hashlimit-above 10mb/s``: a token bucket per flow or per address, in bytes per second
  with binary ``kb``/``mb``/``gb`` multipliers, ``extensions/libxt_hashlimit.c`` ``get_factor``;
  or packets per second/minute/hour/day) and ``limit`` (``--limit 3/min``), ``connbytes``
  (``--connbytes 1000000:``: only flows past that many bytes); in ``-L`` form ``statistic mode
  random probability 0.05``, ``limit: above 4883kb/s burst 9mb mode srcip-srcport-dstip-dstport``;
* **counters**: ``[packets:bytes]`` (``iptables-save -c``), the ``pkts bytes`` columns of ``-v -L``
  (rounded to K/M/G, powers of 1000, unless ``-x``) and chain policy counters.

The table comes from ``*table`` lines, or from the shell prompt line before ``-S`` / ``-L``
output (``-t TABLE``, else iptables' default ``filter``); without either it is unknown
(``None``), unless the rule's target only exists in ``mangle`` (DSCP, TOS, ECN, TTL).
Prompts, ``# Generated``/``# Completed`` comments and ``COMMIT`` are skipped; any other
unreadable line is a warning.

Sources: iptables(8), iptables-extensions(8) (https://ipset.netfilter.org/iptables-extensions.man.html),
iptables ``extensions/libxt_hashlimit.c``, ``extensions/dscp_helper.c``,
``iptables/iptables.c`` (``print_num``: K/M/G) at https://git.netfilter.org/iptables/; captures
under ``tests/fixtures/evidence/iptables/`` (network namespaces on Debian 12, iptables 1.8.9
nf_tables).

Seed refs: S13/S14 (a host marks RoCE with a DSCP), S17 (a stateful firewall rate-limiting long
flows), S20 (drops on purpose).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import UNNAMED, ParseResult, Record, finite_or_none
from aifabric.evidence.registry import register

__all__ = ["DSCP_CLASSES", "NetfilterChain", "NetfilterRule", "parse_iptables"]

DSCP_CLASSES: dict[str, int] = {
    **{f"cs{n}": 8 * n for n in range(8)},
    "be": 0,
    **{f"af{x}{y}": 8 * x + 2 * y for x in range(1, 5) for y in range(1, 4)},
    "ef": 46,
}
"""DiffServ class names iptables accepts (``--set-dscp-class``, ``--dscp-class``) → DSCP."""

_MANGLE_TARGETS = frozenset({"DSCP", "TOS", "ECN", "TTL", "HL", "TCPMSS"})


@dataclass(slots=True, kw_only=True)
class NetfilterRule(Record):
    """One rule of one chain, with what it matches, what it does and its counters."""

    record_type: ClassVar[str] = "iptables_rule"

    table: str | None = None
    chain: str
    target: str | None = None
    """``ACCEPT``, ``DROP``, ``REJECT``, ``DSCP``, a user chain...; ``None`` for a counting rule."""
    spec: str = ""
    """The rule as printed, without counters, ``-A CHAIN`` and the target's options (save/-S),
    or the options column (-L)."""
    matches: list[str] = field(default_factory=list)
    """Match modules (``-m statistic``, ``-m hashlimit``, ``-p tcp``'s implicit ``tcp``...)."""
    protocol: str | None = None
    in_iface: str | None = None
    out_iface: str | None = None
    source: str | None = None
    destination: str | None = None
    dport: str | None = None
    sport: str | None = None
    comment: str | None = None
    packets: int | None = None
    bytes: int | None = None
    counters_exact: bool = True
    """False when ``-L`` rounded the counters (``59M``)."""
    set_dscp: int | None = None
    set_dscp_class: str | None = None
    set_tos: int | None = None
    tos_mask: int | None = None
    match_dscp: int | None = None
    statistic_mode: str | None = None
    """``random`` or ``nth``."""
    probability: float | None = None
    every: int | None = None
    rate_above: bool | None = None
    """hashlimit: ``--hashlimit-above`` (True) or ``-upto`` (False); ``None``: no hashlimit."""
    rate_bytes_per_s: float | None = None
    """A byte-rate hashlimit in bytes per second (``kb`` = 1024, ``mb`` = 2^20)."""
    rate_packets_per_s: float | None = None
    """A packet-rate hashlimit or ``limit`` in packets per second."""
    rate_mode: str | None = None
    """hashlimit ``--hashlimit-mode`` (``srcip,dstip,srcport,dstport``: per flow)."""
    connbytes_min: int | None = None
    format: str = "save"
    """``save`` (iptables-save), ``rules`` (-S) or ``list`` (-L)."""

    @property
    def marked_dscp(self) -> int | None:
        """The DSCP a ``DSCP`` or ``TOS`` target writes (TOS only when its mask covers the six
        DSCP bits)."""
        if self.set_dscp is not None:
            return self.set_dscp
        if self.set_tos is not None and ((self.tos_mask or 0xFF) & 0xFC) == 0xFC:
            return self.set_tos >> 2
        return None

    @property
    def drops(self) -> bool:
        return self.target in ("DROP", "REJECT")

    @property
    def per_flow(self) -> bool:
        """A hashlimit keyed by ports (each TCP/UDP flow has its own bucket)."""
        return self.rate_mode is not None and "port" in self.rate_mode


@dataclass(slots=True, kw_only=True)
class NetfilterChain(Record):
    """A chain header: its policy (built-in chains) and the policy's counters."""

    record_type: ClassVar[str] = "iptables_chain"

    table: str | None = None
    chain: str
    policy: str | None = None
    packets: int | None = None
    bytes: int | None = None
    references: int | None = None


# --------------------------------------------------------------------------------------------
# values

_RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)([kmg]?)b/s$", re.IGNORECASE)
_PKT_RATE_RE = re.compile(r"^(\d+)/(s|sec|second|m|min|minute|h|hour|d|day)$", re.IGNORECASE)
_PER = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_FACTOR = {"": 1, "k": 1024, "m": 1024 * 1024, "g": 1024**3}


def _int_any(text: str) -> int | None:
    """``0x1a``, ``26``, ``010`` → int; ``None`` if not a number."""
    t = text.strip().lstrip("!")
    try:
        return int(t, 0)
    except ValueError:
        try:
            return int(t, 10)
        except ValueError:
            return None


def _dscp(text: str) -> int | None:
    v = _int_any(text)
    if v is None:
        v = DSCP_CLASSES.get(text.strip().lower())
    return v if v is not None and 0 <= v <= 63 else None


def _apply_rate(rec: NetfilterRule, value: str) -> bool:
    m = _RATE_RE.match(value)
    if m is not None:
        rec.rate_bytes_per_s = float(m.group(1)) * _FACTOR[m.group(2).lower()]
        return True
    m = _PKT_RATE_RE.match(value)
    if m is not None:
        rec.rate_packets_per_s = int(m.group(1)) / _PER[m.group(2)[0].lower()]
        return True
    return False


def _apply_tos(rec: NetfilterRule, value: str) -> None:
    val, _, mask = value.partition("/")
    rec.set_tos = _int_any(val)
    rec.tos_mask = _int_any(mask) if mask else None
    if rec.set_tos is not None and not 0 <= rec.set_tos <= 255:
        rec.set_tos = None


_COUNT_RE = re.compile(r"^\[(\d+):(\d+)\]\s+")


# --------------------------------------------------------------------------------------------
# iptables-save and -S


def _apply_option(rec: NetfilterRule, opt: str, val: str | None) -> bool:
    """One ``--option value`` of a rule; False when ``val`` is not what ``opt`` takes."""
    if val is None:
        return opt not in _NEEDS_VALUE
    if opt in ("-p", "--protocol"):
        rec.protocol = val
    elif opt in ("-i", "--in-interface"):
        rec.in_iface = val
    elif opt in ("-o", "--out-interface"):
        rec.out_iface = val
    elif opt in ("-s", "--source"):
        rec.source = val
    elif opt in ("-d", "--destination"):
        rec.destination = val
    elif opt in ("--dport", "--destination-port", "--dports"):
        rec.dport = val
    elif opt in ("--sport", "--source-port", "--sports"):
        rec.sport = val
    elif opt == "--comment":
        rec.comment = val
    elif opt in ("-m", "--match"):
        rec.matches.append(val)
    elif opt in ("-j", "--jump", "-g", "--goto"):
        rec.target = val
    elif opt == "--set-dscp":
        rec.set_dscp = _dscp(val)
    elif opt == "--set-dscp-class":
        rec.set_dscp_class = val.lower()
        rec.set_dscp = DSCP_CLASSES.get(val.lower())
    elif opt in ("--set-tos", "--and-tos", "--or-tos", "--xor-tos"):
        if opt == "--set-tos":
            _apply_tos(rec, val)
    elif opt == "--dscp":
        rec.match_dscp = _dscp(val)
    elif opt == "--dscp-class":
        rec.match_dscp = DSCP_CLASSES.get(val.lower())
    elif opt == "--mode":
        rec.statistic_mode = val
    elif opt == "--probability":
        rec.probability = finite_or_none(val)
    elif opt == "--every":
        rec.every = _int_any(val)
    elif opt in ("--hashlimit-above", "--hashlimit-upto", "--hashlimit"):
        rec.rate_above = opt == "--hashlimit-above"
        return _apply_rate(rec, val)
    elif opt == "--hashlimit-mode":
        rec.rate_mode = val
    elif opt == "--limit":
        return _apply_rate(rec, val)
    elif opt == "--connbytes":
        rec.connbytes_min = _int_any(val.split(":")[0]) if val.split(":")[0] else 0
    return True


_NEEDS_VALUE = frozenset(
    {"-p", "-i", "-o", "-s", "-d", "-m", "-j", "-g", "--dport", "--sport", "--comment",
     "--set-dscp", "--set-dscp-class", "--set-tos", "--dscp", "--dscp-class", "--mode",
     "--probability", "--every", "--hashlimit-above", "--hashlimit-upto", "--hashlimit",
     "--hashlimit-mode", "--limit", "--connbytes"}
)  # fmt: skip


def _rule_from_args(
    args: list[str], table: str | None, line: int, fmt: str
) -> tuple[NetfilterRule | None, str | None]:
    """``-A CHAIN ...`` tokens → a rule, or (None, reason)."""
    if len(args) < 2 or args[0] not in ("-A", "--append", "-I", "--insert"):
        return None, "expected -A CHAIN"
    rec = NetfilterRule(line=line, table=table, chain=args[1], format=fmt)
    spec: list[str] = []
    i = 2
    if args[0] in ("-I", "--insert") and i < len(args) and args[i].isdecimal():
        i += 1
    in_target = False
    while i < len(args):
        tok = args[i]
        if tok == "!":
            spec.append(tok)
            i += 1
            continue
        if tok.startswith("-"):
            val = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else None
            if val is not None and tok in ("-j", "--jump", "-g", "--goto"):
                in_target = True
            if not _apply_option(rec, tok, val):
                return None, f"bad value for {tok}: {val}"
            if not in_target:
                spec.append(tok if val is None else f"{tok} {val}")
            i += 2 if val is not None else 1
            continue
        if not in_target:
            spec.append(tok)
        i += 1
    rec.spec = " ".join(spec)
    if rec.table is None and rec.target in _MANGLE_TARGETS:
        rec.table = "mangle"
    return rec, None


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line, posix=True)
    except ValueError:
        return line.split()


_TABLE_ARG_RE = re.compile(r"(?:^|\s)(?:-t|--table)[ =](\w+)")


def _prompt_table(line: str) -> str | None:
    m = _TABLE_ARG_RE.search(line)
    return m.group(1) if m is not None else None


def _is_prompt(stripped: str) -> bool:
    return stripped.startswith(("$ ", "# iptables", "# ip6tables", "```")) or (
        "iptables" in stripped and ("$ " in stripped or "# " in stripped)
        and not stripped.startswith(("-A", "-P", "-N", "[", "Chain", ":", "*"))
    )


# --------------------------------------------------------------------------------------------
# -L

_CHAIN_RE = re.compile(
    r"^Chain (\S+) \((?:policy (\S+)(?: (\d+[KMGT]?) packets, (\d+[KMGT]?) bytes)?"
    r"|(\d+) references)\)"
)
_LIST_HDR_RE = re.compile(r"^(?:num\s+)?(?:pkts\s+bytes\s+)?target\s+prot\s+opt\s")
_OPTS = frozenset({"--", "-f", "!f"})
_LIST_VERBOSE = ["pkts", "bytes", "target", "prot", "opt", "in", "out", "source", "destination"]
_LIST_PLAIN = ["target", "prot", "opt", "source", "destination"]
"""The column headers of ``iptables -v -L`` and ``iptables -L``, for rows pasted without them."""
_PROTOCOLS = {"1": "icmp", "6": "tcp", "17": "udp", "58": "ipv6-icmp", "132": "sctp"}
"""iptables-nft prints protocol numbers in -L (iptables-legacy prints names)."""
_SCALE = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}
_L_DSCP_SET_RE = re.compile(r"\bDSCP set (0x[0-9a-fA-F]+|\d+)")
_L_DSCP_MATCH_RE = re.compile(r"\bDSCP match (!?)(0x[0-9a-fA-F]+|\d+)")
_L_TOS_RE = re.compile(r"\bTOS set (0x[0-9a-fA-F]+)(?:/(0x[0-9a-fA-F]+))?")
_L_STAT_RE = re.compile(
    r"\bstatistic mode (random|nth)(?: probability ([0-9.]+))?(?: every (\d+))?"
)
_L_HASH_RE = re.compile(r"\blimit: (above|up to) (\S+)(?: burst \S+)?(?: mode (\S+))?")
_L_LIMIT_RE = re.compile(r"\blimit: avg (\S+)")
_L_CONNBYTES_RE = re.compile(r"\bconnbytes (\d+)")
_L_PORT_RE = re.compile(r"\b(dpt|spt):(\S+)")


def _scaled(text: str) -> tuple[int | None, bool]:
    if text.isdecimal():
        return int(text), True
    if text[:-1].isdecimal() and text[-1] in _SCALE:
        return int(text[:-1]) * _SCALE[text[-1]], False
    return None, False


def _list_row(
    tokens: list[str], header: list[str], table: str | None, chain: str, line: int
) -> NetfilterRule | None:
    t = list(tokens)
    rec = NetfilterRule(line=line, table=table, chain=chain, format="list")
    if header and header[0] == "num":
        if not t or not t[0].isdecimal():
            return None
        t = t[1:]
    if "pkts" in header:
        if len(t) < 2:
            return None
        pk, exact1 = _scaled(t[0])
        by, exact2 = _scaled(t[1])
        if pk is None or by is None:
            return None
        rec.packets, rec.bytes, rec.counters_exact = pk, by, exact1 and exact2
        t = t[2:]
    verbose = "in" in header
    # target prot opt [in out] source destination: the target may be empty
    if len(t) >= 3 and t[2] in _OPTS:
        rec.target, t = t[0], t[1:]
    elif len(t) >= 2 and t[1] in _OPTS:
        rec.target = None
    else:
        return None
    need = 6 if verbose else 4
    if len(t) < need:
        return None
    rec.protocol = None if t[0] in ("0", "all") else _PROTOCOLS.get(t[0], t[0])
    if verbose:
        rec.in_iface = None if t[2] == "*" else t[2]
        rec.out_iface = None if t[3] == "*" else t[3]
        rec.source, rec.destination = t[4], t[5]
    else:
        rec.source, rec.destination = t[2], t[3]
    opts = " ".join(t[need:])
    rec.spec = opts
    _list_options(rec, opts)
    if rec.table is None and rec.target in _MANGLE_TARGETS:
        rec.table = "mangle"
    return rec


def _list_options(rec: NetfilterRule, opts: str) -> None:
    if (m := _L_DSCP_SET_RE.search(opts)) is not None:
        rec.set_dscp = _dscp(m.group(1))
    if (m := _L_DSCP_MATCH_RE.search(opts)) is not None and not m.group(1):
        rec.match_dscp = _dscp(m.group(2))
    if (m := _L_TOS_RE.search(opts)) is not None:
        _apply_tos(rec, m.group(1) + (f"/{m.group(2)}" if m.group(2) else ""))
    if (m := _L_STAT_RE.search(opts)) is not None:
        rec.statistic_mode = m.group(1)
        rec.matches.append("statistic")
        rec.probability = finite_or_none(m.group(2)) if m.group(2) else None
        rec.every = int(m.group(3)) if m.group(3) else None
    if (m := _L_HASH_RE.search(opts)) is not None:
        rec.matches.append("hashlimit")
        rec.rate_above = m.group(1) == "above"
        _apply_rate(rec, m.group(2))
        rec.rate_mode = m.group(3).replace("-", ",") if m.group(3) else None
    elif (m := _L_LIMIT_RE.search(opts)) is not None:
        rec.matches.append("limit")
        _apply_rate(rec, m.group(1))
    if (m := _L_CONNBYTES_RE.search(opts)) is not None:
        rec.matches.append("connbytes")
        rec.connbytes_min = int(m.group(1))
    start = opts.find("/* ")
    stop = opts.find(" */", start + 3) if start >= 0 else -1
    if stop >= 0:
        rec.comment = opts[start + 3 : stop]
    for kind, port in _L_PORT_RE.findall(opts):
        if kind == "dpt":
            rec.dport = port
        else:
            rec.sport = port


# --------------------------------------------------------------------------------------------
# entry point


def _parse(text: str, result: ParseResult) -> None:
    table: str | None = None
    prompt_table: str | None = None
    chain: str | None = None
    header: list[str] = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(("# Generated by", "# Completed on", "COMMIT", "# Warning:")):
            continue
        if _is_prompt(stripped):
            prompt_table = _prompt_table(stripped) or "filter"
            table = None
            continue
        if stripped.startswith("*") and stripped[1:].isidentifier():
            table = stripped[1:]
            continue
        if stripped.startswith(":"):
            parts = stripped[1:].split()
            if not parts:
                result.warn(lineno, "chain line without a name", line)
                continue
            cm = _COUNT_RE.match(parts[2] + " ") if len(parts) > 2 else None
            result.records.append(NetfilterChain(
                line=lineno, table=table, chain=parts[0],
                policy=parts[1] if len(parts) > 1 and parts[1] != "-" else None,
                packets=int(cm.group(1)) if cm else None, bytes=int(cm.group(2)) if cm else None,
            ))  # fmt: skip
            continue
        if stripped.startswith(("-P ", "-N ")):
            parts = stripped.split()
            result.records.append(NetfilterChain(
                line=lineno, table=table or prompt_table, chain=parts[1] if len(parts) > 1 else "",
                policy=parts[2] if len(parts) > 2 else None,
            ))  # fmt: skip
            continue
        body, packets, nbytes = stripped, None, None
        cm = _COUNT_RE.match(stripped)
        if cm is not None:
            packets, nbytes = int(cm.group(1)), int(cm.group(2))
            body = stripped[cm.end():]
        if body.startswith(("-A ", "-I ", "--append ")):
            fmt = "save" if table is not None else "rules"
            rec, why = _rule_from_args(_split(body), table or prompt_table, lineno, fmt)
            if rec is None:
                result.warn(lineno, f"iptables rule not read ({why})", line)
                continue
            rec.packets, rec.bytes = packets, nbytes
            result.records.append(rec)
            continue
        if (m := _CHAIN_RE.match(stripped)) is not None:
            chain = m.group(1)
            pk = _scaled(m.group(3))[0] if m.group(3) else None
            by = _scaled(m.group(4))[0] if m.group(4) else None
            result.records.append(NetfilterChain(
                line=lineno, table=prompt_table, chain=chain, policy=m.group(2),
                packets=pk, bytes=by, references=int(m.group(5)) if m.group(5) else None,
            ))  # fmt: skip
            header = []
            continue
        if _LIST_HDR_RE.match(stripped) is not None:
            header = stripped.split()
            continue
        if (chain is None or not header) and _LIST_ROW_RE.match(stripped) is not None:
            # a rule row of a listing whose chain header is not in the paste (a `| grep`)
            tokens = stripped.split()
            header = _LIST_VERBOSE if _scaled(tokens[0])[0] is not None else _LIST_PLAIN
            if chain is None:
                chain = UNNAMED
                result.warn(lineno, "rule rows without their 'Chain' line; chain unknown", line)
        if chain is not None and header:
            rec = _list_row(stripped.split(), header, prompt_table, chain, lineno)
            if rec is not None:
                result.records.append(rec)
                continue
        result.warn(lineno, "unrecognised line in iptables output", line)


_SAVE_RE = re.compile(r"^\*(?:filter|mangle|nat|raw|security)\s*$", re.MULTILINE)
_RULE_RE = re.compile(r"^(?:\[\d+:\d+\] )?-A \S+ ", re.MULTILINE)
_POLICY_RE = re.compile(r"^-P (?:INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING) [A-Z]+", re.MULTILINE)
_LIST_RE = re.compile(r"^[ \t]*Chain \S+ \((?:policy [A-Z]+|\d+ references)", re.MULTILINE)
_SAVE_CHAIN_RE = re.compile(
    r"^:[\w\-]++ (?:ACCEPT|DROP|RETURN|-) \[\d++:\d++\][ \t]*$", re.MULTILINE
)
"""iptables-save's chain line (``:INPUT ACCEPT [0:0]``: policy and its packet:byte counters)."""
_LIST_ROW_RE = re.compile(
    r"^[ \t]*+(?:\d++[KMGT]?[ \t]++\d++[KMGT]?[ \t]++)?[A-Z][\w\-]*+[ \t]++"
    r"(?:all|tcp|udp|icmp|icmpv6|ipv6-icmp|sctp|gre|esp|\d++)[ \t]++(?:--|-f|!f)[ \t]++\S",
    re.MULTILINE,
)
"""A rule row of ``iptables -L`` (``-v`` adds its packet and byte counters in front):
``DROP  tcp  --  0.0.0.0/0  0.0.0.0/0  tcp dpt:22``; the ``--`` options column is
iptables' own."""


def _detect(text: str) -> float:
    head = text[:65536]
    if "# Generated by iptables-save" in head or "# Generated by ip6tables-save" in head:
        return 0.95
    # each line-anchored scan only where its literal text is present (a C-speed test first)
    if "COMMIT" in head and "*" in head and _SAVE_RE.search(head) is not None:
        return 0.95
    if "prot opt" in head and "Chain " in head and _LIST_RE.search(head) is not None:
        return 0.95
    if "-P " in head and _POLICY_RE.search(head) is not None:
        return 0.9
    if "-A " in head and _RULE_RE.search(head) is not None:
        return 0.85
    # windows without the table's first lines: chain headers alone, iptables-save's chain lines,
    # or rule rows of a listing (a `| grep DROP`)
    if "Chain " in head and _LIST_RE.search(head) is not None:
        return 0.9
    if len(_SAVE_CHAIN_RE.findall(head)) >= 2:
        return 0.85
    if "--" in head and len(_LIST_ROW_RE.findall(head)) >= 2:
        return 0.7
    return 0.0


@register(
    "iptables",
    summary="iptables-save [-c] [-t TABLE], iptables [-t TABLE] -S / -v -n -L: rules, "
    "DSCP/TOS marking, deliberate drops, counters",
    detect=_detect,
    refs=("S13", "S14", "S17", "S20"),
)
def parse_iptables(text: str) -> ParseResult:
    """Parse iptables-save / -S / -L output; never raises."""
    result = ParseResult(kind="iptables")
    _parse(text, result)
    if not result.records and not result.warnings and text.strip():
        result.warn(None, "no iptables rule or chain found")
    return result
