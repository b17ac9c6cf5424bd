"""SONiC render: config_db values against the intent, the JSON schema, port names, the change
plan against the real leaf01.json, goldens (regenerate with AIFABRIC_REGEN_GOLDEN=1)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.dialects.intent import DeviceIntent, build_intents
from aifabric.dialects.ports import sonic_neutral_names
from aifabric.dialects.render import RenderedFile, render_fabric
from aifabric.dialects.sonic import _neutral_by_index, interpret
from aifabric.dialects.sonic.render import (
    DIALECT,
    build_config_db,
    lanes_for_speed,
    plan_config_db,
    sonic_port,
)
from aifabric.evidence.sonic_config import SonicPort, parse_sonic_config_db
from aifabric.model.qos import PfcWatchdog
from aifabric.perf.hardware import pfc_headroom

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18-switch-concept": ROOT / "examples" / "s18-switch-concept.yaml",
}
GOLDEN = ROOT / "tests" / "fixtures" / "render" / "sonic"
SCHEMA = ROOT / "src" / "aifabric" / "dialects" / "sonic" / "schemas" / "config_db.schema.json"
LEAF01 = ROOT / "examples" / "lossless-lab" / "configs" / "leaf01.json"


@cache
def _intents(fabric: str) -> dict[str, DeviceIntent]:
    return build_intents(load_fabric(EXAMPLES[fabric], load_catalog([])))


def _db(intent: DeviceIntent) -> dict[str, Any]:
    text = DIALECT.render(intent)[0].text
    db: dict[str, Any] = json.loads(text)
    return db


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# ---- values --------------------------------------------------------------------------------


def test_ports_are_named_after_their_first_lane() -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    # 400G front-panel ports have 8 lanes: port n is Ethernet{(n-1)*8}, in lane order
    assert list(db["PORT"]) == ["Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"]
    assert db["PORT"]["Ethernet8"] == {
        "admin_status": "up",
        "alias": "etp2",
        "index": "2",
        "lanes": "8,9,10,11,12,13,14,15",
        "mtu": "9000",
        "speed": "400000",
    }
    assert db["PORT"]["Ethernet16"]["mtu"] == "9216"


def test_dscp_map_lists_all_64_values_rest_to_tc0() -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    m = db["DSCP_TO_TC_MAP"]["AZURE"]
    assert len(m) == 64 and set(m) == {str(d) for d in range(64)}
    assert m["26"] == "3" and m["48"] == "6"
    assert {k for k, v in m.items() if v != "0"} == {"26", "48"}
    assert db["TC_TO_QUEUE_MAP"]["AZURE"] == {str(i): str(i) for i in range(8)}
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"] == {str(i): str(i) for i in range(8)}
    pg = db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"]
    assert pg["3"] == "3" and all(pg[str(i)] == "0" for i in range(8) if i != 3)


def test_pfc_only_on_the_roce_priority_of_lossless_ports() -> None:
    db = _db(_intents("s18-switch-concept")["leaf01"])
    for port, entry in db["PORT_QOS_MAP"].items():
        assert entry["pfc_enable"] == "3", port
        assert entry["dscp_to_tc_map"] == "AZURE"
    # S18 leaves the watchdog at its default (on): pfcwd_sw_enable on the same priority
    assert {e["pfcwd_sw_enable"] for e in db["PORT_QOS_MAP"].values()} == {"3"}


def test_lossy_port_gets_no_pfc_no_ecn_no_lossless_buffers() -> None:
    leaf = _intents("lossless-lab")["leaf01"]
    ports = tuple(replace(p, lossless=False, headroom_bytes=None) if p.name == "Ethernet4"
                  else p for p in leaf.ports)
    db = _db(replace(leaf, ports=ports))
    assert "pfc_enable" not in db["PORT_QOS_MAP"]["Ethernet24"]
    assert "pfcwd_sw_enable" not in db["PORT_QOS_MAP"]["Ethernet24"]
    assert db["PORT_QOS_MAP"]["Ethernet16"]["pfc_enable"] == "3"
    assert "wred_profile" not in db["QUEUE"]["Ethernet24|3"]
    assert "Ethernet24|3" not in db["BUFFER_PG"] and "Ethernet24" not in db["PFC_WD"]
    assert db["BUFFER_QUEUE"]["Ethernet24|0-7"] == {"profile": "egress_lossy_profile"}


def test_headroom_is_the_ieee_bound_of_each_port() -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    prof = db["BUFFER_PROFILE"]
    host = prof[db["BUFFER_PG"]["Ethernet0|3"]["profile"]]
    fabric = prof[db["BUFFER_PG"]["Ethernet16|3"]["profile"]]
    assert db["BUFFER_PG"]["Ethernet0|3"]["profile"] == "pg_lossless_400000_2m_profile"
    assert db["BUFFER_PG"]["Ethernet16|3"]["profile"] == "pg_lossless_400000_50m_profile"
    # host link 400G, 2 m, MTU 9000 (frames 9022 B); fabric link 400G, 50 m, MTU 9216
    assert int(host["xoff"]) == pfc_headroom(400, 2.0, 9022).value
    assert int(fabric["xoff"]) == pfc_headroom(400, 50.0, 9238).value
    assert int(host["xon"]) == 18000 and int(fabric["xon"]) == 18432
    assert int(fabric["size"]) == int(fabric["xon"]) + int(fabric["xoff"])
    assert fabric["pool"] == "ingress_lossless_pool" and fabric["dynamic_th"] == "0"
    assert db["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}
    assert db["CABLE_LENGTH"]["AZURE"] == {
        "Ethernet0": "2m", "Ethernet8": "2m", "Ethernet16": "50m", "Ethernet24": "50m"
    }


def test_ecn_thresholds_and_schedulers() -> None:
    db = _db(_intents("s18-switch-concept")["leaf01"])
    w = db["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert w["ecn"] == "ecn_all"
    assert (w["green_min_threshold"], w["green_max_threshold"]) == ("51200", "102400")
    assert w["green_drop_probability"] == "100"
    assert db["QUEUE"]["Ethernet0|3"] == {"scheduler": "scheduler.3",
                                          "wred_profile": "AZURE_LOSSLESS"}
    assert db["QUEUE"]["Ethernet0|0"] == {"scheduler": "scheduler.0"}
    assert [k for k in db["QUEUE"] if k.startswith("Ethernet0|")] == [
        "Ethernet0|0", "Ethernet0|3", "Ethernet0|6"
    ]
    assert db["SCHEDULER"] == {
        "scheduler.0": {"type": "DWRR", "weight": "50"},
        "scheduler.3": {"type": "DWRR", "weight": "50"},
        "scheduler.6": {"type": "STRICT"},
    }
    lab = _db(_intents("lossless-lab")["leaf01"])["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert (lab["green_min_threshold"], lab["green_max_threshold"]) == ("153600", "1536000")


def test_pfc_watchdog_from_the_intent() -> None:
    leaf = _intents("lossless-lab")["leaf01"]
    db = _db(leaf)
    assert db["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "200"}
    assert db["PFC_WD"]["Ethernet0"] == {
        "action": "drop", "detection_time": "200", "restoration_time": "200"
    }
    assert db["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "enable"
    fast = replace(leaf, qos=leaf.qos.model_copy(update={"pfc_watchdog": PfcWatchdog(
        detection_time_ms=100, restoration_time_ms=400, action="forward")}))
    wd = _db(fast)["PFC_WD"]
    assert wd["GLOBAL"] == {"POLL_INTERVAL": "100"}  # never above the detection time
    assert wd["Ethernet8"]["action"] == "forward"
    off = _db(replace(leaf, qos=leaf.qos.model_copy(update={"pfc_watchdog": None})))
    assert "PFC_WD" not in off and "pfcwd_sw_enable" not in off["PORT_QOS_MAP"]["Ethernet0"]
    assert off["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "disable"


def test_buffer_model_dynamic_without_size_traditional_with_it() -> None:
    leaf = _intents("lossless-lab")["leaf01"]
    assert leaf.buffer_bytes is None
    dyn = _db(leaf)
    assert dyn["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert all("size" not in p for p in dyn["BUFFER_POOL"].values())
    trad = _db(replace(leaf, buffer_bytes=64 * 2**20))
    assert trad["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    assert trad["BUFFER_POOL"]["ingress_lossless_pool"] == {
        "mode": "dynamic", "size": str(64 * 2**20), "type": "ingress"
    }
    assert trad["BUFFER_PROFILE"]["egress_lossless_profile"]["static_th"] == str(64 * 2**20)
    # the parser reads the pool back as the switch's buffer
    dev = interpret(parse_sonic_config_db(DIALECT.render(replace(leaf, buffer_bytes=64 * 2**20))[0]
                                          .text), file="leaf01.json", name="leaf01")
    assert dev.buffer_bytes is not None and dev.buffer_bytes.value == 64 * 2**20


def test_tables_sorted_and_every_value_a_string() -> None:
    db = _db(_intents("lossless-lab")["spine01"])
    assert list(db) == sorted(db)

    def strings(x: Any) -> bool:
        if isinstance(x, dict):
            return all(isinstance(k, str) and strings(v) for k, v in x.items())
        return isinstance(x, str)

    assert strings(db)
    assert build_config_db(_intents("lossless-lab")["spine01"]) == db


# ---- schema --------------------------------------------------------------------------------


@pytest.mark.parametrize("fabric", sorted(EXAMPLES))
def test_every_rendered_config_validates_against_the_schema(fabric: str) -> None:
    v = _validator()
    res = render_fabric(load_fabric(EXAMPLES[fabric], load_catalog([])), "sonic")
    assert len(res.files) == 4
    for f in res.files:
        errors = [e.message for e in v.iter_errors(json.loads(f.text))]
        assert not errors, (f.path, errors)
    trad = _db(replace(_intents(fabric)["leaf01"], buffer_bytes=32 * 2**20))
    assert not list(v.iter_errors(trad))


@pytest.mark.parametrize(
    ("table", "key", "field", "value"),
    [
        ("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "9"),
        ("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3;4"),
        ("PORT", "Ethernet0", "mtu", 9100),
        ("PORT", "Ethernet0", "speed", "400G"),
        ("WRED_PROFILE", "AZURE_LOSSLESS", "ecn", "ecn_on"),
        ("WRED_PROFILE", "AZURE_LOSSLESS", "green_drop_probability", "101"),
        ("PFC_WD", "Ethernet0", "action", "shutdown"),
        ("SCHEDULER", "scheduler.0", "weight", "0"),
        ("BUFFER_PROFILE", "ingress_lossy_profile", "xoff", "-1"),
        ("DSCP_TO_TC_MAP", "AZURE", "26", "8"),
    ],
)
def test_schema_rejects_a_broken_value(table: str, key: str, field: str, value: Any) -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    db[table][key][field] = value
    assert list(_validator().iter_errors(db))


@pytest.mark.parametrize(
    ("table", "bad_key"),
    [("PORT", "Eth0"), ("BUFFER_PG", "Ethernet0|3|4"), ("QUEUE", "Ethernet0|3-4"),
     ("BUFFER_QUEUE", "Ethernet0|8"), ("PORT_QOS_MAP", "Ethernet0 ")],
)
def test_schema_rejects_a_broken_key(table: str, bad_key: str) -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    first = next(iter(db[table]))
    db[table][bad_key] = db[table].pop(first)
    assert list(_validator().iter_errors(db))


def test_schema_rejects_a_short_dscp_map_and_an_unknown_table() -> None:
    db = _db(_intents("lossless-lab")["leaf01"])
    del db["DSCP_TO_TC_MAP"]["AZURE"]["63"]
    assert list(_validator().iter_errors(db))
    db = _db(_intents("lossless-lab")["leaf01"])
    db["ACL_RULE"] = {}
    assert list(_validator().iter_errors(db))


# ---- port names ----------------------------------------------------------------------------


def test_lanes_and_breakout_names() -> None:
    assert [lanes_for_speed(s) for s in (800, 400, 200, 100, 50, 40, 25, 10)] == [
        8, 8, 4, 4, 2, 4, 1, 1
    ]
    assert sonic_port("Ethernet7", 8, {}).name == "Ethernet48"
    sub = sonic_port("Ethernet7/2", 8, {7: 4})
    assert (sub.name, sub.lanes, sub.alias, sub.index) == ("Ethernet50", (50, 51), "etp7b", 7)


@settings(max_examples=60, deadline=None)
@given(
    fronts=st.lists(st.integers(1, 32), min_size=1, max_size=6, unique=True),
    split=st.lists(st.sampled_from([1, 2, 4]), min_size=6, max_size=6),
    pick=st.lists(st.integers(1, 4), min_size=6, max_size=6),
    speed=st.sampled_from([100.0, 200.0, 400.0, 800.0]),
)
def test_every_rendered_port_maps_back_to_its_neutral_name(
    fronts: list[int], split: list[int], pick: list[int], speed: float
) -> None:
    base = _intents("lossless-lab")["leaf01"]
    breakouts = {n: c for n, c in zip(fronts, split, strict=False) if c > 1}
    names = [
        f"Ethernet{n}/{min(k, breakouts[n])}" if n in breakouts else f"Ethernet{n}"
        for n, k in zip(fronts, pick, strict=False)
    ]
    ports = tuple(
        replace(base.ports[0], name=nm,
                speed_gbps=speed / breakouts.get(int(nm[8:].split("/")[0]), 1))
        for nm in names
    )
    intent = replace(base, ports=ports, breakouts=breakouts)
    text = DIALECT.render(intent)[0].text
    dev = interpret(parse_sonic_config_db(text), file="x.json", name="leaf01")
    for nm in names:
        assert dev.has_port(nm), (nm, dev.neutral)
    mapped = {dev.neutral[nm] for nm in names}
    assert len(mapped) == len(names)
    # the lane arithmetic alone agrees whenever one front-panel port is not broken out
    if any(n not in breakouts for n in fronts):
        pairs = [(p, len(e["lanes"].split(","))) for p, e in json.loads(text)["PORT"].items()]
        lane_names = sonic_neutral_names(pairs)
        assert {lane_names[dev.neutral[nm]] for nm in names} == set(names)


def test_index_decides_only_when_every_port_is_broken_out() -> None:
    def port(name: str, lanes: int, index: int) -> SonicPort:
        first = int(name[8:])
        return SonicPort(line=1, port=name, lanes=tuple(range(first, first + lanes)), index=index)

    split = [port(f"Ethernet{i * 2}", 2, i // 4 + 1) for i in range(8)]
    assert _neutral_by_index(split)["Ethernet10"] == "Ethernet2/2"
    # one port shows the full width: lanes decide (empty here)
    assert _neutral_by_index([*split, port("Ethernet16", 8, 3)]) == {}
    # index counted from 0 does not fit the lane arithmetic: ignored
    assert _neutral_by_index([port(f"Ethernet{i * 2}", 2, i // 4) for i in range(8)]) == {}


def test_parser_reads_port_index_and_warns_on_a_bad_one() -> None:
    res = parse_sonic_config_db('{"PORT": {"Ethernet0": {"lanes": "0,1", "index": "x"}, '
                                '"Ethernet2": {"lanes": "2,3", "index": "1"}}}')
    ports = {r.port: r for r in res.records if isinstance(r, SonicPort)}
    assert ports["Ethernet0"].index is None and ports["Ethernet2"].index == 1
    assert any("index" in w.message for w in res.warnings)


# ---- change plans --------------------------------------------------------------------------


def _leaf01_plan() -> list[dict[str, Any]]:
    f = DIALECT.render(_intents("lossless-lab")["leaf01"])[0]
    plan = DIALECT.plan(f, LEAF01.read_text(encoding="utf-8"))
    assert plan.existing == "existing"
    ops: list[dict[str, Any]] = json.loads(plan.plan)
    assert plan.added == sum(1 for o in ops if o["op"] != "remove")
    assert plan.removed == sum(1 for o in ops if o["op"] == "remove")
    return ops


def test_plan_against_real_leaf01_fixes_the_dscp_map() -> None:
    ops = _leaf01_plan()
    by_path = {o["path"]: o for o in ops}
    # leaf01 maps DSCP 26 to lossy TC 1 (qos_config.j2 default); the intent puts it on TC 3
    assert by_path["/DSCP_TO_TC_MAP/AZURE/26"] == {
        "op": "replace", "path": "/DSCP_TO_TC_MAP/AZURE/26", "value": "3"
    }
    assert by_path["/DSCP_TO_TC_MAP/AZURE/3"]["value"] == "0"  # was lossless TC 3
    assert "/DSCP_TO_TC_MAP/AZURE/48" not in by_path  # already TC 6
    # PFC on 3 only instead of 3,4
    assert by_path["/PORT_QOS_MAP/Ethernet0/pfc_enable"]["value"] == "3"
    assert by_path["/PORT_QOS_MAP/Ethernet0/pfc_to_queue_map"]["value"] == "AZURE"
    # ECN thresholds of the intent (150 KB / 1500 KB) replace SONiC's 1 MiB / 2 MiB
    assert by_path["/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"]["value"] == "153600"
    assert by_path["/WRED_PROFILE/AZURE_LOSSLESS/green_drop_probability"]["value"] == "100"
    # the 3-4 lossless PG of a rendered port goes, its PG 3 comes
    assert by_path["/BUFFER_PG/Ethernet0|3-4"]["op"] == "remove"
    assert by_path["/BUFFER_PG/Ethernet0|3"]["op"] == "add"
    assert by_path["/PFC_WD"]["op"] == "add"
    assert by_path["/PORT/Ethernet0/mtu"]["value"] == "9000"


def test_plan_leaves_other_ports_and_hardware_fields_alone() -> None:
    ops = _leaf01_plan()
    paths = [o["path"] for o in ops]
    # Ethernet100 is not a fabric port: none of its entries is touched
    assert not [p for p in paths if "Ethernet100" in p]
    # lanes/alias of a port the switch has come from its platform
    assert "/PORT/Ethernet0/lanes" not in paths and "/PORT/Ethernet0/alias" not in paths
    removes = [o["path"] for o in ops if o["op"] == "remove"]
    named = ("/SCHEDULER/", "/BUFFER_PROFILE/", "/BUFFER_POOL/", "/DSCP_TO_TC_MAP/",
             "/WRED_PROFILE/", "/DEVICE_METADATA/")
    # named objects are never removed (other ports may use them), only fields of them
    assert not [p for p in removes if p.startswith(named) and p.count("/") == 2]
    assert "/BUFFER_PROFILE/egress_lossless_profile/static_th" in removes  # dynamic model
    assert all(p.startswith(("/BUFFER_PG/", "/BUFFER_QUEUE/", "/QUEUE/", "/PORT_QOS_MAP/"))
               for p in removes if not p.startswith(named)), removes
    # DEVICE_METADATA: only the fields rendered (mac, hwsku stay)
    meta = [p for p in paths if p.startswith("/DEVICE_METADATA/")]
    assert sorted(meta) == [
        "/DEVICE_METADATA/localhost/buffer_model",
        "/DEVICE_METADATA/localhost/default_pfcwd_status",
        "/DEVICE_METADATA/localhost/hostname",
    ]


def test_plan_removes_pfc_from_a_port_that_must_be_lossy() -> None:
    leaf = _intents("lossless-lab")["leaf01"]
    before = DIALECT.render(leaf)[0]
    ports = tuple(replace(p, lossless=False, headroom_bytes=None) if p.name == "Ethernet1"
                  else p for p in leaf.ports)
    after = DIALECT.render(replace(leaf, ports=ports))[0]
    plan = plan_config_db("leaf01", "leaf01.json", after.text, before.text)
    ops = json.loads(plan.plan)
    paths = {(o["op"], o["path"]) for o in ops}
    assert ("remove", "/PORT_QOS_MAP/Ethernet0/pfc_enable") in paths
    assert ("remove", "/QUEUE/Ethernet0|3/wred_profile") in paths
    assert ("remove", "/PFC_WD/Ethernet0") in paths
    assert ("remove", "/BUFFER_PG/Ethernet0|3") in paths
    assert plan.removed == sum(1 for o in ops if o["op"] == "remove")


def test_plan_without_existing_is_the_whole_config() -> None:
    f = DIALECT.render(_intents("lossless-lab")["leaf02"])[0]
    plan = DIALECT.plan(f, None)
    assert plan.existing is None and plan.plan == f.text
    assert (DIALECT.plan(f, f.text).added, DIALECT.plan(f, f.text).removed) == (0, 0)


# ---- goldens -------------------------------------------------------------------------------


def _golden_files(fabric: str) -> list[RenderedFile]:
    return render_fabric(load_fabric(EXAMPLES[fabric], load_catalog([])), "sonic").files


@pytest.mark.parametrize("fabric", sorted(EXAMPLES))
def test_goldens(fabric: str) -> None:
    folder = GOLDEN / fabric
    files = _golden_files(fabric)
    if os.environ.get("AIFABRIC_REGEN_GOLDEN") == "1":
        folder.mkdir(parents=True, exist_ok=True)
        for f in files:
            (folder / f.path).write_text(f.text, encoding="utf-8")
        rel = EXAMPLES[fabric].relative_to(ROOT)
        (folder / "meta.yaml").write_text(
            f'source: "rendered by aifabric render from {rel} --dialect sonic"\n'
            "notes: >-\n"
            "  SONiC config_db.json per switch, compared byte for byte by\n"
            "  tests/unit/dialects/test_render_sonic.py\n"
            "  (regenerate with AIFABRIC_REGEN_GOLDEN=1).\n"
            "origin: rendered\n",
            encoding="utf-8",
        )
    assert sorted(p.name for p in folder.glob("*.json")) == sorted(f.path for f in files)
    for f in files:
        assert (folder / f.path).read_text(encoding="utf-8") == f.text, f.path
    assert "source:" in (folder / "meta.yaml").read_text(encoding="utf-8")
