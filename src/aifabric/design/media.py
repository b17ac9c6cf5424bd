"""Choosing the cable or the optics for a link of a given speed, breakout and length.

Preference, cheapest adequate first (the usual data-centre practice): passive DAC, then active
copper (ACC/AEC), then AOC, each the shortest catalogue reach that covers the length; beyond
copper and AOC reach, a pair of transceivers of the *same standard* on both ends (S16) with the
shortest adequate reach (SR on multimode, then DR/FR/LR on single-mode) and a fibre of the
matching media.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from aifabric.catalog import CableSpec, Catalog, ModuleSpec
from aifabric.errors import DesignError

__all__ = ["Media", "select_media"]

_COPPER_ORDER = {"dac": 0, "acc": 1, "aec": 2, "aoc": 3}


@dataclass(frozen=True)
class Media:
    """What to put on a link: a cable, and a module on each end when optical."""

    cable: str
    wide_module: str | None = None
    """module in the port of speed ``port_gbps`` (the switch side of a breakout)"""
    narrow_module: str | None = None
    """module on the other end"""


def _module_standard_at(module: ModuleSpec, link_gbps: float) -> str | None:
    if module.speed_gbps == link_gbps:
        return module.standard
    if module.breakout is not None and module.breakout.speed_gbps == link_gbps:
        return module.breakout.standard
    return None


def select_media(
    catalog: Catalog,
    *,
    port_gbps: float,
    link_gbps: float,
    length_m: float,
    wide_form_factor: str | None = None,
    narrow_form_factor: str | None = None,
) -> Media:
    """Media for one link whose wide end is a ``port_gbps`` port and which runs at
    ``link_gbps`` (``port_gbps / link_gbps`` legs share the wide port when they differ).

    Known cage form factors (the switch's, the NIC's) rule out cables made for another cage
    and steer the choice of each end's module; unknown ones (``None``) accept anything.
    """
    return _select(catalog, port_gbps, link_gbps, length_m, wide_form_factor, narrow_form_factor)


@lru_cache(maxsize=512)
def _select(
    catalog: Catalog,
    port_gbps: float,
    link_gbps: float,
    length_m: float,
    wide_ff: str | None,
    narrow_ff: str | None,
) -> Media:
    legs = round(port_gbps / link_gbps)

    def fits_cages(cable: CableSpec) -> bool:
        ff = cable.form_factor
        if ff is None:
            return True
        if wide_ff is not None and ff != wide_ff:
            return False
        # a straight cable has the same cage on both ends
        return not (legs == 1 and narrow_ff is not None and ff != narrow_ff)

    cables = [
        c
        for c in catalog.cables.values()
        if c.kind != "fiber"
        and c.speed_gbps == port_gbps
        and c.breakout == legs
        and (legs == 1 or c.leg_speed_gbps == link_gbps)
        and c.max_length_m >= length_m
        and fits_cages(c)
    ]
    if cables:
        best = min(cables, key=lambda c: (_COPPER_ORDER[c.kind], c.max_length_m, c.name))
        return Media(cable=best.name)
    wide = [
        m
        for m in catalog.modules.values()
        if m.speed_gbps == port_gbps
        and m.reach_m >= length_m
        and _module_standard_at(m, link_gbps) is not None
    ]
    options: list[tuple[tuple[int, float, int, str], Media]] = []
    for w in wide:
        standard = _module_standard_at(w, link_gbps)
        narrow = [
            m
            for m in catalog.modules.values()
            if m.speed_gbps == link_gbps
            and m.standard == standard
            and m.reach_m >= length_m
            and m.media == w.media
        ]
        if port_gbps == link_gbps and w not in narrow:
            narrow.append(w)
        if not narrow:
            continue
        n = min(
            narrow,
            key=lambda m: (narrow_ff is not None and m.form_factor != narrow_ff, m.reach_m, m.name),
        )
        fiber = _fiber(catalog.cables.values(), w.media, length_m, w.connector)
        if fiber is None:
            continue
        wrong_cage = int(wide_ff is not None and w.form_factor != wide_ff) + int(
            narrow_ff is not None and n.form_factor != narrow_ff
        )
        options.append(
            (
                (wrong_cage, min(w.reach_m, n.reach_m), 0 if w.media == "mmf" else 1, w.name),
                Media(cable=fiber.name, wide_module=w.name, narrow_module=n.name),
            )
        )
    if options:
        return min(options, key=lambda o: o[0])[1]
    what = f"{link_gbps:g}G" if legs == 1 else f"{port_gbps:g}G as {legs}x{link_gbps:g}G"
    raise DesignError(
        f"no catalogue cable or optics for a {what} link of {length_m:g} m; add "
        "one with --catalog FILE (cables: or modules: entries)"
    )


def _fiber(
    cables: Iterable[CableSpec], media: str, length_m: float, connector: str
) -> CableSpec | None:
    candidates = [
        c for c in cables if c.kind == "fiber" and c.media == media and c.max_length_m >= length_m
    ]
    if not candidates:
        return None
    # a module's connector may be "dual MPO-12" (twin-port): each port takes an MPO-12 cord
    matching = [c for c in candidates if c.connector and c.connector in connector]
    pool = matching or candidates
    return min(pool, key=lambda c: (c.max_length_m, c.name))
