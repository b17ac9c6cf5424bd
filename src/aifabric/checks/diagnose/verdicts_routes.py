"""Record verdicts on routing tables (``ip route``, FRR ``show ip route``; kind ``ip-route``).

In a leaf-spine fabric routed with eBGP (S6) a leaf reaches every remote prefix over all its
spine uplinks at once, one ECMP member per uplink; a session or a link that goes down withdraws
its member and the fabric carries that prefix on fewer paths, with no error anywhere (S20). A
routing table shows it as a prefix spread over fewer next hops than it should be:

* ``diagnose.ecmp-member-missing`` (``fabric.routing`` warning): in one table, a route learnt
  from a routing protocol forwards over a strict subset of the interfaces another route of the
  same protocol uses (``10.200.1.0/24`` via Ethernet6-8 where another prefix goes via
  Ethernet5-8): the path through the missing interfaces is gone for it. Designs where prefixes
  legitimately reach different sets of uplinks (a default route from two border leaves beside
  prefixes over four spines) read the same, hence a warning that names both routes.
* ``diagnose.ecmp-width-changed`` (``fabric.routing`` warning): the same prefix, learnt from a
  routing protocol, has fewer next hops in one capture than in another of the same router (or
  of two captures without a host name: a before and after pasted together).
* ``diagnose.route-not-in-fib`` (``fabric.routing`` warning): FRR selected the route but it is
  not in the kernel's forwarding table (status ``q`` queued, ``r`` rejected, ``o`` offload
  failure; ``"installed": false``): the router advertises and believes a path it does not
  forward over.
* ``diagnose.nexthop-dead`` (``fabric.link-down`` warning): the kernel marks a next hop
  ``dead`` (its device is down) or ``linkdown`` (no carrier): that ECMP member forwards
  nothing (``dead``), or nothing once ``ignore_routes_with_linkdown`` is set.

Sources: RFC 7938 (BGP in large-scale data centres: §6.1 basic ECMP over every uplink, §7.4
the scope of a link failure); ip-route(8) and ``RTNH_F_DEAD``/``RTNH_F_LINKDOWN``
(include/uapi/linux/rtnetlink.h); FRR's ``show ip route`` status letters (zebra_vty.c).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture, _index, _item
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.routes import Route

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []

_RFC7938 = "https://www.rfc-editor.org/rfc/rfc7938"
_IP_ROUTE = "https://man7.org/linux/man-pages/man8/ip-route.8.html"
_RTNETLINK = (
    "https://github.com/torvalds/linux/blob/v6.8/include/uapi/linux/rtnetlink.h"
)
_ZEBRA_VTY = "https://github.com/FRRouting/frr/blob/frr-8.4.4/zebra/zebra_vty.c"
_STATUS = {"q": "queued for the kernel", "r": "rejected by the kernel", "o": "offload failure",
           "t": "trapped"}  # fmt: skip
_MAX_ROUTES = 4096
"""Tables larger than this (an Internet table) are not compared route against route."""


def _base(path: object) -> str:
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def _devs(r: Route) -> frozenset[str]:
    return frozenset(n.dev or n.via or "?" for n in r.next_hops if n.used)


def _hops(r: Route) -> str:
    return ", ".join(n.dev or n.via or "?" for n in r.next_hops if n.used) or "none"


def _peers(rec: Route, ev: Evidence) -> list[Route]:
    """Routes of the same capture, protocol and address family (memoised per capture)."""
    capture = _capture(rec, ev) or [rec]
    key = ("routes", id(capture[0]))
    idx = _index(ev)
    groups = idx.memo.get(key)
    if groups is None:
        grouped: dict[tuple[str | None, bool, str | None], list[Route]] = defaultdict(list)
        routes = [r for r in capture if isinstance(r, Route)]
        if len(routes) <= _MAX_ROUTES:
            for r in routes:
                if r.dynamic and r.width and r.selected is not False:
                    grouped[(r.protocol, ":" in r.prefix, r.vrf)].append(r)
        groups = dict(grouped)
        idx.memo[key] = groups
    assert isinstance(groups, dict)
    found: list[Route] = groups.get((rec.protocol, ":" in rec.prefix, rec.vrf), [])
    return found


def _same_prefix_elsewhere(rec: Route, ev: Evidence) -> list[tuple[Route, str, bool]]:
    """The same prefix in other captures: (route, where, same named subject)."""
    idx = _index(ev)
    memo = idx.memo.get(("routes-by-prefix", 0))
    if memo is None:
        by_prefix: dict[str, list[tuple[Route, str, str, bool]]] = defaultdict(list)
        for item in ev.items:
            r = item.record
            if isinstance(r, Route) and r.dynamic and r.selected is not False:
                unnamed = item.file is not None and item.subject == _base(item.file.path)
                where = _base(item.file.path) if item.file is not None else item.subject
                by_prefix[r.prefix].append((r, where, item.subject, unnamed))
        memo = dict(by_prefix)
        idx.memo[("routes-by-prefix", 0)] = memo
    assert isinstance(memo, dict)
    me = _item(rec, ev)
    if me is None or me.file is None:
        return []
    mine_unnamed = me.subject == _base(me.file.path)
    out: list[tuple[Route, str, bool]] = []
    for other, where, subject, unnamed in memo.get(rec.prefix, []):
        if other is rec or where == _base(me.file.path):
            continue
        if subject == me.subject or (unnamed and mine_unnamed):
            out.append((other, where, subject == me.subject and not unnamed))
    return out


@verdict("route")
def _route(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, Route):
        return
    yield from _not_in_fib(rec)
    yield from _dead(rec)
    if not rec.dynamic or not rec.width or rec.selected is False:
        return
    mine = _devs(rec)
    wider = [r for r in _peers(rec, ev) if r is not rec and mine < _devs(r)]
    if wider:
        best = max(wider, key=lambda r: r.width)
        missing = ", ".join(sorted(_devs(best) - mine))
        yield Verdict(
            id="diagnose.ecmp-member-missing",
            severity="warning",
            cause="fabric.routing",
            message=f"{rec.prefix} ({rec.protocol}) goes over {rec.width} next hop(s) "
            f"({_hops(rec)}) where {best.prefix} goes over {best.width} ({_hops(best)}): "
            f"no path through {missing} for it",
            explanation=(
                "In a leaf-spine fabric a leaf spreads every remote prefix over all its spine "
                "uplinks (one ECMP member per uplink, RFC 7938 §6.1); a prefix that lacks "
                "an uplink another prefix of the same protocol uses has lost that member: "
                "the BGP session on that link is down, the neighbour does not advertise the "
                "prefix, or a policy filters it. Its traffic then shares fewer links (S20). "
                "Prefixes can legitimately use different uplinks (one originated behind only "
                "some spines, a default route from border leaves), so compare with the design."
            ),
            fix=f"On this router: show bgp summary (sessions on {missing}), show bgp ipv4 "
            f"unicast {rec.prefix} (paths received per neighbour), and the neighbour's "
            "advertised-routes; a session down or a missing advertisement is the cause.",
            refs=("S20", "S6", _RFC7938, _ZEBRA_VTY),
            confidence=0.45,
        )
    narrower_than = [(o, where, named) for o, where, named in _same_prefix_elsewhere(rec, ev)
                     if o.width > rec.width]  # fmt: skip
    if narrower_than:
        other, where, named = max(narrower_than, key=lambda t: t[0].width)
        yield Verdict(
            id="diagnose.ecmp-width-changed",
            severity="warning",
            cause="fabric.routing",
            message=f"{rec.prefix} ({rec.protocol}) has {rec.width} next hop(s) here and "
            f"{other.width} in {where}: ECMP members missing in one capture",
            explanation=(
                "The same prefix on the same router should keep its ECMP width while the "
                "fabric is whole; fewer next hops in one capture means members were withdrawn "
                "then (a session or a link down, a neighbour that stopped advertising, or a "
                "routing daemon that did not re-run multipath after a change)."
                + ("" if named else " The two captures name no host; if they come from "
                   "different routers, widths can differ by design.")
            ),
            fix="Compare the two captures' next hops: the interfaces missing in the narrower "
            "one lead to the session or neighbour to check (show bgp summary, show bgp "
            f"ipv4 unicast {rec.prefix}); 'clear bgp' re-learning the paths points at the "
            "routing daemon rather than the links.",
            refs=("S20", _RFC7938),
            confidence=0.45 if named else 0.35,
        )


def _not_in_fib(rec: Route) -> Iterator[Verdict]:
    if not rec.selected or not rec.dynamic:
        return
    if rec.status not in _STATUS and rec.installed is not False:
        return
    state = _STATUS.get(rec.status or "", "not installed")
    yield Verdict(
        id="diagnose.route-not-in-fib",
        severity="warning",
        cause="fabric.routing",
        message=f"{rec.prefix} ({rec.protocol}) is selected by the routing daemon but "
        f"{state}: the router does not forward over it",
        explanation=(
            "zebra marks a selected route's next hops '*' once the kernel (or the switch ASIC "
            "through it) has installed them; 'q' means still queued, 'r' that the kernel "
            "refused the route, 'o' that hardware offload failed. Meanwhile the router keeps "
            "advertising the prefix, so traffic for it is dropped or takes another route."
        ),
        fix="Check zebra's log and the kernel's table (ip route show " + rec.prefix + "), the "
        "number of routes or next-hop groups the platform accepts, and syncd/orchagent on a "
        "SONiC switch; a route stuck queued points at zebra or the dataplane.",
        refs=("S20", _ZEBRA_VTY),
        confidence=0.4,
    )


def _dead(rec: Route) -> Iterator[Verdict]:
    dead = [n for n in rec.next_hops if "dead" in n.flags or "linkdown" in n.flags]
    if not dead:
        return
    where = ", ".join(
        f"{n.dev or n.via} ({' '.join(f for f in n.flags if f in ('dead', 'linkdown'))})"
        for n in dead
    )
    yield Verdict(
        id="diagnose.nexthop-dead",
        severity="warning",
        cause="fabric.link-down",
        message=f"{rec.prefix}: next hop(s) {where} have no link; the route forwards over "
        f"{rec.width} of {len(rec.next_hops)}",
        explanation=(
            "The kernel keeps a multipath route's next hops when their device goes down and "
            "flags them: 'dead' (the device is down, the hop is skipped) and 'linkdown' (no "
            "carrier; skipped when net.ipv4.conf.*.ignore_routes_with_linkdown=1, else "
            "traffic hashed to it is lost). That ECMP member is gone until the link returns."
        ),
        fix="ip link show and ethtool for the device(s) named, the cable or module and the "
        "peer's port; the routing daemon withdraws such a next hop only when its session "
        "drops too.",
        refs=("S20", _IP_ROUTE, _RTNETLINK),
        confidence=0.55,
    )
