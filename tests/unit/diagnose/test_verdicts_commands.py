"""Settings seen only on a command line (derive_commands): the GID index of a test tool, judged
against the link layer a real ``ibv_devinfo`` capture of the same input shows."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.derive_commands import gid_choices
from aifabric.checks.diagnose.engine import diagnose, load_evidence
from tests.unit.evidence.fixtures import FIXTURES


def test_gid_choice_of_pingpong_and_perftest_command_lines() -> None:
    # rc_pingpong.c: "-g, --gid-idx=<gid index>"; perftest: "-x, --gid-index=<index>"
    assert gid_choices("[u@n1 ~]$ ibv_rc_pingpong -g 0 -d rxe0 -i 1") == (
        "ibv_rc_pingpong", 0, "rxe0",
    )  # fmt: skip
    assert gid_choices("ib_write_bw -d mlx5_0 -x 3 --report_gbits 10.0.0.2") == (
        "ib_write_bw", 3, "mlx5_0",
    )  # fmt: skip
    assert gid_choices("ib_send_bw --gid-index=1 10.0.0.2") == ("ib_send_bw", 1, None)
    assert gid_choices("ib_write_bw -g 0 10.0.0.2") is None  # -g is not perftest's GID option
    assert gid_choices("ibv_rc_pingpong -d mlx5_0") is None


def _findings(tmp_path: Path, devinfo: str, command: str, check: str) -> list[str]:
    """Causes of the ``check`` findings of a real ibv_devinfo capture beside a command line."""
    src = FIXTURES / "ibv-devinfo" / devinfo / "input.txt"
    (tmp_path / "devinfo.txt").write_bytes(src.read_bytes())
    (tmp_path / "cmd.txt").write_text(command + "\n", encoding="utf-8")
    ev = load_evidence([tmp_path / "devinfo.txt", tmp_path / "cmd.txt"])
    return [f.cause or "" for f in diagnose(ev).findings if f.check == check]


def _gid_findings(tmp_path: Path, devinfo: str, command: str) -> list[str]:
    return [
        "diagnose.roce-gid-index-zero"
        for _ in _findings(tmp_path, devinfo, command, "diagnose.roce-gid-index-zero")
    ]


def test_gid_index_zero_on_roce_is_a_gid_finding(tmp_path: Path) -> None:
    roce = "deepep-38-h100-roce-cx7"
    assert _gid_findings(tmp_path, roce, "$ ib_write_bw -x 0 10.0.0.2") == [
        "diagnose.roce-gid-index-zero"
    ]
    assert _gid_findings(tmp_path, roce, "$ ib_write_bw -x 3 10.0.0.2") == []


def test_gid_index_zero_on_infiniband_is_normal(tmp_path: Path) -> None:
    assert _gid_findings(tmp_path, "deepep-55-ib-ndr", "$ ibv_rc_pingpong -g 0") == []


def test_mtu_choice_of_pingpong_and_perftest_command_lines() -> None:
    # rc_pingpong.c and perftest: "-m, --mtu=<size>" (256..4096)
    from aifabric.checks.diagnose.derive_commands import mtu_choice  # noqa: PLC0415

    assert mtu_choice("$ ibv_srq_pingpong -d mlx5_bond_0 -g 3 -n 100 -q 2 -m 4096 node-2") == (
        "ibv_srq_pingpong", 4096, "mlx5_bond_0",
    )  # fmt: skip
    assert mtu_choice("ib_write_bw --mtu=2048 10.0.0.2") == ("ib_write_bw", 2048, None)
    assert mtu_choice("ib_write_bw -m 3000 10.0.0.2") is None  # not an IB MTU
    assert mtu_choice("ibv_rc_pingpong -g 3") is None


def _mtu_findings(tmp_path: Path, devinfo: str, command: str) -> list[str]:
    return _findings(tmp_path, devinfo, command, "diagnose.rdma-path-mtu-above-active")


def test_path_mtu_above_the_active_mtu_is_an_mtu_finding(tmp_path: Path) -> None:
    # an Azure HBv2 capture whose RoCE port runs at active_mtu 1024 (a 1500-byte netdev)
    roce = "azhpc-images-pr44-hbv2"
    dev = "rdmaP23800p0s2"
    assert _mtu_findings(tmp_path, roce, f"$ ibv_srq_pingpong -d {dev} -g 3 -m 4096 n2") == [
        "fabric.mtu"
    ]
    assert _mtu_findings(tmp_path, roce, f"$ ibv_srq_pingpong -d {dev} -g 3 -m 1024 n2") == []
    # ports at 4096 (RoCE on a 9000-byte netdev): the largest IB MTU fits
    assert _mtu_findings(tmp_path, "deepep-38-h100-roce-cx7", "$ ib_write_bw -m 4096 h2") == []
