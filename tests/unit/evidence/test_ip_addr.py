"""``ip addr`` and ``ifconfig`` (kind ``ip-addr``): real captures under
``tests/fixtures/evidence/ip-addr/``; counter names follow net-tools' ``ife_print_long``
(lib/interface.c): RX overruns = rx_fifo_errors, TX carrier = tx_carrier_errors."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from aifabric.evidence.ip_addr import _prefix
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.registry import detect_kind, parse_text
from tests.unit.evidence.fixtures import case


def _links(kind: str, name: str) -> dict[str, IpLink]:
    res = case(kind, name).parse()
    return {r.name: r for r in res.of_type(IpLink)}


def test_old_ifconfig_ipoib_is_infiniband_with_its_drops() -> None:
    # "ib0  Link encap:UNSPEC  HWaddr 80-00-..." (a 20-byte IPoIB address old ifconfig cannot name)
    [ib0] = _links("ip-addr", "cuml-wiki-mnmg-ifconfig-ib0-unspec").values()
    assert ib0.link_type == "infiniband"
    assert ib0.mtu_bytes == 65520
    assert ib0.carrier and ib0.admin_up and ib0.state == "UP"
    assert ib0.counters["tx_dropped"] == 10


def test_old_ifconfig_infiniband_encap_after_the_ioctl_warning() -> None:
    links = _links("ip-addr", "ompi-users-28160-ifconfig-ipoib-ioctl-warning")
    assert set(links) >= {"em1", "ib0", "lo"}
    assert links["ib0"].link_type == "infiniband" and links["ib0"].mtu_bytes == 2044
    assert links["lo"].link_type == "loopback"


def test_new_ifconfig_port_not_up_has_no_up_flag() -> None:
    # flags=4098<BROADCAST,MULTICAST>: neither UP nor RUNNING (the port was never brought up)
    [eth] = _links("ip-addr", "sonic-buildimage-3842-ifconfig-ethernet120-admin-down").values()
    assert eth.name == "Ethernet120" and eth.mtu_bytes == 9100
    assert not eth.admin_up and not eth.carrier and eth.state == "DOWN"
    assert eth.link_type == "ether" and eth.mac == "98:03:9b:f3:f5:00"
    assert eth.counters["rx_packets"] == 0 and eth.counters["collisions"] == 0


def test_ip_addr_of_two_nodes_keeps_both_and_their_addresses() -> None:
    res = case("ip-addr", "ompi-users-19198-ip-addr-two-nodes-eth1-no-carrier").parse()
    links = res.of_type(IpLink)
    eth1 = [r for r in links if r.name == "eth1"]
    assert len(eth1) == 2
    assert any("NO-CARRIER" in r.flags for r in eth1)
    assert any(r.addresses for r in links)


def test_ip_addr_is_detected_over_ip_link_and_keeps_prefixes() -> None:
    text = (
        "4: ens1f0np0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN qlen 1000\n"
        "    link/ether b8:3f:d2:12:34:56 brd ff:ff:ff:ff:ff:ff\n"
        "    inet 192.168.10.11/24 brd 192.168.10.255 scope global ens1f0np0\n"
        "       valid_lft forever preferred_lft forever\n"
        "    inet6 fe80::ba3f:d2ff:fe12:3456/64 scope link\n"
        "       valid_lft forever preferred_lft forever\n"
    )
    assert detect_kind(text) == "ip-addr"
    [rec] = parse_text(text).of_type(IpLink)
    assert rec.addresses == ["192.168.10.11/24", "fe80::ba3f:d2ff:fe12:3456/64"]
    assert rec.end_line == 6 and rec.details == []


def test_new_ifconfig_counters_and_prefix_from_netmask() -> None:
    text = (
        "enp1s0f0: flags=4099<UP,BROADCAST,MULTICAST>  mtu 1500\n"
        "        inet 10.0.0.5  netmask 255.255.255.0  broadcast 10.0.0.255\n"
        "        inet6 fe80::1e34:daff:fe5a:1fec  prefixlen 64  scopeid 0x20<link>\n"
        "        ether 1c:34:da:5a:1f:ec  txqueuelen 1000  (Ethernet)\n"
        "        RX packets 10  bytes 3456 (3.4 KB)\n"
        "        RX errors 1  dropped 5  overruns 2  frame 3\n"
        "        TX packets 12  bytes 34 (34.0 B)\n"
        "        TX errors 0  dropped 0 overruns 4  carrier 6  collisions 0\n"
    )
    [rec] = parse_text(text, "ip-addr").of_type(IpLink)
    assert rec.addresses == ["10.0.0.5/24", "fe80::1e34:daff:fe5a:1fec/64"]
    assert rec.admin_up and not rec.carrier  # UP without RUNNING: no carrier
    c = rec.counters
    assert (c["rx_errors"], c["rx_dropped"], c["rx_fifo_errors"], c["rx_frame_errors"]) == (
        1, 5, 2, 3,
    )  # fmt: skip
    assert (c["tx_fifo_errors"], c["tx_carrier_errors"]) == (4, 6)
    assert rec.qlen == 1000


@given(st.integers(min_value=0, max_value=32))
def test_netmask_prefix_matches_ipaddress(bits: int) -> None:
    mask = str(ipaddress.IPv4Network(f"0.0.0.0/{bits}").netmask)
    assert _prefix(mask) == str(bits)
    assert _prefix(hex(int(ipaddress.IPv4Address(mask)))) == str(bits)  # BSD "0xffffff00"


def test_non_contiguous_netmask_gives_no_prefix() -> None:
    assert _prefix("255.0.255.0") == ""
