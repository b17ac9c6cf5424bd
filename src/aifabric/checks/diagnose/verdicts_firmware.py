"""Record verdict on an NVIDIA NIC's firmware against the host driver release beside it:
``diagnose.nic-firmware-driver-mismatch``.

NVIDIA releases the mlx5 host driver (MLNX_OFED, from 2025 DOCA-OFED) and the adapters'
firmware in cycles: a firmware version is ``MAJOR.MINOR.SUBMINOR``, ``MAJOR`` naming the adapter
family (22 ConnectX-6 Dx, 28 ConnectX-7) and ``MINOR`` the cycle, which the driver of the same
cycle was released and tested with (MLNX_OFED 23.10 with ``xx.39``). Each cycle's compatibility
matrix lists the drivers of that cycle and of the one or two before it; MFT's tables give the
previous cycle's firmware as "additional firmware supported". Adapters past their last feature
cycle stay on a frozen branch (ConnectX-5 on ``16.35``), compared with that branch
(``checks/advisories/mlnx-firmware.yaml``, with the NVIDIA pages it was read from).

The driver release is what ``ethtool -i`` prints as ``version`` for ``mlx5_core`` when the
driver is MLNX_OFED's or DOCA-OFED's (``23.10-1.1.9``; the kernel's own driver prints the
kernel release and names no cycle) or what ``ofed_info -s`` prints
(``MLNX_OFED_LINUX-23.10-1.1.9.0:``) anywhere in the input. The firmware is ``ethtool -i``'s
``firmware-version``, ``ibv_devinfo``'s ``fw_ver`` or ``ibstat``'s ``Firmware version``.

- firmware more than one cycle **older** than the driver's (``28.35`` under 23.10's ``28.39``):
  a combination NVIDIA did not test, and the usual first request of its support; features the
  driver expects (new commands, counters, RoCE and congestion-control settings) are missing or
  behave differently → warning, ``config.version-mismatch``;
- firmware more than two cycles **newer** than the driver's: untested as well, but drivers
  tolerate newer firmware better → info.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from aifabric.checks.diagnose.verdict_support import _index
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_info import EthtoolDriver
from aifabric.evidence.infiniband import IbstatCA, IbvDevice
from aifabric.yamlfile import read_yaml_text, validate_data

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["FirmwareTable", "driver_cycle", "firmware_table"]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    sources: tuple[str, ...] = Field(min_length=1)


class _Adapter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    major: int
    name: str
    frozen_minor: int | None = None
    """The last cycle of this family's firmware branch (later drivers keep supporting it)."""


class _Cycle(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    driver: str = Field(pattern=r"^\d+\.\d+$")
    minor: int
    example: str
    sources: tuple[str, ...] = Field(min_length=1)


class FirmwareTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    program: str
    rules: tuple[_Rule, ...]
    adapters: tuple[_Adapter, ...]
    cycles: tuple[_Cycle, ...]


@cache
def firmware_table() -> FirmwareTable:
    """``checks/advisories/mlnx-firmware.yaml``, validated."""
    name = "checks/advisories/mlnx-firmware.yaml"
    text = resources.files("aifabric").joinpath(name).read_text(encoding="utf-8")
    return validate_data(FirmwareTable, read_yaml_text(text, file=name), file=name, text=text)


_OFED_VERSION = re.compile(r"^(\d{1,2}\.\d{1,2})-\d+\.\d+\.\d+")
"""``ethtool -i`` ``version`` of MLNX_OFED's / DOCA-OFED's mlx5_core: ``5.8-1.0.1``,
``23.10-1.1.9``, ``24.10-1.1.4`` (the kernel's own driver prints the kernel release)."""
_OFED_INFO = re.compile(r"\bMLNX_OFED_LINUX-(\d{1,2}\.\d{1,2})-\d+\.\d+\.\d+")
_FW = re.compile(r"^\s*(\d{1,3})\.(\d{1,3})\.(\d{1,5})\b")


def driver_cycle(version: str) -> str | None:
    """The release cycle of an mlx5 driver version as ``ethtool -i`` prints it, ``None`` for
    the kernel's own driver."""
    m = _OFED_VERSION.match(version.strip())
    return m[1] if m else None


def _input_cycle(ev: Evidence) -> str | None:
    """The driver cycle the input names (an mlx5_core ``ethtool -i`` or ``ofed_info -s``),
    computed once per evidence."""
    idx = _index(ev)
    key = ("mlx5-driver-cycle", 0)
    if key in idx.memo:
        got = idx.memo[key]
        return got if isinstance(got, str) else None
    found: str | None = None
    for item in ev.items:
        rec = item.record
        if isinstance(rec, EthtoolDriver) and rec.driver == "mlx5_core" and rec.version:
            found = driver_cycle(rec.version)
            if found:
                break
    if found is None:
        for ef in ev.files:
            for _, line in ef.own_lines():
                if "MLNX_OFED_LINUX-" in line and (m := _OFED_INFO.search(line)):
                    found = m[1]
                    break
            if found:
                break
    idx.memo[key] = found
    return found


def _firmware(rec: Record) -> tuple[str, str | None] | None:
    """(firmware as printed, the driver cycle this record itself names) of an NVIDIA NIC."""
    if isinstance(rec, EthtoolDriver):
        if rec.driver != "mlx5_core" or not rec.firmware:
            return None
        return rec.firmware, driver_cycle(rec.version or "")
    if isinstance(rec, IbvDevice) and rec.fw_ver:
        nvidia = rec.vendor_id in _NVIDIA_VENDORS or rec.hca_id.startswith("mlx5")
        return (rec.fw_ver, None) if nvidia else None
    if isinstance(rec, IbstatCA) and rec.firmware_version:
        nvidia = rec.ca.startswith("mlx5") or (rec.ca_type or "").startswith("MT")
        return (rec.firmware_version, None) if nvidia else None
    return None


_NVIDIA_VENDORS = frozenset({0x02C9, 0x15B3})
"""PCI vendor ids of Mellanox/NVIDIA networking (other makes' firmware numbers mean nothing
here: Broadcom's ``20.6.143.0`` is not a ConnectX-6)."""


@verdict("ethtool_driver", "ibv_device", "ibstat_ca")
def _firmware_against_driver(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    got = _firmware(rec)
    if got is None:
        return
    firmware, own = got
    m = _FW.match(firmware)
    if m is None:
        return
    table = firmware_table()
    adapter = next((a for a in table.adapters if a.major == int(m[1])), None)
    cycle_name = own or _input_cycle(ev)
    cycle = next((c for c in table.cycles if c.driver == cycle_name), None)
    if adapter is None or cycle is None:
        return
    expected = min(cycle.minor, adapter.frozen_minor or cycle.minor)
    minor = int(m[2])
    shown = firmware.split()[0]
    branch = f"{adapter.major}.{expected}.x"
    why = (
        f"Firmware {shown} is {adapter.name} firmware (major {adapter.major}) of release cycle "
        f"{minor}; the mlx5 driver of release {cycle.driver} was released and tested with "
        f"firmware of cycle {cycle.minor} ({cycle.example})"
        + (f", and {adapter.name} stays on its {adapter.major}.{adapter.frozen_minor} branch"
           if adapter.frozen_minor is not None and adapter.frozen_minor < cycle.minor else "")
        + ". " + table.rules[0].text
    )  # fmt: skip
    refs = ("S20", *cycle.sources, *table.rules[0].sources)  # S20: the troubleshooting table
    if minor < expected - 1:
        yield Verdict(
            id="diagnose.nic-firmware-driver-mismatch",
            severity="warning",
            cause="config.version-mismatch",
            message=(
                f"{adapter.name} firmware {shown} is {expected - minor} release cycles older "
                f"than the firmware of its mlx5 driver release {cycle.driver} ({branch})"
            ),
            explanation=why + " " + table.rules[1].text,
            fix=(
                f"Update the adapter's firmware to the {branch} firmware of the driver release "
                "(mlxfwmanager --online -u, or flint/mstflint with the image from NVIDIA's "
                "firmware page; an OEM adapter from its vendor), or install the driver release of "
                "the firmware's cycle; the new firmware takes effect after mlxfwreset or a reboot."
            ),
            refs=refs,
            confidence=0.3,
        )
    elif minor > expected + 2:
        yield Verdict(
            id="diagnose.nic-firmware-driver-mismatch",
            severity="info",
            cause="config.version-mismatch",
            message=(
                f"{adapter.name} firmware {shown} is {minor - expected} release cycles newer "
                f"than the firmware of its mlx5 driver release {cycle.driver} ({branch})"
            ),
            explanation=why,
            fix="Install the driver release of the firmware's cycle if the NIC misbehaves.",
            refs=refs,
            confidence=0.15,
        )
