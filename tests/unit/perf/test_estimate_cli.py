"""``aifabric estimate`` and the estimate inside ``aifabric check`` (contracts.md keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests/fixtures/evidence/nccl-tests/olivia-gh200-slingshot-v2.18.3/input.txt"


def test_json_keys_follow_the_contract() -> None:
    res = run_cli("estimate", "--nodes", "4", "-b", "1M", "-e", "1G", "-f", "4", "--format", "json")
    assert res.code == 0, res.err
    doc = res.json()
    assert {"rows", "bottleneck", "explain"} <= set(doc)
    assert len(doc["rows"]) == 6  # 1M, 4M, 16M, 64M, 256M, 1G
    for row in doc["rows"]:
        assert {
            "size_bytes",
            "time_us",
            "algbw_GBps",
            "busbw_GBps",
            "algorithm",
            "protocol",
        } <= set(row)
    assert doc["rows"][0]["size_bytes"] == 1 << 20
    assert doc["assumed"]  # flags left out are listed, not silently guessed


def test_single_size_and_explain() -> None:
    res = run_cli("estimate", "--size", "8G", "--nodes", "2", "--gpu", "A100", "--nic-speed",
                  "200G", "--transport", "ib", "--explain")  # fmt: skip
    assert res.code == 0, res.err
    assert "8 GiB" in res.out and "How the numbers were computed" in res.out
    assert "ib framing efficiency" in res.out


def test_masks_like_nccl_algo() -> None:
    res = run_cli("estimate", "--size", "1G", "--nodes", "4", "--algo", "ring", "--proto",
                  "simple", "--format", "json")  # fmt: skip
    row = res.json()["rows"][0]
    assert (row["algorithm"], row["protocol"]) == ("Ring", "Simple")


@pytest.mark.parametrize(
    "args",
    [
        ("--size", "8Gb"),
        ("--nic-speed", "400"),
        ("--algo", "bogus"),
        ("--nccl-version", "1.2"),
        ("--gpu", "Z9000"),
        ("-b", "1G", "-e", "1M"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: tuple[str, ...]) -> None:
    res = run_cli("estimate", *args)
    assert res.code == 2
    assert "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1, res.err


def test_calibrate_on_real_results() -> None:
    flags = ["--gpu", "H100", "--gpus-per-node", "4", "--nics-per-node", "4", "--nic-speed", "200G"]
    res = run_cli("estimate", "--calibrate", str(FIXTURE), *flags, "--format", "json")
    assert res.code == 0, res.err
    doc = res.json()
    cal = doc["calibration"]
    assert cal["rms_error_after_pct"] <= cal["rms_error_before_pct"]
    assert len(cal["rows"]) == 28
    assert doc["ranks"] == 8


def test_check_reports_expected_busbw() -> None:
    res = run_cli("check", str(ROOT / "examples/s7-worked-example.yaml"), "--format", "json")
    est = res.json()["estimate"]
    assert est is not None and est["rows"][-1]["size_bytes"] == 8 << 30
    assert est["peak_busbw_GBps"] == pytest.approx(8 * 24, rel=0.05)
    table = run_cli("check", str(ROOT / "examples/s7-worked-example.yaml"))
    assert "Expected AllReduce busbw" in table.out


def test_check_flags_a_tcp_design_below_s23() -> None:
    res = run_cli("check", str(ROOT / "examples/s17-case-study-before.yaml"), "--format", "json")
    ids = [f["check"] for f in res.json()["findings"]]
    assert "design.expected-busbw" in ids


def test_calibrate_then_predict_another_scale() -> None:
    flags = ["--gpu", "H100", "--gpus-per-node", "4", "--nics-per-node", "4", "--nic-speed", "200G"]
    res = run_cli(
        "estimate", "--calibrate", str(FIXTURE), *flags, "--nodes", "16", "--size", "1G",
        "--format", "json",
    )  # fmt: skip
    assert res.code == 0, res.err
    doc = res.json()
    assert doc["ranks"] == 64  # predicted for 16 nodes x 4 GPUs
    assert len(doc["calibration"]["rows"]) == 28  # fitted on the 2-node, 8-rank results


def test_s1_ledger_beside_the_ring_figure() -> None:
    # S1: 50B fp32 = 200 GB over 400G = 4 s in the article; a 16-rank ring needs 2(n-1)/n x S
    # at the NIC's goodput 50 x 0.9804 x 0.97 = 47.55 GB/s
    args = ["--params", "50B", "--dtype", "fp32", "--nodes", "16", "--gpus-per-node", "1",
            "--nics-per-node", "1", "--nic-speed", "400G"]  # fmt: skip
    doc = run_cli("estimate", *args, "--format", "json").json()
    g = doc["training"]["gradient"]
    assert g["size_bytes"] == 200_000_000_000
    assert g["seed_s"] == 4.0 and g["seed_with_overhead_s"] == 8.0
    expected = 2 * 15 / 16 * 200e9 / (50e9 * round(4096 / 4178, 4) * 0.97)
    assert g["bandwidth_term_s"] == pytest.approx(expected, rel=1e-3)
    assert g["ratio_to_seed"] == pytest.approx(expected / 4.0, rel=1e-3)
    assert {"rows", "bottleneck", "explain"} <= set(doc)
    text = run_cli("estimate", *args).out
    assert "4.0 s" in text and "2(n-1)/n" in text


def test_inference_tp_allreduce_is_latency_bound() -> None:
    args = ["--inference", "--hidden", "8192", "--batch", "1", "--tp", "8", "--layers", "80"]
    doc = run_cli("estimate", *args, "--format", "json").json()["inference"]
    assert doc["message_bytes"] == 8192 * 2
    assert doc["latency_bound"] and doc["alpha_share"] > 0.9
    assert doc["per_token_us"] == pytest.approx(160 * doc["allreduce_us"], rel=1e-3)


def test_workload_bad_input() -> None:
    assert run_cli("estimate", "--params", "lots").code == 2
    assert run_cli("estimate", "--params", "7B", "--dtype", "fp64").code == 2
    assert run_cli("estimate", "--inference").code == 2


def test_no_gdr_flag_stages_through_host_memory() -> None:
    flags = ["--nodes", "4", "--size", "8G", "--format", "json"]
    on = run_cli("estimate", *flags).json()
    off = run_cli("estimate", *flags, "--no-gdr").json()
    assert on["platform"]["gdr"] is True and off["platform"]["gdr"] is False
    assert off["rows"][0]["busbw_GBps"] < 0.65 * on["rows"][0]["busbw_GBps"]
    assert off["bottleneck"]["kind"] == "pcie"
    assert any(e["quantity"].startswith("host staging") for e in off["explain"])


def test_inference_prints_what_it_assumed() -> None:
    # the inference mode used to list its defaults only in JSON
    args = ["--inference", "--hidden", "8192", "--layers", "80"]
    text = run_cli("estimate", *args)
    assert text.code == 0, text.err
    for item in ("--gpu H100", "--gpus-per-node 8", "--nodes 1", "--tp 8 (one server)",
                 "--batch 1", "--dtype bf16"):  # fmt: skip
        assert f"assumed: {item}" in text.out, item
    doc = run_cli("estimate", *args, "--format", "json").json()
    assert "--dtype bf16" in doc["assumed"] and "--tp 8 (one server)" in doc["assumed"]
    assert doc["inference"]["allreduce_us"] > 0
    assert doc["explain"][0]["quantity"] == "assumed defaults"
    assert {"rows", "bottleneck", "explain", "inference"} <= set(doc)
    given = run_cli("estimate", *args, "--tp", "8", "--batch", "2", "--dtype", "fp16",
                    "--format", "json").json()  # fmt: skip
    assert not {"--tp 8 (one server)", "--batch 1", "--dtype bf16"} & set(given["assumed"])


def test_every_mode_prints_assumed_defaults_in_the_table() -> None:
    assert "assumed: --nic-speed 400G" in run_cli("estimate", "--size", "1G").out
    training = run_cli("estimate", "--params", "7B", "--nodes", "2")
    assert "assumed: --dtype bf16" in training.out and "assumed: --pp 1" in training.out


def test_nic_model_gives_speed_and_slot() -> None:
    doc = run_cli("estimate", "--nic", "ConnectX-6", "--nodes", "2", "--gpu", "A100",
                  "--size", "8G", "--format", "json").json()  # fmt: skip
    assert doc["platform"]["nic_speed_gbps"] == 200 and doc["platform"]["nic_pcie_gen"] == 4
    assert not any(a.startswith(("--nic-speed", "--pcie-gen")) for a in doc["assumed"])
    assert run_cli("estimate", "--nic", "NoSuchNIC").code == 2


def test_two_nodes_run_tree_where_nccl_does() -> None:
    # 8 x A100 with 8 x 100G IB on two nodes: NCCL runs Tree and busbw exceeds the NICs' rate
    flags = ["--nodes", "2", "--gpu", "A100", "--nic-speed", "100G", "--transport", "ib",
             "--pcie-gen", "4", "--size", "8G"]  # fmt: skip
    doc = run_cli("estimate", *flags, "--format", "json").json()
    row = doc["rows"][0]
    assert row["algorithm"] == "Tree"
    assert row["busbw_GBps"] > 1.5 * 8 * 12.5 * 0.97
    text = run_cli("estimate", *flags, "--explain").out
    assert "algorithm NCCL runs at" in text and "once per direction" in text


def test_socket_flags_set_streams() -> None:
    flags = ["--nodes", "4", "--gpus-per-node", "1", "--nics-per-node", "1", "--nic-speed",
             "100G", "--transport", "socket", "--size", "1G", "--format", "json"]  # fmt: skip
    base = run_cli("estimate", *flags).json()
    tuned = run_cli("estimate", *flags, "--socket-nthreads", "2", "--nsocks-perthread", "2").json()
    assert tuned["rows"][0]["busbw_GBps"] > 3 * base["rows"][0]["busbw_GBps"]
    goodput = next(e for e in tuned["explain"] if e["quantity"] == "NIC goodput")
    assert goodput["inputs"]["streams_per_connection"] == 4
    slow = run_cli("estimate", *flags, "--tcp-stream-speed", "8G").json()
    assert slow["rows"][0]["busbw_GBps"] < base["rows"][0]["busbw_GBps"]
