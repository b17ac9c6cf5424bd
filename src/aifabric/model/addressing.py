"""The IP plan of a fabric and the reason it was chosen (S19, S24)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aifabric.model.base import IPv4If, IPv4Net, StrictModel, Tup

__all__ = ["Addressing"]


class Addressing(StrictModel):
    """How the fabric is addressed.

    * ``l2-single-subnet``: every RoCE host port of a plane in one large subnet (S19), one
      anycast gateway per plane; switch-to-switch links carry no host subnets.
    * ``l3-ebgp``: routed to the host: a /31 per host link and per fabric link, a /32 loopback
      per switch, private ASNs per RFC 7938 (leaves unique, spines of a pod shared, super-spines
      shared).
    * ``manual``: addresses written by hand or imported; nothing is generated.

    ``rationale`` records why the scheme was chosen, for ``--explain`` and the report.
    """

    scheme: Literal["l2-single-subnet", "l3-ebgp", "manual"]
    rationale: str
    host_subnets: Tup[IPv4Net] = Field(default=(), description="per plane, l2-single-subnet")
    gateways: Tup[IPv4If] = Field(default=(), description="anycast gateway per host subnet")
    host_p2p_pool: IPv4Net | None = Field(default=None, description="l3: pool of host-link /31s")
    fabric_p2p_pool: IPv4Net | None = Field(default=None, description="pool of switch-link /31s")
    loopback_pool: IPv4Net | None = None
    asn_scheme: str | None = None
    refs: Tup[str] = ()
