"""Reports on a fabric: pictures and documents for people.

The picture's names are imported on first use, so that ``aifabric.report.junit``,
``aifabric.report.sarif`` and ``aifabric.report.topology_layout`` load without matplotlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aifabric.report.topology import PictureStats, draw_topology

__all__ = ["PictureStats", "draw_topology"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from aifabric.report import topology  # noqa: PLC0415 - matplotlib only when drawing

        return getattr(topology, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
