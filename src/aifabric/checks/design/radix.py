"""S7: ports, breakouts and speeds within what each switch and NIC has."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.model import Switch, expand_port_range, fabric_index, parse_switch_port

__all__: list[str] = []


def _breakout_map(sw: Switch) -> dict[int, tuple[int, float]]:
    out: dict[int, tuple[int, float]] = {}
    for b in sw.breakouts:
        for port in expand_port_range(b.ports):
            out[port] = (b.count, b.speed_gbps)
    return out


@register("design.radix")
def radix(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.radix"]
    idx = fabric_index(ctx.fabric)
    for sw in ctx.fabric.switches:
        links = idx.links_of.get(sw.name, [])
        if not links:
            continue
        breakouts = _breakout_map(sw)
        physical: set[object] = set()
        problems: list[str] = []
        for link in links:
            end = link.a if link.a.device == sw.name else link.b
            parsed = parse_switch_port(end.port)
            if parsed is None:
                physical.add(end.port)
                if link.speed_gbps > sw.port_speed_gbps:
                    problems.append(
                        f"{end.port}: {link.speed_gbps:g}G link on a {sw.port_speed_gbps:g}G port"
                    )
                continue
            port, sub = parsed
            physical.add(port)
            if port in breakouts and sub is None:
                problems.append(f"{end.port}: port {port} is broken out; use its sub-ports")
            if port > sw.ports:
                problems.append(
                    f"{end.port}: port {port} does not exist on a {sw.ports}-port switch"
                )
            if sub is None:
                if link.speed_gbps > sw.port_speed_gbps:
                    problems.append(
                        f"{end.port}: {link.speed_gbps:g}G link on a {sw.port_speed_gbps:g}G port"
                    )
                continue
            mode = breakouts.get(port)
            if mode is None:
                problems.append(f"{end.port}: sub-port used but port {port} has no breakout")
                continue
            count, speed = mode
            if sub > count:
                problems.append(f"{end.port}: sub-port {sub} of a {count}-way breakout")
            if link.speed_gbps > speed:
                problems.append(
                    f"{end.port}: {link.speed_gbps:g}G link on a {speed:g}G breakout leg"
                )
        for port, (count, speed) in sorted(breakouts.items()):
            if count * speed > sw.port_speed_gbps + 1e-9:
                problems.append(
                    f"Ethernet{port}: breakout {count}x{speed:g}G exceeds the "
                    f"{sw.port_speed_gbps:g}G port"
                )
        if len(physical) > sw.ports:
            problems.insert(0, f"{len(physical)} physical ports in use, the switch has {sw.ports}")
        if problems:
            yield meta.finding(
                target=sw.name,
                message=f"{sw.name}: {problems[0]}"
                + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                expected=f"at most {sw.ports} ports at {sw.port_speed_gbps:g}G, breakouts as "
                "declared",
                actual=problems[0],
                evidence=problems[:8],
                explanation=(
                    "A switch has a fixed front panel: each cage is one port at its "
                    "native speed, or a declared breakout into equal sub-ports (S7: a "
                    "400G port as 2x200G). A port map beyond that cannot be cabled."
                ),
                fix=(
                    "move links to free ports, declare the breakout under the switch's "
                    "breakouts, or add a switch"
                ),
            )


@register("design.link-speed")
def link_speed(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.link-speed"]
    idx = fabric_index(ctx.fabric)
    groups: dict[tuple[float, float], list[str]] = defaultdict(list)
    for link in ctx.fabric.links:
        for end in (link.a, link.b):
            found = idx.host_ports.get(end)
            if found is None:
                continue
            port = found[2]
            if port.speed_gbps != link.speed_gbps:
                groups[(port.speed_gbps, link.speed_gbps)].append(str(end))
    for (port_speed, link_speed_), names in sorted(groups.items()):
        yield meta.finding(
            target=some(names),
            message=(
                f"{len(names)} NIC port(s) configured for {port_speed:g}G on {link_speed_:g}G links"
            ),
            expected=f"{port_speed:g}G",
            actual=f"{link_speed_:g}G",
            evidence=names[:3],
            explanation=(
                "Both ends of a link run one speed: a NIC port set for one speed on a "
                "link or breakout leg of another either does not come up or runs at "
                "the lower rate, and the design's bandwidth figures are wrong."
            ),
            fix="make the NIC port speed and the link (switch sub-port) speed the same",
        )
