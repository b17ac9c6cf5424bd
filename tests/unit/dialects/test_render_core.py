"""The render core: intents from the fabric (headroom, cable defaults, NCCL_IB_TC), the change
plan helpers, the registry and the file writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.dialects.intent import DEFAULT_CABLE_M, build_intents
from aifabric.dialects.render import (
    RenderedFile,
    find_existing,
    get_dialect,
    plan_cli,
    plan_commands,
    plan_json_patch,
    plan_unified,
    write_files,
)
from aifabric.errors import InputError
from aifabric.model import Fabric
from aifabric.perf.hardware import pfc_headroom

ROOT = Path(__file__).resolve().parents[3]
LAB = ROOT / "examples" / "lossless-lab" / "fabric.yaml"


def _lab() -> Fabric:
    return load_fabric(LAB, load_catalog([]))


def test_headroom_of_each_lossless_port_is_the_ieee_bound() -> None:
    intents = build_intents(_lab())
    leaf = intents["leaf01"]
    by = {p.name: p for p in leaf.ports}
    # host link: 400G, 2 m DAC, MTU 9000 → frames of 9022 bytes
    assert by["Ethernet1"].headroom_bytes == pfc_headroom(400, 2.0, 9022).value
    # fabric link: 400G, 50 m fibre, MTU 9216 → frames of 9238 bytes
    assert by["Ethernet3"].headroom_bytes == pfc_headroom(400, 50.0, 9238).value
    # hand-checked: 2*9238 + 84 + 2*50 m*5 ns/m*50 B/ns = 43,560 B unavoidable part
    h = pfc_headroom(400, 50.0, 9238)
    assert h.inputs["minimum_bytes"] == 2 * 9238 + 84 + 25_000
    assert leaf.device_mtu == 9216
    assert all(p.lossless for p in leaf.ports)


def test_missing_cable_length_takes_sonic_default_and_says_so() -> None:
    fab = _lab()
    links = tuple(
        lk.model_copy(update={"length_m": None}) if lk.kind == "fabric" else lk
        for lk in fab.links
    )
    intents = build_intents(fab.model_copy(update={"links": links}))
    eth3 = next(p for p in intents["spine01"].ports if p.name == "Ethernet1")
    assert (eth3.cable_m, eth3.cable_assumed) == (DEFAULT_CABLE_M["fabric"], True)
    notes = [e.note for e in intents["spine01"].explained if e.note and "assumed" in e.note]
    assert notes and "40 m assumed" in notes[0]


def test_host_intent_nccl_tc_and_nics() -> None:
    srv = build_intents(_lab())["srv01"]
    assert srv.role == "host"
    tc = next(e for e in srv.explained if e.quantity == "NCCL_IB_TC")
    assert tc.value == 26 << 2 == 104
    assert [(n.device, n.port, n.mtu_bytes) for n in srv.nics] == [("nic0", "nic0", 9000)]


def test_ecn_reasoning_names_the_references() -> None:
    leaf = build_intents(_lab())["leaf01"]
    ecn = next(e for e in leaf.explained if "ECN" in e.quantity)
    assert ecn.inputs["kmin_bytes"] == 150 * 1024
    assert any("seed S18 50 KB / 100 KB" in s for s in ecn.sources)


EOS_HAVE = """\
hostname leaf01
interface Ethernet1
   mtu 9214
   priority-flow-control priority 3 no-drop
   priority-flow-control priority 4 no-drop
interface Ethernet9
   mtu 1500
"""
EOS_WANT = """\
! rendered
hostname leaf01
interface Ethernet1
   mtu 9000
   priority-flow-control priority 3 no-drop
"""


def test_plan_cli_adds_and_negates_under_each_mode() -> None:
    plan = plan_cli(
        "leaf01", "leaf01.cfg", EOS_WANT, EOS_HAVE,
        owned=lambda parents, line: bool(parents) and parents[0] == "interface Ethernet1",
    )
    assert plan.plan == (
        "interface Ethernet1\n"
        "   mtu 9000\n"
        "   no mtu 9214\n"
        "   no priority-flow-control priority 4 no-drop\n"
        "!\n"
    )
    assert (plan.added, plan.removed) == (1, 2)


def test_plan_cli_without_existing_is_the_whole_config() -> None:
    plan = plan_cli("leaf01", "leaf01.cfg", EOS_WANT, None, owned=lambda p, ln: True)
    assert plan.existing is None and plan.plan == EOS_WANT and plan.added == 4


def test_json_patch_escapes_keys_and_removes_extra_keys() -> None:
    want = {"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}},
            "DSCP_TO_TC_MAP": {"AZURE": {"26": "3"}}, "WEIRD": {"a/b~c": {"x": "1"}}}
    have = {"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4"}, "Ethernet8": {"pfc_enable": "3"}},
            "DSCP_TO_TC_MAP": {"AZURE": {"26": "1"}}}
    plan = plan_json_patch("leaf", "leaf.json", json.dumps(want), json.dumps(have),
                           tables=["PORT_QOS_MAP", "DSCP_TO_TC_MAP", "WEIRD"])
    ops = json.loads(plan.plan)
    assert {"op": "replace", "path": "/PORT_QOS_MAP/Ethernet0/pfc_enable", "value": "3"} in ops
    assert {"op": "remove", "path": "/PORT_QOS_MAP/Ethernet8"} in ops
    assert {"op": "replace", "path": "/DSCP_TO_TC_MAP/AZURE/26", "value": "3"} in ops
    assert {"op": "add", "path": "/WEIRD", "value": {"a/b~c": {"x": "1"}}} in ops
    assert (plan.added, plan.removed) == (3, 1)


def test_json_patch_against_another_vendors_config_adds_every_table() -> None:
    want = {"PORT": {"Ethernet0": {"mtu": "9100"}}, "PFC_WD": {"Ethernet0": {"action": "drop"}}}
    plan = plan_json_patch("leaf", "leaf.json", json.dumps(want), "hostname x\n",
                           tables=["PORT", "PFC_WD", "WRED_PROFILE"])
    assert json.loads(plan.plan) == [
        {"op": "add", "path": "/PORT", "value": want["PORT"]},
        {"op": "add", "path": "/PFC_WD", "value": want["PFC_WD"]},
    ]
    assert (plan.existing, plan.added, plan.removed) == ("not config_db JSON", 2, 0)


def test_plan_commands_sets_new_and_unsets_gone() -> None:
    want = "nv set qos pfc default-global switch-priority 3\nnv set interface swp1 link mtu 9000\n"
    have = (
        "nv set qos pfc default-global switch-priority 4\n"
        "nv set interface swp1 link mtu 1500\n"
        "nv set system hostname x\n"
    )
    plan = plan_commands("s", "s.txt", want, have, owned=lambda ln: " qos " in ln)
    assert plan.plan.splitlines() == [
        "nv set qos pfc default-global switch-priority 3",
        "nv set interface swp1 link mtu 9000",
    ]
    # the hostname is not owned; the old MTU is overridden by the new value, not unset


def test_plan_unified_counts_lines() -> None:
    plan = plan_unified("h", "h/nccl.env", "A=1\nB=2\n", "A=1\nB=3\nC=4\n")
    assert (plan.added, plan.removed) == (1, 2)
    assert "+B=2" in plan.plan


def test_unknown_dialect_is_input_error() -> None:
    with pytest.raises(InputError, match="unknown dialect 'junos'"):
        get_dialect("junos")


@given(st.text(min_size=1, max_size=30))
def test_write_files_never_escapes_the_output(tmp_path_factory: pytest.TempPathFactory,
                                              name: str) -> None:
    out = tmp_path_factory.mktemp("w")
    try:
        written = write_files([RenderedFile("d", name, "x")], out)
    except (InputError, OSError, ValueError):
        return
    root = out.resolve()
    assert all(p == root or root in p.parents for p in written)


def test_find_existing_by_device_name(tmp_path: Path) -> None:
    (tmp_path / "leaf01.cfg").write_text("x")
    found = find_existing(tmp_path, RenderedFile("leaf01", "leaf01.json", "{}"))
    assert found == tmp_path / "leaf01.cfg"
    assert find_existing(tmp_path, RenderedFile("leaf02", "leaf02.json", "{}")) is None
