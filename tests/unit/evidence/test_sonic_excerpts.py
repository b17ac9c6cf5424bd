"""SONiC CONFIG_DB excerpts: a table or two without the outer braces, a paste that starts inside a
table, JSON cut off by the end of the capture, a table's entries without its name
(``sonic-cfggen -d --var-json PORT``, ``show runningconfiguration ports``), several documents in
one terminal paste, and the key/value output of ``redis-cli``/``sonic-db-cli``.

The fixtures are real captures (values read by hand). The other excerpts are cut from real
config_db fixtures the way users cut them (whole lines), or rendered from a real fixture's values
in the output format of the tool: ``sonic-cfggen --var-json T`` prints
``json.dumps(data[T], indent=4)`` (sonic-net/sonic-buildimage
src/sonic-config-engine/sonic-cfggen @ 0405e0162b49fb3a85a0153e82d845136b621d1a); ``redis-cli``
prints a hash as numbered ``N) "field"`` / ``N+1) "value"`` lines (as in the capture of
https://github.com/sonic-net/sonic-utilities/issues/481, right-aligned past 9 as in redis-cli's
reply formatting); ``redis-cli | paste - -`` gives one ``field<TAB>value`` line per field.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.qos import PfcConfig, PortQos, TcMap
from aifabric.evidence.sonic_config import (
    BufferAssignment,
    CableLength,
    SonicPort,
    parse_sonic_config_db,
)
from tests.unit.evidence.fixtures import case, load

KIND = "sonic-config-db"
REF = "db-migrator-reference-format-3-0-1"
FLAT = "utilities-mock-tables-flat-redis-keys"


def _sans_lines(records: list[Record]) -> list[str]:
    out = []
    for r in records:
        d = r.to_json()
        d.pop("line")
        d.pop("end_line")
        out.append(json.dumps(d, sort_keys=True))
    return sorted(out)


def _table_lines(name: str, table: str) -> list[str]:
    """The whole lines of one table of a pretty-printed fixture, ``"T": {`` to its ``},``."""
    lines = case(KIND, name).text().split("\n")
    start = lines.index(f'    "{table}": {{')
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("    }"))
    return lines[start : end + 1]


def _of(res: ParseResult, *types: type[Record]) -> list[Any]:
    return [r for r in res.records if isinstance(r, types)]


# --------------------------------------------------------------------------------------------
# real captures


def test_redis_hget_and_sonic_db_cli_hgetall() -> None:
    res = load(KIND, "buildimage-pr21797-redis-hget-sonic-db-cli-hgetall")
    (w,) = res.warnings
    assert w.line == 1 and "excerpt" in w.message and "3 hash(es)" in w.message
    (tc,) = _of(res, TcMap)
    assert (tc.line, tc.kind, tc.name) == (6, "tc-to-pg", "AZURE_DPC")
    assert tc.mapping == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 7}
    (pq,) = _of(res, PortQos)
    assert (pq.line, pq.port, pq.maps, pq.pfc_enable) == (
        3,
        "Ethernet232",
        {"tc_to_pg_map": "AZURE_DPC"},
        None,
    )
    assert not _of(res, PfcConfig)  # pfc_enable was not read: nothing said about PFC
    (cl,) = _of(res, CableLength)
    assert (cl.line, cl.port, cl.length_m, cl.raw) == (1, "Ethernet224", 0.0, "0m")
    assert (
        detect_kind(case(KIND, "buildimage-pr21797-redis-hget-sonic-db-cli-hgetall").text()) == KIND
    )


def test_runningconfig_ports_cut_is_read_as_port() -> None:
    res = load(KIND, "utilities-pr600-runningconfig-ports-cut")
    w1, w2 = res.warnings
    assert w1.line == 29 and "malformed JSON" in w1.message
    assert (
        w2.line == 2 and "read as PORT" in w2.message and "runningconfiguration ports" in w2.message
    )
    ports = _of(res, SonicPort)
    assert [(p.port, p.line, p.alias, p.lanes, p.mtu_bytes, p.speed_gbps) for p in ports] == [
        ("Ethernet0", 3, "Eth1", (65, 66, 67, 68), 9100, 100.0),
        ("Ethernet4", 11, "Eth2", (69, 70, 71, 72), 9100, 100.0),
        ("Ethernet8", 19, "Eth3", (73, 74, 75, 76), 9100, 100.0),
    ]  # Ethernet12 is cut after its first field: not read


def test_excerpt_starting_inside_an_unnamed_entry() -> None:
    res = load(KIND, "buildimage-pr5434-port-entries-mid-table")
    w1, w2 = res.warnings
    assert w1.line == 1 and "excerpt" in w1.message and "starts inside an entry" in w1.message
    assert "read as PORT from their fields (lanes)" in w2.message
    ports = _of(res, SonicPort)
    assert [p.port for p in ports] == [
        "Ethernet40",
        "Ethernet44",
        "Ethernet48",
        "Ethernet52",
        "Ethernet56",
    ]
    assert [p.line for p in ports] == [5, 13, 21, 29, 37]
    last = ports[-1]
    assert (last.alias, last.lanes, last.speed_gbps) == ("etp15a", (89, 90), 50.0)


def test_two_documents_in_a_terminal_paste_second_cut() -> None:
    res = load(KIND, "utilities-pr557-acl-then-port-cut")
    w1, w2 = res.warnings
    assert w1.line == 44 and "malformed JSON" in w1.message
    assert w2.line == 28 and "table PORT is cut off" in w2.message
    (port,) = _of(res, SonicPort)  # the ACL document has no QoS table; Ethernet4 is cut
    assert (port.port, port.line, port.lanes, port.mtu_bytes) == (
        "Ethernet0",
        29,
        (65, 66, 67, 68),
        9100,
    )


# --------------------------------------------------------------------------------------------
# excerpts cut from real config_db files


def test_tables_without_the_outer_braces() -> None:
    whole = load(KIND, REF)
    pg, qos = _table_lines(REF, "BUFFER_PG"), _table_lines(REF, "PORT_QOS_MAP")
    res = parse_text("\n".join(pg + qos) + "\n", KIND)
    (w,) = res.warnings
    assert w.line == 1 and "without its enclosing braces" in w.message
    want = _of(whole, BufferAssignment, PortQos, PfcConfig)
    want = [r for r in want if not isinstance(r, BufferAssignment) or r.kind == "pg"]
    assert _sans_lines(res.records) == _sans_lines(want)
    first_qos = _of(res, PortQos)[0]
    assert (first_qos.port, first_qos.line) == ("Ethernet0", len(pg) + 2)


def test_whole_document_without_its_braces_reads_every_table() -> None:
    name = "utilities-qos-reload-t1-buffers"
    lines = case(KIND, name).text().rstrip("\n").split("\n")
    assert lines[0] == "{" and lines[-1] == "}"
    res = parse_text("\n".join(lines[1:-1]), KIND)
    assert len(res.warnings) == 1 and "excerpt" in res.warnings[0].message
    assert _sans_lines(res.records) == _sans_lines(load(KIND, name).records)


def test_outer_object_with_only_some_tables_is_no_excerpt() -> None:
    qos = _table_lines(REF, "PORT_QOS_MAP")
    qos[-1] = "    }"
    res = parse_text("{\n" + "\n".join(qos) + "\n}\n", KIND)
    assert not res.warnings and len(_of(res, PortQos)) == 66


def test_var_json_port_output() -> None:
    doc = json.loads(case(KIND, REF).text())
    text = "admin@sonic:~$ sonic-cfggen -d --var-json PORT\n" + json.dumps(doc["PORT"], indent=4)
    assert detect_kind(text) == KIND
    res = parse_text(text, KIND)
    (w,) = res.warnings
    assert "read as PORT" in w.message and "--var-json PORT" in w.message
    ports = _of(res, SonicPort)
    assert len(ports) == 66
    assert (ports[0].port, ports[0].line, ports[0].lanes) == ("Ethernet0", 3, (49, 50, 51, 52))


def test_var_json_without_its_command_line_uses_the_fields() -> None:
    doc = json.loads(case(KIND, REF).text())
    res = parse_text(json.dumps(doc["PORT_QOS_MAP"], indent=4), KIND)
    (w,) = res.warnings
    assert "read as PORT_QOS_MAP from their fields" in w.message
    assert len(_of(res, PortQos)) == 66 and _of(res, PfcConfig)[0].priorities == (3, 4)


def test_entries_that_say_nothing_about_their_table_are_skipped_with_a_warning() -> None:
    doc = json.loads(case(KIND, REF).text())
    res = parse_text(json.dumps(doc["BUFFER_PG"], indent=4), KIND)  # PG or QUEUE? cannot tell
    (w,) = res.warnings
    assert "no field that tells the table" in w.message and not res.records


def test_cut_inside_an_entry_keeps_only_whole_entries() -> None:
    text = case(KIND, REF).text().split("\n")
    cut = text.index('            "lanes": "145,146,147,148",')  # inside Ethernet100 of PORT
    res = parse_text("\n".join(text[: cut + 1]), KIND)
    assert "malformed JSON" in res.warnings[0].message
    assert any("table PORT is cut off" in w.message for w in res.warnings)
    assert [p.port for p in _of(res, SonicPort)] == ["Ethernet0"]
    assert len(_of(res, BufferAssignment)) == 330  # the tables before the cut are whole


def test_a_prompt_after_an_excerpt_ends_it() -> None:
    qos = _table_lines(REF, "PORT_QOS_MAP")
    res = parse_text(
        "\n".join(qos) + "\nadmin@sonic:~$ show version\nSONiC Software Version\n", KIND
    )
    assert len(res.warnings) == 1 and len(_of(res, PortQos)) == 66


# --------------------------------------------------------------------------------------------
# redis-cli / sonic-db-cli key/value output


def _numbered(fields: dict[str, str]) -> list[str]:
    items = [x for kv in fields.items() for x in kv]
    width = len(str(len(items)))
    return [f'{i + 1:>{width}}) "{v}"' for i, v in enumerate(items)]


def test_redis_cli_numbered_hgetall() -> None:
    doc = json.loads(case(KIND, FLAT).text())
    qos, port = doc["PORT_QOS_MAP|Ethernet0"], doc["PORT|Ethernet0"]
    lines = [
        'admin@sonic:~$ redis-cli -n 4 hgetall "PORT_QOS_MAP|Ethernet0"',
        *_numbered(qos),
        'admin@sonic:~$ redis-cli -n 4 hgetall "PORT|Ethernet0"',
        *_numbered(port),
        "admin@sonic:~$",
    ]
    text = "\n".join(lines)
    assert detect_kind(text) == KIND
    res = parse_text(text, KIND)
    assert len(res.warnings) == 1
    (pq,) = _of(res, PortQos)
    assert (pq.port, pq.pfc_enable, pq.line) == ("Ethernet0", (3, 4), 1)
    (p,) = _of(res, SonicPort)
    assert (p.port, p.lanes, p.mtu_bytes, p.speed_gbps, p.line) == (
        "Ethernet0",
        (33, 34, 35, 36),
        9100,
        40.0,
        4,
    )
    assert len(_numbered(port)) == 18 and _numbered(port)[0] == ' 1) "admin_status"'


def test_redis_cli_interactive_select_and_paste() -> None:
    doc = json.loads(case(KIND, FLAT).text())
    port = doc["PORT|Ethernet0"]
    lines = [
        "127.0.0.1:6379> select 4",
        "OK",
        '127.0.0.1:6379[4]> HGETALL "PORT|Ethernet0"',
        *_numbered(port),
        "127.0.0.1:6379[4]> select 6",
        "OK",
        '127.0.0.1:6379[6]> HGETALL "PORT_QOS_MAP|Ethernet0"',  # STATE_DB: not config
        '1) "pfc_enable"',
        '2) "0,1,2"',
        '$ redis-cli -n 4 hgetall "PORT_QOS_MAP|Ethernet0" | paste - -',
        "pfc_enable\t3,4",
    ]
    res = parse_text("\n".join(lines), KIND)
    (p,) = _of(res, SonicPort)
    assert (p.port, p.line, p.speed_gbps) == ("Ethernet0", 3, 40.0)
    (pq,) = _of(res, PortQos)
    assert pq.pfc_enable == (3, 4) and pq.line == 27


def test_other_databases_and_tables_are_not_read() -> None:
    # verbatim from https://github.com/sonic-net/sonic-utilities/issues/481: PORTCHANNEL
    text = (
        'admin@str-s6000-acs-11:~$ redis-cli -n 4 hgetall "PORTCHANNEL|PortChannel0001"\n'
        '1) "admin_status"\n2) "up"\n3) "mtu"\n4) "9100"\n'
    )
    res = parse_sonic_config_db(text)
    assert not res.records and len(res.warnings) == 1
    appl = 'redis-cli -n 0 hgetall "PORT_QOS_MAP|Ethernet0"\n1) "pfc_enable"\n2) "3,4"\n'
    assert not parse_sonic_config_db(appl).records
    state = "sonic-db-cli STATE_DB HGETALL \"PORT_QOS_MAP|Ethernet0\"\n{'pfc_enable': '3,4'}\n"
    assert not parse_sonic_config_db(state).records


# --------------------------------------------------------------------------------------------
# linear time and robustness

_N = 100_000
LONG = {
    "open-object": '{"PORT": {' + '"a":' * (_N // 4),
    "open-string": '"' + "a" * _N,
    "escaped-quotes": '  "' + '\\"' * (_N // 2),
    "numbered": ' 1) "' + "a" * _N,
    "hget-key": 'redis-cli -n 4 hgetall "PORT|' + "a" * _N,
    "python-dict": "{'" + "a': 'b', '" * (_N // 10),
    "cable-spaces": '{"CABLE_LENGTH": {"AZURE": {"Ethernet0": "1' + " " * _N + 'x"}}}',
    "nested-objects": "{" * _N,
    "nested-arrays": "[" * _N + "1",
    "members-deep": '"a": ' + "{" * _N,
    "closers": '"a": 1' + "}," * (_N // 2),
    "commas": '{"PORT": {' + '"a": 1, ' * (_N // 8),
    "key-spaces": '"PORT"' + " " * _N + ":",
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_a_100k_character_line_parses_quickly_and_never_raises(name: str) -> None:
    line = LONG[name]
    for text in (line, f"{line}\n{line}"):
        t0 = time.perf_counter()
        res = parse_sonic_config_db(text)
        detect_kind_ok = True
        try:
            detect_kind(text)
        except Exception:  # unknown kind is an InputError: fine here
            detect_kind_ok = False
        # a budget against quadratic blow-up (a 100k-character line would take minutes), not a
        # speed target: generous so a busy CI machine does not flake (0.3 s here when idle)
        assert time.perf_counter() - t0 < 3.0, (name, detect_kind_ok)
        json.dumps(res.to_json(), allow_nan=False)


@pytest.mark.parametrize(
    "text",
    ['"x"\n' * 20_000, '"a": {\n}\n' * 20_000, "{x\n" * 20_000, '"PORT": {\n' * 20_000],
    ids=["quoted-lines", "members-without-commas", "broken-objects", "open-tables"],
)
def test_many_lines_that_each_look_like_a_start_parse_quickly(text: str) -> None:
    t0 = time.perf_counter()
    res = parse_sonic_config_db(text)
    # a budget against quadratic blow-up (seconds per line would be hours), not a speed target:
    # generous so a busy CI machine does not flake; speed itself is in benchmarks/
    assert time.perf_counter() - t0 < 5.0
    assert not res.records


_PIECES = st.sampled_from(
    [
        '"PORT": {', '"BUFFER_PG": {', '"Ethernet0": {', '"lanes": "0,1",', '"pfc_enable": "3,4"',
        "},", "}", "{", "[", "]", '"', ",", "admin@sonic:~$", 'redis-cli -n 4 hgetall "PORT|E"',
        ' 1) "mtu"', ' 2) "9100"', "{'mtu': '9100'}", "sonic-cfggen -d --var-json PORT", "",
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=20)), max_size=40))
def test_excerpt_soup_never_raises(lines: list[str]) -> None:
    res = parse_sonic_config_db("\n".join(lines))
    json.dumps(res.to_json(), allow_nan=False)
    for r in _of(res, SonicPort, PortQos):
        assert not r.port.startswith("\x00")  # placeholder keys never become ports


def test_config_db_excerpt_with_typographic_quotes() -> None:
    """A documentation page's config_db.json excerpt whose quotes a web page made curly: the
    capture is decoded with straight quotes (one character for one) and parsed as JSON."""
    from aifabric.evidence.qos import BufferProfile  # noqa: PLC0415
    from aifabric.evidence.sonic_config import BufferPool  # noqa: PLC0415
    from tests.unit.evidence.fixtures import load  # noqa: PLC0415

    result = load("sonic-config-db", "nvidia-doc-curly-quotes")
    [pool] = result.of_type(BufferPool)
    [profile] = result.of_type(BufferProfile)
    assert (pool.name, pool.size_bytes, pool.xoff_bytes, pool.mode) == (
        "ingress_lossless_pool", 7719936, 1032192, "dynamic",
    )  # fmt: skip
    assert (profile.name, profile.xon_bytes, profile.xoff_bytes) == (
        "pg_lossless_50000_40m_profile", 19456, 25600,
    )  # fmt: skip
