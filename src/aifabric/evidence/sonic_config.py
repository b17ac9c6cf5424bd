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
into tables. A shell prompt or ``cat`` line before the JSON, and a prompt after it, are skipped.

Line numbers: ``json`` gives none, so one scan of the text notes the line of every
``"key": {`` and assigns entries to tables in document order. Malformed JSON: one warning at the
decoder's line, then each table is salvaged on its own (``raw_decode`` from its ``"TABLE": {``).

Sources: sonic-buildimage ``src/sonic-config-engine/tests/sample_output/py3/qos-*.json`` and
``files/build_templates/qos_config.j2``; sonic-utilities ``tests/qos_config_input`` and
``tests/db_migrator_input`` (reference-format 3_0_1); SONiC Configuration wiki
https://github.com/sonic-net/SONiC/wiki/Configuration ; swss ``doc/swss-schema.md``.
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

_SIZE_RE = re.compile(
    r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[a-zA-Z]*)\s*$",
)
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
    m = _SIZE_RE.match(f"{value} {unit}" if unit else value)
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


def _detect(text: str) -> float:
    head = text[:200_000]
    if "{" not in head:
        return 0.0
    if _DETECT_FLAT_RE.search(head):
        return 0.9
    m = _DETECT_RE.search(head)
    if m is None:
        return 0.0
    return 0.95 if m.group(1) != "DEVICE_METADATA" else 0.6


class _LineIndex:
    """Line of each ``"TABLE": {`` and of each ``"entry": {`` inside it, in document order."""

    def __init__(self, lines: list[str], first_line: int, tables: set[str]) -> None:
        self.table_line: dict[str, int] = {}
        self.entry_line: dict[tuple[str, str], int] = {}
        current: str | None = None
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


def _salvage(body: str, result: ParseResult, offset: int) -> dict[str, Any]:
    """Decode each ``"TABLE": {`` on its own after a JSON error."""
    out: dict[str, Any] = {}
    dec = json.JSONDecoder()
    for m in re.finditer(r'"([A-Z][A-Z0-9_]*)"\s*:\s*(?=\{)', body):
        name = m.group(1)
        if name in out:
            continue
        try:
            obj, _ = dec.raw_decode(body, m.end())
        except ValueError:
            line = body.count("\n", 0, m.start()) + offset
            result.warn(line, f"table {name} could not be salvaged from the malformed JSON")
            continue
        if isinstance(obj, dict):
            out[name] = obj
    return out


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


@register(
    "sonic-config-db",
    summary="SONiC /etc/sonic/config_db.json or 'show runningconfiguration all' (QoS tables)",
    detect=_detect,
    refs=("S11", "S12", "S13", "S14", "S18"),
)
def parse_sonic_config_db(text: str) -> ParseResult:
    """Parse a SONiC config_db JSON document (or fragment) into normalised QoS records."""
    result = ParseResult(kind="sonic-config-db")
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].lstrip().startswith(("{", "[")):
        start += 1
    if start == len(lines):
        result.warn(None, "no JSON object found (expected a config_db.json document)")
        return result
    body = "\n".join(lines[start:])
    data: Any
    try:
        data = _loads_ignoring_trailing_prompt(body)
    except ValueError as exc:
        lineno = getattr(exc, "lineno", None)
        line = lineno + start if isinstance(lineno, int) else None
        bad = lines[line - 1] if line is not None and 0 < line <= len(lines) else ""
        result.warn(line, f"malformed JSON ({getattr(exc, 'msg', exc)}); salvaging tables", bad)
        data = _salvage(body, result, start + 1)
    if isinstance(data, list):
        data = _merge_list(data, result, start + 1)
    if not isinstance(data, dict):
        result.warn(start + 1, "config_db JSON must be an object of tables", lines[start])
        return result
    for _ns, tables in _tables_of(data):
        index = _LineIndex(lines[start:], start + 1, {k for k in tables if k in _KNOWN_TABLES})
        _emit(tables, index, result)
    return result


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


def _loads_ignoring_trailing_prompt(body: str) -> Any:
    """``json.loads``, except that text after the document that is not JSON (the next shell
    prompt of a pasted ``cat config_db.json``, ``admin@sonic:~$``) is ignored."""
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise
        data, end = json.JSONDecoder().raw_decode(body.lstrip())
        rest = body.lstrip()[end:].strip()
        if rest.startswith(("{", "[", '"', ",", ":")):
            raise
        return data


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
            m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*m?\s*$", text)
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
