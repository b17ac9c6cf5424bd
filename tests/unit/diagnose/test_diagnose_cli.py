"""``aifabric diagnose`` as users run it: contracts.md exit codes and JSON keys, healthy input
said to be healthy, bad input as one line and exit 2, JUnit/SARIF for CI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from aifabric.checks.diagnose.signatures import LAYER_WORDS, all_causes
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
    # the rule is a fabric rule; a differential may rank another cause first, and the message
    # then opens with that cause's layer words
    layer = all_causes()[first["cause"]].layer
    assert first["message"].startswith(f"{LAYER_WORDS[layer]}: ")
    assert any(e["source"].endswith("nccl.log") and e["line"] == 1 for e in first["evidence"])


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
    hit = [f for f in doc["findings"] if f["check"] == "diagnose.nccl-socket-no-rdma-seen"]
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


_PASTE = (
    "root@node1:~# ibstat\n"
    "CA 'mlx5_0'\n"
    "\tCA type: MT4123\n"
    "\tNumber of ports: 1\n"
    "\tPort 1:\n"
    "\t\tState: Down\n"
    "\t\tPhysical state: Polling\n"
    "\t\tRate: 10\n"
    "\t\tLink layer: InfiniBand\n"
    "root@node1:~# ulimit -a\n"
    "max locked memory       (kbytes, -l) 64\n"
    "open files                      (-n) 1048576\n"
    "root@node1:~# grep -i error train.log | tail -2\n"
    "frobnicator: ERROR 17 while turning the crank\n"
)


def test_multi_tool_paste_gives_each_tools_finding_with_its_cause(tmp_path: Path) -> None:
    paste = tmp_path / "ticket.txt"
    paste.write_text(_PASTE, encoding="utf-8")
    res = run_cli("diagnose", str(paste), "-F", "json")
    assert res.code == 1
    doc = res.json()
    causes = {f["cause"] for f in doc["findings"]}
    assert {"fabric.link-down", "host.memlock"} <= causes
    kinds = {i["kind"] for i in doc["inputs"]}
    assert {"ibstat", "ulimit"} <= kinds
    # the application's own error line is explained by nothing: it is reported, not dropped
    unrec = [f for f in doc["findings"] if f["check"] == "diagnose.unrecognised-line"]
    assert unrec and "frobnicator" in unrec[0]["message"]
    assert any(e["source"] == str(paste) and e["line"] == 14 for e in unrec[0]["evidence"])


def test_parse_shows_the_parts_of_a_paste(tmp_path: Path) -> None:
    paste = tmp_path / "ticket.txt"
    paste.write_text(_PASTE, encoding="utf-8")
    res = run_cli("parse", str(paste), "-F", "json")
    assert res.code == 0
    doc = res.json()
    assert doc["kind"] == "paste"
    assert [s["kind"] for s in doc["segments"]][:2] == ["ibstat", "ulimit"]
    port = next(r for r in doc["records"] if r["type"] == "ibstat_port")
    assert port["state"] == "Down" and port["line"] == 5


# vLLM logs an exception once, each line of its traceback under the same prefix (as pasted in
# llm-d/llm-d#352): one log record, one "not recognised" finding; another record is another
# vLLM's record layout (one logged record, its prefix on every line); the first message stands in
# for one no catalogue knows (vLLM's own "WorkerProc failed to start." and a prefixed Traceback
# line are catalogued now)
_VLLM = (
    "ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] WorkerProc setup failed.\n"
    "ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] Worker hit a fatal error:"
    " exiting\n"
    'ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]   File "/app/x.py", line 5\n'
    "ERROR 10-13 09:06:26 [v1/engine/core.py:120] EngineCore failed to start.\n"
)


def test_one_logged_record_over_several_lines_is_one_unrecognised_finding(
    tmp_path: Path,
) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(_VLLM, encoding="utf-8")
    res = run_cli("diagnose", str(log), "-F", "json")
    unrec = [f for f in res.json()["findings"] if f["check"] == "diagnose.unrecognised-line"]
    assert len(unrec) == 1, [f["message"] for f in unrec]
    assert "WorkerProc setup failed. (3 lines like it)" in unrec[0]["message"]
    # the engine's own line is explained by the vLLM catalogue, not left unrecognised
    checks = {f["check"] for f in res.json()["findings"]}
    assert "signature.vllm.engine-core-fatal" in checks, checks
