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
