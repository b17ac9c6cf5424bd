"""Bill of materials of any fabric: switches, transceivers, cables by kind and length.

Counting rules:

* a transceiver is counted once per occupied physical cage: a breakout module in a switch port
  (S7: 400G as 2x200G) serves every sub-port of that cage;
* a DAC/AOC is one per link, except a breakout cable, which is one per broken-out physical port
  on its wide end (its legs are the links);
* fibre is one patch cord or trunk per optical link (a breakout module's legs each count),
  two for a twin-port module (``dual MPO-12``) running at its full speed;
* cable lengths are rounded up to the next orderable length;
* spares: ``ceil(count * spares_percent / 100)`` per optic and cable item (at least one when the
  percentage is positive), plus ``spare_switches`` per switch model.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from aifabric.catalog import Catalog
from aifabric.model import Fabric, Switch

__all__ = ["STANDARD_LENGTHS_M", "BomItem", "bill_of_materials", "orderable_length"]

STANDARD_LENGTHS_M = (
    0.5,
    1,
    1.5,
    2,
    2.5,
    3,
    4,
    5,
    7,
    10,
    15,
    20,
    30,
    50,
    70,
    100,
    150,
    200,
    300,
    500,
    1000,
    2000,
    5000,
    10000,
    20000,
    40000,
    80000,
    120000,
)
"""Lengths cables and fibre runs are ordered in (vendor price-list steps)."""


@dataclass(frozen=True)
class BomItem:
    """One line of the bill of materials (JSON: ``{item, count}`` plus detail)."""

    item: str
    count: int
    category: str
    """switch | transceiver | cable | breakout-cable | fiber"""
    spares: int = 0
    source: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "item": self.item,
            "count": self.count,
            "category": self.category,
            "spares": self.spares,
            "source": self.source,
        }


def orderable_length(length_m: float) -> float:
    """The shortest standard length >= ``length_m``."""
    for step in STANDARD_LENGTHS_M:
        if step >= length_m - 1e-9:
            return step
    return math.ceil(length_m)


def _len(length_m: float | None) -> str:
    if length_m is None:
        return "length unknown"
    step = orderable_length(length_m)
    return f"{step:g} m" if step < 1000 else f"{step / 1000:g} km"


def _physical(port: str) -> str:
    """``Ethernet7/2 -> Ethernet7``: the cage a sub-port lives in."""
    return port.split("/", 1)[0] if port.startswith("Ethernet") else port


def _cords(catalog: Catalog, module: str | None, link_gbps: float) -> int:
    """Fibre cords one optical link takes: two for a twin-port module ("dual MPO-12", an 800G
    2xSR4) run at its full speed, one otherwise (a breakout leg is one cord)."""
    spec = catalog.modules.get(module) if module else None
    if spec is not None and spec.connector.startswith("dual") and spec.speed_gbps == link_gbps:
        return 2
    return 1


def _switch_item(sw: Switch) -> str:
    if sw.model:
        return sw.model
    return f"{sw.ports}x{sw.port_speed_gbps:g}G switch ({sw.switch_class})"


def bill_of_materials(
    fabric: Fabric, catalog: Catalog, *, spares_percent: float = 0.0, spare_switches: int = 0
) -> list[BomItem]:
    """The BOM of ``fabric``; ``spares_*`` add the spares policy."""
    switches = Counter(_switch_item(s) for s in fabric.switches)
    switch_names = {s.name for s in fabric.switches}
    modules: Counter[str] = Counter()
    cables: Counter[tuple[str, str]] = Counter()
    cages: set[tuple[str, str, str]] = set()
    breakout_cables: set[tuple[str, str, str]] = set()
    for link in fabric.links:
        for end, module in ((link.a, link.a_module), (link.b, link.b_module)):
            if module is None:
                continue
            cage = (
                (end.device, _physical(end.port), module)
                if end.device in switch_names
                else (end.device, end.port, module)
            )
            if cage not in cages:
                cages.add(cage)
                modules[module] += 1
        if link.cable is None:
            continue
        spec = catalog.cables.get(link.cable)
        kind = spec.kind if spec is not None else "cable"
        length = _len(link.length_m)
        if spec is not None and spec.breakout > 1 and kind != "fiber":
            wide = link.b if link.b.device in switch_names else link.a
            key = (wide.device, _physical(wide.port), link.cable)
            if key not in breakout_cables:
                breakout_cables.add(key)
                cables[(f"{link.cable} {length}", "breakout-cable")] += 1
        else:
            category = "fiber" if kind == "fiber" else "cable"
            cables[(f"{link.cable} {length}", category)] += (
                _cords(catalog, link.a_module, link.speed_gbps) if kind == "fiber" else 1
            )

    def spares(count: int) -> int:
        return math.ceil(count * spares_percent / 100) if spares_percent > 0 else 0

    items: list[BomItem] = []
    for name, count in sorted(switches.items()):
        spec_sw = catalog.switches.get(name)
        items.append(
            BomItem(
                name,
                count + spare_switches,
                "switch",
                spare_switches,
                spec_sw.source if spec_sw else None,
            )
        )
    for name, count in sorted(modules.items()):
        spec_m = catalog.modules.get(name)
        extra = spares(count)
        items.append(
            BomItem(name, count + extra, "transceiver", extra, spec_m.source if spec_m else None)
        )
    for (name, category), count in sorted(cables.items()):
        spec_c = catalog.cables.get(name.rsplit(" ", 2)[0])
        extra = spares(count)
        items.append(
            BomItem(name, count + extra, category, extra, spec_c.source if spec_c else None)
        )
    return items
