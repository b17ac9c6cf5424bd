"""SONiC ``config_db.json`` (whole file, ``show runningconfiguration all``, or a fragment loaded
with ``config load``) → the normalised switch-QoS records shared by every switch dialect.

The shared records (``dscp-map``, ``tc-map``, ``pfc``, ``ecn``, ``mtu``, ``queue-schedule``,
``buffer-profile``, ``pfc-watchdog``, ``port-qos``) are defined once in :mod:`qos` for every
dialect, so ``verify`` compares the fabric intent (DSCP 26 → TC 3, PFC on priority 3 only, ECN
min/max, MTU 9100/9216, PFC watchdog: S11–S14, S18) with any dialect the same way; the records
only SONiC has (``queue``, ``buffer-pool``, ``buffer-assignment``, ``port``, ``cable-length``)
are defined here.

Tables read: ``DSCP_TO_TC_MAP``; ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``,
``MAP_PFC_PRIORITY_TO_QUEUE``, ``DOT1P_TO_TC_MAP``, ``TC_TO_DSCP_MAP``,
``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP``, ``MPLS_TC_TO_TC_MAP`` (``tc-map``); ``PORT_QOS_MAP``
(``pfc_enable: "3,4"``, map references by name or in the pre-202012 ``[DSCP_TO_TC_MAP|AZURE]``
form, the ``global`` entry); ``WRED_PROFILE`` (``ecn: ecn_all``, green/yellow/red thresholds in
bytes); ``QUEUE`` (``Ethernet0|3``, ``Ethernet0,Ethernet4|3-4`` and the VOQ
``host|asic|Ethernet0|3`` keys); ``SCHEDULER``; ``BUFFER_POOL``, ``BUFFER_PROFILE``,
``BUFFER_PG``, ``BUFFER_QUEUE``; ``PFC_WD`` (per port, and ``GLOBAL`` ``POLL_INTERVAL``);
``PORT`` (``mtu``, ``speed`` in Mb/s, ``lanes``, ``alias``, ``index``); ``CABLE_LENGTH``.
Multi-ASIC dumps (``{"localhost": {...}, "asic0": {...}}``) are read namespace by namespace. The
flat redis form of CONFIG_DB (``"PORT_QOS_MAP|Ethernet0": {...}``, as in redis dumps,
``sonic-db-dump`` with its ``{"type": "hash", "value": {...}}`` wrapper, and sonic-utilities
``mock_tables``) is regrouped into tables. A shell prompt or ``cat`` line before the JSON, and a
prompt after it, are skipped; several documents in one terminal paste are read in turn.

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

Line numbers: ``json`` gives none, so one pass over the JSON tokens notes where every
``"TABLE": {`` and every ``"entry": {`` inside a table starts, and each record gets the line of
its entry's key from that character offset: right whether the JSON is pretty-printed, minified
on one line or oddly indented, and per namespace of a multi-ASIC dump. Malformed JSON: one
warning at the decoder's line, then each table is salvaged on its own (``raw_decode`` from its
``"TABLE": {``).

Where each part lives: :mod:`~aifabric.evidence.sonic_json` turns the text into documents of
tables (documents, excerpts, salvage, the flat redis form, namespaces, line numbers),
:mod:`~aifabric.evidence.sonic_redis` reads the ``redis-cli``/``sonic-db-cli`` output, this
module turns tables into records; the records every switch dialect shares are in
:mod:`~aifabric.evidence.qos`.

Sources: sonic-buildimage ``src/sonic-config-engine/tests/sample_output/py3/qos-*.json``,
``files/build_templates/qos_config.j2`` and ``src/sonic-config-engine/sonic-cfggen`` (``--var-json``
prints ``json.dumps(data[TABLE], indent=4)``); sonic-buildimage PR 21797, sonic-utilities PRs 557
and 600 (captures under tests/fixtures/evidence/sonic-config-db); sonic-utilities
``tests/qos_config_input`` and ``tests/db_migrator_input`` (reference-format 3_0_1); SONiC
Configuration wiki https://github.com/sonic-net/SONiC/wiki/Configuration ; swss
``doc/swss-schema.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.qos import (
    BufferProfile,
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    PfcWatchdog,
    PortQos,
    QueueSchedule,
    TcMap,
    parse_id_list,
)
from aifabric.evidence.registry import register
from aifabric.evidence.sonic_json import (
    IMPLICIT,
    INT_MAP_TABLES,
    KeyIndex,
    json_docs,
    regroup,
    tables_of,
)
from aifabric.evidence.sonic_redis import HGET_RE, redis_output

__all__ = [
    "BufferAssignment",
    "BufferPool",
    "CableLength",
    "QueueConfig",
    "SonicPort",
    "parse_sonic_config_db",
]


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
    index: int | None = None
    """The front-panel port number (``index`` of ``port_config.ini``); the sub-ports of a
    breakout share it."""


@dataclass(slots=True, kw_only=True)
class CableLength(Record):
    record_type: ClassVar[str] = "cable-length"
    port: str
    length_m: float | None
    raw: str


# --------------------------------------------------------------------------------------------
# helpers


def _ref_name(value: str) -> str:
    """``[DSCP_TO_TC_MAP|AZURE]`` → ``AZURE``; plain names unchanged."""
    v = value.strip()
    if v.startswith("[") and v.endswith("]") and "|" in v:
        return v[1:-1].split("|", 1)[1]
    return v


# --------------------------------------------------------------------------------------------
# SONiC parser

_CABLE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*m?")
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
    if HGET_RE.search(text) is not None:
        flat, where, used = redis_output(lines, result)
    if flat:
        result.warn(
            min(where.values()),
            f"CONFIG_DB key/value output ({len(flat)} hash(es) read with redis-cli/sonic-db-cli):"
            " an excerpt, the rest of CONFIG_DB is not in the capture",
        )
        tables = regroup(flat)
        _emit(tables, KeyIndex.fixed(where), result)
    before = len(result.warnings)
    docs = json_docs(lines, result, used)
    if not docs and not flat and len(result.warnings) == before:
        result.warn(None, "no JSON object found (expected a config_db.json document)")
        return
    for data, start in docs:
        implicit = data.pop(IMPLICIT, None)
        index = KeyIndex(
            "\n".join(lines[start:]), start + 1, implicit if isinstance(implicit, str) else None
        )
        for ns, tables in tables_of(data):
            index.namespace = ns
            _emit(tables, index, result)


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


def _emit(tables: dict[str, Any], index: KeyIndex, result: ParseResult) -> None:
    rec = result.records.append
    for name, raw in _entries(tables, "DSCP_TO_TC_MAP"):
        ln = index.line("DSCP_TO_TC_MAP", name)
        rec(DscpMap(line=ln, name=name, mapping=_int_map(raw, result, ln, "DSCP_TO_TC_MAP")))
    for table, kind in INT_MAP_TABLES.items():
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
                index=_num(raw.get("index"), result, ln, "index"),
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
