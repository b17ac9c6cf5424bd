"""RoCE host ports and their subnets (S19): one subnet per plane in a single-subnet design,
distinct point-to-point subnets in a routed one."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterator

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import Group, fabric_evidence, roce_links
from aifabric.findings import Finding
from aifabric.model import fabric_index

__all__: list[str] = []


@register("verify.roce-subnets")
def roce_subnets(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.roce-subnets"]
    fabric = ctx.fabric
    addressing = fabric.addressing
    idx = fabric_index(fabric)
    host_ifs: list[tuple[str, str, int | None]] = []  # (endpoint, address, plane)
    for ln in roce_links(fabric):
        if ln.kind != "host":
            continue
        for end, addr in ((ln.a, ln.a_ipv4), (ln.b, ln.b_ipv4)):
            if end.device in idx.servers and addr is not None:
                port = idx.host_ports.get(end)
                plane = port[2].plane if port is not None else None
                host_ifs.append((str(end), str(addr), plane if plane is not None else ln.plane))
    if not host_ifs:
        return
    if addressing is not None and addressing.scheme == "l2-single-subnet":
        nets = [ipaddress.ip_network(str(n), strict=False) for n in addressing.host_subnets]
        outside = Group()
        for target, addr, _ in host_ifs:
            ip = ipaddress.ip_interface(addr).ip
            if not any(ip in n for n in nets):
                outside.add(target, [fabric_evidence(target, addr)])
        if outside.count():
            yield meta.finding(
                target=outside.target(),
                message=(
                    f"{outside.count()} RoCE host port(s) outside the single-subnet plan's "
                    f"subnets ({', '.join(map(str, nets))})"
                ),
                expected=[str(n) for n in nets],
                actual=outside.count(),
                evidence=outside.evidence,
                explanation=(
                    "S19: all RoCE servers of a plane in one large subnet / L2 domain; a host "
                    "in another subnet is routed, crosses a VLAN boundary where priorities are "
                    "re-mapped, and moves PFC's scope."
                ),
                fix="readdress these ports inside their plane's subnet",
            )
        by_plane: dict[int | None, set[str]] = defaultdict(set)
        for _, addr, plane in host_ifs:
            by_plane[plane].add(str(ipaddress.ip_interface(addr).network))
        for plane, subnets in sorted(by_plane.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            if len(subnets) > 1:
                yield meta.finding(
                    target=f"plane {plane}" if plane is not None else "host ports",
                    message=f"RoCE host ports of one plane sit in {len(subnets)} subnets",
                    expected=1,
                    actual=len(subnets),
                    evidence=sorted(subnets)[:6],
                    explanation="S19: one subnet per plane keeps RoCE in one L2/priority domain.",
                    fix="use one subnet (one VLAN) per plane for the RoCE host ports",
                )
        return
    # routed: every host link its own subnet
    seen: dict[str, str] = {}
    dup = Group()
    for target, addr, _ in host_ifs:
        net = str(ipaddress.ip_interface(addr).network)
        if net in seen and ipaddress.ip_network(net).prefixlen >= 30:
            dup.add(target, [fabric_evidence(target, f"{addr} (also {seen[net]})")])
        seen.setdefault(net, target)
    if dup.count():
        yield meta.finding(
            target=dup.target(),
            message=f"{dup.count()} routed host link(s) share a point-to-point subnet",
            expected="one /31 per host link",
            actual=dup.count(),
            evidence=dup.evidence,
            explanation="In an L3-to-the-host design each host link is its own /31 (RFC 7938).",
            fix="give every host link its own /31",
        )
