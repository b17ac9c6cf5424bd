"""A probe bundle gives the readers one ``ip_link`` record per interface per host: the probe's
own ``ip -d -j link show`` (which parses as ``ip-link`` too) is kept as a dot file the readers
skip, and ``ip-link.txt`` is the one they read."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from aifabric.checks.diagnose.engine import load_evidence
from aifabric.dialects.load import load_observed
from aifabric.evidence import parse_text
from aifabric.evidence.linux_net import IpLink
from aifabric.probe.bundle import (
    MANIFEST,
    PROBE_ONLY,
    read_bundle,
    stored_name,
    write_host,
    write_tar,
)
from aifabric.probe.collectors import collect_host
from aifabric.probe.runner import LocalRunner

HOSTS = ("gpu1", "gpu2")


def _probe_bundle(tmp_path: Path) -> tuple[Path, list[str]]:
    """This machine collected once, written as two hosts; the interface names it has."""
    caps = asyncio.run(collect_host(LocalRunner(), timeout_s=20, interval_s=0.0))
    by_name = {c.name: c for c in caps}
    ip_j = by_name["ip-j-link.json"]
    assert ip_j.error is None, ip_j
    # the JSON form alone would give the readers IpLink records of the same interfaces
    assert parse_text(ip_j.stdout).kind == "ip-link"
    names = [e["ifname"] for e in json.loads(ip_j.stdout)]
    b = tmp_path / "bundle"
    for host in HOSTS:
        write_host(b, host, caps)
    return b, names


def test_stored_names() -> None:
    assert stored_name("ip-j-link.json") == ".ip-j-link.json"
    assert stored_name("rdma-devices.txt") == ".rdma-devices.txt"
    assert stored_name("ip-link.txt") == "ip-link.txt"
    assert stored_name("../x") == "_x"
    assert "ip-j-link.json" in PROBE_ONLY


def test_one_ip_link_per_interface_per_host(tmp_path: Path) -> None:
    b, names = _probe_bundle(tmp_path)
    for host in HOSTS:
        assert (b / host / ".ip-j-link.json").is_file()
        assert not (b / host / "ip-j-link.json").exists()
        assert not (b / host / ".ip-j-link.json.json").exists()  # not parsed either
    man = json.loads((b / MANIFEST).read_text())
    entry = next(c for c in man["hosts"]["gpu1"]["captures"] if c["name"] == "ip-j-link.json")
    assert entry["file"] == "gpu1/.ip-j-link.json" and entry["kind"] is None

    def count(root: Path) -> Counter[tuple[str, str]]:
        ev = load_evidence([root])
        return Counter(
            (i.subject, i.record.name) for i in ev.items if isinstance(i.record, IpLink)
        )

    per = count(b)
    assert set(per) == {(h, n) for h in HOSTS for n in names}
    assert set(per.values()) == {1}
    # the same after a tar round trip (dot files travel, and stay unread)
    unpacked = read_bundle(write_tar(b), tmp_path / "unpacked")
    assert (unpacked / "gpu1" / ".ip-j-link.json").is_file()
    assert count(unpacked) == per
    # verify --bundle: the files it reads, and the MTU of each interface from ip-link.txt
    seen: list[Path] = []
    obs = load_observed(bundle=b, devices=list(HOSTS), on_file=seen.append)
    assert not any(p.name.startswith(".") for p in seen)
    assert sum(p.name == "ip-link.txt" for p in seen) == 2
    for host in HOSTS:
        for iface, val in obs.devices[host].host_interfaces.items():
            assert val.src is not None and Path(val.src.file).name == "ip-link.txt", iface
