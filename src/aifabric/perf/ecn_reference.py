"""Published ECN/WRED marking thresholds for RoCE (DCQCN), side by side (seed S13, S18).

``verify`` quotes them when a configured threshold looks wrong and ``render`` records them next
to the thresholds it writes. Sources: NVIDIA's lossless RoCE defaults (Cumulus Linux / Onyx
``roce`` mode: 150 KB / 1500 KB), SONiC's ``AZURE_LOSSLESS`` WRED profile in the sonic-buildimage
``qos_config.j2`` template (1 MB / 2 MB), the HPCC simulation (github.com/alibaba-edu/High-
Precision-Congestion-Control, 100 KB / 400 KB at 25G scaled with speed), the DCQCN paper (Zhu
et al., SIGCOMM 2015: 5 KB / 200 KB at 40G) and the seed's S18 example (50 KB / 100 KB).
"""

from __future__ import annotations

__all__ = ["KB", "reference_thresholds"]

KB = 1024


def reference_thresholds(speed_gbps: float | None, port_buffer_bytes: int | None) -> str:
    """The published ECN thresholds next to each other, for one port speed (None: unknown)."""
    parts = [
        "NVIDIA lossless default 150 KB / 1500 KB",
        "SONiC AZURE_LOSSLESS 1024 KB / 2048 KB",
    ]
    if speed_gbps:
        ns3 = speed_gbps / 25.0
        parts.append(f"HPCC ns-3 scaled to {speed_gbps:g}G {100 * ns3:.0f} KB / {400 * ns3:.0f} KB")
    else:
        parts.append("HPCC ns-3 100 KB / 400 KB at 25G up to 800 KB / 3200 KB at 400G")
    parts += ["DCQCN paper 5 KB / 200 KB at 40G", "seed S18 50 KB / 100 KB"]
    if port_buffer_bytes:
        lo, hi = 0.3 * port_buffer_bytes / KB, 0.5 * port_buffer_bytes / KB
        parts.append(f"seed S13 30-50% of the port's buffer share: {lo:.0f}-{hi:.0f} KB")
    return "; ".join(parts)
