"""``aifabric diagnose`` as users run it: contracts.md exit codes and JSON keys, healthy input
said to be healthy, bad input as one line and exit 2, JUnit/SARIF for CI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import run_cli

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose"


def test_error_finding_exits_1_with_contract_keys() -> None:
    res = run_cli("diagnose", str(FIX / "retry-exceeded-roce-v4mapped" / "nccl.log"), "-F", "json")
    assert res.code == 1
    doc = res.json()
    assert {"findings", "summary"} <= set(doc)
    first = doc["findings"][0]
    assert first["check"] == "diagnose.ib-retry-exceeded"
    assert 0 < first["confidence"] <= 1
    assert first["message"].startswith("Fabric: ")
    assert any("nccl.log line 1:" in e for e in first["evidence"])


def test_healthy_input_exits_0_and_says_so() -> None:
    res = run_cli("diagnose", str(FIX / "healthy-ib-a100-init" / "nccl.log"), "-F", "json")
    assert res.code == 0, res.out
    doc = res.json()
    assert doc["summary"]["error"] == 0
    assert doc["healthy"] and doc["not_checked"][0].startswith("no problem found in:")


def test_several_inputs_and_a_directory(tmp_path: Path) -> None:
    host = tmp_path / "gpu-node-7"
    host.mkdir()
    (host / "nccl.log").write_text(
        (FIX / "socket-fallback-no-libibverbs" / "nccl.log").read_text(), encoding="utf-8"
    )
    res = run_cli(
        "diagnose",
        str(tmp_path),
        str(FIX / "healthy-roce-nccl-tests-init" / "nccl.log"),
        "-F",
        "json",
    )
    doc = res.json()
    hit = [f for f in doc["findings"] if f["check"] == "diagnose.nccl-socket-fallback"]
    assert hit and hit[0]["target"] == "gpu-node-7"  # the bundle directory names the host


def test_missing_path_and_no_path_are_exit_2(tmp_path: Path) -> None:
    res = run_cli("diagnose", str(tmp_path / "nope.log"))
    assert res.code == 2 and "no such file" in res.err and "Traceback" not in res.err
    res = run_cli("diagnose")
    assert res.code == 2 and "nothing to diagnose" in res.err


def test_junit_and_sarif() -> None:
    log = str(FIX / "retry-exceeded-roce-v4mapped" / "nccl.log")
    root = ET.fromstring(run_cli("diagnose", log, "-F", "junit").out)
    failed = {tc.get("name") for tc in root.iter("testcase") if tc.find("failure") is not None}
    assert "diagnose.ib-retry-exceeded" in failed
    sarif = json.loads(run_cli("diagnose", log, "-F", "sarif").out)
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "diagnose.ib-retry-exceeded"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
