"""Record verdict on a host firewall that closes inbound connections (``iptables`` captures):
see :mod:`.verdicts_core`.

The NCCL bootstrap and socket transport, Gloo, PyTorch's TCPStore workers, MPI's out-of-band
channel and UCX's sockets all accept connections on ports chosen at run time (ephemeral ports,
or ``MASTER_PORT`` for the store): a node whose filter-table INPUT chain lets in only a few
fixed ports refuses or silently drops them, and the job hangs at init or fails with "Connection
refused" / a timeout (NCCL troubleshooting guide, "Firewall"; PyTorch distributed docs).

The INPUT chain is judged as one unit from its records in the capture: it closes when its policy
is ``DROP`` or a rule without any match drops or rejects everything that reaches it, and it
stays open for the cluster when an ``ACCEPT`` before that point matches by source address,
input interface or no port at all (other than loopback and ESTABLISHED/RELATED). Jumps to user
chains (ufw, firewalld zones, fail2ban) are not followed: such a chain is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.netfilter import NetfilterChain, NetfilterRule

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["input_chain_closed"]

_NCCL_TROUBLE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
_BUILTIN_TARGETS = frozenset({"ACCEPT", "DROP", "REJECT", "LOG", "RETURN", None})
_STATEFUL = ("ESTABLISHED", "RELATED")
_ANY = (None, "", "0.0.0.0/0", "::/0", "anywhere", "*")
"""How -L prints "no address" / "any interface"."""


def _opens_for_cluster(rule: NetfilterRule) -> bool:
    """An ACCEPT that lets new connections in on any port (by source, interface or nothing)."""
    if rule.target != "ACCEPT" or rule.in_iface == "lo":
        return False
    if any(s in rule.spec for s in _STATEFUL) and "NEW" not in rule.spec:
        return False  # replies to connections this host opened
    if rule.protocol in ("icmp", "icmpv6", "ipv6-icmp", "udp"):
        return False
    if rule.protocol not in (None, "all", "tcp", "0", "6"):
        return False
    # `iptables -L` without -v hides the interface: an "ACCEPT all" line there is the loopback
    # rule of the stock RHEL/CentOS ruleset as often as a rule opening everything
    hidden_lo = rule.format == "list" and rule.in_iface is None and rule.source in _ANY
    return rule.dport is None and not hidden_lo


def input_chain_closed(records: list[Record]) -> tuple[str, list[str], int] | None:
    """(how the chain closes, the TCP ports it opens, line) when the filter INPUT chain of a
    capture closes inbound connections to all but fixed ports; None when it does not, or when it
    jumps to chains the capture does not resolve."""
    chains = [r for r in records if isinstance(r, NetfilterChain) and r.chain == "INPUT"]
    chains = [c for c in chains if c.table in (None, "filter")]
    rules = [
        r for r in records
        if isinstance(r, NetfilterRule) and r.chain == "INPUT" and r.table in (None, "filter")
    ]  # fmt: skip
    policy = chains[-1].policy if chains else None
    opened: list[str] = []
    for rule in rules:
        if rule.target not in _BUILTIN_TARGETS:
            return None  # a jump into a user chain: not judged
        if _opens_for_cluster(rule):
            return None
        if rule.target == "ACCEPT" and rule.dport is not None and rule.protocol in (None, "tcp"):
            opened.append(rule.dport)
            continue
        catch_all = (
            rule.drops
            and rule.protocol in (None, "all")
            and rule.source in _ANY
            and rule.in_iface in _ANY
            and rule.dport is None
            and not rule.matches
        )
        if catch_all:
            return f"ends with a {rule.target} rule for everything", opened, rule.line
    if policy in ("DROP", "REJECT") and (rules or chains):
        line = chains[-1].line if chains else rules[0].line
        return f"its policy is {policy}", opened, line
    return None


@verdict("iptables_chain")
def _input_closed(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, NetfilterChain) or rec.chain != "INPUT":
        return
    if rec.table not in (None, "filter"):
        return
    records = _capture(rec, ev) or [rec]
    got = input_chain_closed(records)
    if got is None:
        return
    how, opened, _ = got
    ports = ", ".join(dict.fromkeys(opened)) or "none"
    yield Verdict(
        id="diagnose.host-firewall-closed",
        severity="warning",
        cause="config.firewall",
        message=(
            f"the host firewall closes inbound connections: INPUT {how}; TCP ports opened: "
            f"{ports}"
        ),
        explanation=(
            "NCCL's bootstrap and socket transport, Gloo, PyTorch's TCPStore, MPI's "
            "out-of-band channel and UCX sockets listen on ports chosen at run time (ephemeral "
            "ports, or MASTER_PORT for the store); a node that admits only a few fixed ports "
            "refuses or drops them, and the job hangs at initialisation or fails with "
            f"'Connection refused' or a timeout ({_NCCL_TROUBLE}). Only the filter INPUT "
            "chain of this capture was read: a rule in another tool (firewalld, ufw, a cloud "
            "security group) may still open the cluster."
        ),
        fix=(
            "Accept the cluster's own traffic on every node: `iptables -I INPUT -s "
            "CLUSTER_SUBNET -j ACCEPT` (or `-i` the data interface; firewalld: add the subnet "
            "to the trusted zone), or stop the firewall on the fabric interfaces; then rerun "
            "the job."
        ),
        refs=("S20", _NCCL_TROUBLE),
        confidence=0.5,
    )
