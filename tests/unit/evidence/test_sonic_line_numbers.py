"""SONiC config_db line numbers are right whatever the JSON layout.

Real config_db fixtures are re-serialised the ways users meet them (minified on one line, as
``redis-dump`` and ``sonic-cfggen --print-data`` without indent do; ``indent=8``; the ``{`` of
every object on the next line, tabs; two ASIC namespaces in one document), and each record's
line is checked against the line where its key actually is in that text. The expected line is
found by plain text search in the test (the table name, then the entry key after it), not by
the parser's scan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from aifabric.evidence.base import Record
from aifabric.evidence.qos import (
    BufferProfile,
    DscpMap,
    EcnConfig,
    PfcConfig,
    PortQos,
    QueueSchedule,
    TcMap,
)
from aifabric.evidence.sonic_config import (
    BufferAssignment,
    BufferPool,
    CableLength,
    SonicPort,
    parse_sonic_config_db,
)
from tests.unit.evidence.fixtures import case

KIND = "sonic-config-db"
NESTED = "utilities-qos-reload-t1-buffers"  # {"TABLE": {"entry": {...}}}, indent 4
FLAT = "utilities-mock-tables-flat-redis-keys"  # {"TABLE|entry": {...}}
PROMPT = "admin@sonic:~$ cat /etc/sonic/config_db.json\n"

TC_MAP_TABLES = {
    "tc-to-queue": "TC_TO_QUEUE_MAP",
    "tc-to-pg": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc-priority-to-queue": "MAP_PFC_PRIORITY_TO_QUEUE",
    "mpls-tc-to-tc": "MPLS_TC_TO_TC_MAP",
}


def _line_of(text: str, *keys: str, start: int = 0) -> int:
    """1-based line of the last of ``keys`` (each a JSON key, ``"key" :``), each searched after
    the one before, from offset ``start``."""
    pos = start
    for key in keys:
        m = re.compile(rf'"{re.escape(key)}"\s*:').search(text, pos)
        assert m is not None, key
        pos = m.start()
    return text.count("\n", 0, pos) + 1


def _data(name: str) -> dict[str, Any]:
    data = json.loads(case(KIND, name).text())
    assert isinstance(data, dict)
    return data


def _ids(text: str) -> tuple[int, ...]:
    """``0-2`` / ``3,4`` / ``5`` → the ids (the test's own reading of a key's id list)."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return tuple(out)


def _nested_keys(data: dict[str, Any]) -> Callable[[Record], tuple[str, str] | None]:
    """(table, entry key) of a record of a nested config_db, from the data itself."""
    assignments = {
        ("pg" if table == "BUFFER_PG" else "queue", key.split("|")[0], _ids(key.split("|")[1])): (
            table,
            key,
        )
        for table in ("BUFFER_PG", "BUFFER_QUEUE")
        for key in data.get(table, {})
    }

    def keys(rec: Record) -> tuple[str, str] | None:
        if isinstance(rec, DscpMap):
            return "DSCP_TO_TC_MAP", rec.name
        if isinstance(rec, TcMap):
            return TC_MAP_TABLES[rec.kind], rec.name
        if isinstance(rec, BufferPool):
            return "BUFFER_POOL", rec.name
        if isinstance(rec, BufferProfile):
            return "BUFFER_PROFILE", rec.name
        if isinstance(rec, QueueSchedule):
            return "SCHEDULER", str(rec.scheduler)
        if isinstance(rec, EcnConfig):
            return "WRED_PROFILE", str(rec.profile)
        if isinstance(rec, CableLength):
            return "CABLE_LENGTH", "AZURE"
        if isinstance(rec, BufferAssignment):
            return assignments[(rec.kind, rec.port, rec.ids)]
        return None

    return keys


def _layouts(data: dict[str, Any]) -> dict[str, str]:
    pretty = json.dumps(data, indent=4)
    return {
        "minified": json.dumps(data, separators=(",", ":")),
        "minified after a prompt": PROMPT + json.dumps(data, separators=(",", ":")) + "\n",
        "indent 8": json.dumps(data, indent=8),
        "brace on the next line, tabs": re.sub(r'": \{', '":\n{', pretty).replace("    ", "\t"),
        "spaces before colons": pretty.replace('": ', '" : '),
    }


@pytest.mark.parametrize("layout", list(_layouts({})))
def test_nested_config_db_lines_in_any_layout(layout: str) -> None:
    data = _data(NESTED)
    text = _layouts(data)[layout]
    result = parse_sonic_config_db(text)
    assert result.warnings == []
    keys = _nested_keys(data)
    checked = 0
    for rec in result.records:
        where = keys(rec)
        assert where is not None, rec
        assert rec.line == _line_of(text, *where), (rec, where)
        checked += 1
    assert checked == 174  # every record of the fixture (128 buffer assignments, 32 cables ...)
    if layout.startswith("minified"):
        assert {r.line for r in result.records} == {text[: text.index("{")].count("\n") + 1}


def test_same_records_whatever_the_layout() -> None:
    data = _data(NESTED)
    as_shipped = parse_sonic_config_db(case(KIND, NESTED).text()).records
    for text in _layouts(data).values():
        records = parse_sonic_config_db(text).records
        assert [{**r.to_json(), "line": 0} for r in records] == [
            {**r.to_json(), "line": 0} for r in as_shipped
        ]


def test_as_shipped_lines_match_the_text() -> None:
    text = case(KIND, NESTED).text()
    keys = _nested_keys(_data(NESTED))
    for rec in parse_sonic_config_db(text).records:
        where = keys(rec)
        assert where is not None
        assert rec.line == _line_of(text, *where)
    # a value read by hand from the fixture: DSCP_TO_TC_MAP's AZURE map starts on this line
    (dscp,) = [r for r in parse_sonic_config_db(text).records if isinstance(r, DscpMap)]
    assert text.split("\n")[dscp.line - 1].strip() == '"AZURE": {'


@pytest.mark.parametrize("indent", [None, 8])
def test_flat_redis_keys_lines(indent: int | None) -> None:
    data = _data(FLAT)
    text = json.dumps(data, indent=indent, separators=(",", ":") if indent is None else None)
    records = parse_sonic_config_db(text).records
    checked = 0
    for rec in records:
        if isinstance(rec, SonicPort):
            key = f"PORT|{rec.port}"
        elif isinstance(rec, PortQos | PfcConfig):
            key = f"PORT_QOS_MAP|{rec.port}"
        else:
            continue
        assert rec.line == _line_of(text, key), rec
        checked += 1
    assert checked == 6 + 7 + 7


def test_multi_asic_namespaces_get_their_own_lines() -> None:
    data = _data(NESTED)
    text = json.dumps({"localhost": data, "asic0": data}, indent=2)
    dscp = [r for r in parse_sonic_config_db(text).records if isinstance(r, DscpMap)]
    assert [r.name for r in dscp] == ["AZURE", "AZURE"]
    asic0 = text.index('"asic0"')
    assert [r.line for r in dscp] == [
        _line_of(text, "DSCP_TO_TC_MAP", "AZURE"),
        _line_of(text, "DSCP_TO_TC_MAP", "AZURE", start=asic0),
    ]
    assert dscp[0].line < text.count("\n", 0, asic0) + 1 < dscp[1].line


def test_braces_inside_strings_do_not_count() -> None:
    text = (
        '{"DEVICE_METADATA": {"localhost": {"hostname": "sw{1}", "note": "}}} \\"{\\""}},'
        ' "DSCP_TO_TC_MAP":\n  {"AZURE": {"26": "3"}}}'
    )
    (rec,) = parse_sonic_config_db(text).records
    assert isinstance(rec, DscpMap)
    assert rec.mapping == {26: 3}
    assert rec.line == 2
