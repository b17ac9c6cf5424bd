"""Record verdicts on what a routed fabric's hosts and routers print with ordinary tools: BGP
summaries, iperf3 results, queue statistics, netfilter rules and kernel parameters. These close
the fabric lab's loop (``aifabric lab capture`` then ``aifabric diagnose DIR``: every injected
fault named by its cause class from the files alone, a healthy lab silent), and read the same
captures from a real fabric.

======================================  ==================================  =====================
verdict                                  records                             cause
======================================  ==================================  =====================
``diagnose.bgp-session-down``            ``bgp_peer`` not Established        fabric.routing
``diagnose.bgp-no-prefixes``             ``bgp_peer`` Established, 0 rcvd    fabric.routing
``diagnose.iperf3-error``                ``iperf3_run`` with an error        config.firewall /
                                                                             application.usage
``diagnose.iperf3-retransmits``          ``iperf3_run`` (TCP sender)         fabric.packet-loss
``diagnose.iperf3-udp-loss``             ``iperf3_run`` (UDP)                fabric.packet-loss
``diagnose.flow-throttled``              ``iperf3_run`` + its intervals      fabric.middlebox
``diagnose.qdisc-drops``                 ``tc`` (tail-drop qdisc or class)   fabric.pfc-congestion
``diagnose.ping-loss``                   ``ping_summary`` (0 < loss < 100)   fabric.packet-loss
``diagnose.netfilter-random-drop``       ``iptables_rule`` statistic DROP    fabric.packet-loss
``diagnose.netfilter-rate-limit``        ``iptables_rule`` byte-rate DROP    fabric.middlebox
``diagnose.dscp-not-roce``               ``iptables_rule`` (with a fabric)   config.qos
``diagnose.dscp-differs``                ``iptables_rule`` (hosts compared)  config.qos
``diagnose.ecmp-hash-l3``                ``sysctl`` hash policy 0            fabric.ecmp-hash
======================================  ==================================  =====================

Also used by other verdict modules: :func:`passed_smaller_ping` (``diagnose.ping-no-reply``
turns into a path-MTU finding when big probes vanish and small ones to the same target pass)
and :func:`link_peer_down` / :func:`fabric_peer` (``diagnose.iface-no-carrier`` becomes an
error when the far end of a veth or a cabled fabric link is known).

Thresholds, and where they come from:

* **TCP retransmissions**: retransmitted segments per segment sent, ``retransmits / (bytes /
  MSS)`` (iperf3's ``retransmits`` is the kernel's ``tcpi_total_retrans`` summed over the
  streams, in MSS-sized segments). Warning from :data:`RETRANSMIT_RATE` (1 %). Healthy captures
  on the lab's machine (veth pairs through a router namespace, offloads off, 18 runs of 1, 4 and
  8 streams for 2-3 s) showed 0 to 0.17 % (0.0019-0.011 % for the 4-stream fixtures); a 1 %
  random drop gave 1.05 %, 5 % gave 5.4-5.9 %, a 5-packet queue behind a 200 Mbit/s shaper
  36-43 %. The threshold is six times the worst healthy run. Without an MSS (text output, a
  server's JSON), 1448 bytes (MTU 1500) is assumed, which can only understate the rate.
* **Throttled flows** (S17): a stream whose throughput falls after the first interval to a
  plateau: the mean of the last half of its intervals is below :data:`THROTTLE_SHARE` (1/3) of
  its first interval, for every stream of the run, and that half is flat on the sum over the
  streams (largest at most :data:`PLATEAU_SPREAD` (1.5) times the smallest; one stream's 1 s
  samples of a token bucket swing by a burst or two), over at least 3 intervals (``--omit``
  intervals and a short last interval left out). A token bucket per flow does exactly this: its
  burst lets the first second through, then the flow is held at the rate (lab captures: 351 then 84,
  73, 84, 84, 84 Mbit/s behind a 10 MB/s hashlimit; healthy runs vary by less than 25 %).
  TCP's own ramp goes the other way (slow start: the first interval is the lowest).
* **Queue drops**: a tail-drop queue (``pfifo``, ``bfifo``, ``pfifo_fast``, ``tbf``, ``sfq``, an
  ``htb``/``hfsc`` leaf class) that dropped at least :data:`QDISC_MIN_DROPS` packets and at
  least :data:`QDISC_DROP_SHARE` (0.1 %) of what it handled. AQM qdiscs (``fq_codel``, ``cake``,
  ``codel``, ``pie``, ``red``, ``fq``) drop by design and are not judged, nor are parents that
  only sum their children (``mq``, ``mqprio``, ``htb`` and ``prio`` qdiscs).
* **ping loss**: 2 or more probes lost of at least 10: one probe lost in a run (an ICMP reply
  dropped by a rate limiter or a busy control plane on a WAN path) is common on healthy paths
  (a study of 72 real iputils captures: 1 lost in 20 with mdev 8 % of the average). Loss is
  judged here only; the RTT-jitter rule mentions it only beside a variance it already found.
* **DSCP**: the marking a host applies to RoCE traffic is the *last* netfilter rule in
  ``mangle`` OUTPUT then POSTROUTING that sets a DSCP (``DSCP`` or a ``TOS`` target covering the
  DSCP bits) and applies to every packet, to all TCP or UDP (no port: test traffic, NCCL's
  sockets) or to UDP port 4791 (RoCEv2): DSCP targets do not stop
  the traversal, so a later rule overwrites an earlier one. With a fabric file (RoCE
  transport) it must be ``qos.roce_dscp``; without one, the hosts of the bundle are compared and
  the ones that differ from the majority are named.
* **ECMP hash**: ``net.ipv4.fib_multipath_hash_policy = 0`` hashes on addresses only
  (Documentation/networking/ip-sysctl.rst). Judged on routers: the subject is a switch of the
  fabric file, or the same capture shows ``net.ipv4.ip_forward = 1``, or the capture names the
  policy alone (``sysctl net.ipv4.fib_multipath_hash_policy``); a server of the fabric file or a
  capture with ``ip_forward = 0`` is not judged (the lab captures sysctl on routers only).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture, _fmt, _index, _item
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.frr import BgpPeer
from aifabric.evidence.iperf3 import Iperf3Interval, Iperf3Run
from aifabric.evidence.linux_net import IpLink, TcEntry
from aifabric.evidence.netfilter import NetfilterRule
from aifabric.evidence.ping import PingHeader, PingSummary
from aifabric.evidence.sysctl import SysctlValue
from aifabric.model import Endpoint, fabric_index

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = [
    "PLATEAU_SPREAD",
    "QDISC_DROP_SHARE",
    "QDISC_MIN_DROPS",
    "RETRANSMIT_RATE",
    "THROTTLE_SHARE",
    "Throttle",
    "fabric_peer",
    "link_peer_down",
    "linux_ifname",
    "passed_smaller_ping",
    "retransmit_rate",
    "roce_marking",
    "throttle",
]

RETRANSMIT_RATE = 0.01
"""Retransmitted segments per segment sent from which a TCP run is judged lossy (module doc)."""
RETRANSMIT_MIN = 20
"""...and at least this many retransmissions (a short run with a handful is not judged)."""
DEFAULT_MSS = 1448
"""MSS assumed when the capture does not give one (IPv4 + TCP timestamps at MTU 1500)."""
UDP_LOSS_PCT = 1.0
UDP_LOSS_MIN = 10
THROTTLE_SHARE = 1 / 3
PLATEAU_SPREAD = 1.5
THROTTLE_MIN_INTERVALS = 3
QDISC_DROP_SHARE = 0.001
QDISC_MIN_DROPS = 10
PING_MIN_PROBES = 10
PING_MIN_LOST = 2

_TAIL_DROP_QDISCS = frozenset({"pfifo", "bfifo", "pfifo_fast", "pfifo_head_drop", "tbf", "sfq"})
_LEAF_CLASSES = frozenset({"htb", "hfsc"})

_FRR_BGP = "https://docs.frrouting.org/en/stable-8.4/bgp.html"
_CISCO_BGP_MTU = (
    "https://www.cisco.com/c/en/us/support/docs/ip/border-gateway-protocol-bgp/"
    "116377-troubleshoot-bgp-mtu.html"
)
_FRR_VTY = "https://github.com/FRRouting/frr/blob/frr-8.4.4/bgpd/bgp_vty.c"
_IPERF = "https://github.com/esnet/iperf"
_IP_SYSCTL = "https://docs.kernel.org/networking/ip-sysctl.html"
_IPT_EXT = "https://ipset.netfilter.org/iptables-extensions.man.html"
_TC = "https://man7.org/linux/man-pages/man8/tc.8.html"
_OPERSTATES = "https://docs.kernel.org/networking/operstates.html"


def _subject(rec: Record, ev: Evidence) -> str | None:
    item = _item(rec, ev)
    return item.subject if item is not None else None


def _mbps(gbps: float) -> str:
    return f"{_fmt(gbps * 1000)} Mbit/s" if gbps < 10 else f"{gbps:.1f} Gbit/s"


# ---------------------------------------------------------------------------------------------
# BGP

_STATE_WHY = {
    "Active": "bgpd keeps trying to open TCP port 179 to the neighbor and fails",
    "Connect": "bgpd is waiting for its TCP connection to port 179 to complete",
    "Idle": "the session was reset and bgpd is backing off before it tries again",
    "OpenSent": "TCP works but the neighbor has not answered the OPEN",
    "OpenConfirm": "OPENs were exchanged but no KEEPALIVE arrived",
}


@verdict("bgp_peer")
def _bgp_peer(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, BgpPeer) or rec.state is None:
        return
    who = rec.peer if not rec.hostname or rec.hostname == rec.peer else (
        f"{rec.hostname} ({rec.peer})")
    asn = f" AS {rec.remote_as}" if rec.remote_as is not None else ""
    af = f" [{rec.address_family}]" if rec.address_family else ""
    if not rec.established:
        admin = "Admin" in rec.state or rec.peer_state == "Admin"
        since = f" for {rec.uptime}" if rec.uptime and rec.uptime != "never" else ""
        dropped = (
            f", {rec.connections_dropped} drop(s) after {rec.connections_established} "
            "established" if rec.connections_established else ", never established"
        ) if rec.connections_dropped is not None else ""
        why = _STATE_WHY.get(rec.state.split()[0], "")
        yield Verdict(
            id="diagnose.bgp-session-down",
            severity="warning" if admin else "error",
            cause="fabric.routing",
            message=f"BGP session to {who}{asn}{af} is {rec.state}{since}, not Established"
            f"{dropped}",
            explanation=(
                "A BGP session carries routes only in the Established state (RFC 4271 §8; "
                f"FRR prints the FSM state in show bgp summary, {_FRR_VTY}). "
                + (f"{rec.state}: {why}. " if why else "")
                + "In a leaf-spine fabric every link runs one eBGP session and each session is "
                "one ECMP next hop: when the hold timer expires (9 s with FRR's datacenter "
                "profile) its routes are withdrawn and the fabric loses that path's bandwidth "
                "without an error on any port (S20 row 2, S6). A silent TCP 179 drop (a "
                "firewall or ACL), a neighbor address or AS mismatch, or the link itself being "
                "down are the usual causes; Idle (Admin) is a shutdown by configuration. A "
                "session that establishes and is reset as soon as the peers exchange prefixes "
                "points at an MTU mismatch on the link: OPEN and KEEPALIVE fit, full-size "
                f"UPDATE segments are dropped ({_CISCO_BGP_MTU})."
            ),
            fix=(
                f"`vtysh -c 'show bgp neighbors {rec.peer}'` for the last reset reason; check "
                "the link (`ip link`), that TCP 179 is allowed both ways (`iptables-save -c`, "
                "ACLs), and the neighbor statement (address, remote-as) on both ends; if it "
                "flaps after establishing, ping the peer with don't-fragment at the interface "
                "MTU (`ping -M do -s <mtu-28>`) and make both ends' MTU equal."
            ),
            refs=("S20", "S6", "S11", _FRR_BGP, _CISCO_BGP_MTU),
            confidence=0.85 if not admin else 0.6,
        )
        return
    if rec.prefixes_received == 0:
        yield Verdict(
            id="diagnose.bgp-no-prefixes",
            severity="warning",
            cause="fabric.routing",
            message=f"BGP session to {who}{asn}{af} is Established but 0 prefixes received"
            + (f" ({rec.prefixes_sent} sent)" if rec.prefixes_sent is not None else ""),
            explanation=(
                "The session is up but the neighbor advertises nothing (or everything it sends "
                "is filtered): no route, so no ECMP member, goes through it. Usual causes: an "
                "inbound or outbound policy that denies everything (FRR requires one on eBGP "
                "unless `no bgp ebgp-requires-policy`; peerState Policy), the neighbor has no "
                "`network` statement or redistribution, or AS-path loop prevention discards "
                "its routes. A neighbor with nothing to originate (a leaf with no hosts) is "
                f"the harmless case. Source: {_FRR_BGP}."
            ),
            fix=(
                f"`vtysh -c 'show bgp neighbors {rec.peer} received-routes'` (with soft "
                "reconfiguration) and the neighbor's `advertised-routes`; check route-maps and "
                "network statements on both ends."
            ),
            refs=("S20", "S6", _FRR_BGP),
            confidence=0.5,
        )


# ---------------------------------------------------------------------------------------------
# iperf3

_REFUSED = re.compile(r"refused|unable to connect|no route|unreachable|timed out|timeout",
                      re.IGNORECASE)
_BROKEN = re.compile(r"control socket has closed|reset by peer|broken pipe|unable to (?:receive|"
                     r"send|read|write)", re.IGNORECASE)


@verdict("iperf3_run")
def _iperf3(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, Iperf3Run):
        return
    if rec.error is not None:
        yield _iperf3_error(rec)
    rate = retransmit_rate(rec)
    if rate is not None and rate[0] >= RETRANSMIT_RATE and (rec.retransmits or 0) >= RETRANSMIT_MIN:
        share, mss, assumed = rate
        segs = (rec.sent_bytes or 0) / mss
        yield Verdict(
            id="diagnose.iperf3-retransmits",
            severity="warning",
            cause="fabric.packet-loss",
            message=(
                f"iperf3 to {rec.remote_host or '?'}: {rec.retransmits} TCP retransmissions for "
                f"{segs:,.0f} segments sent ({share:.2%} of segments"
                + (f", MSS {mss} assumed" if assumed else f", MSS {mss}")
                + f") at {_mbps(rec.sent_gbps or 0.0)}"
            ),
            explanation=(
                "iperf3 counts the sender's TCP retransmissions (tcpi_total_retrans, in segments "
                f"of one MSS; {_IPERF}); divided by the bytes sent over the MSS it is the share "
                "of segments the path lost (or delivered so late that they were resent). A "
                f"healthy path stays far below {RETRANSMIT_RATE:.0%} (lab baseline: 0.17 % at "
                "worst); above it, packets are dropped on the way: a lossy link or optic, a "
                "queue overflowing at a bottleneck, a policer (S20 rows 1 and 5; S17: "
                "'retransmissions near zero' after the fix)."
            ),
            fix=(
                "Find where: drop counters along the path (`ip -s link`, `ethtool -S`, `tc -s "
                "qdisc`, switch counters), netfilter rules that drop (`iptables-save -c`), a "
                "loss test per link (`ping -c 1000 -i 0.01`), then clean/replace the optic or "
                "relieve the bottleneck."
            ),
            refs=("S20", "S17", _IPERF),
            confidence=0.6,
        )
    if (
        rec.protocol == "UDP"
        and rec.lost_pct is not None
        and rec.lost_pct >= UDP_LOSS_PCT
        and (rec.lost_packets or 0) >= UDP_LOSS_MIN
    ):
        target = f" at -b {_mbps(rec.target_gbps)}" if rec.target_gbps else ""
        yield Verdict(
            id="diagnose.iperf3-udp-loss",
            severity="warning",
            cause="fabric.packet-loss",
            message=(
                f"iperf3 UDP to {rec.remote_host or '?'}{target}: {rec.lost_packets} of "
                f"{rec.packets} datagrams lost ({rec.lost_pct:.2f} %)"
            ),
            explanation=(
                "The receiver counts UDP datagrams missing from the sequence (iperf3 lost_packets"
                f", {_IPERF}): UDP has no retransmission, so this is the path's loss at the "
                "offered rate, unless the rate is above what the path or the receiver can take."
            ),
            fix=(
                "Repeat at a lower -b: loss that stays points at the path (drop counters, "
                "netfilter rules, optics), loss that goes away was the bottleneck's capacity."
            ),
            refs=("S20", _IPERF),
            confidence=0.5,
        )
    got = throttle(rec, ev)
    if got is not None:
        yield _throttle_verdict(rec, got)


def _iperf3_error(rec: Iperf3Run) -> Verdict:
    err = rec.error or ""
    target = rec.remote_host or "the server"
    if err.startswith("interrupt"):
        return Verdict(
            id="diagnose.iperf3-error",
            severity="info",
            cause="application.usage",
            message=f"iperf3 to {target} was interrupted: '{err}'",
            explanation="The test was stopped (Ctrl-C or a signal) before it finished; its "
            "totals cover only the time it ran.",
            fix="Run the test to its end (-t) for comparable totals.",
            refs=("S20", _IPERF),
            confidence=0.4,
        )
    if _REFUSED.search(err):
        return Verdict(
            id="diagnose.iperf3-error",
            severity="error",
            cause="config.firewall",
            message=f"iperf3 could not reach {target}: '{err}'",
            explanation=(
                "'Connection refused' means the host answered with a TCP reset: nothing listens "
                "on that port, or a firewall rejects it; 'No route to host' / 'unreachable' an "
                "ICMP error from a router or a REJECT rule; a timeout means the SYN got no "
                "answer at all (a DROP rule, a down path, a wrong address). iperf3 3.12 exits 0 "
                f"with --json even then, so the error key is the only sign ({_IPERF})."
            ),
            fix=(
                "Check that the server runs (`iperf3 -s -p PORT`, `ss -ltn`), the address and "
                "port, the route (`ip route get ADDR`) and firewalls on both ends and on the "
                "path (`iptables-save -c`, security groups)."
            ),
            refs=("S20",),
            confidence=0.7,
        )
    if _BROKEN.search(err):
        return Verdict(
            id="diagnose.iperf3-error",
            severity="warning",
            cause="config.firewall",
            message=f"iperf3 to {target} lost its connection during the test: '{err}'",
            explanation=(
                "The control or data connection closed before the test ended: the server "
                "stopped, or a stateful device on the path (firewall, NAT, load balancer) "
                "dropped or reset the connection (idle or session-length timeouts, connection "
                "tracking limits, S17)."
            ),
            fix="Check the server side and the middleboxes' session tables and logs; rerun.",
            refs=("S17", "S20"),
            confidence=0.45,
        )
    return Verdict(
        id="diagnose.iperf3-error",
        severity="warning",
        cause="application.usage",
        message=f"iperf3 to {target} failed: '{err}'",
        explanation="iperf3 reported an error (its JSON error key, or 'iperf3: error - ...'); "
        "with --json, iperf3 3.12 exits 0 even then.",
        fix="Read the message and the iperf3 options used; rerun without --json for details.",
        refs=("S20", _IPERF),
        confidence=0.4,
    )


def retransmit_rate(rec: Iperf3Run) -> tuple[float, int, bool] | None:
    """(retransmitted segments / segments sent, MSS used, MSS assumed) of a TCP run seen from
    its sending side; ``None`` when the capture cannot say."""
    if rec.protocol not in (None, "TCP") or rec.retransmits is None:
        return None
    if not rec.sent_bytes or rec.sent_bytes <= 0:
        return None
    mss = rec.tcp_mss_bytes if rec.tcp_mss_bytes and rec.tcp_mss_bytes > 0 else None
    assumed = mss is None
    mss = mss or DEFAULT_MSS
    return rec.retransmits * mss / rec.sent_bytes, mss, assumed


@dataclass(frozen=True, slots=True)
class Throttle:
    """A run whose every stream fell from its first interval to a flat plateau."""

    streams: int
    first_gbps: list[float]
    plateau_gbps: list[float]
    intervals: int

    @property
    def share(self) -> float:
        """Plateau over first interval, the largest over the streams."""
        return max(p / f for p, f in zip(self.plateau_gbps, self.first_gbps, strict=True))


def _series(intervals: list[Iperf3Interval]) -> list[float]:
    ivs = [iv for iv in intervals if not iv.omitted and iv.gbps is not None]
    ivs.sort(key=lambda iv: iv.start_s)
    if len(ivs) >= 2:
        spans = [iv.seconds or (iv.end_s - iv.start_s) for iv in ivs]
        typical = statistics.median(spans)
        if typical > 0 and spans[-1] < 0.5 * typical:
            ivs = ivs[:-1]  # a short last interval (the test's remainder)
    return [float(iv.gbps or 0.0) for iv in ivs]


def throttle(rec: Iperf3Run, ev: Evidence | None = None,
             records: Sequence[Record] | None = None) -> Throttle | None:
    """The throttle pattern of ``rec`` (module doc), from its intervals in the same capture."""
    if records is None:
        records = (_capture(rec, ev) if ev is not None else None) or []
    mine = [r for r in records if isinstance(r, Iperf3Interval) and r.run == rec.run]
    by_stream: dict[int | None, list[Iperf3Interval]] = defaultdict(list)
    for iv in mine:
        by_stream[iv.stream].append(iv)
    streams = [v for k, v in by_stream.items() if k is not None]
    total = _series(by_stream.get(None, []))
    groups = [_series(g) for g in streams] if streams else [total]
    firsts, plateaus = [], []
    n = 0
    for s in groups:
        if len(s) < THROTTLE_MIN_INTERVALS or s[0] <= 0:
            return None
        tail = s[len(s) // 2 :]
        mean = sum(tail) / len(tail)
        if mean >= THROTTLE_SHARE * s[0]:
            return None
        firsts.append(s[0])
        plateaus.append(mean)
        n = len(s)
    if not firsts:
        return None
    # the plateau: flat on the sum over streams (one stream's 1 s samples of a token bucket
    # swing by a packet burst or two; their sum does not)
    flat = total if len(total) >= THROTTLE_MIN_INTERVALS else groups[0]
    tail = flat[len(flat) // 2 :]
    if min(tail) <= 0 or max(tail) > PLATEAU_SPREAD * min(tail):
        return None
    return Throttle(len(firsts), firsts, plateaus, n)


def _throttle_verdict(rec: Iperf3Run, t: Throttle) -> Verdict:
    each = (
        f"each of {t.streams} streams fell from {_mbps(statistics.mean(t.first_gbps))} in the "
        f"first interval to {_mbps(statistics.mean(t.plateau_gbps))}"
        if t.streams > 1
        else f"the stream fell from {_mbps(t.first_gbps[0])} in the first interval to "
        f"{_mbps(t.plateau_gbps[0])}"
    )
    spread = (
        f" (streams within {max(t.plateau_gbps) / min(t.plateau_gbps) - 1:.0%} of each other: "
        "one cap per flow)"
        if t.streams > 1
        else ""
    )
    return Verdict(
        id="diagnose.flow-throttled",
        severity="warning",
        cause="fabric.middlebox",
        message=(
            f"iperf3 to {rec.remote_host or '?'}: {each}{spread}, at most "
            f"{t.share:.0%} of the first interval, and stayed there for the last "
            f"{t.intervals - t.intervals // 2} of {t.intervals} intervals"
        ),
        explanation=(
            "A flow that starts fast and is then held at a flat, lower rate is being policed "
            "per flow: a token bucket lets its burst through, then drops (or delays) what "
            "exceeds the rate. That is what a stateful firewall, NAT or DPI box with a "
            "per-session limit does to long-lived flows (S17: a firewall between the sites "
            "rate-limited long connections; S20 row 4). TCP's own ramp goes the other way (slow "
            f"start), and congestion does not hold every stream at one flat rate. Rule: last "
            f"half of the intervals below {THROTTLE_SHARE:.2f} of the first for every stream, "
            f"and flat within {PLATEAU_SPREAD}x."
        ),
        fix=(
            "Find the device: traceroute the path, look for firewalls/NAT/DPI or rate-limit "
            "rules (`iptables-save -c`: hashlimit, limit, connbytes), session policies on the "
            "security appliance; take the training traffic off the middlebox (a dedicated "
            "link) or exempt it from the per-session limit (S17)."
        ),
        refs=("S17", "S20", _IPERF),
        confidence=0.65,
    )


# ---------------------------------------------------------------------------------------------
# tc


@verdict("tc")
def _tc(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, TcEntry) or not rec.dropped or rec.sent_packets is None:
        return
    if rec.object == "qdisc" and rec.kind not in _TAIL_DROP_QDISCS:
        return
    if rec.object == "class" and (rec.kind not in _LEAF_CLASSES or "leaf" not in rec.options):
        return
    handled = rec.sent_packets + rec.dropped
    share = rec.dropped / handled if handled else 0.0
    if rec.dropped < QDISC_MIN_DROPS or share < QDISC_DROP_SHARE:
        return
    where = f"{rec.object} {rec.kind} {rec.handle}" + (f" on {rec.dev}" if rec.dev else "")
    limit = re.search(r"\blimit (\S+)", rec.options)
    rate = re.search(r"\brate (\S+)", rec.options)
    what = ", ".join(
        x for x in (f"rate {rate.group(1)}" if rate else "", f"limit {limit.group(1)}" if limit
                    else "") if x
    )
    yield Verdict(
        id="diagnose.qdisc-drops",
        severity="warning",
        cause="fabric.pfc-congestion",
        message=(
            f"{where}{f' ({what})' if what else ''} dropped {rec.dropped:,} packets of "
            f"{handled:,} ({share:.1%}), overlimits {rec.overlimits or 0:,}"
        ),
        explanation=(
            "A tail-drop queue drops only when it is full: more arrives than the egress (or "
            "the shaper's rate) can send, and the buffer is too shallow to absorb the burst "
            f"(tc -s counts the drops per qdisc and class, {_TC}; they show nowhere else, not "
            "in ip -s link or ethtool -S). On a lossless RoCE fabric PFC would pause instead; "
            "for TCP each drop is a retransmission and a halved window (S12, S18: queues and "
            f"buffers; S20). Counted from {QDISC_MIN_DROPS} drops and {QDISC_DROP_SHARE:.1%} "
            "of the packets; AQM qdiscs (fq_codel, cake...) that drop on purpose are not judged."
        ),
        fix=(
            "Give the queue more room (a larger limit, or an AQM such as fq_codel) or remove "
            "the bottleneck (a faster link, less oversubscription); on a RoCE fabric make the "
            "traffic class lossless (PFC) with ECN marking before the buffer fills (S12, S13)."
        ),
        refs=("S12", "S18", "S20", _TC),
        confidence=0.6,
    )


# ---------------------------------------------------------------------------------------------
# ping


@verdict("ping_summary")
def _ping_loss(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PingSummary) or rec.transmitted < PING_MIN_PROBES:
        return
    lost = rec.transmitted - rec.received
    if rec.received <= 0 or lost < PING_MIN_LOST or rec.duplicates:
        return
    size = rec.packet_bytes
    yield Verdict(
        id="diagnose.ping-loss",
        severity="warning",
        cause="fabric.packet-loss",
        message=(
            f"ping {rec.target or '?'}: {lost} of {rec.transmitted} probes lost "
            f"({rec.loss_pct:g} %)" + (f", {size}-byte packets" if size else "")
        ),
        explanation=(
            "Echo requests or replies vanished on the path while others got through: packets "
            "are being dropped (a dirty or failing optic, CRC errors, a policer, a queue that "
            "overflows). ICMP is sometimes rate-limited by the target, so one lost probe is "
            f"not counted; {PING_MIN_LOST} or more of at least {PING_MIN_PROBES} are (S20 rows 1 "
            "and 5, S22)."
        ),
        fix=(
            "Repeat per link (ping -I IFACE across each hop) to find the lossy one; read its "
            "error and drop counters (`ip -s link`, `ethtool -S`, the switch's) and optics "
            "(`ethtool -m`); check netfilter rules that drop (`iptables-save -c`)."
        ),
        refs=("S20", "S22"),
        confidence=0.55,
    )


@dataclass(frozen=True, slots=True)
class _PingSeen:
    target: str
    size: int | None
    received: int
    summary: PingSummary


def _ping_runs_by_subject(ev: Evidence) -> dict[str, list[_PingSeen]]:
    idx = _index(ev)
    key = ("ping-runs", 0)
    got = idx.memo.get(key)
    if isinstance(got, dict):
        return got
    out: dict[str, list[_PingSeen]] = defaultdict(list)
    last_header: dict[int, PingHeader] = {}
    for item in ev.items:
        rec = item.record
        fid = id(item.file)
        if isinstance(rec, PingHeader):
            last_header[fid] = rec
        elif isinstance(rec, PingSummary):
            head = last_header.get(fid)
            target = rec.target or (head.target if head else None)
            size = rec.packet_bytes or (head.packet_bytes if head else None)
            if target:
                out[item.subject].append(_PingSeen(target, size, rec.received, rec))
    idx.memo[key] = dict(out)
    return dict(out)


def passed_smaller_ping(rec: PingSummary, ev: Evidence, target: str,
                        size: int) -> PingSummary | None:
    """A ping run of the same subject to ``target`` with packets smaller than ``size`` that got
    replies (the evidence that only big packets are lost)."""
    subject = _subject(rec, ev)
    if subject is None:
        return None
    for seen in _ping_runs_by_subject(ev).get(subject, []):
        if seen.target == target and seen.received > 0 and seen.size is not None \
                and seen.size < size and seen.summary is not rec:
            return seen.summary
    return None


# ---------------------------------------------------------------------------------------------
# ip link: the far end of a link

_NETNS_RE = re.compile(r"\blink-netns (\S+)")


def link_peer_down(rec: IpLink, ev: Evidence) -> IpLink | None:
    """The other end of a veth (``name@ifN`` with ``link-netns NS``) when the same evidence
    holds its ``ip link`` (subject ``NS``, or the last ``:``-part of a lab namespace
    ``afl:LAB:NODE``) and that end is administratively down (no ``UP`` flag)."""
    if rec.parent is None or not rec.parent.startswith("if") or not rec.parent[2:].isdecimal():
        return None
    item = _item(rec, ev)
    if item is None or item.file is None:
        return None
    last = rec.end_line or rec.line
    netns = None
    for n in range(rec.line, min(last, rec.line + 4) + 1):
        if 1 <= n <= len(item.file.lines):
            m = _NETNS_RE.search(item.file.lines[n - 1])
            if m is not None:
                netns = m.group(1)
                break
    if netns is None:
        return None
    want = int(rec.parent[2:])
    for other in ev.items:
        peer = other.record
        if not isinstance(peer, IpLink) or peer.index != want or other.subject == item.subject:
            continue
        if other.subject == netns or netns.endswith(f":{other.subject}"):
            return peer if not peer.admin_up else None
    return None


_IFNAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")


def linux_ifname(port: str) -> str:
    """A fabric port name as a Linux interface name (``Ethernet1/2`` → ``Ethernet1-2``, at most
    15 characters: IFNAMSIZ 16 with the NUL), the way ``aifabric lab`` names its veths."""
    return _IFNAME_BAD.sub("-", port.replace("/", "-"))[:15] or "p"


def fabric_peer(rec: IpLink, ev: Evidence) -> Endpoint | None:
    """The far end the fabric file cables to this interface of this subject, if any."""
    if ev.fabric is None:
        return None
    subject = _subject(rec, ev)
    if subject is None:
        return None
    idx = fabric_index(ev.fabric)
    for link in idx.links_of.get(subject, []):
        for end, other in ((link.a, link.b), (link.b, link.a)):
            if end.device == subject and rec.name in (end.port, linux_ifname(end.port)):
                return other
    return None


# ---------------------------------------------------------------------------------------------
# netfilter: deliberate drops


def _random_drop(rule: NetfilterRule) -> bool:
    return rule.drops and rule.statistic_mode is not None


def _rate_drop(rule: NetfilterRule) -> bool:
    return rule.drops and bool(rule.rate_above) and bool(rule.rate_bytes_per_s)


def _same_kind(rec: NetfilterRule, ev: Evidence, test: Callable[[NetfilterRule], bool]
               ) -> list[NetfilterRule] | None:
    """The rules of ``rec``'s capture that pass ``test`` when ``rec`` is the first of them
    (one finding per capture, however many chains carry the rule); else ``None``."""
    rules = [r for r in (_capture(rec, ev) or [rec]) if isinstance(r, NetfilterRule) and test(r)]
    return rules if rules and rules[0] is rec else None


def _chains(rules: list[NetfilterRule]) -> str:
    names = Counter(f"{r.table or 'filter'} {r.chain}" for r in rules)
    return ", ".join(n if k == 1 else f"{n} x{k}" for n, k in names.items())


def _hits(rules: list[NetfilterRule]) -> str:
    counted = [r.packets for r in rules if r.packets is not None]
    if not counted:
        return ""
    total = sum(counted)
    return f"; matched {total:,} packets" if total else "; counters 0 (no traffic hit them yet)"


@verdict("iptables_rule")
def _netfilter(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, NetfilterRule):
        return
    rules = _same_kind(rec, ev, _random_drop)
    if rules is not None:
        how = (
            f"a random {rec.probability:.1%} of the packets"
            if rec.statistic_mode == "random" and rec.probability is not None
            else f"every {rec.every}th packet" if rec.every else "a share of the packets"
        )
        n = f"{len(rules)} netfilter rules" if len(rules) > 1 else "a netfilter rule"
        verb = "drop" if len(rules) > 1 else "drops"
        yield Verdict(
            id="diagnose.netfilter-random-drop",
            severity="warning",
            cause="fabric.packet-loss",
            message=f"{n} ({_chains(rules)}) {verb} {how} "
            f"{'they match' if len(rules) > 1 else 'it matches'} (-m statistic -j "
            f"{rec.target}){_hits(rules)}",
            explanation=(
                "The statistic match selects packets at random (--mode random --probability P) "
                f"or every Nth ({_IPT_EXT}); with DROP this node loses that share of the "
                "traffic on purpose, exactly like a lossy link: TCP retransmits, RDMA retries "
                "and stalls (S20 rows 1 and 5). No production firewall policy does this; it is a "
                "test or fault-injection rule left in place."
            ),
            fix=f"Remove it: `iptables -t {rec.table or 'filter'} -D {rec.chain} "
            f"{rec.spec} -j {rec.target}` (and the same in the other chains), then check "
            "`iptables-save -c`.",
            refs=("S20", _IPT_EXT),
            confidence=0.75,
        )
    rules = _same_kind(rec, ev, _rate_drop)
    if rules is not None:
        mbps = (rec.rate_bytes_per_s or 0.0) * 8 / 1e6
        per = (
            "each flow (per 5-tuple)" if rec.per_flow
            else f"each {rec.rate_mode}" if rec.rate_mode else "all matching traffic together"
        )
        after = (
            f", once a connection has carried {rec.connbytes_min:,} bytes (connbytes)"
            if rec.connbytes_min else ""
        )
        n = f"{len(rules)} netfilter rules" if len(rules) > 1 else "a netfilter rule"
        verb = "drop" if len(rules) > 1 else "drops"
        yield Verdict(
            id="diagnose.netfilter-rate-limit",
            severity="warning",
            cause="fabric.middlebox",
            message=(
                f"{n} ({_chains(rules)}) {verb} {per} above {_fmt(mbps)} Mbit/s "
                f"({_fmt((rec.rate_bytes_per_s or 0.0) / 1024)} KiB/s, hashlimit){after}"
                f"{_hits(rules)}"
            ),
            explanation=(
                "hashlimit --hashlimit-above keeps a token bucket per hash key (the 5-tuple with "
                "--hashlimit-mode srcip,dstip,srcport,dstport) and the rule drops what exceeds "
                f"the rate; 'kb'/'mb' are KiB/MiB per second ({_IPT_EXT}; iptables "
                "libxt_hashlimit.c). A node doing this to the data path acts like a stateful "
                "firewall with a per-session limit: long-lived flows are held at the rate "
                "after their burst (S17)."
            ),
            fix=(
                "Take the training traffic off this node or exempt it (an ACCEPT rule for the "
                "fabric's subnets before this one), or remove the limit; on a real firewall "
                "raise or remove the per-session bandwidth policy (S17)."
            ),
            refs=("S17", "S20", _IPT_EXT),
            confidence=0.7,
        )
    yield from _dscp(rec, ev)


# ---------------------------------------------------------------------------------------------
# netfilter: DSCP marking

_HOST_CHAINS = ("OUTPUT", "POSTROUTING")


def _applies_to_roce(rule: NetfilterRule) -> bool:
    """Every packet, all TCP or UDP (no port: test traffic, NCCL's sockets), or RoCEv2 (UDP
    4791), with no address restriction."""
    if rule.source not in (None, "0.0.0.0/0", "::/0") or rule.destination not in (
        None, "0.0.0.0/0", "::/0",
    ):
        return False
    if rule.protocol not in (None, "all", "0", "tcp", "udp"):
        return False
    if rule.dport is None and rule.sport is None:
        return True
    return rule.protocol == "udp" and rule.dport == "4791" and rule.sport is None


def roce_marking(records: Sequence[Record]) -> NetfilterRule | None:
    """The rule whose DSCP a host's RoCE packets leave with: the last DSCP/TOS-setting rule of
    mangle OUTPUT, then POSTROUTING, that applies to them (module doc)."""
    marks = [
        r for r in records
        if isinstance(r, NetfilterRule) and r.chain in _HOST_CHAINS
        and r.table in (None, "mangle") and r.marked_dscp is not None and _applies_to_roce(r)
    ]  # fmt: skip
    marks.sort(key=lambda r: (_HOST_CHAINS.index(r.chain), r.line))
    return marks[-1] if marks else None


def _markings(ev: Evidence) -> dict[str, NetfilterRule]:
    """Per subject, its RoCE marking rule (from its first capture that has one)."""
    idx = _index(ev)
    key = ("roce-marking", 0)
    got = idx.memo.get(key)
    if isinstance(got, dict):
        return got
    by_file: dict[int, list[Record]] = defaultdict(list)
    subject_of: dict[int, str] = {}
    for item in ev.items:
        if isinstance(item.record, NetfilterRule) and item.file is not None:
            by_file[id(item.file)].append(item.record)
            subject_of[id(item.file)] = item.subject
    out: dict[str, NetfilterRule] = {}
    for fid, records in by_file.items():
        mark = roce_marking(records)
        if mark is not None:
            out.setdefault(subject_of[fid], mark)
    idx.memo[key] = out
    return out


def _dscp(rec: NetfilterRule, ev: Evidence) -> Iterator[Verdict]:
    if rec.marked_dscp is None or rec.chain not in _HOST_CHAINS:
        return
    subject = _subject(rec, ev)
    if subject is None:
        return
    marks = _markings(ev)
    if marks.get(subject) is not rec:
        return
    dscp = rec.marked_dscp
    overrides = [
        r for r in (_capture(rec, ev) or [])
        if isinstance(r, NetfilterRule) and r is not rec and r.marked_dscp is not None
        and r.marked_dscp != dscp and _applies_to_roce(r)
    ]  # fmt: skip
    overridden = (
        f"; it overrides an earlier rule setting DSCP {overrides[0].marked_dscp}"
        if overrides else ""
    )
    fab = ev.fabric
    if fab is not None:
        idx = fabric_index(fab)
        if fab.transport != "roce" or idx.kind(subject) not in (None, "server"):
            return
        want = fab.qos.roce_dscp
        if dscp == want:
            return
        yield Verdict(
            id="diagnose.dscp-not-roce",
            severity="error",
            cause="config.qos",
            message=(
                f"{subject} marks its traffic DSCP {dscp} ({rec.chain} -j {rec.target}), the "
                f"fabric's RoCE DSCP is {want}{overridden}"
            ),
            explanation=(
                "Switches classify RoCE by DSCP: only packets carrying the fabric's RoCE DSCP "
                "(qos.roce_dscp) reach the lossless queue with PFC and ECN (S14). The last "
                "netfilter rule in mangle OUTPUT/POSTROUTING that sets a DSCP decides what the "
                "host's packets carry (DSCP targets do not end the traversal, a later one "
                "overwrites an earlier one); this host's traffic lands in a lossy class and is "
                "dropped under congestion instead of paused (S13, S14)."
            ),
            fix=(
                f"Delete or correct the rule (`iptables -t mangle -D {rec.chain} {rec.spec} -j "
                f"{rec.target} ...`) so that RoCE leaves with DSCP {want}; on real NICs set "
                f"the RoCE traffic class (cma_roce_tos, NCCL_IB_TC={want << 2})."
            ),
            refs=("S14", "S13", "S12"),
            confidence=0.8,
            line=rec.line,
        )
        return
    values = Counter(r.marked_dscp for r in marks.values())
    if len(values) < 2:
        return
    top = values.most_common(2)
    majority = top[0][0] if top[0][1] > top[1][1] else None
    if majority is not None and dscp == majority:
        return
    others = sorted(s for s, r in marks.items() if s != subject and r.marked_dscp != dscp)
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    what = (
        f"{values[majority]} other host(s) mark DSCP {majority}" if majority is not None
        else f"{shown} mark(s) "
        f"{', '.join(str(v) for v in sorted(v for v in values if v is not None) if v != dscp)}"
    )
    yield Verdict(
        id="diagnose.dscp-differs",
        severity="warning",
        cause="config.qos",
        message=f"{subject} marks its traffic DSCP {dscp} ({rec.chain} -j {rec.target}) while "
        f"{what}{overridden}",
        explanation=(
            "Every host of a RoCE fabric must mark RoCE with the same DSCP, the one the "
            "switches map to the lossless queue (S14); a host that marks differently sends its "
            "traffic to another class (lossy, no PFC), so its flows see drops and retransmissions "
            "the others do not (S13). Without a fabric file the hosts of the bundle are "
            "compared; give --fabric to check against qos.roce_dscp."
        ),
        fix="Make the host's marking rule (or its NIC's RoCE traffic class) set the same DSCP "
        "as the other hosts and as the switches' RoCE map.",
        refs=("S14", "S13"),
        confidence=0.55,
        line=rec.line,
    )


# ---------------------------------------------------------------------------------------------
# sysctl: ECMP hash policy

_POLICY = "net.ipv4.fib_multipath_hash_policy"


@verdict("sysctl")
def _sysctl(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SysctlValue) or rec.key != _POLICY or rec.int_value != 0:
        return
    subject = _subject(rec, ev)
    records = _capture(rec, ev) or [rec]
    forward = next((r.int_value for r in records if isinstance(r, SysctlValue)
                    and r.key == "net.ipv4.ip_forward"), None)
    if forward == 0:
        return
    if ev.fabric is not None and subject is not None:
        kind = fabric_index(ev.fabric).kind(subject)
        if kind == "server":
            return
    yield Verdict(
        id="diagnose.ecmp-hash-l3",
        severity="warning",
        cause="fabric.ecmp-hash",
        message=(
            f"{subject or 'this node'} hashes IPv4 ECMP on addresses only "
            f"({_POLICY} = 0" + (", and it forwards: ip_forward = 1)" if forward == 1 else ")")
        ),
        explanation=(
            "Policy 0 (the default of every new network namespace) picks the next hop from the "
            "source and destination addresses alone; 1 adds the protocol and ports (the "
            f"5-tuple) ({_IP_SYSCTL}). With an L3 hash every flow between one pair of hosts "
            "takes the same path, however many parallel connections or queue pairs NCCL opens: "
            "a few host pairs (a collective's ring or tree neighbours) pile onto a few uplinks "
            "while the others idle, and the bus bandwidth drops to a fraction of nominal "
            "(S20 row 2: 'ECMP hashing puts the flows on a few links'; S6, S7)."
        ),
        fix=(
            f"`sysctl -w {_POLICY}=1` (persist it in /etc/sysctl.d/); on switches hash on the "
            "5-tuple (RoCEv2 varies the UDP source port per queue pair) or use adaptive "
            "routing / flowlet load balancing."
        ),
        refs=("S20", "S6", "S7", _IP_SYSCTL),
        confidence=0.6,
    )
