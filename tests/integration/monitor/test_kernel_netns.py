"""Kernel readers (ioctl, rtnetlink, procfs) inside network namespaces this test creates,
checked against the tools a user would run: ``ethtool -S``, ``ip -s -j link``, ``tc -s -j
qdisc``, ``/proc/net/snmp`` read by ``cat`` inside the namespace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from aifabric.monitor.catalogue import load_catalogue
from aifabric.monitor.exposition import Scrape
from aifabric.monitor.kernel import NetnsHandles, parse_snmp
from aifabric.monitor.sources import NetCollector, Target

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ethtool") is None or shutil.which("tc") is None,
    reason="needs root (network namespaces), ethtool and tc; CI runs it as root",
)


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def pair() -> Iterator[tuple[str, str]]:
    """Two namespaces joined by a veth pair, 10.251.0.1/30 ↔ 10.251.0.2/30, pfifo on a side."""
    tag = uuid.uuid4().hex[:6]
    a, b = f"afmon-{tag}-a", f"afmon-{tag}-b"
    try:
        for ns in (a, b):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", "va", "netns", a, "type", "veth", "peer", "name", "vb", "netns", b)
        sh("ip", "-n", a, "addr", "add", "10.251.0.1/30", "dev", "va")
        sh("ip", "-n", b, "addr", "add", "10.251.0.2/30", "dev", "vb")
        sh("ip", "-n", a, "link", "set", "va", "mtu", "9000", "up")
        sh("ip", "-n", b, "link", "set", "vb", "mtu", "9000", "up")
        sh(
            "ip",
            "netns",
            "exec",
            a,
            "tc",
            "qdisc",
            "add",
            "dev",
            "va",
            "root",
            "handle",
            "1:",
            "pfifo",
            "limit",
            "100",
        )
        yield a, b
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def test_readers_agree_with_the_tools(pair: tuple[str, str]) -> None:
    a, _b = pair
    sh("ip", "netns", "exec", a, "ping", "-c", "5", "-i", "0.01", "-q", "10.251.0.2")
    h = NetnsHandles.open(a)
    try:
        # the kernel may send a packet of its own (IPv6 ND, MLD) at any time: each tool's
        # counter must lie between our readings taken before and after it
        first = {link.name: link for link in h.links()}
        ip_json = json.loads(sh("ip", "-n", a, "-s", "-j", "link", "show", "va"))[0]
        last = {link.name: link for link in h.links()}
        assert set(first) == {"lo", "va"}
        va0, va1 = first["va"], last["va"]
        assert va0.mtu == 9000 == ip_json["mtu"]
        assert va0.oper_up is True
        tool_tx = ip_json["stats64"]["tx"]["packets"]
        assert va0.stats["tx_packets"] <= tool_tx <= va1.stats["tx_packets"] and tool_tx >= 5
        tool_rx = ip_json["stats64"]["rx"]["bytes"]
        assert va0.stats["rx_bytes"] <= tool_rx <= va1.stats["rx_bytes"]
        # ethtool -S names and values, in driver order (the same bracketing)
        before = h.ethtool.read("va")
        tool = sh("ip", "netns", "exec", a, "ethtool", "-S", "va").splitlines()[1:]
        after = h.ethtool.read("va")
        expected = {ln.split(":")[0].strip(): int(ln.split(":")[1]) for ln in tool}
        assert before is not None and after is not None
        assert list(before) == list(expected) == list(after)
        assert all(before[k] <= expected[k] <= after[k] for k in expected)
        assert h.ethtool.read("lo") is None  # no driver statistics
        # the root qdisc and its counters
        qd0 = [q for q in h.qdiscs() if q.kind == "pfifo"]
        tc_json = [
            q
            for q in json.loads(
                sh("ip", "netns", "exec", a, "tc", "-s", "-j", "qdisc", "show", "dev", "va")
            )
            if q["kind"] == "pfifo"
        ]
        qd1 = [q for q in h.qdiscs() if q.kind == "pfifo"]
        assert len(qd0) == 1 and qd0[0].handle_text == tc_json[0]["handle"] == "1:"
        assert qd0[0].stats["packets"] <= tc_json[0]["packets"] <= qd1[0].stats["packets"]
        assert qd0[0].stats["drops"] == tc_json[0]["drops"] == 0
        # TCP counters of that namespace, not of the host
        mine = h.netstat()
        theirs = parse_snmp(sh("ip", "netns", "exec", a, "cat", "/proc/net/snmp"))
        assert mine["Tcp:OutSegs"] == theirs["Tcp:OutSegs"] == 0  # no TCP in this namespace
        assert mine["Icmp:OutEchos"] == theirs["Icmp:OutEchos"] == 5
    finally:
        h.close()


def test_net_collector_series(pair: tuple[str, str]) -> None:
    a, b = pair
    for _ in range(50):  # operstate follows carrier after the kernel's linkwatch delay (~1 s)
        if json.loads(sh("ip", "-n", b, "-j", "link", "show", "vb"))[0]["operstate"] == "UP":
            break
        time.sleep(0.1)
    col = NetCollector([Target("a", a), Target("b", b)])
    scrape = Scrape(load_catalogue())
    col.collect(scrape)
    text = scrape.render().decode()
    assert 'aifabric_link_mtu_bytes{node="a",interface="va"} 9000' in text
    assert 'aifabric_link_up{node="b",interface="vb"} 1' in text
    assert 'aifabric_queue_dropped_packets_total{node="a",interface="va",queue="1:"} 0' in text
    assert 'interface="lo"' not in text
    # carrier changes move when the link flaps
    before = col._handles[1].links()
    sh("ip", "-n", b, "link", "set", "vb", "down")
    sh("ip", "-n", b, "link", "set", "vb", "up")
    after = {lk.name: lk for lk in col._handles[1].links()}
    old = next(lk for lk in before if lk.name == "vb").carrier_changes or 0
    assert (after["vb"].carrier_changes or 0) >= old + 2
    # a deleted namespace is a source error, and the collector reopens later
    subprocess.run(["ip", "netns", "del", b], check=True)
    col.close()
    with pytest.raises(Exception, match="cannot open"):
        NetCollector([Target("b", b)]).collect(Scrape(load_catalogue()))
