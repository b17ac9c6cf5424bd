"""Lossless QoS intent for the RoCE fabric (S11-S14, S18): one policy, rendered to every vendor
and checked against every observed config by later modules.

Defaults follow the NVIDIA RoCE lossless defaults (Onyx/Cumulus ``show roce``: RoCE on
priority/TC 3 with PFC, CNP on priority 6 strict, ECN absolute marking min 150 KB / max 1500 KB)
and the seed's guidance of two queues only (S14). Sources: docs/references.md#ecn-dcqcn and
docs/references.md#sonic-qos.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, model_validator

from aifabric.model.base import StrictModel, Tup

__all__ = ["EcnThresholds", "PfcWatchdog", "QosPolicy", "TrafficClass"]


class TrafficClass(StrictModel):
    """An egress queue / traffic class and how it is scheduled."""

    tc: int = Field(ge=0, le=7)
    name: str
    lossless: bool = False
    scheduler: Literal["strict", "dwrr"] = "dwrr"
    weight_percent: int | None = Field(default=None, ge=1, le=100)


class EcnThresholds(StrictModel):
    """WRED/ECN marking on the lossless queue (S13): mark with probability rising from 0 at
    ``kmin_bytes`` to ``pmax_percent`` at ``kmax_bytes`` of queue depth."""

    kmin_bytes: int = Field(ge=0)
    kmax_bytes: int = Field(gt=0)
    pmax_percent: float = Field(default=100.0, gt=0, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> EcnThresholds:
        if self.kmin_bytes >= self.kmax_bytes:
            raise ValueError(
                f"ECN kmin_bytes ({self.kmin_bytes}) must be below kmax_bytes ({self.kmax_bytes})"
            )
        return self


class PfcWatchdog(StrictModel):
    """PFC storm/deadlock watchdog (S20.3): detect a queue paused too long and act."""

    enabled: bool = True
    detection_time_ms: int = Field(default=200, ge=1)
    restoration_time_ms: int = Field(default=200, ge=1)
    action: Literal["drop", "forward", "alert"] = "drop"


def _default_dscp_map() -> dict[int, int]:
    return {26: 3, 48: 6}


def _default_classes() -> tuple[TrafficClass, ...]:
    return (
        TrafficClass(tc=0, name="best-effort", weight_percent=50),
        TrafficClass(tc=3, name="roce", lossless=True, weight_percent=50),
        TrafficClass(tc=6, name="cnp", scheduler="strict"),
    )


class QosPolicy(StrictModel):
    """The lossless-RoCE intent: marking, mapping, PFC, ECN, CNP, watchdog (S12-S14, S18)."""

    trust: Literal["dscp", "pcp"] = Field(
        default="dscp", description="what switches classify on; DSCP survives routed hops"
    )
    roce_dscp: int = Field(default=26, ge=0, le=63, description="DSCP the hosts mark RoCE with")
    roce_priority: int = Field(default=3, ge=0, le=7, description="802.1p priority / TC of RoCE")
    pfc_priorities: Tup[int] = Field(default=(3,), description="S12: the RoCE priority only")
    dscp_to_tc: dict[Annotated[int, Strict(False)], int] = Field(
        default_factory=_default_dscp_map, description="DSCP -> traffic class; unlisted -> 0"
    )
    traffic_classes: Tup[TrafficClass] = Field(default_factory=_default_classes)
    ecn: EcnThresholds | None = Field(
        default_factory=lambda: EcnThresholds(
            kmin_bytes=150 * 1024, kmax_bytes=1500 * 1024, pmax_percent=100.0
        )
    )
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    cnp_priority: int = Field(default=6, ge=0, le=7)
    pfc_watchdog: PfcWatchdog | None = Field(default_factory=PfcWatchdog)

    @model_validator(mode="after")
    def _consistent(self) -> QosPolicy:
        tcs = {tc.tc for tc in self.traffic_classes}
        for dscp, tc in self.dscp_to_tc.items():
            if not 0 <= dscp <= 63:
                raise ValueError(f"dscp_to_tc key {dscp} is not a DSCP value (0-63)")
            if tc not in tcs:
                raise ValueError(
                    f"dscp_to_tc maps DSCP {dscp} to TC {tc}, which is not in traffic_classes"
                )
        for prio in self.pfc_priorities:
            if not 0 <= prio <= 7:
                raise ValueError(f"pfc_priorities: {prio} is not an 802.1p priority (0-7)")
        return self

    @property
    def nccl_ib_tc(self) -> int:
        """``NCCL_IB_TC`` that makes NCCL mark ``roce_dscp``: the IP ToS byte, DSCP << 2 (S15)."""
        return self.roce_dscp << 2
