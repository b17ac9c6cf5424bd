"""verify.pfc-deadlock on a designed 2 spines x 3 leaves CLOS (hand-checked cycles)."""

from __future__ import annotations

import pytest

from aifabric.catalog import Catalog, load_catalog
from aifabric.checks import CheckContext, all_checks, run_checks
from aifabric.checks.verify import deadlock as mod
from aifabric.design import design_fabric
from aifabric.findings import Finding
from aifabric.model import DesignSpec, Fabric, PfcWatchdog, QosPolicy
from aifabric.topology.deadlock import Cycle, DeadlockReport


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def clos(catalog: Catalog) -> Fabric:
    """24 GPUs, 4 per server, one 100G NIC each: 6 servers on 3 ToR leaves, 2 spines, one
    link per leaf-spine pair (leafK:Ethernet3 -> spine01:EthernetK, Ethernet4 -> spine02)."""
    spec = DesignSpec(
        name="dl",
        gpus=24,
        gpus_per_server=4,
        nics_per_server=1,
        nic_speed_gbps=100,
        switch_ports=4,
        switch_speed_gbps=100,
        layout="tor",
    )
    fabric = design_fabric(spec, catalog).fabric
    assert sorted(s.name for s in fabric.switches) == [
        "leaf01",
        "leaf02",
        "leaf03",
        "spine01",
        "spine02",
    ]
    return fabric


def _run(fabric: Fabric, catalog: Catalog) -> list[Finding]:
    fn = all_checks()["verify.pfc-deadlock"][1]
    return list(fn(CheckContext(fabric, catalog)))


def _bare(fabric: Fabric) -> Fabric:
    """No PFC watchdog, no ASNs: nothing mitigates the bounce."""
    qos = fabric.qos.model_copy(update={"pfc_watchdog": None})
    switches = tuple(s.model_copy(update={"asn": None}) for s in fabric.switches)
    return fabric.model_copy(update={"qos": qos, "switches": switches})


def test_bounce_cycle_is_an_error_without_mitigation(clos: Fabric, catalog: Catalog) -> None:
    findings = _run(_bare(clos), catalog)
    assert len(findings) == 1
    f = findings[0]
    assert f.check == "verify.pfc-deadlock"
    assert f.severity == "error"
    # all 6 leaf-spine links bounce (see tests/unit/topology/test_deadlock.py for the reasoning)
    assert f.message.startswith("6 of 6 single switch-link failures")
    assert "none once routing has converged" in f.message
    assert f.actual == "6 failures with a cycle"
    # failure leaf01-spine01: spine01 bounces to leaf02, which climbs back to spine01
    assert f.evidence[0].text == "failure: leaf01:Ethernet3 -> spine01:Ethernet1"
    assert f.evidence[-1].text == (
        "cycle after leaf01:Ethernet3 -> spine01:Ethernet1 (to leaf01): "
        "leaf02:Ethernet3 -> spine01:Ethernet2 => spine01:Ethernet2 -> leaf02:Ethernet3 "
        "=> (back to the first)"
    )
    assert f.target == "leaf02, spine01"
    assert "S20.3" in f.explanation and "watchdog" in f.fix and "RFC 7938" in f.fix
    assert f.refs == ["S12", "S20"]


def test_watchdog_or_asn_plan_makes_it_a_warning(clos: Fabric, catalog: Catalog) -> None:
    # as designed: PFC watchdog on (drop) and RFC 7938 ASNs (spines share one): both
    # mitigations hold, so what is left is info
    (designed,) = _run(clos, catalog)
    assert designed.severity == "info"
    assert "AS-path" in designed.explanation and "watchdog" in designed.explanation
    bare = _bare(clos)
    asn_only = bare.model_copy(update={"switches": clos.switches})
    assert [f.severity for f in _run(asn_only, catalog)] == ["warning"]
    qos = clos.qos.model_copy(update={"pfc_watchdog": PfcWatchdog(action="alert")})
    watchdog_only = clos.model_copy(update={"switches": bare.switches})
    assert [f.severity for f in _run(watchdog_only, catalog)] == ["warning"]
    alert = bare.model_copy(update={"qos": qos})
    assert [f.severity for f in _run(alert, catalog)] == ["error"]


def test_no_cycle_no_finding(clos: Fabric, catalog: Catalog) -> None:
    """Doubling every leaf-spine link (a twin keeps the route) removes every bounce."""
    twins = []
    for ln in clos.links:
        twins.append(ln)
        if ln.kind == "fabric":
            twins.append(
                ln.model_copy(
                    update={
                        "a": type(ln.a)(ln.a.device, ln.a.port + "/2"),
                        "b": type(ln.b)(ln.b.device, ln.b.port + "/2"),
                    }
                )
            )
    assert _run(_bare(clos).model_copy(update={"links": tuple(twins)}), catalog) == []


def test_transports(clos: Fabric, catalog: Catalog) -> None:
    (ib,) = _run(clos.model_copy(update={"transport": "ib"}), catalog)
    assert ib.severity == "info" and "ibdiagnet" in ib.fix
    assert _run(clos.model_copy(update={"transport": "socket"}), catalog) == []
    no_pfc = clos.model_copy(update={"qos": QosPolicy(pfc_priorities=())})
    assert _run(no_pfc, catalog) == []


def test_through_run_checks(clos: Fabric, catalog: Catalog) -> None:
    found = [
        f
        for f in run_checks(CheckContext(_bare(clos), catalog), category="verify")
        if f.check == "verify.pfc-deadlock"
    ]
    assert [f.severity for f in found] == ["error"]


def test_healthy_cycle_finding(
    clos: Fabric, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Healthy-routing cycles cannot come out of a CLOS; the finding is checked on a report
    that carries one (the queues of a made-up leaf01 <-> spine01 loop)."""
    loop = ("leaf01:Ethernet3 -> spine01:Ethernet1", "spine01:Ethernet1 -> leaf01:Ethernet3")
    fake = DeadlockReport(True, "made up", healthy_cycles=[Cycle("up-down", loop)])
    monkeypatch.setattr(mod, "analyze_deadlocks", lambda fabric: fake)
    (f,) = _run(clos, catalog)
    assert f.severity == "error" and f.target == "leaf01, spine01"
    assert "healthy ECMP routing has a buffer dependency cycle of 2 queues" in f.message
    assert [e.text for e in f.evidence] == [f"cycle: {loop[0]} => {loop[1]} => (back to the first)"]
