"""SONiC ``config_db.json`` (whole file, ``show runningconfiguration all``, or a fragment loaded
with ``config load``) → the normalised switch-QoS records shared by every switch dialect.

The shared records (``dscp-map``, ``tc-map``, ``pfc``, ``ecn``, ``mtu``, ``queue-schedule``,
``buffer-profile``, ``pfc-watchdog``, ``port-qos``, ``qos-setting``) are defined here once and
imported by :mod:`eos_config`, :mod:`nxos_config`, :mod:`nvue`, :mod:`cumulus_traffic` and
:mod:`switch_counters`, so ``verify`` compares the fabric intent (DSCP 26 → TC 3, PFC on priority
3 only, ECN min/max, MTU 9100/9216, PFC watchdog: S11–S14, S18) with any dialect the same way.
Every record has ``scope`` (where it applies: a port, a profile, a policy class, ``global``) and
``port`` (the interface when the scope is one, else ``None``).

Tables read: ``DSCP_TO_TC_MAP``; ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``,
``MAP_PFC_PRIORITY_TO_QUEUE``, ``DOT1P_TO_TC_MAP``, ``TC_TO_DSCP_MAP``,
``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP``, ``MPLS_TC_TO_TC_MAP`` (``tc-map``); ``PORT_QOS_MAP``
(``pfc_enable: "3,4"``, map references by name or in the pre-202012 ``[DSCP_TO_TC_MAP|AZURE]``
form, the ``global`` entry); ``WRED_PROFILE`` (``ecn: ecn_all``, green/yellow/red thresholds in
bytes); ``QUEUE`` (``Ethernet0|3``, ``Ethernet0,Ethernet4|3-4`` and the VOQ
``host|asic|Ethernet0|3`` keys); ``SCHEDULER``; ``BUFFER_POOL``, ``BUFFER_PROFILE``,
``BUFFER_PG``, ``BUFFER_QUEUE``; ``PFC_WD`` (per port, and ``GLOBAL`` ``POLL_INTERVAL``);
``PORT`` (``mtu``, ``speed`` in Mb/s, ``lanes``, ``alias``); ``CABLE_LENGTH``. Multi-ASIC dumps
(``{"localhost": {...}, "asic0": {...}}``) are read namespace by namespace. The flat redis form
of CONFIG_DB (``"PORT_QOS_MAP|Ethernet0": {...}``, as in redis dumps, ``sonic-db-dump`` with its
``{"type": "hash", "value": {...}}`` wrapper, and sonic-utilities ``mock_tables``) is regrouped
into tables. A shell prompt or ``cat`` line before the JSON, and a prompt after it, are skipped;
several documents in one terminal paste are read in turn.

Excerpts are read as far as they go, with a warning saying so (never refused): tables pasted
without the outer braces (``"BUFFER_PG": {...}, "PORT_QOS_MAP": {...}``); a paste that starts
inside a table or an entry (the unnamed partial entry is skipped); JSON cut off by the end of the
capture (only complete entries are kept, never half an entry); a table's entries without its
name, as ``sonic-cfggen -d --var-json PORT`` and ``show runningconfiguration ports`` print them
(the table comes from that command line, else from fields only one table has: ``lanes`` → PORT,
``pfc_enable`` → PORT_QOS_MAP, ``xoff``/``pool`` → BUFFER_PROFILE...); and CONFIG_DB hashes read
one by one: ``redis-cli -n 4 hgetall "PORT|Ethernet0"`` (numbered ``1) "field"`` lines, or
``--raw``/``| paste - -`` lines), ``redis-cli -n 4 hget "KEY" field`` and ``sonic-db-cli
CONFIG_DB HGETALL "KEY"`` (a Python dict); other databases (``-n 0``, ``select 1``,
``APPL_DB``) are ignored.

Line numbers: ``json`` gives none, so one scan of the text notes the line of every
``"key": {`` and assigns entries to tables in document order. Malformed JSON: one warning at the
decoder's line, then each table is salvaged on its own (``raw_decode`` from its ``"TABLE": {``).

Sources: sonic-buildimage ``src/sonic-config-engine/tests/sample_output/py3/qos-*.json``,
``files/build_templates/qos_config.j2`` and ``src/sonic-config-engine/sonic-cfggen`` (``--var-json``
prints ``json.dumps(data[TABLE], indent=4)``); sonic-buildimage PR 21797, sonic-utilities PRs 557
and 600 (captures under tests/fixtures/evidence/sonic-config-db); sonic-utilities
``tests/qos_config_input`` and ``tests/db_migrator_input`` (reference-format 3_0_1); SONiC
Configuration wiki https://github.com/sonic-net/SONiC/wiki/Configuration ; swss
``doc/swss-schema.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = [
    "BufferAssignment",
    "BufferPool",
    "BufferProfile",
    "CableLength",
    "DscpMap",
    "EcnConfig",
    "Mtu",
    "PfcConfig",
    "PfcWatchdog",
    "PortQos",
    "QosSetting",
    "QueueConfig",
    "QueueSchedule",
    "SonicPort",
    "TcMap",
    "parse_id_list",
    "parse_sonic_config_db",
    "size_to_bytes",
]

# --------------------------------------------------------------------------------------------
# shared normalised QoS records (all switch dialects)


@dataclass(slots=True, kw_only=True)
class DscpMap(Record):
    """DSCP → traffic class (SONiC TC, EOS traffic-class, NX-OS qos-group, Cumulus internal
    CoS / switch priority). ``mapping`` holds only the DSCP values the config names."""

    record_type: ClassVar[str] = "dscp-map"
    name: str
    scope: str = "global"
    mapping: dict[int, int] = field(default_factory=dict)
    target: str = "tc"
    """What the values are: ``tc``, ``qos-group``, ``internal-cos``, ``switch-priority``."""


@dataclass(slots=True, kw_only=True)
class TcMap(Record):
    """Any other small integer map: ``kind`` is ``tc-to-queue``, ``tc-to-pg``,
    ``pfc-priority-to-queue``, ``pfc-priority-to-pg``, ``dot1p-to-tc``, ``tc-to-dscp``,
    ``cos-to-tc``, ``tc-to-cos``, ``switch-priority-to-tc``, ``cos-to-qos-group``..."""

    record_type: ClassVar[str] = "tc-map"
    kind: str
    name: str
    scope: str = "global"
    mapping: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class PfcConfig(Record):
    """PFC on a port, profile or no-drop class. ``priorities`` are the lossless priorities
    (802.1p / PFC priority; on Cumulus traffic.conf the switch's internal CoS, see
    ``internal_cos``). ``enabled`` is the port's PFC switch (EOS ``priority-flow-control on``,
    NX-OS ``mode on|auto|off``), ``None`` when the config does not say."""

    record_type: ClassVar[str] = "pfc"
    scope: str
    port: str | None = None
    priorities: tuple[int, ...] = ()
    drop_priorities: tuple[int, ...] = ()
    enabled: bool | None = None
    mode: str | None = None
    rx_enabled: bool | None = None
    tx_enabled: bool | None = None
    internal_cos: bool = False


@dataclass(slots=True, kw_only=True)
class EcnConfig(Record):
    """WRED/ECN marking on a queue or profile. Thresholds normalised to bytes where the unit
    allows (KB/kbytes = 1024 B, MB = 1024² B, as switch buffer docs use); ``*_raw`` keeps the
    configured text (segments and milliseconds cannot be turned into bytes)."""

    record_type: ClassVar[str] = "ecn"
    scope: str
    port: str | None = None
    queue: int | None = None
    profile: str | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    min_raw: str | None = None
    max_raw: str | None = None
    probability_pct: float | None = None
    weight: int | None = None
    mode: str | None = None
    """As configured: SONiC ``ecn_all``/``ecn_green``..., ``ecn`` (EOS/NX-OS), ``ECN``."""
    ecn_enabled: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Mtu(Record):
    """MTU of an interface (or of a NX-OS network-qos class when ``port`` is ``None``)."""

    record_type: ClassVar[str] = "mtu"
    scope: str
    port: str | None = None
    mtu_bytes: int
    speed_gbps: float | None = None


@dataclass(slots=True, kw_only=True)
class QueueSchedule(Record):
    """Egress scheduling of one queue: DWRR weight/bandwidth share or strict priority."""

    record_type: ClassVar[str] = "queue-schedule"
    scope: str
    port: str | None = None
    queue: int | None = None
    bandwidth_pct: float | None = None
    bandwidth_remaining: bool = False
    weight: int | None = None
    strict_priority: bool | None = None
    priority_level: int | None = None
    scheduler: str | None = None


@dataclass(slots=True, kw_only=True)
class BufferProfile(Record):
    """A buffer profile; lossless when it has ``xoff`` headroom (SONiC ``pg_lossless_*``)."""

    record_type: ClassVar[str] = "buffer-profile"
    name: str
    pool: str | None = None
    size_bytes: int | None = None
    xon_bytes: int | None = None
    xoff_bytes: int | None = None
    xon_offset_bytes: int | None = None
    dynamic_th: int | None = None
    static_th_bytes: int | None = None
    lossless: bool = False


@dataclass(slots=True, kw_only=True)
class PfcWatchdog(Record):
    """PFC watchdog (storm detection) on a port/profile or globally (``port`` ``None``)."""

    record_type: ClassVar[str] = "pfc-watchdog"
    scope: str
    port: str | None = None
    enabled: bool | None = None
    action: str | None = None
    detection_ms: float | None = None
    restoration_ms: float | None = None
    poll_interval_ms: float | None = None
    history: bool | None = None


@dataclass(slots=True, kw_only=True)
class PortQos(Record):
    """What a port (or profile, or ``system qos``) binds: maps and policies by name, trust,
    PFC enable list."""

    record_type: ClassVar[str] = "port-qos"
    scope: str
    port: str | None = None
    maps: dict[str, str] = field(default_factory=dict)
    """Field → referenced map/policy/profile name (``dscp_to_tc_map``, ``service-profile``,
    ``service-policy qos input``...), old ``[TABLE|name]`` references reduced to the name."""
    pfc_enable: tuple[int, ...] | None = None
    pfcwd_sw_enable: tuple[int, ...] | None = None
    trust: str | None = None


@dataclass(slots=True, kw_only=True)
class QosSetting(Record):
    """A QoS setting with no richer record (``qos rewrite dscp``, ``trust-mode``, NVUE keys)."""

    record_type: ClassVar[str] = "qos-setting"
    scope: str
    key: str
    value: str
    applied: str | None = None
    """NVUE ``applied`` column when it differs from ``value`` (the operational one)."""


# --------------------------------------------------------------------------------------------
# SONiC-only records


@dataclass(slots=True, kw_only=True)
class QueueConfig(Record):
    """A ``QUEUE`` entry: WRED profile / scheduler bound to queues of a port."""

    record_type: ClassVar[str] = "queue"
    port: str
    queues: tuple[int, ...]
    wred_profile: str | None = None
    scheduler: str | None = None
    key: str = ""


@dataclass(slots=True, kw_only=True)
class BufferPool(Record):
    record_type: ClassVar[str] = "buffer-pool"
    name: str
    size_bytes: int | None = None
    pool_type: str | None = None
    mode: str | None = None
    xoff_bytes: int | None = None


@dataclass(slots=True, kw_only=True)
class BufferAssignment(Record):
    """``BUFFER_PG`` (``kind`` ``pg``) or ``BUFFER_QUEUE`` (``queue``) entry of one port."""

    record_type: ClassVar[str] = "buffer-assignment"
    kind: str
    port: str
    ids: tuple[int, ...]
    profile: str | None = None


@dataclass(slots=True, kw_only=True)
class SonicPort(Record):
    record_type: ClassVar[str] = "port"
    port: str
    alias: str | None = None
    lanes: tuple[int, ...] = ()
    speed_gbps: float | None = None
    mtu_bytes: int | None = None
    admin_status: str | None = None
    fec: str | None = None


@dataclass(slots=True, kw_only=True)
class CableLength(Record):
    record_type: ClassVar[str] = "cable-length"
    port: str
    length_m: float | None
    raw: str


# --------------------------------------------------------------------------------------------
# helpers shared with the other dialects

_SIZE_RE = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[a-zA-Z]*)")  # fullmatch, on stripped text
_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kbyte": 1024,
    "kbytes": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mbytes": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gbytes": 1024**3,
    "gib": 1024**3,
}


def size_to_bytes(value: str, unit: str = "") -> int | None:
    """``"150"``, ``"150 kbytes"``, ``"146.48 KB"``, ``"1.43 MB"`` → bytes (binary K/M/G);
    ``None`` for segments, milliseconds, ``inf`` or anything unreadable."""
    m = _SIZE_RE.fullmatch((f"{value} {unit}" if unit else value).strip())
    if m is None:
        return None
    mult = _UNIT_BYTES.get(m.group("u").lower())
    if mult is None:
        return None
    return round(float(m.group("n")) * mult)


def parse_id_list(text: str) -> tuple[int, ...]:
    """``"3,4"``, ``"3-4"``, ``"0-2,5-7"``, ``"3 4"``, ``"[3]"`` → sorted unique ints.

    Raises ``ValueError`` for anything else (the caller warns about the line).
    """
    out: set[int] = set()
    t = text.strip().strip("[]")
    if not t:
        return ()
    for part in re.split(r"[,\s]+", t):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo or hi - lo > 4096:
                raise ValueError(f"bad range {part!r}")
            out.update(range(lo, hi + 1))
        else:
            out.add(int(part))
    return tuple(sorted(out))


def _ref_name(value: str) -> str:
    """``[DSCP_TO_TC_MAP|AZURE]`` → ``AZURE``; plain names unchanged."""
    v = value.strip()
    if v.startswith("[") and v.endswith("]") and "|" in v:
        return v[1:-1].split("|", 1)[1]
    return v


# --------------------------------------------------------------------------------------------
# SONiC parser

_CABLE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*m?")
_KEY_OPEN_RE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:\s*\{')
_INT_MAP_TABLES = {
    "TC_TO_QUEUE_MAP": "tc-to-queue",
    "TC_TO_PRIORITY_GROUP_MAP": "tc-to-pg",
    "MAP_PFC_PRIORITY_TO_QUEUE": "pfc-priority-to-queue",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": "pfc-priority-to-pg",
    "DOT1P_TO_TC_MAP": "dot1p-to-tc",
    "TC_TO_DSCP_MAP": "tc-to-dscp",
    "MPLS_TC_TO_TC_MAP": "mpls-tc-to-tc",
}
_KNOWN_TABLES = frozenset(
    {
        "DSCP_TO_TC_MAP",
        "PORT_QOS_MAP",
        "WRED_PROFILE",
        "QUEUE",
        "SCHEDULER",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "PFC_WD",
        "PORT",
        "CABLE_LENGTH",
        *_INT_MAP_TABLES,
    }
)
_DETECT_RE = re.compile(
    r'"(DSCP_TO_TC_MAP|PORT_QOS_MAP|BUFFER_PG|BUFFER_PROFILE|WRED_PROFILE|TC_TO_PRIORITY_GROUP_MAP'
    r'|MAP_PFC_PRIORITY_TO_QUEUE|PFC_WD|CABLE_LENGTH|PORT|DEVICE_METADATA)"\s*:\s*\{'
)


_DETECT_FLAT_RE = re.compile(
    r'"(DSCP_TO_TC_MAP|PORT_QOS_MAP|BUFFER_PG|BUFFER_PROFILE|WRED_PROFILE|TC_TO_PRIORITY_GROUP_MAP'
    r'|MAP_PFC_PRIORITY_TO_QUEUE|PFC_WD|CABLE_LENGTH|QUEUE|SCHEDULER)\|[^"]*"\s*:\s*\{'
)
_DETECT_REDIS_RE = re.compile(
    r"(?i)hget(?:all)?[ \t]+[\"']?(?:DSCP_TO_TC_MAP|PORT_QOS_MAP|BUFFER_P(?:G|ROFILE|OOL)"
    r"|BUFFER_QUEUE|WRED_PROFILE|TC_TO_(?:PRIORITY_GROUP|QUEUE)_MAP|MAP_PFC_PRIORITY_TO_QUEUE"
    r"|PFC_PRIORITY_TO_PRIORITY_GROUP_MAP|DOT1P_TO_TC_MAP|PFC_WD|CABLE_LENGTH|PORT|QUEUE"
    r"|SCHEDULER)\|"
)
_DETECT_COMMAND_RE = re.compile(r"show runningconfiguration (?:ports|all)\b|--var-json\b")


def _detect(text: str) -> float:
    head = text[:200_000]
    if ("hget" in head or "HGET" in head) and _DETECT_REDIS_RE.search(head):
        return 0.9
    if "{" not in head:
        return 0.0
    if _DETECT_FLAT_RE.search(head):
        return 0.9
    m = _DETECT_RE.search(head)
    if m is not None:
        return 0.95 if m.group(1) != "DEVICE_METADATA" else 0.6
    # a table's entries without the table name: `show runningconfiguration ports`,
    # `sonic-cfggen -d --var-json PORT`, or an excerpt cut from inside a table
    if _DETECT_COMMAND_RE.search(head) and '": {' in head:
        return 0.9
    if '"lanes": "' in head and '"speed": "' in head:
        return 0.7
    if '"pfc_enable": "' in head or ('"xoff": "' in head and '"pool": "' in head):
        return 0.7
    return 0.0


class _LineIndex:
    """Line of each ``"TABLE": {`` and of each ``"entry": {`` inside it, in document order.

    ``implicit`` names the table of entries met before any table name (an excerpt of one
    table, or ``--var-json TABLE`` output)."""

    def __init__(
        self, lines: list[str], first_line: int, tables: set[str], implicit: str | None = None
    ) -> None:
        self.table_line: dict[str, int] = {}
        self.entry_line: dict[tuple[str, str], int] = {}
        current: str | None = implicit
        if implicit is not None:
            self.table_line[implicit] = first_line
        for i, text in enumerate(lines, first_line):
            if '":' not in text:
                continue
            m = _KEY_OPEN_RE.match(text)
            if m is None:
                continue
            key = m.group(1)
            table, bar, rest = key.partition("|")
            if bar and table in tables:  # flat redis form "TABLE|entry": {...}
                self.table_line.setdefault(table, i)
                self.entry_line.setdefault((table, rest), i)
                current = None
                continue
            if key in tables:
                current = key
                self.table_line.setdefault(key, i)
            elif current is not None:
                self.entry_line.setdefault((current, key), i)

    def line(self, table: str, key: str | None = None) -> int:
        if key is not None:
            got = self.entry_line.get((table, key))
            if got is not None:
                return got
        return self.table_line.get(table, 0)


class _FixedIndex(_LineIndex):
    """Lines known up front: the command line that printed each CONFIG_DB hash."""

    def __init__(self, entry_line: dict[tuple[str, str], int]) -> None:
        self.entry_line = dict(entry_line)
        self.table_line = {}
        for (table, _key), ln in entry_line.items():
            self.table_line.setdefault(table, ln)


# ---- excerpts: JSON cut off, or pasted without its enclosing braces

_DECODER = json.JSONDecoder()
_STRUCT_RE = re.compile(r'[{}\[\]"\\]')


def _brackets(text: str, in_string: list[bool]) -> Iterator[tuple[int, str]]:
    """(index, bracket) of every ``{}[]`` of ``text`` outside JSON strings, in one pass over
    the structural characters (escapes inside strings skipped). ``in_string[0]`` says, once
    the iteration ends, whether the text stops inside a string (a cut-off paste)."""
    in_str = False
    skip = -1
    for m in _STRUCT_RE.finditer(text):
        j = m.start()
        if j < skip:
            continue
        ch = text[j]
        if in_str:
            if ch == "\\":
                skip = j + 2
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch != "\\":
            yield j, ch
    in_string[0] = in_str
_JSON_LINE_FIRST = frozenset('{}[]",:-0123456789')
_PARTIAL = "\x00partial"
_MAX_DEPTH = 64
_MAX_DOCS = 64
_MAX_FAILURES = 4


def _json_span(text: str) -> int:
    """Length of the leading part of ``text`` made of JSON lines: up to the first line (after
    the first) that starts with something no JSON line starts with (the next shell prompt)."""
    pos = text.find("\n")
    while pos != -1:
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1 : nxt if nxt != -1 else len(text)].lstrip()
        if line and line[0] not in _JSON_LINE_FIRST:
            return pos
        pos = nxt
    return len(text)


def _repair(text: str, members: bool) -> tuple[Any, int] | None:
    """Read as much of a damaged JSON text as is whole: (object, number of unmatched ``}``).

    ``members``: the text is the inside of an object (``"PORT": {...}, "QUEUE": {...}``, or a
    paste that starts in the middle of a table or an entry). Each ``}`` that closes an object
    opened before the excerpt gets a placeholder key (``_PARTIAL`` + depth) so the rest still
    decodes; the caller drops or re-homes those. A text cut off in the middle keeps what comes
    before its last ``}``: only complete objects are read, never half an entry.
    Linear: one pass over the structural characters; ``None`` when nothing decodes.
    """
    text = text[: _json_span(text)]
    depth = lowest = 0
    for _, ch in _brackets(text, [False]):
        if ch in "{[":
            depth += 1
            if depth > _MAX_DEPTH:
                return None
        elif ch in "}]":
            depth -= 1
            lowest = min(lowest, depth)
    unmatched = -lowest
    if unmatched > _MAX_DEPTH:
        return None
    prefix = ("{" if members else "") + "".join(
        f'"\\u0000partial{i}": {{'
        for i in range(unmatched)  # decodes to _PARTIAL + i
    )
    built = prefix + text
    stack: list[str] = []
    cut: tuple[int, tuple[str, ...]] | None = None
    ended_in_string = [False]
    for j, ch in _brackets(built, ended_in_string):
        if ch in "{[":
            stack.append(ch)
        elif stack:
            stack.pop()
            cut = (j + 1, tuple(stack))
    if not stack and not ended_in_string[0]:
        candidate = built.rstrip().rstrip(",")
    elif cut is not None:
        head, open_ = cut
        candidate = built[:head] + "".join("}" if c == "{" else "]" for c in reversed(open_))
    else:
        return None
    try:
        return json.loads(candidate), unmatched
    except ValueError:  # RecursionError is a ValueError subclass's sibling: caught by caller
        return None


def _split_partials(data: Any) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """Take the placeholder keys of :func:`_repair` out of ``data``: (the tables and entries it
    names, the entry sets of tables whose name is not in the excerpt, partial entries dropped)."""
    if not isinstance(data, dict):
        return {}, [], 0
    named: dict[str, Any] = {}
    anonymous: list[dict[str, Any]] = []
    dropped = 0
    for key, value in data.items():
        if not (isinstance(key, str) and key.startswith(_PARTIAL)):
            named[key] = value
            continue
        inner, anon, d = _split_partials(value)
        anonymous.extend(anon)
        dropped += d
        objects = {k: v for k, v in inner.items() if isinstance(v, dict)}
        if len(objects) < len(inner):
            dropped += 1  # scalar fields: the end of an entry whose name is cut away
        if objects and _is_entry_set(objects) and not any(k in _KNOWN_TABLES for k in objects):
            anonymous.append(objects)  # entries of a table whose name was cut away
        else:
            for k, v in objects.items():
                named.setdefault(k, v)
    return named, anonymous, dropped


def _is_entry_set(d: dict[str, Any]) -> bool:
    """``{"Ethernet0": {"lanes": "0,1", ...}, ...}``: objects of fields (the inside of one
    table), rather than objects of objects (a document of tables)."""
    return bool(d) and all(
        isinstance(v, dict) and not any(isinstance(f, dict) for f in v.values()) for v in d.values()
    )


# which table a set of entries is, when the table's name is not in the capture
_FIELD_TABLES: tuple[tuple[str, frozenset[str]], ...] = (
    ("PORT", frozenset({"lanes"})),
    ("PORT_QOS_MAP", frozenset({"pfc_enable", "pfcwd_sw_enable", "dscp_to_tc_map",
                                "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map"})),
    ("BUFFER_PROFILE", frozenset({"xoff", "xon", "dynamic_th", "static_th", "pool"})),
    ("WRED_PROFILE", frozenset({"green_min_threshold", "green_max_threshold", "ecn",
                                "wred_green_enable"})),
    ("QUEUE", frozenset({"scheduler", "wred_profile"})),
    ("PFC_WD", frozenset({"detection_time", "restoration_time", "POLL_INTERVAL"})),
)  # fmt: skip
_VAR_JSON_RE = re.compile(r"--var-json[ \t=]+[\"']?([A-Z][A-Z0-9_]{1,60})")


def _table_hint(lines: list[str], start: int) -> tuple[str, str] | None:
    """(table, reason) named by the command printed just before line index ``start``."""
    for j in range(start - 1, max(-1, start - 4), -1):
        text = lines[j]
        if "--var-json" in text:
            m = _VAR_JSON_RE.search(text)
            if m is not None and m.group(1) in _KNOWN_TABLES:
                return m.group(1), f"from the command '{text.strip()[-120:]}'"
        if "show runningconfiguration ports" in text:
            return "PORT", "from the command 'show runningconfiguration ports'"
        if text.strip() and text.lstrip()[0] not in _JSON_LINE_FIRST:
            break
    return None


def _table_by_fields(entries: dict[str, Any]) -> str | None:
    """The table a set of entries belongs to, from field names only it uses (``lanes`` → PORT);
    ``None`` when the entries disagree or say nothing distinctive."""
    guesses: set[str] = set()
    for value in entries.values():
        if not isinstance(value, dict):
            return None
        fields = set(value)
        for table, marks in _FIELD_TABLES:
            if fields & marks:
                guesses.add(table)
                break
        else:
            if fields and all(str(k).isdigit() for k in fields):
                if any(int(k) > 7 for k in fields):
                    guesses.add("DSCP_TO_TC_MAP")  # keys above 7: DSCP, not TC or priority
                else:
                    return None
    return guesses.pop() if len(guesses) == 1 else None


# ---- redis-cli / sonic-db-cli output of CONFIG_DB hashes

_REDIS_CMD_RE = re.compile(
    r"(?i)\b(hgetall|hget)[ \t]+(\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"']{1,300})"
    r"(?:[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"']{1,200}))?"
)
_REDIS_DB_RE = re.compile(r"(?:^|\s)-n[ \t]*(\d{1,2})\b|\[(\d{1,2})\]>")
_DB_NAME_RE = re.compile(r"\b([A-Z][A-Z_]{1,30}_DB)\b")
_SELECT_RE = re.compile(r"(?i)\bselect[ \t]+(\d{1,2})\b")
_NUMBERED_RE = re.compile(r"\s{0,8}\d{1,6}\) \"(.*)\"")
_PY_PAIR_RE = re.compile(r"'((?:[^'\\\n]|\\.){0,300})': '((?:[^'\\\n]|\\.){0,4000})'")
_HGET_RE = re.compile(r"(?i)hget")
_REDIS_EMPTY = ("(empty array)", "(empty list or set)", "(nil)", "(integer) 0")


def _unquote(token: str) -> str:
    t = token.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return t


def _redis_output(
    lines: list[str], result: ParseResult
) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], int], set[int]]:
    """CONFIG_DB hashes printed by ``redis-cli -n 4 hgetall "T|k"`` (numbered ``1) "field"``
    lines, or ``--raw``/piped plain lines), ``redis-cli ... hget "T|k" field`` and
    ``sonic-db-cli CONFIG_DB HGETALL "T|k"`` (a Python dict) → ``{"T|k": {field: value}}``,
    the line of each command, and the line indexes used."""
    flat: dict[str, dict[str, str]] = {}
    where: dict[tuple[str, str], int] = {}
    used: set[int] = set()
    selected: int | None = None
    n = len(lines)
    i = 0
    while i < n:
        text = lines[i]
        low = text.lower()
        if "select" in low:
            sm = _SELECT_RE.search(text)
            if sm is not None:
                selected = int(sm.group(1))
        m = _REDIS_CMD_RE.search(text) if "hget" in low else None
        if m is None:
            i += 1
            continue
        key = _unquote(m.group(2))
        table, bar, entry = key.partition("|")
        dbm = _REDIS_DB_RE.search(text)
        db = int(dbm.group(1) or dbm.group(2)) if dbm is not None else selected
        names = _DB_NAME_RE.findall(text) if "sonic-db-cli" in low else []
        if (
            not bar
            or table not in _KNOWN_TABLES
            or (db is not None and db != 4)
            or (names and names[0] != "CONFIG_DB")
        ):
            i += 1
            continue
        used.add(i)
        single = m.group(1).lower() == "hget"
        field = _unquote(m.group(3)) if single and m.group(3) else None
        fields: dict[str, str] = {}
        values: list[str] = []
        j = i + 1
        while j < n:
            out = lines[j].strip()
            if not out:
                if values or fields or single:
                    break
                j += 1
                continue
            if "hget" in out.lower() or out.endswith(("$", "#", ">")) or "redis-cli" in out:
                break
            if out.startswith("```"):
                break
            used.add(j)
            nm = _NUMBERED_RE.fullmatch(lines[j].rstrip())
            if nm is not None:
                values.append(nm.group(1).replace('\\"', '"'))
            elif out.startswith("{") and not single:
                fields.update(
                    (a.replace("\\'", "'"), b.replace("\\'", "'"))
                    for a, b in _PY_PAIR_RE.findall(out)
                )
                j += 1
                break
            elif out in _REDIS_EMPTY:
                j += 1
                break
            elif single:
                values.append(_unquote(out))
                j += 1
                break
            elif "\t" in out:  # `| paste - -`
                a, _, b = out.partition("\t")
                fields[a.strip()] = b.strip()
            else:
                values.append(out)  # --raw: field and value on alternate lines
            j += 1
        if single:
            if field is not None and values:
                fields[field] = values[0]
        else:
            if len(values) % 2:
                result.warn(i + 1, f"{key}: odd number of field/value lines; last one ignored")
            fields.update(zip(values[0::2], values[1::2], strict=False))
        if fields:
            flat.setdefault(key, {}).update(fields)
            where.setdefault((table, entry), i + 1)
        i = j
    return flat, where, used


def _salvage(body: str, result: ParseResult, offset: int) -> dict[str, Any]:
    """Decode each ``"TABLE": {`` on its own after a JSON error; a table cut off by the end of
    the capture keeps its complete entries (:func:`_repair`)."""
    out: dict[str, Any] = {}
    for m in re.finditer(r'"([A-Z][A-Z0-9_]*)"\s*:\s*(?=\{)', body):
        name = m.group(1)
        if name in out:
            continue
        try:
            obj, _ = _DECODER.raw_decode(body, m.end())
        except ValueError:
            line = body.count("\n", 0, m.start()) + offset
            fixed = _repair(body[m.end() :], members=False) if name in _KNOWN_TABLES else None
            if fixed is not None and isinstance(fixed[0], dict) and fixed[0]:
                out[name] = fixed[0]
                result.warn(
                    line,
                    f"table {name} is cut off: only its complete entries are read (an excerpt)",
                )
                continue
            result.warn(line, f"table {name} could not be salvaged from the malformed JSON")
            continue
        if isinstance(obj, dict):
            out[name] = obj
    return out


def _json_docs(
    lines: list[str], result: ParseResult, skip: set[int]
) -> list[tuple[dict[str, Any], int]]:
    """The JSON objects of the capture, in order, with the index of their first line: whole
    documents (a shell prompt or other text may stand between them), a document cut off or
    damaged (its tables salvaged), or an excerpt without the outer braces."""
    docs: list[tuple[dict[str, Any], int]] = []
    n = len(lines)
    i = 0
    failures = 0  # each failed attempt reads the rest of the text: a few, not one per line
    while i < n and len(docs) < _MAX_DOCS:
        stripped = lines[i].lstrip()
        starts = ("{", "[") if failures >= _MAX_FAILURES else ("{", "[", '"')
        if i in skip or not stripped.startswith(starts):
            i += 1
            continue
        body = "\n".join(lines[i:])
        lead = len(body) - len(body.lstrip())
        if stripped[0] == '"':
            fixed = _repair(body[lead:], members=True)
            if fixed is None or not isinstance(fixed[0], dict):
                failures += 1
                i += 1  # a quoted line of prose, not JSON
                continue
            named, anonymous, dropped = _split_partials(fixed[0])
            what = "config_db.json excerpt without its enclosing braces: read as far as it goes"
            if dropped:
                what += "; it starts inside an entry whose name is not in the capture (skipped)"
            result.warn(i + 1, what, lines[i])
            docs.extend(_with_anonymous(named, anonymous, lines, i, result))
            i += body.count("\n", 0, lead + _json_span(body[lead:])) + 1
            continue
        try:
            data, end = _DECODER.raw_decode(body, lead)
        except ValueError as exc:
            span = _json_span(body[lead:])
            multiline = "\n" in body[lead : lead + span]
            lineno = getattr(exc, "lineno", None)
            line = lineno + i if isinstance(lineno, int) else None
            bad = lines[line - 1] if line is not None and 0 < line <= n else ""
            msg = getattr(exc, "msg", str(exc))
            later = ParseResult(kind=result.kind)
            salvaged: dict[str, Any] = _salvage(body, later, i + 1)
            found: list[tuple[dict[str, Any], int]] = []
            if any(k in _KNOWN_TABLES for k in salvaged):
                found = [(salvaged, i)]
            else:  # no table name in it: a table's entries, cut off (`--var-json TABLE`)
                fixed = _repair(body[lead:], members=False)
                if fixed is not None:
                    named, anonymous, _dropped = _split_partials(fixed[0])
                    found = _with_anonymous(named, anonymous, lines, i, later)
            if multiline or found:
                result.warn(line, f"malformed JSON ({msg}); salvaging tables", bad)
                result.warnings.extend(later.warnings)
            docs.extend(found)
            if found and found[0][0] is salvaged:
                break  # salvaging read every table to the end of the text
            failures += 1
            if failures > _MAX_FAILURES:
                break
            i += body.count("\n", 0, lead + span) + 1
            continue
        if isinstance(data, list):
            merged = _merge_list(data, result, i + 1)
            if merged is None:
                result.warn(i + 1, "config_db JSON must be an object of tables", lines[i])
            else:
                docs.append((merged, i))
        elif isinstance(data, dict):
            docs.extend(_with_anonymous(data, [], lines, i, result))
        else:
            result.warn(i + 1, "config_db JSON must be an object of tables", lines[i])
        i += body.count("\n", 0, end) + 1
    return docs


def _with_anonymous(
    named: dict[str, Any],
    anonymous: list[dict[str, Any]],
    lines: list[str],
    start: int,
    result: ParseResult,
) -> list[tuple[dict[str, Any], int]]:
    """Documents of ``named`` plus entry sets whose table must be found: a whole object of
    entries (``--var-json TABLE``, ``show runningconfiguration ports``) counts as one."""
    if (
        named
        and not anonymous
        and not any(k in _KNOWN_TABLES for k in named)
        and _is_entry_set(named)
        and not list(_tables_of(named))
    ):
        anonymous, named = [named], {}
    out: dict[str, Any] = dict(named)
    implicit: str | None = None
    for entries in anonymous:
        hint = _table_hint(lines, start)
        if hint is None:
            guess = _table_by_fields(entries)
            hint = (guess, f"from their fields ({_marks(guess, entries)})") if guess else None
        if hint is None:
            result.warn(
                start + 1,
                f"{len(entries)} entries without their table name and no field that tells the "
                "table; skipped",
            )
            continue
        table, why = hint
        result.warn(start + 1, f"{len(entries)} entries without their table name: read as {table} "
                    f"{why}")  # fmt: skip
        into = out.setdefault(table, {})
        if isinstance(into, dict):
            for k, v in entries.items():
                into.setdefault(k, v)
        implicit = implicit or table
    if not out:
        return []
    if implicit is not None:
        out[_IMPLICIT] = implicit
    return [(out, start)]


_IMPLICIT = "\x00implicit"


def _marks(table: str, entries: dict[str, Any]) -> str:
    for name, marks in _FIELD_TABLES:
        if name == table:
            seen = sorted({f for v in entries.values() if isinstance(v, dict) for f in v} & marks)
            return ", ".join(seen)
    return "integer keys above 7"


@register(
    "sonic-config-db",
    summary="SONiC /etc/sonic/config_db.json or 'show runningconfiguration all' (QoS tables)",
    detect=_detect,
    refs=("S11", "S12", "S13", "S14", "S18"),
)
def parse_sonic_config_db(text: str) -> ParseResult:
    """Parse a SONiC config_db JSON document, fragment or excerpt, or the CONFIG_DB hashes that
    ``redis-cli``/``sonic-db-cli`` print, into normalised QoS records; never raises."""
    result = ParseResult(kind="sonic-config-db")
    try:
        _parse_into(text, result)
    except (RecursionError, MemoryError) as exc:
        result.warn(None, f"JSON nested too deeply to read ({exc.__class__.__name__})")
    return result


def _parse_into(text: str, result: ParseResult) -> None:
    lines = text.split("\n")
    flat: dict[str, dict[str, str]] = {}
    where: dict[tuple[str, str], int] = {}
    used: set[int] = set()
    if _HGET_RE.search(text) is not None:
        flat, where, used = _redis_output(lines, result)
    if flat:
        result.warn(
            min(where.values()),
            f"CONFIG_DB key/value output ({len(flat)} hash(es) read with redis-cli/sonic-db-cli):"
            " an excerpt, the rest of CONFIG_DB is not in the capture",
        )
        tables = _regroup(flat)
        _emit(tables, _FixedIndex(where), result)
    before = len(result.warnings)
    docs = _json_docs(lines, result, used)
    if not docs and not flat and len(result.warnings) == before:
        result.warn(None, "no JSON object found (expected a config_db.json document)")
        return
    for data, start in docs:
        implicit = data.pop(_IMPLICIT, None)
        for _ns, tables in _tables_of(data):
            index = _LineIndex(
                lines[start:],
                start + 1,
                {k for k in tables if k in _KNOWN_TABLES},
                implicit if isinstance(implicit, str) else None,
            )
            _emit(tables, index, result)


def _regroup(data: dict[str, Any]) -> dict[str, Any]:
    """The flat CONFIG_DB form of redis dumps and sonic-utilities ``mock_tables``
    (``"PORT_QOS_MAP|Ethernet0": {...}``; ``sonic-db-dump`` wraps fields as
    ``{"type": "hash", "value": {...}}``) → ``{"PORT_QOS_MAP": {"Ethernet0": {...}}}``."""
    if not any(isinstance(k, str) and k.split("|", 1)[0] in _KNOWN_TABLES and "|" in k
               for k in data):  # fmt: skip
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        table, bar, rest = str(key).partition("|")
        if not bar:
            out.setdefault(table, value)
            continue
        wrapped = isinstance(value, dict) and isinstance(value.get("value"), dict)
        fields = value["value"] if wrapped and "type" in value else value
        sub = out.setdefault(table, {})
        if isinstance(sub, dict):
            sub[rest] = fields
    return out


def _tables_of(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(namespace, tables) pairs: the top object, or each ASIC namespace of a multi-ASIC dump."""
    data = _regroup(data)
    if any(k in _KNOWN_TABLES for k in data):
        yield "", data
        return
    for ns, sub in data.items():
        if isinstance(sub, dict):
            grouped = _regroup(sub)
            if any(k in _KNOWN_TABLES for k in grouped):
                yield ns, grouped


def _merge_list(items: list[Any], result: ParseResult, line: int) -> dict[str, Any] | None:
    """A JSON array of table objects (sonic-mgmt configlets, ``[{"PORT": {...}}, {"QUEUE":
    {...}}]``) → one object, applied in order as ``sonic-cfggen``/``config load`` would:
    later entries add tables and keys, and their fields update those of the same key."""
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    merged: dict[str, Any] = {}
    for item in items:
        for table, entries in item.items():
            if not isinstance(entries, dict):
                result.warn(line, f"table {table} is not an object; skipped")
                continue
            into = merged.setdefault(table, {})
            for key, fields in entries.items():
                if isinstance(fields, dict) and isinstance(into.get(key), dict):
                    into[key].update(fields)
                else:
                    into[key] = fields
    return merged


def _entries(tables: dict[str, Any], name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    table = tables.get(name)
    if not isinstance(table, dict):
        return
    for key, value in table.items():
        if isinstance(value, dict):
            yield str(key), value


def _num(value: Any, result: ParseResult, line: int, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        result.warn(line, f"{what}: expected an integer, got {value!r}")
        return None


def _int_map(raw: dict[str, Any], result: ParseResult, line: int, what: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for k, v in raw.items():
        try:
            out[int(k)] = int(str(v))
        except ValueError:
            result.warn(line, f"{what}: expected integer key and value, got {k!r}: {v!r}")
    return dict(sorted(out.items()))


def _split_port_key(key: str) -> tuple[list[str], str]:
    """``Ethernet0|3-4`` / ``Ethernet0,Ethernet4|3`` / ``host|asic0|Ethernet0|3`` →
    (ports, id list text)."""
    parts = key.split("|")
    if len(parts) < 2:
        return [key], ""
    return [p for p in parts[-2].split(",") if p], parts[-1]


def _emit(tables: dict[str, Any], index: _LineIndex, result: ParseResult) -> None:
    rec = result.records.append
    for name, raw in _entries(tables, "DSCP_TO_TC_MAP"):
        ln = index.line("DSCP_TO_TC_MAP", name)
        rec(DscpMap(line=ln, name=name, mapping=_int_map(raw, result, ln, "DSCP_TO_TC_MAP")))
    for table, kind in _INT_MAP_TABLES.items():
        for name, raw in _entries(tables, table):
            ln = index.line(table, name)
            rec(TcMap(line=ln, kind=kind, name=name, mapping=_int_map(raw, result, ln, table)))
    for port, raw in _entries(tables, "PORT_QOS_MAP"):
        ln = index.line("PORT_QOS_MAP", port)
        maps = {
            k: _ref_name(str(v))
            for k, v in raw.items()
            if k.endswith("_map") and isinstance(v, str)
        }
        pfc = _ids(raw.get("pfc_enable"), result, ln, "pfc_enable")
        wd = _ids(raw.get("pfcwd_sw_enable"), result, ln, "pfcwd_sw_enable")
        is_port = port != "global"
        for p in port.split(",") if is_port else [port]:
            rec(
                PortQos(
                    line=ln,
                    scope=p,
                    port=p if is_port else None,
                    maps=maps,
                    pfc_enable=pfc,
                    pfcwd_sw_enable=wd,
                )
            )
            if pfc is not None:
                rec(PfcConfig(line=ln, scope=p, port=p if is_port else None, priorities=pfc))
    for name, raw in _entries(tables, "WRED_PROFILE"):
        ln = index.line("WRED_PROFILE", name)
        prob = raw.get("green_drop_probability")
        mode = raw.get("ecn")
        rec(
            EcnConfig(
                line=ln,
                scope=name,
                profile=name,
                min_bytes=_num(raw.get("green_min_threshold"), result, ln, "green_min_threshold"),
                max_bytes=_num(raw.get("green_max_threshold"), result, ln, "green_max_threshold"),
                min_raw=_opt_str(raw.get("green_min_threshold")),
                max_raw=_opt_str(raw.get("green_max_threshold")),
                probability_pct=_float(prob),
                mode=_opt_str(mode),
                ecn_enabled=None if mode is None else str(mode).startswith("ecn_"),
                extra={str(k): str(v) for k, v in raw.items()},
            )
        )
    for key, raw in _entries(tables, "QUEUE"):
        ln = index.line("QUEUE", key)
        ports, ids_text = _split_port_key(key)
        queues = _ids(ids_text, result, ln, "QUEUE key") or ()
        for p in ports:
            rec(
                QueueConfig(
                    line=ln,
                    port=p,
                    queues=queues,
                    wred_profile=_ref_opt(raw.get("wred_profile")),
                    scheduler=_ref_opt(raw.get("scheduler")),
                    key=key,
                )
            )
    for name, raw in _entries(tables, "SCHEDULER"):
        ln = index.line("SCHEDULER", name)
        stype = str(raw.get("type", "")).upper()
        rec(
            QueueSchedule(
                line=ln,
                scope=name,
                scheduler=name,
                weight=_num(raw.get("weight"), result, ln, "weight"),
                strict_priority=stype == "STRICT" if stype else None,
            )
        )
    for name, raw in _entries(tables, "BUFFER_POOL"):
        ln = index.line("BUFFER_POOL", name)
        rec(
            BufferPool(
                line=ln,
                name=name,
                size_bytes=_num(raw.get("size"), result, ln, "size"),
                pool_type=_opt_str(raw.get("type")),
                mode=_opt_str(raw.get("mode")),
                xoff_bytes=_num(raw.get("xoff"), result, ln, "xoff"),
            )
        )
    for name, raw in _entries(tables, "BUFFER_PROFILE"):
        ln = index.line("BUFFER_PROFILE", name)
        xoff = _num(raw.get("xoff"), result, ln, "xoff")
        rec(
            BufferProfile(
                line=ln,
                name=name,
                pool=_ref_opt(raw.get("pool")),
                size_bytes=_num(raw.get("size"), result, ln, "size"),
                xon_bytes=_num(raw.get("xon"), result, ln, "xon"),
                xoff_bytes=xoff,
                xon_offset_bytes=_num(raw.get("xon_offset"), result, ln, "xon_offset"),
                dynamic_th=_num(raw.get("dynamic_th"), result, ln, "dynamic_th"),
                static_th_bytes=_num(raw.get("static_th"), result, ln, "static_th"),
                lossless=xoff is not None or "lossless" in name,
            )
        )
    for table, kind in (("BUFFER_PG", "pg"), ("BUFFER_QUEUE", "queue")):
        for key, raw in _entries(tables, table):
            ln = index.line(table, key)
            ports, ids_text = _split_port_key(key)
            ids = _ids(ids_text, result, ln, f"{table} key") or ()
            for p in ports:
                rec(
                    BufferAssignment(
                        line=ln,
                        kind=kind,
                        port=p,
                        ids=ids,
                        profile=_ref_opt(raw.get("profile")),
                    )
                )
    for port, raw in _entries(tables, "PFC_WD"):
        ln = index.line("PFC_WD", port)
        is_global = port.upper() == "GLOBAL"
        rec(
            PfcWatchdog(
                line=ln,
                scope="global" if is_global else port,
                port=None if is_global else port,
                enabled=None if is_global else True,
                action=_opt_str(raw.get("action")),
                detection_ms=_float(raw.get("detection_time")),
                restoration_ms=_float(raw.get("restoration_time")),
                poll_interval_ms=_float(raw.get("POLL_INTERVAL")),
            )
        )
    for port, raw in _entries(tables, "PORT"):
        ln = index.line("PORT", port)
        mtu = _num(raw.get("mtu"), result, ln, "mtu")
        speed_mbps = _num(raw.get("speed"), result, ln, "speed")
        speed = speed_mbps / 1000.0 if speed_mbps is not None else None
        lanes = _ids(raw.get("lanes"), result, ln, "lanes") or ()
        rec(
            SonicPort(
                line=ln,
                port=port,
                alias=_opt_str(raw.get("alias")),
                lanes=lanes,
                speed_gbps=speed,
                mtu_bytes=mtu,
                admin_status=_opt_str(raw.get("admin_status")),
                fec=_opt_str(raw.get("fec")),
            )
        )
        if mtu is not None:
            rec(Mtu(line=ln, scope=port, port=port, mtu_bytes=mtu, speed_gbps=speed))
    for _name, raw in _entries(tables, "CABLE_LENGTH"):
        for port, length in raw.items():
            ln = index.line("CABLE_LENGTH", _name)
            text = str(length)
            m = _CABLE_RE.fullmatch(text.strip())
            rec(
                CableLength(
                    line=ln, port=str(port), length_m=float(m.group(1)) if m else None, raw=text
                )
            )


def _ids(value: Any, result: ParseResult, line: int, what: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return parse_id_list(str(value))
    except ValueError:
        result.warn(line, f"{what}: expected a list like '3,4' or '3-4', got {value!r}")
        return None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _ref_opt(value: Any) -> str | None:
    return None if value is None else _ref_name(str(value))


def _float(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        return None
