"""One IPv4 address held by interfaces with different MACs (``diagnose.duplicate-address``):
two hosts with the same address on a port a launcher may publish."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.engine import diagnose, load_evidence

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "ip-addr"
EM1 = (FIX / "ompi-users-28160-ifconfig-ipoib-ioctl-warning" / "input.txt").read_text()
"""A real ifconfig of two interfaces (em1 10.138.25.3, ib0 10.137.25.3): Open MPI users list
2015/10/28160."""


def _found(tmp_path: Path, *texts: str) -> list[tuple[str, str, str]]:
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"host{i}.txt"
        path.write_text(text)
        paths.append(path)
    return [(f.check, f.cause or "", f.message) for f in diagnose(load_evidence(paths)).findings
            if f.check == "diagnose.duplicate-address"]  # fmt: skip


def test_the_same_address_on_two_machines_is_the_socket_interface(tmp_path: Path) -> None:
    other = EM1.replace("D0:67:E5:F9:20:76", "D0:67:E5:F9:20:99")  # a second host, same em1 address
    (hit,) = _found(tmp_path, EM1, other)
    assert hit[1] == "config.socket-interface"
    assert "10.138.25.3 is held by 2 different interfaces" in hit[2]
    assert "d0:67:e5:f9:20:76" in hit[2] and "d0:67:e5:f9:20:99" in hit[2]


def test_the_same_interface_pasted_twice_is_not_a_conflict(tmp_path: Path) -> None:
    assert _found(tmp_path, EM1, EM1) == []


def test_every_hosts_docker_bridge_is_not_a_conflict(tmp_path: Path) -> None:
    bridge = EM1.replace("10.138.25.3", "172.17.0.1").replace("10.137.25.3", "10.137.25.4")
    other = bridge.replace("D0:67:E5:F9:20:76", "D0:67:E5:F9:20:99").replace(
        "10.137.25.4", "10.137.25.5")  # fmt: skip
    assert _found(tmp_path, bridge, other) == []
