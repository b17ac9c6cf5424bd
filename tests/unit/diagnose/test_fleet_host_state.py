"""Fleet presence and GID verdicts (verdicts_fleet.py) and the per-host ``gdr-not-ready``
(verdicts_host_state.py) on probe-style bundles ``DIR/<host>/<file>`` of >= 3 synthetic hosts
built from the fixture formats (sysfs ``grep -r -H``, ``show_gids``, ``/proc/modules``,
``ldconfig -p``, ``ip link``); one host changed. Each odd host is named with the majority and
the counts; a uniform bundle, two hosts and a 2-2 split are silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.checks.diagnose import load_evidence
from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts, verdicts_for
from tests.unit.diagnose.test_verdicts_fleet import _bundle
from tests.unit.evidence.fixtures import case

HOSTS = ("gpu1", "gpu2", "gpu3", "gpu4")
IP_LINK = case("ip-link", "lab-veth-healthy").text()
SYSFS = case("sysfs-infiniband", "kernel-format-roce-mlx5-grep-r-ports").text()  # v2 IPv4: 3
SHOW_GIDS = case("show-gids", "nccl-1131-indented").text()  # mlx5_0, mlx5_1: v2 IPv4 at 3
LDCONFIG = case("ldconfig", "debian12-glibc236-ldconfig-p-head").text()
OFI = "\tlibnccl-net-ofi.so (libc6,x86-64) => /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n"
IDS = ("diagnose.fleet-", "diagnose.gdr-not-ready")

_P = "/sys/class/infiniband/mlx5_0/ports/1/"
_ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"
_V4 = "0000:0000:0000:0000:0000:ffff:0a00:0001"
_V6 = "2001:0db8:0000:0000:0ac0:ebff:fe79:391a"


def _sysfs_v4_at_5() -> str:
    """The same port with a global IPv6 address first: its GID pair at 2/3, IPv4 at 4/5."""
    text = SYSFS.replace(f"{_P}gids/2:{_V4}", f"{_P}gids/2:{_V6}")
    text = text.replace(f"{_P}gids/3:{_V4}", f"{_P}gids/3:{_V6}")
    text = text.replace(f"{_P}gids/4:{_ZERO}", f"{_P}gids/4:{_V4}")
    text = text.replace(f"{_P}gids/5:{_ZERO}", f"{_P}gids/5:{_V4}")
    extra = "".join(
        f"{_P}gid_attrs/{k}/{i}:{v}\n"
        for i, t in ((4, "IB/RoCE v1"), (5, "RoCE v2"))
        for k, v in (("types", t), ("ndevs", "ens1f0np0"))
    )
    assert text.count(_V4) == 2 and text.count(_V6) == 2
    return text + extra


def _modules(*drop: str, add: str = "") -> str:
    """A GPU + ConnectX host's /proc/modules (kernel format: name size refcount used-by state
    address taint), without the modules in ``drop``."""
    rows = {
        "nvidia_peermem": "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)",
        "nvidia_uvm": "nvidia_uvm 1540096 4 - Live 0x0000000000000000 (POE)",
        "nvidia": "nvidia 56717312 550 nvidia_uvm,nvidia_peermem, Live 0x0000000000000000 (POE)",
        "rdma_ucm": "rdma_ucm 28672 0 - Live 0x0000000000000000 (OE)",
        "mlx5_ib": "mlx5_ib 483328 0 - Live 0x0000000000000000 (OE)",
        "ib_uverbs": "ib_uverbs 180224 3 nvidia_peermem,rdma_ucm,mlx5_ib, Live 0x0000000000000000 "
        "(OE)",
        "mlx5_core": "mlx5_core 2113536 1 mlx5_ib, Live 0x0000000000000000 (OE)",
        "ib_core": "ib_core 434176 6 rdma_ucm,mlx5_ib,ib_uverbs,nvidia_peermem, Live "
        "0x0000000000000000 (OE)",
    }
    return "".join(f"{r}\n" for n, r in rows.items() if n not in drop) + add


def _verdicts(root: Path) -> list[tuple[str, Verdict]]:
    ev = load_evidence([root])
    out = []
    for item in ev.items:
        for fn in verdicts_for(item.record.record_type):
            out += [(item.subject or "", v) for v in fn(item.record, ev) if v.id.startswith(IDS)]
    return out


def _run(tmp_path: Path, name: str, text: str, odd: dict[str, str | None],
         hosts: tuple[str, ...] = HOSTS) -> list[tuple[str, Verdict]]:  # fmt: skip
    """Every host gets ``ip-link.txt`` and ``name`` (``odd`` replaces it; None leaves it out)."""
    files: dict[str, dict[str, str]] = {}
    for h in hosts:
        files[h] = {"ip-link.txt": IP_LINK}
        body = odd.get(h, text)
        if body is not None:
            files[h][name] = body
    return _verdicts(_bundle(tmp_path, files))


def test_registered_with_known_causes() -> None:
    table = load_verdicts()
    for rtype in ("sysfs_gid", "ibv_gid", "gid", "kernel_module", "shared_lib"):
        assert any(fn.__module__.endswith("verdicts_fleet") for fn in table[rtype]), rtype
    assert any(fn.__module__.endswith("verdicts_host_state") for fn in table["kernel_module"])
    assert {"host.gid", "host.gdr", "host.rdma-device", "config.nccl-env"} <= set(all_causes())


# -- GID index -------------------------------------------------------------------------------


def test_gid_index_moved_on_one_host_sysfs(tmp_path: Path) -> None:
    got = _run(tmp_path, "sysfs-infiniband-mlx5_0.txt", SYSFS, {"gpu2": _sysfs_v4_at_5()})
    [(subject, v)] = got
    assert (subject, v.id, v.severity, v.cause) == (
        "gpu2", "diagnose.fleet-gid-index-differs", "warning", "host.gid"
    )
    assert v.message == (
        "gpu2's mlx5_0 port 1 has its IPv4 RoCE v2 GID (10.0.0.1) at index 5 while 3 of the "
        "4 hosts with mlx5_0 port 1 have it at index 3"
    )
    assert "index 3" in v.fix and "S15" in v.refs


def test_gid_index_from_show_gids_per_device(tmp_path: Path) -> None:
    moved = SHOW_GIDS.replace("mlx5_1  1       3       0000", "mlx5_1  1       7       0000")
    assert moved != SHOW_GIDS
    got = _run(tmp_path, "show_gids.txt", SHOW_GIDS, {"gpu4": moved})
    assert [(s, v.message) for s, v in got] == [
        ("gpu4", "gpu4's mlx5_1 port 1 has its IPv4 RoCE v2 GID (11.0.0.73) at index 7 while "
                 "3 of the 4 hosts with mlx5_1 port 1 have it at index 3"),
    ]  # fmt: skip


def test_gid_index_silent_cases(tmp_path: Path) -> None:
    assert _run(tmp_path / "same", "sysfs-infiniband-mlx5_0.txt", SYSFS, {}) == []
    # a second IPv4 v2 GID at a higher index: the shared index 3 still works there
    two = _sysfs_v4_at_5().replace(f"{_P}gids/3:{_V6}", f"{_P}gids/3:{_V4}")
    assert _run(tmp_path / "two", "sysfs-infiniband-mlx5_0.txt", SYSFS, {"gpu1": two}) == []
    moved = _sysfs_v4_at_5()
    split = _run(tmp_path / "split", "sysfs-infiniband-mlx5_0.txt", SYSFS,
                 {"gpu3": moved, "gpu4": moved})  # fmt: skip
    assert split == []
    pair = _run(tmp_path / "pair", "sysfs-infiniband-mlx5_0.txt", SYSFS, {"gpu2": moved},
                ("gpu1", "gpu2"))  # fmt: skip
    assert pair == []


# -- RDMA device -------------------------------------------------------------------------------


def test_host_without_rdma_device_is_named_on_its_ip_link(tmp_path: Path) -> None:
    got = _run(tmp_path, "sysfs-infiniband-mlx5_0.txt", SYSFS, {"gpu3": None})
    [(subject, v)] = got
    assert (subject, v.id, v.cause) == (
        "gpu3", "diagnose.fleet-rdma-device-missing", "host.rdma-device"
    )
    assert v.message == "gpu3 shows no RDMA device while 3 of the 4 hosts compared do (mlx5_0)"
    ev = load_evidence([tmp_path / "bundle"])
    first = next(i for i in ev.items if i.subject == "gpu3" and i.record.record_type == "ip_link")
    fns = verdicts_for("ip_link")
    assert any(v.id == "diagnose.fleet-rdma-device-missing"
               for fn in fns for v in fn(first.record, ev))  # fmt: skip


def test_rdma_device_sources_mix_and_silent_cases(tmp_path: Path) -> None:
    files = {h: {"ip-link.txt": IP_LINK} for h in ("h1", "h2", "h3", "h4", "h5")}
    files["h1"]["show_gids.txt"] = SHOW_GIDS
    files["h2"]["sysfs-infiniband-mlx5_0.txt"] = SYSFS
    files["h3"]["ibv_devinfo.txt"] = case("ibv-devinfo", "deepep-38-h100-roce-cx7").text()
    got = _verdicts(_bundle(tmp_path / "mix", files))
    assert sorted(s for s, _ in got) == ["h4", "h5"]
    msg = next(v.message for s, v in got if s == "h4")
    assert msg.startswith("h4 shows no RDMA device while 3 of the 5 hosts compared do (mlx5_0, ")
    assert msg.endswith("; also lacking: h5")
    split = _run(tmp_path / "split", "sysfs-infiniband-mlx5_0.txt", SYSFS,
                 {"gpu1": None, "gpu2": None})  # fmt: skip
    assert split == []
    none = _run(tmp_path / "none", "sysfs-infiniband-mlx5_0.txt", SYSFS,
                dict.fromkeys(HOSTS, None))  # fmt: skip
    assert none == []


# -- kernel modules ------------------------------------------------------------------------------


def test_missing_peermem_is_fleet_and_host_warning(tmp_path: Path) -> None:
    got = _run(tmp_path, "proc-modules.txt", _modules(), {"gpu2": _modules("nvidia_peermem")})
    assert sorted((s, v.id, v.cause) for s, v in got) == [
        ("gpu2", "diagnose.fleet-module-missing", "host.gdr"),
        ("gpu2", "diagnose.gdr-not-ready", "host.gdr"),
    ]
    fleet = next(v for _, v in got if v.id == "diagnose.fleet-module-missing")
    assert fleet.message == (
        "gpu2 has not loaded nvidia_peermem while 3 of the 4 hosts compared have "
        "(nvidia_peermem)"
    )
    assert "modprobe nvidia_peermem" in fleet.fix
    assert "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html" in fleet.refs


def test_missing_rdma_modules_and_old_peer_mem_counts(tmp_path: Path) -> None:
    old = _modules("nvidia_peermem", add="nv_peer_mem 16384 0 - Live 0x0000000000000000 (OE)\n")
    got = _run(tmp_path, "proc-modules.txt", _modules(),
               {"gpu1": old, "gpu4": _modules("mlx5_ib", "rdma_ucm")})  # fmt: skip
    assert sorted((s, v.cause, v.message) for s, v in got) == [
        ("gpu4", "host.rdma-device",
         "gpu4 has not loaded mlx5_ib while 3 of the 4 hosts compared have (mlx5_ib)"),
        ("gpu4", "host.rdma-device",
         "gpu4 has not loaded rdma_ucm while 3 of the 4 hosts compared have (rdma_ucm)"),
    ]  # fmt: skip


def test_host_without_gpu_driver_is_not_asked_for_peermem(tmp_path: Path) -> None:
    cpu = _modules("nvidia_peermem", "nvidia", "nvidia_uvm")
    assert _run(tmp_path, "proc-modules.txt", _modules(), {"gpu3": cpu}) == []


def test_module_split_is_silent(tmp_path: Path) -> None:
    no = _modules("nvidia_peermem")
    got = _run(tmp_path, "proc-modules.txt", _modules(), {"gpu3": no, "gpu4": no})
    assert {v.id for _, v in got} == {"diagnose.gdr-not-ready"}  # per host only, no fleet


# -- NCCL net plugin ---------------------------------------------------------------------------


def test_missing_net_plugin(tmp_path: Path) -> None:
    got = _run(tmp_path, "ldconfig-p.txt", LDCONFIG + OFI, {"gpu4": LDCONFIG})
    [(subject, v)] = got
    assert (subject, v.id, v.cause) == ("gpu4", "diagnose.fleet-plugin-missing", "config.nccl-env")
    assert v.message == (
        "gpu4 has no libnccl-net-ofi.so in its loader cache while 3 of the 4 hosts compared "
        "have it"
    )
    split = _run(tmp_path / "s", "ldconfig-p.txt", LDCONFIG + OFI,
                 {"gpu3": LDCONFIG, "gpu4": LDCONFIG})  # fmt: skip
    assert split == []


# -- gdr-not-ready on one host -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        (_modules("nvidia_peermem"), True),
        (_modules("nvidia_peermem", "mlx5_ib"), True),  # ib_core alone is an RDMA stack
        (_modules(), False),
        (_modules("nvidia_peermem", add="nv_peer_mem 16384 0 - Live 0x0 (OE)\n"), False),
        (_modules("nvidia_peermem", "ib_core", "mlx5_ib"), False),  # no RDMA stack
        (_modules("nvidia_peermem", "nvidia", "nvidia_uvm"), False),  # no GPU driver
        (case("proc-modules", "gpud-pr39-lsmod-grep-peermem").text(), False),
    ],
)
def test_gdr_not_ready(tmp_path: Path, text: str, fires: bool) -> None:
    (tmp_path / "proc-modules.txt").write_text(text)
    got = [v for _, v in _verdicts(tmp_path / "proc-modules.txt")]
    if not fires:
        assert got == []
        return
    [v] = got
    assert (v.id, v.severity, v.cause) == ("diagnose.gdr-not-ready", "warning", "host.gdr")
    assert v.message.startswith("nvidia and ib_core")
    assert "5.12" in v.explanation and "DMA-BUF" in v.explanation
    assert "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html" in v.refs
