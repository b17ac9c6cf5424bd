"""The exporter against a real lab, scraped by a real Prometheus that evaluates the generated
rules: counters move when the lab's loss fault is on, and the matching alert goes pending then
firing (issue 21, "Must show").

Known answers: srv01 sends a steady 4 Mb/s TCP stream to srv05 (well under the 100 Mb/s the
lab shapes its 100G links to at --rate-scale 1000, so a healthy path drops nothing and TCP
retransmits nothing: the ratio stays under the alert's 1 %). With 5 % loss on srv05's end of its
link (both directions), about one data segment in twenty is lost and retransmitted (measured
by hand in this lab: 64 retransmissions in 1,038 segments, 6 %), and the retransmission ratio
rate(RetransSegs)/rate(OutSegs) is far above 1 %: the alert must go pending, then firing after
its ``for``. The exporter and Prometheus run as separate processes and are stopped by PID.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aifabric.catalog import load_catalog
from aifabric.cli.app import app
from aifabric.design import load_fabric
from aifabric.lab.faults import add_fault, clear_faults
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.lab.plan import LabPlan
from tests.conftest import run_cli, stop_process

from ..lab.conftest import MISSING, ROOT, new_name
from .promserver import Prom, free_port, needs_prometheus, prometheus_factory, wait_for

__all__ = ["prometheus_factory"]

pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
    needs_prometheus,
]

LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"
ALERT = "AifabricTcpRetransmissions"


@pytest.fixture(scope="module")
def lab() -> Iterator[LabPlan]:
    name = new_name("m")
    try:
        state = lab_up(
            load_fabric(LAB_2X2, load_catalog()), name, routing="static", rate_scale=1000
        )
        assert state.converged is True
        yield state.plan
    finally:
        lab_down(name)


def _value(prom: Prom, expr: str) -> float | None:
    got = prom.query(expr)
    return float(got[0]["value"][1]) if got else None


def _alert_state(prom: Prom, node: str) -> str | None:
    for a in prom.api("alerts")["alerts"]:
        if a["labels"].get("alertname") == ALERT and a["labels"].get("node") == node:
            return str(a["state"])
    return None


def _start_exporter(
    lab: LabPlan, tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> tuple[int, Path]:
    """``aifabric monitor exporter --lab`` as its own process (stopped by the caller, by PID)."""
    port = free_port()
    log = tmp_path / "exporter.log"
    argv = [sys.executable, "-m", "aifabric", "monitor", "exporter", "--lab", lab.name,
            "--listen", f"127.0.0.1:{port}"]  # fmt: skip
    procs.append(subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT))
    return port, log


def test_loss_fault_moves_counters_and_fires_the_alert(
    lab: LabPlan, tmp_path: Path, prometheus_factory: Any
) -> None:
    rules = tmp_path / "rules.yml"
    res = CliRunner().invoke(
        app, ["monitor", "rules", "-o", str(rules), "--window", "10s", "--for", "4s"]
    )
    assert res.exit_code == 0, res.output
    procs: list[subprocess.Popen[bytes]] = []
    try:
        port, exporter_log = _start_exporter(lab, tmp_path, procs)
        prom: Prom = prometheus_factory([f"127.0.0.1:{port}"], rules)
        up = wait_for(lambda: _value(prom, 'up{job="aifabric"}') == 1.0, 30)
        assert up, exporter_log.read_text()[-2000:]
        # every lab node is there, with its interfaces named as the lab names them
        nodes = {r["metric"]["node"] for r in prom.query("aifabric_link_mtu_bytes")}
        assert nodes == set(lab.nodes)
        srv01, srv05 = lab.nodes["srv01"], lab.nodes["srv05"]
        dst = next(i.address for i in srv05.ifaces if i.address).split("/")[0]

        procs.append(
            subprocess.Popen(
                ["ip", "netns", "exec", srv05.ns, "iperf3", "-s", "-p", "5299"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        time.sleep(0.5)
        procs.append(
            subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    srv01.ns,
                    "iperf3",
                    "-c",
                    dst,
                    "-p",
                    "5299",
                    "-b",
                    "4M",
                    "-t",
                    "90",
                    "-l",
                    "8K",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        sent = 'aifabric_tcp_sent_segments_total{node="srv01"}'
        retrans = 'aifabric_tcp_retransmitted_segments_total{node="srv01"}'
        # healthy: segments flow, the ratio stays low, the alert stays inactive
        assert wait_for(lambda: (_value(prom, f"increase({sent}[5s])") or 0) > 50, 20)
        time.sleep(11)
        healthy = _value(prom, f"rate({retrans}[10s]) / rate({sent}[10s])")
        assert healthy is not None and healthy < 0.01, healthy
        assert _alert_state(prom, "srv01") is None
        before = _value(prom, retrans)
        assert before is not None

        # on srv05's end of its link: one data segment in twenty never reaches srv05's TCP, so
        # srv01 retransmits (a loss on leaf02's end would not work: that port is bridged, and
        # iptables does not see bridged frames)
        add_fault(lab.name, "loss", link="srv05:leaf02", value="5")
        # watch from the moment the fault is on: the alert must be seen pending, then firing
        states: list[str] = []
        end = time.monotonic() + 60
        while time.monotonic() < end:
            state = _alert_state(prom, "srv01") or "inactive"
            if not states or states[-1] != state:
                states.append(state)
            if state == "firing":
                break
            time.sleep(0.1)
        assert states[-1] == "firing", (states, prom.api("alerts"))
        assert "pending" in states and states.index("pending") < states.index("firing"), states
        after = _value(prom, retrans)
        assert after is not None and after > before, (before, after)  # the counter moved
        ratio = _value(prom, f"rate({retrans}[10s]) / rate({sent}[10s])")
        assert ratio is not None and 0.02 < ratio < 0.3, ratio
        # the alert names its node and says where to look
        alert = next(a for a in prom.api("alerts")["alerts"] if a["labels"]["alertname"] == ALERT)
        assert alert["labels"]["node"] == "srv01"
        assert "diagnose" in alert["annotations"].get("runbook_url", "")
        # only the faulty sender's node is alerting
        assert {
            a["labels"]["node"]
            for a in prom.api("alerts")["alerts"]
            if a["labels"]["alertname"] == ALERT
        } == {"srv01"}
    finally:
        clear_faults(lab.name)
        for p in reversed(procs):
            stop_process(p)


def test_diagnose_from_prometheus_names_the_host_with_the_odd_mtu(
    lab: LabPlan, tmp_path: Path, prometheus_factory: Any
) -> None:
    """The lab's MTU fault on srv06's end of its link (1500 where the fabric runs 9000):
    the exporter publishes it, Prometheus keeps it, and `diagnose --prometheus` alone names
    srv06 as the odd host among the four servers with nic0 (3 of 4 at the fabric's MTU)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        port, exporter_log = _start_exporter(lab, tmp_path, procs)
        prom: Prom = prometheus_factory([f"127.0.0.1:{port}"])
        assert wait_for(lambda: _value(prom, 'up{job="aifabric"}') == 1.0, 30), (
            exporter_log.read_text()[-2000:]
        )
        fabric_mtu = _value(prom, 'aifabric_link_mtu_bytes{node="srv01",interface="nic0"}')
        assert fabric_mtu is not None and fabric_mtu > 1500
        add_fault(lab.name, "mtu-mismatch", link="srv06:leaf02", value="1500")
        query = 'aifabric_link_mtu_bytes{node="srv06",interface="nic0"}'
        assert wait_for(lambda: _value(prom, query) == 1500.0, 20)
        got = run_cli("diagnose", "--prometheus", prom.url, "--window", "20s", "-F", "json")
        assert got.code in (0, 1), got.err  # warnings alone exit 0
        findings = got.json()["findings"]
        odd = [f for f in findings if f["check"] == "diagnose.fleet-mtu-differs"]
        assert [f["target"] for f in odd] == ["srv06"], findings
        assert odd[0]["cause"] == "fabric.mtu"
        assert "1500" in odd[0]["message"] and str(int(fabric_mtu)) in odd[0]["message"]
        assert odd[0]["evidence"][0]["source"].startswith(f"prometheus:{prom.url}#srv06")
        # nothing else in a healthy lab reads as a fault
        others = [(f["check"], f["target"]) for f in findings if f is not odd[0]]
        assert [f for f in findings if f["severity"] == "error"] == [], others
    finally:
        clear_faults(lab.name)
        for p in reversed(procs):
            stop_process(p)
