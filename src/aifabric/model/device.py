"""Devices of a fabric: GPU servers (with NICs and their PCIe attachment), switches and
middleboxes. A device name is unique across all three kinds; links name devices by it."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from aifabric.model.base import IPv4If, StrictModel, Tup

__all__ = [
    "SWITCH_ROLE_TIER",
    "Breakout",
    "HostPort",
    "Middlebox",
    "Nic",
    "Server",
    "Switch",
    "SwitchRole",
    "expand_port_range",
    "parse_switch_port",
]

Name = str


class HostPort(StrictModel):
    """A network port of a server NIC: the host end of a link (``mlx5_0``, ``nic0``, ``eth2``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    speed_gbps: float = Field(gt=0, description="configured port speed, Gb/s")
    rail: int | None = Field(default=None, ge=0, description="rail index in a rail-optimized SU")
    plane: int | None = Field(default=None, ge=0, description="network plane this port belongs to")
    purpose: Literal["roce", "ib", "frontend", "storage", "management"] = Field(
        default="roce", description="what traffic the port carries (S8, S10: RoCE vs the rest)"
    )


class Nic(StrictModel):
    """A network adapter in one PCIe slot; its ports share the slot's bandwidth (S9).

    ``gdr`` says whether GPUDirect RDMA works between the NIC and its local GPUs. Without it
    (``gdr: false``) NCCL routes GPU↔NIC traffic through host memory: the GPU writes what it
    sends into a host buffer the NIC reads, and reads what it receives from a host buffer the
    NIC wrote, which costs PCIe-switch uplink and host-memory bandwidth (``aifabric estimate``
    models it; ``--no-gdr`` says the same from the command line). A probe of the host
    (``nvidia-peermem`` loaded, NCCL's ``/GDRDMA`` in its log) fills it; unset means unknown.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    model: str | None = Field(default=None, description="catalog NIC name, e.g. ConnectX-7")
    pcie_gen: int = Field(ge=1, le=7, description="generation the slot runs at (S9)")
    pcie_lanes: int = Field(default=16, ge=1, le=32)
    gpus: Tup[int] = Field(default=(), description="local GPU indices behind the same PCIe switch")
    gdr: bool | None = Field(
        default=None,
        description=(
            "GPUDirect RDMA between this NIC and its GPUs: false means NCCL stages every byte "
            "through host memory (no nvidia-peermem/DMA-BUF, ACS, NCCL_NET_GDR_LEVEL); "
            "unset means not known (treated as on, NCCL's default where supported)"
        ),
    )
    ports: Tup[HostPort] = Field(min_length=1)

    @property
    def total_gbps(self) -> float:
        """Sum of the configured port speeds: what the slot must feed."""
        return sum(p.speed_gbps for p in self.ports)


class Server(StrictModel):
    """A GPU server (or any host on the fabric)."""

    name: Name = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    site: str | None = None
    pod: str | None = None
    su: str | None = Field(default=None, description="scalable unit")
    rack: str | None = None
    model: str | None = Field(default=None, description="server model, e.g. DGX-H100")
    gpu_model: str | None = Field(default=None, description="catalog GPU name, e.g. H100")
    gpus: int = Field(ge=0)
    nics: Tup[Nic] = ()

    @property
    def ports(self) -> tuple[HostPort, ...]:
        return tuple(p for nic in self.nics for p in nic.ports)


SwitchRole = Literal[
    "leaf",
    "spine",
    "super_spine",  # CLOS (S6)
    "access",
    "aggregation",
    "core",  # traditional three-tier (S6, S17 "before")
    "border",
    "management",
]

SWITCH_ROLE_TIER: dict[str, int] = {
    "leaf": 1,
    "access": 1,
    "management": 1,
    "spine": 2,
    "aggregation": 2,
    "border": 2,
    "super_spine": 3,
    "core": 3,
}
"""Tier of each role, counted from the hosts: 1 is the switch a server plugs into."""

_RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


_PORT_RE = re.compile(r"^(?:Ethernet|swp|Eth|et|p)(\d+)(?:(?:/|s)(\d+))?$")


def parse_switch_port(name: str) -> tuple[int, int | None] | None:
    """aifabric's neutral switch port names: ``Ethernet7`` -> (7, None), ``Ethernet7/2`` ->
    (7, 2) (sub-port 2 of a broken-out port 7). ``swp7s1`` reads the same way. Other names
    (vendor forms the model does not interpret) give None."""
    match = _PORT_RE.match(name)
    if match is None:
        return None
    sub = match.group(2)
    return int(match.group(1)), int(sub) if sub is not None else None


def expand_port_range(text: str) -> list[int]:
    """``"1-4,7" -> [1, 2, 3, 4, 7]`` (physical port numbers, 1-based)."""
    numbers: list[int] = []
    for part in text.split(","):
        match = _RANGE_RE.match(part)
        if match is None:
            raise ValueError(f"port range {text!r}: expected numbers and ranges like 1-32,35")
        lo = int(match.group(1))
        hi = int(match.group(2) or lo)
        if lo < 1 or hi < lo:
            raise ValueError(
                f"port range {text!r}: {part.strip()!r} is not an ascending range from 1"
            )
        numbers.extend(range(lo, hi + 1))
    return numbers


class Breakout(StrictModel):
    """Physical ports split into sub-ports (S7: a 400G port as 2x200G).

    Sub-port ``k`` (1-based) of physical port ``n`` is named ``Ethernet{n}/{k}``.
    """

    ports: str = Field(description="physical port numbers, e.g. '1-32'")
    count: int = Field(ge=2, le=8)
    speed_gbps: float = Field(gt=0)

    @field_validator("ports")
    @classmethod
    def _check_range(cls, value: str) -> str:
        expand_port_range(value)
        return value


class Switch(StrictModel):
    """A switch. ``ports`` and ``port_speed_gbps`` describe the physical front panel."""

    name: Name = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    role: SwitchRole
    model: str | None = Field(default=None, description="catalog switch name, e.g. SN5600")
    switch_class: Literal["datacenter", "l3", "home"] = Field(
        description="S10: datacenter for the AI fabric; l3 management only; home never"
    )
    ports: int = Field(ge=1, description="physical ports (radix at port_speed_gbps)")
    port_speed_gbps: float = Field(gt=0)
    buffer_bytes: int | None = Field(default=None, ge=0)
    breakouts: Tup[Breakout] = ()
    site: str | None = None
    pod: str | None = None
    su: str | None = None
    rack: str | None = None
    plane: int | None = Field(default=None, ge=0)
    rail: int | None = Field(default=None, ge=0)
    asn: int | None = Field(default=None, ge=1, le=4294967295)
    loopback_ipv4: IPv4If | None = None

    @property
    def tier(self) -> int:
        return SWITCH_ROLE_TIER[self.role]


class Middlebox(StrictModel):
    """A device that sits in the data path without being part of the CLOS: a firewall between
    sites (S17), a load balancer, a NAT gateway, a WAN optimizer."""

    name: Name = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    kind: Literal["firewall", "load-balancer", "nat-gateway", "wan-optimizer", "ids"]
    site: str | None = None
    stateful: bool = True
    throughput_gbps: float | None = Field(default=None, gt=0)
    session_rate_limit_gbps: float | None = Field(
        default=None, gt=0, description="per-connection throttle, when the box applies one (S17)"
    )
