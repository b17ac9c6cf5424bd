"""The inputs of ``aifabric design``, recorded in the fabric file it writes (``design:``).

A fabric file may also hold *only* a ``design:`` section: loading it then runs the design and
gives the full fabric (the large bundled examples are stored this way).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from aifabric.model.base import StrictModel

__all__ = ["DesignSpec"]


class DesignSpec(StrictModel):
    """Cluster parameters from which :func:`aifabric.design.design_fabric` sizes a fabric."""

    name: str = "fabric"
    gpus: int = Field(ge=1)
    gpus_per_server: int = Field(ge=1, le=72)
    nics_per_server: int | None = Field(
        default=None, ge=1, le=32, description="RDMA NICs per server; default one per GPU"
    )
    nic_ports: int = Field(default=1, ge=1, le=4, description="ports per NIC that are cabled")
    nic_speed_gbps: float = Field(gt=0)
    nic_model: str | None = None
    pcie_gen: int = Field(default=5, ge=1, le=7, description="generation of the NIC slots (S9)")
    pcie_lanes: int = Field(default=16, ge=1, le=32)
    gpu_model: str | None = None
    server_model: str | None = None
    switch_model: str | None = None
    switch_ports: int | None = Field(default=None, ge=4, description="physical ports per switch")
    switch_speed_gbps: float | None = Field(default=None, gt=0)
    oversubscription: float = Field(default=1.0, gt=0, description="leaf downlink/uplink target")
    spine_oversubscription: float = Field(
        default=1.0, gt=0, description="spine down/up target in three tiers"
    )
    layout: Literal["rail", "tor"] = "rail"
    planes: int = Field(default=1, ge=1, le=8)
    tiers: Literal["auto", "2", "3"] = "auto"
    servers_per_su: int | None = Field(default=None, ge=1, description="rail layout SU size")
    min_spines: int = Field(default=2, ge=1, description="redundancy floor per plane or pod")
    sites: int = Field(default=1, ge=1, le=16)
    inter_site_links_per_spine: int = Field(default=1, ge=1, le=64)
    ip_plan: Literal["auto", "l2", "l3"] = "auto"
    l2_max_hosts: int = Field(
        default=512,
        ge=2,
        description="auto picks one L2 subnet (S19) up to this many RoCE ports per plane",
    )
    transport: Literal["roce", "ib"] = "roce"
    host_mtu_bytes: int = Field(default=9000, ge=1280, le=9216)
    fabric_mtu_bytes: int = Field(default=9216, ge=1280, le=9216)
    host_cable_m: float | None = Field(default=None, gt=0, description="default by layout")
    fabric_cable_m: float = Field(default=50.0, gt=0)
    core_cable_m: float = Field(default=150.0, gt=0)
    inter_site_cable_m: float = Field(default=10_000.0, gt=0)
    spares_percent: float = Field(
        default=2.0, ge=0, le=100, description="spare optics and cables, rounded up per item"
    )
    spare_switches: int = Field(default=0, ge=0, description="cold-spare switches per model")

    @model_validator(mode="after")
    def _consistent(self) -> DesignSpec:
        if self.gpus % self.gpus_per_server != 0:
            raise ValueError(
                f"gpus ({self.gpus}) is not divisible by gpus_per_server ({self.gpus_per_server})"
            )
        if self.gpus % self.sites != 0 or (self.gpus // self.gpus_per_server) % self.sites != 0:
            raise ValueError(
                f"{self.gpus // self.gpus_per_server} servers cannot be split "
                f"evenly over {self.sites} sites"
            )
        ports = self.host_ports_per_server
        if ports % self.planes != 0:
            raise ValueError(
                f"{ports} host ports per server cannot be spread evenly over {self.planes} planes"
            )
        if self.switch_model is None and (
            self.switch_ports is None or self.switch_speed_gbps is None
        ):
            raise ValueError("give --switch-model, or both --switch-ports and --switch-speed")
        return self

    @property
    def servers(self) -> int:
        return self.gpus // self.gpus_per_server

    @property
    def nics(self) -> int:
        """NICs per server (default: one per GPU, as in S7)."""
        return self.nics_per_server if self.nics_per_server is not None else self.gpus_per_server

    @property
    def host_ports_per_server(self) -> int:
        return self.nics * self.nic_ports

    @property
    def host_length_m(self) -> float:
        """Server-to-leaf cable length: in-rack for ToR (2 m), to the SU's leaf rack for rails."""
        if self.host_cable_m is not None:
            return self.host_cable_m
        return 2.0 if self.layout == "tor" else 10.0
