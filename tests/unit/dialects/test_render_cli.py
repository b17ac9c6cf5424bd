"""``aifabric render`` as a user runs it: JSON keys, verify of the output, change plans, bad
input."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EXAMPLES, run_cli

S18 = EXAMPLES / "s18-switch-concept.yaml"
CONFIGS = EXAMPLES / "lossless-lab" / "configs"


def test_render_json_lists_files_and_verifies_them(tmp_path: Path) -> None:
    r = run_cli("render", str(S18), "--dialect", "eos", "-o", str(tmp_path / "out"),
                "-F", "json", "--explain")
    assert r.code == 0, r.err
    doc = r.json()
    assert [f["device"] for f in doc["files"]] == ["leaf01", "leaf02", "spine01", "spine02"]
    for f in doc["files"]:
        text = Path(f["path"]).read_text(encoding="utf-8")
        assert len(text.encode()) == f["bytes"] and f["kind"] == "eos-config"
    assert doc["summary"]["error"] == 0 and doc["summary"]["warning"] == 0
    quantities = {e["quantity"] for e in doc["explanation"]}
    assert "leaf01 Ethernet1 PFC headroom" in quantities
    assert "leaf01 ECN thresholds on the RoCE queue" in quantities


def test_render_diff_writes_plans_beside_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run_cli("render", str(S18), "--dialect", "sonic", "-o", str(out), "--diff",
                str(CONFIGS), "-F", "json")
    assert r.code == 0, r.err
    changes = {c["device"]: c for c in r.json()["changes"]}
    leaf01 = changes["leaf01"]
    assert leaf01["existing"].endswith("leaf01.json") and leaf01["removed"] > 0
    ops = json.loads((out / "_changes" / "leaf01.plan.json-patch.json").read_text())
    assert {"op": "replace", "path": "/DSCP_TO_TC_MAP/AZURE/26", "value": "3"} in ops
    # leaf02's current config is NX-OS: nothing of it carries over into a SONiC patch
    assert "not config_db JSON" in changes["leaf02"]["existing"]
    # the readers skip _changes: verify of DIR sees only the configs
    v = run_cli("verify", str(S18), "--configs", str(out), "-F", "json")
    assert v.code == 0, v.out[-2000:]


def test_render_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = run_cli("render", str(S18), "--dialect", "junos", "-o", str(tmp_path))
    assert r.code == 2 and "one of" in r.err and "Traceback" not in r.err
    r = run_cli("render", str(S18), "--dialect", "eos", "--device", "leaf9", "-o", str(tmp_path))
    assert r.code == 2 and "leaf9: not a switch" in r.err
    r = run_cli("render", str(S18), "--dialect", "host", "--device", "leaf01",
                "-o", str(tmp_path))
    assert r.code == 2 and "not a server" in r.err
