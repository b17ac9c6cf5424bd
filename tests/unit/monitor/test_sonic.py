"""SONiC counters → catalogue metrics: the sonic-utilities mock COUNTERS_DB (json, sonic-db-dump
shape, and db mode through a runner that plays the Lua script on it), captured ``show`` outputs
(cli-dir and cli), unicast-only queues, series counts worked out by hand, garbage input."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.errors import EnvironmentProblem, InputError
from aifabric.monitor.catalogue import Selection, load_catalogue
from aifabric.monitor.exposition import Scrape
from aifabric.monitor.sonic import (
    CLI_COMMANDS,
    LUA_SCRIPT,
    SonicCollector,
    counters_from_tables,
    normalise_dump,
    run_command,
)
from tests.conftest import stop_process

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DUMP = FIXTURES / "monitor" / "sonic" / "utilities-mock-counters-db" / "counters_db.json"
EVIDENCE = FIXTURES / "evidence" / "pfc-counters"
CAT = load_catalogue().selected(Selection())
CAT_ALL = load_catalogue().selected(Selection(allow=(".*",)))


def _scrape(collector: SonicCollector, catalogue: object = CAT) -> dict[str, float]:
    """``{'name{labels}': value}`` of one scrape's exposition."""
    scrape = Scrape(catalogue)  # type: ignore[arg-type]
    collector.collect(scrape)
    out: dict[str, float] = {}
    for line in scrape.render().decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def _family(series: dict[str, float], name: str) -> dict[str, float]:
    return {k: v for k, v in series.items() if k.startswith(name + "{")}


# ---------------------------------------------------------------------------------------------
# json: the sonic-utilities mock COUNTERS_DB


def test_json_pfc3_rx_of_ethernet0_is_the_exact_line() -> None:
    scrape = Scrape(CAT)
    SonicCollector("sw1", "json", path=DUMP).collect(scrape)
    text = scrape.render().decode()
    # COUNTERS:oid:0x1000000000012 (Ethernet0) SAI_PORT_STAT_PFC_3_RX_PKTS = "203"
    line = (
        'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet0",'
        'direction="rx",priority="3"} 203'
    )
    assert line in text.splitlines()


def test_json_port_values_known_from_the_dump() -> None:
    s = _scrape(SonicCollector("sw1", "json", path=DUMP))
    e0 = 'node="sw1",interface="Ethernet0"'
    assert s[f'aifabric_port_pfc_frames_total{{{e0},direction="tx",priority="3"}}'] == 213
    assert s[f'aifabric_port_pfc_frames_total{{{e0},direction="rx",priority="0"}}'] == 1200
    assert s[f'aifabric_port_discards_total{{{e0},direction="rx"}}'] == 100
    assert s[f'aifabric_link_bytes_total{{{e0},direction="tx"}}'] == 1000
    assert s[f'aifabric_port_phy_errors_total{{{e0},kind="receive"}}'] == 10
    assert s[f'aifabric_port_phy_errors_total{{{e0},kind="symbol"}}'] == 4
    assert s[f"aifabric_port_fec_uncorrectable_frames_total{{{e0}}}"] == 3
    # no SAI_ history on this mock: pfcstat falls back to the EST_ estimate, and so do we
    # EST_PORT_STAT_PFC_3_ON2OFF_RX_PKTS = 23; _RX_PAUSE_DURATION_US = 20000003 µs = 20.000003 s
    assert s[f'aifabric_port_pfc_pause_transitions_total{{{e0},priority="3"}}'] == 23
    key = f'aifabric_port_pfc_pause_duration_seconds_total{{{e0},direction="rx",priority="3"}}'
    assert s[key] == pytest.approx(20.000003)
    # Ethernet4 PFC3 rx "403", Ethernet8 "803"
    assert (
        s[
            'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet4",'
            'direction="rx",priority="3"}'
        ]
        == 403
    )
    assert (
        s[
            'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet8",'
            'direction="rx",priority="3"}'
        ]
        == 803
    )


def test_json_queue_and_pg_labels() -> None:
    s = _scrape(SonicCollector("sw1", "json", path=DUMP))
    q3 = 'node="sw1",interface="Ethernet0",queue="3"'
    # COUNTERS_QUEUE_NAME_MAP Ethernet0:3 -> oid:0x1500000000035a
    assert s[f"aifabric_queue_dropped_packets_total{{{q3}}}"] == 19
    assert s[f"aifabric_queue_ecn_marked_packets_total{{{q3}}}"] == 19
    assert s[f"aifabric_queue_bytes_total{{{q3}}}"] == 70
    assert s[f"aifabric_pfcwd_storms_detected_total{{{q3}}}"] == 1
    assert s[f"aifabric_pfcwd_storms_restored_total{{{q3}}}"] == 0
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q3},direction="tx"}}'] == 300
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q3},direction="rx"}}'] == 300
    # Ethernet4:3 stormed twice and restored twice
    assert (
        s['aifabric_pfcwd_storms_restored_total{node="sw1",interface="Ethernet4",queue="3"}'] == 2
    )
    # COUNTERS_PG_NAME_MAP Ethernet0:3 -> oid:0x1a000000000352, DROPPED_PACKETS "803"
    assert s['aifabric_pg_dropped_packets_total{node="sw1",interface="Ethernet0",pg="3"}'] == 803
    assert s['aifabric_pg_dropped_packets_total{node="sw1",interface="Ethernet8",pg="7"}'] == 107


def test_json_unicast_only_by_default() -> None:
    s = _scrape(SonicCollector("sw1", "json", path=DUMP))
    dropped = _family(s, "aifabric_queue_dropped_packets_total")
    # 3 ports x unicast queues 0-9; multicast 10-19 left out, type ALL 20-29 kept but counterless
    assert len(dropped) == 30
    assert not any(f'queue="{q}"' in k for k in dropped for q in range(10, 30))
    everything = _scrape(SonicCollector("sw1", "json", path=DUMP, queue_types=None))
    all_dropped = _family(everything, "aifabric_queue_dropped_packets_total")
    assert len(all_dropped) == 60
    # Ethernet0:10 (multicast) -> oid:0x15000000000363, DROPPED_PACKETS "74"
    assert (
        all_dropped[
            'aifabric_queue_dropped_packets_total{node="sw1",interface="Ethernet0",queue="10"}'
        ]
        == 74
    )


def test_json_watermarks_only_when_allowed() -> None:
    s = _scrape(SonicCollector("sw1", "json", path=DUMP))
    assert not _family(s, "aifabric_queue_watermark_bytes")
    s = _scrape(SonicCollector("sw1", "json", path=DUMP), CAT_ALL)
    wm = _family(s, "aifabric_queue_watermark_bytes")
    assert len(wm) == 30
    assert wm['aifabric_queue_watermark_bytes{node="sw1",interface="Ethernet0",queue="3"}'] == 60


def test_sonic_db_dump_shape_gives_the_same_series(tmp_path: Path) -> None:
    flat = json.loads(DUMP.read_text())
    wrapped = {
        k: {"expireat": 1700000000.1, "ttl": -0.001, "type": "hash", "value": v}
        for k, v in flat.items()
    }
    f = tmp_path / "COUNTERS_DB.json"
    f.write_text(json.dumps(wrapped))
    assert _scrape(SonicCollector("sw1", "json", path=f)) == _scrape(
        SonicCollector("sw1", "json", path=DUMP)
    )


# ---------------------------------------------------------------------------------------------
# db: a runner that plays LUA_SCRIPT on the dump (what Redis would return)


def _play_lua(tables: dict[str, dict[str, str]], argv: Sequence[str]) -> str:
    """The script's semantics on a flat dump: name maps and type map, then COUNTERS:<oid> of
    every port and PG and of every queue whose type is in ARGV (or untyped), cjson-encoded."""
    i = list(argv).index("EVAL")
    assert argv[i + 1] == LUA_SCRIPT and argv[i + 2] == "0"
    keep = set(argv[i + 3 :])
    maps = [
        "COUNTERS_PORT_NAME_MAP",
        "COUNTERS_QUEUE_NAME_MAP",
        "COUNTERS_PG_NAME_MAP",
        "COUNTERS_QUEUE_TYPE_MAP",
    ]
    out: dict[str, object] = {}
    for m in maps:
        out[m] = [x for kv in tables.get(m, {}).items() for x in kv] or {}
    types = tables.get("COUNTERS_QUEUE_TYPE_MAP", {})
    for n, m in enumerate(maps[:3]):
        for oid in tables.get(m, {}).values():
            t = types.get(oid)
            if n != 1 or not keep or t is None or t in keep:
                h = tables.get("COUNTERS:" + oid, {})
                out["COUNTERS:" + oid] = [x for kv in h.items() for x in kv] or {}
    return json.dumps(out).replace("/", "\\/") + "\n"


def test_db_mode_one_command_per_scrape_and_same_series() -> None:
    tables = json.loads(DUMP.read_text())
    calls: list[list[str]] = []

    def runner(argv: Sequence[str]) -> str:
        calls.append(list(argv))
        return _play_lua(tables, argv)

    got = _scrape(SonicCollector("sw1", "db", runner=runner))
    assert got == _scrape(SonicCollector("sw1", "json", path=DUMP))
    assert len(calls) == 1
    assert calls[0][:2] == ["sonic-db-cli", "COUNTERS_DB"]
    assert calls[0][-2:] == ["SAI_QUEUE_TYPE_ALL", "SAI_QUEUE_TYPE_UNICAST"]


def test_db_mode_falls_back_to_redis_cli_and_remembers() -> None:
    tables = json.loads(DUMP.read_text())
    calls: list[str] = []

    def runner(argv: Sequence[str]) -> str:
        calls.append(argv[0])
        if argv[0] == "sonic-db-cli":
            raise EnvironmentProblem("sonic-db-cli: command not found")
        assert list(argv[:4]) == ["redis-cli", "-n", "2", "--raw"]
        return _play_lua(tables, argv)

    c = SonicCollector("sw1", "db", runner=runner)
    s = _scrape(c)
    assert s['aifabric_pg_dropped_packets_total{node="sw1",interface="Ethernet4",pg="3"}'] == 403
    _scrape(c)
    assert calls == ["sonic-db-cli", "redis-cli", "redis-cli"]


def test_db_mode_quoted_reply_of_an_interactive_redis_cli() -> None:
    tables = json.loads(DUMP.read_text())

    def runner(argv: Sequence[str]) -> str:
        return json.dumps(_play_lua(tables, argv).strip())

    s = _scrape(SonicCollector("sw1", "db", runner=runner))
    assert (
        s[
            'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet0",'
            'direction="rx",priority="3"}'
        ]
        == 203
    )


def test_db_mode_namespace_uses_sonic_db_cli_only() -> None:
    seen: list[list[str]] = []

    def runner(argv: Sequence[str]) -> str:
        seen.append(list(argv))
        raise EnvironmentProblem("sonic-db-cli: exit 1: Namespace asic9 is not valid")

    c = SonicCollector.from_spec("sw1", "db:asic9", runner=runner)
    with pytest.raises(EnvironmentProblem, match=r"COUNTERS_DB unreachable: .*asic9"):
        c.collect(Scrape(CAT))
    assert [a[:4] for a in seen] == [["sonic-db-cli", "-n", "asic9", "COUNTERS_DB"]]


@pytest.mark.parametrize("reply", ["", "(error) ERR unknown command", "[1, 2]", '{"COUNTERS'])
def test_db_mode_garbage_reply_is_one_environment_line(reply: str) -> None:
    c = SonicCollector("sw1", "db", runner=lambda argv: reply)
    with pytest.raises(EnvironmentProblem) as info:
        c.collect(Scrape(CAT))
    assert "\n" not in str(info.value)


def test_db_mode_both_tools_missing() -> None:
    def runner(argv: Sequence[str]) -> str:
        raise EnvironmentProblem(f"{argv[0]}: command not found")

    with pytest.raises(EnvironmentProblem, match=r"sonic-db-cli: .*; redis-cli: "):
        SonicCollector("sw1", "db", runner=runner).collect(Scrape(CAT))


def test_db_mode_empty_counters_db_gives_no_series() -> None:
    reply = json.dumps(
        {
            "COUNTERS_PORT_NAME_MAP": {},
            "COUNTERS_QUEUE_NAME_MAP": {},
            "COUNTERS_PG_NAME_MAP": {},
            "COUNTERS_QUEUE_TYPE_MAP": {},
        }
    )
    assert _scrape(SonicCollector("sw1", "db", runner=lambda argv: reply)) == {}


def _redis_server(tmp_path: Path) -> str | None:
    """A redis-server binary: on PATH, or Debian's redis-tools ``redis-check-rdb`` (the same
    executable; Redis picks its role from the name it is started under) linked as one."""
    found = shutil.which("redis-server")
    if found:
        return found
    rdb = shutil.which("redis-check-rdb")
    if rdb is None:
        return None
    link = tmp_path / "redis-server"
    link.symlink_to(rdb)
    return str(link)


@pytest.fixture
def redis_socket(tmp_path: Path) -> Iterator[str]:
    """A Redis on a Unix socket in tmp_path (no TCP port), stopped by PID at teardown."""
    server = _redis_server(tmp_path)
    if server is None or shutil.which("redis-cli") is None:
        pytest.skip("needs redis-server (or redis-check-rdb) and redis-cli (Debian redis-tools)")
    sock = str(tmp_path / "r.sock")
    log = (tmp_path / "redis.log").open("w")
    proc = subprocess.Popen(
        [
            server,
            "--port",
            "0",
            "--unixsocket",
            sock,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(100):
            done = subprocess.run(
                ["redis-cli", "-s", sock, "ping"], capture_output=True, text=True, check=False
            )
            if done.stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        else:
            pytest.skip(
                "redis-server did not start: " + (tmp_path / "redis.log").read_text()[-200:]
            )
        yield sock
    finally:
        stop_process(proc)
        log.close()


def test_db_mode_lua_script_on_a_real_redis(redis_socket: str) -> None:
    """The EVAL script really runs (Redis 7 Lua + cjson) and gives what the dump gives."""
    tables = json.loads(DUMP.read_text())
    lines = [" ".join(["HSET", k, *(x for kv in h.items() for x in kv)]) for k, h in tables.items()]
    subprocess.run(
        ["redis-cli", "-s", redis_socket, "-n", "2"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    used: list[str] = []

    def runner(argv: Sequence[str]) -> str:
        used.append(argv[0])
        if argv[0] != "redis-cli":
            raise EnvironmentProblem(f"{argv[0]}: command not found")
        return run_command(["redis-cli", "-s", redis_socket, *argv[1:]])

    got = _scrape(SonicCollector("sw1", "db", runner=runner))
    assert got == _scrape(SonicCollector("sw1", "json", path=DUMP))
    assert used == ["sonic-db-cli", "redis-cli"]
    e0 = 'node="sw1",interface="Ethernet0"'
    assert got[f'aifabric_port_pfc_frames_total{{{e0},direction="rx",priority="3"}}'] == 203
    # the script itself leaves multicast queues in Redis: only 10 queue hashes per port came back
    reply = json.loads(
        runner(["redis-cli", "-n", "2", "--raw", "EVAL", LUA_SCRIPT, "0", "SAI_QUEUE_TYPE_UNICAST"])
    )
    queues = [k for k in reply if k.startswith("COUNTERS:oid:0x15")]
    assert len(queues) == 3 * 10


# ---------------------------------------------------------------------------------------------
# cardinality, worked out by hand


def _synthetic(ports: int) -> dict[str, dict[str, str]]:
    """``ports`` ports, each: PFC rx/tx for 8 priorities + in/out discards (18 port series),
    10 unicast queues with bytes, drops, ECN marks (30), 10 multicast queues alike, 8 PGs with
    drops (8)."""
    t: dict[str, dict[str, str]] = {
        "COUNTERS_PORT_NAME_MAP": {},
        "COUNTERS_QUEUE_NAME_MAP": {},
        "COUNTERS_PG_NAME_MAP": {},
        "COUNTERS_QUEUE_TYPE_MAP": {},
    }
    for p in range(ports):
        port, oid = f"Ethernet{4 * p}", f"oid:0x10{p:04x}"
        t["COUNTERS_PORT_NAME_MAP"][port] = oid
        h = {f"SAI_PORT_STAT_PFC_{i}_{d}_PKTS": str(i) for i in range(8) for d in ("RX", "TX")}
        h |= {"SAI_PORT_STAT_IF_IN_DISCARDS": "1", "SAI_PORT_STAT_IF_OUT_DISCARDS": "2"}
        t["COUNTERS:" + oid] = h
        for q in range(20):
            qoid = f"oid:0x15{p:04x}{q:02x}"
            t["COUNTERS_QUEUE_NAME_MAP"][f"{port}:{q}"] = qoid
            t["COUNTERS_QUEUE_TYPE_MAP"][qoid] = (
                "SAI_QUEUE_TYPE_UNICAST" if q < 10 else "SAI_QUEUE_TYPE_MULTICAST"
            )
            t["COUNTERS:" + qoid] = {
                "SAI_QUEUE_STAT_BYTES": "5",
                "SAI_QUEUE_STAT_DROPPED_PACKETS": "6",
                "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "7",
            }
        for g in range(8):
            goid = f"oid:0x1a{p:04x}{g:02x}"
            t["COUNTERS_PG_NAME_MAP"][f"{port}:{g}"] = goid
            t["COUNTERS:" + goid] = {"SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS": "8"}
    return t


@pytest.mark.parametrize("ports", [1, 32])
def test_series_count_for_n_ports(ports: int, tmp_path: Path) -> None:
    f = tmp_path / "db.json"
    f.write_text(json.dumps(_synthetic(ports)))
    # 18 port series + 10 unicast queues x 3 + 8 PGs = 56 per port
    assert len(_scrape(SonicCollector("sw1", "json", path=f))) == 56 * ports
    # multicast queues add 10 x 3 per port
    everything = SonicCollector("sw1", "json", path=f, queue_types=None)
    assert len(_scrape(everything)) == 86 * ports


# ---------------------------------------------------------------------------------------------
# cli and cli-dir: real captured show outputs through the evidence parser


def _cli_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, case in files.items():
        shutil.copy(EVIDENCE / case / "input.txt", tmp_path / name)
    return tmp_path


def test_cli_dir_pfcwd_and_pfc_tx_of_the_z9332_capture(tmp_path: Path) -> None:
    # sonic-buildimage#9430: one paste holds 'show pfcwd stats' and the Tx PFC table
    d = _cli_dir(tmp_path, {"pfcwd-stats.txt": "z9332-pfcwd-stats-and-pfc-tx"})
    s = _scrape(SonicCollector.from_spec("sw1", f"cli-dir:{d}"))
    q = 'node="sw1",interface="Ethernet4",queue="3"'
    assert s[f"aifabric_pfcwd_storms_detected_total{{{q}}}"] == 2
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q},direction="tx"}}'] == 56035
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q},direction="rx"}}'] == 371184
    # "15,437" PFC3 frames sent by Ethernet6
    assert (
        s[
            'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet6",'
            'direction="tx",priority="3"}'
        ]
        == 15437
    )


def test_cli_dir_queue_pg_and_watermarks(tmp_path: Path) -> None:
    d = _cli_dir(
        tmp_path,
        {
            "queue-counters.txt": "queue-counters-multi-asic-namespaces",
            "pg-drop-counters.txt": "pgdropstat-nonzero-utilities-test",
            "pg-watermark-shared.txt": "sonic-pg-watermark-and-drop-cmdref",
        },
    )
    s = _scrape(SonicCollector("sw1", "cli-dir", path=d), CAT_ALL)
    # 'Ethernet0  UC3  71  33  53  71' (asic0)
    q3 = 'node="sw1",interface="Ethernet0",queue="3"'
    assert s[f"aifabric_queue_bytes_total{{{q3}}}"] == 33
    assert s[f"aifabric_queue_dropped_packets_total{{{q3}}}"] == 53
    assert not any('interface="Ethernet0",queue="8"' in k for k in s)  # MC8 left out
    # 'Ethernet-BP4  ALL8  124  86  0  18': queues of type ALL are kept
    assert s['aifabric_queue_bytes_total{node="sw1",interface="Ethernet-BP4",queue="8"}'] == 86
    assert s['aifabric_pg_dropped_packets_total{node="sw1",interface="Ethernet4",pg="3"}'] == 403
    shared = _family(s, "aifabric_pg_shared_watermark_bytes")
    assert len(shared) == 4 * 8 and set(shared.values()) == {0}


def test_cli_dir_voq_kept_only_on_request(tmp_path: Path) -> None:
    d = _cli_dir(tmp_path, {"queue-wredcounters.txt": "queue-voq-wred-ecn-utilities-test"})
    assert _scrape(SonicCollector("sw1", "cli-dir", path=d)) == {}
    s = _scrape(SonicCollector("sw1", "cli-dir", path=d, queue_types=None))
    # 'testsw|Ethernet0  VOQ1  60  43  39  1': EcnMarked/pkts 39
    key = (
        'aifabric_queue_ecn_marked_packets_total{node="sw1",interface="testsw|Ethernet0",queue="1"}'
    )
    assert s[key] == 39


def test_cli_dir_unknown_and_missing_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Port Rx PFC0\nnothing")
    (tmp_path / "pfc-counters.txt").write_text("garbage\n\x00\x01 not a table\n")
    assert _scrape(SonicCollector("sw1", "cli-dir", path=tmp_path)) == {}


def test_cli_live_runs_each_command_and_tolerates_some_failures() -> None:
    texts = {
        CLI_COMMANDS["pfc-counters.txt"]: (EVIDENCE / "pfcstat-rx-issue5540" / "input.txt"),
        CLI_COMMANDS["pfcwd-stats.txt"]: (EVIDENCE / "pfcwd-show-stats-status-na" / "input.txt"),
    }

    def runner(argv: Sequence[str]) -> str:
        path = texts.get(tuple(argv))
        if path is None:
            raise EnvironmentProblem(f"{' '.join(argv)}: exit 2: Error: No such command")
        return path.read_text()

    c = SonicCollector("sw1", "cli", runner=runner)
    s = _scrape(c)
    assert len(c.problems) == len(CLI_COMMANDS) - 2
    # pull request 682: Ethernet96:4 '5/5  200/400  100/300' (both runs agree; first wins)
    q = 'node="sw1",interface="Ethernet96",queue="4"'
    assert s[f"aifabric_pfcwd_storms_detected_total{{{q}}}"] == 5
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q},direction="tx"}}'] == 400
    assert s[f'aifabric_pfcwd_dropped_packets_total{{{q},direction="rx"}}'] == 300
    assert (
        s[
            'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet4",'
            'direction="rx",priority="7"}'
        ]
        == 0
    )


def test_cli_live_every_command_failing_is_one_environment_line() -> None:
    def runner(argv: Sequence[str]) -> str:
        raise EnvironmentProblem("show: command not found")

    with pytest.raises(EnvironmentProblem, match=r"no SONiC show command worked \(9 tried\)"):
        SonicCollector("sw1", "cli", runner=runner).collect(Scrape(CAT))


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"COUNTERS_PORT_NAME_MAP": {"Ethernet0": "oid:0x1', "not a COUNTERS_DB JSON dump"),
        ("[1, 2, 3]", "not a list"),
        ("", "not a COUNTERS_DB JSON dump"),
        ("[" * 100_000, "nested too deeply|not a COUNTERS_DB JSON dump"),
    ],
)
def test_json_garbage_is_one_input_line(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        SonicCollector("sw1", "json", path=f).collect(Scrape(CAT))
    assert "\n" not in str(info.value)


def test_json_wrong_shapes_are_skipped(tmp_path: Path) -> None:
    f = tmp_path / "odd.json"
    f.write_text(
        json.dumps(
            {
                "COUNTERS_PORT_NAME_MAP": {
                    "Ethernet0": "oid:0x1",
                    "Ethernet4": 7,
                    "Ethernet8": "oid:0x3",
                },
                "COUNTERS_QUEUE_NAME_MAP": ["Ethernet0:3", "oid:0x2", "broken"],
                "COUNTERS_PG_NAME_MAP": {"Ethernet0:x": "oid:0x4", "Ethernet0": "oid:0x4"},
                "COUNTERS_QUEUE_TYPE_MAP": "SAI_QUEUE_TYPE_UNICAST",
                "COUNTERS:oid:0x1": {
                    "SAI_PORT_STAT_PFC_3_RX_PKTS": "12",
                    "SAI_PORT_STAT_PFC_3_TX_PKTS": "N/A",
                    "SAI_PORT_STAT_IF_IN_DISCARDS": ["1"],
                },
                "COUNTERS:oid:0x2": {"SAI_QUEUE_STAT_DROPPED_PACKETS": "4"},
                "COUNTERS:oid:0x3": "not a hash",
                "COUNTERS:oid:0x4": {"SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS": "9"},
            }
        )
    )
    s = _scrape(SonicCollector("sw1", "json", path=f))
    assert s == {
        'aifabric_port_pfc_frames_total{node="sw1",interface="Ethernet0",direction="rx",'
        'priority="3"}': 12,
        # a queue map given as HGETALL's flat list still pairs up
        'aifabric_queue_dropped_packets_total{node="sw1",interface="Ethernet0",queue="3"}': 4,
    }


def test_missing_path_and_bad_specs() -> None:
    with pytest.raises(InputError, match="cannot read"):
        SonicCollector("sw1", "json", path="/nonexistent/counters.json").collect(Scrape(CAT))
    with pytest.raises(InputError, match="not a directory"):
        SonicCollector("sw1", "cli-dir", path="/nonexistent").collect(Scrape(CAT))
    for spec in ("", "json", "json:", "cli:x", "snmp", "cli-dir"):
        with pytest.raises(InputError, match="--sonic"):
            SonicCollector.from_spec("sw1", spec)
    with pytest.raises(InputError, match="needs a path"):
        SonicCollector("sw1", "json")
    with pytest.raises(InputError, match="expected db, json"):
        SonicCollector("sw1", "snmp")  # type: ignore[arg-type]


def test_run_command_failures_are_one_line() -> None:
    with pytest.raises(EnvironmentProblem, match="command not found"):
        run_command(["aifabric-no-such-tool-xyz"])
    if shutil.which("sh"):
        with pytest.raises(EnvironmentProblem, match="exit 3: first"):
            run_command(["sh", "-c", "echo first >&2; echo second >&2; exit 3"])
        assert run_command(["sh", "-c", "echo ok"]) == "ok\n"


_NAMES = st.one_of(
    st.sampled_from(
        [
            "SAI_PORT_STAT_PFC_3_RX_PKTS",
            "SAI_QUEUE_STAT_DROPPED_PACKETS",
            "EST_PORT_STAT_PFC_9_ON2OFF_RX_PKTS",
            "EST_PORT_STAT_PFC_2_RX_PAUSE_DURATION_US",
            "PFC_WD_STATUS",
            "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US",
            "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS",
        ]
    ),
    st.from_regex(r"(SAI|EST|PFC)_[A-Z0-9_]{0,30}", fullmatch=True),
    st.text(max_size=12),
)
_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.integers(min_value=0, max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    port=st.dictionaries(_NAMES, _VALUES, max_size=12),
    names=st.dictionaries(
        st.text(max_size=12),
        st.one_of(st.just("oid:0x1"), st.text(max_size=6), st.integers()),
        max_size=4,
    ),
)
def test_any_sai_ish_dict_never_raises(port: dict[str, object], names: dict[str, object]) -> None:
    tables = normalise_dump(
        {
            "COUNTERS_PORT_NAME_MAP": names,
            "COUNTERS_QUEUE_NAME_MAP": names,
            "COUNTERS_PG_NAME_MAP": names,
            "COUNTERS:oid:0x1": port,
        }
    )
    scrape = Scrape(CAT_ALL)
    for ident, counters in counters_from_tables(tables):
        scrape.add_raw("sonic", (("node", "sw1"), *ident), counters)
    for line in scrape.render().decode().split("\n"):
        if line and not line.startswith("#"):
            assert re.fullmatch(
                r'[a-z_]+\{node="sw1",interface="[!-~]+"(,[a-z]+="[^"]*")*\} \S+', line
            )
            assert math.isfinite(float(line.rpartition(" ")[2])), line
