"""S16: both ends of an optical link speak the same standard, and media reach covers the link.

The standard an end speaks at the link's speed is the module's own standard, or, when the link
runs at a broken-out sub-port speed, the standard of its breakout legs (a 400G SR8 module as
2 x 200GBASE-SR4).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.catalog import ModuleSpec
from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import Link

__all__ = ["standard_at"]


def standard_at(module: ModuleSpec, link_gbps: float) -> str | None:
    """The standard ``module`` speaks on a link of ``link_gbps`` (None: it cannot)."""
    if module.speed_gbps == link_gbps:
        return module.standard
    if module.breakout is not None and module.breakout.speed_gbps == link_gbps:
        return module.breakout.standard
    return None


@register("design.optics-mismatch")
def optics_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.optics-mismatch"]
    modules = ctx.catalog.modules
    groups: dict[tuple[str, str, str], list[Link]] = defaultdict(list)
    for link in ctx.fabric.links:
        if link.a_module is None or link.b_module is None:
            continue
        a, b = modules.get(link.a_module), modules.get(link.b_module)
        if a is None or b is None:
            continue
        sa, sb = standard_at(a, link.speed_gbps), standard_at(b, link.speed_gbps)
        if sa is None or sb is None:
            bad = a if sa is None else b
            groups[("speed", bad.name, f"{link.speed_gbps:g}")].append(link)
        elif sa != sb or a.media != b.media:
            groups[("standard", f"{a.name}|{sa}|{a.media}", f"{b.name}|{sb}|{b.media}")].append(
                link
            )
    for (kind, x, y), links in sorted(groups.items()):
        names = [ln.name for ln in links]
        if kind == "speed":
            yield meta.finding(
                target=some(names),
                message=f"{x} cannot run a {y}G link ({len(links)} link(s))",
                expected=f"a module that runs at {y}G",
                actual=x,
                evidence=names[:3],
                explanation=(
                    "A module only speaks its own rate or, if it supports breakout, "
                    "its sub-link rate; any other link speed will not come up or will "
                    "come up degraded (S16)."
                ),
                fix=f"use a {y}G module or a breakout module with {y}G legs",
            )
            continue
        a_name, a_std, a_media = x.split("|")
        b_name, b_std, b_media = y.split("|")
        yield meta.finding(
            target=some(names),
            message=(
                f"{a_name} ({a_std}, {a_media}) faces {b_name} ({b_std}, {b_media}) on "
                f"{len(links)} link(s)"
            ),
            expected="the same standard and fibre on both ends",
            actual=f"{a_std}/{a_media} vs {b_std}/{b_media}",
            evidence=names[:3],
            explanation=(
                "Different optical standards (wavelengths, lane counts, FEC or fibre "
                "type) on the two ends of a link may still light up, then run with a "
                "high bit-error rate: reachable, low bandwidth, sporadic loss (S16, "
                "S20.5). Measure receive power and FEC/PHY error counters on delivery."
            ),
            fix=f"use matching modules on both ends (both {a_std} or both {b_std})",
        )


@register("design.optics-reach")
def optics_reach(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.optics-reach"]
    cat = ctx.catalog
    too_long: dict[tuple[str, float], list[Link]] = defaultdict(list)
    unknown: set[str] = set()
    for link in ctx.fabric.links:
        if link.length_m is None:
            continue
        limits: list[tuple[str, float]] = []
        if link.cable is not None:
            cable = cat.cables.get(link.cable)
            if cable is None:
                unknown.add(link.cable)
            else:
                limits.append((cable.name, cable.max_length_m))
        for module_name in (link.a_module, link.b_module):
            if module_name is None:
                continue
            module = cat.modules.get(module_name)
            if module is None:
                unknown.add(module_name)
            else:
                limits.append((module.name, module.reach_m))
        for name, reach in limits:
            if link.length_m > reach + 1e-9:
                too_long[(name, reach)].append(link)
    for (name, reach), links in sorted(too_long.items()):
        longest = max(ln.length_m or 0.0 for ln in links)
        yield meta.finding(
            target=some([ln.name for ln in links]),
            message=f"{name} reaches {reach:g} m; {len(links)} link(s) up to {longest:g} m long",
            expected=f"<= {reach:g} m",
            actual=f"{longest:g} m",
            evidence=[f"{ln.name}: {ln.length_m:g} m" for ln in links[:3]],
            explanation=(
                "Past its specified reach a copper cable loses signal integrity and "
                "an optical link its power budget: the link flaps or carries a high "
                "bit-error rate (S16)."
            ),
            fix=f"use media specified for {longest:g} m (longer-reach optics or single-mode)",
        )
    if unknown:
        yield meta.finding(
            target=some(sorted(unknown)),
            severity="info",
            message=f"{len(unknown)} cable/module name(s) not in the catalog: reach and "
            "standards of those links were not checked",
            explanation="Only catalog entries carry reach and standard data.",
            fix="add them to a catalog file passed with --catalog",
        )
