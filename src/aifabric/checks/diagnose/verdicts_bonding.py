"""Record verdicts on Linux bonds (``/proc/net/bonding/*``), the RoCE LAG and dual-homed hosts.

* The bond's MII status down → ``fabric.link-down`` error: no member has a link.
* A member's MII status down → ``fabric.link-down`` warning: the bond runs degraded (a RoCE LAG
  on half its bandwidth; with active-backup, no redundancy left).
* A member whose ``Link Failure Count`` is above zero → ``fabric.link-down`` info: it lost its
  link that many times since the bond was created (a flapping cable or module).
* 802.3ad with members in different aggregators, an active aggregator with fewer ports than
  the bond has members up, or a partner MAC of all zeros → ``fabric.slow-link`` warning: LACP
  did not bundle the links (the switch side is not a LAG, or a member goes to another switch),
  so only part of the links carry traffic.
* Members at different speeds → ``fabric.slow-link`` warning.
* 802.3ad or balance-xor hashing on ``layer2`` → ``fabric.ecmp-hash`` info: every flow between
  two hosts (same MAC pair) takes the same member, so NCCL's connections between two servers
  never spread over the links (the kernel documentation: layer2 "will place all traffic to a
  particular network peer on the same slave"; layer3+4 spreads by ports).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.bonding import BondInfo, BondSlave

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []

_REF_BONDING = "https://www.kernel.org/doc/Documentation/networking/bonding.rst"
_REF_PROCFS = "https://github.com/torvalds/linux/blob/v6.8/drivers/net/bonding/bond_procfs.c"


def _name(bond: str | None) -> str:
    return bond or "the bond"


def _members(rec: Record, ev: Evidence) -> list[BondSlave]:
    return [r for r in (_capture(rec, ev) or [rec]) if isinstance(r, BondSlave)]


@verdict("bond_info")
def _bond(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, BondInfo):
        return
    members = _members(rec, ev)
    if rec.mii_status is not None and rec.mii_status.lower() == "down":
        yield Verdict(
            id="diagnose.bond-down",
            severity="error",
            cause="fabric.link-down",
            message=f"{_name(rec.bond)} is down: no member has a link",
            explanation=(
                "A bond's MII status is up while at least one member (enough members for "
                "802.3ad's min_links) has a link; down means every member lost its carrier, "
                "or LACP brought none into the active aggregator."
            ),
            fix="Check each member: ip link / ethtool <member> (Link detected), the cables and "
            "modules, and the switch ports (LAG/MLAG configuration).",
            refs=("S20", _REF_BONDING, _REF_PROCFS),
            confidence=0.7,
        )
    speeds = {m.speed_mbps for m in members if m.speed_mbps and _up(m)}
    if len(speeds) > 1:
        yield Verdict(
            id="diagnose.bond-speed-mismatch",
            severity="warning",
            cause="fabric.slow-link",
            message=f"{_name(rec.bond)}'s members run at different speeds: "
            + ", ".join(f"{s} Mb/s" for s in sorted(speeds)),
            explanation=(
                "Members of one bond are meant to be alike; 802.3ad only aggregates ports of "
                "the same speed, so a member that negotiated lower ends in another aggregator "
                "or drags the flows hashed to it."
            ),
            fix="Find the member that negotiated lower (ethtool <member>), check its cable, "
            "module and switch port speed.",
            refs=("S16", "S20", _REF_BONDING),
            confidence=0.45,
        )
    if not rec.is_8023ad:
        if rec.xmit_hash_policy == "layer2" and rec.mode and "xor" in rec.mode:
            yield _layer2(rec)
        return
    up = [m for m in members if _up(m)]
    aggregators = {m.aggregator_id for m in up if m.aggregator_id is not None}
    split = len(aggregators) > 1
    short = (
        rec.aggregator_ports is not None and len(up) > 1 and rec.aggregator_ports < len(up)
    )
    lonely = rec.partner_mac is not None and rec.partner_mac.strip("0:") == ""
    if split or short or lonely:
        why = (
            "its members are in different aggregators ("
            + ", ".join(str(a) for a in sorted(aggregators))
            + ")"
            if split
            else f"the active aggregator has {rec.aggregator_ports} of {len(up)} members up"
            if short
            else "LACP found no partner (partner MAC 00:00:00:00:00:00)"
        )
        yield Verdict(
            id="diagnose.bond-lacp-not-bundled",
            severity="warning",
            cause="fabric.slow-link",
            message=f"{_name(rec.bond)} (802.3ad): {why}; only part of its links carry traffic",
            explanation=(
                "In 802.3ad mode only the members of the active aggregator carry traffic. "
                "Members end in separate aggregators when their LACP partners differ (the "
                "switch ports are not one LAG, or go to two switches without MLAG) or when a "
                "port's speed or duplex differs; a partner MAC of zeros means no LACPDU came "
                "back at all (the switch port is not configured for LACP)."
            ),
            fix="Configure the switch ports as one LAG (or MLAG pair) with LACP active; check "
            "'Partner Mac Address' and each member's 'Aggregator ID' again afterwards.",
            refs=("S20", _REF_BONDING, _REF_PROCFS),
            confidence=0.5,
        )
    if rec.xmit_hash_policy in ("layer2", "layer2+3"):
        yield _layer2(rec)


def _up(m: BondSlave) -> bool:
    return m.mii_status is not None and m.mii_status.lower() == "up"


def _layer2(rec: BondInfo) -> Verdict:
    return Verdict(
        id="diagnose.bond-hash-layer2",
        severity="info",
        cause="fabric.ecmp-hash",
        message=f"{_name(rec.bond)} hashes on {rec.xmit_hash_policy}: all traffic between two "
        "hosts takes one member",
        explanation=(
            "The transmit hash picks the member for each packet. layer2 uses the MAC "
            "addresses and layer2+3 adds the IP addresses, so every connection between two "
            "servers lands on the same member; NCCL's many connections between a pair of "
            "servers then use one link of the bond. layer3+4 (or encap3+4) adds the ports and "
            "spreads them (kernel bonding documentation, xmit_hash_policy)."
        ),
        fix="Set xmit_hash_policy=layer3+4 (bond option, or the NIC's LAG hash for a RoCE "
        "LAG) and the switch LAG's hash to include L4 ports.",
        refs=("S6", _REF_BONDING),
        confidence=0.3,
    )


@verdict("bond_slave")
def _slave(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    del ev
    if not isinstance(rec, BondSlave):
        return
    where = f" of {rec.bond}" if rec.bond else ""
    if rec.mii_status is not None and rec.mii_status.lower() == "down":
        yield Verdict(
            id="diagnose.bond-member-down",
            severity="warning",
            cause="fabric.link-down",
            message=f"bond member {rec.interface}{where} has no link (MII Status: down)",
            explanation=(
                "The bond keeps running on its other members, so nothing fails: a RoCE LAG or "
                "an 802.3ad bond loses that member's bandwidth, an active-backup bond its "
                "redundancy. The member's own carrier is down (cable, module, switch port)."
            ),
            fix=f"ethtool {rec.interface} (Link detected), ethtool -m {rec.interface} for the "
            "module, and the switch port's state.",
            refs=("S16", "S20", _REF_PROCFS),
            confidence=0.6,
        )
    elif rec.link_failures:
        yield Verdict(
            id="diagnose.bond-member-flapped",
            severity="info",
            cause="fabric.link-down",
            message=f"bond member {rec.interface}{where} lost its link {rec.link_failures} "
            "time(s) since the bond was set up",
            explanation=(
                "Link Failure Count counts the member's carrier losses since it joined the "
                "bond; one is a cable pulled once, a growing count is a flapping link."
            ),
            fix=f"Compare the count over time; dmesg for '{rec.interface}: Link down'; check "
            "the cable and module (ethtool -m, the switch port's error counters).",
            refs=("S16", "S20", _REF_PROCFS),
            confidence=0.25,
        )
