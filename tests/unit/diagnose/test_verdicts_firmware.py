"""An NVIDIA NIC's firmware against the mlx5 driver release beside it
(``diagnose.nic-firmware-driver-mismatch``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.checks.diagnose.engine import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_firmware import driver_cycle, firmware_table

FIXTURES = Path(__file__).parents[2] / "fixtures" / "evidence"
# A real ibstat: ConnectX-7 ports on 28.39.1002 and a ConnectX-6 Dx on 22.31.1014
# (source: https://github.com/kvcache-ai/Mooncake/issues/1999, tests/fixtures/evidence/ibstat)
IBSTAT = (FIXTURES / "ibstat" / "mooncake-1999-cx7-roce" / "input.txt").read_text()
# `ofed_info -s` as printed (source: DaoCloud/DaoCloud-docs,
# docs/zh/docs/network/modules/spiderpool/install/ofed_driver.md)
OFED_INFO = "$ ofed_info -s\nMLNX_OFED_LINUX-23.07-0.5.1.2:\n"

# ethtool -i's layout (ethtool.c dump_drvinfo: driver, version, firmware-version, ...)
ETHTOOL_I = (
    "# ethtool -i ens4np0\n"
    "driver: mlx5_core\n"
    "version: {version}\n"
    "firmware-version: {firmware} (MT_0000000838)\n"
    "expansion-rom-version: \n"
    "bus-info: 0000:e6:00.0\n"
    "supports-statistics: yes\n"
    "supports-test: yes\n"
    "supports-eeprom-access: no\n"
    "supports-register-dump: no\n"
    "supports-priv-flags: yes\n"
)


def _found(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    path = tmp_path / "paste.txt"
    path.write_text(text)
    return [(f.severity, f.message) for f in diagnose(load_evidence([path])).findings
            if f.check == "diagnose.nic-firmware-driver-mismatch"]  # fmt: skip


def test_driver_cycle_of_the_ofed_driver_and_not_of_the_kernels_own() -> None:
    assert driver_cycle("23.10-1.1.9") == "23.10"
    assert driver_cycle("5.8-1.0.1") == "5.8"
    assert driver_cycle("24.10-1.1.4") == "24.10"
    assert driver_cycle("5.15.0-91-generic") is None
    assert driver_cycle("6.8.0") is None


def test_cycles_follow_the_firmware_numbering() -> None:
    cycles = firmware_table().cycles
    minors = [c.minor for c in cycles]
    assert minors == sorted(minors) and len(set(minors)) == len(minors)
    # 23.10 is released with xx.39 (NVIDIA writes "xx.39.2048" on its legal-notices page)
    assert {c.driver: c.minor for c in cycles}["23.10"] == 39


def test_firmware_of_the_drivers_cycle_is_quiet(tmp_path: Path) -> None:
    assert _found(tmp_path, ETHTOOL_I.format(version="23.10-1.1.9", firmware="28.39.3560")) == []
    # one cycle older is still in the driver's tested set
    assert _found(tmp_path, ETHTOOL_I.format(version="23.10-1.1.9", firmware="28.38.1002")) == []


def test_firmware_many_cycles_older_than_the_ofed_driver_is_a_warning(tmp_path: Path) -> None:
    (hit,) = _found(tmp_path, ETHTOOL_I.format(version="23.10-1.1.9", firmware="28.35.1012"))
    assert hit[0] == "warning"
    assert "ConnectX-7 firmware 28.35.1012 is 4 release cycles older" in hit[1]


def test_kernel_driver_names_no_cycle(tmp_path: Path) -> None:
    text = ETHTOOL_I.format(version="5.15.0-91-generic", firmware="28.35.1012")
    assert _found(tmp_path, text) == []


def test_ofed_info_beside_a_real_ibstat(tmp_path: Path) -> None:
    # 23.07 is released with xx.38: the ConnectX-7 ports (28.39) are one cycle newer (tested),
    # the ConnectX-6 Dx (22.31) seven cycles older
    got = _found(tmp_path, OFED_INFO + IBSTAT)
    assert [s for s, _ in got] == ["warning"]
    assert "ConnectX-6 Dx firmware 22.31.1014 is 7 release cycles older" in got[0][1]
    # without the driver release the same ibstat says nothing about firmware
    assert _found(tmp_path, IBSTAT) == []


@pytest.mark.parametrize(
    ("firmware", "expected"),
    [("16.35.4030", []), ("16.34.1002", []), ("16.28.2006", ["warning"]),
     ("20.43.2026", []), ("20.40.1000", ["warning"])],
)  # fmt: skip
def test_adapters_on_a_frozen_branch_are_compared_with_it(
    tmp_path: Path, firmware: str, expected: list[str]
) -> None:
    # ConnectX-5 stays on 16.35 and ConnectX-6 on 20.43 in the 24.10 cycle (DOCA 2.9.1 General
    # Support: 16.35.4030, 20.43.2026)
    got = _found(tmp_path, ETHTOOL_I.format(version="24.10-1.1.4", firmware=firmware))
    assert [s for s, _ in got] == expected


def test_firmware_far_newer_than_the_driver_is_information(tmp_path: Path) -> None:
    (hit,) = _found(tmp_path, ETHTOOL_I.format(version="5.9-0.5.6", firmware="28.43.1014"))
    assert hit[0] == "info"
    assert "7 release cycles newer" in hit[1]


def test_the_older_cycles_5_0_to_5_7() -> None:
    # DPDK release notes' NVIDIA test platforms (20.05 to 22.07, 20.11.x, 21.11.x): MLNX_OFED
    # 5.0-2.1.8.0 with 16.27.2008 ... 5.7-1.0.2.0 with 16.34.1002
    cycles = {c.driver: c.minor for c in firmware_table().cycles}
    assert [cycles[f"5.{n}"] for n in range(8)] == [27, 28, 29, 30, 31, 32, 33, 34]
    assert cycles["5.8"] == 35
    # MLNX_OFED 4.9 LTS was not read: no verdict names it
    assert "4.9" not in cycles
    assert driver_cycle("5.4-1.0.3") == "5.4"


@pytest.mark.parametrize(
    ("version", "firmware"),
    [("5.0-2.1.8", "22.27.2008"), ("5.1-0.6.6", "16.28.1002"), ("5.2-2.2.0", "16.29.2002"),
     ("5.3-1.0.0", "14.30.1004"), ("5.4-1.0.3", "16.31.1014"), ("5.5-1.0.3", "22.32.2004"),
     ("5.6-2.0.9", "28.33.2028"), ("5.7-1.0.2", "22.34.1002")],
)  # fmt: skip
def test_real_pairs_of_the_older_cycles_are_quiet(
    tmp_path: Path, version: str, firmware: str
) -> None:
    # each pair as the DPDK release notes list it (driver MLNX_OFED_LINUX-<version>.x, firmware)
    assert _found(tmp_path, ETHTOOL_I.format(version=version, firmware=firmware)) == []


def test_driver_5_4_with_firmware_of_the_5_0_cycle_is_a_warning(tmp_path: Path) -> None:
    # 16.31.1014 is the firmware 5.4-1.0.3.0 was tested with, 16.27.2008 the 5.0 cycle's
    (hit,) = _found(tmp_path, ETHTOOL_I.format(version="5.4-1.0.3", firmware="16.27.2008"))
    assert hit[0] == "warning"
    assert "ConnectX-5 firmware 16.27.2008 is 4 release cycles older" in hit[1]
    assert "(16.31.x)" in hit[1]


def test_ofed_info_of_an_older_cycle_beside_a_real_ibstat(tmp_path: Path) -> None:
    # MLNX_OFED 5.4 is released with xx.31: the ConnectX-6 Dx (22.31.1014) matches, the
    # ConnectX-7 ports (28.39.1002) are eight cycles newer (information)
    got = _found(tmp_path, "$ ofed_info -s\nMLNX_OFED_LINUX-5.4-1.0.3.0:\n" + IBSTAT)
    assert got and {s for s, _ in got} == {"info"}
    assert all("ConnectX-7 firmware 28.39.1002 is 8 release cycles newer" in m for _, m in got)


@pytest.mark.parametrize(
    ("version", "firmware", "expected"),
    [
        # ConnectX-4 Lx on 14.32.1010 under 5.6 and 5.7 (mlxup 4.20/4.21, DPDK 20.11.6): frozen
        ("5.7-1.0.2", "14.32.1010", []), ("5.6-2.0.9", "14.32.1010", []),
        # before its freeze it follows the cycles: 14.28.1002 under 5.4 is three cycles older
        ("5.4-1.0.3", "14.31.1014", []), ("5.4-1.0.3", "14.28.1002", ["warning"]),
        # ConnectX-4 on 12.28.2006 (its last GA firmware) under 5.5 and 5.7 (mlxup 4.18, 4.21)
        ("5.5-1.0.3", "12.28.2006", []), ("5.7-1.0.2", "12.28.2006", []),
        # ConnectX-5 still followed the cycles in 5.7 (16.34.1002): 16.31.1014 is three older
        ("5.7-1.0.2", "16.34.1002", []), ("5.7-1.0.2", "16.31.1014", ["warning"]),
    ],
)  # fmt: skip
def test_frozen_branches_in_the_older_cycles(
    tmp_path: Path, version: str, firmware: str, expected: list[str]
) -> None:
    got = _found(tmp_path, ETHTOOL_I.format(version=version, firmware=firmware))
    assert [s for s, _ in got] == expected
