"""sysfs-infiniband: ``grep -r -H . /sys/class/infiniband/...`` port state, GIDs and counters."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import ParseResult, detect_kind, detect_scores, parse_text
from aifabric.evidence.rdma_counters import RdmaCounters, parse_rdma_counters
from aifabric.evidence.sysfs_rdma import (
    SysfsGid,
    SysfsRdmaDevices,
    SysfsRdmaPort,
    parse_sysfs_infiniband,
)
from tests.unit.evidence.fixtures import GARBAGE, GARBAGE_LINES, Case, all_cases, case, load

KIND = "sysfs-infiniband"
CASES = [c for c in all_cases() if c.kind == KIND]
ROCE = "kernel-format-roce-mlx5-grep-r-ports"
IB = "kernel-format-ib-grep-r-class-tree"
P = "/sys/class/infiniband/mlx5_0/ports/1"


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == KIND
    res = c.parse()
    if c.text().lstrip("$#> ").startswith("ls"):  # ls /sys/class/infiniband: device names only
        assert res.of_type(SysfsRdmaDevices)
    elif "/pkeys/" in c.text() and "/gids/" not in c.text():  # a P_Key table only
        assert res.of_type(SysfsRdmaPort)
    else:
        assert res.of_type(SysfsRdmaPort) and res.of_type(SysfsGid)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_roce_port_and_rocev2_ipv4_gid_index_3() -> None:
    res = load(KIND, ROCE)
    (port,) = res.of_type(SysfsRdmaPort)
    assert (port.device, port.port, port.state, port.phys_state) == (
        "mlx5_0",
        1,
        "ACTIVE",
        "LinkUp",
    )
    assert (port.link_layer, port.rate_gbps, port.lid) == ("Ethernet", 100.0, 0)
    assert (port.line, port.end_line) == (10, 46)  # pkeys/0 first, phys_state last
    gids = {g.index: g for g in res.of_type(SysfsGid)}
    assert sorted(gids) == [0, 1, 2, 3]  # 4-7 are all zero: unused slots are no records
    v2 = [g for g in gids.values() if g.gid_type == "RoCE v2" and g.ipv4]
    assert [(g.index, g.ipv4, g.ndev) for g in v2] == [(3, "10.0.0.1", "ens1f0np0")]
    g3 = gids[3]
    assert g3.gid == "0000:0000:0000:0000:0000:ffff:0a00:0001"
    assert (g3.line, g3.end_line) == (5, 28)  # ndevs/3 first, gids/3 last
    assert (gids[0].gid_type, gids[0].ipv4) == ("IB/RoCE v1", None)
    assert gids[1].gid == "fe80:0000:0000:0000:0ac0:ebff:fe79:391a"


def test_counter_lines_become_rdma_counters_records() -> None:
    res = load(KIND, ROCE)
    hw, pma = res.of_type(RdmaCounters)
    assert (hw.device, hw.port, hw.source) == ("mlx5_0", 1, "sysfs-hw_counters")
    assert hw.congestion == {
        "np_ecn_marked_roce_packets": 4021, "np_cnp_sent": 3990, "rp_cnp_handled": 1875,
        "rp_cnp_ignored": 0,
    }  # fmt: skip
    assert hw.nonzero_errors() == {"out_of_sequence": 12, "packet_seq_err": 3}
    assert (hw.line, hw.end_line, hw.counter_lines["np_cnp_sent"]) == (12, 22, 20)
    assert pma.source == "sysfs-counters" and pma.counters["port_rcv_data"] == 4070294310
    # the same lines alone, through the rdma-hw-counters parser, give the same counters
    lines = [ln for ln in case(KIND, ROCE).text().splitlines() if "counters/" in ln]
    alone = parse_rdma_counters("\n".join(lines)).of_type(RdmaCounters)
    assert [r.counters for r in alone] == [hw.counters, pma.counters]


def test_infiniband_tree_two_ports_and_device_files() -> None:
    res = load(KIND, IB)
    up, down = res.of_type(SysfsRdmaPort)
    assert (up.device, up.port, up.link_layer, up.rate_gbps, up.lid) == (
        "mlx5_2",
        1,
        "InfiniBand",
        400.0,
        0x1A,
    )
    assert (down.port, down.state, down.phys_state, down.rate_gbps, down.lid) == (
        2,
        "DOWN",
        "Disabled",
        None,
        0xFFFF,
    )
    g0, g2 = res.of_type(SysfsGid)
    assert (g0.port, g0.index, g0.gid_type, g0.ndev, g0.ipv4) == (1, 0, "IB/RoCE v1", None, None)
    assert g0.gid == "fe80:0000:0000:0000:b8ce:f603:00a1:b2c2" and g2.port == 2
    pma, hw = res.of_type(RdmaCounters)
    assert pma.errors["link_downed"] == 1 and pma.counters["port_xmit_wait"] == 270528
    assert hw.nonzero_errors() == {"local_ack_timeout_err": 2}


def test_glob_form_rates_and_types_only() -> None:
    text = (
        "# grep . /sys/class/infiniband/*/ports/*/{state,rate,gids/3,gid_attrs/types/3}\n"
        "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n"
        "/sys/class/infiniband/mlx5_0/ports/1/rate:2.5 Gb/sec (1X)\n"
        "/sys/class/infiniband/mlx5_1/ports/1/rate:200 Gb/sec (2X NDR)\n"
        "/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/3:RoCE v2\n"
    )
    res = parse_sysfs_infiniband(text)
    assert not res.warnings
    a, b = res.of_type(SysfsRdmaPort)
    assert (a.state, a.rate_gbps, b.device, b.rate_gbps) == ("ACTIVE", 2.5, "mlx5_1", 200.0)
    assert not res.of_type(SysfsGid)  # a type without its GID is no record


def test_cut_and_garbled_values_are_warnings() -> None:
    text = (
        f"{P}/state:4: ACTIVE\n"
        f"{P}/gids/3:0000:0000:0000:0000:0000:ffff:0a00:00\n"  # cut GID
        f"{P}/gid_attrs/types/3:RoCE v\n"  # cut type
        f"{P}/phys_sta\n"  # cut path
        f"{P}/rate:fast\n"
        f"{P}/lid:0x0\n"
    )
    res = parse_sysfs_infiniband(text)
    assert [w.line for w in res.warnings] == [2, 3, 4, 5]
    (port,) = res.of_type(SysfsRdmaPort)
    assert (port.state, port.lid, port.rate_gbps) == ("ACTIVE", 0, None)
    assert not res.of_type(SysfsGid)


def test_detection_leaves_counter_only_listings_to_rdma_hw_counters() -> None:
    text = f"{P}/hw_counters/np_cnp_sent:7\n{P}/counters/port_rcv_data:81408901908\n"
    assert detect_kind(text) == "rdma-hw-counters"
    assert not [k for _, k in detect_scores(text) if k == KIND]
    res = parse_sysfs_infiniband(text)  # still read when the kind is given
    assert [r.counters for r in res.of_type(RdmaCounters)] == [
        {"np_cnp_sent": 7},
        {"port_rcv_data": 81408901908},
    ]


def _comparable(res: ParseResult) -> list[object]:
    """Records without line numbers: ``line``, ``end_line`` and the counter records'
    ``counter_lines`` (the shared ``without_lines`` keeps that dict of line numbers)."""
    out: list[object] = []
    for rec in res.records:
        js = {k: v for k, v in rec.to_json().items() if k not in {"line", "end_line"}}
        js.pop("counter_lines", None)
        out.append(js)
    return out


def _insert(text: str, pos: int, junk: str) -> str:
    lines = text.splitlines()
    return "\n".join([*lines[:pos], junk, *lines[pos:]])


@pytest.mark.parametrize(("name", "after"), [(ROCE, 0), (ROCE, 15), (ROCE, 27), (IB, 22)])
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    text = case(KIND, name).text()
    before = parse_text(text, KIND)
    res = parse_text(_insert(text, after, GARBAGE), KIND)
    new = [w for w in res.warnings if w.text == GARBAGE]
    assert len(new) == 1 and new[0].line == after + 1
    assert len(res.warnings) == len(before.warnings) + 1
    assert _comparable(res) == _comparable(before)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_sysfs_infiniband(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inserted_garbage_line_gives_exactly_one_warning(data: st.DataObject) -> None:
    # fixtures.draw_garbage_insertion, comparing records without counter_lines too
    c = data.draw(st.sampled_from(CASES))
    text = c.text()
    pos = data.draw(st.integers(0, len(text.splitlines())))
    before = parse_text(text, KIND)
    after = parse_text(_insert(text, pos, data.draw(GARBAGE_LINES)), KIND)
    assert len(after.warnings) == len(before.warnings) + 1
    assert _comparable(after) == _comparable(before)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 255),
    st.ip_addresses(v=4),
    st.sampled_from(["RoCE v2", "IB/RoCE v1"]),
    st.from_regex(r"[a-z][a-z0-9]{0,14}", fullmatch=True),
)
def test_ipv4_mapped_gid_round_trip(index: int, addr: object, gid_type: str, ndev: str) -> None:
    packed = int.from_bytes(addr.packed, "big")  # type: ignore[attr-defined]
    gid = f"0000:0000:0000:0000:0000:ffff:{packed >> 16:04x}:{packed & 0xFFFF:04x}"
    text = (
        f"{P}/gids/{index}:{gid}\n"
        f"{P}/gid_attrs/types/{index}:{gid_type}\n"
        f"{P}/gid_attrs/ndevs/{index}:{ndev}\n"
    )
    (rec,) = parse_sysfs_infiniband(text).of_type(SysfsGid)
    assert (rec.index, rec.gid, rec.gid_type, rec.ndev, rec.ipv4) == (
        index,
        gid,
        gid_type,
        ndev,
        str(addr),
    )


def test_cat_of_one_sysfs_file_reads_the_value_on_the_next_line() -> None:
    res = load(KIND, "nc24rsv3-cat-pkeys-two-vms")
    (port,) = res.of_type(SysfsRdmaPort)
    # both VMs print mlx4_0 port 1: the second VM's values are the ones kept (0x8005, 0x7fff)
    assert (port.device, port.port, port.pkeys) == ("mlx4_0", 1, {0: 0x8005, 1: 0x7FFF})
    assert port.state is None and not res.warnings


def test_cat_of_state_and_gid_type_are_judged(tmp_path: Path) -> None:
    # kernel sysfs.c formats: state "%d: %s", gid_attrs/types "RoCE v2"
    text = (
        "$ cat /sys/class/infiniband/mlx5_0/ports/1/state\n"
        "1: DOWN\n"
        "$ cat /sys/class/infiniband/mlx5_0/ports/1/phys_state\n"
        "3: Disabled\n"
        "$ cat /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3\n"
        "RoCE v2\n"
        "$ cat /sys/class/infiniband/mlx5_0/ports/1/gids/3\n"
        "0000:0000:0000:0000:0000:ffff:0a00:0001\n"
    )
    assert detect_kind(text) == KIND
    res = parse_sysfs_infiniband(text)
    (port,) = res.of_type(SysfsRdmaPort)
    assert (port.state, port.phys_state) == ("DOWN", "Disabled")
    (gid,) = res.of_type(SysfsGid)
    assert (gid.index, gid.gid_type, gid.ipv4) == (3, "RoCE v2", "10.0.0.1")
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    path = tmp_path / "sysfs.txt"
    path.write_text(text, encoding="utf-8")
    found = {(f.check, f.severity) for f in diagnose(load_evidence([path])).findings}
    assert ("diagnose.ib-port-down", "warning") in found or (
        "diagnose.ib-port-down", "error"
    ) in found, found
