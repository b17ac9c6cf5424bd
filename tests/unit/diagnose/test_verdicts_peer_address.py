"""A failed connection to a virtual bridge's default address (``diagnose.peer-on-virtual-bridge``):
libvirt's 192.168.122.0/24, Docker's 172.17.0.0/16, Podman's 10.88.0.0/16, IPv4 link-local and the
loopback network (except in a job known to run on one node)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose.engine import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_peer_address import bridge_default

VIRBR0_REFUSED = (
    ">> [[53402,1],6][btl_tcp_endpoint.c:638:mca_btl_tcp_endpoint_complete_connect] connect() "
    "to 192.168.122.1 failed: Connection refused (111\n"
)
"""Open MPI users list 2012/09/20300 (quoted as the reporter pasted it, cut at '(111'): the TCP
BTL used libvirt's virbr0 address; btl_tcp_if_include bond0 fixed it (20303)."""


def _checks(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "log.txt"
    path.write_text(text)
    return {f.check: f.cause or "" for f in diagnose(load_evidence([path])).findings}


def test_tcp_btl_refused_by_virbr0_names_the_interface(tmp_path: Path) -> None:
    found = _checks(tmp_path, VIRBR0_REFUSED)
    assert found["diagnose.peer-on-virtual-bridge"] == "config.socket-interface"


def test_an_ordinary_peer_address_is_left_to_the_firewall_entry(tmp_path: Path) -> None:
    found = _checks(tmp_path, VIRBR0_REFUSED.replace("192.168.122.1", "10.0.0.2"))
    assert "diagnose.peer-on-virtual-bridge" not in found
    assert found["signature.launchers.ompi-btl-tcp-refused"] == "config.firewall"


def test_nccl_socket_error_to_docker0(tmp_path: Path) -> None:
    line = (
        "node2:77:90 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
        "172.17.0.1<43197> failed : Connection refused\n"
    )
    assert "diagnose.peer-on-virtual-bridge" in _checks(tmp_path, line)


LOOPBACK_ABORT = (
    "10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection "
    "abort\n"
)
"""NCCL 2.18's socket error as a rank-prefixed PyTorch log prints it (misc/socket.cc): the
bootstrap handed a peer the loopback address."""


def test_a_connection_to_loopback_names_the_interface(tmp_path: Path) -> None:
    found = _checks(tmp_path, LOOPBACK_ABORT)
    assert found["diagnose.peer-on-virtual-bridge"] == "config.socket-interface"
    assert bridge_default("[127.0.1.1]:3210") is not None  # Debian's hostname entry


def test_loopback_is_right_in_a_single_node_job(tmp_path: Path) -> None:
    one_node = (
        "mew0:64904:64920 [0] NCCL INFO comm 0x55b6aa64a990 rank 0 nRanks 2 nNodes 1 localRanks 2 "
        "localRank 0 MNNVL 0\n"
    )
    assert "diagnose.peer-on-virtual-bridge" not in _checks(tmp_path, one_node + LOOPBACK_ABORT)
    two_nodes = one_node.replace("nNodes 1", "nNodes 2")
    assert "diagnose.peer-on-virtual-bridge" in _checks(tmp_path, two_nodes + LOOPBACK_ABORT)


def test_forms_of_an_address() -> None:
    assert bridge_default("172.17.0.2<41237>") is not None
    assert bridge_default("[172.17.0.1]:29500") is not None
    assert bridge_default("169.254.3.1") is not None
    assert bridge_default("192.168.1.1") is None
    assert bridge_default("node01") is None
    assert bridge_default(None) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_exactly_the_default_networks_are_named(n: int) -> None:
    addr = ipaddress.IPv4Address(n)
    nets = ("192.168.122.0/24", "172.17.0.0/16", "10.88.0.0/16", "169.254.0.0/16", "127.0.0.0/8")
    inside = any(addr in ipaddress.IPv4Network(net) for net in nets)
    assert (bridge_default(f"{addr}<1234>") is not None) == inside
