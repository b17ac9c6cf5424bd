"""Two interfaces of one host in one IPv4 subnet (``diagnose.shared-subnet``): the kernel routes
the whole subnet through one of them, whichever interface a job names."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose.engine import diagnose, load_evidence

IP_A = """\
$ ip a
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
    inet 127.0.0.1/8 scope host lo
       valid_lft forever preferred_lft forever
2: eno1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000
    link/ether ac:1f:6b:e7:21:0e brd ff:ff:ff:ff:ff:ff
    altname enp4s0
    inet 192.168.3.15/20 brd 192.168.15.255 scope global dynamic eno1
       valid_lft 3362sec preferred_lft 3362sec
3: eno2: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN group default qlen 1000
    link/ether ac:1f:6b:e7:21:0f brd ff:ff:ff:ff:ff:ff
4: enp37s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000
    link/ether a0:36:90:2a:76:88 brd ff:ff:ff:ff:ff:ff
    inet 192.168.5.15/20 brd 192.168.15.255 scope global dynamic enp37s0f0
       valid_lft 2386sec preferred_lft 2386sec
"""
"""A real `ip a` of a node whose NCCL traffic left through eno1 although NCCL_SOCKET_IFNAME
named the 10 GbE port (NVIDIA/nccl#1580; the maintainer's diagnosis in #1581)."""


def _found(tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "ip-a.txt"
    path.write_text(text)
    return [(f.severity, f.cause or "", f.message) for f in diagnose(load_evidence([path])).findings
            if f.check == "diagnose.shared-subnet"]  # fmt: skip


def test_two_ports_in_one_slash_20_are_reported(tmp_path: Path) -> None:
    (hit,) = _found(tmp_path, IP_A)
    assert hit[:2] == ("warning", "config.socket-interface")
    # 192.168.3.15/20 and 192.168.5.15/20 are both in 192.168.0.0/20
    assert "same subnet 192.168.0.0/20: eno1 (192.168.3.15/20), enp37s0f0 (192.168.5.15/20)" in (
        hit[2])  # fmt: skip


def test_different_subnets_are_not_reported(tmp_path: Path) -> None:
    # a /24 each: 192.168.3.0/24 and 192.168.5.0/24 do not overlap
    assert _found(tmp_path, IP_A.replace("/20", "/24")) == []


def test_a_port_without_carrier_is_not_counted(tmp_path: Path) -> None:
    down = IP_A.replace("4: enp37s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP>",
                        "4: enp37s0f0: <NO-CARRIER,BROADCAST,MULTICAST,UP>")
    assert _found(tmp_path, down) == []


def test_a_vrf_member_routes_from_its_own_table(tmp_path: Path) -> None:
    head = "qdisc mq state UP group default qlen 1000\n    link/ether ac:1f"
    vrf = IP_A.replace(head, head.replace("mq state", "mq master mgmt-vrf state"))
    assert "master mgmt-vrf" in vrf
    assert _found(tmp_path, vrf) == []


def test_host_routes_are_not_subnets(tmp_path: Path) -> None:
    assert _found(tmp_path, IP_A.replace("/20", "/32")) == []
