"""Probe in the lab: every lab node probed in its namespace into one bundle; with one spine port
at MTU 1500, `diagnose` and `verify --bundle` name that link from the bundle alone, and the
probe's own DF bisection measures the path MTU of exactly that link."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from aifabric.catalog import load_catalog
from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.cli.verify_cmd import run_verify
from aifabric.design import load_fabric
from aifabric.lab.faults import add_fault
from aifabric.lab.lifecycle import lab_down, lab_up
from aifabric.probe.sweep import lab_runners, sweep
from tests.integration.lab.conftest import ROOT, needs_lab, new_name

pytestmark = needs_lab

LAB_2X2 = ROOT / "tests" / "fixtures" / "lab" / "lab-2x2.yaml"


def test_probe_every_lab_node_and_name_the_bad_link(tmp_path: Path) -> None:
    name = new_name("p")
    fabric = load_fabric(LAB_2X2, load_catalog())
    try:
        plan = lab_up(fabric, name).plan
        add_fault(name, "mtu-mismatch", link="spine01:leaf02", value="1500")
        out = tmp_path / "bundle"
        result = asyncio.run(sweep(lab_runners(plan), out, concurrency=8, tarball=True))
    finally:
        lab_down(name)
    assert [o.host for o in result.outcomes] == list(plan.nodes)
    assert all(o.ok for o in result.outcomes), [o.error for o in result.outcomes if not o.ok]
    assert {p.name for p in out.iterdir() if p.is_dir()} == set(plan.nodes)
    assert (out / "manifest.json").is_file() and result.tarball is not None
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest  # commands, exit codes and times are kept

    # the DF bisection across each numbered switch link: only leaf02 -> spine01 over the faulty
    # link is short. veth accepts 4 bytes over its MTU (room for a VLAN tag), so 1500..1504.
    links = [m for m in result.mtu if m["host"] == "leaf02" and "spine01" in m["peer_label"]]
    bad = next(i for i in plan.nodes["leaf02"].ifaces if i.peer == "spine01").name
    by_iface = {m["peer_label"].split(" via ")[1]: m["path_mtu"] for m in links}
    assert 1500 <= by_iface[bad] <= 1504
    assert all(v == 9216 for k, v in by_iface.items() if k != bad)

    findings = diagnose(load_evidence([out], fabric=fabric, catalog=load_catalog())).findings
    assert any(f.cause == "fabric.mtu" and f.severity == "error" for f in findings), [
        (f.check, f.cause, f.message) for f in findings]
    run = run_verify(fabric, load_catalog(), bundle=out)
    mtu = [f for f in run.findings if f.check == "verify.mtu-path" and f.severity == "error"]
    port = next(i.name for i in plan.nodes["spine01"].ifaces if i.peer == "leaf02")
    assert [f.target for f in mtu] == [f"spine01:{port}"]
