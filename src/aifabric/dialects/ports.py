"""Vendor port names ↔ aifabric's neutral port names.

The fabric file names switch ports neutrally: ``Ethernet7`` is front-panel port 7 (1-based) and
``Ethernet7/2`` is sub-port 2 of port 7 broken out (S7). Vendors name them differently:

* Arista EOS: ``Ethernet7`` or ``Ethernet7/1`` (lane 1 of port 7; ``/3`` on a 2x breakout of an
  8-lane port is sub-port 2 only by lane arithmetic, so ``/k`` is taken as sub-port ``k`` when
  the port is broken out in the file, and as the whole port when ``k == 1``). Modular chassis
  ``Ethernet3/5/1`` (card/port/lane) has no neutral name.
* Cisco NX-OS: ``Ethernet1/7`` (module 1, port 7), ``Ethernet1/7/2`` (breakout sub-port 2).
* NVIDIA Cumulus / NVUE: ``swp7``; breakouts ``swp7s0``..``swp7s3`` (0-based sub-ports).
* SONiC: ``Ethernet<first lane>`` (``Ethernet0``, ``Ethernet8``...), mapped by the order of the
  ports in the PORT table (see :func:`sonic_neutral_names`).

``None`` means no neutral name is known; such ports still carry their settings and device-wide
checks still apply to them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["cumulus_neutral", "eos_neutral", "nxos_neutral", "sonic_neutral_names", "to_neutral"]

_EOS = re.compile(r"^(?:Ethernet|Et|eth)(\d+)(?:/(\d+))?$", re.IGNORECASE)
_NXOS = re.compile(r"^(?:Ethernet|Eth|e)1/(\d+)(?:/(\d+))?$", re.IGNORECASE)
_CUMULUS = re.compile(r"^swp(\d+)(?:s(\d+))?$")
_SONIC = re.compile(r"^Ethernet(\d+)$")


def eos_neutral(name: str) -> str | None:
    """``Ethernet7`` / ``Et7/1`` → ``Ethernet7``; ``Ethernet7/2`` → ``Ethernet7/2``."""
    m = _EOS.match(name.strip())
    if not m:
        return None
    port, lane = m.group(1), m.group(2)
    if lane is None or lane == "1":
        return f"Ethernet{port}"
    return f"Ethernet{port}/{lane}"


def nxos_neutral(name: str) -> str | None:
    """``Ethernet1/7`` → ``Ethernet7``; ``Ethernet1/7/2`` → ``Ethernet7/2``."""
    m = _NXOS.match(name.strip())
    if not m:
        return None
    port, sub = m.group(1), m.group(2)
    return f"Ethernet{port}" if sub is None else f"Ethernet{port}/{sub}"


def cumulus_neutral(name: str) -> str | None:
    """``swp7`` → ``Ethernet7``; ``swp7s0`` → ``Ethernet7/1`` (Cumulus counts sub-ports from 0)."""
    m = _CUMULUS.match(name.strip())
    if not m:
        return None
    port, sub = m.group(1), m.group(2)
    return f"Ethernet{port}" if sub is None else f"Ethernet{port}/{int(sub) + 1}"


def sonic_neutral_names(ports: Iterable[tuple[str, int | None]]) -> dict[str, str]:
    """Neutral names of SONiC ports given ``(name, lane count)`` pairs.

    SONiC names a port after its first SerDes lane. Front-panel port ``n`` (1-based) is the
    ``n``-th group of lanes; a port with fewer lanes than the platform's widest is a breakout
    sub-port of the front-panel port its lanes fall in. Without lane counts the ports are
    taken in lane order, one front-panel port each.
    """
    parsed: list[tuple[int, str, int | None]] = []
    for name, lanes in ports:
        m = _SONIC.match(name)
        if m:
            parsed.append((int(m.group(1)), name, lanes))
    if not parsed:
        return {}
    parsed.sort()
    widest = max((lanes for _, _, lanes in parsed if lanes), default=None)
    out: dict[str, str] = {}
    if widest is None:
        for i, (_, name, _) in enumerate(parsed, start=1):
            out[name] = f"Ethernet{i}"
        return out
    # lane numbers start at 0 (Ethernet0) on every platform we read
    width = widest
    counts: dict[int, int] = {}
    for first_lane, _, _ in parsed:
        front = first_lane // width + 1
        counts[front] = counts.get(front, 0) + 1
    for first_lane, name, lanes in parsed:
        front = first_lane // width + 1
        if counts[front] == 1 and (lanes is None or lanes == width):
            out[name] = f"Ethernet{front}"
        else:
            sub_width = lanes or width
            out[name] = f"Ethernet{front}/{(first_lane % width) // sub_width + 1}"
    return out


def to_neutral(dialect: str, name: str) -> str | None:
    """Neutral name of vendor port ``name`` in ``dialect`` (``eos``, ``nxos``, ``nvue``,
    ``cumulus``); SONiC needs the PORT table, see :func:`sonic_neutral_names`."""
    if dialect == "eos":
        return eos_neutral(name)
    if dialect == "nxos":
        return nxos_neutral(name)
    if dialect in ("nvue", "cumulus"):
        return cumulus_neutral(name)
    return None
