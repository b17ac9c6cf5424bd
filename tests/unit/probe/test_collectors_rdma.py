"""RDMA collectors: device names from ``ls /sys/class/infiniband`` validated before they become
part of an argv, ``grep -r -H`` of each device's sysfs ports (exit 2 with output is partial),
``traffic_class`` per listed port, a host without a device recorded as 'not available here',
``ldconfig -p`` and ``/proc/modules`` among the host collectors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.probe.collectors import (
    NOT_AVAILABLE,
    RDMA_DEV_RE,
    RDMA_LIST,
    Capture,
    collect_host,
    host_commands,
    rdma_device_commands,
    select_rdma_devices,
    sysfs_ports,
    traffic_class_command,
)
from aifabric.probe.runner import CmdResult
from tests.unit.probe.test_collectors import SHELLS, FakeRunner, ok

Handler = Callable[[tuple[str, ...]], CmdResult]

# the layout of `grep -r -H . /sys/class/infiniband/mlx5_0/ports` (kernel sysfs attribute names,
# drivers/infiniband/core/sysfs.c): port attributes, GIDs, and the GID type / net device of
# each populated GID slot; empty slots' types fail with EINVAL and grep exits 2
SYSFS_MLX5_0 = """\
/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_0/ports/1/phys_state:5: LinkUp
/sys/class/infiniband/mlx5_0/ports/1/link_layer:Ethernet
/sys/class/infiniband/mlx5_0/ports/1/rate:100 Gb/sec (4X EDR)
/sys/class/infiniband/mlx5_0/ports/1/lid:0x0
/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:0a3b:f4ff:fe0c:1a2b
/sys/class/infiniband/mlx5_0/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:0a00:0001
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0:IB/RoCE v1
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3:RoCE v2
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3:ens1f0np0
"""
GREP_EINVAL = (
    "grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/4: Invalid argument\n"
    "grep: /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/5: Invalid argument\n"
)


def _grep(dev: str) -> tuple[str, ...]:
    return rdma_device_commands(dev)[0][1]


def collect(runner: FakeRunner) -> dict[str, Capture]:
    caps = asyncio.run(collect_host(runner, timeout_s=5, interval_s=0.0))
    by_name = {c.name: c for c in caps}
    assert len(by_name) == len(caps)
    return by_name


def test_host_collectors_include_ldconfig_and_modules() -> None:
    table = dict(host_commands())
    assert table["ldconfig-p.txt"] == ("ldconfig", "-p")
    assert table["proc-modules.txt"] == ("cat", "/proc/modules")


def test_ldconfig_off_path_falls_back_to_sbin() -> None:
    ld = "1 libs found in cache `/etc/ld.so.cache'\n\tlibz.so.1 (libc6,x86-64) => /lib/libz.so.1\n"
    runner = FakeRunner({("/sbin/ldconfig", "-p"): ok(ld)})
    cap = collect(runner)["ldconfig-p.txt"]
    assert cap.argv == ("/sbin/ldconfig", "-p") and cap.stdout == ld and cap.error is None
    assert runner.calls.count(("ldconfig", "-p")) == 1
    # found on PATH: no second try
    runner = FakeRunner({("ldconfig", "-p"): ok(ld)})
    assert collect(runner)["ldconfig-p.txt"].argv == ("ldconfig", "-p")
    assert ("/sbin/ldconfig", "-p") not in runner.calls


def test_devices_sysfs_partial_and_traffic_class() -> None:
    table: dict[tuple[str, ...], Handler] = {
        RDMA_LIST[1]: ok("mlx5_0\nrxe0\n../etc\n-rf\nmlx5_0\n"),
        _grep("mlx5_0"): ok(SYSFS_MLX5_0, 2, GREP_EINVAL),
        _grep("rxe0"): ok("/sys/class/infiniband/rxe0/ports/1/state:4: ACTIVE\n"),
        traffic_class_command("mlx5_0", 1)[1]: ok("Global tclass=106\n"),
    }
    runner = FakeRunner(table)
    caps = collect(runner)
    grep = caps["sysfs-infiniband-mlx5_0.txt"]
    assert grep.argv == ("grep", "-r", "-H", ".", "/sys/class/infiniband/mlx5_0/ports")
    assert grep.rc == 2 and grep.stdout == SYSFS_MLX5_0
    assert grep.error == "partial: 2 entries unreadable (grep exit 2)"
    assert caps["sysfs-infiniband-rxe0.txt"].error is None
    assert caps["traffic_class-mlx5_0-1.txt"].stdout == "Global tclass=106\n"
    assert caps["traffic_class-mlx5_0-1.txt"].error is None
    # rxe has no tc directory: recorded as not available, nothing to write
    rxe_tc = caps["traffic_class-rxe0-1.txt"]
    assert rxe_tc.error is not None and rxe_tc.error.startswith(NOT_AVAILABLE)
    skipped = caps["interfaces-skipped.txt"].stdout.splitlines()
    assert skipped == [
        "RDMA device '../etc': not a usable device name",
        "RDMA device '-rf': not a usable device name",
        "RDMA device 'mlx5_0': listed twice",
    ]
    paths = {a[-1] for a in runner.calls if a[0] in ("grep", "cat") and "/infiniband/" in a[-1]}
    assert paths == {
        "/sys/class/infiniband/mlx5_0/ports",
        "/sys/class/infiniband/rxe0/ports",
        "/sys/class/infiniband/mlx5_0/tc/1/traffic_class",
        "/sys/class/infiniband/rxe0/tc/1/traffic_class",
    }


def test_grep_failure_without_output_is_not_partial() -> None:
    missing = "grep: /sys/class/infiniband/mlx5_0/ports: No such file or directory\n"
    runner = FakeRunner({RDMA_LIST[1]: ok("mlx5_0\n"), _grep("mlx5_0"): ok("", 2, missing)})
    cap = collect(runner)["sysfs-infiniband-mlx5_0.txt"]
    assert cap.error == NOT_AVAILABLE + missing.strip()
    assert not any(a[0] == "cat" and "/tc/" in a[-1] for a in runner.calls)  # no ports known


def test_no_rdma_device_is_recorded() -> None:
    caps = collect(FakeRunner({RDMA_LIST[1]: ok("")}))
    empty = caps["rdma-devices.txt"]
    assert empty.error == NOT_AVAILABLE + "no RDMA device (/sys/class/infiniband is empty)"
    gone = "ls: cannot access '/sys/class/infiniband': No such file or directory\n"
    absent = collect(FakeRunner({RDMA_LIST[1]: ok("", 2, gone)}))["rdma-devices.txt"]
    assert absent.error == NOT_AVAILABLE + gone.strip()
    assert not any(n.startswith("sysfs-infiniband-") for n in caps)


def test_sysfs_ports_reads_port_numbers() -> None:
    text = SYSFS_MLX5_0 + "/sys/class/infiniband/mlx5_0/ports/2/state:1: DOWN\nnoise\n"
    assert sysfs_ports(text) == [1, 2]
    assert sysfs_ports("/sys/class/infiniband/x/ports/abc/state:4\n") == []


_NAME = st.one_of(
    st.text(max_size=70),
    st.text(alphabet="mlx5_0.-/ ;$`'\"\n", min_size=1, max_size=20),
    st.sampled_from(["..", ".", "-r", "--include=*", "a/../../etc", "mlx5_0", "x;reboot"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_NAME, max_size=8))
def test_hostile_device_names_never_reach_a_shell_or_a_path(names: list[str]) -> None:
    """Whatever ``ls`` prints, every argv is a fixed collector or one validated name inside a
    fixed /sys path: no shell, no option, no ``..``."""
    listing = "".join(f"{n}\n" for n in names)
    runner = FakeRunner({RDMA_LIST[1]: ok(listing)})
    for n in names:
        runner.table[("grep", "-r", "-H", ".", f"/sys/class/infiniband/{n}/ports")] = ok(
            f"/sys/class/infiniband/{n}/ports/1/state:4: ACTIVE\n"
        )
    collect(runner)
    valid, _ = select_rdma_devices(listing)
    assert all(RDMA_DEV_RE.match(v) and v not in (".", "..") for v in valid)
    for argv in runner.calls:
        assert argv[0] not in SHELLS
        if "/sys/class/infiniband/" in argv[-1] and argv[0] in ("grep", "cat"):
            dev = argv[-1].split("/")[4]
            assert dev in valid and not dev.startswith(("-", "."))
            assert ".." not in argv[-1].split("/")
