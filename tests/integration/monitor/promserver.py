"""A real Prometheus (Debian package) for the monitor integration tests: 127.0.0.1, a temporary
config and data directory, stopped by PID (import the fixture into a test module)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import stop_process

PROMETHEUS = shutil.which("prometheus")
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None or shutil.which("promtool") is None,
    reason="needs prometheus and promtool: apt-get install -y prometheus",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Prom:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, **params: str) -> Any:
        q = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{q}", timeout=5) as r:
            data = json.loads(r.read())
        assert data["status"] == "success", data
        return data["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        return list(self.api("query", query=expr)["result"])


def wait_for(pred: Any, timeout: float, step: float = 0.2) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(step)
    return None


@pytest.fixture
def prometheus_factory(tmp_path: Path) -> Iterator[Any]:
    """start(scrape_targets, rule_file) -> Prom; every Prometheus started is stopped by PID."""
    started: list[subprocess.Popen[bytes]] = []

    def start(targets: list[str], rules: Path | None = None) -> Prom:
        port = free_port()
        cfg = tmp_path / "prometheus.yml"
        lines = ["global: {scrape_interval: 1s, evaluation_interval: 1s}"]
        if rules is not None:
            lines.append(f"rule_files: [{json.dumps(str(rules))}]")
        lines += [
            "scrape_configs:",
            "  - job_name: aifabric",
            f"    static_configs: [{{targets: {json.dumps(targets)}}}]",
        ]
        cfg.write_text("\n".join(lines) + "\n")
        log = tmp_path / "prometheus.log"
        proc = subprocess.Popen(
            [
                str(PROMETHEUS),
                f"--config.file={cfg}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        started.append(proc)
        prom = Prom(f"http://127.0.0.1:{port}", proc, log)

        def ready() -> bool:
            try:
                with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False

        assert wait_for(ready, 20), log.read_text()[-2000:]
        return prom

    try:
        yield start
    finally:
        for proc in started:
            stop_process(proc)
