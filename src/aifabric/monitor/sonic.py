"""SONiC switch counters for the exporter: COUNTERS_DB (live or a dump) or ``show`` outputs,
turned into the catalogue's metric names through ``Scrape.add_raw("sonic", identity, counters)``.

Every way in ends as raw counters keyed by the SAI stat id SONiC stores in COUNTERS_DB
(``SAI_PORT_STAT_PFC_3_RX_PKTS``, ``SAI_QUEUE_STAT_DROPPED_PACKETS``,
``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED``, ``SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS``...)
with identity labels ``node`` (the switch name given), ``interface`` (``Ethernet0``), and
``queue`` for queue counters or ``pg`` for priority-group counters, the index as SONiC numbers
it (``Ethernet0:3`` in ``COUNTERS_QUEUE_NAME_MAP`` → ``queue="3"``; ``UC3`` in ``show queue
counters`` → ``queue="3"``). The ``sonic:`` rules of ``monitor/catalogue.yaml`` decide which ids
become metrics; every other field is ignored.

Modes (:class:`SonicCollector`; ``from_spec`` reads the ``--sonic`` option):

``db``
    Live COUNTERS_DB. One command per scrape, never one per port: a Lua script sent with
    ``EVAL`` (:data:`LUA_SCRIPT`) reads ``COUNTERS_PORT_NAME_MAP``, ``COUNTERS_QUEUE_NAME_MAP``,
    ``COUNTERS_PG_NAME_MAP`` and ``COUNTERS_QUEUE_TYPE_MAP``, ``HGETALL``\\ s the
    ``COUNTERS:<oid>`` hash of every port, kept queue and PG inside Redis, and returns them all
    as one JSON string (``cjson.encode``; Redis embeds cjson in its Lua:
    https://redis.io/docs/latest/develop/programmability/lua-api/). Run as ``sonic-db-cli [-n
    NS] COUNTERS_DB EVAL <script> 0 <types>``, falling back to ``redis-cli -n 2 --raw EVAL ...``
    (COUNTERS_DB is Redis database 2 in SONiC's ``database_config.json``) when ``sonic-db-cli``
    fails; the command that worked is remembered. Tested against a real Redis 7.
``json``
    A COUNTERS_DB dump file, read on every scrape: either the flat shape of sonic-utilities
    ``tests/mock_tables/counters_db.json`` (``{"COUNTERS_PORT_NAME_MAP": {...},
    "COUNTERS:oid:0x1000000000012": {...}}``) or ``sonic-db-dump -n COUNTERS_DB -y`` output
    (each key's hash under ``"value"``, next to ``"type": "hash"`` and ``"ttl"``/``"expireat"``:
    the shape sonic-net/sonic-mgmt tests/generic_config_updater/test_pfcwd_status.py
    @a6e49dabb82f57dc7af3178dfd2135c8878fa020 reads as ``meta_data[key]["value"]``, and
    sonic-utilities ``scripts/generate_dump`` saves as ``dump/COUNTERS_DB.json``).
``cli`` / ``cli-dir``
    ``show`` command outputs parsed by the evidence parser
    :func:`aifabric.evidence.switch_counters.parse_pfc_counters`, live through the runner
    (``cli``; several seconds per scrape on a switch CPU: use ``db`` where you can) or from
    files named after the command in a directory (``cli-dir``), see :data:`CLI_COMMANDS`.

Columns → SAI ids as the sonic-utilities scripts read them: ``scripts/pfcstat`` (``PFCn``
Rx/Tx → ``SAI_PORT_STAT_PFC_n_RX_PKTS``/``_TX_PKTS``; history from ``SAI_``, else the
software estimate ``EST_PORT_STAT_PFC_n_ON2OFF_RX_PKTS`` / ``_RX_PAUSE_DURATION_US``, which
this module reads the same way), ``scripts/queuestat`` (``Counter/pkts`` →
``SAI_QUEUE_STAT_PACKETS``, ``Counter/bytes`` → ``_BYTES``, ``Drop/pkts`` →
``_DROPPED_PACKETS``, ``Drop/bytes`` → ``_DROPPED_BYTES``; ``COUNTERS_QUEUE_TYPE_MAP``
``SAI_QUEUE_TYPE_UNICAST|MULTICAST|ALL|UNICAST_VOQ`` printed as ``UC|MC|ALL|VOQ``),
``scripts/wredstat`` (``WredDrp/pkts`` → ``SAI_QUEUE_STAT_WRED_DROPPED_PACKETS``,
``EcnMarked/pkts`` → ``SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS``), ``scripts/pg-drop`` and
``scripts/watermarkstat`` (titles ``Ingress PG dropped packets``, ``Ingress headroom per PG``
→ ``SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES``, ``Ingress shared pool
occupancy per PG``, ``Egress shared pool occupancy per unicast queue`` →
``SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES``), ``pfcwd/main.py`` (``STORM DETECTED/RESTORED``,
``TX OK/DROP``, ``RX OK/DROP`` → ``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED``/``_RESTORED``,
``_TX_PACKETS``/``_TX_DROPPED_PACKETS``, ``_RX_PACKETS``/``_RX_DROPPED_PACKETS``); all at
sonic-net/sonic-utilities@691b1bbc4fd2b71657d1b0b334c37136deb51526.

Cardinality: only unicast queues are kept by default (:data:`DEFAULT_QUEUE_TYPES`): multicast
and VOQ queues double or multiply the per-queue series and carry no RoCE traffic. Queues of type
``SAI_QUEUE_TYPE_ALL`` are kept too: platforms that report that type (``show queue watermark
all``) have no separate unicast queues, and dropping them would drop every queue metric there.
A queue absent from ``COUNTERS_QUEUE_TYPE_MAP`` (older images) is kept. Per-queue watermarks
are ``default: false`` in the catalogue.

Robustness: a table, counter or field another platform lacks is skipped; non-numeric values,
odd keys (``Ethernet0:x``, port names with spaces or control characters) and wrong JSON
shapes are skipped, never raised. A runner failure (command missing, non-zero exit, output that
is not the script's JSON) raises :class:`~aifabric.errors.EnvironmentProblem` with one line; in
``cli`` mode only when every command failed (failures of some are listed in
:attr:`SonicCollector.problems`). A ``json`` file or ``cli-dir`` directory that cannot be read,
or a file that is not a JSON object, is an :class:`~aifabric.errors.InputError`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from aifabric.errors import EnvironmentProblem, InputError
from aifabric.evidence.base import Record
from aifabric.evidence.switch_counters import (
    IndexedCounters,
    PfcCounters,
    PfcHistory,
    PfcwdStats,
    QueueCounters,
    parse_pfc_counters,
)
from aifabric.monitor.exposition import Scrape
from aifabric.monitor.sources import Runner, run_command

__all__ = [
    "CLI_COMMANDS",
    "DEFAULT_QUEUE_TYPES",
    "LUA_SCRIPT",
    "Identity",
    "Mode",
    "Runner",
    "SonicCollector",
    "counters_from_records",
    "counters_from_tables",
    "normalise_dump",
    "run_command",
]

Mode = Literal["db", "json", "cli", "cli-dir"]
Identity = tuple[tuple[str, str], ...]
"""Labels after ``node``: ``(("interface", "Ethernet0"), ("queue", "3"))``."""

DEFAULT_QUEUE_TYPES: frozenset[str] = frozenset({"SAI_QUEUE_TYPE_UNICAST", "SAI_QUEUE_TYPE_ALL"})
"""Queue types kept by default (see the module docstring: unicast only, plus ``ALL``)."""

_CLI_TYPE = {
    "UC": "SAI_QUEUE_TYPE_UNICAST",
    "MC": "SAI_QUEUE_TYPE_MULTICAST",
    "ALL": "SAI_QUEUE_TYPE_ALL",
    "VOQ": "SAI_QUEUE_TYPE_UNICAST_VOQ",
}
"""queuestat's printed queue prefix → the COUNTERS_QUEUE_TYPE_MAP value it came from."""

CLI_COMMANDS: dict[str, tuple[str, ...]] = {
    "pfc-counters.txt": ("show", "pfc", "counters"),
    "pfc-history.txt": ("show", "pfc", "counters", "--history"),
    "pfcwd-stats.txt": ("show", "pfcwd", "stats"),
    "queue-counters.txt": ("show", "queue", "counters"),
    "queue-wredcounters.txt": ("show", "queue", "wredcounters"),
    "pg-drop-counters.txt": ("show", "priority-group", "drop", "counters"),
    "queue-watermark-unicast.txt": ("show", "queue", "watermark", "unicast"),
    "pg-persistent-watermark-headroom.txt": (
        "show",
        "priority-group",
        "persistent-watermark",
        "headroom",
    ),
    "pg-watermark-shared.txt": ("show", "priority-group", "watermark", "shared"),
}
"""``cli-dir`` file name → the command whose output it holds (``cli`` runs these commands).
Every file is parsed the same way (tables are found by their headers), so a file may hold
several outputs; missing files are skipped, other names are ignored."""

_QUEUE_COLUMNS = {
    "Counter/pkts": "SAI_QUEUE_STAT_PACKETS",
    "Counter/bytes": "SAI_QUEUE_STAT_BYTES",
    "Drop/pkts": "SAI_QUEUE_STAT_DROPPED_PACKETS",
    "Drop/bytes": "SAI_QUEUE_STAT_DROPPED_BYTES",
    "WredDrp/pkts": "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS",
    "WredDrp/bytes": "SAI_QUEUE_STAT_WRED_DROPPED_BYTES",
    "EcnMarked/pkts": "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
    "EcnMarked/bytes": "SAI_QUEUE_STAT_WRED_ECN_MARKED_BYTES",
}
_PG_STAT = "SAI_INGRESS_PRIORITY_GROUP_STAT_"
_INDEXED_TITLES = {
    "Ingress PG dropped packets": _PG_STAT + "DROPPED_PACKETS",
    "Ingress headroom per PG": _PG_STAT + "XOFF_ROOM_WATERMARK_BYTES",
    "Ingress shared pool occupancy per PG": _PG_STAT + "SHARED_WATERMARK_BYTES",
    "Egress shared pool occupancy per unicast queue": "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
    "Egress shared pool occupancy per multicast queue": "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
    "Egress shared pool occupancy per all queues": "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
}
_COLUMN = re.compile(r"^(PG|UC|MC|ALL|Q)(\d+)$")
_EST_HISTORY = re.compile(r"^EST(_PORT_STAT_PFC_[0-7]_(?:ON2OFF_RX_PKTS|RX_PAUSE_DURATION_US))$")
_INDEX = re.compile(r"\d{1,4}")
_PORT_NAME = re.compile(r"[\x21-\x7e]{1,64}")
"""A port name worth a label: printable ASCII without spaces (``Ethernet0``, ``Ethernet-BP4``,
``testsw|Ethernet0``), at most 64 characters; anything else is a broken table, skipped."""

_PORT_MAP = "COUNTERS_PORT_NAME_MAP"
_QUEUE_MAP = "COUNTERS_QUEUE_NAME_MAP"
_PG_MAP = "COUNTERS_PG_NAME_MAP"
_TYPE_MAP = "COUNTERS_QUEUE_TYPE_MAP"

LUA_SCRIPT = """\
local maps = {'COUNTERS_PORT_NAME_MAP', 'COUNTERS_QUEUE_NAME_MAP', 'COUNTERS_PG_NAME_MAP',
              'COUNTERS_QUEUE_TYPE_MAP'}
local out = {}
for _, name in ipairs(maps) do out[name] = redis.call('HGETALL', name) end
local keep = {}
for _, t in ipairs(ARGV) do keep[t] = true end
local types = {}
local tm = out['COUNTERS_QUEUE_TYPE_MAP']
for j = 1, #tm, 2 do types[tm[j]] = tm[j + 1] end
for i = 1, 3 do
  local flat = out[maps[i]]
  for j = 2, #flat, 2 do
    local oid = flat[j]
    local t = types[oid]
    if i ~= 2 or #ARGV == 0 or t == nil or keep[t] then
      out['COUNTERS:' .. oid] = redis.call('HGETALL', 'COUNTERS:' .. oid)
    end
  end
end
return cjson.encode(out)
"""
"""The one ``EVAL`` of a ``db`` scrape. ``ARGV``: the queue types to keep (none: all). Returns
``{key: [field, value, ...]}`` (``HGETALL``'s flat list; ``{}`` for an absent key, as cjson
encodes an empty Lua table)."""


# ---------------------------------------------------------------------------------------------
# COUNTERS_DB tables (db and json modes)


def _value(raw: object) -> float | None:
    """A COUNTERS_DB field value (always a string there) as a number, or ``None``."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    if not isinstance(raw, str) or len(raw) > 40:
        return None
    s = raw.strip()
    if s.isascii() and s.isdecimal():  # not isdigit(): that holds for "²", which int() refuses
        return int(s)
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _numeric(fields: Mapping[str, object]) -> dict[str, float]:
    """The numeric fields of one ``COUNTERS:<oid>`` hash; ``EST_`` PFC history estimates filled
    in under their ``SAI_`` name where the ASIC gives none (as ``pfcstat --history`` does)."""
    out: dict[str, float] = {}
    for name, raw in fields.items():
        if not isinstance(name, str):
            continue
        v = _value(raw)
        if v is not None:
            out[name] = v
    for name in [n for n in out if n.startswith("EST_")]:
        m = _EST_HISTORY.match(name)
        if m is not None:
            out.setdefault("SAI" + m.group(1), out[name])
    return out


def _hash(raw: object) -> dict[str, object]:
    """One Redis hash as a dict: a JSON object as is, ``HGETALL``'s flat list paired up,
    anything else empty."""
    if isinstance(raw, dict):
        return {str(k): v for k, v in raw.items()}
    if isinstance(raw, list):
        return {str(raw[i]): raw[i + 1] for i in range(0, len(raw) - 1, 2)}
    return {}


def normalise_dump(data: object) -> dict[str, dict[str, object]]:
    """A COUNTERS_DB dump (either JSON shape of the module docstring, or the ``db`` script's
    ``{key: [field, value, ...]}``) as ``{key: {field: value}}``; entries of any other shape are
    dropped. A top level that is not an object gives ``{}``."""
    if not isinstance(data, dict):
        return {}
    out: dict[str, dict[str, object]] = {}
    for key, entry in data.items():
        raw = entry
        if isinstance(entry, dict) and isinstance(entry.get("value"), dict) and "type" in entry:
            raw = entry["value"]
        table = _hash(raw)
        if table or isinstance(raw, (dict, list)):
            out[str(key)] = table
    return out


def _split_name(name: str) -> tuple[str, str] | None:
    """``Ethernet0:3`` → ``("Ethernet0", "3")``; ``None`` for anything else."""
    port, sep, index = name.rpartition(":")
    if not sep or not _PORT_NAME.fullmatch(port) or not _INDEX.fullmatch(index):
        return None
    return port, str(int(index))


def counters_from_tables(
    tables: Mapping[str, Mapping[str, object]],
    queue_types: frozenset[str] | None = DEFAULT_QUEUE_TYPES,
) -> Iterator[tuple[Identity, dict[str, float]]]:
    """``(identity, counters)`` per port, kept queue and PG of a normalised COUNTERS_DB
    (:func:`normalise_dump`). ``queue_types=None`` keeps every queue. Objects whose
    ``COUNTERS:<oid>`` hash is absent or has no numeric field yield nothing."""

    def hash_of(oid: object) -> dict[str, float]:
        if not isinstance(oid, str):
            return {}
        return _numeric(tables.get("COUNTERS:" + oid) or {})

    for port, oid in (tables.get(_PORT_MAP) or {}).items():
        if not _PORT_NAME.fullmatch(port):
            continue
        counters = hash_of(oid)
        if counters:
            yield (("interface", port),), counters
    types = tables.get(_TYPE_MAP) or {}
    for label, mapname in (("queue", _QUEUE_MAP), ("pg", _PG_MAP)):
        for name, oid in (tables.get(mapname) or {}).items():
            where = _split_name(name)
            if where is None:
                continue
            if label == "queue" and queue_types is not None and isinstance(oid, str):
                qtype = types.get(oid)
                if isinstance(qtype, str) and qtype not in queue_types:
                    continue
            counters = hash_of(oid)
            if counters:
                yield (("interface", where[0]), (label, where[1])), counters


# ---------------------------------------------------------------------------------------------
# show outputs (cli and cli-dir modes)


def _queue_kept(prefix: str, queue_types: frozenset[str] | None) -> bool:
    return queue_types is None or _CLI_TYPE.get(prefix.upper(), "") in queue_types


def counters_from_records(
    records: Iterable[Record],
    queue_types: frozenset[str] | None = DEFAULT_QUEUE_TYPES,
) -> dict[Identity, dict[str, float]]:
    """Raw SAI-id counters per identity from parsed ``show`` records (``pfc-counters``,
    ``pfc-history``, ``pfcwd-stats``, ``queue-counters``, ``indexed-counters``); ``N/A`` cells,
    unknown titles and columns, and queues of types not in ``queue_types`` are skipped."""
    out: dict[Identity, dict[str, float]] = {}

    def put(ident: Identity, name: str, value: int | None) -> None:
        if value is not None:
            out.setdefault(ident, {}).setdefault(name, value)

    for rec in records:
        if isinstance(rec, PfcCounters):
            direction = rec.direction.upper()
            for prio, frames in enumerate(rec.frames[:8]):
                put(
                    (("interface", rec.port),), f"SAI_PORT_STAT_PFC_{prio}_{direction}_PKTS", frames
                )
        elif isinstance(rec, PfcHistory):
            if 0 <= rec.priority <= 7:
                ident: Identity = (("interface", rec.port),)
                stem = f"SAI_PORT_STAT_PFC_{rec.priority}"
                put(ident, f"{stem}_ON2OFF_RX_PKTS", rec.rx_pause_transitions)
                put(ident, f"{stem}_RX_PAUSE_DURATION_US", rec.total_rx_pause_us)
        elif isinstance(rec, PfcwdStats):
            if rec.queue is None:
                continue
            ident = (("interface", rec.port), ("queue", str(rec.queue)))
            stem = "PFC_WD_QUEUE_STATS"
            put(ident, f"{stem}_DEADLOCK_DETECTED", rec.storms_detected)
            put(ident, f"{stem}_DEADLOCK_RESTORED", rec.storms_restored)
            put(ident, f"{stem}_TX_PACKETS", rec.tx_ok)
            put(ident, f"{stem}_TX_DROPPED_PACKETS", rec.tx_drop)
            put(ident, f"{stem}_RX_PACKETS", rec.rx_ok)
            put(ident, f"{stem}_RX_DROPPED_PACKETS", rec.rx_drop)
        elif isinstance(rec, QueueCounters):
            if rec.queue_index is None or not _queue_kept(rec.queue_type, queue_types):
                continue
            ident = (("interface", rec.port), ("queue", str(rec.queue_index)))
            for column, value in rec.counters.items():
                sai = _QUEUE_COLUMNS.get(column)
                if sai is not None:
                    put(ident, sai, value)
        elif isinstance(rec, IndexedCounters):
            sai = _INDEXED_TITLES.get(rec.stat)
            if sai is None:
                continue
            for column, value in zip(rec.columns, rec.values, strict=False):
                m = _COLUMN.match(column)
                if m is None:
                    continue
                kind, index = m.group(1), str(int(m.group(2)))
                if kind == "PG":
                    if sai.startswith(_PG_STAT):
                        put((("interface", rec.port), ("pg", index)), sai, value)
                elif sai.startswith("SAI_QUEUE_") and _queue_kept(kind, queue_types):
                    put((("interface", rec.port), ("queue", index)), sai, value)
    return out


# ---------------------------------------------------------------------------------------------
# the collector


class SonicCollector:
    """SONiC counters of one switch (``node``) into a :class:`Scrape`; see the module docstring.

    ``mode``: ``db`` (``runner`` runs ``sonic-db-cli``/``redis-cli``; ``namespace`` selects a
    multi-ASIC namespace, ``sonic-db-cli -n asic0``), ``json`` (``path``: a dump file),
    ``cli`` (``runner`` runs the :data:`CLI_COMMANDS`) or ``cli-dir`` (``path``: a directory
    of files named as in :data:`CLI_COMMANDS`). ``queue_types``: the
    ``COUNTERS_QUEUE_TYPE_MAP`` values kept (``None``: all queues).
    """

    def __init__(
        self,
        node: str,
        mode: Mode,
        *,
        runner: Runner = run_command,
        path: Path | str | None = None,
        queue_types: frozenset[str] | None = DEFAULT_QUEUE_TYPES,
        namespace: str | None = None,
    ) -> None:
        if mode not in ("db", "json", "cli", "cli-dir"):
            raise InputError(f"SONiC mode {mode!r}: expected db, json, cli or cli-dir")
        if mode in ("json", "cli-dir") and path is None:
            raise InputError(f"SONiC mode {mode} needs a path (--sonic {mode}:PATH)")
        if not node:
            raise InputError("SONiC collector: the node (switch name) is empty")
        self.node = node
        self.mode: Mode = mode
        self.runner = runner
        self.path = Path(path) if path is not None else None
        self.queue_types = queue_types
        self.namespace = namespace
        self.name = f"sonic:{node}"
        self.problems: list[str] = []
        """Commands that failed in the last ``cli`` scrape while others worked."""
        self._db_argv: list[str] | None = None

    @classmethod
    def from_spec(cls, node: str, spec: str, *, runner: Runner = run_command) -> SonicCollector:
        """The ``--sonic`` option: ``db``, ``db:NAMESPACE``, ``json:FILE``, ``cli``,
        ``cli-dir:DIR``."""
        mode, sep, arg = spec.partition(":")
        if mode == "db":
            return cls(node, "db", runner=runner, namespace=arg or None)
        if mode == "cli" and not sep:
            return cls(node, "cli", runner=runner)
        if mode in ("json", "cli-dir") and arg:
            return cls(node, mode, runner=runner, path=arg)  # type: ignore[arg-type]
        raise InputError(
            f"--sonic {spec!r}: expected db, db:NAMESPACE, json:FILE, cli or cli-dir:DIR"
        )

    def close(self) -> None:
        """Nothing is held open between scrapes."""

    def collect(self, scrape: Scrape) -> None:
        """One scrape's SONiC series into ``scrape``."""
        if self.mode in ("db", "json"):
            tables = self._read_db() if self.mode == "db" else self._read_json()
            items: Iterable[tuple[Identity, dict[str, float]]] = counters_from_tables(
                tables, self.queue_types
            )
        else:
            items = counters_from_records(self._records(), self.queue_types).items()
        node: Identity = (("node", self.node),)
        for ident, counters in items:
            scrape.add_raw("sonic", node + ident, counters)

    # -- db --------------------------------------------------------------------------------

    def _db_candidates(self) -> list[list[str]]:
        args = ["EVAL", LUA_SCRIPT, "0", *sorted(self.queue_types or ())]
        ns = ["-n", self.namespace] if self.namespace else []
        out = [["sonic-db-cli", *ns, "COUNTERS_DB", *args]]
        if not self.namespace:
            out.append(["redis-cli", "-n", "2", "--raw", *args])
        return out

    def _read_db(self) -> dict[str, dict[str, object]]:
        candidates = [self._db_argv] if self._db_argv else self._db_candidates()
        errors: list[str] = []
        for argv in candidates:
            try:
                text = self.runner(argv)
            except EnvironmentProblem as exc:
                errors.append(str(exc))
                continue
            self._db_argv = argv
            return normalise_dump(_decode_eval(text, argv[0]))
        raise EnvironmentProblem("COUNTERS_DB unreachable: " + "; ".join(errors))

    # -- json ------------------------------------------------------------------------------

    def _read_json(self) -> dict[str, dict[str, object]]:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(
                f"{self.path}: not a COUNTERS_DB JSON dump: {exc}"
                if isinstance(exc, json.JSONDecodeError)
                else f"{self.path}: JSON nested too deeply"
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                f"{self.path}: a COUNTERS_DB dump is a JSON object keyed by Redis key, "
                f"not a {type(data).__name__}"
            )
        return normalise_dump(data)

    # -- cli -------------------------------------------------------------------------------

    def _records(self) -> list[Record]:
        texts: list[str] = []
        self.problems = []
        if self.mode == "cli-dir":
            assert self.path is not None
            if not self.path.is_dir():
                raise InputError(f"{self.path}: not a directory of SONiC show outputs")
            for fname in CLI_COMMANDS:
                f = self.path / fname
                if f.is_file():
                    try:
                        texts.append(f.read_text(encoding="utf-8", errors="replace"))
                    except OSError as exc:
                        self.problems.append(f"{f}: {exc.strerror or exc}")
        else:
            for argv in CLI_COMMANDS.values():
                try:
                    texts.append(self.runner(argv))
                except EnvironmentProblem as exc:
                    self.problems.append(str(exc))
            if not texts:
                raise EnvironmentProblem(
                    f"no SONiC show command worked ({len(self.problems)} tried): "
                    + self.problems[0]
                )
        records: list[Record] = []
        for text in texts:
            records += parse_pfc_counters(text).records
        return records


def _decode_eval(text: str, tool: str) -> Any:
    """The JSON string the Lua script returned, as printed by ``sonic-db-cli`` or ``redis-cli
    --raw`` (bare), or by an interactive ``redis-cli`` (double-quoted, escaped)."""
    s = text.strip()
    try:
        data = json.loads(s)
        if isinstance(data, str):  # a quoted reply: the JSON is inside
            data = json.loads(data)
    except (json.JSONDecodeError, RecursionError):
        raise EnvironmentProblem(
            f"{tool}: EVAL did not return the script's JSON (got {s[:60]!r})"
        ) from None
    if not isinstance(data, dict):
        raise EnvironmentProblem(f"{tool}: EVAL returned a {type(data).__name__}, not an object")
    return data
