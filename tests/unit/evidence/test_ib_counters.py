"""``perfquery`` and ``ibqueryerrors`` (infiniband-diags): real captures under
``tests/fixtures/evidence/{perfquery,ibqueryerrors}/``; field names per libibmad ``fields.c``
(current and pre-2010), mapped to the kernel's sysfs counter names; the ``phy_errors`` they feed."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.derive_counters import IB_PHY_COUNTERS
from aifabric.checks.diagnose.engine import Evidence, diagnose, load_evidence
from aifabric.evidence.ib_counters import IB_SYSFS_NAMES, IbErrorsSummary
from aifabric.evidence.rdma_counters import RdmaCounters
from aifabric.findings import Finding
from tests.unit.evidence.fixtures import FIXTURES, case


def _recs(kind: str, name: str) -> list[RdmaCounters]:
    return case(kind, name).parse().of_type(RdmaCounters)


def test_extended_counters_of_a_switch_port() -> None:
    [rec] = _recs("perfquery", "infiniband-exporter-992ebe1-switch-port-discards")
    assert (rec.device, rec.port, rec.source) == ("LID 2052", 1, "perfquery-extended")
    c = rec.counters
    assert c["port_xmit_discards"] == 20046 and c["port_xmit_wait"] == 41864608
    assert c["link_downed"] == 1 and c["port_rcv_switch_relay_errors"] == 7
    assert c["port_xmit_data"] == 178791657177235
    assert rec.errors["port_xmit_discards"] == 20046  # classified as an error counter


def test_two_blocks_are_two_ports() -> None:
    recs = _recs("perfquery", "infiniband-exporter-992ebe1-switch-two-ports")
    assert [(r.device, r.port) for r in recs] == [("LID 1719", 1), ("LID 1719", 2)]


def test_pre_2010_names_map_to_the_same_counters() -> None:
    [rec] = _recs("perfquery", "ompi-users-5580-old-counter-names")
    c = rec.counters
    assert (c["symbol_error"], c["link_error_recovery"], c["port_rcv_errors"]) == (7836, 255, 24058)
    assert c["port_xmit_discards"] == 3176 and c["port_xmit_data"] == 1930
    assert rec.device == "LID 12"


def test_headerless_block_and_all_zero_block() -> None:
    [rec] = _recs("perfquery", "ibsim-e692dcc-xmitwait-headerless")
    assert rec.port is None and rec.counters["port_xmit_wait"] == 123
    [zero] = _recs("perfquery", "infiniband-diags-16-rhel75-ext-all-zero")
    assert zero.nonzero_errors() == {}


def test_every_physical_counter_has_a_libibmad_name() -> None:
    assert set(IB_PHY_COUNTERS) <= set(IB_SYSFS_NAMES.values())


def test_ibqueryerrors_fabric_ports_and_summary() -> None:
    res = case("ibqueryerrors", "linux-rdma-20210316-sx6036-cx3-fabric").parse()
    ports = res.of_type(RdmaCounters)
    [summary] = res.of_type(IbErrorsSummary)
    assert (summary.nodes_checked, summary.bad_nodes) == (4, 4)
    assert (summary.ports_checked, summary.bad_ports) == (43, 14)
    assert len(ports) == summary.bad_ports  # "port ALL" (a switch's sum) is not a port
    p5 = next(r for r in ports if r.device == "MF0;ys23ib4:SX6036/U1" and r.port == 5)
    assert p5.counters["symbol_error"] == 65535 and p5.counters["port_xmit_discards"] == 649
    ca = next(r for r in ports if r.device == "dl380g7 mlx4_0" and r.port == 1)
    assert ca.counters == {"VL15_dropped": 14, "port_xmit_wait": 4294967295}


def test_ibqueryerrors_old_two_line_format_merges_one_port() -> None:
    [old] = _recs("ibqueryerrors", "rdma-core-8d673b4-old-two-lines-details")
    [new] = _recs("ibqueryerrors", "rdma-core-8d673b4-new-one-line-details")
    assert old.counters == new.counters == {
        "port_xmit_discards": 8, "PortNeighborMTUDiscards": 8,
    }  # fmt: skip


def _phy(ev: Evidence) -> list[Finding]:
    return [f for f in diagnose(ev).findings if f.check == "diagnose.phy-errors"]


def test_saturated_symbol_errors_are_phy_errors() -> None:
    path = FIXTURES / "ibqueryerrors" / "linux-rdma-20210316-sx6036-cx3-fabric" / "input.txt"
    found = _phy(load_evidence([path]))
    assert {f.cause for f in found} == {"fabric.optics"}
    assert any("SX6036/U1/5" in f.message and "symbol_error 65535" in f.message for f in found)


def _snap(lid: int, symbol: int, downed: int) -> str:
    return (
        f"# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\n"
        "PortSelect:......................1\n"
        f"SymbolErrorCounter:..............{symbol}\n"
        f"LinkDownedCounter:...............{downed}\n"
        "PortRcvErrors:...................0\n"
    )


def test_link_downed_counts_only_when_it_grows(tmp_path: Path) -> None:
    one = tmp_path / "one.txt"
    one.write_text(_snap(7, 0, 3))  # a since-boot total of link downs: peers reboot
    assert not _phy(load_evidence([one]))
    two = tmp_path / "two.txt"
    two.write_text(_snap(7, 0, 3) + "\n" + _snap(7, 4, 5))
    [f] = _phy(load_evidence([two]))
    assert "symbol_error 4" in f.message and "link down events 2" in f.message


def test_ibqueryerrors_port_lines_grepped_out_of_a_report() -> None:
    # `grep PortXmitWait report.txt`: the port lines of a real capture without their
    # "Errors for" node lines are still ibqueryerrors, with the same counters
    from aifabric.evidence import detect_kind, parse_text  # noqa: PLC0415

    c = case("ibqueryerrors", "linux-rdma-20210316-sx6036-cx3-fabric")
    rows = [
        ln.lstrip("> ").strip() for ln in c.text().splitlines()
        if "GUID 0x" in ln and "port ALL" not in ln
    ]  # fmt: skip
    text = "$ grep PortXmitWait ibqueryerrors.txt\n" + "\n".join(rows) + "\n"
    assert detect_kind(text) == "ibqueryerrors"
    got = parse_text(text, "ibqueryerrors").of_type(RdmaCounters)
    assert [(r.attributes["guid"], r.port) for r in got][:2] == [
        ("0x7cfe900300179b31", 1), ("0x7cfe900300179b32", 2),
    ]  # fmt: skip
    assert got[0].counters["VL15_dropped"] == 14
