"""MTU along the paths between GPU NICs (S11, S21) and the RDMA MTU that fits it (S11 note).

The host MTU ``H`` (what GPU NICs send; 9000 in most fabrics) must be the same on every GPU
NIC port, and every switch hop between two GPU NICs must accept frames of that size: a hop
below ``H`` drops every full-size frame routed over it while pings with default sizes still
pass (S21: the afternoon lost to a port left at 1500). With ECMP a pair of leaves uses every
up-down path, so one small hop hurts every pair of leaves whose path set contains it; the
finding counts those pairs:

``pairs(link u–v) = below(u) × (leaves(v's plane) − below(u))``, with ``below(x)`` the leaves
at or under switch ``x`` and ``u`` the lower end: traffic from a leaf under ``u`` to any leaf
not under it may hash onto the link (hosts under a leaf: one leaf).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.checks.verify._common import (
    Group,
    RoceEnd,
    dialect_of,
    evidence_of,
    fabric_evidence,
    roce_ends,
    roce_links,
    roce_ports,
)
from aifabric.checks.verify._fixes import fix_mtu
from aifabric.findings import Finding
from aifabric.model import SWITCH_ROLE_TIER, Fabric
from aifabric.perf.hardware import rdma_mtu

__all__ = ["PairCount", "host_mtu", "leaf_pair_mtu"]

_EXPLAIN_MTU = (
    "RoCEv2 and jumbo TCP need the same MTU on every NIC and switch port of a path (S11): a "
    "switch port with a smaller MTU than the hosts' drops every larger frame (routed ports "
    "cannot fragment RoCE, and DF is set), so transfers hashed onto that hop stall or retry "
    "while small pings still pass. Check with `ping -M do -s {probe} <peer>` ({probe} + 28 "
    "bytes of IP/ICMP headers = {mtu})."
)


_SWITCH_KINDS = frozenset({"fabric", "core", "inter-site"})
_PAIRS = (
    "With ECMP every up-down path between two leaves carries some of their flows, so a pair is "
    "hit when any hop of any of its paths is too small (counted over all leaf pairs of each "
    "plane)."
)


def host_mtu(fabric: Fabric) -> int | None:
    """The MTU most RoCE host links carry: the fabric's host MTU (None without host links)."""
    counts = Counter(ln.mtu_bytes for ln in roce_links(fabric) if ln.kind == "host")
    if not counts:
        return None
    return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]


def _tiers(fabric: Fabric) -> dict[str, int]:
    tiers = {s.name: SWITCH_ROLE_TIER[s.role] for s in fabric.switches}
    tiers.update({s.name: 0 for s in fabric.servers})
    return tiers


@dataclass(frozen=True, slots=True)
class PairCount:
    """Leaf pairs whose ECMP path sets were checked, and those with a hop below the host MTU."""

    pairs: int
    bad_pairs: int
    leaves: int


def _c2(n: int) -> int:
    return n * (n - 1) // 2


def leaf_pair_mtu(fabric: Fabric, bad: set[int]) -> PairCount:
    """Count the leaf pairs that have a link of ``bad`` (indices into ``fabric.links``) on at
    least one of their ECMP up-down paths.

    In a CLOS, the paths between leaves A and B climb to the lowest tier where their up-cones
    meet and come down: every uplink of A and of B up to that tier is on one of them. So a pair
    of the same pod (sharing spines) is hit when either leaf has a bad host link or uplink to
    its spines (``bad2``); a pair of different pods of one plane is hit when either has a bad
    link anywhere in its up-cone to the super-spines (``bad3``). Counting per pod and plane is
    O(leaves + links) for the 523,776 leaf pairs of the 32,768-GPU example:

    ``same-pod bad = C(n,2) - C(n - b2,2)``; ``cross-pod bad = cross - (C(g3,2) - Σ C(g3_pod,2))``
    with ``g3`` the leaves without ``bad3``. Leaves of different planes share no path.
    """
    tiers = _tiers(fabric)
    ups: dict[str, set[str]] = defaultdict(set)
    bad_up: dict[str, bool] = defaultdict(bool)  # a bad link from this node upwards (or host)
    for i, ln in enumerate(fabric.links):
        a, b = ln.a.device, ln.b.device
        ta, tb = tiers.get(a), tiers.get(b)
        if ta is None or tb is None or ta == tb:
            continue
        lo, hi = (a, b) if ta < tb else (b, a)
        if tiers[lo] == 0:
            if i in bad:
                bad_up[hi] = True  # a host link of this leaf
            continue
        ups[lo].add(hi)
        if i in bad:
            bad_up[lo] = True
    leaves = [s.name for s in fabric.switches if SWITCH_ROLE_TIER[s.role] == 1]
    # planes: connected components over the switch tiers
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for lo, his in ups.items():
        for hi in his:
            ra, rb = find(lo), find(hi)
            if ra != rb:
                parent[ra] = rb
    plane_pods: dict[str, dict[frozenset[str], list[tuple[bool, bool]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for leaf in leaves:
        spines = frozenset(ups.get(leaf, ()))
        b2 = bad_up[leaf]
        b3 = b2 or any(bad_up[s] for s in spines)
        plane_pods[find(leaf)][spines].append((b2, b3))
    pairs = bad_pairs = 0
    for pods in plane_pods.values():
        n_all = sum(len(v) for v in pods.values())
        g3_all = sum(1 for v in pods.values() for _, b3 in v if not b3)
        cross = _c2(n_all) - sum(_c2(len(v)) for v in pods.values())
        cross_good = _c2(g3_all) - sum(_c2(sum(1 for _, b3 in v if not b3)) for v in pods.values())
        pairs += _c2(n_all)
        bad_pairs += cross - cross_good
        for v in pods.values():
            good2 = sum(1 for b2, _ in v if not b2)
            bad_pairs += _c2(len(v)) - _c2(good2)
    return PairCount(pairs, bad_pairs, len(leaves))


@register("verify.mtu-path")
def mtu_path(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.mtu-path"]
    fabric = ctx.fabric
    hmtu = host_mtu(fabric)
    if hmtu is None:
        # no host links in the fabric file: the hosts' own MTU, else S11's jumbo 9000
        observed = (
            Counter(
                v.value
                for d in ctx.observed.hosts()
                for v in d.host_interfaces.values()
                if v.value >= 1500
            )
            if ctx.observed is not None
            else Counter()
        )
        hmtu = observed.most_common(1)[0][0] if observed else 9000
        explain = _EXPLAIN_MTU.format(probe=hmtu - 28, mtu=hmtu) + (
            f" The fabric file gives no host links; the host MTU {hmtu} is "
            + ("the hosts' own." if observed else "assumed from S11 (jumbo frames, 9000).")
        )
        yield from _observed(ctx, hmtu, explain)
        return
    links = list(roce_links(fabric))
    explain = _EXPLAIN_MTU.format(probe=hmtu - 28, mtu=hmtu)

    # 1. host links of another MTU than the fabric's host MTU (S21: mixed 1500/9000)
    odd_hosts: dict[int, Group] = defaultdict(Group)
    for ln in links:
        if ln.kind == "host" and ln.mtu_bytes != hmtu:
            odd_hosts[ln.mtu_bytes].add(ln.name)
    for mtu, g in sorted(odd_hosts.items()):
        yield meta.finding(
            target=g.target(),
            message=(
                f"{g.count()} GPU NIC link(s) at MTU {mtu} while the other host links use "
                f"{hmtu}: mixed MTU on the RoCE fabric"
            ),
            expected=hmtu,
            actual=mtu,
            evidence=[fabric_evidence(t, f"mtu_bytes {mtu}") for t in g.targets[:4]],
            explanation=explain
            + " A host at a smaller MTU also negotiates a smaller RDMA MTU with every peer.",
            fix=f"set MTU {hmtu} on {g.target()} (host interface and the leaf port)",
        )

    # 2. switch hops below the host MTU, with the leaf pairs whose ECMP paths cross them
    low = [
        i for i, ln in enumerate(fabric.links) if ln.kind in _SWITCH_KINDS and ln.mtu_bytes < hmtu
    ]
    if low:
        count = leaf_pair_mtu(fabric, set(low))
        by_mtu: dict[int, Group] = defaultdict(Group)
        for i in low:
            ln = fabric.links[i]
            by_mtu[ln.mtu_bytes].add(
                ln.name, [fabric_evidence(ln.name, f"mtu_bytes {ln.mtu_bytes}")]
            )
        for mtu, g in sorted(by_mtu.items()):
            yield meta.finding(
                target=g.target(),
                message=(
                    f"{g.count()} switch link(s) at MTU {mtu} on the {hmtu}-byte GPU paths; "
                    f"{count.bad_pairs} of {count.pairs} leaf pairs have such a hop on one of "
                    "their ECMP paths"
                ),
                expected=hmtu,
                actual=mtu,
                evidence=g.evidence,
                explanation=explain + " " + _PAIRS,
                fix=f"set MTU 9216 (at least {hmtu}) on both ends of {g.target()}",
            )

    # 3. what the devices are configured with
    yield from _observed(ctx, hmtu, explain)


def _observed(ctx: CheckContext, hmtu: int, explain: str) -> Iterator[Finding]:
    meta = metadata()["verify.mtu-path"]
    obs = ctx.observed
    if obs is None:
        return
    small: dict[tuple[str, int], Group] = defaultdict(Group)
    host_small: dict[tuple[str, int], Group] = defaultdict(Group)
    per_link: dict[str, list[RoceEnd]] = defaultdict(list)
    for e in roce_ends(ctx.fabric, obs):
        per_link[e.link.name].append(e)
    for ref in roce_ports(ctx.fabric, obs):
        m = ref.view.mtu_bytes
        if m is None:
            continue
        if ref.device.role == "switch" and m.value < hmtu:
            small[(ref.device.name, m.value)].add(ref.label, evidence_of(m))
        elif ref.device.role == "host" and m.value != hmtu:
            host_small[(ref.device.name, m.value)].add(ref.label, evidence_of(m))
    bad_links = {
        i
        for i, ln in enumerate(ctx.fabric.links)
        if any(
            e.device.role == "switch" and e.view.mtu_bytes and e.view.mtu_bytes.value < hmtu
            for e in per_link.get(ln.name, [])
        )
    }
    count = leaf_pair_mtu(ctx.fabric, bad_links) if bad_links else None
    reach = (
        f"; {count.bad_pairs} of {count.pairs} leaf pairs have such a port on an ECMP path"
        if count is not None
        else ""
    )
    for (dev, mtu), g in sorted(small.items()):
        yield meta.finding(
            target=g.target(),
            message=(
                f"{dev}: MTU {mtu} on {g.count()} RoCE port(s), below the {hmtu}-byte host "
                f"MTU{reach}"
            ),
            expected=hmtu,
            actual=mtu,
            evidence=g.evidence,
            explanation=explain,
            fix=f"{dev}: "
            + fix_mtu(dialect_of(ctx.observed, dev), 9216)
            + f" on {g.target()} (switch MTU at least the host MTU {hmtu})",
        )
    for (dev, mtu), g in sorted(host_small.items()):
        yield meta.finding(
            target=g.target(),
            message=f"{dev}: host interface MTU {mtu}, the fabric's hosts use {hmtu}",
            expected=hmtu,
            actual=mtu,
            evidence=g.evidence,
            explanation=explain,
            fix=f"{dev}: " + fix_mtu("host", hmtu),
        )
    # a host interface larger than its switch port: the switch drops what the host sends
    for name, ends in sorted(per_link.items()):
        hosts = [e for e in ends if e.device.role == "host" and e.view.mtu_bytes]
        switches = [e for e in ends if e.device.role == "switch" and e.view.mtu_bytes]
        for h in hosts:
            for s in switches:
                assert h.view.mtu_bytes is not None and s.view.mtu_bytes is not None
                if s.view.mtu_bytes.value < h.view.mtu_bytes.value:
                    yield meta.finding(
                        target=name,
                        message=(
                            f"{s.end} accepts MTU {s.view.mtu_bytes.value}, less than the "
                            f"{h.view.mtu_bytes.value} of {h.end}"
                        ),
                        expected=h.view.mtu_bytes.value,
                        actual=s.view.mtu_bytes.value,
                        evidence=evidence_of(s.view.mtu_bytes, h.view.mtu_bytes),
                        explanation=explain,
                        fix=f"raise the MTU of {s.end} to 9216",
                    )


@register("verify.rdma-mtu")
def rdma_mtu_fit(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["verify.rdma-mtu"]
    fabric = ctx.fabric
    if fabric.transport != "roce":
        return
    hmtu = host_mtu(fabric)
    if hmtu is not None and hmtu < 4096 + 96:
        ib = rdma_mtu(hmtu)
        yield meta.finding(
            target="host links",
            message=(
                f"host MTU {hmtu} allows an RDMA MTU of only {ib}: every RoCE packet carries at "
                f"most {ib} bytes of payload instead of 4096"
            ),
            expected=4096,
            actual=ib,
            explanation=(
                "RoCE picks the largest IB MTU (256, 512, 1024, 2048, 4096) that fits the "
                "interface MTU minus 96 bytes (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 "
                f"+ ICRC 4; Linux iboe_get_mtu): {hmtu} - 96 = {hmtu - 96} -> {ib}. At 1024 "
                "bytes the wire efficiency is 92.6% against 98.0% at 4096 "
                "(docs/references.md#roce-mtu), about 5% of bus bandwidth lost."
            ),
            fix="run jumbo frames end to end (host MTU 9000 or more, switch 9216): S11",
            refs=["S11"],
        )
    obs = ctx.observed
    if obs is None:
        return
    for dev in obs.hosts():
        mtus = [v.value for v in dev.host_interfaces.values() if v.value >= 1500]
        eth = max(mtus) if mtus else hmtu
        if eth is None:
            continue
        best = rdma_mtu(eth)
        for port, val in sorted(dev.rdma_mtu.items()):
            ll = dev.link_layers.get(port)
            if ll is not None and ll.value.lower() != "ethernet":
                continue
            if val.value < best:
                yield meta.finding(
                    target=f"{dev.name}:{port}",
                    message=(
                        f"{dev.name} {port}: active RDMA MTU {val.value}, the interface MTU "
                        f"{eth} allows {best}"
                    ),
                    expected=best,
                    actual=val.value,
                    evidence=evidence_of(val),
                    explanation=(
                        "ibv_devinfo active_mtu is the path MTU RDMA connections use; it is "
                        f"the largest IB MTU not above interface MTU - 96 ({eth} - 96 = "
                        f"{eth - 96}) unless the port's netdev MTU is smaller than the one "
                        "checked here, or the application requested less."
                    ),
                    fix=f"set the netdev MTU of {port} to {eth} and restart the RDMA application",
                )
