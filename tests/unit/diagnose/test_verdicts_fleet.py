"""Fleet verdicts of checks/diagnose/verdicts_fleet.py: probe-style bundles ``DIR/<host>/<file>``
built from real captures (``ip link``, ``ethtool``, ``ethtool -i`` fixtures), with one host's
value changed; the odd host is named with the majority value and the counts, a uniform bundle
and a bundle without a clear majority are silent."""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose import load_evidence
from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts, verdicts_for
from aifabric.checks.diagnose.verdicts_fleet import FLEET_MIN_HOSTS
from tests.unit.evidence.fixtures import case

HOSTS = ("gpu1", "gpu2", "gpu3", "gpu4")
IP_LINK = case("ip-link", "lab-veth-healthy").text()  # b0@if3 mtu 9000
LINK_1G = case("ethtool-info", "aqc111-1g-link-prompt").text()  # eth2 Speed: 1000Mb/s
DRIVER_MLX5 = case("ethtool-info", "ethq-mlx5-connectx4lx-driver").text()  # no interface line
DRIVER_NO_PROMPT = "\n".join(DRIVER_MLX5.splitlines()[1:]) + "\n"  # as the probe writes it


def _bundle(tmp_path: Path, files: dict[str, dict[str, str]]) -> Path:
    root = tmp_path / "bundle"
    for host, captures in files.items():
        (root / host).mkdir(parents=True)
        for name, text in captures.items():
            (root / host / name).write_text(text)
    return root


def _fleet(root: Path) -> list[tuple[str, Verdict]]:
    ev = load_evidence([root])
    out = []
    for item in ev.items:
        for fn in verdicts_for(item.record.record_type):
            out += [(item.subject, v) for v in fn(item.record, ev) if ".fleet-" in v.id]
    return out


def _same(tmp_path: Path, name: str, text: str, odd: dict[str, str] | None = None,
          hosts: tuple[str, ...] = HOSTS) -> list[tuple[str, Verdict]]:  # fmt: skip
    odd = odd or {}
    return _fleet(_bundle(tmp_path, {h: {name: odd.get(h, text)} for h in hosts}))


def test_fleet_verdicts_are_registered_with_known_causes() -> None:
    table = load_verdicts()
    for rtype in ("ip_link", "ethtool_link", "ethtool_driver"):
        assert any(fn.__module__.endswith("verdicts_fleet") for fn in table[rtype]), rtype
    causes = set(all_causes())
    assert {"fabric.mtu", "fabric.slow-link", "config.version-mismatch"} <= causes


def test_one_host_with_mtu_1500_is_named(tmp_path: Path) -> None:
    got = _same(tmp_path, "ip-link.txt", IP_LINK,
                {"gpu3": IP_LINK.replace("mtu 9000", "mtu 1500")})  # fmt: skip
    assert [(s, v.id, v.severity, v.cause) for s, v in got] == [
        ("gpu3", "diagnose.fleet-mtu-differs", "warning", "fabric.mtu")
    ]
    v = got[0][1]
    assert v.message == "gpu3 has MTU 1500 on b0 while 3 of the 4 hosts with b0 have MTU 9000"
    assert v.refs == ("S11", "S20")
    assert "mtu 9000" in v.fix


def test_uniform_bundle_is_silent(tmp_path: Path) -> None:
    files = {"ip-link.txt": IP_LINK, "ethtool-eth2.txt": LINK_1G,
             "ethtool-i-p3p1.txt": DRIVER_NO_PROMPT}  # fmt: skip
    assert _fleet(_bundle(tmp_path, dict.fromkeys(HOSTS, files))) == []


def test_slow_port_is_named_with_both_speeds(tmp_path: Path) -> None:
    fast = LINK_1G.replace("Speed: 1000Mb/s", "Speed: 400000Mb/s")
    got = _same(tmp_path, "ethtool-eth2.txt", fast, {"gpu2": LINK_1G})
    [(subject, v)] = got
    assert (subject, v.id, v.cause) == ("gpu2", "diagnose.fleet-speed-differs", "fabric.slow-link")
    assert v.message == (
        "gpu2's eth2 runs at 1000 Mb/s while 3 of the 4 hosts with eth2 run at 400000 Mb/s"
    )


def test_firmware_and_driver_from_the_probe_file_name(tmp_path: Path) -> None:
    old_fw = DRIVER_NO_PROMPT.replace("14.23.1020", "14.21.2010")
    new_drv = DRIVER_NO_PROMPT.replace("version: 3.0-1 (January 2015)", "version: 5.15.0")
    got = _same(tmp_path, "ethtool-i-p3p1.txt", DRIVER_NO_PROMPT,
                {"gpu1": old_fw, "gpu4": new_drv})  # fmt: skip
    assert sorted((s, v.id) for s, v in got) == [
        ("gpu1", "diagnose.fleet-firmware-differs"),
        ("gpu4", "diagnose.fleet-driver-differs"),
    ]
    fw = next(v for s, v in got if s == "gpu1")
    assert fw.cause == "config.version-mismatch"
    assert fw.message == (
        "gpu1's p3p1 has NIC firmware 14.21.2010 while 3 of the 4 hosts with p3p1 have 14.23.1020"
    )
    drv = next(v for s, v in got if s == "gpu4")
    assert "driver mlx5_core 5.15.0" in drv.message
    assert "have mlx5_core 3.0-1 (January 2015)" in drv.message


def test_two_odd_hosts_name_each_other(tmp_path: Path) -> None:
    hosts = ("h1", "h2", "h3", "h4", "h5")
    odd = IP_LINK.replace("mtu 9000", "mtu 1500")
    got = _same(tmp_path, "ip-link.txt", IP_LINK, {"h2": odd, "h5": odd}, hosts)
    assert [s for s, _ in got] == ["h2", "h5"]
    assert got[0][1].message.endswith("while 3 of the 5 hosts with b0 have MTU 9000; also odd: h5")


def test_no_verdict_without_enough_hosts_or_a_clear_majority(tmp_path: Path) -> None:
    odd = IP_LINK.replace("mtu 9000", "mtu 1500")
    assert FLEET_MIN_HOSTS == 3
    two = _same(tmp_path / "a", "ip-link.txt", IP_LINK, {"gpu2": odd}, ("gpu1", "gpu2"))
    assert two == []
    split = _same(tmp_path / "b", "ip-link.txt", IP_LINK, {"gpu3": odd, "gpu4": odd})
    assert split == []  # 2 against 2: no telling which side is wrong


def test_link_down_speed_is_not_compared(tmp_path: Path) -> None:
    down = case("ethtool-info", "rtl8126-link-down-unknown").text().replace("enp14s0", "eth2")
    assert _same(tmp_path, "ethtool-eth2.txt", LINK_1G, {"gpu1": down}) == []
