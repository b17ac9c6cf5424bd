"""Record verdicts of checks/diagnose/verdicts_hostinfo.py on real captures (ucx_info,
ucx_perftest, nvidia-smi topo -m, ulimit), loaded as diagnose loads them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

import pytest

from aifabric.checks.diagnose.engine import Evidence, load_evidence
from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts import Verdict, verdicts_for
from aifabric.model import Fabric
from aifabric.model.device import HostPort, Nic, Server

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"


def _bundle(tmp_path: Path, *cases: str, fabric: Fabric | None = None) -> Evidence:
    """The given fixtures as files of one host directory (``host1``), loaded by diagnose."""
    host = tmp_path / "host1"
    host.mkdir()
    for i, c in enumerate(cases):
        shutil.copy(FIX / c / "input.txt", host / f"{i}-{c.replace('/', '-')}.txt")
    return load_evidence([tmp_path], fabric=fabric)


def _verdicts(ev: Evidence) -> list[Verdict]:
    out: list[Verdict] = []
    for item in ev.items:
        for fn in verdicts_for(item.record.record_type):
            out.extend(fn(item.record, ev))
    return out


def _fabric(transport: Literal["roce", "ib"] = "roce", speed: float = 400.0) -> Fabric:
    port = HostPort(name="mlx5_0", speed_gbps=speed, purpose="ib" if transport == "ib" else "roce")
    nic = Nic(name="nic0", pcie_gen=5, ports=(port,))
    return Fabric(
        name="t", transport=transport, servers=(Server(name="host1", gpus=8, nics=(nic,)),)
    )


def _serious(vs: list[Verdict]) -> list[Verdict]:
    return [v for v in vs if v.severity in ("error", "warning")]


def test_every_cause_is_a_known_class(tmp_path: Path) -> None:
    ev = _bundle(
        tmp_path,
        "ucx-info/ornl-bernie-grep-transports-no-ib",
        "nvidia-smi-topo/nccl-tests-320-3gpu-node-phb",
        "nvidia-smi-topo/princeton-della-pli-h100-6nic",
        "ulimit/ucx-issue-8229-bash4-memlock-64",
        "ucx-perftest/quasiben-efa-tcp-tag-bw-cuda",
        fabric=_fabric(),
    )
    vs = _verdicts(ev)
    assert len(vs) >= 5
    causes = all_causes()
    for v in vs:
        assert v.cause in causes, v
        assert v.id.startswith("diagnose.") and v.explanation and v.fix


# ---- ucx_info -d ---------------------------------------------------------------------------------


def test_no_rdma_transport_alone_is_info(tmp_path: Path) -> None:
    (v,) = _verdicts(_bundle(tmp_path, "ucx-info/ornl-bernie-grep-transports-no-ib"))
    assert (v.id, v.severity, v.cause) == (
        "diagnose.ucx-no-rdma-transport",
        "info",
        "host.rdma-device",
    )
    assert "self, tcp, sysv, posix" in v.message


def test_no_rdma_transport_on_an_rdma_fabric_is_a_warning(tmp_path: Path) -> None:
    (v,) = _verdicts(
        _bundle(tmp_path, "ucx-info/ornl-bernie-grep-transports-no-ib", fabric=_fabric("ib"))
    )
    assert (v.severity, v.cause) == ("warning", "host.rdma-device")
    assert "transport ib" in v.explanation
    assert "ucx-ib" in v.fix


def test_no_rdma_transport_with_an_hca_in_the_same_bundle_is_a_warning(tmp_path: Path) -> None:
    ev = _bundle(
        tmp_path,
        "ucx-info/ornl-bernie-grep-transports-no-ib",
        "ibv-devinfo/deepep-55-ib-ndr",
    )
    (v,) = [v for v in _verdicts(ev) if v.id == "diagnose.ucx-no-rdma-transport"]
    assert v.severity == "warning"
    assert "ibv_" in v.explanation


@pytest.mark.parametrize(
    "name",
    [
        "azure-flux-hdr-vf-ucx-info-d",
        "ucx-issue-6264-ucx18-old-layout",
        "ornl-bernie-grep-transports-after-ucx-ib",
        "ornl-bernie-ucx-info-v",
        "ucx-issue-8440-config-print-excerpt",
    ],
)
def test_healthy_ucx_info_gives_nothing(tmp_path: Path, name: str) -> None:
    assert _verdicts(_bundle(tmp_path, f"ucx-info/{name}", fabric=_fabric("ib"))) == []


def test_ib_domain_without_devices_is_info(tmp_path: Path) -> None:
    # tl_info.c prints "# (No supported devices found)" for a memory domain with no transport.
    host = tmp_path / "host1"
    host.mkdir()
    (host / "ucx.txt").write_text(
        "$ ucx_info -d\n#\n# Memory domain: mlx5_1\n#     Component: ib\n#\n"
        "# (No supported devices found)\n#\n# Memory domain: tcp\n#     Component: tcp\n"
        "#\n#      Transport: tcp\n#         Device: eth0\n"
    )
    vs = _verdicts(load_evidence([tmp_path]))
    assert {(v.id, v.severity) for v in vs} == {
        ("diagnose.ucx-no-rdma-transport", "info"),
        ("diagnose.ucx-device-without-rdma", "info"),
    }
    (md,) = [v for v in vs if v.id == "diagnose.ucx-device-without-rdma"]
    assert "mlx5_1" in md.message and md.line == 3


# ---- ucx_perftest --------------------------------------------------------------------------------


def test_tcp_only_run_far_below_the_fabric_line_rate(tmp_path: Path) -> None:
    ev = _bundle(tmp_path, "ucx-perftest/quasiben-efa-tcp-tag-bw-cuda", fabric=_fabric())
    (v,) = _verdicts(ev)
    # 1136.80 MiB/s = 9.54 Gb/s: 2% of 400 Gb/s; UCX_TLS names no RDMA transport
    assert (v.id, v.severity, v.cause) == (
        "diagnose.ucx-perftest-slow",
        "warning",
        "config.nccl-env",
    )
    assert "9.5 Gb/s" in v.message and "2%" in v.message and "UCX_TLS=tcp" in v.message
    assert v.line == 11


def test_rdma_run_below_half_is_a_slow_link(tmp_path: Path) -> None:
    # The SRD run reached 45394.37 MiB/s = 380.8 Gb/s. Against a fabric file that declares 800 Gb/s
    # ports the same measurement is under half the line rate.
    ev = _bundle(tmp_path, "ucx-perftest/quasiben-efa-srd-tag-bw-cuda", fabric=_fabric(speed=800))
    (v,) = _verdicts(ev)
    assert (v.severity, v.cause) == ("warning", "fabric.slow-link")
    assert "380.8 Gb/s" in v.message and "48%" in v.message
    assert "GPUDirect" in v.explanation  # -m cuda
    assert v.line == 12


def test_rdma_run_near_line_rate_gives_nothing(tmp_path: Path) -> None:
    ev = _bundle(tmp_path, "ucx-perftest/quasiben-efa-srd-tag-bw-cuda", fabric=_fabric())
    assert _verdicts(ev) == []


def test_line_rate_from_ucx_info_of_the_same_host(tmp_path: Path) -> None:
    ev = _bundle(
        tmp_path,
        "ucx-info/ucx-issue-6264-ucx18-old-layout",
        "ucx-perftest/quasiben-efa-tcp-tag-bw-cuda",
    )
    (v,) = _verdicts(ev)
    # UCX's estimate for the EDR port: 11794.23 MiB/s = 98.9 Gb/s
    assert "99 Gb/s line rate (UCX's estimate for rc/mlx5_0:1)" in v.message


@pytest.mark.parametrize(
    "name",
    [
        "quasiben-efa-tcp-tag-bw-cuda",  # no line rate known
        "ucx-issue-10649-tag-bw-bond",  # message size not visible
        "ucx-issue-10532-am-lat",  # latency test
        "ucx-issue-5252-tcp-threads-typical",
    ],
)
def test_no_perftest_verdict_without_what_it_needs(tmp_path: Path, name: str) -> None:
    assert _verdicts(_bundle(tmp_path, f"ucx-perftest/{name}")) == []


# ---- nvidia-smi topo -m --------------------------------------------------------------------------


def test_gpus_reaching_nics_through_the_cpu(tmp_path: Path) -> None:
    (v,) = _verdicts(_bundle(tmp_path, "nvidia-smi-topo/nccl-tests-320-3gpu-node-phb"))
    assert (v.id, v.severity, v.cause) == ("diagnose.gpu-nic-far", "warning", "host.pcie")
    assert v.message.startswith("3 GPU(s)")
    assert "GPU2: PHB to mlx5_0, mlx5_1" in v.message and "GPU0: NODE" in v.message
    assert "NCCL_NET_GDR_LEVEL" in v.explanation and "PXB" in v.explanation
    assert v.line == 3


def test_pci_only_matrix_cannot_credit_pxn(tmp_path: Path) -> None:
    vs = _verdicts(_bundle(tmp_path, "nvidia-smi-topo/deepep-55-topo-mp-phb"))
    (v,) = vs
    assert (v.id, v.severity) == ("diagnose.gpu-nic-far", "warning")
    assert v.message.startswith("6 GPU(s)") and "topo -mp" in v.explanation


def test_far_gpus_with_an_nvlink_peer_near_a_nic_are_info(tmp_path: Path) -> None:
    (v,) = _verdicts(_bundle(tmp_path, "nvidia-smi-topo/princeton-della-pli-h100-6nic"))
    assert (v.id, v.severity, v.cause) == ("diagnose.gpu-nic-far-pxn", "info", "host.pcie")
    assert (
        v.message.startswith("4 GPU(s)")
        and "GPU1: NODE, NVLink peer GPU0 (mlx5_0 PIX)" in v.message
    )
    assert v.line == 4


def test_eight_gpus_without_nvlink_is_info(tmp_path: Path) -> None:
    (v,) = _verdicts(_bundle(tmp_path, "nvidia-smi-topo/deepep-128-pcie-sys-gpus"))
    assert (v.id, v.severity, v.cause) == ("diagnose.gpu-no-nvlink", "info", "host.pcie")
    assert "every GPU pair is SYS" in v.message


@pytest.mark.parametrize("name", ["nccl-1453-h100-9nic-tabs", "nccl-tests-78-dgx2-mlx5-columns"])
def test_healthy_topologies_give_nothing(tmp_path: Path, name: str) -> None:
    assert _verdicts(_bundle(tmp_path, f"nvidia-smi-topo/{name}")) == []


# ---- ulimit --------------------------------------------------------------------------------------


def test_memlock_64_kb_is_an_error(tmp_path: Path) -> None:
    vs = _verdicts(_bundle(tmp_path, "ulimit/ucx-issue-8229-bash4-memlock-64"))
    by_id = {v.id: v for v in vs}
    assert set(by_id) == {"diagnose.memlock-limited", "diagnose.open-files-low"}
    mem = by_id["diagnose.memlock-limited"]
    assert (mem.severity, mem.cause) == ("error", "host.memlock")
    assert "64 kbytes" in mem.message and "unlimited" in mem.fix
    nofile = by_id["diagnose.open-files-low"]
    assert (nofile.severity, nofile.cause) == ("info", "host.resources")


@pytest.mark.parametrize(
    ("name", "kb"),
    [("ros2-realtime-12-ulimit-l-65536", 65536), ("vmtouch-94-bash51-memlock-finite", 5128731)],
)
def test_finite_memlock_is_a_warning(tmp_path: Path, name: str, kb: int) -> None:
    vs = _verdicts(_bundle(tmp_path, f"ulimit/{name}"))
    (mem,) = [v for v in vs if v.id == "diagnose.memlock-limited"]
    assert (mem.severity, mem.cause) == ("warning", "host.memlock")
    assert f"{kb} kbytes" in mem.message


def test_unlimited_memlock_gives_nothing(tmp_path: Path) -> None:
    # 'ulimit -l' and 'ulimit -a' both say unlimited; open files and processes 4096.
    assert _verdicts(_bundle(tmp_path, "ulimit/tensorflow-11392-unlimited")) == []


def test_tiny_process_limit_is_info(tmp_path: Path) -> None:
    host = tmp_path / "host1"
    host.mkdir()
    # bash prints one option's value bare; the command before it names the option.
    (host / "limits.txt").write_text("$ ulimit -u\n1024\n")
    (v,) = _verdicts(load_evidence([tmp_path]))
    assert (v.id, v.severity, v.cause) == ("diagnose.nproc-low", "info", "host.resources")


def test_a_later_line_supersedes_an_earlier_query(tmp_path: Path) -> None:
    host = tmp_path / "host1"
    host.mkdir()
    (host / "limits.txt").write_text("$ ulimit -l\n64\n$ ulimit -l\n65536\n")
    (v,) = _verdicts(load_evidence([tmp_path]))
    assert v.severity == "warning" and "65536" in v.message

