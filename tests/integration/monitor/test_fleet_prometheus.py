"""``aifabric diagnose --prometheus`` against a real Prometheus (Debian package).

The aifabric exporter's series for one GPU host and one SONiC leaf are written as OpenMetrics
text with timestamps from two hours ago to one hour ago (one sample a minute), turned into TSDB
blocks by ``promtool tsdb create-blocks-from openmetrics`` (backfilling:
https://prometheus.io/docs/prometheus/latest/storage/#backfilling-from-openmetrics-format), and
served by ``prometheus --storage.tsdb.path=DATADIR --storage.tsdb.retention.time=10y`` on
127.0.0.1 with a minimal config; the test stops it by PID.

Known answers over the 30 minutes before T1 (= T0 + 1 h), worked out by hand from the rates:
eth2 rx_prio0_bytes grows 10,000 B/s x 1,800 s = 18,000,000 and tx_prio0_bytes 36,000,000, no
byte on priority 3 and no PFC frame counted: 100 % on priority 0; mlx5_0/1 out_of_sequence
grows 1/s x 1,800 s = 1,800 → ``diagnose.roce-lossy-priority`` on gpu-node-1. leaf1 Ethernet4
queue 3 counts one watchdog storm per 15 minutes (2 in the window) and 50 drops per storm
(100) → ``diagnose.pfc-storm`` on leaf1.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli, stop_process

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None or PROMTOOL is None,
    reason="needs prometheus and promtool on PATH (Debian: apt-get install -y prometheus)",
)

PORTS = range(19290, 19297)
"""This test's ports (the unit tests use 19297-19299)."""

STEP_S = 60
HOST = {"node": "gpu-node-1", "interface": "eth2"}
RDMA = {"node": "gpu-node-1", "device": "mlx5_0", "port": "1"}
LEAF = {"node": "leaf1", "interface": "Ethernet4", "queue": "3"}


def _series(t0: int) -> list[tuple[str, dict[str, str], object]]:
    """(metric, labels, value at elapsed seconds e) of every series."""
    return [
        ("aifabric_port_priority_bytes_total", {**HOST, "direction": "rx", "priority": "0"},
         lambda e: 5_000_000 + 10_000 * e),
        ("aifabric_port_priority_bytes_total", {**HOST, "direction": "tx", "priority": "0"},
         lambda e: 7_000_000 + 20_000 * e),
        ("aifabric_port_priority_bytes_total", {**HOST, "direction": "rx", "priority": "3"},
         lambda e: 0),
        ("aifabric_port_pfc_frames_total", {**HOST, "direction": "rx", "priority": "3"},
         lambda e: 0),
        ("aifabric_rdma_out_of_sequence_total", RDMA, lambda e: 100 + e),
        ("aifabric_rdma_local_ack_timeouts_total", RDMA, lambda e: 3),
        ("aifabric_pfcwd_storms_detected_total", LEAF, lambda e: e // 900),
        ("aifabric_pfcwd_storms_restored_total", LEAF, lambda e: e // 900),
        ("aifabric_pfcwd_dropped_packets_total", {**LEAF, "direction": "tx"},
         lambda e: 50 * (e // 900)),
    ]  # fmt: skip


def openmetrics(t0: int, seconds: int) -> str:
    """Samples every STEP_S from t0 for ``seconds``, one series after the other (OpenMetrics
    wants a metric family's samples together and each series' timestamps increasing; families
    without a TYPE line are of type unknown, so ``_total`` names are kept as they are)."""
    out: list[str] = []
    for name, labels, fn in _series(t0):
        text = ",".join(f'{k}="{v}"' for k, v in labels.items())
        for e in range(0, seconds + 1, STEP_S):
            out.append(f"{name}{{{text}}} {fn(e)} {t0 + e}")  # type: ignore[operator]
    return "\n".join(out) + "\n# EOF\n"


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


@pytest.fixture
def backfilled(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """(URL, T1) of a Prometheus serving the backfilled series; stopped by PID afterwards."""
    t0 = (int(time.time()) // STEP_S) * STEP_S - 7200
    data = tmp_path / "data"
    data.mkdir()
    src = tmp_path / "fleet.om.txt"
    src.write_text(openmetrics(t0, 3600), encoding="utf-8")
    made = subprocess.run(
        [str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(src), str(data)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global: {scrape_interval: 15s, evaluation_interval: 15s}\n", encoding="utf-8")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={cfg}", f"--storage.tsdb.path={data}",
             "--storage.tsdb.retention.time=10y", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not _ready(url):
            assert proc.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
        yield url, t0 + 3600
    finally:
        stop_process(proc, 15)


def test_diagnose_reads_the_fleet_from_prometheus(backfilled: tuple[str, int]) -> None:
    url, t1 = backfilled
    res = run_cli("diagnose", "--prometheus", url, "--at", str(t1), "--window", "30m", "-F", "json")
    assert res.code == 1, res.err[-2000:]
    doc = json.loads(res.out)
    by_check = {(f["check"], f["target"]): f for f in doc["findings"]}
    lossy = by_check[("diagnose.roce-lossy-priority", "gpu-node-1")]
    assert "eth2: 100% of the bytes on priority 0 (growth over 2 snapshot(s))" in lossy["message"]
    assert "mlx5_0/1 counts out_of_sequence 1800 (growth)" in lossy["message"]
    ev = lossy["evidence"][0]
    assert ev["source"] == f"prometheus:{url}#gpu-node-1"
    assert ev["text"].startswith("aifabric_port_priority_bytes_total{")
    storm = by_check[("diagnose.pfc-storm", "leaf1")]
    assert "detected 2 storm(s) on one port (Ethernet4; lossless queue(s) 3)" in storm["message"]
    assert "dropped 100 packet(s)" in storm["message"]
    assert any("window 1800 s" in n for n in doc["not_checked"])
    assert {i["subject"] for i in doc["inputs"]} == {"gpu-node-1", "leaf1"}
