"""Bulk work on hundreds of thousands of small objects.

Python's cyclic garbage collector rescans every live container each time enough new objects
have been allocated; building a 100,000-link fabric would trigger it thousands of times for
nothing (the objects are not cyclic garbage). :func:`gc_paused` pauses it for such a block.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC inside the block (reference counting still frees memory)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
