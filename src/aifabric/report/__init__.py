"""Reports on a fabric: pictures and documents for people."""

from aifabric.report.topology import PictureStats, draw_topology

__all__ = ["PictureStats", "draw_topology"]
