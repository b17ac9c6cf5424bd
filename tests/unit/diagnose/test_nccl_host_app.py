"""Derived records of checks/diagnose/derive_nccl.py, with values worked out by hand."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.derive_nccl import (
    CollectiveDesync,
    NcclIface,
    NcclLinkLayers,
    rdma_make,
    virtual_kind,
)
from aifabric.checks.diagnose.engine import _DERIVERS, Evidence, Item
from aifabric.evidence.nccl_log import NcclEnv, NetDevice, NetDevices, WatchdogTimeout
from aifabric.evidence.pcie import parse_lspci


def _derive(*items: Item) -> list[Item]:
    ev = Evidence(items=list(items))
    out: list[Item] = []
    for fn in _DERIVERS:
        out.extend(fn(ev))
    return out


def _item(rec: object, subject: str = "h1") -> Item:
    return Item(rec, None, subject, "nccl-log")  # type: ignore[arg-type]


def test_virtual_kind() -> None:
    assert virtual_kind("docker0") == "Docker bridge"
    assert virtual_kind("br-3f2a9c1d7e6b") == "Docker bridge"
    assert virtual_kind("veth75fa783") == "container veth"
    assert virtual_kind("virbr0") == "libvirt bridge"
    assert virtual_kind("cali12ab") == "CNI overlay"
    assert virtual_kind("wg0") == "tunnel"
    assert virtual_kind("tun0") == "tunnel"
    assert virtual_kind("lo") == "loopback"
    for real in ("eth0", "ens5", "ib0", "ibp12s0", "bond0", "enp88s0", "eno1"):
        assert virtual_kind(real) is None, real


def test_rdma_make_from_driver_names() -> None:
    assert rdma_make("mlx5_0") == rdma_make("mlx4_1") == "NVIDIA/Mellanox ConnectX (mlx4/mlx5)"
    assert rdma_make("i40iw0") == rdma_make("irdma1") == "Intel E810/X722 (irdma)"
    assert rdma_make("bnxt_re0") == "Broadcom (bnxt_re)"
    assert rdma_make("rxe0") == "Soft-RoCE (rdma_rxe, software)"
    assert rdma_make("siw_eth0") == "Soft-iWARP (siw, software)"
    # rdma-core's predictable names say nothing of the make
    for unknown in ("rocep1s0f0", "ibp12s0", "roceP2p1s0f1", "iwp2s0"):
        assert rdma_make(unknown) is None, unknown


def test_link_layers_makes() -> None:
    mixed = NetDevices(
        line=4,
        role="ib",
        devices=(
            NetDevice(0, "mlx5_0", port=1, link_layer="RoCE"),
            NetDevice(1, "mlx5_1", port=1, link_layer="RoCE"),
            NetDevice(2, "i40iw0", port=1, link_layer="RoCE"),
        ),
    )
    soft = NetDevices(line=7, role="ib", devices=(NetDevice(0, "rxe0", port=1, link_layer="RoCE"),))
    one_make_and_soft = NetDevices(
        line=2,
        role="ib",
        devices=(
            NetDevice(0, "mlx5_0", port=1, link_layer="IB"),
            NetDevice(1, "rxe0", port=1, link_layer="RoCE"),
        ),
    )
    got = {
        i.subject: i.record
        for i in _derive(_item(mixed), _item(soft, "h2"), _item(one_make_and_soft, "h3"))
        if isinstance(i.record, NcclLinkLayers)
    }
    assert got["h1"].mixed_makes
    assert got["h1"].makes == (
        "NVIDIA/Mellanox ConnectX (mlx4/mlx5): mlx5_0:1, mlx5_1:1; "
        "Intel E810/X722 (irdma): i40iw0:1"
    )
    assert not got["h2"].mixed_makes and got["h2"].makes == "Soft-RoCE (rdma_rxe, software): rxe0:1"
    # a software device beside one hardware make is not two hardware makes
    assert not got["h3"].mixed_makes


def test_ifaces_one_record_per_device() -> None:
    rec = NetDevices(
        line=2,
        role="bootstrap",
        devices=(
            NetDevice(0, "ens5", address="172.31.0.137"),
            NetDevice(1, "veth75fa783", address="fe80::14ad:64ff:fe64:b31e%veth75fa783"),
        ),
    )
    got = [i.record for i in _derive(_item(rec)) if isinstance(i.record, NcclIface)]
    assert [(r.name, r.virtual_kind, r.link_local, r.role) for r in got] == [
        ("ens5", None, False, "bootstrap"),
        ("veth75fa783", "container veth", True, "bootstrap"),
    ]
    assert all(r.line == 2 for r in got)


def test_link_layers_mixed_and_hca_env() -> None:
    ib = NetDevices(
        line=3,
        role="ib",
        devices=(
            NetDevice(0, "mlx5_8", port=1, link_layer="IB"),
            NetDevice(1, "mlx5_16", port=1, link_layer="RoCE"),
        ),
    )
    probe = NetDevices(
        line=4, role="ib_probe", devices=(NetDevice(2, "mlx5_9", port=1, link_layer="IB"),)
    )
    env = NcclEnv(line=1, name="NCCL_IB_HCA", value="mlx5_8,mlx5_9,mlx5_16", from_environment=True)
    other_host = NetDevices(
        line=3, role="ib", devices=(NetDevice(0, "mlx5_0", port=1, link_layer="RoCE"),)
    )
    got = {
        i.subject: i.record
        for i in _derive(_item(env), _item(ib), _item(probe), _item(other_host, "h2"))
        if isinstance(i.record, NcclLinkLayers)
    }
    h1, h2 = got["h1"], got["h2"]
    assert (h1.layers, h1.mixed, h1.ib_ports, h1.roce_ports) == (
        ("IB", "RoCE"),
        True,
        "mlx5_8:1, mlx5_9:1",
        "mlx5_16:1",
    )
    assert h1.ib_hca_env == "mlx5_8,mlx5_9,mlx5_16" and h1.line == 3
    assert (h2.layers, h2.mixed, h2.ib_hca_env) == (("RoCE",), False, None)


def _wd(rank: int, seq: int, op: str, line: int, pg: str = "") -> WatchdogTimeout:
    msg = f"[{pg}Rank {rank}] Watchdog caught collective operation timeout"
    return WatchdogTimeout(
        line=line,
        category="watchdog_timeout",
        message=msg,
        rank=rank,
        seq_num=seq,
        op_type=op,
        timeout_ms=600000,
        ran_for_ms=600010,
    )


def test_desync_op_mismatch_and_seq_spread() -> None:
    items = [
        _item(_wd(7, 80078, "BROADCAST", 1)),
        _item(_wd(3, 80078, "ALLREDUCE", 3)),
        _item(_wd(5, 80077, "ALLREDUCE", 5)),
    ]
    got = [i.record for i in _derive(*items) if isinstance(i.record, CollectiveDesync)]
    assert len(got) == 1
    d = got[0]
    assert d.ranks == 3 and d.op_mismatch is True
    assert d.op_types == ("ALLREDUCE", "BROADCAST") and d.seq_nums == (80077, 80078)
    assert d.seq_spread == 1  # 80078 - 80077
    assert (
        d.summary == "rank 3: ALLREDUCE #80078; rank 5: ALLREDUCE #80077; rank 7: BROADCAST #80078"
    )
    assert d.line == 3  # the lowest rank's line


def test_no_desync_when_every_rank_waits_in_the_same_collective() -> None:
    items = [_item(_wd(r, 1580, "ALLREDUCE", r + 1)) for r in (0, 4)]
    assert not [i for i in _derive(*items) if isinstance(i.record, CollectiveDesync)]


def test_process_groups_are_compared_separately() -> None:
    # PG 0 and PG 1 count SeqNum independently: 12 vs 900 is no desync
    items = [
        _item(_wd(0, 12, "ALLREDUCE", 1, pg="PG ID 0 PG GUID 0(default_pg) ")),
        _item(_wd(1, 12, "ALLREDUCE", 2, pg="PG ID 0 PG GUID 0(default_pg) ")),
        _item(_wd(0, 900, "ALLGATHER", 3, pg="PG ID 1 PG GUID 1 ")),
    ]
    assert not [i for i in _derive(*items) if isinstance(i.record, CollectiveDesync)]


def test_lspci_grep_acsctl_gives_one_device_per_line() -> None:
    """pcie.py: each ACSCtl line of `lspci -vvv | grep -i acsctl` is its own (anonymous) port."""
    case = Path(__file__).parents[2] / "fixtures/diagnose/host-acs-redirect-lspci-grep/lspci.txt"
    devs = parse_lspci(case.read_text()).records
    assert len(devs) == 12
    assert [d.line for d in devs if d.acs_redirect] == [2, 10, 11, 12, 13]  # type: ignore[attr-defined]
