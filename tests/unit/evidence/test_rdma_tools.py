"""ibdev2netdev, rdma link and ibv_devices parsers against real captures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.rdma_tools import (
    Ibdev2netdev,
    IbvDevicesList,
    RdmaLink,
    parse_ibdev2netdev,
    parse_ibv_devices,
    parse_rdma_link,
)
from tests.unit.evidence.fixtures import (
    all_cases,
    assert_garbage_line_is_one_warning,
    draw_garbage_insertion,
    load,
)

KINDS = ("ibdev2netdev", "rdma-link", "ibv-devices")
CASES = [c for c in all_cases() if c.kind in KINDS]
PARSERS = {
    "ibdev2netdev": parse_ibdev2netdev,
    "rdma-link": parse_rdma_link,
    "ibv-devices": parse_ibv_devices,
}


def test_at_least_three_fixtures_per_kind() -> None:
    for kind in KINDS:
        assert sum(c.kind == kind for c in CASES) >= 3, kind


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    assert detect_kind(c.text()) == c.kind
    res = c.parse()
    assert res.records
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("kind", "name", "after"),
    [
        ("ibdev2netdev", "ucx-2534-ib-and-roce-mixed-down", 2),
        ("ibdev2netdev", "sriov-cni-docs-cx4-vfs-verbose", 7),
        ("rdma-link", "pmem-shuffle-docs-old-format-i40iw-mlx5", 3),
        ("ibv-devices", "nvshmem-51-four-cx-with-pvrdma-warning", 4),
        ("ibv-devices", "rxe-dev-48-no-userspace-driver-empty", 2),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(
    kind: str, name: str, after: int
) -> None:
    assert_garbage_line_is_one_warning(kind, name, after)


# ---- ibdev2netdev ---------------------------------------------------------------------------


def test_ibdev2netdev_mixed_ib_and_ethernet() -> None:
    recs = load("ibdev2netdev", "ucx-2534-ib-and-roce-mixed-down").of_type(Ibdev2netdev)
    assert [(r.device, r.port, r.netdev, r.netdev_state, r.line) for r in recs] == [
        ("mlx5_0", 1, "ib0", "Down", 2),
        ("mlx5_1", 1, "ib1", "Up", 3),
        ("mlx5_2", 1, "enp23s0f0", "Up", 4),
        ("mlx5_3", 1, "enp23s0f1", "Down", 5),
    ]
    assert all(r.pci is None and r.port_state is None for r in recs)


def test_ibdev2netdev_plain_and_verbose_with_vfs() -> None:
    recs = load("ibdev2netdev", "sriov-cni-docs-cx4-vfs-verbose").of_type(Ibdev2netdev)
    assert len(recs) == 8
    plain, verbose = recs[:2], recs[2:]
    assert [(r.device, r.netdev, r.netdev_state) for r in plain] == [
        ("mlx5_0", "enp2s0f0", "Up"),
        ("mlx5_1", "enp2s0f1", "Up"),
    ]
    pf = verbose[0]
    assert (pf.pci, pf.device, pf.device_id, pf.part_number) == (
        "0000:02:00.0",
        "mlx5_0",
        "MT4115",
        "MT1523X04353",
    )
    assert (pf.description, pf.firmware, pf.port, pf.port_state) == (
        "CX456A - ConnectX-4 QSFP",
        "12.23.1020",
        1,
        "ACTIVE",
    )
    assert (pf.netdev, pf.netdev_state, pf.line) == ("enp2s0f0", "Up", 7)
    vf = verbose[2]
    assert (vf.pci, vf.device, vf.device_id, vf.part_number, vf.description) == (
        "0000:02:00.5",
        "mlx5_2",
        "MT4116",
        "NA",
        None,
    )
    assert (vf.port_state, vf.netdev, vf.netdev_state) == ("DOWN", "enp2s0f2", "Down")
    assert [r.pci for r in verbose[2:]] == [
        "0000:02:00.5",
        "0000:02:00.6",
        "0000:02:00.7",
        "0000:02:00.2",
    ]


def test_ibdev2netdev_indented_markdown_block() -> None:
    recs = load("ibdev2netdev", "daocloud-docs-cx5-roce-up").of_type(Ibdev2netdev)
    assert [(r.device, r.netdev, r.netdev_state) for r in recs] == [
        ("mlx5_0", "enp4s0f0np0", "Up"),
        ("mlx5_1", "enp4s0f1np1", "Up"),
    ]


# ---- rdma link ------------------------------------------------------------------------------


def test_rdma_link_current_format() -> None:
    recs = load("rdma-link", "daocloud-docs-cx5-active").of_type(RdmaLink)
    assert [(r.device, r.port, r.state, r.physical_state, r.netdev) for r in recs] == [
        ("mlx5_0", 1, "ACTIVE", "LINK_UP", "enp4s0f0np0"),
        ("mlx5_1", 1, "ACTIVE", "LINK_UP", "enp4s0f1np1"),
    ]
    assert all(r.is_up for r in recs)


def test_rdma_link_soft_roce() -> None:
    (rec,) = load("rdma-link", "3fs-263-soft-roce-rxe").of_type(RdmaLink)
    assert (rec.device, rec.port, rec.state, rec.physical_state, rec.netdev, rec.line) == (
        "rxe_0",
        1,
        "ACTIVE",
        "LINK_UP",
        "p1p1",
        2,
    )


def test_rdma_link_old_indexed_format_with_iwarp_nop() -> None:
    recs = load("rdma-link", "pmem-shuffle-docs-old-format-i40iw-mlx5").of_type(RdmaLink)
    assert [(r.device, r.state, r.physical_state, r.netdev, r.is_up) for r in recs] == [
        ("i40iw0", "DOWN", "NOP", None, False),
        ("i40iw1", "ACTIVE", "NOP", None, True),
        ("mlx5_0", "DOWN", "DISABLED", "ens803f0", False),
        ("mlx5_1", "ACTIVE", "LINK_UP", "ens803f1", True),
    ]


def test_rdma_link_json_keys_of_iproute2() -> None:
    # `rdma -j link`: the keys iproute2 rdma/link.c prints with print_*(PRINT_ANY, "<key>", ...)
    doc = [
        {
            "ifindex": 0,
            "ifname": "mlx5_0",
            "port": 1,
            "subnet_prefix": "fe80:0000:0000:0000",
            "lid": 3,
            "sm_lid": 1,
            "lmc": 0,
            "state": "INIT",
            "physical_state": "LINK_UP",
        }
    ]
    res = parse_rdma_link(json.dumps(doc))
    (rec,) = res.of_type(RdmaLink)
    assert (rec.device, rec.port, rec.lid, rec.sm_lid, rec.state) == ("mlx5_0", 1, 3, 1, "INIT")
    assert not rec.is_up
    assert not res.warnings


# ---- ibv_devices ----------------------------------------------------------------------------


def test_ibv_devices_four_devices_and_an_unrelated_provider_warning() -> None:
    (rec,) = load("ibv-devices", "nvshmem-51-four-cx-with-pvrdma-warning").of_type(IbvDevicesList)
    assert [(d.name, d.node_guid) for d in rec.devices] == [
        ("mlx5_0", "e89e490300356eaa"),
        ("mlx5_1", "e89e490300356eab"),
        ("mlx5_2", "e89e490300356c6a"),
        ("mlx5_3", "e89e490300356c6b"),
    ]
    assert len(rec.verbs_warnings) == 1 and "libvmw_pvrdma" in rec.verbs_warnings[0]
    assert (rec.line, rec.end_line) == (1, 7)


def test_ibv_devices_empty_with_missing_provider() -> None:
    (rec,) = load("ibv-devices", "rxe-dev-48-no-userspace-driver-empty").of_type(IbvDevicesList)
    assert rec.devices == [] and rec.header_seen
    assert [w.split("Warning: ")[1][:22] for w in rec.verbs_warnings] == [
        "couldn't load driver '",
        "no userspace device-sp",
    ]
    assert (rec.line, rec.end_line) == (2, 5)


def test_ibv_devices_empty_listing() -> None:
    (rec,) = load("ibv-devices", "rxe-dev-75-arria10-empty").of_type(IbvDevicesList)
    assert (rec.devices, rec.verbs_warnings, rec.error) == ([], [], None)


def test_ibv_devices_library_failure() -> None:
    # perror("Failed to get IB devices list") in rdma-core libibverbs/examples/device_list.c
    res = parse_ibv_devices("Failed to get IB devices list: Function not implemented\n")
    (rec,) = res.of_type(IbvDevicesList)
    assert rec.error == "Function not implemented" and rec.devices == []


# ---- properties -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    for parse in PARSERS.values():
        parse(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inserted_garbage_line_gives_exactly_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, CASES, PARSERS.__getitem__)
