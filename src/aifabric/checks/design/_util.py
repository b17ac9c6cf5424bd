"""Small helpers shared by the design checks."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["some"]


def some(names: Sequence[str], limit: int = 4) -> str:
    """``a, b, c, d and 124 more`` : a readable target for a group of like findings."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"
