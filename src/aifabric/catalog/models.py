"""Typed hardware catalog entries. Every entry names its ``source``.

The catalog is data (``catalog/data/*.yaml``); these models validate it. Users add or override
entries with their own YAML file of the same shape (``--catalog FILE``).

Units follow :mod:`aifabric.units`: ``_gbps`` bits per second, ``_GBps`` decimal bytes per
second, ``_bytes``, ``_m``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aifabric.model.base import Tup

__all__ = [
    "BreakoutMode",
    "CableSpec",
    "CatalogFile",
    "GpuSpec",
    "ModuleSpec",
    "NicSpec",
    "PcieGenSpec",
    "SwitchClass",
    "SwitchSpec",
]


SwitchClass = Literal["datacenter", "l3", "home"]
"""S10: data-centre switches for the AI fabric; plain L3 for management only; home never."""


class _Entry(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    name: str = Field(description="catalog key, as users type it (e.g. 'ConnectX-7', 'SN5600')")
    source: str = Field(
        min_length=8, description="where the figures come from (datasheet, standard, URL)"
    )
    note: str | None = None


class GpuSpec(_Entry):
    """A GPU and its scale-up (NVLink / Infinity Fabric) bandwidth."""

    vendor: str
    architecture: str
    compute_capability: str | None = Field(
        default=None, description="NVIDIA SM version, e.g. '9.0'"
    )
    scale_up: Literal["nvlink", "infinity-fabric", "pcie"]
    scale_up_links: int | None = Field(default=None, ge=0)
    scale_up_GBps: float | None = Field(
        default=None, gt=0, description="raw scale-up bandwidth per direction per GPU, GB/s"
    )
    nccl_scale_up_GBps: float | None = Field(
        default=None,
        gt=0,
        description="what NCCL's topology model assumes per direction (links x per-link constant)",
    )
    nvls: bool = Field(default=False, description="NVLink SHARP (NVSwitch in-network reduction)")
    memory_GiB: float | None = None
    pcie_gen: int = Field(ge=1, le=7)
    pcie_lanes: int = Field(default=16, ge=1, le=32)
    host_link: Literal["pcie", "nvlink-c2c"] = Field(
        default="pcie",
        description="how the GPU reaches host memory: PCIe, or NVLink-C2C on Grace superchips",
    )
    host_link_GBps: float | None = Field(
        default=None,
        gt=0,
        description="per-direction GPU-host bandwidth when it is not PCIe (NVLink-C2C: 450)",
    )
    host_memory_GBps: float | None = Field(
        default=None,
        gt=0,
        description="peak CPU memory bandwidth of a superchip's own CPU (host staging, no GDR)",
    )


class NicSpec(_Entry):
    """A network adapter (one card, possibly several ports sharing one PCIe slot)."""

    vendor: str
    ports: int = Field(ge=1, le=8)
    max_speed_gbps: float = Field(gt=0, description="fastest speed of one port")
    speeds_gbps: Tup[float] = Field(description="port speeds the card supports")
    total_gbps: float | None = Field(
        default=None, gt=0, description="aggregate the card can carry, when less than ports x max"
    )
    pcie_gen: int = Field(ge=1, le=7)
    pcie_lanes: int = Field(default=16, ge=1, le=32)
    link_layers: Tup[Literal["ethernet", "infiniband"]]
    roce: bool = True
    form_factor: str | None = Field(default=None, description="cage, e.g. OSFP, QSFP112")
    pci_vendor_id: str | None = Field(
        default=None,
        pattern=r"^0x[0-9a-f]{4}$",
        description="PCI vendor id (NCCL's socket transport tunes itself by it: 0x1d0f AWS)",
    )


class PcieGenSpec(_Entry):
    """One PCIe generation: per-lane signalling and encoding, to derive per-direction bandwidth.

    raw_GBps(lanes)       = transfer_rate_GTps * lanes * encoding_efficiency / 8
    effective_GBps(lanes) = raw_GBps(lanes) * mps / (mps + tlp_overhead_bytes)
    """

    gen: int = Field(ge=1, le=7)
    transfer_rate_GTps: float = Field(gt=0)
    encoding: str = Field(description="e.g. '8b/10b', '128b/130b', 'FLIT 1b/1b'")
    encoding_efficiency: float = Field(gt=0, le=1)
    tlp_overhead_bytes: int = Field(
        ge=0, description="bytes of header/framing per TLP (sequence, header, LCRC, DLLP share)"
    )
    nccl_model_x16_GBps: float | None = Field(
        default=None, description="what NCCL's topology model uses for x16 (width*speed/80)"
    )
    measured_x16_GBps: float | None = Field(default=None, description="a published measurement")
    measured_source: str | None = None

    def raw_GBps(self, lanes: int) -> float:
        """Raw per-direction bandwidth after line encoding, decimal GB/s."""
        return self.transfer_rate_GTps * lanes * self.encoding_efficiency / 8.0

    def effective_GBps(self, lanes: int, max_payload_bytes: int = 256) -> float:
        """Per-direction payload bandwidth after TLP overhead at a given max payload size."""
        mps = max_payload_bytes
        return self.raw_GBps(lanes) * mps / (mps + self.tlp_overhead_bytes)


class BreakoutMode(BaseModel):
    """A port split into ``count`` sub-ports of ``speed_gbps`` each (S7: a 400G port as 2x200G)."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    count: int = Field(ge=1, le=8)
    speed_gbps: float = Field(gt=0)
    standard: str | None = Field(
        default=None, description="for a transceiver: the standard each sub-link speaks"
    )


class SwitchSpec(_Entry):
    """A switch model: radix, speeds, buffer, class and lossless features (S10)."""

    vendor: str
    asic: str | None = None
    switch_class: SwitchClass
    link_layer: Literal["ethernet", "infiniband"] = "ethernet"
    ports: int = Field(ge=1, description="physical ports at port_speed_gbps")
    port_speed_gbps: float = Field(gt=0)
    form_factor: str | None = None
    breakouts: Tup[BreakoutMode] = ()
    buffer_bytes: int | None = Field(default=None, ge=0, description="packet buffer, shared")
    pfc: bool
    ecn: bool
    roce_telemetry: bool = False
    pfc_watchdog: bool = False


class ModuleSpec(_Entry):
    """A pluggable transceiver (optical module). DAC/AOC cables are :class:`CableSpec`."""

    vendor: str = "generic"
    form_factor: str
    speed_gbps: float = Field(gt=0)
    standard: str = Field(description="IEEE/MSA name of the link it speaks, e.g. 400GBASE-DR4")
    media: Literal["mmf", "smf"]
    reach_m: float = Field(gt=0)
    lanes: int = Field(ge=1, le=16)
    connector: str = Field(description="e.g. MPO-12, MPO-16, duplex LC, dual MPO-12")
    wavelength_nm: float | None = None
    breakout: BreakoutMode | None = None


class CableSpec(_Entry):
    """A cable: DAC (passive copper), ACC/AEC (active copper), AOC, or a fibre patch cord/trunk."""

    kind: Literal["dac", "acc", "aec", "aoc", "fiber"]
    media: Literal["copper", "mmf", "smf"]
    speed_gbps: float | None = Field(default=None, gt=0, description="for DAC/AOC: the wide end")
    form_factor: str | None = None
    max_length_m: float = Field(gt=0)
    breakout: int = Field(
        default=1, ge=1, le=8, description="legs on the far end (2 = 1-to-2 split)"
    )
    leg_speed_gbps: float | None = Field(default=None, gt=0)
    fiber_type: str | None = Field(default=None, description="OM3, OM4, OM5, OS2")
    connector: str | None = None


class CatalogFile(BaseModel):
    """The shape of a catalog YAML file (built-in or a user's): lists of entries by kind."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    gpus: Tup[GpuSpec] = ()
    nics: Tup[NicSpec] = ()
    pcie: Tup[PcieGenSpec] = ()
    switches: Tup[SwitchSpec] = ()
    modules: Tup[ModuleSpec] = ()
    cables: Tup[CableSpec] = ()
