"""The real CLI as users and scripts call it: exit codes, one-line errors, JSON contract keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, S7_DESIGN

S7 = list(S7_DESIGN)


def test_design_s7_json_contract(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "s7.yaml"
    r = cli(*S7, "--format", "json", "-o", str(out))
    assert r.code == 0, r.err
    doc = r.json()
    for key in (
        "servers",
        "gpus",
        "tiers",
        "leaves",
        "spines",
        "super_spines",
        "oversubscription",
        "bom",
        "findings",
    ):
        assert key in doc
    assert (doc["servers"], doc["leaves"], doc["spines"], doc["tiers"]) == (128, 16, 8, 2)
    assert doc["oversubscription"] == {"leaf": 1.0}
    assert all(set(item) >= {"item", "count"} for item in doc["bom"])
    assert out.exists()
    shown = cli("show", str(out), "--format", "json", "--port-map", "0")
    assert shown.code == 0 and shown.json()["leaves"] == 16
    checked = cli("check", str(out), "--format", "json")
    assert checked.code == 0
    assert set(checked.json()) >= {"findings", "summary", "estimate"}


def test_pcie_gen4_warning_via_cli(cli: Any) -> None:
    r = cli(
        "design",
        "--gpus",
        "64",
        "--gpus-per-server",
        "8",
        "--nic-speed",
        "400G",
        "--pcie-gen",
        "4",
        "--switch-ports",
        "64",
        "--switch-speed",
        "400G",
        "--format",
        "json",
    )
    assert r.code == 0
    checks = {f["check"]: f for f in r.json()["findings"]}
    f = checks["design.nic-pcie-bandwidth"]
    assert f["severity"] == "warning" and "S9" in f["refs"] and f["expected"] == "PCIe 5.0 x16"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gpus", "0"], "--gpus"),
        (["--gpus", "1001"], "not divisible"),
        (["--nic-speed", "400"], "no unit"),
        (["--switch-model", "NoSuchSwitch"], "known:"),
        (["--oversubscription", "fast"], "--oversubscription"),
        (["--layout", "ring"], "--layout"),
        (["--mtu", "100"], "--mtu:"),
        (["--nic-speed", "400GB/s"], "bits"),
    ],
)
def test_design_bad_input_is_one_line_exit_2(cli: Any, args: list[str], needle: str) -> None:
    base = {
        "--gpus": "64",
        "--gpus-per-server": "8",
        "--nic-speed": "400G",
        "--switch-ports": "64",
        "--switch-speed": "400G",
    }
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    flat = [x for kv in base.items() for x in kv]
    r = cli("design", *flat)
    assert r.code == 2, r.err
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0]
    assert "Traceback" not in r.err


def test_fabric_file_with_typo_exit_2(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "typo.yaml"
    src = Path(__file__).resolve().parents[1] / "fixtures" / "fabrics" / "two-servers.yaml"
    bad.write_text(src.read_text().replace("switch_class:", "switch_clas:"))
    for command in ("check", "show"):
        r = cli(command, str(bad))
        assert r.code == 2
        assert r.err.strip().count("\n") == 0
        assert "typo.yaml:" in r.err and "switch_clas" in r.err and "did you mean" in r.err


def test_missing_file_exit_2(cli: Any, tmp_path: Path) -> None:
    r = cli("check", str(tmp_path / "none.yaml"))
    assert r.code == 2 and "no such file" in r.err


def test_check_exit_1_on_error_findings(cli: Any) -> None:
    r = cli("check", str(EXAMPLES / "s17-case-study-before.yaml"), "--format", "json")
    assert r.code == 1
    doc = r.json()
    checks = {f["check"] for f in doc["findings"]}
    assert {
        "design.middlebox-on-path",
        "design.transport",
        "design.legacy-three-tier",
        "design.switch-class",
    } <= checks
    assert doc["summary"]["error"] >= 1


def test_schema_and_catalog(cli: Any) -> None:
    r = cli("schema")
    assert r.code == 0 and "oneOf" in json.loads(r.out)
    r = cli("catalog", "switches", "--format", "json")
    assert r.code == 0 and all("source" in e for e in r.json()["switches"])
    r = cli("catalog", "bogus")
    assert r.code == 2


def test_json_stdout_is_one_document(cli: Any) -> None:
    r = cli("check", str(EXAMPLES / "s7-worked-example.yaml"), "--format", "json")
    assert r.code == 0
    json.loads(r.out)  # nothing else on stdout
