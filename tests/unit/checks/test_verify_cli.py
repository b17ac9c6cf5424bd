"""``aifabric verify`` and ``aifabric check`` with verify inputs, as a user runs them: exit codes,
the contracts.md JSON keys, JUnit XML and SARIF documents, bad input as one line and exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import run_cli

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "verify"
SMALL = FIX / "_fabrics" / "small-l3.yaml"
DSCP26 = FIX / "sonic-default-map-dscp26"


def test_verify_clean_intent_exits_0_with_contract_keys() -> None:
    res = run_cli("verify", str(SMALL), "--format", "json")
    assert res.code == 0, res.err
    doc = res.json()
    assert {"findings", "summary"} <= set(doc)
    assert doc["summary"]["error"] == 0
    assert any("--configs" in line for line in doc["not_checked"])


def test_verify_configs_errors_exit_1_and_quote_the_file() -> None:
    res = run_cli("verify", str(SMALL), "--configs", str(DSCP26 / "configs"), "--format", "json")
    assert res.code == 1
    doc = res.json()
    chain = [f for f in doc["findings"] if f["check"] == "verify.dscp-chain"]
    assert chain and chain[0]["expected"] == 3 and chain[0]["actual"] == 1
    assert any(
        e["source"].endswith("leaf01.json") and e["line"] == 1058 for e in chain[0]["evidence"]
    )
    assert doc["format_version"] == 2
    assert doc["summary"]["error"] == sum(1 for f in doc["findings"] if f["severity"] == "error")


def test_check_includes_verify_and_estimate() -> None:
    res = run_cli("check", str(SMALL), "--configs", str(DSCP26 / "configs"), "--format", "json")
    assert res.code == 1
    doc = res.json()
    assert {"findings", "summary", "estimate"} <= set(doc)
    assert "verify.dscp-chain" in {f["check"] for f in doc["findings"]}
    # the small fabric names no GPU model: check says so instead of guessing
    assert any("expected collective performance" in n for n in doc["not_checked"])
    example = Path(__file__).resolve().parents[3] / "examples" / "s7-worked-example.yaml"
    res = run_cli("check", str(example), "--format", "json")
    doc = res.json()
    assert doc["estimate"]["rows"]
    assert "verify.pfc-deadlock" in doc["checks_run"]


def test_junit_counts_failures_per_failing_check() -> None:
    res = run_cli("verify", str(SMALL), "--configs", str(DSCP26 / "configs"), "-F", "junit")
    assert res.code == 1
    root = ET.fromstring(res.out)
    failed = {tc.get("name") for tc in root.iter("testcase") if tc.find("failure") is not None}
    assert {"verify.dscp-chain", "verify.pfc-priorities"} <= failed
    assert int(root.get("failures", "0")) == len(failed)


def test_sarif_results_point_at_config_lines() -> None:
    res = run_cli("verify", str(SMALL), "--configs", str(DSCP26 / "configs"), "-F", "sarif")
    doc = json.loads(res.out)
    assert doc["version"] == "2.1.0"
    results = doc["runs"][0]["results"]
    chain = next(r for r in results if r["ruleId"] == "verify.dscp-chain")
    loc = chain["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("configs/leaf01.json")
    assert loc["region"]["startLine"] == 1058
    assert chain["level"] == "error"


def test_configs_not_a_directory_is_exit_2(tmp_path: Path) -> None:
    res = run_cli("verify", str(SMALL), "--configs", str(tmp_path / "nope"))
    assert res.code == 2
    assert "not a directory" in res.err
    assert "Traceback" not in res.err


def test_unreadable_file_in_configs_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "leaf01.json").write_text(
        (DSCP26 / "configs" / "leaf01.json").read_text(), encoding="utf-8"
    )
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01\x02binary")
    res = run_cli("verify", str(SMALL), "--configs", str(tmp_path), "-F", "json")
    assert res.code == 1
    doc = res.json()
    assert any(line.startswith("configs") or "notes.bin" in line for line in doc["not_checked"])


def test_verify_configs_without_a_fabric_file() -> None:
    """contracts.md: verify works with any subset of its inputs."""
    res = run_cli("verify", "--configs", str(DSCP26 / "configs"), "-F", "json")
    assert res.code == 1
    doc = res.json()
    chain = [f for f in doc["findings"] if f["check"] == "verify.dscp-chain"]
    assert chain and "DSCP 26 is mapped to TC 1" in chain[0]["message"]
    assert doc["not_checked"][0].startswith("no fabric file")


def test_verify_nccl_env_alone() -> None:
    env = FIX / "nccl-env-seed-ib-enable" / "nccl.env"
    res = run_cli("verify", "--nccl-env", str(env), "-F", "json")
    assert res.code == 1
    assert any("NCCL_IB_ENABLE" in f["message"] for f in res.json()["findings"])


def test_verify_with_nothing_is_exit_2() -> None:
    res = run_cli("verify")
    assert res.code == 2
    assert "nothing to verify" in res.err and "Traceback" not in res.err


def test_bundled_lossless_lab_example() -> None:
    lab = Path(__file__).resolve().parents[3] / "examples" / "lossless-lab"
    res = run_cli(
        "verify",
        str(lab / "fabric.yaml"),
        "--configs",
        str(lab / "configs"),
        "--bundle",
        str(lab / "bundle"),
        "--nccl-env",
        str(lab / "nccl.env"),
        "-F",
        "json",
    )
    assert res.code == 1
    doc = res.json()
    got = {(f["check"], f["target"].split(":")[0]) for f in doc["findings"]}
    # SONiC's default map on leaf01; srv03's NIC pauses 0,2,6,7; four vendors read
    assert ("verify.dscp-chain", "leaf01") in got
    assert ("verify.pfc-priorities", "srv03") in got
    assert not any(
        f["check"] == "verify.dscp-chain" and "leaf02" in f["target"] for f in doc["findings"]
    )
    assert not any("switches have no config" in n for n in doc["not_checked"])
