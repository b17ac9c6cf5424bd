"""A link: two endpoints, a speed, a cable or a pair of modules, an MTU.

This is the one notion of a link in aifabric: design sizes it, render configures it, verify
checks it, the simulator loads it, the lab builds it as a veth pair (architecture.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aifabric.model.base import Endpoint, IPv4If, StrictModel

__all__ = ["Link", "LinkKind"]

LinkKind = Literal["host", "fabric", "core", "inter-site", "management"]
"""host: server to leaf; fabric: leaf to spine; core: spine to super-spine (or legacy
aggregation/core); inter-site: between sites (S17); management: out-of-band."""


class Link(StrictModel):
    """A cabled link between two ports.

    ``mtu_bytes`` is the IP MTU both ends must accept (what ``ping -M do -s MTU-28`` proves,
    S11). ``a_module``/``b_module`` are transceivers (catalog modules) when the link is optical;
    ``cable`` is the DAC/AOC, or the fibre between the modules.
    """

    a: Endpoint
    b: Endpoint
    kind: LinkKind
    speed_gbps: float = Field(gt=0)
    mtu_bytes: int = Field(ge=576, le=65535)
    length_m: float | None = Field(default=None, gt=0)
    cable: str | None = Field(default=None, description="catalog cable name (DAC, AOC or fibre)")
    a_module: str | None = Field(default=None, description="catalog module on the a end")
    b_module: str | None = Field(default=None, description="catalog module on the b end")
    plane: int | None = Field(default=None, ge=0)
    a_ipv4: IPv4If | None = None
    b_ipv4: IPv4If | None = None

    @property
    def name(self) -> str:
        """``a -> b`` as used in finding targets."""
        return f"{self.a} -> {self.b}"
