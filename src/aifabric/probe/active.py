"""Active probes from one host: the path MTU to each peer with DF set (S11), and an RTT series for
jitter (S20.4). Both run ``ping`` from iputils as an argument vector.

Path MTU by bisection. The first probe is the largest the local MTU allows
(``ping -M do -s MTU-28``: 20 bytes of IPv4 header and 8 of ICMP header); if it passes, the path
carries the full MTU. Otherwise a ``Frag needed and DF set (mtu = X)`` answer (or the local
``message too long, mtu=X``) names the next hop's MTU, which is tried next; without any answer (a
silent black hole: a receiver with a smaller MTU drops the frame) the largest passing size is
found by bisection between 576 (the IPv4 minimum every host must accept, RFC 791) and the
failing size, one probe per step. Every probe's raw output is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aifabric.probe.runner import CmdResult, Runner

__all__ = ["PROBE_HEADER_BYTES", "MtuResult", "path_mtu", "rtt_series"]

PROBE_HEADER_BYTES = 28
"""IPv4 header (20) + ICMP echo header (8): ``-s`` is the MTU minus these."""
MIN_MTU = 576

_MTU_RE = re.compile(r"mtu\s*=\s*(\d{3,5})")


@dataclass
class MtuResult:
    """Path MTU to ``peer``: ``path_mtu`` (None when even 576 bytes do not pass), the local MTU
    tried first, and every probe (size, passed, raw output) in order."""

    peer: str
    local_mtu: int
    path_mtu: int | None
    reported_mtu: int | None = None
    probes: list[tuple[int, bool, CmdResult]] = field(default_factory=list)

    @property
    def first(self) -> CmdResult | None:
        return self.probes[0][2] if self.probes else None


async def _df_ping(
    runner: Runner, peer: str, mtu: int, timeout_s: float, *, count: int = 3
) -> CmdResult:
    size = mtu - PROBE_HEADER_BYTES
    return await runner.run(
        ["ping", "-M", "do", "-s", str(size), "-c", str(count), "-i", "0.2", "-W", "1", "-n",
         peer],
        timeout=timeout_s,
    )


def _passed(res: CmdResult) -> bool:
    return res.rc == 0 and " 0 received" not in res.stdout


async def path_mtu(
    runner: Runner, peer: str, *, local_mtu: int = 9000, timeout_s: float = 10.0
) -> MtuResult:
    """Largest IPv4 packet that reaches ``peer`` with DF set (see the module docstring)."""
    out = MtuResult(peer=peer, local_mtu=local_mtu, path_mtu=None)
    res = await _df_ping(runner, peer, local_mtu, timeout_s)
    out.probes.append((local_mtu, _passed(res), res))
    if res.error is not None:
        return out
    if _passed(res):
        out.path_mtu = local_mtu
        return out
    lo, hi = MIN_MTU, local_mtu
    m = _MTU_RE.search(res.stdout + res.stderr)
    if m is not None:
        reported = int(m.group(1))
        out.reported_mtu = reported
        if MIN_MTU <= reported < local_mtu:
            r2 = await _df_ping(runner, peer, reported, timeout_s)
            out.probes.append((reported, _passed(r2), r2))
            if _passed(r2):
                out.path_mtu = reported
                return out
            hi = reported
    best: int | None = None
    while lo < hi:  # hi is known to fail; the answer is in [lo, hi - 1] or there is none
        mid = (lo + hi) // 2
        r = await _df_ping(runner, peer, mid, timeout_s, count=1)
        ok = _passed(r)
        out.probes.append((mid, ok, r))
        if ok:
            best, lo = mid, mid + 1
        else:
            hi = mid
    out.path_mtu = best
    return out


async def rtt_series(
    runner: Runner, peer: str, *, count: int = 100, interval_s: float = 0.01,
    timeout_s: float = 20.0,
) -> CmdResult:
    """``ping -c COUNT -i INTERVAL peer``: the RTT series diagnose judges for jitter and loss."""
    return await runner.run(
        ["ping", "-c", str(count), "-i", f"{interval_s:g}", "-W", "1", "-n", peer],
        timeout=timeout_s,
    )
